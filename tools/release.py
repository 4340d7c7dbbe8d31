"""The release a chapter's set-up cell installs: one version, in ``pyproject.toml``, and the tag ``v<version>``.

A student's set-up cell installs the library from the repository at a release tag, never the moving
branch: ``%pip install "transformerland @ git+<repository>@v0.1.0"``. The version is written once, in
``pyproject.toml``'s ``[project] version``; this tool copies it into the library's ``__version__`` and into
every set-up cell (the chapters' and the template's), and ``tests/test_conventions.py`` checks that they
all name it. Cutting a release (README, "Cutting a release")::

    python -m tools.release 0.2.0    # set the version everywhere; then make test, commit, tag v0.2.0, push the tag
    python -m tools.release          # write pyproject's version into every set-up cell (after adding a chapter)
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import nbformat
import yaml

from tools.book import ROOT, chapters, read
from tools.new_chapter import TEMPLATE

#: ``version = "0.1.0"`` in pyproject.toml's [project] table (the first ``version =`` line of the file).
_PYPROJECT_VERSION = re.compile(r'^version = "([^"]+)"$', re.MULTILINE)
_LIBRARY_VERSION = re.compile(r'^__version__ = "([^"]+)"$', re.MULTILINE)
#: The requirement a set-up cell installs: the library from the repository, at a tag or not.
_INSTALL = re.compile(r'"transformerland @ git\+(https://github\.com/[\w.-]+/[\w.-]+?)(?:@[\w.-]+)?"')


def version(root: Path = ROOT) -> str:
    """The release version that ``pyproject.toml`` states, e.g. ``"0.1.0"``."""
    found = _PYPROJECT_VERSION.search((root / "pyproject.toml").read_text())
    if found is None:
        raise ValueError('pyproject.toml states no version = "X.Y.Z" line in [project]')
    return found.group(1)


def install_requirement(root: Path = ROOT) -> str:
    """What every set-up cell installs: ``transformerland @ git+<repository.url>@v<version>``."""
    url = yaml.safe_load((root / "_config.yml").read_text())["repository"]["url"].rstrip("/")
    return f"transformerland @ git+{url}@v{version(root)}"


def notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks with a set-up cell: every chapter, and the template new chapters start from."""
    return [*chapters(root), TEMPLATE]


def set_version(new: str, root: Path = ROOT) -> None:
    """Write ``new`` as the version of ``pyproject.toml`` and of the library's ``__version__``."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", new):
        raise ValueError(f"version={new!r}: a release is numbered MAJOR.MINOR.PATCH, like 0.2.0")
    for path, pattern, line in (
        (root / "pyproject.toml", _PYPROJECT_VERSION, f'version = "{new}"'),
        (root / "lib" / "transformerland" / "__init__.py", _LIBRARY_VERSION, f'__version__ = "{new}"'),
    ):
        text = path.read_text()
        if pattern.search(text) is None:
            raise ValueError(f"{path.name} has no line matching {pattern.pattern}")
        path.write_text(pattern.sub(line, text, count=1))


def write_setup_cells(root: Path = ROOT) -> list[Path]:
    """Make every set-up cell install :func:`install_requirement`; return the notebooks changed (cell ids kept)."""
    wanted = install_requirement(root)
    changed = []
    for path in notebooks(root):
        nb = read(path)
        setup = next(cell for cell in nb.cells if cell.cell_type == "code")
        source = _INSTALL.sub(f'"{wanted}"', setup.source)
        if source != setup.source:
            setup.source = source
            nbformat.write(nb, path)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("version", nargs="?", help="the new release, MAJOR.MINOR.PATCH (default: keep pyproject's)")
    args = parser.parse_args(argv)
    if args.version:
        set_version(args.version)
    changed = write_setup_cells()
    print(f"release v{version()}: {len(changed)} set-up cell(s) rewritten; tag it with: git tag v{version()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
