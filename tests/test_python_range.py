"""The Python range the README and pyproject.toml state is true: requirements.txt resolves at both ends.

pip resolves ``requirements.txt`` (a dry run: nothing is installed, only metadata is read from the index)
for the lowest Python that ``requires-python`` allows and the highest that the classifiers list, for
binary wheels on this platform. Both resolutions run side by side; a pin with no build for one end (as
numpy 2.4.6 has none for 3.10) fails here, naming the package.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools.book import ROOT
from tools.prerequisites import python_range

#: Slow, and needs the network: pip reads every pin's metadata from the package index.
pytestmark = pytest.mark.slow


def resolve(version: tuple[int, int], scratch: Path) -> subprocess.Popen:
    """Start pip's dry-run resolution of requirements.txt for Python ``version``."""
    command = [
        *(sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--disable-pip-version-check"),
        *("--ignore-installed", "--only-binary=:all:", "--python-version", f"{version[0]}.{version[1]}"),
        *("--target", str(scratch / f"py{version[0]}{version[1]}"), "-r", str(ROOT / "requirements.txt")),
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_requirements_resolve_for_the_lowest_and_the_highest_stated_python(tmp_path: Path):
    runs = {version: resolve(version, tmp_path) for version in python_range(ROOT)}
    failed = {}
    for version, run in runs.items():
        output, _ = run.communicate(timeout=300)
        if run.returncode:
            failed[f"{version[0]}.{version[1]}"] = [line for line in output.splitlines() if "ERROR" in line][-3:]
    assert not failed, f"requirements.txt does not resolve for the stated Python(s): {failed}"
