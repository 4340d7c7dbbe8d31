"""Rotary position embedding (RoPE): the relative property, norms, layouts, the decay bound, interpolation."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.attention import SelfAttention
from transformerland.encodings import (
    apply_rotary,
    apply_rotary_half,
    halves_to_pairs,
    interpolated_positions,
    rotary_angles,
    rotary_decay_bound,
    rotate_half,
    sinusoid_frequencies,
)


def rotated_score(q: torch.Tensor, k: torch.Tensor, m: float, n: float, base: float = 10000.0) -> float:
    """Dot product of ``q`` rotated to position ``m`` with ``k`` rotated to position ``n`` (float64)."""
    q_m = apply_rotary(q[None], torch.tensor([m]), base)[0]
    k_n = apply_rotary(k[None], torch.tensor([n]), base)[0]
    return float(q_m @ k_n)


@pytest.mark.parametrize("dim", [2, 8, 64])
@pytest.mark.parametrize("offset", [-7, 0, 1, 5, 100])
def test_score_depends_only_on_the_offset(dim, offset):
    generator = torch.Generator().manual_seed(dim + offset)
    q, k = torch.randn(2, dim, generator=generator, dtype=torch.float64)
    scores = [rotated_score(q, k, shift + offset, shift) for shift in (0, 3, 17, 250, 4096)]
    assert max(scores) - min(scores) < 1e-9 * (1 + abs(scores[0]))


def test_score_changes_with_the_offset():
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 16, generator=generator, dtype=torch.float64)
    scores = {offset: rotated_score(q, k, 10 + offset, 10) for offset in (0, 1, 2, 5)}
    assert min(abs(scores[a] - scores[b]) for a in scores for b in scores if a != b) > 1e-3


def test_score_is_the_unrotated_query_against_the_key_rotated_by_the_offset():
    generator = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 32, generator=generator, dtype=torch.float64)
    m, n = 40, 13
    expected = float(q @ apply_rotary(k[None], torch.tensor([n - m]))[0])
    assert rotated_score(q, k, m, n) == pytest.approx(expected, abs=1e-10)


def test_rotation_preserves_norms_and_shape_and_dtype():
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 50, 16, generator=generator)
    rotated = apply_rotary(x)
    assert rotated.shape == x.shape and rotated.dtype == x.dtype
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(apply_rotary_half(x).norm(dim=-1), x.norm(dim=-1))


def test_position_zero_is_left_alone_and_default_positions_count_from_zero():
    x = torch.randn(6, 8, dtype=torch.float64)
    torch.testing.assert_close(apply_rotary(x)[0], x[0])
    torch.testing.assert_close(apply_rotary(x), apply_rotary(x, torch.arange(6)))


def test_one_frequency_is_a_plane_rotation():
    x = torch.tensor([[0.6, -1.3]], dtype=torch.float64)
    for m in (0.0, 1.0, 2.5, -4.0):
        angle = m * float(sinusoid_frequencies(2)[0])  # θ₀ = 1
        rotation = torch.tensor(
            [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]], dtype=torch.float64
        )
        torch.testing.assert_close(apply_rotary(x, torch.tensor([m]))[0], rotation @ x[0])


def test_angles_use_the_sinusoid_frequencies():
    angles = rotary_angles(torch.tensor([0, 1, 5]), 8)
    assert angles.shape == (3, 4) and angles.dtype == torch.float64
    torch.testing.assert_close(angles[2], 5 * sinusoid_frequencies(8))


def test_halves_layout_is_the_adjacent_layout_after_a_permutation():
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(4, 20, 32, generator=generator, dtype=torch.float64)
    order = halves_to_pairs(32)
    assert sorted(order.tolist()) == list(range(32))
    assert order[:4].tolist() == [0, 16, 1, 17]
    torch.testing.assert_close(apply_rotary(x[..., order]), apply_rotary_half(x)[..., order])
    back = torch.argsort(order)
    torch.testing.assert_close(apply_rotary(x[..., order])[..., back], apply_rotary_half(x))


def test_rotate_half_is_a_quarter_turn_of_each_pair():
    x = torch.arange(1.0, 7.0)
    torch.testing.assert_close(rotate_half(x), torch.tensor([-4.0, -5.0, -6.0, 1.0, 2.0, 3.0]))
    torch.testing.assert_close(rotate_half(rotate_half(x)), -x)


def test_matches_transformers_llama_after_the_permutation():
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    generator = torch.Generator().manual_seed(4)
    batch, heads, length, dim, base = 2, 3, 12, 16, 10000.0
    q, k = torch.randn(2, batch, heads, length, dim, generator=generator, dtype=torch.float64)
    # LLaMA's tables: each angle appears twice, once per half; shape (batch, T, d).
    angles = rotary_angles(torch.arange(length), dim, base)
    table = torch.cat([angles, angles], dim=-1).expand(batch, length, dim)
    q_ref, k_ref = llama.apply_rotary_pos_emb(q, k, table.cos(), table.sin())
    torch.testing.assert_close(apply_rotary_half(q), q_ref)
    order = halves_to_pairs(dim)
    torch.testing.assert_close(apply_rotary(k[..., order]), k_ref[..., order])
    torch.testing.assert_close(rotate_half(q), llama.rotate_half(q))


def test_fractional_positions_keep_the_relative_property():
    generator = torch.Generator().manual_seed(5)
    q, k = torch.randn(2, 16, generator=generator, dtype=torch.float64)
    assert rotated_score(q, k, 3.25, 1.0) == pytest.approx(rotated_score(q, k, 10.25, 8.0), abs=1e-10)


def test_self_attention_with_rotary_is_unchanged_by_a_shared_shift_of_positions():
    # Inside SelfAttention, queries and keys are rotated by the same positions: the weights depend on i - j,
    # so the weights for tokens 3..7 seen alone equal those in a window of a longer run with the same contents.
    torch.manual_seed(6)
    layer = SelfAttention(16, 2, causal=True, position="rope")
    x = torch.randn(1, 5, 16)
    _, weights = layer(x, return_weights=True)
    q, k, _ = layer.split_heads(x)
    shifted = torch.arange(5) + 100
    scores = apply_rotary(q, shifted) @ apply_rotary(k, shifted).transpose(-2, -1) / math.sqrt(8)
    scores = scores.masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), float("-inf"))
    torch.testing.assert_close(scores.softmax(-1), weights, atol=1e-5, rtol=1e-4)


def test_decay_bound_starts_at_its_maximum_and_decays():
    bound = rotary_decay_bound(torch.arange(0.0, 513.0), 128)
    assert bound.dtype == torch.float64 and bound.shape == (513,)
    assert float(bound[0]) == pytest.approx((64 + 1) / 2)
    assert float(bound.max()) == pytest.approx(float(bound[0]))
    assert float(bound[256:].max()) < 0.5 * float(bound[0])
    torch.testing.assert_close(
        rotary_decay_bound(torch.tensor([-9.0, 9.0]), 64)[0], rotary_decay_bound(torch.tensor([9.0]), 64)[0]
    )


def test_interpolated_positions_stay_in_the_trained_range():
    positions = interpolated_positions(256, 64)
    assert positions.shape == (256,) and float(positions.max()) == pytest.approx(64 - 64 / 256)
    torch.testing.assert_close(positions[4], torch.tensor(1.0, dtype=torch.float64))
    torch.testing.assert_close(interpolated_positions(32, 64), torch.arange(32, dtype=torch.float64))


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: apply_rotary(torch.randn(4, 7)), ValueError, "must be even"),
        (lambda: apply_rotary(torch.randn(8)), ValueError, "at least 2 dimensions"),
        (lambda: apply_rotary([[1.0, 2.0]]), TypeError, "torch.Tensor"),
        (lambda: apply_rotary(torch.randn(4, 8), torch.arange(5)), ValueError, "positions must have shape (4,)"),
        (lambda: apply_rotary(torch.randn(4, 8), torch.arange(4)[None]), ValueError, "positions must have shape"),
        (lambda: apply_rotary(torch.randn(4, 8), [0, 1, 2, 3]), TypeError, "positions must be a torch.Tensor"),
        (lambda: apply_rotary(torch.randn(4, 8), base=-1.0), ValueError, "base must be a positive number"),
        (lambda: apply_rotary_half(torch.randn(4, 6, 5)), ValueError, "must be even"),
        (lambda: apply_rotary_half(torch.randn(3, 4), torch.arange(2)), ValueError, "positions must have shape (3,)"),
        (lambda: rotate_half(torch.randn(3)), ValueError, "must be even"),
        (lambda: rotate_half(torch.tensor(1.0)), ValueError, "at least 1 dimension"),
        (lambda: halves_to_pairs(7), ValueError, "must be even"),
        (lambda: rotary_decay_bound(torch.zeros(2, 2), 8), ValueError, "distances must have 1 dimensions"),
        (lambda: rotary_decay_bound(torch.arange(3.0), 9), ValueError, "must be even"),
        (lambda: interpolated_positions(0, 4), ValueError, "length must be a positive integer"),
        (lambda: interpolated_positions(8, 2.5), TypeError, "trained_length must be a positive integer"),
    ],
)
def test_bad_input_gives_a_clear_error(call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)
