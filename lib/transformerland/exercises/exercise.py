"""A coding exercise as one small declaration, for the notebook's checker, the grader and Gradescope.

Chapter 2's wavelength exercise, whole (CONTRIBUTING.md, "Exercises as declarations", explains each part)::

    WAVELENGTH = Exercise(
        "ex-2-2", "wavelength", checker="check_wavelength",
        reference=_wavelength,
        public=[call(256, 512), call(257, 512), call(7, 16, base=100.0)],
        hidden=lambda r: [call(2 * r.randrange(1, 64), 128), call(0, 64, base=500.0)],
        answer=Number(rel=1e-4),
        slips=[
            Slip(lambda column, d_model, base=1e4: _wavelength(column, d_model, base) / (2 * math.pi),
                 "that is the wavelength divided by 2π: what does one full turn measure?",
                 "a wavelength counts positions, and one turn is 2π radians of angle."),
        ],
    )
    check_wavelength = WAVELENGTH.checker_function()

The same declaration serves three callers:

* the notebook: ``check_wavelength(wavelength)`` calls the student's function on the **public** calls, here,
  in the student's kernel, and prints one verdict line, ``ex-2-2 · PASSED · …`` or ``ex-2-2 · NOT YET · …``;
  the second time the same slip is made, a stronger hint follows it;
* the grader and Gradescope: the student's function runs in a sandbox on **hidden** calls drawn for the
  run, over a grading build of the library without this exercise's reference (nor any function in
  ``withheld``); the answers come back as data (:mod:`~transformerland.exercises.codec`) and
  :meth:`Exercise.grade` decides here, against the reference computed here. A hidden call's verdict names
  the slip, never the call's inputs or the expected answer;
* anything else that can call a Python function (Otter-Grader, nbgrader): :meth:`Exercise.grade` on a list
  of :class:`~transformerland.exercises.codec.Answer`.
"""

from __future__ import annotations

import importlib
import inspect
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from .codec import Answer, capture

__all__ = [
    "PUBLIC_SEED",
    "VERDICT_PATTERN",
    "Call",
    "CheckResult",
    "Exact",
    "Exercise",
    "ForbiddenCall",
    "Kind",
    "Number",
    "Slip",
    "Tensor",
    "call",
]

#: The seed of the notebook's calls; the grader draws any other for the hidden ones.
PUBLIC_SEED = 0
#: When Gradescope shows a test's result to the student.
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
#: A verdict line as a checker prints it (for readers of printed output; the grader decides from data).
VERDICT_PATTERN = re.compile(r"^(?P<exercise>ex-\d+-\d+) · (?P<verdict>PASSED|NOT YET) · (?P<message>.*)$", re.M)


@dataclass(frozen=True)
class Call:
    """One call of the student's function: ``fn(*args, **kwargs)``; for a class, the object it builds is then
    called on each of ``feeds``."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    feeds: tuple[Any, ...] | None = None

    def shown(self, name: str) -> str:
        """The call in words, ``wavelength(7, 16, base=100.0)``; a tensor shows as its shape."""
        words = [_show(a) for a in self.args] + [f"{k}={_show(v)}" for k, v in self.kwargs.items()]
        return f"{name}({', '.join(words)})"


def call(*args: Any, feeds: Sequence[Any] | None = None, **kwargs: Any) -> Call:
    """The call ``fn(*args, **kwargs)`` (and, for a class exercise, the object then called on each of ``feeds``)."""
    return Call(tuple(args), kwargs, tuple(feeds) if feeds is not None else None)


def _show(value: Any) -> str:
    """A value in a verdict: a tensor as its shape, anything else as its repr."""
    shape = getattr(value, "shape", None)
    return f"<tensor {tuple(shape)}>" if shape is not None else repr(value)


@dataclass(frozen=True)
class Slip:
    """A typical wrong answer and what to say about it, in two stages.

    Args:
        wrong: what the slip computes, with the reference's signature (compared with the student's answer
            as the exercise compares answers); or, with ``when``, None.
        says: the first time: what is wrong, and where to look. Never the corrected line.
        then: the second time the same slip is made: a stronger hint (still not the line itself).
        when: instead of ``wrong``, a test ``when(got, *args, **kwargs) -> bool`` that recognises the slip.

    A judge (:attr:`Exercise.judge`) returns a Slip without ``wrong`` or ``when`` for a fault it found itself.
    Texts may hold ``{name}`` fields, filled in with the call's arguments by name on the notebook's calls
    (on hidden calls each field shows its name instead: the grader never shows a hidden input).
    """

    wrong: Callable[..., Any] | None = None
    says: str = ""
    then: str = ""
    when: Callable[..., bool] | None = None


class Kind:
    """What an answer must be: :meth:`fault` says what is wrong with ``got`` (None when it is right), and
    :meth:`close` tells whether two answers agree (to match a slip)."""

    def fault(self, got: Any, expected: Any, hidden: bool) -> str | None:
        raise NotImplementedError

    def close(self, got: Any, other: Any) -> bool:
        try:
            return self.fault(got, other, True) is None
        except Exception:  # an answer of another type or shape is close to nothing
            return False


@dataclass(frozen=True)
class Exact(Kind):
    """The same plain value (ints, strings, None, lists, tuples), of the same type; floats within 1e-9."""

    def fault(self, got: Any, expected: Any, hidden: bool) -> str | None:
        shown = repr(got) if len(repr(got)) < 200 else f"a {type(got).__name__}"
        return None if _equal(got, expected) else f"it returned {shown}" + ("" if hidden else ", expected another")


def _equal(got: Any, expected: Any) -> bool:
    """Equal as plain values: the same types (an int for an int), tensors by shape and value, floats to 1e-9."""
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)
    if type(got) is not type(expected):
        return False
    if isinstance(expected, torch.Tensor):
        return got.shape == expected.shape and bool(torch.equal(got.double(), expected.double()))
    if isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(_equal(a, b) for a, b in zip(got, expected, strict=True))
    if isinstance(expected, dict):
        return got.keys() == expected.keys() and all(_equal(got[k], expected[k]) for k in expected)
    return bool(got == expected)


@dataclass(frozen=True)
class Number(Kind):
    """One number (an int, a float, a one-element tensor), within ``rel`` (relative) or ``abs`` of the right one."""

    rel: float = 1e-9
    abs: float = 0.0

    def fault(self, got: Any, expected: Any, hidden: bool) -> str | None:
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return f"it returned a {type(got).__name__}, not a number"
        if math.isclose(got, float(expected), rel_tol=self.rel, abs_tol=self.abs):
            return None
        return f"it returned {got:.6g}, which is not the right number"


@dataclass(frozen=True)
class Tensor(Kind):
    """A tensor (a list or NumPy array of numbers works too) of the right shape, within ``atol + rtol·|x|``
    of the right one everywhere; exactly equal when both are 0 (ids, indices)."""

    atol: float = 0.0
    rtol: float = 0.0

    def fault(self, got: Any, expected: Any, hidden: bool) -> str | None:
        try:
            got = torch.as_tensor(got).detach().cpu()
        except (TypeError, ValueError, RuntimeError):
            return f"it returned a {type(got).__name__}, not a tensor of numbers"
        expected = torch.as_tensor(expected)
        if got.shape != expected.shape:
            return f"it has shape {tuple(got.shape)}" + ("" if hidden else f"; expected {tuple(expected.shape)}")
        if (got.dtype == torch.bool) != (expected.dtype == torch.bool) or got.is_complex() != expected.is_complex():
            return f"it has dtype {got.dtype}, not {expected.dtype} like the answer's"
        if self.atol == self.rtol == 0:  # compared as values: 1.7 is not the id 1
            equal = bool(
                torch.equal(
                    got.to(torch.complex128 if got.is_complex() else torch.float64),
                    expected.to(torch.complex128 if got.is_complex() else torch.float64),
                )
            )
            return (
                None
                if equal
                else "some entries are wrong" + ("" if hidden else f": {_first_difference(got, expected)}")
            )
        got, expected = got.to(torch.float64), expected.to(torch.float64)
        if not bool(torch.isfinite(got).all()) and bool(torch.isfinite(expected).all()):
            return "it contains NaN or infinite values"
        if torch.allclose(got, expected, atol=self.atol, rtol=self.rtol, equal_nan=True):
            return None
        worst = float((got - expected).abs().nan_to_num(math.inf).max())
        return f"it differs from the right values by up to {worst:.3g}" + (
            "" if hidden else f", first at {_first_difference(got, expected)}"
        )


def _first_difference(got: torch.Tensor, expected: torch.Tensor) -> str:
    index = tuple(int(i) for i in (got != expected).nonzero()[0]) if (got != expected).any() else ()
    return f"index {index if len(index) != 1 else index[0]}"


class ForbiddenCall(Exception):
    """Raised in the notebook by a withheld library function while the student's function is checked."""


@contextmanager
def _withholding(names: Sequence[str]) -> Iterator[None]:
    """In the notebook, while the student's code runs: each function of ``names`` raises :class:`ForbiddenCall`.

    Only feedback for the student: their kernel can undo it. The grader withholds for real (the sandbox's
    library has no copy of these functions' bodies).
    """
    swapped = []
    for name in names:
        function = _resolve(name)
        free = function.__code__.co_freevars  # a method calling super() has one, __class__: the stand-in too
        source = "def outer():\n" + "".join(f" {n} = None\n" for n in free) + " def f(*a, **k):\n"
        source += f"  ({', '.join(free)},)\n" if free else ""
        source += f"  raise __import__({__name__!r}, fromlist=['_']).ForbiddenCall({name!r})\n return f\n"
        stand_in: dict[str, Any] = {}
        exec(compile(source, "<withheld>", "exec"), stand_in)
        swapped.append((function, function.__code__))
        function.__code__ = stand_in["outer"]().__code__
    try:
        yield
    finally:
        for function, original in swapped:
            function.__code__ = original


def _chapter_withheld(exercise: Exercise) -> tuple[str, ...]:
    """What the grader withholds while it grades ``exercise``'s chapter: every exercise's ``withheld`` there."""
    chapter = exercise.label.split("-")[1]
    try:
        others = importlib.import_module(f"{__package__}.ch{chapter}").EXERCISES
    except (ImportError, AttributeError):
        others = []
    return tuple(dict.fromkeys(name for one in [exercise, *others] for name in one.withheld or ()))


def _resolve(name: str) -> Any:
    """What a dotted name names: the longest importable module, then attributes (``module.Class.method``)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ImportError(name)


def _functions(name: str) -> list[str]:
    """The library functions ``name`` stands for: itself, or a class's own methods (a class is withheld whole)."""
    try:
        found = _resolve(name)
    except (ImportError, AttributeError, ValueError):
        found = None
    if isinstance(found, type):
        return [f"{name}.{attribute}" for attribute, value in vars(found).items() if inspect.isfunction(value)]
    if not name.startswith("transformerland.") or not hasattr(found, "__code__"):
        raise ValueError(f"withheld names {name!r}, which is not a function or class of the library.")
    return [name]


def _library_name(function: Any) -> str | None:
    """``module.function`` of a public function of the library outside the exercises, else None."""
    module, name = getattr(function, "__module__", "") or "", getattr(function, "__qualname__", "")
    public = module.startswith("transformerland.") and not module.startswith("transformerland.exercises")
    return f"{module}.{name}" if public and "<" not in name else None


@dataclass
class CheckResult:
    """The verdict on one exercise: truthy when it passed; printed as the checker's verdict line and hint."""

    exercise: str
    passed: bool
    message: str
    hint: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        line = f"{self.exercise} · {'PASSED' if self.passed else 'NOT YET'} · {self.message}"
        return line + (f"\n    Hint: {self.hint}" if self.hint else "")


#: How often this kernel has seen each slip of each exercise (the checker's stages).
_SEEN: Counter[tuple[str, str]] = Counter()


@dataclass(frozen=True)
class Exercise:
    """One coding exercise, declared once (see the module's docstring and CONTRIBUTING.md).

    Args:
        label: ``ex-<chapter>-<n>``.
        function: the name the student's function (or class) has in the handout, which the grader calls.
        checker: the name of the notebook's checker, ``check_…``.
        reference: the right answer to a call: ``reference(*args, **kwargs)`` (for a class exercise, the
            reference class, whose behaviour on the same call is the expected one).
        public: the notebook's calls.
        hidden: ``hidden(rng)``: the grader's calls, drawn with ``rng`` (a ``random.Random``).
        answer: what an answer must be, and how close: :class:`Exact` (default), :class:`Number`,
            :class:`Tensor`; None where the judge makes every check (a class exercise).
        slips: the typical wrong answers, tried in order, each with what to say in two stages.
        otherwise: what to say, in two stages, about a wrong answer no slip explains.
        judge: ``judge(got, expected, call) -> Slip | None``: checks of this exercise's own, made before the
            answer is compared (a class exercise's are all here); a Slip says what it found.
        withheld: library functions (``"transformerland.encodings.sinusoidal.sinusoidal_encoding"``) or classes
            (each of its own methods) that the grader's sandbox does not have; by default the reference, when it
            is one of the library's.
        points: the exercise's weight in the grade.
        what: a few words for the PASSED line (default: the function's name).
        visibility: when Gradescope shows the result: one of :data:`VISIBILITIES`.
        mutates: whether the function may write into its arguments (if not, doing so is NOT YET).
    """

    label: str
    function: str
    checker: str
    reference: Callable[..., Any]
    public: Sequence[Call]
    hidden: Callable[[random.Random], Sequence[Call]]
    answer: Kind | None = Exact()
    slips: Sequence[Slip] = ()
    otherwise: Slip = Slip(says="compare one of your answers with the definition, step by step, by hand.")
    judge: Callable[[Any, Any, Call], Slip | None] | None = None
    withheld: tuple[str, ...] | None = None
    points: float = 1.0
    what: str = ""
    visibility: str = "visible"
    mutates: bool = False

    def __post_init__(self) -> None:
        if not re.fullmatch(r"ex-\d+-\d+", self.label):
            raise ValueError(f"an exercise's label looks like 'ex-2-1', got {self.label!r}.")
        if not self.function.isidentifier() or not self.checker.startswith("check_"):
            raise ValueError(f"{self.label}: function is a Python name and checker starts with 'check_'.")
        if self.points <= 0 or self.visibility not in VISIBILITIES:
            raise ValueError(f"{self.label}: points are positive and visibility is one of {VISIBILITIES}.")
        if not self.public:
            raise ValueError(f"{self.label}: give the notebook at least one public call.")
        default = _library_name(self.reference)
        named = tuple(self.withheld) if self.withheld is not None else ((default,) if default else ())
        try:  # a misspelt name would otherwise withhold nothing, silently
            withheld = tuple(function for name in named for function in _functions(name))
        except ValueError as error:
            raise ValueError(f"{self.label}: {error}") from None
        object.__setattr__(self, "withheld", withheld)
        if self.answer is None and self.judge is None:
            raise ValueError(f"{self.label}: without an answer kind, the judge makes every check: give one.")
        for slip in self.slips:
            if (slip.wrong is None) == (slip.when is None) or not slip.says:
                raise ValueError(f"{self.label}: a slip has says, and either wrong or when (not both).")

    # --- the calls, and the student's answers to them ------------------------------------------------

    def cases(self, seed: int = PUBLIC_SEED) -> list[Call]:
        """The notebook's calls for :data:`PUBLIC_SEED`, else the hidden ones drawn with ``seed``."""
        return list(self.public) if seed == PUBLIC_SEED else list(self.hidden(random.Random(seed)))

    def answers(self, student: Any, seed: int = PUBLIC_SEED) -> list[Answer]:
        """``student``'s answers to the calls of ``seed`` (run here; the grader runs them in its sandbox)."""
        return [capture(student, c.args, c.kwargs, c.feeds) for c in self.cases(seed)]

    def texts(self) -> list[str]:
        """Every hint this exercise can show (for the tests that keep answers out of hints)."""
        return [text for slip in (*self.slips, self.otherwise) for text in (slip.says, slip.then) if text]

    # --- deciding (in the notebook, or in the grader's own process) -----------------------------------

    def grade(self, answers: Sequence[Answer], seed: int = PUBLIC_SEED, stage: Callable[[str], int] = lambda key: 1):
        """The verdict on ``answers`` to the calls of ``seed``, against the reference computed here.

        The first wrong answer ends it with NOT YET: what is wrong, and (``stage(key)`` of 2 or more for that
        fault) the stronger hint. A missing answer is NOT YET too.
        """
        calls, hidden = self.cases(seed), seed != PUBLIC_SEED
        for number, (one, answer) in enumerate(zip(calls, [*answers, *[None] * len(calls)], strict=False)):
            where = "on one of the grader's calls" if hidden else one.shown(self.function)
            if answer is None:
                return self._result(False, f"no answer came back for call {number + 1} of {len(calls)}", "")
            fault = self._fault(one, answer, hidden)
            if fault is not None:
                problem, slip = fault
                says = _filled(slip.says, self.reference, one, hidden)
                then = _filled(slip.then, self.reference, one, hidden) if stage(slip.says) >= 2 else ""
                message = f"{where}: {problem}" if problem else f"{where}: {says}"
                second = then[:1].upper() + then[1:] if says.endswith((".", "?", "!")) else then  # a new sentence
                joined = says + (" " + second if then else "")
                return self._result(False, message, joined if problem else then)
        agree = f"all {len(calls)} calls agree" if len(calls) > 1 else "its call agrees"
        return self._result(True, f"{self.what or self.function}: {agree}.", "")

    def _result(self, passed: bool, message: str, hint: str) -> CheckResult:
        return CheckResult(self.label, passed, message, hint)

    def _fault(self, one: Call, answer: Answer, hidden: bool) -> tuple[str, Slip] | None:
        """What is wrong with ``answer`` to ``one``: the problem in words ("" when a slip says it all) and the slip."""
        if answer.raised == "ForbiddenCall":
            return "", Slip(says=f"it calls the library's own answer ({answer.message}): write it yourself.")
        if answer.raised == "NotImplementedError":
            return "", Slip(says="the function is not written yet (it raised NotImplementedError).")
        if answer.raised:
            where = f"look at where it raised (line {answer.lineno}: {answer.line.strip()})."
            if not answer.line:  # the call itself failed: the function does not take these arguments
                where = "the call itself failed: compare your function's parameters with the handout's."
            return f"it raised {answer.raised}: {answer.message}", Slip(says=where)
        if answer.after is not None and not self.mutates:
            return "", Slip(says="it changed the arguments it was given: compute the result in a new tensor.")
        expected = self._expected(one)
        try:
            found = self.judge(answer.value, expected, one) if self.judge is not None else None
            problem = self.answer.fault(answer.value, expected, hidden) if found is None and self.answer else None
        except Exception as error:  # an answer of a shape the checks did not foresee: a verdict, not a crash
            return f"its answer could not be checked ({type(error).__name__}: {error})"[:300], self.otherwise
        if found is not None:
            return "", found
        if problem is None:
            return None
        slip = next((s for s in self.slips if self._matches(s, answer.value, one)), None)
        return ("", slip) if slip is not None else (problem, self.otherwise)

    def _expected(self, one: Call) -> Any:
        if one.feeds is not None:
            return capture(self.reference, one.args, one.kwargs, one.feeds).value
        return self.reference(*one.args, **one.kwargs)

    def _matches(self, slip: Slip, got: Any, one: Call) -> bool:
        try:
            if slip.when is not None:
                return bool(slip.when(got, *one.args, **one.kwargs))
            return self.answer is not None and self.answer.close(got, slip.wrong(*one.args, **one.kwargs))  # type: ignore[misc]
        except Exception:  # a slip that does not apply to this call
            return False

    # --- the notebook's checker ------------------------------------------------------------------------

    def check(self, student: Any, quiet: bool = False) -> CheckResult:
        """Run ``student`` on the public calls here, print the verdict (hints grow on a repeated slip), return it."""
        if not callable(student):
            result = self._result(
                False,
                f"expected a function, got {type(student).__name__}",
                "pass the function itself, without calling it: check(my_function), not check(my_function()).",
            )
        else:
            with _withholding(_chapter_withheld(self)):
                answers = self.answers(student)
            seen: list[str] = []

            def stage(key: str) -> int:
                seen.append(key)
                return _SEEN[self.label, key] + 1

            result = self.grade(answers, PUBLIC_SEED, stage)
            for key in seen:
                _SEEN[self.label, key] += 1
        if not quiet:
            print(result)
        return result

    def checker_function(self) -> Callable[[Any], CheckResult]:
        """:meth:`check` as a function named :attr:`checker`, for ``from … import check_…``."""

        def checker(student: Any) -> CheckResult:
            return self.check(student)

        checker.__name__ = checker.__qualname__ = self.checker
        checker.__doc__ = f"{self.label}: check your ``{self.function}``; prints the verdict and returns it."
        return checker


def _filled(text: str, reference: Callable[..., Any], one: Call, hidden: bool) -> str:
    """``text`` with its ``{name}`` fields filled from the call's arguments by name (their names when hidden)."""
    if "{" not in text:
        return text
    try:
        named = inspect.signature(reference).bind(*one.args, **one.kwargs)
        named.apply_defaults()
        fields = {k: k if hidden else _show(v) if hasattr(v, "shape") else v for k, v in named.arguments.items()}
    except (TypeError, ValueError):
        fields = {}
    try:
        return text.format_map(_Missing(fields))
    except (ValueError, IndexError, AttributeError, KeyError):  # braces that are not fields (a student's line)
        return text


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
