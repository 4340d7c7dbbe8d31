"""Chapter 9's layer plans on the order-2 Markov source, over seeds: the Markov sweep.

Trains the five four-layer plans of :func:`transformerland.encodings.layer_plans.compared_plans`, their one
global or NoPE layer last, on chapter 5's order-2 Markov source with the recipe of
:data:`transformerland.experiments.layer_plans_markov.MARKOV_SWEEP`, for each seed, and records the loss at
each evaluation length (:func:`~transformerland.experiments.layer_plans_markov.markov_sweep_losses` is one
point). The chapter cannot afford these trainings in its 45 s, so it reads the results from the file this
script writes (by default the library's ``data/layer_plans_markov.json``), with their provenance.
``tests/test_layer_plans_markov.py`` re-runs one point and compares it with the file;
``tests/test_claims_seeds_ch9.py`` retrains every point and holds the chapter's sentences to them.

    python -m benchmarks.layer_plans_markov                          # seeds 0-2, every plan
    python -m benchmarks.layer_plans_markov --seeds 0 --out /tmp/one.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from transformerland.encodings.layer_plans import compared_plans
from transformerland.experiments.layer_plans_markov import MARKOV_SWEEP, markov_sweep_losses

from benchmarks.provenance import sweep_sitting
from benchmarks.sweep import run_points, sweep_parser

RESULTS = Path(__file__).parents[1] / "lib" / "transformerland" / "data" / "layer_plans_markov.json"


def main() -> int:
    args = sweep_parser(__doc__, RESULTS).parse_args()
    start = time.perf_counter()
    plans = compared_plans(MARKOV_SWEEP["window"], MARKOV_SWEEP["special"])
    losses: dict[str, dict[str, list[float]]] = {plan: {} for plan in plans}
    points = [(plan, seed) for seed in args.seeds for plan in plans]
    seconds = []
    for (plan, seed), values, took in run_points(markov_sweep_losses, points, args.jobs):
        losses[plan][str(seed)] = values
        seconds.append(took)
        print(f"{plan:40s} seed {seed}: " + " ".join(f"{v:.3f}" for v in values) + f"  ({took:.0f} s)")
    results = {
        "setup": MARKOV_SWEEP,
        "plans": {name: [vars(layer) for layer in plan] for name, plan in plans.items()},
        "losses": losses,
        "provenance": sweep_sitting("benchmarks.layer_plans_markov", args.seeds, args.jobs, seconds, start),
    }
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
