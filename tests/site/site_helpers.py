"""What the site tests share besides fixtures: the book's layout and the build."""

from __future__ import annotations

from dataclasses import dataclass

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
BUILD_COMMAND = ["jupyter-book", "build", "-W", "-n", "--keep-going", "."]

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
