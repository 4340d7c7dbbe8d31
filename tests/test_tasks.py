"""The synthetic tasks: shapes, masks, targets, determinism and bad input."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.experiments.remedies import position_losses
from transformerland.tasks import Batch, MarkovTask, ReverseTask, SortTask, Task
from transformerland.training import evaluate, evaluation_batches

TASKS = {
    "markov": lambda: MarkovTask(vocab_size=6, order=2),
    "reverse": lambda: ReverseTask(vocab_size=8),
    "sort": lambda: SortTask(vocab_size=8),
}


def sample(name: str, batch: int = 4, length: int = 6, seed: int = 0) -> Batch:
    return TASKS[name]().sample(batch, length, torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("name", TASKS)
def test_shapes_dtypes_and_vocabulary(name: str) -> None:
    batch = sample(name)
    shape = (4, 6)
    assert batch.inputs.shape == batch.targets.shape == batch.mask.shape == shape
    assert batch.inputs.dtype == batch.targets.dtype == torch.long
    assert isinstance(TASKS[name](), Task)  # what train and evaluate need
    assert batch.mask.dtype == torch.bool and batch.mask.any()
    vocab = TASKS[name]().vocab_size
    for t in (batch.inputs, batch.targets):
        assert int(t.min()) >= 0 and int(t.max()) < vocab


@pytest.mark.parametrize("name", TASKS)
def test_same_seed_same_batch_other_seed_other_batch(name: str) -> None:
    a, b, c = sample(name, seed=5), sample(name, seed=5), sample(name, seed=6)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets) and torch.equal(a.mask, b.mask)
    assert not torch.equal(a.inputs, c.inputs)


@pytest.mark.parametrize("name", TASKS)
def test_bad_lengths_are_named(name: str) -> None:
    with pytest.raises(ValueError, match="length"):
        sample(name, length=0)
    with pytest.raises(TypeError, match="length"):
        TASKS[name]().sample(2, 4.0, torch.Generator())


def test_batch_moves_all_three_tensors() -> None:
    moved = sample("sort").to("cpu")
    assert moved.inputs.device.type == moved.targets.device.type == moved.mask.device.type == "cpu"


def test_markov_targets_are_the_next_tokens_and_the_mask_skips_short_contexts() -> None:
    batch = sample("markov", length=10)
    assert torch.equal(batch.inputs[:, 1:], batch.targets[:, :-1])
    assert not batch.mask[:, :1].any() and batch.mask[:, 1:].all()  # order 2: target 0 lacks a full context
    task = MarkovTask(vocab_size=6, order=2)
    torch.testing.assert_close(task.transitions.sum(-1), torch.ones(36))
    assert 0.0 < task.entropy_rate(batch) < math.log(6)


class SourceModel(torch.nn.Module):
    """The Markov source as a model: at each place with a full context, the log of its true next-token row."""

    def __init__(self, task: MarkovTask) -> None:
        super().__init__()
        self.task = task

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.task.source_log_probs(tokens)


def test_source_loss_is_what_the_source_itself_scores_and_averages_to_the_entropy_rate() -> None:
    task = MarkovTask(vocab_size=6, order=2, seed=3)
    batches = list(evaluation_batches(task, length=12, batch_size=16, n_batches=3, seed=5))
    scored = evaluate(SourceModel(task), task, length=12, batch_size=16, n_batches=3, seed=5).loss
    assert scored == pytest.approx(sum(map(task.source_loss, batches)) / 3, abs=1e-5)
    big = task.sample(512, 64, torch.Generator().manual_seed(0))  # 32,000 targets: sampling noise ~0.01
    assert abs(task.source_loss(big) - task.entropy_rate(big)) < 0.03
    small = task.sample(4, 8, torch.Generator().manual_seed(0))  # a few targets: the two part
    assert task.source_loss(small) != pytest.approx(task.entropy_rate(small), abs=1e-3)


def test_source_log_probs_score_per_position_what_the_source_scores() -> None:
    task = MarkovTask(vocab_size=6, order=2, seed=3)
    batch = task.sample(32, 12, torch.Generator().manual_seed(1))
    log_probs = task.source_log_probs(batch.inputs)  # (32, 12, 6)
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(32, 12))
    per_position = position_losses(log_probs, batch)  # (12,): NaN at position 0, unscored
    assert per_position[0].isnan() and not per_position[1:].isnan().any()
    assert float(per_position[1:].mean()) == pytest.approx(task.source_loss(batch), abs=1e-6)
    with pytest.raises(ValueError, match="id 6"):
        task.source_log_probs(torch.full((1, 4), 6))
    with pytest.raises(TypeError, match="long"):
        task.source_log_probs(batch.inputs.float())


def test_markov_rejects_lengths_within_its_order() -> None:
    with pytest.raises(ValueError, match="Markov order 3"):
        MarkovTask(vocab_size=4, order=3).sample(2, 3, torch.Generator())


def test_reverse_targets_mirror_the_input() -> None:
    batch = sample("reverse", length=7)
    assert torch.equal(batch.targets, batch.inputs.flip(1))
    assert batch.mask.all()


def test_sort_targets_are_the_sorted_input() -> None:
    batch = sample("sort", batch=16, length=9)
    assert batch.mask.all()
    assert (batch.targets.diff(dim=1) >= 0).all()
    assert torch.equal(batch.targets, batch.inputs.sort(dim=1).values)  # same multiset, in order


def test_sort_ceiling_without_positions() -> None:
    task = SortTask(vocab_size=8)
    same = Batch(torch.full((2, 5), 3), torch.full((2, 5), 3), torch.ones(2, 5, dtype=torch.bool))
    assert task.position_free_ceiling(same) == 1.0  # one symbol: the mode is always right
    distinct = torch.stack([torch.randperm(8, generator=torch.Generator().manual_seed(s)) for s in range(3)])
    assert task.position_free_ceiling(Batch(distinct, distinct.sort(1).values, distinct >= 0)) == 1 / 8
    ceiling = SortTask(16).position_free_ceiling(
        SortTask(16).sample(512, 16, torch.Generator().manual_seed(0))
    )  # expected share of the most frequent of 16 symbols in 16 draws
    assert 0.17 < ceiling < 0.21


@pytest.mark.parametrize("cls", [ReverseTask, SortTask, MarkovTask])
def test_bad_vocabulary_is_named(cls: type) -> None:
    with pytest.raises(ValueError, match="vocab_size"):
        cls(vocab_size=0)
    with pytest.raises(TypeError, match="vocab_size"):
        cls(vocab_size="16")


def test_stationary_bigrams_match_a_long_sample_and_the_stationary_vector() -> None:
    task = MarkovTask(vocab_size=5, order=2, seed=1)
    joint = task.stationary_bigrams()  # (5, 5)
    assert joint.shape == (5, 5) and abs(float(joint.sum()) - 1) < 1e-12 and bool((joint >= 0).all())
    batch = task.sample(64, length=400, generator=torch.Generator().manual_seed(0))
    tokens = torch.cat([batch.inputs, batch.targets[:, -1:]], dim=1)[:, 50:]  # past the uniform start
    counts = torch.zeros(5, 5, dtype=torch.float64)
    counts.index_put_(
        (tokens[:, :-1].flatten(), tokens[:, 1:].flatten()), torch.ones(1, dtype=torch.float64), accumulate=True
    )
    assert float((counts / counts.sum() - joint).abs().max()) < 0.01
    first = MarkovTask(vocab_size=4, order=1, seed=2)  # order 1: the stationary vector π of P, then π_b P(b, c)
    P = first.transitions.double() / first.transitions.double().sum(-1, keepdim=True)
    values, vectors = torch.linalg.eig(P.T)
    pi = vectors[:, values.real.argmax()].real
    pi = pi / pi.sum()
    torch.testing.assert_close(first.stationary_bigrams(), pi[:, None] * P)


def test_stationary_bigrams_reject_a_negative_number_of_steps() -> None:
    with pytest.raises(ValueError, match="steps"):
        MarkovTask(vocab_size=4).stationary_bigrams(steps=-1)
