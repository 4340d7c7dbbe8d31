"""BERT's input layer: word + segment + position embeddings, then LayerNorm and dropout.

:class:`BertEmbeddings` is our own readable version of the layer every BERT-family model
starts with. For a token ``t`` at position ``p`` in segment ``s`` it computes::

    LayerNorm(word[t] + segment[s] + position[p])      # then dropout while training

The loaders that fill it from a real checkpoint live in :mod:`transformerland.bert.weights`
(which imports this module, never the other way round); :mod:`transformerland.bert` gathers both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from .._validation import (
    require_elements,
    require_index_tensor,
    require_int,
    require_positive_int,
    require_real,
)
from ..encodings.learned import SequenceTooLongError, check_fits

__all__ = ["BERT_BASE", "BertEmbeddingConfig", "BertEmbeddings", "Contributions", "SequenceTooLongError"]


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
        require_real(self.layer_norm_eps, "layer_norm_eps", low=0.0, high=1.0, low_open=True, what="a small number")
        require_real(self.hidden_dropout_prob, "hidden_dropout_prob", low=0.0, high=1.0, high_open=True)
        require_int(self.pad_token_id, "pad_token_id (a token id below vocab_size)", low=0, high=self.vocab_size - 1)
        require_elements(self.num_parameters, "this BERT embedding layer (parameters)")

    @classmethod
    def from_json(cls, path: str | Path) -> BertEmbeddingConfig:
        """Read the embedding sizes from a BERT ``config.json``; other keys are ignored."""
        if not isinstance(path, (str, Path)):
            raise TypeError(f"path must be the path of a config.json (str or Path), got {type(path).__name__}.")
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
        require_index_tensor(input_ids, "input_ids", ndim=2, what="integer token ids")
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
        require_index_tensor(token_type_ids, "token_type_ids", ndim=2, what="integer segment ids")
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(
                f"token_type_ids must have the shape of input_ids {tuple(input_ids.shape)}, "
                f"got {tuple(token_type_ids.shape)}: one segment id per token."
            )
        low, high = int(token_type_ids.min()), int(token_type_ids.max())
        if low < 0 or high >= config.type_vocab_size:
            bad = low if low < 0 else high
            raise ValueError(
                f"segment id {bad} is outside the segment table, which has {config.type_vocab_size} rows "
                f"(ids 0 … {config.type_vocab_size - 1}: 0 for sentence A, 1 for sentence B)."
            )
        device = self.word_embeddings.weight.device
        return input_ids.to(device=device, dtype=torch.long), token_type_ids.to(device=device, dtype=torch.long)

    def _check_positions(self, position_ids: torch.Tensor | None, ids: torch.Tensor) -> torch.Tensor:
        """Validate ``position_ids`` ``(B, T)`` or ``(1, T)`` (default ``0 … T-1``); returns ``(B or 1, T)`` long."""
        if position_ids is None:
            return torch.arange(ids.shape[1], device=ids.device)[None]
        require_index_tensor(position_ids, "position_ids", ndim=2, what="integer positions")
        if position_ids.shape[1] != ids.shape[1] or position_ids.shape[0] not in (1, ids.shape[0]):
            raise ValueError(
                f"position_ids must have shape {tuple(ids.shape)} or (1, {ids.shape[1]}), one position per token, "
                f"got {tuple(position_ids.shape)}."
            )
        rows = self.config.max_position_embeddings
        low, high = int(position_ids.min()), int(position_ids.max())
        if low < 0:
            raise ValueError(f"position ids count from 0, got {low}.")
        if high >= rows:
            raise SequenceTooLongError(
                f"position id {high} is past the last row of this BERT embedding layer's position table, which has "
                f"{rows} rows (positions 0 to {rows - 1}). A learned table has no row for position {rows} or beyond."
            )
        return position_ids.to(device=ids.device, dtype=torch.long)

    def contributions(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> Contributions:
        """The three rows looked up for every token, before they are added.

        Args:
            input_ids: ``(B, T)`` token ids, ``T <= max_position_embeddings``.
            token_type_ids: ``(B, T)`` segment ids (0 = sentence A, 1 = sentence B); ``None``: all 0.
            position_ids: ``(B, T)`` or ``(1, T)`` positions, as transformers' ``BertEmbeddings`` takes
                them; ``None``: token ``i`` sits at position ``i``, counting from 0 at ``[CLS]``.

        Returns:
            word, segment and position contributions, each ``(B, T, D)``.

        Raises:
            SequenceTooLongError: ``T`` exceeds the position table, or a position id is past its last row.
            ValueError: a token id outside the vocabulary or a segment id outside the segment table.
        """
        ids, segments = self._check_ids(input_ids, token_type_ids)
        positions = self._check_positions(position_ids, ids)
        return Contributions(
            word=self.word_embeddings(ids),
            segment=self.segment_embeddings(segments),
            position=self.position_embeddings(positions).expand(ids.shape[0], -1, -1),
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``(B, T)`` token ids (and segment ids) → ``(B, T, D)``: ``dropout(LayerNorm(word + segment + position))``.

        Arguments and errors as in :meth:`contributions`.
        """
        return self.dropout(self.layer_norm(self.contributions(input_ids, token_type_ids, position_ids).total()))
