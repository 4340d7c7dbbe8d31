"""BERT's embeddings, all in one place: the layer and the loaders of real weights and tokenizers.

Two modules, imported one way only: :mod:`~transformerland.bert.embeddings` is the layer
(:class:`BertEmbeddings`, word + segment + position, then LayerNorm and dropout), and
:mod:`~transformerland.bert.weights` fills it from a real checkpoint (:func:`load_bert_embeddings`,
:func:`load_minilm_embeddings`) and makes its input (:func:`load_minilm_tokenizer`,
:func:`encode_pair`). This module gathers both, so that a chapter imports from one place.
"""

from .embeddings import BERT_BASE, BertEmbeddingConfig, BertEmbeddings, Contributions, SequenceTooLongError
from .weights import (
    MINILM_PACKAGE,
    EncodedPair,
    encode_pair,
    load_bert_embeddings,
    load_minilm_embeddings,
    load_minilm_tokenizer,
    minilm_model_path,
)

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
