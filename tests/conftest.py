"""Fixtures shared by the library's and the checkers' tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pytest
from transformerland.exercises import VERDICT_PATTERN, CheckResult


class Verdict(NamedTuple):
    """The verdict word (``PASSED`` or ``NOT YET``) and everything the checker printed."""

    word: str
    out: str


@pytest.fixture
def verdict(capsys: pytest.CaptureFixture[str]) -> Callable[[CheckResult | None], Verdict]:
    """Read what the last checker printed; it must hold a verdict line.

    Call it as ``verdict()``, or ``verdict(result)`` to also require that the printed word agrees
    with the returned result (PASSED when it is truthy).
    """

    def read(result: CheckResult | None = None) -> Verdict:
        out = capsys.readouterr().out
        match = VERDICT_PATTERN.search(out)
        assert match is not None, out
        if result is not None:
            assert match["verdict"] == ("PASSED" if result else "NOT YET")
        return Verdict(match["verdict"], out)

    return read


@pytest.fixture(scope="session")
def working_sandbox() -> None:
    """Grading tests need a sandbox that starts: without one the test FAILS (it never skips), naming bubblewrap."""
    from tools import sandbox

    why = sandbox.problem()
    if why:
        pytest.fail(f"no working bubblewrap sandbox on this machine, so grading cannot be tested:\n{why}")
