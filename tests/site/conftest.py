"""Fixtures of the site tests: the Colab-like runtime, the book built once, served on localhost.

The chapters run first, each once, in the Colab-like runtime (``test_site_colab.py``; ``make
test-chapters``), and their outputs go into the build's jupyter-cache. The build is then the README's
(``jupyter-book build -W -n --keep-going .`` from the repository root into ``_build/html``), from a
clean ``_build/html`` with the cache kept, so that it renders those outputs instead of executing the
chapters again. Its log, its seconds and the screenshots of every page go to ``test-artifacts/``
(gitignored).

Every test that needs the site is marked ``slow``. Under ``pytest -n 2`` the book is still built once per
session: the first worker to need it builds it, under a file lock, and the other waits for that build and
reads its record, so that both workers share the site's tests. In a session without xdist, the chapter runs
are moved before everything else.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock
from jupyter_cache import get_cache
from site_helpers import ARTIFACTS, BUILD_COMMAND, BUILD_OUTPUTS, HTML_DIR, NOTEBOOKS, ROOT, Build

from tools.book import read
from tools.colab_runtime import ColabRuntime, runtime
from tools.execute_chapters import cache_folder
from tools.facts import facts

BUILD_TIMEOUT_S = 1800
#: Where the build's numbers go, for the end-of-run report and the suite benchmark.
BUILD_RECORD = ARTIFACTS / "build.json"
REPORT = pytest.StashKey[list[str]]()
#: The fixtures whose tests need the built site.
SITE_FIXTURES = {"site_build", "site", "site_url"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that build or run something slow; order them (:func:`run_order`)."""
    here = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(here):
            continue
        if SITE_FIXTURES & set(item.fixturenames) or "colab_runtime" in item.fixturenames:
            item.add_marker(pytest.mark.slow)
    items.sort(key=run_order)


def run_order(item: pytest.Item) -> tuple[int, int]:
    """The chapter runs first, the longest (by its budget) first, so that two workers finish together; then
    the tests that need no site, then the site's: under ``--dist worksteal`` the worker given the first half
    starts on the former while the other builds the book, and neither waits for the build."""
    names = set(getattr(item, "fixturenames", ()))
    if "colab_runtime" in names:
        path = item.callspec.params.get("path") if hasattr(item, "callspec") else None
        return 0, -facts(path).budget_seconds if isinstance(path, Path) else 0
    return (2 if SITE_FIXTURES & names or "offline_page" in names else 1), 0


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say how long the build took and how heavy the site is, after pytest's own summary."""
    for line in config.stash.get(REPORT, []):
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def report(pytestconfig: pytest.Config) -> list[str]:
    """Lines for the end-of-run report (of this process: with xdist, see test-artifacts/build.json)."""
    return pytestconfig.stash.setdefault(REPORT, [])


@pytest.fixture(scope="session")
def colab_runtime() -> ColabRuntime:
    """The Colab-like runtime of this checkout: made once (or waited for, or found made)."""
    try:
        return runtime(ROOT)
    except Exception as error:  # reported in the test that needs the runtime
        pytest.fail(f"could not make the Colab-like runtime: {error}")


def cached_chapters() -> tuple[str, ...]:
    """The chapters whose outputs the build's jupyter-cache holds for their current code."""
    if not cache_folder(ROOT).is_dir():
        return ()
    cache = get_cache(str(cache_folder(ROOT)))
    found = []
    for path in NOTEBOOKS:
        try:
            cache.match_cache_notebook(read(path))
        except KeyError:
            continue
        found.append(path.name)
    return tuple(found)


def build_site() -> Build:
    """Build the whole book as ``make book`` does, from a clean ``_build/html``; record it in test-artifacts/."""
    for folder in BUILD_OUTPUTS:
        shutil.rmtree(folder, ignore_errors=True)
    cached = cached_chapters()
    start = time.monotonic()
    done = subprocess.run(
        BUILD_COMMAND,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        env={**os.environ, "NO_COLOR": "1"},
    )
    build = Build(done.returncode, re.sub(r"\x1b\[[0-9;]*m", "", done.stdout), time.monotonic() - start, cached)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "build.log").write_text(build.log)
    record = {"returncode": build.returncode, "seconds": round(build.seconds, 1), "cached": list(cached)}
    BUILD_RECORD.write_text(json.dumps(record))
    return build


@pytest.fixture(scope="session")
def site_build(report: list[str], tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Build:
    """The book built once per session; with xdist, by whichever worker needs it first, the others waiting."""
    if worker_id == "master":
        build = build_site()
    else:
        shared = tmp_path_factory.getbasetemp().parent  # the same folder for every worker of this session
        with FileLock(shared / "site-build.lock"):
            done = shared / "site-build.done"
            if done.is_file():
                record = json.loads(BUILD_RECORD.read_text())
                log = (ARTIFACTS / "build.log").read_text()
                build = Build(record["returncode"], log, record["seconds"], tuple(record["cached"]))
            else:
                build = build_site()
                done.touch()
    report.append(f"site: built in {build.seconds:.0f} s, log in test-artifacts/build.log")
    return build


@pytest.fixture(scope="session")
def site(site_build: Build) -> Path:
    """The built site's folder; fails the test (rather than erroring) when the build left no site."""
    if not (HTML_DIR / "index.html").is_file():
        pytest.fail(f"the build left no {HTML_DIR.relative_to(ROOT)}/index.html; see test-artifacts/build.log")
    return HTML_DIR


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Keep the test output free of a line per request."""


@pytest.fixture(scope="session")
def site_url(site: Path) -> Iterator[str]:
    """The site served over HTTP on localhost, as a reader's browser gets it: ``http://127.0.0.1:<port>/``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    thread.join()


@pytest.fixture(scope="session")
def offline_browser() -> Iterator[object]:
    """Debian's Chromium, headless, for the interactive-figure and accessibility tests (``make browser``)."""
    from playwright.sync_api import sync_playwright
    from site_helpers import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make browser`, or see `python3 tools/prerequisites.py chromium`")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def offline_page(offline_browser, site_url: str):
    """Open a page of the site as an offline reader would: ``open_(name) -> OfflineVisit``.

    Everything is served from localhost (MathJax and Vega included: the site serves them); any outside
    request is refused and noted. Console errors and uncaught exceptions are collected. Each call opens
    a fresh page; close it when done.
    """
    from site_helpers import OfflineVisit, offline_route

    context = offline_browser.new_context(viewport={"width": 1280, "height": 900})

    def open_(name: str) -> OfflineVisit:
        visit = OfflineVisit(context.new_page())
        visit.page.on("console", lambda message: message.type == "error" and visit.errors.append(message.text))
        visit.page.on("pageerror", lambda error: visit.errors.append(f"uncaught {error}"))
        visit.page.route("**/*", offline_route(site_url, visit.outside))
        response = visit.page.goto(f"{site_url}{name}.html", wait_until="load")
        assert response is not None and response.ok, f"{name}.html did not load"
        visit.page.evaluate("async () => { if (window.MathJax?.startup?.promise) await MathJax.startup.promise; }")
        return visit

    yield open_
    context.close()
