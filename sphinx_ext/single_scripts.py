"""Each of the page's scripts once: an inline script that Sphinx lists twice is written once.

A Sphinx extension (``local_extensions`` in ``_config.yml``). Sphinx 7.4 keeps a page's scripts in the
builder's list, which it fills from the extensions' registry when the builder is made and to which an
extension adds later; an inline script (no file, only a body) can end up there twice, once named ``None``
and once ``''``, and Sphinx's check for a script already listed tells the two apart. sphinx-thebe's inline
script (``const THEBE_JS_URL = …``, added on every build) is one: its second copy declares the constants
again and the browser logs ``Identifier 'THEBE_JS_URL' has already been declared`` on every page
(sphinx-togglebutton's ``var togglebuttonSelector`` was doubled too, harmlessly). As each page is written,
its list of scripts keeps the first of each.
"""

from __future__ import annotations

from typing import Any


def script_key(script: Any) -> tuple:
    """What makes two listed scripts the same: the file (``None`` and ``''`` both mean none), priority, attributes."""
    attributes = tuple(sorted((str(k), str(v)) for k, v in getattr(script, "attributes", {}).items()))
    return (getattr(script, "filename", script) or "", getattr(script, "priority", 0), attributes)


def once_each(scripts: list[Any]) -> list[Any]:
    """``scripts`` without the repeats (by :func:`script_key`), in their order."""
    seen, kept = set(), []
    for script in scripts:
        key = script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def _on_page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    scripts = context.get("script_files")  # the builder's own list, as the page's template reads it
    if isinstance(scripts, list):
        scripts[:] = once_each(scripts)


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: each page's list of scripts without repeats, just before the page is written."""
    app.connect("html-page-context", _on_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
