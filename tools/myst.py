"""A small reader of MyST directives in markdown text: ``{name} argument``, ``:options:`` and a body."""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPENING = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z][\w-]*)\}[ \t]*(?P<argument>.*)$", re.MULTILINE)
_OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")


@dataclass(frozen=True)
class Directive:
    """One MyST directive in a markdown text: ``{name} argument``, its ``:options:`` and its body.

    ``start`` and ``end`` are offsets into the text: the opening fence and just past the closing one.
    """

    name: str
    argument: str
    options: dict[str, str]
    body: str
    start: int
    end: int


def directives(text: str) -> list[Directive]:
    """The top-level directives of a markdown text, in order; nested ones stay inside their parent's body."""
    found = []
    position = 0
    while opening := _OPENING.search(text, position):
        fence = opening["fence"]
        closing = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE).search(
            text, opening.end()
        )
        body_end, end = (closing.start(), closing.end()) if closing else (len(text), len(text))
        lines = text[opening.end() + 1 : body_end].split("\n")
        options = {}
        while lines and (option := _OPTION.match(lines[0])):
            options[option["key"]] = option["value"].strip()
            lines.pop(0)
        body = "\n".join(lines).strip("\n")
        found.append(Directive(opening["name"], opening["argument"].strip(), options, body, opening.start(), end))
        position = end
    return found
