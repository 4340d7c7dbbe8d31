"""Chapter 8's exercises: the reference answers pass, typical slips are named at once and hinted at the second
time, 8.3's edges are told from the outer bands, 8.4's factor is the edge of the trained arc, and the grader's
calls are drawn apart from the notebook's."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.encodings import rope_frequencies, sinusoid_frequencies
from transformerland.encodings.rope_scaling import ntk_base
from transformerland.exercises.ch8 import (
    EXERCISES,
    LLAMA3_BAND,
    SAFE_FACTOR,
    check_llama3_band,
    check_ntk_base,
    check_safe_factor,
    check_yarn_ramp,
)

from tests.checkers import named_then_hinted

# --- ex-8-1: the NTK-aware base --------------------------------------------------------------------------


def test_ntk_base_reference_passes_and_the_library_s_is_refused(verdict):
    assert check_ntk_base(lambda base, factor, d: base * factor ** (d / (d - 2)))
    assert verdict().word == "PASSED"
    result = check_ntk_base(lambda base, factor, d: ntk_base(base, factor, d))
    assert not result and "write it yourself" in result.message


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda base, factor, d: base * factor, "multiplied the base by the factor"),
        (lambda base, factor, d: base * factor ** ((d - 2) / d), "which way up"),
        (lambda base, factor, d: base * factor ** (d / 2), "not the number of pairs"),
        (lambda base, factor, d: base**factor, "you raised the base to a power"),
        (lambda base, factor, d: base / factor ** (d / (d - 2)), "smaller than the old one"),
    ],
)
def test_ntk_base_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_ntk_base, wrong, says)


def test_ntk_base_other_answers_are_not_yet():
    assert "not a number" in check_ntk_base(lambda base, factor, d: "big").message
    assert "ZeroDivisionError" in check_ntk_base(lambda base, factor, d: 1 / 0).message
    assert "the two ends" in check_ntk_base(lambda base, factor, d: base + 1).hint


# --- ex-8-2: YaRN's ramp ---------------------------------------------------------------------------------


def ramp_with(*, reverse=False, truncate=True, clamp=True, inwards=False, fixed_betas=False):
    def ramp(head_dim, base, original_length, beta_fast=32.0, beta_slow=1.0):
        def index(turns):
            return head_dim * math.log(original_length / (turns * 2 * math.pi)) / (2 * math.log(base))

        if fixed_betas:
            beta_fast, beta_slow = 32.0, 1.0
        low, high = index(beta_fast), index(beta_slow)
        if truncate:
            low, high = (math.ceil(low), math.floor(high)) if inwards else (math.floor(low), math.ceil(high))
        low, high = max(low, 0) if clamp else low, min(high, head_dim - 1)
        share = ((torch.arange(head_dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        return 1 - share if reverse else share

    return ramp


def test_yarn_ramp_reference_passes(verdict):
    assert check_yarn_ramp(ramp_with())
    assert verdict().word == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (ramp_with(reverse=True), "reversed"),
        (ramp_with(truncate=False), "fractional"),
        (ramp_with(clamp=False), "kept end lies before pair 0"),
        (ramp_with(inwards=True), "rounded inwards"),
        (ramp_with(fixed_betas=True), "does not move when beta_fast and beta_slow change"),
        (lambda head_dim, base, original_length, beta_fast, beta_slow: torch.zeros(head_dim), "64 // 2 of them"),
    ],
)
def test_yarn_ramp_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_yarn_ramp, wrong, says)


def test_a_wrong_ramp_no_slip_explains_is_pointed_at_the_turns():
    result = check_yarn_ramp(lambda head_dim, base, original_length, beta_fast, beta_slow: torch.zeros(head_dim // 2))
    assert not result and "turns L·θ_i/(2π) times" in result.hint


# --- ex-8-3: Llama 3's bands -----------------------------------------------------------------------------


def band_with(*, swap=False, times=False, inclusive=False):
    def band(wavelength, original_length, low_freq_factor, high_freq_factor):
        short, long = original_length / high_freq_factor, original_length / low_freq_factor
        if times:
            short, long = original_length * low_freq_factor, original_length * high_freq_factor
        if wavelength < short or (inclusive and wavelength == short):
            return "scaled" if swap else "kept"
        if wavelength > long or (inclusive and wavelength == long):
            return "kept" if swap else "scaled"
        return "blended"

    return band


def test_llama3_band_reference_passes(verdict):
    assert check_llama3_band(band_with())
    assert verdict().word == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (band_with(swap=True), "swapped"),
        (band_with(inclusive=True), "on the edge between kept and blended"),
        (lambda *args: "fast", "one of the strings"),
    ],
)
def test_llama3_band_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_llama3_band, wrong, says)


def test_a_wrong_band_no_slip_explains_is_pointed_at_the_edges():
    result = check_llama3_band(band_with(times=True))
    assert not result and "compare the wavelength with two edges" in result.hint


@pytest.mark.parametrize(
    ("edge", "says", "then"),
    [
        (2048.0, "between kept and blended landed in the kept band", "L / high_freq_factor"),
        (8192.0, "between blended and scaled landed in the scaled band", "L / low_freq_factor"),
    ],
)
def test_llama3_band_tells_each_edge_from_its_outer_band(edge, says, then):
    """'More than 4 turns' is kept, exactly 4 is blended: a `<=` for `<` at one edge alone fails, named for that
    edge, and its second hint speaks of that edge, not the other."""

    def inclusive_at(wavelength, original_length, low_freq_factor, high_freq_factor):
        if wavelength == edge:
            return "kept" if edge == original_length / high_freq_factor else "scaled"
        return band_with()(wavelength, original_length, low_freq_factor, high_freq_factor)

    named_then_hinted(check_llama3_band, inclusive_at, says)
    result = check_llama3_band(inclusive_at)
    assert then in result.hint, result
    other = "L / low_freq_factor" if then == "L / high_freq_factor" else "L / high_freq_factor"
    assert other not in result.hint, result


def test_every_hidden_draw_holds_both_edges():
    for seed in range(1, 30):
        drawn = LLAMA3_BAND.cases(seed)
        edges = [c for c in drawn if c.args[0] in (c.args[1] / c.args[3], c.args[1] / c.args[2])]
        assert len(edges) == 2 and {LLAMA3_BAND.reference(*c.args) for c in edges} == {"blended"}, seed


# --- ex-8-4: how far NTK-aware scaling must stretch ----------------------------------------------------------


def safe_factor_with(*, pick="first partial", distances=1, guard=True, flipped=False):
    """A student's answer, written from the statement: right by default, each keyword one slip."""

    def factor(head_dim, base, original_length, seq_len):
        if guard and seq_len <= original_length:
            return 1.0
        theta = [base ** (-2 * i / head_dim) for i in range(head_dim // 2)]
        partial = [i for i, t in enumerate(theta) if (original_length - 1) * t < 2 * math.pi]
        if not partial:
            return 1.0
        i = {"first partial": partial[0], "slowest": head_dim // 2 - 1, "last full": partial[0] - 1}[pick]
        exponent = (head_dim - 2) / (2 * i)
        stretch = (seq_len - distances) / (original_length - distances)
        return stretch ** (1 / exponent if flipped else exponent)

    return factor


def test_safe_factor_reference_passes(verdict):
    assert check_safe_factor(safe_factor_with())
    assert verdict().word == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (safe_factor_with(pick="slowest"), "protects the slowest pair only"),
        (safe_factor_with(pick="last full"), "already completed a full turn"),
        (safe_factor_with(distances=0), "count the longest distance"),
        (safe_factor_with(flipped=True), "which way up your exponent is"),
        (safe_factor_with(guard=False), "no longer than training"),
    ],
)
def test_safe_factor_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_safe_factor, wrong, says)


def test_a_wrong_safe_factor_no_slip_explains_is_pointed_at_one_pair():
    result = check_safe_factor(lambda head_dim, base, original_length, seq_len: seq_len / original_length + 1)
    assert not result and "check one pair by hand" in result.hint
    result = check_safe_factor(lambda head_dim, base, original_length, seq_len: torch.tensor([1.0, 2.0]))
    assert not result and "not a number" in result.message


def test_the_safe_factor_is_the_edge_of_the_chapter_s_arc():
    """At the factor, the first partial pair's largest angle equals its trained arc; a hair less passes it."""
    for args in [(64, 1e5, 8192, 23040), (16, 1e4, 32, 128), (128, 5e5, 8192, 131072)]:
        head_dim, base, length, seq_len = args
        s = SAFE_FACTOR.reference(*args)
        i = next(i for i, t in enumerate(sinusoid_frequencies(head_dim, base)) if (length - 1) * t < 2 * math.pi)
        for factor, past in ((s, False), (0.999 * s, True)):
            theta = rope_frequencies(head_dim, base, {"rope_type": "ntk", "factor": factor})[0]
            trained = (length - 1) * sinusoid_frequencies(head_dim, base)
            reached = (seq_len - 1) * theta
            assert bool(reached[i] > trained[i] * (1 + 1e-9)) is past, (args, factor)
            assert not (reached[i:] > trained[i:] * (1 + 1e-9))[1:].any() or past, (args, factor)


def test_no_drawn_head_has_a_pair_on_the_edge_of_a_full_turn():
    """The answer jumps where a pair's trained angle is exactly 2π: no call may sit close to such an edge."""
    for seed in range(1, 30):
        for case in [*SAFE_FACTOR.public, *SAFE_FACTOR.cases(seed)]:
            head_dim, base, length, _ = case.args
            turns = (length - 1) * sinusoid_frequencies(head_dim, base) / (2 * math.pi)
            assert float(turns.log().abs().min()) > 1e-3, case.args


def test_every_hidden_draw_makes_calls_the_notebook_never_made():
    for spec in EXERCISES:
        public = [repr((c.args, c.kwargs)) for c in spec.public]
        for seed in range(1, 30):
            drawn = [repr((c.args, c.kwargs)) for c in spec.cases(seed)]
            assert any(call not in public for call in drawn), (spec.label, seed)
