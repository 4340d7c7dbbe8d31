"""Learned absolute positions: one trainable row per position, like a word embedding."""

from __future__ import annotations

import copy

import torch
from torch import nn

from .._validation import (
    require_elements,
    require_float_tensor,
    require_int,
    require_positive_float,
    require_positive_int,
)

__all__ = ["LearnedPositionalEmbedding", "SequenceTooLongError", "check_fits"]


class SequenceTooLongError(ValueError):
    """A sequence asks for a position that a learned table has no row for."""


def check_fits(length: int, max_len: int, what: str = "This learned position table") -> None:
    """Raise :class:`SequenceTooLongError` if ``length`` positions do not fit in ``max_len`` rows."""
    length = require_int(length, "length", low=0)
    max_len = require_positive_int(max_len, "max_len")
    if length > max_len:
        raise SequenceTooLongError(
            f"{what} has {max_len} rows (positions 0 to {max_len - 1}), but the input has {length} positions. "
            f"A learned table has no row for position {max_len} or beyond, so it cannot extrapolate. "
            "Truncate the input, use a sliding window, or extend or interpolate the table and fine-tune: "
            "transformerland.remedies has each."
        )


class LearnedPositionalEmbedding(nn.Module):
    """A trainable ``(max_len, d_model)`` table whose row ``p`` is added at position ``p``.

    Args:
        max_len: number of rows; positions ``0 … max_len - 1`` exist, no others.
        d_model: width of each row.
        init_std: standard deviation of the normal initialisation (0.02 as in BERT);
            ``None`` keeps ``nn.Embedding``'s default N(0, 1).
    """

    def __init__(self, max_len: int, d_model: int, init_std: float | None = 0.02) -> None:
        super().__init__()
        self.max_len = require_positive_int(max_len, "max_len")
        d_model = require_positive_int(d_model, "d_model")
        require_elements(self.max_len * d_model, "the learned table")
        self.table = nn.Embedding(self.max_len, d_model)
        if init_std is not None:
            nn.init.normal_(self.table.weight, std=require_positive_float(init_std, "init_std"))

    @property
    def weight(self) -> torch.Tensor:
        """The table itself, ``(max_len, d_model)``."""
        return self.table.weight

    def with_table(self, table: torch.Tensor) -> LearnedPositionalEmbedding:
        """A new layer whose rows are a copy of ``table`` ``(N, D)``: it accepts up to ``N`` positions.

        The new rows (an interpolated or extended table, say) are trainable and sit on this
        layer's device, in its dtype; this layer is left unchanged.
        """
        require_float_tensor(table, "table", ndim=2)
        width = self.table.embedding_dim
        if table.shape[1] != width:
            raise ValueError(
                f"table has rows of width {table.shape[1]}, "
                f"but the position table it replaces has rows of width {width}."
            )
        weight = table.detach().clone().to(device=self.weight.device, dtype=self.weight.dtype)
        layer = copy.deepcopy(self)
        layer.table = nn.Embedding.from_pretrained(weight, freeze=False)
        layer.max_len = weight.shape[0]
        return layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: ``(B, T, D)``, floating → ``x + table[:T]``; raises if ``T > max_len``."""
        require_float_tensor(x, "x", ndim=3)
        if x.shape[-1] != self.table.embedding_dim:
            raise ValueError(f"x has width {x.shape[-1]} but this table has d_model={self.table.embedding_dim}.")
        check_fits(x.shape[1], self.max_len)
        if x.device != self.weight.device:
            raise ValueError(
                f"x is on {x.device} but the table is on {self.weight.device}: "
                f"move x with .to({str(self.weight.device)!r})."
            )
        return x + self.table.weight[: x.shape[1]]
