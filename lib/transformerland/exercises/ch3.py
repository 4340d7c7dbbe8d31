"""Checkers for chapter 3, *Learned positional embeddings* (the Ledger Hall).

- ``ex-3-1``: :func:`check_learned_positions`, a trainable table added to the input.
- ``ex-3-2``: :func:`check_position_parameters`, how many numbers a position scheme trains.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import torch
from torch import nn

from .checking import Check, CheckResult, Mistake, hint_for
from .spec import CheckedByCode

__all__ = ["EXERCISES", "check_learned_positions", "check_position_parameters"]


def _forward(check: Check, layer: nn.Module, x: torch.Tensor, max_len: int) -> torch.Tensor:
    """Run the student's layer on ``x`` (which fits the table), turning a crash into a verdict."""

    def explain(error: Exception) -> str | None:
        if "size" not in str(error):
            return None  # point at the line
        return (
            f"an input of T = {x.shape[1]} positions uses only the first T rows of the table: "
            "slice it with table[:T] (or look up positions 0 … T-1) before adding it to x."
        )

    with torch.no_grad():
        return check.run(
            lambda: layer(x),
            name="forward",
            doing=f"forward on an input of shape {tuple(x.shape)} (table of {max_len} rows)",
            explain=explain,
        )


def check_learned_positions(layer_class: Callable[[int, int], nn.Module]) -> CheckResult:
    """ex-3-1: ``layer_class(max_len, d_model)`` builds a learned position layer.

    Its forward takes ``x`` of shape ``(B, T, D)`` and returns ``x + table[:T]``, where the
    table is a trainable ``(max_len, D)`` parameter initialised with std 0.02; an input longer
    than ``max_len`` raises a ``ValueError`` whose message names ``max_len``.
    """
    with Check("ex-3-1", "learned position layer") as check:
        max_len, d_model = 10, 6
        layer = check.call(layer_class, max_len, d_model)
        check.that(
            isinstance(layer, nn.Module),
            f"calling it returned a {type(layer).__name__}, not an nn.Module",
            "write a class that subclasses nn.Module and pass the class itself to the checker.",
        )
        params = [p for p in layer.parameters() if p.requires_grad]
        count = sum(p.numel() for p in params)
        check.that(
            count > 0,
            "the layer has no trainable parameters",
            "a tensor stored as a plain attribute is not trained: wrap it in nn.Parameter(...) "
            "or use nn.Embedding(max_len, d_model).",
        )
        check.that(
            count == max_len * d_model,
            f"with max_len={max_len} and d_model={d_model} the layer trains {count} numbers, "
            f"expected {max_len * d_model}",
            "one row of d_model numbers per position, and nothing else: a (max_len, d_model) table.",
        )
        table = params[0].detach().reshape(max_len, d_model)

        zeros = torch.zeros(2, 4, d_model)
        out = _forward(check, layer, zeros, max_len)
        check.that(
            isinstance(out, torch.Tensor) and out.shape == zeros.shape,
            f"an input of shape {tuple(zeros.shape)} gave an output of shape "
            f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}",
            "return a tensor of the input's shape (B, T, D): the positions are added, not appended.",
        )
        check.that(
            torch.allclose(out, table[:4].expand(2, 4, d_model)),
            "on an all-zero input the output is not the first T rows of the table, one per position",
            "position p receives row p of the table: add table[:T] (rows 0 … T-1, in order), "
            "the same rows for every sequence in the batch.",
        )
        x = torch.randn(2, 4, d_model, generator=torch.Generator().manual_seed(0))
        out = _forward(check, layer, x, max_len)
        check.that(
            torch.allclose(out - x, table[:4].expand(2, 4, d_model), atol=1e-6),
            "the output is not the input plus the position rows",
            "the layer adds positions to the token vectors: return x + table[:T], not the rows alone.",
        )
        full = torch.zeros(1, max_len, d_model)
        out = _forward(check, layer, full, max_len)
        check.that(
            torch.allclose(out[0], table),
            f"an input of exactly max_len = {max_len} positions does not get all {max_len} rows",
            "every row is usable: positions 0 … max_len-1 all exist.",
        )

        wide = check.call(layer_class, 256, 16)
        std = float(next(p for p in wide.parameters() if p.requires_grad).detach().std())
        check.that(
            0.01 < std < 0.04,
            f"the table starts with standard deviation {std:.3f}, expected about 0.02",
            "nn.Embedding starts at N(0, 1); re-initialise its weight with nn.init.normal_(weight, std=0.02), "
            "the scale of the token embeddings (as BERT does).",
        )

        too_long = torch.zeros(1, max_len + 1, d_model)
        try:
            with torch.no_grad():
                layer(too_long)
        except ValueError as error:
            check.that(
                str(max_len) in str(error),
                f"the error for {max_len + 1} positions does not mention the limit: {error}",
                "say what the limit is, so that the reader knows what to shorten: include max_len in the message.",
            )
        except Exception as error:
            check.fail(
                f"{max_len + 1} positions with a {max_len}-row table raised {type(error).__name__}: {error}",
                "check T against max_len before touching the table, and raise a ValueError that names max_len "
                "(torch's own index or size error does not tell the reader what went wrong).",
            )
        else:
            check.fail(
                f"{max_len + 1} positions with a {max_len}-row table raised no error",
                "there is no row for position max_len: raise a ValueError that names max_len.",
            )
    return check.result


def check_position_parameters(count: Callable[[str, int, int], int]) -> CheckResult:
    """ex-3-2: ``count(scheme, max_len, d_model)`` is the number of trained position parameters.

    ``scheme`` is ``"learned"``, ``"sinusoidal"`` or ``"none"``.
    """
    cases = [
        ("learned", 512, 768, 512 * 768),  # BERT-base
        ("learned", 1024, 768, 1024 * 768),  # GPT-2 small
        ("learned", 24, 64, 24 * 64),
        ("learned", 1, 3, 3),
        ("sinusoidal", 512, 768, 0),
        ("none", 512, 768, 0),
    ]
    with Check("ex-3-2", "parameter counts") as check:
        for scheme, max_len, d_model, expected in cases:
            got = check.call(count, scheme, max_len, d_model)
            check.that(
                isinstance(got, int) and not isinstance(got, bool),
                f"count({scheme!r}, {max_len}, {d_model}) returned {got!r} ({type(got).__name__}), not an int",
                "return a plain Python int (use int(...) around a tensor or a float).",
            )
            if scheme == "sinusoidal":
                hint = "the sinusoids come from a formula and are computed, not trained: they cost no parameters."
            elif scheme == "none":
                hint = "with no position scheme there is nothing to train."
            else:
                mistakes = [
                    Mistake(
                        max_len + d_model, "each position owns a whole row of d_model numbers: multiply, do not add."
                    ),
                    Mistake(
                        (max_len - 1) * d_model,
                        "positions run from 0 to max_len - 1: that is max_len rows, not max_len - 1.",
                    ),
                ]
                fallback = "a learned table has one row per position and d_model numbers in each row."
                hint = hint_for(got, mistakes, operator.eq, fallback)
            check.that(
                got == expected, f"count({scheme!r}, {max_len}, {d_model}) returned {got}, which is not right", hint
            )
    return check.result


#: Every exercise of the chapter with a checker, in order (checkers still written as code: see
#: :class:`~transformerland.exercises.spec.CheckedByCode`).
EXERCISES = [
    CheckedByCode(
        "ex-3-1",
        "learned position layer",
        "check_learned_positions",
        "MyLearnedPositions",
        "``layer_class(max_len, d_model)`` builds a learned position layer.",
        check_learned_positions,
    ),
    CheckedByCode(
        "ex-3-2",
        "parameter counts",
        "check_position_parameters",
        "count_position_parameters",
        "``count(scheme, max_len, d_model)`` is the number of trained position parameters.",
        check_position_parameters,
    ),
]
