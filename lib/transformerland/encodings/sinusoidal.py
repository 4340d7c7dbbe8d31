"""The sinusoidal positional encoding of Vaswani et al. (2017).

``PE[pos, 2i] = sin(pos / base^(2i/d))`` and ``PE[pos, 2i+1] = cos(pos / base^(2i/d))``:
each (sin, cos) pair is a clock hand turning at its own speed, the speeds geometrically spaced.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .._validation import (
    require_choice,
    require_elements,
    require_even,
    require_float_tensor,
    require_positive_float,
    require_positive_int,
    require_real,
)

__all__ = [
    "LAYOUTS",
    "SinusoidalPositionalEncoding",
    "layout_permutation",
    "shift_rotation",
    "sinusoid_frequencies",
    "sinusoidal_encoding",
    "tensor2tensor_encoding",
    "tensor2tensor_frequencies",
]

LAYOUTS = ("interleaved", "concatenated")


def sinusoid_frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """Angular frequencies ``ω_i = base^(-2i/d)`` for ``i = 0 … d/2 - 1``, shape ``(d/2,)``."""
    d_model = require_even(require_positive_int(d_model, "d_model"), "d_model", "sines and cosines come in pairs.")
    base = require_positive_float(base, "base")
    exponents = torch.arange(0, d_model, 2, dtype=torch.float64) / d_model
    return base**-exponents


def sinusoidal_encoding(
    num_positions: int, d_model: int, base: float = 10000.0, layout: str = "interleaved"
) -> torch.Tensor:
    """The table of sinusoidal encodings, shape ``(num_positions, d_model)``, float32.

    Args:
        num_positions: how many positions (rows), starting at position 0.
        d_model: encoding width; must be even.
        base: the wavelength scale (10000 in the paper).
        layout: ``"interleaved"`` (the paper: sin in even columns, cos in odd) or
            ``"concatenated"`` (all sines, then all cosines, as several libraries do).
    """
    num_positions = require_positive_int(num_positions, "num_positions")
    layout = require_choice(layout, "layout", LAYOUTS)
    omega = sinusoid_frequencies(d_model, base)  # (d/2,)
    require_elements(num_positions * d_model, "the sinusoidal table")
    angles = torch.arange(num_positions, dtype=torch.float64)[:, None] * omega[None, :]  # (N, d/2)
    if layout == "interleaved":
        table = torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(num_positions, -1)
    else:
        table = torch.cat([angles.sin(), angles.cos()], dim=-1)
    return table.float()


def layout_permutation(d_model: int) -> torch.Tensor:
    """The column order that turns the interleaved table into the concatenated one, shape ``(d_model,)``.

    ``sinusoidal_encoding(n, d)[:, layout_permutation(d)]`` equals
    ``sinusoidal_encoding(n, d, layout="concatenated")`` exactly: first the even (sine) columns,
    then the odd (cosine) columns. ``torch.argsort(layout_permutation(d))`` is the way back.
    """
    d_model = require_even(require_positive_int(d_model, "d_model"), "d_model", "sines and cosines come in pairs.")
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


def shift_rotation(k: float, d_model: int, base: float = 10000.0, layout: str = "interleaved") -> torch.Tensor:
    """The matrix ``R(k)`` with ``PE(p + k) = R(k) @ PE(p)`` for every position ``p``, shape ``(d_model, d_model)``.

    Each (sin, cos) pair turns by the angle ``k·ω_i``:
    ``[sin, cos] → [[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]] @ [sin, cos]``. In the interleaved
    layout the 2×2 blocks sit on the diagonal at columns ``(2i, 2i+1)``; in the concatenated layout
    the same rotations act on the columns ``(i, i + d/2)``. ``R(k)`` does not depend on ``p``; it is
    orthogonal, ``R(-k) = R(k).T`` and ``R(j) @ R(k) = R(j + k)``. Returned in float64.

    Args:
        k: the shift, in positions (any real number; negative shifts go back).
        d_model: encoding width; must be even.
        base: the wavelength scale (10000 in the paper).
        layout: ``"interleaved"`` or ``"concatenated"``, as in :func:`sinusoidal_encoding`.
    """
    k = require_real(k, "k", what="a number of positions (int or float)")
    layout = require_choice(layout, "layout", LAYOUTS)
    angles = k * sinusoid_frequencies(d_model, base)  # (d/2,)
    require_elements(d_model * d_model, "the rotation matrix")
    cos, sin = angles.cos(), angles.sin()
    blocks = torch.stack([torch.stack([cos, sin], -1), torch.stack([-sin, cos], -1)], -2)  # (d/2, 2, 2)
    rotation = torch.block_diag(*blocks)
    if layout == "concatenated":
        order = layout_permutation(d_model)
        rotation = rotation[order][:, order]
    return rotation


def tensor2tensor_frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """Frequencies ``ω_i = base^(-i / (d/2 - 1))``, ``i = 0 … d/2 - 1``, shape ``(d/2,)``, float64.

    The spacing of tensor2tensor's ``get_timing_signal_1d`` and fairseq's
    ``SinusoidalPositionalEmbedding``: the slowest frequency is exactly ``1/base``, whereas the
    paper's (:func:`sinusoid_frequencies`) stops one step short, at ``base^(-(d-2)/d)``. For
    ``d_model = 2`` the single frequency is 1 (tensor2tensor guards the division the same way).
    """
    d_model = require_even(require_positive_int(d_model, "d_model"), "d_model", "sines and cosines come in pairs.")
    base = require_positive_float(base, "base")
    half = d_model // 2
    step = math.log(base) / max(half - 1, 1)
    return torch.exp(-step * torch.arange(half, dtype=torch.float64))


def tensor2tensor_encoding(num_positions: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The [sin | cos] table with tensor2tensor/fairseq frequency spacing, shape ``(num_positions, d_model)``, float32.

    Not a column permutation of :func:`sinusoidal_encoding` once ``d_model >= 4``: its frequencies
    (:func:`tensor2tensor_frequencies`) differ. Rows start at position 0 (fairseq also shifts
    positions past its padding index; that offset is not reproduced here).
    """
    num_positions = require_positive_int(num_positions, "num_positions")
    omega = tensor2tensor_frequencies(d_model, base)  # (d/2,)
    require_elements(num_positions * d_model, "the sinusoidal table")
    angles = torch.arange(num_positions, dtype=torch.float64)[:, None] * omega
    return torch.cat([angles.sin(), angles.cos()], dim=-1).float()


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the sinusoidal table to token vectors. No parameters, and no maximum length.

    The table is kept between calls (a buffer that moves with the module and is not saved with
    the weights) and recomputed only when a longer input arrives.

    Args:
        d_model: width of the token vectors (even).
        base: the wavelength scale.
        layout: ``"interleaved"`` or ``"concatenated"``.
    """

    def __init__(self, d_model: int, base: float = 10000.0, layout: str = "interleaved") -> None:
        super().__init__()
        sinusoid_frequencies(d_model, base)  # validates d_model and base
        self.d_model, self.base, self.layout = d_model, base, require_choice(layout, "layout", LAYOUTS)
        self.register_buffer("table", torch.zeros(0, d_model), persistent=False)  # (rows so far, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: ``(B, T, D)`` of a floating dtype → ``x + PE[:T]``, same shape (integer ``x`` is refused)."""
        require_float_tensor(x, "x", ndim=3)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x has width {x.shape[-1]} but this encoding was built for d_model={self.d_model}.")
        length = x.shape[1]
        if self.table.shape[0] < length:
            self.table = sinusoidal_encoding(length, self.d_model, self.base, self.layout).to(self.table.device)
        return x + self.table[:length].to(device=x.device, dtype=x.dtype)
