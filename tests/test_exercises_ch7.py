"""The chapter 7 checkers: the references pass, the usual mistakes fail with the hint that names them."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.exercises import VERDICT_PATTERN
from transformerland.exercises.ch7 import check_gguf_unpermute, check_position_ids, check_turning_pairs


def verdict(capsys) -> tuple[str, str]:
    """The verdict word and the whole printed text of the last check."""
    out = capsys.readouterr().out
    match = VERDICT_PATTERN.search(out)
    assert match, out
    return match["verdict"], out


# ex-7-1: position ids from a padding mask ---------------------------------------------------------------


def reference_positions(mask):
    return (mask.cumsum(dim=1) - 1).clamp(min=0)


def transformers_style_positions(mask):
    return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)


@pytest.mark.parametrize("fn", [reference_positions, transformers_style_positions])
def test_position_ids_references_pass(capsys, fn):
    assert check_position_ids(fn)
    word, out = verdict(capsys)
    assert word == "PASSED" and "ex-7-1" in out


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda mask: torch.arange(mask.shape[1]).expand_as(mask), "padding was counted"),
        (lambda mask: mask.cumsum(dim=1), "count from 1"),
        (
            lambda mask: torch.arange(mask.shape[1]) - (mask == 0).sum(dim=1, keepdim=True),
            "all the padding comes first",
        ),
        (lambda mask: mask.cumsum(dim=1) - 1, "not -1"),
        (lambda mask: mask.cumsum(dim=1)[:, 1:], "same shape as the mask"),
        (lambda mask: mask.cumsum_(dim=1).sub_(1).clamp_(min=0), "changed the mask"),
        (lambda mask: mask.cumsum(dim=1) - 1.5, "whole numbers"),
    ],
)
def test_position_ids_mistakes_fail_with_their_hint(capsys, wrong, hint):
    assert not check_position_ids(wrong)
    word, out = verdict(capsys)
    assert word == "NOT YET" and hint in out, out


def test_position_ids_stub_and_crash(capsys):
    def stub(mask):
        raise NotImplementedError

    assert not check_position_ids(stub)
    assert "not written yet" in verdict(capsys)[1]
    assert not check_position_ids(lambda mask: mask.nope())
    assert "AttributeError" in verdict(capsys)[1]


# ex-7-2: the GGUF row order undone ------------------------------------------------------------------------


def reference_unpermute(weight, n_heads):
    rows, columns = weight.shape
    head_dim = rows // n_heads
    return weight.reshape(n_heads, head_dim // 2, 2, columns).transpose(1, 2).reshape(rows, columns)


def test_gguf_unpermute_reference_passes(capsys):
    assert check_gguf_unpermute(reference_unpermute)
    assert verdict(capsys)[0] == "PASSED"


def llama_cpp_permute(weight, n_heads):
    rows, columns = weight.shape
    return weight.reshape(n_heads, 2, rows // n_heads // 2, columns).transpose(1, 2).reshape(rows, columns)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (llama_cpp_permute, "instead of undoing it"),
        (lambda weight, n_heads: reference_unpermute(weight, 1), "treated as one head"),
        (lambda weight, n_heads: weight.clone(), "still in the file's order"),
        (lambda weight, n_heads: reference_unpermute(weight, n_heads)[:, :1], "same shape"),
        (lambda weight, n_heads: weight.copy_(reference_unpermute(weight.clone(), n_heads)), "changed the weight"),
        (lambda weight, n_heads: "rows", "return the reordered weight as a torch.Tensor"),
    ],
)
def test_gguf_unpermute_mistakes_fail_with_their_hint(capsys, wrong, hint):
    assert not check_gguf_unpermute(wrong)
    word, out = verdict(capsys)
    assert word == "NOT YET" and hint in out, out


# ex-7-3: pairs that complete a turn -----------------------------------------------------------------------


def reference_turning_pairs(head_dim, base, context):
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return torch.nonzero((context - 1) * theta >= 2 * math.pi).flatten()


def test_turning_pairs_reference_passes(capsys):
    assert check_turning_pairs(reference_turning_pairs)
    assert verdict(capsys)[0] == "PASSED"
    assert check_turning_pairs(lambda *args: reference_turning_pairs(*args).tolist()[::-1])
    assert verdict(capsys)[0] == "PASSED", "a list in any order is fine"


def flags(head_dim, base, context):
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return ((context - 1) * theta >= 2 * math.pi).long()


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda d, base, L: reference_turning_pairs(d, base, L + 1), "L − 1, not L"),
        (
            lambda d, base, L: torch.nonzero((L - 1) * base ** (-torch.arange(0, d, 2) / d) >= 1).flatten(),
            "2π radians, not 1",
        ),
        (
            lambda d, base, L: torch.nonzero((L - 1) * base ** (-torch.arange(d // 2) / d) >= 2 * math.pi).flatten(),
            "factor 2",
        ),
        (
            lambda d, base, L: torch.nonzero((L - 1) * base ** (-torch.arange(0, d, 2) / d) < 2 * math.pi).flatten(),
            "never complete a turn",
        ),
        (flags, "yes/no flag"),
    ],
)
def test_turning_pairs_mistakes_fail_with_their_hint(capsys, wrong, hint):
    assert not check_turning_pairs(wrong)
    word, out = verdict(capsys)
    assert word == "NOT YET" and hint in out, out
