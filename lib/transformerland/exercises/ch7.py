"""Exercises of chapter 7, the Observatory (a real RoPE language model), as specs.

* :data:`POSITION_IDS` (ex-7-1): position ids from a padding mask.
* :data:`GGUF_UNPERMUTE` (ex-7-2): llama.cpp's query/key row order back to transformers' halves.
* :data:`TURNING_PAIRS` (ex-7-3): which rotary pairs complete a full turn within a context.
"""

from __future__ import annotations

import math
import random
from typing import Any

import torch

from ..encodings.rotary import halves_to_pairs
from ..llm import gguf_rows_to_halves, position_ids_from_mask, rotary_turns
from .checking import Check, Mistake, tensors_equal
from .spec import Case, Exercise, cases_of, compare

__all__ = [
    "EXERCISES",
    "GGUF_UNPERMUTE",
    "POSITION_IDS",
    "TURNING_PAIRS",
    "check_gguf_unpermute",
    "check_position_ids",
    "check_turning_pairs",
]


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
    got = check.integers(got, "the position ids")
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


def _weight_cases(seed: int) -> list[Case]:
    """Weights whose entries count up (the notebook's), or random ones of other head counts (the grader's)."""
    shapes = ((2, 8, 3), (1, 4, 1), (9, 64, 5), (3, 64, 2)) if seed == 0 else ((4, 16, 3), (1, 8, 2), (6, 32, 2))
    g = torch.Generator().manual_seed(seed)
    cases = []
    for n_heads, head_dim, columns in shapes:
        rows = n_heads * head_dim
        weight = (
            torch.arange(rows * columns, dtype=torch.float32) if seed == 0 else torch.randn(rows * columns, generator=g)
        )
        cases.append(Case((weight.reshape(rows, columns), n_heads)))
    return cases


def _unpermute_mistakes(case: Case) -> list[Mistake]:
    weight, n_heads = case.args
    head_dim = len(weight) // n_heads
    blocks = weight.reshape(n_heads, head_dim, -1)
    return [
        Mistake(
            blocks[:, halves_to_pairs(head_dim)].reshape(weight.shape),
            "you applied llama.cpp's permutation (halves → pairs) instead of undoing it. Row 1 of a head "
            "in the file is the y of pair 0, which belongs at row d/2.",
        ),
        Mistake(
            gguf_rows_to_halves(weight, 1),
            "the whole matrix was treated as one head. Reorder within each head of width rows / n_heads separately.",
        ),
        Mistake(
            weight,
            "the rows are still in the file's order. Within each head, gather the even rows (the x's of "
            "the pairs), then the odd rows (the y's).",
        ),
    ]


def _judge_unpermute(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    weight, n_heads = case.args
    try:
        got = torch.as_tensor(got).detach().cpu().float()
    except (TypeError, ValueError, RuntimeError):
        check.fail(f"it returned a {type(got).__name__}", "return the reordered weight as a torch.Tensor.")
    check.that(
        got.shape == weight.shape,
        f"for a weight of shape {tuple(weight.shape)} it returned shape {tuple(got.shape)}",
        hint="the rows move, their number and width stay: return the same shape.",
    )
    problem = f"for {n_heads} head(s) of width {len(weight) // n_heads} the rows are not in transformers' order"
    compare(check, spec, Case(case.args, problem=problem), got, expected)


GGUF_UNPERMUTE = Exercise(
    label="ex-7-2",
    what="the GGUF row order undone",
    checker="check_gguf_unpermute",
    function="my_unpermute",
    signature="(weight (n_heads · head_dim, D), n_heads: int) -> the rows in transformers' halves order",
    cases=_weight_cases,
    reference=gguf_rows_to_halves,
    tolerance=tensors_equal,
    mistakes=_unpermute_mistakes,
    hint="within each head, rows 0, 2, 4, … (the x's) come first, then 1, 3, 5, ….",
    judge=_judge_unpermute,
    changed_problem="your function changed the weight it was given",
    changed_hint="build the reordered matrix as a new tensor (indexing with a list of rows does that).",
)

check_gguf_unpermute = GGUF_UNPERMUTE.checker_function()


# ex-7-3 ------------------------------------------------------------------------------------------


def _turn_cases(seed: int) -> list[Case]:
    calls = (
        ((64, 100_000.0, 8192), (64, 10_000.0, 512), (16, 10_000.0, 100), (8, 10.0, 7))
        if seed == 0
        else [(random.Random(seed).choice([32, 64, 128]), 10_000.0, 256 + seed % 4000), (16, 500.0, 50 + seed % 30)]
    )
    return cases_of(calls, "for d = {0}, base {1:g} and a context of {2} tokens the pairs are not the right ones")


def _turning(head_dim: int, base: float, context: int) -> torch.Tensor:
    """The pairs (0-based) that complete a full turn over the largest offset in the context, ``context - 1``."""
    return torch.nonzero(rotary_turns(context - 1, head_dim, base) >= 1).flatten()


def _turn_mistakes(case: Case) -> list[Mistake]:
    head_dim, base, context = case.args
    i = torch.arange(head_dim // 2, dtype=torch.float64)
    theta = base ** (-2 * i / head_dim)
    return [
        Mistake(
            torch.nonzero(context * theta >= 2 * math.pi).flatten(),
            "the largest offset in a context of L tokens is L − 1, not L (the first token sits at 0).",
        ),
        Mistake(
            torch.nonzero((context - 1) * theta >= 1).flatten(),
            "a full turn is 2π radians, not 1: pair i turns (L − 1)·θ_i radians over the context.",
        ),
        Mistake(
            torch.nonzero((context - 1) * base ** (-i / head_dim) >= 2 * math.pi).flatten(),
            "the frequencies miss the factor 2: θ_i = base^(−2i/d).",
        ),
        Mistake(
            torch.nonzero(rotary_turns(context - 1, head_dim, base) < 1).flatten(),
            "these are the pairs that never complete a turn; the question asks for the ones that do.",
        ),
    ]


def _judge_turns(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    head_dim = case.args[0]
    got = check.integers(got, "the pair indices").flatten()
    if got.numel() == head_dim // 2 and set(got.unique().tolist()) <= {0, 1}:
        check.fail(
            "it returned a yes/no flag per pair",
            "return the indices of the pairs that turn, e.g. torch.nonzero(flags).flatten(), not the flags.",
        )
    compare(check, spec, case, got.sort().values, expected)


TURNING_PAIRS = Exercise(
    label="ex-7-3",
    what="pairs that complete a turn",
    checker="check_turning_pairs",
    function="my_turning_pairs",
    signature="(head_dim: int, base: float, context: int) -> indices of the pairs with (context − 1)·θ_i ≥ 2π",
    cases=_turn_cases,
    reference=_turning,
    tolerance=tensors_equal,
    mistakes=_turn_mistakes,
    hint="pair i turns (L − 1)·base^(−2i/d) radians; it completes a turn at 2π.",
    judge=_judge_turns,
)

check_turning_pairs = TURNING_PAIRS.checker_function()


#: Every exercise of the chapter with a checker, in order.
EXERCISES = [POSITION_IDS, GGUF_UNPERMUTE, TURNING_PAIRS]
