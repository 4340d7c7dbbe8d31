"""Every page of the book in a real browser: Debian's Chromium, driven by Playwright.

Each page is opened once, on the site served on localhost, and a full-page screenshot is saved
to ``test-artifacts/screenshots/`` (look at them). Then, per page: no console errors, nothing
fetched from outside, every equation typeset by MathJax, every image loaded and described, the
Colab launch link aimed at the page's own notebook, every solution folded until clicked, and no code line cut
at the right edge of a 1280 px window.

Nothing outside this machine is reachable here or in CI, and the pages need nothing from outside: the
site serves MathJax itself (``sphinx_ext/mathjax.py``), as it serves Vega, so every equation is typeset
for a reader with no network (a downloaded copy, a classroom mirror) exactly as the tests see it. Any
outside request is blocked and fails the page. Every page has one header and one search box.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from site_helpers import ARTIFACTS, CONFIG, KNOWN_TOOLCHAIN_ERRORS, PAGES, ROOT, is_notebook, offline_route

SCREENSHOTS = ARTIFACTS / "screenshots"
#: TeX that MathJax should have replaced: delimiters, environments and common commands.
RAW_TEX = re.compile(
    r"\$\$|\\[()\[\]]|\\begin\{|\\(?:frac|sum|sqrt|cdot|times|left|right|mathbf|mathrm|text|sin|cos|omega|theta)\b"
)
#: What an image's alt attribute holds when nobody wrote one: docutils puts the file's address there.
FILE_NAME = re.compile(r"\.(png|jpe?g|gif|svg|webp)$", re.IGNORECASE)
EXPECTED_COLAB = (
    f"{CONFIG['launch_buttons']['colab_url']}/github/"
    f"{CONFIG['repository']['url'].removeprefix('https://github.com/').strip('/')}/blob/main/"
)


#: Code lines still wider than the reading column at 1280 px (the start of each, stripped): lines of more than
#: about 120 characters, which no style can show whole beside the sidebar; each is its chapter's to wrap. A line
#: found cut and not listed fails, and so does a listed one that is no longer cut (take it off the list).
LINES_TOO_LONG: dict[str, set[str]] = {}
#: Every code line cut at the right edge of a page (what a reader who opens the folded solutions would see), as
#: {where: "code" or "output", lines: [...]}: a block is cut when it scrolls sideways.
CUT_LINES_JS = """() => {
    document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
    document.querySelectorAll('details').forEach(d => { d.open = true; });
    const cut = [];
    for (const pre of document.querySelectorAll('.cell_input pre, .cell_output pre, div.highlight pre')) {
        if (pre.clientWidth === 0 || pre.scrollWidth <= pre.clientWidth + 1) continue;
        const style = getComputedStyle(pre);
        const canvas = document.createElement('canvas').getContext('2d');
        canvas.font = `${style.fontSize} ${style.fontFamily}`;
        const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        const lines = pre.textContent.split('\\n').filter(line => canvas.measureText(line).width > room + 1);
        const where = pre.closest('.cell_output') ? 'output' : 'code';
        cut.push({where: where, lines: lines.length ? lines : [pre.textContent]});
    }
    return cut;
}"""


def describes(alt: str, src: str) -> bool:
    """Whether an image's alt text says something: not empty, and not just the image's file name."""
    return bool(alt.strip()) and alt != src and not FILE_NAME.search(alt.strip())


@dataclass
class Visit:
    """One page, opened once, with what went wrong while it loaded."""

    page: Page
    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser(offline_browser: Browser) -> Browser:
    """The session's one Chromium (a second Playwright in the same process would fail)."""
    return offline_browser


@pytest.fixture(scope="module")
def open_page(browser: Browser, site_url: str) -> Iterator[Callable[[str], Visit]]:
    """Open each page of the book once (on first request), wait for it to settle, screenshot it."""
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    visits: dict[str, Visit] = {}

    def open_(name: str) -> Visit:
        if name in visits:
            return visits[name]
        visit = Visit(context.new_page())
        errors = visit.errors
        visit.page.on("console", lambda message: message.type == "error" and errors.append(message.text))
        visit.page.on("pageerror", lambda error: errors.append(f"uncaught {error}"))
        visit.page.on("response", lambda got: got.status >= 400 and errors.append(f"{got.status} {got.url}"))
        visit.page.route("**/*", offline_route(site_url, visit.outside))
        response = visit.page.goto(f"{site_url}{name}.html", wait_until="load")
        assert response is not None and response.ok, f"{name}.html did not load"
        visit.page.evaluate(
            "async () => { if (window.MathJax?.startup?.promise) await MathJax.startup.promise;"
            " await document.fonts.ready; }"
        )
        # the whole page, for a reader of the artifacts; JPEG, as PNG takes twice as long on pages 28,000 px tall
        visit.page.screenshot(path=SCREENSHOTS / f"{Path(name).name}.jpeg", full_page=True, type="jpeg", quality=70)
        visits[name] = visit
        return visit

    yield open_
    context.close()


@pytest.mark.parametrize("name", PAGES, ids=lambda page: Path(page).name)
class TestPage:
    def test_no_console_errors(self, open_page: Callable[[str], Visit], name: str):
        visit = open_page(name)
        errors = [e for e in visit.errors if not any(known in e for known in KNOWN_TOOLCHAIN_ERRORS)]
        assert not errors, f"{name}: console errors: {errors}"

    def test_nothing_is_fetched_from_outside(self, open_page: Callable[[str], Visit], name: str):
        outside = open_page(name).outside
        assert not outside, f"{name} needs resources from outside the site, which an offline reader lacks: {outside}"

    def test_mathjax_typeset_every_equation(self, open_page: Callable[[str], Visit], name: str):
        math = open_page(name).page.evaluate(
            """() => {
                const maths = [...document.querySelectorAll('.math')];
                const rest = document.body.cloneNode(true);
                rest.querySelectorAll('script, style, pre, code, mjx-container, textarea').forEach(e => e.remove());
                return {
                    maths: maths.length,
                    typeset: document.querySelectorAll('mjx-container').length,
                    untypeset: maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.trim()),
                    errors: [...document.querySelectorAll('mjx-merror')].map(e => e.getAttribute('data-mjx-error')),
                    text: rest.textContent,
                };
            }"""
        )
        assert not math["untypeset"], f"{name}: equations MathJax did not typeset: {math['untypeset'][:5]}"
        assert math["typeset"] >= math["maths"], f"{name}: {math['maths']} equations, {math['typeset']} typeset"
        assert not math["errors"], f"{name}: MathJax could not parse: {math['errors']}"
        text = " ".join(math["text"].split())
        raw = RAW_TEX.search(text)
        assert raw is None, f"{name}: raw TeX in the visible text: …{text[max(raw.start() - 60, 0) : raw.end() + 60]}…"

    def test_mathjax_is_the_sites_own(self, open_page: Callable[[str], Visit], name: str):
        """MathJax came from the site's _static/mathjax/, with its fonts, and typeset with no network."""
        page = open_page(name).page
        sources = page.eval_on_selector_all("script[src*='mathjax']", "all => all.map(s => s.src)")
        assert all("/_static/mathjax/" in src for src in sources), f"{name}: MathJax from {sources}"
        if page.locator(".math").count():
            assert sources, f"{name}: formulas but no MathJax script"

    def test_one_header_and_one_search_box(self, open_page: Callable[[str], Visit], name: str):
        """The sidebar's search, as sphinx-book-theme shows it: no second header band with a second one."""
        page = open_page(name).page
        searches = page.locator(".search-button-field:visible").count()
        assert searches == 1, f"{name}: {searches} search boxes in view"
        band = page.locator("#pst-header:visible").count()
        assert band == 0, f"{name}: a header band above the page (pydata-sphinx-theme's navbar; navbar_persistent)"

    def test_every_image_loads_and_has_alt_text(self, open_page: Callable[[str], Visit], name: str):
        images = open_page(name).page.evaluate(
            """async () => {
                const images = [...document.images];
                images.forEach(image => { image.loading = 'eager'; });
                await Promise.all(images.map(image => image.decode().catch(() => null)));
                return images.map(i => ({src: i.getAttribute('src'), alt: i.alt, width: i.naturalWidth}));
            }"""
        )
        assert not [i["src"] for i in images if i["width"] == 0], f"{name}: images that did not load"
        assert not [i["src"] for i in images if not describes(i["alt"], i["src"])], f"{name}: images without alt text"
        if is_notebook(name):
            assert any("_images/" in i["src"] for i in images), f"{name}: a chapter with no figure"

    def test_colab_launch_link(self, open_page: Callable[[str], Visit], name: str):
        page = open_page(name).page
        links = set(page.eval_on_selector_all("a[href*='colab.research.google.com']", "all => all.map(a => a.href)"))
        if not is_notebook(name):
            assert not links, f"{name} is not a notebook, so Colab cannot open it, yet it links there: {links}"
            return
        expected = f"{EXPECTED_COLAB}{name}.ipynb"
        assert links == {expected}, f"{name}: Colab links {links}, expected {expected}"
        assert (ROOT / f"{name}.ipynb").is_file()
        page.click(".dropdown-launch-buttons button.dropdown-toggle")  # the rocket in the page's header
        expect(page.locator(f".dropdown-launch-buttons a[href='{expected}']")).to_be_visible()
        page.keyboard.press("Escape")

    def test_no_code_line_is_cut_at_the_right_edge(self, open_page: Callable[[str], Visit], name: str):
        """At 1280 px (a laptop) every code block and output shows its lines whole (scrollWidth <= clientWidth),
        but for the lines :data:`LINES_TOO_LONG` lists; outputs wrap, as in Jupyter."""
        if not is_notebook(name):
            return
        cut = open_page(name).page.evaluate(CUT_LINES_JS)
        outputs = [line for block in cut if block["where"] == "output" for line in block["lines"]]
        assert not outputs, f"{name}: outputs cut at the right edge at 1280 px: {outputs}"
        found = {line.strip()[:60] for block in cut if block["where"] == "code" for line in block["lines"]}
        known = LINES_TOO_LONG.get(name, set())
        assert not found - known, (
            f"{name}: code lines cut at the right edge at 1280 px (wrap them): {sorted(found - known)}"
        )
        assert not known - found, (
            f"{name}: lines listed in LINES_TOO_LONG are whole now; unlist them: {sorted(known - found)}"
        )

    def test_solutions_are_folded_and_open_on_click(self, open_page: Callable[[str], Visit], name: str):
        page = open_page(name).page
        solutions = page.locator(".solution")
        if is_notebook(name):
            assert solutions.count() > 0, f"{name}: a chapter whose page shows no solution"
        unfolded = page.eval_on_selector_all(".solution:not(.dropdown)", "all => all.map(s => s.id)")
        assert not unfolded, f"{name}: solutions shown unfolded (give them `:class: dropdown`): {unfolded}"
        loose = page.locator(".tag_solution:not(.solution .tag_solution)").count()
        assert loose == 0, f"{name}: {loose} solution code cell(s) outside the solution-start/solution-end gates"
        if solutions.count():  # the cut-lines test unfolds every toggle on this shared page: load it afresh
            page.reload()
            page.wait_for_function("document.querySelectorAll('.solution .toggle-button').length > 0", timeout=60_000)
        for solution in solutions.all():
            body = solution.locator(":scope > :not(.admonition-title)").first
            label = solution.get_attribute("id")
            expect(body, f"{name}: solution {label} is open before any click").to_be_hidden()
            solution.locator(".admonition-title").click()
            expect(body, f"{name}: solution {label} did not open on click").to_be_visible()
        if solutions.count():
            solutions.first.screenshot(path=SCREENSHOTS / f"{Path(name).name}--solution-open.png")


def test_the_site_opens_on_the_introduction(browser: Browser, site_url: str):
    visit = Visit(browser.new_page())
    visit.page.route("**/*", offline_route(site_url, visit.outside))
    visit.page.goto(site_url)
    expect(visit.page).to_have_url(f"{site_url}{PAGES[0]}.html")
    visit.page.close()
