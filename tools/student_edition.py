"""Build the student edition of the site, with every solution left out, into ``_build/student/html``.

The book's sources are copied into a temporary folder. There each chapter notebook becomes its student
version (:func:`tools.stubs.student_notebook`: gated code solutions become stubs, text solutions are cut
out, checker outputs are cleared), and the configuration is changed in three ways:

* sphinx-exercise's ``hide_solutions: True``, which drops any ``solution`` directive still left in a page;
* notebook execution off: the site shows the committed outputs, so the build takes a minute or two instead
  of running every chapter again (``make book`` and ``make test`` prove that they run);
* no launch buttons: they would open the repository's notebooks, solutions and hidden tests included.

And the page's download button serves the chapter's **handout** (:func:`tools.handouts.handout`: stubs, no
solution, no hidden test, no Colab badge, no outputs), written over the notebook the build copies into
``_sources``, which still holds the hidden cells that test the answers. A student opens it in Jupyter, or in
Colab with *File, Upload notebook*. (No Colab link is offered: one would need the handouts published at a
public address, and the chapters' own badge opens the repository's full notebook.)

``hide_solutions`` alone is not enough: sphinx-exercise 1.2 then drops ``solution-start`` but keeps the gated
code cells, and fails on the ``solution-end`` left without its start.

    python -m tools.student_edition [--root .] [--out _build/student]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import yaml

from tools.book import ROOT, chapters, pages, read
from tools.handouts import handout
from tools.stubs import student_notebook

IGNORED = shutil.ignore_patterns("_build", ".ipynb_checkpoints", "__pycache__")


def copy_sources(root: Path, into: Path) -> dict:
    """Copy what the build reads (configuration, contents, bibliography, extensions, pages) into ``into``.

    Returns the configuration, read from ``root/_config.yml``.
    """
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    shutil.copy(root / "_toc.yml", into / "_toc.yml")
    for bib in config.get("bibtex_bibfiles", []):
        shutil.copy(root / bib, into / bib)
    for folder in config.get("sphinx", {}).get("local_extensions", {}).values():
        shutil.copytree(root / folder, into / folder, ignore=IGNORED, dirs_exist_ok=True)
    for top in sorted({Path(file).parts[0] for file in pages(root)}):
        if (root / top).is_dir():
            shutil.copytree(root / top, into / top, ignore=IGNORED, dirs_exist_ok=True)
        else:
            for page in root.glob(f"{top}.*"):
                shutil.copy(page, into / page.name)
    return config


def student_config(config: dict) -> dict:
    """The book's configuration for the student edition."""
    config = {**config, "title": f"{config.get('title', 'Book')} (student edition)"}
    config.pop("launch_buttons", None)
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    sphinx = config.get("sphinx", {})
    config["sphinx"] = {**sphinx, "config": {**sphinx.get("config", {}), "hide_solutions": True}}
    return config


def build(root: Path, out: Path) -> Path:
    """Build the student edition of the book at ``root``; return the folder holding its HTML."""
    with tempfile.TemporaryDirectory(prefix="student-edition-") as folder:
        source = Path(folder)
        config = student_config(copy_sources(root, source))
        (source / "_config.yml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False))
        originals = {path: read(path) for path in chapters(source)}
        for path, nb in originals.items():
            nbformat.write(student_notebook(nb, handout=False), path)
        command = ["jupyter-book", "build", str(source), "-W", "-n", "--keep-going"]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode:  # the log names the temporary copy, which is gone once this returns
            raise RuntimeError(f"the student edition did not build:\n{run.stdout[-20000:]}{run.stderr[-20000:]}")
        built = source / "_build" / "html"
        for path, nb in originals.items():  # the download button's notebook: the handout, nothing more
            served = built / "_sources" / path.relative_to(source)
            if served.exists():
                nbformat.write(handout(nb), served)
        html = out / "html"
        shutil.rmtree(html, ignore_errors=True)
        shutil.copytree(built, html)
    return html


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's root, with _config.yml and _toc.yml")
    parser.add_argument("--out", type=Path, help="where html/ goes (default: ROOT/_build/student)")
    args = parser.parse_args()
    print("Building the student edition from the committed outputs (a minute or two)...")
    html = build(args.root, args.out or args.root / "_build" / "student")
    print(f"The student edition is in {html}; open {html / 'index.html'}.")


if __name__ == "__main__":
    main()
