"""Exercises of chapter 8, the Map Room (stretching RoPE to longer contexts), as specs.

* :data:`NTK_BASE` (ex-8-1): the NTK-aware base for a factor.
* :data:`YARN_RAMP` (ex-8-2): YaRN's share of interpolation for each pair.
* :data:`LLAMA3_BAND` (ex-8-3): which of Llama 3's bands a wavelength falls into.
* :data:`DYNAMIC_FACTOR` (ex-8-4): the factor dynamic NTK uses at a given length.
"""

from __future__ import annotations

from typing import Any

import torch

from ..encodings.rope_scaling import dynamic_factor, llama3_bands, ntk_base, yarn_ramp
from .checking import Check, Mistake, numbers_close, tensors_close
from .spec import Case, Exercise, cases_of, compare, drawn, number_answer, numbers_answer

__all__ = [
    "BANDS",
    "DYNAMIC_FACTOR",
    "EXERCISES",
    "LLAMA3_BAND",
    "NTK_BASE",
    "YARN_RAMP",
    "check_dynamic_factor",
    "check_llama3_band",
    "check_ntk_base",
    "check_yarn_ramp",
]


# ex-8-1 ------------------------------------------------------------------------------------------


def _ntk_cases(seed: int) -> list[Case]:
    calls = drawn(
        seed,
        [(100000.0, 4.0, 64), (10000.0, 8.0, 128), (10000.0, 4.0, 16), (500.0, 1.0, 8)],
        lambda r: (
            [
                (r.choice([1e4, 5e4, 1e5, 5e5]), r.choice([2.0, 4.0, 8.0, 16.0]), r.choice([32, 64, 128]))
                for _ in range(3)
            ]
            + [(r.choice([100.0, 500.0]), 1.0, 8)]
        ),
    )
    return cases_of(calls, "for base {0:g}, factor {1:g} and head width {2} the new base is not the NTK-aware one")


def _ntk_mistakes(case: Case) -> list[Mistake]:
    base, factor, head_dim = case.args
    return [
        Mistake(
            base * factor,
            "you multiplied the base by the factor. The exponent d/(d−2) is what makes the "
            "slowest pair slow down by exactly the factor: base · factor^(d/(d−2)).",
        ),
        Mistake(
            base * factor ** ((head_dim - 2) / head_dim),
            "the exponent is upside down: it is d/(d−2), slightly more than 1, not (d−2)/d.",
        ),
        Mistake(base * factor ** (head_dim / 2), "the exponent counts pairs; it is d/(d−2), with d the head width."),
        Mistake(base**factor, "the base is multiplied by factor^(d/(d−2)), not raised to the factor's power."),
    ]


_near = numbers_close(rel_tol=1e-6, abs_tol=1e-9)

NTK_BASE = Exercise(
    label="ex-8-1",
    what="NTK-aware base",
    checker="check_ntk_base",
    function="my_ntk_base",
    signature="(base: float, factor: float, head_dim: int) -> float: base · factor^(d/(d-2))",
    cases=_ntk_cases,
    reference=ntk_base,
    tolerance=_near,
    mistakes=_ntk_mistakes,
    hint="the new base is base · factor^(d/(d−2)).",
    judge=number_answer("the new base"),
)

# ex-8-2 ------------------------------------------------------------------------------------------


def _ramp_cases(seed: int) -> list[Case]:
    calls = drawn(
        seed,
        [
            (64, 100000.0, 8192, 32.0, 1.0),
            (128, 10000.0, 4096, 32.0, 1.0),
            (128, 500000.0, 8192, 16.0, 2.0),
            (16, 10000.0, 32, 32.0, 1.0),
        ],
        lambda r: [
            (r.choice([64, 128]), r.choice([1e4, 1e5, 5e5]), r.choice([2048, 4096, 8192]), 32.0, 1.0) for _ in range(3)
        ],
    )
    return cases_of(calls, "for head width {0}, base {1:g}, L = {2}, β = ({3:g}, {4:g}) the ramp differs")


def _ramp_mistakes(case: Case) -> list[Mistake]:
    expected = yarn_ramp(*case.args)
    return [
        Mistake(
            1 - expected,
            "the ramp is reversed: fast pairs (many turns over the context) are kept, share 0; "
            "slow pairs are interpolated, share 1.",
        ),
        Mistake(
            yarn_ramp(*case.args, truncate=False),
            "the ends of the ramp were not rounded: round the low end down and the high end up, as YaRN's code does.",
        ),
    ]


YARN_RAMP = Exercise(
    label="ex-8-2",
    what="YaRN ramp",
    checker="check_yarn_ramp",
    function="my_yarn_ramp",
    signature="(head_dim, base, original_length, beta_fast, beta_slow) -> Tensor (head_dim / 2,)",
    cases=_ramp_cases,
    reference=yarn_ramp,
    tolerance=tensors_close(atol=1e-6, rtol=1e-6),
    mistakes=_ramp_mistakes,
    hint="pair i turns L·θ_i/(2π) times over the context; the ramp's ends are the pair indices "
    "d·ln(L/(2πβ))/(2 ln base) for β = beta_fast and beta_slow.",
    judge=numbers_answer("the ramp", "return one number per pair: {n} of them."),
)

# ex-8-3 ------------------------------------------------------------------------------------------

BANDS = ("kept", "blended", "scaled")


def _band_cases(seed: int) -> list[Case]:
    calls = drawn(
        seed,
        [
            (6.28, 8192, 1.0, 4.0),
            (1000.0, 8192, 1.0, 4.0),
            (3000.0, 8192, 1.0, 4.0),
            (8000.0, 8192, 1.0, 4.0),
            (20000.0, 8192, 1.0, 4.0),
            (400000.0, 8192, 1.0, 4.0),
            (700.0, 4096, 2.0, 8.0),
            (1500.0, 4096, 2.0, 8.0),
            (2100.0, 4096, 2.0, 8.0),
        ],
        # one wavelength well inside each band (never at an edge, where the blend equals its neighbour)
        lambda r: [(w * r.uniform(0.8, 1.2), 8192, 1.0, 4.0) for w in (40.0, 1200.0, 4100.0, 6500.0, 90000.0)],
    )
    return cases_of(calls)


def _band(wavelength: float, original: int, low: float, high: float) -> str:
    share = float(llama3_bands(torch.tensor([wavelength]), original, low, high))
    return "kept" if share == 0 else "scaled" if share == 1 else "blended"


def _judge_band(check: Check, spec: Exercise, case: Case, got: Any, expected: str) -> None:
    wavelength, original, low, high = case.args
    check.that(got in BANDS, f"it returned {got!r}", hint='return one of the strings "kept", "blended" or "scaled".')
    swapped = {"kept": "scaled", "scaled": "kept"}.get(expected, expected)
    problem = (
        f"a wavelength of {wavelength:g} with L = {original}, factors ({low:g}, {high:g}) is in the "
        f"{expected!r} band, not {got!r}"
    )
    mistakes = [
        Mistake(swapped, "the bands are swapped: short wavelengths (fast pairs) are kept, long ones are scaled.")
    ]
    compare(check, spec, Case(case.args, problem=problem), got, expected, mistakes=mistakes)


LLAMA3_BAND = Exercise(
    label="ex-8-3",
    what="Llama 3 bands",
    checker="check_llama3_band",
    function="my_llama3_band",
    signature="(wavelength, original_length, low_freq_factor, high_freq_factor) -> 'kept' | 'blended' | 'scaled'",
    cases=_band_cases,
    reference=_band,
    hint="the edges are L / high_freq_factor (below: kept) and L / low_freq_factor (above: scaled).",
    judge=_judge_band,
)

# ex-8-4 ------------------------------------------------------------------------------------------


def _factor_cases(seed: int) -> list[Case]:
    calls = drawn(
        seed,
        [(1.0, 8192, 2048), (4.0, 128, 32), (2.0, 3000, 2048), (4.0, 16, 32), (4.0, 32, 32), (8.0, 10000, 8192)],
        lambda r: [
            (r.choice([2.0, 4.0, 8.0]), r.randrange(2049, 20000), 2048),
            (4.0, r.randrange(1, 2048), 2048),
            (1.0, r.randrange(2049, 9000), 2048),
            (r.choice([2.0, 8.0]), 4096, 4096),
        ],
    )
    return cases_of(
        calls, "for factor {0:g}, length {1} and original length {2} the effective factor is not dynamic NTK's"
    )


def _factor_mistakes(case: Case) -> list[Mistake]:
    factor, seq_len, original = case.args
    return [
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


DYNAMIC_FACTOR = Exercise(
    label="ex-8-4",
    what="dynamic NTK factor",
    checker="check_dynamic_factor",
    function="my_dynamic_factor",
    signature="(factor: float, seq_len: int, original_length: int) -> float",
    cases=_factor_cases,
    reference=dynamic_factor,
    tolerance=_near,
    mistakes=_factor_mistakes,
    hint="use factor · max(s, L) / L − (factor − 1).",
    judge=number_answer("the effective factor"),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [NTK_BASE, YARN_RAMP, LLAMA3_BAND, DYNAMIC_FACTOR]

check_ntk_base = NTK_BASE.checker_function()
check_yarn_ramp = YARN_RAMP.checker_function()
check_llama3_band = LLAMA3_BAND.checker_function()
check_dynamic_factor = DYNAMIC_FACTOR.checker_function()
