"""Every page of the built site audited with axe-core: no "serious" or "critical" violation.

axe-core (the copy bundled with axe-playwright-python, injected into the page, so nothing is
fetched) checks the page as rendered in Chromium: colour contrast of text and figures' labels,
names of links, buttons and form controls, landmarks, ARIA use, and so on. Pages are audited once
fully loaded, with MathJax's typesetting and the interactive figures' drawing finished. The full
results of each page are written to ``test-artifacts/axe/`` for reading.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from site_helpers import ARTIFACTS, PAGES

from sphinx_ext.accessibility import fix_html

BLOCKING = {"serious", "critical"}
#: Every rule runs; only the violations are collected in full (passes are counted, not listed), which
#: takes a quarter less time on the longest chapters.
AXE_OPTIONS = {"resultTypes": ["violations"]}
REPORTS = ARTIFACTS / "axe"


def describe(violation: dict) -> str:
    """One violation as a line: its rule, impact, help text and the first places it occurs."""
    where = [" ".join(map(str, node["target"])) for node in violation["nodes"][:3]]
    return f"{violation['id']} ({violation['impact']}): {violation['help']}; e.g. {where}"


@pytest.mark.parametrize("name", PAGES, ids=lambda page: Path(page).name)
def test_no_serious_or_critical_accessibility_violation(offline_page, name: str):
    visit = offline_page(name)
    page = visit.page
    page.wait_for_function(
        "[...document.querySelectorAll('.vega-embed')].every(e => e.querySelector('svg'))", timeout=30_000
    )
    results = Axe().run(page, options=AXE_OPTIONS)
    page.close()
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"{Path(name).name}.json").write_text(json.dumps(results.response["violations"], indent=1))
    blocking = [v for v in results.response["violations"] if v["impact"] in BLOCKING]
    assert not blocking, f"{name}: accessibility violations:\n" + "\n".join(map(describe, blocking))


def test_the_bibliography_becomes_a_list_of_list_items():
    sphinx = '<div role="list" class="citation-list">\n<div class="citation" id="id3" role="doc-biblioentry">'
    fixed = '<div role="list" class="citation-list">\n<div class="citation" role="listitem" id="id3">'
    assert fix_html(sphinx) == fixed
