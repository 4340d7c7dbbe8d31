"""Rotary position embedding (RoPE) of Su et al.: rotate each pair of query/key dimensions.

Dimensions ``(2i, 2i+1)`` of a vector at position ``m`` are turned by the angle ``m·θ_i``
with ``θ_i = base^(-2i/d)``: the sinusoid's frequencies. A query at ``m`` and a key at ``n``
then meet at the angle ``(m - n)·θ_i``, so their score depends only on the offset.
"""

from __future__ import annotations

import torch

from .._validation import require_even, require_positive_float, require_tensor
from .sinusoidal import sinusoid_frequencies


def rotary_angles(positions: torch.Tensor, dim: int, base: float = 10000.0) -> torch.Tensor:
    """Angles ``positions[:, None] * θ``, shape ``(T, dim/2)``, float64."""
    return positions.to(torch.float64)[:, None] * sinusoid_frequencies(dim, base)[None, :].to(positions.device)


def apply_rotary(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """Rotate adjacent pairs of the last dimension of ``x`` by position-dependent angles.

    Args:
        x: ``(..., T, d)`` with even ``d``: queries or keys.
        positions: ``(T,)`` positions of the rows; defaults to ``0 … T-1``.
        base: frequency base (10000 in RoFormer).

    Returns:
        The rotated tensor, same shape and dtype as ``x``.
    """
    require_tensor(x, "x")
    if x.dim() < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., tokens, features), got shape {tuple(x.shape)}.")
    length, dim = x.shape[-2], x.shape[-1]
    require_even(dim, "the feature size of x", "RoPE rotates pairs of dimensions.")
    require_positive_float(base, "base")
    if positions is None:
        positions = torch.arange(length, device=x.device)
    elif positions.shape != (length,):
        raise ValueError(f"positions must have shape ({length},) to match x, got {tuple(positions.shape)}.")
    angles = rotary_angles(positions, dim, base)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d/2)
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return rotated.flatten(-2)
