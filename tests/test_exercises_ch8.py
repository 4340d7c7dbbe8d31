"""The chapter 8 checkers: the references pass, the usual mistakes fail with the hint that names them."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.exercises import VERDICT_PATTERN
from transformerland.exercises.ch8 import check_dynamic_factor, check_llama3_band, check_ntk_base, check_yarn_ramp


def verdict(capsys) -> tuple[str, str]:
    """The verdict word and the whole printed text of the last check."""
    out = capsys.readouterr().out
    match = VERDICT_PATTERN.search(out)
    assert match, out
    return match["verdict"], out


# ex-8-1: the NTK-aware base ----------------------------------------------------------------------------


def test_ntk_base_reference_passes(capsys):
    assert check_ntk_base(lambda base, factor, d: base * factor ** (d / (d - 2)))
    assert verdict(capsys)[0] == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (lambda base, factor, d: base * factor, "multiplied the base by the factor"),
        (lambda base, factor, d: base * factor ** ((d - 2) / d), "which way up"),
        (lambda base, factor, d: base * factor ** (d / 2), "not the number of pairs"),
        (lambda base, factor, d: base**factor, "you raised the base to a power"),
        (lambda base, factor, d: "big", "not a number"),
        (lambda base, factor, d: 1 / 0, "ZeroDivisionError"),
    ],
)
def test_ntk_base_mistakes_fail_with_their_hint(capsys, wrong, hint_words):
    assert not check_ntk_base(wrong)
    word, out = verdict(capsys)
    assert word == "NOT YET" and hint_words in out, out


# ex-8-2: YaRN's ramp -----------------------------------------------------------------------------------


def ramp_with(*, reverse=False, truncate=True):
    def ramp(head_dim, base, original_length, beta_fast=32.0, beta_slow=1.0):
        def index(turns):
            return head_dim * math.log(original_length / (turns * 2 * math.pi)) / (2 * math.log(base))

        low, high = index(beta_fast), index(beta_slow)
        if truncate:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, head_dim - 1)
        share = ((torch.arange(head_dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        return 1 - share if reverse else share

    return ramp


def test_yarn_ramp_reference_passes(capsys):
    assert check_yarn_ramp(ramp_with())
    assert verdict(capsys)[0] == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (ramp_with(reverse=True), "reversed"),
        (ramp_with(truncate=False), "rounded"),
        (lambda head_dim, base, original_length, beta_fast, beta_slow: torch.zeros(head_dim), "one number per pair"),
        (lambda head_dim, base, original_length, beta_fast, beta_slow: torch.zeros(head_dim // 2), "turns"),
    ],
)
def test_yarn_ramp_mistakes_fail_with_their_hint(capsys, wrong, hint_words):
    assert not check_yarn_ramp(wrong)
    word, out = verdict(capsys)
    assert word == "NOT YET" and hint_words in out, out


# ex-8-3: Llama 3's bands -------------------------------------------------------------------------------


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


def test_llama3_band_reference_passes(capsys):
    assert check_llama3_band(band_with())
    assert verdict(capsys)[0] == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (band_with(swap=True), "swapped"),
        (band_with(times=True), "compare the wavelength with two edges"),
        (band_with(inclusive=True), "exactly on an edge"),
        (lambda *args: "fast", "one of the strings"),
    ],
)
def test_llama3_band_mistakes_fail_with_their_hint(capsys, wrong, hint_words):
    assert not check_llama3_band(wrong)
    word, out = verdict(capsys)
    assert word == "NOT YET" and hint_words in out, out


# ex-8-4: dynamic NTK's factor --------------------------------------------------------------------------


def test_dynamic_factor_reference_passes(capsys):
    assert check_dynamic_factor(lambda factor, s, length: factor * max(s, length) / length - (factor - 1))
    assert verdict(capsys)[0] == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (lambda factor, s, length: factor * s / length - (factor - 1), "must stay 1"),
        (lambda factor, s, length: max(s, length) / length, "plays no part"),
        (lambda factor, s, length: factor * max(s, length) / length, "not 1"),
        (lambda factor, s, length: factor, "does not change with the length"),
        (lambda factor, s, length: torch.tensor([factor, factor]), "not a number"),
    ],
)
def test_dynamic_factor_mistakes_fail_with_their_hint(capsys, wrong, hint_words):
    assert not check_dynamic_factor(wrong)
    word, out = verdict(capsys)
    assert word == "NOT YET" and hint_words in out, out


@pytest.mark.parametrize("edge", [2048.0, 8192.0])
def test_llama3_band_tells_the_edges_from_the_outer_bands(capsys, edge):
    """'More than 4 turns' is kept, exactly 4 is blended: a `<=` for `<` fails on the public edges, alone."""

    def inclusive_at(wavelength, original_length, low_freq_factor, high_freq_factor):
        if wavelength == edge:
            return "kept" if edge == original_length / high_freq_factor else "scaled"
        return band_with()(wavelength, original_length, low_freq_factor, high_freq_factor)

    assert not check_llama3_band(inclusive_at)
    word, out = verdict(capsys)
    assert word == "NOT YET" and "exactly on an edge" in out, out
