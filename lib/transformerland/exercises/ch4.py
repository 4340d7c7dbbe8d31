"""Exercises of chapter 4, the Confluence: BERT's three-way sum on real weights, as specs.

- :data:`BERT_SUM` (ex-4-1): assemble ``LayerNorm(word + segment + position)`` by hand.
- :data:`SEGMENT_IDS` (ex-4-2): the segment ids of ``[CLS] A [SEP] B [SEP]``.
- :data:`MOST_ALIKE_PAIR` (ex-4-3): the two distinct positions whose rows are most alike.

Each runs the student's function on small cases of its own (no weights needed), compares it
with the expected answer, and when it differs, tries to recognise the mistake to name it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from .checking import Check, Mistake, tensors_close
from .spec import Case, Exercise, tensor_answer

__all__ = [
    "BERT_SUM",
    "EXERCISES",
    "MOST_ALIKE_PAIR",
    "SEGMENT_IDS",
    "check_bert_sum",
    "check_most_alike_pair",
    "check_segment_ids",
]

_close = tensors_close(atol=1e-4, rtol=1e-5)


def _layer_norm(x: torch.Tensor, gain: torch.Tensor, bias: torch.Tensor, eps: float, unbiased: bool = False):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=unbiased, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * gain + bias


def _bert_sum_cases(ids, segments, word, segment, position, gain, bias, eps) -> tuple[torch.Tensor, list[Mistake]]:
    """The right answer and what the typical slips return, each ``(B, T, D)`` in float64, with their hints."""
    t = ids.shape[1]
    w, s, p = word[ids], segment[segments], position[:t]
    right = _layer_norm(w + s + p, gain, bias, eps)
    mistakes = [
        Mistake(
            w + s + p,
            "you return the raw sum; BERT normalises it with LayerNorm (and its gain and bias) afterwards.",
        ),
        Mistake(
            _layer_norm(w + p, gain, bias, eps),
            "the segment stream is missing: add segment_table[token_type_ids] for every token.",
        ),
        Mistake(
            _layer_norm(w + s, gain, bias, eps),
            "the seat stream is missing: add the position table's rows 0, 1, …, T-1.",
        ),
        Mistake(
            _layer_norm(w + s + position[1 : t + 1], gain, bias, eps),
            "positions count from 0: the token [CLS] sits at position 0 and takes row 0.",
        ),
        Mistake(
            _layer_norm(w + s + position[ids], gain, bias, eps),
            "position rows are chosen by where a token stands (0 … T-1), not by its token id.",
        ),
        Mistake(
            _layer_norm(w + s + p, gain, bias, eps, unbiased=True),
            "LayerNorm divides by D, not D - 1: use the biased variance (unbiased=False).",
        ),
        Mistake(
            _layer_norm(w + s + p, torch.ones_like(gain), torch.zeros_like(bias), eps),
            "after normalising, scale by ln_weight and add ln_bias (LayerNorm's learned gain and bias).",
        ),
        Mistake(
            _layer_norm(w + s + p, gain, torch.zeros_like(bias), eps),
            "you scale by ln_weight but forgot to add ln_bias.",
        ),
    ]
    return right.double(), [Mistake(m.answer.double(), m.hint) for m in mistakes]


def _sum_cases(seed: int) -> list[Case]:
    """Tables ``(23, 8)``, ``(2, 8)``, ``(24, 8)``, a gain and a bias; one sentence pair, a batch of two, one token."""
    g = torch.Generator().manual_seed(4 + 1000 * seed)
    vocab, segments_n, positions_n, d = 23, 2, 24, 8
    tables = (
        torch.randn(vocab, d, generator=g),
        torch.randn(segments_n, d, generator=g),
        torch.randn(positions_n, d, generator=g),
        1 + 0.3 * torch.randn(d, generator=g),
        0.5 * torch.randn(d, generator=g),
    )
    if seed == 0:
        calls = [
            (torch.tensor([[3, 17, 5, 9, 2, 21, 14]]), torch.tensor([[0, 0, 0, 0, 1, 1, 1]])),
            (torch.tensor([[1, 4, 4, 8], [20, 0, 13, 2]]), torch.tensor([[0, 0, 1, 1], [0, 1, 1, 1]])),
            (torch.tensor([[7]]), torch.tensor([[0]])),
        ]
    else:
        length = 5 + seed % 6
        ids = torch.randint(0, vocab, (2, length), generator=g)
        cut = 1 + seed % (length - 1)
        segments = (torch.arange(length) >= cut).long().expand(2, length).clone()
        calls = [(ids, segments), (ids[:1, :1].clone(), torch.zeros(1, 1, dtype=torch.long))]
    return [
        Case(
            (ids, segments, *tables, 1e-12),
            problem=f"for input_ids {ids.tolist()} the result differs from BERT's embedding layer",
        )
        for ids, segments in calls
    ]


BERT_SUM = Exercise(
    label="ex-4-1",
    what="the three-way sum with LayerNorm",
    checker="check_bert_sum",
    function="my_bert_sum",
    signature="(input_ids (B, T), token_type_ids (B, T), word_table, segment_table, position_table, ln_weight, "
    "ln_bias, eps) -> LayerNorm(word[ids] + segment[segments] + position[0 … T-1]) (B, T, D)",
    cases=_sum_cases,
    reference=lambda *args: _bert_sum_cases(*args)[0],
    tolerance=_close,
    mistakes=lambda case: _bert_sum_cases(*case.args)[1],
    hint="look up one row per token in each table, add the three, then normalise each token's "
    "D values (mean 0, variance 1, eps inside the square root), scale by ln_weight and add ln_bias.",
    judge=tensor_answer(
        "return the (B, T, D) tensor itself.",
        "one row of width D per token: index each table with a (B, T) tensor of ids.",
        "for input_ids of shape {first} the result has shape {got}, not {expected}",
    ),
)

check_bert_sum = BERT_SUM.checker_function()


def _expected_segments(tokens: Sequence[str]) -> list[int]:
    first = tokens.index("[SEP]")
    return [0 if i <= first else 1 for i in range(len(tokens))]


def _segment_hint(tokens: Sequence[str], got: list[int], want: list[int]) -> str:
    """Name the likely mistake behind a wrong list of segment ids."""
    first, last = tokens.index("[SEP]"), len(tokens) - 1
    if got[first] == 1 and want[first] == 0:
        return "the [SEP] that closes sentence A still belongs to segment A: give it 0."
    if first != last and got[last] == 0 and got[first + 1 : last] == want[first + 1 : last]:
        return "the final [SEP] closes sentence B, so it belongs to segment B: give it 1."
    if first != last and not any(got):
        return "every token after the first [SEP] (sentence B and its [SEP]) belongs to segment 1."
    if got[0] != 0:
        return "[CLS] opens sentence A, so its segment id is 0."
    return "0 from [CLS] up to and including the first [SEP], then 1 to the end."


def _segment_cases(seed: int) -> list[Case]:
    if seed == 0:
        cases = [
            ["[CLS]", "the", "apple", "fell", ".", "[SEP]", "it", "was", "ripe", ".", "[SEP]"],
            ["[CLS]", "where", "do", "words", "stand", "?", "[SEP]"],
            ["[CLS]", "a", "[SEP]", "b", "[SEP]"],
            ["[CLS]", "bert", "##ha", "keeps", "the", "basin", "[SEP]", "three", "streams", "[SEP]"],
        ]
    else:
        words = random.Random(seed).sample(["apple", "tower", "seat", "ledger", "map", "edge", "ticket", "##s"], 8)
        a, b = 1 + seed % 4, 1 + seed % 3
        cases = [
            ["[CLS]", *words[:a], "[SEP]", *words[a : a + b], "[SEP]"],
            ["[CLS]", *words[:5], "[SEP]"],
            ["[CLS]", words[0], "[SEP]", words[1], "[SEP]"],
        ]
    return [Case((tokens,)) for tokens in cases]


def _judge_segments(check: Check, spec: Exercise, case: Case, got: Any, want: list[int]) -> None:
    (tokens,) = case.args
    got = check.convert(
        got,
        lambda ids: [int(x) for x in ids],
        f"it returned {got!r}",
        "return a list (or 1-D tensor) of integers, one per token.",
    )
    check.that(
        len(got) == len(tokens),
        f"for {len(tokens)} tokens it returned {len(got)} segment ids",
        "return exactly one segment id per token, [CLS] and every [SEP] included.",
    )
    check.that(got == want, f"for {' '.join(tokens)} it returned {got}", _segment_hint(tokens, got, want))


SEGMENT_IDS = Exercise(
    label="ex-4-2",
    what="segment ids for sentence pairs",
    checker="check_segment_ids",
    function="my_segment_ids",
    signature="(tokens: list[str], [CLS] A [SEP] or [CLS] A [SEP] B [SEP]) -> list[int], one segment id per token",
    cases=_segment_cases,
    reference=_expected_segments,
    judge=_judge_segments,
)

check_segment_ids = SEGMENT_IDS.checker_function()


def _pair_hint(got: tuple[int, int], want: tuple[int, int], long: set[int], opposite: set[int]) -> str:
    """Name the likely mistake behind a wrong pair (the traps are planted by :func:`_pair_cases`)."""
    if got[0] == got[1]:
        return "every row is perfectly alike to itself: leave out the diagonal (i == j)."
    if got == want[::-1]:
        return "return the smaller position first: (i, j) with i < j."
    if set(got) == long:
        return "compare directions, not lengths: normalise each row (cosine similarity), not raw dot products."
    if set(got) == opposite:
        return "most alike means the largest cosine; a cosine near -1 (opposite rows) is the least alike."
    return "compute the cosine of every pair of distinct rows and take the pair with the largest one."


def _pair_cases(seed: int) -> list[Case]:
    """A table with planted traps (a near copy, opposite rows, long rows); flipped; and four of its rows.

    The notebook's table plants them at rows (3, 11), (6, 13) and (5, 9); a hidden table at rows drawn
    from the seed. Each case's tag names its long and opposite pairs, ``"5,9/6,13"``.
    """
    g = torch.Generator().manual_seed(43 + 1000 * seed)
    n, d = 16, 8
    a, b, c, e, f, h = (3, 11, 6, 13, 5, 9) if seed == 0 else random.Random(seed).sample(range(n), 6)
    table = torch.randn(n, d, generator=g)
    table[b] = table[a] + 0.05 * torch.randn(d, generator=g)  # the most alike pair, cosine about 0.999
    table[c] = -table[e] + 0.01 * torch.randn(d, generator=g)  # opposite directions, cosine about -1
    table[f] = 10 * torch.randn(d, generator=g)  # long rows: a large dot product, a smaller cosine
    table[h] = table[f] + 3 * torch.randn(d, generator=g)
    others = [row for row in range(n) if row not in (a, b, c, e, f, h)]
    rows = [others[0], b, others[1], a]
    if seed:
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


def _judge_pair(check: Check, spec: Exercise, case: Case, got: Any, want: tuple[int, int]) -> None:
    (table,) = case.args
    problem, hint = f"it returned {got!r}", "return two positions, a tuple (i, j) of ints."
    pair = check.convert(got, lambda ids: tuple(int(x) for x in ids), problem, hint)
    check.that(len(pair) == 2, problem, hint)
    long, opposite = ({int(x) for x in part.split(",")} for part in case.tag.split("/"))
    check.that(
        pair == want, f"for a {tuple(table.shape)} table it returned {pair}", _pair_hint(pair, want, long, opposite)
    )


MOST_ALIKE_PAIR = Exercise(
    label="ex-4-3",
    what="the most alike pair of positions",
    checker="check_most_alike_pair",
    function="most_alike_pair",
    signature="(table (N, D)) -> (i, j), i < j: the two distinct rows with the largest cosine",
    cases=_pair_cases,
    reference=_most_alike,
    judge=_judge_pair,
)

check_most_alike_pair = MOST_ALIKE_PAIR.checker_function()


#: Every exercise of the chapter with a checker, in order.
EXERCISES = [
    BERT_SUM,
    SEGMENT_IDS,
    MOST_ALIKE_PAIR,
]
