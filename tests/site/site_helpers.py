"""What the site tests share besides fixtures: the book's layout and the build."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from tools.book import ROOT, chapters, pages

BUILD_DIR = ROOT / "_build"
HTML_DIR = BUILD_DIR / "html"
#: What a build writes besides the jupyter-cache of executed chapters (``_build/.jupyter_cache``) and the
#: Colab-like runtime (``_build/colab-runtime``), which a clean build keeps.
BUILD_OUTPUTS = [HTML_DIR, BUILD_DIR / ".doctrees", BUILD_DIR / "jupyter_execute"]
ARTIFACTS = ROOT / "test-artifacts"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
#: The README's build (``make book``): warnings are errors, nitpicky; chapters' outputs from the cache that
#: their run filled (``execute_notebooks: cache``), a chapter missing from it executed by the build.
BUILD_COMMAND = [str(Path(sys.executable).parent / "jupyter-book"), "build", "-W", "-n", "--keep-going", "."]

#: Every page of the book, as its source path without suffix (``book/intro``), in reading order.
PAGES = pages(ROOT)
#: The chapter notebooks, in the order of ``_toc.yml``.
NOTEBOOKS = chapters(ROOT)


def is_notebook(page: str) -> bool:
    """Whether a page's source is a notebook (a chapter) rather than a MyST Markdown page."""
    return (ROOT / page).with_suffix(".ipynb").exists()


@dataclass(frozen=True)
class Build:
    """What the build returned and printed (stdout and stderr together, colours removed)."""

    returncode: int
    log: str
    seconds: float
    #: The chapters (file names) whose outputs the jupyter-cache held, for this very code, before the build.
    cached: tuple[str, ...] = ()


# The interactive figures and the accessibility audit (test_site_interactive.py, test_site_accessibility.py).
import dataclasses  # noqa: E402
import json  # noqa: E402

from tools.prerequisites import chromium  # noqa: E402

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


# What the browser tests of the interactive figures and of accessibility share (tests/site/conftest.py's
# ``offline_page``): the same headless Chromium, and the same offline answers, as test_site_browser.py.
CHROMIUM = Path(chromium() or "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Console errors that come from the book's toolchain itself, which the book cannot fix from its
#: configuration; matched as substrings. None today: sphinx-thebe's doubled inline script, once here, is
#: written once by sphinx_ext/single_scripts.py.
KNOWN_TOOLCHAIN_ERRORS: tuple[str, ...] = ()


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
    """A Playwright route handler: the site from localhost, nothing else (MathJax and Vega are the site's own)."""

    def handle(route) -> None:
        url = route.request.url
        if url.startswith(site_url):
            route.continue_()
            return
        outside.append(url)
        route.abort()

    return handle
