"""The book's layout, read in one place: the table of contents, its pages and its chapter notebooks.

``_toc.yml`` is parsed here and nowhere else; every tool and test that needs the chapters or the pages
asks this module. A chapter is a notebook listed in a *numbered* part of the table of contents.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import yaml

#: The repository root: every tool's default ``--root``.
ROOT = Path(__file__).resolve().parents[1]


def toc(root: Path = ROOT) -> dict:
    """The table of contents, ``root/_toc.yml``, as YAML data."""
    return yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))


def _files(node: object) -> Iterator[str]:
    """Every ``file`` entry of a piece of the table of contents, however deeply nested, in order."""
    if isinstance(node, dict):
        if "file" in node:
            yield node["file"]
        for key, value in node.items():
            if key != "file":
                yield from _files(value)
    elif isinstance(node, list):
        for item in node:
            yield from _files(item)


def pages(root: Path = ROOT) -> list[str]:
    """Every page of the book in reading order, as its source path without suffix (``book/intro``)."""
    contents = toc(root)
    return [contents["root"], *_files(contents.get("parts", contents.get("chapters", [])))]


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks that exist, in the order of the numbered parts of ``root/_toc.yml``."""
    numbered = [part for part in toc(root).get("parts", []) if part.get("numbered")]
    paths = [root / f"{file}.ipynb" for file in _files(numbered)]
    return [path for path in paths if path.exists()]


def chapter_number(path: Path) -> int:
    """The chapter number in a notebook's file name: 2 for ``02_sinusoidal.ipynb``."""
    prefix = path.name.split("_", 1)[0]
    if not prefix.isdigit():
        raise ValueError(f"{path.name}: a chapter's file name starts with its number, like 02_sinusoidal.ipynb.")
    return int(prefix)


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path`` (nbformat 4)."""
    return nbformat.read(path, as_version=4)


def title(nb: nbformat.NotebookNode) -> str:
    """The chapter's title: the ``# Title`` heading of its first cell."""
    first = nb.cells[0].source.split("\n", 1)[0] if nb.cells else ""
    if not first.startswith("# "):
        raise ValueError("a chapter's first cell starts with its title, '# Title'.")
    return first[2:].strip()
