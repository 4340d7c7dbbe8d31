"""The book's coding exercises, one module per chapter (``ch<N>``), each listing its specs in ``EXERCISES``.

An exercise is declared once, as data (:class:`~transformerland.exercises.spec.Exercise`: the function's
name and signature, public and hidden cases, the reference, the tolerance, the hints for typical wrong
answers as :class:`Mistake` entries, the points, the library functions it forbids). That one spec serves
the notebook's checker, ``check_…(fn)``, which runs the public cases and prints one verdict line,
``ex-<chapter>-<n> · PASSED · …`` or ``ex-<chapter>-<n> · NOT YET · …`` followed by a hint, and returns a
:class:`CheckResult` (truthy when the exercise passed); and it serves the bulk grader and the Gradescope
autograder, which run the student's function on hidden cases in a sandbox
(:mod:`~transformerland.exercises.harness`) and decide in their own process. Every coding exercise is a
spec; :mod:`~transformerland.exercises.checking` holds the toolkit they are judged with. The verdict is never
the reference solution.
"""

from .checking import *  # noqa: F403 (the toolkit, under its own names)
from .checking import __all__ as __all__
