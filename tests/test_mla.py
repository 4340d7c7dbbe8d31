"""MLA: the absorption identity with and without RoPE, the decoupled rotary key, and the cache sizes."""

from __future__ import annotations

import pytest
import torch
from transformerland.encodings import apply_rotary
from transformerland.mla import absorbed_weights, decoupled_rope_scores, kv_cache_per_token, mla_content_scores

H, D_Q, D_C, D_H, D_R, T = 4, 24, 16, 8, 4, 7


@pytest.fixture
def tensors() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    shapes = {"q_latent": (T, D_Q), "kv_latent": (T, D_C), "w_uq": (H, D_Q, D_H), "w_uk": (H, D_C, D_H)}
    return {name: torch.randn(*shape, dtype=torch.float64, generator=g) for name, shape in shapes.items()}


def test_absorption_holds_without_rope(tensors) -> None:
    explicit = mla_content_scores(**tensors, absorb=False)
    absorbed = mla_content_scores(**tensors, absorb=True)
    assert explicit.shape == (H, T, T)
    torch.testing.assert_close(absorbed, explicit, atol=1e-10, rtol=1e-10)


def test_absorption_fails_with_rope_on_the_content_keys(tensors) -> None:
    rotated = mla_content_scores(**tensors, absorb=False, rope=True)
    absorbed = mla_content_scores(**tensors, absorb=True)
    torch.testing.assert_close(rotated.diagonal(dim1=1, dim2=2), absorbed.diagonal(dim1=1, dim2=2))  # distance 0
    assert (rotated - absorbed).abs().max() > 1.0  # everywhere else the fixed product is wrong
    with pytest.raises(ValueError, match="no fixed product"):
        mla_content_scores(**tensors, absorb=True, rope=True)


def test_decoupled_key_is_shared_and_relative() -> None:
    g = torch.Generator().manual_seed(1)
    q_rope, k_rope = (
        torch.randn(H, T, D_R, dtype=torch.float64, generator=g),
        torch.randn(T, D_R, dtype=torch.float64, generator=g),
    )
    scores = decoupled_rope_scores(q_rope, k_rope)
    by_hand = torch.stack([apply_rotary(q_rope[a]) @ apply_rotary(k_rope).T for a in range(H)])
    torch.testing.assert_close(scores, by_hand)
    # relative: shifting both by the same amount changes nothing
    shifted = apply_rotary(q_rope, torch.arange(T) + 9) @ apply_rotary(k_rope, torch.arange(T) + 9).T
    torch.testing.assert_close(shifted, scores)


def test_absorbed_weights_shape() -> None:
    assert absorbed_weights(torch.zeros(H, D_Q, D_H), torch.zeros(H, D_C, D_H)).shape == (H, D_Q, D_C)


def test_cache_sizes_of_deepseek_v3() -> None:
    mla = kv_cache_per_token("mla", n_layers=61, kv_lora_rank=512, rope_dim=64)
    mha = kv_cache_per_token("mha", n_layers=61, n_heads=128, head_dim=128)
    assert mla == 576 * 61 and mha == 2 * 128 * 128 * 61 and round(mha / mla, 1) == 56.9


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: kv_cache_per_token("gqa", n_layers=2), ValueError, "'mha'"),
        (lambda: kv_cache_per_token("mla", n_layers=2, kv_lora_rank=0, rope_dim=64), ValueError, "kv_lora_rank"),
        (lambda: absorbed_weights(torch.zeros(2, 3, 4), torch.zeros(3, 3, 4)), ValueError, "agree"),
        (lambda: absorbed_weights(torch.zeros(3, 4), torch.zeros(3, 3, 4)), ValueError, "3 dimensions"),
        (lambda: decoupled_rope_scores(torch.zeros(2, 3, 4), torch.zeros(3, 6)), ValueError, "share d_R"),
        (
            lambda: mla_content_scores(
                torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(1, 4, 2), torch.zeros(1, 4, 2), absorb="yes"
            ),
            TypeError,
            "True or False",
        ),
    ],
)
def test_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
