"""Exercises of chapter 9, *The variants in today's models*, as specs (:mod:`~transformerland.exercises.spec`).

* ex-9-1 :data:`PARTIAL_FREQUENCIES`: partial rotary's frequencies, spaced over the rotated width.
* ex-9-2 :data:`LONGROPE_FREQUENCIES`: LongRoPE's per-pair factors, switched past the original length.
* ex-9-3 :data:`MROPE_POSITION_IDS`: Qwen2-VL's three position ids for text, an image, and text.
* ex-9-4 :data:`KV_CACHE_RATIO`: how many times smaller MLA's cache is than multi-head attention's.
"""

from __future__ import annotations

import torch

from ..encodings.mrope import mrope_position_ids
from ..encodings.partial_rotary import partial_frequencies, rotary_width
from ..encodings.rope_scaling import rope_frequencies
from ..encodings.sinusoidal import sinusoid_frequencies
from ..mla import kv_cache_per_token
from .checking import Mistake, numbers_close, tensors_close, tensors_equal
from .spec import Case, Exercise, Judge, number_answer, tensor_answer

__all__ = [
    "EXERCISES",
    "KV_CACHE_RATIO",
    "LONGROPE_FREQUENCIES",
    "MROPE_POSITION_IDS",
    "PARTIAL_FREQUENCIES",
    "check_kv_cache_ratio",
    "check_longrope_frequencies",
    "check_mrope_position_ids",
    "check_partial_frequencies",
]

_close = tensors_close(atol=1e-9, rtol=1e-6)


def _tensor_judge(shape_of: str) -> Judge:
    """A judge that asks for a float tensor of the reference's shape, then compares it."""
    return tensor_answer(f"return a torch.Tensor: {shape_of}.", f"return {shape_of}.")


# ex-9-1 ------------------------------------------------------------------------------------------


def _partial_cases(seed: int) -> list[Case]:
    """Phi-2's head, a GPT-NeoX-style quarter, a half with a large base, and a whole head."""
    base = 10000.0 * (1 + seed)
    return [
        Case((80, 0.4, base), problem="Phi-2's head (80 wide, factor 0.4) gets the wrong frequencies"),
        Case((128, 0.25, base), problem="a quarter of a head of 128 gets the wrong frequencies"),
        Case((64, 0.5, 100.0 * base), problem="half of a head of 64 with a large base gets the wrong frequencies"),
        Case(
            (16, 1.0, base),
            problem="with partial_rotary_factor 1.0 the frequencies are not plain RoPE's",
            hint="a factor of 1 rotates the whole head: base^(-2i/d) for i < d/2.",
            mistakes=False,
        ),
    ]


def _partial_mistakes(case: Case) -> list[Mistake]:
    head_dim, factor, base = case.args
    width = rotary_width(head_dim, factor)
    return [
        Mistake(
            sinusoid_frequencies(head_dim, base)[: width // 2],
            "these are the first r/2 frequencies of the whole head: space them over the rotated width r, "
            "θ_i = base^(-2i/r), so that the rotated pairs span nearly the full head's range of speeds.",
        ),
        Mistake(
            sinusoid_frequencies(2 * width, base)[: width // 2],
            "the exponent is -2i/r: i counts pairs, so 2i counts dimensions; you used -i/r.",
        ),
    ]


PARTIAL_FREQUENCIES = Exercise(
    label="ex-9-1",
    what="partial rotary's frequencies",
    checker="check_partial_frequencies",
    function="my_partial_frequencies",
    signature="(head_dim: int, partial_rotary_factor: float, base: float) -> Tensor (r/2,), r = int(head_dim · factor)",
    cases=_partial_cases,
    reference=partial_frequencies,
    tolerance=_close,
    mistakes=_partial_mistakes,
    hint="r = int(head_dim · partial_rotary_factor) dimensions turn, and θ_i = base^(-2i/r) for i < r/2.",
    judge=_tensor_judge("one frequency per rotated pair, r/2 of them"),
)


# ex-9-2 ------------------------------------------------------------------------------------------


def _longrope_cases(seed: int) -> list[Case]:
    """Per-pair factors drawn from the seed; the current length inside, at and past the original length."""
    generator = torch.Generator().manual_seed(920 + seed)
    pairs, original = 8, 64
    short = (1 + 0.2 * torch.rand(pairs, generator=generator, dtype=torch.float64)).tolist()
    long = (torch.linspace(1, 8, pairs, dtype=torch.float64) + torch.rand(pairs, generator=generator)).tolist()
    return [
        Case((16, 10000.0, short, long, original, 32), problem="inside the original length the frequencies differ"),
        Case(
            (16, 10000.0, short, long, original, original),
            problem="at exactly the original length the frequencies differ",
            hint="the long factors take over only past the original length: seq_len > original_length.",
        ),
        Case((16, 10000.0, short, long, original, 4 * original), problem="past the original length they differ"),
    ]


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


def _longrope_mistakes(case: Case) -> list[Mistake]:
    head_dim, base, short, long, original, seq_len = case.args
    plain = sinusoid_frequencies(head_dim, base)
    chosen = torch.tensor(long if seq_len > original else short, dtype=torch.float64)
    other = torch.tensor(short if seq_len > original else long, dtype=torch.float64)
    return [
        Mistake(
            plain * chosen,
            "the factors stretch wavelengths, so they divide the frequencies: θ_i / factor[i], not θ_i · factor[i].",
        ),
        Mistake(
            plain / other,
            "the wrong list was used: short_factor up to and including the original length, long_factor past it.",
        ),
    ]


LONGROPE_FREQUENCIES = Exercise(
    label="ex-9-2",
    what="LongRoPE's frequencies",
    checker="check_longrope_frequencies",
    function="my_longrope_frequencies",
    signature="(head_dim, base, short_factor (list of d/2), long_factor (list of d/2), original_length, seq_len) "
    "-> Tensor (head_dim/2,)",
    cases=_longrope_cases,
    reference=_longrope_reference,
    tolerance=_close,
    mistakes=_longrope_mistakes,
    hint="θ_i = base^(-2i/d) divided by long_factor[i] when seq_len > original_length, else by short_factor[i].",
    judge=_tensor_judge("one frequency per pair, head_dim/2 of them"),
)


# ex-9-3 ------------------------------------------------------------------------------------------


def _mrope_cases(seed: int) -> list[Case]:
    """Text, an image of h × w merged patches, text: a wide image, a tall one, a single patch."""
    generator = torch.Generator().manual_seed(930 + seed)
    a, b, c = (int(v) for v in torch.randint(1, 6, (3,), generator=generator))
    return [
        Case((a, 2, 3, 2), problem="text, a 2 × 3 image and text get the wrong position ids"),
        Case((b, 4, 2, c), problem="text, a tall 4 × 2 image and text get the wrong position ids"),
        Case(
            (2, 1, 1, 1),
            problem="an image of a single patch gets the wrong ids",
            hint="a 1 × 1 image is one token at (p, p, p), and the text after it continues at p + 1.",
            mistakes=False,
        ),
    ]


def _mrope_reference(text_before: int, grid_h: int, grid_w: int, text_after: int) -> torch.Tensor:
    return mrope_position_ids([("text", text_before), ("image", (1, grid_h, grid_w)), ("text", text_after)])


def _mrope_mistakes(case: Case) -> list[Mistake]:
    before, h, w, after = case.args
    right = _mrope_reference(before, h, w, after)
    counted = right.clone()
    counted[:, before + h * w :] = torch.arange(before + h * w, before + h * w + after)
    swapped = right.clone()
    rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="xy")  # column-major walk
    swapped[1, before : before + h * w], swapped[2, before : before + h * w] = (
        rows.flatten() + before,
        cols.flatten() + before,
    )
    unshifted = right.clone()
    unshifted[1:, before : before + h * w] -= before
    return [
        Mistake(
            counted,
            "after the image, text resumes one past the largest id used (p + max(h, w)), not at p + h·w: "
            "M-RoPE counts positions, not tokens.",
        ),
        Mistake(swapped, "the patches come row by row (row-major): the width index changes fastest."),
        Mistake(
            unshifted,
            "the image's height and width ids start at p, the position where the image begins, not at 0.",
        ),
    ]


MROPE_POSITION_IDS = Exercise(
    label="ex-9-3",
    what="M-RoPE's position ids",
    checker="check_mrope_position_ids",
    function="my_mrope_position_ids",
    signature="(text_before: int, grid_h: int, grid_w: int, text_after: int) -> LongTensor (3, T)",
    cases=_mrope_cases,
    reference=_mrope_reference,
    tolerance=tensors_equal,
    mistakes=_mrope_mistakes,
    hint="text gets (p, p, p); the image at p gets (p, p + row, p + col), row-major; then text goes on at max + 1.",
    judge=tensor_answer(
        "return a (3, T) torch.Tensor of whole numbers: time, height and width ids.",
        "three rows (time, height, width) and one column per token: text_before + h·w + text_after.",
        convert=lambda got, expected: got.round().long(),
    ),
)


# ex-9-4 ------------------------------------------------------------------------------------------


def _ratio_cases(seed: int) -> list[Case]:
    """DeepSeek-V3's attention, a smaller one, and one drawn from the seed."""
    generator = torch.Generator().manual_seed(940 + seed)
    heads = int(torch.randint(4, 64, (1,), generator=generator))
    return [
        Case((128, 128, 512, 64), problem="DeepSeek-V3's ratio is wrong"),
        Case((16, 128, 512, 64), problem="the ratio for 16 heads is wrong"),
        Case((heads, 64, 256, 32), problem=f"the ratio for {heads} heads of 64 is wrong"),
    ]


def _ratio_reference(n_heads: int, head_dim: int, kv_lora_rank: int, rope_dim: int) -> float:
    mha = kv_cache_per_token("mha", n_layers=1, n_heads=n_heads, head_dim=head_dim)
    return mha / kv_cache_per_token("mla", n_layers=1, kv_lora_rank=kv_lora_rank, rope_dim=rope_dim)


def _ratio_mistakes(case: Case) -> list[Mistake]:
    n_heads, head_dim, rank, rope = case.args
    return [
        Mistake(
            n_heads * head_dim / (rank + rope), "multi-head attention caches a key and a value per head: 2·n_h·d_h."
        ),
        Mistake(2 * n_heads * head_dim / rank, "MLA caches the shared rotary key beside the latent: d_c + d_R."),
        Mistake(
            2 * n_heads * head_dim / (rank + n_heads * rope),
            "the decoupled rotary key is one key shared by all heads, cached once per token, not once per head.",
        ),
    ]


KV_CACHE_RATIO = Exercise(
    label="ex-9-4",
    what="MLA's cache saving",
    checker="check_kv_cache_ratio",
    function="my_kv_cache_ratio",
    signature="(n_heads: int, head_dim: int, kv_lora_rank: int, rope_dim: int) -> float",
    cases=_ratio_cases,
    reference=_ratio_reference,
    tolerance=numbers_close(rel_tol=1e-9),
    mistakes=_ratio_mistakes,
    hint="numbers cached per token and layer: 2·n_h·d_h for multi-head attention, d_c + d_R for MLA.",
    judge=number_answer("the ratio"),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [PARTIAL_FREQUENCIES, LONGROPE_FREQUENCIES, MROPE_POSITION_IDS, KV_CACHE_RATIO]

check_partial_frequencies = PARTIAL_FREQUENCIES.checker_function()
check_longrope_frequencies = LONGROPE_FREQUENCIES.checker_function()
check_mrope_position_ids = MROPE_POSITION_IDS.checker_function()
check_kv_cache_ratio = KV_CACHE_RATIO.checker_function()
