"""transformerland.exercises.spec: one declarative spec serves the notebook's checker and the grader."""

from __future__ import annotations

import importlib
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
    assert f"All {count} coding exercises of the nine chapters are specs" in " ".join(guide.split())
    assert len(CHAPTER_MODULES) == 9, "the guide says nine chapters"


# --- chapters' exercises as data (ch<N>.toml) plus code -------------------------------------------------


def chapter_modules() -> list[str]:
    names = [f"transformerland.exercises.{m.name}" for m in pkgutil.iter_modules(transformerland.exercises.__path__)]
    return [name for name in names if re.fullmatch(r".*\.ch\d+", name)]


@pytest.mark.parametrize("module", chapter_modules())
def test_every_hint_in_a_chapters_data_is_reached_by_a_slip_its_code_computes(module):
    """No hint is dead text: each ``mistakes`` entry is returned by ``slips`` on some public or hidden case."""
    chapter = importlib.import_module(module)
    data = chapter_data(module)
    specs = {spec.label: spec for spec in chapter.EXERCISES}
    assert set(data) <= set(specs), f"{module}'s data names exercises its module does not declare"
    for label, table in data.items():
        hints = {words if isinstance(words, str) else words["hint"] for words in table.get("mistakes", {}).values()}
        spec = specs[label]
        reached = {m.hint for seed in (PUBLIC_SEED, 3, 11) for case in spec.cases(seed) for m in spec.mistakes(case)}
        assert hints <= reached, f"{label}: hints no slip reaches: {sorted(hints - reached)}"


def test_declared_refuses_unknown_keys_and_slips_without_a_hint():
    data = {"ex-9-1": {"what": "doubling", "checker": "check_double", "function": "double", "signature": "(x)"}}
    with pytest.raises(ValueError, match="unknown keys"):
        declared({"ex-9-1": {**data["ex-9-1"], "hints": {}}}, "ex-9-1", reference=lambda x: 2 * x)
    spec = declared(
        {"ex-9-1": {**data["ex-9-1"], "public": [[2]], "mistakes": {"square": "you squared it"}}},
        "ex-9-1",
        reference=lambda x: 2 * x,
        hidden=lambda draw: [(draw.randrange(3, 9),)],
        slips=lambda x: {"square": x * x, "half": x / 2},
    )
    with pytest.raises(ValueError, match="have no hint"):
        spec.check(lambda x: x + 1, quiet=True)
    worded = declared(
        {"ex-9-1": {**data["ex-9-1"], "public": [[3]], "mistakes": {"square": "{x} squared is {xx}"}}},
        "ex-9-1",
        reference=lambda x: 2 * x,
        hidden=lambda draw: [(4,)],
        slips=lambda x: {"square": x * x},
        words=lambda x: {"x": x, "xx": x * x},
    )
    assert worded.check(lambda x: x * x, quiet=True).hint == "3 squared is 9"
