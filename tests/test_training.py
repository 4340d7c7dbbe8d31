"""train and evaluate: seeded, device-aware, with correct metrics and clear errors."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from transformerland.model import POSITION_SCHEMES, TinyTransformer, TransformerConfig
from transformerland.tasks import Batch, MarkovTask, ReverseTask, SortTask
from transformerland.training import (
    EvalResult,
    TrainResult,
    evaluate,
    evaluation_batches,
    masked_loss,
    pick_device,
    side_by_side,
    train,
)

SMALL = dict(d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=8, causal=False)


def small_model(position: str = "learned", seed: int = 0) -> TinyTransformer:
    return TinyTransformer(TransformerConfig(8, position=position, **SMALL), seed=seed)


class Oracle(nn.Module):
    """Answers the reversal task perfectly, except at the positions in ``wrong``."""

    def __init__(self, vocab: int, wrong: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.vocab, self.wrong = vocab, list(wrong)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        answer = tokens.flip(1).clone()
        answer[:, self.wrong] = (answer[:, self.wrong] + 1) % self.vocab
        return 20.0 * nn.functional.one_hot(answer, self.vocab).float()


def test_train_records_every_step_and_learns() -> None:
    model = small_model()
    result = train(model, ReverseTask(8), steps=80, length=8, batch_size=32, warmup=10, progress=False)
    assert isinstance(result, TrainResult)
    assert len(result.losses) == 80 and result.seconds > 0 and result.device == str(pick_device())
    assert sum(result.losses[-10:]) / 10 < sum(result.losses[:10]) / 10 - 0.3
    assert not model.training  # handed back in evaluation mode


def test_same_seeds_same_run_other_seed_other_run() -> None:
    settings = dict(steps=15, length=8, batch_size=8, warmup=5, progress=False)
    a = train(small_model(), SortTask(8), seed=1, **settings)
    b = train(small_model(), SortTask(8), seed=1, **settings)
    c = train(small_model(), SortTask(8), seed=2, **settings)
    assert a.losses == b.losses
    assert a.losses != c.losses


def test_a_length_range_trains_on_several_lengths() -> None:
    seen = []

    class Recorder(ReverseTask):
        def sample(self, batch_size: int, length: int, generator: torch.Generator) -> Batch:
            seen.append(length)
            return super().sample(batch_size, length, generator)

    train(small_model(), Recorder(8), steps=30, length=(3, 8), batch_size=4, progress=False)
    assert min(seen) >= 3 and max(seen) <= 8 and len(set(seen)) > 2


def test_the_progress_bar_shows_its_description(capsys: pytest.CaptureFixture[str]) -> None:
    train(small_model(), ReverseTask(8), steps=3, length=8, batch_size=4, desc="ledger practice")
    assert "ledger practice" in capsys.readouterr().out
    train(small_model(), ReverseTask(8), steps=3, length=8, batch_size=4, progress=False)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        (dict(steps=0, length=8), ValueError, "steps"),
        (dict(steps=2, length=(6, 3)), ValueError, "shortest, longest"),
        (dict(steps=2, length=0), ValueError, "length"),
        (dict(steps=2, length=8.0), TypeError, "length"),
        (dict(steps=2, length=8, cpu_threads=0), ValueError, "cpu_threads"),
    ],
)
def test_bad_training_arguments_are_named(kwargs: dict, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        train(small_model(), ReverseTask(8), progress=False, **kwargs)


def test_training_uses_the_threads_asked_for_and_restores_the_setting() -> None:
    before = torch.get_num_threads()
    seen: list[int] = []

    class Spy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = small_model()

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            seen.append(torch.get_num_threads())
            return self.model(tokens)

    train(Spy(), ReverseTask(8), steps=2, length=8, progress=False, cpu_threads=1, device="cpu")
    evaluate(Spy(), ReverseTask(8), length=8, n_batches=1, cpu_threads=1, device="cpu")
    assert seen == [1, 1, 1] and torch.get_num_threads() == before
    seen.clear()
    train(Spy(), ReverseTask(8), steps=1, length=8, progress=False, cpu_threads=None, device="cpu")
    assert seen == [before]


def test_smoothed_is_a_running_mean() -> None:
    result = TrainResult(losses=[4.0, 2.0, 0.0, 2.0])
    assert result.smoothed(window=2) == [4.0, 3.0, 1.0, 1.0]
    assert result.smoothed(window=10) == [4.0, 3.0, 2.0, 2.0]
    assert TrainResult(losses=[1.5] * 30).smoothed() == [1.5] * 30


def test_evaluate_scores_a_perfect_model_perfectly() -> None:
    score = evaluate(Oracle(8), ReverseTask(8), length=6)
    assert isinstance(score, EvalResult)
    assert score.token_accuracy == 1.0 and score.sequence_accuracy == 1.0 and score.loss < 1e-6


def test_evaluate_counts_tokens_and_whole_sequences_apart() -> None:
    score = evaluate(Oracle(8, wrong=(2,)), ReverseTask(8), length=6)
    assert score.token_accuracy == pytest.approx(5 / 6)
    assert score.sequence_accuracy == 0.0
    assert score.loss > 1.0


def test_evaluate_is_repeatable_and_leaves_the_model_in_eval_mode() -> None:
    model = small_model()
    first = evaluate(model, SortTask(8), length=8, n_batches=2)
    second = evaluate(model, SortTask(8), length=8, n_batches=2)
    assert first == second
    assert not model.training
    with pytest.raises(ValueError, match="length"):
        evaluate(model, SortTask(8), length=0)


def test_evaluation_batches_are_the_ones_evaluate_scores() -> None:
    model, task = small_model(), SortTask(8)
    batches = list(evaluation_batches(task, length=8, n_batches=2, seed=7))
    again = list(evaluation_batches(task, length=8, n_batches=2, seed=7))
    assert len(batches) == 2 and all(torch.equal(a.inputs, b.inputs) for a, b in zip(batches, again, strict=True))
    assert not torch.equal(batches[0].inputs, batches[1].inputs)
    with torch.no_grad():
        by_hand = sum(masked_loss(model(b.inputs), b).item() for b in batches) / 2
    assert evaluate(model, task, length=8, n_batches=2, seed=7).loss == pytest.approx(by_hand, rel=1e-6)


def test_evaluation_batches_check_their_arguments_at_once() -> None:
    with pytest.raises(ValueError, match="length"):
        evaluation_batches(SortTask(8), length=0)
    with pytest.raises(TypeError, match="task"):
        evaluation_batches("sort", length=8)


def test_masked_loss_ignores_unscored_targets() -> None:
    logits = torch.zeros(1, 3, 4)
    logits[0, 0, 1] = 10.0  # confident and right at position 0
    targets = torch.tensor([[1, 2, 3]])
    scored_first = Batch(targets, targets, torch.tensor([[True, False, False]]))
    scored_all = Batch(targets, targets, torch.ones(1, 3, dtype=torch.bool))
    assert float(masked_loss(logits, scored_first)) < 1e-3
    assert float(masked_loss(logits, scored_all)) > 0.5


def test_pick_device() -> None:
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device().type == ("cuda" if torch.cuda.is_available() else "cpu")


def test_side_by_side_trains_exactly_as_one_after_another() -> None:
    """Every position scheme, trained two at a time on threads: the same weights, bit for bit, and losses."""
    task = MarkovTask(vocab_size=8, order=2, seed=0)
    config = {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32, "max_len": 32}

    def models() -> list[TinyTransformer]:
        return [TinyTransformer(TransformerConfig(8, position=p, **config), seed=1) for p in POSITION_SCHEMES]

    def fit(model: TinyTransformer) -> tuple[list[float], float]:
        result = train(model, task, steps=6, length=16, warmup=2, seed=3, progress=False, device="cpu")
        return result.losses, evaluate(model, task, length=24, n_batches=1, device="cpu").loss

    one_by_one, together = models(), models()
    expected = [fit(model) for model in one_by_one]
    state = torch.random.get_rng_state()
    assert side_by_side(fit, together, device="cpu") == expected
    assert torch.equal(torch.random.get_rng_state(), state), "the global generator must be left as it was"
    for a, b in zip(one_by_one, together, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_side_by_side_refuses_what_it_cannot_run() -> None:
    with pytest.raises(TypeError, match="function of one item"):
        side_by_side([1, 2], [3])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workers"):
        side_by_side(abs, [1], workers=0)
    assert side_by_side(abs, [-1, 2, -3], workers=1) == [1, 2, 3]
