"""Chapter 5's trainings that the chapter reads rather than runs: the lookup and the remedies, over seeds.

Chapter 5 trains its five Markov decoders live (the reader watches *train short, test long* happen). What it
compares beyond them would take several times its budget: the same five decoders on the lookup task
(:func:`lookup_point`, with the sliding windows and the interpolated table tried on the learned one), the learned
Markov model's table extended or interpolated and then fine-tuned, ALiBi trained 120 steps more, and the Markov
decoders scored at 256 and 512 tokens (:func:`markov_point`), and the fair race: ALiBi and rotary each trained 720
steps instead of 240 (:func:`race_point`), each on seeds 0, 1 and 2.
``benchmarks/extrapolation_sweep.py`` runs every point and writes the results with their provenance to a data file
that the chapter reads (:func:`load_extrapolation_sweep`); ``tests/test_extrapolation_sweep.py`` re-runs one point.
"""

from __future__ import annotations

import importlib.resources
import json
from typing import Any

import torch

from .._validation import require_choice, require_int, require_positive_int
from ..model import POSITION_SCHEMES, TinyTransformer, TransformerConfig
from ..tasks import MarkovTask
from ..training import evaluate, train
from .recall import LookupTask
from .remedies import (
    extend_table,
    fine_tune,
    interpolate_table,
    sliding_window_logits,
    window_reach,
    with_position_table,
)

__all__ = ["EXTRAPOLATION_SWEEP", "load_extrapolation_sweep", "lookup_point", "markov_point", "race_point"]

#: Chapter 5's tasks, model and recipes: decoders of two layers, four heads and width 64 (a learned table
#: of 128 rows), trained for 240 steps at 32 tokens and scored at 32, 64 and 128 on two batches of 64
#: sequences. ``"tune"``: the learned Markov model's 60 fine-tuning steps at 128 tokens, from its table
#: extended or interpolated to 128 rows; ``"more"``: ALiBi's 120 steps more at 32 tokens; ``"windows"``
#: and ``"questions"``: the sliding windows and the 64 held-out sequences of the remedies on the lookup;
#: ``"far"``: the Markov losses at 256 and 512 tokens, on two batches of 8,192 tokens each (exercise 5.2);
#: ``"race"``: the fair race, ALiBi and rotary on the Markov source each trained 720 steps instead of 240
#: (warm-up 144, still a fifth), to tell a slow learner from a worse one.
#: A seed ``s`` seeds the model and its training; the fine-tunes take ``s + 1`` (the chapter's 1 on seed 0).
EXTRAPOLATION_SWEEP: dict[str, Any] = {
    "markov": {"vocab_size": 8, "order": 2, "seed": 0},
    "lookup": {"n_keys": 64, "n_values": 4},
    "size": {"d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256, "max_len": 128},
    "recipe": {"steps": 240, "length": 32, "batch_size": 32, "lr": 3e-3, "warmup": 48},
    "eval_lengths": [32, 64, 128],
    "eval": {"batch_size": 64, "n_batches": 2},
    "tune": {"steps": 60, "length": 128, "batch_size": 16, "lr": 3e-3},
    "more": {"steps": 120, "length": 32, "batch_size": 32, "lr": 3e-3, "warmup": 12},
    "windows": {"window": 32, "stride": 16},
    "questions": {"batch_size": 64, "length": 128, "seed": 99},
    "far": {"lengths": [256, 512], "tokens": 8192, "n_batches": 2},
    "markov_schemes": list(POSITION_SCHEMES),
    "race": {"steps": 720, "schemes": ["alibi", "rope"]},
}


def _trained(task: MarkovTask | LookupTask, scheme: str, seed: int, steps: int | None) -> TinyTransformer:
    """Chapter 5's decoder with ``scheme``, trained at 32 tokens with ``seed``.

    ``steps`` overrides the recipe's 240; the warm-up stays a fifth of the steps (48 of 240).
    """
    recipe = dict(EXTRAPOLATION_SWEEP["recipe"])
    if steps is not None:
        recipe["warmup"] = recipe["warmup"] * steps // recipe["steps"]
        recipe["steps"] = steps
    config = TransformerConfig(task.vocab_size, position=scheme, **EXTRAPOLATION_SWEEP["size"])
    model = TinyTransformer(config, seed=seed)
    train(model, task, seed=seed, progress=False, device="cpu", **recipe)
    return model


def _scores(model: torch.nn.Module, task: MarkovTask | LookupTask, lengths: list[int]) -> list[Any]:
    return [evaluate(model, task, length=n, device="cpu", **EXTRAPOLATION_SWEEP["eval"]) for n in lengths]


def _lookup_remedies(model: TinyTransformer, lookup: LookupTask) -> dict[str, float]:
    """The learned lookup model at 128 tokens: full context, sliding windows, the 32 trained rows stretched."""
    asked, cut = EXTRAPOLATION_SWEEP["questions"], EXTRAPOLATION_SWEEP["windows"]
    batch = lookup.sample(asked["batch_size"], asked["length"], torch.Generator().manual_seed(asked["seed"]))
    rows = model.positions.weight.detach()[: cut["window"]]  # (32, 64): the rows that saw training
    with torch.no_grad():
        logits = {  # (64, 128, vocabulary) each
            "full context": model(batch.inputs),
            "sliding windows": sliding_window_logits(model, batch.inputs, **cut),
            "interpolated table": with_position_table(model, interpolate_table(rows, asked["length"]))(batch.inputs),
        }
    right = {name: (out.argmax(-1) == batch.targets) & batch.mask for name, out in logits.items()}
    shares = {name: float(hit.sum() / batch.mask.sum()) for name, hit in right.items()}
    inside = (lookup.entry_distances(batch) <= window_reach(asked["length"], **cut)) & batch.mask  # (64, 128)
    shares["entry inside its window"] = float(inside.sum() / batch.mask.sum())
    shares["windows, entry inside"] = float(right["sliding windows"][inside].float().mean())
    shares["windows, entry outside"] = float(right["sliding windows"][batch.mask & ~inside].float().mean())
    return shares


def lookup_point(scheme: str, seed: int, steps: int | None = None) -> dict[str, Any]:
    """One point of the lookup: chapter 5's decoder with ``scheme`` trained on the lookup with ``seed``.

    Returns ``{"shares": [share of answers right at 32, 64 and 128 tokens]}``; for ``"learned"`` also
    ``"remedies"``: the shares right at 128 tokens read with the full context, through sliding windows of
    32 (stride 16) and with the 32 trained rows interpolated to 128, the share of answers whose entry lies
    inside its window, and the windows' shares right among those and among the others. ``steps``
    overrides the recipe's 240, the warm-up staying a fifth of them (a quick check, or a longer budget).
    """
    scheme = require_choice(scheme, "scheme", POSITION_SCHEMES)
    seed = require_int(seed, "seed", low=0)
    steps = None if steps is None else require_positive_int(steps, "steps")
    lookup = LookupTask(**EXTRAPOLATION_SWEEP["lookup"])
    model = _trained(lookup, scheme, seed, steps)
    point: dict[str, Any] = {
        "shares": [s.token_accuracy for s in _scores(model, lookup, EXTRAPOLATION_SWEEP["eval_lengths"])]
    }
    if scheme == "learned":
        point["remedies"] = _lookup_remedies(model, lookup)
    return point


def _markov_losses(scheme: str, seed: int, steps: int | None) -> tuple[TinyTransformer, MarkovTask, dict[str, Any]]:
    """Chapter 5's Markov decoder with ``scheme`` trained with ``seed`` (and ``steps``), the source, and its losses.

    The losses: ``{"losses": [loss at 32, 64 and 128 tokens]}``, and for every scheme but ``"learned"`` (whose
    128 rows stop there) ``"far"``: the losses at 256 and 512 tokens, on batches of 8,192 tokens.
    """
    source = MarkovTask(**EXTRAPOLATION_SWEEP["markov"])
    model = _trained(source, scheme, seed, steps)
    point: dict[str, Any] = {"losses": [s.loss for s in _scores(model, source, EXTRAPOLATION_SWEEP["eval_lengths"])]}
    if scheme != "learned":
        far = EXTRAPOLATION_SWEEP["far"]
        point["far"] = [
            evaluate(
                model, source, length=n, batch_size=far["tokens"] // n, n_batches=far["n_batches"], device="cpu"
            ).loss
            for n in far["lengths"]
        ]
    return model, source, point


def markov_point(scheme: str, seed: int, steps: int | None = None) -> dict[str, Any]:
    """One point of the Markov source: chapter 5's decoder with ``scheme`` trained on the source with ``seed``.

    ``scheme`` is one of ``EXTRAPOLATION_SWEEP["markov_schemes"]``. Returns ``{"losses": [loss at 32, 64
    and 128 tokens]}``; for every scheme but ``"learned"`` (whose 128 rows stop there) also ``"far"``: the
    losses at 256 and 512 tokens; for ``"learned"`` also ``"fine_tune"``: for ``"extend + fine-tune"`` and
    ``"interpolate + fine-tune"``, the 32 trained rows extended (fresh rows) or interpolated to 128, then
    60 steps at 128 tokens: ``"losses"`` (each step's, as ``TrainResult.losses``) and ``"after"`` (the
    loss at 32 and 128 tokens); for ``"alibi"`` also ``"more"``: the losses at 32, 64 and 128 after 120
    steps more at 32 tokens. ``steps`` overrides the first training's 240 steps, the warm-up staying a
    fifth of them (a quick check, or a longer budget; the fair race is :func:`race_point`).
    """
    scheme = require_choice(scheme, "scheme", tuple(EXTRAPOLATION_SWEEP["markov_schemes"]))
    seed = require_int(seed, "seed", low=0)
    steps = None if steps is None else require_positive_int(steps, "steps")
    model, source, point = _markov_losses(scheme, seed, steps)
    lengths = EXTRAPOLATION_SWEEP["eval_lengths"]
    if scheme == "learned":
        tune = EXTRAPOLATION_SWEEP["tune"]
        rows = model.positions.weight.detach()[: EXTRAPOLATION_SWEEP["recipe"]["length"]]  # (32, 64)
        starts = {
            "extend + fine-tune": extend_table(rows, tune["length"], seed=seed),
            "interpolate + fine-tune": interpolate_table(rows, tune["length"]),
        }
        point["fine_tune"] = {}
        for name, table in starts.items():
            tuned, run = fine_tune(
                with_position_table(model, table), source, seed=seed + 1, progress=False, device="cpu", **tune
            )
            after = _scores(tuned, source, [lengths[0], lengths[-1]])
            point["fine_tune"][name] = {"losses": run.losses, "after": [s.loss for s in after]}
    if scheme == "alibi":
        more, _ = fine_tune(model, source, seed=seed + 1, progress=False, device="cpu", **EXTRAPOLATION_SWEEP["more"])
        point["more"] = [s.loss for s in _scores(more, source, lengths)]
    return point


def race_point(scheme: str, seed: int) -> dict[str, Any]:
    """One runner of the fair race: chapter 5's Markov decoder with ``scheme`` trained 720 steps with ``seed``.

    ``scheme`` is one of ``EXTRAPOLATION_SWEEP["race"]["schemes"]`` (ALiBi or rotary); the steps are
    ``EXTRAPOLATION_SWEEP["race"]["steps"]`` instead of the recipe's 240, the warm-up staying a fifth of them.
    Returns ``{"losses": [loss at 32, 64 and 128 tokens], "far": [loss at 256 and 512 tokens]}``, measured as
    :func:`markov_point`'s.
    """
    race = EXTRAPOLATION_SWEEP["race"]
    scheme = require_choice(scheme, "scheme", tuple(race["schemes"]))
    seed = require_int(seed, "seed", low=0)
    return _markov_losses(scheme, seed, race["steps"])[2]


def load_extrapolation_sweep() -> dict[str, Any]:
    """Chapter 5's sweep measured by ``benchmarks/extrapolation_sweep.py`` and shipped with the library.

    A dict with ``"setup"`` (:data:`EXTRAPOLATION_SWEEP` as it was run), ``"lookup"`` (scheme → seed, as a
    string → :func:`lookup_point`'s result), ``"markov"`` (scheme → seed → :func:`markov_point`'s result),
    ``"race"`` (scheme → seed → :func:`race_point`'s result) and ``"provenance"`` (commit, date, machine,
    versions, command, seconds).
    """
    text = importlib.resources.files("transformerland").joinpath("data/extrapolation_sweep.json").read_text()
    return json.loads(text)
