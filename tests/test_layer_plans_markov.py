"""Chapter 9's Markov sweep, shipped as a data file: every point and its provenance, and one point re-run."""

from __future__ import annotations

import pytest
from transformerland.encodings.layer_plans import compared_plans
from transformerland.experiments.layer_plans_markov import (
    MARKOV_SWEEP,
    load_markov_sweep,
    markov_sweep_floor,
    markov_sweep_losses,
)
from transformerland.tasks import MarkovTask
from transformerland.training import evaluation_batches

#: The point the slow test trains again: the control the chapter's argument turns on, on the first seed.
POINT = ("all 4 local, no global layer", "0")


def test_the_sweep_has_every_point_and_its_provenance() -> None:
    sweep = load_markov_sweep()
    assert sweep["setup"] == MARKOV_SWEEP, "the library's recipe changed since the sweep ran: run the benchmark again"
    seeds = [str(seed) for seed in sweep["provenance"]["seeds"]]
    assert seeds == ["0", "1", "2"]
    assert list(sweep["losses"]) == list(compared_plans())
    for by_seed in sweep["losses"].values():
        assert list(by_seed) == seeds
        for losses in by_seed.values():
            assert len(losses) == len(MARKOV_SWEEP["eval_lengths"]) and all(0 < x < 5 for x in losses)
    provenance = sweep["provenance"]
    assert len(provenance["commit"].removesuffix("+dirty")) == 40 and provenance["date"] and provenance["machine"]


def test_the_floor_is_the_sources_on_the_batches_every_point_is_scored_on() -> None:
    floor = markov_sweep_floor()
    task = MarkovTask(**MARKOV_SWEEP["task"])
    for i, n in enumerate(MARKOV_SWEEP["eval_lengths"]):
        (batch,) = evaluation_batches(task, length=n, **MARKOV_SWEEP["eval"])  # the sweep scores one batch
        assert floor["entropy"][i] == task.entropy_rate(batch) and floor["source"][i] == task.source_loss(batch)
    # a batch of 64 sequences puts the source's own loss within a few hundredths of the entropy rate
    assert all(abs(e - s) < 0.06 for e, s in zip(floor["entropy"], floor["source"], strict=True)), floor


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: markov_sweep_losses("Gemma 3", 0, steps=1), "plan must be one of"),
        (lambda: markov_sweep_losses("RoPE everywhere", -1, steps=1), "seed"),
        (lambda: markov_sweep_losses("RoPE everywhere", 0, steps=0), "steps"),
    ],
)
def test_bad_input(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.slow
def test_one_point_of_the_sweep_comes_out_the_same() -> None:
    """Train the point again with the library's recipe: the losses match the file's (same seed, same data)."""
    plan, seed = POINT
    recorded = load_markov_sweep()["losses"][plan][seed]
    again = markov_sweep_losses(plan, int(seed))
    assert all(abs(a - b) < 0.01 for a, b in zip(again, recorded, strict=True)), (again, recorded)
