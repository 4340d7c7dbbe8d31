"""transformerland: the small library behind *Apple in Transformerland*.

Modules, one idea each:

- :mod:`~transformerland.attention`: scaled dot-product and multi-head self-attention;
- :mod:`~transformerland.symmetry`: shuffling tokens and measuring what changes;
- :mod:`~transformerland.encodings`: the position schemes (sinusoidal, learned, rotary, ALiBi);
- :mod:`~transformerland.model`: a tiny transformer built from one ``TransformerConfig``;
- :mod:`~transformerland.tasks`: synthetic tasks whose answers depend on order;
- :mod:`~transformerland.recall`: tasks whose answers lie far back in the context (associative recall);
- :mod:`~transformerland.training`: seeded, device-aware training and evaluation loops;
- :mod:`~transformerland.analysis`: looking inside a position table;
- :mod:`~transformerland.remedies`: what to do with inputs longer than the training length;
- :mod:`~transformerland.bert`: BERT's embedding layer, and :mod:`~transformerland.bert_weights`
  to read real weights and tokenizers offline;
- :mod:`~transformerland.llm`: a real RoPE language model (SmolLM2) read offline, and tools to look inside it;
- :mod:`~transformerland.passkey`: passkey retrieval on such a model, plain and under each RoPE recipe;
- :mod:`~transformerland.plotting`: one look for every figure;
- :mod:`~transformerland.interactive`: figures a reader can turn (Vega-Altair, no kernel needed);
- :mod:`~transformerland.exercises`: the checkers of the exercises, built on
  :mod:`~transformerland.exercises.checking`.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
