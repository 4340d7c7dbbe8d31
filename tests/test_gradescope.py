"""`make gradescope`: one autograder zip per chapter, run as Gradescope runs it in a simulated /autograder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from tools import gradescope

HONEST = """\
import math, torch

def my_attention(x, w_q, w_k, w_v, mask=None):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / math.sqrt(k.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
"""
UNSCALED = HONEST.replace(" / math.sqrt(k.shape[-1])", "")


@pytest.fixture(scope="module")
def zips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gradescope")
    return {path.name: path for path in gradescope.build(gradescope.book.ROOT, out)}


def test_one_zip_per_chapter_with_gradescopes_files_and_no_solutions(zips: dict[str, Path]):
    numbers = [gradescope.book.chapter_number(path) for path in gradescope.book.chapters()]
    assert sorted(zips) == [f"ch{n:02d}_autograder.zip" for n in numbers]
    with zipfile.ZipFile(zips["ch01_autograder.zip"]) as archive:
        names = archive.namelist()
        assert {"setup.sh", "run_autograder", "autograder.json", "tools/grade_submissions.py"} <= set(names)
        assert {"tools/grading_build.py", "tools/sandbox.py", "requirements-grading.txt"} <= set(names)
        assert "lib/transformerland/exercises/exercise.py" in names and "lib/transformerland/exercises/ch8.py" in names
        assert not [name for name in names if name.endswith(".ipynb")], "the instructor's chapter is not shipped"
        assert (archive.getinfo("run_autograder").external_attr >> 16) & 0o111, "run_autograder must be executable"
        assert json.loads(archive.read("autograder.json")) == {
            "chapter": 1,
            "notebook": "01_why_order_matters.ipynb",
            "specs": "transformerland.exercises",
            "expected": ["ex-1-2"],
        }
        setup = archive.read("setup.sh").decode()
        assert "sys.version_info < (3, 11)" in setup and "download.pytorch.org/whl/cpu" in setup
        assert "-r requirements-grading.txt" in setup and "-r requirements.txt" not in setup
        grading = archive.read("requirements-grading.txt").decode().split()
        names = {line.split("==")[0] for line in grading}
        assert {"numpy", "ipykernel", "safetensors", "nbformat"} <= names
        assert not names & {"torch", "jupyter-book", "sphinx", "playwright", "ruff", "pytest", "nbval"}, names
    done = subprocess.run(["bash", "-n", "-c", gradescope.SETUP], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def autograde(zip_path: Path, root: Path, source: str) -> dict:
    """Unpack the autograder as Gradescope does, put a submission in, run run_autograder, read results.json."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nbformat.write(nb, root / "submission" / "my_work.ipynb")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow
@pytest.mark.usefixtures("working_sandbox")
def test_run_autograder_grades_the_sample_submissions(zips: dict[str, Path], tmp_path: Path):
    honest = autograde(zips["ch01_autograder.zip"], tmp_path / "honest", HONEST)
    assert honest["score"] == 2 and honest["stdout_visibility"] == "hidden"
    assert "in a sandbox" in honest["output"] and "WITHOUT" not in honest["output"]
    (test,) = honest["tests"]
    assert test["name"] == "ex-1-2: single-head attention, with and without a mask" and test["number"] == "1.2"
    assert (test["score"], test["max_score"], test["status"], test["visibility"]) == (2, 2, "passed", "visible")
    wrong = autograde(zips["ch01_autograder.zip"], tmp_path / "wrong", UNSCALED)
    (test,) = wrong["tests"]
    assert wrong["score"] == 0 and test["status"] == "failed" and "not scaled" in test["output"]


def fake_root(tmp_path: Path, zips: dict[str, Path], notebooks: list[str]) -> Path:
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zips["ch01_autograder.zip"]) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    for name in notebooks:
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(HONEST)]), root / "submission" / name)
    return root


def test_without_a_sandbox_the_output_says_so_and_names_the_notebook_graded(
    zips: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    root = fake_root(tmp_path, zips, ["a.ipynb", "01_why_order_matters.ipynb", "z.IPYNB"])
    calls = []

    def grade(path, folder, chapters, **options):
        calls.append((path.name, options["unsafe"]))
        return [{"exercise": "ex-1-2", "verdict": "PASSED", "message": "ok", "hint": ""}]

    monkeypatch.setattr(
        gradescope, "problem", lambda: "...\n(bwrap: Creating new namespace failed: Operation not permitted)"
    )
    monkeypatch.setattr(gradescope, "grade_one", grade)
    data = gradescope.run(root)
    assert calls == [("01_why_order_matters.ipynb", True)]
    assert "WITHOUT" in data["output"] and "Creating new namespace failed" in data["output"]
    assert "only 01_why_order_matters.ipynb was graded (the one named like the chapter)" in data["output"]
    assert data["score"] == 2


def test_results_json_is_written_even_when_the_grader_crashes(
    zips: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    root = fake_root(tmp_path, zips, ["mine.ipynb"])

    def crash(*args, **kwargs):
        raise RuntimeError("the grader's own bug")

    monkeypatch.setattr(gradescope, "problem", lambda: "")
    monkeypatch.setattr(gradescope, "grade_one", crash)
    data = gradescope.run(root)
    written = json.loads((root / "results" / "results.json").read_text())
    assert written == data and data["score"] == 0 and "autograder failed" in data["output"]
    assert [(test["name"], test["status"]) for test in data["tests"]] == [
        ("ex-1-2: single-head attention, with and without a mask", "failed")
    ]
    (root / "source" / "autograder.json").write_text("not json")
    data = gradescope.run(root)
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 0


def test_students_see_only_the_verdict_line_and_the_hint():
    row = {
        "exercise": "ex-8-3",
        "verdict": "NOT YET",
        "message": "the band of one wavelength is wrong\ncalled with 4347.53: expected 'blended', got 'kept'",
        "hint": "compare the wavelength with both bounds.",
    }
    assert gradescope.shown(row) == (
        "NOT YET · the band of one wavelength is wrong\nHint: compare the wavelength with both bounds."
    )
    assert "4347.53" not in json.dumps(gradescope.results([row], gradescope.Chapter(8, Path(), {}), 1.0))
