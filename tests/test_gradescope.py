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

def my_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1) @ v
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
        assert "lib/transformerland/exercises/spec.py" in names
        assert "lib/transformerland/exercises/ch8.toml" in names, "the specs' data travels with their code"
        assert not [name for name in names if name.endswith(".ipynb")], "the instructor's chapter is not shipped"
        assert (archive.getinfo("run_autograder").external_attr >> 16) & 0o111, "run_autograder must be executable"
        assert json.loads(archive.read("autograder.json")) == {
            "chapter": 1,
            "specs": "transformerland.exercises",
            "expected": ["ex-1-2"],
        }


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
def test_run_autograder_grades_the_sample_submissions(zips: dict[str, Path], tmp_path: Path):
    honest = autograde(zips["ch01_autograder.zip"], tmp_path / "honest", HONEST)
    assert honest["score"] == 2 and honest["stdout_visibility"] == "hidden"
    (test,) = honest["tests"]
    assert test["name"] == "ex-1-2: single-head attention" and test["number"] == "1.2"
    assert (test["score"], test["max_score"], test["status"], test["visibility"]) == (2, 2, "passed", "visible")
    wrong = autograde(zips["ch01_autograder.zip"], tmp_path / "wrong", UNSCALED)
    (test,) = wrong["tests"]
    assert wrong["score"] == 0 and test["status"] == "failed" and "not scaled" in test["output"]
