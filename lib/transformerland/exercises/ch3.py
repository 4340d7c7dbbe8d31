"""Exercises of chapter 3, the Ledger Hall (learned positional embeddings).

* :data:`LEARNED_POSITIONS` (ex-3-1): a trainable table added to the input. A class exercise: the student's
  layer is built and fed in the sandbox, and :func:`_judge_layer` reads what it did (its trainable
  parameters and its outputs) here.
* :data:`LONGEST_LEDGER` (ex-3-2): the longest learned table a model affords within a share of its parameters.
"""

from __future__ import annotations

import random
from typing import Any

import torch
from torch import nn

from .exercise import Exact, Exercise, Slip, call

__all__ = [
    "EXERCISES",
    "LEARNED_POSITIONS",
    "LONGEST_LEDGER",
    "check_learned_positions",
    "check_longest_ledger",
]

# --- ex-3-1: the layer ---------------------------------------------------------------------------------------


class _LearnedPositions(nn.Module):
    """The reference layer: ``(B, T, D) -> (B, T, D)``, row ``m`` of a ``(max_len, d_model)`` table added at ``m``."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = max_len
        self.table = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.table.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[1] > self.max_len:
            raise ValueError(f"max_len={self.max_len}: an input of {x.shape[1]} positions has no rows past it")
        return x + self.table.weight[: x.shape[1]]


def _feeds(max_len: int, d_model: int, seed: int) -> list[torch.Tensor]:
    """What the layer is fed: zeros, token vectors, exactly ``max_len`` positions, one position too many."""
    tokens = torch.randn(2, 4, d_model, generator=torch.Generator().manual_seed(seed))
    return [torch.zeros(2, 4, d_model), tokens, torch.zeros(1, max_len, d_model), torch.zeros(1, max_len + 1, d_model)]


#: What a call returns when it is not a layer at all (the sandbox names the type it got).
_NOT_LAYERS = {"NoneType", "str", "int", "float", "bool", "tuple", "list", "dict", "Tensor", "function"}
_ERROR_NAMES = {"ValueError", "SequenceTooLongError"}


def _quoted(text: str) -> str:
    """A text of the student's (an error message) inside a hint: its braces are not fields."""
    return text.replace("{", "{{").replace("}", "}}")


def _forward_fault(output: dict[str, Any], shape: str) -> Slip | None:
    """The slip of a forward call that raised."""
    if not output["raised"]:
        return None
    if output["raised"] == "NotImplementedError":
        return Slip(says="forward is not written yet (it raised NotImplementedError).")
    says = f"forward on an input of shape {shape} raised {output['raised']}: {_quoted(output['message'])}"
    if "size" in output["message"]:
        return Slip(
            says=says + ". The sizes of the two things you add do not agree.",
            then="an input of T positions uses only T of the table's max_len rows.",
        )
    return Slip(says=says, then="look at the line of your forward that raised.")


def _judge_layer(got: Any, expected: Any, one: Any) -> Slip | None:
    """ex-3-1's checks, on what the sandbox saw the student's layer do, in the order a reader fixes them."""
    max_len, d_model = one.args
    kind = got.get("type", "?") if isinstance(got, dict) else type(got).__name__
    if not isinstance(got, dict) or kind in _NOT_LAYERS:
        return Slip(
            says=f"calling it gave a {kind}, not a layer.",
            then="pass the class itself, one that subclasses nn.Module, to the checker.",
        )
    parameters = list(got["parameters"].values())
    if not parameters:
        return Slip(
            says="the layer has no trainable parameters: the optimiser would never change its table.",
            then="a tensor kept as a plain attribute of a module is not trained: how does a module register one?",
        )
    count = sum(p.numel() for p in parameters)
    if count != max_len * d_model:
        return Slip(
            says=f"with max_len={{max_len}} and d_model={{d_model}} the layer trains {count} numbers, not"
            " max_len × d_model.",
            then="the layer trains one row of d_model numbers per position, and nothing else.",
        )
    std = float(parameters[0].float().std())
    if not 0.01 < std < 0.04:
        return Slip(
            says=f"the table starts with standard deviation {'above' if std > 0.04 else 'below'} 0.02, the scale the"
            " statement asks for: measure yours.",
            then="the starting values come from whatever built the table (a fresh nn.Embedding draws them from"
            " N(0, 1)), and the statement asks for another scale.",
        )
    if not got["outputs"]:  # the wide layer: only its parameters and scale are checked
        return None
    table = parameters[0].reshape(max_len, d_model)
    zeros, tokens, full, too_long = got["outputs"]
    shapes = [(2, 4, d_model), (2, 4, d_model), (1, max_len, d_model)]
    words = ["(2, 4, {d_model})", "(2, 4, {d_model})", "(1, {max_len}, {d_model})"]
    for output, shape in zip((zeros, tokens), words[:2], strict=True):
        fault = _forward_fault(output, shape)
        if fault is not None:
            return fault
    out = zeros["value"]
    out_shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
    if out_shape != shapes[0]:
        return Slip(
            says=f"an input of shape {words[0]} gave an output of shape {out_shape}.",
            then="the positions are added to the token vectors, so the output has the input's shape.",
        )
    rows = table[:4].expand(*shapes[0])
    if not torch.allclose(out, rows):
        return Slip(
            says="on an all-zero input the output is not the table's first T rows, one per position.",
            then="position p gets row p, in order, and every sequence of the batch gets the same rows.",
        )
    x = one.feeds[1]
    out = tokens["value"]
    if not (isinstance(out, torch.Tensor) and out.shape == x.shape and torch.allclose(out - x, rows, atol=1e-6)):
        return Slip(
            says="on token vectors the output is not the input plus the position rows: the tokens went missing.",
            then="the layer adds to what it is given; it does not replace it.",
        )
    if full["raised"] and full["raised"] != "NotImplementedError":
        return Slip(
            says="an input of exactly max_len = {max_len} positions was refused"
            f" ({full['raised']}: {_quoted(full['message'])}), but it fits the table.",
            then="every row is usable: positions 0 … max_len − 1 all exist.",
        )
    out = full["value"]
    if not (isinstance(out, torch.Tensor) and tuple(out.shape) == shapes[2] and torch.allclose(out[0], table)):
        return Slip(
            says="an input of exactly max_len = {max_len} positions does not get all {max_len} rows.",
            then="every row is usable: positions 0 … max_len − 1 all exist.",
        )
    if too_long["raised"] in _ERROR_NAMES:
        if str(max_len) in too_long["message"]:
            return None
        return Slip(
            says=f"the error for max_len + 1 positions does not say what the limit is: {_quoted(too_long['message'])}",
            then="the reader of the error needs the number to know how much to shorten.",
        )
    if too_long["raised"]:
        return Slip(
            says=f"max_len + 1 positions with a {{max_len}}-row table raised {too_long['raised']}:"
            f" {_quoted(too_long['message'])}",
            then="that is PyTorch's error, deep inside the lookup: the statement asks the layer to check the"
            " length first, and says which error to raise.",
        )
    return Slip(
        says="max_len + 1 positions with a {max_len}-row table raised no error.",
        then="there is no row for position max_len: the statement says what the layer must do then.",
    )


def _layers(r: random.Random) -> list:
    max_len, d_model = r.randrange(11, 18), 2 * r.randrange(4, 7)
    return [call(max_len, d_model, feeds=_feeds(max_len, d_model, r.randrange(1, 2**31))), call(300, 24, feeds=[])]


LEARNED_POSITIONS = Exercise(
    "ex-3-1",
    "MyLearnedPositions",
    checker="check_learned_positions",
    what="learned position layer",
    reference=_LearnedPositions,
    public=[call(10, 6, feeds=_feeds(10, 6, 0)), call(256, 16, feeds=[])],
    hidden=_layers,
    answer=None,
    withheld=("transformerland.encodings.learned.LearnedPositionalEmbedding",),
    judge=_judge_layer,
    points=2,
)

# --- ex-3-2: the longest ledger a model affords -----------------------------------------------------------------


def _longest(rest: int, d_model: int, percent: int) -> int:
    """Most rows ``L`` with ``L · d_model`` at most ``percent`` % of ``rest + L · d_model``, in whole numbers."""
    return percent * rest // ((100 - percent) * d_model)


def _is_count(got: Any) -> bool:
    return isinstance(got, int) and not isinstance(got, bool)


def _boundary(rows: int, d_model: int) -> Any:
    """A call whose answer sits exactly on the share: ``rows`` rows make exactly 25 % of the model."""
    return call(3 * rows * d_model, d_model, 25)


LONGEST_LEDGER = Exercise(
    "ex-3-2",
    "longest_ledger",
    checker="check_longest_ledger",
    what="ledger lengths",
    reference=_longest,
    public=[
        call(102_160, 64, 10),
        call(109_606_784, 768, 1),
        call(160, 4, 20),
        call(7, 3, 50),
        call(100, 8, 1),
    ],
    hidden=lambda r: [
        call(10_000 + r.randrange(90_000), 8 * r.randrange(2, 17), r.randrange(2, 40)),
        call(1_000_000 + r.randrange(9_000_000), 64 * r.randrange(1, 13), r.randrange(1, 10)),
        _boundary(5 + r.randrange(200), 4 * r.randrange(1, 33)),
    ],
    answer=Exact(),
    slips=[
        Slip(
            when=lambda got, *args: not _is_count(got),
            says="the length is not a plain Python int: a table has a whole number of rows.",
            then="make what you computed a Python int, rounded the way that keeps the table within its share.",
        ),
        Slip(
            lambda rest, d_model, percent: percent * rest // (100 * d_model),
            says="your table is a share of the rest of the model; the share is of the whole model, table included.",
            then="a longer table makes the whole model larger too: the table's rows belong on both sides of the "
            "fraction before you solve for them.",
        ),
        Slip(
            lambda rest, d_model, percent: percent * rest // (100 - percent),
            says="your length is {d_model} times too long: you counted rows where the share counts numbers.",
            then="how many numbers does one row of a table of width d_model hold?",
        ),
        Slip(
            lambda rest, d_model, percent: -(-percent * rest // ((100 - percent) * d_model)),
            says="a table of your length is more than the share: the answer is the longest table that stays within it.",
            then="when the exact solution is not whole, which whole number of rows still fits?",
        ),
        Slip(
            lambda rest, d_model, percent: (percent * rest - 1) // ((100 - percent) * d_model),
            says="a table that is exactly the share was refused: the statement allows 'at most' the share.",
            then="check a case by hand where the rows come out whole: is a table of exactly that share allowed?",
        ),
    ],
    otherwise=Slip(
        says="check your answer L on one call by hand: is L · d_model at most the share of the whole, and L + 1 not?",
        then="write the table's share of the whole model as a fraction with L in it, set it to percent/100, "
        "and solve for L.",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [LEARNED_POSITIONS, LONGEST_LEDGER]

check_learned_positions = LEARNED_POSITIONS.checker_function()
check_longest_ledger = LONGEST_LEDGER.checker_function()
