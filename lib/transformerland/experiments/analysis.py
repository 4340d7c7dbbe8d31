"""Tools for looking inside a position table: similarities, offsets, probes and projections."""

from __future__ import annotations

import torch

from .._validation import (
    require_elements,
    require_float_tensor,
    require_int,
    require_positive_float,
    require_positive_int,
)

__all__ = ["cosine_similarity_matrix", "linear_position_probe", "pca", "similarity_by_offset"]


def cosine_similarity_matrix(table: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of every pair of rows: ``(N, D)`` floating → ``(N, N)`` float32.

    A row of zeros has no direction: its similarity with every row, itself included, is 0.
    """
    require_float_tensor(table, "table", ndim=2)
    require_elements(table.shape[0] ** 2, "the similarity matrix (rows × rows)")
    unit = torch.nn.functional.normalize(table.detach().float(), dim=1)
    return unit @ unit.T


def similarity_by_offset(similarity: torch.Tensor, max_offset: int | None = None) -> torch.Tensor:
    """Mean of ``similarity[p, p + k]`` over ``p``, for ``k = 0 … max_offset``: ``(N, N)`` → ``(K + 1,)``.

    ``similarity`` must be square and floating (one row and one column per position); ``max_offset``
    (``K``, default ``N - 1``) is at most ``N - 1``, the largest offset an ``(N, N)`` matrix has.
    """
    require_float_tensor(similarity, "similarity", ndim=2)
    n = similarity.shape[0]
    if similarity.shape[1] != n or n == 0:
        raise ValueError(
            f"similarity must be a square (N, N) matrix with N ≥ 1, one row and column per position, got shape "
            f"{tuple(similarity.shape)}: pass cosine_similarity_matrix(table)."
        )
    if max_offset is None:
        max_offset = n - 1
    elif require_positive_int(max_offset, "max_offset") > n - 1:
        raise ValueError(
            f"max_offset = {max_offset}, but a ({n}, {n}) matrix has offsets up to {n - 1} only: pass "
            f"max_offset ≤ {n - 1} (or None for all of them)."
        )
    return torch.stack([similarity.diagonal(k).mean() for k in range(max_offset + 1)])


def linear_position_probe(table: torch.Tensor, folds: int = 5, ridge: float = 1e-3, seed: int = 0) -> float:
    """How well a linear map recovers each row's position from its vector.

    Ridge regression from row to index, scored by ``folds``-fold cross-validation. The penalty is
    ``ridge`` times the training rows' squared deviations from their column means, summed over the
    rows and averaged over the ``D`` columns (``trace(XᵀX) / D`` for the centred ``X``), so it does
    not depend on the table's scale: a table and ten times that table get the same answer. Returns
    the mean absolute error in positions (chance is about ``N / 4`` for ``N`` rows when always
    guessing the middle).

    Args:
        table: ``(N, D)`` one vector per position.
        folds: cross-validation folds, 2 to ``N``.
        ridge: the penalty, relative to the table's scale: a finite number above 0.
        seed: seed of the split into folds.

    A table that is constant on some fold's training rows holds nothing to read: it is refused.
    """
    require_float_tensor(table, "table", ndim=2)
    n = table.shape[0]
    folds = require_positive_int(folds, "folds")
    ridge = require_positive_float(ridge, "ridge")
    seed = require_int(seed, "seed", low=0)
    if not 2 <= folds <= n:
        raise ValueError(f"folds must lie between 2 and the number of rows ({n}), got {folds}.")
    x = table.detach().double()
    y = torch.arange(n, dtype=torch.float64)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    errors = torch.empty(n, dtype=torch.float64)
    for fold in order.chunk(folds):
        train = torch.ones(n, dtype=torch.bool)
        train[fold] = False
        xm, ym = x[train].mean(0), y[train].mean()
        xt = x[train] - xm
        gram = xt.T @ xt  # (D, D)
        scale = torch.trace(gram) / x.shape[1]
        if scale == 0:
            raise ValueError(
                "Every column of the table is constant on the training rows: there is nothing to read; "
                "pass a table whose rows differ."
            )
        penalty = ridge * scale
        weights = torch.linalg.solve(gram + penalty * torch.eye(x.shape[1], dtype=x.dtype), xt.T @ (y[train] - ym))
        errors[fold] = ((x[fold] - xm) @ weights + ym - y[fold]).abs()
    return float(errors.mean())


def pca(table: torch.Tensor, k: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    """Project rows on their top ``k`` principal components.

    Returns ``(coordinates (N, k), explained-variance ratio of all components (min(N, D),))``.
    ``k`` must be at most ``min(N, D)``, the number of components there are. A constant table
    (no variance at all) has no principal direction: it is refused.
    """
    require_float_tensor(table, "table", ndim=2)
    k = require_positive_int(k, "k")
    if k > min(table.shape):
        raise ValueError(
            f"k = {k}, but a table of shape {tuple(table.shape)} has only {min(table.shape)} principal components: "
            f"pass k ≤ {min(table.shape)}."
        )
    centred = table.detach().double() - table.detach().double().mean(0)
    _, s, vh = torch.linalg.svd(centred, full_matrices=False)
    variance = s**2
    if not bool(variance.sum() > 0):
        raise ValueError("every row of the table is the same: there is no variance to explain; pass rows that differ.")
    return (centred @ vh[:k].T).float(), (variance / variance.sum()).float()
