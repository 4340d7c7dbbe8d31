"""The chapter 1 checker: the reference passes, the usual mistakes fail with the hint that names them."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.exercises import VERDICT_PATTERN
from transformerland.exercises.ch1 import check_single_head_attention


def reference(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1) @ v


def unscaled(x, w_q, w_k, w_v):
    return torch.softmax((x @ w_q) @ (x @ w_k).T, dim=-1) @ (x @ w_v)


def softmax_over_queries(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=0) @ v


def scaled_by_model_width(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / math.sqrt(x.shape[-1]), dim=-1) @ v


def transposed_scores(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(k @ q.T / math.sqrt(k.shape[-1]), dim=-1) @ v


def naive_exp(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    e = torch.exp(q @ k.T / math.sqrt(k.shape[-1]))
    return e / e.sum(dim=-1, keepdim=True) @ v


def causal(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / math.sqrt(k.shape[-1])
    blocked = torch.ones(len(x), len(x), dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1) @ v


def returns_weights_too(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)
    return weights @ v, weights


def returns_weights(x, w_q, w_k, w_v):
    q, k = x @ w_q, x @ w_k
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)


def values_are_inputs(x, w_q, w_k, w_v):
    q, k = x @ w_q, x @ w_k
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1) @ x


def stub(x, w_q, w_k, w_v):
    raise NotImplementedError


def test_reference_passes(capsys):
    result = check_single_head_attention(reference)
    assert result
    line = capsys.readouterr().out
    match = VERDICT_PATTERN.search(line)
    assert match and match["exercise"] == "ex-1-2" and match["verdict"] == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "hint_words"),
    [
        (unscaled, "not scaled"),
        (softmax_over_queries, "dim=-1, not dim=0"),
        (scaled_by_model_width, "not by √D"),
        (transposed_scores, "Q @ K.T, not K @ Q.T"),
        (naive_exp, "subtract each row's maximum"),
        (causal, "causal attention"),
        (returns_weights_too, "not the attention weights as well"),
        (returns_weights, "multiply it by the values"),
        (values_are_inputs, "width of x"),
        (stub, "replace the stub's body"),
    ],
)
def test_typical_mistakes_fail_with_their_hint(wrong, hint_words, capsys):
    result = check_single_head_attention(wrong)
    assert not result
    out = capsys.readouterr().out
    match = VERDICT_PATTERN.search(out)
    assert match and match["verdict"] == "NOT YET"
    assert hint_words in result.hint
    assert "Hint:" in out


def test_a_function_that_depends_on_order_fails_the_equivariance_case():
    def adds_positions(x, w_q, w_k, w_v):
        # Right on the checker's first cases, but adds a position signal to seven-token inputs.
        out = reference(x, w_q, w_k, w_v)
        if len(x) == 7:
            out = out + torch.arange(len(x), dtype=x.dtype)[:, None]
        return out

    result = check_single_head_attention(adds_positions)
    assert not result and "look at token positions" in result.hint


def test_passing_the_result_instead_of_the_function_is_explained(capsys):
    result = check_single_head_attention(torch.zeros(5, 3))
    assert not result and "without calling it" in result.hint
