"""Exercises of chapter 3, the Ledger Hall (learned positional embeddings), as specs (words in ``ch3.toml``).

* :data:`LEARNED_POSITIONS` (ex-3-1): a trainable table added to the input (a class: its spec's probe turns
  what the student's layer does into data).
* :data:`POSITION_PARAMETERS` (ex-3-2): how many numbers a position scheme trains.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from .checking import Check
from .spec import PUBLIC_SEED, Case, Exercise, chapter_data, declared

__all__ = [
    "EXERCISES",
    "LEARNED_POSITIONS",
    "POSITION_PARAMETERS",
    "check_learned_positions",
    "check_position_parameters",
]

_DATA = chapter_data(__name__)


def _outcome(layer: nn.Module, x: torch.Tensor) -> dict[str, Any]:
    """What ``layer(x)`` did: ``{"value": …}`` or ``{"raised": name, "message": …}``."""
    try:
        with torch.no_grad():
            return {"value": layer(x)}
    except NotImplementedError:
        return {"raised": "NotImplementedError", "message": ""}
    except Exception as error:  # the student's bug, kept as data
        return {"raised": type(error).__name__, "message": str(error), "value_error": isinstance(error, ValueError)}


def _probe_layer(layer_class: Any, case: Case) -> dict[str, Any]:
    """Build the student's layer and try it: everything the verdict needs, as data (runs in the sandbox)."""
    max_len, d_model = case.args
    layer = layer_class(max_len, d_model)
    if not isinstance(layer, nn.Module):
        return {"type": type(layer).__name__}
    params = [p for p in layer.parameters() if p.requires_grad]
    found: dict[str, Any] = {"type": "Module", "count": sum(p.numel() for p in params)}
    if not params:
        return found
    found["std"] = float(params[0].detach().float().std())
    if "x_seed" not in case.kwargs or params[0].numel() != max_len * d_model:
        return found
    found["table"] = params[0].detach().reshape(max_len, d_model).clone()
    x = torch.randn(2, 4, d_model, generator=torch.Generator().manual_seed(case.kwargs["x_seed"]))
    inputs = {"zeros": torch.zeros(2, 4, d_model), "x": x, "full": torch.zeros(1, max_len, d_model)}
    inputs["too_long"] = torch.zeros(1, max_len + 1, d_model)
    return {**found, **{name: _outcome(layer, tensor) for name, tensor in inputs.items()}, "x_in": x}


def _forward(check: Check, spec: Exercise, outcome: dict[str, Any], shape: tuple[int, ...], max_len: int) -> Any:
    """The output of one forward call, or the verdict its raise deserves."""
    if outcome.get("raised") == "NotImplementedError":
        check.fail(*spec.said("stub"))
    if outcome.get("raised"):
        problem, hint = spec.said("raised", shape=shape, max_len=max_len, **outcome)
        check.fail(problem, spec.say("size_hint", length=shape[1]) if "size" in outcome["message"] else hint)
    return outcome.get("value")


def _shaped(out: Any, shape: Sequence[int]) -> bool:
    """Whether a forward call's output is a tensor of ``shape``."""
    return isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(shape)


def _judge_layer(check: Check, spec: Exercise, case: Case, got: Any, expected: Any) -> None:
    """The checks of ex-3-1 on what the probe found, in the order a reader fixes them."""
    max_len, d_model = case.args
    kind = got.get("type") if isinstance(got, dict) else type(got).__name__
    check.that(isinstance(got, dict) and kind == "Module", *spec.said("not_module", kind=kind))
    count = got.get("count", 0)
    check.that(count > 0, *spec.said("untrained"))
    if "x_seed" not in case.kwargs:  # the wide layer: only its initial scale
        std = got.get("std", 0.0)
        check.that(0.01 < std < 0.04, *spec.said("scale", std=std))
        return
    size = max_len * d_model
    check.that(count == size, *spec.said("count", max_len=max_len, d_model=d_model, count=count, size=size))
    table, shape, full = got["table"], (2, 4, d_model), (1, max_len, d_model)
    out = _forward(check, spec, got["zeros"], shape, max_len)
    out_shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
    check.that(out_shape == shape, *spec.said("shape", shape=shape, got=out_shape))
    first_rows = table[:4].expand(*shape)
    check.that(torch.allclose(out, first_rows), *spec.said("rows"))
    out, x = _forward(check, spec, got["x"], shape, max_len), got["x_in"]
    check.that(_shaped(out, x.shape) and torch.allclose(out - x, first_rows, atol=1e-6), *spec.said("added"))
    out = _forward(check, spec, got["full"], full, max_len)
    check.that(_shaped(out, full) and torch.allclose(out[0], table), *spec.said("full", max_len=max_len))
    too_long = got["too_long"]
    fields = {**too_long, "over": max_len + 1, "max_len": max_len}
    if too_long.get("value_error"):
        check.that(str(max_len) in too_long["message"], *spec.said("vague", **fields))
    else:
        check.fail(*spec.said("other_error" if too_long.get("raised") else "no_error", **fields))


def _layer_hidden(seed: int) -> list[tuple[Any, ...]]:
    """A small layer, whose forward is tried on inputs drawn from ``x_seed``, and a wide one (its initial scale)."""
    return [(10 + seed % 7, 6 + 2 * (seed % 3), {"x_seed": seed}), (256, 16)]


LEARNED_POSITIONS = declared(
    _DATA,
    "ex-3-1",
    reference=lambda *args, **kwargs: None,  # the judge reads the probe's data against the layer's own table
    hidden=_layer_hidden,
    judge=_judge_layer,
    probe=_probe_layer,
)


def _count_cases(seed: int) -> list[Case]:
    """Learned tables of a few sizes, then the schemes that train nothing.

    Cases, not public calls and ``hidden``: each case's texts are its scheme's, which the data finds by its tag.
    """
    sizes = (
        [(512, 768), (1024, 768), (24, 64), (1, 3)]
        if seed == PUBLIC_SEED
        else [(300 + seed % 97, 96), (7, 5 + seed % 11)]
    )
    calls = [("learned", n, d) for n, d in sizes] + [("sinusoidal", 512, 768), ("none", 512, 768)]
    return [Case(call, tag=call[0]) for call in calls]


def _count(scheme: str, max_len: int, d_model: int) -> int:
    return max_len * d_model if scheme == "learned" else 0


def _count_slips(scheme: str, max_len: int, d_model: int) -> dict[str, int]:
    return {"added": max_len + d_model, "one_short": (max_len - 1) * d_model} if scheme == "learned" else {}


POSITION_PARAMETERS = declared(_DATA, "ex-3-2", reference=_count, cases=_count_cases, slips=_count_slips)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [LEARNED_POSITIONS, POSITION_PARAMETERS]

check_learned_positions = LEARNED_POSITIONS.checker_function()
check_position_parameters = POSITION_PARAMETERS.checker_function()
