"""Positions in two dimensions: axial RoPE for image patches, and a ViT's learned table resampled.

**Axial RoPE** (as in RoPE-Axial of Heo et al., 2024): the head of width ``d`` (divisible by 4) is
split in two halves; the first half is rotated by the patch's column (``x``), the second by its row
(``y``), in that order as in the paper's code (``compute_axial_cis``), each with the frequencies of a
head of width ``d/2`` and adjacent dimensions paired:

    RoPE2D(x, (r, c)) = [RoPE(x[:d/2], c) | RoPE(x[d/2:], r)],

so the score between two patches depends on ``(Δr, Δc)`` only.

**Resampling a learned table** (timm's ``resample_abs_pos_embed``): a ViT trained on an
``h × w`` grid of patches has one learned row per patch; for a new grid ``h' × w'`` the rows are
laid out as an image with ``D`` channels and resized by bicubic interpolation (with antialiasing
when shrinking), and the class token's row is kept as it is. Chapter 5's interpolation of a
table, in two dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.nn import functional as F

from .._validation import (
    require_bool,
    require_choice,
    require_elements,
    require_float_tensor,
    require_int,
    require_position_tensor,
    require_positive_float,
    require_positive_int,
    require_tensor,
)
from .rotary import apply_rotary

__all__ = ["apply_axial_rotary", "patch_grid", "resample_position_table"]


def patch_grid(height: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows and columns of an ``height × width`` grid of patches in row-major order, each ``(height·width,)`` int64."""
    height, width = require_positive_int(height, "height"), require_positive_int(width, "width")
    require_elements(2 * height * width, "the grid's rows and columns (2 × height × width)")
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    return rows.flatten(), cols.flatten()


def apply_axial_rotary(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, base: float = 100.0) -> torch.Tensor:
    """Axial 2D RoPE: the first half of each head turned by ``cols`` (x), the second half by ``rows`` (y).

    Args:
        x: ``(..., T, d)`` queries or keys of ``T`` patches, ``d`` divisible by 4.
        rows, cols: ``(T,)`` each patch's row and column (see :func:`patch_grid`).
        base: frequency base (a grid is short, so vision models use small bases such as 100).

    Returns:
        Same shape and dtype as ``x``.
    """
    require_tensor(x, "x")
    if x.dim() < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., patches, features), got shape {tuple(x.shape)}.")
    if x.shape[-1] % 4:
        raise ValueError(
            f"axial RoPE needs a head width divisible by 4 (two halves of pairs), got {x.shape[-1]}; "
            f"use {x.shape[-1] - x.shape[-1] % 4} or {x.shape[-1] - x.shape[-1] % 4 + 4}."
        )
    base = require_positive_float(base, "base")
    for name, t in (("rows", rows), ("cols", cols)):
        require_position_tensor(t, name, ndim=1)
    half = x.shape[-1] // 2
    return torch.cat([apply_rotary(x[..., :half], cols, base), apply_rotary(x[..., half:], rows, base)], dim=-1)


def _grid(grid: object, name: str) -> tuple[int, int]:
    """A grid ``(h, w)`` of two positive sizes."""
    if isinstance(grid, str | bytes) or not isinstance(grid, Sequence):
        raise TypeError(f"{name} must be a pair (h, w) of grid sizes, got {grid!r}.")
    if len(grid) != 2:
        raise ValueError(f"{name} must be a pair (h, w) of grid sizes, got {len(grid)} value(s): {tuple(grid)!r}.")
    h, w = (require_positive_int(v, name) for v in grid)
    return h, w


def resample_position_table(
    table: torch.Tensor,
    new_grid: Sequence[int],
    old_grid: Sequence[int] | None = None,
    *,
    prefix_tokens: int = 1,
    mode: str = "bicubic",
    antialias: bool = True,
) -> torch.Tensor:
    """A ViT's learned position table for a new grid of patches, as timm's ``resample_abs_pos_embed``.

    Args:
        table: ``(1, prefix_tokens + h·w, D)`` rows: the prefix (class) tokens, then the patches row-major.
        new_grid: ``(h', w')`` the new grid.
        old_grid: ``(h, w)``; ``None`` means square, ``h = w = sqrt(number of patch rows)``.
        prefix_tokens: leading rows that are not patches (kept unchanged).
        mode: ``"bicubic"`` (timm's default), ``"bilinear"`` or ``"nearest"``.
        antialias: smooth before shrinking (timm's default ``True``; ignored by ``"nearest"``).

    Returns:
        ``(1, prefix_tokens + h'·w', D)`` in the dtype of ``table``.
    """
    require_float_tensor(table, "table", ndim=3)
    if table.shape[0] != 1:
        raise ValueError(f"table must have a batch dimension of 1, shape (1, N, D); got {tuple(table.shape)}.")
    prefix_tokens = require_int(prefix_tokens, "prefix_tokens (leading rows that are not patches)", low=0)
    mode = require_choice(mode, "mode", ("bicubic", "bilinear", "nearest"))
    antialias = require_bool(antialias, "antialias", "smooth before shrinking")
    patches = table.shape[1] - prefix_tokens
    if old_grid is None:
        side = round(patches**0.5)
        if side * side != patches:
            raise ValueError(f"{patches} patch rows do not make a square grid; pass old_grid=(h, w).")
        old_grid = (side, side)
    old_h, old_w = _grid(old_grid, "old_grid")
    new_h, new_w = _grid(new_grid, "new_grid")
    require_elements(new_h * new_w * table.shape[2], "the resampled table (h' × w' × D)")
    if old_h * old_w != patches:
        raise ValueError(
            f"old_grid {old_h}×{old_w} has {old_h * old_w} patches but the table has {patches} patch rows."
        )
    prefix, grid = table[:, :prefix_tokens], table[:, prefix_tokens:]
    image = grid.float().reshape(1, old_h, old_w, -1).permute(0, 3, 1, 2)  # (1, D, h, w)
    resized = F.interpolate(image, size=(new_h, new_w), mode=mode, antialias=antialias and mode != "nearest")
    rows = resized.permute(0, 2, 3, 1).reshape(1, new_h * new_w, -1).to(table.dtype)  # (1, h'·w', D)
    return torch.cat([prefix, rows], dim=1)
