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

# Every public name of the four modules, importable from here; each module's __all__ is the one list.
from . import gguf_file, inside, loading, positions
from .gguf_file import *  # noqa: F403
from .inside import *  # noqa: F403
from .loading import *  # noqa: F403
from .positions import *  # noqa: F403

__all__ = sorted({*gguf_file.__all__, *inside.__all__, *loading.__all__, *positions.__all__})
