"""Every chapter notebook keeps the book's conventions (CONTRIBUTING.md).

Each check is a test per notebook, so a failure names the notebook and the broken rule.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from tools import tables
from tools.book import ROOT, chapters, pages
from tools.exercises import LABEL, META_LINE
from tools.facts import facts, objectives
from tools.new_chapter import TEMPLATE, new_chapter
from tools.release import install_requirement, version

BOOK = ROOT / "book"
#: Every chapter of the table of contents, and the template that new chapters start from.
NOTEBOOKS = [*chapters(ROOT), TEMPLATE]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPO_URL = CONFIG["repository"]["url"].rstrip("/")
BRANCH = CONFIG["repository"]["branch"]

EXERCISE = re.compile(rf"```\{{exercise\}}[^\n]*\n:label: ({LABEL})\n(?:\s*:[a-z-]+:[^\n]*\n)*\s*\n?([^\n]*)")
SOLUTION = re.compile(rf"```\{{(solution|solution-start)\}} ({LABEL})")
#: The widest code line, in characters, that the site shows whole at 1280 px (tests/site/test_site_browser.py
#: measures it on the built pages).
SITE_CODE_WIDTH = 121
FORBIDDEN_PATHS = [
    r"sys\.path",
    r"os\.chdir",
    r"['\"]\.\./",
    r"lib/transformerland",
    r"/work/",
    r"_build",
    r"__file__",
    r"['\"]book/",
]


def chapter_number(path: Path) -> int:
    return int(path.name.split("_", 1)[0])


def load(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def tags(cell: nbformat.NotebookNode) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def markdown(nb: nbformat.NotebookNode) -> str:
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_config_points_at_one_repository():
    assert REPO_URL.startswith("https://github.com/"), "repository.url must be a GitHub address"
    assert BRANCH == "main", "Colab links need repository.branch: main (Jupyter Book's default is master)"
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"


def test_one_release_everywhere():
    """pyproject.toml's version is the library's __version__ and the tag every set-up cell installs."""
    init = (ROOT / "lib" / "transformerland" / "__init__.py").read_text()
    library = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    assert library and library.group(1) == version(ROOT), "lib/transformerland/__init__.py: run python -m tools.release"
    assert install_requirement(ROOT).endswith(f"@v{version(ROOT)}")


def test_the_documents_name_no_other_repository():
    """Where the README or a page quotes the repository (the set-up line), it is the configured one."""
    for path in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "pyproject.toml", *BOOK.glob("*.md")]:
        for address in re.findall(r"github\.com/[\w.-]+/[\w.-]+", path.read_text()):
            assert f"https://{address}".removesuffix(".git") == REPO_URL, f"{path.name} names {address}, not {REPO_URL}"


def test_every_toc_entry_exists():
    missing = [f for f in pages(ROOT) if not any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb"))]
    assert not missing, f"_toc.yml lists files that do not exist: {missing}"


def test_there_are_chapters():
    assert chapters(ROOT), "the numbered parts of _toc.yml list no chapter notebook"


def test_every_chapter_notebook_is_in_the_table_of_contents():
    """A notebook in book/ that _toc.yml does not list would be left out of every table, test and build."""
    listed = set(chapters(ROOT))
    assert not [p.name for p in BOOK.glob("*.ipynb") if p not in listed], "book/ notebooks missing from _toc.yml"


def test_the_generated_tables_are_current():
    """README, CONTRIBUTING, the introduction, the instructor's guide and the exercise list, from the facts."""
    stale = [str(path.relative_to(ROOT)) for path in tables.stale(ROOT)]
    assert not stale, f"generated tables out of date in {stale}: run python -m tools.tables"


def test_a_new_chapter_from_the_template_keeps_every_convention(tmp_path: Path):
    (tmp_path / "book").mkdir()
    path = new_chapter(9, "long_contexts", root=tmp_path)
    assert path.name == "09_long_contexts.ipynb" and facts(path).floor == 9
    checks = TestNotebook()
    for name in [name for name in dir(checks) if name.startswith("test_")]:
        getattr(checks, name)(path)


def test_a_chapter_budget_over_the_books_limit_is_refused(tmp_path: Path):
    """A chapter may not budget more than the book's 45 s (BOOK.md); the error names the limit."""
    (tmp_path / "book").mkdir()
    path = new_chapter(9, "long_contexts", root=tmp_path)
    nb = load(path)
    nb.metadata["transformerland"]["budget_seconds"] = 46
    with pytest.raises(ValueError, match="budget_seconds is 46; the book allows 1 to 45"):
        facts(path, nb)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
class TestNotebook:
    def test_kernelspec_and_size(self, path: Path):
        nb = load(path)
        assert nb.metadata.get("kernelspec", {}).get("name") == "python3", "missing python3 kernelspec"
        assert path.stat().st_size < 1_000_000, f"{path.name} is over 1 MB"

    def test_title_then_colab_badge(self, path: Path):
        nb = load(path)
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), "first cell: '# Title'"
        badge = nb.cells[1]
        link = f"https://colab.research.google.com/github/{REPO_URL.removeprefix('https://github.com/')}"
        expected = (
            "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"({link}/blob/{BRANCH}/book/{path.name})"
        )
        assert badge.cell_type == "markdown" and badge.source.strip() == expected, f"second cell must be {expected}"
        assert {"colab-badge", "remove-cell"} <= set(tags(badge)), "badge cell needs tags colab-badge, remove-cell"

    def test_setup_cell_installs_the_release_then_what_the_chapter_needs(self, path: Path):
        """The library at the release tag that pyproject.toml names (tools/release.py), then extras.ensure."""
        nb = load(path)
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert {"setup", "remove-cell"} <= set(tags(first_code)), "first code cell must be the set-up cell"
        assert 'find_spec("transformerland") is None' in first_code.source, "install only when missing"
        wanted = install_requirement(ROOT)
        assert f'%pip install --quiet "{wanted}"' in first_code.source, (
            f"the set-up cell must install the release, {wanted!r}: run python -m tools.release"
        )
        ensure = re.search(r"^from transformerland\.extras import ensure\n\nensure\(([^)]*)\)", first_code.source, re.M)
        assert ensure, "the set-up cell must then call transformerland.extras.ensure(...)"
        urls = set(re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", "\n".join(c.source for c in nb.cells)))
        assert urls <= {REPO_URL}, f"GitHub addresses other than {REPO_URL}: {urls - {REPO_URL}}"
        installs = [
            line for c in nb.cells if c.cell_type == "code" for line in c.source.splitlines() if "pip install" in line
        ]
        assert installs == [f'    %pip install --quiet "{wanted}"'], f"installs outside extras.ensure: {installs}"

    def test_no_paths_into_the_repository(self, path: Path):
        nb = load(path)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            for pattern in FORBIDDEN_PATHS:
                assert not re.search(pattern, cell.source), f"cell {i} uses a repository path ({pattern})"

    def test_imports_transformerland_and_has_outputs(self, path: Path):
        nb = load(path)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert any("transformerland" in c.source and "import" in c.source for c in code[1:])
        assert any(c.get("outputs") for c in code), "outputs must be committed (execute the notebook in place)"

    def test_code_a_reader_sees_fits_the_page(self, path: Path):
        """No code line the site shows (folded ones included) is over 121 characters: wider ones are cut at the
        right edge of a 1280 px page. The browser test measures it on the built site; this catches it in seconds."""
        nb = load(path)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or {"remove-cell", "remove-input"} & set(tags(cell)):
                continue
            wide = [line for line in cell.source.splitlines() if len(line) > SITE_CODE_WIDTH]
            assert not wide, f"cell {i}: {len(wide)} line(s) over {SITE_CODE_WIDTH} characters; wrap {wide[0][:60]!r}"

    def test_figures_have_alt_text_and_stay_small(self, path: Path):
        nb = load(path)
        for i, cell in enumerate(nb.cells):
            for output in cell.get("outputs", []):
                png = output.get("data", {}).get("image/png")
                if png is None:
                    continue
                alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
                assert alt.strip(), f"cell {i} draws a figure without mystnb.image.alt metadata"
                assert len(base64.b64decode(png)) < 300_000, f"cell {i}: figure over 300 KB"

    def test_exercises_are_labelled_numbered_and_described(self, path: Path):
        text = markdown(load(path))
        found = EXERCISE.findall(text)
        assert text.count("```{exercise}") == len(found), "every exercise needs ':label: ex-<chapter>-<n>'"
        labels = [label for label, _ in found]
        n = chapter_number(path)
        assert labels == [f"ex-{n}-{k}" for k in range(1, len(labels) + 1)], f"labels must run ex-{n}-1, ex-{n}-2, …"
        for label, meta in found:
            assert META_LINE.match(meta.strip()), f"{label}: first body line must be the meta line, got {meta!r}"

    def test_dropdowns_are_admonitions(self, path: Path):
        """A folded block is ``{admonition}`` with ``:class: dropdown``: sphinx-design's ``{dropdown}`` renders on the
        site but stops the PDF, whose single-page build has no writer for it (tools/pdf.py)."""
        assert not re.search(r"(`{3,}|:{3,})\{dropdown\}", markdown(load(path))), (
            f"{path.name}: write a folded block as ```{{admonition}} Title with ':class: dropdown', not {{dropdown}}"
        )

    def test_every_solution_follows_its_exercise(self, path: Path):
        text = markdown(load(path))
        exercises = {m.group(1): m.start() for m in EXERCISE.finditer(text)}
        solved = set()
        for match in SOLUTION.finditer(text):
            label = match.group(2)
            assert label in exercises, f"a solution for {label}, which has no exercise in this notebook"
            assert match.start() > exercises[label], f"the solution of {label} comes before its exercise"
            solved.add(label)
        assert solved == set(exercises), f"exercises without a solution: {sorted(set(exercises) - solved)}"
        assert text.count("{solution-start}") == text.count("{solution-end}"), "unbalanced solution-start/end"

    def test_chapter_facts_are_complete_and_match_the_objectives(self, path: Path):
        """The metadata's facts follow the schema (tools/facts.py), and its outcomes are the objectives cell's."""
        found = facts(path)  # raises, naming the problem
        assert list(found.outcomes) == objectives(load(path)), (
            f"{path.name}: metadata transformerland.outcomes must be the objectives cell's items, word for word"
        )

    def test_outputs_are_saved_tidy(self, path: Path):
        """Saved as `make chapters` saves: no per-cell timing metadata, progress bars at their last state."""
        for i, cell in enumerate(load(path).cells):
            assert "execution" not in cell.metadata, f"cell {i} carries the kernel's timing metadata"
            for output in cell.get("outputs", []):
                assert "\r" not in output.get("text", ""), f"cell {i} saved a progress bar's every update"
