"""Chapter 9's layer plans on a task that needs far context, over seeds: the lookup sweep.

Trains the five four-layer plans of :func:`transformerland.encodings.layer_plans.compared_plans` (RoPE
everywhere, SmolLM3's, Gemma 3's and Llama 4's patterns, and a control with every layer local), with their
one global or NoPE layer first, on chapter 5's lookup task with the recipe of
:data:`transformerland.experiments.layer_plans_lookup.LOOKUP_SWEEP`, for each seed, and the plans of its
``"last"`` with that layer last too. It records the share of answers right at each evaluation length
(:func:`~transformerland.experiments.layer_plans_lookup.lookup_sweep_accuracy` is one point). The chapter
cannot afford these trainings in its 45 s, so it reads the results from the file this script writes (by
default the library's ``data/layer_plans_lookup.json``), with their provenance: the code's commit (and
whether the work tree had changes), the date, the machine, the versions, the command and the seconds.
``tests/test_layer_plans_lookup.py`` re-runs one point and compares it with the file.

Each training takes about 30 s of one idle CPU core; the points run ``--jobs`` at a time, one core each.

    python -m benchmarks.layer_plans_lookup                          # seeds 0-2, every plan
    python -m benchmarks.layer_plans_lookup --seeds 0 --out /tmp/one.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from transformerland.encodings.layer_plans import compared_plans
from transformerland.experiments.layer_plans_lookup import LOOKUP_SWEEP, lookup_sweep_accuracy

from benchmarks.provenance import sweep_sitting
from benchmarks.sweep import run_points, sweep_parser

RESULTS = Path(__file__).parents[1] / "lib" / "transformerland" / "data" / "layer_plans_lookup.json"


def _accuracy(plan: str, seed: int, special: int) -> list[float]:
    return lookup_sweep_accuracy(plan, seed, special=special)


def main() -> int:
    parser = sweep_parser(__doc__, RESULTS)
    parser.add_argument("--plans", nargs="+", default=list(compared_plans()), help="plan names (default: all five)")
    args = parser.parse_args()
    start = time.perf_counter()
    accuracy: dict[str, dict[str, list[float]]] = {plan: {} for plan in args.plans}
    last = [plan for plan in LOOKUP_SWEEP["last"] if plan in args.plans]
    accuracy_last: dict[str, dict[str, list[float]]] = {plan: {} for plan in last}
    points = [(plan, seed, LOOKUP_SWEEP["special"]) for seed in args.seeds for plan in args.plans]
    points += [(plan, seed, 3) for seed in args.seeds for plan in last]
    seconds = []
    for (plan, seed, special), shares, took in run_points(_accuracy, points, args.jobs):
        table = accuracy if special == LOOKUP_SWEEP["special"] else accuracy_last
        table[plan][str(seed)] = shares
        seconds.append(took)
        where = "" if special == LOOKUP_SWEEP["special"] else " (global layer last)"
        print(f"{plan + where:60s} seed {seed}: " + " ".join(f"{v:.3f}" for v in shares) + f"  ({took:.0f} s)")
    plans = compared_plans(LOOKUP_SWEEP["window"], LOOKUP_SWEEP["special"])
    results = {
        "setup": LOOKUP_SWEEP,
        "plans": {name: [vars(layer) for layer in plan] for name, plan in plans.items()},
        "accuracy": accuracy,
        "accuracy_last": accuracy_last,
        "provenance": sweep_sitting("benchmarks.layer_plans_lookup", args.seeds, args.jobs, seconds, start),
    }
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
