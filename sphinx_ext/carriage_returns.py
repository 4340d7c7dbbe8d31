"""Progress bars as a terminal shows them: each carriage return goes back to the start of its line.

A progress bar redraws itself by printing ``\\r`` and its new state. Jupyter and Colab honour the
carriage return, so a reader there sees one bar filling up; a saved notebook keeps every state.
:func:`join_streams` keeps what a terminal would show. It tidies the notebooks that
``make chapters`` saves (:mod:`tools.execute_chapters` imports it) and, as a Sphinx extension
(``local_extensions`` in ``_config.yml``, which puts only this folder on Sphinx's path), the outputs
that the book's build renders.

The build needs it because MyST-NB's own merging of stream outputs (``nb_merge_streams``) strips
each piece of its trailing whitespace, carriage returns included, before it resolves them, so a
bar's every state would reach the page on a line of its own. The extension therefore joins and
resolves the pieces itself before MyST-NB merges them: it wraps MyST-NB's ``coalesce_streams``. Should
a MyST-NB release rename that function or stop calling it, the build fails with a message that says
so, rather than quietly showing every state of every bar (the site tests check the pages as well).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbformat import NotebookNode

#: What the extension saw in this process: notebooks read, and calls of MyST-NB's stream merging.
_SEEN = {"notebooks": 0, "merges": 0}


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


def _merge_resolved(merge: Any) -> Any:
    """MyST-NB's ``merge`` after :func:`join_streams`, counting its calls."""

    def merge_resolved(outputs: list[NotebookNode]) -> list[NotebookNode]:
        _SEEN["merges"] += 1
        return merge(join_streams(outputs))

    merge_resolved.resolves_carriage_returns = True  # type: ignore[attr-defined]
    return merge_resolved


def _count_notebook(app: Any, doctree: Any) -> None:
    """On ``doctree-read``: count the pages read from a notebook."""
    if Path(app.env.doc2path(app.env.docname)).suffix == ".ipynb":
        _SEEN["notebooks"] += 1


def _check_merges_happened(app: Any, exception: Exception | None) -> None:
    """On ``build-finished``: notebooks were rendered but the wrapped function never ran: fail loudly."""
    from sphinx.errors import ExtensionError

    if exception is None and _SEEN["notebooks"] and not _SEEN["merges"]:
        raise ExtensionError(
            f"carriage_returns: {_SEEN['notebooks']} notebook(s) were read but MyST-NB never called "
            "myst_nb.core.render.coalesce_streams, which this extension wraps to show progress bars at their "
            "last state. MyST-NB has changed: find where it now merges a cell's streams and wrap that instead."
        )


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: resolve progress bars before MyST-NB merges a cell's streams."""
    from sphinx.errors import ExtensionError

    try:
        from myst_nb.core import render

        merge = render.coalesce_streams
    except (ImportError, AttributeError) as error:
        raise ExtensionError(
            f"carriage_returns: MyST-NB has no myst_nb.core.render.coalesce_streams to wrap ({error}); "
            "find where it now merges a cell's streams and wrap that instead."
        ) from error
    if not getattr(merge, "resolves_carriage_returns", False):
        render.coalesce_streams = _merge_resolved(merge)
    app.connect("doctree-read", _count_notebook)
    app.connect("build-finished", _check_merges_happened)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
