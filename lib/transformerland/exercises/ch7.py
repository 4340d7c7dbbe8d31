"""Exercises of chapter 7, the Observatory (a real RoPE language model), as declarations.

* :data:`POSITION_IDS` (ex-7-1): position ids from a padding mask.
* :data:`GGUF_UNPERMUTE` (ex-7-2): llama.cpp's query/key row order back to transformers' halves.
* :data:`BASE_RANGE` (ex-7-3): the bases for which exactly the first pairs complete a full turn within a context.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import torch

from ..encodings.rotary import halves_to_pairs
from ..llm import gguf_rows_to_halves, position_ids_from_mask
from .exercise import Call, Exercise, Kind, Slip, Tensor, call

__all__ = [
    "BASE_RANGE",
    "EXERCISES",
    "GGUF_UNPERMUTE",
    "POSITION_IDS",
    "check_base_range",
    "check_gguf_unpermute",
    "check_position_ids",
]


def _whole(got: Any) -> torch.Tensor | None:
    """``got`` as a tensor of whole numbers, or None when it is not one."""
    try:
        got = torch.as_tensor(got).detach().cpu()
    except (TypeError, ValueError, RuntimeError):
        return None
    if got.numel() == 0:  # an empty list has no dtype to speak of
        return got.long()
    return got if not got.is_floating_point() and not got.is_complex() and got.dtype != torch.bool else None


# --- ex-7-1: positions from a padding mask ---------------------------------------------------------------

#: What a padding slot holds in the reference's answer: any position from 0 is right there.
_FREE = -(2**62)


def _positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """The real tokens' positions, 0, 1, 2, … from each row's first real token; padding slots are free."""
    return position_ids_from_mask(attention_mask).masked_fill(attention_mask == 0, _FREE)


@dataclass(frozen=True)
class _RealPositions(Kind):
    """Whole numbers of the mask's shape, equal to the answer on real tokens, at least 0 on padding."""

    def fault(self, got: Any, expected: Any, hidden: bool) -> str | None:
        ids = _whole(got)
        if ids is None:
            kind = got.dtype if isinstance(got, torch.Tensor) else type(got).__name__
            return f"it returned {kind}, not whole numbers"
        if ids.shape != expected.shape:
            return f"it has shape {tuple(ids.shape)}" + ("" if hidden else f"; expected {tuple(expected.shape)}")
        real = expected != _FREE
        if not torch.equal(ids[real], expected[real].to(ids.dtype)):
            shown = "" if hidden else f": {ids[real].tolist()}, not {expected[real].tolist()}"
            return "the real tokens' positions are wrong" + shown
        padding = ids[~real]
        return None if bool(((padding >= 0) | (padding == _FREE)).all()) else "a padding slot got a negative position"

    def close(self, got: Any, other: Any) -> bool:
        """A slip's answer has no free slots: the same numbers everywhere."""
        ids = _whole(got)
        other = torch.as_tensor(other)
        return ids is not None and ids.shape == other.shape and torch.equal(ids, other.to(ids.dtype))


def _padded_masks(r: random.Random) -> list:
    """Left-, right- and left-padded masks, their widths and real tokens drawn with ``r``."""
    calls = []
    for left in (True, False, True):
        width = r.randrange(4, 9)
        reals = [r.randrange(1, width + 1) for _ in range(r.randrange(2, 4))]
        rows = [[0] * (width - n) + [1] * n if left else [1] * n + [0] * (width - n) for n in reals]
        calls.append(call(torch.tensor(rows)))
    return calls


def _arange(attention_mask: torch.Tensor) -> torch.Tensor:
    return torch.arange(attention_mask.shape[1]).expand_as(attention_mask)


POSITION_IDS = Exercise(
    "ex-7-1",
    "my_position_ids",
    checker="check_position_ids",
    what="position ids from a padding mask",
    reference=_positions,
    withheld=("transformerland.llm.positions.position_ids_from_mask",),
    public=[  # no padding, right padding, then left padding (the decoder's kind), and a row with one real token
        call(torch.tensor([[1, 1, 1, 1]])),
        call(torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])),
        call(torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])),
        call(torch.tensor([[0, 0, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]])),
        call(torch.tensor([[0, 1]])),
    ],
    hidden=_padded_masks,
    answer=_RealPositions(),
    slips=[
        Slip(
            when=lambda got, attention_mask: _whole(got) is None,
            says="your positions are not an integer tensor (a float or bool dtype, or no tensor at all): a model's "
            "position_ids hold whole-number counts in an integer dtype.",
            then="look at the dtype your computation ends in: which step changed it?",
        ),
        Slip(
            when=lambda got, attention_mask: tuple(torch.as_tensor(got).shape) != tuple(attention_mask.shape),
            says="return one position per slot, padding included: the same shape as the mask.",
            then="a padding slot needs a position too, even if nothing reads it.",
        ),
        Slip(
            _arange,
            says="the padding was counted: every row got 0, 1, 2, … whatever its mask.",
            then="only the real tokens count: how many real tokens come before each slot?",
        ),
        Slip(
            lambda attention_mask: attention_mask.cumsum(dim=1),
            says="the real tokens count from 1: the first real token of a row sits at position 0.",
            then="your count includes the slot itself: a position counts the real tokens strictly before it.",
        ),
        Slip(
            lambda attention_mask: _arange(attention_mask) - (attention_mask == 0).sum(dim=1, keepdim=True),
            says="you subtracted the number of padding slots, which only works when all the padding comes first.",
            then="try a row padded on the right: what should its real tokens get, and what does yours give?",
        ),
        Slip(
            when=lambda got, attention_mask: bool((torch.as_tensor(got)[attention_mask == 0] < 0).any()),
            says="a padding slot got a negative position: its position never matters, but it must be a valid one.",
            then="what does your count give a slot before the first real token?",
        ),
    ],
    otherwise=Slip(
        says="work one padded row out by hand, a left-padded one and a right-padded one, and compare with yours.",
        then="a row padded on the left and the same row unpadded must give their real tokens the same positions: "
        "do yours?",
    ),
)

# --- ex-7-2: the GGUF row order undone -------------------------------------------------------------------


def _counting(n_heads: int, head_dim: int, columns: int) -> torch.Tensor:
    """A weight of ``n_heads · head_dim`` rows whose entries count up 0, 1, 2, … row by row."""
    return torch.arange(n_heads * head_dim * columns, dtype=torch.float32).reshape(n_heads * head_dim, columns)


def _random_weights(r: random.Random) -> list:
    """Weights of other shapes and head counts, their entries drawn with ``r``."""
    g = torch.Generator().manual_seed(r.randrange(2**31))
    shapes = ((r.choice([4, 5]), 16, 3), (1, 8, 2), (r.choice([6, 7]), 32, 2))
    return [call(torch.randn(n * d, c, generator=g), n) for n, d, c in shapes]


def _permuted(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """llama.cpp's own permutation (halves → pairs) applied once more, instead of undone."""
    head_dim = len(weight) // n_heads
    return weight.reshape(n_heads, head_dim, -1)[:, halves_to_pairs(head_dim)].reshape(weight.shape)


GGUF_UNPERMUTE = Exercise(
    "ex-7-2",
    "my_unpermute",
    checker="check_gguf_unpermute",
    what="the GGUF row order undone",
    reference=gguf_rows_to_halves,
    withheld=(
        "transformerland.llm.gguf_file.gguf_rows_to_halves",
        "transformerland.llm.gguf_file.halves_rows_to_gguf",
    ),
    public=[
        call(_counting(2, 8, 3), 2),
        call(_counting(1, 4, 1), 1),
        call(_counting(9, 64, 5), 9),
        call(_counting(3, 64, 2), 3),
    ],
    hidden=_random_weights,
    answer=Tensor(),
    slips=[
        Slip(
            when=lambda got, weight, n_heads: tuple(torch.as_tensor(got).shape) != tuple(weight.shape),
            says="the rows move, but their number and width stay: return the same shape as the weight.",
            then="you reorder rows; nothing is added or dropped.",
        ),
        Slip(
            _permuted,
            says="you applied llama.cpp's permutation (halves → pairs) instead of undoing it.",
            then="row 1 of a head in the file is the y of pair 0: where does the halves layout want it?",
        ),
        Slip(
            lambda weight, n_heads: gguf_rows_to_halves(weight, 1),
            says="the whole matrix was reordered as one head: each of the {n_heads} heads has its own pairs.",
            then="each head has rows / n_heads rows, and its pairs are reordered within it.",
        ),
        Slip(
            lambda weight, n_heads: weight.clone(),
            says="the rows are still in the file's order.",
            then="in the file a head's rows go x, y, x, y, … pair by pair; the halves layout wants the x's first.",
        ),
    ],
    otherwise=Slip(
        says="try a head of width 4 by hand: which file row belongs at each of its 4 places?",
        then="a head of width d holds d/2 pairs; the halves layout puts each pair's x in the first half, its y in "
        "the second.",
    ),
)

# --- ex-7-3: the bases that make exactly the first pairs come full circle ----------------------------------


def _base_range(head_dim: int, context: int, n_turning: int) -> torch.Tensor:
    """``(2,)``: the bases ``low < b <= high`` for which exactly pairs ``0 … n_turning - 1`` complete a turn over
    the largest offset in the context, ``context - 1``. Pair ``i`` turns ``(context - 1) b^(-2i/d)`` radians
    there, a full turn when ``b^(2i/d) <= (context - 1) / 2π``: pair ``n_turning - 1`` must, pair ``n_turning``
    must not."""
    return _range(head_dim, (context - 1) / (2 * math.pi), n_turning)


def _range(head_dim: int, reach: float, n_turning: int, step: float = 2.0) -> torch.Tensor:
    """The bases between which pairs ``0 … n_turning - 1`` satisfy ``b^(step·i/d) <= reach`` and no other: ``(2,)``."""
    low = reach ** (head_dim / (step * n_turning))
    high = reach ** (head_dim / (step * (n_turning - 1)))
    return torch.tensor([low, high], dtype=torch.float64)


def _hidden_calls(r: random.Random) -> list[Call]:
    head_dim = r.choice([32, 64, 128])
    return [
        call(head_dim, r.randrange(256, 4256), r.randrange(2, head_dim // 2)),
        call(16, r.randrange(50, 80), r.randrange(2, 8)),
    ]


BASE_RANGE = Exercise(
    "ex-7-3",
    "my_base_range",
    checker="check_base_range",
    what="the bases that turn exactly the first pairs",
    reference=_base_range,
    public=[call(64, 8192, 20), call(64, 4096, 16), call(128, 32768, 40), call(16, 100, 3)],
    hidden=_hidden_calls,
    answer=Tensor(rtol=1e-6),
    slips=[
        Slip(
            lambda head_dim, context, n_turning: _base_range(head_dim, context, n_turning).flip(0),
            says="your two bases are in the wrong order: the first is the lower end, which no base may equal.",
            then="which of your two conditions gives the larger base?",
        ),
        Slip(
            lambda head_dim, context, n_turning: _range(head_dim, context / (2 * math.pi), n_turning),
            says="your largest offset is one too large: the first token sits at position 0.",
            then="in a context of {context} tokens, how far apart are the first and the last?",
        ),
        Slip(
            lambda head_dim, context, n_turning: _range(head_dim, context - 1.0, n_turning),
            says="your full turn is too small. Look at what one turn measures in radians.",
            then="θ_i is an angle per position, in radians.",
        ),
        Slip(
            lambda head_dim, context, n_turning: _base_range(head_dim, context, n_turning + 1),
            says="with your bases one pair too many completes a turn: {n_turning} pairs, counted from 0, end at which"
            " index?",
            then="write which pair must turn and which must not, by their indices.",
        ),
        Slip(
            lambda head_dim, context, n_turning: _base_range(head_dim, context, max(n_turning - 1, 2)),
            says="with your bases one pair too few completes a turn: {n_turning} pairs, counted from 0, end at which"
            " index?",
            then="write which pair must turn and which must not, by their indices.",
        ),
        Slip(
            lambda head_dim, context, n_turning: _range(head_dim, (context - 1) / (2 * math.pi), n_turning, 1.0),
            says="your frequencies fall only half as fast along the pairs. Look at the exponent of pair i.",
            then="write the exponent for pair i, then for pair i + 1: how much should it grow?",
        ),
    ],
    otherwise=Slip(
        says="write the condition for one pair to complete a turn as an inequality on the base, by hand.",
        then="then ask it of the last pair that must turn, and of the first that must not.",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [POSITION_IDS, GGUF_UNPERMUTE, BASE_RANGE]

check_position_ids = POSITION_IDS.checker_function()
check_gguf_unpermute = GGUF_UNPERMUTE.checker_function()
check_base_range = BASE_RANGE.checker_function()
