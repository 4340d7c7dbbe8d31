"""Exercises of chapter 1, *Why order matters*, as specs (:mod:`~transformerland.exercises.spec`)."""

from __future__ import annotations

import math

import torch

from ..attention import causal_mask, single_head_attention
from ..symmetry import permute_tokens
from .checking import Check, Mistake, tensors_close
from .spec import Case, Exercise, compare

__all__ = ["EXERCISES", "SINGLE_HEAD_ATTENTION", "check_single_head_attention"]

_FORMULA = "softmax(Q Kᵀ / √d_k) V with Q = x @ w_q, K = x @ w_k, V = x @ w_v"
_WIDTH, _D_K, _D_V = 6, 4, 3


def _inputs(length: int, seed: int, scale: float = 1.0) -> tuple[torch.Tensor, ...]:
    """A random input ``(T, D)`` and weights ``(D, d_k)``, ``(D, d_k)``, ``(D, d_v)``."""
    generator = torch.Generator().manual_seed(seed)
    x = scale * torch.randn(length, _WIDTH, generator=generator)
    weights = (torch.randn(_WIDTH, d, generator=generator) / math.sqrt(_WIDTH) for d in (_D_K, _D_K, _D_V))
    return (x, *weights)


def _cases(seed: int) -> list[Case]:
    """Five tokens (the values, and the typical slips); one token; large inputs; seven tokens shuffled."""
    base = 11 + 100 * seed
    x7, *weights7 = _inputs(7, base + 3)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(base + 4))
    return [
        Case(_inputs(5, base), problem="the values differ from single-head attention's", tag="main"),
        Case(
            _inputs(1, base + 1),
            problem="a one-token sequence does not come out as that token's value vector",
            hint="with a single token there is nothing to mix: its weight on itself is 1, so the output is x @ w_v.",
            mistakes=False,
        ),
        Case(
            _inputs(5, base + 2, scale=40.0),
            problem="large inputs give inf or nan (the exponentials overflow)",
            tag="large",
            hint="use torch.softmax, or subtract each row's maximum score before taking exp.",
            mistakes=False,
        ),
        Case(
            (permute_tokens(x7, perm), *weights7),
            problem="shuffling the input tokens does not just shuffle the output rows",
            hint="plain attention is permutation-equivariant: does your function look at token positions?",
            mistakes=False,
        ),
    ]


def _reference(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor) -> torch.Tensor:
    """Single-head attention's output ``(T, d_v)``."""
    return single_head_attention(x, w_q, w_k, w_v)[0]


def _mistakes(case: Case) -> list[Mistake]:
    """What the usual slips return on ``case``, each with the hint that names it."""
    x, w_q, w_k, w_v = case.args
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    d_k, width = q.shape[-1], x.shape[-1]
    scores = q @ k.T
    return [
        Mistake(
            (scores / math.sqrt(d_k)).softmax(dim=0) @ v,
            "take the softmax over the keys: each row of weights (one query) must sum to 1, so use dim=-1, not dim=0.",
        ),
        Mistake(
            scores.softmax(dim=-1) @ v,
            f"the scores are not scaled: divide Q Kᵀ by √d_k, the width of the queries and keys (here √{d_k}).",
        ),
        Mistake(
            (scores / math.sqrt(width)).softmax(dim=-1) @ v,
            f"scale by √d_k, the width of the queries and keys ({d_k}), not by √D, the width of x ({width}).",
        ),
        Mistake((scores / d_k).softmax(dim=-1) @ v, "divide the scores by the square root of d_k, not by d_k itself."),
        Mistake(
            (scores.T / math.sqrt(d_k)).softmax(dim=-1) @ v,
            "scores[i, j] compares query i with key j: compute Q @ K.T, not K @ Q.T.",
        ),
        Mistake(
            (scores / math.sqrt(d_k)).masked_fill(~causal_mask(len(x)), float("-inf")).softmax(dim=-1) @ v,
            "this is causal attention: ex-1-2 asks for plain attention, where every token sees every other.",
        ),
    ]


_close = tensors_close(atol=1e-5, rtol=1e-4)
_close_large = tensors_close(atol=1e-4, rtol=1e-4)


def _judge(check: Check, spec: Exercise, case: Case, got: object, expected: torch.Tensor) -> None:
    """A tensor ``(T, d_v)`` (not a tuple), finite, close to the reference; a wrong one named by its slip."""
    length = len(case.args[0])
    check.that(
        not isinstance(got, tuple),
        "it returned a tuple",
        hint="return only the output tensor (T, d_v), not the attention weights as well.",
    )
    got = check.tensor(got, hint="return the output as a torch.Tensor of shape (T, d_v).")
    shape_hints = {
        (length, length): "that is the (T, T) matrix of weights: multiply it by the values V = x @ w_v.",
        (length, _WIDTH): "that is the width of x: the values are V = x @ w_v, which has d_v columns.",
        (length, _D_K): "that is the width of the queries and keys: the output mixes the values V = x @ w_v.",
    }
    check.shape(
        got,
        (length, _D_V),
        f"the output has shape {tuple(got.shape)}; expected ({length}, {_D_V}) for T={length} tokens and d_v={_D_V}",
        hint=shape_hints.get(tuple(got.shape), "one output row per token, d_v = w_v.shape[1] columns."),
    )
    got = got.detach().to(expected.dtype)
    if case.tag != "main":  # the later cases first ask for finite numbers: an overflow is named as such
        check.that(bool(torch.isfinite(got).all()), case.problem, case.hint)
    compare(check, spec, case, got, expected, _close_large if case.tag == "large" else None)


SINGLE_HEAD_ATTENTION = Exercise(
    label="ex-1-2",
    what="single-head attention",
    checker="check_single_head_attention",
    function="my_attention",
    signature="(x (T, D), w_q (D, d_k), w_k (D, d_k), w_v (D, d_v)) -> Tensor (T, d_v)",
    cases=_cases,
    reference=_reference,
    tolerance=_close,
    mistakes=_mistakes,
    hint=f"compare each step with the formula {_FORMULA}.",
    judge=_judge,
    points=2,
    forbids=("transformerland.attention.single_head_attention",),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [SINGLE_HEAD_ATTENTION]

check_single_head_attention = SINGLE_HEAD_ATTENTION.checker_function()
