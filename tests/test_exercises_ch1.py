"""Chapter 1's exercise: the reference passes, typical slips are named, and hints grow in two stages."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.attention import causal_mask, single_head_attention
from transformerland.exercises.ch1 import SINGLE_HEAD_ATTENTION, check_single_head_attention


def attention(x, w_q, w_k, w_v, mask=None, *, mistake=None):
    """A student's head, with one typical mistake switched on."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = k @ q.T if mistake == "transposed" else q @ k.T
    scale = {"unscaled": 1.0, "by width": math.sqrt(x.shape[-1]), "by d_k": k.shape[-1]}
    scores = scores / scale.get(mistake, math.sqrt(k.shape[-1]))
    if mistake == "causal":
        mask = causal_mask(len(x))
    if mask is not None and mistake != "mask ignored":
        if mistake == "mask inverted":
            scores = scores.masked_fill(mask, float("-inf"))
        elif mistake == "scores times mask":
            scores = scores * mask
        elif mistake == "mask added":
            scores = scores + mask
        elif mistake != "zeroed after softmax":
            scores = scores.masked_fill(~mask, -1e9)  # a large negative number works as well as -inf
    if mistake == "naive exp":
        e = torch.exp(scores)
        weights = e / e.sum(dim=-1, keepdim=True)
    else:
        weights = torch.softmax(scores, dim=0 if mistake == "over queries" else -1)
    if mistake == "zeroed after softmax" and mask is not None:
        weights = weights * mask
    if mistake == "weights":
        return weights
    if mistake == "values are x":
        return weights @ x
    out = weights @ v
    return (out, weights) if mistake == "tuple" else out


def with_mistake(mistake):
    def my_attention(x, w_q, w_k, w_v, mask=None):
        return attention(x, w_q, w_k, w_v, mask, mistake=mistake)

    return my_attention


def test_the_reference_and_a_student_s_version_pass(verdict):
    assert check_single_head_attention(with_mistake(None))
    assert verdict().word == "PASSED"


def test_the_library_s_attention_is_refused():
    result = check_single_head_attention(
        lambda x, w_q, w_k, w_v, mask=None: single_head_attention(x, w_q, w_k, w_v, mask)[0]
    )
    assert not result and "library's own answer" in result.message


@pytest.mark.parametrize(
    ("mistake", "says"),
    [
        ("unscaled", "the scores are not scaled"),
        ("over queries", "normalised over the queries"),
        ("by width", "scaled by the width of x"),
        ("by d_k", "divided by d_k itself"),
        ("transposed", "transposed"),
        ("causal", "causal attention whatever mask"),
        ("naive exp", "NaN or infinite values"),
        ("tuple", "it returned a tuple"),
        ("weights", "the shape of the weights"),
        ("values are x", "the width of x"),
        ("mask ignored", "the mask changes nothing"),
        ("mask inverted", "your mask works backwards"),
        ("scores times mask", "still get some weight"),
        ("mask added", "added to the scores as 0s and 1s"),
        ("zeroed after softmax", "no longer sum to 1"),
    ],
)
def test_each_slip_is_named_and_a_second_try_adds_the_stronger_hint(mistake, says):
    first = check_single_head_attention(with_mistake(mistake))
    assert not first and says in first.message + first.hint
    second = check_single_head_attention(with_mistake(mistake))
    assert not second and len(second.hint) > len(first.hint)


def test_a_function_without_the_mask_argument_is_told_where_it_raised():
    result = check_single_head_attention(lambda x, w_q, w_k, w_v: attention(x, w_q, w_k, w_v))
    assert not result and "mask" in result.message and "TypeError" in result.message


def test_an_answer_no_slip_explains_gets_the_general_hint():
    result = check_single_head_attention(lambda x, w_q, w_k, w_v, mask=None: torch.zeros(len(x), w_v.shape[-1]))
    assert not result and "step by step" in result.hint


def test_every_public_call_with_a_mask_lets_each_query_see_itself():
    """A row that may see nothing has no defined weights: the checker never asks for one."""
    for one in SINGLE_HEAD_ATTENTION.public:
        mask = one.kwargs.get("mask")
        assert mask is None or bool(mask.diagonal().all())


def test_the_hidden_calls_mask_and_differ_from_the_public_ones():
    for seed in (1, 2, 3):
        calls = SINGLE_HEAD_ATTENTION.cases(seed)
        assert any("mask" in c.kwargs for c in calls)
        assert SINGLE_HEAD_ATTENTION.grade(SINGLE_HEAD_ATTENTION.answers(with_mistake(None), seed), seed)
        wrong = SINGLE_HEAD_ATTENTION.grade(SINGLE_HEAD_ATTENTION.answers(with_mistake("mask ignored"), seed), seed)
        assert not wrong and "grader's calls" in wrong.message and "tensor (" not in wrong.message
