"""Exercises of chapter 5, the Edge of the Map (extrapolation limits), as specs (words in ``ch5.toml``).

* :data:`INTERPOLATE_TABLE` (ex-5-1): stretch a learned table to more rows.
* :data:`STEPS_TO_REACH` (ex-5-3): read a fine-tuning curve: how many steps to a target loss.
* :data:`SLIDING_WINDOWS` (ex-5-4): cut a long input into overlapping windows that fit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import torch

from ..remedies import interpolate_table, window_spans
from .checking import Check
from .spec import PUBLIC_SEED, Case, Exercise, chapter_data, compare, declared

__all__ = [
    "EXERCISES",
    "INTERPOLATE_TABLE",
    "SLIDING_WINDOWS",
    "STEPS_TO_REACH",
    "check_interpolate_table",
    "check_sliding_windows",
    "check_steps_to_reach",
]

_DATA = chapter_data(__name__)


def _table_cases(seed: int) -> list[Case]:
    """A table whose rows change evenly (row p = p · direction + offset) stretched to 2L - 1 rows; a random
    table stretched; the same random table asked for as many rows as it has."""
    g, public = torch.Generator().manual_seed(500 + seed), seed == PUBLIC_SEED
    rows = 4 if public else int(torch.randint(3, 7, (1,), generator=g))
    direction, offset = torch.tensor([1.0, -2.0, 0.5]), torch.tensor([0.0, 1.0, 2.0])
    if not public:
        direction, offset = torch.randn(3, generator=g), torch.randn(3, generator=g)
    even = torch.arange(float(rows))[:, None] * direction + offset  # (L, 3)
    shape, new_len = ((5, 8), 13) if public else ((rows + 1, 8), int(torch.randint(8, 20, (1,), generator=g)))
    rough = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return [
        Case((even, 2 * rows - 1), tag="even"),
        Case((rough, new_len), tag="rough"),
        Case((rough, shape[0]), tag="same"),
    ]


def _judge_table(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    """A random table: close to the reference. The table whose rows change evenly: its shape, dtype, finite
    values and ends, then even steps, the hint naming what the answer did instead."""
    table, new_len = case.args
    rows, width = table.shape
    got = check.tensor(got, spec.say("tensor_hint"), returned=spec.say("returned", rows=rows, new_len=new_len))
    if case.tag != "even":
        compare(check, spec, case, got.double(), expected)
        return
    shape = tuple(got.shape)
    check.that(shape == (new_len, width), *spec.said("shape", table=(rows, width), new_len=new_len, got=shape))
    check.that(got.dtype == table.dtype, *spec.said("dtype", got=got.dtype, table=table.dtype))
    check.that(bool(torch.isfinite(got).all()), *spec.said("finite"))
    ends = torch.allclose(got[0], table[0], atol=1e-5) and torch.allclose(got[-1], table[-1], atol=1e-5)
    kept = torch.allclose(got[:rows], table, atol=1e-5)  # the old rows first, unchanged: extended, not stretched
    check.that(ends, spec.say("ends"), spec.say("extends_hint" if kept else "ends_hint"))
    scaled = (torch.arange(float(new_len)) * rows / new_len)[:, None] * (table[1] - table[0]) + table[0]
    if torch.allclose(got[:-1], scaled[:-1], atol=1e-5):
        hint = "scaled_hint"
    elif torch.allclose(got[::2], table, atol=1e-5):
        hint = "nearest_hint"
    else:
        hint = "uneven_hint"
    check.that(torch.allclose(got, expected, atol=1e-5), spec.say("uneven"), spec.say(hint))


INTERPOLATE_TABLE = declared(_DATA, "ex-5-1", reference=interpolate_table, cases=_table_cases, judge=_judge_table)


def _steps(losses: Sequence[float], target: float, window: int, start: int = 0) -> int | None:
    """The first step ``t`` whose window ``losses[t - window + start : t + start]`` averages at or below ``target``
    (a ``start`` above 0, the window shifted forward, is a slip)."""
    for step in range(window, len(losses) + 1):
        piece = losses[step - window + start : step + start]
        if len(piece) == window and sum(piece) / window <= target:
            return step
    return None


def _steps_cases(seed: int) -> list[Case]:
    """A falling curve (window 1); a noisy one with a low outlier; the target reached at the last step; never;
    a curve shorter than the window."""
    draw, public = random.Random(seed), seed == PUBLIC_SEED
    drop = 0.1 if public else draw.choice([0.05, 0.1, 0.2])
    falling = [round(2.0 - drop * i, 6) for i in range(10 if public else draw.randrange(8, 14))]
    target = 1.5 if public else round(falling[len(falling) // 2] + drop / 2, 6)
    dip = 1 if public else draw.randrange(1, 3)
    last = 3 if public else draw.randrange(2, 5)
    problem = STEPS_TO_REACH.say("falling", falling[0], falling[1], falling[-1], target, got="{got}")
    return [
        Case((falling, target, 1), problem=problem, tag="falling"),
        Case(([2.0] * dip + [1.0] + [2.0] * 2 + [1.4] * 6, 1.5, 3), tag="noisy"),
        Case(([2.0] * last + [1.0] * 3, 1.3, 4), tag="last"),
        Case(([2.0, 1.9, 1.8], 1.0, 2), tag="never"),
        Case(([1.0, 1.0], 1.5, 5), tag="short"),
    ]


def _steps_slips(losses: Sequence[float], target: float, window: int) -> dict[str, int | None]:
    """The slips' answers; an index off by one only where the target is reached (a slip may answer None too)."""
    right = _steps(losses, target, window)
    slips = {
        "length": len(losses),
        "unsmoothed": _steps(losses, target, 1),
        "ahead": _steps(losses, target, window, start=window - 1),
    }
    return slips if right is None else {"index": right - 1, **slips}


STEPS_TO_REACH = declared(_DATA, "ex-5-3", reference=_steps, cases=_steps_cases, slips=_steps_slips)


def _windows_hidden(seed: int) -> list[tuple[int, int, int]]:
    draw = random.Random(seed)
    window = draw.choice([8, 16, 32])
    return [
        (draw.randrange(2 * window, 4 * window), window, window // 2),
        (draw.randrange(1000, 3000), 512, draw.choice([128, 256])),
        (draw.randrange(window + 1, 3 * window), window, window),
        (window + 1, window, draw.randrange(2, window // 2)),
        (draw.randrange(1, window), window, window // 2),
        (window, window, window // 2),
    ]


def _is_span(span: object) -> bool:
    whole = isinstance(span, tuple | list) and len(span) == 2
    return whole and all(isinstance(v, int) and not isinstance(v, bool) for v in span)


def _judge_windows(check: Check, spec: Exercise, case: Case, spans: Any, expected: Any) -> None:
    """Any covering that fits passes (the windows need not be the reference's): the properties, one by one."""
    length, window, stride = case.args
    fields = {"call": f"fn{case.shown()}", "length": length, "window": window, "stride": stride}  # for every text
    listed = isinstance(spans, list | tuple) and len(spans) > 0 and all(_is_span(s) for s in spans)
    check.that(listed, *spec.said("not_spans", spans=spans, **fields))
    spans = [tuple(s) for s in spans]
    outside = [s for s in spans if not 0 <= s[0] < s[1] <= length]
    check.that(not outside, *spec.said("outside", outside=outside[:1], **fields))
    wide = [s for s in spans if s[1] - s[0] > window]
    check.that(not wide, *spec.said("wide", wide=wide[:1], **fields))
    covered = spans[0][0] == 0 and spans[-1][1] == length
    check.that(covered, *spec.said("uncovered", first=spans[0][0], last=spans[-1][1], **fields))
    if length <= window:
        check.that(len(spans) == 1, *spec.said("split", count=len(spans), **fields))
        return
    starts = [s for s, _ in spans]
    check.that(all(a < b for a, b in pairwise(starts)), *spec.said("backwards", spans=spans, **fields))
    overlap = min(end_a - start_b for (_, end_a), (start_b, _) in pairwise(spans))
    check.that(overlap >= window - stride, *spec.said("overlap", overlap=overlap, shared=window - stride, **fields))
    check.that(all(b - a <= stride for a, b in pairwise(starts)), *spec.said("gap", spans=spans, **fields))


SLIDING_WINDOWS = declared(_DATA, "ex-5-4", reference=window_spans, hidden=_windows_hidden, judge=_judge_windows)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [INTERPOLATE_TABLE, STEPS_TO_REACH, SLIDING_WINDOWS]

check_interpolate_table = INTERPOLATE_TABLE.checker_function()
check_steps_to_reach = STEPS_TO_REACH.checker_function()
check_sliding_windows = SLIDING_WINDOWS.checker_function()
