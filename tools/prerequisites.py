"""What the Makefile needs from the machine, checked before it is needed, with how to install what is missing.

Run by the Makefile with the system's ``python3`` (before the project's ``.venv`` exists), so this file uses
the standard library only, in syntax that Python 3.6 still parses (an old interpreter is named, not a SyntaxError)::

    python3 tools/prerequisites.py python npm chromium   # check these; exit 1, naming what is missing
    python3 tools/prerequisites.py --python-range        # print the supported range, e.g. "3.11 to 3.14"

Each prerequisite is checked by :data:`CHECKS` and, when missing, named with why it is needed and the command
that installs it on Debian/Ubuntu and on macOS (README, "What each command needs").
"""

import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Where a browser test finds Chromium when it is not on PATH (Debian's package, macOS's app).
CHROMIUM_PATHS = ["/usr/bin/chromium", "/Applications/Chromium.app/Contents/MacOS/Chromium"]


def python_range(root=ROOT):
    """The supported Python versions, ``((3, 11), (3, 14))``: requires-python's floor, the highest classifier."""
    text = (root / "pyproject.toml").read_text()
    floor = re.search(r'requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', text)
    listed = re.findall(r"Programming Language :: Python :: (\d+)\.(\d+)", text)
    if floor is None or not listed:
        raise ValueError('pyproject.toml must state requires-python = ">=3.N" and a classifier per version')
    low = (int(floor.group(1)), int(floor.group(2)))
    high = max((int(a), int(b)) for a, b in listed)
    return low, high


def chromium():
    """Chromium's executable: ``$CHROMIUM``, else ``chromium``/``chromium-browser`` on PATH, else a usual place."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return found or next((path for path in CHROMIUM_PATHS if os.path.isfile(path)), None)


def _python_ok():
    low, high = python_range()
    return low <= sys.version_info[:2] <= high


def _venv_ok():
    try:
        import ensurepip  # noqa: F401  (Debian ships venv without it, in python3-venv)
        import venv  # noqa: F401
    except ImportError:
        return False
    return True


def _python_line():
    low, high = python_range()
    here = sys.version_info
    return f"Python {low[0]}.{low[1]} to {high[0]}.{high[1]} (this is {here[0]}.{here[1]}, {sys.executable})"


#: name -> (is it there?, what needs it, Debian/Ubuntu install, macOS install)
CHECKS = {
    "python": (
        _python_ok,
        lambda: _python_line() + "; every command runs in the project's .venv, made from it",
        "sudo apt-get install python3 (Debian 12 and Ubuntu 24.04 have 3.11 and 3.12), or run make with"
        " SYSTEM_PYTHON=python3.12",
        "brew install python@3.13, or the installer from python.org; then make SYSTEM_PYTHON=python3.13",
    ),
    "venv": (
        _venv_ok,
        lambda: "Python's venv module with ensurepip, which makes the project's .venv",
        "sudo apt-get install python3-venv",
        "included in python.org's and Homebrew's Python",
    ),
    "npm": (
        lambda: shutil.which("npm") is not None,
        lambda: "npm, which fetches MathJax, Vega, Vega-Lite and vega-embed once from the npm registry for the site",
        "sudo apt-get install npm",
        "brew install node",
    ),
    "chromium": (
        lambda: chromium() is not None,
        lambda: (
            "Chromium, the browser of the site's tests (make test) and of the PDF (make pdf); make browser installs"
            " Debian's package when it can use root or sudo"
        ),
        "sudo apt-get install chromium (Ubuntu: sudo snap install chromium); then make test",
        "brew install --cask chromium; then make test",
    ),
    "bubblewrap": (
        lambda: shutil.which("bwrap") is not None,
        lambda: (
            "bubblewrap (bwrap), the sandbox every graded submission runs in (make grade, and the grading tests"
            " of make test); make sandbox installs Debian's package when it can use root or sudo"
        ),
        "sudo apt-get install bubblewrap; then make test",
        "none: bubblewrap is Linux's; grade (and run the grading tests) in a Linux virtual machine or container",
    ),
}


def missing(names):
    """Messages for the prerequisites among ``names`` that this machine lacks (empty when all are there)."""
    unknown = [name for name in names if name not in CHECKS]
    if unknown:
        raise ValueError(f"unknown prerequisite(s) {unknown}; known: {', '.join(CHECKS)}")
    found = []
    for name in names:
        ok, why, debian, macos = CHECKS[name]
        if not ok():
            found.append(f"missing: {name}\n  needed: {why()}\n  Debian/Ubuntu: {debian}\n  macOS: {macos}")
    return found


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args == ["--python-range"]:
        low, high = python_range()
        print(f"{low[0]}.{low[1]} to {high[0]}.{high[1]}")
        return 0
    if args == ["--chromium"]:
        print(chromium() or "")
        return 0 if chromium() else 1
    problems = missing(args)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
