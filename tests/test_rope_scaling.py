"""The RoPE scaling recipes against transformers' reference functions, and their bad input."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.encodings import (
    apply_rotary,
    apply_rotary_half,
    dynamic_factor,
    llama3_bands,
    ntk_base,
    rope_frequencies,
    rope_wavelengths,
    rotary_angles,
    set_rope_scaling,
    sinusoid_frequencies,
    with_rope_scaling,
    yarn_attention_factor,
    yarn_ramp,
)
from transformerland.model import TinyTransformer, TransformerConfig

transformers = pytest.importorskip("transformers")
from transformers import LlamaConfig  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding  # noqa: E402

#: Head widths, bases and original lengths the parity tests sweep (SmolLM2, Llama 2/3, small ones).
SHAPES = [(64, 100000.0, 8192), (128, 10000.0, 4096), (128, 500000.0, 8192), (16, 10000.0, 32), (32, 1e6, 2048)]
FACTORS = [1.0, 2.0, 4.0, 8.0, 32.0]


def reference(head_dim, base, params, *, max_positions, seq_len=None):
    """transformers' (inv_freq, attention_factor) for ``params`` (rope_theta and rope_type added here)."""
    params = {"rope_theta": base, **params}
    config = LlamaConfig(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_positions,
        rope_parameters=params,
    )
    if params["rope_type"] == "default":
        inv_freq, factor = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        inv_freq, factor = ROPE_INIT_FUNCTIONS[params["rope_type"]](config, "cpu", seq_len=seq_len)
    return inv_freq.double(), float(factor)


def assert_relatively_close(got: torch.Tensor, expected: torch.Tensor, tolerance: float = 1e-5) -> None:
    """Frequencies span orders of magnitude (down to 1e-5 and below), so an absolute tolerance of 1e-6 would pass
    almost any slow pair: compare them relatively, as |ln θ - ln θ_ref|. transformers computes in float32, and
    YaRN's blend of two float32 frequencies reaches about 2e-6 in the worst case here, hence 1e-5."""
    assert got.shape == expected.shape, (got.shape, expected.shape)
    worst = float((got.log() - expected.log()).abs().max())
    assert worst < tolerance, (worst, got, expected)


def assert_parity(head_dim, base, params, *, max_positions, seq_len=None):
    expected, expected_factor = reference(head_dim, base, params, max_positions=max_positions, seq_len=seq_len)
    got, factor = rope_frequencies(head_dim, base, params, seq_len=seq_len)
    assert got.dtype == torch.float64 and got.shape == (head_dim // 2,)
    assert_relatively_close(got, expected)
    assert math.isclose(factor, expected_factor, rel_tol=1e-6), (factor, expected_factor)


@pytest.mark.parametrize(("head_dim", "base", "original"), SHAPES)
def test_default_matches_transformers(head_dim, base, original):
    assert_parity(head_dim, base, {"rope_type": "default"}, max_positions=original)
    inv_freq, factor = rope_frequencies(head_dim, base)
    assert torch.equal(inv_freq, sinusoid_frequencies(head_dim, base)) and factor == 1.0


def test_default_has_no_entry_in_rope_init_functions():
    # 'default' is computed by each model's rotary class in transformers 5; the test above uses LlamaRotaryEmbedding's.
    assert "default" not in ROPE_INIT_FUNCTIONS


@pytest.mark.parametrize(("head_dim", "base", "original"), SHAPES)
@pytest.mark.parametrize("factor", FACTORS)
def test_linear_matches_transformers(head_dim, base, original, factor):
    assert_parity(head_dim, base, {"rope_type": "linear", "factor": factor}, max_positions=original)


@pytest.mark.parametrize(("head_dim", "base", "original"), SHAPES)
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("times", [0.5, 1.0, 1.5, 4.0, 16.0])
def test_dynamic_matches_transformers(head_dim, base, original, factor, times):
    # transformers reads the original length from max_position_embeddings; we from the dict.
    params = {"rope_type": "dynamic", "factor": factor}
    seq_len = int(original * times)
    expected, _ = reference(head_dim, base, params, max_positions=original, seq_len=seq_len)
    got, attention = rope_frequencies(
        head_dim, base, {**params, "original_max_position_embeddings": original}, seq_len=seq_len
    )
    assert_relatively_close(got, expected)
    assert attention == 1.0


@pytest.mark.parametrize(("head_dim", "base", "original"), SHAPES)
def test_dynamic_without_seq_len_is_plain_rope(head_dim, base, original):
    params = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": original}
    torch.testing.assert_close(rope_frequencies(head_dim, base, params)[0], sinusoid_frequencies(head_dim, base))
    expected, _ = reference(head_dim, base, {"rope_type": "dynamic", "factor": 4.0}, max_positions=original)
    assert_relatively_close(rope_frequencies(head_dim, base, params)[0], expected)


@pytest.mark.parametrize(("head_dim", "base", "original"), SHAPES)
@pytest.mark.parametrize("times", [1.5, 4.0, 16.0])
def test_ntk_is_dynamic_at_its_effective_factor(head_dim, base, original, times):
    """transformers has no static NTK-aware type: its dynamic type at length s is NTK-aware at factor(s)."""
    factor, seq_len = 2.0, int(original * times)
    expected, _ = reference(
        head_dim, base, {"rope_type": "dynamic", "factor": factor}, max_positions=original, seq_len=seq_len
    )
    effective = factor * seq_len / original - (factor - 1)
    got, _ = rope_frequencies(head_dim, base, {"rope_type": "ntk", "factor": effective})
    assert_relatively_close(got, expected)


@pytest.mark.parametrize(("head_dim", "base"), [(64, 100000.0), (128, 10000.0), (16, 10000.0)])
@pytest.mark.parametrize("factor", [2.0, 4.0, 16.0])
def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest(head_dim, base, factor):
    plain = sinusoid_frequencies(head_dim, base)
    scaled, _ = rope_frequencies(head_dim, base, {"rope_type": "ntk", "factor": factor})
    assert scaled[0] == plain[0] == 1.0
    torch.testing.assert_close(scaled[-1], plain[-1] / factor)
    assert ((plain / scaled)[1:] > 1).all() and ((plain / scaled).diff() > 0).all()
    assert math.isclose(ntk_base(base, factor, head_dim), base * factor ** (head_dim / (head_dim - 2)))


YARN_EXTRAS = [
    {},
    {"beta_fast": 16.0, "beta_slow": 2.0},
    {"truncate": False},
    {"attention_factor": 1.5},
    {"mscale": 1.0, "mscale_all_dim": 0.707},
]


@pytest.mark.parametrize(("head_dim", "base", "original"), SHAPES)
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("extra", YARN_EXTRAS)
def test_yarn_matches_transformers(head_dim, base, original, factor, extra):
    params = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original, **extra}
    assert_parity(head_dim, base, params, max_positions=int(original * factor))


@pytest.mark.parametrize(("head_dim", "base", "original"), SHAPES)
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize(("low", "high"), [(1.0, 4.0), (2.0, 8.0), (0.5, 1.0)])
def test_llama3_matches_transformers(head_dim, base, original, factor, low, high):
    params = {
        "rope_type": "llama3",
        "factor": factor,
        "original_max_position_embeddings": original,
        "low_freq_factor": low,
        "high_freq_factor": high,
    }
    assert_parity(head_dim, base, params, max_positions=int(original * factor))


def test_a_real_rope_parameters_dict_can_be_passed_as_it_is():
    llama31 = {
        "rope_theta": 500000.0,
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    assert_parity(128, 500000.0, llama31, max_positions=131072)
    old_style = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    inv_freq, attention = rope_frequencies(128, 1e6, old_style)
    assert inv_freq.shape == (64,) and math.isclose(attention, 0.1 * math.log(4.0) + 1)


def test_yarn_attention_factor_and_ramp():
    assert math.isclose(yarn_attention_factor(6.0), 1.1792, abs_tol=1e-4)
    assert yarn_attention_factor(1.0) == 1.0
    ramp = yarn_ramp(64, 100000.0, 8192)
    assert ramp.shape == (32,) and ramp[0] == 0.0 and ramp[-1] == 1.0 and (ramp.diff() >= 0).all()


def test_yarn_keeps_fast_pairs_and_divides_slow_ones():
    plain = sinusoid_frequencies(64, 100000.0)
    scaled, _ = rope_frequencies(
        64, 100000.0, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
    )
    turns = 8192 / rope_wavelengths(plain)
    torch.testing.assert_close(scaled[turns > 32], plain[turns > 32])
    torch.testing.assert_close(scaled[turns < 1], plain[turns < 1] / 4)


def test_llama3_bands_by_wavelength():
    share = llama3_bands(torch.tensor([100.0, 2048.0, 4096.0, 8192.0, 9000.0]), 8192, 1.0, 4.0)
    torch.testing.assert_close(share, torch.tensor([0.0, 0.0, 2 / 3, 1.0, 1.0], dtype=torch.float64))


def test_dynamic_factor():
    assert dynamic_factor(4.0, 100, 200) == 1.0
    assert dynamic_factor(1.0, 800, 200) == 4.0
    assert dynamic_factor(2.0, 400, 200) == 3.0


def test_rotary_with_inv_freq_and_attention_factor():
    x = torch.randn(2, 3, 10, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    plain = sinusoid_frequencies(16)
    torch.testing.assert_close(apply_rotary(x, inv_freq=plain), apply_rotary(x))
    torch.testing.assert_close(apply_rotary_half(x, inv_freq=plain), apply_rotary_half(x))
    # linear scaling by 4 is the same as positions divided by 4
    positions = torch.arange(10, dtype=torch.float64)
    torch.testing.assert_close(apply_rotary(x, inv_freq=plain / 4), apply_rotary(x, positions / 4))
    torch.testing.assert_close(apply_rotary(x, attention_factor=1.5), 1.5 * apply_rotary(x))
    torch.testing.assert_close(rotary_angles(positions, 16, inv_freq=plain / 2), rotary_angles(positions / 2, 16))
    with pytest.raises(ValueError, match="one frequency per pair"):
        apply_rotary(x, inv_freq=plain[:3])
    with pytest.raises(ValueError, match="attention_factor"):
        apply_rotary(x, attention_factor=0.0)


def test_set_rope_scaling_on_a_tiny_model():
    model = TinyTransformer(TransformerConfig(8, position="rope"), seed=0)
    tokens = torch.randint(8, (2, 40), generator=torch.Generator().manual_seed(1))
    before = model(tokens)
    linear = with_rope_scaling(model, {"rope_type": "linear", "factor": 4.0})
    assert all(block.attention.rope_scaling is None for block in model.blocks)  # the original is untouched
    torch.testing.assert_close(model(tokens), before)
    assert not torch.allclose(linear(tokens), before)
    # dynamic scaling changes nothing within the original length
    dynamic = with_rope_scaling(model, {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 40})
    torch.testing.assert_close(dynamic(tokens), before)
    assert not torch.allclose(dynamic(torch.cat([tokens, tokens], 1))[:, :40], before)
    set_rope_scaling(dynamic, None)
    torch.testing.assert_close(dynamic(tokens), before)


@pytest.mark.parametrize(
    ("scaling", "error", "words"),
    [
        ({"rope_type": "linear", "factor": 0.5}, ValueError, "at least 1"),
        ({"rope_type": "stretchy", "factor": 2.0}, ValueError, "unknown rope_type"),
        ({"factor": 2.0}, ValueError, "rope_type"),
        ({"rope_type": "yarn", "factor": 2.0}, ValueError, "original_max_position_embeddings"),
        (
            {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
            ValueError,
            "low_freq_factor",
        ),
        ({"rope_type": "linear", "factor": 2.0, "beta_fast": 3}, ValueError, "does not use"),
        ({"rope_type": "linear", "factor": 2.0, "rope_theta": 500.0}, ValueError, "disagrees"),
        (
            {
                "rope_type": "yarn",
                "factor": 2.0,
                "original_max_position_embeddings": 64,
                "beta_fast": 1,
                "beta_slow": 2,
            },
            ValueError,
            "beta_fast",
        ),
        (
            {
                "rope_type": "llama3",
                "factor": 8.0,
                "original_max_position_embeddings": 8192,
                "low_freq_factor": 4.0,
                "high_freq_factor": 1.0,
            },
            ValueError,
            "high_freq_factor",
        ),
        ({"rope_type": "linear", "factor": "4"}, TypeError, "factor"),
        ("linear", TypeError, "rope_parameters"),
    ],
)
def test_bad_scaling_is_refused_clearly(scaling, error, words):
    with pytest.raises(error, match=words):
        rope_frequencies(64, 10000.0, scaling)


def test_bad_shapes_are_refused_clearly():
    with pytest.raises(ValueError, match="even"):
        rope_frequencies(63, 10000.0)
    with pytest.raises(ValueError, match="positive"):
        rope_frequencies(64, -1.0)
    with pytest.raises(ValueError, match="seq_len"):
        rope_frequencies(
            64, 1e4, {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 8}, seq_len=0
        )
    with pytest.raises(ValueError, match="rotary"):
        set_rope_scaling(
            TinyTransformer(TransformerConfig(8, position="alibi")), {"rope_type": "linear", "factor": 2.0}
        )
    with pytest.raises(ValueError, match="at least 1"):
        set_rope_scaling(TinyTransformer(TransformerConfig(8, position="rope")), {"rope_type": "linear", "factor": 0.5})
