"""Code as a reader reads it: the test suite's marker comments are not shown on the page or in the PDF.

A chapter's cell that starts with ``# NBVAL_CHECK_OUTPUT`` tells the test suite to compare its fresh output
with the committed one (nbval's marker, :mod:`tests.site.test_site_colab`). It is an instruction to the
tests, not part of the lesson, so the build drops that first line from each code block that starts with
it. The notebook keeps it: a student who downloads the chapter, and the tests, still see it.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

#: The first line of a cell whose output the tests compare with the committed notebook's.
MARKER = "# NBVAL_CHECK_OUTPUT"


def without_marker(code: str) -> str:
    """``code`` without a first line that is :data:`MARKER`; any other code unchanged."""
    first, _, rest = code.partition("\n")
    return rest if first.strip() == MARKER else code


def _drop_markers(app: Any, doctree: nodes.document) -> None:
    for block in doctree.findall(nodes.literal_block):
        code = block.astext()
        shown = without_marker(code)
        if shown != code:
            block.rawsource = shown
            block.children = [nodes.Text(shown)]


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: marker lines dropped from every page's code once it is read."""
    app.connect("doctree-read", _drop_markers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
