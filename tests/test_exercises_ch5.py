"""Chapter 5's exercises: the references pass, typical slips are named, and hints grow in two stages."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch
from transformerland.exercises.ch5 import (
    INTERPOLATE_TABLE,
    SLIDING_WINDOWS,
    STEPS_TO_REACH,
    check_interpolate_table,
    check_sliding_windows,
    check_steps_to_reach,
)
from transformerland.remedies import interpolate_table, window_spans

from tests.checkers import named_then_hinted


def interpolate_reference(table: torch.Tensor, new_len: int) -> torch.Tensor:
    where = torch.linspace(0, table.shape[0] - 1, new_len, dtype=torch.float64)
    below = where.floor().long().clamp(max=table.shape[0] - 2) if table.shape[0] > 1 else where.long()
    above = (below + 1).clamp(max=table.shape[0] - 1)
    weight = (where - below).to(table.dtype)[:, None]
    return (1 - weight) * table[below] + weight * table[above]


def interpolate_with_torch(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """The same with F.interpolate (align_corners=True keeps the ends)."""
    stretched = torch.nn.functional.interpolate(table.T[None], size=new_len, mode="linear", align_corners=True)
    return stretched[0].T


def wrong_scale(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """Positions j · L / N: the ends do not stay put."""
    where = torch.arange(new_len, dtype=torch.float64) * table.shape[0] / new_len
    below = where.floor().long().clamp(max=table.shape[0] - 1)
    above = (below + 1).clamp(max=table.shape[0] - 1)
    weight = (where - below).to(table.dtype)[:, None]
    return (1 - weight) * table[below] + weight * table[above]


def nearest_row(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """Copies the nearest old row instead of blending."""
    where = torch.linspace(0, table.shape[0] - 1, new_len).round().long()
    return table[where]


def extends_instead(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """Keeps the old rows and pads with zeros: extension, not interpolation."""
    return torch.cat([table, table.new_zeros(new_len - table.shape[0], table.shape[1])])


def in_place(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """Right values, but scribbles on its input."""
    out = interpolate_reference(table, new_len)
    table.mul_(2)
    return out


def steps_reference(losses: Sequence[float], target: float, window: int) -> int | None:
    for step in range(window, len(losses) + 1):
        if sum(losses[step - window : step]) / window <= target:
            return step
    return None


def index_not_steps(losses: Sequence[float], target: float, window: int) -> int | None:
    found = steps_reference(losses, target, window)
    return None if found is None else found - 1


def no_smoothing(losses: Sequence[float], target: float, window: int) -> int | None:
    return next((i + 1 for i, loss in enumerate(losses) if loss <= target), None)


def misses_last_step(losses: Sequence[float], target: float, window: int) -> int | None:
    for step in range(window, len(losses)):
        if sum(losses[step - window : step]) / window <= target:
            return step
    return None


def never_is_zero(losses: Sequence[float], target: float, window: int) -> int | None:
    found = steps_reference(losses, target, window)
    return 0 if found is None else found


def window_ahead(losses: Sequence[float], target: float, window: int) -> int | None:
    """Averages the window that starts at each step instead of the one that ends there."""
    for step in range(1, len(losses) + 1):
        piece = losses[step - 1 : step - 1 + window]
        if len(piece) == window and sum(piece) / window <= target:
            return step
    return None


def windows_reference(length: int, window: int, stride: int) -> list[tuple[int, int]]:
    if length <= window:
        return [(0, length)]
    spans = [(start, start + window) for start in range(0, length - window, stride)]
    return [*spans, (length - window, length)]


def windows_short_last(length: int, window: int, stride: int) -> list[tuple[int, int]]:
    """A different valid design: the last window is shorter instead of shifted back."""
    spans, start = [], 0
    while True:
        spans.append((start, min(start + window, length)))
        if start + window >= length:
            return spans
        start += stride


def chunks(length: int, window: int, stride: int) -> list[tuple[int, int]]:
    """Non-overlapping chunks: the start of every chunk has no context."""
    return [(start, min(start + window, length)) for start in range(0, length, window)]


def drops_the_tail(length: int, window: int, stride: int) -> list[tuple[int, int]]:
    return [(start, start + window) for start in range(0, max(1, length - window), stride)]


def runs_past_the_end(length: int, window: int, stride: int) -> list[tuple[int, int]]:
    return [(start, start + window) for start in range(0, length, stride)]


def too_wide(length: int, window: int, stride: int) -> list[tuple[int, int]]:
    """Counts the end as included, so each window holds window + 1 tokens."""
    return [(s, min(e + 1, length)) for s, e in windows_reference(length, window, stride)]


# --- ex-5-1 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [interpolate_reference, interpolate_with_torch])
def test_interpolation_references_pass(fn, verdict):
    assert check_interpolate_table(fn)
    assert verdict().word == "PASSED"


def test_the_library_s_interpolation_is_refused():
    result = check_interpolate_table(lambda table, new_len: interpolate_table(table, new_len))
    assert not result and "write it yourself" in result.message


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (wrong_scale, "runs past the trained rows"),
        (nearest_row, "copy the nearest old row"),
        (extends_instead, "that extends the table"),
        (lambda table, new_len: interpolate_reference(table, new_len).float(), "dtype is not the table's"),
    ],
)
def test_interpolation_slips_are_named_then_hinted(fn, says):
    named_then_hinted(check_interpolate_table, fn, says)


def test_interpolation_that_writes_into_the_table_is_refused():
    result = check_interpolate_table(in_place)
    assert not result and "changed the arguments" in result.message


# --- ex-5-3 ------------------------------------------------------------------------------------------


def test_steps_reference_passes(verdict):
    assert check_steps_to_reach(steps_reference)
    assert verdict().word == "PASSED"


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (index_not_steps, "an index counted from 0"),
        (no_smoothing, "one lucky batch"),
        (misses_last_step, "your search misses it"),
        (never_is_zero, "the answer is None"),
        (window_ahead, "looks ahead"),
        (lambda losses, target, window: float(steps_reference(losses, target, window) or 0), "a Python int"),
    ],
)
def test_steps_slips_are_named_then_hinted(fn, says):
    named_then_hinted(check_steps_to_reach, fn, says)


def test_the_curve_s_length_is_named():
    result = check_steps_to_reach(lambda losses, target, window: len(losses))
    assert not result and "length of the curve" in result.message


# --- ex-5-4 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [windows_reference, windows_short_last])
def test_window_references_pass(fn, verdict):
    assert check_sliding_windows(fn)
    assert verdict().word == "PASSED"


def test_the_library_s_windows_are_refused():
    result = check_sliding_windows(lambda length, window, stride: window_spans(length, window, stride))
    assert not result and "write it yourself" in result.message


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (chunks, "share fewer positions than window − stride"),
        (drops_the_tail, "do not run from 0 to 20"),
        (runs_past_the_end, "outside 0 … 20"),
        (too_wide, "longer than 8 positions"),
        (lambda length, window, stride: "windows", "not return a list of (start, end) pairs"),
        (lambda length, window, stride: windows_reference(length, window, stride)[::-1], "do not run from 0"),
    ],
)
def test_window_slips_are_named_then_hinted(fn, says):
    first = check_sliding_windows(fn)
    assert not first and says in first.message, first


def test_windows_as_json_lists_pass():
    """The grader's answers come back as JSON: tuples become lists, and must still pass."""
    assert check_sliding_windows(lambda *args: [list(span) for span in windows_reference(*args)])


# --- all three ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [INTERPOLATE_TABLE, STEPS_TO_REACH, SLIDING_WINDOWS])
def test_hidden_draws_differ_from_the_notebook_s_calls(spec):
    shown = [repr(c) for c in spec.public]
    for seed in (1, 2, 3):
        assert any(repr(c) not in shown for c in spec.cases(seed)), spec.label


def test_checkers_survive_a_stub_and_a_crash():
    def stub(*args):
        raise NotImplementedError

    for checker in (check_interpolate_table, check_steps_to_reach, check_sliding_windows):
        result = checker(stub)
        assert not result and "not written yet" in result.message
        result = checker(lambda *args: 1 / 0)
        assert not result and "ZeroDivisionError" in result.message
