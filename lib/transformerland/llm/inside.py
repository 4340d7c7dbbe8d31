"""Looking inside a Llama-style model: its queries and keys, their rotary pairs, and its attention.

What chapters 7 and 8 measure on SmolLM2:

* the queries and keys each layer computes before RoPE (:func:`record_queries_keys`), the
  attention weights recomputed from them (:func:`rotary_attention_weights`), the length of
  each rotary pair (:func:`rotary_pair_norms`) and how often each pair turns
  (:func:`rotary_turns`);
* the weight every head puts on the first token (:func:`first_token_attention`);
* the model's loss on a text (:func:`next_token_loss`, on :data:`SAMPLE_TEXT`);
* the model run with some weights swapped (:func:`replaced_parameters`), for instance the query
  and key rows as the file stores them (:func:`raw_query_key_weights`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .._validation import (
    model_vocab_size,
    require_even,
    require_float_tensor,
    require_ids_below,
    require_index_tensor,
    require_int,
    require_min_dims,
    require_positive_float,
    require_positive_int,
    require_same,
    require_tensor,
)
from ..encodings.rotary import apply_rotary_half
from ..encodings.sinusoidal import sinusoid_frequencies
from .gguf_file import GGUFFile

__all__ = [
    "SAMPLE_TEXT",
    "QueryKeyRecord",
    "first_token_attention",
    "next_token_loss",
    "raw_query_key_weights",
    "record_queries_keys",
    "replaced_parameters",
    "rotary_attention_weights",
    "rotary_pair_norms",
    "rotary_turns",
]


def _require_llama(model: object) -> None:
    """A transformers Llama-family model: ``model.config`` and ``model.model.layers[i].self_attn``."""
    layers = getattr(getattr(model, "model", None), "layers", None)
    if not isinstance(model, nn.Module) or not hasattr(model, "config") or layers is None:
        raise TypeError(
            f"model must be a transformers Llama-family model (llm.load_smollm2()), got {type(model).__name__}."
        )


def rotary_turns(max_offset: float, head_dim: int, base: float) -> torch.Tensor:
    """How many full turns each rotary pair makes over ``max_offset`` positions, shape ``(head_dim/2,)``, float64.

    Pair ``i`` turns by ``θ_i = base^(-2i/d)`` radians per position, so over ``Δ`` positions it
    makes ``Δ · θ_i / 2π`` turns; a pair with fewer than one never comes back to where it started
    within an input of ``Δ + 1`` tokens. Its wavelength is ``2π / θ_i`` positions.
    """
    max_offset = require_positive_float(max_offset, "max_offset")
    head_dim = require_even(require_positive_int(head_dim, "head_dim"), "head_dim", "RoPE rotates pairs.")
    base = require_positive_float(base, "base")
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
        if layer is not None:
            layer = require_int(layer, "layer", low=-len(outputs), high=len(outputs) - 1)
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
    _require_llama(model)
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

    ``queries`` and ``keys`` must be floating, of one dtype and on one device.

    Returns:
        ``(B, n_heads, T, T)``: row ``i`` holds query ``i``'s weights on keys ``0 … T-1`` (zero after ``i``).
    """
    require_float_tensor(queries, "queries", ndim=4)
    require_float_tensor(keys, "keys", ndim=4)
    require_same([("queries", queries), ("keys", keys)])
    if (
        keys.shape[0] != queries.shape[0]
        or keys.shape[2:] != queries.shape[2:]
        or keys.shape[1] == 0
        or queries.shape[1] % keys.shape[1]
    ):
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
    require_min_dims(require_float_tensor(x, "x"), "x", 1, "its features")
    if x.shape[-1] % 2:
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
        if not attentions or not all(isinstance(a, torch.Tensor) for a in attentions):
            raise TypeError("attentions must be a tensor or a non-empty tuple of tensors (output.attentions).")
        attentions = torch.stack(list(attentions))
    require_float_tensor(attentions, "attentions", ndim=5)
    length = attentions.shape[-1]
    skip = require_int(skip, "skip", low=0)
    if not skip < length:
        raise ValueError(f"skip must lie in 0 … {length - 1} (the input has {length} tokens), got {skip}.")
    return attentions[..., skip:, 0].mean(dim=(1, 3))


def next_token_loss(model: nn.Module, input_ids: torch.Tensor, **kwargs: Any) -> float:
    """Mean cross-entropy (nats) of the model's prediction of each token from the ones before it.

    Args:
        model: a causal language model returning ``.logits`` ``(B, T, vocab)`` (a transformers model)
            or the logits themselves (a :class:`~transformerland.model.TinyTransformer`).
        input_ids: ``(B, T)`` integer ids with ``T ≥ 2``.
        kwargs: passed to the model (``attention_mask``, ``position_ids``, …).
    """
    if not callable(model):
        raise TypeError(f"model must be a causal language model, got {type(model).__name__}.")
    require_index_tensor(input_ids, "input_ids", ndim=2)
    if input_ids.shape[1] < 2:
        raise ValueError("input_ids needs at least 2 tokens: the loss predicts each token from the ones before.")
    require_ids_below(input_ids, "input_ids", model_vocab_size(model))
    with torch.no_grad():
        output = model(input_ids, **kwargs)
    logits = getattr(output, "logits", output)
    if not isinstance(logits, torch.Tensor) or logits.shape[:2] != input_ids.shape or logits.dim() != 3:
        raise TypeError(
            f"model must return logits (B, T, vocab) for input_ids {tuple(input_ids.shape)}, or an output with "
            f".logits; got {type(output).__name__}."
        )
    require_ids_below(input_ids, "input_ids", logits.shape[-1], "the model's logits")
    return float(nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), input_ids[:, 1:].flatten()))


def raw_query_key_weights(model: nn.Module, gguf_file: GGUFFile) -> dict[str, torch.Tensor]:
    """Every layer's query and key weights exactly as the GGUF file stores them (llama.cpp's row order).

    Returns:
        ``{parameter name in model: tensor}`` for ``model.layers.<i>.self_attn.{q,k}_proj.weight``,
        ready for :func:`replaced_parameters`.
    """
    _require_llama(model)
    if not isinstance(gguf_file, GGUFFile):
        raise TypeError(f"gguf_file must be a GGUFFile (llm.GGUFFile()), got {type(gguf_file).__name__}.")
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
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}.")
    if not isinstance(replacements, Mapping):
        raise TypeError(f"replacements must be a dict {{parameter name: tensor}}, got {type(replacements).__name__}.")
    parameters = dict(model.named_parameters())
    for name, tensor in replacements.items():
        if name not in parameters:
            raise KeyError(f"the model has no parameter {name!r}; names look like {next(iter(parameters))!r}.")
        require_tensor(tensor, f"replacements[{name!r}]")
        if tensor.shape != parameters[name].shape:
            raise ValueError(
                f"replacements[{name!r}] has shape {tuple(tensor.shape)}, but the model's {name} has "
                f"{tuple(parameters[name].shape)}."
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
