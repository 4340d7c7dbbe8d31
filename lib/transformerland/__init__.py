"""transformerland: the small library behind *Apple in Transformerland*.

Modules, one idea each:

- :mod:`~transformerland.attention`: scaled dot-product and multi-head self-attention;
- :mod:`~transformerland.symmetry`: shuffling tokens and measuring what changes;
- :mod:`~transformerland.encodings`: the position schemes (sinusoidal, learned, rotary, ALiBi) and RoPE's variants:
  long-context recipes (``rope_scaling``), partial rotary and p-RoPE (``partial_rotary``), M-RoPE (``mrope``),
  axial 2D RoPE and resampled ViT tables (``axial``);
- :mod:`~transformerland.layer_plans`: a position scheme, base and window per layer (NoPE layers, local and global);
- :mod:`~transformerland.mla`: multi-head latent attention's cache and its decoupled rotary key;
- :mod:`~transformerland.model`: a tiny transformer built from one ``TransformerConfig``;
- :mod:`~transformerland.tasks`: synthetic tasks whose answers depend on order;
- :mod:`~transformerland.recall`: tasks whose answers lie far back in the context (associative recall);
- :mod:`~transformerland.training`: seeded, device-aware training and evaluation loops;
- :mod:`~transformerland.analysis`: looking inside a position table;
- :mod:`~transformerland.remedies`: what to do with inputs longer than the training length;
- :mod:`~transformerland.bert_embeddings`: BERT's embedding layer; :mod:`~transformerland.bert_weights`
  to read real weights and tokenizers offline; :mod:`~transformerland.bert` gathers both;
- :mod:`~transformerland.llm`: a real RoPE language model (SmolLM2) read offline, and tools to look inside it;
- :mod:`~transformerland.passkey`: passkey retrieval on such a model, plain and under each RoPE recipe;
- :mod:`~transformerland.plotting`: one look for every figure;
- :mod:`~transformerland.interactive`: figures a reader can turn (Vega-Altair, no kernel needed);
- :mod:`~transformerland.exercises`: the exercises, each one declaration
  (:mod:`~transformerland.exercises.exercise`) for the notebook's checker and the grader;
- :mod:`~transformerland.extras`: what a chapter's set-up cell brings beyond the library, at the library's floors.

Bad input, everywhere the same way: every public function checks its arguments first, with one
layer of checks (``transformerland._validation``), and raises a ``TypeError`` (wrong kind) or
``ValueError`` (wrong value) that names the argument, the value received and the fix. Booleans
must be real ``bool`` values; numbers finite and in range; sizes whole numbers under named caps
(``MAX_SIZE``, ``MAX_HEADS``, ``MAX_ELEMENTS``), checked before anything is allocated; tensors the
maths treats as real numbers must be floating: **integer tensors are refused, never promoted**
(convert with ``.float()``); tensors that meet share a device and a dtype; a requested device must
exist. ``tests/test_contract.py`` holds every public callable to this.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
