"""transformerland.exercises.checking: the verdict machinery every checker shares."""

import pytest
from transformerland.exercises import VERDICT_PATTERN, Check


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
