"""Chapter 6's exercises: the references pass, typical slips are named, and hints grow in two stages."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.encodings import apply_rotary, interpolated_positions, rotary_angles
from transformerland.exercises.ch6 import (
    ALIBI_SLOPES,
    INTERPOLATED_FREQUENCIES,
    ROPE_ROTATE,
    check_alibi_slopes,
    check_interpolated_frequencies,
    check_rope_rotate,
)

from tests.checkers import named_then_hinted

# --- ex-6-1: RoPE on one vector --------------------------------------------------------------------------


def rope_with(angle_rule, *, halves=False, clockwise=False, in_place=False):
    """A student's RoPE whose pair i turns by ``angle_rule(position, i, d, base)``."""

    def rope_rotate(x, position, base=10000.0):
        d = x.shape[-1]
        i = torch.arange(d // 2, dtype=x.dtype)
        angle = angle_rule(position, i, d, base)
        cos, sin = torch.cos(angle), torch.sin(angle) * (-1 if clockwise else 1)
        if halves:
            a, b = x[: d // 2], x[d // 2 :]
            return torch.cat([a * cos - b * sin, a * sin + b * cos])
        a, b = x[0::2].clone(), x[1::2].clone()
        out = x if in_place else torch.empty_like(x)
        out[0::2], out[1::2] = a * cos - b * sin, a * sin + b * cos
        return out

    return rope_rotate


def right(m, i, d, base):
    return m * base ** (-2 * i / d)


def test_rope_references_pass(verdict):
    assert check_rope_rotate(rope_with(right))
    assert verdict().word == "PASSED"

    def complex_rope(x, position, base=10000.0):
        d = x.shape[-1]
        theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        z = torch.view_as_complex(x.reshape(-1, 2).contiguous()) * torch.polar(torch.ones_like(theta), position * theta)
        return torch.view_as_real(z).flatten()

    assert check_rope_rotate(complex_rope)


def test_the_library_s_rotation_is_refused():
    result = check_rope_rotate(lambda x, p, base=10000.0: apply_rotary(x[None], torch.tensor([float(p)]), base)[0])
    assert not result and "write it yourself" in result.message


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (rope_with(right, halves=True), "i + d/2"),
        (rope_with(right, clockwise=True), "wrong way (clockwise)"),
        (rope_with(lambda m, i, d, base: m * base ** (-i / d)), "pair i/2"),
        (rope_with(lambda m, i, d, base: m * base ** (-2 * (i + 1) / d)), "one pair late"),
        (rope_with(lambda m, i, d, base: m * base ** (2 * i / d)), "faster than the first"),
        (rope_with(lambda m, i, d, base: m + 0 * i), "same angle"),
        (rope_with(lambda m, i, d, base: base ** (-2 * i / d)), "does not grow with the position"),
        (lambda x, position, base=10000.0: 2 * rope_with(right)(x, position, base), "not as long"),
    ],
)
def test_rope_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_rope_rotate, wrong, says)


def test_rope_other_wrong_answers():
    result = check_rope_rotate(rope_with(right, in_place=True))
    assert not result and "changed the arguments" in result.message
    assert not check_rope_rotate(lambda x, position, base=10000.0: x[: x.shape[-1] // 2])
    result = check_rope_rotate(lambda x, position, base=10000.0: "rotated")
    assert not result and "not a tensor" in result.message


# --- ex-6-2: ALiBi slopes ------------------------------------------------------------------------------


def geometric(h):
    """The power-of-two rule, for any head count: right only when h is a power of two."""
    return [2 ** (-8 * k / h) for k in range(1, h + 1)]


def filled(h, pick):
    """The slopes of the largest power of two p <= h, then the first h - p of pick(slopes of 2p heads)."""
    p = 2 ** math.floor(math.log2(h))
    return geometric(p) + pick(geometric(2 * p))[: h - p]


def slopes(h):
    """ALiBi's slopes as the paper's code gives them, written independently of the library and the checker."""
    return filled(h, lambda doubled: doubled[0::2])


def test_slopes_references_pass(verdict):
    assert check_alibi_slopes(lambda h: torch.tensor(slopes(h), dtype=torch.float64))
    assert verdict().word == "PASSED"
    assert check_alibi_slopes(slopes)


def test_slopes_for_powers_of_two_only_fail_at_twelve_heads():
    result = check_alibi_slopes(geometric)
    assert not result and "12 is not a power of two" in result.message


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda h: [2 ** (-8 * k / h) for k in range(h)], "first slope is 1"),
        (lambda h: [2 ** (-8 * k / h) for k in range(h, 0, -1)], "reverse order"),
        (lambda h: [2.0**-k for k in range(1, h + 1)], "only for 8 heads: with 4 heads"),
        (lambda h: [1 / (2 * k) for k in range(1, h + 1)], "fixed step"),
        (lambda h: [2 ** (-k / h) for k in range(1, h + 1)], "end at 1/2"),
        (geometric, "not a power of two"),
        (lambda h: filled(h, lambda doubled: doubled[1::2]), "repeat slopes you already have"),
        (lambda h: filled(h, lambda doubled: doubled), "taken in a row"),
    ],
)
def test_slope_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_alibi_slopes, wrong, says)


def test_the_halving_hint_asks_with_the_call_s_own_head_count():
    halving = lambda h: [2.0**-k for k in range(1, h + 1)]  # noqa: E731
    check_alibi_slopes(halving)
    assert "in 4 steps" in check_alibi_slopes(halving).hint


def test_slopes_of_the_wrong_length_are_told_so():
    result = check_alibi_slopes(lambda h: slopes(h)[:-1])
    assert not result and "shape" in result.message


# --- ex-6-5: position interpolation in the frequencies ------------------------------------------------------


def theta(d, base=10000.0):
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


def reference_frequencies(d, length, trained_length, base=10000.0):
    return theta(d, base) * min(1.0, trained_length / length)


def test_frequencies_reference_passes(verdict):
    assert check_interpolated_frequencies(reference_frequencies)
    assert verdict().word == "PASSED"


def test_frequencies_give_whole_positions_the_interpolated_angles():
    whole = rotary_angles(torch.arange(256), 64, inv_freq=reference_frequencies(64, 256, 64))
    torch.testing.assert_close(whole, rotary_angles(interpolated_positions(256, 64), 64))


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda d, n, L, base=10000.0: theta(d, base), "RoPE's own frequencies"),
        (lambda d, n, L, base=10000.0: theta(d, base) * max(1.0, n / L), "faster than RoPE's"),
        (lambda d, n, L, base=10000.0: theta(d, base) * L / n, "(10 tokens, trained on 64)"),
        (lambda d, n, L, base=10000.0: theta(d, base) * min(1.0, (L - 1) / (n - 1)), "exactly on position L − 1"),
        (lambda d, n, L, base=10000.0: base ** (-torch.arange(d // 2) / d) * min(1.0, L / n), "not RoPE's ladder"),
    ],
)
def test_frequency_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_interpolated_frequencies, wrong, says)


def test_positions_instead_of_frequencies_are_told_by_their_shape():
    result = check_interpolated_frequencies(lambda d, n, L, base=10000.0: torch.arange(n) * min(1.0, L / n))
    assert not result and "shape" in result.message


# --- all three ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [ROPE_ROTATE, ALIBI_SLOPES, INTERPOLATED_FREQUENCIES])
def test_hidden_draws_differ_from_the_notebook_s_calls(spec):
    shown = [repr(c) for c in spec.public]
    for seed in (1, 2, 3):
        assert any(repr(c) not in shown for c in spec.cases(seed)), spec.label


@pytest.mark.parametrize("spec", [ROPE_ROTATE, ALIBI_SLOPES, INTERPOLATED_FREQUENCIES])
def test_no_hint_gives_the_formula(spec):
    for text in spec.texts():
        for line in ("L / L′", "trained_length / length", "2^(−8/H)", "2^(−8k/H)", "base^(−2i/d)", "cos φ − "):
            assert line not in text, (spec.label, text)


def test_the_slopes_reference_is_the_library_s():
    from transformerland.encodings import alibi_slopes

    for n_heads in (1, 2, 3, 4, 6, 8, 12, 16, 20, 64):
        torch.testing.assert_close(ALIBI_SLOPES.reference(n_heads), alibi_slopes(n_heads).double())
