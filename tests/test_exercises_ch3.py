"""The chapter 3 checkers: the reference answers pass, typical mistakes fail with the hint that names them."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from transformerland.encodings import LearnedPositionalEmbedding
from transformerland.exercises.ch3 import check_learned_positions, check_position_parameters

# ex-3-1 ---------------------------------------------------------------------------------


class Reference(nn.Module):
    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = max_len
        self.table = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.table.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[1] > self.max_len:
            raise ValueError(f"this table has max_len={self.max_len} rows, got {x.shape[1]} positions")
        return x + self.table.weight[: x.shape[1]]


class ParameterReference(nn.Module):
    """The same layer written with nn.Parameter and an index lookup."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = max_len
        self.rows = nn.Parameter(0.02 * torch.randn(max_len, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[1] > self.max_len:
            raise ValueError(f"at most {self.max_len} positions")
        return x + self.rows[torch.arange(x.shape[1])]


class PlainTensor(Reference):
    """Keeps the table as a plain tensor: nothing would be trained."""

    def __init__(self, max_len: int, d_model: int) -> None:
        nn.Module.__init__(self)
        self.max_len = max_len
        self.rows = 0.02 * torch.randn(max_len, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.rows[: x.shape[1]]


class PositionsOnly(Reference):
    """Returns the position rows and forgets the tokens."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        super().forward(x)
        return self.table.weight[: x.shape[1]].expand_as(x).clone()


class NoSlice(Reference):
    """Adds the whole table, whatever the input's length."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.table.weight


class DefaultInit(Reference):
    """Keeps nn.Embedding's N(0, 1) start."""

    def __init__(self, max_len: int, d_model: int) -> None:
        nn.Module.__init__(self)
        self.max_len = max_len
        self.table = nn.Embedding(max_len, d_model)


class NoLengthCheck(Reference):
    """Lets torch fail on its own when the input is too long."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.table(torch.arange(x.shape[1]))


class VagueError(Reference):
    """Raises a ValueError that does not say what the limit is."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[1] > self.max_len:
            raise ValueError("sequence too long")
        return super().forward(x)


class Stub(nn.Module):
    def __init__(self, max_len: int, d_model: int) -> None:
        raise NotImplementedError


@pytest.mark.parametrize("answer", [Reference, ParameterReference, LearnedPositionalEmbedding])
def test_correct_layers_pass(answer: type[nn.Module], verdict) -> None:
    assert check_learned_positions(answer)
    assert "ex-3-1 · PASSED" in verdict().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (PlainTensor, "nn.Parameter"),
        (PositionsOnly, "return x + table[:T], not the rows alone"),
        (NoSlice, "slice it with table[:T]"),
        (DefaultInit, "std=0.02"),
        (NoLengthCheck, "raise a ValueError that names max_len"),
        (VagueError, "include max_len in the message"),
        (Stub, "replace the stub's body"),
    ],
)
def test_typical_layer_mistakes_fail_with_their_hint(answer: type[nn.Module], hint: str, verdict) -> None:
    result = check_learned_positions(answer)
    assert not result
    out = verdict().out
    assert "ex-3-1 · NOT YET" in out
    assert hint in out


def test_layer_checker_wants_the_class_not_an_instance(verdict) -> None:
    assert not check_learned_positions(Reference(10, 6).table.weight)
    assert "pass the function itself" in verdict().out


# ex-3-2 ---------------------------------------------------------------------------------


def count_reference(scheme: str, max_len: int, d_model: int) -> int:
    return max_len * d_model if scheme == "learned" else 0


def count_by_building(scheme: str, max_len: int, d_model: int) -> int:
    if scheme != "learned":
        return 0
    return sum(p.numel() for p in LearnedPositionalEmbedding(max_len, d_model).parameters())


@pytest.mark.parametrize("answer", [count_reference, count_by_building])
def test_correct_counts_pass(answer, verdict) -> None:
    assert check_position_parameters(answer)
    assert "ex-3-2 · PASSED" in verdict().out


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda scheme, max_len, d_model: max_len + d_model if scheme == "learned" else 0, "multiply, do not add"),
        (lambda scheme, max_len, d_model: (max_len - 1) * d_model if scheme == "learned" else 0, "max_len rows"),
        (lambda scheme, max_len, d_model: max_len * d_model if scheme != "none" else 0, "computed, not trained"),
        (lambda scheme, max_len, d_model: float(max_len * d_model) if scheme == "learned" else 0, "plain Python int"),
        (lambda scheme, max_len, d_model: max_len * d_model if scheme != "sinusoidal" else 0, "nothing to train"),
    ],
    ids=["added", "off-by-one", "sinusoids-counted", "float", "none-counted"],
)
def test_typical_count_mistakes_fail_with_their_hint(answer, hint: str, verdict) -> None:
    assert not check_position_parameters(answer)
    out = verdict().out
    assert "ex-3-2 · NOT YET" in out
    assert hint in out
