"""transformerland.analysis: similarities, offsets, the linear probe and PCA."""

import math

import pytest
import torch
from transformerland.analysis import cosine_similarity_matrix, linear_position_probe, pca, similarity_by_offset
from transformerland.encodings import sinusoidal_encoding


def test_cosine_similarity_matrix_is_symmetric_with_unit_diagonal():
    sim = cosine_similarity_matrix(torch.randn(10, 6, generator=torch.Generator().manual_seed(0)))
    assert sim.shape == (10, 10)
    torch.testing.assert_close(sim, sim.T)
    torch.testing.assert_close(sim.diagonal(), torch.ones(10))


def test_similarity_by_offset_averages_each_diagonal():
    sim = torch.arange(16.0).reshape(4, 4)
    torch.testing.assert_close(similarity_by_offset(sim), torch.tensor([7.5, 6.0, 4.5, 3.0]))
    assert similarity_by_offset(sim, max_offset=1).shape == (2,)


def test_probe_recovers_positions_from_a_structured_table_but_not_from_noise():
    table = sinusoidal_encoding(64, 32)
    noise = torch.randn(64, 32, generator=torch.Generator().manual_seed(0))
    assert linear_position_probe(table) < 2.0
    assert linear_position_probe(noise) > 8.0  # chance, guessing the middle, is 64 / 4 = 16


def test_probe_does_not_depend_on_the_scale_of_the_table():
    table = sinusoidal_encoding(64, 32) + 0.3 * torch.randn(64, 32, generator=torch.Generator().manual_seed(1))
    assert abs(linear_position_probe(table) - linear_position_probe(table * 64)) < 1e-6  # a power of two: exact


def test_pca_explains_a_line_with_one_component():
    line = torch.linspace(0, 1, 20)[:, None] * torch.tensor([[1.0, 2.0, 3.0]])
    coordinates, ratio = pca(line, k=2)
    assert coordinates.shape == (20, 2)
    assert math.isclose(float(ratio[0]), 1.0, abs_tol=1e-6)


@pytest.mark.parametrize("bad", [torch.zeros(3), torch.zeros(2, 2, 2)])
def test_tables_must_be_two_dimensional(bad):
    with pytest.raises(ValueError, match="2 dimensions"):
        cosine_similarity_matrix(bad)


def test_probe_rejects_a_constant_table():
    with pytest.raises(ValueError, match="constant"):
        linear_position_probe(torch.ones(10, 3))


def test_probe_rejects_impossible_folds():
    with pytest.raises(ValueError, match="folds"):
        linear_position_probe(torch.zeros(4, 3), folds=5)
