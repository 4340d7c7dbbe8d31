"""Checkers for chapter 1, *Why order matters*."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..attention import causal_mask, single_head_attention
from ..symmetry import permute_tokens
from .checking import Check, CheckResult, Mistake, hint_for, tensors_close

__all__ = ["check_single_head_attention"]

_FORMULA = "softmax(Q Kᵀ / √d_k) V with Q = x @ w_q, K = x @ w_k, V = x @ w_v"
_close = tensors_close(atol=1e-5, rtol=1e-4)


def _case(length: int, width: int, d_k: int, d_v: int, seed: int, scale: float = 1.0) -> tuple[torch.Tensor, ...]:
    """A random input ``(T, D)`` and weights ``(D, d_k)``, ``(D, d_k)``, ``(D, d_v)``."""
    generator = torch.Generator().manual_seed(seed)
    x = scale * torch.randn(length, width, generator=generator)
    weights = (torch.randn(width, d, generator=generator) / math.sqrt(width) for d in (d_k, d_k, d_v))
    return (x, *weights)


def _mistakes(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor) -> list[Mistake]:
    """What the usual slips return for this case, each with the hint that names it."""
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
        Mistake(
            (scores / d_k).softmax(dim=-1) @ v,
            "divide the scores by the square root of d_k, not by d_k itself.",
        ),
        Mistake(
            (scores.T / math.sqrt(d_k)).softmax(dim=-1) @ v,
            "scores[i, j] compares query i with key j: compute Q @ K.T, not K @ Q.T.",
        ),
        Mistake(
            (scores / math.sqrt(d_k)).masked_fill(~causal_mask(len(x)), float("-inf")).softmax(dim=-1) @ v,
            "this is causal attention: ex-1-2 asks for plain attention, where every token sees every other.",
        ),
    ]


def check_single_head_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """ex-1-2: ``fn(x, w_q, w_k, w_v)`` must return single-head attention's output ``(T, d_v)``.

    Checks the values against the library's attention, a one-token sequence, large inputs
    (the softmax must not overflow) and permutation equivariance.
    """
    with Check("ex-1-2", "single-head attention") as check:
        length, width, d_k, d_v = 5, 6, 4, 3
        x, w_q, w_k, w_v = _case(length, width, d_k, d_v, seed=11)
        got = check.call(fn, x.clone(), w_q.clone(), w_k.clone(), w_v.clone())
        check.that(
            not isinstance(got, tuple),
            "it returned a tuple",
            hint="return only the output tensor (T, d_v), not the attention weights as well.",
        )
        check.tensor(got, hint="return the output as a torch.Tensor of shape (T, d_v).")
        shape_hints = {
            (length, length): "that is the (T, T) matrix of weights: multiply it by the values V = x @ w_v.",
            (length, width): "that is the width of x: the values are V = x @ w_v, which has d_v columns.",
            (length, d_k): "that is the width of the queries and keys: the output mixes the values V = x @ w_v.",
        }
        check.shape(
            got,
            (length, d_v),
            f"the output has shape {tuple(got.shape)}; expected ({length}, {d_v}) for T={length} tokens and d_v={d_v}",
            hint=shape_hints.get(tuple(got.shape), "one output row per token, d_v = w_v.shape[1] columns."),
        )
        got = got.detach().to(x.dtype)
        expected, _ = single_head_attention(x, w_q, w_k, w_v)
        check.that(
            _close(got, expected),
            "the values differ from single-head attention's",
            hint=hint_for(got, _mistakes(x, w_q, w_k, w_v), _close, f"compare each step with the formula {_FORMULA}."),
        )

        one = _case(1, width, d_k, d_v, seed=12)
        got_one = check.call(fn, *(t.clone() for t in one))
        check.that(
            isinstance(got_one, torch.Tensor)
            and torch.allclose(got_one.detach().to(x.dtype), one[0] @ one[3], atol=1e-5),
            "a one-token sequence does not come out as that token's value vector",
            hint="with a single token there is nothing to mix: its weight on itself is 1, so the output is x @ w_v.",
        )

        big = _case(length, width, d_k, d_v, seed=13, scale=40.0)
        got_big = check.call(fn, *(t.clone() for t in big))
        expected_big, _ = single_head_attention(*big)
        check.that(
            isinstance(got_big, torch.Tensor)
            and bool(torch.isfinite(got_big).all())
            and torch.allclose(got_big.detach().to(x.dtype), expected_big, atol=1e-4, rtol=1e-4),
            "large inputs give inf or nan (the exponentials overflow)",
            hint="use torch.softmax, or subtract each row's maximum score before taking exp.",
        )

        x7, *weights7 = _case(7, width, d_k, d_v, seed=14)
        perm = torch.randperm(7, generator=torch.Generator().manual_seed(15))
        shuffled_first = check.call(fn, permute_tokens(x7, perm), *weights7)
        original = check.call(fn, x7, *weights7)
        check.that(
            torch.allclose(shuffled_first, permute_tokens(original, perm), atol=1e-5, rtol=1e-4),
            "shuffling the input tokens does not just shuffle the output rows",
            hint="plain attention is permutation-equivariant: does your function look at token positions?",
        )
    return check.result
