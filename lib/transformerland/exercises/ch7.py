"""Exercises of chapter 7, the Observatory (a real RoPE language model), as declarations.

* :data:`PACKED_POSITIONS` (ex-7-1): position ids for several texts packed into one row.
* :data:`GGUF_UNPERMUTE` (ex-7-2): llama.cpp's query/key row order back to transformers' halves.
* :data:`BASE_RANGE` (ex-7-3): the bases for which exactly the first pairs complete a full turn within a context.
"""

from __future__ import annotations

import math
import random
from typing import Any

import torch

from ..encodings.rotary import halves_to_pairs
from ..llm import gguf_rows_to_halves
from .exercise import Call, Exercise, Slip, Tensor, call

__all__ = [
    "BASE_RANGE",
    "EXERCISES",
    "GGUF_UNPERMUTE",
    "PACKED_POSITIONS",
    "check_base_range",
    "check_gguf_unpermute",
    "check_packed_positions",
]


# --- ex-7-1: positions in a packed row -------------------------------------------------------------------


def _columns(text_ids: torch.Tensor) -> torch.Tensor:
    """(B, T) → (B, T): each slot's column, 0 to T - 1, on ``text_ids``' device."""
    return torch.arange(text_ids.shape[1], device=text_ids.device).expand_as(text_ids)


def _packed_positions(text_ids: torch.Tensor) -> torch.Tensor:
    """(B, T) text names → (B, T) positions counting 0, 1, 2, … from the start of each text.

    A text starts at each row's first slot and wherever the name differs from the slot before.
    """
    column = _columns(text_ids)
    starts = torch.ones_like(text_ids, dtype=torch.bool)
    starts[:, 1:] = text_ids[:, 1:] != text_ids[:, :-1]
    text_start = torch.where(starts, column, 0).cummax(dim=1).values  # the column where each slot's text began
    return column - text_start


def _by_name(text_ids: torch.Tensor) -> torch.Tensor:
    """The slip of grouping by name, (B, T) → (B, T): each slot counts the earlier slots of its row with its name."""
    same = text_ids[:, :, None] == text_ids[:, None, :]  # (B, slot, earlier slot)
    return torch.tril(same, diagonal=-1).sum(dim=2)


def _rows_run_together(text_ids: torch.Tensor) -> torch.Tensor:
    """The slip of packing the batch as one long row, (B, T) → (B, T): a row's first text continues the row
    above's last when the names match."""
    return _packed_positions(text_ids.reshape(1, -1)).reshape(text_ids.shape)


def _packed_rows(r: random.Random) -> list:
    """Two batches of packed rows drawn with ``r``, of 2 and 3 rows over the names 0, 1 and 2.

    Each batch's first row is A…B…A: its first name comes back after another text (so grouping by name fails),
    and it ends with the name it starts with (so a loop whose first slot compares itself with the row's last,
    Python's index -1, fails). Every later row starts with the name the row above ended with (so rows run
    together fail).
    """
    calls = []
    for n_rows, width in ((2, r.randrange(6, 10)), (3, r.randrange(9, 14))):
        first, other = r.sample(range(3), 2)
        a = r.randrange(1, width - 1)
        b = r.randrange(1, width - a)
        rows, name = [[first] * a + [other] * b + [first] * (width - a - b)], first
        for _ in range(n_rows - 1):
            row = []
            while len(row) < width:
                row += [name] * r.randrange(1, 5)
                name = (name + r.randrange(1, 3)) % 3  # another of the three names
            rows.append(row[:width])
            name = rows[-1][-1]  # the next row starts with the name this one ended with
        calls.append(call(torch.tensor(rows)))
    return calls


def _not_integer_tensor(got: Any, expected: Any, one: Call) -> Slip | None:
    """The judge: position ids must come back as a tensor of an integer dtype (a model indexes with them)."""
    if isinstance(got, torch.Tensor) and not (got.is_floating_point() or got.is_complex() or got.dtype == torch.bool):
        return None
    return Slip(
        says="your positions are not an integer tensor (a float or bool dtype, or no tensor at all): a model's "
        "position_ids hold whole-number counts in an integer dtype.",
        then="look at what your computation returns, and the dtype it ends in: which step changed it?",
    )


PACKED_POSITIONS = Exercise(
    "ex-7-1",
    "my_packed_positions",
    checker="check_packed_positions",
    what="positions in a packed row",
    reference=_packed_positions,
    public=[  # one text, one-token texts, a name that comes back, then rows that must not run together
        call(torch.tensor([[4, 4, 4, 4]])),
        call(torch.tensor([[0, 0, 0, 1, 1], [0, 1, 2, 3, 4]])),
        call(torch.tensor([[5, 5, 2, 2, 2, 5, 5]])),
        call(torch.tensor([[0, 0, 1], [1, 1, 2]])),
    ],
    hidden=_packed_rows,
    answer=Tensor(),
    judge=_not_integer_tensor,
    slips=[
        Slip(
            when=lambda got, text_ids: tuple(torch.as_tensor(got).shape) != tuple(text_ids.shape),
            says="return one position per slot: the same shape as text_ids.",
            then="every slot needs a position, the first of each text too.",
        ),
        Slip(
            _columns,
            says="every slot was counted from the start of its row: only a row's first text starts there.",
            then="where would the second text's first token be if it ran alone?",
        ),
        Slip(
            lambda text_ids: _packed_positions(text_ids) + 1,
            says="your texts count from 1: a text's first token sits at position 0.",
            then="run the first text of a row alone: which position does its first token get?",
        ),
        Slip(
            _by_name,
            says="a name that comes back, as in [5, 5, 2, 2, 2, 5, 5], continued the count of its first text: a new "
            "text starts wherever the name changes, even to a name seen before.",
            then="what matters is the slot just before, not the name itself.",
        ),
        Slip(
            _rows_run_together,
            says="your rows ran together: a row's first text continued the text that ended the row above.",
            then="every row starts a new text at its first slot, whatever the row above ended with.",
        ),
    ],
    otherwise=Slip(
        says="write one packed row out by hand, with the position each token would have if its text ran alone, and "
        "compare with yours.",
        then="for each slot, where did its text begin?",
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
EXERCISES = [PACKED_POSITIONS, GGUF_UNPERMUTE, BASE_RANGE]

check_packed_positions = PACKED_POSITIONS.checker_function()
check_gguf_unpermute = GGUF_UNPERMUTE.checker_function()
check_base_range = BASE_RANGE.checker_function()
