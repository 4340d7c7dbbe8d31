"""Exercises of chapter 6, the Observatory (RoPE and ALiBi), as specs (words in ``ch6.toml``).

* :data:`ROPE_ROTATE` (ex-6-1): rotate one vector by RoPE's angles, adjacent pairs.
* :data:`ALIBI_SLOPES` (ex-6-2): ALiBi's head slopes for a power-of-two head count.
* :data:`INTERPOLATED_FREQUENCIES` (ex-6-5): position interpolation moved into RoPE's frequencies.
"""

from __future__ import annotations

from typing import Any

import torch

from ..encodings.alibi import alibi_slopes
from ..encodings.rotary import apply_rotary
from ..encodings.sinusoidal import sinusoid_frequencies
from .checking import Check
from .spec import PUBLIC_SEED, Case, Exercise, chapter_data, declared, numbers_answer

__all__ = [
    "ALIBI_SLOPES",
    "EXERCISES",
    "INTERPOLATED_FREQUENCIES",
    "ROPE_ROTATE",
    "check_alibi_slopes",
    "check_interpolated_frequencies",
    "check_rope_rotate",
]

_DATA = chapter_data(__name__)


def _rotate_pairs(x: torch.Tensor, angles: torch.Tensor, halves: bool = False, sign: float = 1.0) -> torch.Tensor:
    """Turn the pairs of ``x`` ``(d,)`` by ``sign · angles`` ``(d/2,)``: adjacent pairs, or ``(i, i + d/2)``."""
    cos, sin = angles.cos(), sign * angles.sin()
    if halves:
        first, second = x.chunk(2)
        return torch.cat([first * cos - second * sin, first * sin + second * cos])
    even, odd = x[0::2], x[1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten()


def _rope_cases(seed: int) -> list[Case]:
    """Vectors of several widths at whole, fractional and zero positions; a query 4 after its key; a long turn."""
    generator = torch.Generator().manual_seed(61 + 1000 * seed)
    calls = (
        ((8, 3, 10000.0), (2, 5, 10000.0), (16, 0, 10000.0), (64, 1000, 10000.0), (8, 2.5, 100.0))
        if seed == PUBLIC_SEED
        else ((8, 7 + seed % 50, 10000.0), (4, 0, 10000.0), (32, 500 + seed % 3000, 10000.0), (16, 1.5, 50.0))
    )
    cases = []
    for d, position, base in calls:
        x = torch.randn(d, generator=generator, dtype=torch.float64)
        cases.append(Case((x, position), {"base": base}, tag="still" if float(position) == 0 else "turned"))
    q, k = torch.randn(2, 32, generator=generator, dtype=torch.float64)
    cases += [Case(call, tag="offset") for n in (0, 7, 300) for call in ((q, n + 4), (k, n))]
    return [*cases, Case((q, 123), tag="length")]


def _rope(x: torch.Tensor, position: float, base: float = 10000.0) -> torch.Tensor:
    return apply_rotary(x[None], torch.tensor([float(position)]), base)[0]


def _rope_slips(x: torch.Tensor, position: float, base: float = 10000.0) -> dict[str, torch.Tensor]:
    d, position = x.numel(), float(position)
    theta, i = sinusoid_frequencies(d, base), torch.arange(d // 2, dtype=torch.float64)
    return {
        "halves": _rotate_pairs(x, position * theta, halves=True),
        "clockwise": _rotate_pairs(x, position * theta, sign=-1.0),
        "no_two": _rotate_pairs(x, position * base ** (-i / d)),
        "late": _rotate_pairs(x, position * base ** (-2 * (i + 1) / d)),
        "sign": _rotate_pairs(x, position * base ** (2 * i / d)),
        "same_angle": _rotate_pairs(x, torch.full((d // 2,), position, dtype=torch.float64)),
        "no_position": _rotate_pairs(x, theta),
    }


def _judge_rope(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    """RoPE's numbers; on the long turn, first the vector's length, which a rotation keeps (to a looser tolerance
    than the values', so that no answer close to RoPE's is called too long). The numbers judge's words are read
    unfilled: it fills in their fields itself."""
    what, shape_hint, shape_problem = (spec.texts[key] for key in ("vector", "shape_hint", "shape_problem"))
    if case.tag == "length":
        vector, (x, _) = check.numbers(got, what), case.args
        if vector.shape == x.shape and not torch.isclose(vector.norm(), x.norm(), rtol=1e-3):
            check.fail(*spec.said("longer"))
    numbers_answer(what, shape_hint, shape_problem)(check, spec, case, got, expected)


ROPE_ROTATE = declared(_DATA, "ex-6-1", reference=_rope, cases=_rope_cases, slips=_rope_slips, judge=_judge_rope)


def _slope_slips(n_heads: int) -> dict[str, torch.Tensor]:
    k = torch.arange(1, n_heads + 1, dtype=torch.float64)
    return {
        "from_zero": 2.0 ** (-8.0 * (k - 1) / n_heads),
        "reversed": 2.0 ** (-8.0 * k / n_heads).flip(0),
        "halving": 2.0**-k,
        "harmonic": 1.0 / (2.0 * k),
        "no_eight": 2.0 ** (-k / n_heads),
    }


ALIBI_SLOPES = declared(
    _DATA,
    "ex-6-2",
    reference=lambda n_heads: alibi_slopes(n_heads).double(),
    hidden=lambda seed: [(4,), ((32, 64, 128)[seed % 3],), ((2, 16)[seed % 2],), (1,)],  # one head count unseen
    slips=_slope_slips,
)


def _interpolated_frequencies(d: int, length: int, trained: int, base: float = 10000.0) -> torch.Tensor:
    """RoPE's ``(d/2,)`` frequencies times ``min(1, trained / length)``: whole positions turn as interpolated."""
    return sinusoid_frequencies(d, base) * min(1.0, trained / length)


def _frequency_slips(d: int, length: int, trained: int, base: float = 10000.0) -> dict[str, torch.Tensor]:
    theta, i = sinusoid_frequencies(d, base), torch.arange(d // 2, dtype=torch.float64)
    return {
        "unscaled": theta,
        "stretched": theta * max(1.0, length / trained),
        "short_stretched": theta * trained / length,
        "last_on_end": theta * min(1.0, (trained - 1) / max(length - 1, 1)),
        "no_two": base ** (-i / d) * min(1.0, trained / length),
    }


INTERPOLATED_FREQUENCIES = declared(
    _DATA,
    "ex-6-5",
    reference=_interpolated_frequencies,
    hidden=lambda seed: [(32, 200 + seed % 50, 50), (8, 33, 33), (4, 12, 40)],
    slips=_frequency_slips,
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [ROPE_ROTATE, ALIBI_SLOPES, INTERPOLATED_FREQUENCIES]

check_rope_rotate = ROPE_ROTATE.checker_function()
check_alibi_slopes = ALIBI_SLOPES.checker_function()
check_interpolated_frequencies = INTERPOLATED_FREQUENCIES.checker_function()
