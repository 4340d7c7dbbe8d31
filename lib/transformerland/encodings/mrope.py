"""M-RoPE (Qwen2-VL): one rotary head, its pairs shared out among time, height and width.

Every token has three position ids ``(t, h, w)``. The ``d/2`` frequencies ``θ_i = b^(-2i/d)``
are cut, in order, into ``mrope_section = (s_t, s_h, s_w)`` consecutive groups (``s_t + s_h + s_w
= d/2``; Qwen2-VL's head of 128 uses ``(16, 24, 24)``), and pair ``i`` of group ``g`` turns by the
position on axis ``g``:

    angle_i = pos[axis(i)] · θ_i,   axis(i) = 0 (time) for i < s_t, 1 (height) for the next s_h, 2 (width) after.

Text tokens get the same id on all three axes, so for text M-RoPE is plain RoPE. An image of
``h × w`` patches (after merging) placed at position ``p`` gets ``(p, p + row, p + col)``, a video adds
its frame index to ``t``, and the text after it resumes one past the largest id used.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .._validation import (
    require_elements,
    require_even,
    require_float_tensor,
    require_position_tensor,
    require_positive_float,
    require_positive_int,
)
from .rotary import rotate_half
from .sinusoidal import sinusoid_frequencies

__all__ = ["apply_mrope", "mrope_angles", "mrope_axes", "mrope_position_ids"]


def mrope_axes(mrope_section: Sequence[int]) -> torch.Tensor:
    """Which axis (0 time, 1 height, 2 width) each pair reads, shape ``(sum(mrope_section),)``, int64."""
    if isinstance(mrope_section, str | bytes) or not isinstance(mrope_section, Sequence):
        raise TypeError(f"mrope_section must be a list of three pair counts, e.g. [16, 24, 24]; got {mrope_section!r}.")
    if len(mrope_section) != 3:
        raise ValueError(f"mrope_section must have three counts (time, height, width), got {list(mrope_section)}.")
    counts = [require_positive_int(n, f"mrope_section[{i}]") for i, n in enumerate(mrope_section)]
    return torch.repeat_interleave(torch.arange(3), torch.tensor(counts))


def mrope_angles(
    position_ids: torch.Tensor, head_dim: int, mrope_section: Sequence[int], base: float = 10000.0
) -> torch.Tensor:
    """Angles ``(T, head_dim/2)``, float64: pair ``i`` of token ``j`` turns by ``position_ids[axis(i), j] · θ_i``.

    Args:
        position_ids: ``(3, T)`` integer or float positions on the time, height and width axes.
        head_dim: the head width ``d`` (even); ``sum(mrope_section)`` must be ``d/2``.
        mrope_section: pairs given to time, height and width, in that order.
        base: frequency base.
    """
    require_position_tensor(position_ids, "position_ids", ndim=2)
    if position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must have shape (3, T): time, height, width; got {tuple(position_ids.shape)}.")
    head_dim = require_even(require_positive_int(head_dim, "head_dim"), "head_dim", "RoPE rotates pairs.")
    axes = mrope_axes(mrope_section)  # (d/2,)
    if axes.numel() != head_dim // 2:
        raise ValueError(
            f"mrope_section {list(mrope_section)} shares out {axes.numel()} pairs, but a head of {head_dim} has "
            f"{head_dim // 2}; the three counts must add up to head_dim / 2."
        )
    theta = sinusoid_frequencies(head_dim, require_positive_float(base, "base"))  # (d/2,)
    chosen = position_ids.to(torch.float64)[axes.to(position_ids.device)]  # (d/2, T): each pair's own axis
    return chosen.T * theta.to(position_ids.device)  # (T, d/2)


def apply_mrope(
    x: torch.Tensor, position_ids: torch.Tensor, mrope_section: Sequence[int], base: float = 10000.0
) -> torch.Tensor:
    """M-RoPE on ``x`` ``(..., T, d)`` in the halves layout (as Qwen2-VL): ``x·cos + rotate_half(x)·sin``.

    ``position_ids`` ``(3, T)`` as in :func:`mrope_angles`. Returns the same shape and dtype as ``x``.
    """
    require_float_tensor(x, "x")
    if x.dim() < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., tokens, features), got shape {tuple(x.shape)}.")
    require_position_tensor(position_ids, "position_ids", ndim=2)
    if position_ids.shape[-1:] != x.shape[-2:-1]:
        raise ValueError(
            f"position_ids must have one column per token of x ({x.shape[-2]}), got shape {tuple(position_ids.shape)}."
        )
    angles = mrope_angles(position_ids, x.shape[-1], mrope_section, base)  # (T, d/2)
    cos, sin = torch.cat([angles.cos()] * 2, -1).to(x.dtype), torch.cat([angles.sin()] * 2, -1).to(x.dtype)
    return x * cos + rotate_half(x) * sin


def mrope_position_ids(segments: Sequence[tuple[str, object]]) -> torch.Tensor:
    """Qwen2-VL's ``(3, T)`` int64 position ids for a sequence of text and image (or video) segments.

    Args:
        segments: in order, ``("text", n)`` for ``n`` text tokens, or ``("image", (t, h, w))`` for a
            grid of ``t`` frames of ``h × w`` patches (after merging; an image has ``t = 1``).

    Text tokens count on from the current position ``p`` with the same id on all three axes; a grid
    placed at ``p`` gets ``(p + frame, p + row, p + col)``, row-major; after a grid, ``p`` becomes one
    past the largest id it used, ``p + max(t, h, w)``: the rule of the Qwen2-VL paper and of
    ``transformers`` 4.x. ``transformers`` 5.x's ``get_rope_index`` moves on by ``max(h, w)`` alone, which
    differs only for a clip with more frames than its longest side.
    """
    if isinstance(segments, str | bytes) or not isinstance(segments, Sequence) or not segments:
        raise TypeError(
            f'segments must be a non-empty list like [("text", 3), ("image", (1, 2, 2))]; got {segments!r}.'
        )
    columns, start, total = [], 0, 0
    for segment in segments:
        if isinstance(segment, str | bytes) or not isinstance(segment, Sequence) or len(segment) != 2:
            raise TypeError(f'each segment is a pair, ("text", n) or ("image", (t, h, w)); got {segment!r}.')
        kind, size = segment
        if kind == "text":
            n = require_positive_int(size, "a text segment's length")
            total = require_elements(total + 3 * n, "the position ids (3 × tokens)")
            columns.append(torch.arange(start, start + n).expand(3, n))
            start += n
        elif kind == "image":
            if not isinstance(size, Sequence) or len(size) != 3:
                raise ValueError(f"an image segment needs its grid (t, h, w), got {size!r}.")
            t, h, w = (require_positive_int(v, "an image grid's size") for v in size)
            total = require_elements(total + 3 * t * h * w, "the position ids (3 × tokens)")
            grid = torch.stack(torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij"))
            ids = grid.reshape(3, -1) + start  # (3, t·h·w)
            columns.append(ids)
            start = int(ids.max()) + 1
        else:
            raise ValueError(f'each segment is ("text", n) or ("image", (t, h, w)); got kind {kind!r}.')
    return torch.cat(columns, dim=1)
