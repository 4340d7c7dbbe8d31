"""LearnedPositionalEmbedding: a trainable table with a hard maximum length and a clear error past it."""

from __future__ import annotations

import pytest
import torch
from transformerland.encodings import LearnedPositionalEmbedding, SequenceTooLongError, check_fits


def test_table_shape_parameters_and_small_start() -> None:
    torch.manual_seed(0)
    layer = LearnedPositionalEmbedding(512, 768)
    assert layer.weight.shape == (512, 768)
    assert sum(p.numel() for p in layer.parameters()) == 393_216  # BERT-base
    assert all(p.requires_grad for p in layer.parameters())
    assert abs(float(layer.weight.detach().std()) - 0.02) < 0.001


def test_init_std_none_keeps_the_standard_normal_start() -> None:
    torch.manual_seed(0)
    layer = LearnedPositionalEmbedding(256, 64, init_std=None)
    assert abs(float(layer.weight.detach().std()) - 1.0) < 0.05


def test_forward_adds_row_p_at_position_p() -> None:
    layer = LearnedPositionalEmbedding(10, 6)
    x = torch.randn(3, 7, 6)
    out = layer(x)
    assert out.shape == x.shape
    torch.testing.assert_close(out - x, layer.weight[:7].expand(3, 7, 6))


def test_every_row_is_usable() -> None:
    layer = LearnedPositionalEmbedding(10, 6)
    torch.testing.assert_close(layer(torch.zeros(1, 10, 6))[0], layer.weight)


def test_only_the_rows_used_receive_gradient() -> None:
    layer = LearnedPositionalEmbedding(10, 6)
    layer(torch.randn(2, 4, 6)).pow(2).sum().backward()
    grad = layer.weight.grad
    assert grad is not None
    assert (grad[:4].abs().sum(dim=1) > 0).all()
    assert (grad[4:] == 0).all()


@pytest.mark.parametrize("length", [11, 30])
def test_too_long_raises_a_clear_error(length: int) -> None:
    layer = LearnedPositionalEmbedding(10, 6)
    with pytest.raises(SequenceTooLongError) as error:
        layer(torch.zeros(1, length, 6))
    message = str(error.value)
    assert "10 rows" in message and f"{length} positions" in message
    assert "transformerland.remedies" in message  # what to do, without naming a chapter
    assert isinstance(error.value, ValueError)  # callers catching ValueError keep working


def test_check_fits_accepts_the_limit_and_names_the_table() -> None:
    check_fits(8, 8)
    with pytest.raises(SequenceTooLongError, match="My ledger has 8 rows"):
        check_fits(9, 8, what="My ledger")


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        ((0, 4), {}, ValueError, "max_len"),
        (("8", 4), {}, TypeError, "max_len"),
        ((8, -1), {}, ValueError, "d_model"),
        ((8, 4.0), {}, TypeError, "d_model"),
        ((8, 4), {"init_std": 0.0}, ValueError, "init_std"),
        ((8, 4), {"init_std": "small"}, TypeError, "init_std"),
    ],
)
def test_bad_construction_is_named(args: tuple, kwargs: dict, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        LearnedPositionalEmbedding(*args, **kwargs)


def test_bad_input_is_named() -> None:
    layer = LearnedPositionalEmbedding(10, 6)
    with pytest.raises(ValueError, match="3 dimensions"):
        layer(torch.zeros(4, 6))
    with pytest.raises(ValueError, match="d_model=6"):
        layer(torch.zeros(1, 4, 5))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        layer([[0.0] * 6])


def test_with_table_gives_a_new_layer_with_those_rows() -> None:
    layer = LearnedPositionalEmbedding(4, 3)
    before = layer.weight.detach().clone()
    torch.manual_seed(5)
    expected_draw = torch.rand(1)
    torch.manual_seed(5)
    longer = layer.with_table(torch.arange(18.0).reshape(6, 3))
    assert torch.equal(torch.rand(1), expected_draw)  # no random start: the rows are given
    assert longer.max_len == 6 and torch.equal(longer.weight, torch.arange(18.0).reshape(6, 3))
    assert longer.weight.requires_grad and longer(torch.zeros(1, 6, 3)).shape == (1, 6, 3)
    assert layer.max_len == 4 and torch.equal(layer.weight, before)
    with pytest.raises(ValueError, match="rows of width 2, but the position table it replaces has rows of width 3"):
        layer.with_table(torch.zeros(6, 2))
    with pytest.raises(ValueError, match="2 dimensions"):
        layer.with_table(torch.zeros(6))
