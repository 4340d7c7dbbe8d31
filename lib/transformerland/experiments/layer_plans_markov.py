"""Chapter 9's layer plans on the order-2 Markov source, over seeds: the losses past the training length.

The chapter compares the five four-layer plans of :func:`~transformerland.encodings.layer_plans.compared_plans`
(their one odd layer last, where "every fourth layer" puts it) on chapter 5's order-2 Markov source, trained
at 32 tokens and scored at 32, 64, 128 and 256. Fifteen trainings (five plans, seeds 0-2) do not fit in the
chapter's time, so ``benchmarks/layer_plans_markov.py`` runs every point (:func:`markov_sweep_losses`) and
writes the results with their provenance to a data file that the chapter reads (:func:`load_markov_sweep`).
"""

from __future__ import annotations

import importlib.resources
import json
from operator import attrgetter
from typing import Any

from ..tasks import MarkovTask
from ..training import evaluation_batches
from ._layer_plan_point import plan_point

__all__ = ["MARKOV_SWEEP", "load_markov_sweep", "markov_sweep_floor", "markov_sweep_losses"]


#: The Markov sweep's source, model and recipe: an order-2 source over 8 symbols, four-layer decoders of
#: width 64 with four heads, windows of 8 and the one global (or NoPE) layer last, trained at 32 tokens for
#: 200 steps and scored at 32, 64, 128 and 256 tokens on the same held-out sequences for every plan.
MARKOV_SWEEP: dict[str, Any] = {
    "task": {"vocab_size": 8, "order": 2, "seed": 0},
    "size": {"d_model": 64, "n_layers": 4, "n_heads": 4, "d_ff": 256, "max_len": 256},
    "window": 8,
    "special": 3,
    "recipe": {"steps": 200, "length": 32, "batch_size": 32, "lr": 3e-3, "warmup": 48},
    "eval_lengths": [32, 64, 128, 256],
    "eval": {"batch_size": 64, "n_batches": 1},
}


def markov_sweep_losses(plan: str, seed: int, steps: int | None = None) -> list[float]:
    """One point of the Markov sweep: train ``plan`` (a name of :func:`compared_plans`) with ``seed``.

    Returns the mean next-token loss (nats) at each of ``MARKOV_SWEEP["eval_lengths"]``. ``steps``
    overrides the recipe's (a quick check).
    """
    # a shortened run keeps the recipe's warm-up, up to all of its steps
    loss = attrgetter("loss")
    return plan_point(MARKOV_SWEEP, MarkovTask, loss, lambda n: n, plan, seed, steps, MARKOV_SWEEP["special"])


def markov_sweep_floor() -> dict[str, list[float]]:
    """The lowest losses at each of ``MARKOV_SWEEP["eval_lengths"]``, on the held-out batches every point is scored on.

    ``"entropy"``: the source's entropy rate over those batches' contexts (:meth:`MarkovTask.entropy_rate`),
    the loss a perfect model reaches there on average; ``"source"``: the loss of the source's own
    next-token probabilities on those batches' targets (:meth:`MarkovTask.source_loss`), what the perfect
    model scores on these very sequences. Each is the mean over the batches, which are all of one size.
    """
    task = MarkovTask(**MARKOV_SWEEP["task"])
    floor: dict[str, list[float]] = {"entropy": [], "source": []}
    for n in MARKOV_SWEEP["eval_lengths"]:
        batches = list(evaluation_batches(task, length=n, **MARKOV_SWEEP["eval"]))
        floor["entropy"].append(sum(map(task.entropy_rate, batches)) / len(batches))
        floor["source"].append(sum(map(task.source_loss, batches)) / len(batches))
    return floor


def load_markov_sweep() -> dict[str, Any]:
    """The Markov sweep measured by ``benchmarks/layer_plans_markov.py`` and shipped with the library.

    A dict with ``"setup"`` (:data:`MARKOV_SWEEP` as it was run), ``"losses"`` (plan name → seed, as a
    string → the losses at each evaluation length) and ``"provenance"`` (commit, date, machine, versions,
    command, seconds).
    """
    text = importlib.resources.files("transformerland").joinpath("data/layer_plans_markov.json").read_text()
    return json.loads(text)
