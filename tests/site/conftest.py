"""Fixtures of the site tests: the book built once, served on localhost, and a Colab-like runtime.

The build is the README's (``jupyter-book build -W -n --keep-going .`` from the repository root
into ``_build/html``, every notebook executed), from a clean ``_build`` as on a fresh clone. Its
log and the screenshots of every page go to ``test-artifacts/`` (gitignored). When the session
also runs the Colab tests, their runtime is installed in the background while the book builds.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from site_helpers import ARTIFACTS, BUILD_COMMAND, BUILD_DIR, HTML_DIR, ROOT, Build, ColabRuntime

BUILD_TIMEOUT_S = 1800
#: Whether this session runs the Colab tests; lines for the end-of-run report.
COLAB_SELECTED = pytest.StashKey[bool]()
REPORT = pytest.StashKey[list[str]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Note whether the Colab tests will run, so their runtime can be installed while the book builds."""
    config.stash[COLAB_SELECTED] = any(item.path.name == "test_site_colab.py" for item in items)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say how long the build took and how heavy the site is, after pytest's own summary."""
    for line in config.stash.get(REPORT, []):
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def report(pytestconfig: pytest.Config) -> list[str]:
    """Lines for the end-of-run report."""
    return pytestconfig.stash.setdefault(REPORT, [])


@pytest.fixture(scope="session")
def colab_runtime(tmp_path_factory: pytest.TempPathFactory) -> ColabRuntime:
    """The Colab-like runtime, being installed (``.ready()`` waits for it)."""
    runtime = ColabRuntime(tmp_path_factory.mktemp("colab"))
    runtime.start()
    return runtime


@pytest.fixture(scope="session")
def site_build(request: pytest.FixtureRequest, report: list[str]) -> Build:
    """Build the whole book once per session, as ``make book`` does, from a clean ``_build``."""
    if request.config.stash.get(COLAB_SELECTED, False):
        request.getfixturevalue("colab_runtime")  # starts installing, in the background
    shutil.rmtree(BUILD_DIR, ignore_errors=True)
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
    build = Build(done.returncode, re.sub(r"\x1b\[[0-9;]*m", "", done.stdout), time.monotonic() - start)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "build.log").write_text(build.log)
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
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make browser` (it installs Debian's chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def offline_page(offline_browser, site_url: str):
    """Open a page of the site as an offline reader would: ``open_(name) -> OfflineVisit``.

    Everything is served from localhost except MathJax, answered from its local copy (``make
    browser``); any other outside request is refused and noted. Console errors and uncaught
    exceptions are collected. Each call opens a fresh page; close it when done.
    """
    from site_helpers import MATHJAX_DIR, OfflineVisit, offline_route

    if not (MATHJAX_DIR / "es5" / "tex-mml-chtml.js").is_file():
        pytest.fail(f"no MathJax 3 at {MATHJAX_DIR}: run `make browser` (it fetches mathjax@3.2.2 from npm)")
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
