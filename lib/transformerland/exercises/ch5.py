"""Checkers for chapter 5, *Extrapolation limits* (the Edge of the Map).

- ``ex-5-1``: :func:`check_interpolate_table`, stretch a learned table to more rows.
- ``ex-5-3``: :func:`check_steps_to_reach`, read a fine-tuning curve: how many steps to a target loss.
- ``ex-5-4``: :func:`check_sliding_windows`, cut a long input into overlapping windows that fit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import torch

from ..remedies import interpolate_table, window_spans
from .checking import Check, Mistake
from .spec import Case, Exercise, int_answer

__all__ = [
    "EXERCISES",
    "INTERPOLATE_TABLE",
    "SLIDING_WINDOWS",
    "STEPS_TO_REACH",
    "check_interpolate_table",
    "check_sliding_windows",
    "check_steps_to_reach",
]

_TABLE_HINT = "return a torch.Tensor of shape (new_len, d_model)."


_ENDS_HINT = (
    "stretch the range so that its two ends stay put: new row j stands at old position "
    "j · (L - 1) / (new_len - 1), not j · L / new_len ({})."
)


def _interpolation_cases(seed: int) -> list[Case]:
    """A table whose rows change evenly (row p = p · direction + offset) stretched to 2L - 1 rows; a random
    table stretched; the same random table asked for as many rows as it has."""
    g = torch.Generator().manual_seed(500 + seed)
    rows = 4 if seed == 0 else int(torch.randint(3, 7, (1,), generator=g))
    direction, offset = torch.tensor([1.0, -2.0, 0.5]), torch.tensor([0.0, 1.0, 2.0])
    if seed != 0:
        direction, offset = torch.randn(3, generator=g), torch.randn(3, generator=g)
    even = torch.arange(float(rows))[:, None] * direction + offset  # (L, 3)
    shape, new_len = ((5, 8), 13) if seed == 0 else ((rows + 1, 8), int(torch.randint(8, 20, (1,), generator=g)))
    rough = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return [
        Case((even, 2 * rows - 1), tag="even"),
        Case(
            (rough, new_len),
            problem=f"a random {shape} table stretched to {new_len} rows does not match linear interpolation",
            hint="check the fractional weight w at each new row, and that rows are blended along "
            "the position axis (dim 0).",
            tag="rough",
        ),
        Case(
            (rough, shape[0]),
            problem="asking for as many rows as the table has does not give the table back",
            hint="with new_len = L every new row lands exactly on an old one: the result must equal the table.",
            tag="same",
        ),
    ]


def _judge_interpolation(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    table, new_len = case.args
    rows, width = table.shape
    got = check.tensor(got, _TABLE_HINT, returned=f"fn(table of {rows} rows, {new_len})")
    if case.tag != "even":
        close = tuple(got.shape) == (new_len, width) and torch.allclose(got.double(), expected, atol=1e-6)
        check.that(close, case.problem, case.hint)
        return
    check.shape(
        got,
        (new_len, width),
        f"a {(rows, width)} table stretched to {new_len} rows came back with shape {tuple(got.shape)}",
        "one row per new position and the same width: shape (new_len, d_model).",
    )
    check.that(
        got.dtype == table.dtype,
        f"the result has dtype {got.dtype}, the table {table.dtype}",
        "keep the table's dtype (and device), for example by computing the weights in table.dtype.",
    )
    check.that(
        bool(torch.isfinite(got).all()),
        "the result contains NaN or infinite values",
        "look for a division by zero in the weights: the old position of new row j is j · (L - 1) / (new_len - 1).",
    )
    first_last = torch.allclose(got[0], table[0], atol=1e-5) and torch.allclose(got[-1], table[-1], atol=1e-5)
    if not first_last and torch.allclose(got[:rows], table, atol=1e-5):
        hint = (
            "the first rows are the old table, unchanged, and the rest are new: that extends the table. "
            "Interpolation spreads the old rows over the whole new range, so the last new row is the last old row."
        )
    else:
        hint = _ENDS_HINT.format("which would ask for rows past the last one")
    check.that(first_last, "the first and last rows of the result are not the first and last old rows", hint)
    direction, offset = table[1] - table[0], table[0]
    scaled = (torch.arange(float(new_len)) * rows / new_len)[:, None] * direction + offset
    if not first_last or torch.allclose(got[:-1], scaled[:-1], atol=1e-5):
        hint = _ENDS_HINT.format("which runs past the last trained row")
    elif torch.allclose(got[::2], table, atol=1e-5):
        hint = (
            "the rows that land exactly on old positions are right, but the rows between are not: "
            "blend the two old rows around them, not copy the nearest one: "
            "(1 - w) · table[p] + w · table[p + 1], with w the fractional part."
        )
    else:
        hint = (
            "a new row between old rows p and p + 1 must blend them in proportion to where it falls: "
            "(1 - w) · table[p] + w · table[p + 1], with w the fractional part of its old position."
        )
    check.that(
        torch.allclose(got, expected, atol=1e-5),
        "stretching a table whose rows change evenly did not give rows that change evenly",
        hint,
    )


INTERPOLATE_TABLE = Exercise(
    label="ex-5-1",
    what="position-table interpolation",
    checker="check_interpolate_table",
    function="my_interpolate_table",
    signature="(table (L, D), new_len: int) -> Tensor (new_len, D): new row j stands at old position "
    "j · (L - 1) / (new_len - 1), blended linearly",
    cases=_interpolation_cases,
    reference=interpolate_table,
    judge=_judge_interpolation,
    changed_problem="the function changed the table it was given",
    changed_hint="build a new tensor; the trained table must stay as it was (the model still uses it).",
)

check_interpolate_table = INTERPOLATE_TABLE.checker_function()


def _steps(losses: Sequence[float], target: float, window: int, *, start: int = 0, end: int = 0) -> int | None:
    """The first step ``t`` whose window ``losses[t - window + start : t + start]`` averages at or below ``target``.

    ``start`` shifts the window forward (a slip), ``end`` stops early (another); the right answer has both 0.
    """
    for step in range(window, len(losses) + 1 - end):
        piece = losses[step - window + start : step + start]
        if len(piece) == window and sum(piece) / window <= target:
            return step
    return None


def _steps_cases(seed: int) -> list[Case]:
    """A falling curve (window 1); a noisy one with a low outlier; the target reached at the last step; never."""
    draw = random.Random(seed)
    drop = 0.1 if seed == 0 else draw.choice([0.05, 0.1, 0.2])
    falling = [round(2.0 - drop * i, 6) for i in range(10 if seed == 0 else draw.randrange(8, 14))]
    target = 1.5 if seed == 0 else round(falling[len(falling) // 2] + drop / 2, 6)
    dip = 1 if seed == 0 else draw.randrange(1, 3)
    noisy = [2.0] * dip + [1.0] + [2.0] * 2 + [1.4] * 6
    last = 3 if seed == 0 else draw.randrange(2, 5)
    return [
        Case(
            (falling, target, 1),
            problem=f"on the curve {falling[0]:g}, {falling[1]:g}, …, {falling[-1]:g} with target {target:g} and "
            "window 1 you returned {got}",
            hint="walk along the curve and stop at the first entry that is at or below the target.",
        ),
        Case(
            (noisy, 1.5, 3),
            problem="on a noisy curve with one low outlier (window 3) you returned {got}",
            hint="compare the mean of the last `window` losses with the target, starting at step `window`.",
        ),
        Case(
            ([2.0] * last + [1.0] * 3, 1.3, 4),
            problem="a curve whose window mean first reaches the target at its last step gave {got}",
            hint="include the last step: the window may end at the final entry of the curve.",
            mistakes=False,
        ),
        Case(
            ([2.0, 1.9, 1.8], 1.0, 2),
            problem="a curve that never reaches the target gave {got!r}",
            hint="when no window's mean is at or below the target, return None (not 0, -1 or the curve's length).",
            mistakes=False,
        ),
        Case(
            ([1.0, 1.0], 1.5, 5),
            problem="a curve shorter than the window gave {got!r}",
            hint="a mean over `window` steps needs at least `window` losses: return None if there are fewer.",
            mistakes=False,
        ),
    ]


def _steps_mistakes(case: Case) -> list[Mistake]:
    losses, target, window = case.args
    right = _steps(losses, target, window)
    return [
        Mistake(
            None if right is None else right - 1,
            "that is the index of the entry, counted from 0; the question asks for a number of steps, "
            "and losses[i] was measured at step i + 1.",
        ),
        Mistake(len(losses), "return the first step at which the target is reached, not the last step of the curve."),
        Mistake(
            _steps(losses, target, 1),
            "one lucky batch is not a recovered model: average the last `window` losses before comparing "
            "(a step counts once the mean of the window ending there is at or below the target).",
        ),
        Mistake(
            _steps(losses, target, window, start=window - 1),
            "the window at step t holds losses t - window + 1 … t (the last `window` entries), not the next ones.",
        ),
    ]


STEPS_TO_REACH = Exercise(
    label="ex-5-3",
    what="steps to reach a target loss",
    checker="check_steps_to_reach",
    function="my_steps_to_reach",
    signature="(losses: list[float], target: float, window: int) -> int | None: the first step whose window "
    "mean is at or below the target",
    cases=_steps_cases,
    reference=_steps,
    mistakes=_steps_mistakes,
    judge=int_answer(
        "the answer {got!r} is a {kind}, not a whole number of steps (or None)",
        "return an int (a number of steps) or None when the target is never reached.",
        none=True,
    ),
)

check_steps_to_reach = STEPS_TO_REACH.checker_function()


def _is_span(span: object) -> bool:
    return (
        isinstance(span, tuple | list)
        and len(span) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in span)
    )


def _windows_cases(seed: int) -> list[Case]:
    """Inputs longer than the window (stride below it, far below it, equal to it), shorter, exactly as long."""
    calls = [(20, 8, 4), (1300, 512, 256), (17, 8, 8), (9, 8, 3), (5, 8, 4), (8, 8, 4)]
    if seed != 0:
        draw = random.Random(seed)
        window = draw.choice([8, 16, 32])
        calls = [
            (draw.randrange(2 * window, 4 * window), window, window // 2),
            (draw.randrange(1000, 3000), 512, draw.choice([128, 256])),
            (draw.randrange(window + 1, 3 * window), window, window),
            (window + 1, window, draw.randrange(2, window // 2)),
            (draw.randrange(1, window), window, window // 2),
            (window, window, window // 2),
        ]
    return [Case(call) for call in calls]


def _judge_windows(check: Check, spec: Exercise, case: Case, spans: Any, expected: Any) -> None:
    """Any covering that fits passes (the windows need not be the reference's): the properties, one by one."""
    length, window, stride = case.args
    call = f"fn({length}, {window}, {stride})"
    check.that(
        isinstance(spans, list | tuple) and len(spans) > 0 and all(_is_span(s) for s in spans),
        f"{call} returned {spans!r}, not a list of (start, end) pairs of ints",
        "return a list of tuples (start, end), with end excluded, as Python slices use them.",
    )
    spans = [tuple(s) for s in spans]
    outside = [s for s in spans if not 0 <= s[0] < s[1] <= length]
    check.that(
        not outside,
        f"{call} gave a window outside 0 … {length}: {outside[:1]}",
        "clip the windows to the input: no window may end after `length` (there are no tokens there).",
    )
    wide = [s for s in spans if s[1] - s[0] > window]
    check.that(
        not wide,
        f"{call} gave a window longer than {window}: {wide[:1]}",
        f"a window of more than {window} tokens is exactly the input the model refuses: keep end - start <= window.",
    )
    check.that(
        spans[0][0] == 0 and spans[-1][1] == length,
        f"{call}: the windows run from {spans[0][0]} to {spans[-1][1]}, not from 0 to {length}",
        "the last tokens are left out: keep adding windows until one ends exactly at `length` "
        "(the last one may be shorter, or start earlier so that it is full).",
    )
    if length <= window:
        check.that(
            len(spans) == 1,
            f"{call}: an input of {length} tokens fits a window of {window}, but got {len(spans)} windows",
            "when the input fits, read it in one piece: [(0, length)].",
        )
        return
    starts = [s for s, _ in spans]
    check.that(
        all(a < b for a, b in pairwise(starts)),
        f"{call}: the windows do not move forward: {spans}",
        "each window starts after the one before (a repeated window costs a forward pass and adds nothing).",
    )
    overlap = min(end_a - start_b for (_, end_a), (start_b, _) in pairwise(spans))
    check.that(
        overlap >= window - stride,
        f"{call}: two consecutive windows share only {overlap} positions, fewer than window - stride = "
        f"{window - stride}",
        "move each window on by `stride`, not by `window`: the overlap is what gives the first tokens of "
        "a new window their context.",
    )
    check.that(
        all(b - a <= stride for a, b in pairwise(starts)),
        f"{call}: a window starts more than {stride} positions after the one before: {spans}",
        "start each window `stride` positions after the previous one.",
    )


SLIDING_WINDOWS = Exercise(
    label="ex-5-4",
    what="sliding windows",
    checker="check_sliding_windows",
    function="my_windows",
    signature="(length, window, stride) -> list[(start, end)]: windows of at most `window` positions, in order, "
    "covering 0 … length - 1, consecutive ones sharing at least window - stride",
    cases=_windows_cases,
    reference=window_spans,
    judge=_judge_windows,
)

check_sliding_windows = SLIDING_WINDOWS.checker_function()

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [INTERPOLATE_TABLE, STEPS_TO_REACH, SLIDING_WINDOWS]
