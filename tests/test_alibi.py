"""ALiBi: the geometric slopes, the bias matrix, and its place in attention."""

from __future__ import annotations

import pytest
import torch
from transformerland.attention import SelfAttention
from transformerland.encodings import alibi_bias, alibi_slopes
from transformerland.model import TinyTransformer, TransformerConfig


def test_eight_heads_get_one_half_to_one_over_256():
    expected = torch.tensor([1 / 2**k for k in range(1, 9)])
    torch.testing.assert_close(alibi_slopes(8), expected)


@pytest.mark.parametrize("n_heads", [1, 2, 4, 16, 32])
def test_powers_of_two_form_a_geometric_sequence_starting_at_its_ratio(n_heads):
    slopes = alibi_slopes(n_heads).double()
    ratio = 2.0 ** (-8.0 / n_heads)
    assert slopes.shape == (n_heads,)
    assert float(slopes[0]) == pytest.approx(ratio)
    assert float(slopes[-1]) == pytest.approx(2.0**-8)
    torch.testing.assert_close(slopes[1:] / slopes[:-1], torch.full((n_heads - 1,), ratio, dtype=torch.float64))


def test_a_non_power_of_two_takes_the_lower_power_then_every_other_slope_of_the_next():
    # The paper's rule for 12 heads: the 8 slopes of 8 heads, then slopes 1, 3, 5, 7 (counting from 1) of 16 heads.
    sixteen = [2.0 ** (-8.0 * k / 16) for k in range(1, 17)]
    expected = [2.0 ** (-k) for k in range(1, 9)] + sixteen[0::2][:4]
    torch.testing.assert_close(alibi_slopes(12).double(), torch.tensor(expected, dtype=torch.float64))
    assert alibi_slopes(12).unique().numel() == 12
    three = alibi_slopes(3).double()
    torch.testing.assert_close(three, torch.tensor([2.0**-4, 2.0**-8, 2.0**-2], dtype=torch.float64))


@pytest.mark.parametrize("n_heads", [1, 3, 5, 6, 8, 12, 20, 40])
def test_slopes_match_transformers_bloom(n_heads):
    bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom")
    torch.testing.assert_close(alibi_slopes(n_heads), bloom._get_alibi_slopes(n_heads, torch.device("cpu")))


def test_causal_bias_shape_sign_values_and_zeroed_future():
    bias = alibi_bias(4, 6)
    slopes = alibi_slopes(4)
    assert bias.shape == (4, 6, 6)
    assert bool((bias <= 0).all())
    assert bool((bias.diagonal(dim1=-2, dim2=-1) == 0).all())
    assert bool((bias.triu(1) == 0).all()), "entries for future keys are left at 0: the causal mask removes them"
    i, j = 5, 2
    torch.testing.assert_close(bias[:, i, j], -slopes * (i - j))
    # Every head penalises a key more the further back it lies.
    assert bool((bias[:, 5, :5].diff(dim=-1) > 0).all())


def test_bidirectional_bias_is_symmetric_in_distance():
    bias = alibi_bias(2, 5, causal=False)
    torch.testing.assert_close(bias, bias.transpose(-2, -1))
    torch.testing.assert_close(bias[0, 0, 4], -alibi_slopes(2)[0] * 4)


def test_bias_depends_only_on_the_distance():
    bias = alibi_bias(8, 10)
    for offset in range(10):
        diagonal = bias.diagonal(-offset, dim1=-2, dim2=-1)  # entries (i, i - offset)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal))


def test_alibi_adds_no_parameters_to_attention_or_model():
    plain, alibi = SelfAttention(16, 4), SelfAttention(16, 4, position="alibi")
    assert sum(p.numel() for p in plain.parameters()) == sum(p.numel() for p in alibi.parameters())
    assert (
        TinyTransformer(TransformerConfig(10, position="alibi")).num_parameters()
        == TinyTransformer(TransformerConfig(10, position="none")).num_parameters()
    )


def test_attention_with_alibi_uses_the_bias():
    torch.manual_seed(0)
    layer = SelfAttention(16, 4, causal=True, position="alibi")
    x = torch.randn(1, 7, 16)
    _, weights = layer(x, return_weights=True)
    q, k, _ = layer.split_heads(x)
    scores = q @ k.transpose(-2, -1) / 2.0 + alibi_bias(4, 7)
    scores = scores.masked_fill(~torch.ones(7, 7, dtype=torch.bool).tril(), float("-inf"))
    torch.testing.assert_close(weights, scores.softmax(-1), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: alibi_slopes(0), ValueError, "n_heads must be a positive integer"),
        (lambda: alibi_slopes(2.0), TypeError, "n_heads must be a positive integer"),
        (lambda: alibi_bias(4, 0), ValueError, "length must be a positive integer"),
        (lambda: alibi_bias(-1, 4), ValueError, "n_heads must be a positive integer"),
    ],
)
def test_bad_input_gives_a_clear_error(call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)
