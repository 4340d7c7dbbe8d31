"""Exercises of chapter 9, *The variants in today's models*, as specs (words in ``ch9.toml``).

* ex-9-1 :data:`PARTIAL_FREQUENCIES`: partial rotary's frequencies, spaced over the rotated width.
* ex-9-2 :data:`LONGROPE_FREQUENCIES`: LongRoPE's per-pair factors, switched past the original length.
* ex-9-3 :data:`MROPE_POSITION_IDS`: Qwen2-VL's three position ids for text, an image or a video, and text.
* ex-9-4 :data:`BREAK_EVEN_HEADS`: the fewest heads for which multi-head attention caches more than MLA.
"""

from __future__ import annotations

from typing import Any

import torch

from ..encodings.mrope import mrope_position_ids
from ..encodings.partial_rotary import partial_frequencies, rotary_width
from ..encodings.rope_scaling import rope_frequencies
from ..encodings.sinusoidal import sinusoid_frequencies
from ..mla import kv_cache_per_token
from .checking import Check
from .spec import PUBLIC_SEED, Case, Exercise, chapter_data, declared, tensor_answer

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

_DATA = chapter_data(__name__)


def _partial_cases(seed: int) -> list[Case]:
    """Phi-2's head, a GPT-NeoX-style quarter, a half with a large base, and a whole head."""
    base = 10000.0 * (1 + seed)
    return [
        Case((80, 0.4, base), tag="phi2"),
        Case((128, 0.25, base), tag="quarter"),
        Case((64, 0.5, 100.0 * base), tag="half"),
        Case((16, 1.0, base), tag="whole"),
    ]


def _partial_slips(head_dim: int, factor: float, base: float) -> dict[str, torch.Tensor]:
    width = rotary_width(head_dim, factor)
    return {
        "over_head": sinusoid_frequencies(head_dim, base)[: width // 2],
        "without_two": sinusoid_frequencies(2 * width, base)[: width // 2],
    }


PARTIAL_FREQUENCIES = declared(
    _DATA, "ex-9-1", reference=partial_frequencies, cases=_partial_cases, slips=_partial_slips
)


def _longrope_cases(seed: int) -> list[Case]:
    """Per-pair factors drawn from the seed; the current length inside, at and past the original length."""
    generator = torch.Generator().manual_seed(920 + seed)
    pairs, original = 8, 64
    short = (1 + 0.2 * torch.rand(pairs, generator=generator, dtype=torch.float64)).tolist()
    long = (torch.linspace(1, 8, pairs, dtype=torch.float64) + torch.rand(pairs, generator=generator)).tolist()
    lengths = {"inside": 32, "at": original, "past": 4 * original}
    return [Case((16, 10000.0, short, long, original, seq_len), tag=tag) for tag, seq_len in lengths.items()]


def _longrope_reference(
    head_dim: int, base: float, short_factor: list, long_factor: list, original_length: int, seq_len: int
) -> torch.Tensor:
    scaling = {
        "rope_type": "longrope",
        "factor": 4.0,  # only the attention factor reads it
        "original_max_position_embeddings": original_length,
        "short_factor": short_factor,
        "long_factor": long_factor,
    }
    return rope_frequencies(head_dim, base, scaling, seq_len=seq_len)[0]


def _longrope_slips(head_dim: int, base: float, short: list, long: list, original: int, seq_len: int) -> dict[str, Any]:
    plain = sinusoid_frequencies(head_dim, base)
    used, other = (long, short) if seq_len > original else (short, long)
    return {"multiplied": plain * plain.new_tensor(used), "wrong_list": plain / plain.new_tensor(other)}


LONGROPE_FREQUENCIES = declared(
    _DATA, "ex-9-2", reference=_longrope_reference, cases=_longrope_cases, slips=_longrope_slips
)


def _mrope_cases(seed: int) -> list[Case]:
    """Text, a grid of frames × h × w merged patches, text: an image, a video, a video longest in time, one patch."""
    generator = torch.Generator().manual_seed(930 + seed)
    a, b, c = (int(v) for v in torch.randint(1, 6, (3,), generator=generator))
    a += 0 if seed == PUBLIC_SEED else 5  # the grader's image case is never the notebook's
    return [
        Case((a, 1, 2, 3, 2), tag="image"),
        Case((b, 2, 3, 4, c), tag="video"),
        Case((2, 5, 2, 3, 1), tag="long_video"),
        Case((2, 1, 1, 1, 1), tag="single"),
    ]


def _mrope_reference(text_before: int, frames: int, grid_h: int, grid_w: int, text_after: int) -> torch.Tensor:
    return mrope_position_ids([("text", text_before), ("image", (frames, grid_h, grid_w)), ("text", text_after)])


def _mrope_slips(before: int, t: int, h: int, w: int, after: int) -> dict[str, torch.Tensor]:
    right = _mrope_reference(before, t, h, w, after)
    grid = slice(before, before + t * h * w)
    counted, swapped, unshifted, still, short = (right.clone() for _ in range(5))
    counted[:, grid.stop :] = torch.arange(grid.stop, grid.stop + after)
    k = torch.arange(h * w)  # column-major walk within each frame
    swapped[1, grid], swapped[2, grid] = (k % h).repeat(t) + before, (k // h).repeat(t) + before
    unshifted[1:, grid] -= before
    still[0, grid] = before
    still[:, grid.stop :] = torch.arange(after) + before + max(h, w)
    short[:, grid.stop :] = torch.arange(after) + before + max(h, w)
    return {
        "counted_tokens": counted,
        "column_major": swapped,
        "from_zero": unshifted,
        "time_still": still,
        "resume_ignores_time": short,
    }


def _judge_ids(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    """A (3, T) tensor of ids, rounded to whole numbers before they are compared."""
    judge = tensor_answer(spec.say("tensor_hint"), spec.say("shape_hint"), convert=lambda got, _: got.round().long())
    judge(check, spec, case, got, expected)


MROPE_POSITION_IDS = declared(
    _DATA, "ex-9-3", reference=_mrope_reference, cases=_mrope_cases, slips=_mrope_slips, judge=_judge_ids
)


def _heads_cases(seed: int) -> list[Case]:
    """DeepSeek-V3's sizes, a head width drawn from the seed, then two ties (the caches equal at some count)."""
    generator = torch.Generator().manual_seed(940 + seed)
    head_dim = 8 * int(torch.randint(3, 12, (1,), generator=generator))
    head_dim += 0 if seed == PUBLIC_SEED else 96  # the grader's head width is never the notebook's
    return [
        Case((128, 512, 64), tag="deepseek_v3"),
        Case((head_dim, 256, 32), tag="drawn"),
        Case((24, 512, 64), tag="tie"),
        Case((16, 512, 64), tag="small_heads"),
    ]


def _fewest(more: Any, most: int = 4096) -> int | None:
    """The smallest whole number ``1 <= n <= most`` for which ``more(n)`` holds, or ``None``."""
    return next((n for n in range(1, most + 1) if more(n)), None)


def _heads_reference(head_dim: int, kv_lora_rank: int, rope_dim: int) -> int:
    mla = kv_cache_per_token("mla", n_layers=1, kv_lora_rank=kv_lora_rank, rope_dim=rope_dim)
    return _fewest(lambda n: kv_cache_per_token("mha", n_layers=1, n_heads=n, head_dim=head_dim) > mla)


def _heads_slips(head_dim: int, rank: int, rope: int) -> dict[str, int]:
    """Each slip's head count; one that no head count satisfies (a rotary key per head as wide as two heads'
    keys and values) is left out."""
    slips = {
        "equal_counts": _fewest(lambda n: 2 * n * head_dim >= rank + rope),
        "no_values": _fewest(lambda n: n * head_dim > rank + rope),
        "no_rope": _fewest(lambda n: 2 * n * head_dim > rank),
        "rope_per_head": _fewest(lambda n: 2 * n * head_dim > rank + n * rope),
    }
    return {key: n for key, n in slips.items() if n is not None}


BREAK_EVEN_HEADS = declared(_DATA, "ex-9-4", reference=_heads_reference, cases=_heads_cases, slips=_heads_slips)

check_partial_frequencies = PARTIAL_FREQUENCIES.checker_function()
check_longrope_frequencies = LONGROPE_FREQUENCIES.checker_function()
check_mrope_position_ids = MROPE_POSITION_IDS.checker_function()
check_break_even_heads = BREAK_EVEN_HEADS.checker_function()

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [PARTIAL_FREQUENCIES, LONGROPE_FREQUENCIES, MROPE_POSITION_IDS, BREAK_EVEN_HEADS]
