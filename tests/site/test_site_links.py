"""No broken internal link or anchor anywhere in the built site.

A crawl of every HTML file: each ``href``/``src`` that stays inside the site must name a file
that exists and, when it has a ``#fragment``, an element with that id (or name) in that file.
Sphinx checks its own cross-references; this also covers raw HTML, theme links, images,
scripts, stylesheets and the download links to ``_sources``.
"""

from __future__ import annotations

import functools
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from site_helpers import PAGES

#: Attributes that point at another resource, per tag.
LINK_ATTRIBUTES = {"a": "href", "link": "href", "area": "href", "img": "src", "script": "src", "source": "src"}


class _Page(HTMLParser):
    """The ids and the outgoing links of one HTML file."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if values.get(key):
                self.ids.add(values[key])
        target = values.get(LINK_ATTRIBUTES.get(tag, ""))
        if target:
            self.links.append(target)


@functools.cache
def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def pages(site: Path) -> list[Path]:
    """The site's HTML pages; not the theme's template fragments that Sphinx copies into ``_static``."""
    return sorted(path for path in site.rglob("*.html") if not path.relative_to(site).parts[0].startswith("_"))


def broken_links(site: Path) -> list[str]:
    """Every internal link of the site's pages that leads nowhere, as ``page -> link: why``, in file order."""
    found = []
    for source in pages(site):
        for link in parse(source).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:  # outside the site (http:, mailto:, data:, //host/...)
                continue
            target = (source.parent / unquote(parts.path)).resolve() if parts.path else source
            if target.is_dir():
                target = target / "index.html"
            where = f"{source.relative_to(site)} -> {link}"
            if not target.is_relative_to(site.resolve()):
                found.append(f"{where}: leaves the site")
            elif not target.is_file():
                found.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parse(target).ids:
                found.append(f"{where}: no element with id {unquote(parts.fragment)!r} in {target.relative_to(site)}")
    return found


def test_no_broken_internal_link_or_anchor(site: Path):
    broken = broken_links(site)
    assert not broken, f"broken internal link: {broken[0]}" + (f" (and {len(broken) - 1} more)" if broken[1:] else "")


def test_the_crawl_reaches_every_page(site: Path):
    """Guard the guard: links found by the crawl lead to every page of the table of contents."""
    targets = {
        (source.parent / urlsplit(link).path).resolve()
        for source in pages(site)
        for link in parse(source).links
        if not urlsplit(link).scheme
    }
    unreached = [page for page in PAGES if (site / f"{page}.html").resolve() not in targets]
    assert not unreached, f"no link of the site leads to {unreached}"
