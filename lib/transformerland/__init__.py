"""transformerland: the small library behind *Apple in Transformerland*.

Modules: :mod:`~transformerland.attention`, :mod:`~transformerland.symmetry`, :mod:`~transformerland.encodings`,
:mod:`~transformerland.model`, :mod:`~transformerland.tasks`, :mod:`~transformerland.training`,
:mod:`~transformerland.analysis`, :mod:`~transformerland.plotting` and
:mod:`~transformerland.exercises` (the checkers).
"""

__version__ = "0.1.0"
