"""transformerland: the small library behind *Apple in Transformerland*.

Modules, one idea each:

- :mod:`~transformerland.attention`: scaled dot-product and multi-head self-attention;
- :mod:`~transformerland.symmetry`: shuffling tokens and measuring what changes;
- :mod:`~transformerland.encodings`: the position schemes (sinusoidal, learned, rotary, ALiBi) and RoPE's variants;
- :mod:`~transformerland.layer_plans`: a position scheme, base and window per layer (NoPE layers, local and global);
- :mod:`~transformerland.mla`: multi-head latent attention's cache and its decoupled rotary key;
- :mod:`~transformerland.model`: a tiny transformer built from one ``TransformerConfig``;
- :mod:`~transformerland.tasks`: synthetic tasks whose answers depend on order;
- :mod:`~transformerland.training`: seeded, device-aware training and evaluation loops;
- :mod:`~transformerland.analysis`: looking inside a position table;
- :mod:`~transformerland.remedies`: what to do with inputs longer than the training length;
- :mod:`~transformerland.bert_embeddings`: BERT's embedding layer; :mod:`~transformerland.bert_weights`
  to read real weights and tokenizers offline; :mod:`~transformerland.bert` gathers both;
- :mod:`~transformerland.llm`: a real RoPE language model (SmolLM2) read offline, and tools to look inside it;
- :mod:`~transformerland.plotting`: one look for every figure;
- :mod:`~transformerland.interactive`: figures a reader can turn (Vega-Altair, no kernel needed);
- :mod:`~transformerland.exercises`: the checkers of the exercises, built on
  :mod:`~transformerland.exercises.checking`;
- :mod:`~transformerland.extras`: what a chapter's set-up cell brings beyond the library, at the library's floors.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
