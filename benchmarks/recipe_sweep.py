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

It also trains the two decoders of :data:`~transformerland.experiments.recipe_sweep.SWEEP_MODELS` with seed 0
(:func:`~transformerland.experiments.recipe_sweep.recipe_sweep_model`) and writes their weights beside the
results (``recipe_sweep_models.pt`` for ``recipe_sweep.json``), recording the file's name and SHA-256 and each
training's first and last loss in the results' ``"models"``; the chapter loads them
(:func:`~transformerland.experiments.recipe_sweep.load_recipe_sweep_model`) instead of training them.

A point takes 10 to 40 s of one idle CPU core; the points run ``--jobs`` at a time, one core each.

    python -m benchmarks.recipe_sweep                          # seeds 0-2, every part
    python -m benchmarks.recipe_sweep --seeds 0 --out /tmp/one.json
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
from transformerland.experiments.recipe_sweep import (
    MODELS_SEED,
    RECIPE_SWEEP,
    SWEEP_MODELS,
    SWEEP_PARTS,
    recipe_sweep_model,
    recipe_sweep_point,
    sweep_recipes,
)

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
    states, runs = {}, {}
    for (position, _), (model, run), took in run_points(
        recipe_sweep_model, [(position, MODELS_SEED) for position in SWEEP_MODELS], args.jobs
    ):
        states[position] = model.state_dict()
        runs[position] = {
            "first_loss": run.losses[0],
            "last_loss": run.losses[-1],
            "steps": len(run.losses),
            "seconds": round(took, 1),
        }
        print(f"model {position:8s} seed {MODELS_SEED}: {took:.0f} s", flush=True)
    weights = args.out.with_name(f"{args.out.stem}_models.pt")
    torch.save(states, weights)
    sweep = {
        "setup": RECIPE_SWEEP,
        "recipes": sweep_recipes(),
        "results": results,
        "models": {
            "file": weights.name,
            "sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
            "seed": MODELS_SEED,
            "runs": runs,
        },
        "provenance": sweep_sitting("benchmarks.recipe_sweep", args.seeds, args.jobs, seconds, start),
    }
    args.out.write_text(json.dumps(sweep, indent=1) + "\n")
    print(f"wrote {args.out} and {weights}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
