"""Checkers for chapter 7, the Observatory (a real RoPE language model).

* :func:`check_position_ids` (ex-7-1): position ids from a padding mask.
* :func:`check_gguf_unpermute` (ex-7-2): llama.cpp's query/key row order back to transformers' halves.
* :func:`check_turning_pairs` (ex-7-3): which rotary pairs complete a full turn within a context.

Each prints one verdict line and returns a :class:`~transformerland.exercises.checking.CheckResult`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import torch

from ..encodings.rotary import halves_to_pairs
from ..llm import gguf_rows_to_halves, position_ids_from_mask, rotary_turns
from .checking import Check, CheckFailed, CheckResult, Mistake
from .spec import Case, CheckedByCode, Exercise, compare

__all__ = ["EXERCISES", "POSITION_IDS", "check_gguf_unpermute", "check_position_ids", "check_turning_pairs"]


def _as_long(value: object, what: str) -> torch.Tensor:
    """A returned tensor, list or array as a long tensor, or a NOT YET verdict."""
    try:
        tensor = torch.as_tensor(value).detach().cpu()
    except (TypeError, ValueError, RuntimeError):
        raise CheckFailed(
            f"it returned a {type(value).__name__}, which is not a tensor of whole numbers",
            f"return {what} as a torch.Tensor of integers.",
        ) from None
    if tensor.dtype.is_floating_point and not bool((tensor == tensor.round()).all()):
        raise CheckFailed(f"{what} are not whole numbers", "positions and indices count in whole steps: 0, 1, 2, …")
    return tensor.long()


# ex-7-1 ------------------------------------------------------------------------------------------

#: No padding, right padding, then left padding (the decoder's kind), and a row with one real token.
_MASKS = [
    [[1, 1, 1, 1]],
    [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]],
    [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]],
    [[0, 0, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]],
    [[0, 1]],
]


def _mask_cases(seed: int) -> list[Case]:
    """The masks of :data:`_MASKS` for the notebook; random left- and right-padded masks for the grader."""
    if seed == 0:
        masks = _MASKS
    else:
        draw = random.Random(seed)
        masks = []
        for left in (True, False, True):
            width = draw.randrange(4, 9)
            rows = []
            for _ in range(draw.randrange(2, 4)):
                real = draw.randrange(1, width + 1)
                pad = [0] * (width - real)
                rows.append(pad + [1] * real if left else [1] * real + pad)
            masks.append(rows)
    return [Case((torch.tensor(rows),)) for rows in masks]


def _position_mistakes(case: Case) -> list[Mistake]:
    (mask,) = case.args
    arange = torch.arange(mask.shape[1]).expand_as(mask)
    return [
        Mistake(
            arange,
            "the padding was counted: every row got 0, 1, 2, … whatever its mask. Count only the real "
            "tokens, e.g. with a running sum of the mask.",
        ),
        Mistake(mask.cumsum(dim=1), "the real tokens count from 1. The first real token of a row sits at position 0."),
        Mistake(
            arange - (mask == 0).sum(dim=1, keepdim=True),
            "you subtracted the number of padding slots, which only works when all the padding comes first. "
            "Count the real tokens before each slot instead.",
        ),
    ]


def _judge_positions(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    """Real tokens count 0, 1, 2, … from each row's first real token; padding slots hold any position >= 0."""
    (mask,) = case.args
    rows = mask.tolist()
    got = _as_long(got, "the position ids")
    check.that(
        got.shape == mask.shape,
        f"for a mask of shape {tuple(mask.shape)} it returned shape {tuple(got.shape)}",
        hint="return one position per slot, padding included: the same shape as the mask.",
    )
    real = mask == 1

    def same_on_real_tokens(a: torch.Tensor, b: torch.Tensor) -> bool:
        return torch.equal(a[real], b[real])

    problem = f"for the mask {rows} the real tokens' positions are {got[real].tolist()}, not {expected[real].tolist()}"
    compare(check, spec, Case(case.args, problem=problem), got, expected, same_on_real_tokens)
    check.that(
        bool((got[~real] >= 0).all()),
        f"for the mask {rows} a padding slot got a negative position",
        hint="a padding slot's position never matters, but it must be a valid one: put 0 (or 1) there, not -1.",
    )


POSITION_IDS = Exercise(
    label="ex-7-1",
    what="position ids from a padding mask",
    checker="check_position_ids",
    function="my_position_ids",
    signature="(attention_mask (B, T) of 0/1) -> position ids (B, T): real tokens count 0, 1, 2, …",
    cases=_mask_cases,
    reference=position_ids_from_mask,
    mistakes=_position_mistakes,
    hint="position = (number of real tokens up to and including this one) − 1.",
    judge=_judge_positions,
    changed_problem="your function changed the mask it was given",
    changed_hint="compute the positions in a new tensor; do not write into attention_mask.",
)

check_position_ids = POSITION_IDS.checker_function()


# ex-7-2 ------------------------------------------------------------------------------------------


def check_gguf_unpermute(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """ex-7-2: ``fn(weight, n_heads)`` reorders a GGUF query/key weight's rows into transformers' halves order."""
    with Check("ex-7-2", "the GGUF row order undone") as check:
        for n_heads, head_dim, columns in ((2, 8, 3), (1, 4, 1), (9, 64, 5), (3, 64, 2)):
            weight = torch.arange(n_heads * head_dim * columns, dtype=torch.float32).reshape(-1, columns)
            before = weight.clone()
            returned = check.call(fn, weight, n_heads)
            check.that(
                torch.equal(weight, before),
                "your function changed the weight it was given",
                hint="build the reordered matrix as a new tensor (indexing with a list of rows does that).",
            )
            try:
                got = torch.as_tensor(returned).detach().cpu().float()
            except (TypeError, ValueError, RuntimeError):
                raise CheckFailed(
                    f"it returned a {type(returned).__name__}", "return the reordered weight as a torch.Tensor."
                ) from None
            check.that(
                got.shape == weight.shape,
                f"for a weight of shape {tuple(weight.shape)} it returned shape {tuple(got.shape)}",
                hint="the rows move, their number and width stay: return the same shape.",
            )
            expected = gguf_rows_to_halves(weight, n_heads)
            if torch.equal(got, expected):
                continue
            pairs = halves_to_pairs(head_dim)
            blocks = weight.reshape(n_heads, head_dim, columns)
            mistakes = [
                (
                    blocks[:, pairs].reshape(weight.shape),
                    "you applied llama.cpp's permutation (halves → pairs) instead of undoing it. Row 1 of a head "
                    "in the file is the y of pair 0, which belongs at row d/2.",
                ),
                (
                    gguf_rows_to_halves(weight, 1),
                    "the whole matrix was treated as one head. Reorder within each head of width "
                    "rows / n_heads separately.",
                ),
                (
                    weight,
                    "the rows are still in the file's order. Within each head, gather the even rows (the x's of "
                    "the pairs), then the odd rows (the y's).",
                ),
            ]
            hints = [hint for wrong, hint in mistakes if wrong.shape == got.shape and torch.equal(got, wrong)]
            check.that(
                False,
                f"for {n_heads} head(s) of width {head_dim} the rows are not in transformers' order",
                hint=hints[0] if hints else "within each head, rows 0, 2, 4, … (the x's) come first, then 1, 3, 5, ….",
            )
    return check.result


# ex-7-3 ------------------------------------------------------------------------------------------


def check_turning_pairs(fn: Callable[[int, float, int], object]) -> CheckResult:
    """ex-7-3: ``fn(head_dim, base, context)`` lists the pairs that complete a full turn within ``context`` tokens.

    Pair ``i`` (0-based) qualifies when ``(context − 1) · base^(−2i/d) ≥ 2π``: the largest offset
    between two tokens of the context turns it at least once.
    """
    with Check("ex-7-3", "pairs that complete a turn") as check:
        for head_dim, base, context in ((64, 100_000.0, 8192), (64, 10_000.0, 512), (16, 10_000.0, 100), (8, 10.0, 7)):
            returned = check.call(fn, head_dim, base, context)
            got = _as_long(returned, "the pair indices").flatten()
            if got.numel() == head_dim // 2 and set(got.unique().tolist()) <= {0, 1}:
                raise CheckFailed(
                    "it returned a yes/no flag per pair",
                    "return the indices of the pairs that turn, e.g. torch.nonzero(flags).flatten(), not the flags.",
                )
            turns = rotary_turns(context - 1, head_dim, base)
            expected = torch.nonzero(turns >= 1).flatten()
            answer = got.sort().values
            i = torch.arange(head_dim // 2, dtype=torch.float64)
            theta = base ** (-2 * i / head_dim)
            mistakes = [
                (
                    torch.nonzero(context * theta >= 2 * math.pi).flatten(),
                    "the largest offset in a context of L tokens is L − 1, not L (the first token sits at 0).",
                ),
                (
                    torch.nonzero((context - 1) * theta >= 1).flatten(),
                    "a full turn is 2π radians, not 1: pair i turns (L − 1)·θ_i radians over the context.",
                ),
                (
                    torch.nonzero((context - 1) * base ** (-i / head_dim) >= 2 * math.pi).flatten(),
                    "the frequencies miss the factor 2: θ_i = base^(−2i/d).",
                ),
                (
                    torch.nonzero(turns < 1).flatten(),
                    "these are the pairs that never complete a turn; the question asks for the ones that do.",
                ),
            ]
            hints = [hint for wrong, hint in mistakes if torch.equal(answer, wrong)]
            check.that(
                torch.equal(answer, expected),
                f"for d = {head_dim}, base {base:g} and a context of {context} tokens the pairs are not the right ones",
                hint=hints[0] if hints else "pair i turns (L − 1)·base^(−2i/d) radians; it completes a turn at 2π.",
            )
    return check.result


#: Every exercise of the chapter with a checker, in order (checkers still written as code: see
#: :class:`~transformerland.exercises.spec.CheckedByCode`).
EXERCISES = [
    POSITION_IDS,
    CheckedByCode(
        "ex-7-2",
        "the GGUF row order undone",
        "check_gguf_unpermute",
        "my_unpermute",
        "``fn(weight, n_heads)`` reorders a GGUF query/key weight's rows into transformers' halves order.",
        check_gguf_unpermute,
    ),
    CheckedByCode(
        "ex-7-3",
        "pairs that complete a turn",
        "check_turning_pairs",
        "my_turning_pairs",
        "``fn(head_dim, base, context)`` lists the pairs that complete a full turn within ``context`` tokens.",
        check_turning_pairs,
    ),
]
