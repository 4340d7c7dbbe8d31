"""Exercises of chapter 5, the Edge of the Map (extrapolation limits).

* :data:`INTERPOLATE_TABLE` (ex-5-1): stretch a learned table to more rows.
* :data:`STEPS_TO_REACH` (ex-5-3): read a fine-tuning curve: how many steps to a target loss.
* :data:`SLIDING_WINDOWS` (ex-5-4): cut a long input into overlapping windows that fit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import torch

from ..remedies import interpolate_table, window_spans
from .exercise import Call, Exact, Exercise, Kind, Slip, Tensor, call

__all__ = [
    "EXERCISES",
    "INTERPOLATE_TABLE",
    "SLIDING_WINDOWS",
    "STEPS_TO_REACH",
    "check_interpolate_table",
    "check_sliding_windows",
    "check_steps_to_reach",
]

# --- ex-5-1: stretch the ledger ------------------------------------------------------------------------


def _table_calls(r: random.Random | None) -> list[Call]:
    """A table whose rows change evenly stretched to 2L - 1 rows; a random table stretched; the same random
    table asked for as many rows as it has (``r`` None: the notebook's calls)."""
    g = torch.Generator().manual_seed(500 if r is None else r.randrange(1, 10**9))
    rows = 4 if r is None else r.randrange(3, 7)
    direction, offset = torch.tensor([1.0, -2.0, 0.5]), torch.tensor([0.0, 1.0, 2.0])
    if r is not None:
        direction, offset = torch.randn(3, generator=g), torch.randn(3, generator=g)
    even = torch.arange(float(rows))[:, None] * direction + offset  # (L, 3)
    shape, new_len = ((5, 8), 13) if r is None else ((rows + 1, r.choice([6, 10])), r.randrange(8, 20))
    rough = torch.randn(*shape, generator=g, dtype=torch.float64)
    return [call(even, 2 * rows - 1), call(rough, new_len), call(rough, shape[0])]


def _at(table: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
    """Rows of ``table`` blended linearly at the fractional old positions ``where``, clamped to the table."""
    where = where.clamp(0, table.shape[0] - 1)
    below = where.floor().long()
    above = (below + 1).clamp(max=table.shape[0] - 1)
    weight = (where - below).to(table.dtype)[:, None]
    return (1 - weight) * table[below] + weight * table[above]


def _judge_table(got: Any, expected: Any, one: Call) -> Slip | None:
    """The table's dtype must be kept (the comparison alone would let a float32 answer pass for float64)."""
    table = one.args[0]
    if isinstance(got, torch.Tensor) and got.is_floating_point() and got.dtype != table.dtype:
        return Slip(
            says="the result's dtype is not the table's.",
            then="a weight computed in another dtype changes the result's: compute it in the table's.",
        )
    return None


def _extended(got: Any, table: torch.Tensor, new_len: int) -> bool:
    got = torch.as_tensor(got)
    rows = table.shape[0]
    return new_len > rows and got.shape[0] == new_len and torch.allclose(got[:rows].double(), table.double())


INTERPOLATE_TABLE = Exercise(
    "ex-5-1",
    "my_interpolate_table",
    checker="check_interpolate_table",
    what="position-table interpolation",
    reference=interpolate_table,
    public=_table_calls(None),
    hidden=_table_calls,
    answer=Tensor(atol=1e-6, rtol=1e-5),
    judge=_judge_table,
    slips=[
        Slip(
            when=_extended,
            says="the first rows are the old table, unchanged, and the rest are new: that extends the table.",
            then="interpolation spreads the old rows over the whole new range: where does the last new row stand?",
        ),
        Slip(
            lambda table, new_len: _at(table, torch.arange(new_len, dtype=torch.float64) * table.shape[0] / new_len),
            says="your last new row is not the last old row: the stretched range runs past the trained rows.",
            then="at which old position does your last new row stand? It should be the last trained one.",
        ),
        Slip(
            lambda table, new_len: table[
                torch.linspace(0, table.shape[0] - 1, new_len, dtype=torch.float64).round().long()
            ],
            says="the new rows between old positions copy the nearest old row instead of blending the two around them.",
            then="a row a quarter of the way from old row p to p + 1 is mostly row p and a little row p + 1.",
        ),
    ],
    otherwise=Slip(
        says="work out one new row by hand: its old position, the two old rows around it, and its weight.",
        then="check that you blend along the positions (dim 0), and that the first and last rows stay put.",
    ),
)

# --- ex-5-3: steps to a target loss ----------------------------------------------------------------------


def _steps(losses: Sequence[float], target: float, window: int, start: int = 0) -> int | None:
    """The first step ``t`` whose window ``losses[t - window + start : t + start]`` averages at or below
    ``target`` (a ``start`` above 0, the window shifted forward, is a slip)."""
    for step in range(window, len(losses) + 1):
        piece = losses[step - window + start : step + start]
        if len(piece) == window and sum(piece) / window <= target:
            return step
    return None


def _steps_calls(r: random.Random | None) -> list[Call]:
    """A falling curve (window 1); a noisy one with a low outlier; the target reached at the last step; never;
    a curve shorter than the window (``r`` None: the notebook's calls)."""
    drop = 0.1 if r is None else r.choice([0.05, 0.2, 0.15])
    falling = [round(2.0 - drop * i, 6) for i in range(10 if r is None else r.randrange(8, 14))]
    target = 1.5 if r is None else round(falling[len(falling) // 2] + drop / 2, 6)
    dip = 1 if r is None else r.randrange(1, 3)
    last = 3 if r is None else r.randrange(2, 5)
    return [
        call(falling, target, 1),
        call([2.0] * dip + [1.0] + [2.0] * 2 + [1.4] * 6, 1.5, 3),
        call([2.0] * last + [1.0] * 3, 1.3, 4),
        call([2.0, 1.9, 1.8], 1.0, 2),
        call([1.0, 1.0], 1.5, 5),
    ]


def _a_step(got: object) -> bool:
    return isinstance(got, int) and not isinstance(got, bool)


STEPS_TO_REACH = Exercise(
    "ex-5-3",
    "my_steps_to_reach",
    checker="check_steps_to_reach",
    what="steps to reach a target loss",
    reference=_steps,
    public=_steps_calls(None),
    hidden=_steps_calls,
    answer=Exact(),
    slips=[
        Slip(
            when=lambda got, *args: got is not None and not _a_step(got),
            says="the answer is a number of steps (a Python int), or None when the target is never reached.",
            then="int(…) turns a tensor's single entry into a Python int.",
        ),
        Slip(
            when=lambda got, *args: got is not None and _steps(*args) is None,
            says="no window's mean reaches the target on this curve: the answer is None.",
            then="what does your function return when its search finds nothing?",
        ),
        Slip(
            when=lambda got, *args: got is None,
            says="the target is reached on this curve, but your search misses it.",
            then="does your search reach the window that ends at the last entry of the curve?",
        ),
        Slip(
            lambda losses, target, window: _steps(losses, target, window) - 1,
            says="that is one less than the step: an index counted from 0.",
            then="losses[i] was measured at step i + 1: which step does your index stand for?",
        ),
        Slip(
            lambda losses, target, window: _steps(losses, target, 1),
            says="your step counts a single low loss: one lucky batch is not a recovered model.",
            then="compare the mean of the last `window` losses with the target, not one loss.",
        ),
        Slip(
            lambda losses, target, window: _steps(losses, target, window, start=window - 1),
            says="your window looks ahead: at step t it holds losses after t.",
            then="which index of `losses` holds the loss measured at step t, and does your window end there?",
        ),
        Slip(
            lambda losses, target, window: len(losses),
            says="that is the length of the curve, not the first step at which the target is reached.",
        ),
    ],
    otherwise=Slip(
        says="walk along the curve by hand and find the first step whose window mean is at or below the target.",
        then="for one step t, list the indices of the losses you average: how many are there, and when was the"
        " last of them measured?",
    ),
)

# --- ex-5-4: sliding windows -------------------------------------------------------------------------------


def _windows_hidden(r: random.Random) -> list[Call]:
    window = r.choice([8, 16, 32])
    return [
        call(r.randrange(2 * window, 4 * window), window, window // 2),
        call(r.randrange(1000, 3000), 512, r.choice([128, 256])),
        call(r.randrange(window + 1, 3 * window), window, window),
        call(window + 1, window, r.randrange(2, window // 2)),
        call(r.randrange(1, window), window, window // 2),
        call(window, window, window // 2),
    ]


def _is_span(span: object) -> bool:
    whole = isinstance(span, tuple | list) and len(span) == 2
    return whole and all(isinstance(v, int) and not isinstance(v, bool) for v in span)


def _judge_windows(spans: Any, expected: Any, one: Call) -> Slip | None:
    """Any covering that fits passes (the windows need not be the reference's): its properties, one by one."""
    length, window, stride = one.args
    if not (isinstance(spans, list | tuple) and len(spans) > 0 and all(_is_span(s) for s in spans)):
        return Slip(
            says="it did not return a list of (start, end) pairs of ints.",
            then="return a list of tuples (start, end), with end excluded, as Python slices use them.",
        )
    spans = [tuple(s) for s in spans]
    if any(not 0 <= start < end <= length for start, end in spans):
        return Slip(
            says="a window runs outside 0 … {length}, or is empty.",
            then="no window may end after `length`: there are no tokens there.",
        )
    if any(end - start > window for start, end in spans):
        return Slip(
            says="a window is longer than {window} positions.",
            then="a longer window is exactly the input the model refuses.",
        )
    if spans[0][0] != 0 or spans[-1][1] != length:
        return Slip(
            says="the windows do not run from 0 to {length}: some tokens are left out.",
            then="keep adding windows until one ends exactly at `length` (the last moved back, so that it is full).",
        )
    if length <= window:
        if len(spans) != 1:
            return Slip(says="an input of {length} tokens fits one window of {window}, but you split it.")
        return None
    starts = [start for start, _ in spans]
    if not all(a < b for a, b in pairwise(starts)):
        return Slip(
            says="the windows do not move forward.",
            then="each window starts after the one before: a repeated window costs a forward pass and adds nothing.",
        )
    if min(end_a - start_b for (_, end_a), (start_b, _) in pairwise(spans)) < window - stride:
        return Slip(
            says="two consecutive windows share fewer positions than window − stride.",
            then="how far apart are the starts of two of your windows, and how far apart should they be? The overlap"
            " gives a new window's first tokens their context.",
        )
    if any(b - a > stride for a, b in pairwise(starts)):
        return Slip(
            says="a window starts more than {stride} positions after the one before.",
            then="start each window `stride` positions after the previous one.",
        )
    return None


@dataclass(frozen=True)
class _Covering(Kind):
    """Any answer the judge let through is right: a covering need not be the reference's own."""

    def fault(self, got: Any, expected: Any, hidden: bool) -> str | None:
        return None


SLIDING_WINDOWS = Exercise(
    "ex-5-4",
    "my_windows",
    checker="check_sliding_windows",
    what="sliding windows",
    reference=window_spans,
    public=[call(20, 8, 4), call(1300, 512, 256), call(17, 8, 8), call(9, 8, 3), call(5, 8, 4), call(8, 8, 4)],
    hidden=_windows_hidden,
    answer=_Covering(),
    judge=_judge_windows,
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [INTERPOLATE_TABLE, STEPS_TO_REACH, SLIDING_WINDOWS]

check_interpolate_table = INTERPOLATE_TABLE.checker_function()
check_steps_to_reach = STEPS_TO_REACH.checker_function()
check_sliding_windows = SLIDING_WINDOWS.checker_function()
