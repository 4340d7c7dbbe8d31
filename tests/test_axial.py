"""Axial 2D RoPE for patches, and a ViT position table resampled as timm's resample_abs_pos_embed does."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F
from transformerland.encodings import apply_axial_rotary, apply_rotary, patch_grid, resample_position_table


def test_patch_grid_is_row_major() -> None:
    rows, cols = patch_grid(2, 3)
    assert rows.tolist() == [0, 0, 0, 1, 1, 1] and cols.tolist() == [0, 1, 2, 0, 1, 2]


def test_axial_rotary_halves() -> None:
    """The first half turns by the column (x), the second by the row (y), as RoPE-ViT's code orders them."""
    x = torch.randn(6, 16, dtype=torch.float64)
    rows, cols = patch_grid(2, 3)
    out = apply_axial_rotary(x, rows, cols)
    torch.testing.assert_close(out[:, :8], apply_rotary(x[:, :8], cols, 100.0))
    torch.testing.assert_close(out[:, 8:], apply_rotary(x[:, 8:], rows, 100.0))


def test_axial_rotary_matches_rope_vit_complex_recipe() -> None:
    """RoPE-ViT's recipe, written with complex numbers: d/4 frequencies base^(-4k/d) shared by both axes,
    angles of the column then of the row, each multiplying a pair of adjacent dimensions read as one complex."""
    d, height, width, base = 16, 3, 5, 100.0
    x = torch.randn(height * width, d, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    step = torch.arange(height * width, dtype=torch.float64)
    column, row = step % width, torch.div(step, width, rounding_mode="floor")
    freqs = base ** (-torch.arange(0, d, 4, dtype=torch.float64) / d)  # (d/4,)
    angles = torch.cat([torch.outer(column, freqs), torch.outer(row, freqs)], dim=-1)  # (T, d/2)
    turned = torch.view_as_complex(x.reshape(-1, d // 2, 2).contiguous()) * torch.polar(torch.ones_like(angles), angles)
    rows, cols = patch_grid(height, width)
    torch.testing.assert_close(apply_axial_rotary(x, rows, cols, base), torch.view_as_real(turned).flatten(1))


def test_scores_depend_on_the_2d_offset_only() -> None:
    generator = torch.Generator().manual_seed(0)
    q, k = (
        torch.randn(1, 16, dtype=torch.float64, generator=generator),
        torch.randn(1, 16, dtype=torch.float64, generator=generator),
    )

    def score(a, b):
        qa = apply_axial_rotary(q, torch.tensor([a[0]]), torch.tensor([a[1]]))
        kb = apply_axial_rotary(k, torch.tensor([b[0]]), torch.tensor([b[1]]))
        return float(qa @ kb.T)

    assert abs(score((3, 5), (1, 2)) - score((7, 9), (5, 6))) < 1e-12
    assert abs(score((3, 5), (1, 2)) - score((3, 5), (2, 1))) > 1e-6  # (2, 3) and (1, 4) differ


def reference_resample(table, new, old, prefix):
    """timm 1.0's steps: float32, (1, D, h, w), F.interpolate bicubic with antialias, prefix rows kept."""
    grid = table[:, prefix:].float().reshape(1, old[0], old[1], -1).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=new, mode="bicubic", align_corners=None, antialias=True)
    grid = grid.permute(0, 2, 3, 1).reshape(1, -1, table.shape[-1]).to(table.dtype)
    return torch.cat([table[:, :prefix], grid], dim=1)


@pytest.mark.parametrize(
    ("old", "new", "prefix"), [((14, 14), (24, 24), 1), ((14, 14), (7, 9), 1), ((4, 6), (8, 3), 0)]
)
def test_resample_follows_timm(old, new, prefix) -> None:
    table = torch.randn(1, prefix + old[0] * old[1], 12, generator=torch.Generator().manual_seed(1))
    got = resample_position_table(table, new, old if old[0] != old[1] else None, prefix_tokens=prefix)
    assert got.shape == (1, prefix + new[0] * new[1], 12)
    torch.testing.assert_close(got, reference_resample(table, new, old, prefix))
    torch.testing.assert_close(got[:, :prefix], table[:, :prefix])


def test_resample_keeps_a_smooth_table_smooth() -> None:
    rows, cols = patch_grid(8, 8)
    table = torch.stack([rows, cols], dim=-1).double()[None] / 7  # (1, 64, 2): a linear ramp in each direction
    bigger = resample_position_table(table, (16, 16), prefix_tokens=0, antialias=False, mode="bilinear")
    assert bigger.shape == (1, 256, 2)
    assert bigger[0, :, 0].reshape(16, 16).diff(dim=0).min() >= 0  # rows still increase downwards
    torch.testing.assert_close(resample_position_table(table, (8, 8), prefix_tokens=0), table)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: apply_axial_rotary(torch.zeros(4, 6), torch.arange(4), torch.arange(4)), ValueError, "divisible by 4"),
        (lambda: apply_axial_rotary(torch.zeros(8), torch.arange(4), torch.arange(4)), ValueError, "at least 2"),
        (lambda: resample_position_table(torch.zeros(1, 11, 4), (4, 4)), ValueError, "square"),
        (lambda: resample_position_table(torch.zeros(1, 17, 4), (4, 4), (3, 4)), ValueError, "has 12 patches"),
        (lambda: resample_position_table(torch.zeros(2, 17, 4), (4, 4)), ValueError, "batch dimension of 1"),
        (lambda: resample_position_table(torch.zeros(1, 17, 4), (4, 4), mode="area"), ValueError, "mode"),
        (lambda: resample_position_table(torch.zeros(1, 17, 4), (4, 4), prefix_tokens=-1), ValueError, "prefix_tokens"),
        (lambda: patch_grid(0, 3), ValueError, "height"),
    ],
)
def test_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
