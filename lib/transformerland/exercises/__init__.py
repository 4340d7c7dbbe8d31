"""Checkers for the book's coding exercises, one module per chapter (``ch1`` … ``ch6``).

A checker takes the student's function, runs it on a few cases (edge cases included) and
prints one verdict line, ``ex-<chapter>-<n> · PASSED · …`` or ``ex-<chapter>-<n> · NOT YET · …``
followed by a hint. It never shows the reference solution. It returns a :class:`CheckResult`,
which is truthy when the exercise passed.
"""

from .checking import VERDICT_PATTERN, Check, CheckResult

__all__ = ["VERDICT_PATTERN", "Check", "CheckResult"]
