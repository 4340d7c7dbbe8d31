"""Rotary position embedding (RoPE) of Su et al.: rotate each pair of query/key dimensions.

Dimensions ``(2i, 2i+1)`` of a vector at position ``m`` are turned by the angle ``m·θ_i``
with ``θ_i = base^(-2i/d)``: the sinusoid's frequencies. A query at ``m`` and a key at ``n``
then meet at the angle ``(m - n)·θ_i``, so their score depends only on the offset.
"""

from __future__ import annotations

from typing import Any

import torch

from .._validation import (
    require_choice,
    require_elements,
    require_even,
    require_finite_tensor,
    require_float_tensor,
    require_min_dims,
    require_position_tensor,
    require_positive_float,
    require_positive_int,
)
from .sinusoidal import sinusoid_frequencies

__all__ = [
    "ROTARY_LAYOUTS",
    "apply_rotary",
    "apply_rotary_half",
    "halves_to_pairs",
    "interpolated_positions",
    "rotary_angles",
    "rotary_decay_bound",
    "rotate_half",
]


def rotary_angles(
    positions: torch.Tensor, dim: int, base: float = 10000.0, inv_freq: torch.Tensor | None = None
) -> torch.Tensor:
    """Angles ``positions[:, None] * θ``, shape ``(T, dim/2)``, float64.

    ``positions``: ``(T,)``, integers or floats. ``inv_freq``: optional ``(dim/2,)`` frequencies ``θ``
    to use instead of ``base^(-2i/dim)`` (a scaled set from :func:`~transformerland.encodings.rope_frequencies`).
    """
    require_position_tensor(positions, "positions", ndim=1)
    dim = require_even(require_positive_int(dim, "dim"), "dim", "RoPE rotates pairs of dimensions.")
    base = require_positive_float(base, "base")
    theta = sinusoid_frequencies(dim, base) if inv_freq is None else _checked_inv_freq(inv_freq, dim)
    return positions.to(torch.float64)[:, None] * theta[None, :].to(positions.device)


def _checked_inv_freq(inv_freq: torch.Tensor, dim: int) -> torch.Tensor:
    require_finite_tensor(require_float_tensor(inv_freq, "inv_freq", ndim=1), "inv_freq", "frequencies")
    if inv_freq.shape[0] != dim // 2:
        raise ValueError(f"inv_freq must have one frequency per pair, {dim // 2}, got {inv_freq.shape[0]}.")
    return inv_freq.to(torch.float64)


def _cos_sin(
    x: torch.Tensor,
    positions: torch.Tensor | None,
    base: float,
    inv_freq: torch.Tensor | None = None,
    attention_factor: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Validate ``x`` ``(..., T, d)`` and ``positions`` ``(T,)``; return cos and sin of the angles, ``(T, d/2)``.

    Both are multiplied by ``attention_factor`` (YaRN's temperature; 1 otherwise).
    """
    require_min_dims(require_float_tensor(x, "x"), "x", 2, "..., tokens, features")
    length, dim = x.shape[-2], x.shape[-1]
    require_even(dim, "the feature size of x", "RoPE rotates pairs of dimensions.")
    require_positive_float(base, "base")
    if positions is None:
        positions = torch.arange(length, device=x.device)
    else:
        require_position_tensor(positions, "positions")
        if positions.shape != (length,):
            raise ValueError(
                f"positions must have shape ({length},), one position per row of x, got {tuple(positions.shape)}."
            )
    angles = rotary_angles(positions, dim, base, inv_freq)
    gain = require_positive_float(attention_factor, "attention_factor")
    return (gain * angles.cos()).to(x.dtype), (gain * angles.sin()).to(x.dtype)


#: The two ways of pairing RoPE's features: neighbours ``(2i, 2i+1)`` (RoFormer, GPT-J, llama.cpp's files),
#: or dimension ``i`` with ``i + d/2`` (transformers' LLaMA, GPT-NeoX).
ROTARY_LAYOUTS = ("pairs", "halves")


def apply_rotary(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    base: float = 10000.0,
    *,
    inv_freq: torch.Tensor | None = None,
    attention_factor: float = 1.0,
    layout: str = "pairs",
) -> torch.Tensor:
    """Rotate pairs of the last dimension of ``x`` by position-dependent angles.

    Args:
        x: ``(..., T, d)`` with even ``d``: queries or keys, of a floating dtype (an integer
            tensor is refused: call ``.float()``).
        positions: ``(T,)`` positions of the rows, integers or floats; defaults to ``0 … T-1``.
        base: frequency base (10000 in RoFormer), a finite positive number.
        inv_freq: optional ``(d/2,)`` frequencies replacing ``base^(-2i/d)`` (a scaling recipe's).
        attention_factor: multiplies the rotated vector (YaRN's temperature; 1 otherwise).
        layout: ``"pairs"``: adjacent dimensions ``(2i, 2i+1)`` turn together; ``"halves"``:
            :func:`apply_rotary_half`'s pairing.

    Returns:
        The rotated tensor, same shape and dtype as ``x``; a ``T = 0`` input gives an empty result.
    """
    require_choice(layout, "layout", ROTARY_LAYOUTS)
    cos, sin = _cos_sin(x, positions, base, inv_freq, attention_factor)  # (T, d/2)
    if layout == "halves":  # x · cos + rotate_half(x) · sin, each of the d/2 angles used twice
        return x * torch.cat([cos, cos], dim=-1) + rotate_half(x) * torch.cat([sin, sin], dim=-1)
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return rotated.flatten(-2)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x₁ | x₂] → [-x₂ | x₁]`` on the last dimension (even width ``d``), same shape as ``x``.

    The quarter turn of the "halves" layout used by transformers' LLaMA and by GPT-NeoX:
    dimension ``i`` is paired with dimension ``i + d/2`` instead of its neighbour.
    """
    require_min_dims(require_float_tensor(x, "x"), "x", 1, "its features")
    require_even(x.shape[-1], "the feature size of x", "rotate_half splits it into two halves.")
    first, second = x.chunk(2, dim=-1)
    return torch.cat([-second, first], dim=-1)


def apply_rotary_half(x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    """RoPE in the "halves" layout: dimension ``i`` turns together with dimension ``i + d/2``.

    ``x · cos + rotate_half(x) · sin``, with each of the ``d/2`` angles used twice, as in
    transformers' ``apply_rotary_pos_emb`` for LLaMA. It is :func:`apply_rotary` up to a
    fixed reordering of the features: see :func:`halves_to_pairs`.

    The arguments (``x``: ``(..., T, d)``, even ``d``; ``positions``, ``base``, ``inv_freq``,
    ``attention_factor``), the result and the errors are :func:`apply_rotary`'s, whose
    ``layout="halves"`` this is.
    """
    if "layout" in kwargs:
        raise TypeError("apply_rotary_half takes no layout: it is apply_rotary(..., layout='halves').")
    return apply_rotary(x, *args, **kwargs, layout="halves")


def halves_to_pairs(dim: int) -> torch.Tensor:
    """Feature order that turns the halves layout into adjacent pairs, shape ``(dim,)``.

    ``x[..., halves_to_pairs(d)]`` lists features ``0, d/2, 1, d/2 + 1, …``, so that
    ``apply_rotary(x[..., p]) == apply_rotary_half(x)[..., p]`` for ``p = halves_to_pairs(d)``.
    ``torch.argsort(p)`` is the way back.
    """
    dim = require_even(require_positive_int(dim, "dim"), "dim", "RoPE rotates pairs of dimensions.")
    half = torch.arange(dim // 2)
    return torch.stack([half, half + dim // 2], dim=-1).flatten()


def rotary_decay_bound(distances: torch.Tensor, dim: int, base: float = 10000.0) -> torch.Tensor:
    """RoFormer's relative upper bound on the score at each distance, shape like ``distances``, float64.

    For a query and key ``Δ`` positions apart the score is ``Re Σ_i h_i e^{iΔθ_i}`` (``h_i``: the
    product of the ``i``-th pairs as complex numbers). Summation by parts bounds its size by
    ``max_i |h_{i+1} - h_i| · Σ_j |S_j|`` with ``S_j = Σ_{k<j} e^{iΔθ_k}``; this returns the
    content-free factor ``(1 / (d/2)) Σ_{j=1}^{d/2} |S_j|``, which equals ``(d/2 + 1) / 2`` at ``Δ = 0``
    and shrinks, with ripples, as ``Δ`` grows.

    Args:
        distances: ``(N,)`` relative distances ``m - n`` (any real values).
        dim: the head width ``d`` (even).
        base: frequency base.
    """
    require_position_tensor(distances, "distances", ndim=1)
    dim = require_even(require_positive_int(dim, "dim"), "dim", "RoPE rotates pairs of dimensions.")
    base = require_positive_float(base, "base")
    require_elements(distances.shape[0] * dim, "the partial sums (distances × dim)")
    theta = sinusoid_frequencies(dim, base).to(distances.device)  # (d/2,)
    angles = distances.to(torch.float64)[:, None] * theta[None, :]  # (N, d/2)
    partial_sums = torch.polar(torch.ones_like(angles), angles).cumsum(dim=-1)  # S_1 … S_{d/2}
    return partial_sums.abs().mean(dim=-1)


def interpolated_positions(length: int, trained_length: int) -> torch.Tensor:
    """Position interpolation (Chen et al., 2023): positions for ``length`` tokens, squeezed into the trained range.

    Returns ``(length,)`` float64 positions ``p · trained_length / length`` when
    ``length > trained_length`` (so they stay below ``trained_length``: the last one is
    ``trained_length - trained_length / length``), and the plain ``0 … length - 1`` otherwise.
    Pass them to :func:`apply_rotary` as ``positions``.
    """
    length = require_positive_int(length, "length")
    trained_length = require_positive_int(trained_length, "trained_length")
    scale = min(1.0, trained_length / length)
    return torch.arange(length, dtype=torch.float64) * scale
