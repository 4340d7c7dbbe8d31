"""LongRoPE and the partial rotary factor in rope_frequencies, against transformers 5's reference functions."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.encodings import rope_frequencies

transformers = pytest.importorskip("transformers")
from transformers import Phi3Config  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402

#: (head width, base, original length, factor): Phi-3-mini-128k's shape, and smaller ones.
SHAPES = [(96, 10000.0, 4096, 32.0), (64, 10000.0, 2048, 8.0), (16, 500000.0, 32, 4.0)]


def factors(pairs: int, seed: int) -> tuple[list[float], list[float]]:
    """Searched-looking per-pair factors: short ones near 1, long ones growing from 1 to about the factor."""
    generator = torch.Generator().manual_seed(seed)
    short = (1 + 0.1 * torch.rand(pairs, generator=generator, dtype=torch.float64)).tolist()
    long = torch.linspace(1, 30, pairs, dtype=torch.float64).mul(1 + 0.05 * torch.rand(pairs, generator=generator))
    return short, long.tolist()


def reference(head_dim, base, original, factor, short, long, *, seq_len, partial=1.0):
    config = Phi3Config(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        max_position_embeddings=int(original * factor),
        original_max_position_embeddings=original,  # Phi3Config's own field would otherwise win (4,096)
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": base,
            "short_factor": short,
            "long_factor": long,
            "original_max_position_embeddings": original,
            "factor": factor,
            "partial_rotary_factor": partial,
        },
    )
    inv_freq, gain = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=seq_len)
    return inv_freq.double(), float(gain)


@pytest.mark.parametrize(("head_dim", "base", "original", "factor"), SHAPES)
@pytest.mark.parametrize("where", ["none", "inside", "at", "past"])
def test_longrope_matches_transformers(head_dim, base, original, factor, where) -> None:
    seq_len = {"none": None, "inside": original // 2, "at": original, "past": original + 1}[where]
    short, long = factors(head_dim // 2, seed=head_dim)
    scaling = {
        "rope_type": "longrope",
        "factor": factor,
        "original_max_position_embeddings": original,
        "short_factor": short,
        "long_factor": long,
    }
    ours, gain = rope_frequencies(head_dim, base, scaling, seq_len=seq_len)
    theirs, their_gain = reference(head_dim, base, original, factor, short, long, seq_len=seq_len)
    assert (ours.log() - theirs.log()).abs().max() < 1e-6  # compared as log θ, so slow pairs count too
    assert math.isclose(gain, their_gain, rel_tol=1e-9)
    assert math.isclose(gain, math.sqrt(1 + math.log(factor) / math.log(original)), rel_tol=1e-12)
    plain, _ = rope_frequencies(head_dim, base)
    used = long if where == "past" else short
    torch.testing.assert_close(ours, plain / torch.tensor(used, dtype=torch.float64))


def test_longrope_with_a_partial_rotary_factor_matches_transformers() -> None:
    short, long = factors(16, seed=3)
    scaling = {
        "rope_type": "longrope",
        "factor": 16.0,
        "original_max_position_embeddings": 2048,
        "short_factor": short,
        "long_factor": long,
        "partial_rotary_factor": 0.5,
    }
    ours, _ = rope_frequencies(64, 10000.0, scaling, seq_len=4096)
    theirs, _ = reference(64, 10000.0, 2048, 16.0, short, long, seq_len=4096, partial=0.5)
    assert ours.shape == (16,) and (ours.log() - theirs.log()).abs().max() < 1e-6


@pytest.mark.parametrize("kind", ["linear", "dynamic", "yarn", "llama3"])
def test_every_recipe_takes_the_partial_factor(kind: str) -> None:
    """A recipe with partial_rotary_factor f on a head of d is the recipe on a head of int(d·f)."""
    extra = {"llama3": {"low_freq_factor": 1.0, "high_freq_factor": 4.0}}.get(kind, {})
    scaling = {"rope_type": kind, "factor": 4.0, "original_max_position_embeddings": 64, **extra}
    partial, gain = rope_frequencies(128, 10000.0, {**scaling, "partial_rotary_factor": 0.25}, seq_len=256)
    narrow, narrow_gain = rope_frequencies(32, 10000.0, scaling, seq_len=256)
    torch.testing.assert_close(partial, narrow) and math.isclose(gain, narrow_gain)


def test_attention_factor_given_and_no_stretch() -> None:
    short = [1.0] * 8
    scaling = {
        "rope_type": "longrope",
        "factor": 1.0,
        "original_max_position_embeddings": 32,
        "short_factor": short,
        "long_factor": short,
    }
    assert rope_frequencies(16, 10000.0, scaling)[1] == 1.0
    assert rope_frequencies(16, 10000.0, {**scaling, "attention_factor": 1.3})[1] == 1.3


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"short_factor": [1.0] * 7}, ValueError, "one factor per rotated pair, 8, got 7"),
        ({"short_factor": 2.0}, TypeError, "list of 8 numbers"),
        ({"short_factor": [1.0] * 7 + [-1.0]}, ValueError, "positive"),
        ({"long_factor": None}, ValueError, "long_factor"),
        ({"attention_factor": "big"}, TypeError, "attention_factor"),
        ({"beta_fast": 32}, ValueError, "does not use"),
    ],
)
def test_bad_longrope_settings(change, error, match) -> None:
    scaling = {
        "rope_type": "longrope",
        "factor": 4.0,
        "original_max_position_embeddings": 32,
        "short_factor": [1.0] * 8,
        "long_factor": [2.0] * 8,
        **change,
    }
    with pytest.raises(error, match=match):
        rope_frequencies(16, 10000.0, scaling)
