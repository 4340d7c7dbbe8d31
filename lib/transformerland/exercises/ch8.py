"""Exercises of chapter 8, the Map Room (stretching RoPE to longer contexts), as specs (words in ``ch8.toml``).

* :data:`NTK_BASE` (ex-8-1): the NTK-aware base for a factor.
* :data:`YARN_RAMP` (ex-8-2): YaRN's share of interpolation for each pair.
* :data:`LLAMA3_BAND` (ex-8-3): which of Llama 3's bands a wavelength falls into.
* :data:`DYNAMIC_FACTOR` (ex-8-4): the factor dynamic NTK uses at a given length.
"""

from __future__ import annotations

import random
from typing import Any

import torch

from ..encodings.rope_scaling import dynamic_factor, ntk_base, yarn_ramp
from .checking import Check
from .spec import Case, Exercise, chapter_data, compare, declared

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

_DATA = chapter_data(__name__)


def _ntk_hidden(seed: int) -> list[tuple[Any, ...]]:
    r = random.Random(seed)
    draws = [
        (r.choice([1e4, 5e4, 1e5, 5e5]), r.choice([2.0, 4.0, 8.0, 16.0]), r.choice([32, 64, 128])) for _ in range(3)
    ]
    return [*draws, (r.choice([100.0, 500.0]), 1.0, 8)]


def _ntk_slips(base: float, factor: float, head_dim: int) -> dict[str, float]:
    return {
        "times_factor": base * factor,
        "upside_down": base * factor ** ((head_dim - 2) / head_dim),
        "pairs": base * factor ** (head_dim / 2),
        "power": base**factor,
    }


NTK_BASE = declared(_DATA, "ex-8-1", reference=ntk_base, hidden=_ntk_hidden, slips=_ntk_slips)


def _ramp_hidden(seed: int) -> list[tuple[Any, ...]]:
    r = random.Random(seed)
    calls = [
        (r.choice([64, 128]), r.choice([1e4, 1e5, 5e5]), r.choice([2048, 4096, 8192]), 32.0, 1.0) for _ in range(3)
    ]
    return [*calls, (r.choice([32, 256]), r.choice([1e4, 5e5]), r.choice([2048, 16384]), 32.0, 1.0)]  # never public


def _ramp_slips(*args: Any) -> dict[str, torch.Tensor]:
    return {"reversed": 1 - yarn_ramp(*args), "unrounded": yarn_ramp(*args, truncate=False)}


YARN_RAMP = declared(_DATA, "ex-8-2", reference=yarn_ramp, hidden=_ramp_hidden, slips=_ramp_slips)

BANDS = ("kept", "blended", "scaled")


def _band_hidden(seed: int) -> list[tuple[Any, ...]]:
    """One wavelength well inside each band, and both edges of another configuration (edges are blended)."""
    r = random.Random(seed)
    inside = [(w * r.uniform(0.8, 1.2), 8192, 1.0, 4.0) for w in (40.0, 1200.0, 4100.0, 6500.0, 90000.0)]
    original, low, high = r.choice([2048, 4096, 16384]), r.choice([1.0, 2.0]), r.choice([4.0, 8.0])
    return [*inside, (original / high, original, low, high), (original / low, original, low, high)]


def _band(wavelength: float, original: int, low: float, high: float) -> str:
    """Llama 3's band as its code draws it: kept below L/high, scaled above L/low, blended between, edges included.

    At an edge the blend gives the neighbour's frequency (:func:`~transformerland.encodings.rope_scaling.llama3_bands`
    gives the same share), but the pair is in the blended band: it turns exactly ``high`` (or ``low``) times over
    ``original``, not more (or less).
    """
    if wavelength < original / high:
        return "kept"
    return "scaled" if wavelength > original / low else "blended"


def _band_slips(wavelength: float, original: int, low: float, high: float) -> dict[str, str]:
    """Kept and scaled swapped (the blended band has no such slip); edges put in the outer bands (<= for <)."""
    band = _band(wavelength, original, low, high)
    slips = {} if band == "blended" else {"swapped": "scaled" if band == "kept" else "kept"}
    if wavelength == original / high:
        slips["edges"] = "kept"
    elif wavelength == original / low:
        slips["edges"] = "scaled"
    return slips


def _judge_band(check: Check, spec: Exercise, case: Case, got: Any, expected: str) -> None:
    check.that(got in BANDS, *spec.said("not_a_band", got=got))
    compare(check, spec, case, got, expected, problem=spec.say("wrong_band", *case.args, expected=expected, got=got))


LLAMA3_BAND = declared(_DATA, "ex-8-3", reference=_band, hidden=_band_hidden, slips=_band_slips, judge=_judge_band)


def _factor_hidden(seed: int) -> list[tuple[Any, ...]]:
    r = random.Random(seed)
    return [
        (r.choice([2.0, 4.0, 8.0]), r.randrange(2049, 20000), 2048),
        (4.0, r.randrange(1, 2048), 2048),
        (1.0, r.randrange(2049, 9000), 2048),
        (r.choice([2.0, 8.0]), 4096, 4096),
    ]


def _factor_slips(factor: float, seq_len: int, original: int) -> dict[str, float]:
    return {
        "not_kept_below": factor * seq_len / original - (factor - 1),
        "no_factor": seq_len / original,
        "no_offset": factor * seq_len / original,
        "constant": factor,
    }


DYNAMIC_FACTOR = declared(_DATA, "ex-8-4", reference=dynamic_factor, hidden=_factor_hidden, slips=_factor_slips)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [NTK_BASE, YARN_RAMP, LLAMA3_BAND, DYNAMIC_FACTOR]

check_ntk_base = NTK_BASE.checker_function()
check_yarn_ramp = YARN_RAMP.checker_function()
check_llama3_band = LLAMA3_BAND.checker_function()
check_dynamic_factor = DYNAMIC_FACTOR.checker_function()
