"""transformerland.exercises: one declaration serves the notebook's checker and the grader; answers cross as data."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from transformerland.encodings.sinusoidal import sinusoidal_encoding
from transformerland.exercises import VERDICT_PATTERN, Exact, Exercise, Number, Slip, Tensor, call
from transformerland.exercises.codec import Answer, capture, decode, encode, from_bytes, to_bytes


def double(x: int) -> int:
    return 2 * x


DOUBLING = Exercise(
    "ex-10-1",
    "twice",
    checker="check_twice",
    reference=double,
    public=[call(1), call(5)],
    hidden=lambda r: [call(r.randrange(100, 200)), call(-3)],
    slips=[Slip(lambda x: x + 2, says="you added two: look at the operation.", then="twice means times two.")],
    otherwise=Slip(says="try it by hand for 5.", then="what is 5 + 5?"),
)


def test_a_right_answer_passes_and_prints_a_verdict_line(capsys):
    assert DOUBLING.check(lambda x: x * 2)
    assert VERDICT_PATTERN.search(capsys.readouterr().out)["verdict"] == "PASSED"


def test_a_slip_is_named_at_once_and_hinted_at_the_second_time():
    first = DOUBLING.check(lambda x: x + 2, quiet=True)
    assert not first and first.message == "twice(1): you added two: look at the operation." and first.hint == ""
    second = DOUBLING.check(lambda x: x + 2, quiet=True)
    assert second.hint == "twice means times two."
    other = DOUBLING.check(lambda x: x + 3, quiet=True)
    assert other.message == "twice(1): it returned 4, expected another" and other.hint == "try it by hand for 5."
    assert DOUBLING.check(lambda x: x + 3, quiet=True).hint == "try it by hand for 5. What is 5 + 5?"


def test_a_hidden_call_s_verdict_names_the_slip_but_not_the_input_or_the_answer():
    result = DOUBLING.grade(DOUBLING.answers(lambda x: x + 2, seed=4), seed=4)
    assert result.message == "on one of the grader's calls: you added two: look at the operation."
    wrong = DOUBLING.grade(DOUBLING.answers(lambda x: 7, seed=4), seed=4)
    assert "expected" not in wrong.message and "7" in wrong.message
    assert DOUBLING.cases(4) != DOUBLING.cases(0) and DOUBLING.cases(4) == DOUBLING.cases(4)


def test_raises_stubs_missing_answers_and_written_arguments_are_not_yet():
    def stub(x):
        raise NotImplementedError

    assert "not written yet" in DOUBLING.check(stub, quiet=True).message
    broken = DOUBLING.check(lambda x: x / 0, quiet=True)
    assert "raised ZeroDivisionError" in broken.message and "look at where it raised" in broken.hint
    assert "no answer came back for call 2 of 2" in DOUBLING.grade([Answer(value=2)]).message
    assert "expected a function" in DOUBLING.check(4, quiet=True).message

    def scale(t: torch.Tensor) -> torch.Tensor:
        return t * 2

    def scale_in_place(t: torch.Tensor) -> torch.Tensor:
        return t.mul_(2)

    spec = Exercise("ex-10-2", "scale", checker="check_scale", reference=scale, public=[call(torch.ones(3))],
                    hidden=lambda r: [call(torch.ones(2))], answer=Tensor(atol=1e-6))  # fmt: skip
    assert spec.check(scale, quiet=True)
    assert "changed the arguments" in spec.check(scale_in_place, quiet=True).message


def test_the_library_s_reference_is_withheld_by_default_and_refused_in_the_notebook():
    table = Exercise("ex-10-3", "table", checker="check_table", reference=sinusoidal_encoding,
                     public=[call(4, 2)], hidden=lambda r: [call(5, 2)], answer=Tensor(atol=1e-4))  # fmt: skip
    assert table.withheld == ("transformerland.encodings.sinusoidal.sinusoidal_encoding",)
    result = table.check(lambda n, d: sinusoidal_encoding(n, d), quiet=True)
    assert not result and "library's own answer" in result.message
    assert sinusoidal_encoding(2, 2).shape == (2, 2), "the library's function is itself again afterwards"
    assert DOUBLING.withheld == ()


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"label": "ex2"}, "label looks like"),
        ({"checker": "verify"}, "starts with 'check_'"),
        ({"public": []}, "at least one public call"),
        ({"points": 0}, "points are positive"),
        ({"withheld": ("transformerland.nowhere.f",)}, "not a function or class of the library"),
        ({"withheld": ("math.sqrt",)}, "not a function or class of the library"),
        ({"slips": [Slip(says="no way to recognise it")]}, "either wrong or when"),
    ],
)
def test_a_malformed_declaration_is_refused_naming_what_is_wrong(fields, words):
    declared = {"label": "ex-10-4", "function": "f", "checker": "check_f", "reference": double,
                "public": [call(1)], "hidden": lambda r: [call(2)]} | fields  # fmt: skip
    with pytest.raises(ValueError, match=words):
        Exercise(**declared)


def test_kinds_say_what_is_wrong():
    assert Exact().fault(3, 3, False) is None and Exact().fault(3.0, 3, False)
    assert Number(rel=1e-3).fault(True, 1.0, False) == "it returned a bool, not a number"
    assert Number(rel=1e-3).fault(torch.tensor([2.0005]), 2.0, False) is None
    tensor = Tensor(atol=1e-3)
    assert tensor.fault([[1.0, 2.0]], torch.tensor([[1.0, 2.0]]), False) is None
    assert tensor.fault(torch.zeros(3), torch.zeros(2, 2), False) == "it has shape (3,); expected (2, 2)"
    assert tensor.fault(torch.zeros(3), torch.zeros(2, 2), True) == "it has shape (3,)"
    assert tensor.fault(torch.tensor([float("nan")]), torch.zeros(1), False) == "it contains NaN or infinite values"
    assert "index 1" in Tensor().fault(torch.tensor([0, 2]), torch.tensor([0, 1]), False)
    assert "not a tensor" in tensor.fault("text", torch.zeros(1), False)


class Doubler(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.full((width,), 2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale


def test_a_class_is_judged_on_what_it_does_as_data():
    def judge(got, expected, one):
        if got["type"] == "dict" or set(got["parameters"]) != set(expected["parameters"]):
            return Slip(says="its trainable parameters are not the reference's.")
        return None

    spec = Exercise("ex-10-5", "Doubler", checker="check_doubler", reference=Doubler,
                    public=[call(3, feeds=[torch.ones(2, 3)])], hidden=lambda r: [call(4, feeds=[torch.ones(1, 4)])],
                    answer=Exact(), judge=judge)  # fmt: skip
    answer = capture(Doubler, (3,), {}, (torch.ones(2, 3),))
    assert answer.value["type"] == "Doubler" and answer.value["parameters"]["scale"].shape == (3,)
    assert torch.equal(answer.value["outputs"][0]["value"], torch.full((2, 3), 2.0))
    assert "trainable parameters" in spec.check(lambda width: nn.Linear(width, width), quiet=True).message


def test_answers_cross_the_wall_as_json_and_safetensors_and_garbage_is_refused():
    tensors: dict = {}
    answer = Answer(value={"a": (1, [torch.ones(2)], None)}, raised="", after=(torch.zeros(1),))
    data = json.loads(json.dumps(answer.to_data(tensors)))
    back = Answer.from_data(data, from_bytes(to_bytes(tensors)))
    assert back.value["a"][0] == 1 and torch.equal(back.value["a"][1][0], torch.ones(2))
    assert torch.equal(back.after[0], torch.zeros(1))
    assert repr(decode(encode(object(), {}), {})) == "<a object>"
    assert decode(encode(2**70, {}), {}) == 2**70
    for garbage in ({"tensor": "nowhere"}, {"int": "1e5"}, {"dict": [[1.5, 2]]}, {"what": 1}):
        with pytest.raises(ValueError):
            decode(garbage, {})
    with pytest.raises(ValueError):
        Answer.from_data({"raised": 3}, {})


def test_texts_lists_every_hint():
    assert DOUBLING.texts() == ["you added two: look at the operation.", "twice means times two.",
                                "try it by hand for 5.", "what is 5 + 5?"]  # fmt: skip


# --- every chapter's exercises -----------------------------------------------------------------------------

CHAPTERS = [f"transformerland.exercises.ch{n}" for n in range(1, 10)]


def _exercises(module: str) -> list[Exercise]:
    return importlib.import_module(module).EXERCISES


def test_the_instructors_guide_counts_the_exercises():
    count = sum(len(_exercises(module)) for module in CHAPTERS)
    guide = " ".join((Path(__file__).parents[1] / "book" / "instructors.md").read_text(encoding="utf-8").split())
    assert f"All {count} coding exercises of the book's chapters are declared this way" in guide


@pytest.mark.parametrize("module", CHAPTERS)
def test_each_reference_passes_and_every_hidden_draw_makes_a_call_the_notebook_never_made(module):
    for spec in _exercises(module):
        public = [c.shown(spec.function) for c in spec.public]
        for seed in (0, 1, 2):
            assert spec.grade(spec.answers(spec.reference, seed), seed), (spec.label, seed)
        for seed in range(1, 41):
            assert {c.shown(spec.function) for c in spec.cases(seed)} - set(public), (spec.label, seed)


@pytest.mark.parametrize("module", CHAPTERS)
def test_each_checker_is_exported_under_its_name(module):
    chapter = importlib.import_module(module)
    for spec in chapter.EXERCISES:
        assert getattr(chapter, spec.checker).__name__ == spec.checker and spec.checker in chapter.__all__


def _library_returns(spec: Exercise, one) -> dict[str, Any]:
    """What each function of the library (outside the exercises) returned while the reference answered ``one``."""
    returned: dict[str, Any] = {}

    def profile(frame, event, value):
        module = frame.f_globals.get("__name__", "")
        public = "<" not in frame.f_code.co_qualname  # a comprehension or lambda inside is no function to call
        if event == "return" and public and module.startswith("transformerland.") and ".exercises" not in module:
            returned.setdefault(f"{module}.{frame.f_code.co_qualname}", value)

    sys.setprofile(profile)
    try:
        spec.reference(*one.args, **one.kwargs)
    finally:
        sys.setprofile(None)
    return returned


@pytest.mark.parametrize("module", CHAPTERS)
def test_no_library_function_the_grader_leaves_in_place_returns_an_exercise_s_answer(module):
    """Otherwise ``my_answer = that_function`` would pass in the sandbox: the answer must not be there to take."""
    withheld = {name for spec in _exercises(module) for name in spec.withheld}
    for spec in _exercises(module):
        for one in spec.public:
            if one.feeds is not None:
                continue
            expected = spec.reference(*one.args, **one.kwargs)
            for name, value in _library_returns(spec, one).items():
                if name not in withheld and not name.startswith("transformerland._validation"):
                    assert spec.answer.fault(value, expected, True) is not None, f"{spec.label}: {name} returns it"
