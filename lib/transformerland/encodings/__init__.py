"""Positional encodings: sinusoidal, learned, rotary (RoPE) and ALiBi."""

from .alibi import alibi_bias, alibi_slopes
from .learned import LearnedPositionalEmbedding, SequenceTooLongError, check_fits
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
    "LearnedPositionalEmbedding",
    "SequenceTooLongError",
    "SinusoidalPositionalEncoding",
    "alibi_bias",
    "alibi_slopes",
    "apply_rotary",
    "apply_rotary_half",
    "check_fits",
    "halves_to_pairs",
    "interpolated_positions",
    "layout_permutation",
    "rotary_angles",
    "rotary_decay_bound",
    "rotate_half",
    "shift_rotation",
    "sinusoid_frequencies",
    "sinusoidal_encoding",
    "tensor2tensor_encoding",
    "tensor2tensor_frequencies",
]
