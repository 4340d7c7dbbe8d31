"""Exercises of chapter 4, the Confluence (BERT's three-way sum on real weights), as specs (words in ``ch4.toml``).

* :data:`BERT_SUM` (ex-4-1): assemble ``LayerNorm(word + segment + position)`` by hand.
* :data:`SEGMENT_IDS` (ex-4-2): the segment ids of ``[CLS] A [SEP] B [SEP]``.
* :data:`MOST_ALIKE_PAIR` (ex-4-3): the two distinct positions whose rows are most alike.

Each runs on small cases of its own (no weights needed).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from .checking import Check
from .spec import PUBLIC_SEED, Case, Exercise, chapter_data, declared

__all__ = [
    "BERT_SUM",
    "EXERCISES",
    "MOST_ALIKE_PAIR",
    "SEGMENT_IDS",
    "check_bert_sum",
    "check_most_alike_pair",
    "check_segment_ids",
]

_DATA = chapter_data(__name__)


def _layer_norm(x: torch.Tensor, gain: torch.Tensor, bias: torch.Tensor, eps: float, unbiased: bool = False):
    """LayerNorm over the last dimension, the result in float64 (``unbiased``: a slip, dividing by D - 1)."""
    mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=unbiased, keepdim=True)
    return ((x - mean) / torch.sqrt(var + eps) * gain + bias).double()


def _tables(seed: int) -> tuple[torch.Generator, tuple[torch.Tensor, ...]]:
    """The seed's generator and the five tables it draws first: word, segment, position, gain and bias."""
    g = torch.Generator().manual_seed(4 + 1000 * seed)
    word, segment, position = (torch.randn(rows, 8, generator=g) for rows in (23, 2, 24))
    return g, (word, segment, position, 1 + 0.3 * torch.randn(8, generator=g), 0.5 * torch.randn(8, generator=g))


def _sum_inputs(ids: list[list[int]], segments: list[list[int]], seed: int) -> tuple[Any, ...]:
    """A call's ids and segment ids as tensors, then the tables of its seed (the notebook's: 0) and eps."""
    return (torch.tensor(ids), torch.tensor(segments), *_tables(seed)[1], 1e-12)


def _sum_hidden(seed: int) -> list[tuple[Any, ...]]:
    """A batch of two and one token, drawn from the seed's generator after its tables."""
    length = 5 + seed % 6
    ids = torch.randint(0, 23, (2, length), generator=_tables(seed)[0]).tolist()
    segments = [[int(t >= 1 + seed % (length - 1)) for t in range(length)]] * 2
    return [(ids, segments, seed), ([ids[0][:1]], [[0]], seed)]


def _bert_sum(ids, segments, word, segment, position, gain, bias, eps) -> torch.Tensor:
    return _layer_norm(word[ids] + segment[segments] + position[: ids.shape[1]], gain, bias, eps)


def _sum_slips(ids, segments, word, segment, position, gain, bias, eps) -> dict[str, torch.Tensor]:
    t = ids.shape[1]
    w, s, p = word[ids], segment[segments], position[:t]
    return {
        "raw_sum": (w + s + p).double(),
        "no_segments": _layer_norm(w + p, gain, bias, eps),
        "no_positions": _layer_norm(w + s, gain, bias, eps),
        "from_one": _layer_norm(w + s + position[1 : t + 1], gain, bias, eps),
        "by_token_id": _layer_norm(w + s + position[ids], gain, bias, eps),
        "unbiased": _layer_norm(w + s + p, gain, bias, eps, unbiased=True),
        "no_gain_bias": _layer_norm(w + s + p, torch.ones_like(gain), torch.zeros_like(bias), eps),
        "no_bias": _layer_norm(w + s + p, gain, torch.zeros_like(bias), eps),
    }


BERT_SUM = declared(_DATA, "ex-4-1", reference=_bert_sum, hidden=_sum_hidden, inputs=_sum_inputs, slips=_sum_slips)


def _segment_hidden(seed: int) -> list[tuple[list[str]]]:
    """Three token lists drawn from the seed: a pair, a single sentence, a pair of one word each."""
    words = random.Random(seed).sample(["apple", "tower", "seat", "ledger", "map", "edge", "ticket", "##s"], 8)
    a, b = 1 + seed % 4, 1 + seed % 3
    return [
        (["[CLS]", *words[:a], "[SEP]", *words[a : a + b], "[SEP]"],),
        (["[CLS]", *words[:5], "[SEP]"],),
        (["[CLS]", words[0], "[SEP]", words[1], "[SEP]"],),
    ]


def _segments(tokens: Sequence[str]) -> list[int]:
    first = tokens.index("[SEP]")
    return [0 if i <= first else 1 for i in range(len(tokens))]


def _segment_slip(tokens: Sequence[str], got: list[int], want: list[int]) -> str:
    """The key of the likely slip behind a wrong list of segment ids (``rule`` when none is recognised)."""
    first, last = tokens.index("[SEP]"), len(tokens) - 1
    if got[first] == 1:
        return "first_sep_in_b"
    if first != last and got[last] == 0 and got[first + 1 : last] == want[first + 1 : last]:
        return "last_sep_in_a"
    if first != last and not any(got):
        return "all_zeros"
    return "cls" if got[0] != 0 else "rule"


def _judge_segments(check: Check, spec: Exercise, case: Case, got: Any, want: list[int]) -> None:
    (tokens,) = case.args
    ids = check.convert(got, lambda ids: [int(x) for x in ids], *spec.said("not_ids", got=got))
    check.that(len(ids) == len(tokens), *spec.said("length", tokens=len(tokens), ids=len(ids)))
    check.that(ids == want, spec.say("wrong", " ".join(tokens), ids), spec.say(_segment_slip(tokens, ids, want)))


SEGMENT_IDS = declared(_DATA, "ex-4-2", reference=_segments, hidden=_segment_hidden, judge=_judge_segments)


def _pair_cases(seed: int) -> list[Case]:
    """A table with planted traps (a near copy, opposite rows, long rows); flipped; and four of its rows.

    The notebook's table plants them at rows (3, 11), (6, 13) and (5, 9); a hidden table at rows drawn from the
    seed. Cases, not calls: each one's tag names its long and opposite pairs for the judge, ``"5,9/6,13"``.
    """
    g = torch.Generator().manual_seed(43 + 1000 * seed)
    n, d = 16, 8
    a, b, c, e, f, h = (3, 11, 6, 13, 5, 9) if seed == PUBLIC_SEED else random.Random(seed).sample(range(n), 6)
    table = torch.randn(n, d, generator=g)
    table[b] = table[a] + 0.05 * torch.randn(d, generator=g)  # the most alike pair, cosine about 0.999
    table[c] = -table[e] + 0.01 * torch.randn(d, generator=g)  # opposite directions, cosine about -1
    table[f] = 10 * torch.randn(d, generator=g)  # long rows: a large dot product, a smaller cosine
    table[h] = table[f] + 3 * torch.randn(d, generator=g)
    others = [row for row in range(n) if row not in (a, b, c, e, f, h)]
    rows = [others[0], b, others[1], a]
    if seed != PUBLIC_SEED:
        random.Random(seed + 1).shuffle(rows)
    flip = n - 1
    return [
        Case((table,), tag=f"{f},{h}/{c},{e}"),
        Case((table.flip(0),), tag=f"{flip - f},{flip - h}/{flip - c},{flip - e}"),
        Case((table[rows],), tag="-1,-1/-1,-1"),
    ]


def _most_alike(table: torch.Tensor) -> tuple[int, int]:
    """The pair ``(i, j)``, ``i < j``, of distinct rows with the largest cosine."""
    unit = table / table.norm(dim=1, keepdim=True)
    cosine = (unit @ unit.T).fill_diagonal_(-2.0)
    i, j = divmod(int(cosine.argmax()), len(table))
    return (min(i, j), max(i, j))


def _pair_slip(got: tuple[int, ...], want: tuple[int, int], tag: str) -> str:
    """The key of the likely slip behind a wrong pair (``rule`` when none is recognised): the traps are the tag's."""
    long, opposite = ({int(x) for x in part.split(",")} for part in tag.split("/"))
    if got[0] == got[1]:
        return "diagonal"
    if got == want[::-1]:
        return "reversed"
    if set(got) == long:
        return "lengths"
    return "opposite" if set(got) == opposite else "rule"


def _judge_pair(check: Check, spec: Exercise, case: Case, got: Any, want: tuple[int, int]) -> None:
    (table,) = case.args
    problem, hint = spec.said("not_pair", got=got)
    pair = check.convert(got, lambda ids: tuple(int(x) for x in ids), problem, hint)
    check.that(len(pair) == 2, problem, hint)
    check.that(pair == want, spec.say("wrong", tuple(table.shape), pair), spec.say(_pair_slip(pair, want, case.tag)))


MOST_ALIKE_PAIR = declared(_DATA, "ex-4-3", reference=_most_alike, cases=_pair_cases, judge=_judge_pair)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [BERT_SUM, SEGMENT_IDS, MOST_ALIKE_PAIR]

check_bert_sum = BERT_SUM.checker_function()
check_segment_ids = SEGMENT_IDS.checker_function()
check_most_alike_pair = MOST_ALIKE_PAIR.checker_function()
