"""One point of a layer-plan sweep: build a model for one plan and seed, train it, score it at each length.

Chapter 9's two sweeps (:mod:`.layer_plans_markov` and :mod:`.layer_plans_lookup`) differ only in their
task, what they read off each evaluation and how a shortened run scales its warm-up; their public point
functions pass those in here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._validation import require_int, require_positive_int
from ..encodings.layer_plans import apply_layer_plan, compared_plans
from ..model import TinyTransformer, TransformerConfig
from ..tasks import Task
from ..training import EvalResult, evaluate, train

__all__: list[str] = []


def plan_point(
    sweep: Mapping[str, Any],
    make_task: Callable[..., Task],
    metric: Callable[[EvalResult], float],
    warmup_cap: Callable[[int], int],
    plan: str,
    seed: int,
    steps: int | None,
    special: int,
) -> list[float]:
    """Train ``plan`` (a name of :func:`compared_plans` with ``special`` its odd layer) with ``seed``.

    ``sweep`` holds the sweep's ``"task"`` (``make_task``'s keyword arguments), ``"size"``, ``"window"``,
    ``"recipe"``, ``"eval_lengths"`` and ``"eval"``. ``steps`` overrides the recipe's, and then the
    warm-up is at most ``warmup_cap(steps)``. Returns ``metric`` of the evaluation at each length.
    """
    plans = compared_plans(sweep["window"], special)
    if plan not in plans:
        raise ValueError(f"plan must be one of {sorted(plans)}, got {plan!r}.")
    seed = require_int(seed, "seed", low=0)
    recipe = dict(sweep["recipe"])
    if steps is not None:
        recipe["steps"] = require_positive_int(steps, "steps")
        recipe["warmup"] = min(recipe["warmup"], warmup_cap(recipe["steps"]))
    task = make_task(**sweep["task"])
    config = TransformerConfig(task.vocab_size, position="rope", **sweep["size"])
    model = apply_layer_plan(TinyTransformer(config, seed=seed), plans[plan])
    train(model, task, seed=seed, progress=False, device="cpu", **recipe)
    return [metric(evaluate(model, task, length=n, device="cpu", **sweep["eval"])) for n in sweep["eval_lengths"]]
