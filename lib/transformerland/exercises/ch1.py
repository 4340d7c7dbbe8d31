"""Exercises of chapter 1, *Why order matters*, as specs (words in ``ch1.toml``).

* :data:`SINGLE_HEAD_ATTENTION` (ex-1-2): single-head attention, ``softmax(Q Kᵀ / √d_k) V``.
"""

from __future__ import annotations

import math

import torch

from ..attention import causal_mask, single_head_attention
from ..symmetry import permute_tokens
from .checking import Check, tensors_close
from .spec import Case, Exercise, chapter_data, compare, declared

__all__ = ["EXERCISES", "SINGLE_HEAD_ATTENTION", "check_single_head_attention"]

_DATA = chapter_data(__name__)
_WIDTH, _D_K, _D_V = 6, 4, 3  # every case's sizes: D, d_k and d_v

#: Large inputs leave a little more rounding in the output than the spec's tolerance allows.
_LARGE_CLOSE = tensors_close(atol=1e-4, rtol=1e-4)


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
        Case(_inputs(5, base), tag="main"),
        Case(_inputs(1, base + 1), tag="one_token"),
        Case(_inputs(5, base + 2, scale=40.0), tag="large"),
        Case((permute_tokens(x7, perm), *weights7), tag="shuffled"),
    ]


def _reference(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor) -> torch.Tensor:
    return single_head_attention(x, w_q, w_k, w_v)[0]


def _slips(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor) -> dict[str, torch.Tensor]:
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    d_k, scores = q.shape[-1], q @ k.T
    return {
        "over_queries": (scores / math.sqrt(d_k)).softmax(dim=0) @ v,
        "unscaled": scores.softmax(dim=-1) @ v,
        "by_width": (scores / math.sqrt(x.shape[-1])).softmax(dim=-1) @ v,
        "by_d_k": (scores / d_k).softmax(dim=-1) @ v,
        "transposed": (scores.T / math.sqrt(d_k)).softmax(dim=-1) @ v,
        "causal": (scores / math.sqrt(d_k)).masked_fill(~causal_mask(len(x)), float("-inf")).softmax(dim=-1) @ v,
    }


def _judge(check: Check, spec: Exercise, case: Case, got: object, expected: torch.Tensor) -> None:
    """A tensor ``(T, d_v)`` (not a tuple), finite, close to the reference; a wrong one named by its slip."""
    check.that(not isinstance(got, tuple), *spec.said("tuple"))
    got = check.tensor(got, hint=spec.say("tensor_hint"))
    shape, (length, d_v) = tuple(got.shape), expected.shape
    named = {(length, length): "weights_hint", (length, _WIDTH): "x_width_hint", (length, _D_K): "keys_width_hint"}
    problem = spec.say("shape", got=shape, T=length, d_v=d_v)
    check.shape(got, expected.shape, problem, spec.say(named.get(shape, "shape_hint")))
    got = got.detach().to(expected.dtype)
    if case.tag != "main":  # the later cases first ask for finite numbers: an overflow is named as such
        check.that(bool(torch.isfinite(got).all()), case.problem, case.hint)
    compare(check, spec, case, got, expected, _LARGE_CLOSE if case.tag == "large" else None)


def _words(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor) -> dict[str, int]:
    """The widths the slips' hints name: D, that of x, and d_k, that of the queries and keys."""
    return {"width": x.shape[-1], "d_k": w_q.shape[-1]}


SINGLE_HEAD_ATTENTION = declared(
    _DATA, "ex-1-2", reference=_reference, cases=_cases, slips=_slips, words=_words, judge=_judge
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [SINGLE_HEAD_ATTENTION]

check_single_head_attention = SINGLE_HEAD_ATTENTION.checker_function()
