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

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
from transformerland.encodings.layer_plans import compared_plans
from transformerland.experiments.layer_plans_lookup import LOOKUP_SWEEP, lookup_sweep_accuracy

from benchmarks.provenance import sweep_sitting

RESULTS = Path(__file__).parents[1] / "lib" / "transformerland" / "data" / "layer_plans_lookup.json"


def _point(plan: str, seed: int, special: int) -> tuple[str, int, int, list[float], float]:
    torch.set_num_threads(1)
    start = time.perf_counter()
    accuracy = lookup_sweep_accuracy(plan, seed, special=special)
    return plan, seed, special, accuracy, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--plans", nargs="+", default=list(compared_plans()), help="plan names (default: all five)")
    parser.add_argument("--jobs", type=int, default=2, help="trainings at once, one CPU core each")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    start = time.perf_counter()
    accuracy: dict[str, dict[str, list[float]]] = {plan: {} for plan in args.plans}
    last = [plan for plan in LOOKUP_SWEEP["last"] if plan in args.plans]
    accuracy_last: dict[str, dict[str, list[float]]] = {plan: {} for plan in last}
    points = [(plan, seed, LOOKUP_SWEEP["special"]) for seed in args.seeds for plan in args.plans]
    points += [(plan, seed, 3) for seed in args.seeds for plan in last]
    seconds = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for plan, seed, special, shares, took in pool.map(_point, *zip(*points, strict=True)):
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
