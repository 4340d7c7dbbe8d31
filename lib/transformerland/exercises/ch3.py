"""Exercises of chapter 3, *Learned positional embeddings* (the Ledger Hall), as specs.

- ``ex-3-1``: :data:`LEARNED_POSITIONS`, a trainable table added to the input (a class: its spec's probe
  turns what the student's layer does into data).
- ``ex-3-2``: :data:`POSITION_PARAMETERS`, how many numbers a position scheme trains.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .checking import Check, Mistake
from .spec import Case, Exercise, int_answer

__all__ = [
    "EXERCISES",
    "LEARNED_POSITIONS",
    "POSITION_PARAMETERS",
    "check_learned_positions",
    "check_position_parameters",
]

# --- ex-3-1: the learned position layer ---------------------------------------------------------------


def _layer_cases(seed: int) -> list[Case]:
    """A small layer (its values, its rows, its limit) and a wide one (its initial scale)."""
    max_len, d_model = 10 + seed % 7, 6 + 2 * (seed % 3)
    return [Case((max_len, d_model), {"x_seed": seed}, tag="layer"), Case((256, 16), tag="wide")]


def _outcome(action: Any) -> dict[str, Any]:
    """What a call into the student's layer did: ``{"value": …}`` or ``{"raised": name, "message": …}``."""
    try:
        with torch.no_grad():
            return {"value": action()}
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
    if case.tag == "wide" or params[0].numel() != max_len * d_model:
        return found
    found["table"] = params[0].detach().reshape(max_len, d_model).clone()
    x = torch.randn(2, 4, d_model, generator=torch.Generator().manual_seed(case.kwargs.get("x_seed", 0)))
    for name, tensor in {
        "zeros": torch.zeros(2, 4, d_model),
        "x": x,
        "full": torch.zeros(1, max_len, d_model),
        "too_long": torch.zeros(1, max_len + 1, d_model),
    }.items():
        found[name] = _outcome(lambda tensor=tensor: layer(tensor))
    found["x_in"] = x
    return found


def _forward(check: Check, outcome: dict[str, Any], shape: tuple[int, ...], max_len: int) -> Any:
    """The output of one forward call, or the verdict its raise deserves."""
    if outcome.get("raised") == "NotImplementedError":
        check.fail(
            "forward is not written yet (it raised NotImplementedError)", "replace the stub's body with your code."
        )
    if outcome.get("raised"):
        hint = "look at the line of your forward that raised."
        if "size" in outcome["message"]:
            hint = (
                f"an input of T = {shape[1]} positions uses only the first T rows of the table: "
                "slice it with table[:T] (or look up positions 0 … T-1) before adding it to x."
            )
        check.fail(
            f"forward on an input of shape {shape} (table of {max_len} rows) raised {outcome['raised']}: "
            f"{outcome['message']}",
            hint,
        )
    return outcome.get("value")


def _judge_layer(check: Check, spec: Exercise, case: Case, got: Any, expected: Any) -> None:
    """The checks of ex-3-1 on what the probe found, in the order a reader fixes them."""
    max_len, d_model = case.args
    check.that(
        isinstance(got, dict) and got.get("type") == "Module",
        f"calling it returned a {got.get('type') if isinstance(got, dict) else type(got).__name__}, not an nn.Module",
        "write a class that subclasses nn.Module and pass the class itself to the checker.",
    )
    count = got.get("count", 0)
    check.that(
        count > 0,
        "the layer has no trainable parameters",
        "a tensor stored as a plain attribute is not trained: wrap it in nn.Parameter(...) "
        "or use nn.Embedding(max_len, d_model).",
    )
    if case.tag == "wide":
        std = got.get("std", 0.0)
        check.that(
            0.01 < std < 0.04,
            f"the table starts with standard deviation {std:.3f}, expected about 0.02",
            "nn.Embedding starts at N(0, 1); re-initialise its weight with nn.init.normal_(weight, std=0.02), "
            "the scale of the token embeddings (as BERT does).",
        )
        return
    check.that(
        count == max_len * d_model,
        f"with max_len={max_len} and d_model={d_model} the layer trains {count} numbers, expected {max_len * d_model}",
        "one row of d_model numbers per position, and nothing else: a (max_len, d_model) table.",
    )
    table = got["table"]
    zeros_shape = (2, 4, d_model)
    out = _forward(check, got["zeros"], zeros_shape, max_len)
    check.that(
        isinstance(out, torch.Tensor) and tuple(out.shape) == zeros_shape,
        f"an input of shape {zeros_shape} gave an output of shape "
        f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}",
        "return a tensor of the input's shape (B, T, D): the positions are added, not appended.",
    )
    check.that(
        torch.allclose(out, table[:4].expand(*zeros_shape)),
        "on an all-zero input the output is not the first T rows of the table, one per position",
        "position p receives row p of the table: add table[:T] (rows 0 … T-1, in order), "
        "the same rows for every sequence in the batch.",
    )
    out = _forward(check, got["x"], zeros_shape, max_len)
    check.that(
        isinstance(out, torch.Tensor)
        and out.shape == got["x_in"].shape
        and torch.allclose(out - got["x_in"], table[:4].expand(*zeros_shape), atol=1e-6),
        "the output is not the input plus the position rows",
        "the layer adds positions to the token vectors: return x + table[:T], not the rows alone.",
    )
    out = _forward(check, got["full"], (1, max_len, d_model), max_len)
    check.that(
        isinstance(out, torch.Tensor) and out.shape == (1, max_len, d_model) and torch.allclose(out[0], table),
        f"an input of exactly max_len = {max_len} positions does not get all {max_len} rows",
        "every row is usable: positions 0 … max_len-1 all exist.",
    )
    too_long = got["too_long"]
    if too_long.get("value_error"):
        check.that(
            str(max_len) in too_long["message"],
            f"the error for {max_len + 1} positions does not mention the limit: {too_long['message']}",
            "say what the limit is, so that the reader knows what to shorten: include max_len in the message.",
        )
    elif too_long.get("raised"):
        check.fail(
            f"{max_len + 1} positions with a {max_len}-row table raised {too_long['raised']}: {too_long['message']}",
            "check T against max_len before touching the table, and raise a ValueError that names max_len "
            "(torch's own index or size error does not tell the reader what went wrong).",
        )
    else:
        check.fail(
            f"{max_len + 1} positions with a {max_len}-row table raised no error",
            "there is no row for position max_len: raise a ValueError that names max_len.",
        )


LEARNED_POSITIONS = Exercise(
    label="ex-3-1",
    what="learned position layer",
    checker="check_learned_positions",
    function="MyLearnedPositions",
    signature="(max_len, d_model) -> nn.Module; forward(x (B, T, D)) -> x + table[:T], ValueError past max_len",
    cases=_layer_cases,
    reference=lambda max_len, d_model, **kwargs: None,  # the judge reads the probe's data against the layer's own table
    judge=_judge_layer,
    probe=_probe_layer,
    points=2,
)

# --- ex-3-2: counting parameters ------------------------------------------------------------------------

_SCHEME_HINTS = {
    "sinusoidal": "the sinusoids come from a formula and are computed, not trained: they cost no parameters.",
    "none": "with no position scheme there is nothing to train.",
    "learned": "a learned table has one row per position and d_model numbers in each row.",
}


def _count_cases(seed: int) -> list[Case]:
    sizes = [(512, 768), (1024, 768), (24, 64), (1, 3)] if seed == 0 else [(300 + seed % 97, 96), (7, 5 + seed % 11)]
    calls = [("learned", n, d) for n, d in sizes] + [("sinusoidal", 512, 768), ("none", 512, 768)]
    return [
        Case(call, problem=f"count{call!r} returned {{got}}, which is not right", hint=_SCHEME_HINTS[call[0]])
        for call in calls
    ]


def _count_reference(scheme: str, max_len: int, d_model: int) -> int:
    return max_len * d_model if scheme == "learned" else 0


def _count_mistakes(case: Case) -> list[Mistake]:
    scheme, max_len, d_model = case.args
    if scheme != "learned":
        return []
    return [
        Mistake(max_len + d_model, "each position owns a whole row of d_model numbers: multiply, do not add."),
        Mistake((max_len - 1) * d_model, "positions run from 0 to max_len - 1: that is max_len rows, not max_len - 1."),
    ]


POSITION_PARAMETERS = Exercise(
    label="ex-3-2",
    what="parameter counts",
    checker="check_position_parameters",
    function="count_position_parameters",
    signature="(scheme: 'learned' | 'sinusoidal' | 'none', max_len: int, d_model: int) -> int",
    cases=_count_cases,
    reference=_count_reference,
    mistakes=_count_mistakes,
    judge=int_answer(
        "count{args!r} returned {got!r} ({kind}), not an int",
        "return a plain Python int (use int(...) around a tensor or a float).",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [LEARNED_POSITIONS, POSITION_PARAMETERS]

check_learned_positions = LEARNED_POSITIONS.checker_function()
check_position_parameters = POSITION_PARAMETERS.checker_function()
