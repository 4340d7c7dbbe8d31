"""BertEmbeddings takes position_ids as transformers' BertEmbeddings.forward does: same results, clear errors."""

from __future__ import annotations

import os

import pytest
import torch
from transformerland.bert import (
    BertEmbeddingConfig,
    BertEmbeddings,
    SequenceTooLongError,
    encode_pair,
    minilm_model_path,
)

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture
def layer(minilm_embeddings) -> BertEmbeddings:
    return minilm_embeddings


@pytest.fixture(scope="module")
def reference():
    from transformers import BertModel

    return BertModel.from_pretrained(str(minilm_model_path()), local_files_only=True).eval().embeddings


@pytest.fixture(scope="module")
def pair(minilm_tokenizer):
    return encode_pair(minilm_tokenizer, "The apple fell from the tree.", "Pip caught it.")


def test_default_positions_are_arange(layer, pair):
    positions = torch.arange(len(pair))[None]
    with torch.no_grad():
        assert torch.equal(
            layer(pair.input_ids, pair.token_type_ids), layer(pair.input_ids, pair.token_type_ids, positions)
        )


@pytest.mark.parametrize("offset", [0, 7, 400])
def test_shifted_positions_match_transformers(layer, reference, pair, offset):
    positions = torch.arange(len(pair))[None] + offset
    with torch.no_grad():
        ours = layer(pair.input_ids, pair.token_type_ids, positions)
        theirs = reference(input_ids=pair.input_ids, token_type_ids=pair.token_type_ids, position_ids=positions)
    assert (ours - theirs).abs().max() < 1e-6


def test_per_row_positions_of_a_batch_match_transformers(layer, reference, pair):
    ids = pair.input_ids.expand(2, -1)
    positions = torch.stack([torch.arange(len(pair)), torch.arange(len(pair)) + 3])
    with torch.no_grad():
        ours = layer(ids, position_ids=positions)
        assert (ours - reference(input_ids=ids, position_ids=positions)).abs().max() < 1e-6
    assert (ours[0] - ours[1]).abs().max() > 1e-2, "another position must give another vector"
    parts = layer.contributions(ids, position_ids=positions)
    assert torch.equal(parts.position[1, 0], layer.position_embeddings.weight[3])


def test_a_position_past_the_last_row_names_the_limit(layer, pair):
    positions = torch.arange(len(pair))[None] + 500
    with pytest.raises(SequenceTooLongError, match=r"position id 513 .*512 rows \(positions 0 to 511\)"):
        layer(pair.input_ids, position_ids=positions)


def test_bad_position_ids():
    layer = BertEmbeddings(BertEmbeddingConfig(vocab_size=11, hidden_size=6, max_position_embeddings=8))
    ids = torch.tensor([[1, 2, 3]])
    with pytest.raises(TypeError, match="integer positions"):
        layer(ids, position_ids=torch.tensor([[0.0, 1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"shape \(1, 3\) or \(1, 3\)"):
        layer(ids, position_ids=torch.tensor([[0, 1]]))
    with pytest.raises(ValueError, match="2 dimensions"):
        layer(ids, position_ids=torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="count from 0"):
        layer(ids, position_ids=torch.tensor([[-1, 0, 1]]))
    with pytest.raises(SequenceTooLongError, match="8 rows"):
        layer(ids, position_ids=torch.tensor([[6, 7, 8]]))
