"""Chapter 8's long-context recipes on the tiny decoders, over seeds: the recipe sweep.

For each seed, trains the four models of :data:`transformerland.experiments.recipe_sweep.SWEEP_PARTS` with the
recipe of :data:`~transformerland.experiments.recipe_sweep.RECIPE_SWEEP`: a RoPE model on the order-2 Markov
source (every recipe zero-shot and after 20 fine-tuning steps at 128 tokens), a RoPE model on the lookup (the
same, fine-tuned with plain RoPE and YaRN), an ALiBi model and a RoPE model with base 500,000
(:func:`~transformerland.experiments.recipe_sweep.recipe_sweep_point` is one of them). The chapter cannot afford
these trainings in its 45 s, so it reads the results from the file this script writes (by default the
library's ``data/recipe_sweep.json``), with their provenance: the code's commit (and whether the work tree had
changes), the date, the machine, the versions, the command and the seconds. ``tests/test_recipe_sweep.py``
re-runs one point and compares it with the file.

A point takes 10 to 40 s of one idle CPU core; the points run ``--jobs`` at a time, one core each.

    python -m benchmarks.recipe_sweep                          # seeds 0-2, every part
    python -m benchmarks.recipe_sweep --seeds 0 --out /tmp/one.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from transformerland.experiments.recipe_sweep import RECIPE_SWEEP, SWEEP_PARTS, recipe_sweep_point, sweep_recipes

from benchmarks.provenance import sweep_sitting
from benchmarks.sweep import run_points, sweep_parser

RESULTS = Path(__file__).parents[1] / "lib" / "transformerland" / "data" / "recipe_sweep.json"


def main() -> int:
    args = sweep_parser(__doc__, RESULTS, what="points").parse_args()
    start = time.perf_counter()
    results: dict[str, dict[str, Any]] = {part: {} for part in SWEEP_PARTS}
    points = [(part, seed) for seed in args.seeds for part in SWEEP_PARTS]
    seconds = []
    for (part, seed), result, took in run_points(recipe_sweep_point, points, args.jobs):
        results[part][str(seed)] = result
        seconds.append(took)
        print(f"{part:14s} seed {seed}: {took:.0f} s", flush=True)
    sweep = {
        "setup": RECIPE_SWEEP,
        "recipes": sweep_recipes(),
        "results": results,
        "provenance": sweep_sitting("benchmarks.recipe_sweep", args.seeds, args.jobs, seconds, start),
    }
    args.out.write_text(json.dumps(sweep, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
