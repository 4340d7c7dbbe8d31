"""Exercises of chapter 4, the Confluence (BERT's three-way sum on real weights).

* :data:`BERT_SUM` (ex-4-1): assemble ``LayerNorm(word + segment + position)`` by hand.
* :data:`PADDED_POSITION_IDS` (ex-4-2): the position ids of a left-padded batch.
* :data:`MOST_ALIKE_PAIR` (ex-4-3): the two distinct positions whose rows are most alike.

Each runs on small inputs of its own (no weights needed).
"""

from __future__ import annotations

import random
from typing import Any

import torch

from .exercise import Exercise, Kind, Slip, Tensor, call

__all__ = [
    "BERT_SUM",
    "EXERCISES",
    "MOST_ALIKE_PAIR",
    "PADDED_POSITION_IDS",
    "check_bert_sum",
    "check_most_alike_pair",
    "check_padded_position_ids",
]

# --- ex-4-1: the three-way sum -------------------------------------------------------------------------------


def _layer_norm(x: torch.Tensor, gain: torch.Tensor, bias: torch.Tensor, eps: float, unbiased: bool = False):
    """LayerNorm over the last dimension, the result in float64 (``unbiased``: a slip, dividing by D - 1)."""
    mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=unbiased, keepdim=True)
    return ((x - mean) / torch.sqrt(var + eps) * gain + bias).double()


def _tables(seed: int) -> tuple[torch.Generator, tuple[torch.Tensor, ...]]:
    """The seed's generator and the five tables it draws first: word, segment, position, gain and bias."""
    g = torch.Generator().manual_seed(4 + 1000 * seed)
    word, segment, position = (torch.randn(rows, 8, generator=g) for rows in (23, 2, 24))
    return g, (word, segment, position, 1 + 0.3 * torch.randn(8, generator=g), 0.5 * torch.randn(8, generator=g))


def _sum_call(ids: list[list[int]], segments: list[list[int]], seed: int, positions: Any = None) -> Any:
    """One call: the ids and segment ids as tensors, then the tables of ``seed`` and eps (and position ids)."""
    more = {} if positions is None else {"position_ids": torch.tensor(positions)}
    return call(torch.tensor(ids), torch.tensor(segments), *_tables(seed)[1], 1e-12, **more)


def _sum_hidden(r: random.Random) -> list:
    """A batch of two and one token, from tables drawn for the run."""
    seed = r.randrange(1, 10_000)
    length = 5 + seed % 6
    ids = torch.randint(0, 23, (2, length), generator=_tables(seed)[0]).tolist()
    segments = [[int(t >= 1 + seed % (length - 1)) for t in range(length)]] * 2
    start = seed % 5
    shifted = [list(range(start, start + length)), [0] * start + list(range(length - start))]
    return [
        _sum_call(ids, segments, seed),
        _sum_call([ids[0][:1]], [[0]], seed),
        _sum_call(ids, segments, seed, shifted),
    ]


def _seats(input_ids: torch.Tensor, position_ids: torch.Tensor | None) -> torch.Tensor:
    """The row of the position table each token reads: ``position_ids``, else 0 … T-1."""
    return torch.arange(input_ids.shape[1]) if position_ids is None else position_ids


def _bert_sum(
    input_ids,
    token_type_ids,
    word_table,
    segment_table,
    position_table,
    ln_weight,
    ln_bias,
    eps=1e-12,
    position_ids=None,
):
    """BERT's embedding output without dropout, ``(B, T, D)``, in float64."""
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[_seats(input_ids, position_ids)]
    return _layer_norm(total, ln_weight, ln_bias, eps)


def _parts(ids, segments, word, segment, position, position_ids=None):
    return word[ids], segment[segments], position[_seats(ids, position_ids)]


def _sum_slip(kind: str):
    """The answer of one typical slip, with the reference's signature."""

    def slipped(ids, segments, word, segment, position, gain, bias, eps=1e-12, position_ids=None):
        w, s, p = _parts(ids, segments, word, segment, position, position_ids)
        return {
            "raw_sum": lambda: (w + s + p).double(),
            "no_segments": lambda: _layer_norm(w + p, gain, bias, eps),
            "no_positions": lambda: _layer_norm(w + s, gain, bias, eps),
            "from_one": lambda: _layer_norm(w + s + position[_seats(ids, position_ids) + 1], gain, bias, eps),
            "ignores_position_ids": lambda: _layer_norm(w + s + position[_seats(ids, None)], gain, bias, eps),
            "by_token_id": lambda: _layer_norm(w + s + position[ids], gain, bias, eps),
            "unbiased": lambda: _layer_norm(w + s + p, gain, bias, eps, unbiased=True),
            "no_gain_bias": lambda: _layer_norm(w + s + p, torch.ones_like(gain), torch.zeros_like(bias), eps),
            "no_bias": lambda: _layer_norm(w + s + p, gain, torch.zeros_like(bias), eps),
        }[kind]()

    return slipped


def _wrong_shape(got: Any, input_ids: torch.Tensor, token_type_ids: Any, word_table: torch.Tensor, *rest: Any) -> bool:
    return tuple(getattr(got, "shape", ())) != (*input_ids.shape, word_table.shape[1])


BERT_SUM = Exercise(
    "ex-4-1",
    "my_bert_sum",
    checker="check_bert_sum",
    what="the three-way sum with LayerNorm",
    reference=_bert_sum,
    public=[
        _sum_call([[3, 17, 5, 9, 2, 21, 14]], [[0, 0, 0, 0, 1, 1, 1]], 0),
        _sum_call([[1, 4, 4, 8], [20, 0, 13, 2]], [[0, 0, 1, 1], [0, 1, 1, 1]], 0),
        _sum_call([[7]], [[0]], 0),
        _sum_call([[1, 4, 4, 8], [20, 0, 13, 2]], [[0, 0, 1, 1], [0, 1, 1, 1]], 0, [[0, 0, 0, 1], [3, 4, 5, 6]]),
    ],
    hidden=_sum_hidden,
    answer=Tensor(atol=1e-4, rtol=1e-5),
    slips=[
        Slip(
            when=lambda got, *args: not hasattr(got, "shape"),
            says="the answer is a tensor of shape (B, T, D): return it.",
        ),
        Slip(
            when=lambda got, *args: isinstance(got, torch.Tensor) and _wrong_shape(got, *args),
            says="your result does not have one row of width D for every token of every sequence in the batch.",
            then="index each table with the whole (B, T) tensor of ids, not one sequence at a time.",
        ),
        Slip(
            _sum_slip("raw_sum"),
            says="your output is the raw sum: nothing has levelled it yet.",
            then="BERT's layer ends with LayerNorm, its gain and its bias.",
        ),
        Slip(
            _sum_slip("no_segments"),
            says="the segment stream is missing from your sum.",
            then="every token also receives the row of its segment id.",
        ),
        Slip(
            _sum_slip("no_positions"),
            says="the position stream is missing from your sum.",
            then="every token also receives the row of its seat.",
        ),
        Slip(
            _sum_slip("from_one"),
            says="your positions are one seat off: look at which row the first token reads.",
            then="seats count from 0, and [CLS] sits in the first one.",
        ),
        Slip(
            _sum_slip("ignores_position_ids"),
            says="given position_ids, your sum still reads rows 0 … T − 1.",
            then="position_ids, when given, says which row of the position table each token reads.",
        ),
        Slip(
            _sum_slip("by_token_id"),
            says="your position rows are chosen by the wrong index: look at what you index the position table with.",
            then="a position row depends on where a token stands, not on which token it is.",
        ),
        Slip(
            _sum_slip("unbiased"),
            says="your variance divides by D − 1: LayerNorm's does not.",
            then="LayerNorm uses the variance of the D numbers themselves, not an estimate for a larger population.",
        ),
        Slip(
            _sum_slip("no_gain_bias"),
            says="your output is normalised but not rescaled: LayerNorm's learned gain and bias are missing.",
            then="after normalising, ln_weight and ln_bias each have a part to play.",
        ),
        Slip(
            _sum_slip("no_bias"),
            says="your output is scaled by the gain, but the bias is missing.",
            then="ln_bias is the last thing added to every token.",
        ),
    ],
    otherwise=Slip(
        says="compute one token's output by hand (its three rows, their sum, then LayerNorm) and compare.",
        then="check LayerNorm on its own: each token's D numbers should have mean 0 and variance 1 before the gain.",
    ),
)

# --- ex-4-2: position ids for a left-padded batch ------------------------------------------------------------


def _position_ids(attention_mask: torch.Tensor) -> torch.Tensor:
    """Each real token's seat in its own sentence; padding at 0. ``(B, T)`` of 0/1 -> ``(B, T)`` int64."""
    real = attention_mask.long()
    return (real.cumsum(-1) - 1).clamp(min=0) * real


def _mask(pads: list[int], length: int) -> list[list[int]]:
    return [[0] * n + [1] * (length - n) for n in pads]


def _ids_hidden(r: random.Random) -> list:
    """Two left-padded batches, each with a row without padding, and one with a single real token."""
    calls = []
    for batch, length in ((r.randrange(2, 5), r.randrange(7, 13)), (3, r.randrange(13, 20))):
        pads = [0, length - 1, *(r.randrange(1, length - 1) for _ in range(batch - 2))]
        r.shuffle(pads)
        calls.append(call(torch.tensor(_mask(pads, length))))
    return calls


def _not_integers(got: Any, expected: Any, one: Any) -> Slip | None:
    if isinstance(got, torch.Tensor) and got.is_floating_point():
        return Slip(
            says="your ids are floating-point numbers: a table is indexed with integers.",
            then="look at the dtype of the tensor you return.",
        )
    return None


def _ids_slip(kind: str):
    def slipped(attention_mask: torch.Tensor) -> torch.Tensor:
        real = attention_mask.long()
        count = real.cumsum(-1)
        return {
            "arange": lambda: torch.arange(real.shape[1]).expand_as(real),
            "from_one": lambda: count * real,
            "pads_negative": lambda: count - 1,
            "pads_one": lambda: torch.where(real.bool(), count - 1, torch.ones_like(real)),
            "right_padded": lambda: torch.where(
                torch.arange(real.shape[1]) < real.sum(-1, keepdim=True), torch.arange(real.shape[1]), 0
            ),
            "first_row": lambda: _position_ids(attention_mask[:1]).expand_as(real),
        }[kind]()

    return slipped


PADDED_POSITION_IDS = Exercise(
    "ex-4-2",
    "my_position_ids",
    checker="check_padded_position_ids",
    what="position ids of a left-padded batch",
    reference=_position_ids,
    public=[
        call(torch.tensor(_mask([2, 0], 5))),
        call(torch.tensor(_mask([3, 1, 0], 4))),
        call(torch.tensor(_mask([0], 3))),
        call(torch.tensor(_mask([5], 6))),
    ],
    hidden=_ids_hidden,
    answer=Tensor(),
    judge=_not_integers,
    slips=[
        Slip(
            when=lambda got, *args: not hasattr(got, "shape"),
            says="the answer is a tensor of ids of the mask's shape (B, T): return it.",
        ),
        Slip(
            _ids_slip("arange"),
            says="your ids count the padding: in a padded row the first real token does not read the first row.",
            then="a sentence should read the same rows padded or not: which seat does its first real token have"
            " when it stands alone?",
        ),
        Slip(
            _ids_slip("from_one"),
            says="your real tokens start one seat too far: the first real token of each row reads row 1.",
            then="seats count from 0: what does your count give at a sentence's first real token?",
        ),
        Slip(
            _ids_slip("pads_negative"),
            says="the padding positions got −1: no table has a row −1.",
            then="the statement says which id a padding position gets.",
        ),
        Slip(
            _ids_slip("pads_one"),
            says="the real tokens are right, but the padding positions got 1, not the id the statement asks for.",
        ),
        Slip(
            _ids_slip("right_padded"),
            says="your ids put the real tokens at the start of the row: in this batch the padding comes first.",
            then="look at where the zeros of the mask are.",
        ),
        Slip(
            _ids_slip("first_row"),
            says="every row of the batch got the ids of the first: each sentence has its own padding.",
        ),
    ],
    otherwise=Slip(
        says="write out one padded row by hand, the mask and the seat each token had alone, and compare.",
        then="a padding position is masked out, so its id only has to be a row that exists; the statement fixes which.",
    ),
)

# --- ex-4-3: the most alike pair -----------------------------------------------------------------------------


def _trap_table(seed: int, plants: tuple[int, ...], n: int = 16, d: int = 8) -> torch.Tensor:
    """An (n, d) table with traps: a near copy (the answer), opposite rows, and two long rows alike in direction
    less than their dot product suggests; ``plants`` = the six rows (a, b, c, e, f, h) that hold them."""
    g = torch.Generator().manual_seed(43 + 1000 * seed)
    a, b, c, e, f, h = plants
    table = torch.randn(n, d, generator=g)
    table[b] = table[a] + 0.05 * torch.randn(d, generator=g)  # the most alike pair, cosine about 0.999
    table[c] = -table[e] + 0.01 * torch.randn(d, generator=g)  # opposite directions, cosine about -1
    table[f] = 10 * torch.randn(d, generator=g)  # long rows: a large dot product, a smaller cosine
    table[h] = table[f] + 3 * torch.randn(d, generator=g)
    return table


def _pair_calls(seed: int, plants: tuple[int, ...], order: list[int], n: int = 16, d: int = 8) -> list:
    """The table, the same flipped, and four of its rows (two of them the answer) in ``order``."""
    table = _trap_table(seed, plants, n, d)
    others = [row for row in range(n) if row not in plants]
    rows = [[others[0], plants[1], others[1], plants[0]][i] for i in order]
    return [call(table), call(table.flip(0)), call(table[rows])]


def _pair_hidden(r: random.Random) -> list:
    order = [0, 1, 2, 3]
    r.shuffle(order)
    n, d = r.randrange(17, 25), r.choice([6, 10, 12])
    return _pair_calls(r.randrange(1, 10_000), tuple(r.sample(range(n), 6)), order, n, d)


def _most_alike(table: torch.Tensor) -> tuple[int, int]:
    """The pair ``(i, j)``, ``i < j``, of distinct rows with the largest cosine."""
    unit = table / table.norm(dim=1, keepdim=True)
    cosine = (unit @ unit.T).fill_diagonal_(-2.0)
    i, j = divmod(int(cosine.argmax()), len(table))
    return (min(i, j), max(i, j))


def _pair_of(scores: torch.Tensor, keep_diagonal: bool = False) -> tuple[int, int]:
    if not keep_diagonal:
        scores = scores.clone().fill_diagonal_(-float("inf"))
    i, j = divmod(int(scores.argmax()), len(scores))
    return (i, j) if keep_diagonal else (min(i, j), max(i, j))


def _cosines(table: torch.Tensor) -> torch.Tensor:
    unit = table / table.norm(dim=1, keepdim=True)
    return unit @ unit.T


class _Pair(Kind):
    """Two positions, as a tuple, a list or a tensor of two whole numbers, equal to the right pair in order."""

    def fault(self, got: Any, expected: Any, hidden: bool) -> str | None:
        try:
            pair = tuple(int(x) for x in got)
        except (TypeError, ValueError, RuntimeError):
            return f"it returned {got!r}, not two positions"
        if len(pair) != 2 or any(float(x) != int(x) for x in got):
            return f"it returned {got!r}, not two positions"
        return None if pair == tuple(expected) else (f"it returned {pair}" + ("" if hidden else ", not the pair"))


MOST_ALIKE_PAIR = Exercise(
    "ex-4-3",
    "most_alike_pair",
    checker="check_most_alike_pair",
    what="the most alike pair of positions",
    reference=_most_alike,
    public=_pair_calls(0, (3, 11, 6, 13, 5, 9), [0, 1, 2, 3]),
    hidden=_pair_hidden,
    answer=_Pair(),
    slips=[
        Slip(
            when=lambda got, *args: isinstance(got, (int, float)) or getattr(got, "ndim", 1) == 0,
            says="it returned one number: the answer is two positions, (i, j).",
        ),
        Slip(
            when=lambda got, *args: "not two positions" in str(_Pair().fault(got, (0, 0), True)),
            says="the answer is two positions, a tuple (i, j) of ints.",
        ),
        Slip(
            lambda table: _pair_of(_cosines(table), keep_diagonal=True),
            says="your pair is one position twice: every row is perfectly alike to itself.",
            then="the question is about two distinct positions.",
        ),
        Slip(
            lambda table: _most_alike(table)[::-1],
            says="right pair, wrong order: the statement asks for the smaller position first.",
        ),
        Slip(
            lambda table: _pair_of(table @ table.T),
            says="your pair has the largest dot product, not the largest cosine: long rows win a dot product.",
            then="alike means pointing the same way, whatever the rows' lengths.",
        ),
        Slip(
            lambda table: _pair_of(_cosines(table).abs()),
            says="your pair points in opposite directions: a cosine near −1 is the least alike, not the most.",
            then="compare signed cosines, not their sizes.",
        ),
    ],
    otherwise=Slip(
        says="your pair's cosine is not the largest among distinct rows: compute a few cosines by hand.",
        then="the cosine of two rows is their dot product divided by both of their lengths.",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [BERT_SUM, PADDED_POSITION_IDS, MOST_ALIKE_PAIR]

check_bert_sum = BERT_SUM.checker_function()
check_padded_position_ids = PADDED_POSITION_IDS.checker_function()
check_most_alike_pair = MOST_ALIKE_PAIR.checker_function()
