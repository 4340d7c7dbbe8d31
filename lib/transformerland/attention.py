"""Scaled dot-product self-attention, small enough to read in one sitting.

Shapes use ``B`` for batch, ``H`` for heads, ``T`` for sequence length (tokens),
``D`` for the model width and ``d`` for the width of one head.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._validation import (
    MAX_HEADS,
    optional_device,
    require_bool,
    require_choice,
    require_elements,
    require_float_tensor,
    require_min_dims,
    require_positive_float,
    require_positive_int,
    require_real,
    require_same,
)
from .encodings.alibi import alibi_bias
from .encodings.rope_scaling import depends_on_length, rope_frequencies
from .encodings.rotary import apply_rotary

__all__ = [
    "ATTENTION_POSITIONS",
    "SelfAttention",
    "causal_mask",
    "check_heads",
    "scaled_dot_product_attention",
    "single_head_attention",
]


def causal_mask(length: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Boolean ``(T, T)`` mask, ``True`` where query ``i`` may attend to key ``j`` (``j <= i``)."""
    length = require_positive_int(length, "length")
    device = optional_device(device)
    require_elements(length * length, "the causal mask")
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention ``softmax(q kᵀ / √d + bias) v``.

    Args:
        q: queries, ``(..., T_q, d)``.
        k: keys, ``(..., T_k, d)``.
        v: values, ``(..., T_k, d_v)``.
        mask: optional boolean, broadcastable to ``(..., T_q, T_k)``; ``False`` blocks a pair.
        bias: optional additive scores, broadcastable to ``(..., T_q, T_k)`` (ALiBi uses this).

    ``q``, ``k``, ``v`` and ``bias`` must be floating tensors of one dtype on one device.

    Returns:
        ``(output, weights)`` with shapes ``(..., T_q, d_v)`` and ``(..., T_q, T_k)``. Degenerate
        cases, by definition: a query whose every key is masked out attends to nothing, so its
        weights are all 0 and its output is 0 (not the NaN of a softmax over no keys); with no
        keys at all (``T_k = 0``) every output is 0 as well.
    """
    _check_attention_inputs(q, k, v, mask, bias)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if bias is not None:
        scores = scores + bias
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)  # a row with no key: zeros
    return weights @ v, weights


def _check_attention_inputs(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, bias: torch.Tensor | None
) -> None:
    """Raise a clear error unless ``q``, ``k``, ``v``, ``mask`` and ``bias`` fit together as in attention."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        require_min_dims(require_float_tensor(t, name), name, 2, "..., tokens, features")
    require_same([("q", q), ("k", k), ("v", v)])
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same feature size to be compared, got q {tuple(q.shape)} and k {tuple(k.shape)}."
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have one row per key, got k {tuple(k.shape)} and v {tuple(v.shape)}.")
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "q, k and v must agree in their leading (batch, head) dimensions, "
            f"got q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)}."
        ) from None
    score_shape = (*batch, q.shape[-2], k.shape[-2])
    if mask is not None:
        if not isinstance(mask, torch.Tensor):
            raise TypeError(f"mask must be a boolean torch.Tensor (True = may attend), got {type(mask).__name__}.")
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}.")
        _require_broadcastable(mask, "mask", score_shape)
        if mask.device != q.device:
            raise ValueError(f"mask is on {mask.device} but q is on {q.device}: move it with .to(q.device).")
    if isinstance(bias, torch.Tensor):
        require_float_tensor(bias, "bias")
        require_same([("q", q), ("bias", bias)])
        _require_broadcastable(bias, "bias", score_shape)
    elif bias is not None:
        require_real(bias, "bias", what="a tensor of additive scores or one finite number")


def _require_broadcastable(t: torch.Tensor, name: str, shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` unless ``t`` broadcasts to ``shape`` without changing it."""
    try:
        fits = torch.broadcast_shapes(t.shape, shape) == torch.Size(shape)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name} must broadcast to the scores' shape {shape} (queries × keys), got shape {tuple(t.shape)}."
        )


#: Where positions can enter attention itself: nowhere, by rotating queries and keys (RoPE),
#: or by a distance penalty on the scores (ALiBi).
ATTENTION_POSITIONS = ("none", "rope", "alibi")


def check_heads(d_model: int, n_heads: int, position: str = "none") -> tuple[int, int]:
    """Check that ``n_heads`` heads can share ``d_model`` (and rotate their pairs, for RoPE); returns both."""
    d_model = require_positive_int(d_model, "d_model")
    n_heads = require_positive_int(n_heads, "n_heads", cap=MAX_HEADS)
    position = require_choice(position, "position", ATTENTION_POSITIONS)
    if d_model % n_heads:
        raise ValueError(f"n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}.")
    if position == "rope" and (d_model // n_heads) % 2:
        raise ValueError(f"rotary attention needs an even head width, got d_model/n_heads = {d_model // n_heads}.")
    return d_model, n_heads


class SelfAttention(nn.Module):
    """Multi-head self-attention with an optional causal mask and one way for positions to enter.

    Args:
        d_model: width ``D`` of the token vectors.
        n_heads: number of heads ``H``; must divide ``d_model``.
        causal: if ``True``, token ``i`` sees only tokens ``0..i`` (a real ``bool``).
        position: one of :data:`ATTENTION_POSITIONS`: ``"none"``, ``"rope"`` (rotate queries and keys
            by their positions in every head) or ``"alibi"`` (add ALiBi's linear distance penalty to
            the scores).
        rope_base: base of the rotary frequencies (used with ``position="rope"``).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        causal: bool = False,
        position: str = "none",
        rope_base: float = 10000.0,
    ) -> None:
        super().__init__()
        self.position = require_choice(position, "position", ATTENTION_POSITIONS)
        d_model, self.n_heads = check_heads(d_model, n_heads, position)
        self.causal = require_bool(causal, "causal", "True: each token sees only its past")
        self.rope_base = require_positive_float(rope_base, "rope_base")
        require_elements(3 * d_model * d_model, "the attention weights")
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        # The causal mask, kept between calls and grown when a longer input arrives; not saved with the weights.
        self.register_buffer("mask", torch.ones(0, 0, dtype=torch.bool), persistent=False)
        # RoPE scaling recipe (a rope_parameters dict, None = plain RoPE), set by encodings.set_rope_scaling.
        self.rope_scaling: dict | None = None

    def forward(
        self, x: torch.Tensor, return_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``x``: ``(B, T, D)`` floating, ``T ≥ 1`` → ``(B, T, D)``; with ``return_weights`` also ``(B, H, T, T)``."""
        return_weights = require_bool(return_weights, "return_weights", "also return the attention weights")
        q, k, v = self.split_heads(x)  # each (B, H, T, d)
        batch, length, width = x.shape
        q, k = self._rotate(q, k)
        mask = self._causal_mask(length) if self.causal else None  # (T, T)
        alibi = self.position == "alibi"
        bias = alibi_bias(self.n_heads, length, causal=self.causal, device=x.device) if alibi else None  # (H, T, T)
        heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)  # (B, H, T, d), (B, H, T, T)
        y = self.out(heads.transpose(1, 2).reshape(batch, length, width))  # heads side by side again: (B, T, D)
        return (y, weights) if return_weights else y

    def split_heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys and values of ``x`` ``(B, T, D)``, each split into heads: ``(B, H, T, d)``, ``d = D / H``."""
        require_float_tensor(x, "x", ndim=3)
        batch, length, width = x.shape
        if width != self.qkv.in_features:
            raise ValueError(f"x has width {width} but this attention layer expects d_model={self.qkv.in_features}.")
        if length == 0:
            raise ValueError("x holds no tokens (shape (B, 0, D)): attention needs at least one token.")
        require_same([("the layer's weights", self.qkv.weight), ("x", x)])
        q, k, v = self.qkv(x).view(batch, length, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        return q, k, v

    def _rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """RoPE's one step: turn queries and keys ``(B, H, T, d)`` by their positions; unchanged otherwise."""
        if self.position != "rope":
            return q, k
        inv_freq, gain = self._frequencies(q.shape[-1], q.shape[-2])  # (d/2,)
        return apply_rotary(q, inv_freq=inv_freq, attention_factor=gain), apply_rotary(
            k, inv_freq=inv_freq, attention_factor=gain
        )

    def _frequencies(self, head_dim: int, length: int) -> tuple[torch.Tensor, float]:
        """The recipe's ``(inv_freq (d/2,), attention factor)``, kept between calls.

        Computed again only when the recipe or the base changes, or, for a recipe that reads the current
        length (dynamic NTK, LongRoPE: ``LENGTH_DEPENDENT``), when the length does.
        """
        scaling = self.rope_scaling
        key = (head_dim, self.rope_base, repr(scaling), length if depends_on_length(scaling) else None)
        if getattr(self, "_rope_key", None) != key:
            self._rope_cached = rope_frequencies(head_dim, self.rope_base, scaling, seq_len=length)
            self._rope_key = key
        return self._rope_cached

    def _causal_mask(self, length: int) -> torch.Tensor:
        """The ``(T, T)`` causal mask, cut from the kept one (rebuilt only for a longer input)."""
        if self.mask.shape[0] < length:
            self.mask = causal_mask(length, self.mask.device)
        return self.mask[:length, :length]


def single_head_attention(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One attention head with its three weight matrices in plain sight.

    ``Q = x W_q``, ``K = x W_k``, ``V = x W_v``, then ``softmax(Q Kᵀ / √d_k) V``: no biases,
    no output projection and no positions, so every step of the formula is visible.

    Args:
        x: token vectors, ``(T, D)`` or ``(B, T, D)``.
        w_q: query weights, ``(D, d_k)``.
        w_k: key weights, ``(D, d_k)``.
        w_v: value weights, ``(D, d_v)``.
        mask: optional boolean, broadcastable to ``(..., T, T)``; ``False`` blocks query ``i``
            from key ``j`` (pass :func:`causal_mask` for a decoder).

    Returns:
        ``(output, weights)`` with shapes ``(..., T, d_v)`` and ``(..., T, T)``; each row of
        ``weights`` sums to 1.
    """
    require_float_tensor(x, "x", ndim=(2, 3))
    width = x.shape[-1]
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        require_float_tensor(w, name, ndim=2)
        if w.shape[0] != width:
            raise ValueError(
                f"{name} must have one row per input feature: x has width {width}, so {name} needs shape "
                f"({width}, ...), got {tuple(w.shape)}."
            )
        if w.dtype != x.dtype:
            raise TypeError(f"{name} has dtype {w.dtype} but x has dtype {x.dtype}; convert with .to(x.dtype).")
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(
            "w_q and w_k must give queries and keys of the same width d_k, "
            f"got w_q {tuple(w_q.shape)} and w_k {tuple(w_k.shape)}."
        )
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask=mask)
