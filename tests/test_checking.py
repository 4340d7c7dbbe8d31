"""transformerland.exercises.checking: the verdict machinery every checker shares."""

import operator
import subprocess
import sys

import pytest
import torch
from transformerland.exercises import VERDICT_PATTERN, Check
from transformerland.exercises.checking import (
    Mistake,
    as_float64,
    hint_for,
    numbers_close,
    spot_mistake,
    tensors_close,
)


def check_double(fn, quiet=False):
    with Check("ex-9-1", "doubling", quiet=quiet) as check:
        check.that(check.call(fn, 2) == 4, "double(2) should be 4", hint="multiply by two")
        check.that(check.call(fn, -3) == -6, "double(-3) should be -6", hint="negative numbers too")
    return check.result


def test_a_right_answer_passes_with_a_parsable_verdict(capsys):
    result = check_double(lambda x: 2 * x)
    assert result and result.passed
    match = VERDICT_PATTERN.search(capsys.readouterr().out)
    assert match and match["exercise"] == "ex-9-1" and match["verdict"] == "PASSED"


def test_a_wrong_answer_fails_with_its_hint(capsys):
    result = check_double(lambda x: x + 2)
    assert not result
    out = capsys.readouterr().out
    assert VERDICT_PATTERN.search(out)["verdict"] == "NOT YET"
    assert "double(-3) should be -6" in out and "Hint: negative numbers too" in out


def test_exceptions_and_stubs_become_verdicts_not_crashes():
    def stub(x):
        raise NotImplementedError

    def buggy(x):
        return [][x]

    assert "not written yet" in check_double(stub, quiet=True).message
    failed = check_double(buggy, quiet=True)
    assert "IndexError" in failed.message and "line" in failed.hint


def test_passing_a_value_instead_of_a_function_is_explained():
    result = check_double(4, quiet=True)
    assert "expected a function" in result.message and "without calling it" in result.hint


def test_labels_are_validated():
    with pytest.raises(ValueError, match="ex-2-1"):
        Check("exercise one", "x")


# --- the toolkit a checker is built from ----------------------------------------------------------


def test_a_mistake_is_spotted_by_its_answer_and_named_by_its_hint():
    mistakes = [Mistake(6, "you added instead of doubling", "added"), Mistake(9, "you squared it")]
    equal = operator.eq
    assert spot_mistake(6, mistakes, equal).problem == "added"
    assert spot_mistake(7, mistakes, equal) is None
    assert hint_for(9, mistakes, equal, fallback="double it") == "you squared it"
    assert hint_for(7, mistakes, equal, fallback="double it") == "double it"
    unknown = Mistake(None, "double it", "not twice the input")
    assert spot_mistake(7, mistakes, equal, unknown) is unknown


def test_closeness_tests_for_tensors_and_numbers():
    close = tensors_close(atol=1e-3)
    assert close(torch.zeros(3), torch.full((3,), 1e-4))
    assert not close(torch.zeros(3), torch.full((3,), 1e-2))
    assert not close(torch.zeros(3), torch.zeros(1))  # a different shape is never close
    assert numbers_close(1e-3)(1000.0, 1000.5) and not numbers_close(1e-3)(1.0, 1.01)
    assert not numbers_close(1e-6)(0.0, 1e-12) and numbers_close(1e-6, abs_tol=1e-9)(0.0, 1e-12)


def test_convert_shape_and_tensor_stop_with_the_problem_and_hint():
    def checker(answer, shape=(2,)):
        with Check("ex-9-2", "a pair", quiet=True) as check:
            got = check.tensor(answer, "return a tensor")
            values = check.convert(got, as_float64, "no numbers", "return numbers")
            check.shape(values, shape, "wrong shape", "two entries")
        return check.result

    assert checker(torch.tensor([1, 2])) and checker(torch.tensor([1, 2])).message.endswith("all 2 checks agree.")
    assert checker([1, 2]).message == "it returned a list, not a tensor"
    assert checker(torch.tensor([1, 2, 3])).hint == "two entries"
    with Check("ex-9-3", "a number", quiet=True) as check:
        check.convert("seven", float, "it returned text", "return a float")
    assert check.result.message == "it returned text" and as_float64([1, 2]).dtype == torch.float64


@pytest.mark.parametrize(
    ("answer", "expected", "message"),
    [
        (3, 3.0, None),
        (2.5, 2.5, None),
        (torch.tensor([4.0]), 4.0, None),
        (True, None, "it returned a bool, not a number"),
        ("7", None, "it returned a str, not a number"),
        (torch.zeros(2), None, "it returned a Tensor, not a number"),
    ],
)
def test_number_takes_numbers_and_one_element_tensors_only(answer, expected, message):
    with Check("ex-9-4", "a number", quiet=True) as check:
        got = check.number(answer, "the base")
    if message is None:
        assert check.result and got == expected and isinstance(got, float)
    else:
        assert check.result.message == message and check.result.hint == "return the base as a plain float."


def test_numbers_takes_lists_and_tensors_as_float64():
    with Check("ex-9-5", "numbers", quiet=True) as check:
        got = check.numbers([1, 2], "the ramp")
    assert check.result and got.dtype == torch.float64
    with Check("ex-9-5", "numbers", quiet=True) as check:
        check.numbers({"a": 1}, "the ramp")
    assert check.result.message == "it returned a dict, which is not a list of numbers"
    assert check.result.hint == "return the ramp as a torch.Tensor (a list of floats works too)."


def test_run_reports_a_crash_with_the_checkers_own_hint_when_it_has_one():
    def checker(action, explain=None):
        with Check("ex-9-4", "forward", quiet=True) as check:
            check.run(action, name="forward", doing="forward on 3 tokens", explain=explain)
        return check.result

    def crash():
        raise RuntimeError("size mismatch")

    def stub():
        raise NotImplementedError

    assert checker(stub).message == "forward is not written yet (it raised NotImplementedError)"
    assert checker(crash).message == "forward on 3 tokens raised RuntimeError: size mismatch"
    assert "look at line" in checker(crash).hint
    assert checker(crash, explain=lambda error: "slice the table").hint == "slice the table"
    assert "look at line" in checker(crash, explain=lambda error: None).hint


def test_importing_the_toolkit_does_not_import_torch():
    # The grader runs submissions under a short per-cell timeout: the cell that imports Check must stay quick.
    code = "import sys, transformerland.exercises.checking; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
