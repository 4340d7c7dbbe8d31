"""Accessibility fixes to the HTML that Sphinx writes, found by the axe-core audit of every page.

A Sphinx extension (``local_extensions`` in ``_config.yml``); the audit is
``tests/site/test_site_accessibility.py``. Colours are fixed in ``_static/custom.css`` instead.

* The bibliography: Sphinx wraps the citations in ``<div role="list" class="citation-list">``, but
  gives each citation the role ``doc-biblioentry``, which ARIA has deprecated and no longer counts
  as a list item, so a screen reader is promised a list whose items it cannot find (axe:
  ``aria-required-children``, critical; ``aria-deprecated-role``). Each citation becomes a
  ``listitem`` of that list.
"""

from __future__ import annotations

from typing import Any

#: What Sphinx writes → what the page gets instead.
REPLACEMENTS = {'class="citation" id=': 'class="citation" role="listitem" id=', ' role="doc-biblioentry"': ""}


def fix_html(body: str) -> str:
    """``body`` with the fixes applied."""
    for before, after in REPLACEMENTS.items():
        body = body.replace(before, after)
    return body


def _on_page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if "body" in context:
        context["body"] = fix_html(context["body"])


def setup(app: Any) -> dict[str, Any]:
    """Register with Sphinx: fix each page's HTML before it is written."""
    app.connect("html-page-context", _on_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
