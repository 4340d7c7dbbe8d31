"""Positional encodings: sinusoidal, learned, rotary (RoPE) and its scaling recipes, ALiBi, T5's relative bias
buckets, and RoPE's variants (partial rotary and p-RoPE, axial 2D RoPE and resampled ViT tables, M-RoPE)."""

from .alibi import alibi_bias, alibi_slopes
from .axial import apply_axial_rotary, patch_grid, resample_position_table
from .learned import LearnedPositionalEmbedding, SequenceTooLongError, check_fits
from .mrope import apply_mrope, mrope_angles, mrope_axes, mrope_position_ids
from .partial_rotary import apply_partial_rotary, p_rope_frequencies, partial_frequencies, rotary_width
from .rope_scaling import (
    ROPE_TYPES,
    dynamic_factor,
    llama3_bands,
    ntk_base,
    rope_frequencies,
    rope_wavelengths,
    scaling_recipes,
    set_rope_scaling,
    with_rope_scaling,
    yarn_attention_factor,
    yarn_ramp,
)
from .rotary import (
    ROTARY_LAYOUTS,
    apply_rotary,
    apply_rotary_half,
    halves_to_pairs,
    interpolated_positions,
    rotary_angles,
    rotary_decay_bound,
    rotate_half,
)
from .sinusoidal import (
    LAYOUTS,
    SinusoidalPositionalEncoding,
    layout_permutation,
    shift_rotation,
    sinusoid_frequencies,
    sinusoidal_encoding,
    tensor2tensor_encoding,
    tensor2tensor_frequencies,
)
from .t5_bias import T5RelativeBias, t5_relative_buckets

__all__ = [
    "LAYOUTS",
    "ROPE_TYPES",
    "ROTARY_LAYOUTS",
    "LearnedPositionalEmbedding",
    "SequenceTooLongError",
    "SinusoidalPositionalEncoding",
    "T5RelativeBias",
    "alibi_bias",
    "alibi_slopes",
    "apply_axial_rotary",
    "apply_mrope",
    "apply_partial_rotary",
    "apply_rotary",
    "apply_rotary_half",
    "check_fits",
    "dynamic_factor",
    "halves_to_pairs",
    "interpolated_positions",
    "layout_permutation",
    "llama3_bands",
    "mrope_angles",
    "mrope_axes",
    "mrope_position_ids",
    "ntk_base",
    "p_rope_frequencies",
    "partial_frequencies",
    "patch_grid",
    "resample_position_table",
    "rope_frequencies",
    "rope_wavelengths",
    "rotary_angles",
    "rotary_decay_bound",
    "rotary_width",
    "rotate_half",
    "scaling_recipes",
    "set_rope_scaling",
    "shift_rotation",
    "sinusoid_frequencies",
    "sinusoidal_encoding",
    "t5_relative_buckets",
    "tensor2tensor_encoding",
    "tensor2tensor_frequencies",
    "with_rope_scaling",
    "yarn_attention_factor",
    "yarn_ramp",
]
