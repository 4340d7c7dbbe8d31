"""The chapter 5 checkers: the reference answers pass, typical mistakes fail with the hint that names them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch
from transformerland.exercises import VERDICT_PATTERN
from transformerland.exercises.ch5 import check_interpolate_table, check_sliding_windows, check_steps_to_reach
from transformerland.remedies import interpolate_table, window_spans

# ex-5-1 ---------------------------------------------------------------------------------


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


@pytest.mark.parametrize("fn", [interpolate_reference, interpolate_with_torch, interpolate_table])
def test_interpolation_references_pass(fn, capsys):
    assert check_interpolate_table(fn)
    assert VERDICT_PATTERN.search(capsys.readouterr().out).group("verdict") == "PASSED"


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (wrong_scale, "(L - 1) / (new_len - 1)"),
        (nearest_row, "not copy the nearest"),
        (extends_instead, "extends the table"),
        (in_place, "must stay as it was"),
    ],
)
def test_interpolation_mistakes_fail_with_their_hint(fn, words, capsys):
    result = check_interpolate_table(fn)
    assert not result
    assert words in result.hint
    assert "NOT YET" in capsys.readouterr().out


# ex-5-3 ---------------------------------------------------------------------------------


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


def test_steps_reference_passes(capsys):
    assert check_steps_to_reach(steps_reference)
    assert "ex-5-3 · PASSED" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (index_not_steps, "counted from 0"),
        (no_smoothing, "one lucky batch"),
        (misses_last_step, "include the last step"),
        (never_is_zero, "return None"),
        (window_ahead, "not the next ones"),
    ],
)
def test_steps_mistakes_fail_with_their_hint(fn, words):
    result = check_steps_to_reach(fn)
    assert not result
    assert words in result.hint


# ex-5-4 ---------------------------------------------------------------------------------


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


@pytest.mark.parametrize("fn", [windows_reference, windows_short_last, window_spans])
def test_window_references_pass(fn, capsys):
    assert check_sliding_windows(fn)
    assert "ex-5-4 · PASSED" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (chunks, "not by `window`"),
        (drops_the_tail, "last tokens are left out"),
        (runs_past_the_end, "clip the windows"),
        (too_wide, "the model refuses"),
    ],
)
def test_window_mistakes_fail_with_their_hint(fn, words):
    result = check_sliding_windows(fn)
    assert not result
    assert words in result.hint


def test_checkers_survive_a_stub_and_a_crash():
    def stub(*args):
        raise NotImplementedError

    for checker in (check_interpolate_table, check_steps_to_reach, check_sliding_windows):
        result = checker(stub)
        assert not result and "not written yet" in result.message
    assert not check_sliding_windows(lambda length, window, stride: 1 / 0)
