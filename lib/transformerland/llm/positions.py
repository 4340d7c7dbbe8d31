"""Positions at inference time: a batch with padding, and masks that limit what each token sees.

A language model reading a batch pads the short rows; each real token's position must then be
counted from the first real token of its row (:func:`position_ids_from_mask`), not from the
first slot. :func:`sliding_window_mask` builds the additive mask of a sliding window, with
StreamingLLM's attention sinks.
"""

from __future__ import annotations

import torch

from .._validation import optional_device, require_elements, require_int, require_positive_int, require_tensor

__all__ = ["position_ids_from_mask", "sliding_window_mask"]


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Each real token's position, counted from 0 at the first real token of its row, padding skipped.

    ``position = (number of real tokens up to and including this one) - 1``; padding slots
    (mask 0) get position 0, a valid position whose value never matters because the mask
    hides them. With left padding, ``[[0, 0, 1, 1, 1]]`` gives ``[[0, 0, 0, 1, 2]]``.

    Args:
        attention_mask: ``(B, T)`` of 0 (padding) and 1 (a real token), integer or bool.

    Returns:
        ``(B, T)`` long tensor of position ids, on the mask's device.
    """
    require_tensor(attention_mask, "attention_mask", ndim=2)
    if attention_mask.dtype.is_floating_point or attention_mask.dtype.is_complex:
        raise TypeError(
            f"attention_mask must hold integers or booleans (1 = token, 0 = padding), got dtype "
            f"{attention_mask.dtype}; a float mask of 0 and -inf is a different object: convert with (mask == 0)."
        )
    mask = attention_mask.long()
    if mask.numel() and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(
            f"attention_mask must hold only 0 (padding) and 1 (a real token), got values {mask.unique().tolist()}."
        )
    empty = (mask.sum(dim=1) == 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"row(s) {empty} of attention_mask hold no real token (all 0): drop them from the batch.")
    return ((mask.cumsum(dim=1) - 1) * mask).long()


def sliding_window_mask(
    length: int, window: int, sinks: int = 0, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """An additive causal mask ``(1, 1, T, T)`` of 0 and -inf: each query sees its last ``window`` tokens.

    Query ``i`` sees key ``j`` when ``i - window < j ≤ i``, and also when ``j < sinks``: the
    first ``sinks`` tokens stay visible to every later query, as in StreamingLLM. Pass it to a
    transformers Llama model as ``attention_mask``.
    """
    length = require_positive_int(length, "length")
    window = require_positive_int(window, "window")
    sinks = require_int(sinks, "sinks (how many first tokens stay visible)", low=0)
    device = optional_device(device)
    require_elements(length * length, "the mask (length × length)")
    i = torch.arange(length, device=device)[:, None]
    j = torch.arange(length, device=device)[None, :]
    visible = (j <= i) & ((i - j < window) | (j < sinks))
    return torch.zeros(length, length, device=device).masked_fill(~visible, float("-inf"))[None, None]
