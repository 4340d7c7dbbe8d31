"""The sinusoidal positional encoding of Vaswani et al. (2017).

``PE[pos, 2i] = sin(pos / base^(2i/d))`` and ``PE[pos, 2i+1] = cos(pos / base^(2i/d))``:
each (sin, cos) pair is a clock hand turning at its own speed, the speeds geometrically spaced.
"""

from __future__ import annotations

import torch
from torch import nn

from .._validation import require_choice, require_even, require_positive_float, require_positive_int, require_tensor

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
    angles = torch.arange(num_positions, dtype=torch.float64)[:, None] * omega[None, :]  # (N, d/2)
    if layout == "interleaved":
        table = torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(num_positions, -1)
    else:
        table = torch.cat([angles.sin(), angles.cos()], dim=-1)
    return table.float()


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the sinusoidal table to token vectors. No parameters, and no maximum length.

    Args:
        d_model: width of the token vectors (even).
        base: the wavelength scale.
        layout: ``"interleaved"`` or ``"concatenated"``.
    """

    def __init__(self, d_model: int, base: float = 10000.0, layout: str = "interleaved") -> None:
        super().__init__()
        sinusoid_frequencies(d_model, base)  # validates d_model and base
        self.d_model, self.base, self.layout = d_model, base, require_choice(layout, "layout", LAYOUTS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: ``(B, T, D)`` → ``x + PE[:T]``, same shape."""
        require_tensor(x, "x", ndim=3)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x has width {x.shape[-1]} but this encoding was built for d_model={self.d_model}.")
        table = sinusoidal_encoding(x.shape[1], self.d_model, self.base, self.layout)
        return x + table.to(device=x.device, dtype=x.dtype)
