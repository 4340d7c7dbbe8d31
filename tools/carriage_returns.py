"""Progress bars as a terminal shows them: each carriage return goes back to the start of its line.

A progress bar redraws itself by printing ``\\r`` and its new state. Jupyter and Colab honour the
carriage return, so a reader there sees one bar filling up; a saved notebook keeps every state.
:func:`join_streams` keeps what a terminal would show. It tidies the notebooks that
``make chapters`` saves and, as a Sphinx extension (``local_extensions`` in ``_config.yml``), the
outputs of the chapters that the book's build executes.

The build needs it because MyST-NB's own merging of stream outputs (``nb_merge_streams``) strips
each piece of its trailing whitespace, carriage returns included, before it resolves them, so a
bar's every state would reach the page on a line of its own. The extension therefore joins and
resolves the pieces itself before MyST-NB merges them (checked by the site tests against the
pinned myst-nb).
"""

from __future__ import annotations

from typing import Any

from nbformat import NotebookNode


def resolve_carriage_returns(text: str) -> str:
    """What a terminal shows for ``text``: on each line, a ``\\r`` returns to the line's start."""
    lines = []
    for line in text.split("\n"):
        shown = ""
        for piece in line.split("\r"):
            shown = piece + shown[len(piece) :]
        lines.append(shown)
    return "\n".join(lines)


def join_streams(outputs: list[NotebookNode]) -> list[NotebookNode]:
    """A cell's outputs with consecutive pieces of one stream joined and carriage returns resolved."""
    joined: list[NotebookNode] = []
    for output in outputs:
        previous = joined[-1] if joined else None
        if (
            output.get("output_type") == "stream"
            and previous is not None
            and previous.get("output_type") == "stream"
            and previous.get("name") == output.get("name")
        ):
            previous["text"] += output["text"]
        else:
            joined.append(output)
    for output in joined:
        if output.get("output_type") == "stream":
            output["text"] = resolve_carriage_returns(output["text"])
    return joined


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: resolve progress bars before MyST-NB merges a cell's streams."""
    from myst_nb.core import render

    merge = render.coalesce_streams
    if not getattr(merge, "resolves_carriage_returns", False):

        def merge_resolved(outputs: list[NotebookNode]) -> list[NotebookNode]:
            return merge(join_streams(outputs))

        merge_resolved.resolves_carriage_returns = True  # type: ignore[attr-defined]
        render.coalesce_streams = merge_resolved
    return {"parallel_read_safe": True, "parallel_write_safe": True}
