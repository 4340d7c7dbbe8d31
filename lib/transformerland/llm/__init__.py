"""A real RoPE language model, offline: SmolLM2-135M-Instruct, and the tools to look at positions inside it.

Three concerns, one module each; every name is importable from here (``llm.load_smollm2``):

* reading the file and loading the model: :mod:`~transformerland.llm.gguf_file` (where the GGUF
  file is, :class:`GGUFFile` on the ``gguf`` package's reader, and the row order of its query and
  key weights, :func:`gguf_rows_to_halves` / :func:`halves_rows_to_gguf`) and
  :mod:`~transformerland.llm.loading` (:func:`load_smollm2`);
* positions at inference time: :mod:`~transformerland.llm.positions`
  (:func:`position_ids_from_mask`, :func:`sliding_window_mask`);
* looking inside: :mod:`~transformerland.llm.inside` (:func:`record_queries_keys`,
  :func:`rotary_attention_weights`, :func:`rotary_pair_norms`, :func:`rotary_turns`,
  :func:`first_token_attention`, :func:`next_token_loss`, :func:`replaced_parameters`,
  :func:`raw_query_key_weights`, and :data:`SAMPLE_TEXT`, a passage written for this book to
  measure the model on).
"""

from .gguf_file import (
    LLM_REQUIREMENTS,
    SMOLLM2_GGUF,
    SMOLLM2_PACKAGE,
    GGUFFile,
    GGUFTensorInfo,
    gguf_rows_to_halves,
    halves_rows_to_gguf,
    smollm2_gguf_path,
)
from .inside import (
    SAMPLE_TEXT,
    QueryKeyRecord,
    first_token_attention,
    next_token_loss,
    raw_query_key_weights,
    record_queries_keys,
    replaced_parameters,
    rotary_attention_weights,
    rotary_pair_norms,
    rotary_turns,
)
from .loading import load_smollm2
from .positions import position_ids_from_mask, sliding_window_mask

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
