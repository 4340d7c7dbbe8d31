"""Chapter 8's long-context recipes on chapter 5's tiny decoders, over seeds: the recipe sweep.

Chapter 8 measures the recipes of :func:`~transformerland.encodings.scaling_recipes` on the tiny decoder of
chapter 5, trained at 32 tokens: zero-shot and after 20 fine-tuning steps at 128 tokens, on the order-2
Markov source and on the lookup task, beside an ALiBi model and a RoPE model with a larger base. Those are
a dozen trainings, more than the chapter's 45 s allow, so ``benchmarks/recipe_sweep.py`` runs them for
seeds 0-2 and ships the results with their provenance as a data file that the chapter reads
(:func:`load_recipe_sweep`). One point (:func:`recipe_sweep_point`) is one part of the experiment for one
seed; ``tests/test_recipe_sweep.py`` re-runs one and compares it with the file.

The sweep also ships two of its trained decoders, so that the chapter can use them without training them:
seed 0's RoPE model on the Markov source (the one whose recipes it measures) and a model without positions
trained the same way (:data:`SWEEP_MODELS`, built by :func:`recipe_sweep_model`, read back by
:func:`load_recipe_sweep_model`).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import io
import json
from typing import Any

import torch

from .._validation import require_choice, require_int, require_positive_int
from ..encodings import scaling_recipes, with_rope_scaling
from ..model import TinyTransformer, TransformerConfig
from ..tasks import MarkovTask, Task
from ..training import TrainResult, evaluate, train
from .recall import LookupTask
from .remedies import fine_tune

__all__ = [
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

#: The position schemes of the decoders the sweep ships (seed :data:`MODELS_SEED`, on the Markov source).
SWEEP_MODELS = ("rope", "none")

#: The seed of the shipped decoders: the chapter's.
MODELS_SEED = 0


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


def _decoder(task: Task, position: str, seed: int, **options: Any) -> TinyTransformer:
    """Chapter 5's tiny decoder of size ``RECIPE_SWEEP["size"]`` for ``task``, its weights drawn with ``seed``."""
    config = TransformerConfig(task.vocab_size, position=position, **RECIPE_SWEEP["size"], **options)
    return TinyTransformer(config, seed=seed)


def _trained(task: Task, position: str, seed: int, steps: int | None, **options: Any) -> TinyTransformer:
    return _trained_with_run(task, position, seed, steps, **options)[0]


def _trained_with_run(
    task: Task, position: str, seed: int, steps: int | None, **options: Any
) -> tuple[TinyTransformer, TrainResult]:
    """The decoder trained with ``RECIPE_SWEEP["recipe"]`` on the CPU (model and data seeded with ``seed``)."""
    recipe = dict(RECIPE_SWEEP["recipe"])
    if steps is not None:
        recipe["steps"] = steps
        recipe["warmup"] = min(recipe["warmup"], steps // 5)
    model = _decoder(task, position, seed, **options)
    run = train(model, task, seed=seed, progress=False, device="cpu", **recipe)
    return model, run


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


def recipe_sweep_model(position: str, seed: int, steps: int | None = None) -> tuple[TinyTransformer, TrainResult]:
    """One of the sweep's decoders on the Markov source, trained as every point trains its model.

    ``position`` is one of :data:`SWEEP_MODELS`; the model (chapter 5's tiny decoder, ``RECIPE_SWEEP["size"]``)
    and its data are seeded with ``seed``, and it is trained on the CPU with ``RECIPE_SWEEP["recipe"]`` (240
    steps at 32 tokens). With ``"rope"`` it is the model of the ``"markov"`` point before any recipe. Returns
    the model and its run (each step's loss). ``steps`` overrides the training's steps (a quick check).
    ``benchmarks/recipe_sweep.py`` ships the two of seed :data:`MODELS_SEED`
    (:func:`load_recipe_sweep_model`).
    """
    position = require_choice(position, "position", SWEEP_MODELS)
    seed = require_int(seed, "seed", low=0)
    if steps is not None:
        steps = require_positive_int(steps, "steps")
    return _trained_with_run(MarkovTask(**RECIPE_SWEEP["markov"]), position, seed, steps)


def load_recipe_sweep_model(position: str) -> TinyTransformer:
    """A decoder the recipe sweep trained and shipped: seed 0's model with ``position`` ``"rope"`` or ``"none"``.

    Chapter 5's tiny decoder (two layers of width 64, four heads, ``RECIPE_SWEEP["size"]``) trained on the
    order-2 Markov source over 8 symbols for 240 steps at 32 tokens (batches of 32, learning rate 3e-3, 48
    warm-up steps; model and data seeded with 0) on one CPU thread: :func:`recipe_sweep_model` with
    ``seed=0``, by ``benchmarks/recipe_sweep.py``. The RoPE model is the one whose recipes the sweep
    measures. The weights come from the library's ``data/recipe_sweep_models.pt``, checked against the
    SHA-256 that :func:`load_recipe_sweep` records with them (``["models"]``, with each training's first
    and last loss). Returns the model in evaluation mode, on the CPU (``.to(device)`` moves it).
    """
    position = require_choice(position, "position", SWEEP_MODELS)
    shipped = load_recipe_sweep()["models"]
    name = f"data/{shipped['file']}"
    advice = "reinstall transformerland, or re-run python -m benchmarks.recipe_sweep"
    try:
        blob = importlib.resources.files("transformerland").joinpath(name).read_bytes()
    except FileNotFoundError:
        raise ValueError(f"the library's {name} is missing: {advice}.") from None
    if hashlib.sha256(blob).hexdigest() != shipped["sha256"]:
        raise ValueError(f"the library's {name} does not match the SHA-256 that recipe_sweep.json records: {advice}.")
    states = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    model = _decoder(MarkovTask(**RECIPE_SWEEP["markov"]), position, shipped["seed"])
    model.load_state_dict(states[position])
    return model.eval()


def load_recipe_sweep() -> dict[str, Any]:
    """The recipe sweep measured by ``benchmarks/recipe_sweep.py`` and shipped with the library.

    A dict with ``"setup"`` (:data:`RECIPE_SWEEP` as it was run), ``"recipes"`` (:func:`sweep_recipes` as
    it was run), ``"results"`` (part → seed, as a string → what :func:`recipe_sweep_point` returns),
    ``"models"`` (the shipped decoders: ``"file"``, its ``"sha256"``, their ``"seed"``, and ``"runs"``: position → the
    training's ``"first_loss"``, ``"last_loss"``, ``"steps"`` and ``"seconds"``) and ``"provenance"``
    (commit, date, machine, seeds, command, versions, seconds).
    """
    text = importlib.resources.files("transformerland").joinpath("data/recipe_sweep.json").read_text()
    return json.loads(text)
