"""Each of the page's scripts once: an inline script that Sphinx lists twice is written once.

A Sphinx extension (``local_extensions`` in ``_config.yml``). Sphinx 7.4 keeps a page's scripts in the
builder's list, which it fills from the extensions' registry when the builder is made and to which an
extension adds later; an inline script (no file, only a body) can end up there twice, once named ``None``
and once ``''``, and Sphinx's check for a script already listed tells the two apart. sphinx-thebe's inline
script (``const THEBE_JS_URL = …``, added on every build) is one: its second copy declares the constants
again and the browser logs ``Identifier 'THEBE_JS_URL' has already been declared`` on every page
(sphinx-togglebutton's ``var togglebuttonSelector`` was doubled too, harmlessly). Once the documents are
read, before any page is written, the list keeps the first of each script.
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


def _on_env_updated(app: Any, env: Any) -> list[str]:
    scripts = getattr(app.builder, "_js_files", None)  # the HTML builder's list (Sphinx 7.4: no public accessor)
    if isinstance(scripts, list):
        scripts[:] = once_each(scripts)
    return []


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: drop repeated scripts after reading, before the pages are written."""
    app.connect("env-updated", _on_env_updated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
