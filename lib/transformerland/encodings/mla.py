"""Multi-head latent attention (DeepSeek-V2/V3) and its decoupled rotary key, in small pieces.

MLA caches one latent vector ``c_j = W_DKV h_j`` of width ``d_c`` per token instead of every
head's key and value. Head ``a``'s content key is ``k_j^a = W_UK^a c_j`` and its query
``q_i^a = W_UQ^a c'_i`` (``c'_i`` the query's own latent), so the content score is

    q_i^aᵀ k_j^a = c'_iᵀ (W_UQ^aᵀ W_UK^a) c_j,

and the product ``W_UQ^aᵀ W_UK^a`` can be computed once ("absorbed"): keys never need to be
expanded out of the cache. With RoPE on those keys the score would become
``c'_iᵀ W_UQ^aᵀ R((j - i)θ) W_UK^a c_j``: a rotation that depends on the distance sits between the
two matrices, and no fixed product can stand in for it. DeepSeek-V2 therefore leaves the content
part unrotated and adds a small *decoupled* rotary part of width ``d_R``: a per-head rotary query
``q_R^a`` and one rotary key ``k_R`` shared by all heads, cached beside ``c_j``:

    score_ij^a = q_i^aᵀ k_j^a + RoPE(q_R,i^a, i)ᵀ RoPE(k_R,j, j).

The cache per token and layer is ``d_c + d_R`` numbers (512 + 64 = 576 in DeepSeek-V2 and V3),
against ``2 · n_h · d_h`` for multi-head attention with the same heads.
"""

from __future__ import annotations

import torch

from .._validation import require_float_tensor, require_positive_float, require_positive_int, require_same
from .rotary import apply_rotary

__all__ = [
    "absorbed_weights",
    "decoupled_rope_scores",
    "kv_cache_per_token",
    "mla_content_scores",
]


def kv_cache_per_token(
    kind: str, *, n_layers: int, n_heads: int = 0, head_dim: int = 0, kv_lora_rank: int = 0, rope_dim: int = 0
) -> int:
    """Numbers cached per token over all layers.

    ``kind`` ``"mha"``: ``2 · n_heads · head_dim`` per layer (a key and a value per head; pass the
    key-value heads' count for grouped-query attention); ``"mla"``: ``kv_lora_rank + rope_dim``
    (the latent and the shared rotary key).
    """
    n_layers = require_positive_int(n_layers, "n_layers")
    if kind == "mha":
        return 2 * require_positive_int(n_heads, "n_heads") * require_positive_int(head_dim, "head_dim") * n_layers
    if kind == "mla":
        return (
            require_positive_int(kv_lora_rank, "kv_lora_rank") + require_positive_int(rope_dim, "rope_dim")
        ) * n_layers
    raise ValueError(f"kind must be 'mha' (also for grouped-query attention) or 'mla', got {kind!r}.")


def _weights(w: torch.Tensor, name: str) -> torch.Tensor:
    return require_float_tensor(w, name, ndim=3)


def absorbed_weights(w_uq: torch.Tensor, w_uk: torch.Tensor) -> torch.Tensor:
    """``W_UQ^aᵀ W_UK^a`` for every head: ``(H, d_q, d_h)`` and ``(H, d_c, d_h)`` → ``(H, d_q, d_c)``.

    ``w_uq[a]`` maps a query latent (width ``d_q``) to head ``a``'s query, ``w_uk[a]`` a key latent
    (width ``d_c``) to its key, both as ``latent @ w``.
    """
    _weights(w_uq, "w_uq"), _weights(w_uk, "w_uk")
    require_same([("w_uq", w_uq), ("w_uk", w_uk)])
    if w_uq.shape[0] != w_uk.shape[0] or w_uq.shape[2] != w_uk.shape[2]:
        raise ValueError(
            f"w_uq (H, d_q, d_h) and w_uk (H, d_c, d_h) must agree in heads and head width, "
            f"got {tuple(w_uq.shape)} and {tuple(w_uk.shape)}."
        )
    return w_uq @ w_uk.transpose(1, 2)


def mla_content_scores(
    q_latent: torch.Tensor,
    kv_latent: torch.Tensor,
    w_uq: torch.Tensor,
    w_uk: torch.Tensor,
    *,
    absorb: bool,
    rope: bool = False,
    base: float = 10000.0,
) -> torch.Tensor:
    """Content scores ``(H, T_q, T_k)`` of MLA, computed with expanded keys or with absorbed weights.

    Args:
        q_latent: ``(T_q, d_q)`` query latents at positions ``0 … T_q - 1``.
        kv_latent: ``(T_k, d_c)`` cached latents at positions ``0 … T_k - 1``.
        w_uq: ``(H, d_q, d_h)``; w_uk: ``(H, d_c, d_h)``.
        absorb: ``False`` expands ``q = q_latent @ w_uq`` and ``k = kv_latent @ w_uk`` per head and takes
            ``q kᵀ``; ``True`` uses ``q_latent @ absorbed_weights(w_uq, w_uk) @ kv_latentᵀ`` and never builds a key.
        rope: rotate the expanded queries and keys by their positions (``absorb=False`` only: the
            absorbed product has no place for a rotation, which is the point).
        base: RoPE's base, with ``rope=True``.
    """
    require_float_tensor(q_latent, "q_latent", ndim=2), require_float_tensor(kv_latent, "kv_latent", ndim=2)
    if not isinstance(absorb, bool) or not isinstance(rope, bool):
        raise TypeError(f"absorb and rope must be True or False, got absorb={absorb!r}, rope={rope!r}.")
    _weights(w_uq, "w_uq"), _weights(w_uk, "w_uk")
    require_same([("q_latent", q_latent), ("kv_latent", kv_latent), ("w_uq", w_uq), ("w_uk", w_uk)])
    if q_latent.shape[-1] != w_uq.shape[1] or kv_latent.shape[-1] != w_uk.shape[1]:
        raise ValueError(
            f"q_latent (T_q, d_q) must match w_uq (H, d_q, d_h) and kv_latent (T_k, d_c) must match w_uk "
            f"(H, d_c, d_h); got {tuple(q_latent.shape)}, {tuple(w_uq.shape)}, {tuple(kv_latent.shape)}, "
            f"{tuple(w_uk.shape)}."
        )
    if absorb:
        if rope:
            raise ValueError(
                "absorb=True cannot rotate: a rotation by the distance would sit between W_UQ and W_UK, so no "
                "fixed product absorbs it. Use absorb=False with rope=True, or decoupled_rope_scores."
            )
        return q_latent @ absorbed_weights(w_uq, w_uk) @ kv_latent.T  # (H, T_q, T_k)
    _weights(w_uq, "w_uq"), _weights(w_uk, "w_uk")
    q, k = q_latent @ w_uq, kv_latent @ w_uk  # (H, T_q, d_h), (H, T_k, d_h)
    if rope:
        base = require_positive_float(base, "base")
        q, k = apply_rotary(q, base=base), apply_rotary(k, base=base)
    return q @ k.transpose(1, 2)


def decoupled_rope_scores(q_rope: torch.Tensor, k_rope: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """The decoupled rotary part ``(H, T_q, T_k)``: per-head rotary queries against one shared rotary key.

    Args:
        q_rope: ``(H, T_q, d_R)`` rotary queries, one per head, at positions ``0 … T_q - 1``.
        k_rope: ``(T_k, d_R)`` the shared rotary key of each cached token (the same for every head).
        base: RoPE's base.
    """
    require_float_tensor(q_rope, "q_rope", ndim=3), require_float_tensor(k_rope, "k_rope", ndim=2)
    require_same([("q_rope", q_rope), ("k_rope", k_rope)])
    if q_rope.shape[-1] != k_rope.shape[-1]:
        raise ValueError(
            f"q_rope (H, T_q, d_R) and k_rope (T_k, d_R) must share d_R, got {tuple(q_rope.shape)} and "
            f"{tuple(k_rope.shape)}."
        )
    base = require_positive_float(base, "base")
    return apply_rotary(q_rope, base=base) @ apply_rotary(k_rope, base=base).T
