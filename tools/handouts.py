"""Write the handout notebooks, ``student/notebooks/*.ipynb``, and the same in ``student/handouts.zip``.

Each chapter notebook without its solutions (:func:`tools.stubs.student_notebook`): every gated code
solution is a stub that keeps its functions' signatures and docstrings, holds ``# YOUR CODE HERE`` and raises
``NotImplementedError``; text solutions are cut out; exercises are plain markdown (Jupyter and Colab do not
render MyST directives); every output is cleared. Each handout runs top to bottom as it is: its checkers
report NOT YET until the student writes the stubs. Hand them out, upload them to a learning platform, or
open them in Colab (File, then Upload notebook).

    python -m tools.handouts [--root .] [--out student]
"""

from __future__ import annotations

import argparse
import shutil
import zipfile
from pathlib import Path

import nbformat

from tools.book import ROOT, chapters, read
from tools.stubs import student_notebook


def write(root: Path, out: Path) -> list[Path]:
    """Write the handouts of the book at ``root`` into ``out/notebooks`` and ``out/handouts.zip``."""
    folder = out / "notebooks"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    written = []
    for path in chapters(root):
        target = folder / path.name
        nbformat.write(student_notebook(read(path), handout=True), target)
        written.append(target)
    with zipfile.ZipFile(out / "handouts.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for target in written:
            archive.write(target, target.name)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's root, with _toc.yml")
    parser.add_argument("--out", type=Path, help="where notebooks/ and handouts.zip go (default: ROOT/student)")
    args = parser.parse_args()
    out = args.out or args.root / "student"
    written = write(args.root, out)
    print(f"wrote {len(written)} handouts into {out / 'notebooks'} and {out / 'handouts.zip'}")


if __name__ == "__main__":
    main()
