"""The BERT embedding layer: parity with transformers' BertModel on the real weights, and clear errors."""

from __future__ import annotations

import json
import os

import pytest
import torch
from transformerland.bert import (
    BERT_BASE,
    BertEmbeddingConfig,
    BertEmbeddings,
    EncodedPair,
    SequenceTooLongError,
    encode_pair,
    load_bert_embeddings,
    minilm_model_path,
)

os.environ["HF_HUB_OFFLINE"] = "1"  # transformers is only the yardstick, read from the local folder

PAIRS = [
    ("The apple fell from the tree.", "It was ripe."),
    ("Where do words stand?", None),
    ("Three streams meet in one basin, and the Leveller evens the water.", "Bertha keeps it."),
    ("Positional encodings tell a transformer the order of its tokens.", "Without them, order is lost!"),
    ("a", "b"),
]

SMALL = BertEmbeddingConfig(vocab_size=11, hidden_size=6, max_position_embeddings=8, type_vocab_size=2)


@pytest.fixture
def layer(minilm_embeddings) -> BertEmbeddings:
    return minilm_embeddings


@pytest.fixture
def tokenizer(minilm_tokenizer):
    return minilm_tokenizer


@pytest.fixture(scope="module")
def reference():
    from transformers import BertModel

    return BertModel.from_pretrained(str(minilm_model_path()), local_files_only=True).eval().embeddings


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_matches_bertmodel_embeddings(layer, tokenizer, reference, first, second):
    pair = encode_pair(tokenizer, first, second)
    with torch.no_grad():
        ours = layer(pair.input_ids, pair.token_type_ids)
        theirs = reference(input_ids=pair.input_ids, token_type_ids=pair.token_type_ids)
    assert ours.shape == theirs.shape == (1, len(pair), 384)
    assert (ours - theirs).abs().max() < 1e-6


def test_matches_bertmodel_on_a_padded_batch(layer, tokenizer, reference):
    pairs = [encode_pair(tokenizer, a, b) for a, b in PAIRS[:3]]
    length = max(len(p) for p in pairs)
    ids = torch.zeros(len(pairs), length, dtype=torch.long)  # 0 is [PAD]
    segments = torch.zeros_like(ids)
    for row, pair in enumerate(pairs):
        ids[row, : len(pair)] = pair.input_ids[0]
        segments[row, : len(pair)] = pair.token_type_ids[0]
    with torch.no_grad():
        assert (layer(ids, segments) - reference(input_ids=ids, token_type_ids=segments)).abs().max() < 1e-6


def test_loaded_layer_has_minilm_sizes_and_is_in_eval_mode(layer):
    config = layer.config
    assert (config.vocab_size, config.hidden_size) == (30522, 384)
    assert (config.max_position_embeddings, config.type_vocab_size) == (512, 2)
    assert config.layer_norm_eps == 1e-12 and layer.layer_norm.eps == 1e-12
    assert layer.dropout.p == 0.1 and not layer.training
    assert sum(p.numel() for p in layer.parameters()) == config.num_parameters == 11_918_592


def test_tokenizer_builds_cls_a_sep_b_sep_without_padding(tokenizer):
    pair = encode_pair(tokenizer, "The apple fell.", "It was ripe.")
    assert isinstance(pair, EncodedPair)
    assert pair.tokens == ["[CLS]", "the", "apple", "fell", ".", "[SEP]", "it", "was", "ripe", ".", "[SEP]"]
    assert pair.token_type_ids.tolist() == [[0] * 6 + [1] * 5]
    assert pair.input_ids[0, 0] == 101 and pair.input_ids[0, -1] == 102
    single = encode_pair(tokenizer, "The apple fell.")
    assert single.tokens[-1] == "[SEP]" and single.token_type_ids.sum() == 0


def test_a_padding_tokenizer_is_refused(tokenizer):
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(minilm_model_path() / "tokenizer.json"))  # pads to 128 as shipped
    with pytest.raises(ValueError, match="no_padding"):
        encode_pair(raw, "The apple fell.")
    with pytest.raises(TypeError, match="string"):
        encode_pair(tokenizer, "fine", 42)


def test_the_wall_at_position_512(layer, tokenizer):
    long = encode_pair(tokenizer, " ".join(["apple"] * 600))
    assert len(long) == 602  # no truncation: the text keeps its own length
    with pytest.raises(SequenceTooLongError, match=r"512 rows .*position 512.*extrapolate.*transformerland\.remedies"):
        layer(long.input_ids)
    fits = long.input_ids[:, :512]
    assert layer(fits).shape == (1, 512, 384)
    assert issubclass(SequenceTooLongError, ValueError)


@pytest.mark.parametrize("bad", [2, -1])
def test_segment_id_outside_the_table(bad):
    layer = BertEmbeddings(SMALL)
    ids = torch.tensor([[1, 2, 3]])
    with pytest.raises(ValueError, match=rf"segment id {bad} is outside the segment table, which has 2 rows"):
        layer(ids, torch.tensor([[0, bad, 0]]))


@pytest.mark.parametrize("bad", [11, -3])
def test_token_id_outside_the_vocabulary(bad):
    with pytest.raises(ValueError, match=r"token ids must lie in 0 … 10 \(the word table has 11 rows\)"):
        BertEmbeddings(SMALL)(torch.tensor([[1, bad]]))


def test_wrong_kinds_and_shapes_of_input():
    layer = BertEmbeddings(SMALL)
    with pytest.raises(TypeError, match="integer token ids"):
        layer(torch.tensor([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="2 dimensions"):
        layer(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="one segment id per token"):
        layer(torch.tensor([[1, 2]]), torch.tensor([[0, 0, 1]]))
    with pytest.raises(TypeError, match="integer segment ids"):
        layer(torch.tensor([[1, 2]]), torch.tensor([[0.0, 1.0]]))
    with pytest.raises(ValueError, match="no tokens"):
        layer(torch.zeros(1, 0, dtype=torch.long))
    with pytest.raises(TypeError, match="BertEmbeddingConfig"):
        BertEmbeddings({"vocab_size": 11})


def test_forward_is_layernorm_of_the_three_contributions_and_dropout_trains():
    torch.manual_seed(0)
    layer = BertEmbeddings(SMALL).eval()
    ids, segments = torch.tensor([[3, 1, 4, 1], [5, 9, 2, 6]]), torch.tensor([[0, 0, 1, 1], [0, 1, 1, 1]])
    parts = layer.contributions(ids, segments)
    assert all(part.shape == (2, 4, 6) for part in parts)
    assert torch.equal(parts.word[1, 2], layer.word_embeddings.weight[2])
    assert torch.equal(parts.segment[0, 2], layer.segment_embeddings.weight[1])
    assert torch.equal(parts.position[0], parts.position[1])
    assert torch.equal(parts.position[0, 3], layer.position_embeddings.weight[3])
    by_hand = torch.nn.functional.layer_norm(
        parts.word + parts.segment + parts.position, (6,), layer.layer_norm.weight, layer.layer_norm.bias, 1e-12
    )
    assert torch.allclose(layer(ids, segments), by_hand)
    assert torch.equal(layer(ids), layer(ids, torch.zeros_like(ids)))  # no segment ids: all sentence A
    layer.train()
    dropped = layer(ids, segments)
    assert (dropped == 0).any() and not torch.allclose(dropped, by_hand)


def test_parameter_budget_of_bert_base():
    assert BERT_BASE.parameter_counts() == {
        "word": 23_440_896,
        "position": 393_216,
        "segment": 1_536,
        "layer_norm": 1_536,
    }
    assert BERT_BASE.num_parameters == 30522 * 768 + 512 * 768 + 2 * 768 + 2 * 768
    assert sum(p.numel() for p in BertEmbeddings(SMALL).parameters()) == SMALL.num_parameters


def test_config_rejects_bad_values(tmp_path):
    with pytest.raises(ValueError, match="hidden_size"):
        BertEmbeddingConfig(vocab_size=10, hidden_size=0)
    with pytest.raises(ValueError, match="hidden_dropout_prob"):
        BertEmbeddingConfig(vocab_size=10, hidden_size=4, hidden_dropout_prob=1.0)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"vocab_size": 10, "hidden_size": 4, "position_embedding_type": "relative_key"}))
    with pytest.raises(ValueError, match="absolute"):
        BertEmbeddingConfig.from_json(path)


def _write_checkpoint(folder, prefix: str, layer: BertEmbeddings) -> None:
    from safetensors.torch import save_file

    names = {
        "word_embeddings.weight": "embeddings.word_embeddings.weight",
        "segment_embeddings.weight": "embeddings.token_type_embeddings.weight",
        "position_embeddings.weight": "embeddings.position_embeddings.weight",
        "layer_norm.weight": "embeddings.LayerNorm.weight",
        "layer_norm.bias": "embeddings.LayerNorm.bias",
    }
    tensors = {prefix + names[k]: v.detach().clone() for k, v in layer.state_dict().items()}
    tensors[prefix + "encoder.layer.0.output.dense.weight"] = torch.zeros(2, 2)  # other weights are ignored
    save_file(tensors, str(folder / "model.safetensors"))
    config = {
        "vocab_size": 11,
        "hidden_size": 6,
        "max_position_embeddings": 8,
        "type_vocab_size": 2,
        "num_hidden_layers": 1,
    }
    (folder / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize("prefix", ["", "bert."])
def test_loader_reads_checkpoints_with_or_without_a_prefix(tmp_path, prefix):
    torch.manual_seed(1)
    original = BertEmbeddings(SMALL)
    _write_checkpoint(tmp_path, prefix, original)
    loaded = load_bert_embeddings(tmp_path)
    assert loaded.config == SMALL and not loaded.training
    for name, tensor in original.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], tensor), name


def test_loader_explains_missing_or_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json"):
        load_bert_embeddings(tmp_path)
    from safetensors.torch import save_file

    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 11, "hidden_size": 6}))
    save_file({"transformer.wte.weight": torch.zeros(2, 2)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match="is it a BERT checkpoint"):
        load_bert_embeddings(tmp_path)


def test_the_loaders_live_apart_from_the_layer_and_are_reexported():
    from transformerland import bert, bert_weights

    for name in bert_weights.__all__:
        assert getattr(bert, name) is getattr(bert_weights, name), name
        assert name in bert.__all__, name
