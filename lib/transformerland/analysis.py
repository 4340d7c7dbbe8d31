"""Tools for looking inside a position table: similarities, offsets, probes and projections."""

from __future__ import annotations

import torch

from ._validation import require_positive_int, require_tensor

__all__ = ["cosine_similarity_matrix", "linear_position_probe", "pca", "similarity_by_offset"]


def cosine_similarity_matrix(table: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of every pair of rows: ``(N, D)`` → ``(N, N)``."""
    require_tensor(table, "table", ndim=2)
    unit = torch.nn.functional.normalize(table.detach().float(), dim=1)
    return unit @ unit.T


def similarity_by_offset(similarity: torch.Tensor, max_offset: int | None = None) -> torch.Tensor:
    """Mean of ``similarity[p, p + k]`` over ``p``, for ``k = 0 … max_offset``: ``(N, N)`` → ``(K + 1,)``."""
    require_tensor(similarity, "similarity", ndim=2)
    n = similarity.shape[0]
    max_offset = n - 1 if max_offset is None else min(require_positive_int(max_offset, "max_offset"), n - 1)
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
        ridge: the penalty, relative to the table's scale.
        seed: seed of the split into folds.
    """
    require_tensor(table, "table", ndim=2)
    n = table.shape[0]
    folds = require_positive_int(folds, "folds")
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
    """
    require_tensor(table, "table", ndim=2)
    k = require_positive_int(k, "k")
    centred = table.detach().double() - table.detach().double().mean(0)
    _, s, vh = torch.linalg.svd(centred, full_matrices=False)
    variance = s**2
    return (centred @ vh[:k].T).float(), (variance / variance.sum()).float()
