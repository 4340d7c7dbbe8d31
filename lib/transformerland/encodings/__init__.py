"""Positional encodings: sinusoidal, learned, rotary (RoPE) and ALiBi."""

from .alibi import alibi_bias, alibi_slopes
from .learned import LearnedPositionalEmbedding, SequenceTooLongError, check_fits
from .rotary import apply_rotary, rotary_angles
from .sinusoidal import LAYOUTS, SinusoidalPositionalEncoding, sinusoid_frequencies, sinusoidal_encoding

__all__ = [
    "LAYOUTS",
    "LearnedPositionalEmbedding",
    "SequenceTooLongError",
    "SinusoidalPositionalEncoding",
    "alibi_bias",
    "alibi_slopes",
    "apply_rotary",
    "check_fits",
    "rotary_angles",
    "sinusoid_frequencies",
    "sinusoidal_encoding",
]
