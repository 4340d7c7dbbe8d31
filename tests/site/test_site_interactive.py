"""The interactive figures on the built site, operated in a real browser, offline.

Every chapter page with an interactive figure is opened in Debian's Chromium with nothing outside
the site reachable. Each figure must be drawn, by
Vega served from the site's own ``_static/vega/`` (``sphinx_ext/vendor_js.py``), and carry its alt text.
Then every control is operated *from the keyboard*, as a reader who cannot use a mouse would
(Tab focus, then an arrow key or Space), and the drawing must change, with no console error.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect
from site_helpers import INTERACTIVE_NOTEBOOKS, ROOT, interactive_figure_count

#: Every chapter teaches an idea that depends on a parameter, so every chapter has a figure to turn.
CHAPTERS_WITH_A_KNOB = sorted((ROOT / "book").glob("0[1-8]_*.ipynb"))
#: The drawing of one figure: its SVG markup, which Vega redraws when a control changes the view.
DRAWING = "(e) => e.querySelector('svg').outerHTML"
#: The key that changes each kind of input, once it has the focus.
KEYS = {"range": "ArrowRight", "checkbox": "Space", "radio": "ArrowRight", "select-one": "ArrowDown"}


def page_name(path: Path) -> str:
    return f"book/{path.stem}"


def test_every_chapter_with_a_parameter_has_an_interactive_figure():
    missing = [path.name for path in CHAPTERS_WITH_A_KNOB if path not in INTERACTIVE_NOTEBOOKS]
    assert not missing, f"chapters without an interactive figure: {missing}"
    empty = [path.name for path in INTERACTIVE_NOTEBOOKS if interactive_figure_count(path) == 0]
    assert not empty, f"chapters that import transformerland.interactive but committed no figure output: {empty}"


@pytest.fixture(scope="module")
def figures_page(offline_page):
    """Open each chapter once, wait until every figure is drawn, and keep the visit for the tests."""
    visits = {}

    def open_(path: Path):
        if path not in visits:
            visit = offline_page(page_name(path))
            expected = interactive_figure_count(path)
            visit.page.wait_for_function(
                f"document.querySelectorAll('.vega-embed svg').length >= {expected}", timeout=30_000
            )
            visits[path] = visit
        return visits[path]

    yield open_
    for visit in visits.values():
        visit.page.close()


@pytest.mark.parametrize("path", INTERACTIVE_NOTEBOOKS, ids=lambda path: path.stem)
class TestInteractiveFigures:
    def test_figures_are_drawn_by_the_sites_own_vega(self, figures_page, path: Path):
        visit = figures_page(path)
        assert visit.page.locator(".vega-embed svg").count() == interactive_figure_count(path)
        scripts = visit.page.eval_on_selector_all("script[src]", "all => all.map(s => s.getAttribute('src'))")
        for library in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"):
            assert any(f"_static/vega/{library}" in src for src in scripts), f"{path.name}: {library} not served"
        assert not visit.outside, f"{path.name} fetched from outside the site: {visit.outside}"
        assert not visit.new_errors(), f"{path.name}: console errors: {visit.new_errors()}"

    def test_each_figure_has_alt_text_a_caption_saying_what_to_try_and_controls(self, figures_page, path: Path):
        figures = figures_page(path).page.locator(".vega-embed")
        for i in range(figures.count()):
            figure = figures.nth(i)
            assert figure.get_attribute("role") == "graphics-document"
            alt = figure.get_attribute("aria-label") or ""
            assert len(alt.split()) >= 12, f"{path.name}, figure {i}: alt text too short: {alt!r}"
            caption = figure.evaluate(
                "(e) => { const cell = e.closest('.cell');"
                " let next = cell && cell.nextElementSibling;"
                " return next ? next.textContent : ''; }"
            )
            assert caption.strip().startswith("Try it"), f"{path.name}, figure {i}: no 'Try it' caption after it"
            assert figure.locator(".vega-bindings input, .vega-bindings select").count() > 0

    def test_chart_only_cells_show_the_figure_with_their_code_folded(self, figures_page, path: Path):
        """A cell tagged hide-input (it only builds a chart) shows its figure; its code opens on a click."""
        page = figures_page(path).page
        folded = page.locator(".cell.tag_hide-input:has(.vega-embed)")
        for cell in folded.all():
            expect(cell.locator(".vega-embed").first).to_be_visible()
            code = cell.locator(".cell_input pre").first
            expect(code).to_be_hidden()
            cell.locator("details.above-input > summary").first.click()
            expect(code).to_be_visible()
        cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        tagged = sum("hide-input" in c.metadata.get("tags", []) and "vegaEmbed(" in str(c.outputs) for c in cells)
        assert folded.count() == tagged, f"{path.name}: {tagged} chart cells tagged hide-input, {folded.count()} folded"

    def test_every_control_redraws_its_figure_from_the_keyboard(self, figures_page, path: Path):
        visit = figures_page(path)
        figures = visit.page.locator(".vega-embed")
        operated = 0
        for i in range(figures.count()):
            figure = figures.nth(i)
            controls = figure.locator(".vega-bind")
            for j in range(controls.count()):
                control = controls.nth(j).locator("input:checked, input:not([type=radio]), select").first
                kind = control.evaluate("(e) => e.type")
                before = figure.evaluate(DRAWING)
                control.focus()
                visit.page.keyboard.press(KEYS[kind])
                visit.page.wait_for_function(
                    f"(before) => document.querySelectorAll('.vega-embed')[{i}].querySelector('svg').outerHTML"
                    " !== before",
                    arg=before,
                    timeout=5_000,
                )
                operated += 1
        assert operated > 0
        assert not visit.new_errors(), f"{path.name}: console errors after operating the controls: {visit.new_errors()}"
