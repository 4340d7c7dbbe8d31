"""TinyTransformer and its TransformerConfig: every position scheme, shapes, seeding, symmetry and bad input."""

from __future__ import annotations

import pytest
import torch
from transformerland.encodings import SequenceTooLongError
from transformerland.model import POSITION_SCHEMES, TinyTransformer, TransformerBlock, TransformerConfig

SMALL = dict(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=12)


def tiny(vocab_size: int = 10, *, seed: int | None = 0, **options: object) -> TinyTransformer:
    """A TinyTransformer of the SMALL sizes unless ``options`` say otherwise."""
    return TinyTransformer(TransformerConfig(vocab_size, **{**SMALL, **options}), seed=seed)


def tokens(batch: int = 2, length: int = 8, vocab: int = 10, seed: int = 0) -> torch.Tensor:
    return torch.randint(vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_every_scheme_gives_logits_of_the_right_shape(position: str, causal: bool) -> None:
    model = tiny(position=position, causal=causal)
    logits = model(tokens())
    assert logits.shape == (2, 8, 10)
    assert torch.isfinite(logits).all()


def test_int32_tokens_are_accepted() -> None:
    model = tiny()
    torch.testing.assert_close(model(tokens().int()), model(tokens()))


def test_only_the_learned_scheme_adds_parameters_and_exactly_its_table() -> None:
    counts = {p: tiny(position=p).num_parameters() for p in POSITION_SCHEMES}
    assert counts["learned"] - counts["none"] == 12 * 16
    assert counts["sinusoidal"] == counts["rope"] == counts["alibi"] == counts["none"]


def test_the_default_scales_of_tokens_and_positions() -> None:
    learned = TinyTransformer(TransformerConfig(64, position="learned", d_model=64, max_len=64))
    assert abs(float(learned.embed.weight.detach().std()) - 0.02) < 0.003
    assert abs(float(learned.positions.weight.detach().std()) - 0.02) < 0.003
    sinusoidal = TinyTransformer(TransformerConfig(64, position="sinusoidal", d_model=64))
    assert abs(float(sinusoidal.embed.weight.detach().std()) - 1.0) < 0.1
    loud = TinyTransformer(
        TransformerConfig(64, position="learned", d_model=64, max_len=64, learned_init_std=None, embed_init_std=1.0)
    )
    assert abs(float(loud.positions.weight.detach().std()) - 1.0) < 0.1
    assert abs(float(loud.embed.weight.detach().std()) - 1.0) < 0.1


def test_same_seed_same_model_other_seed_other_model() -> None:
    a, b = tiny(seed=3), tiny(seed=3)
    c = tiny(seed=4)
    for (name, pa), pb in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb), name
    assert not torch.equal(a.embed.weight, c.embed.weight)


def test_a_seeded_model_leaves_the_global_generator_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    tiny(seed=0)
    torch.testing.assert_close(torch.rand(3), expected)


def test_without_positions_an_encoder_is_permutation_equivariant() -> None:
    x = tokens(batch=1, length=8)
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(1))
    blind = tiny(position="none", causal=False)
    torch.testing.assert_close(blind(x[:, perm]), blind(x)[:, perm], atol=1e-5, rtol=1e-5)
    for position in ("learned", "sinusoidal", "rope", "alibi"):
        model = tiny(position=position, causal=False)
        gap = (model(x[:, perm]) - model(x)[:, perm]).abs().max()
        assert gap > 1e-3, position


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_a_causal_model_does_not_look_ahead(position: str) -> None:
    model = tiny(position=position, causal=True)
    x = tokens(batch=1, length=8)
    changed = x.clone()
    changed[0, 5:] = (changed[0, 5:] + 1) % 10
    torch.testing.assert_close(model(changed)[:, :5], model(x)[:, :5])


def test_a_learned_model_refuses_inputs_longer_than_its_table() -> None:
    model = tiny(position="learned")
    model(tokens(length=12))
    with pytest.raises(SequenceTooLongError, match="12 rows"):
        model(tokens(length=13))
    tiny(position="sinusoidal")(tokens(length=40))  # no table, no limit


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (torch.zeros(2, 8), TypeError, "integer ids"),
        (torch.zeros(8, dtype=torch.long), ValueError, "2 dimensions"),
        (torch.full((1, 4), 10), ValueError, "0 … 9"),
        (torch.full((1, 4), -1), ValueError, "0 … 9"),
        ([[1, 2, 3]], TypeError, "torch.Tensor"),
    ],
)
def test_bad_tokens_are_named(bad: object, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        tiny()(bad)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        (dict(position="absolute"), ValueError, "position"),
        (dict(vocab_size=0), ValueError, "vocab_size"),
        (dict(n_layers=0), ValueError, "n_layers"),
        (dict(n_heads=3), ValueError, "n_heads must divide d_model"),
        (dict(embed_init_std=-1.0), ValueError, "embed_init_std"),
        (dict(max_len=0, position="learned"), ValueError, "max_len"),
        (dict(d_model=6, n_heads=2, position="rope"), ValueError, "even head width"),
        (dict(d_model=15, n_heads=3, position="sinusoidal"), ValueError, "d_model must be even"),
        (dict(d_model=16.0), TypeError, "d_model must be a positive integer"),
        (dict(causal="yes"), TypeError, "causal must be True"),
        (dict(learned_init_std=0.0), ValueError, "learned_init_std"),
        (dict(rope_base=-1.0), ValueError, "rope_base"),
    ],
)
def test_a_bad_config_fails_when_it_is_made(kwargs: dict, error: type[Exception], words: str) -> None:
    arguments = {**SMALL, **kwargs}
    vocab = arguments.pop("vocab_size", 10)
    with pytest.raises(error, match=words):
        TransformerConfig(vocab, **arguments)


def test_the_config_is_frozen_and_passed_down_to_every_layer() -> None:
    config = TransformerConfig(10, position="rope", rope_base=500.0, **{k: v for k, v in SMALL.items()})
    with pytest.raises(AttributeError):
        config.d_model = 32  # type: ignore[misc]
    model = TinyTransformer(config)
    assert model.config is config and model.causal
    attention = model.blocks[0].attention
    assert (attention.position, attention.rope_base, attention.n_heads) == ("rope", 500.0, 2)
    assert TransformerConfig(10, position="learned").attention_position == "none"


def test_the_token_scale_follows_the_scheme_unless_given() -> None:
    assert TransformerConfig(10, position="sinusoidal").token_init_std == 1.0
    assert TransformerConfig(10, position="rope").token_init_std == 0.02
    assert TransformerConfig(10, position="sinusoidal", embed_init_std=0.5).token_init_std == 0.5


def test_model_and_block_want_a_config() -> None:
    with pytest.raises(TypeError, match="config must be a TransformerConfig, got int"):
        TinyTransformer(10)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="TransformerConfig"):
        TransformerBlock(16)  # type: ignore[arg-type]


def test_cached_tables_and_masks_give_the_same_answer_at_every_length() -> None:
    # The sinusoid table and the causal mask are kept between calls: a short call after a long one
    # (and a long one after a short one) must give what a fresh model gives.
    x = tokens(length=20)
    for position in ("sinusoidal", "rope", "alibi"):
        fresh_long, fresh_short = tiny(position=position)(x), tiny(position=position)(x[:, :5])
        model = tiny(position=position)
        short, long, short_again = model(x[:, :5]), model(x), model(x[:, :5])
        torch.testing.assert_close(short, fresh_short, rtol=0, atol=0)
        torch.testing.assert_close(short_again, fresh_short, rtol=0, atol=0)
        torch.testing.assert_close(long, fresh_long, rtol=0, atol=0)
        assert not any(name.endswith(("table", "mask")) for name in model.state_dict()), position
