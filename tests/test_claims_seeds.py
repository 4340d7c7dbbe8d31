"""Comparisons between trained models that the chapters state, checked over seeds 0, 1 and 2.

The chapters train each model once, with seed 0, and assert what they print. A sentence that
compares two trained models ("the learned model is ahead by less than 0.01", "ALiBi catches up
with more steps") must hold on other seeds too; these tests retrain the chapters' models with
the chapters' recipes on seeds 0-2. They take minutes on a CPU: ``pytest -m slow``.
"""

from __future__ import annotations

from functools import cache

import pytest
import torch
from transformerland.analysis import cosine_similarity_matrix, linear_position_probe, similarity_by_offset
from transformerland.encodings import scaling_recipes, with_rope_scaling
from transformerland.model import POSITION_SCHEMES, TinyTransformer, TransformerConfig
from transformerland.recall import LookupTask
from transformerland.remedies import extend_table, fine_tune, interpolate_table, with_position_table
from transformerland.tasks import MarkovTask, ReverseTask, SortTask
from transformerland.training import evaluate, train

pytestmark = [pytest.mark.slow, pytest.mark.seeds]
SEEDS = (0, 1, 2)

# Chapter 5: an order-2 Markov source, decoders trained at 32 tokens, tested at 32, 64, 128.
MARKOV = MarkovTask(vocab_size=8, order=2, seed=0)
MARKOV_SIZE = {"d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256, "max_len": 128}
TRAIN_LENGTH = 32
EVAL_LENGTHS = (32, 64, 128)


@cache
def markov_model(scheme: str, seed: int, steps: int = 240) -> TinyTransformer:
    """Chapter 5's decoder and recipe (warm-up a fifth of the steps), trained at 32 tokens."""
    model = TinyTransformer(TransformerConfig(MARKOV.vocab_size, position=scheme, **MARKOV_SIZE), seed=seed)
    train(
        model,
        MARKOV,
        steps=steps,
        length=TRAIN_LENGTH,
        batch_size=32,
        lr=3e-3,
        warmup=steps // 5,
        seed=seed,
        progress=False,
    )
    return model


def markov_loss(model: torch.nn.Module, length: int) -> float:
    return evaluate(model, MARKOV, length=length, batch_size=64, n_batches=2).loss


@cache
def markov_losses(scheme: str, seed: int, steps: int = 240) -> tuple[float, ...]:
    """Losses at 32, 64 and 128 tokens."""
    return tuple(markov_loss(markov_model(scheme, seed, steps), n) for n in EVAL_LENGTHS)


@cache
def entropy_rate() -> float:
    probe = MARKOV.sample(256, length=4 * TRAIN_LENGTH, generator=torch.Generator().manual_seed(1234))
    return MARKOV.entropy_rate(probe)


@pytest.mark.parametrize("seed", SEEDS)
def test_ch5_train_short_test_long_shape(seed: int) -> None:
    """ALiBi flat, learned and sinusoidal climbing, rotary between, none high but nearly flat."""
    first, _, last = 0, 1, 2
    losses = {scheme: markov_losses(scheme, seed) for scheme in POSITION_SCHEMES}
    assert losses["alibi"][last] - losses["alibi"][first] < 0.1, losses["alibi"]
    for scheme in ("learned", "sinusoidal"):
        assert losses[scheme][last] - losses[scheme][first] > 0.5, (scheme, losses[scheme])
    assert losses["rope"][1] < min(losses["learned"][1], losses["sinusoidal"][1]) - 0.15, losses
    assert losses["none"][first] > max(losses[s][first] for s in POSITION_SCHEMES if s != "none") + 0.2, losses
    assert losses["none"][last] - losses["none"][first] < 0.2, losses["none"]


@pytest.mark.parametrize("seed", SEEDS)
def test_ch5_sinusoidal_further_from_the_floor_than_learned(seed: int) -> None:
    """At 32 tokens, after 240 steps, the sinusoidal model's excess loss is over twice the learned one's."""
    floor = entropy_rate()
    learned = markov_losses("learned", seed)[0] - floor
    sinusoidal = markov_losses("sinusoidal", seed)[0] - floor
    assert learned < 0.08 and sinusoidal > 2 * learned, (learned, sinusoidal)


@pytest.mark.parametrize("seed", SEEDS)
def test_ch5_alibi_gap_is_a_budget_effect(seed: int) -> None:
    """Behind at 240 steps; within 0.05 of rotary at 720 steps, and still flat to 128 tokens."""
    short = {scheme: markov_losses(scheme, seed)[0] for scheme in ("alibi", "rope")}
    assert short["alibi"] > short["rope"] + 0.05, short
    alibi, rope = markov_losses("alibi", seed, steps=720), markov_losses("rope", seed, steps=720)
    assert alibi[0] - rope[0] < 0.05, (alibi, rope)
    assert alibi[2] - alibi[0] < 0.1, alibi


SORT = SortTask(vocab_size=16)


@cache
def sort_model(scheme: str, seed: int, steps: int = 300) -> TinyTransformer:
    """Chapter 3's sorting drill: an encoder with one position scheme, trained at 16 tokens."""
    model = TinyTransformer(TransformerConfig(16, max_len=24, position=scheme, causal=False), seed=seed)
    train(model, SORT, steps=steps, length=16, batch_size=64, lr=3e-3, seed=seed, progress=False)
    return model


def sort_accuracy(scheme: str, seed: int, steps: int = 300) -> float:
    """The token accuracy of chapter 3's model at the drill's own length."""
    return evaluate(sort_model(scheme, seed, steps), SORT, length=16).token_accuracy


def past_the_drill(scheme: str, seed: int) -> float:
    """Chapter 3's rows of 20: the share right on seats 16-19, which the drill never had."""
    model = sort_model(scheme, seed, 300)  # the same cache entry as sort_accuracy's
    rows = SORT.sample(256, length=20, generator=torch.Generator().manual_seed(1234))
    with torch.no_grad():
        right = model(rows.inputs).argmax(-1) == rows.targets
    return float(right[:, 16:].float().mean())


@pytest.mark.parametrize("seed", SEEDS)
def test_ch3_learned_and_sinusoidal_alike_in_distribution(seed: int) -> None:
    """Chapter 3's sorting drill: both above 0.98 token accuracy, the learned one ahead by less than 0.01."""
    accuracy = {scheme: sort_accuracy(scheme, seed) for scheme in ("learned", "sinusoidal")}
    assert min(accuracy.values()) > 0.98, accuracy
    assert abs(accuracy["learned"] - accuracy["sinusoidal"]) < 0.01, accuracy


@pytest.mark.parametrize("seed", SEEDS)
def test_ch3_four_seats_past_the_drill(seed: int) -> None:
    """Chapter 3's rows of 20: on seats 16-19 the learned model below 0.1, the sinusoids at least 0.15 above it."""
    far = {scheme: past_the_drill(scheme, seed) for scheme in ("learned", "sinusoidal")}
    assert far["learned"] < 0.1 and far["sinusoidal"] > far["learned"] + 0.15, far


REVERSE = ReverseTask(vocab_size=16)
MIDDLE_GUESS = 4.0  # a probe that always guesses seat 7.5 of 16 is off by 4 seats on average


@cache
def drill_model(drill: str, seed: int, table_std: float | None, token_std: float | None) -> TinyTransformer:
    """Chapter 3's exercises: the learned encoder with other starting scales, or on reversal."""
    config = TransformerConfig(
        16, max_len=24, position="learned", causal=False, learned_init_std=table_std, embed_init_std=token_std
    )
    model = TinyTransformer(config, seed=seed)
    task = SORT if drill == "sort" else REVERSE
    train(model, task, steps=300, length=16, batch_size=64, lr=3e-3, seed=seed, progress=False)
    return model


def read_ledger(model: TinyTransformer) -> tuple[float, float]:
    """The mean cosine of neighbouring rows of the drill's 16 seats, and the linear probe's error in seats."""
    table = model.positions.weight.detach()[:16]
    return float(similarity_by_offset(cosine_similarity_matrix(table))[1]), linear_position_probe(table)


@pytest.mark.parametrize("seed", SEEDS)
def test_ch3_a_loud_start_sorts_without_an_ordered_ledger(seed: int) -> None:
    """ex-3-4: started at N(0, 1) the model still sorts, but its ledger shows no neighbour band, unlike std 0.02's."""
    loud = drill_model("sort", seed, None, 1.0)
    loud_neighbour, loud_probe = read_ledger(loud)
    small_neighbour, small_probe = read_ledger(sort_model("learned", seed))
    assert evaluate(loud, SORT, length=16).token_accuracy > 0.9
    assert loud_neighbour < 0.2 and small_neighbour > loud_neighbour + 0.3, (loud_neighbour, small_neighbour)
    assert loud_probe > 0.7 * MIDDLE_GUESS and small_probe < 1.6, (loud_probe, small_probe)


@pytest.mark.parametrize("seed", SEEDS)
def test_ch3_a_table_louder_than_its_tokens_sorts_far_worse(seed: int) -> None:
    """ex-3-4, part 4: the table at N(0, 1) beside tokens at 0.02 gets much less far in 300 steps."""
    lopsided = evaluate(drill_model("sort", seed, None, 0.02), SORT, length=16)
    loud = evaluate(drill_model("sort", seed, None, 1.0), SORT, length=16)
    assert lopsided.token_accuracy < loud.token_accuracy - 0.3 and lopsided.sequence_accuracy < 0.05, lopsided


@pytest.mark.parametrize("seed", SEEDS)
def test_ch3_reversal_writes_no_neighbour_band(seed: int) -> None:
    """ex-3-5: the learned model reverses, and its ledger shows no neighbour band and no readable seat."""
    mirror = drill_model("reverse", seed, 0.02, None)
    neighbour, probe = read_ledger(mirror)
    assert evaluate(mirror, REVERSE, length=16).token_accuracy > 0.9
    assert abs(neighbour) < 0.2 and probe > 0.7 * MIDDLE_GUESS, (neighbour, probe)


@pytest.mark.parametrize("seed", SEEDS)
def test_ch5_interpolated_start_fine_tunes_better_than_extended(seed: int) -> None:
    """Chapter 5's remedies: after 60 steps at 128 tokens, the interpolated table beats the extended one."""
    learned = markov_model("learned", seed)
    rows = learned.positions.weight.detach()[:TRAIN_LENGTH]
    tune = {"steps": 60, "length": 4 * TRAIN_LENGTH, "batch_size": 16, "lr": 3e-3, "seed": 1, "progress": False}
    extended = with_position_table(learned, extend_table(rows, 4 * TRAIN_LENGTH, seed=0))
    stretched = with_position_table(learned, interpolate_table(rows, 4 * TRAIN_LENGTH))
    extended_long = markov_loss(fine_tune(extended, MARKOV, **tune)[0], 4 * TRAIN_LENGTH)
    stretched_long = markov_loss(fine_tune(stretched, MARKOV, **tune)[0], 4 * TRAIN_LENGTH)
    before = markov_losses("learned", seed)[2]
    assert extended_long < before - 0.15 and stretched_long < extended_long - 0.15, (
        before,
        extended_long,
        stretched_long,
    )


# Chapter 5's second task: a table written first, then questions whose answers are in it (answers scored).
LOOKUP = LookupTask(n_keys=64, n_values=4)


@cache
def lookup_model(scheme: str, seed: int, steps: int = 240) -> TinyTransformer:
    """Chapter 5's decoder and recipe, trained on the lookup task at 32 tokens (chapter 8 trains the rotary one)."""
    model = TinyTransformer(TransformerConfig(LOOKUP.vocab_size, position=scheme, **MARKOV_SIZE), seed=seed)
    train(model, LOOKUP, steps=steps, length=TRAIN_LENGTH, batch_size=32, lr=3e-3, warmup=steps // 5, seed=seed,
          progress=False)  # fmt: skip
    return model


def lookup_shares(model: torch.nn.Module) -> tuple[float, ...]:
    """Share of answers right at 32, 64 and 128 tokens."""
    return tuple(evaluate(model, LOOKUP, length=n, batch_size=64, n_batches=2).token_accuracy for n in EVAL_LENGTHS)


@cache
def lookup_accuracy(scheme: str, seed: int, steps: int = 240) -> tuple[float, ...]:
    return lookup_shares(lookup_model(scheme, seed, steps))


@pytest.mark.parametrize("seed", SEEDS)
def test_ch5_lookup_ranks_the_schemes_on_reaching_far_back(seed: int) -> None:
    """No positions perfect everywhere; rotary falls at 128 below ALiBi and learned; sinusoidal never learns it."""
    R = {scheme: lookup_accuracy(scheme, seed) for scheme in POSITION_SCHEMES}
    assert min(R["none"]) > 0.99, R
    assert all(R[s][0] > 0.99 for s in ("none", "learned", "rope", "alibi")) and max(R["sinusoidal"]) < 0.45, R
    assert R["rope"][2] < R["rope"][0] - 0.15 and R["rope"][2] < min(R["alibi"][2], R["learned"][2]) - 0.1, R
    assert R["alibi"][2] > 0.93 and R["learned"][2] > 0.9 and 0.65 < R["rope"][2] < 0.85, R


@pytest.mark.parametrize("seed", SEEDS)
def test_ch8_lookup_turns_the_recipes_round(seed: int) -> None:
    """Zero-shot at 128 tokens on the lookup: linear, YaRN and Llama 3 near perfect; plain < NTK-aware < dynamic."""
    recipes = {
        **scaling_recipes(TRAIN_LENGTH, 4.0),
        "dynamic, f=1": {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": TRAIN_LENGTH},
    }
    shares = {name: lookup_shares(with_rope_scaling(lookup_model("rope", seed), s)) for name, s in recipes.items()}
    A = {name: v[2] for name, v in shares.items()}
    assert all(v[0] > 0.99 for v in shares.values()), shares
    assert min(A["linear (PI)"], A["YaRN"], A["Llama 3"]) > 0.97 and A["plain RoPE"] < 0.85, A
    assert A["plain RoPE"] + 0.08 < A["NTK-aware"] < A["YaRN"] - 0.05 and A["dynamic NTK"] > A["NTK-aware"] + 0.02, A
    assert abs(A["dynamic, f=1"] - A["NTK-aware"]) < 1e-9 and A["plain RoPE"] > 0.65, A
