"""T5's relative position buckets and bias, checked against transformers' T5Attention."""

from __future__ import annotations

import pytest
import torch
from transformerland.encodings import T5RelativeBias, t5_relative_buckets


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("n_buckets", "max_distance"), [(32, 128), (16, 64), (64, 256), (8, 20), (4, 5)])
def test_buckets_match_transformers_t5(bidirectional, n_buckets, max_distance):
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    offsets = torch.arange(-1500, 1501)[None, :] + torch.tensor([[0], [3]])  # (2, 3001): every offset to ±1,500
    ours = t5_relative_buckets(offsets, bidirectional=bidirectional, n_buckets=n_buckets, max_distance=max_distance)
    theirs = t5.T5Attention._relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=n_buckets, max_distance=max_distance
    )
    assert ours.dtype == torch.long and ours.shape == offsets.shape
    assert torch.equal(ours, theirs)


def test_near_offsets_get_a_bucket_each_and_far_ones_share_the_last():
    offsets = torch.arange(-300, 301)
    buckets = t5_relative_buckets(offsets)  # T5's 32 buckets to 128, both sides
    for distance in range(8):  # the exact range: 32 / 2 / 2 = 8 distances per side
        assert int(buckets[300 - distance]) == distance
        assert int(buckets[300 + distance]) == (16 + distance if distance else 0)
    assert set(buckets[: 300 - 127].tolist()) == {15} and set(buckets[300 + 128 :].tolist()) == {31}
    assert bool((buckets[:301].flip(0).diff() >= 0).all()), "buckets never go back as a key moves away"
    decoder = t5_relative_buckets(offsets, bidirectional=False)
    assert set(decoder[300:].tolist()) == {0} and int(decoder.max()) == 31


def test_the_bias_reads_each_heads_value_for_the_offsets_bucket():
    bias_module = T5RelativeBias(n_heads=3, n_buckets=8, max_distance=16)
    with torch.no_grad():
        bias_module.table.copy_(torch.arange(24, dtype=torch.float32).reshape(8, 3))
    bias = bias_module(5, 7).detach()  # (heads, queries, keys)
    assert bias.shape == (3, 5, 7)
    buckets = bias_module.buckets(5, 7)
    for i, j, h in [(0, 0, 0), (4, 1, 2), (1, 6, 1)]:
        assert float(bias[h, i, j]) == float(bias_module.table.detach()[buckets[i, j], h])
        assert int(buckets[i, j]) == int(t5_relative_buckets(torch.tensor(j - i), n_buckets=8, max_distance=16))
    assert torch.equal(T5RelativeBias(2)(4, 4), torch.zeros(2, 4, 4)), "an untrained bias is zero"
    assert sum(p.numel() for p in T5RelativeBias(12).parameters()) == 32 * 12


def test_bad_arguments_are_refused_with_a_message_naming_them():
    with pytest.raises(TypeError, match="offsets"):
        t5_relative_buckets(torch.tensor([0.5, 1.0]))
    with pytest.raises(TypeError, match="offsets"):
        t5_relative_buckets([1, 2])
    with pytest.raises(ValueError, match="n_buckets must be even"):
        t5_relative_buckets(torch.tensor([1]), n_buckets=33)
    with pytest.raises(ValueError, match="per direction"):
        t5_relative_buckets(torch.tensor([1]), n_buckets=2)
    with pytest.raises(ValueError, match="max_distance"):
        t5_relative_buckets(torch.tensor([1]), n_buckets=32, max_distance=8)
    with pytest.raises(TypeError, match="bidirectional"):
        t5_relative_buckets(torch.tensor([1]), bidirectional="yes")
    with pytest.raises(ValueError, match="n_heads"):
        T5RelativeBias(0)
    with pytest.raises(TypeError, match="query_length"):
        T5RelativeBias(2)(2.5, 3)
