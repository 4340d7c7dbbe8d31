"""The seconds of each stage of the last ``make test``, as a table: where the suite's time goes.

``make test`` records its stages in ``test-artifacts/stages.tsv`` (:mod:`benchmarks.stage`), and the site's
build records its own seconds in ``test-artifacts/build.json`` (``tests/site/conftest.py``); the build is
shown as a stage of its own, taken out of the slow tests that contain it. With ``--results`` the table
replaces the one in ``benchmarks/results.md``'s region ``suite-timings`` (the README links there, so that
its text does not change with every measurement). A benchmark, not a test: it never fails a run.
The book allows 10 minutes for a fresh clone's ``bash .ci/run`` on the 2-core machine (12 with
chapters 7 and 8).

    make test && python -m benchmarks.suite [--results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import UTC, datetime

from tools.book import ROOT, chapters
from tools.tables import replace_region

STAGES = ROOT / "test-artifacts" / "stages.tsv"
BUILD = ROOT / "test-artifacts" / "build.json"
#: Where the measured timings live (the README links to it).
RESULTS = ROOT / "benchmarks" / "results.md"
BUDGET_S = 600.0
#: What each stage of `make test` does, for the table.
WHAT = {
    "install": "`make browser install vendor`: Chromium when missing; the project's .venv when missing or out "
    "of date; MathJax and the figures' JavaScript",
    "lint": "`make lint`: ruff check and ruff format --check",
    "fast tests": "`make test-fast`: library, checkers, conventions, generated tables",
    "chapters": "`make test-chapters`: each chapter once in the Colab-like runtime, two at a time",
    "build": "the strict build, from the chapters' cached outputs",
    "slow tests": "`make test-slow` without the build: browser, links, figures, student edition, handouts, grader",
    "pdf": "`make test-pdf`: the PDF's two editions, printed side by side from the cached outputs, read back",
}


def stages() -> list[tuple[str, float, str]]:
    """The last run's stages: (name, seconds, status), the build split out of the slow tests."""
    found = []
    for line in STAGES.read_text(encoding="utf-8").splitlines():
        name, seconds, status = line.split("\t")
        found.append((name, float(seconds), status))
    if BUILD.exists() and any(name == "slow tests" for name, _, _ in found):
        build = json.loads(BUILD.read_text())
        at = next(i for i, (name, _, _) in enumerate(found) if name == "slow tests")
        name, seconds, status = found[at]
        status_of_build = "ok" if build["returncode"] == 0 else f"failed ({build['returncode']})"
        found[at : at + 1] = [("build", build["seconds"], status_of_build), (name, seconds - build["seconds"], status)]
    return found


def table(found: list[tuple[str, float, str]]) -> str:
    """The stages as a markdown table, with the total against the budget."""
    total = sum(seconds for _, seconds, _ in found)
    when = datetime.fromtimestamp(STAGES.stat().st_mtime, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    rows = [
        f"Last measured {when} on {platform.machine()}, {os.cpu_count()} CPUs, with {len(chapters())} chapters "
        f"(`python -m benchmarks.suite` after `make test`):",
        "",
        "| stage | what it runs | seconds | status |",
        "| --- | --- | ---: | --- |",
    ]
    rows += [f"| {name} | {WHAT.get(name, '')} | {seconds:.0f} | {status} |" for name, seconds, status in found]
    verdict = "within" if total <= BUDGET_S else "OVER"
    rows.append(f"| **total** | | **{total:.0f}** | {verdict} the {BUDGET_S:.0f} s budget |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--results", "--readme", action="store_true", dest="results", help="write the table into benchmarks/results.md"
    )
    args = parser.parse_args(argv)
    if not STAGES.exists():
        print(f"no {STAGES.relative_to(ROOT)}: run `make test` first")
        return 0
    text = table(stages())
    print(text)
    if args.results:
        RESULTS.write_text(replace_region(RESULTS.read_text(encoding="utf-8"), "suite-timings", text), encoding="utf-8")
        print(f"wrote the table into {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
