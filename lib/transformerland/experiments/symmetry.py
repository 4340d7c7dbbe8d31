"""Permutation symmetry: shuffle the tokens of a sequence and measure what changes.

A function ``f`` of a sequence is *permutation-equivariant* when shuffling its input rows
shuffles its output rows in the same way, ``f(x[π]) = f(x)[π]``, and *permutation-invariant*
when shuffling changes nothing at all, ``f(x[π]) = f(x)``. Self-attention without positions
is the first kind; self-attention followed by :func:`mean_pool` is the second.

Tokens lie along dimension ``-2`` throughout: ``(T, D)`` or ``(B, T, D)``. A permutation
``π`` of length ``T`` lists, for each new position ``i``, the old position ``π[i]`` whose token
moves there, so ``permute_tokens(x, π)[i] = x[π[i]]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from .._validation import require_callable, require_float_tensor, require_min_dims, require_tensor

__all__ = ["equivariance_gap", "invariance_gap", "mean_pool", "permute_tokens"]


def _as_permutation(perm: torch.Tensor | Sequence[int], length: int) -> torch.Tensor:
    """``perm`` as a long tensor, after checking it reorders exactly ``0 … length-1``."""
    if isinstance(perm, torch.Tensor):
        if perm.dtype.is_floating_point or perm.dtype.is_complex or perm.dtype == torch.bool:
            raise TypeError(f"perm must hold integer positions, got dtype {perm.dtype}.")
        perm = perm.detach().cpu().long()
    else:
        try:
            perm = torch.as_tensor(list(perm), dtype=torch.long)
        except (TypeError, ValueError):
            raise TypeError(f"perm must be a sequence of integer positions, got {perm!r}.") from None
    if perm.dim() != 1 or perm.numel() != length or not torch.equal(perm.sort().values, torch.arange(length)):
        raise ValueError(
            f"perm must list each of the positions 0 … {length - 1} exactly once (one entry per token), "
            f"got {perm.tolist()}."
        )
    return perm


def permute_tokens(x: torch.Tensor, perm: torch.Tensor | Sequence[int]) -> torch.Tensor:
    """Reorder the tokens of ``x``: ``(..., T, D)`` → ``(..., T, D)`` with row ``i`` = old row ``perm[i]``."""
    require_min_dims(require_tensor(x, "x"), "x", 2, "..., tokens, features")
    return x[..., _as_permutation(perm, x.shape[-2]).to(x.device), :]


def mean_pool(x: torch.Tensor) -> torch.Tensor:
    """Average over the tokens: ``(..., T, D)`` floating → ``(..., D)``. The order of the rows cannot matter.

    With no tokens (``T = 0``) there is nothing to average: refused.
    """
    require_min_dims(require_float_tensor(x, "x"), "x", 2, "..., tokens, features")
    if x.shape[-2] == 0:
        raise ValueError(f"x holds no tokens (shape {tuple(x.shape)}): there is nothing to average.")
    return x.mean(dim=-2)


def _apply(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    require_callable(fn, "fn", "a function or module taking x")
    with torch.no_grad():
        y = fn(x)
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"fn must return a tensor, got {type(y).__name__}.")
    return y


def equivariance_gap(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, perm: torch.Tensor | Sequence[int]
) -> float:
    """Largest ``|fn(x[π]) - fn(x)[π]|``: zero (to rounding) when ``fn`` is permutation-equivariant.

    Args:
        fn: maps ``(..., T, D)`` to ``(..., T, D')``, one output row per token.
        x: the input, ``(..., T, D)``.
        perm: a permutation of ``0 … T-1``.
    """
    shuffled_first = _apply(fn, permute_tokens(x, perm))
    original = _apply(fn, x)
    if original.dim() < 2 or original.shape[-2] != x.shape[-2]:
        raise ValueError(
            f"fn must return one row per token, shape (..., {x.shape[-2]}, D'), got {tuple(original.shape)}; "
            "for a pooled output, which has no rows left to shuffle, use invariance_gap."
        )
    return float((shuffled_first - permute_tokens(original, perm)).abs().max())


def invariance_gap(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, perm: torch.Tensor | Sequence[int]
) -> float:
    """Largest ``|fn(x[π]) - fn(x)|``: zero (to rounding) when ``fn`` ignores the order of the tokens.

    Args:
        fn: maps ``(..., T, D)`` to any tensor (a pooled ``(..., D')``, a score, ...).
        x: the input, ``(..., T, D)``.
        perm: a permutation of ``0 … T-1``.
    """
    shuffled = _apply(fn, permute_tokens(x, perm))
    original = _apply(fn, x)
    if shuffled.shape != original.shape:
        raise ValueError(f"fn gave shapes {tuple(original.shape)} and {tuple(shuffled.shape)} for the two orders.")
    return float((shuffled - original).abs().max())
