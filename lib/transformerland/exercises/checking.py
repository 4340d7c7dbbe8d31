"""The machinery every checker shares: run a student's function, compare, explain.

A checker is written as::

    def check_something(fn):
        with Check("ex-2-1", "sinusoidal encoding") as check:
            got = check.call(fn, 8, 4)                       # a raised exception becomes a verdict
            check.that(got.shape == (8, 4), "the table has shape ...", hint="rows are positions ...")
        return check.result

The first failed ``that`` ends the check with a NOT YET verdict naming the problem and the hint.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

#: Matches a verdict line; the bulk grader reads submissions' outputs with it.
VERDICT_PATTERN = re.compile(
    r"^(?P<exercise>ex-\d+-\d+) · (?P<verdict>PASSED|NOT YET) · (?P<message>.*)$", re.MULTILINE
)


@dataclass
class CheckResult:
    """The verdict on one exercise."""

    exercise: str
    passed: bool
    message: str
    hint: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        line = f"{self.exercise} · {'PASSED' if self.passed else 'NOT YET'} · {self.message}"
        return line + (f"\n    Hint: {self.hint}" if self.hint else "")


class CheckFailed(Exception):
    """Raised inside a :class:`Check` to stop at the first problem found."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


class Check:
    """Context manager that turns a checker's body into one printed verdict.

    Args:
        exercise: the exercise label, ``ex-<chapter>-<n>``.
        what: a few words naming what is checked, used in the PASSED message.
        quiet: do not print (the result is still returned).
    """

    def __init__(self, exercise: str, what: str, quiet: bool = False) -> None:
        if not re.fullmatch(r"ex-\d+-\d+", exercise):
            raise ValueError(f"exercise labels look like 'ex-2-1', got {exercise!r}.")
        self.exercise, self.what, self.quiet = exercise, what, quiet
        self.cases = 0
        self.result = CheckResult(exercise, False, "the check did not run")

    def __enter__(self) -> Check:
        return self

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the student's ``fn``; an exception it raises becomes a NOT YET verdict."""
        if not callable(fn):
            raise CheckFailed(
                f"expected a function, got {type(fn).__name__}",
                "pass the function itself, without calling it: check(my_function), not check(my_function()).",
            )
        try:
            return fn(*args, **kwargs)
        except NotImplementedError:
            raise CheckFailed(
                "the function is not written yet (it raised NotImplementedError)",
                "replace the stub's body with your code.",
            ) from None
        except Exception as error:  # the student's bug, reported rather than raised
            where = traceback.extract_tb(error.__traceback__)[-1]
            shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise CheckFailed(
                f"calling it with ({shown}) raised {type(error).__name__}: {error}",
                f"look at line {where.lineno} of your code ({where.line!s}).",
            ) from None

    def that(self, condition: object, problem: str, hint: str) -> None:
        """Record one case; if ``condition`` is false, stop with ``problem`` and ``hint``."""
        self.cases += 1
        if not condition:
            raise CheckFailed(problem, hint)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> bool:
        if kind is None:
            self.result = CheckResult(self.exercise, True, f"{self.what}: all {self.cases} checks agree.")
        elif isinstance(error, CheckFailed):
            self.result = CheckResult(self.exercise, False, error.message, error.hint)
        else:
            return False
        if not self.quiet:
            print(self.result)
        return True
