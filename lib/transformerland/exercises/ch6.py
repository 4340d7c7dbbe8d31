"""Exercises of chapter 6, the Roof (RoPE and ALiBi).

* :data:`ROPE_ROTATE` (ex-6-1): turn one vector by RoPE's angles, adjacent pairs, counter-clockwise.
* :data:`ALIBI_SLOPES` (ex-6-2): ALiBi's head slopes for any head count, as the paper's code gives them.
* :data:`INTERPOLATED_FREQUENCIES` (ex-6-5): position interpolation moved into RoPE's frequencies.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..encodings.rotary import apply_rotary
from ..encodings.sinusoidal import sinusoid_frequencies
from .exercise import Exercise, Slip, Tensor, call

__all__ = [
    "ALIBI_SLOPES",
    "EXERCISES",
    "INTERPOLATED_FREQUENCIES",
    "ROPE_ROTATE",
    "check_alibi_slopes",
    "check_interpolated_frequencies",
    "check_rope_rotate",
]

# --- ex-6-1: RoPE on one vector ------------------------------------------------------------------------


def _rope(x: torch.Tensor, position: float, base: float = 10000.0) -> torch.Tensor:
    """RoPE of one vector ``x`` ``(d,)`` at ``position``: ``(d,)``, adjacent pairs, counter-clockwise."""
    return apply_rotary(x[None], torch.tensor([float(position)]), base)[0]


def _turned(x: torch.Tensor, angles: torch.Tensor, *, halves: bool = False, sign: float = 1.0) -> torch.Tensor:
    """Turn the pairs of ``x`` ``(d,)`` by ``sign · angles`` ``(d/2,)``: adjacent pairs, or ``(i, i + d/2)``."""
    cos, sin = angles.cos(), sign * angles.sin()
    if halves:
        first, second = x.chunk(2)
        return torch.cat([first * cos - second * sin, first * sin + second * cos])
    even, odd = x[0::2], x[1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten()


def _pairs(d: int) -> torch.Tensor:
    return torch.arange(d // 2, dtype=torch.float64)


def _rope_calls(vectors: torch.Generator, calls: list[tuple[int, float, float]]) -> list:
    """One random vector per ``(d, position, base)``; then a query and its key 4 seats apart at three places."""
    made = [call(torch.randn(d, generator=vectors, dtype=torch.float64), p, base=b) for d, p, b in calls]
    q, k = torch.randn(2, 32, generator=vectors, dtype=torch.float64)
    return [*made, *(c for n in (0, 7, 300) for c in (call(q, n + 4), call(k, n))), call(q, 123)]


def _not_as_long(got: object, x: torch.Tensor, position: float, base: float = 10000.0) -> bool:
    """A same-shaped answer that changed the vector's length: no rotation does."""
    got = torch.as_tensor(got, dtype=torch.float64)
    return got.shape == x.shape and not bool(torch.isclose(got.norm(), x.norm(), rtol=1e-3))


ROPE_ROTATE = Exercise(
    "ex-6-1",
    "rope_rotate",
    checker="check_rope_rotate",
    what="RoPE on one vector",
    reference=_rope,
    withheld=("transformerland.encodings.rotary.apply_rotary",),
    public=_rope_calls(
        torch.Generator().manual_seed(61),
        [(8, 3, 10000.0), (2, 5, 10000.0), (16, 0, 10000.0), (64, 1000, 10000.0), (8, 2.5, 100.0)],
    ),
    hidden=lambda r: _rope_calls(
        torch.Generator().manual_seed(r.randrange(1, 10**9)),
        [(8, r.randrange(7, 57), 10000.0), (4, 0, 10000.0), (32, r.randrange(500, 3500), 10000.0), (16, 1.5, 50.0)],
    ),
    answer=Tensor(atol=1e-5, rtol=1e-5),
    slips=[
        Slip(
            when=_not_as_long,
            says="the turned vector is not as long as the one you were given, and a rotation keeps lengths.",
            then="within one pair, are the cos and the sin of the same angle?",
        ),
        Slip(
            lambda x, p, base=10000.0: _turned(x, float(p) * sinusoid_frequencies(x.numel(), base), halves=True),
            says="you paired dimension i with dimension i + d/2 (the 'rotate_half' layout of LLaMA's code); this"
            " exercise turns adjacent pairs.",
            then="which two entries of x form the first pair in RoFormer's layout?",
        ),
        Slip(
            lambda x, p, base=10000.0: _turned(x, float(p) * sinusoid_frequencies(x.numel(), base), sign=-1.0),
            says="your pairs turn the wrong way (clockwise); the exercise turns them counter-clockwise.",
            then="compare the signs of your sin terms with those of R(φ) in the chapter.",
        ),
        Slip(
            lambda x, p, base=10000.0: _turned(x, float(p) * base ** (-_pairs(x.numel()) / x.numel())),
            says="your later pairs turn too fast: your pair i has the frequency the chapter gives pair i/2.",
            then="look at the exponent: does it count pairs or columns?",
        ),
        Slip(
            lambda x, p, base=10000.0: _turned(x, float(p) * base ** (-2 * (_pairs(x.numel()) + 1) / x.numel())),
            says="your frequencies are one pair late: your first pair turns as the chapter's second pair does.",
            then="look at where your count of pairs starts: how fast does the fastest pair turn?",
        ),
        Slip(
            lambda x, p, base=10000.0: _turned(x, float(p) * base ** (2 * _pairs(x.numel()) / x.numel())),
            says="your later pairs turn faster than the first instead of slower.",
            then="look at the sign of the exponent.",
        ),
        Slip(
            lambda x, p, base=10000.0: _turned(x, torch.full((x.numel() // 2,), float(p), dtype=torch.float64)),
            says="every pair turns by the same angle, while each pair has its own frequency.",
            then="the pairs turn at the Clock Room's ladder of speeds.",
        ),
        Slip(
            lambda x, p, base=10000.0: _turned(x, sinusoid_frequencies(x.numel(), base)),
            says="the angle does not grow with the position: your pairs turn alike at every position.",
            then="a pair's angle is its frequency times what?",
        ),
    ],
    otherwise=Slip(
        says="compare one pair of your result with the chapter's turn R(φ), at the angle the chapter gives it.",
        then="at position 1, pair 0 turns by one radian: work that pair out by hand.",
    ),
)

# --- ex-6-2: ALiBi's slopes ----------------------------------------------------------------------------


def _slopes(n_heads: int) -> torch.Tensor:
    """ALiBi's slopes, ``(n_heads,)``, float64 (what ``alibi_slopes`` gives; written out here so that the
    grader's check of the library's functions meets none that returns the answer): ``2^(-8k/H)`` for a power of
    two ``H``; otherwise those of the largest power of two below, then every other slope of twice as many."""
    return _filled_up(n_heads, lambda doubled: doubled[0::2])


def _filled_up(n_heads: int, extra: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """The slopes of the largest power of two ``P <= n_heads``, then the first ``n_heads - P`` of
    ``extra(slopes of 2P heads)``: ``(n_heads,)``."""
    lower = 1 << (n_heads.bit_length() - 1)
    return torch.cat([_power_of_two_slopes(lower), extra(_power_of_two_slopes(2 * lower))[: n_heads - lower]])


def _power_of_two_slopes(n_heads: int) -> torch.Tensor:
    """The geometric rule, ``(n_heads,)``: ALiBi's slopes when ``n_heads`` is a power of two."""
    return 2.0 ** (-8.0 * _head(n_heads) / n_heads)


def _head(n_heads: int) -> torch.Tensor:
    return torch.arange(1, n_heads + 1, dtype=torch.float64)


ALIBI_SLOPES = Exercise(
    "ex-6-2",
    "my_alibi_slopes",
    checker="check_alibi_slopes",
    what="ALiBi slopes",
    reference=_slopes,
    withheld=("transformerland.encodings.alibi.alibi_slopes",),
    public=[call(8), call(4), call(16), call(12), call(6), call(2), call(1)],
    hidden=lambda r: [
        call(4),
        call(r.choice([32, 64, 128])),
        call(r.choice([3, 5, 10, 24])),
        call(r.choice([6, 12, 20, 40])),
        call(1),
    ],
    answer=Tensor(atol=1e-5, rtol=1e-5),
    slips=[
        Slip(
            lambda n_heads: 2.0 ** (-8.0 * (_head(n_heads) - 1) / n_heads),
            says="your first slope is 1, so the first head has no penalty at all.",
            then="look at where your count of heads starts.",
        ),
        Slip(
            lambda n_heads: (2.0 ** (-8.0 * _head(n_heads) / n_heads)).flip(0),
            says="your slopes are in reverse order.",
            then="in ALiBi the first head is the steepest.",
        ),
        Slip(
            lambda n_heads: 2.0 ** -_head(n_heads),
            says="your slopes halve from one head to the next for every head count, which is ALiBi's rule only for"
            " 8 heads: with {n_heads} heads your last slope is not the chapter's last slope.",
            then="for a power of two, the last head's slope is the same for every head count: what ratio gets there"
            " in {n_heads} steps?",
        ),
        Slip(
            _power_of_two_slopes,
            says="{n_heads} is not a power of two, and your slopes for it follow the geometric rule of powers of two;"
            " ALiBi's code does not.",
            then="set the chapter's 12-head slopes beside those of 8 and of 16 heads: which do they start from, and"
            " which fill up the rest?",
        ),
        Slip(
            lambda n_heads: _filled_up(n_heads, lambda doubled: doubled[1::2]),
            says="with {n_heads} heads some of your slopes repeat slopes you already have.",
            then="the slopes that fill up must fall between the ones you have: which of twice as many heads' do?",
        ),
        Slip(
            lambda n_heads: _filled_up(n_heads, lambda doubled: doubled),
            says="with {n_heads} heads your extra slopes are the first of twice as many heads', taken in a row.",
            then="which of those do the chapter's 12-head slopes take?",
        ),
        Slip(
            lambda n_heads: 1.0 / (2.0 * _head(n_heads)),
            says="your slopes shrink by a fixed step.",
            then="ALiBi's shrink by a fixed ratio: a geometric sequence.",
        ),
        Slip(
            lambda n_heads: 2.0 ** (-_head(n_heads) / n_heads),
            says="your slopes end at 1/2 instead of the chapter's last slope.",
            then="look at the exponent: which factor in it sets where the sequence ends?",
        ),
    ],
    otherwise=Slip(
        says="compare your slopes for {n_heads} heads, the first and the last, with the chapter's.",
        then="for a power of two the slopes form a geometric sequence that ends at the same slope for every head"
        " count; for another count, set the chapter's 12-head slopes beside those of 8 and of 16 heads.",
    ),
)

# --- ex-6-5: position interpolation in the frequencies -------------------------------------------------


def _interpolated_frequencies(d: int, length: int, trained_length: int, base: float = 10000.0) -> torch.Tensor:
    """RoPE's ``(d/2,)`` frequencies for whole positions that turn as interpolated ones."""
    return sinusoid_frequencies(d, base) * min(1.0, trained_length / length)


INTERPOLATED_FREQUENCIES = Exercise(
    "ex-6-5",
    "my_interpolated_frequencies",
    checker="check_interpolated_frequencies",
    what="position interpolation in the frequencies",
    reference=_interpolated_frequencies,
    withheld=(
        "transformerland.encodings.rope_scaling.rope_frequencies",
        "transformerland.encodings.sinusoidal.sinusoid_frequencies",  # the answer itself for inputs that fit
    ),
    public=[call(64, 256, 64), call(16, 100, 30), call(8, 48, 48), call(8, 10, 64)],
    hidden=lambda r: [call(32, r.randrange(200, 250), 50), call(8, 33, 33), call(4, r.randrange(5, 30), 40)],
    answer=Tensor(atol=1e-9, rtol=1e-6),
    slips=[
        Slip(
            lambda d, length, trained_length, base=10000.0: sinusoid_frequencies(d, base),
            says="these are RoPE's own frequencies: for an input longer than the training length, its last positions"
            " still turn through angles training never saw.",
            then="by what factor must every angle shrink so that the last token stays within the trained range?",
        ),
        Slip(
            lambda d, length, trained_length, base=10000.0: (
                sinusoid_frequencies(d, base) * max(1.0, length / trained_length)
            ),
            says="your frequencies are faster than RoPE's for a long input, so the angles go even further past the"
            " trained ones.",
            then="interpolation slows the turning down: is your factor above 1 or below?",
        ),
        Slip(
            lambda d, length, trained_length, base=10000.0: sinusoid_frequencies(d, base) * trained_length / length,
            says="an input no longer than the training length ({length} tokens, trained on {trained_length}) changed"
            " too.",
            then="interpolation leaves such inputs as they are.",
        ),
        Slip(
            lambda d, length, trained_length, base=10000.0: (
                sinusoid_frequencies(d, base) * min(1.0, (trained_length - 1) / max(length - 1, 1))
            ),
            says="your last token lands exactly on position L − 1, while the chapter's interpolation puts it a little"
            " past it.",
            then="compare your angles with those of interpolated_positions(...) for the same call, at the last token.",
        ),
        Slip(
            lambda d, length, trained_length, base=10000.0: (
                base ** (-_pairs(d) / d) * min(1.0, trained_length / length)
            ),
            says="your unscaled frequencies are not RoPE's ladder.",
            then="compare them with the Clock Room's frequencies for this d and base: look at the exponent.",
        ),
    ],
    otherwise=Slip(
        says="for one pair, compare m times your frequency with the interpolated position m times RoPE's frequency.",
        then="an angle is a position times a frequency: which of the two can carry the squeeze?",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [ROPE_ROTATE, ALIBI_SLOPES, INTERPOLATED_FREQUENCIES]

check_rope_rotate = ROPE_ROTATE.checker_function()
check_alibi_slopes = ALIBI_SLOPES.checker_function()
check_interpolated_frequencies = INTERPOLATED_FREQUENCIES.checker_function()
