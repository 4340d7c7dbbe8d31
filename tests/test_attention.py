"""Attention: values against the formula, masks, equivariance, and clear errors for bad input."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformerland.attention import SelfAttention, causal_mask, scaled_dot_product_attention, single_head_attention
from transformerland.symmetry import equivariance_gap


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# --- causal_mask ---------------------------------------------------------------------------


def test_causal_mask_lets_each_query_see_itself_and_the_past():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.shape == (4, 4)
    assert torch.equal(mask, torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool))


@pytest.mark.parametrize(("length", "error"), [(0, ValueError), (-2, ValueError), (2.5, TypeError), (True, TypeError)])
def test_causal_mask_rejects_bad_lengths(length, error):
    with pytest.raises(error, match="length"):
        causal_mask(length)


# --- scaled_dot_product_attention ---------------------------------------------------------


def test_attention_matches_the_formula():
    q, k, v = rand(5, 4, seed=1), rand(6, 4, seed=2), rand(6, 3, seed=3)
    out, weights = scaled_dot_product_attention(q, k, v)
    expected_weights = torch.softmax(q @ k.T / math.sqrt(4), dim=-1)
    assert out.shape == (5, 3) and weights.shape == (5, 6)
    torch.testing.assert_close(weights, expected_weights)
    torch.testing.assert_close(out, expected_weights @ v)
    torch.testing.assert_close(weights.sum(-1), torch.ones(5))


def test_attention_broadcasts_batch_and_head_dimensions():
    q, k, v = rand(2, 3, 5, 4, seed=1), rand(2, 3, 5, 4, seed=2), rand(2, 3, 5, 4, seed=3)
    out, weights = scaled_dot_product_attention(q, k, v, mask=causal_mask(5))
    assert out.shape == (2, 3, 5, 4) and weights.shape == (2, 3, 5, 5)
    one, _ = scaled_dot_product_attention(q[1, 2], k[1, 2], v[1, 2], mask=causal_mask(5))
    torch.testing.assert_close(out[1, 2], one)


def test_a_mask_blocks_pairs_and_a_bias_shifts_scores():
    q, k, v = rand(4, 2, seed=1), rand(4, 2, seed=2), rand(4, 2, seed=3)
    _, weights = scaled_dot_product_attention(q, k, v, mask=causal_mask(4))
    assert torch.all(weights.triu(1) == 0)
    assert weights[0, 0] == 1
    past = torch.full((4, 4), -1e9).tril(-1)  # a large negative score on every key before the query
    _, biased = scaled_dot_product_attention(q, k, v, bias=past)
    torch.testing.assert_close(biased.tril(-1), torch.zeros(4, 4))


def test_a_scalar_bias_changes_nothing():
    q, k, v = rand(3, 2, seed=1), rand(3, 2, seed=2), rand(3, 2, seed=3)
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v, bias=5.0)[0], scaled_dot_product_attention(q, k, v)[0]
    )


@pytest.mark.parametrize(
    ("q", "k", "v", "message"),
    [
        (rand(4), rand(4, 2), rand(4, 2), "q must have at least 2 dimensions"),
        (rand(3, 4), rand(3, 5), rand(3, 5), "same feature size"),
        (rand(3, 4), rand(3, 4), rand(2, 4), "one row per key"),
        (rand(2, 3, 4), rand(3, 3, 4), rand(3, 3, 4), "leading"),
    ],
)
def test_mismatched_shapes_are_named(q, k, v, message):
    with pytest.raises(ValueError, match=message):
        scaled_dot_product_attention(q, k, v)


def test_non_tensor_inputs_are_refused():
    with pytest.raises(TypeError, match=r"q must be a torch\.Tensor"):
        scaled_dot_product_attention([[1.0, 2.0]], rand(2, 2), rand(2, 2))


def test_masks_must_be_boolean_tensors_of_a_fitting_shape():
    q = rand(2, 5, 4)
    with pytest.raises(TypeError, match="boolean tensor"):
        scaled_dot_product_attention(q, q, q, mask=causal_mask(5).float())
    with pytest.raises(TypeError, match="got list"):
        scaled_dot_product_attention(q, q, q, mask=[[True] * 5] * 5)
    with pytest.raises(ValueError, match=r"mask must broadcast to the scores' shape \(2, 5, 5\)"):
        scaled_dot_product_attention(q, q, q, mask=causal_mask(4))
    with pytest.raises(ValueError, match="mask must broadcast"):  # would silently enlarge the output
        scaled_dot_product_attention(q, q, q, mask=torch.ones(3, 2, 5, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="bias must broadcast"):
        scaled_dot_product_attention(q, q, q, bias=torch.zeros(3, 3))


# --- single_head_attention ----------------------------------------------------------------


def weights(width: int = 6, d_k: int = 4, d_v: int = 3) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return rand(width, d_k, seed=5), rand(width, d_k, seed=6), rand(width, d_v, seed=7)


def test_single_head_attention_is_the_formula_with_explicit_weights():
    x = rand(5, 6)
    w_q, w_k, w_v = weights()
    out, attn = single_head_attention(x, w_q, w_k, w_v)
    expected = torch.softmax((x @ w_q) @ (x @ w_k).T / 2.0, dim=-1)
    assert out.shape == (5, 3) and attn.shape == (5, 5)
    torch.testing.assert_close(attn, expected)
    torch.testing.assert_close(out, expected @ (x @ w_v))


def test_single_head_attention_takes_a_batch_and_a_mask():
    x = rand(2, 5, 6)
    out, attn = single_head_attention(x, *weights(), mask=causal_mask(5))
    assert out.shape == (2, 5, 3)
    assert torch.all(attn.triu(1) == 0)
    torch.testing.assert_close(out[1], single_head_attention(x[1], *weights(), mask=causal_mask(5))[0])


@pytest.mark.parametrize(
    ("x", "w", "error", "message"),
    [
        (rand(6), weights(), ValueError, "x must have 2 or 3 dimensions"),
        (rand(1, 2, 5, 6), weights(), ValueError, "x must have 2 or 3 dimensions"),
        (rand(5, 7), weights(), ValueError, r"w_q must have one row per input feature: x has width 7"),
        (rand(5, 6), (rand(6, 4), rand(6, 5), rand(6, 3)), ValueError, "same width d_k"),
        (rand(5, 6), (rand(6, 4), rand(6, 4), rand(6)), ValueError, "w_v must have 2 dimensions"),
        (rand(5, 6), (rand(6, 4).double(), rand(6, 4), rand(6, 3)), TypeError, "w_q has dtype torch.float64"),
    ],
)
def test_single_head_attention_names_what_is_wrong(x, w, error, message):
    with pytest.raises(error, match=message):
        single_head_attention(x, *w)


def test_single_head_attention_rejects_a_non_boolean_mask():
    with pytest.raises(TypeError, match="boolean"):
        single_head_attention(rand(5, 6), *weights(), mask=torch.ones(5, 5))


# --- permutation equivariance -------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.permutations(list(range(6))), st.integers(0, 1000))
def test_attention_without_positions_is_permutation_equivariant(perm, seed):
    x = rand(6, 6, seed=seed)
    gap = equivariance_gap(lambda t: single_head_attention(t, *weights())[0], x, perm)
    assert gap < 1e-5


def test_the_multi_head_layer_is_equivariant_until_positions_or_a_mask_enter():
    torch.manual_seed(0)
    x, perm = rand(2, 6, 8), [5, 0, 3, 1, 4, 2]
    assert equivariance_gap(SelfAttention(8, 2), x, perm) < 1e-5
    for options in ({"causal": True}, {"position": "rope"}, {"position": "alibi"}):
        assert equivariance_gap(SelfAttention(8, 2, **options), x, perm) > 1e-3, options


# --- SelfAttention ------------------------------------------------------------------------


def test_self_attention_shapes_and_causal_weights():
    torch.manual_seed(0)
    layer = SelfAttention(8, 2, causal=True)
    y, w = layer(rand(3, 5, 8), return_weights=True)
    assert y.shape == (3, 5, 8) and w.shape == (3, 2, 5, 5)
    assert torch.all(w.triu(1) == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 2, 5))


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((8, 3), {}, "n_heads must divide d_model"),
        ((6, 2), {"position": "rope"}, "even head width"),
        ((8, 2), {"position": "learned"}, "position must be one of 'none', 'rope', 'alibi'"),
        ((0, 1), {}, "d_model must be a positive integer"),
    ],
)
def test_self_attention_rejects_bad_configurations(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        SelfAttention(*args, **kwargs)


def test_self_attention_rejects_bad_input():
    layer = SelfAttention(8, 2)
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        layer(rand(5, 8))
    with pytest.raises(ValueError, match="expects d_model=8"):
        layer(rand(1, 5, 6))
