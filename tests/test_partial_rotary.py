"""Partial rotary and p-RoPE: the rotated width, its frequencies, and parity with transformers' Phi."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.encodings import (
    apply_partial_rotary,
    apply_rotary_half,
    p_rope_frequencies,
    partial_frequencies,
    rope_frequencies,
    rotary_width,
    sinusoid_frequencies,
)

transformers = pytest.importorskip("transformers")
from transformers import PhiConfig  # noqa: E402
from transformers.models.phi.modeling_phi import PhiRotaryEmbedding, apply_rotary_pos_emb  # noqa: E402

#: (hidden size, heads, partial_rotary_factor, base): Phi-2's, GPT-NeoX-20B's rotary_pct and small ones.
PHI_SHAPES = [(2560, 32, 0.4, 10000.0), (6144, 64, 0.25, 10000.0), (256, 4, 0.5, 1e6), (64, 4, 1.0, 10000.0)]


def phi_rotary(hidden: int, heads: int, factor: float, base: float) -> PhiRotaryEmbedding:
    config = PhiConfig(hidden_size=hidden, num_attention_heads=heads, partial_rotary_factor=factor, rope_theta=base)
    return PhiRotaryEmbedding(config)


@pytest.mark.parametrize(("hidden", "heads", "factor", "base"), PHI_SHAPES)
def test_frequencies_match_phi_relatively(hidden: int, heads: int, factor: float, base: float) -> None:
    head_dim = hidden // heads
    theirs = phi_rotary(hidden, heads, factor, base).inv_freq.double()
    ours, gain = rope_frequencies(head_dim, base, {"rope_type": "default", "partial_rotary_factor": factor})
    assert ours.shape == theirs.shape == (rotary_width(head_dim, factor) // 2,) and gain == 1.0
    assert (ours.log() - theirs.log()).abs().max() < 1e-6  # log θ: the slow pairs count as much as the fast
    torch.testing.assert_close(partial_frequencies(head_dim, factor, base), ours)


@pytest.mark.parametrize(("hidden", "heads", "factor", "base"), PHI_SHAPES)
def test_rotation_matches_phi_attention(hidden: int, heads: int, factor: float, base: float) -> None:
    head_dim, width = hidden // heads, rotary_width(hidden // heads, factor)
    x = torch.randn(2, 3, 9, head_dim, generator=torch.Generator().manual_seed(0))
    positions = torch.arange(9) + 5
    cos, sin = phi_rotary(hidden, heads, factor, base)(x, positions[None])
    turned, _ = apply_rotary_pos_emb(x[..., :width], x[..., :width], cos, sin)
    expected = torch.cat([turned, x[..., width:]], dim=-1)  # as PhiAttention puts them back together
    got = apply_partial_rotary(x, positions, base, partial_rotary_factor=factor)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_unrotated_dimensions_score_the_same_at_every_distance() -> None:
    generator = torch.Generator().manual_seed(1)
    q, k = (
        torch.randn(64, dtype=torch.float64, generator=generator),
        torch.randn(64, dtype=torch.float64, generator=generator),
    )
    scores = []
    for distance in (0, 1, 7, 100, 5000):
        qm = apply_partial_rotary(q.expand(1, 64), torch.tensor([distance]), partial_rotary_factor=0.25)
        kn = apply_partial_rotary(k.expand(1, 64), torch.tensor([0]), partial_rotary_factor=0.25)
        scores.append(float(qm[0, 16:] @ kn[0, 16:]))
    assert max(scores) - min(scores) < 1e-12 and math.isclose(scores[0], float(q[16:] @ k[16:]), rel_tol=1e-12)
    full = apply_partial_rotary(q.expand(1, 64), None, partial_rotary_factor=1.0)
    torch.testing.assert_close(full, apply_rotary_half(q.expand(1, 64)))


def test_frequencies_are_spaced_over_the_rotated_width() -> None:
    partial = partial_frequencies(128, 0.25)  # 16 pairs
    assert partial.shape == (16,) and partial[0] == 1
    assert math.isclose(float(partial[-1]), 10000 ** (-30 / 32), rel_tol=1e-12)  # not 10000**(-30/128)
    assert float(partial[-1]) < float(sinusoid_frequencies(128)[15]) / 100


def test_p_rope_keeps_the_fastest_pairs_of_the_full_head() -> None:
    theta = p_rope_frequencies(64, 0.75)
    torch.testing.assert_close(theta[:24], sinusoid_frequencies(64)[:24])
    assert (theta[24:] == 0).all() and theta.shape == (32,)
    torch.testing.assert_close(p_rope_frequencies(64, 1.0), sinusoid_frequencies(64))


def test_p_rope_matches_transformers_proportional() -> None:
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    if "proportional" not in ROPE_INIT_FUNCTIONS:
        pytest.skip("this transformers has no proportional RoPE")
    from transformers import LlamaConfig

    config = LlamaConfig(
        hidden_size=256,
        num_attention_heads=4,
        head_dim=64,
        rope_parameters={"rope_type": "proportional", "rope_theta": 10000.0, "partial_rotary_factor": 0.25},
    )
    theirs, _ = ROPE_INIT_FUNCTIONS["proportional"](config, "cpu")
    torch.testing.assert_close(p_rope_frequencies(64, 0.25), theirs.double(), atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize(
    ("head_dim", "factor", "error", "match"),
    [
        (64, 0.3, ValueError, "even"),
        (64, 0.0, ValueError, r"\(0, 1\]"),
        (64, 1.5, ValueError, r"\(0, 1\]"),
        (64, "half", TypeError, "number"),
        (64, True, TypeError, "number"),
        (0, 0.5, ValueError, "positive"),
    ],
)
def test_bad_widths_and_factors(head_dim, factor, error, match) -> None:
    with pytest.raises(error, match=match):
        rotary_width(head_dim, factor)


def test_bad_input_to_the_rotations() -> None:
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        apply_partial_rotary([1.0, 2.0], partial_rotary_factor=0.5)
    with pytest.raises(ValueError, match="at least 2"):
        apply_partial_rotary(torch.zeros(8), partial_rotary_factor=0.5)
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        rope_frequencies(64, 10000.0, {"rope_type": "linear", "factor": 2.0, "partial_rotary_factor": 0.3})
    with pytest.raises(ValueError, match="even"):
        p_rope_frequencies(63, 0.5)
