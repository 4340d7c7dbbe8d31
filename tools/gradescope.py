"""Gradescope autograders, one zip per chapter, built on the same isolated grading as ``make grade``.

``python -m tools.gradescope build [--out gradescope]`` (``make gradescope``) writes
``gradescope/chNN_autograder.zip`` for every chapter with coding exercises. Upload one as a programming
assignment's autograder ("Zip file upload", base image Ubuntu). Each zip holds, at its root:

* ``setup.sh``: run once when Gradescope builds the image: installs Python (3.11 or newer, checked),
  bubblewrap, torch's CPU build from PyTorch's index, and only what grading needs
  (``requirements-grading.txt``: requirements.txt without the book's build and the test tools);
* ``run_autograder``: run for each submission: grades the notebook the student uploaded (the one named like
  the chapter, else the first by name, and the output says which when there are several) against this
  chapter, in a sandbox where :func:`tools.sandbox.available` says one starts (else in Gradescope's own
  container, and the output says so), and always writes ``/autograder/results/results.json`` in
  Gradescope's format, even when the grader fails: one test per exercise with its points (``max_score``),
  its score, its visibility, and as output only the verdict line and the hint (never a hidden case's data);
* ``source/``: the library (``lib/transformerland``), the grader (``tools/``), and ``autograder.json``: the
  chapter's number and the exercises it expects, read from the instructor's copy of the chapter when the zip
  was built (the chapter itself, with its solutions, is not in the zip).

``python -m tools.gradescope run [--root /autograder]`` is what ``run_autograder`` calls; the tests run it on
a simulated ``/autograder`` folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import stat
import time
import traceback
import zipfile
from pathlib import Path

from tools import book
from tools.grade_submissions import Chapter, instructor_chapter, load_specs, submissions
from tools.grade_submissions import grade as grade_one
from tools.sandbox import library_dir, problem

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 24.04 or newer).
set -euo pipefail
cd /autograder/source
apt-get update -qq
apt-get install -y -qq python3 python3-pip python3-venv bubblewrap >/dev/null
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "setup.sh: the grader needs Python 3.11 or newer, and this image's python3 is $(python3 --version 2>&1)." \\
    "Choose a newer base image (Ubuntu 24.04 has 3.12)." >&2; exit 1; }
python3 -m venv /opt/grader
PIP="/opt/grader/bin/pip install --quiet --disable-pip-version-check"
# torch's CPU build, from PyTorch's own index (PyPI's Linux wheel is the CUDA build, gigabytes of it).
$PIP --index-url https://download.pytorch.org/whl/cpu "torch==$(sed -n 's/^torch==//p' requirements.txt)+cpu"
# What grading needs and nothing else: not the book's build (jupyter-book, sphinx), not the test tools.
$PIP -r requirements-grading.txt
$PIP --no-deps $(PYTHONPATH=lib /opt/grader/bin/python -m transformerland.extras --weights)
"""

#: What requirements.txt lists that grading does not need: the book's build, the tests, the linter; torch comes
#: from PyTorch's CPU index instead.
NOT_FOR_GRADING = {
    "torch", "jupyter-book", "sphinx", "sphinx-book-theme", "myst-nb", "sphinx-exercise", "sphinxcontrib-bibtex",
    "setuptools", "nbval", "jupyter-cache", "pytest", "pytest-xdist", "filelock", "pytest-timeout", "hypothesis",
    "playwright", "axe-playwright-python", "ruff",
}  # fmt: skip

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission; it writes $ROOT/results/results.json.
set -u
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${AUTOGRADER_PYTHON:-/opt/grader/bin/python}"
cd "$ROOT/source"
rm -f "$ROOT/results/results.json"
PYTHONPATH="$ROOT/source/lib:$ROOT/source" "$PYTHON" -m tools.gradescope run --root "$ROOT"
if [ ! -s "$ROOT/results/results.json" ]; then  # Python itself did not start: still a result, saying so
  mkdir -p "$ROOT/results"
  echo '{"score": 0, "output": "The autograder could not start; please tell your instructor.", "tests": []}' \
    > "$ROOT/results/results.json"
fi
"""

#: What the grader needs of the repository, besides the chapter itself.
TOOLS = [
    "__init__.py", "book.py", "exercises.py", "myst.py", "sandbox.py", "grading_build.py", "grade_submissions.py",
    "gradescope.py",
]  # fmt: skip


def build(root: Path, out: Path, package: str = "transformerland.exercises") -> list[Path]:
    """Write one autograder zip per chapter of the book at ``root`` that has coding exercises with specs."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    library = library_dir()
    for path in book.chapters(root):
        chapter = instructor_chapter(path, package)
        if not any(chapter.expected.values()):
            continue
        target = out / f"ch{chapter.number:02d}_autograder.zip"
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            _add_text(archive, "setup.sh", SETUP)
            _add_text(archive, "run_autograder", RUN)
            config = {
                "chapter": chapter.number,
                "notebook": path.name,
                "specs": package,
                "expected": list(chapter.expected),
            }
            _add_text(archive, "autograder.json", json.dumps(config))
            requirements = book.ROOT / "requirements.txt"
            if requirements.exists():
                archive.write(requirements, "requirements.txt")
                _add_text(archive, "requirements-grading.txt", grading_requirements(requirements.read_text()))
            for name in TOOLS:
                archive.write(book.ROOT / "tools" / name, f"tools/{name}")
            for file in _package_files(library):
                archive.write(file, f"lib/transformerland/{file.relative_to(library)}")
        written.append(target)
    return written


def grading_requirements(requirements: str) -> str:
    """The lines of ``requirements`` that grading needs (:data:`NOT_FOR_GRADING` left out)."""
    kept = []
    for line in requirements.splitlines():
        name = re.split(r"[=<>!~\[; ]", line.strip(), maxsplit=1)[0].lower()
        if line.strip() and not line.lstrip().startswith("#") and name not in NOT_FOR_GRADING:
            kept.append(line.strip())
    return "\n".join(kept) + "\n"


def _package_files(library: Path) -> list[Path]:
    """The library's modules and the data they read (``data/*.json``)."""
    return sorted(p for p in library.rglob("*") if p.is_file() and p.suffix in (".py", ".json"))


def _add_text(archive: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | 0o755) << 16  # run_autograder and setup.sh must be executable
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, text)


def shown(row: dict[str, str]) -> str:
    """What a student sees of a row: the verdict line (the message's first line, cut short) and the hint."""
    lines = (row.get("message") or "").strip().splitlines()
    line = f"{row['verdict']} · {lines[0][:300] if lines else ''}".rstrip(" ·")
    return line + (f"\nHint: {row['hint'][:300]}" if row.get("hint") else "")


def results(rows: list[dict[str, str]], chapter: object, seconds: float, note: str = "") -> dict:
    """Gradescope's results.json for one submission's rows."""
    specs = chapter.expected  # type: ignore[attr-defined]
    tests = []
    for row in rows:
        spec = specs.get(row["exercise"])
        points = spec.points if spec is not None else 0.0
        passed = row["verdict"] == "PASSED"
        tests.append(
            {
                "name": f"{row['exercise']}: {spec.what or spec.function}"
                if spec is not None
                else row["exercise"] or "submission",
                "number": row["exercise"].removeprefix("ex-").replace("-", "."),
                "score": points if passed else 0.0,
                "max_score": points,
                "status": "passed" if passed else "failed",
                "output": shown(row),
                "visibility": spec.visibility if spec is not None else "visible",
            }
        )
    return {
        "score": sum(test["score"] for test in tests),
        "execution_time": round(seconds),
        "output": note,
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def choose(paths: list[Path], notebook: str) -> tuple[Path, str]:
    """The uploaded notebook to grade (the one named like the chapter, else the first by name), and a sentence
    saying which when several were uploaded."""
    chosen = next((p for p in paths if p.name.lower() == notebook.lower()), paths[0])
    if len(paths) == 1:
        return chosen, ""
    names = ", ".join(p.name for p in paths)
    why = "the one named like the chapter" if chosen.name.lower() == notebook.lower() else "the first by name"
    return chosen, f"{len(paths)} notebooks were uploaded ({names}); only {chosen.name} was graded ({why})."


def run(root: Path) -> dict:
    """Grade the submission in ``root/submission`` and write ``root/results/results.json``, whatever happens."""
    start = time.perf_counter()
    notes: list[str] = []
    chapter = Chapter(0, Path(), {})
    rows: list[dict[str, str]] = []
    try:
        config = json.loads((root / "source" / "autograder.json").read_text(encoding="utf-8"))
        specs = load_specs(config["specs"], config["chapter"])
        chapter = Chapter(config["chapter"], Path(), {label: specs.get(label) for label in config["expected"]})
        unsafe = False
        if why := problem():  # Gradescope gives each submission a container of its own: grade there, and say so
            unsafe = True
            reason = why.strip().splitlines()[-1]
            notes.append(
                "The sandbox (bubblewrap) cannot start in this image, so this submission ran WITHOUT it, in "
                f"Gradescope's own container as user nobody. {reason}"
            )
        else:
            notes.append("Each exercise was run in a sandbox on cases that are not in the handout.")
        try:
            paths = submissions(root / "submission")
        except ValueError:
            paths = []
        if paths:
            path, which = choose(paths, config.get("notebook", ""))
            notes += [which] if which else []
            seed = 1 + secrets.randbelow(2**31)
            rows = grade_one(path, root / "submission", [chapter], seed=seed, unsafe=unsafe, forced=chapter)
        else:
            rows = [
                {"exercise": label, "verdict": "ERROR", "message": "no notebook (*.ipynb) was uploaded", "hint": ""}
                for label in chapter.expected
            ]
    except Exception as error:  # the autograder's own failure: every test says so, and results.json is written
        traceback.print_exc()
        notes.append(f"The autograder failed ({type(error).__name__}); please tell your instructor.")
        rows = [
            {"exercise": label, "verdict": "ERROR", "message": "the autograder failed", "hint": ""}
            for label in chapter.expected or [""]
        ]
    finally:
        data = results(rows, chapter, time.perf_counter() - start, " ".join(notes))
        (root / "results").mkdir(parents=True, exist_ok=True)
        temporary = root / "results" / "results.json.tmp"
        temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(temporary, root / "results" / "results.json")
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("build", help="write one autograder zip per chapter")
    making.add_argument("--root", type=Path, default=book.ROOT, help="the book (default: this repository)")
    making.add_argument("--out", type=Path, default=Path("gradescope"), help="where the zips go")
    making.add_argument("--specs", default="transformerland.exercises", help="where the chapters' specs are")
    grading = commands.add_parser("run", help="grade the submission of a Gradescope run")
    grading.add_argument("--root", type=Path, default=Path("/autograder"))
    args = parser.parse_args()
    if args.command == "build":
        written = build(args.root, args.out, args.specs)
        print(f"wrote {len(written)} autograders into {args.out}: {', '.join(p.name for p in written)}")
    else:
        data = run(args.root)
        print(f"score {data['score']:g} of {sum(t['max_score'] for t in data['tests']):g}")


if __name__ == "__main__":
    main()
