"""Entries for chapter 8's recipe sweep: one point of it, its recipes, and the results it ships."""

from __future__ import annotations

from transformerland.experiments import recipe_sweep
from transformerland.experiments.recipe_sweep import SWEEP_MODELS, SWEEP_PARTS

from . import Choice, Count, Size, contract

CONTRACTS = [
    contract(
        "transformerland.experiments.recipe_sweep.recipe_sweep_point",
        part=Choice(SWEEP_PARTS[0], SWEEP_PARTS),
        seed=Count(0),
        steps=Size(2, optional=True),
        run_good=False,  # a point trains a model: only its bad values are tried here
    ),
    contract(
        "transformerland.experiments.recipe_sweep.recipe_sweep_model",
        position=Choice(SWEEP_MODELS[0], SWEEP_MODELS),
        seed=Count(0),
        steps=Size(2, optional=True),
        run_good=False,  # it trains a model: only its bad values are tried here
    ),
    contract(
        "transformerland.experiments.recipe_sweep.load_recipe_sweep_model",
        position=Choice(SWEEP_MODELS[0], SWEEP_MODELS),
        reference=lambda out, a: not out.training and out.config.position == a["position"],
    ),
    contract(
        "transformerland.experiments.recipe_sweep.sweep_recipes",
        reference=lambda out, a: next(iter(out)) == "plain RoPE" and out["plain RoPE"] is None and len(out) == 7,
    ),
    contract(
        "transformerland.experiments.recipe_sweep.load_recipe_sweep",
        reference=lambda out, a: list(out["results"]) == list(SWEEP_PARTS) and out["provenance"]["seeds"] == [0, 1, 2],
    ),
]
assert recipe_sweep.__all__ == [
    "MODELS_SEED",
    "RECIPE_SWEEP",
    "SWEEP_MODELS",
    "SWEEP_PARTS",
    "load_recipe_sweep",
    "load_recipe_sweep_model",
    "recipe_sweep_model",
    "recipe_sweep_point",
    "sweep_recipes",
]
