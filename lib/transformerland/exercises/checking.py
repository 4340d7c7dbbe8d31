"""The toolkit the specs' judges are built from: check an answer, compare it, name the mistake.

A spec's judge (:mod:`~transformerland.exercises.spec`) records its checks on a :class:`Check`::

    def judge(check, spec, case, got, expected):
        table = check.numbers(got, "the table")              # not numbers: NOT YET, asking for them
        check.shape(table, expected.shape, *spec.said("shape", shape=tuple(table.shape)))  # texts from the data
        compare(check, spec, case, table, expected.to(table.dtype))  # close, or the hint of the slip it matches

The first failed check ends it with a NOT YET verdict naming the problem and the hint; when
every check holds, the verdict is PASSED and says how many checks agreed. Many exercises need no
judge of their own: their chapter's data names one of the spec module's (``answer``), and the
exercise is then its slips, what each typical wrong answer returns, with the hint that names it.
"""

from __future__ import annotations

import math
import re
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeVar

if TYPE_CHECKING:  # torch is imported where it is used, so that importing a checker stays quick
    import torch

__all__ = [
    "VERDICT_PATTERN",
    "Check",
    "CheckFailed",
    "CheckResult",
    "Mistake",
    "as_float64",
    "hint_for",
    "numbers_close",
    "spot_mistake",
    "tensors_close",
    "tensors_equal",
]

#: Matches a verdict line as the notebook's checkers print it (the grader decides from data, never from it).
VERDICT_PATTERN = re.compile(
    r"^(?P<exercise>ex-\d+-\d+) · (?P<verdict>PASSED|NOT YET) · (?P<message>.*)$", re.MULTILINE
)

_T = TypeVar("_T")


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


# --- which typical mistake does an answer match? ---------------------------------------------------


class Mistake(NamedTuple):
    """A typical wrong answer: what the slip returns, the hint that names it, (optionally) the problem, and the
    key it has in its chapter's data."""

    answer: Any
    hint: str
    problem: str = ""
    key: str = ""


def spot_mistake(
    got: Any, mistakes: Iterable[Mistake], close: Callable[[Any, Any], bool], fallback: Mistake | None = None
) -> Mistake | None:
    """The first of ``mistakes`` whose answer is ``close`` to ``got``; ``fallback`` when none is."""
    return next((mistake for mistake in mistakes if close(got, mistake.answer)), fallback)


def hint_for(got: Any, mistakes: Iterable[Mistake], close: Callable[[Any, Any], bool], fallback: str) -> str:
    """The hint of the mistake ``got`` matches, or ``fallback`` (a restatement of the rule) if it matches none."""
    return spot_mistake(got, mistakes, close, Mistake(None, fallback)).hint  # type: ignore[union-attr]


def tensors_close(atol: float, rtol: float = 0.0) -> Callable[[torch.Tensor, torch.Tensor], bool]:
    """A closeness test for tensors: same shape, and ``|a - b| <= atol + rtol·|b|`` everywhere."""

    def close(a: torch.Tensor, b: torch.Tensor) -> bool:
        import torch

        return a.shape == b.shape and torch.allclose(a, b, atol=atol, rtol=rtol)

    return close


def tensors_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The same shape and exactly the same values (ids, indices, row orders)."""
    import torch

    return a.shape == b.shape and bool(torch.equal(a, b))


def numbers_close(rel_tol: float, abs_tol: float = 0.0) -> Callable[[float, float], bool]:
    """A closeness test for two numbers, relative to their size (and within ``abs_tol`` near zero)."""
    return lambda a, b: math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def as_float64(value: Any) -> torch.Tensor:
    """A tensor, list or array as a float64 tensor on the CPU (raises if it holds no numbers)."""
    import torch

    return torch.as_tensor(value).detach().cpu().to(torch.float64)


def _is_tensor(value: object) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


# --- the check itself ------------------------------------------------------------------------------


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

    def that(self, condition: object, problem: str, hint: str) -> None:
        """Record one case; if ``condition`` is false, stop with ``problem`` and ``hint``."""
        self.cases += 1
        if not condition:
            raise CheckFailed(problem, hint)

    def fail(self, problem: str, hint: str) -> NoReturn:
        """Stop here with ``problem`` and ``hint``."""
        raise CheckFailed(problem, hint)

    def shape(self, value: torch.Tensor, expected: tuple[int, ...], problem: str, hint: str) -> None:
        """Record one case: ``value`` has the shape ``expected``."""
        self.that(tuple(value.shape) == tuple(expected), problem, hint)

    def tensor(self, value: object, hint: str, returned: str = "it") -> torch.Tensor:
        """Record one case: ``value`` is a tensor; ``returned`` names the call in the problem."""
        import torch

        self.that(isinstance(value, torch.Tensor), f"{returned} returned a {type(value).__name__}, not a tensor", hint)
        assert isinstance(value, torch.Tensor)
        return value

    def convert(self, value: object, to: Callable[[Any], _T], problem: str, hint: str) -> _T:
        """``to(value)`` (``float``, ``int``, :func:`as_float64`, …); if it cannot be converted, stop."""
        try:
            return to(value)
        except (TypeError, ValueError, RuntimeError):
            raise CheckFailed(problem, hint) from None

    def numbers(self, value: object, what: str) -> torch.Tensor:
        """``value`` (a tensor, list or array of numbers) as float64; otherwise stop, asking for ``what``."""
        return self.convert(
            value,
            as_float64,
            f"it returned a {type(value).__name__}, which is not a list of numbers",
            f"return {what} as a torch.Tensor (a list of floats works too).",
        )

    def integers(self, value: object, what: str) -> torch.Tensor:
        """``value`` (a tensor, list or array of whole numbers) as a long tensor; else stop, asking for ``what``."""
        import torch

        tensor = self.convert(
            value,
            lambda v: torch.as_tensor(v).detach().cpu(),
            f"it returned a {type(value).__name__}, which is not a tensor of whole numbers",
            f"return {what} as a torch.Tensor of integers.",
        )
        if tensor.dtype.is_floating_point and not bool((tensor == tensor.round()).all()):
            self.fail(f"{what} are not whole numbers", "positions and indices count in whole steps: 0, 1, 2, …")
        return tensor.long()

    def number(self, value: object, what: str) -> float:
        """``value`` (an int, a float or a one-element tensor) as a float; otherwise stop, asking for ``what``."""
        if _is_tensor(value) and value.numel() == 1:  # type: ignore[attr-defined]
            value = value.item()  # type: ignore[attr-defined]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(f"it returned a {type(value).__name__}, not a number", f"return {what} as a plain float.")
        return float(value)

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the student's ``fn``; an exception it raises becomes a NOT YET verdict."""
        if not callable(fn):
            raise CheckFailed(
                f"expected a function, got {type(fn).__name__}",
                "pass the function itself, without calling it: check(my_function), not check(my_function()).",
            )
        shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
        return self.run(lambda: fn(*args, **kwargs), name="the function", doing=f"calling it with ({shown})")

    def run(
        self,
        action: Callable[[], _T],
        *,
        name: str,
        doing: str,
        explain: Callable[[Exception], str | None] | None = None,
    ) -> _T:
        """Run ``action`` (a call into the student's code) and turn an exception into a verdict.

        Args:
            action: the call, without arguments (a ``lambda``).
            name: what is called, for a stub: ``"<name> is not written yet"``.
            doing: the call, in words: ``"<doing> raised ValueError: …"``.
            explain: a hint for an error the checker recognises, or ``None`` to point at the line.
        """
        try:
            return action()
        except NotImplementedError:
            raise CheckFailed(
                f"{name} is not written yet (it raised NotImplementedError)", "replace the stub's body with your code."
            ) from None
        except Exception as error:  # the student's bug, reported rather than raised
            hint = explain(error) if explain is not None else None
            if hint is None:
                where = traceback.extract_tb(error.__traceback__)[-1]
                hint = f"look at line {where.lineno} of your code ({where.line!s})."
            raise CheckFailed(f"{doing} raised {type(error).__name__}: {error}", hint) from None

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
