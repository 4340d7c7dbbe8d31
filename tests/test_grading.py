"""The isolated grader (tools/grade_submissions.py, tools/sandbox.py): cheats fail, bad files get rows, nothing leaks.

The submissions are the fixture book's (tests/fixtures/minibook, specs in its specs/ folder): bob's answer to
ex-1-1 is wrong (it counts seats from 1), and every cheat below starts from it. A cheat that got PASSED
would be a grade the student did not earn. The batch tests run sandboxes (a few seconds each), so they sit
in the slow tier; the file-reading and CSV tests are quick.
"""

from __future__ import annotations

import ast
import codecs
import csv
import dataclasses
import hashlib
import inspect
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

from tools import book, grade_submissions, grading_build, sandbox

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
    library_file = LIBRARY / "exercises" / "exercise.py"
    return {
        "redefines-checker": with_cells(BOB, after="def check_last_seat(fn):\n    print('ex-1-1 · PASSED · ok')"),
        "patches-check": with_cells(
            BOB, before="from transformerland.exercises import exercise\nexercise.Tensor.fault = lambda *a, **k: None"
        ),
        "patches-allclose": with_cells(BOB, before="import torch\ntorch.allclose = lambda *a, **k: True"),
        "patches-helpers": with_cells(
            BOB,
            before="""
            import transformerland.exercises.exercise as spec
            spec._equal = lambda *a: True
            spec.Exercise.grade = lambda *a, **k: True
            spec.Exact.fault = lambda *a, **k: None
            """,
        ),
        "prints-passed": with_cells(
            BOB, after="print('ex-1-1 · PASSED · the last seat: all 3 calls agree.')", drop="check_last_seat("
        ),
        "passed-after-not-yet": with_cells(BOB, after="print('ex-1-1 · PASSED · ok')\nprint('ex-1-3 · PASSED · ok')"),
        "other-chapters": with_cells(BOB, after="print('ex-2-1 · PASSED · ok')\nprint('ex-8-4 · PASSED · ok')"),
        "formula": with_cells(BOB, after='print(\'ex-1-1 · NOT YET · =HYPERLINK("http://evil", "x")\')'),
        "rewrites-library": with_cells(
            BOB,
            before=f"""
            import transformerland.exercises.exercise as spec, pathlib
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
        if path.suffix == ".py"  # the exercises' declarations and the grader's code
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
        "ex-1-1": ("PASSED", "the last seat: all 3 calls agree."),
        "ex-1-3": ("PASSED", "seats apart: all 3 calls agree."),
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
    """The job of each chapter (its exercises' hidden calls, and a class exercise's feeds) is built and travels
    as JSON."""
    for chapter in grade_submissions.instructor_chapters(book.ROOT, "transformerland.exercises"):
        sent = grade_submissions.job(chapter, ["pass"], seed=7, cell_timeout=10)
        assert [entry["label"] for entry in sent["exercises"]] == [k for k, v in chapter.expected.items() if v]
        for entry in sent["exercises"]:
            assert entry["cases"], entry["label"]
            assert all(set(call) == {"args", "kwargs", "feeds"} for call in entry["cases"]), entry["label"]
        json.dumps(sent)


@pytest.mark.slow
@needs_sandbox
def test_a_class_exercise_is_judged_here_on_what_it_did_in_the_sandbox(tmp_path: Path):
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
        "07_observatory.ipynb": ["def my_packed_positions(ids):\n    return ids.zero_()"],
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
    assert found["ex-7-1"][0] == "NOT YET" and "changed the arguments it was given" in found["ex-7-1"][1]
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
    """The fixture book's chapter 2 is the instructor's own package's declaration, not the library's chapter 2."""
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


def test_an_environment_under_tmp_is_mounted_on_top_of_the_sandboxs_own_tmp(monkeypatch: pytest.MonkeyPatch):
    """A fresh clone in /tmp (its .venv there) is seen in the sandbox: binds come after the private /tmp."""
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: "/usr/bin/bwrap")
    monkeypatch.setattr(sandbox, "python_roots", lambda: [Path("/tmp/clone/.venv")])
    shown = sandbox.command(library=Path("/tmp/grading-build/transformerland"))
    private = shown.index("--tmpfs")
    assert shown[private + 1] == "/tmp"
    for source in ("/tmp/clone/.venv", "/tmp/grading-build/transformerland"):
        assert shown.index(source) > private, f"{source} would be hidden by the sandbox's own /tmp"


@needs_sandbox
def test_the_sandbox_gives_torch_the_cores_it_is_granted():
    """One submission at a time gets every core (chapter 8 graded in about its own run time); --jobs shares them."""
    shown = sandbox.command(threads=3)
    assert shown[shown.index("OMP_NUM_THREADS") + 1] == "3"
    shown = sandbox.command()
    assert shown[shown.index("OMP_NUM_THREADS") + 1] == "1"


# --- the grading build: no answer in the sandbox to take ------------------------------------------------------

SINUSOIDAL = "transformerland.encodings.sinusoidal.sinusoidal_encoding"
ATTENTION = "transformerland.attention.single_head_attention"
METHOD = "transformerland.encodings.sinusoidal.SinusoidalPositionalEncoding.forward"


def withholding(spec, names: tuple[str, ...]):
    """``spec`` withholding ``names``."""
    return dataclasses.replace(spec, withheld=names)


def distinctive_statements(function) -> list[str]:
    """The statements of ``function``'s body (docstring aside, as ast.unparse writes them) that its module writes
    nowhere else: what a copy of the module may hold only if it kept the body."""
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    module = ast.parse(Path(inspect.getsourcefile(function)).read_text(encoding="utf-8"))
    for parent in ast.walk(module):
        for field in ("body",):
            children = getattr(parent, field, None)
            if isinstance(children, list):
                setattr(parent, field, [c for c in children if getattr(c, "name", None) != node.name or c is parent])
    rest = ast.unparse(module)
    return [text for text in (ast.unparse(statement) for statement in body) if text not in rest]


def test_the_grading_build_holds_no_body_of_a_withheld_function_and_no_exercise(tmp_path: Path):
    from transformerland.attention import single_head_attention
    from transformerland.encodings.sinusoidal import SinusoidalPositionalEncoding, sinusoidal_encoding

    package = grading_build.write(LIBRARY, tmp_path, [SINUSOIDAL, ATTENTION, METHOD], {"check_x": "ex-2-1"})
    copied = "\n".join(path.read_text(encoding="utf-8") for path in package.rglob("*.py"))
    for name, function in {
        SINUSOIDAL: sinusoidal_encoding,
        ATTENTION: single_head_attention,
        METHOD: SinusoidalPositionalEncoding.forward,
    }.items():
        statements = distinctive_statements(function)
        assert statements, f"{name}: the search is blind"
        module_copy = (package / Path(inspect.getsourcefile(function)).relative_to(LIBRARY)).read_text()
        assert [s for s in statements if s in module_copy] == [], f"{name}'s body is in the copy"
        assert f"{name} is withheld while this chapter is graded" in copied
        assert inspect.getdoc(function).splitlines()[0] in copied, f"{name}: its docstring should stay"
    assert not [p for p in package.rglob("*") if p.name == "__pycache__" or p.suffix in (".pyc", ".toml")]
    left = {p.name for p in (package / "exercises").iterdir()}
    assert {"harness.py", "codec.py", "__init__.py", "ch2.py"} <= left
    assert left <= grading_build.kept_modules(LIBRARY / "exercises") | {"__init__.py"} | {
        f"ch{n}.py" for n in range(1, 10)
    }
    for stub in ("__init__.py", "ch2.py"):
        text = (package / "exercises" / stub).read_text()
        tree = ast.parse(text)
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)], "a stub imports nothing"
        assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["__getattr__"]
        namespace: dict = {"__name__": "transformerland.exercises.ch2"}
        exec(text, namespace)
        with pytest.raises(AttributeError, match="withheld while grading"):
            namespace["__getattr__"]("SINUSOIDAL_ENCODING")
    out = subprocess.run(
        [sys.executable, "-c", "from transformerland.exercises.ch2 import check_x, check_y; check_x(1); check_y(2)"],
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.stdout.splitlines() == ["ex-2-1 checked by the grader", "check_y checked by the grader"], out.stderr
    with pytest.raises(ValueError, match="not a Python function"):
        grading_build.write(LIBRARY, tmp_path / "other", ["transformerland.attention.torch"])


#: Submissions that take the library's answer instead of writing it; ``{fn}`` is the library function.
TAKERS = {
    "assigns": "from {module} import {fn}\n{mine} = {fn}",
    "wraps": "from {module} import {fn} as ref\n{mine} = lambda *a, **k: ref(*a, **k){tail}",
    "copies-code": (
        "import types\nfrom {module} import {fn} as ref\n"
        "copy = types.FunctionType(ref.__code__, ref.__globals__, 'copy', ref.__defaults__)\n"
        "{mine} = lambda *a, **k: copy(*a, **k){tail}"
    ),
    "switches-off-withholding": (
        "import contextlib\n"
        "try:\n"
        "    import transformerland.exercises.exercise as spec\n"
        "    spec._withholding = lambda names: contextlib.nullcontext()\n"
        "except Exception:\n"
        "    pass\n"
        "from {module} import {fn}\n{mine} = lambda *a, **k: {fn}(*a, **k){tail}"
    ),
    "reads-source": (
        "import {module} as library\n"
        "namespace = {{'__name__': '{module}', '__package__': '{package}'}}\n"
        "exec(open(library.__file__).read(), namespace)\n"
        "{mine} = lambda *a, **k: namespace['{fn}'](*a, **k){tail}"
    ),
}
#: Per chapter: the notebook's name, the exercise, the student's function, the library function, what the
#: student's function takes of its result, and an honest answer (the control: the grading build leaves a
#: student's own code working).
TAKEN = {
    1: (
        "01_why_order_matters.ipynb", "ex-1-2", "my_attention", "transformerland.attention", "single_head_attention",
        "[0]",
        "import math, torch\ndef my_attention(x, w_q, w_k, w_v, mask=None):\n    q, k, v = x @ w_q, x @ w_k, x @ w_v\n"
        "    scores = q @ k.T / math.sqrt(k.shape[-1])\n"
        "    if mask is not None:\n        scores = scores.masked_fill(~mask, float('-inf'))\n"
        "    return torch.softmax(scores, dim=-1) @ v",
    ),
    2: (
        "02_sinusoidal.ipynb", "ex-2-1", "my_sinusoidal_encoding", "transformerland.encodings.sinusoidal",
        "sinusoidal_encoding", "", "",
    ),
}  # fmt: skip


@pytest.mark.slow
@needs_sandbox
def test_taking_the_librarys_answer_fails_in_the_sandbox_on_two_chapters(tmp_path: Path):
    """Assigning, wrapping, copying the code of, or re-reading the source of the library's function, with the
    in-process check switched off: none of it passes, because the sandbox's library has no body to take."""
    book_chapters = {c.number: c for c in grade_submissions.instructor_chapters(book.ROOT, "transformerland.exercises")}
    rows = []
    for number, (notebook, label, mine, module, fn, tail, honest) in TAKEN.items():
        chapter = book_chapters[number]
        name = f"{module}.{fn}"
        specs = {lab: withholding(spec, (name,)) if lab == label else spec for lab, spec in chapter.expected.items()}
        chapter = dataclasses.replace(chapter, expected=specs)
        folder = tmp_path / f"ch{number}"
        fields = {"module": module, "fn": fn, "mine": mine, "tail": tail, "package": module.rpartition(".")[0]}
        sources = {cheat: source.format(**fields) for cheat, source in TAKERS.items()}
        if honest:
            sources["honest"] = honest
        for student, source in sources.items():
            (folder / student).mkdir(parents=True)
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
            nbformat.write(nb, folder / student / notebook)
        rows += [
            (number, row["student"], row["exercise"], row["verdict"], row["message"])
            for row in grade_submissions.grade_folder(
                folder, tmp_path / f"ch{number}.csv", [chapter], jobs=2, seed=3, timeout=120, forced=chapter
            )
            if row["exercise"] == label
        ]
    print(*rows, sep="\n")
    found = {(number, student): (verdict, message) for number, student, _, verdict, message in rows}
    assert found[(1, "honest")][0] == "PASSED", "the control: the grading build must leave honest code working"
    for number in TAKEN:
        for cheat in TAKERS:
            verdict, message = found[(number, cheat)]
            assert verdict != "PASSED", f"chapter {number}: the cheat {cheat} passed"
            # it failed for taking the answer (the in-process check, or the build's raise), not for a typo of ours
            assert "is withheld while" in message or "the library's own answer" in message, (number, cheat, message)
    assert "is withheld while" in found[(2, "switches-off-withholding")][1]


# --- limits: memory and processes for the whole sandbox, time for the whole run -------------------------------

IF_BROKEN = "\nif {condition}:\n    def last_seat(tokens):\n        return len(tokens) - 1 if tokens else None\n"
#: Each cell earns bob a PASSED only if the limit did not hold: its children all held their memory at once, its
#: file in /dev/shm was written whole, all its processes started. ``{n}`` and ``{mb}``: the attempt's size.
OVER_LIMIT = {
    "children-memory": """
        import os, time
        read, write = os.pipe()
        for _ in range(3):
            if os.fork() == 0:
                try:
                    block = b"x" * ({mb} * 2**20)
                    os.write(write, b"1")
                    time.sleep(4)
                finally:
                    os._exit(0)
        os.close(write)
        held = b""
        while chunk := os.read(read, 8):
            held += chunk
        """,
    "shm": """
        written = 0
        try:
            with open("/dev/shm/hog", "wb") as file:
                for _ in range({mb}):
                    file.write(b"x" * 2**20)
                    written += 1
        except OSError:
            pass
        """,
    "processes": """
        import os, time
        started = 0
        for _ in range({n}):
            try:
                if os.fork() == 0:
                    time.sleep(3)
                    os._exit(0)
                started += 1
            except OSError:
                break
        """,
}
BROKEN = {"children-memory": "held == b'111'", "shm": "written == {mb}", "processes": "started == {n}"}
#: The attempts over the limits (--memory 1500, 256 processes, /dev/shm of 512 MB), then the controls.
SIZES = {"over": {"mb": 700, "n": 300}, "under": {"mb": 20, "n": 20}}


@pytest.mark.slow
@needs_sandbox
def test_memory_and_processes_are_limited_for_the_whole_sandbox(tmp_path: Path):
    limits = sandbox.Limits.make(1500, 256)
    limits.close()
    folder = tmp_path / "submissions"
    for name, cell in OVER_LIMIT.items():
        for size, fields in SIZES.items():
            source = textwrap.dedent(cell).format(**fields) + IF_BROKEN.format(condition=BROKEN[name].format(**fields))
            (folder / f"{name}-{size}").mkdir(parents=True)
            nbformat.write(with_cells(BOB, after=source), folder / f"{name}-{size}" / "counting.ipynb")
    found_chapters = chapters()
    rows = grade_submissions.grade_folder(
        folder, tmp_path / "grades.csv", found_chapters, jobs=2, seed=1, timeout=120, memory_mb=1500,
        forced=found_chapters[0],
    )  # fmt: skip
    found = rows_by_student(rows)
    print(limits.describe(), *sorted(found.items()), sep="\n")
    for name in OVER_LIMIT:
        assert found[f"{name}-under"]["ex-1-1"][0] == "PASSED", f"the control of {name} is blind: {found}"
        if name == "children-memory" and not limits.groups:
            continue  # per process only: each child's 700 MB is within --memory (the guide says so)
        assert found[f"{name}-over"]["ex-1-1"][0] != "PASSED", f"{name}: the limit did not hold ({limits.kind})"


@pytest.mark.slow
@needs_sandbox
def test_a_cell_that_blocks_sigalrm_and_sleeps_costs_only_the_time_limit(tmp_path: Path):
    hang = "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\ntime.sleep(600)"
    (tmp_path / "carol").mkdir()
    nbformat.write(with_cells(BOB, before=hang), tmp_path / "carol" / "counting.ipynb")
    found_chapters = chapters()
    start = time.perf_counter()
    rows = grade_submissions.grade(
        tmp_path / "carol" / "counting.ipynb", tmp_path, found_chapters, seed=1, timeout=20, cell_timeout=5,
        forced=found_chapters[0],
    )  # fmt: skip
    took = time.perf_counter() - start
    assert {(row["verdict"], row["message"].split(":")[0]) for row in rows} == {("ERROR", "timed out")}
    assert took < 20 + 30, f"the hung submission held the grader {took:.0f} s for a limit of 20 s"


# --- no submission costs another its grade ---------------------------------------------------------------------


@pytest.mark.slow
@needs_sandbox
def test_every_submission_gets_its_rows_whatever_its_text_and_name(tmp_path: Path):
    folder = tmp_path / "submissions"
    (folder / "alice").mkdir(parents=True)
    nbformat.write(book.read(ALICE), folder / "alice" / "counting.ipynb")
    (folder / "upper").mkdir()
    nbformat.write(book.read(ALICE), folder / "upper" / "COUNTING.IPYNB")
    (folder / "mallory").mkdir()
    (folder / "mallory" / "counting.ipynb").symlink_to("../alice/counting.ipynb")
    odd_name = os.fsdecode(b"\xff\xfe-dave")
    (folder / odd_name).mkdir()
    nbformat.write(book.read(ALICE), folder / odd_name / "counting.ipynb")
    surrogate = "def last_seat(tokens):\n    raise ValueError(chr(0xDCFF) + '=1')"
    garbles = "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'[' * 200000)\n    except OSError:\n"
    garbles += "        pass\nos._exit(0)"
    for name, source in {"surrogate": surrogate, "garbles": garbles}.items():
        (folder / name).mkdir()
        nbformat.write(with_cells(BOB, after=source), folder / name / "counting.ipynb")
    number = json.loads(nbformat.writes(book.read(ALICE)))
    number["cells"].insert(2, {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 1\n", 42]})
    (folder / "number").mkdir()
    (folder / "number" / "counting.ipynb").write_text(json.dumps(number))
    out = tmp_path / "grades.csv"
    found_chapters = chapters()
    rows = grade_submissions.grade_folder(
        folder, out, found_chapters, jobs=2, seed=1, timeout=120, forced=found_chapters[0]
    )
    found = rows_by_student(rows)
    print(*sorted(found.items()), sep="\n")
    shown_odd = "\\udcff\\udcfe-dave"
    assert set(found) == {"alice", "upper", "mallory", shown_odd, "surrogate", "garbles", "number"}
    for student, verdicts in found.items():
        assert set(verdicts) == {"ex-1-1", "ex-1-3"}, f"{student}: rows for {sorted(verdicts)}"
    for student in ("alice", "upper", shown_odd, "number"):
        assert {v[0] for v in found[student].values()} == {"PASSED"}, f"{student}: {found[student]}"
    assert {v for v in found["mallory"].values()} == {("ERROR", "refused: it is a symbolic link, not a notebook; "
                                                       "upload the notebook itself")}  # fmt: skip
    assert {v[0] for v in found["garbles"].values()} == {"ERROR"}
    assert found["surrogate"]["ex-1-1"][0] == "NOT YET"
    written = list(csv.DictReader(out.open(encoding="utf-8")))  # strict UTF-8: every field can be written
    assert [(r["student"], r["exercise"], r["verdict"]) for r in written] == [
        (r["student"], r["exercise"], r["verdict"]) for r in rows
    ]


@pytest.mark.slow
@needs_sandbox
def test_a_chapter_the_instructor_names_is_the_chapter_graded(tmp_path: Path):
    """A chapter 1 notebook in a chapter 2 batch gets chapter 2's rows (NOT YET), whatever its file is named."""
    found_chapters = chapters()
    (tmp_path / "eve").mkdir()
    nbformat.write(book.read(ALICE), tmp_path / "eve" / "01_counting.ipynb")
    paths = grade_submissions.submissions(tmp_path)
    assert grade_submissions.chapter_of(paths[0], None, found_chapters).number == 1  # what the name alone says
    forced = found_chapters[1]
    rows = grade_submissions.grade(paths[0], tmp_path, found_chapters, seed=1, forced=forced)
    assert [(row["exercise"], row["verdict"]) for row in rows] == [("ex-2-1", "NOT YET")]


def test_rows_hold_any_text(tmp_path: Path):
    row = grade_submissions._row("\udcff=", "a\x00b", "ex-1-1", "ERROR", "[" * 200000, chr(0xDCFF), 0)
    assert row["student"] == "\\udcff=" and row["notebook"] == "a\\x00b"
    assert len(row["message"]) == grade_submissions.FIELD_LIMIT
    grade_submissions.write_csv([row], tmp_path / "grades.csv")
    assert next(iter(csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8")))) == row
    path = tmp_path / "deep.ipynb"
    path.write_text('{"cells": ' + "[" * 200000 + "]" * 200000 + "}")
    with pytest.raises(grade_submissions.Unreadable, match="not JSON"):
        grade_submissions.code_cells(path)
