"""Exercises of chapter 6, the Observatory (RoPE and ALiBi), as specs.

* :data:`ROPE_ROTATE` (ex-6-1): rotate one vector by RoPE's angles, adjacent pairs.
* :data:`ALIBI_SLOPES` (ex-6-2): ALiBi's head slopes for a power-of-two head count.
* :data:`INTERPOLATED_POSITIONS` (ex-6-5): position interpolation's squeezed positions.
"""

from __future__ import annotations

import torch

from ..encodings.alibi import alibi_slopes
from ..encodings.rotary import apply_rotary, interpolated_positions
from ..encodings.sinusoidal import sinusoid_frequencies
from .checking import Mistake, tensors_close
from .spec import Case, Exercise, cases_of, numbers_answer

__all__ = [
    "ALIBI_SLOPES",
    "EXERCISES",
    "INTERPOLATED_POSITIONS",
    "ROPE_ROTATE",
    "TOLERANCE",
    "check_alibi_slopes",
    "check_interpolated_positions",
    "check_rope_rotate",
]

#: How close a student's numbers must be to the reference.
TOLERANCE = 1e-5


_close = tensors_close(atol=TOLERANCE, rtol=TOLERANCE)


# ex-6-1 ------------------------------------------------------------------------------------------


def _rotate_pairs(x: torch.Tensor, angles: torch.Tensor, *, halves: bool = False, clockwise: bool = False):
    """Rotate the pairs of ``x`` ``(d,)`` by ``angles`` ``(d/2,)``: adjacent pairs, or ``(i, i + d/2)``."""
    sign = -1.0 if clockwise else 1.0
    cos, sin = angles.cos(), sign * angles.sin()
    if halves:
        first, second = x.chunk(2)
        return torch.cat([first * cos - second * sin, first * sin + second * cos])
    even, odd = x[0::2], x[1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten()


def _rope_mistakes(x: torch.Tensor, position: float, base: float) -> list[Mistake]:
    """Outputs of typical RoPE slips for one vector ``x`` ``(d,)``, each with the hint that names it."""
    d = x.numel()
    theta = sinusoid_frequencies(d, base)
    i = torch.arange(d // 2, dtype=torch.float64)
    return [
        Mistake(
            _rotate_pairs(x, position * theta, halves=True),
            "you paired dimension i with dimension i + d/2 (the 'rotate_half' layout of LLaMA's code). This exercise "
            "uses RoFormer's adjacent pairs: (x[0], x[1]), (x[2], x[3]), …",
        ),
        Mistake(
            _rotate_pairs(x, position * theta, clockwise=True),
            "your pairs turn the wrong way (clockwise). Turn (a, b) by the angle φ to "
            "(a·cos φ − b·sin φ, a·sin φ + b·cos φ).",
        ),
        Mistake(
            _rotate_pairs(x, position * base ** (-i / d)),
            "the frequencies are off: pair i turns at θ_i = base^(−2i/d), with the factor 2 in the exponent.",
        ),
        Mistake(
            _rotate_pairs(x, position * base ** (-2 * (i + 1) / d)),
            "the frequencies start one step late: pair 0 turns at θ_0 = base^0 = 1, so use i = 0 … d/2 − 1.",
        ),
        Mistake(
            _rotate_pairs(x, position * base ** (2 * i / d)),
            "the exponent has the wrong sign: θ_i = base^(−2i/d) gets smaller for later pairs.",
        ),
        Mistake(
            _rotate_pairs(x, torch.full((d // 2,), float(position), dtype=torch.float64)),
            "every pair turns by the same angle. Each pair i has its own frequency: angle = position · θ_i, "
            "θ_i = base^(−2i/d).",
        ),
        Mistake(
            _rotate_pairs(x, theta),
            "the angle does not grow with the position: pair i turns by position · θ_i.",
        ),
    ]


def _rope_cases(seed: int) -> list[Case]:
    """Vectors of several widths at whole, fractional and zero positions; a query 4 after its key; a long turn."""
    generator = torch.Generator().manual_seed(61 + 1000 * seed)
    calls = (
        ((8, 3, 10000.0), (2, 5, 10000.0), (16, 0, 10000.0), (64, 1000, 10000.0), (8, 2.5, 100.0))
        if seed == 0
        else ((8, 7 + seed % 50, 10000.0), (4, 0, 10000.0), (32, 500 + seed % 3000, 10000.0), (16, 1.5, 50.0))
    )
    cases = []
    for d, position, base in calls:
        x = torch.randn(d, generator=generator, dtype=torch.float64)
        problem = f"for d = {d}, position {position}, base {base:g} the rotated vector is not RoPE's"
        if float(position) == 0:
            problem = f"at position 0 (angle 0) the vector should come back unchanged, for d = {d}"
        cases.append(Case((x, position), {"base": base}, problem=problem))
    q, k = torch.randn(2, 32, generator=generator, dtype=torch.float64)
    offset = dict(
        problem="scores of a query 4 positions after its key change with the absolute position",
        hint="rotate the query and the key by the same rule; only then do the absolute positions cancel.",
        mistakes=False,
    )
    for n in (0, 7, 300):
        cases += [Case((q, n + 4), **offset), Case((k, n), **offset)]
    cases.append(
        Case(
            (q, 123),
            problem="the rotated vector is not as long as the original",
            hint="a rotation keeps lengths: use cos and sin of the same angle within a pair.",
            mistakes=False,
        )
    )
    return cases


def _rope_reference(x: torch.Tensor, position: float, base: float = 10000.0) -> torch.Tensor:
    return apply_rotary(x[None], torch.tensor([float(position)]), base)[0]


ROPE_ROTATE = Exercise(
    label="ex-6-1",
    what="RoPE on one vector",
    checker="check_rope_rotate",
    function="rope_rotate",
    signature="(x (d,), position, base=10000.0) -> (d,): pair (x[2i], x[2i+1]) turned by position · base^(−2i/d)",
    cases=_rope_cases,
    reference=_rope_reference,
    tolerance=_close,
    mistakes=lambda case: _rope_mistakes(case.args[0], float(case.args[1]), case.kwargs.get("base", 10000.0)),
    hint="pair (x[2i], x[2i+1]) turns by the angle position · base^(−2i/d).",
    judge=numbers_answer(
        "the rotated vector",
        "return a vector of the same width d = {n}: one rotated pair for every pair of x.",
        "for a vector of width {n} it returned shape {got}",
    ),
    changed_problem="your function changed its input vector in place",
    changed_hint="build a new tensor for the result instead of writing into x (x[0::2] = … edits x itself).",
)

check_rope_rotate = ROPE_ROTATE.checker_function()


# ex-6-2 ------------------------------------------------------------------------------------------


def _slope_mistakes(n_heads: int) -> list[Mistake]:
    """Slope lists from typical slips, each with the hint that names it."""
    k = torch.arange(1, n_heads + 1, dtype=torch.float64)
    return [
        Mistake(
            2.0 ** (-8.0 * (k - 1) / n_heads),
            "the first slope came out as 1. The first head's slope is 2^(−8/H) (1/2 for 8 heads): the exponent "
            "counts k = 1 … H, not 0 … H − 1.",
        ),
        Mistake(
            2.0 ** (-8.0 * k / n_heads).flip(0),
            "the slopes are in reverse order: head 1 gets the largest slope, 2^(−8/H), and the last head the "
            "smallest, 2^(−8).",
        ),
        Mistake(
            2.0**-k,
            "every head halves the slope, whatever the head count. The ratio depends on H: it is 2^(−8/H), so that "
            "the last head always ends at 2^(−8) = 1/256.",
        ),
        Mistake(
            1.0 / (2.0 * k),
            "the slopes shrink by a fixed step instead of a fixed ratio: they form a geometric sequence, "
            "each one 2^(−8/H) times the one before.",
        ),
        Mistake(
            2.0 ** (-k / n_heads),
            "the exponent lacks the factor 8: slope k is 2^(−8k/H).",
        ),
    ]


def _slope_cases(seed: int) -> list[Case]:
    counts = (8, 4, 16, 2, 1) if seed == 0 else (4, (2, 16, 32)[seed % 3], 8, 1)
    return cases_of([(n,) for n in counts], "the slopes for {0} heads are not ALiBi's")


ALIBI_SLOPES = Exercise(
    label="ex-6-2",
    what="ALiBi slopes",
    checker="check_alibi_slopes",
    function="my_alibi_slopes",
    signature="(n_heads: int, a power of two) -> Tensor (n_heads,): 2^(-8k/H) for k = 1 … H",
    cases=_slope_cases,
    reference=lambda n_heads: alibi_slopes(n_heads).double(),
    tolerance=_close,
    mistakes=lambda case: _slope_mistakes(case.args[0]),
    hint="slope k (k = 1 … H) is 2^(−8k/H): a geometric sequence.",
    judge=numbers_answer("the slopes", "return one slope per head: a flat list or 1-D tensor of {n} numbers."),
)


# ex-6-5 ------------------------------------------------------------------------------------------


def _position_cases(seed: int) -> list[Case]:
    calls = ((256, 64), (100, 30), (48, 48), (10, 64)) if seed == 0 else ((200 + seed % 50, 50), (33, 33), (12, 40))
    return cases_of(calls, "the positions for {0} tokens with a trained length of {1} are not the interpolated ones")


def _position_mistakes(case: Case) -> list[Mistake]:
    length, trained = case.args
    steps = torch.arange(length, dtype=torch.float64)
    return [
        Mistake(
            steps * length / trained,
            "the positions were stretched instead of squeezed: multiply by L / L′ (trained over new), "
            "which is below 1 when the input is longer.",
        ),
        Mistake(
            torch.floor(steps * trained / length),
            "the positions were rounded to whole numbers. Interpolation keeps the fractions: RoPE's angles "
            "work at any real position.",
        ),
        Mistake(
            steps * trained / length,
            "short inputs were stretched too. Only squeeze when the input is longer than the trained "
            "length; otherwise keep 0, 1, 2, …",
        ),
        Mistake(
            steps * (trained - 1) / max(length - 1, 1),
            "you mapped the last token exactly onto position L − 1. Chen et al. scale every position by "
            "L / L′, so the last one lands at L − L/L′.",
        ),
    ]


INTERPOLATED_POSITIONS = Exercise(
    label="ex-6-5",
    what="position interpolation",
    checker="check_interpolated_positions",
    function="my_interpolated_positions",
    signature="(length: int, trained_length: int) -> Tensor (length,): p · min(1, L / L′)",
    cases=_position_cases,
    reference=lambda length, trained: interpolated_positions(length, trained).double(),
    tolerance=_close,
    mistakes=_position_mistakes,
    hint="position p becomes p · L / L′ when L′ > L, and stays p otherwise.",
    judge=numbers_answer("the positions", "return one position per token: {n} numbers."),
)

check_alibi_slopes = ALIBI_SLOPES.checker_function()
check_interpolated_positions = INTERPOLATED_POSITIONS.checker_function()


#: Every exercise of the chapter with a checker, in order.
EXERCISES = [ROPE_ROTATE, ALIBI_SLOPES, INTERPOLATED_POSITIONS]
