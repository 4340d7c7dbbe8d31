"""Entries for chapter 9's two sweeps of the layer plans: one point of each, and the results they ship."""

from __future__ import annotations

import math

from transformerland.encodings.layer_plans import compared_plans
from transformerland.experiments import layer_plans_lookup, layer_plans_markov

from . import Choice, Count, Size, contract

PLANS = tuple(compared_plans())

CONTRACTS = [
    contract(
        "transformerland.experiments.layer_plans_lookup.lookup_sweep_accuracy",
        plan=Choice(PLANS[0], PLANS),
        seed=Count(0),
        steps=Size(2, optional=True),
        run_good=False,  # a point trains a model: only its bad values are tried here
    ),
    contract(
        "transformerland.experiments.layer_plans_lookup.load_lookup_sweep",
        reference=lambda out, a: list(out["accuracy"]) == list(PLANS) and out["provenance"]["seeds"] == [0, 1, 2],
    ),
    contract(
        "transformerland.experiments.layer_plans_markov.markov_sweep_losses",
        plan=Choice(PLANS[0], PLANS),
        seed=Count(0),
        steps=Size(2, optional=True),
        run_good=False,
    ),
    contract(
        "transformerland.experiments.layer_plans_markov.markov_sweep_floor",
        reference=lambda out, a: (
            all(len(out[k]) == len(layer_plans_markov.MARKOV_SWEEP["eval_lengths"]) for k in ("entropy", "source"))
            and all(0 < x < math.log(8) for k in ("entropy", "source") for x in out[k])
        ),
    ),
    contract(
        "transformerland.experiments.layer_plans_markov.load_markov_sweep",
        reference=lambda out, a: set(out["losses"]) == set(PLANS) and "commit" in out["provenance"],
    ),
]
assert layer_plans_lookup.__all__ == ["LOOKUP_SWEEP", "load_lookup_sweep", "lookup_sweep_accuracy"]
assert layer_plans_markov.__all__ == ["MARKOV_SWEEP", "load_markov_sweep", "markov_sweep_floor", "markov_sweep_losses"]
