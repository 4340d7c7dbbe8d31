"""Partial rotary: turn only the first ``r`` dimensions of each head, pass the rest through.

GPT-NeoX's ``rotary_pct``, Phi's and Qwen's ``partial_rotary_factor``: of a head of width ``d``,
only ``r = int(d · f)`` dimensions are rotated, with frequencies spaced over the *rotated*
width, ``θ_i = b^(-2i/r)`` for ``i < r/2``; the other ``d - r`` dimensions take part in the
score as plain dot products, the same at every distance:

    score(m, n) = q_rotᵀ R((n - m)θ) k_rot  +  q_passᵀ k_pass.

p-RoPE (Barbero et al., 2025; Gemma 4's ``"proportional"`` RoPE in transformers) is the other
way to rotate a fraction ``p`` of the pairs: it keeps the frequencies of the full width,
``θ_i = b^(-2i/d)``, for the fastest ``int(p · d/2)`` pairs and sets the slowest ones to zero,
so the pairs that would have turned least do not turn at all.
"""

from __future__ import annotations

import numbers

import torch

from .._validation import require_even, require_positive_float, require_positive_int, require_tensor
from .rotary import apply_rotary_half
from .sinusoidal import sinusoid_frequencies

__all__ = ["apply_partial_rotary", "p_rope_frequencies", "partial_frequencies", "rotary_width"]


def _fraction(value: object, name: str) -> float:
    """``value`` as a float in ``(0, 1]``, else a clear error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1], the share of the head that turns; got {value!r}.")
    if not 0 < value <= 1:
        raise ValueError(f"{name} must lie in (0, 1] (1.0 rotates the whole head), got {value}.")
    return float(value)


def rotary_width(head_dim: int, partial_rotary_factor: float = 1.0) -> int:
    """The rotated width ``r = int(head_dim · partial_rotary_factor)``, as transformers computes it.

    It must be even and at least 2 (RoPE turns pairs); Phi-2 (head 80, factor 0.4) gives 32.
    """
    head_dim = require_positive_int(head_dim, "head_dim")
    factor = _fraction(partial_rotary_factor, "partial_rotary_factor")
    width = int(head_dim * factor)
    if width < 2 or width % 2:
        raise ValueError(
            f"head_dim · partial_rotary_factor = {head_dim} · {factor} gives a rotated width of {width}, "
            "which must be even and at least 2 (RoPE turns pairs); pick a factor that gives an even width."
        )
    return width


def partial_frequencies(head_dim: int, partial_rotary_factor: float, base: float = 10000.0) -> torch.Tensor:
    """Partial rotary's ``(r/2,)`` float64 frequencies ``θ_i = base^(-2i/r)``, ``r`` the rotated width.

    Spaced over the rotated width, not the head: the slowest pair has ``θ = base^(-(r-2)/r)``, faster
    than a full head's slowest pair, ``base^(-(d-2)/d)``, by the factor ``base^(2/r - 2/d)``: 1.41 for
    Phi-2's d = 80, r = 32 and 1.78 for GPT-NeoX-20B's d = 96, r = 24 at base 10,000, growing quickly as
    ``r`` shrinks (7.5 for d = 64, r = 8).
    """
    return sinusoid_frequencies(rotary_width(head_dim, partial_rotary_factor), require_positive_float(base, "base"))


def p_rope_frequencies(head_dim: int, p: float, base: float = 10000.0) -> torch.Tensor:
    """p-RoPE's ``(head_dim/2,)`` float64 frequencies: the fastest ``int(p · d/2)`` of the full head, the rest 0.

    ``θ_i = base^(-2i/d)`` for ``i < int(p · d/2)`` and ``θ_i = 0`` after (a pair that never turns).
    ``p = 1`` is plain RoPE; transformers' ``"proportional"`` recipe computes the same numbers.
    """
    head_dim = require_even(require_positive_int(head_dim, "head_dim"), "head_dim", "RoPE rotates pairs.")
    p = _fraction(p, "p")
    theta = sinusoid_frequencies(head_dim, require_positive_float(base, "base"))  # (d/2,)
    kept = int(p * head_dim // 2)
    theta[kept:] = 0.0
    return theta


def apply_partial_rotary(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    base: float = 10000.0,
    *,
    partial_rotary_factor: float,
    inv_freq: torch.Tensor | None = None,
    attention_factor: float = 1.0,
) -> torch.Tensor:
    """Rotate the first ``r`` features of ``x`` (halves layout, as Phi and GPT-NeoX), keep the rest.

    ``[x_rot | x_pass] → [RoPE(x_rot) | x_pass]`` with ``r = rotary_width(d, partial_rotary_factor)``
    and ``x_rot`` turned by :func:`~transformerland.encodings.apply_rotary_half` with frequencies
    ``base^(-2i/r)`` (or ``inv_freq``, ``(r/2,)``, e.g. from ``rope_frequencies`` with the same factor).

    Args:
        x: ``(..., T, d)`` queries or keys.
        positions: ``(T,)`` positions; defaults to ``0 … T-1``.
        base: frequency base.
        partial_rotary_factor: the share of each head that turns, in ``(0, 1]``.
        inv_freq, attention_factor: as in :func:`~transformerland.encodings.apply_rotary`.

    Returns:
        Same shape and dtype as ``x``; ``x[..., r:]`` unchanged.
    """
    require_tensor(x, "x")
    if x.dim() < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., tokens, features), got shape {tuple(x.shape)}.")
    width = rotary_width(x.shape[-1], partial_rotary_factor)
    turned = apply_rotary_half(
        x[..., :width], positions, base, inv_freq=inv_freq, attention_factor=attention_factor
    )  # (..., T, r)
    return torch.cat([turned, x[..., width:]], dim=-1)
