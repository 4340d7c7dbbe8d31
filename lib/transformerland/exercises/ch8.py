"""Checkers for chapter 8, the Map Room (stretching RoPE to longer contexts).

* :func:`check_ntk_base` (ex-8-1): the NTK-aware base for a factor.
* :func:`check_yarn_ramp` (ex-8-2): YaRN's share of interpolation for each pair.
* :func:`check_llama3_band` (ex-8-3): which of Llama 3's bands a wavelength falls into.
* :func:`check_dynamic_factor` (ex-8-4): the factor dynamic NTK uses at a given length.

Each prints one verdict line and returns a :class:`~transformerland.exercises.checking.CheckResult`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..encodings.rope_scaling import dynamic_factor, llama3_bands, ntk_base, yarn_ramp
from .checking import Check, CheckResult, Mistake, hint_for, numbers_close, tensors_close
from .spec import CheckedByCode

__all__ = [
    "BANDS",
    "EXERCISES",
    "check_dynamic_factor",
    "check_llama3_band",
    "check_ntk_base",
    "check_yarn_ramp",
]


_close = tensors_close(atol=1e-6, rtol=1e-6)
_near = numbers_close(rel_tol=1e-6, abs_tol=1e-9)


# ex-8-1 ------------------------------------------------------------------------------------------


def check_ntk_base(fn: Callable[[float, float, int], float]) -> CheckResult:
    """ex-8-1: ``fn(base, factor, head_dim)`` returns the NTK-aware base ``base · factor^(d/(d-2))``.

    Tries SmolLM2's and Llama 2's shapes and a small head, and a factor of 1 (nothing changes).
    """
    with Check("ex-8-1", "NTK-aware base") as check:
        for base, factor, head_dim in ((100000.0, 4.0, 64), (10000.0, 8.0, 128), (10000.0, 4.0, 16), (500.0, 1.0, 8)):
            got = check.number(check.call(fn, base, factor, head_dim), "the new base")
            expected = ntk_base(base, factor, head_dim)
            mistakes = [
                Mistake(
                    base * factor,
                    "you multiplied the base by the factor. The exponent d/(d−2) is what makes the "
                    "slowest pair slow down by exactly the factor: base · factor^(d/(d−2)).",
                ),
                Mistake(
                    base * factor ** ((head_dim - 2) / head_dim),
                    "the exponent is upside down: it is d/(d−2), slightly more than 1, not (d−2)/d.",
                ),
                Mistake(
                    base * factor ** (head_dim / 2), "the exponent counts pairs; it is d/(d−2), with d the head width."
                ),
                Mistake(base**factor, "the base is multiplied by factor^(d/(d−2)), not raised to the factor's power."),
            ]
            check.that(
                _near(got, expected),
                f"for base {base:g}, factor {factor:g} and head width {head_dim} the new base is not the NTK-aware one",
                hint=hint_for(got, mistakes, _near, "the new base is base · factor^(d/(d−2))."),
            )
    return check.result


# ex-8-2 ------------------------------------------------------------------------------------------


def check_yarn_ramp(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """ex-8-2: ``fn(head_dim, base, original_length, beta_fast, beta_slow)`` returns YaRN's ramp ``(d/2,)``.

    0 for pairs kept as they are, 1 for pairs divided by the factor, a straight line between.
    """
    with Check("ex-8-2", "YaRN ramp") as check:
        for head_dim, base, original, fast, slow in (
            (64, 100000.0, 8192, 32.0, 1.0),
            (128, 10000.0, 4096, 32.0, 1.0),
            (128, 500000.0, 8192, 16.0, 2.0),
            (16, 10000.0, 32, 32.0, 1.0),
        ):
            got = check.numbers(check.call(fn, head_dim, base, original, fast, slow), "the ramp")
            check.that(
                got.shape == (head_dim // 2,),
                f"for head width {head_dim} it returned shape {tuple(got.shape)}",
                hint=f"return one number per pair: {head_dim // 2} of them.",
            )
            expected = yarn_ramp(head_dim, base, original, fast, slow)
            mistakes = [
                Mistake(
                    1 - expected,
                    "the ramp is reversed: fast pairs (many turns over the context) are kept, share 0; "
                    "slow pairs are interpolated, share 1.",
                ),
                Mistake(
                    yarn_ramp(head_dim, base, original, fast, slow, truncate=False),
                    "the ends of the ramp were not "
                    "rounded: round the low end down and the high end up, as YaRN's code does.",
                ),
            ]
            check.that(
                _close(got, expected),
                f"for head width {head_dim}, base {base:g}, L = {original}, β = ({fast:g}, {slow:g}) the ramp differs",
                hint=hint_for(
                    got,
                    mistakes,
                    _close,
                    "pair i turns L·θ_i/(2π) times over the context; the ramp's ends are the pair indices "
                    "d·ln(L/(2πβ))/(2 ln base) for β = beta_fast and beta_slow.",
                ),
            )
    return check.result


# ex-8-3 ------------------------------------------------------------------------------------------

BANDS = ("kept", "blended", "scaled")


def check_llama3_band(fn: Callable[[float, int, float, float], str]) -> CheckResult:
    """ex-8-3: ``fn(wavelength, original_length, low_freq_factor, high_freq_factor)`` names the band.

    ``"kept"`` below ``L / high_freq_factor``, ``"scaled"`` above ``L / low_freq_factor``,
    ``"blended"`` between. (At the two edges the blend equals its neighbour, so no case sits there.)
    """
    with Check("ex-8-3", "Llama 3 bands") as check:
        cases = [
            (6.28, 8192, 1.0, 4.0),
            (1000.0, 8192, 1.0, 4.0),
            (3000.0, 8192, 1.0, 4.0),
            (8000.0, 8192, 1.0, 4.0),
            (20000.0, 8192, 1.0, 4.0),
            (400000.0, 8192, 1.0, 4.0),
            (700.0, 4096, 2.0, 8.0),
            (1500.0, 4096, 2.0, 8.0),
            (2100.0, 4096, 2.0, 8.0),
        ]
        for wavelength, original, low, high in cases:
            got = check.call(fn, wavelength, original, low, high)
            check.that(
                got in BANDS,
                f"it returned {got!r}",
                hint='return one of the strings "kept", "blended" or "scaled".',
            )
            share = float(llama3_bands(torch.tensor([wavelength]), original, low, high))
            expected = "kept" if share == 0 else "scaled" if share == 1 else "blended"
            swapped = "kept" if expected == "scaled" else "scaled" if expected == "kept" else "blended"
            if got == swapped:
                hint = "the bands are swapped: short wavelengths (fast pairs) are kept, long ones are scaled."
            else:
                hint = "the edges are L / high_freq_factor (below: kept) and L / low_freq_factor (above: scaled)."
            check.that(
                got == expected,
                f"a wavelength of {wavelength:g} with L = {original}, factors ({low:g}, {high:g}) is in the "
                f"{expected!r} band, not {got!r}",
                hint=hint,
            )
    return check.result


# ex-8-4 ------------------------------------------------------------------------------------------


def check_dynamic_factor(fn: Callable[[float, int, int], float]) -> CheckResult:
    """ex-8-4: ``fn(factor, seq_len, original_length)`` returns dynamic NTK's effective factor."""
    with Check("ex-8-4", "dynamic NTK factor") as check:
        for factor, seq_len, original in (
            (1.0, 8192, 2048),
            (4.0, 128, 32),
            (2.0, 3000, 2048),
            (4.0, 16, 32),
            (4.0, 32, 32),
            (8.0, 10000, 8192),
        ):
            got = check.number(check.call(fn, factor, seq_len, original), "the effective factor")
            expected = dynamic_factor(factor, seq_len, original)
            mistakes = [
                Mistake(
                    factor * seq_len / original - (factor - 1),
                    "below the original length the factor must stay 1: "
                    "dynamic scaling changes nothing for inputs the model was trained on.",
                ),
                Mistake(seq_len / original, "the configured factor is missing: factor · s / L − (factor − 1)."),
                Mistake(
                    factor * seq_len / original,
                    "subtract factor − 1, so that the effective factor is exactly 1 at the original length.",
                ),
                Mistake(factor, "the factor must follow the current length s: factor · s / L − (factor − 1)."),
            ]
            check.that(
                _near(got, expected),
                f"for factor {factor:g}, length {seq_len} and original length {original} the effective factor "
                f"is not dynamic NTK's",
                hint=hint_for(got, mistakes, _near, "use factor · max(s, L) / L − (factor − 1)."),
            )
    return check.result


#: Every exercise of the chapter with a checker, in order (checkers still written as code: see
#: :class:`~transformerland.exercises.spec.CheckedByCode`).
EXERCISES = [
    CheckedByCode(
        "ex-8-1",
        "NTK-aware base",
        "check_ntk_base",
        "my_ntk_base",
        "``fn(base, factor, head_dim)`` returns the NTK-aware base ``base · factor^(d/(d-2))``.",
        check_ntk_base,
    ),
    CheckedByCode(
        "ex-8-2",
        "YaRN ramp",
        "check_yarn_ramp",
        "my_yarn_ramp",
        "``fn(head_dim, base, original_length, beta_fast, beta_slow)`` returns YaRN's ramp ``(d/2,)``.",
        check_yarn_ramp,
    ),
    CheckedByCode(
        "ex-8-3",
        "Llama 3 bands",
        "check_llama3_band",
        "my_llama3_band",
        "``fn(wavelength, original_length, low_freq_factor, high_freq_factor)`` names the band.",
        check_llama3_band,
    ),
    CheckedByCode(
        "ex-8-4",
        "dynamic NTK factor",
        "check_dynamic_factor",
        "my_dynamic_factor",
        "``fn(factor, seq_len, original_length)`` returns dynamic NTK's effective factor.",
        check_dynamic_factor,
    ),
]
