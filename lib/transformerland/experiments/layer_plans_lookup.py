"""Chapter 9's layer plans on a task that needs far context: chapter 5's lookup, over seeds.

The Markov source of chapter 9 is local: a model with every layer windowed does as well there as one
with a global layer, so it cannot tell the plans apart. On the lookup task (:class:`LookupTask`) an
answer stands anywhere earlier in the sequence, so a window that misses it can only guess. Each point
trains one plan of :func:`~transformerland.encodings.layer_plans.compared_plans` with one seed
(:func:`lookup_sweep_accuracy`); ``benchmarks/layer_plans_lookup.py`` runs every point and writes the
results with their provenance to a data file that the chapter reads (:func:`load_lookup_sweep`).
"""

from __future__ import annotations

import importlib.resources
import json
from operator import attrgetter
from typing import Any

from ._layer_plan_point import plan_point
from .recall import LookupTask

__all__ = ["LOOKUP_SWEEP", "load_lookup_sweep", "lookup_sweep_accuracy"]


#: The lookup sweep's task, model and recipe: chapter 5's lookup (64 keys, 4 values), four-layer decoders
#: of width 64 with four heads, windows of 8 and the one global (or NoPE) layer first, trained at 32 tokens
#: for 300 steps and scored at 32, 64 and 128 tokens. ``"last"`` names the plans also run with that layer
#: last, as the Markov experiment has it.
LOOKUP_SWEEP: dict[str, Any] = {
    "task": {"n_keys": 64, "n_values": 4},
    "size": {"d_model": 64, "n_layers": 4, "n_heads": 4, "d_ff": 256, "max_len": 128},
    "window": 8,
    "special": 0,
    "recipe": {"steps": 300, "length": 32, "batch_size": 32, "lr": 3e-3, "warmup": 60},
    "eval_lengths": [32, 64, 128],
    "eval": {"batch_size": 64, "n_batches": 2},
    "last": ["Llama 4: 3 local RoPE + 1 global NoPE"],
}


def lookup_sweep_accuracy(plan: str, seed: int, steps: int | None = None, special: int | None = None) -> list[float]:
    """One point of the lookup sweep: train ``plan`` (a name of :func:`compared_plans`) with ``seed``.

    Returns the share of answers right at each of ``LOOKUP_SWEEP["eval_lengths"]``, on held-out
    sequences that are the same for every plan. ``steps`` overrides the recipe's (a quick check);
    ``special`` the place of the plan's one global or NoPE layer (default ``LOOKUP_SWEEP["special"]``).
    """
    where = LOOKUP_SWEEP["special"] if special is None else special
    accuracy = attrgetter("token_accuracy")
    # a shortened run warms up for at most a fifth of its steps
    return plan_point(LOOKUP_SWEEP, LookupTask, accuracy, lambda n: n // 5, plan, seed, steps, special=where)


def load_lookup_sweep() -> dict[str, Any]:
    """The lookup sweep measured by ``benchmarks/layer_plans_lookup.py`` and shipped with the library.

    A dict with ``"setup"`` (:data:`LOOKUP_SWEEP` as it was run), ``"accuracy"`` (plan name → seed, as a
    string → the shares right at each evaluation length), ``"accuracy_last"`` (the same for the plans of
    ``setup["last"]`` with their global layer last) and ``"provenance"`` (commit, date, machine, versions,
    command, seconds).
    """
    text = importlib.resources.files("transformerland").joinpath("data/layer_plans_lookup.json").read_text()
    return json.loads(text)
