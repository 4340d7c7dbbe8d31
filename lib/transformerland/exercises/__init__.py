"""Checkers for the book's coding exercises, one module per chapter (``ch<N>``).

A checker takes the student's function, runs it on a few cases (edge cases included) and
prints one verdict line, ``ex-<chapter>-<n> · PASSED · …`` or ``ex-<chapter>-<n> · NOT YET · …``
followed by a hint. It never shows the reference solution. It returns a :class:`CheckResult`,
which is truthy when the exercise passed. Every checker is built from the toolkit in
:mod:`~transformerland.exercises.checking`: :class:`Check` runs the cases, and a list of
:class:`Mistake` entries (what a typical slip returns, and the hint that names it) turns a
wrong answer into advice.
"""

from .checking import *  # noqa: F403 (the toolkit, under its own names)
from .checking import __all__ as __all__
