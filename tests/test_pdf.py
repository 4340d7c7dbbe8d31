"""The book as one PDF (``make pdf``, :mod:`tools.pdf`), both editions, read back with pypdf as a reader would.

Each edition is printed once per session, from the chapters' outputs in the build's jupyter-cache (``make book``,
or ``make test``'s chapters stage, fills it; with none there the tool stops and names ``make book``). Under
``pytest -n 2 --dist loadgroup`` (``make test-pdf``) each edition's tests go to one worker, so that the two
editions are printed side by side, each once (a file lock keeps it so under any other distribution).
Then: one outline entry and one new page per page of the book, in the table of contents' order; every page
numbered; a known sentence and a known formula's text from each chapter, and no TeX source anywhere; every
figure an image, the interactive ones with their alt text; links that stay inside the document or go to the
web; no site-only controls; every exercise of each chapter, with every solution in the full edition and none
in the student edition, nor any hidden assertion.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import unicodedata
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import nbformat
import pytest
from filelock import FileLock
from test_instructor_kit import KEY_VALUES, SOLUTION_BLOCK, gated, hidden_assertions, solution_prints, squeeze

from tools import book, pdf
from tools.exercises import exercise_number, exercises
from tools.stubs import student_notebook

pypdf = pytest.importorskip("pypdf")

pytestmark = pytest.mark.slow
ROOT = book.ROOT
CHAPTERS = book.chapters(ROOT)
PRINT_TIMEOUT_S = 900

#: From each chapter: a sentence of its prose, and the text a formula of it leaves in the PDF (MathJax's glyphs,
#: compared as letters and digits only, since a formula's pieces are laid out in two dimensions).
KNOWN = {
    "01_why_order_matters": (
        "Same words, different story: on the first floor the Listeners hear every word",
        "Attn(PX)=PAP⊤PXWV=PAXWV=PAttn(X)",
    ),
    "02_sinusoidal": ("A wall of clocks that are never wound, and never wrong.", "ωi=1/10000 2i/d"),
    "03_learned": ("the Archivist keeps one page per seat", "hm=Exm+Pm"),
    "04_bert": ("Three streams run into one basin; what leaves it is a single vector per token.", "LN(Exm+Ssm+Pm)"),
    "05_extrapolation": ("Past the last seat the Cartographer has drawn, the map is blank", "w=xm−⌊xm⌋"),
    "06_relative": ("On the roof nobody reads your ticket.", "R(α)⊤R(β)=R(β−α)"),
    "07_observatory": ("Through the telescope, a city of 135 million lamps", "√64"),
    "08_stretching_the_map": ("A map can be redrawn at a new scale", "λi=2π/θi=2πb 2i/d"),
    "09_todays_variants": ("Every builder keeps the old tools", "qrot⊤R((n−m)θ)krot+qpass⊤kpass"),
}
#: TeX source that a formula left untypeset would show.
RAW_TEX = re.compile(r"\$\$|\\(frac|mathrm|sqrt|begin|left|right|top|theta|omega|lambda|texttt)\b|\\_")
#: What only the site shows: its controls' labels (launch and download buttons, search, copy, navigation, the
#: folded cells' and solutions' toggles, the Colab badge's alt text), as the site spells them. Case counts: the
#: instructor's guide names the "Open in Colab" badge in its prose, which is no control.
SITE_ONLY = [
    "Skip to main content",
    "Back to top",
    "Open In Colab",
    "Download this page",
    "Copy to clipboard",
    "Search this book",
    "Open issue",
    "Fullscreen mode",
    "Toggle hidden content",
    "Click to show",
    "Click to hide",
    "Ctrl+K",
    "Show code cell source",
    "Show code cell output",
    "Hide code cell source",
]
#: Where only a site control links: a notebook's launch in Colab or Binder, the repository's issue and edit pages.
SITE_ONLY_LINKS = re.compile(r"colab\.research\.google\.com|mybinder\.org|/issues/new|/edit/|/_sources/")


def flat(text: str) -> str:
    """Text with ligatures undone (ﬁ → fi) and every run of white space one space."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def _images(resources: pypdf.generic.PdfObject | None) -> int:
    """How many image XObjects a page's (or a form's) resources hold, those of the forms it draws included."""
    xobjects = resources.get_object().get("/XObject") if resources is not None else None
    found = 0
    for reference in (xobjects.get_object() if xobjects is not None else {}).values():
        xobject = reference.get_object()
        if xobject.get("/Subtype") == "/Image":
            found += 1
        elif xobject.get("/Subtype") == "/Form":
            found += _images(xobject.get("/Resources"))
    return found


@dataclass
class Printed:
    """One edition's PDF, read with pypdf."""

    edition: str
    path: Path

    @cached_property
    def reader(self) -> pypdf.PdfReader:
        return pypdf.PdfReader(self.path)

    @cached_property
    def pages(self) -> list[str]:
        """Each page's text, its footer (the page number) included."""
        return [page.extract_text() for page in self.reader.pages]

    @cached_property
    def text(self) -> str:
        """The whole text without the footers, as one string."""
        return "\n".join(re.sub(r"\s*\d+ / \d+\s*$", "", page) for page in self.pages)

    @cached_property
    def outline(self) -> list[tuple[str, int]]:
        """The top-level bookmarks: (title, 0-based page)."""
        return [
            (flat(entry.title), self.reader.get_destination_page_number(entry))
            for entry in self.reader.outline
            if not isinstance(entry, list)
        ]

    @cached_property
    def image_count(self) -> int:
        """How many images the pages draw (pypdf's ``page.images`` decodes each one: 20 s of CPU for the book)."""
        return sum(_images(page.get("/Resources")) for page in self.reader.pages)

    def chapter_text(self, index: int) -> str:
        """The text of the pages from the ``index``-th top-level bookmark to the next one."""
        starts = [page for _, page in self.outline] + [len(self.pages)]
        return "\n".join(self.pages[starts[index] : starts[index + 1]])


@pytest.fixture(
    scope="session", params=[pytest.param(edition, marks=pytest.mark.xdist_group(edition)) for edition in pdf.EDITIONS]
)
def printed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Printed:
    """Each edition printed once per session (with xdist, by the first worker that needs it)."""
    edition = request.param
    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    out = shared / "pdf"
    target, record = out / pdf.FILE_NAMES[edition], out / f"{edition}.seconds"  # written when printed
    with FileLock(shared / f"pdf-{edition}.lock"):
        if not record.is_file():
            start = time.monotonic()
            command = [sys.executable, "-m", "tools.pdf", "--edition", edition, "--out", str(out)]
            run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=PRINT_TIMEOUT_S)
            assert run.returncode == 0, f"python -m tools.pdf --edition {edition} failed:\n{run.stdout}{run.stderr}"
            record.write_text(f"{time.monotonic() - start:.1f}")
    return Printed(edition, target)


def page_titles() -> list[str]:
    """The title of every page of the book, in the table of contents' order, chapters numbered as printed."""
    titles, number = [], 0
    for page in book.pages(ROOT):
        notebook = (ROOT / page).with_suffix(".ipynb")
        if notebook in CHAPTERS:
            number += 1
            titles.append(f"{number}. {book.title(book.read(notebook))}")
        else:
            first = (ROOT / page).with_suffix(".md").read_text(encoding="utf-8").split("\n", 1)[0]
            titles.append(first.removeprefix("# ").strip())
    return [flat(title.replace("'", "’")) for title in titles]


def printed_notebooks(edition: str) -> list[nbformat.NotebookNode]:
    """The chapters as the edition prints them: their cached outputs, and the student edition's changes."""
    notebooks = [pdf.with_cached_outputs(path, ROOT) for path in CHAPTERS]
    return [student_notebook(nb, handout=False) for nb in notebooks] if edition == "student" else notebooks


def figures(notebook: nbformat.NotebookNode) -> tuple[int, list[str]]:
    """How many figures a chapter shows (outputs with an image, or an interactive figure), and the alt texts of
    its interactive figures (their ``description``)."""
    count, described = 0, []
    for cell in notebook.cells:
        if cell.cell_type != "code" or {"remove-cell", "remove-output"} & set(cell.metadata.get("tags", [])):
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            html = "".join(data.get("text/html", ""))
            if "vegaEmbed(" in html:
                count += 1
                described += re.findall(r'"description":"((?:[^"\\]|\\.)*)"', html)[:1]
            elif any(kind.startswith("image/") for kind in data):
                count += 1
    return count, described


def without_math(text: str) -> str:
    """``text`` without its formulas: the PDF's text layer puts their glyphs apart from the words around them."""
    return re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", text, flags=re.S)


@cache
def distinctive_prints() -> dict[str, list[str]]:
    """Exercise label → its solutions' distinctive pieces (as :func:`test_instructor_kit.leak_prints` finds them,
    12 characters or more, shown nowhere outside a solution) with every formula taken out first, of the solutions
    and of the text around them: the PDF's text layer puts a formula's glyphs apart from the words around it, so
    "so the table has $2k+1$ rows" reads "so the table has rows" there. Every solution keeps some."""
    parts = [without_math(page.read_text(encoding="utf-8")) for page in (ROOT / "book").glob("*.md")]
    solutions: dict[str, list[str]] = {}
    for path in CHAPTERS:
        notebook = book.read(path)
        inside = gated(notebook)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "markdown":
                cell.source = without_math(cell.source)
            if index not in inside and "{solution-" not in cell.source:
                parts.append(SOLUTION_BLOCK.sub("", cell.source))
                parts += [
                    output.get("text", "") + output.get("data", {}).get("text/plain", "")
                    for output in cell.get("outputs", [])
                ]
        for label, pieces in solution_prints(notebook).items():
            solutions.setdefault(label, []).extend(pieces)
    public = squeeze("\n".join(parts))
    return {
        label: sorted({p for p in pieces if len(p) >= 12 and p not in public}) for label, pieces in solutions.items()
    }


def alt_texts(reader: pypdf.PdfReader) -> list[str]:
    """Every /Alt of the tagged PDF's structure tree."""
    found, stack = [], [reader.trailer["/Root"].get("/StructTreeRoot")]
    while stack:
        node = stack.pop()
        if isinstance(node, pypdf.generic.IndirectObject):
            node = node.get_object()
        if isinstance(node, pypdf.generic.ArrayObject):
            stack.extend(node)
        elif isinstance(node, pypdf.generic.DictionaryObject):
            if "/Alt" in node:
                found.append(flat(str(node["/Alt"])))
            if "/K" in node:
                stack.append(node["/K"])
    return found


def test_the_outline_has_one_entry_per_page_of_the_book_each_on_a_new_page(printed: Printed):
    titles = [title for title, _ in printed.outline]
    assert titles == page_titles(), "the PDF's top-level bookmarks are not the book's pages in order"
    starts = [page for _, page in printed.outline]
    assert starts[0] == 0 and starts == sorted(set(starts)), f"each page of the book starts a new sheet: {starts}"
    lengths = [b - a for a, b in zip(starts, [*starts[1:], len(printed.pages)], strict=True)]
    chapters = lengths[1 : 1 + len(CHAPTERS)]
    assert min(chapters) >= 10, f"pages per chapter {chapters}: a chapter this short has lost its content"


def test_every_page_is_numbered_out_of_the_page_count(printed: Printed):
    count = len(printed.reader.pages)
    assert 10 * len(CHAPTERS) <= count <= 60 * len(CHAPTERS), f"{count} pages"
    unnumbered = [n for n, text in enumerate(printed.pages, 1) if not text.rstrip().endswith(f"{n} / {count}")]
    assert not unnumbered, f"pages without 'N / {count}' at their foot: {unnumbered[:10]}"


@pytest.mark.parametrize("chapter", sorted(KNOWN))
def test_each_chapter_shows_its_prose_and_its_typeset_formulas(printed: Printed, chapter: str):
    index = 1 + [path.stem for path in CHAPTERS].index(chapter)
    sentence, formula = KNOWN[chapter]
    text = printed.chapter_text(index)
    assert flat(sentence) in flat(text), f"{chapter}: '{sentence}' is not on its pages"
    assert squeeze(formula) in squeeze(text), f"{chapter}: the formula '{formula}' is not on its pages"


def test_no_formula_is_left_as_tex_source(printed: Printed):
    found = sorted({match.group(0) for match in RAW_TEX.finditer(printed.text)})
    assert not found, f"TeX source in the PDF: {found}"


def test_every_figure_is_an_image_and_the_interactive_ones_keep_their_alt_text(printed: Printed):
    counted = [figures(nb) for nb in printed_notebooks(printed.edition)]
    expected = sum(count for count, _ in counted)
    images = printed.image_count
    assert images == expected, f"{images} images in the PDF; the chapters show {expected} figures"
    described = [flat(text.encode().decode("unicode_escape")) for _, texts in counted for text in texts]
    assert len(described) >= len(CHAPTERS), "fewer interactive figures than chapters: is the search blind?"
    alts = alt_texts(printed.reader)
    missing = [text for text in described if text not in alts]
    assert not missing, f"interactive figures printed without their alt text: {missing[:3]}"
    assert printed.text.count("Interactive on the site; shown here") == len(described)


def test_links_stay_in_the_document_or_go_to_the_web(printed: Printed):
    internal, elsewhere = 0, []
    for page in printed.reader.pages:
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            action = annotation.get("/A", {})
            uri = str(action.get("/URI", "")) if action else ""
            if "/Dest" in annotation or action.get("/S") == "/GoTo":
                internal += 1
            elif not uri.startswith(("https://", "http://", "mailto:")):
                elsewhere.append(uri)
    assert not elsewhere, f"links to nowhere a reader of the PDF can follow: {sorted(set(elsewhere))[:5]}"
    assert internal >= 20 * len(CHAPTERS), f"only {internal} links inside the PDF: cross-references or citations lost"


def test_no_site_only_control_is_printed(printed: Printed):
    found = [label for label in SITE_ONLY if label in printed.text]
    assert not found, f"site-only controls in the PDF: {found}"
    links = []
    for page in printed.reader.pages:
        for annotation in page.get("/Annots") or []:
            action = annotation.get_object().get("/A") or {}
            links.append(str(action.get("/URI", "")))
    launched = sorted({uri for uri in links if SITE_ONLY_LINKS.search(uri)})
    assert not launched, f"links that only the site's controls make (a badge, a launch button): {launched[:5]}"


def test_every_exercise_is_printed_and_every_solution_only_in_the_full_edition(printed: Printed):
    prints = distinctive_prints()
    blind = sorted(label for label, pieces in prints.items() if not pieces)
    assert not blind, f"solutions with nothing distinctive left to look for: {blind}"
    for index, path in enumerate(CHAPTERS, 1):
        notebook = book.read(path)
        numbers = [exercise_number(exercise.label) for exercise in exercises(notebook)]
        text = flat(printed.chapter_text(index))
        printed_numbers = re.findall(r"Exercise (\d+\.\d+) \(", text)
        assert printed_numbers == numbers, (
            f"{path.name}: exercises printed {printed_numbers}, the chapter has {numbers}"
        )
        solved = sorted(solution_prints(notebook))
        titles = [line for line in printed.chapter_text(index).split("\n") if line.strip() == "Solution"]
        expected = len(solved) if printed.edition == "full" else 0
        assert len(titles) == expected, f"{path.name}: {len(titles)} solutions printed; expected {expected}"
        if printed.edition == "full":  # (pypdf reads a page's text in drawing order: by chapter, not by box)
            pages = squeeze(text)
            missing = [label for label in solved if not any(piece in pages for piece in prints[label])]
            assert not missing, f"{path.name}: solutions not printed in their chapter: {missing}"


def test_the_student_edition_holds_no_solution_and_no_hidden_assertion(printed: Printed):
    text = squeeze(printed.text)
    prints = distinctive_prints()
    found = {label: [piece for piece in pieces if piece in text] for label, pieces in prints.items()}
    if printed.edition == "full":  # the full edition shows them, each under its exercise (the test above)
        return
    assert not any(found.values()), f"solutions in the student edition: { {k: v for k, v in found.items() if v} }"
    for path in CHAPTERS:
        chapter = book.read(path)
        visible = [cell.source for cell in chapter.cells if "remove-cell" not in cell.metadata.get("tags", [])]
        shown = squeeze("\n".join(visible))
        asserted = [squeeze(a) for a in hidden_assertions(chapter) if squeeze(a) not in shown]
        assert asserted, f"{path.name}: no hidden assertion to look for: is the search blind?"
        leaks = [a for a in asserted if a in text]
        assert not leaks, f"{path.name}: hidden assertions in the student edition: {leaks[:3]}"
        for pattern in KEY_VALUES.get(path.name, []):
            assert not re.search(pattern, printed.text), f"{path.name}: {pattern} is in the student edition"
