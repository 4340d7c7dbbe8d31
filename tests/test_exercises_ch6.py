"""The chapter 6 checkers: the references pass, the usual mistakes fail with the hint that names them."""

from __future__ import annotations

import pytest
import torch
from transformerland.exercises.ch6 import check_alibi_slopes, check_interpolated_frequencies, check_rope_rotate

# ex-6-1: RoPE on one vector ------------------------------------------------------------------------


def rope_with(angle_rule, *, halves=False, clockwise=False, in_place=False):
    """A RoPE-like function whose angles are ``angle_rule(position, i, d, base)`` for pair ``i``."""

    def rope(x, position, base=10000.0):
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

    return rope


reference_rope = rope_with(lambda m, i, d, base: m * base ** (-2 * i / d))


def test_rope_reference_passes(verdict):
    assert check_rope_rotate(reference_rope)
    word, out = verdict()
    assert word == "PASSED" and "ex-6-1" in out


def test_rope_reference_with_complex_numbers_passes(verdict):
    def complex_rope(x, position, base=10000.0):
        d = x.shape[-1]
        theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        z = torch.view_as_complex(x.reshape(-1, 2).contiguous()) * torch.polar(torch.ones_like(theta), position * theta)
        return torch.view_as_real(z).flatten()

    assert check_rope_rotate(complex_rope)
    assert verdict()[0] == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (rope_with(lambda m, i, d, base: m * base ** (-2 * i / d), halves=True), "i + d/2"),
        (rope_with(lambda m, i, d, base: m * base ** (-2 * i / d), clockwise=True), "wrong way"),
        (rope_with(lambda m, i, d, base: m * base ** (-i / d)), "pair i/2"),
        (rope_with(lambda m, i, d, base: m * base ** (-2 * (i + 1) / d)), "one pair late"),
        (rope_with(lambda m, i, d, base: m * base ** (2 * i / d)), "sign of the exponent"),
        (rope_with(lambda m, i, d, base: m + 0 * i), "same angle"),
        (rope_with(lambda m, i, d, base: base ** (-2 * i / d)), "does not grow with the position"),
        (rope_with(lambda m, i, d, base: m * base ** (-2 * i / d), in_place=True), "in place"),
        (lambda x, position, base=10000.0: x[: x.shape[-1] // 2], "same width"),
        (lambda x, position, base=10000.0: "rotated", "not a list of numbers"),
    ],
)
def test_rope_mistakes_fail_with_their_hint(verdict, wrong, hint_words):
    assert not check_rope_rotate(wrong)
    word, out = verdict()
    assert word == "NOT YET"
    assert hint_words in out, out


def test_rope_stub_and_crash_are_reported(capsys):
    def stub(x, position, base=10000.0):
        raise NotImplementedError

    def crash(x, position, base=10000.0):
        return x @ torch.ones(3)

    assert not check_rope_rotate(stub)
    assert "not written yet" in capsys.readouterr().out
    assert not check_rope_rotate(crash)
    assert "raised RuntimeError" in capsys.readouterr().out


# ex-6-2: ALiBi slopes ----------------------------------------------------------------------------


def reference_slopes(n_heads):
    return torch.tensor([2.0 ** (-8.0 * k / n_heads) for k in range(1, n_heads + 1)])


def test_slopes_reference_passes(verdict):
    assert check_alibi_slopes(reference_slopes)
    assert verdict()[0] == "PASSED"


def test_slopes_as_a_plain_list_pass(verdict):
    assert check_alibi_slopes(lambda h: [2 ** (-8 * k / h) for k in range(1, h + 1)])
    assert verdict()[0] == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (lambda h: [2 ** (-8 * k / h) for k in range(h)], "came out as 1"),
        (lambda h: [2 ** (-8 * k / h) for k in range(h, 0, -1)], "reverse order"),
        (lambda h: [2.0**-k for k in range(1, h + 1)], "only for 8 heads"),
        (lambda h: [1 / (2 * k) for k in range(1, h + 1)], "fixed ratio"),
        (lambda h: [2 ** (-k / h) for k in range(1, h + 1)], "end at 1/2"),
        (lambda h: [2 ** (-8 * k / h) for k in range(1, h)], "one slope per head"),
    ],
)
def test_slope_mistakes_fail_with_their_hint(verdict, wrong, hint_words):
    assert not check_alibi_slopes(wrong)
    word, out = verdict()
    assert word == "NOT YET"
    assert hint_words in out, out


def test_halving_slopes_pass_for_eight_heads_but_fail_for_four(capsys):
    # 2^-k is right for exactly 8 heads: the checker must look further than 8.
    assert not check_alibi_slopes(lambda h: [2.0**-k for k in range(1, h + 1)])
    assert "for 4 heads" in capsys.readouterr().out


# ex-6-5: position interpolation in the frequencies --------------------------------------------------


def reference_frequencies(d, length, trained_length, base=10000.0):
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    return theta * min(1.0, trained_length / length)


def test_frequencies_reference_passes(verdict):
    assert check_interpolated_frequencies(reference_frequencies)
    assert verdict()[0] == "PASSED"


def test_frequencies_give_whole_positions_the_interpolated_angles():
    from transformerland.encodings import interpolated_positions, rotary_angles

    whole = rotary_angles(torch.arange(256), 64, inv_freq=reference_frequencies(64, 256, 64))
    squeezed = rotary_angles(interpolated_positions(256, 64), 64)
    torch.testing.assert_close(whole, squeezed)


def theta(d, base=10000.0):
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (lambda d, n, L, base=10000.0: theta(d, base), "RoPE's own frequencies"),
        (lambda d, n, L, base=10000.0: theta(d, base) * max(1.0, n / L), "faster than RoPE's"),
        (lambda d, n, L, base=10000.0: theta(d, base) * L / n, "no longer than the training length changed"),
        (lambda d, n, L, base=10000.0: theta(d, base) * min(1.0, (L - 1) / (n - 1)), "exactly on position L − 1"),
        (lambda d, n, L, base=10000.0: base ** (-torch.arange(d // 2) / d) * min(1.0, L / n), "exponent"),
        (lambda d, n, L, base=10000.0: torch.arange(n) * min(1.0, L / n), "one frequency per pair"),
    ],
)
def test_frequency_mistakes_fail_with_their_hint(verdict, wrong, hint_words):
    assert not check_interpolated_frequencies(wrong)
    word, out = verdict()
    assert word == "NOT YET"
    assert hint_words in out, out


def test_no_hint_gives_the_scale():
    """The hints diagnose; none of them writes the factor the answer multiplies by."""
    from transformerland.exercises.ch6 import EXERCISES

    for spec in EXERCISES:
        words = " ".join([spec.hint, *(m for m in _hint_texts(spec))])
        for line in ("L / L′", "trained_length / length", "2^(−8/H)", "2^(−8k/H)", "base^(−2i/d)", "a·cos φ − b·sin φ"):
            assert line not in words, (spec.label, line)


def _hint_texts(spec):
    import tomllib
    from pathlib import Path

    import transformerland.exercises as exercises

    data = tomllib.loads((Path(exercises.__file__).parent / "ch6.toml").read_text())[spec.label]
    return [v if isinstance(v, str) else v["hint"] for v in data.get("mistakes", {}).values()]
