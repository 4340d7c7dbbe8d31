"""A fresh clone sets itself up with the system's own Python first on PATH, and leaves that Python alone.

Debian's ``/usr/bin/python3`` is "externally managed" (PEP 668): pip refuses to install into it, as on
stock Debian 12 and Ubuntu 23.04 and later. The Makefile never tries: it makes the project's ``.venv`` with
that interpreter's venv module and installs there. This test clones the committed checkout, runs
``make install vendor tables`` with ``PATH=/usr/bin:/bin`` (so ``python3`` is Debian's), and checks that the
environment was made from Debian's Python, that the generated tables come out as committed, and that the
system Python's packages are what they were. It costs one install into a fresh ``.venv`` (about a minute
and a half here, from pip's cache); the chapters and the build are what ``make test`` runs anyway.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tools.book import ROOT

pytestmark = pytest.mark.slow
SYSTEM_PYTHON = Path("/usr/bin/python3")
#: What a fresh shell on stock Debian has: the system's directories only; HOME for pip's and npm's caches.
FRESH_ENV = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}


def system_packages() -> list[str]:
    """The distributions the system Python sees, as ``name==version``."""
    code = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps(sorted(d.metadata['Name'] + '==' + d.version for d in m.distributions())))"
    )
    return json.loads(subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_a_fresh_clone_installs_with_the_systems_python_first_on_path(tmp_path: Path):
    assert SYSTEM_PYTHON.is_file(), f"this test needs the system's {SYSTEM_PYTHON} (Debian: apt-get install python3)"
    before = system_packages()
    clone = tmp_path / "clone"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "checkout", "--quiet", head.strip()], cwd=clone, check=True)

    done = subprocess.run(
        ["make", "--no-print-directory", "install", "vendor", "tables"],
        cwd=clone,
        env=FRESH_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, f"make install vendor tables failed in a fresh clone:\n{done.stdout[-4000:]}"
    config = (clone / ".venv" / "pyvenv.cfg").read_text()
    assert f"home = {SYSTEM_PYTHON.parent}" in config, f"the .venv was not made from {SYSTEM_PYTHON}:\n{config}"
    changed = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout
    assert not changed, f"the fresh clone's generated tables differ from the committed ones:\n{changed}"
    assert system_packages() == before, "make install changed the system Python's packages"
