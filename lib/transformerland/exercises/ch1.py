"""Exercises of chapter 1, *Why order matters*.

* :data:`SINGLE_HEAD_ATTENTION` (ex-1-2): one attention head from its weight matrices, with an optional mask
  that the chapter never applied itself (a query may look only at the keys its row of the mask allows).
"""

from __future__ import annotations

import math
import random

import torch

from ..attention import causal_mask, single_head_attention
from .exercise import Exercise, Slip, Tensor, call

__all__ = ["EXERCISES", "SINGLE_HEAD_ATTENTION", "check_single_head_attention"]

_WIDTH, _D_K, _D_V = 6, 4, 3  # the public calls' sizes: D, d_k and d_v


def _inputs(length: int, seed: int, scale: float = 1.0, width: int = _WIDTH, d_k: int = _D_K, d_v: int = _D_V):
    """A random input ``(T, D)`` and weights ``(D, d_k)``, ``(D, d_k)``, ``(D, d_v)``."""
    generator = torch.Generator().manual_seed(seed)
    x = scale * torch.randn(length, width, generator=generator)
    weights = (torch.randn(width, d, generator=generator) / math.sqrt(width) for d in (d_k, d_k, d_v))
    return (x, *weights)


def _band(length: int, reach: int) -> torch.Tensor:
    """``(T, T)``: query ``m`` may see key ``n`` when ``|m − n| <= reach`` (looks both ways, so not causal)."""
    positions = torch.arange(length)
    return (positions[:, None] - positions[None, :]).abs() <= reach


def _random_mask(length: int, generator: torch.Generator) -> torch.Tensor:
    """``(T, T)``: a random pattern in which every query may at least see itself."""
    return (torch.rand(length, length, generator=generator) < 0.5) | torch.eye(length, dtype=torch.bool)


def _reference(x, w_q, w_k, w_v, mask=None):
    return single_head_attention(x, w_q, w_k, w_v, mask=mask)[0]


def _hidden(r: random.Random) -> list:
    length = r.randrange(2, 9)
    seed = r.randrange(1000, 10**6)
    generator = torch.Generator().manual_seed(seed)
    d_k, d_v = r.choice([(2, 5), (4, 4), (8, 3)])
    return [
        call(*_inputs(length, seed, d_k=d_k, d_v=d_v)),
        call(*_inputs(length, seed + 1, d_k=d_k, d_v=d_v), mask=causal_mask(length)),
        call(*_inputs(length, seed + 2), mask=_random_mask(length, generator)),
        call(*_inputs(5, seed + 3, scale=40.0), mask=_band(5, r.randrange(1, 3))),
        call(*_inputs(1, seed + 4)),
    ]


# --- what the typical slips compute, with the reference's signature ------------------------------------------


def _parts(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return q @ k.T, v, k.shape[-1]


def _weighted(scores, v, mask, dim=-1):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=dim) @ v


def _scaled_by(divide):
    def wrong(x, w_q, w_k, w_v, mask=None):
        scores, v, d_k = _parts(x, w_q, w_k, w_v)
        return _weighted(scores / divide(x, d_k), v, mask)

    return wrong


def _over_queries(x, w_q, w_k, w_v, mask=None):
    scores, v, d_k = _parts(x, w_q, w_k, w_v)
    return _weighted(scores / math.sqrt(d_k), v, mask, dim=0)


def _transposed(x, w_q, w_k, w_v, mask=None):
    scores, v, d_k = _parts(x, w_q, w_k, w_v)
    return _weighted(scores.T / math.sqrt(d_k), v, mask)


def _mask_inverted(x, w_q, w_k, w_v, mask=None):
    scores, v, d_k = _parts(x, w_q, w_k, w_v)
    return _weighted(scores / math.sqrt(d_k), v, ~mask)  # a row that may see nothing comes out NaN


def _mask_ignored(x, w_q, w_k, w_v, mask=None):
    if mask is None:
        raise ValueError("this slip shows only where there is a mask")
    return _reference(x, w_q, w_k, w_v)


def _always_causal(x, w_q, w_k, w_v, mask=None):
    return _reference(x, w_q, w_k, w_v, causal_mask(len(x)))


def _zeroed_after_softmax(x, w_q, w_k, w_v, mask=None):
    scores, v, d_k = _parts(x, w_q, w_k, w_v)
    return ((scores / math.sqrt(d_k)).softmax(dim=-1) * mask) @ v


def _scores_times_mask(x, w_q, w_k, w_v, mask=None):
    scores, v, d_k = _parts(x, w_q, w_k, w_v)
    return (scores / math.sqrt(d_k) * mask).softmax(dim=-1) @ v


def _mask_added(x, w_q, w_k, w_v, mask=None):
    if mask is None:
        raise ValueError("this slip shows only where there is a mask")
    scores, v, d_k = _parts(x, w_q, w_k, w_v)
    return (scores / math.sqrt(d_k) + mask).softmax(dim=-1) @ v


def _shape_is(columns: str):
    """A test for an answer of shape ``(T, width)``, ``columns`` naming the width ("T", "D" or "d_k")."""

    def test(got, x, w_q, w_k, w_v, mask=None) -> bool:
        widths = {"T": len(x), "D": x.shape[-1], "d_k": w_q.shape[-1]}
        shape = tuple(getattr(got, "shape", ()))
        return shape == (len(x), widths[columns]) and widths[columns] != w_v.shape[-1]

    return test


def _not_finite(got, *args, **kwargs) -> bool:
    try:
        return not bool(torch.isfinite(torch.as_tensor(got)).all())
    except (TypeError, ValueError, RuntimeError):
        return False


SINGLE_HEAD_ATTENTION = Exercise(
    "ex-1-2",
    "my_attention",
    checker="check_single_head_attention",
    what="single-head attention, with and without a mask",
    reference=_reference,
    withheld=(
        "transformerland.attention.single_head_attention",
        "transformerland.attention.scaled_dot_product_attention",
    ),
    public=[
        call(*_inputs(5, 11)),
        call(*_inputs(5, 12), mask=causal_mask(5)),
        call(*_inputs(6, 13), mask=_band(6, 1)),
        call(*_inputs(7, 14), mask=_random_mask(7, torch.Generator().manual_seed(15))),
        call(*_inputs(1, 16)),
        call(*_inputs(5, 17, scale=40.0)),
        call(*_inputs(4, 18, d_k=2, d_v=5)),
    ],
    hidden=_hidden,
    answer=Tensor(atol=1e-4, rtol=1e-4),
    points=2,
    slips=[
        Slip(
            when=lambda got, *args, **kwargs: isinstance(got, tuple),
            says="it returned a tuple: the answer is the output alone, one row per token.",
            then="the weights are a step on the way; they are not returned.",
        ),
        Slip(
            when=_shape_is("T"),
            says="your answer has the shape of the weights, (T, T): the output is a blend of something else.",
            then="each row of weights says how much of each token to take. How much of what?",
        ),
        Slip(
            when=_shape_is("D"),
            says="each output row has the width of x: the output blends the value vectors, whose width is w_v's.",
            then="which of the three weight matrices makes the vectors that are blended?",
        ),
        Slip(
            when=_shape_is("d_k"),
            says="each output row has the width of the queries and keys: the output blends the value vectors.",
            then="queries and keys decide the weights; which vectors do the weights then mix?",
        ),
        Slip(
            _mask_inverted,
            says="your mask works backwards: the queries look at exactly the keys that the mask forbids them.",
            then="in mask, True means 'may look'. Which entries of the scores must be silenced?",
        ),
        Slip(
            _mask_ignored,
            says="with a mask given, every query still looks at every key: the mask changes nothing.",
            then="a forbidden key must get a weight of exactly 0, however well it matches the query.",
        ),
        Slip(
            _always_causal,
            says="your answer is causal attention whatever mask it is given: use the mask passed in, or none.",
            then="with mask=None every token sees every other; otherwise the mask says which it sees.",
        ),
        Slip(
            _zeroed_after_softmax,
            says="the forbidden keys get weight 0, but the weights left no longer sum to 1 along a row.",
            then="silence the forbidden keys before the weights are normalised, not after.",
        ),
        Slip(
            _scores_times_mask,
            says="the forbidden keys still get some weight: a score of 0 is not 'no weight' after the softmax.",
            then="what score would make a key's weight exactly 0 after exponentiating?",
        ),
        Slip(
            _mask_added,
            says="the mask was added to the scores as 0s and 1s: a forbidden key only loses a little, and still"
            " gets weight.",
            then="a forbidden key must end with a weight of exactly 0: what would its score have to become for that?",
        ),
        Slip(
            _over_queries,
            says="the weights are normalised over the queries, not over the keys: a row of weights should sum to 1.",
            then="each query spreads one unit of attention over the keys it may see. Which axis holds the keys?",
        ),
        Slip(
            _transposed,
            says="query m's scores are the keys' scores against it, transposed: row m should compare query m with"
            " every key.",
            then="write out one entry of the score matrix: whose query, whose key?",
        ),
        Slip(
            _scaled_by(lambda x, d_k: 1.0),
            says="the scores are not scaled: look at the division in the formula.",
            then="the scale is the square root of a width: which width do the scores' dot products run over?",
        ),
        Slip(
            _scaled_by(lambda x, d_k: math.sqrt(x.shape[-1])),
            says="the scores are scaled by the width of x; the formula's width is that of the queries and keys.",
            then="the dot products run over d_k numbers, not over D.",
        ),
        Slip(
            _scaled_by(lambda x, d_k: d_k),
            says="the scores are divided by d_k itself: look at the formula's scale again.",
            then="the spread of a dot product of d_k random terms grows like the square root of d_k.",
        ),
        Slip(
            when=_not_finite,
            says="your output has NaN or infinite values: with large scores, the exponentials overflow.",
            then="the softmax gives the same weights if a constant is subtracted from a whole row of scores.",
        ),
    ],
    otherwise=Slip(
        says="compare your output with the formula step by step on a small input: the scores, the weights, the blend.",
        then="check one row of weights by hand: does it sum to 1, and is it 0 where the mask forbids?",
    ),
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [SINGLE_HEAD_ATTENTION]

check_single_head_attention = SINGLE_HEAD_ATTENTION.checker_function()
