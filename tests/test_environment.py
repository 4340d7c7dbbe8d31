"""The environment the book states: its floors, Colab's record, the prerequisite checks, the Makefile's rules.

The library's dependencies and extras state the lowest versions the chapters are tested with: Colab's
(``requirements-colab.txt``, which the Colab-like runtime installs) or, for a package Colab lacks, the one
``requirements.txt`` pins. ``transformerland.extras.ensure`` brings what is missing or older. The Makefile
works in the project's ``.venv`` and checks what it needs from the machine first (``tools/prerequisites.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import pytest
from packaging.version import Version
from transformerland import extras

from tools import prerequisites
from tools.book import ROOT
from tools.colab_runtime import STAND_INS, colab_packages, colab_record, requirement_pins

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
MAKEFILE = (ROOT / "Makefile").read_text()
#: The Makefile without its comment lines.
RULES = "\n".join(line for line in MAKEFILE.splitlines() if not line.lstrip().startswith("#"))


def declared_floors() -> dict[str, str]:
    """Every ``name>=version`` of pyproject.toml's dependencies and extras, as ``{name: version}``."""
    lines = [*PYPROJECT["dependencies"], *(r for group in PYPROJECT["optional-dependencies"].values() for r in group)]
    floors = {}
    for line in lines:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", line)
        assert match, f"pyproject.toml: {line!r} must be a floor, 'name>=version'"
        floors[match.group(1).lower()] = match.group(2)
    return floors


def pinned(spec: str) -> str:
    return spec.split("==")[1]


def test_each_floor_is_colabs_version_or_else_our_pin():
    """A floor is a version the tests run: Colab's (the runtime has it) or, where Colab has none, ours."""
    record, pins = colab_record(ROOT), requirement_pins(ROOT)
    for name, floor in declared_floors().items():
        tested = pinned(record[name]) if name in record else pinned(pins[name])
        assert floor == tested, f"pyproject.toml states {name}>={floor}; the tested floor is {tested}"


def test_our_pins_meet_every_floor():
    pins = requirement_pins(ROOT)
    low = {n: f for n, f in declared_floors().items() if Version(pinned(pins[n])) < Version(f)}
    assert not low, f"requirements.txt pins below the library's floors: {low}"


def test_colabs_record_is_dated_sourced_and_complete():
    text = (ROOT / "requirements-colab.txt").read_text()
    assert "github.com/googlecolab/backend-info" in text and re.search(r"dated \d{4}-\d{2}-\d{2}", text)
    record = colab_record(ROOT)
    assert "python" in record, "the record states Colab's Python"
    chapters_use = set(declared_floors()) - {"gguf"}  # Colab has no gguf: the set-up cells install it
    assert chapters_use <= set(record), f"packages the chapters use that the record lacks: {chapters_use - set(record)}"
    assert all(name in text for name in STAND_INS), "each stand-in is explained in the record"


def test_the_runtime_installs_the_record_with_this_machines_stand_ins():
    packages = colab_packages(ROOT)
    assert requirement_pins(ROOT)["torch"] in packages and "torch==2.11.0" not in packages
    assert colab_record(ROOT)["transformers"] in packages and not any(p.startswith("python==") for p in packages)


def test_the_installed_library_states_the_same_floors():
    """What ensure() reads (the installed metadata) is pyproject.toml (else: make install, to refresh it)."""
    assert {**extras.floors("bert", "llm")} == {name.replace("_", "-"): v for name, v in declared_floors().items()}


def test_this_environment_needs_nothing_more():
    assert extras.needed("bert", "llm") == []


def test_an_unknown_extra_is_named():
    with pytest.raises(ValueError, match=r"extras=\['gpu'\].*bert"):
        extras.floors("gpu")


def test_the_python_range_is_requires_python_to_the_highest_classifier():
    low, high = prerequisites.python_range(ROOT)
    assert PYPROJECT["requires-python"] == f">={low[0]}.{low[1]}"
    assert low <= sys.version_info[:2] <= high


def test_a_missing_prerequisite_is_named_with_how_to_install_it():
    """With nothing on PATH, the check names npm, why it is needed, and the Debian/Ubuntu and macOS commands."""
    done = subprocess.run(
        [sys.executable, "tools/prerequisites.py", "npm", "venv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/nonexistent"},
    )
    assert done.returncode == 1
    assert "missing: npm" in done.stderr and "apt-get install npm" in done.stderr and "brew install node" in done.stderr
    assert "missing: venv" not in done.stderr


def test_every_target_that_runs_python_runs_the_projects_environment():
    """No target installs into the system's interpreter, and each one that runs $(PYTHON) first makes .venv."""
    assert "--break-system-packages" not in RULES and not re.search(r"sudo\S* .*pip", RULES)
    assert re.search(r"^PYTHON := \$\(VENV\)/bin/python$", MAKEFILE, re.M)
    recipes = re.findall(r"^([a-z-]+):([^\n]*)\n((?:\t[^\n]*\n)+)", MAKEFILE, re.M)
    bare = [
        name
        for name, needs, body in recipes
        if "$(PYTHON)" in body and not {"$(INSTALLED)", "vendor"} & set(needs.split())
    ]
    assert not [name for name in bare if name != "test"], f"targets that run $(PYTHON) before .venv exists: {bare}"


def test_ci_runs_exactly_the_readme_test_command():
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[-1] == "make test"
    assert "make test   #" in (ROOT / "README.md").read_text()


def test_an_unreachable_npm_registry_is_named_with_what_was_being_fetched(monkeypatch, tmp_path):
    from sphinx_ext import npm

    refused = subprocess.CompletedProcess([], 1, "", "npm error code ECONNREFUSED\nnpm error syscall connect\n")
    monkeypatch.setattr(npm.shutil, "which", lambda name: "/usr/bin/npm")
    monkeypatch.setattr(npm.subprocess, "run", lambda *args, **kwargs: refused)
    with pytest.raises(RuntimeError, match=r"could not fetch mathjax@3\.2\.2 from .*ECONNREFUSED(.|\n)*make vendor"):
        npm.pack("mathjax", "3.2.2", tmp_path, tmp_path / "mathjax")
    monkeypatch.setattr(npm.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match=r"npm is needed once, to fetch mathjax@3\.2\.2 .*apt-get install npm"):
        npm.pack("mathjax", "3.2.2", tmp_path, tmp_path / "mathjax")
