"""The book builds with warnings treated as errors, its log is clean, and no cell printed a warning.

``-W`` turns Sphinx's warnings into a failing exit code, but not everything that goes wrong in a
build passes through Sphinx's warning machinery, so the log itself is read too, and so are the
pages, for warnings the chapters' code printed while it ran.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from site_helpers import BUILD_COMMAND, NOTEBOOKS, PAGES, Build

#: A line of the log that reports a problem.
PROBLEM = re.compile(r"\b(WARNING|ERROR|CRITICAL|SEVERE)\b|Traceback \(most recent call last\)|Execution Failed")
#: Lines that match PROBLEM but report none. ipykernel says this whenever jupyter-client starts a
#: kernel over TCP on localhost, which is how every notebook is executed: a note on the transport,
#: not on the book.
NOT_A_PROBLEM = [re.compile(r"^\[IPKernelApp\] WARNING \| Kernel is running over TCP without encryption\.")]
#: A cell's output to stderr on a page (MyST-NB's markup): a warning the code printed while the book built.
STDERR = re.compile(r'class="output stderr[^"]*".*?<pre>(.*?)</pre>', re.DOTALL)


def problems(log: str) -> list[str]:
    """The log's lines that report a warning or an error."""
    return [
        line
        for line in log.splitlines()
        if PROBLEM.search(line) and not any(allowed.search(line) for allowed in NOT_A_PROBLEM)
    ]


def test_the_book_builds(site_build: Build):
    assert site_build.returncode == 0, (
        f"`{' '.join(BUILD_COMMAND)}` exited with {site_build.returncode}:\n" + site_build.log[-4000:]
    )


def test_the_build_log_has_no_warning_or_error(site_build: Build):
    found = problems(site_build.log)
    assert not found, f"{len(found)} problem line(s) in the build log, the first ones:\n" + "\n".join(found[:20])


#: MyST-NB's line for a chapter that the build executed rather than took from the cache.
EXECUTED = re.compile(r"^(?P<path>\S+\.ipynb): Executing notebook", re.MULTILINE)


def test_the_build_executed_no_chapter_that_had_just_run(site_build: Build):
    """Each chapter is executed once a run (test_site_colab.py); the build shows those outputs.

    ``make test`` sets CHAPTERS_RAN after the chapters' stage: then every chapter must have been in the cache.
    """
    executed = {Path(match["path"]).name for match in EXECUTED.finditer(site_build.log)}
    again = sorted(executed & set(site_build.cached))
    assert not again, f"the build executed chapters whose outputs it had in its cache: {again}"
    if os.environ.get("CHAPTERS_RAN"):
        missing = sorted({path.name for path in NOTEBOOKS} - set(site_build.cached))
        assert not missing, f"chapters the chapters' stage should have left in the build's cache: {missing}"
        assert not executed, f"the build executed chapters again: {sorted(executed)}"


def test_every_page_was_built(site_build: Build, site):
    missing = [page for page in PAGES if not (site / f"{page}.html").is_file()]
    assert not missing, f"pages of _toc.yml missing from the site: {missing}"


def test_no_cell_printed_a_warning(site: Path):
    """What a cell prints to stderr (a Python warning, say) shows on its page in red; -W does not see it.

    A cell that is meant to print to stderr can say so with the tag ``remove-stderr``.
    """
    printed = {
        page: html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).strip().splitlines()[:1]
        for page in PAGES
        if (match := STDERR.search((site / f"{page}.html").read_text()))
    }
    assert not printed, f"cells that printed to stderr while the book was built (page: first line): {printed}"


#: A progress bar's line short of 100%: an intermediate state that the page should not show.
UNFINISHED_BAR = re.compile(r"(?<!\d)\d{1,2}%\|")
#: A Markdown table's rule line left as text (a table that was not rendered).
RAW_TABLE = re.compile(r"\|\s*(?:—|–|:?-{3,}:?)\s*:?\s*\|")


def test_outputs_show_progress_bars_finished_and_tables_rendered(site: Path):
    """Cells' outputs read as in Jupyter: a progress bar once, at its end; a printed table as a table."""
    found = {}
    for page in PAGES:
        text = (site / f"{page}.html").read_text()
        outputs = re.findall(r'class="output stream[^"]*"><div class="highlight"><pre>(.*?)</pre>', text, re.DOTALL)
        bars = [line for block in outputs for line in block.splitlines() if UNFINISHED_BAR.search(line)]
        paragraphs = [html.unescape(re.sub(r"<[^>]+>", "", p)) for p in re.findall(r"<p>(.*?)</p>", text, re.DOTALL)]
        tables = [p[:80] for p in paragraphs if RAW_TABLE.search(p)]
        if bars or tables:
            found[page] = {"progress bars mid-way": bars[:2], "tables left as text": tables[:2]}
    assert not found, f"outputs that do not read as in Jupyter: {found}"


def test_no_reference_repeats_its_own_name(site: Path):
    """A reference to an exercise prints "Exercise 5.3" itself: prose that says "Exercise" before it doubles it."""
    doubled = {}
    # "exercise Exercise 7.2" as much as "Exercise Exercise 7.2"
    doubling = re.compile(r"\b(Exercise|Chapter|Figure|Section)s? \1\b \S+", re.IGNORECASE)
    for page in PAGES:
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", (site / f"{page}.html").read_text())).split())
        found = [m.group(0) for m in doubling.finditer(text)]
        if found:
            doubled[page] = found[:3]
    assert not doubled, f"a reference's name written twice: {doubled}"


def test_every_inline_script_is_written_once_per_page(site: Path):
    """A script block repeated on a page runs twice: sphinx-thebe's ``const`` declarations then threw on every page
    (sphinx_ext/single_scripts.py keeps one of each)."""
    repeated = {}
    for page in PAGES:
        bodies = re.findall(r"<script>(.*?)</script>", (site / f"{page}.html").read_text(), re.DOTALL)
        twice = sorted({body[:60] for body in bodies if bodies.count(body) > 1})
        if twice:
            repeated[page] = twice
    assert not repeated, f"inline scripts written more than once: {repeated}"


def test_no_page_shows_the_tests_marker_comment(site: Path):
    """``# NBVAL_CHECK_OUTPUT`` is for the tests (sphinx_ext/test_markers.py leaves it out of the pages' code),
    while the chapters that the site serves for download keep it."""
    marked = [page for page in PAGES if "NBVAL_CHECK_OUTPUT" in (site / f"{page}.html").read_text()]
    assert not marked, f"pages that show the tests' marker comment: {marked}"
    assert any("NBVAL_CHECK_OUTPUT" in path.read_text() for path in NOTEBOOKS), "no chapter has the marker: blind"
