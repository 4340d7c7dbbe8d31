"""Exercises of chapter 9, the Workshop (the variants in today's models).

* :data:`PARTIAL_FREQUENCIES` (ex-9-1): partial rotary's frequencies, spaced over the rotated width.
* :data:`LONGROPE_FREQUENCIES` (ex-9-2): LongRoPE's per-pair factors, switched past the original length.
* :data:`MROPE_POSITION_IDS` (ex-9-3): Qwen2-VL's three position ids for text, an image or a video, and text.
* :data:`BREAK_EVEN_HEADS` (ex-9-4): the fewest heads for which multi-head attention caches more than MLA.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import torch

from ..encodings.mrope import mrope_position_ids
from ..encodings.partial_rotary import partial_frequencies, rotary_width
from ..encodings.rope_scaling import rope_frequencies
from ..encodings.sinusoidal import sinusoid_frequencies
from ..mla import kv_cache_per_token
from .exercise import Exercise, Slip, Tensor, call

__all__ = [
    "BREAK_EVEN_HEADS",
    "EXERCISES",
    "LONGROPE_FREQUENCIES",
    "MROPE_POSITION_IDS",
    "PARTIAL_FREQUENCIES",
    "check_break_even_heads",
    "check_longrope_frequencies",
    "check_mrope_position_ids",
    "check_partial_frequencies",
]

#: The library functions that return a frequency answer outright: the whole chapter's checkers withhold them.
_FREQUENCIES = (
    "transformerland.encodings.partial_rotary.partial_frequencies",
    "transformerland.encodings.rope_scaling.rope_frequencies",
    "transformerland.encodings.sinusoidal.sinusoid_frequencies",
)

#: How close a frequency answer must be.
_FREQUENCY_ANSWER = Tensor(atol=1e-9, rtol=1e-6)

# --- ex-9-1: partial rotary's frequencies -------------------------------------------------------------------


def _over_head(head_dim: int, partial_rotary_factor: float, base: float) -> torch.Tensor:
    """The slip: the first r/2 frequencies of the whole head."""
    return sinusoid_frequencies(head_dim, base)[: rotary_width(head_dim, partial_rotary_factor) // 2]


def _without_two(head_dim: int, partial_rotary_factor: float, base: float) -> torch.Tensor:
    """The slip: an exponent of -i/r, i counting pairs."""
    width = rotary_width(head_dim, partial_rotary_factor)
    return base ** (-torch.arange(width // 2, dtype=torch.float64) / width)


def _rounded(got: object, head_dim: int, partial_rotary_factor: float, base: float) -> bool:
    """The slip: a rotated width rounded to the nearest whole number (or up) instead of cut down."""
    width = round(head_dim * partial_rotary_factor)
    if width == int(head_dim * partial_rotary_factor):
        return False
    spaced = -torch.arange(0, width, 2, dtype=torch.float64) / width
    counted = -2 * torch.arange(width // 2, dtype=torch.float64) / width
    return any(_FREQUENCY_ANSWER.close(got, base**exponent) for exponent in (spaced, counted))


def _slowest_first(head_dim: int, partial_rotary_factor: float, base: float) -> torch.Tensor:
    """The slip: the right frequencies, slowest pair first."""
    return partial_frequencies(head_dim, partial_rotary_factor, base).flip(0)


PARTIAL_FREQUENCIES = Exercise(
    "ex-9-1",
    "my_partial_frequencies",
    checker="check_partial_frequencies",
    what="partial rotary's frequencies",
    reference=partial_frequencies,
    withheld=_FREQUENCIES,
    public=[
        call(80, 0.4, 10000.0),
        call(128, 0.25, 10000.0),
        call(64, 0.5, 1e6),
        call(16, 1.0, 10000.0),
        call(48, 0.6, 10000.0),  # 28.8 dimensions: int() and round() part here
    ],
    hidden=lambda r: [
        call(40 * r.randrange(1, 5), 0.4, r.choice([1e4, 5e5])),
        call(96, 0.3, r.choice([1e4, 1e6])),  # 28.8 again, on another head
        call(16 * r.randrange(2, 9), 0.25, 10000.0),
        call(96, 0.25, 10000.0),  # GPT-NeoX-20B's head, never the notebook's
        call(2 * r.randrange(4, 33), 1.0, r.choice([1e4, 1e6])),
    ],
    answer=_FREQUENCY_ANSWER,
    slips=[
        Slip(
            _over_head,
            says="your fastest pairs are right but your slowest rotated pair turns far too fast: these are the"
            " frequencies a whole head gives its first pairs. Look at which width the exponent is spaced over.",
            then="partial rotary spreads its few pairs over nearly the whole range of speeds, fast to slow: which"
            " width makes the last rotated pair nearly as slow as a full head's slowest?",
        ),
        Slip(
            _without_two,
            says="your frequencies fall too slowly from pair to pair: your slowest is about the square root of the"
            " right one. Look at what i counts in the exponent.",
            then="i numbers the pairs, while the exponent's numerator counts dimensions.",
        ),
        Slip(
            when=_rounded,
            says="{head_dim} × {partial_rotary_factor} is not a whole number, and your rotated width is one more"
            " than the statement's: look at how the statement makes the width a whole number.",
            then="round() goes to the nearest whole number; int() of a positive number drops the fraction. Work"
            " out both for 48 × 0.6 and count the pairs each gives.",
        ),
        Slip(
            _slowest_first,
            says="your frequencies are the right ones in the wrong order: the statement asks for the fastest"
            " pair first.",
            then="pair 0 turns fastest: its frequency is the largest.",
        ),
    ],
    otherwise=Slip(
        says="work out the slowest rotated frequency of Phi-2's head (80 wide, factor 0.4) by hand and compare it"
        " with your last one.",
        then="count the rotated dimensions first: how many pairs turn, and over what width are they spaced?",
    ),
)

# --- ex-9-2: LongRoPE's switch ------------------------------------------------------------------------------


def _longrope(
    head_dim: int, base: float, short_factor: list, long_factor: list, original_length: int, seq_len: int
) -> torch.Tensor:
    """LongRoPE's frequencies at ``seq_len``, as ``transformers`` computes them (through the library)."""
    scaling = {
        "rope_type": "longrope",
        "factor": 4.0,  # only the attention factor reads it
        "original_max_position_embeddings": original_length,
        "short_factor": short_factor,
        "long_factor": long_factor,
    }
    return rope_frequencies(head_dim, base, scaling, seq_len=seq_len)[0]


def _factors(r: random.Random, pairs: int) -> tuple[list[float], list[float]]:
    """Non-decreasing short factors near 1 and long ones from 1 to about ``pairs``, drawn with ``r``."""
    short = sorted(1 + 0.2 * r.random() for _ in range(pairs))
    long = sorted(1 + i + r.random() for i in range(pairs))
    return short, long


_SHORT, _LONG = ([round(x, 2) for x in factors] for factors in _factors(random.Random(920), 8))


def _divided(
    head_dim: int, base: float, factors: list, *, multiply: bool = False
) -> torch.Tensor:  # plain RoPE's θ_i over (or times) the factors
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    scale = torch.tensor(factors, dtype=torch.float64)
    return theta * scale if multiply else theta / scale


def _hidden_longrope(r: random.Random) -> list:
    short, long = _factors(r, 8)
    original = r.choice([128, 512, 2048])
    return [call(16, 10000.0, short, long, original, n) for n in (original - 1, original, original + 1)]


LONGROPE_FREQUENCIES = Exercise(
    "ex-9-2",
    "my_longrope_frequencies",
    checker="check_longrope_frequencies",
    what="LongRoPE's frequencies",
    reference=_longrope,
    withheld=_FREQUENCIES,
    public=[call(16, 10000.0, _SHORT, _LONG, 64, n) for n in (32, 64, 256)],
    hidden=_hidden_longrope,
    answer=Tensor(atol=1e-9, rtol=1e-6),
    slips=[
        Slip(
            lambda d, base, short, long, original, n: _divided(d, base, long if n > original else short, multiply=True),
            says="your slow pairs turn faster than plain RoPE's, so the factors shortened their wavelengths. Look at"
            " what a stretch factor does to a wavelength, and so to a frequency.",
            then="a wavelength and a frequency are inversely related: stretching one shrinks the other.",
        ),
        Slip(
            lambda d, base, short, long, original, n: _divided(d, base, long if n >= original else short),
            says="at exactly the original length ({original_length} tokens) your function has already switched lists."
            " Look at the comparison that decides the switch.",
            then="the long factors are for sequences that do not fit in the original context.",
        ),
        Slip(
            lambda d, base, short, long, original, n: _divided(d, base, short if n > original else long),
            says="your frequencies are those of the other list of factors at this length. Look at which list"
            " belongs on which side of the original length.",
            then="the short factors were searched to keep texts that fit the original context as good as before;"
            " the long ones to reach past it. Which kind of text is this call's?",
        ),
    ],
    otherwise=Slip(
        says="work out the slowest pair's frequency by hand for this call and compare it with your last one.",
        then="plain RoPE's frequency of that pair first, then the factor from the list that applies at this length.",
    ),
)

# --- ex-9-3: where is a video? ------------------------------------------------------------------------------


def _mrope(text_before: int, frames: int, grid_h: int, grid_w: int, text_after: int) -> torch.Tensor:
    return mrope_position_ids([("text", text_before), ("image", (frames, grid_h, grid_w)), ("text", text_after)])


def _resumed(ids: torch.Tensor, before: int, grid: int, start: int) -> torch.Tensor:
    """``ids`` with the text after the grid's ``grid`` tokens renumbered from ``start``."""
    ids = ids.clone()
    after = ids.shape[1] - before - grid
    ids[:, before + grid :] = torch.arange(start, start + after)
    return ids


def _column_major(before: int, t: int, h: int, w: int, after: int) -> torch.Tensor:
    ids = _mrope(before, t, h, w, after)
    k = torch.arange(h * w)  # column-major walk within each frame
    ids[1, before : before + t * h * w], ids[2, before : before + t * h * w] = (
        (k % h).repeat(t) + before,
        (k // h).repeat(t) + before,
    )
    return ids


def _from_zero(before: int, t: int, h: int, w: int, after: int) -> torch.Tensor:
    ids = _mrope(before, t, h, w, after)
    ids[1:, before : before + t * h * w] -= before
    return ids


def _time_still(before: int, t: int, h: int, w: int, after: int) -> torch.Tensor:
    ids = _mrope(before, t, h, w, after)
    ids[0, before : before + t * h * w] = before
    return _resumed(ids, before, t * h * w, before + max(h, w))


def _rows_swapped(before: int, t: int, h: int, w: int, after: int) -> torch.Tensor:
    ids = _mrope(before, t, h, w, after)
    return ids[[0, 2, 1]]


MROPE_POSITION_IDS = Exercise(
    "ex-9-3",
    "my_mrope_position_ids",
    checker="check_mrope_position_ids",
    what="M-RoPE's position ids",
    reference=_mrope,
    withheld=("transformerland.encodings.mrope.mrope_position_ids",),
    public=[call(2, 1, 2, 3, 2), call(3, 2, 3, 4, 1), call(2, 5, 2, 3, 1), call(2, 1, 1, 1, 1)],
    hidden=lambda r: [
        call(r.randrange(6, 11), 1, r.randrange(2, 5), r.randrange(2, 5), r.randrange(1, 4)),
        call(r.randrange(1, 4), r.randrange(2, 4), 3, 2, 2),
        call(1, 6, 2, 2, 1),
    ],
    answer=Tensor(),
    slips=[
        Slip(
            lambda b, t, h, w, a: _resumed(_mrope(b, t, h, w, a), b, t * h * w, b + t * h * w),
            says="the text after the grid starts too late: it resumes where the tokens end. M-RoPE counts"
            " positions; look at how far the grid's ids reach.",
            then="find the largest id the grid used, on any of the three rows.",
        ),
        Slip(
            _column_major,
            says="inside each frame your height and width ids are swapped: look at the order in which the patches"
            " are read.",
            then="row by row: the width id changes from one patch to the next, the height id once per row.",
        ),
        Slip(
            _from_zero,
            says="the grid's height and width ids start from 0; look at where the grid starts in the sequence.",
            then="an image at position p has its top-left patch at (p, p, p).",
        ),
        Slip(
            _time_still,
            says="every frame of your video has the same time id; look at what the time axis is for.",
            then="frames follow one another in time as rows follow one another down the picture.",
        ),
        Slip(
            lambda b, t, h, w, a: _resumed(_mrope(b, t, h, w, a), b, t * h * w, b + max(h, w)),
            says="the text after a video that is longer in time than in space reuses ids the video already has."
            " Look at which axis reaches furthest.",
            then="a video's ids reach as far along time as along its rows and columns: the largest id can be a"
            " time id (the Qwen2-VL paper's rule, which this exercise asks for; transformers 5.x's"
            " get_rope_index does resume at p + max(h, w)).",
        ),
        Slip(
            _rows_swapped,
            says="your grid's height row holds the column ids and its width row the row ids: look at the order of"
            " the three rows.",
            then="the rows are time, height, width, top to bottom; the height id counts rows of patches.",
        ),
        Slip(
            lambda b, t, h, w, a: _resumed(_mrope(b, t, h, w, a), b, t * h * w, b + max(t, h, w) - 1),
            says="the text after the grid reuses the grid's largest id: it must come after it.",
            then="the grid's largest id is already taken by its last patch: the next text token needs a new one.",
        ),
    ],
    otherwise=Slip(
        says="print your ids for a small video (2 frames of 2 × 2, with one text token on each side) and read each"
        " row: time, height, width.",
        then="text tokens have the same id on all three rows; the grid's ids count from the position it starts at.",
    ),
)

# --- ex-9-4: when does MLA pay? -----------------------------------------------------------------------------


def _fewest(more: Callable[[int], bool], most: int = 4096) -> int | None:
    """The smallest whole number ``1 <= n <= most`` for which ``more(n)`` holds, or ``None``."""
    return next((n for n in range(1, most + 1) if more(n)), None)


def _break_even(head_dim: int, kv_lora_rank: int, rope_dim: int) -> int:
    mla = kv_cache_per_token("mla", n_layers=1, kv_lora_rank=kv_lora_rank, rope_dim=rope_dim)
    return _fewest(lambda n: kv_cache_per_token("mha", n_layers=1, n_heads=n, head_dim=head_dim) > mla)


BREAK_EVEN_HEADS = Exercise(
    "ex-9-4",
    "my_break_even_heads",
    checker="check_break_even_heads",
    what="the fewest heads for which multi-head attention caches more than MLA",
    reference=_break_even,
    # a loop over the library's cache sizes would answer without knowing either one
    withheld=("transformerland.encodings.mla.kv_cache_per_token",),
    public=[call(128, 512, 64), call(32, 256, 32), call(24, 512, 64), call(16, 512, 64)],
    hidden=lambda r: [
        call(8 * r.randrange(13, 24), 512, 64),
        call(r.choice([12, 36, 48]), 512, 64),  # a tie: the two caches equal at some head count
        call(r.choice([40, 56]), 256, 32),
    ],
    slips=[
        Slip(
            when=lambda got, *args: not isinstance(got, int) or isinstance(got, bool),
            says="your answer is not a Python int: a number of heads is a whole number.",
            then="int(…) makes a Python int of a float or of a one-entry tensor; but check first why yours is not one.",
        ),
        Slip(
            lambda d, rank, rope: _fewest(lambda n: 2 * n * d >= rank + rope),
            says="with this many heads the two caches are exactly the same size, and the question asks for more."
            " Look at the boundary of your comparison.",
            then="dividing and rounding up finds the first head count at which multi-head attention caches at"
            " least as much as MLA; when the division comes out exact, that count is a tie, not more.",
        ),
        Slip(
            lambda d, rank, rope: _fewest(lambda n: n * d > rank + rope),
            says="your multi-head cache is half what it should be: look at what multi-head attention keeps per head.",
            then="each head caches two vectors per token.",
        ),
        Slip(
            lambda d, rank, rope: _fewest(lambda n: 2 * n * d > rank),
            says="your MLA cache is too small: look at everything MLA keeps per token.",
            then="position lives outside the latent, on a key of its own.",
        ),
        Slip(
            lambda d, rank, rope: _fewest(lambda n: 2 * n * d > rank + n * rope),
            says="your MLA cache grows with the heads: look at how many rotary keys MLA keeps per token.",
            then="the rotary key is shared.",
        ),
    ],
    otherwise=Slip(
        says="count the numbers each scheme caches per token and layer for DeepSeek-V3's sizes, as the section's"
        " table does, and try a few head counts by hand.",
        then="the answer is the first head count at which multi-head attention's count is strictly larger.",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [PARTIAL_FREQUENCIES, LONGROPE_FREQUENCIES, MROPE_POSITION_IDS, BREAK_EVEN_HEADS]

check_partial_frequencies = PARTIAL_FREQUENCIES.checker_function()
check_longrope_frequencies = LONGROPE_FREQUENCIES.checker_function()
check_mrope_position_ids = MROPE_POSITION_IDS.checker_function()
check_break_even_heads = BREAK_EVEN_HEADS.checker_function()
