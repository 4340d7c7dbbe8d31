"""MathJax served by the site itself, so that every formula is typeset offline.

Sphinx's math support loads MathJax from ``mathjax_path``; a CDN address there leaves a reader without a
network (a downloaded copy of the site, a classroom mirror) with raw ``\\(...\\)``. This module is both

* a command, ``python -m sphinx_ext.mathjax`` (part of ``make vendor``): fetch ``mathjax@`` :data:`VERSION`
  from the npm registry once, keeping the files a page can load (:data:`SERVED`), into a cache folder
  (``$MATHJAX_DIR``, by default under ``~/.cache/apple-in-transformerland/``); and
* a Sphinx extension (``local_extensions`` in ``_config.yml``): it copies that folder into the site's
  ``_static/mathjax/``, where ``mathjax_path: mathjax/tex-mml-chtml.js`` (relative to ``_static``) finds
  it. MathJax loads its fonts and any extension it needs from beside that file.
"""

from __future__ import annotations

import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

if __package__:  # python -m sphinx_ext.mathjax
    from sphinx_ext import npm
else:  # loaded by Sphinx from sphinx_ext/ (local_extensions in _config.yml)
    import npm

VERSION = "3.2.2"
#: The site's folder for it, inside ``_static``; ``_config.yml``'s ``mathjax_path`` points into it.
STATIC_SUBDIR = "mathjax"
#: The component the pages load: TeX and MathML in, CommonHTML out (what the CDN address loaded).
ENTRY = "tex-mml-chtml.js"
#: What the site serves from the package's ``es5/``: the entry, the TeX extensions it loads on demand
#: (autoload), the CommonHTML fonts, and the menu's accessibility components with their speech rules
#: for English and Nemeth Braille (:data:`SPEECH`; the other languages' 3.5 MB are left out).
SERVED = [ENTRY, "input", "output/chtml", "a11y", "ui", "sre", "LICENSE"]
#: The speech-rule files kept from ``sre/mathmaps/``.
SPEECH = {"base.json", "en.json", "nemeth.json"}


def cache_dir() -> Path:
    """The cache folder: ``$MATHJAX_DIR``, or one named after the version."""
    default = Path.home() / ".cache" / "apple-in-transformerland" / f"mathjax-{VERSION}-served"
    return Path(os.environ.get("MATHJAX_DIR", default))


def fetch(where: Path | None = None) -> Path:
    """Fetch MathJax into ``where/mathjax/`` (unless already there); return ``where``."""
    where = where or cache_dir()
    target = where / STATIC_SUBDIR
    if (target / ENTRY).is_file():
        return where
    with tempfile.TemporaryDirectory() as scratch:
        with npm.pack("mathjax", VERSION, Path(scratch), target) as archive:
            # the "data" filter (no links or paths out of the folder) where this Python has it (3.11.4 and later)
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            archive.extractall(scratch, **safe)
        unpacked = Path(scratch) / "package"
        staging = Path(scratch) / STATIC_SUBDIR
        for name in SERVED:
            source = unpacked / "es5" / name if name != "LICENSE" else unpacked / name
            if source.is_dir():
                shutil.copytree(source, staging / name, ignore=_other_languages)
            else:
                staging.mkdir(exist_ok=True)
                shutil.copy2(source, staging / name)
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(staging, target)
    return where


def _other_languages(folder: str, names: list[str]) -> set[str]:
    """For ``shutil.copytree``: the speech-rule files of ``sre/mathmaps/`` other than :data:`SPEECH`."""
    if not folder.endswith("mathmaps"):
        return set()
    return {name for name in names if name.endswith(".json") and name not in SPEECH}


def _on_builder_inited(app: Any) -> None:
    if app.builder.format != "html":
        return
    try:
        where = fetch()
    except RuntimeError as error:
        from sphinx.errors import ExtensionError

        raise ExtensionError(str(error)) from error
    app.config.html_static_path.append(str(where))


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: serve MathJax from the site's ``_static/mathjax/``."""
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main() -> int:
    """Fetch MathJax (``make vendor``) and say where it is."""
    try:
        where = fetch()
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"MathJax {VERSION} is in {where / STATIC_SUBDIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
