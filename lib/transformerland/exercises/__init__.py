"""The book's coding exercises, one module per chapter (``ch<N>``), each listing its exercises in ``EXERCISES``.

An exercise is one declaration (:class:`~transformerland.exercises.exercise.Exercise`): the student's function,
the reference, the notebook's calls and the grader's hidden ones, what an answer must be, and the typical
slips with what to say about each, in two stages. The notebook's checker (``check_…``), the bulk grader and
the Gradescope autograder are all made from it; :mod:`~transformerland.exercises.harness` and
:mod:`~transformerland.exercises.codec` are what runs inside the grader's sandbox. CONTRIBUTING.md,
"Exercises as declarations", is the guide.
"""

from .exercise import *  # noqa: F403 (the toolkit, under its own names)
from .exercise import __all__ as __all__
