"""Permutation symmetry helpers: shuffling, pooling, and the two gaps, with clear errors."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from transformerland.symmetry import equivariance_gap, invariance_gap, mean_pool, permute_tokens


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_permute_tokens_moves_old_row_perm_i_to_row_i():
    x = rand(2, 4, 3)
    y = permute_tokens(x, [2, 0, 3, 1])
    assert torch.equal(y[:, 0], x[:, 2]) and torch.equal(y[:, 3], x[:, 1])
    assert torch.equal(permute_tokens(x, torch.tensor([2, 0, 3, 1])), y)


@pytest.mark.parametrize(
    ("perm", "error", "message"),
    [
        ([0, 1, 1, 3], ValueError, "exactly once"),
        ([0, 1, 2], ValueError, "exactly once"),
        ([0, 1, 2, 4], ValueError, r"0 … 3"),
        (torch.tensor([0.0, 1.0, 2.0, 3.0]), TypeError, "integer positions"),
        (["a", "b", "c", "d"], TypeError, "integer positions"),
    ],
)
def test_permute_tokens_rejects_what_is_not_a_permutation(perm, error, message):
    with pytest.raises(error, match=message):
        permute_tokens(rand(4, 3), perm)


def test_permute_tokens_and_mean_pool_need_tokens_and_features():
    for fn in (lambda t: permute_tokens(t, [0]), mean_pool):
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            fn(rand(3))
        with pytest.raises(TypeError, match=r"torch\.Tensor"):
            fn([[1.0]])


def test_mean_pool_forgets_the_order():
    x = rand(2, 5, 3)
    assert mean_pool(x).shape == (2, 3)
    torch.testing.assert_close(mean_pool(permute_tokens(x, [4, 3, 2, 1, 0])), mean_pool(x))


def test_gaps_tell_equivariant_invariant_and_neither_apart():
    x, perm = rand(5, 4), [1, 0, 4, 2, 3]
    positions = rand(5, 4, seed=9)
    assert equivariance_gap(nn.LayerNorm(4), x, perm) < 1e-6
    assert equivariance_gap(lambda t: t + positions, x, perm) > 0.1
    assert invariance_gap(mean_pool, x, perm) < 1e-6
    assert invariance_gap(lambda t: t[0], x, perm) > 0.1


def test_the_gaps_explain_misuse():
    x, perm = rand(5, 4), [1, 0, 4, 2, 3]
    with pytest.raises(ValueError, match="use invariance_gap"):
        equivariance_gap(mean_pool, x, perm)
    with pytest.raises(TypeError, match="must return a tensor"):
        equivariance_gap(lambda t: t.tolist(), x, perm)
    with pytest.raises(TypeError, match="function or module"):
        invariance_gap("mean", x, perm)
    with pytest.raises(ValueError, match="shapes"):
        invariance_gap(lambda t: t[: int(t[0, 0] > 0) + 1], x, perm)
