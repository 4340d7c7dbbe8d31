"""transformerland: the small library behind *Apple in Transformerland*.

The folders show the design: the model and its training at the top, the position schemes in ``encodings``,
the real models as packages, the chapters' experiments apart, the exercises' toolkit apart from both.

- :mod:`~transformerland.attention`: scaled dot-product and multi-head self-attention;
- :mod:`~transformerland.model`: a tiny transformer built from one ``TransformerConfig``;
- :mod:`~transformerland.tasks`: synthetic tasks whose answers depend on order;
- :mod:`~transformerland.training`: seeded, device-aware training and evaluation loops;
- :mod:`~transformerland.encodings`: the position schemes (sinusoidal, learned, rotary, ALiBi) and every variant:
  long-context recipes (``rope_scaling``), partial rotary and p-RoPE (``partial_rotary``), M-RoPE (``mrope``),
  axial 2D RoPE and resampled ViT tables (``axial``), a scheme, base and window per layer (``layer_plans``),
  multi-head latent attention's cache and decoupled rotary key (``mla``);
- :mod:`~transformerland.bert`: BERT's embedding layer (``bert.embeddings``) and its real weights and tokenizer,
  read offline (``bert.weights``);
- :mod:`~transformerland.llm`: a real RoPE language model (SmolLM2) read offline, and tools to look inside it;
- :mod:`~transformerland.experiments`: the chapters' experiments, built on the above: ``symmetry`` (shuffling
  tokens), ``analysis`` (looking inside a position table), ``remedies`` (inputs longer than the training
  length), ``recall`` (associative recall), ``passkey`` (passkey retrieval on SmolLM2 under each RoPE
  recipe), ``long_text`` (the loss along one long text);
- :mod:`~transformerland.plotting`: one look for every figure;
- :mod:`~transformerland.interactive`: figures a reader can turn (Vega-Altair, no kernel needed);
- :mod:`~transformerland.exercises`: the exercises, each one declaration
  (:mod:`~transformerland.exercises.exercise`) for the notebook's checker and the grader;
- :mod:`~transformerland.environment`: what a chapter's set-up cell brings beyond the library, at the library's
  floors (``environment.extras``).

The old flat paths keep working: importing one (:data:`MOVED` lists them) gives the moved module itself, so
``from transformerland.remedies import extend_table`` and the chapters' ``from transformerland.extras import
ensure`` work as before. New code imports from the folders.

Bad input, everywhere the same way: every public function checks its arguments first, with one
layer of checks (``transformerland._validation``), and raises a ``TypeError`` (wrong kind) or
``ValueError`` (wrong value) that names the argument, the value received and the fix. Booleans
must be real ``bool`` values; numbers finite and in range; sizes whole numbers under named caps
(``MAX_SIZE``, ``MAX_HEADS``, ``MAX_ELEMENTS``), checked before anything is allocated; tensors the
maths treats as real numbers must be floating: **integer tensors are refused, never promoted**
(convert with ``.float()``); tensors that meet share a device and a dtype; a requested device must
exist. ``tests/test_contract.py`` holds every public callable to this.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

__version__ = "0.1.0"

__all__ = ["MOVED", "__version__"]

#: Modules that moved into the folders, by their old names → where they live now.
MOVED = {
    "transformerland.symmetry": "transformerland.experiments.symmetry",
    "transformerland.analysis": "transformerland.experiments.analysis",
    "transformerland.remedies": "transformerland.experiments.remedies",
    "transformerland.recall": "transformerland.experiments.recall",
    "transformerland.passkey": "transformerland.experiments.passkey",
    "transformerland.layer_plans": "transformerland.encodings.layer_plans",
    "transformerland.mla": "transformerland.encodings.mla",
    "transformerland.bert_embeddings": "transformerland.bert.embeddings",
    "transformerland.bert_weights": "transformerland.bert.weights",
    "transformerland.extras": "transformerland.environment.extras",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old name of :data:`MOVED` as the moved module itself (one module object under two names).

    Consulted after the ordinary finders, which no longer find a file at the old path.
    """

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> object:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: object) -> None:
        """Nothing to run: the moved module ran when it was imported under its own name."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())
