"""Exercises as data: one declarative spec per coding exercise, for the notebook, the grader and Gradescope.

An :class:`Exercise` says everything about one coding exercise (the chapters build theirs with
:func:`declared`, from data and code, below; this is what chapter 1's amounts to)::

    SINGLE_HEAD_ATTENTION = Exercise(
        label="ex-1-2",
        what="single-head attention",
        checker="check_single_head_attention",   # the name the notebook calls
        function="my_attention",                 # the name the chapter's solution defines
        signature="(x (T, D), w_q (D, d_k), w_k (D, d_k), w_v (D, d_v)) -> Tensor (T, d_v)",
        cases=_cases,                            # seed -> [Case(args, problem=..., hint=...), ...]
        reference=_reference,                    # the right answer to each case
        tolerance=tensors_close(atol=1e-5, rtol=1e-4),
        mistakes=_mistakes,                      # case -> [Mistake(what the slip returns, its hint), ...]
        judge=_judge,                            # optional: the checks on one answer (default: same type, close)
        points=2,
        forbids=("transformerland.attention.single_head_attention",),
    )
    check_single_head_attention = SINGLE_HEAD_ATTENTION.checker_function()   # what the notebook imports

The same spec serves three callers:

* the notebook (:meth:`Exercise.check`): the student's function runs on the **public** cases
  (``cases(PUBLIC_SEED)``) in the student's own kernel, and one verdict line is printed at once;
* the bulk grader and Gradescope (:meth:`Exercise.grade`): the student's function runs in a sandbox on the
  **hidden** cases (``cases(seed)`` with a seed the grader draws), its answers come back as data
  (:mod:`~transformerland.exercises.codec`), and the verdict is decided here, in the grader's own process,
  against the reference computed here;
* anything else that can call a Python function on inputs (Otter-Grader, nbgrader): :meth:`Exercise.grade`
  takes a list of answers and returns a :class:`~transformerland.exercises.checking.CheckResult`.

``forbids`` names library functions the student must write, not call: while the student's function runs
(in the notebook and in the sandbox), each of them raises :class:`ForbiddenCall`.

A chapter declares its exercises in two parts (:func:`declared`): the words and numbers in a TOML file beside
its module (``ch8.toml``: names, signature, points, the public calls, the problem and hint texts, and the
hint for each typical slip, by key), and the parts that are code in the module (``ch8.py``: the reference, the
hidden cases' draw, and ``slips``, what each typical slip returns on a case, under the same keys).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.resources
import inspect
import math
import re
import tomllib
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .checking import Check, CheckFailed, CheckResult, Mistake, hint_for, numbers_close, tensors_close, tensors_equal

__all__ = [
    "PUBLIC_SEED",
    "VISIBILITIES",
    "Answer",
    "Case",
    "Exercise",
    "ForbiddenCall",
    "chapter_data",
    "compare",
    "declared",
    "default_judge",
    "forbidding",
    "int_answer",
    "number_answer",
    "numbers_answer",
    "same_answer",
    "tensor_answer",
]

#: When Gradescope shows a test's result to the student.
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")

#: The seed of the cases the notebook's checker runs; the grader draws its own for the hidden ones.
PUBLIC_SEED = 0


@dataclass(frozen=True)
class Case:
    """One call of the student's function, and what a wrong answer to it means.

    Args:
        args, kwargs: the call's arguments (tensors, numbers, strings, lists, tuples, dicts).
        problem: the verdict's message when the answer is wrong.
        hint: the hint when the wrong answer matches none of the spec's mistakes.
        mistakes: whether to look the wrong answer up among the spec's mistakes for this case.
        tag: a short name the spec's own judge may use to tell its cases apart.
    """

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    problem: str = "the values are wrong"
    hint: str = ""
    mistakes: bool = True
    tag: str = ""

    def fresh(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Copies of the arguments (tensors cloned), so that a function that writes into them changes nothing."""
        return tuple(_copy(a) for a in self.args), {k: _copy(v) for k, v in self.kwargs.items()}

    def shown(self) -> str:
        """The call's arguments in words, ``(5, 4, base=100.0)``; a tensor shows as its shape."""
        words = [_show(a) for a in self.args] + [f"{k}={_show(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(words) + ")"


@dataclass(frozen=True)
class Answer:
    """What the student's function did on one case: returned ``value``, or raised.

    A raise is kept as data: the exception's class name, its message, and the line of the student's code it
    came from (``line`` and ``lineno``); ``forbidden`` names the library function it called, if that was it.
    """

    value: Any = None
    raised: str = ""
    message: str = ""
    line: str = ""
    lineno: int = 0
    forbidden: str = ""
    after: tuple[Any, ...] | None = None

    @classmethod
    def of(cls, fn: Callable[..., Any], case: Case, forbids: Sequence[str] = ()) -> Answer:
        """Call ``fn`` on ``case`` (fresh copies of its arguments), with ``forbids`` raising; keep what happened.

        ``after`` keeps the positional arguments as the call left them, when it changed any of them.
        """
        args, kwargs = case.fresh()
        try:
            with forbidding(forbids):
                value = fn(*args, **kwargs)
        except ForbiddenCall as error:
            return cls(raised="ForbiddenCall", message=str(error), forbidden=error.name)
        except Exception as error:  # the student's bug, kept as data
            where = traceback.extract_tb(error.__traceback__)[-1]
            return cls(raised=type(error).__name__, message=str(error), line=where.line or "", lineno=where.lineno or 0)
        return cls(value=value, after=None if _same(args, tuple(case.args)) else args)

    def to_data(self) -> dict[str, Any]:
        """The answer's fields other than ``value``, as JSON-ready data."""
        return {k: getattr(self, k) for k in ("raised", "message", "line", "lineno", "forbidden")}


class ForbiddenCall(Exception):
    """Raised by a library function that the exercise asks the student to write rather than call."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is the library's own answer; this exercise asks you to write it yourself")
        self.name = name


def _resolve(name: str) -> Any:
    """The function ``package.module.function`` names."""
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


@contextmanager
def forbidding(names: Sequence[str]) -> Iterator[None]:
    """Inside the block, each library function in ``names`` raises :class:`ForbiddenCall`, however it is reached.

    The function's code is swapped (not the name it is bound to), so an alias imported earlier
    (``from transformerland.attention import single_head_attention as sha``) raises too.
    """
    swapped = []
    for name in names:
        function = _resolve(name)
        raiser: dict[str, Any] = {}
        exec(  # a code object without free variables, so that it can stand in for any plain function's
            "def raiser(*args, **kwargs):\n"
            f"    raise __import__('transformerland.exercises.spec', fromlist=['_']).ForbiddenCall({name!r})\n",
            raiser,
        )
        swapped.append((function, function.__code__))
        function.__code__ = raiser["raiser"].__code__
    try:
        yield
    finally:
        for function, code in swapped:
            function.__code__ = code


def same_answer(got: Any, expected: Any) -> bool:
    """Exact equality for plain answers (ints, strings, lists) and tensors; floats within 1e-9 of each other."""
    if isinstance(got, float) or isinstance(expected, float):
        return isinstance(got, (int, float)) and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)
    if hasattr(expected, "shape") and hasattr(expected, "dtype"):  # a tensor: the same shape and values
        import torch

        return isinstance(got, torch.Tensor) and got.shape == expected.shape and bool(torch.equal(got, expected))
    return type(got) is type(expected) and got == expected


def _copy(value: Any) -> Any:
    clone = getattr(value, "clone", None)
    if callable(clone):
        return clone()
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _show(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"a tensor of shape {tuple(shape)}"
    return repr(value)


Judge = Callable[[Check, "Exercise", Case, Any, Any], None]


def compare(
    check: Check,
    spec: Exercise,
    case: Case,
    got: Any,
    expected: Any,
    close: Callable[[Any, Any], bool] | None = None,
    problem: str | None = None,
) -> None:
    """Record one check: ``got`` is close to ``expected`` (by ``close``, default the spec's tolerance).

    A wrong answer stops with ``problem`` (default: the case's; a ``{got}`` field in it is filled with the
    answer) and the hint of the slip it matches among the spec's for this case (none where the case says
    ``mistakes = false``), or else the case's hint, or else the spec's.
    """
    close = close or spec.tolerance
    if _safely(close)(got, expected):
        check.that(True, "", "")
        return
    mistakes = spec.mistakes(case) if case.mistakes else []
    words = _GOT.sub(lambda field: ("{0" + field.group(1)[3:] + "}").format(got), problem or case.problem)
    check.fail(words, hint_for(got, mistakes, _safely(close), case.hint or spec.hint))


#: A ``{got}`` field of a problem (``{got!r}``, ``{got:.3g}``): filled with the answer, the rest left as it is.
_GOT = re.compile(r"\{(got[^{}]*)\}")


def default_judge(check: Check, spec: Exercise, case: Case, got: Any, expected: Any) -> None:
    """The answer must be ``tolerance``-close to the reference; a wrong one gets the hint of the mistake it matches."""
    compare(check, spec, case, got, expected)


def number_answer(what: str) -> Judge:
    """A judge for an answer that is one number (an int, a float, a one-element tensor): ``what`` names it."""

    def judge(check: Check, spec: Exercise, case: Case, got: Any, expected: Any) -> None:
        compare(check, spec, case, check.number(got, what), expected)

    return judge


def int_answer(problem: str, hint: str, none: bool = False) -> Judge:
    """A judge for an answer that is a whole number: a Python int (not a bool), or ``None`` where ``none``.

    Any other answer stops with ``problem`` (``{got!r}``, ``{kind}``, its type's name, and ``{args!r}``, the
    call's arguments, filled in) and ``hint``.
    """

    def judge(check: Check, spec: Exercise, case: Case, got: Any, expected: Any) -> None:
        whole = (got is None and none) or (isinstance(got, int) and not isinstance(got, bool))
        check.that(whole, problem.format(got=got, kind=type(got).__name__, args=case.args), hint)
        compare(check, spec, case, got, expected)

    return judge


def numbers_answer(
    what: str,
    shape_hint: str = "return {what} of shape {shape}.",
    shape_problem: str = "for {call} it returned shape {got}",
) -> Judge:
    """A judge for an answer that is a tensor (or list) of numbers of the reference's shape.

    ``what`` names the answer; ``shape_problem`` and ``shape_hint`` are the verdict on a wrong shape, with
    ``{what}``, ``{call}``, ``{got}`` (the answer's shape), ``{shape}`` and ``{n}`` (the reference's shape and
    length) filled in.
    """

    def judge(check: Check, spec: Exercise, case: Case, got: Any, expected: Any) -> None:
        got = check.numbers(got, what)
        shape = tuple(expected.shape)
        fields = {"what": what, "call": case.shown(), "got": tuple(got.shape), "shape": shape}
        fields["n"] = shape[0] if shape else 1
        check.that(tuple(got.shape) == shape, shape_problem.format(**fields), shape_hint.format(**fields))
        compare(check, spec, case, got, expected.to(got.dtype))

    return judge


def tensor_answer(
    tensor_hint: str,
    shape_hint: str,
    shape_problem: str = "for {call} it returned shape {got}; expected {expected}",
    convert: Callable[[Any, Any], Any] = lambda got, expected: got.to(expected.dtype),
) -> Judge:
    """A judge for an answer that is a tensor of the reference's shape: a tensor (else ``tensor_hint``), the
    shape (else ``shape_problem`` with ``{call}``, ``{got}``, ``{expected}`` and ``{first}``, the first argument's
    shape, filled in, and ``shape_hint``), then ``convert(answer, reference)`` compared."""

    def judge(check: Check, spec: Exercise, case: Case, got: Any, expected: Any) -> None:
        got = check.tensor(got, hint=tensor_hint)
        shape, first = tuple(expected.shape), tuple(getattr(case.args[0], "shape", ()))
        problem = shape_problem.format(call=case.shown(), got=tuple(got.shape), expected=shape, first=first)
        check.shape(got, shape, problem, hint=shape_hint)
        compare(check, spec, case, convert(got.detach(), expected), expected)

    return judge


def _safely(close: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """``close``, False where it raises (an answer of another type or shape is close to nothing)."""

    def safe(a: Any, b: Any) -> bool:
        try:
            return bool(close(a, b))
        except (TypeError, ValueError, RuntimeError, AttributeError, IndexError):
            return False

    return safe


@dataclass(frozen=True)
class Exercise:
    """One coding exercise as data (see the module's docstring for an example).

    Args:
        label: ``ex-<chapter>-<n>``.
        what: a few words for the PASSED message, ``"single-head attention"``.
        checker: the name the notebook calls, ``"check_single_head_attention"``.
        function: the name of the function (or class) the chapter's solution defines, which the grader calls.
        signature: the call and what it returns, in words, for the checker's docstring.
        cases: ``seed -> [Case, ...]``; :data:`PUBLIC_SEED` gives the notebook's cases, any other seed hidden ones
            of the same kinds.
        reference: the right answer: ``reference(*case.args, **case.kwargs)``.
        tolerance: ``(got, expected) -> bool``; :func:`same_answer` by default.
        mistakes: ``case -> [Mistake, ...]``: what each typical slip returns on that case, with its hint.
        hint: the hint when a wrong answer matches no mistake and its case gives none.
        judge: the checks on one answer, ``judge(check, spec, case, got, expected)``; :func:`default_judge` by
            default. It may call ``check.that``/``check.fail`` any number of times.
        probe: for an exercise whose answer is not plain data (a class), ``probe(student, case) -> data``: what
            the student's class (or function) does on the case, run where the student's code runs. The grader
            imports the spec by its module-level name in the probe's module.
        points: the exercise's weight in the grade.
        forbids: library functions (``"transformerland.attention.single_head_attention"``) that raise while the
            student's code runs.
        visibility: when Gradescope shows the student this exercise's result: ``"visible"``,
            ``"after_due_date"``, ``"after_published"`` or ``"hidden"``.
        texts: the judge's own messages by key, read with :meth:`say`.
        changes_arguments: whether the function may write into its positional arguments; if not (the default),
            an answer that changed them is NOT YET with ``changed_problem`` and ``changed_hint``.
        changed_problem, changed_hint: that verdict's words.
    """

    label: str
    what: str
    checker: str
    function: str
    signature: str
    cases: Callable[[int], list[Case]]
    reference: Callable[..., Any]
    tolerance: Callable[[Any, Any], bool] = same_answer
    mistakes: Callable[[Case], list[Mistake]] = lambda case: []
    hint: str = "compare one answer with the exercise's formula, step by step."
    judge: Judge = default_judge
    probe: Callable[[Any, Case], Any] | None = None
    points: float = 1.0
    forbids: tuple[str, ...] = ()
    visibility: str = "visible"
    changes_arguments: bool = False
    changed_problem: str = "the function changed the arguments it was given"
    changed_hint: str = "compute the result in a new tensor; do not write into the arguments."
    texts: Mapping[str, str] = field(default_factory=dict)

    def say(self, key: str, *args: Any, **fields: Any) -> str:
        """The judge's message ``texts[key]`` with ``args`` (``{0}``, …) and ``fields`` (``{got}``, …) filled in."""
        if key not in self.texts:
            raise ValueError(f"{self.label}: the judge asks for the text {key!r}, which the chapter's data lacks.")
        return self.texts[key].format(*args, **fields)

    def said(self, key: str, *args: Any, **fields: Any) -> tuple[str, str]:
        """A problem and its hint, ``texts[key]`` and ``texts[key + "_hint"]``, filled in as by :meth:`say`.

        For a judge's own checks: ``check.that(condition, *spec.said("not_a_band", got=got))``.
        """
        return self.say(key, *args, **fields), self.say(key + "_hint", *args, **fields)

    def __post_init__(self) -> None:
        Check(self.label, self.what, quiet=True)  # raises on a malformed label
        if not self.checker.startswith("check_"):
            raise ValueError(f"{self.label}: a checker's name starts with 'check_', got {self.checker!r}.")
        if not self.function.isidentifier():
            raise ValueError(f"{self.label}: function must be a Python name, got {self.function!r}.")
        if self.points <= 0:
            raise ValueError(f"{self.label}: points must be positive, got {self.points}.")
        if self.visibility not in VISIBILITIES:
            raise ValueError(f"{self.label}: visibility is one of {VISIBILITIES}, got {self.visibility!r}.")
        for name in self.forbids:  # a misspelt name would otherwise fail every student, blaming their code
            try:
                function = _resolve(name) if isinstance(name, str) and name.startswith("transformerland.") else None
            except (ImportError, AttributeError):
                function = None
            if not hasattr(function, "__code__"):  # forbidding swaps a Python function's code
                raise ValueError(f"{self.label}: forbids names {name!r}, which is not a function of the library.")

    # --- running the student's code (in the notebook, or inside the sandbox) ---------------------------

    def answer(self, student: Any, case: Case) -> Answer:
        """What ``student`` (the function or class the exercise asks for) gives on ``case``, as an :class:`Answer`."""
        if self.probe is None:
            return Answer.of(student, case, self.forbids)
        probe = self.probe
        return Answer.of(lambda *args, **kwargs: probe(student, Case(args, kwargs)), case, self.forbids)

    def answers(self, student: Any, seed: int = PUBLIC_SEED) -> list[Answer]:
        """The student's answers to every case of ``seed``."""
        return [self.answer(student, case) for case in self.cases(seed)]

    # --- deciding (in the notebook, or in the grader's own process) -----------------------------------

    def grade(self, answers: Sequence[Answer], seed: int = PUBLIC_SEED, quiet: bool = True) -> CheckResult:
        """The verdict on ``answers`` to the cases of ``seed``, against the reference computed here.

        The first wrong answer ends it with NOT YET, its problem and hint; a missing answer (fewer answers
        than cases) is NOT YET too.
        """
        cases = self.cases(seed)
        with Check(self.label, self.what, quiet=quiet) as check:
            for number, case in enumerate(cases):
                if number >= len(answers):
                    check.fail(
                        f"no answer came back for case {number + 1} of {len(cases)}",
                        "run every cell of the notebook, top to bottom, and keep the function's name.",
                    )
                got = self._value(answers[number], case)
                if answers[number].after is not None and not self.changes_arguments:
                    check.fail(self.changed_problem, self.changed_hint)
                self.judge(check, self, case, got, self.reference(*case.fresh()[0], **case.fresh()[1]))
        return check.result

    def _value(self, answer: Answer, case: Case) -> Any:
        """The answer's value, or the verdict its raise deserves."""
        if answer.forbidden:
            raise CheckFailed(
                f"it calls {answer.forbidden}, the library's own answer",
                "this exercise asks you to write the computation yourself, without that function.",
            )
        if answer.raised == "NotImplementedError":
            raise CheckFailed(
                "the function is not written yet (it raised NotImplementedError)",
                "replace the stub's body with your code.",
            )
        if answer.raised:
            raise CheckFailed(
                f"calling it with {case.shown()} raised {answer.raised}: {answer.message}",
                f"look at line {answer.lineno} of your code ({answer.line}).",
            )
        return answer.value

    def check(self, student: Any, quiet: bool = False) -> CheckResult:
        """The notebook's checker: run ``student`` on the public cases here, print the verdict, return it."""
        if not callable(student):
            result = CheckResult(
                self.label,
                False,
                f"expected a function, got {type(student).__name__}",
                "pass the function itself, without calling it: check(my_function), not check(my_function()).",
            )
            if not quiet:
                print(result)
            return result
        return self.grade(self.answers(student), PUBLIC_SEED, quiet=quiet)

    def checker_function(self) -> Callable[[Any], CheckResult]:
        """:meth:`check` as a function named :attr:`checker`, with a docstring, for ``from … import check_…``."""

        def checker(student: Any) -> CheckResult:
            return self.check(student)

        checker.__name__ = checker.__qualname__ = self.checker
        checker.__doc__ = f"{self.label}: ``{self.function}{self.signature}``. Prints the verdict and returns it."
        return checker


def _same(a: Any, b: Any) -> bool:
    if hasattr(a, "shape") and hasattr(b, "shape") and hasattr(a, "dtype"):
        import torch

        return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and (a == b or (a != a and b != b))  # nan equals nan here


# --- a chapter's exercises as data (TOML) plus code --------------------------------------------------

#: The keys an exercise's table may hold in a chapter's TOML file, beyond ``public``, ``problem``, ``cases``,
#: ``mistakes``, ``tolerance`` and ``answer`` (see :func:`declared`).
_FIELDS = {f.name for f in dataclasses.fields(Exercise)} - {"label", "cases", "reference", "mistakes", "probe", "judge"}

#: The judges a chapter's data can name as its exercise's ``answer.kind``, with their words as the other keys.
_JUDGES: dict[str, Callable[..., Judge]] = {
    "number": number_answer,
    "numbers": numbers_answer,
    "int": int_answer,
    "tensor": tensor_answer,
}


def _tolerance(label: str, words: str | Mapping[str, float]) -> Callable[[Any, Any], bool]:
    """``"exact"`` (tensors equal), ``{atol, rtol}`` (tensors close) or ``{rel_tol, abs_tol}`` (numbers close)."""
    if words == "exact":
        return tensors_equal
    if isinstance(words, Mapping) and set(words) and set(words) <= {"atol", "rtol"}:
        return tensors_close(**words)
    if isinstance(words, Mapping) and set(words) and set(words) <= {"rel_tol", "abs_tol"}:
        return numbers_close(**words)
    raise ValueError(f"{label}: a tolerance is 'exact', {{atol, rtol}} or {{rel_tol, abs_tol}}, got {words!r}.")


def _judge(label: str, words: Mapping[str, Any]) -> Judge:
    """The judge an ``answer`` table names by its ``kind``, made with the table's other words."""
    words = dict(words)
    kind = words.pop("kind", None)
    if kind not in _JUDGES:
        raise ValueError(f"{label}: answer.kind is one of {sorted(_JUDGES)}, got {kind!r}.")
    allowed = set(inspect.signature(_JUDGES[kind]).parameters) - {"convert"}
    if set(words) - allowed:
        raise ValueError(
            f"{label}: an answer of kind {kind!r} takes {sorted(allowed)}, not {sorted(set(words) - allowed)}."
        )
    return _JUDGES[kind](**words)


#: The texts a case's tag may give it, and those a slip may have.
_CASE_WORDS, _SLIP_WORDS = {"problem", "hint", "mistakes"}, {"hint", "problem"}


def _check_words(
    label: str, table: Mapping[str, Any], tagged: Mapping[str, Any], hints: Mapping[str, Any], code: Mapping[str, Any]
) -> None:
    """Refuse, naming the exercise, data that would be ignored or fail later: unknown or misspelt keys, a slip
    without a hint, a judge or tolerance given twice."""
    unknown = set(table) - _FIELDS - {"answer"}
    if unknown:
        raise ValueError(f"{label}: unknown keys {sorted(unknown)} in the chapter's data.")
    for tag, words in tagged.items():
        if not isinstance(words, Mapping) or set(words) - _CASE_WORDS:
            raise ValueError(f"{label}: cases.{tag} may hold {sorted(_CASE_WORDS)}, got {words!r}.")
    for key, words in hints.items():
        if not isinstance(words, str) and not (
            isinstance(words, Mapping) and "hint" in words and set(words) <= _SLIP_WORDS
        ):
            raise ValueError(f"{label}: mistakes.{key} is a hint, or a table of {sorted(_SLIP_WORDS)} with a hint.")
    if isinstance(table.get("forbids"), str):
        raise ValueError(f"{label}: forbids is a list of names, got the string {table['forbids']!r}.")
    for field_name, data_name in (("judge", "answer"), ("tolerance", "tolerance")):
        if field_name in code and data_name in table:
            raise ValueError(f"{label}: {data_name} is given in the data and {field_name} in code; keep one.")


def chapter_data(module: str) -> dict[str, dict[str, Any]]:
    """The exercises of the chapter module ``module`` (its ``__name__``) as data, by label: the TOML file beside it,
    in the module's own package (the library's chapters, or an instructor's package of specs)."""
    package, _, name = module.rpartition(".")
    return tomllib.loads(importlib.resources.files(package).joinpath(name + ".toml").read_text(encoding="utf-8"))


def declared(
    data: Mapping[str, Mapping[str, Any]],
    label: str,
    *,
    reference: Callable[..., Any],
    cases: Callable[[int], list[Case]] | None = None,
    hidden: Callable[[int], Sequence[Sequence[Any]]] | None = None,
    inputs: Callable[..., tuple[Any, ...]] | None = None,
    slips: Callable[..., Mapping[str, Any]] | None = None,
    words: Callable[..., Mapping[str, Any]] | None = None,
    **code: Any,
) -> Exercise:
    """The exercise ``label``: its words and numbers from ``data`` (:func:`chapter_data`), the rest from code.

    ``data[label]`` holds :class:`Exercise`'s plain fields (``what``, ``checker``, ``function``, ``signature``,
    ``hint``, ``points``, ``forbids``, ``texts``, …) and:

    * ``public``: the notebook's calls, each a list of positional arguments that may end with a table of
      keyword arguments (``[50, 64, {layout = "concatenated"}]``; so a function whose last argument is itself
      a dict takes its cases from ``cases`` instead), and ``problem``, their cases' problem (``{0}``,
      ``{1:g}``, … and keyword fields filled in from the call's data; a ``{got}`` field, ``{got!r}`` too, is
      left for the answer). The grader's calls for any other seed are ``hidden(seed)``'s, in the same form.
      ``inputs(*call)``, if given, turns a call's data into the function's arguments (lists into tensors);
    * ``cases``: texts by tag, ``{tag = {problem, hint, mistakes}}``, for the cases a ``cases(seed)`` function
      makes instead of ``public`` and ``hidden`` (not beside them). A case's problem is its tag's, else the
      one its code gave, else the exercise's ``problem``; it is filled in from the case's arguments, as above.
      ``mistakes = false`` says a wrong answer to that case is not looked up among the slips;
    * ``mistakes``: the typical slips in the order they are tried, ``key = "hint"`` or
      ``key = {hint = "…", problem = "…"}`` (a slip's problem is shown by a judge of the chapter's that
      reads it, as chapter 2's; :func:`compare` shows the case's);
      ``slips(*args, **kwargs)`` returns each one's answer to a case by the same key (a slip that does not
      apply to a case is left out); ``words(*args, **kwargs)``, if given, fills the fields of their hints and
      problems (``{d_k}``) for that case;
    * ``texts``: the messages of a judge written in code, read with :meth:`Exercise.say` and
      :meth:`Exercise.said` (a problem under ``key``, its hint under ``key_hint``);
    * ``tolerance``: ``"exact"``, ``{atol, rtol}`` or ``{rel_tol, abs_tol}``;
    * ``answer``: a judge by kind, ``{kind = "number" | "numbers" | "int" | "tensor", …}`` with the words of
      :func:`number_answer`, :func:`numbers_answer`, :func:`int_answer` or :func:`tensor_answer`.

    Braces in the texts are fields, filled in as said; write ``{{`` and ``}}`` for a brace itself. The
    ``hint`` of the exercise and of a case are shown as written. ``code``: the other :class:`Exercise` fields
    that are code (``tolerance`` and ``judge``, where the data gives none; ``probe``). Data that would be
    ignored or fail later (a misspelt key, a judge in both places) is refused here, naming the exercise.
    """
    table = dict(data[label])
    public, problem = table.pop("public", None), table.pop("problem", None)
    tagged, hints = table.pop("cases", {}), table.pop("mistakes", {})
    _check_words(label, table, tagged, hints, code)
    if "tolerance" in table:
        table["tolerance"] = _tolerance(label, table["tolerance"])
    if "answer" in table:
        table["judge"] = _judge(label, table.pop("answer"))
    table["forbids"] = tuple(table.get("forbids", ()))
    if cases is not None and (public is not None or hidden is not None or inputs is not None):
        raise ValueError(f"{label}: give cases in code, or public calls in the data and hidden in code, not both.")
    if cases is None:
        if public is None or hidden is None:
            raise ValueError(f"{label}: give cases, or public calls in the data and hidden in the code.")

        def cases(seed: int) -> list[Case]:
            calls = public if seed == PUBLIC_SEED else hidden(seed)
            return [_called(call, problem or _DEFAULT_PROBLEM, inputs) for call in calls]

    made = cases

    def texted(seed: int) -> list[Case]:
        """The cases, each with its tag's texts; a case the code left the default problem gets the data's."""
        return [_texted(case, _texts_of(case, tagged.get(case.tag, {}), problem)) for case in made(seed)]

    def mistakes(case: Case) -> list[Mistake]:
        if slips is None:
            return []
        answers = slips(*case.args, **case.kwargs)
        if set(answers) - set(hints):
            raise ValueError(f"{label}: slips {sorted(set(answers) - set(hints))} have no hint in the data.")
        fields = words(*case.args, **case.kwargs) if words is not None else {}
        return [_mistake(key, answers[key], hints[key], fields) for key in hints if key in answers]

    return Exercise(label=label, cases=texted, reference=reference, mistakes=mistakes, **{**table, **code})


def _filled(problem: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """``problem`` with the call's arguments filled in; a ``{got}`` field (``{got!r}``, ``{got:.3g}``) stays as it
    is, for :func:`compare` to fill with the answer."""
    return _GOT.sub(r"{{\1}}", problem).format(*args, **kwargs)


def _called(call: Sequence[Any], problem: str, inputs: Callable[..., tuple[Any, ...]] | None) -> Case:
    """The case of one call of the data: positional arguments, then perhaps a table of keyword arguments."""
    args, kwargs = list(call), {}
    if args and isinstance(args[-1], Mapping):
        kwargs = dict(args.pop())
    return Case(tuple(inputs(*args)) if inputs else tuple(args), kwargs, problem=_filled(problem, args, kwargs))


_DEFAULT_PROBLEM = Case.__dataclass_fields__["problem"].default


def _texts_of(case: Case, tagged: Mapping[str, Any], problem: str | None) -> Mapping[str, Any]:
    """The texts the data gives ``case``: its tag's, and the exercise's ``problem`` where neither code nor tag did."""
    if problem is None or "problem" in tagged or case.problem != _DEFAULT_PROBLEM:
        return tagged
    return {**tagged, "problem": problem}


def _texted(case: Case, texts: Mapping[str, Any] | None) -> Case:
    """``case`` with the texts its tag has in the data, its problem filled in from its arguments."""
    if not texts:
        return case
    texts = dict(texts)
    if "problem" in texts:
        texts["problem"] = _filled(texts["problem"], case.args, case.kwargs)
    return dataclasses.replace(case, **texts)


def _mistake(key: str, answer: Any, words: str | Mapping[str, str], fields: Mapping[str, Any]) -> Mistake:
    """The slip's answer with its hint (and problem), their ``{fields}`` filled in."""
    hint, problem = (words, "") if isinstance(words, str) else (words["hint"], words.get("problem", ""))
    return Mistake(answer, hint.format(**fields), problem.format(**fields), key)
