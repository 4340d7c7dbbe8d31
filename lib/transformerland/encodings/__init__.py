"""Positional encodings: sinusoidal, learned, rotary (RoPE) and its scaling recipes, and ALiBi."""

from .alibi import alibi_bias, alibi_slopes
from .learned import LearnedPositionalEmbedding, SequenceTooLongError, check_fits
from .rope_scaling import (
    ROPE_TYPES,
    dynamic_factor,
    llama3_bands,
    ntk_base,
    rope_frequencies,
    rope_wavelengths,
    set_rope_scaling,
    with_rope_scaling,
    yarn_attention_factor,
    yarn_ramp,
)
from .rotary import (
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

__all__ = [
    "LAYOUTS",
    "ROPE_TYPES",
    "LearnedPositionalEmbedding",
    "SequenceTooLongError",
    "SinusoidalPositionalEncoding",
    "alibi_bias",
    "alibi_slopes",
    "apply_rotary",
    "apply_rotary_half",
    "check_fits",
    "dynamic_factor",
    "halves_to_pairs",
    "interpolated_positions",
    "layout_permutation",
    "llama3_bands",
    "ntk_base",
    "rope_frequencies",
    "rope_wavelengths",
    "rotary_angles",
    "rotary_decay_bound",
    "rotate_half",
    "set_rope_scaling",
    "shift_rotation",
    "sinusoid_frequencies",
    "sinusoidal_encoding",
    "tensor2tensor_encoding",
    "tensor2tensor_frequencies",
    "with_rope_scaling",
    "yarn_attention_factor",
    "yarn_ramp",
]
