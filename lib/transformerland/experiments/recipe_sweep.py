"""Chapter 8's long-context recipes on chapter 5's tiny decoders, over seeds: the recipe sweep.

Chapter 8 measures the recipes of :func:`~transformerland.encodings.scaling_recipes` on the tiny decoder of
chapter 5, trained at 32 tokens: zero-shot and after 20 fine-tuning steps at 128 tokens, on the order-2
Markov source and on the lookup task, beside an ALiBi model and a RoPE model with a larger base. Those are
a dozen trainings, more than the chapter's 45 s allow, so ``benchmarks/recipe_sweep.py`` runs them for
seeds 0-2 and ships the results with their provenance as a data file that the chapter reads
(:func:`load_recipe_sweep`). One point (:func:`recipe_sweep_point`) is one part of the experiment for one
seed; ``tests/test_recipe_sweep.py`` re-runs one and compares it with the file.
"""

from __future__ import annotations

import importlib.resources
import json
from typing import Any

import torch

from .._validation import require_choice, require_int, require_positive_int
from ..encodings import scaling_recipes, with_rope_scaling
from ..model import TinyTransformer, TransformerConfig
from ..tasks import MarkovTask, Task
from ..training import evaluate, train
from .recall import LookupTask
from .remedies import fine_tune

__all__ = ["RECIPE_SWEEP", "SWEEP_PARTS", "load_recipe_sweep", "recipe_sweep_point", "sweep_recipes"]


#: The recipe sweep's tasks, model and recipes: chapter 5's order-2 Markov source (8 symbols) and lookup
#: (64 keys, 4 values), two-layer decoders of width 64 with four heads, trained at 32 tokens for 240 steps
#: (model and data seeded with the point's seed), every recipe stretching 32 tokens ``factor`` times,
#: fine-tuned for 20 steps at 128 tokens (seeded with the point's seed + 1) and scored at 32, 64 and 128.
RECIPE_SWEEP: dict[str, Any] = {
    "markov": {"vocab_size": 8, "order": 2, "seed": 0},
    "lookup": {"n_keys": 64, "n_values": 4},
    "size": {"d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256, "max_len": 128},
    "recipe": {"steps": 240, "length": 32, "batch_size": 32, "lr": 3e-3, "warmup": 48},
    "factor": 4.0,
    "larger_base": 5e5,
    "tune": {"steps": 20, "length": 128, "batch_size": 16, "lr": 3e-3},
    "lookup_tuned": ["plain RoPE", "YaRN"],
    "eval_lengths": [32, 64, 128],
    "eval": {"batch_size": 64, "n_batches": 2},
}

#: The parts of one seed's experiment, one training each (``"markov"`` and ``"lookup"`` with their fine-tunes).
SWEEP_PARTS = ("markov", "lookup", "alibi", "base 500,000")


def sweep_recipes() -> dict[str, dict[str, Any] | None]:
    """The recipes the sweep compares, by the chapter's names: plain RoPE (``None``), the five of
    :func:`scaling_recipes` at ``RECIPE_SWEEP["factor"]`` (dynamic NTK named with its configured factor,
    ``"dynamic NTK (f=4)"``), and dynamic NTK configured with factor 1, its canonical form."""
    length, factor = RECIPE_SWEEP["recipe"]["length"], RECIPE_SWEEP["factor"]
    recipes = {
        (f"dynamic NTK (f={factor:g})" if name == "dynamic NTK" else name): scaling
        for name, scaling in scaling_recipes(original_length=length, factor=factor).items()
    }
    recipes["dynamic NTK (f=1)"] = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": length}
    return recipes


def _trained(task: Task, position: str, seed: int, steps: int | None, **options: Any) -> TinyTransformer:
    recipe = dict(RECIPE_SWEEP["recipe"])
    if steps is not None:
        recipe["steps"] = steps
        recipe["warmup"] = min(recipe["warmup"], steps // 5)
    config = TransformerConfig(task.vocab_size, position=position, **RECIPE_SWEEP["size"], **options)
    model = TinyTransformer(config, seed=seed)
    train(model, task, seed=seed, progress=False, device="cpu", **recipe)
    return model


def _scores(model: torch.nn.Module, task: Task, measure: str) -> list[float]:
    """The model's mean loss or share of answers right (``measure``) at each evaluation length."""
    return [
        getattr(evaluate(model, task, length=n, device="cpu", **RECIPE_SWEEP["eval"]), measure)
        for n in RECIPE_SWEEP["eval_lengths"]
    ]


def recipe_sweep_point(part: str, seed: int, steps: int | None = None) -> dict[str, Any]:
    """One point of the recipe sweep: train the model of ``part`` (one of :data:`SWEEP_PARTS`) with ``seed``.

    Returns, at each of ``RECIPE_SWEEP["eval_lengths"]``, on held-out sequences that are the same for every
    model:

    - ``"markov"``: the RoPE model on the Markov source; ``{"zero_shot": recipe → losses, "fine_tuned":
      recipe → losses}``, every recipe of :func:`sweep_recipes` zero-shot and all but dynamic NTK (f=1)
      after ``RECIPE_SWEEP["tune"]``;
    - ``"lookup"``: the RoPE model on the lookup; ``{"zero_shot": recipe → shares right, "fine_tuned":
      recipe → shares right}``, fine-tuned with the recipes of ``RECIPE_SWEEP["lookup_tuned"]``;
    - ``"alibi"`` and ``"base 500,000"``: an ALiBi model and a RoPE model with base
      ``RECIPE_SWEEP["larger_base"]`` on the Markov source; ``{"losses": losses}``.

    ``steps`` overrides the training's steps and the fine-tunes' (a quick check).
    """
    part = require_choice(part, "part", SWEEP_PARTS)
    seed = require_int(seed, "seed", low=0)
    if steps is not None:
        steps = require_positive_int(steps, "steps")
    markov, lookup = MarkovTask(**RECIPE_SWEEP["markov"]), LookupTask(**RECIPE_SWEEP["lookup"])
    if part == "alibi":
        return {"losses": _scores(_trained(markov, "alibi", seed, steps), markov, "loss")}
    if part == "base 500,000":
        model = _trained(markov, "rope", seed, steps, rope_base=RECIPE_SWEEP["larger_base"])
        return {"losses": _scores(model, markov, "loss")}
    task, measure = (markov, "loss") if part == "markov" else (lookup, "token_accuracy")
    model = _trained(task, "rope", seed, steps)
    recipes = sweep_recipes()
    tuned_names = [name for name in recipes if name != "dynamic NTK (f=1)"]
    if part == "lookup":
        tuned_names = list(RECIPE_SWEEP["lookup_tuned"])
    tune = dict(RECIPE_SWEEP["tune"], steps=steps or RECIPE_SWEEP["tune"]["steps"])
    fine_tuned = {}
    for name in tuned_names:
        tuned, _ = fine_tune(
            with_rope_scaling(model, recipes[name]), task, seed=seed + 1, progress=False, device="cpu", **tune
        )
        fine_tuned[name] = _scores(tuned, task, measure)
    zero_shot = {name: _scores(with_rope_scaling(model, scaling), task, measure) for name, scaling in recipes.items()}
    return {"zero_shot": zero_shot, "fine_tuned": fine_tuned}


def load_recipe_sweep() -> dict[str, Any]:
    """The recipe sweep measured by ``benchmarks/recipe_sweep.py`` and shipped with the library.

    A dict with ``"setup"`` (:data:`RECIPE_SWEEP` as it was run), ``"recipes"`` (:func:`sweep_recipes` as
    it was run), ``"results"`` (part → seed, as a string → what :func:`recipe_sweep_point` returns) and
    ``"provenance"`` (commit, date, machine, seeds, command, versions, seconds).
    """
    text = importlib.resources.files("transformerland").joinpath("data/recipe_sweep.json").read_text()
    return json.loads(text)
