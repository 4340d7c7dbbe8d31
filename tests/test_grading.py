"""The isolated grader (tools/grade_submissions.py, tools/sandbox.py): cheats fail, bad files get rows, nothing leaks.

The submissions are the fixture book's (tests/fixtures/minibook, specs in its specs/ folder): bob's answer to
ex-1-1 is wrong (it counts seats from 1), and every cheat below starts from it. A cheat that got PASSED
would be a grade the student did not earn. The batch tests run sandboxes (a few seconds each), so they sit
in the slow tier; the file-reading and CSV tests are quick.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import importlib
import json
import os
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

from tools import book, grade_submissions, sandbox

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINIBOOK = FIXTURES / "minibook"
SPECS = str(MINIBOOK / "specs")
BOB = FIXTURES / "submissions" / "bob.ipynb"
ALICE = FIXTURES / "submissions" / "alice.ipynb"
LIBRARY = sandbox.library_dir()

needs_sandbox = pytest.mark.usefixtures("working_sandbox")  # fails, never skips, without a sandbox


def chapters() -> list[grade_submissions.Chapter]:
    return grade_submissions.instructor_chapters(MINIBOOK, SPECS)


def with_cells(path: Path, before: str = "", after: str = "", drop: str | None = None) -> nbformat.NotebookNode:
    """Bob's (or alice's) notebook with a code cell added at the top and/or the end, and cells starting ``drop`` cut."""
    nb = book.read(path)
    if drop:
        nb.cells = [cell for cell in nb.cells if not cell.source.startswith(drop)]
    if before:
        nb.cells.insert(2, nbformat.v4.new_code_cell(textwrap.dedent(before)))
    if after:
        nb.cells.append(nbformat.v4.new_code_cell(textwrap.dedent(after)))
    return nb


def cheats(alice_path: Path, marker: str) -> dict[str, nbformat.NotebookNode]:
    """Every cheat of issue 23, each on bob's wrong answer to ex-1-1."""
    library_file = LIBRARY / "exercises" / "spec.py"
    return {
        "redefines-checker": with_cells(BOB, after="def check_last_seat(fn):\n    print('ex-1-1 · PASSED · ok')"),
        "patches-check": with_cells(
            BOB, before="from transformerland.exercises.checking import Check\nCheck.that = lambda *a, **k: None"
        ),
        "patches-allclose": with_cells(BOB, before="import torch\ntorch.allclose = lambda *a, **k: True"),
        "patches-helpers": with_cells(
            BOB,
            before="""
            import transformerland.exercises.spec as spec
            spec.same_answer = lambda *a: True
            spec.Exercise.grade = lambda *a, **k: True
            spec.default_judge = lambda *a, **k: None
            """,
        ),
        "prints-passed": with_cells(
            BOB, after="print('ex-1-1 · PASSED · the last seat: all 3 checks agree.')", drop="check_last_seat("
        ),
        "passed-after-not-yet": with_cells(BOB, after="print('ex-1-1 · PASSED · ok')\nprint('ex-1-3 · PASSED · ok')"),
        "other-chapters": with_cells(BOB, after="print('ex-2-1 · PASSED · ok')\nprint('ex-8-4 · PASSED · ok')"),
        "formula": with_cells(BOB, after='print(\'ex-1-1 · NOT YET · =HYPERLINK("http://evil", "x")\')'),
        "rewrites-library": with_cells(
            BOB,
            before=f"""
            import transformerland.exercises.spec as spec, pathlib
            try:
                pathlib.Path(spec.__file__).write_text("# gone")
            except OSError:
                pass
            try:
                pathlib.Path({str(library_file)!r}).write_text("# gone")
            except OSError:
                pass
            """,
        ),
        "reads-classmate": with_cells(
            BOB,
            after=f"""
            import json, os
            for folder in [{str(alice_path.parent)!r}, {str(FIXTURES / "submissions")!r}, os.path.expanduser("~")]:
                try:
                    for name in os.listdir(folder):
                        if name.endswith(".ipynb"):
                            cells = json.load(open(os.path.join(folder, name)))["cells"]
                            exec("".join(next(c["source"] for c in cells if "def last_seat" in "".join(c["source"]))))
                except OSError:
                    pass
            """,
        ),
        "outlives": with_cells(
            BOB,
            after=f"""
            import subprocess, sys
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # {marker}"], start_new_session=True)
            """,
        ),
        "no-metadata-no-checker": _stripped(BOB),
        "network": with_cells(
            BOB,
            after="""
            import socket
            try:
                socket.create_connection(("pypi.org", 443), timeout=3)
                def last_seat(tokens):
                    return len(tokens) - 1 if tokens else None
            except OSError:
                pass
            """,
        ),
    }


def _stripped(path: Path) -> nbformat.NotebookNode:
    nb = book.read(path)
    nb.metadata = {}
    nb.cells = [cell for cell in nb.cells if not cell.source.startswith(("check_last_seat(", "def check_last_seat"))]
    return nb


def checksums(*folders: Path) -> dict[str, str]:
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.suffix in (".py", ".toml")  # the checkers' code and their data
    }


def rows_by_student(rows: list[dict]) -> dict[str, dict[str, tuple[str, str]]]:
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for row in rows:
        found.setdefault(row["student"], {})[row["exercise"]] = (row["verdict"], row["message"])
    return found


def processes_with(marker: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and marker in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                found.append(pid)
        except OSError:
            pass
    return found


@pytest.mark.slow
@needs_sandbox
def test_every_cheat_fails_and_a_bad_batch_still_gets_a_row_each(tmp_path: Path):
    folder = tmp_path / "submissions"
    (folder / "alice").mkdir(parents=True)
    nbformat.write(book.read(ALICE), folder / "alice" / "counting.ipynb")
    marker = f"outlive-{os.getpid()}-{time.time_ns()}"
    for name, nb in cheats(folder / "alice" / "counting.ipynb", marker).items():
        (folder / name).mkdir()
        nbformat.write(nb, folder / name / "counting.ipynb")
    malformed = {
        "not-json": b"this is not a notebook",
        "empty": b"",
        "braces": b"{}",
        "utf16": codecs.BOM_UTF16_LE + nbformat.writes(book.read(ALICE)).encode("utf-16-le"),
        "odd-metadata": nbformat.writes(
            nbformat.from_dict({**book.read(ALICE), "metadata": {"transformerland": "checkers"}})
        ).encode(),
    }
    for name, data in malformed.items():
        (folder / name).mkdir()
        (folder / name / "counting.ipynb").write_bytes(data)
    for name, source in {
        "hangs": "import signal\nfor name in ('SIGINT', 'SIGALRM', 'SIGTERM'):\n"
        "    signal.signal(getattr(signal, name), signal.SIG_IGN)\nwhile True:\n    pass",
        "memory-hog": "hog = bytearray(64 * 2**30)",
        "floods-output": "for _ in range(3):\n    print('x' * 100_000_000)",
    }.items():
        (folder / name).mkdir()
        nbformat.write(with_cells(BOB, before=source), folder / name / "counting.ipynb")
    (folder / "=HYPERLINK(1)").mkdir()
    nbformat.write(
        with_cells(BOB, before="def last_seat(tokens):\n    raise ValueError('=1+1')"),
        folder / "=HYPERLINK(1)" / "c.ipynb",
    )

    before = checksums(LIBRARY, MINIBOOK)
    out = tmp_path / "grades.csv"
    found_chapters = chapters()  # as `--chapter 1` does: a file that is not a notebook names no chapter
    rows = grade_submissions.grade_folder(
        folder,
        out,
        found_chapters,
        jobs=2,
        seed=12345,
        timeout=25,
        cell_timeout=5,
        memory_mb=3072,
        forced=found_chapters[0],
    )
    print(*[(r["student"], r["exercise"], r["verdict"], r["message"][:70]) for r in rows], sep="\n")
    assert checksums(LIBRARY, MINIBOOK) == before, "a submission changed the checker files"
    assert not processes_with(marker), "a process a submission started outlived its sandbox"
    assert not (out.parent / (out.name + ".partial")).exists()
    found = rows_by_student(rows)
    students = {p.name for p in folder.iterdir()} - {"=HYPERLINK(1)"} | {"'=HYPERLINK(1)"}
    assert set(found) == students
    for student, verdicts in found.items():
        assert set(verdicts) == {"ex-1-1", "ex-1-3"}, f"{student}: rows for {sorted(verdicts)}"
    assert found["alice"] == {
        "ex-1-1": ("PASSED", "the last seat: all 3 checks agree."),
        "ex-1-3": ("PASSED", "seats apart: all 4 checks agree."),
    }
    for name in [*cheats(folder, marker), "hangs", "memory-hog", "floods-output", "'=HYPERLINK(1)"]:
        assert found[name]["ex-1-1"][0] != "PASSED", f"the cheat {name} passed"
    for name in ["not-json", "empty", "braces"]:
        assert {v[0] for v in found[name].values()} == {"ERROR"}, f"{name}: {found[name]}"
    assert found["utf16"]["ex-1-1"][0] == "PASSED" and found["odd-metadata"]["ex-1-1"][0] == "PASSED"
    assert "timed out" in found["hangs"]["ex-1-1"][1]
    assert found["no-metadata-no-checker"]["ex-1-1"][0] == "NOT YET"
    written = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [(r["student"], r["exercise"], r["verdict"]) for r in written] == [
        (r["student"], r["exercise"], r["verdict"]) for r in rows
    ]
    assert not any(value.startswith(grade_submissions.FORMULA_START) for row in written for value in row.values())


def test_every_chapter_of_the_book_makes_a_job_for_the_sandbox():
    """The job of each chapter (its exercises' hidden cases, and a class exercise's probe by name) is built and
    travels as JSON."""
    for chapter in grade_submissions.instructor_chapters(book.ROOT, "transformerland.exercises"):
        sent = grade_submissions.job(chapter, ["pass"], seed=7, cell_timeout=10)
        assert [entry["label"] for entry in sent["exercises"]] == [k for k, v in chapter.expected.items() if v]
        for entry in sent["exercises"]:
            assert entry["cases"], entry["label"]
            if "spec" in entry:  # a probe: the sandbox imports the spec by this name
                module, _, name = entry["spec"].partition(":")
                assert getattr(importlib.import_module(module), name).label == entry["label"]
        json.dumps(sent)


@pytest.mark.slow
@needs_sandbox
def test_a_class_exercise_is_graded_by_its_probe_in_the_sandbox(tmp_path: Path):
    layer = textwrap.dedent(
        """
        import torch
        from torch import nn

        class MyLearnedPositions(nn.Module):
            def __init__(self, max_len, d_model):
                super().__init__()
                self.max_len = max_len
                self.table = nn.Embedding(max_len, d_model)
                nn.init.normal_(self.table.weight, std=0.02)

            def forward(self, x):
                if x.shape[1] > self.max_len:
                    raise ValueError(f"this table has max_len={self.max_len} rows, got {x.shape[1]} positions")
                return x + self.table.weight[: x.shape[1]]
        """
    )
    chapters = grade_submissions.instructor_chapters(book.ROOT, "transformerland.exercises")
    (tmp_path / "erin").mkdir()
    path = tmp_path / "erin" / "03_learned.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(layer)]), path)
    found = {row["exercise"]: row["verdict"] for row in grade_submissions.grade(path, tmp_path, chapters, seed=5)}
    assert found["ex-3-1"] == "PASSED", found
    assert found["ex-3-2"] == "NOT YET"  # not defined in this submission


@pytest.mark.slow
@needs_sandbox
def test_a_forbidden_call_and_a_write_into_the_input_fail_in_the_sandbox_too(tmp_path: Path):
    submissions = {
        "01_why_order_matters.ipynb": [
            "import math, torch\nfrom transformerland.attention import single_head_attention as sha",
            "def my_attention(x, w_q, w_k, w_v):\n    return sha(x, w_q, w_k, w_v)[0]",
        ],
        "07_observatory.ipynb": ["def my_position_ids(mask):\n    return mask.cumsum_(dim=1).sub_(1).clamp_(min=0)"],
    }
    chapters = grade_submissions.instructor_chapters(book.ROOT, "transformerland.exercises")
    (tmp_path / "dana").mkdir()
    found = {}
    for name, cells in submissions.items():
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
        nbformat.write(nb, tmp_path / "dana" / name)
        for row in grade_submissions.grade(tmp_path / "dana" / name, tmp_path, chapters, seed=99, timeout=120):
            found[row["exercise"]] = (row["verdict"], row["message"])
    assert found["ex-1-2"][0] == "NOT YET" and "single_head_attention" in found["ex-1-2"][1]
    assert found["ex-7-1"] == ("NOT YET", "your function changed the mask it was given")
    assert {found[label][0] for label in ("ex-7-2", "ex-7-3")} == {"NOT YET"}  # not defined at all


# --- quick: reading files, finding chapters, writing the CSV ------------------------------------------------


@pytest.mark.parametrize(
    ("data", "words"),
    [(b"", "empty"), (b"not json", "not JSON"), (b"{}", "no list of cells"), (b"[1, 2]", "no list of cells")],
)
def test_an_unreadable_file_is_named_not_raised(tmp_path: Path, data: bytes, words: str):
    path = tmp_path / "x.ipynb"
    path.write_bytes(data)
    with pytest.raises(grade_submissions.Unreadable, match=words):
        grade_submissions.code_cells(path)


def test_cells_are_read_from_any_notebook_encoding_and_metadata(tmp_path: Path):
    nb = book.read(ALICE)
    nb.metadata = {"transformerland": ["unexpected"]}
    text = nbformat.writes(nb)
    for name, data in {"utf8": text.encode(), "utf16": codecs.BOM_UTF16_LE + text.encode("utf-16-le")}.items():
        (tmp_path / f"{name}.ipynb").write_bytes(data)
        cells = grade_submissions.code_cells(tmp_path / f"{name}.ipynb")
        assert any(cell.startswith("def last_seat") for cell in cells)


def test_an_instructors_own_spec_package_reads_its_data_beside_its_modules():
    """The fixture book's chapter 2 is declared from ``specs/ch2.toml``, not the library's chapter 2 data."""
    spec = grade_submissions.load_specs(SPECS, 2)["ex-2-1"]
    assert (spec.function, spec.checker, spec.what) == ("ticket_label", "check_ticket_label", "ticket labels")
    assert spec.check(lambda index, width: f"T-{index:0{width}d}", quiet=True)


def test_the_expected_exercises_come_from_the_instructors_chapter_not_the_submission():
    found = chapters()
    assert {c.number: list(c.expected) for c in found} == {1: ["ex-1-1", "ex-1-3"], 2: ["ex-2-1"]}
    stripped = [cell.source for cell in _stripped(BOB).cells if cell.cell_type == "code"]
    assert grade_submissions.chapter_of(Path("bob.ipynb"), stripped, found).number == 1
    assert grade_submissions.chapter_of(Path("02_tickets.ipynb"), [], found).number == 2


@pytest.mark.parametrize("field", ["=HYPERLINK(1)", "+1", "-1", "@SUM(A1)", "\t=1"])
def test_formulas_are_neutralised(field: str):
    assert grade_submissions.safe(field) == "'" + field
    assert grade_submissions.safe("the last seat") == "the last seat"


def test_the_csv_is_replaced_in_one_step(tmp_path: Path):
    out = tmp_path / "grades.csv"
    out.write_text("old")
    grade_submissions.write_csv([grade_submissions._row("a", "a.ipynb", "ex-1-1", "PASSED", "ok", "", 1)], out)
    assert out.read_text().splitlines()[1] == "a,a.ipynb,ex-1-1,PASSED,ok,,1"
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]


def test_without_a_sandbox_the_grader_stops_with_a_how_to(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(sandbox.NoSandbox, match="apt-get install bubblewrap"):
        sandbox.command()
    assert "--unsafe" in sandbox.HOW_TO


@needs_sandbox
def test_the_sandbox_gives_torch_the_cores_it_is_granted():
    """One submission at a time gets every core (chapter 8 graded in about its own run time); --jobs shares them."""
    shown = sandbox.command(threads=3)
    assert shown[shown.index("OMP_NUM_THREADS") + 1] == "3"
    shown = sandbox.command()
    assert shown[shown.index("OMP_NUM_THREADS") + 1] == "1"
