"""What the exercise tests share: a slip is named at once, and hinted at when it comes back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def named_then_hinted(checker: Callable[[Any], Any], wrong: Any, says: str) -> None:
    """The first try names the slip with no hint; the second adds the stronger hint."""
    first = checker(wrong)
    assert not first and says in first.message and not first.hint, first
    second = checker(wrong)
    assert not second and says in second.message and second.hint, second
