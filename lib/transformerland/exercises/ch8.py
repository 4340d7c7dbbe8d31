"""Exercises of chapter 8, the Map Room (stretching RoPE to longer contexts), as declarations.

* :data:`NTK_BASE` (ex-8-1): the NTK-aware base for a factor.
* :data:`YARN_RAMP` (ex-8-2): YaRN's share of interpolation for each pair.
* :data:`LLAMA3_BAND` (ex-8-3): which of Llama 3's bands a wavelength falls into, edges included.
* :data:`SAFE_FACTOR` (ex-8-4): the smallest NTK-aware factor with which no pair passes its trained arc.
"""

from __future__ import annotations

import math
import random

import torch

from ..encodings.rope_scaling import ntk_base, yarn_ramp
from ..encodings.sinusoidal import sinusoid_frequencies
from .exercise import Exercise, Number, Slip, Tensor, call

__all__ = [
    "BANDS",
    "EXERCISES",
    "LLAMA3_BAND",
    "NTK_BASE",
    "SAFE_FACTOR",
    "YARN_RAMP",
    "check_llama3_band",
    "check_ntk_base",
    "check_safe_factor",
    "check_yarn_ramp",
]

# --- ex-8-1: the NTK-aware base --------------------------------------------------------------------------

NTK_BASE = Exercise(
    "ex-8-1",
    "my_ntk_base",
    checker="check_ntk_base",
    what="NTK-aware base",
    reference=ntk_base,
    public=[call(100000.0, 4.0, 64), call(10000.0, 8.0, 128), call(10000.0, 4.0, 16), call(500.0, 1.0, 8)],
    hidden=lambda r: [
        *(
            call(r.choice([1e4, 5e4, 1e5, 5e5]), r.choice([2.0, 4.0, 8.0, 16.0]), r.choice([32, 64, 128]))
            for _ in range(3)
        ),
        call(r.choice([100.0, 500.0]), 1.0, 8),
    ],
    answer=Number(rel=1e-6, abs=1e-9),
    slips=[
        Slip(
            when=lambda got, base, factor, head_dim: isinstance(got, int | float) and factor > 1 and got < base,
            says="your new base is smaller than the old one: every pair would turn faster, and the context the"
            " model can read would shrink instead of stretch.",
            then="a slower pair has a longer wavelength: which way must the base move for the slowest pair's"
            " frequency to fall?",
        ),
        Slip(
            lambda base, factor, head_dim: base * factor,
            says="you multiplied the base by the factor, so the slowest pair slows down by less than the factor.",
            then="which power of the factor makes pair d/2 − 1's frequency fall by exactly the factor?",
        ),
        Slip(
            lambda base, factor, head_dim: base * factor ** ((head_dim - 2) / head_dim),
            says="your power of the factor is a little below 1, so the slowest pair slows down by less than the"
            " factor: look at which way up the exponent goes.",
            then="the slowest pair's frequency is base^(−(d−2)/d): what must the new base be for it to fall by the"
            " factor?",
        ),
        Slip(
            lambda base, factor, head_dim: base * factor ** (head_dim / 2),
            says="your base grows far too fast: the power of the factor should be close to 1, not the number of pairs.",
            then="write the slowest pair's frequency with the new base and ask what it must equal.",
        ),
        Slip(
            lambda base, factor, head_dim: base**factor,
            says="you raised the base to a power; NTK-aware scaling multiplies the base by a power of the factor.",
            then="the new base is the old one times something that depends only on the factor and d.",
        ),
    ],
    otherwise=Slip(
        says="check your base on the two ends: with it, the fastest pair must keep its frequency and the slowest"
        " pair (i = d/2 − 1) must have its frequency divided by exactly the factor.",
        then="write θ_i with the new base for i = d/2 − 1 and solve for the base.",
    ),
)

# --- ex-8-2: YaRN's ramp ---------------------------------------------------------------------------------


def _slipped_ramp(
    head_dim: int,
    base: float,
    original_length: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    *,
    rounding: str = "outwards",
    clamped: bool = True,
) -> torch.Tensor:
    """A ramp with its ends found as YaRN's are but rounded ``"inwards"`` (up at the kept end, down at the other)
    or ``"outwards"`` (as the reference), and its kept end ``clamped`` at pair 0 or not: the slips' answers."""

    def index(turns: float) -> float:
        return head_dim * math.log(original_length / (turns * 2 * math.pi)) / (2 * math.log(base))

    kept, interpolated = (math.ceil, math.floor) if rounding == "inwards" else (math.floor, math.ceil)
    low, high = kept(index(beta_fast)), min(interpolated(index(beta_slow)), head_dim - 1)
    low = max(low, 0) if clamped else low
    pairs = torch.arange(head_dim // 2, dtype=torch.float64)
    return ((pairs - low) / max(high - low, 1e-3)).clamp(0.0, 1.0)


YARN_RAMP = Exercise(
    "ex-8-2",
    "my_yarn_ramp",
    checker="check_yarn_ramp",
    what="YaRN ramp",
    reference=yarn_ramp,
    public=[
        call(64, 100000.0, 8192, 32.0, 1.0),
        call(128, 10000.0, 4096, 32.0, 1.0),
        call(128, 500000.0, 8192, 16.0, 2.0),
        call(16, 10000.0, 32, 32.0, 1.0),
    ],
    hidden=lambda r: [
        *(call(r.choice([64, 128]), r.choice([1e4, 1e5, 5e5]), r.choice([2048, 4096, 8192]), 32.0, 1.0) for _ in "abc"),
        call(r.choice([32, 256]), r.choice([1e4, 5e5]), r.choice([2048, 16384]), 32.0, 1.0),  # never public
    ],
    answer=Tensor(atol=1e-6, rtol=1e-6),
    slips=[
        Slip(
            when=lambda got, head_dim, *args, **kwargs: torch.as_tensor(got).shape != (head_dim // 2,),
            says="return one number per pair: {head_dim} // 2 of them.",
            then="a head of width d has d/2 rotary pairs, and the ramp gives each pair one share.",
        ),
        Slip(
            lambda *args: 1 - yarn_ramp(*args),
            says="the ramp is reversed: fast pairs (many turns over the context) are kept, share 0; slow pairs are"
            " interpolated, share 1.",
            then="look at pair 0, the fastest: how many times does it turn over the context?",
        ),
        Slip(
            lambda *args: _slipped_ramp(*args, clamped=False),
            says="at this length no pair turns beta_fast times, so your kept end lies before pair 0: read what"
            " the statement says about such an end.",
            then="which pair does YaRN's code start its ramp at when the kept end falls before the first pair?",
        ),
        Slip(
            lambda *args: yarn_ramp(*args, truncate=False),
            says="the ends of your ramp are fractional: YaRN's code rounds them outwards before the ramp.",
            then="which way does each end go: the kept end and the interpolated end?",
        ),
        Slip(
            lambda *args: _slipped_ramp(*args, rounding="inwards"),
            says="your ramp's ends are rounded inwards, so the ramp is shorter than YaRN's: it rounds them outwards.",
            then="outwards means away from the middle of the ramp: which way is that at the kept end, and at the"
            " other?",
        ),
        Slip(
            lambda head_dim, base, length, *betas: yarn_ramp(head_dim, base, length),  # the defaults, always
            says="your ramp does not move when beta_fast and beta_slow change: it must start and end where the"
            " pairs turn that many times.",
            then="which of your lines uses beta_fast, and which beta_slow?",
        ),
    ],
    otherwise=Slip(
        says="pair i turns L·θ_i/(2π) times over the context: find the (fractional) index i at which that number"
        " equals beta_fast, and at which it equals beta_slow.",
        then="take the logarithm of both sides to solve for i; then round and ramp between the two.",
    ),
)

# --- ex-8-3: Llama 3's bands -----------------------------------------------------------------------------

BANDS = ("kept", "blended", "scaled")


def _band(wavelength: float, original_length: int, low_freq_factor: float, high_freq_factor: float) -> str:
    """Llama 3's band as its code draws it: kept below L/high, scaled above L/low, blended between, edges included.

    At an edge the blend gives the neighbour's frequency
    (:func:`~transformerland.encodings.rope_scaling.llama3_bands` gives the same share), but the pair is in the
    blended band: it turns exactly ``high_freq_factor`` (or ``low_freq_factor``) times over the original length,
    not more (or fewer).
    """
    if wavelength < original_length / high_freq_factor:
        return "kept"
    return "scaled" if wavelength > original_length / low_freq_factor else "blended"


def _outer_edge(
    wavelength: float, original_length: int, low_freq_factor: float, high_freq_factor: float, edge: str
) -> str:
    """The slip: ``<=`` for ``<`` at the kept edge (``edge="high"``) or ``>=`` for ``>`` at the scaled edge (``"low"``),
    so a pair on that edge joins the outer band."""
    if edge == "high" and wavelength == original_length / high_freq_factor:
        return "kept"
    if edge == "low" and wavelength == original_length / low_freq_factor:
        return "scaled"
    return _band(wavelength, original_length, low_freq_factor, high_freq_factor)


def _swapped(*args: float) -> str:
    return {"kept": "scaled", "scaled": "kept", "blended": "blended"}[_band(*args)]


def _band_hidden(r: random.Random) -> list:
    """One wavelength well inside each band, and both edges of another configuration (edges are blended)."""
    inside = [call(w * r.uniform(0.8, 1.2), 8192, 1.0, 4.0) for w in (40.0, 1200.0, 4100.0, 6500.0, 90000.0)]
    original, low, high = r.choice([2048, 4096, 16384]), r.choice([1.0, 2.0]), r.choice([4.0, 8.0])
    return [*inside, call(original / high, original, low, high), call(original / low, original, low, high)]


LLAMA3_BAND = Exercise(
    "ex-8-3",
    "my_llama3_band",
    checker="check_llama3_band",
    what="Llama 3 bands",
    reference=_band,
    withheld=("transformerland.encodings.rope_scaling.llama3_bands",),
    public=[
        call(6.28, 8192, 1.0, 4.0),
        call(1000.0, 8192, 1.0, 4.0),
        call(3000.0, 8192, 1.0, 4.0),
        call(8000.0, 8192, 1.0, 4.0),
        call(20000.0, 8192, 1.0, 4.0),
        call(400000.0, 8192, 1.0, 4.0),
        call(700.0, 4096, 2.0, 8.0),
        call(1500.0, 4096, 2.0, 8.0),
        call(2100.0, 4096, 2.0, 8.0),
        call(2048.0, 8192, 1.0, 4.0),
        call(8192.0, 8192, 1.0, 4.0),
    ],
    hidden=_band_hidden,
    slips=[
        Slip(
            when=lambda got, *args: got not in BANDS,
            says='return one of the strings "kept", "blended" or "scaled".',
            then="the band's name, spelt as the statement spells it, lower case.",
        ),
        Slip(
            _swapped,
            says="the bands are swapped: short wavelengths (fast pairs) are kept, long ones are scaled.",
            then="a fast pair turns many times over the context: which band leaves it alone?",
        ),
        Slip(
            lambda *args: _outer_edge(*args, edge="high"),
            says="a pair exactly on the edge between kept and blended landed in the kept band.",
            then="a pair with a wavelength of exactly L / high_freq_factor turns exactly high_freq_factor times: is"
            " that more than high_freq_factor?",
        ),
        Slip(
            lambda *args: _outer_edge(*args, edge="low"),
            says="a pair exactly on the edge between blended and scaled landed in the scaled band.",
            then="a pair with a wavelength of exactly L / low_freq_factor turns exactly low_freq_factor times: is"
            " that fewer than low_freq_factor?",
        ),
    ],
    otherwise=Slip(
        says="compare the wavelength with two edges, L / high_freq_factor and L / low_freq_factor: which side of"
        " each is which band?",
        then="a short wavelength means a fast pair; the kept band holds the pairs that turn most over L.",
    ),
)

# --- ex-8-4: how far NTK-aware scaling must stretch ----------------------------------------------------------


def _first_partial_pair(head_dim: int, base: float, original_length: int) -> int | None:
    """The first pair whose angle at the longest trained distance, ``L - 1``, is under a full turn (None: none)."""
    frequencies = sinusoid_frequencies(head_dim, base)  # (d/2,)
    partial = torch.nonzero((original_length - 1) * frequencies < 2 * math.pi)
    return int(partial[0]) if len(partial) else None


def _safe_factor(
    head_dim: int,
    base: float,
    original_length: int,
    seq_len: int,
    *,
    pair_shift: int = 0,
    distances: int = 1,
    guard: bool = True,
    slowest: bool = False,
    flipped: bool = False,
) -> float:
    """The smallest NTK-aware factor with which no pair turns past the arc it met in training, at ``seq_len``.

    A pair whose angle at the longest trained distance ``L - 1`` is under a full turn has met only that arc;
    at ``seq_len`` tokens its largest angle, at distance ``seq_len - 1``, must not exceed it. NTK-aware scaling
    divides pair ``i``'s frequency by ``s^(2i/(d-2))``, least for the first such pair, which therefore decides:
    ``s = ((seq_len - 1)/(L - 1))^((d-2)/(2 i))``. 1 when the text is no longer than training or no pair is
    partial; infinite when pair 0 is partial (NTK-aware never slows it). The keywords make the slips: the pair
    before the right one, distances counted as lengths, no guard for short texts, the slowest pair deciding, the
    exponent upside down.
    """
    first = _first_partial_pair(head_dim, base, original_length)
    if (guard and seq_len <= original_length) or first is None:
        return 1.0
    first = head_dim // 2 - 1 if slowest else first - pair_shift
    if first <= 0:
        return math.inf
    stretch = (seq_len - distances) / (original_length - distances)
    exponent = (head_dim - 2) / (2 * first)
    return stretch ** (1 / exponent if flipped else exponent)


def _safe_factor_hidden(r: random.Random) -> list:
    """Three long texts on drawn heads, one text shorter than training, one head with no partial pair."""
    long = []
    for length in r.sample([1024, 2048, 4096, 16384], 3):
        seq_len = length * r.choice([2, 3, 5, 6]) + r.randrange(7)
        long.append(call(r.choice([32, 64, 128]), r.choice([1e4, 5e4, 5e5]), length, seq_len))
    short = call(r.choice([64, 128]), 1e5, 4096, r.randrange(100, 4096))
    no_partial = call(r.choice([8, 16]), r.choice([5.0, 10.0]), r.choice([2048, 4096]), r.choice([8192, 9000]))
    return [*long, short, no_partial]


SAFE_FACTOR = Exercise(
    "ex-8-4",
    "my_safe_factor",
    checker="check_safe_factor",
    what="smallest NTK-aware factor for a length",
    reference=_safe_factor,
    public=[
        call(64, 10000.0, 2048, 8192),
        call(128, 500000.0, 8192, 131072),
        call(16, 10000.0, 32, 128),
        call(64, 100000.0, 8192, 4096),
        call(64, 100000.0, 8192, 8192),
        call(8, 10.0, 4096, 8192),
    ],
    hidden=_safe_factor_hidden,
    answer=Number(rel=1e-6),
    slips=[
        Slip(
            lambda *args: _safe_factor(*args, slowest=True),
            says="your factor protects the slowest pair only; the other pairs that never finished a turn in"
            " training are slowed by less than the factor, so with yours they still pass their arc.",
            then="of the pairs that had not completed a turn, which one does NTK-aware scaling slow the least?",
        ),
        Slip(
            lambda *args: _safe_factor(*args, pair_shift=1),
            says="your factor is larger than needed: the pair that decides it has already completed a full turn"
            " in training, so every angle it can reach is one it has seen.",
            then="find the first pair whose angle at the longest trained distance is still under 2π.",
        ),
        Slip(
            lambda *args: _safe_factor(*args, distances=0),
            says="your factor is a little off: count the longest distance a text of {seq_len} tokens holds, and"
            " the longest one training held.",
            then="between the first and the last of n tokens, how many steps are there?",
        ),
        Slip(
            lambda *args: _safe_factor(*args, flipped=True),
            says="your factor is too small: look at which way up your exponent is.",
            then="write the chosen pair's largest angle with the factor in it, and solve 'largest angle = trained"
            " arc' for the factor.",
        ),
        Slip(
            lambda *args: _safe_factor(*args, guard=False),
            says="for a text no longer than training your factor is not 1: no pair meets a new angle there, so"
            " nothing needs stretching.",
            then="what is the longest distance in a text of {seq_len} tokens, against {original_length} in training?",
        ),
    ],
    otherwise=Slip(
        says="check one pair by hand: with your factor, the first pair that never finished a turn in training"
        " must reach at distance {seq_len} − 1 exactly the angle it reached at {original_length} − 1.",
        then="NTK-aware scaling divides pair i's frequency by the factor to the power 2i/(d − 2): which pair is"
        " that division smallest for, among those that need it?",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [NTK_BASE, YARN_RAMP, LLAMA3_BAND, SAFE_FACTOR]

check_ntk_base = NTK_BASE.checker_function()
check_yarn_ramp = YARN_RAMP.checker_function()
check_llama3_band = LLAMA3_BAND.checker_function()
check_safe_factor = SAFE_FACTOR.checker_function()
