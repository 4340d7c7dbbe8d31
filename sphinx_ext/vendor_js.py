"""The JavaScript of the interactive figures, served by the site itself so that it works offline.

The chapters draw their interactive figures with Vega-Altair, whose HTML output loads Vega,
Vega-Lite and vega-embed from a CDN unless they are already on the page. This module is both

* a command, ``python -m sphinx_ext.vendor_js`` (``make vendor``): fetch the three packages, at the
  versions pinned in :data:`PACKAGES`, from the npm registry with ``npm pack`` into a cache folder
  (``$VEGA_DIR``, by default under ``~/.cache/apple-in-transformerland/``), once; and
* a Sphinx extension (``local_extensions`` in ``_config.yml``): it copies those files into the
  site's ``_static/vega/`` and, on each page that holds an Altair figure, loads them in the page's
  head, followed by a line that tells Altair's loader they are there (``VEGA_DEBUG``, the flag its
  HTML template checks before it fetches anything). A reader's browser then never asks a CDN for
  them. In Jupyter and Colab the same output fetches them from the CDN, as Altair always does.

The versions must satisfy the ones the book's figures ask for (``transformerland.interactive.JS_VERSIONS``,
whichever Altair drew them); the extension stops the build with a clear message when they do not.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__:  # python -m sphinx_ext.vendor_js
    from sphinx_ext import npm
else:  # loaded by Sphinx from sphinx_ext/ (local_extensions in _config.yml)
    import npm

#: npm package → (pinned version, the file of its browser build inside the package).
PACKAGES = {
    "vega": ("6.4.0", "build/vega.min.js"),
    "vega-lite": ("6.4.1", "build/vega-lite.min.js"),
    "vega-embed": ("7.3.0", "build/vega-embed.min.js"),
}
#: Where the files go inside the site's ``_static``.
STATIC_SUBDIR = "vega"
#: What a page holds when it has an Altair figure: the call in Altair's HTML template.
MARKER = "vegaEmbed("


def vendor_dir() -> Path:
    """The cache folder: ``$VEGA_DIR``, or one named after the pinned versions."""
    tag = "-".join(f"{name}-{version}" for name, (version, _) in PACKAGES.items())
    default = Path.home() / ".cache" / "apple-in-transformerland" / tag
    return Path(os.environ.get("VEGA_DIR", default))


def vendored_files(where: Path | None = None) -> list[Path]:
    """The browser builds in the cache folder, in loading order (Vega, then Vega-Lite, then vega-embed)."""
    where = where or vendor_dir()
    return [where / STATIC_SUBDIR / Path(build).name for _, build in PACKAGES.values()]


def fetch(where: Path | None = None) -> Path:
    """Fetch the pinned packages from the npm registry into ``where`` (unless already there); return it."""
    where = where or vendor_dir()
    if all(path.is_file() for path in vendored_files(where)):
        return where
    target = where / STATIC_SUBDIR
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for name, (version, build) in PACKAGES.items():
            with npm.pack(name, version, Path(scratch), target) as archive:
                for member, out in ((f"package/{build}", Path(build).name), ("package/LICENSE", f"{name}.LICENSE")):
                    data = archive.extractfile(member)
                    if data is None:
                        raise RuntimeError(f"{name}@{version} has no {member}")
                    (target / out).write_bytes(data.read())
    return where


def check_versions(altair_versions: dict[str, str]) -> None:
    """Raise if a pinned package does not match the version Altair's HTML output asks for.

    ``altair_versions`` maps a package to Altair's request: a major version (``"6"``) or an exact
    one (``"6.4.1"``).
    """
    for name, wanted in altair_versions.items():
        pinned = PACKAGES[name][0]
        if pinned != wanted and not pinned.startswith(f"{wanted}."):
            raise RuntimeError(
                f"sphinx_ext/vendor_js.py pins {name}@{pinned}, but the installed Altair asks for {name}@{wanted}: "
                "update PACKAGES there to a matching version."
            )


def altair_versions() -> dict[str, str]:
    """The versions the book's figures load: ``transformerland.interactive.JS_VERSIONS``, whichever Altair drew them."""
    from transformerland.interactive import JS_VERSIONS

    return dict(JS_VERSIONS)


def ready_script(versions: dict[str, str]) -> str:
    """JavaScript that tells Altair's loader that these libraries are on the page already."""
    flags = {f"{name.replace('-', '', 1)}_version": version for name, version in versions.items()}
    return (
        "// Vega, Vega-Lite and vega-embed are served by this site (sphinx_ext/vendor_js.py): Altair's\n"
        "// figures find them here instead of fetching them from a CDN.\n"
        f"window.VEGA_DEBUG = Object.assign(window.VEGA_DEBUG || {{}}, {json.dumps(flags)});\n"
    )


def _on_builder_inited(app: Any) -> None:
    if app.builder.format != "html":
        return
    versions = altair_versions()
    check_versions(versions)
    try:
        where = fetch()
    except RuntimeError as error:
        from sphinx.errors import ExtensionError

        raise ExtensionError(str(error)) from error
    (where / STATIC_SUBDIR / "ready.js").write_text(ready_script(versions))
    app.config.html_static_path.append(str(where))


def _on_page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if MARKER not in context.get("body", ""):
        return
    for path in [*vendored_files(), Path("ready.js")]:
        app.add_js_file(f"{STATIC_SUBDIR}/{path.name}")


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: serve the vendored JavaScript and load it on pages with interactive figures."""
    app.connect("builder-inited", _on_builder_inited)
    app.connect("html-page-context", _on_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main() -> int:
    """Fetch the pinned packages (``make vendor``) and say where they are."""
    try:
        where = fetch()
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"Vega, Vega-Lite and vega-embed are in {where / STATIC_SUBDIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
