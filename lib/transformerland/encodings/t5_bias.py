"""T5's relative position bias (Raffel et al., 2020): one learned scalar per offset bucket and head.

The offset from a query at position ``i`` to a key at position ``j`` is ``j - i`` (T5's sign: positive
for a key after the query). It is put in a *bucket*: small distances get a bucket each, larger ones share
buckets whose widths grow logarithmically up to ``max_distance``, and every distance beyond shares the last
bucket. In an encoder (``bidirectional``) half of the buckets are for keys before the query and half for
keys after it; in a decoder every key lies before its query and all the buckets count backwards. Each
head then adds its learned value for the bucket to the score, before the softmax.

FIRE (Li et al., 2024) replaces the table of buckets with a small learned network of the log-scaled
distance (divided by the query's log-scaled position), and shows that it can represent T5's bias.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .._validation import MAX_HEADS, require_bool, require_elements, require_index_tensor, require_positive_int

__all__ = ["T5RelativeBias", "t5_relative_buckets"]


def _checked_buckets(n_buckets: int, max_distance: int, bidirectional: bool) -> tuple[int, int, bool]:
    """Validated ``(n_buckets, max_distance, bidirectional)``: enough buckets for an exact and a log range."""
    bidirectional = require_bool(bidirectional, "bidirectional", "True: an encoder's keys on both sides")
    n_buckets = require_positive_int(n_buckets, "n_buckets", cap=1 << 16)
    per_side = n_buckets // 2 if bidirectional else n_buckets
    if bidirectional and n_buckets % 2:
        raise ValueError(
            f"n_buckets must be even when bidirectional (half for keys before the query, half after), got "
            f"{n_buckets}: use {n_buckets - 1} or {n_buckets + 1}."
        )
    if per_side < 2:
        raise ValueError(
            f"n_buckets = {n_buckets} leaves {per_side} bucket(s) per direction; at least 2 are needed (an exact "
            f"range and a logarithmic one): use n_buckets >= {4 if bidirectional else 2}."
        )
    exact = per_side // 2
    max_distance = require_positive_int(max_distance, "max_distance")
    if max_distance <= exact:
        raise ValueError(
            f"max_distance must be larger than the {exact} distances that get a bucket each, got {max_distance}: "
            f"use max_distance >= {exact + 1} (T5: 128 with 32 buckets)."
        )
    return n_buckets, max_distance, bidirectional


def t5_relative_buckets(
    offsets: torch.Tensor, *, bidirectional: bool = True, n_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """The bucket of each offset, as in T5: ``(...)`` integer offsets → ``(...)`` ``torch.long`` buckets.

    Args:
        offsets: key position minus query position, ``j - i``, any shape, an integer dtype.
        bidirectional: ``True`` for an encoder (keys on both sides of the query: buckets
            ``0 … n_buckets/2 - 1`` for keys at or before it, the rest for keys after it); ``False`` for a
            decoder (a key after its query counts as offset 0).
        n_buckets: buckets in all (T5: 32), even when ``bidirectional``, at least 2 per direction.
        max_distance: the distance at which the logarithmic buckets end (T5: 128); farther keys share
            the last bucket of their direction. Larger than the exact range, ``n_buckets`` per direction / 2.

    Within one direction, with ``B`` buckets and ``E = B // 2``: a distance ``d < E`` is bucket ``d``;
    a larger one is ``E + floor(log(d / E) / log(max_distance / E) · (B - E))``, at most ``B - 1``.
    """
    require_index_tensor(offsets, "offsets", what="integer offsets (key position - query position)")
    n_buckets, max_distance, bidirectional = _checked_buckets(n_buckets, max_distance, bidirectional)
    offsets = offsets.long()
    if bidirectional:
        per_side = n_buckets // 2
        side = (offsets > 0).long() * per_side  # keys after the query use the upper half
        distance = offsets.abs()
    else:
        per_side = n_buckets
        side = torch.zeros_like(offsets)
        distance = (-offsets).clamp(min=0)  # a decoder looks back; a later key counts as distance 0
    exact = per_side // 2
    # In float32, the dtype T5's code takes the logarithm in, so that the boundaries fall where T5's do.
    scaled = torch.log(distance.clamp(min=exact).float() / exact) / math.log(max_distance / exact)
    far = (exact + (scaled * (per_side - exact)).long()).clamp(max=per_side - 1)
    return side + torch.where(distance < exact, distance, far)


class T5RelativeBias(nn.Module):
    """T5's learned relative bias: a table ``(n_buckets, n_heads)``, read by each query–key offset's bucket.

    ``forward(query_length, key_length)`` returns the bias ``(n_heads, query_length, key_length)`` to add
    to the attention scores before the softmax (T5 shares one such module across the layers of a stack).
    The table starts at zero, so an untrained bias changes nothing.

    Args:
        n_heads: attention heads, each with its own value per bucket.
        n_buckets, max_distance, bidirectional: as in :func:`t5_relative_buckets`.
    """

    def __init__(self, n_heads: int, n_buckets: int = 32, max_distance: int = 128, *, bidirectional: bool = True):
        super().__init__()
        self.n_heads = require_positive_int(n_heads, "n_heads", cap=MAX_HEADS)
        self.n_buckets, self.max_distance, self.bidirectional = _checked_buckets(n_buckets, max_distance, bidirectional)
        self.table = nn.Parameter(torch.zeros(self.n_buckets, self.n_heads))

    def buckets(self, query_length: int, key_length: int) -> torch.Tensor:
        """The bucket of every (query, key) pair: ``(query_length, key_length)`` ``torch.long``."""
        query_length = require_positive_int(query_length, "query_length")
        key_length = require_positive_int(key_length, "key_length")
        require_elements(self.n_heads * query_length * key_length, "the bias (n_heads × query_length × key_length)")
        device = self.table.device
        offsets = torch.arange(key_length, device=device)[None, :] - torch.arange(query_length, device=device)[:, None]
        return t5_relative_buckets(
            offsets, bidirectional=self.bidirectional, n_buckets=self.n_buckets, max_distance=self.max_distance
        )

    def forward(self, query_length: int, key_length: int) -> torch.Tensor:
        """The bias ``(n_heads, query_length, key_length)``: entry ``(h, i, j)`` is head ``h``'s value for ``j - i``."""
        return self.table[self.buckets(query_length, key_length)].permute(2, 0, 1)
