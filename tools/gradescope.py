"""Gradescope autograders, one zip per chapter, built on the same isolated grading as ``make grade``.

``python -m tools.gradescope build [--out gradescope]`` (``make gradescope``) writes
``gradescope/chNN_autograder.zip`` for every chapter with coding exercises. Upload one as a programming
assignment's autograder ("Zip file upload", base image Ubuntu). Each zip holds, at its root:

* ``setup.sh``: run once when Gradescope builds the image: installs Python, bubblewrap, and the pinned
  requirements;
* ``run_autograder``: run for each submission: grades the notebook the student uploaded (any ``*.ipynb`` in
  ``/autograder/submission``) against this chapter, in a sandbox, and writes
  ``/autograder/results/results.json`` in Gradescope's format: one test per exercise with its points
  (``max_score``), its score, the verdict's message and hint as output, and its visibility;
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
import secrets
import stat
import time
import zipfile
from pathlib import Path

from tools import book
from tools.grade_submissions import Chapter, instructor_chapter, load_specs, submissions
from tools.grade_submissions import grade as grade_one
from tools.sandbox import NoSandbox, command, library_dir

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu).
set -euo pipefail
apt-get update -qq
apt-get install -y -qq python3 python3-pip python3-venv bubblewrap >/dev/null
python3 -m venv /opt/grader
/opt/grader/bin/pip install --quiet --disable-pip-version-check -r /autograder/source/requirements.txt
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission; it writes $ROOT/results/results.json.
set -u
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${AUTOGRADER_PYTHON:-/opt/grader/bin/python}"
cd "$ROOT/source"
PYTHONPATH="$ROOT/source/lib:$ROOT/source" "$PYTHON" -m tools.gradescope run --root "$ROOT"
"""

#: What the grader needs of the repository, besides the chapter itself.
TOOLS = ["__init__.py", "book.py", "exercises.py", "myst.py", "sandbox.py", "grade_submissions.py", "gradescope.py"]


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
            config = {"chapter": chapter.number, "specs": package, "expected": list(chapter.expected)}
            _add_text(archive, "autograder.json", json.dumps(config))
            requirements = book.ROOT / "requirements.txt"
            if requirements.exists():
                archive.write(requirements, "requirements.txt")
            for name in TOOLS:
                archive.write(book.ROOT / "tools" / name, f"tools/{name}")
            for file in _package_files(library):
                archive.write(file, f"lib/transformerland/{file.relative_to(library)}")
        written.append(target)
    return written


def _package_files(library: Path) -> list[Path]:
    """The library's modules and the data they read (the exercises' ``ch<N>.toml``, ``data/*.json``)."""
    return sorted(p for p in library.rglob("*") if p.is_file() and p.suffix in (".py", ".toml", ".json"))


def _add_text(archive: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | 0o755) << 16  # run_autograder and setup.sh must be executable
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, text)


def results(rows: list[dict[str, str]], chapter: object, seconds: float, note: str = "") -> dict:
    """Gradescope's results.json for one submission's rows."""
    specs = chapter.expected  # type: ignore[attr-defined]
    tests = []
    for row in rows:
        spec = specs.get(row["exercise"])
        points = spec.points if spec is not None else 0.0
        passed = row["verdict"] == "PASSED"
        output = f"{row['verdict']} · {row['message']}" + (f"\nHint: {row['hint']}" if row["hint"] else "")
        tests.append(
            {
                "name": f"{row['exercise']}: {spec.what or spec.function}"
                if spec is not None
                else row["exercise"] or "submission",
                "number": row["exercise"].removeprefix("ex-").replace("-", "."),
                "score": points if passed else 0.0,
                "max_score": points,
                "status": "passed" if passed else "failed",
                "output": output,
                "visibility": spec.visibility if spec is not None else "visible",
            }
        )
    return {
        "score": sum(test["score"] for test in tests),
        "execution_time": round(seconds),
        "output": note or "Each exercise was run in a sandbox on cases that are not in the handout.",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def run(root: Path) -> dict:
    """Grade the submission in ``root/submission`` and write ``root/results/results.json``."""
    start = time.perf_counter()
    source = root / "source"
    config = json.loads((source / "autograder.json").read_text(encoding="utf-8"))
    specs = load_specs(config["specs"], config["chapter"])
    chapter = Chapter(config["chapter"], Path(), {label: specs.get(label) for label in config["expected"]})
    unsafe, note = False, ""
    try:
        command()
    except NoSandbox:  # each Gradescope submission has a container of its own; say so, then grade without
        unsafe, note = True, "No bubblewrap in this image: graded in Gradescope's own container, as user nobody."
    try:
        paths = submissions(root / "submission")
    except ValueError:
        paths = []
    if paths:
        seed = 1 + secrets.randbelow(2**31)
        rows = grade_one(paths[0], root / "submission", [chapter], seed=seed, unsafe=unsafe, forced=chapter)
    else:
        rows = [
            {"exercise": label, "verdict": "ERROR", "message": "no notebook (*.ipynb) was uploaded", "hint": ""}
            for label in chapter.expected
        ]
    data = results(rows, chapter, time.perf_counter() - start, note)
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
