"""The book as one PDF, printed by Chromium from its single-page HTML: ``_build/pdf/apple-in-transformerland.pdf``.

No TeX: the book's own site, built as one page (Sphinx's ``singlehtml`` builder) from the chapters' cached
outputs, is printed by the Chromium that the browser tests already use, through Playwright. So the PDF shows
exactly what the site shows, with the same MathJax and the same vendored Vega, and needs no network.

1. The sources are copied into a temporary folder (as for the student edition, :mod:`tools.student_edition`).
   Each chapter there gets the outputs of its last execution from the build's jupyter-cache
   (``_build/.jupyter_cache``, which ``make book`` fills); a chapter whose current code has no outputs there
   stops the command, naming it, rather than being executed again. Execution is then off for the build.
   The student edition then turns each chapter into its student version and hides the solutions, exactly as
   the student site does (:func:`tools.student_edition.student_config`).
2. ``jupyter-book build --builder singlehtml`` writes the whole book, in the table of contents' order, as
   one HTML page, so that cross-references and citations become links inside the document.
3. Chromium opens it offline, waits for MathJax to typeset and for every Vega-Altair figure to be drawn,
   turns each interactive figure into a still image in its initial state (its alt text kept, and a line
   saying the state of its controls), and prints with ``_static/print.css`` (code wrapped, site controls
   hidden, one chapter a page), page numbers in the footer, and an outline of bookmarks from the headings.

    python -m tools.pdf [--edition full|student] [--root .] [--out _build/pdf]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import yaml
from jupyter_cache import get_cache

from tools.book import ROOT, chapters, read
from tools.execute_chapters import cache_folder
from tools.prerequisites import chromium
from tools.stubs import student_notebook
from tools.student_edition import copy_sources, student_config

EDITIONS = ("full", "student")
#: The file each edition writes into the output folder.
FILE_NAMES = {"full": "apple-in-transformerland.pdf", "student": "apple-in-transformerland-student.pdf"}
#: How long Chromium may take to load the page, typeset its formulas and draw its figures (milliseconds): about
#: a minute on the shared 2-core machine (51 s and 73 s measured), generous for a busier one.
RENDER_TIMEOUT_MS = 600_000
#: The printed page: A4, with room at the foot for the page number.
PAGE = {"format": "A4", "margin": {"top": "16mm", "bottom": "18mm", "left": "16mm", "right": "16mm"}}
FOOTER = (
    '<div style="width:100%;font-size:8pt;color:#555;text-align:center;font-family:sans-serif;">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)
#: The text's width on that page in CSS pixels (96 to the inch): A4's 210 mm less both margins.
VIEWPORT = {"width": round((210 - 32) / 25.4 * 96), "height": 1000}
#: How many device pixels per CSS pixel an interactive figure's still image gets (sharp in print).
FIGURE_SCALE = 3
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


class MissingOutputs(RuntimeError):
    """A chapter has no outputs in the build's jupyter-cache for its current code."""


def with_cached_outputs(path: Path, root: Path = ROOT) -> nbformat.NotebookNode:
    """The chapter at ``path`` with the outputs of its last execution for the site (the build's jupyter-cache).

    Raises :class:`MissingOutputs` when the cache holds none for the chapter's current code.
    """
    folder = cache_folder(root)
    notebook = read(path)
    try:
        if not folder.is_dir():
            raise KeyError(path.name)
        _, merged = get_cache(str(folder)).merge_match_into_notebook(notebook)
    except KeyError:
        raise MissingOutputs(
            f"{path.name} has no outputs in {folder} for its current code: run `make book` first (it executes every "
            "chapter into that cache); the PDF is printed from those outputs and never executes a chapter."
        ) from None
    return merged


#: Cell tags that fold part of a cell behind a button on the site, and what a printed page does instead: code
#: folded under its output is left out (paper has no button to unfold it); a folded output or cell is shown.
UNFOLDED = {"hide-input": "remove-input", "hide-output": None, "hide-cell": None}


def unfold(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``notebook`` with its cells' folding tags replaced as :data:`UNFOLDED` says (in place; returned)."""
    for cell in notebook.cells:
        tags = cell.get("metadata", {}).get("tags")
        if tags and UNFOLDED.keys() & set(tags):
            cell.metadata["tags"] = [UNFOLDED.get(tag, tag) for tag in tags if UNFOLDED.get(tag, tag)]
    return notebook


def pdf_config(config: dict, edition: str) -> dict:
    """The book's configuration for the PDF: no execution and no launch buttons; the student edition's as its site."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, not {edition!r}")
    config = student_config(config) if edition == "student" else {**config}
    config.pop("launch_buttons", None)
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    return config


def prepare(root: Path, into: Path, edition: str) -> None:
    """Write the sources of the ``edition`` into ``into``: pages, configuration, chapters with cached outputs."""
    notebooks = {path.relative_to(root): with_cached_outputs(path, root) for path in chapters(root)}
    config = pdf_config(copy_sources(root, into), edition)
    if (root / "_static").is_dir():
        shutil.copytree(root / "_static", into / "_static", dirs_exist_ok=True)
    (into / "_config.yml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for relative, notebook in notebooks.items():
        if edition == "student":
            notebook = student_notebook(notebook, handout=False)
        nbformat.write(unfold(notebook), into / relative)


def build_html(source: Path) -> Path:
    """Build the book at ``source`` as one HTML page (strict, as the site); return the page."""
    jupyter_book = Path(sys.executable).parent / "jupyter-book"  # this environment's, whatever PATH says
    command = [str(jupyter_book), "build", str(source), "--builder", "singlehtml", "-W", "-n", "--keep-going"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"the single-page HTML did not build:\n{run.stdout[-20000:]}{run.stderr[-20000:]}")
    # Sphinx writes the page where the root document lives (book/intro.html) but with its links relative to the
    # build's folder (_static/...), where index.html only redirects to it: the page is read from there instead.
    built = source / "_build" / "singlehtml"
    root_page = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))["root"]
    shutil.copy(built / f"{root_page}.html", built / "index.html")
    return built / "index.html"


#: What only the site has, and paper must not show: anything a reader clicks or types into (buttons, such as the
#: solutions' fold toggles and the header's launch and download buttons; fields; menus), and the chapters' "Open in
#: Colab" badge or any other link that launches a notebook. ``_static/print.css`` hides them; the page is checked
#: for any still shown before it is printed.
SITE_CONTROLS = (
    "button",
    "input",
    "select",
    "textarea",
    "[role=button]",
    "img[src*='colab-badge']",
    "a[href*='colab.research.google.com']",
    "a[href*='mybinder.org']",
)

#: Run in the page once it has loaded, before printing. Each page of the book (a ``document-`` anchor of the
#: single page, then its section) becomes a top-level heading that starts a new sheet, so that the outline has
#: one entry per chapter; links to the page itself (cross-references, citations) become links inside the PDF;
#: folded content is unfolded. Then MathJax is waited for, and a displayed formula wider than the page is made
#: smaller until it fits; every Vega-Altair figure is waited for, and each becomes a still image of its drawing
#: (with its alt text) and a line naming the state of its controls. Last, it lists every site-only control
#: (:data:`SITE_CONTROLS`) still shown, which stops the print.
PREPARE_PAGE = r"""
async ({scale, timeout, controls: siteControls}) => {
  for (const anchor of document.querySelectorAll('span[id^="document-"]')) {
    const section = anchor.nextElementSibling;
    const heading = section && section.querySelector(':scope > h1, :scope > h2');
    if (!heading) { continue; }
    section.classList.add('pdf-document');
    const top = document.createElement('h1');
    for (const name of heading.getAttributeNames()) { top.setAttribute(name, heading.getAttribute(name)); }
    top.replaceChildren(...heading.childNodes);
    heading.replaceWith(top);
  }
  const here = location.href.split('#')[0];
  for (const link of document.querySelectorAll('a[href]')) {
    const target = new URL(link.getAttribute('href'), location.href);
    const local = target.protocol === 'file:';
    if (local && target.hash && document.getElementById(decodeURIComponent(target.hash.slice(1)))) {
      link.setAttribute('href', target.hash);
    } else if (local && target.href.split('#')[0] === here) {
      link.setAttribute('href', '#');
    }
  }
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  for (const formula of document.querySelectorAll('mjx-container[display="true"]')) {
    const room = formula.parentElement.clientWidth, needs = formula.scrollWidth;  // it grows with its formula
    if (room > 0 && needs > room) { formula.style.fontSize = `${Math.floor(100 * room / needs)}%`; }
  }
  const figures = [...document.querySelectorAll('.cell_output div[id^="figure-"]')];
  const start = Date.now();
  while (figures.some(f => !f.querySelector('svg'))) {
    if (Date.now() - start > timeout) { throw new Error('an interactive figure was not drawn'); }
    await new Promise(r => setTimeout(r, 100));
  }
  for (const figure of figures) {
    const svg = figure.querySelector('svg');
    const box = svg.getBoundingClientRect();
    const source = new XMLSerializer().serializeToString(svg);
    const drawing = new Image();
    drawing.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(source);
    await drawing.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.ceil(box.width * scale);
    canvas.height = Math.ceil(box.height * scale);
    const context = canvas.getContext('2d');
    context.fillStyle = 'white';
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(drawing, 0, 0, canvas.width, canvas.height);
    const still = document.createElement('img');
    still.src = canvas.toDataURL('image/png');
    still.alt = figure.getAttribute('aria-label') || svg.getAttribute('aria-label') || '';  // vega-embed's alt text
    still.className = 'pdf-still-figure';
    still.style.width = box.width + 'px';
    const states = [...figure.querySelectorAll('.vega-bind')].map(bind => {
      const name = (bind.querySelector('.vega-bind-name') || {}).textContent || '';
      const input = bind.querySelector('input:checked, select, input:not([type=radio])');
      let value = input ? input.value : '';
      if (input && input.type === 'checkbox') { value = input.checked ? 'on' : 'off'; }
      return `${name.trim()} ${value}`.trim();
    });
    const note = document.createElement('p');
    note.className = 'pdf-still-note';
    note.textContent = 'Interactive on the site; shown here' +
      (states.length ? ' with ' + states.join(', ') : ' as it first appears') + '.';
    figure.replaceChildren(still, note);
    ['role', 'aria-roledescription', 'aria-label'].forEach(name => figure.removeAttribute(name));  // the image's now
  }
  const controls = [...document.querySelectorAll(siteControls)]
    .filter(control => control.getClientRects().length && getComputedStyle(control).visibility !== 'hidden')
    .map(control => `${control.tagName.toLowerCase()}.${[...control.classList].join('.')} ` +
      `"${(control.textContent || control.getAttribute('title') || control.getAttribute('alt') || '').trim()}"`);
  const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
    .filter(heading => heading.getClientRects().length)
    .map(heading => {
      const copy = heading.cloneNode(true);
      copy.querySelectorAll('.headerlink').forEach(link => link.remove());
      return copy.textContent.replace(/\s+/g, ' ').trim();
    });
  return {figures: figures.length, headings, controls};
}
"""


def _letters(text: str) -> str:
    """Letters and digits only, lowercased."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def name_bookmarks(pdf: Path, headings: list[str]) -> int:
    """Give the PDF's bookmarks the text of the headings they point to; return how many were renamed.

    Chromium names a bookmark after the lines its heading was painted in, without the space where a line
    wraps ("sinusoidalpositional"), and sometimes twice over. ``headings`` is every printed heading's text in
    the page's order, as the bookmarks are: each bookmark takes the next heading whose letters it holds.
    """
    from pypdf import PdfWriter
    from pypdf.generic import NameObject, TextStringObject

    writer = PdfWriter(pdf, incremental=True)
    outlines = writer.root_object.get("/Outlines")
    items, stack = [], [outlines.get_object().get("/First")] if outlines else []
    while stack:  # depth first, children before the next sibling: the order of the headings on the page
        item = stack.pop()
        if item is None:
            continue
        item = item.get_object()
        items.append(item)
        stack += [item.get("/Next"), item.get("/First")]
    renamed, next_heading = 0, 0
    for item in items:
        held = _letters(str(item["/Title"]))
        for index in range(next_heading, len(headings)):
            if _letters(headings[index]) and _letters(headings[index]) in held:
                if str(item["/Title"]) != headings[index]:
                    item[NameObject("/Title")] = TextStringObject(headings[index])
                    renamed += 1
                next_heading = index + 1
                break
    if renamed:
        writer.write(pdf)
    return renamed


def print_pdf(page_html: Path, pdf: Path, title: str) -> int:
    """Print ``page_html`` to ``pdf`` with Chromium, offline; return how many interactive figures were stilled."""
    from playwright.sync_api import sync_playwright

    executable = chromium()
    if executable is None:
        raise RuntimeError("no Chromium: run `make browser`, or see `python3 tools/prerequisites.py chromium`")
    outside: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)  # laid out at the page's width, as it will be printed

            def local_only(route) -> None:  # the book is whole on disk; nothing may come from the network
                if route.request.url.startswith("file:"):
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            page.route("**/*", local_only)
            page.emulate_media(media="print")
            start = time.monotonic()
            page.goto(page_html.resolve().as_uri(), wait_until="load", timeout=RENDER_TIMEOUT_MS)
            found = page.evaluate(
                PREPARE_PAGE,
                {"scale": FIGURE_SCALE, "timeout": RENDER_TIMEOUT_MS, "controls": ", ".join(SITE_CONTROLS)},
            )
            if found["controls"]:
                shown = sorted(set(found["controls"]))
                raise RuntimeError(f"site-only controls would be printed (hide them in _static/print.css): {shown[:5]}")
            print(f"  loaded, typeset and drawn in {time.monotonic() - start:.0f} s", flush=True)
            start = time.monotonic()
            page.evaluate("title => { document.title = title; }", title)
            page.pdf(
                path=str(pdf),
                print_background=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
                outline=True,
                tagged=True,
                **PAGE,
            )
            print(f"  printed in {time.monotonic() - start:.0f} s", flush=True)
        finally:
            browser.close()
    if outside:
        raise RuntimeError(f"the page asked the network for {sorted(set(outside))[:5]}: the PDF must build offline")
    name_bookmarks(pdf, found["headings"])
    return found["figures"]


def page_ranges(pdf: Path) -> list[tuple[str, int, int]]:
    """Each page of the book in the PDF (its top-level bookmarks): (title, first page, last page), numbered from 1.

    What an instructor extracts to post one chapter as a reading (``book/instructors.md``).
    """
    from pypdf import PdfReader

    reader = PdfReader(pdf)
    tops = [item for item in reader.outline if not isinstance(item, list)]
    starts = [reader.get_destination_page_number(item) + 1 for item in tops]
    ends = [start - 1 for start in starts[1:]] + [len(reader.pages)]
    return [(str(item.title), start, end) for item, start, end in zip(tops, starts, ends, strict=True)]


def build(root: Path = ROOT, out: Path | None = None, edition: str = "full") -> Path:
    """Write the ``edition`` of the book at ``root`` as one PDF into ``out``; return its path."""
    out = out or root / "_build" / "pdf"
    out.mkdir(parents=True, exist_ok=True)
    pdf = out / FILE_NAMES[edition]
    with tempfile.TemporaryDirectory(prefix=f"pdf-{edition}-") as folder:
        source = Path(folder)
        prepare(root, source, edition)
        title = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8")).get("title", "Book")
        start = time.monotonic()
        page = build_html(source)
        print(f"  the single page built in {time.monotonic() - start:.0f} s", flush=True)
        print_pdf(page, pdf, title)
    return pdf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edition", choices=EDITIONS, default="full", help="full, or student (no solutions)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's root, with _config.yml and _toc.yml")
    parser.add_argument("--out", type=Path, help="the folder the PDF goes into (default: ROOT/_build/pdf)")
    args = parser.parse_args()
    start = time.monotonic()
    print(f"Printing the {args.edition} edition from the chapters' cached outputs...", flush=True)
    try:
        pdf = build(args.root.resolve(), args.out, args.edition)
    except MissingOutputs as error:
        raise SystemExit(f"make pdf: {error}") from None
    print(f"The {args.edition} edition is {pdf} ({time.monotonic() - start:.0f} s). Its pages:")
    for title, first, last in page_ranges(pdf):
        print(f"  {first:>4}-{last:<4} {title}")


if __name__ == "__main__":
    main()
