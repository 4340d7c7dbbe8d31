"""transformerland.exercises.spec: one declarative spec serves the notebook's checker and the grader."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest
import torch
import transformerland.exercises
from transformerland.attention import single_head_attention as aliased
from transformerland.exercises.ch1 import SINGLE_HEAD_ATTENTION, check_single_head_attention
from transformerland.exercises.checking import Mistake
from transformerland.exercises.spec import (
    PUBLIC_SEED,
    Answer,
    Case,
    Exercise,
    ForbiddenCall,
    chapter_data,
    declared,
    forbidding,
)


def doubling_spec(**changes) -> Exercise:
    fields = dict(
        label="ex-9-1",
        what="doubling",
        checker="check_double",
        function="double",
        signature="(x: int) -> int",
        cases=lambda seed: [Case((2 + seed,)), Case((-3,), problem="negative numbers", hint="negatives too")],
        reference=lambda x: 2 * x,
        mistakes=lambda case: [Mistake(case.args[0] ** 2, "you squared it")],
    )
    return Exercise(**{**fields, **changes})


def test_the_same_spec_decides_live_calls_and_answers_sent_as_data():
    spec = doubling_spec()
    assert spec.check(lambda x: 2 * x, quiet=True)
    assert spec.grade([Answer(8), Answer(-6)], seed=2)  # hidden cases: the seed the grader draws
    assert not spec.grade([Answer(4), Answer(-6)], seed=2)  # the public answer to a hidden case
    squared = spec.check(lambda x: x * x, quiet=True)
    assert not squared and squared.hint == "you squared it"
    assert spec.grade([Answer(4)]).message == "no answer came back for case 2 of 2"


def test_a_raise_comes_back_as_data_and_becomes_the_verdict():
    def stub(x):
        raise NotImplementedError

    def buggy(x):
        return [][x]

    spec = doubling_spec()
    answer = Answer.of(buggy, Case((2,)))
    assert answer.raised == "IndexError" and answer.lineno > 0 and "[][x]" in answer.line
    assert "raised IndexError" in spec.grade([answer]).message
    assert spec.grade(spec.answers(stub)).hint == "replace the stub's body with your code."
    assert "without calling it" in spec.check(4, quiet=True).hint


def test_a_forbidden_library_function_raises_however_it_was_imported():
    x, w = torch.randn(3, 4), torch.randn(4, 4)
    with forbidding(["transformerland.attention.single_head_attention"]), pytest.raises(ForbiddenCall):
        aliased(x, w, w, w)
    assert aliased(x, w, w, w)[0].shape == (3, 4)  # and works again after

    def calls_the_library(x, w_q, w_k, w_v):
        return aliased(x, w_q, w_k, w_v)[0]

    result = check_single_head_attention(calls_the_library)
    assert not result and "single_head_attention" in result.message


def test_hidden_cases_differ_from_the_public_ones():
    public, hidden = SINGLE_HEAD_ATTENTION.cases(PUBLIC_SEED), SINGLE_HEAD_ATTENTION.cases(7)
    assert len(public) == len(hidden)
    assert not torch.equal(public[0].args[0], hidden[0].args[0])


def test_specs_are_validated():
    with pytest.raises(ValueError, match="ex-2-1"):
        doubling_spec(label="exercise 1")
    with pytest.raises(ValueError, match="check_"):
        doubling_spec(checker="double_it")
    with pytest.raises(ValueError, match="points"):
        doubling_spec(points=0)


def test_a_function_that_writes_into_its_arguments_is_told_so():
    spec = doubling_spec(
        cases=lambda seed: [Case(([1, 2],))], reference=lambda xs: [2 * x for x in xs], mistakes=lambda case: []
    )

    def doubles_in_place(xs):
        xs[:] = [2 * x for x in xs]
        return list(xs)

    result = spec.check(doubles_in_place, quiet=True)
    assert not result and result.message == "the function changed the arguments it was given"
    assert spec.check(lambda xs: [2 * x for x in xs], quiet=True)


CHAPTER_MODULES = sorted(
    m.name for m in pkgutil.iter_modules(transformerland.exercises.__path__) if re.fullmatch(r"ch\d+", m.name)
)


@pytest.mark.parametrize("module", CHAPTER_MODULES)
def test_every_specs_reference_passes_its_public_and_hidden_cases(module: str):
    for spec in importlib.import_module(f"transformerland.exercises.{module}").EXERCISES:
        assert isinstance(spec, Exercise), f"{spec!r} is not a spec"
        if spec.probe is not None:
            continue  # a class: its probe is tested in its chapter's tests
        for seed in (PUBLIC_SEED, 1, 12345):  # the reference may call what the student may not: no forbids here
            answers = [Answer.of(spec.reference, case) for case in spec.cases(seed)]
            result = spec.grade(answers, seed)
            assert result, f"{spec.label}, seed {seed}: {result}"


def test_the_instructors_guide_counts_the_specs():
    from pathlib import Path

    count = sum(len(importlib.import_module(f"transformerland.exercises.{m}").EXERCISES) for m in CHAPTER_MODULES)
    guide = (Path(__file__).parents[1] / "book" / "instructors.md").read_text(encoding="utf-8")
    assert f"All {count} coding exercises of the book's chapters are specs" in " ".join(guide.split())


# --- chapters' exercises as data (ch<N>.toml) plus code -------------------------------------------------

SEEDS = (PUBLIC_SEED, 3, 11)


def chapter(module: str) -> tuple[dict[str, Exercise], dict[str, dict]]:
    """The chapter's specs and its data, both by label."""
    name = f"transformerland.exercises.{module}"
    return {spec.label: spec for spec in importlib.import_module(name).EXERCISES}, chapter_data(name)


@pytest.mark.parametrize("module", CHAPTER_MODULES)
def test_no_text_in_a_chapters_data_is_dead(module: str):
    """Each slip's hint is reached by a slip its code computes, each case text by a case with its tag, and each
    judge's text is named in the chapter's code (``key``, or ``key`` for its ``key_hint``)."""
    specs, data = chapter(module)
    assert set(data) <= set(specs), f"{module}'s data names exercises its module does not declare"
    source = inspect.getsource(importlib.import_module(f"transformerland.exercises.{module}"))
    for label, table in data.items():
        spec = specs[label]
        cases = [case for seed in SEEDS for case in spec.cases(seed)]
        reached = {m.key for case in cases for m in spec.mistakes(case)}
        assert set(table.get("mistakes", {})) <= reached, (
            f"{label}: slips no case reaches: {set(table['mistakes']) - reached}"
        )
        assert set(table.get("cases", {})) <= {case.tag for case in cases}, f"{label}: case texts no tag uses"
        for key in table.get("texts", {}):
            named = f'"{key}"' in source or (key.endswith("_hint") and f'"{key.removesuffix("_hint")}"' in source)
            assert named, f"{label}: texts.{key} is named nowhere in {module}.py"


def _same_call(a: Case, b: Case) -> bool:
    def same(x, y) -> bool:
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            return (
                isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape and torch.equal(x, y)
            )
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y, strict=True))
        return type(x) is type(y) and x == y

    return same(a.args, b.args) and same(dict(a.kwargs), dict(b.kwargs))


@pytest.mark.parametrize("module", CHAPTER_MODULES)
def test_hidden_cases_are_not_the_notebooks(module: str):
    """Every seed the grader may draw gives at least one case the notebook never showed: answers hard-coded from
    the public cases cannot pass."""
    specs, _ = chapter(module)
    for spec in specs.values():
        public = spec.cases(PUBLIC_SEED)
        for seed in (*range(1, 200), 12345, 2**31 - 1):
            new = [case for case in spec.cases(seed) if not any(_same_call(case, seen) for seen in public)]
            assert new, f"{spec.label}: seed {seed} gives only the notebook's cases"


WORDS = {"what": "doubling", "checker": "check_double", "function": "double", "signature": "(x)", "public": [[2]]}


def doubling(table: dict | None = None, **code) -> Exercise:
    """A declared doubling exercise, from ``WORDS`` and ``table`` (the data) and ``code``."""
    code = {"reference": lambda x: 2 * x, "hidden": lambda seed: [(seed + 3,)], **code}
    return declared({"ex-9-1": {**WORDS, **(table or {})}}, "ex-9-1", **code)


@pytest.mark.parametrize(
    ("table", "code", "words"),
    [
        ({"hints": {}}, {}, "unknown keys"),
        ({"judge": "number"}, {}, "unknown keys"),
        ({"cases": {"one": {"hnit": "x"}}}, {}, "cases.one may hold"),
        ({"mistakes": {"square": {"hnit": "x"}}}, {}, "mistakes.square is a hint"),
        ({"answer": {"kind": "nubmer"}}, {}, "answer.kind is one of"),
        ({"answer": {"kind": "number", "wht": "x"}}, {}, "takes"),
        ({"tolerance": {"atol": 1e-3, "rel_tol": 1e-3}}, {}, "a tolerance is"),
        ({"tolerance": {"abs_tl": 1e-3}}, {}, "a tolerance is"),
        ({"forbids": "transformerland.attention.single_head_attention"}, {}, "a list of names"),
        ({"forbids": ["transformerland.attention.single_head_atention"]}, {}, "not a function of the library"),
        ({"forbids": ["math.sqrt"]}, {}, "not a function of the library"),
        ({"answer": {"kind": "number", "what": "x"}}, {"judge": lambda *a: None}, "keep one"),
        ({}, {"cases": lambda seed: [Case((2,))]}, "not both"),
    ],
)
def test_declared_refuses_data_that_would_be_ignored_or_fail_later(table, code, words):
    with pytest.raises(ValueError, match=words) as error:
        doubling(table, **code)
    assert "ex-9-1" in str(error.value)


def test_declared_slips_words_calls_and_texts():
    with pytest.raises(ValueError, match="have no hint"):
        doubling({"mistakes": {"square": "you squared it"}}, slips=lambda x: {"square": x * x, "half": x / 2}).check(
            lambda x: x + 1, quiet=True
        )
    worded = doubling(
        {"public": [[3]], "mistakes": {"square": "{x} squared is {xx}"}},
        slips=lambda x: {"square": x * x},
        words=lambda x: {"x": x, "xx": x * x},
    )
    assert worded.check(lambda x: x * x, quiet=True).hint == "3 squared is 9"
    keyed = doubling(
        {"public": [[3, {"times": 1}]], "problem": "double({0}) gave {got!r}"}, reference=lambda x, times: 2 * x
    )
    result = keyed.check(lambda x, times: str(x), quiet=True)
    assert result.message == "double(3) gave '3'"  # the keyword table is no argument; {got!r} waits for the answer
    with pytest.raises(ValueError, match="the text 'missing'"):
        keyed.say("missing")
    tensors = doubling({"public": [[[1, 2]]]}, inputs=lambda xs: (torch.tensor(xs),), hidden=lambda seed: [([seed],)])
    assert tensors.check(lambda x: 2 * x, quiet=True), "the default tolerance compares tensors exactly"
    assert not tensors.check(lambda x: x, quiet=True)
