"""Tests for the sinusoidal encoding: agreement with NumPy, its properties, and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformerland.encodings import (
    LAYOUTS,
    SinusoidalPositionalEncoding,
    layout_permutation,
    shift_rotation,
    sinusoid_frequencies,
    sinusoidal_encoding,
    tensor2tensor_encoding,
    tensor2tensor_frequencies,
)

FAST = settings(max_examples=25, deadline=None)
even_widths = st.integers(min_value=1, max_value=64).map(lambda half: 2 * half)


def numpy_table(num_positions: int, d_model: int, base: float, layout: str) -> np.ndarray:
    """The formula of Vaswani et al., written independently with NumPy loops."""
    table = np.zeros((num_positions, d_model))
    for pos in range(num_positions):
        for i in range(d_model // 2):
            angle = pos / base ** (2 * i / d_model)
            if layout == "interleaved":
                table[pos, 2 * i], table[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)
            else:
                table[pos, i], table[pos, d_model // 2 + i] = math.sin(angle), math.cos(angle)
    return table


# --- agreement with an independent computation ---------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("num_positions", "d_model", "base"), [(1, 2, 10000.0), (10, 4, 10000.0), (50, 6, 100.0)])
def test_matches_numpy_small(num_positions: int, d_model: int, base: float, layout: str) -> None:
    got = sinusoidal_encoding(num_positions, d_model, base, layout)
    assert got.dtype == torch.float32 and got.shape == (num_positions, d_model)
    np.testing.assert_allclose(got.numpy(), numpy_table(num_positions, d_model, base, layout), atol=1e-6)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("num_positions", "d_model"), [(128, 64), (20, 512)])
def test_matches_numpy_large(num_positions: int, d_model: int, layout: str) -> None:
    got = sinusoidal_encoding(num_positions, d_model, layout=layout)
    np.testing.assert_allclose(got.numpy(), numpy_table(num_positions, d_model, 10000.0, layout), atol=1e-6)


def test_first_row_and_fastest_pair() -> None:
    table = sinusoidal_encoding(5, 8)
    assert torch.equal(table[0], torch.tensor([0.0, 1.0] * 4))
    positions = torch.arange(5, dtype=torch.float32)
    torch.testing.assert_close(table[:, 0], positions.sin())
    torch.testing.assert_close(table[:, 1], positions.cos())


# --- wavelengths ------------------------------------------------------------------------------


def test_wavelengths_geometric_from_two_pi_towards_base_times_two_pi() -> None:
    d_model = 64
    wavelengths = 2 * math.pi / sinusoid_frequencies(d_model)
    assert wavelengths[0].item() == pytest.approx(2 * math.pi)
    assert wavelengths[-1].item() == pytest.approx(2 * math.pi * 10000 ** ((d_model - 2) / d_model))
    assert wavelengths[-1].item() < 2 * math.pi * 10000
    ratios = wavelengths[1:] / wavelengths[:-1]
    torch.testing.assert_close(ratios, torch.full_like(ratios, 10000 ** (2 / d_model)))


# --- properties ---------------------------------------------------------------------------------


def test_positions_distinct() -> None:
    table = sinusoidal_encoding(1000, 64).double()
    distances = torch.cdist(table, table) + torch.eye(1000, dtype=torch.float64) * 1e9
    assert distances.min().item() > 1.0  # neighbours are the closest pair, about 1.47 apart


@FAST
@given(d_model=even_widths, p=st.integers(0, 1000), q=st.integers(0, 1000), k=st.integers(0, 200))
def test_dot_product_depends_only_on_offset(d_model: int, p: int, q: int, k: int) -> None:
    table = sinusoidal_encoding(max(p, q) + k + 1, d_model).double()
    assert (table[p] @ table[p + k]).item() == pytest.approx((table[q] @ table[q + k]).item(), abs=1e-4)
    expected = torch.cos(k * sinusoid_frequencies(d_model)).sum().item()
    assert (table[p] @ table[p + k]).item() == pytest.approx(expected, abs=1e-4)


@FAST
@given(d_model=even_widths, p=st.integers(0, 1000), k=st.integers(-200, 200), layout=st.sampled_from(LAYOUTS))
def test_shift_is_a_rotation(d_model: int, p: int, k: int, layout: str) -> None:
    p = max(p, -k)
    table = sinusoidal_encoding(p + max(k, 0) + 1, d_model, layout=layout).double()
    rotation = shift_rotation(k, d_model, layout=layout)
    torch.testing.assert_close(rotation @ table[p], table[p + k], atol=1e-5, rtol=0)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_rotation_is_orthogonal_and_composes(layout: str) -> None:
    r3, r5 = shift_rotation(3, 16, layout=layout), shift_rotation(5, 16, layout=layout)
    eye = torch.eye(16, dtype=torch.float64)
    torch.testing.assert_close(r3 @ r3.T, eye)
    torch.testing.assert_close(r3 @ r5, shift_rotation(8, 16, layout=layout))
    torch.testing.assert_close(shift_rotation(-3, 16, layout=layout), r3.T)
    torch.testing.assert_close(shift_rotation(0, 16, layout=layout), eye)


def test_rotation_is_block_diagonal_in_interleaved_layout() -> None:
    rotation = shift_rotation(2.5, 8, base=100.0)
    mask = torch.block_diag(*[torch.ones(2, 2)] * 4).bool()
    assert rotation[~mask].abs().max().item() == 0.0
    angle = 2.5 * sinusoid_frequencies(8, 100.0)[1].item()
    expected = torch.tensor([[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])
    torch.testing.assert_close(rotation[2:4, 2:4], expected.double())


@pytest.mark.parametrize("d_model", [2, 8, 64])
def test_layouts_are_a_column_permutation(d_model: int) -> None:
    interleaved = sinusoidal_encoding(100, d_model)
    concatenated = sinusoidal_encoding(100, d_model, layout="concatenated")
    order = layout_permutation(d_model)
    assert torch.equal(interleaved[:, order], concatenated)
    assert torch.equal(concatenated[:, torch.argsort(order)], interleaved)
    torch.testing.assert_close(interleaved @ interleaved.T, concatenated @ concatenated.T)
    assert layout_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]


def test_tensor2tensor_spacing() -> None:
    omega = tensor2tensor_frequencies(64)
    assert omega[0].item() == 1.0
    assert omega[-1].item() == pytest.approx(1e-4)
    ratios = omega[1:] / omega[:-1]
    torch.testing.assert_close(ratios, torch.full_like(ratios, 1e-4 ** (1 / 31)))
    assert tensor2tensor_frequencies(2).tolist() == [1.0]
    table = tensor2tensor_encoding(10, 6)
    assert table.shape == (10, 6) and table.dtype == torch.float32
    np.testing.assert_allclose(table[3, 1].item(), math.sin(3 * 10000**-0.5), atol=1e-6)


def test_tensor2tensor_is_not_a_permutation_of_the_paper() -> None:
    paper = sinusoidal_encoding(64, 64, layout="concatenated").double()
    t2t = tensor2tensor_encoding(64, 64).double()
    # However the columns are reordered, each t2t column needs some paper column; the best it can get:
    column_gaps = (t2t.T[:, None, :] - paper.T[None, :, :]).abs().amax(-1)  # (64, 64) max-norm distances
    lower_bound = column_gaps.amin(1).max().item()
    assert 0.6 < lower_bound < 0.8  # about 0.69, and the identity order attains it
    assert (t2t - paper).abs().max().item() == pytest.approx(lower_bound, abs=1e-6)
    # With one pair the two spacings coincide.
    assert torch.equal(tensor2tensor_encoding(10, 2), sinusoidal_encoding(10, 2, layout="concatenated"))


# --- the module -------------------------------------------------------------------------------------


def test_module_has_no_parameters_and_adds_the_table() -> None:
    module = SinusoidalPositionalEncoding(16, layout="concatenated")
    assert sum(p.numel() for p in module.parameters()) == 0
    assert module.state_dict() == {}  # the kept table is not saved with the weights
    x = torch.randn(3, 20, 16)
    torch.testing.assert_close(module(x), x + sinusoidal_encoding(20, 16, layout="concatenated"))
    torch.testing.assert_close(module(x[:, :7]), x[:, :7] + sinusoidal_encoding(7, 16, layout="concatenated"))
    assert module.state_dict() == {}


def test_module_handles_long_sequences_and_dtype() -> None:
    module = SinusoidalPositionalEncoding(8)
    out = module(torch.zeros(1, 20000, 8, dtype=torch.float64))
    assert out.dtype == torch.float64
    angle = 19999 * 10000 ** (-2 / 8)
    assert out[0, 19999, 2].item() == pytest.approx(math.sin(angle), abs=1e-6)


# --- errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"num_positions": 10, "d_model": 7}, ValueError, r"d_model must be even, got 7.*Use 6 or 8"),
        ({"num_positions": 0, "d_model": 8}, ValueError, "num_positions must be a positive integer, got 0"),
        ({"num_positions": -3, "d_model": 8}, ValueError, "num_positions must be a positive integer"),
        ({"num_positions": 10, "d_model": 0}, ValueError, "d_model must be a positive integer, got 0"),
        ({"num_positions": 10.5, "d_model": 8}, TypeError, "num_positions must be a positive integer"),
        ({"num_positions": 10, "d_model": 8, "base": 0.0}, ValueError, "base must be a positive number"),
        ({"num_positions": 10, "d_model": 8, "layout": "sincos"}, ValueError, "layout must be one of"),
    ],
)
def test_encoding_errors(kwargs: dict, error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        sinusoidal_encoding(**kwargs)


def test_module_errors() -> None:
    with pytest.raises(ValueError, match="d_model must be even"):
        SinusoidalPositionalEncoding(9)
    with pytest.raises(ValueError, match="d_model must be a positive integer"):
        SinusoidalPositionalEncoding(-4)
    with pytest.raises(ValueError, match="layout must be one of 'interleaved', 'concatenated'"):
        SinusoidalPositionalEncoding(8, layout="paper")
    module = SinusoidalPositionalEncoding(8)
    with pytest.raises(ValueError, match="width 6 but this encoding was built for d_model=8"):
        module(torch.zeros(2, 5, 6))
    with pytest.raises(ValueError, match="must have 3 dimensions"):
        module(torch.zeros(5, 8))
    with pytest.raises(TypeError, match=r"must be a torch\.Tensor"):
        module([[0.0] * 8])


def test_helper_errors() -> None:
    with pytest.raises(TypeError, match="k must be a number of positions"):
        shift_rotation("3", 8)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="k must be a number of positions"):
        shift_rotation(True, 8)
    with pytest.raises(ValueError, match="d_model must be even"):
        shift_rotation(1, 7)
    with pytest.raises(ValueError, match="layout must be one of"):
        shift_rotation(1, 8, layout="rotate_half")
    with pytest.raises(ValueError, match="d_model must be even"):
        layout_permutation(5)
    with pytest.raises(ValueError, match="d_model must be even"):
        tensor2tensor_encoding(4, 3)
    with pytest.raises(ValueError, match="base must be a positive number"):
        tensor2tensor_frequencies(8, base=-1.0)
