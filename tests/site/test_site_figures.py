"""Figures everyone can read, and a site that stays light.

Colour maps: every colour map named in a chapter's code or in the library must be one that readers
with the common forms of colour blindness can read: the library's own two (``transformerland.
plotting``), the perceptually uniform viridis family, greys, and ColorBrewer's colour-blind-safe
diverging maps. Weight: no figure over 300 KB, and the whole site under a modest cap; its size is
reported at the end of the run.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import nbformat
from site_helpers import NOTEBOOKS, ROOT
from transformerland.plotting import DIVERGING_CMAP, SEQUENTIAL_CMAP

SAFE_CMAPS = {
    SEQUENTIAL_CMAP,
    DIVERGING_CMAP,
    *("viridis", "cividis", "magma", "inferno", "plasma"),
    *("Greys", "gray", "binary"),
    *("PuOr", "BrBG"),
}
SAFE_CMAPS |= {f"{name}_r" for name in SAFE_CMAPS} | {name.removesuffix("_r") for name in SAFE_CMAPS}
#: The ways code names a colour map: cmap="jet", get_cmap("jet"), colormaps["jet"], plt.cm.jet,
#: rcParams["image.cmap"] = "jet".
CMAP_NAMED = re.compile(
    r"""cmap\s*=\s*["'](?P<a>[\w.]+)["']"""
    r"""|(?:get_cmap|set_cmap)\(\s*["'](?P<b>[\w.]+)["']"""
    r"""|colormaps\[\s*["'](?P<c>[\w.]+)["']\s*\]"""
    r"""|\bcm\.(?P<d>[A-Za-z]\w*)"""
    r"""|["']image\.cmap["']\s*[\]:]\s*=?\s*["'](?P<e>[\w.]+)["']"""
)
FIGURE_LIMIT_BYTES = 300_000
SITE_LIMIT_BYTES = 25_000_000
#: Image files: in _images/ these are the figures the chapters draw.
FIGURE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}


def colour_maps(code: str) -> set[str]:
    """The colour maps a piece of code names (names matplotlib knows as colour maps only)."""
    names = {name for match in CMAP_NAMED.finditer(code) for name in match.groupdict().values() if name}
    return {name for name in names if name in matplotlib.colormaps}


def sources() -> dict[str, str]:
    """The code of every chapter (cell by cell) and of every library module, by where it is."""
    code = {}
    for path in NOTEBOOKS:
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "code":
                code[f"{path.name}, cell {i}"] = cell.source
    for path in sorted((ROOT / "lib" / "transformerland").rglob("*.py")):
        code[str(path.relative_to(ROOT))] = path.read_text()
    return code


def test_the_library_palette_is_colour_blind_safe():
    assert {SEQUENTIAL_CMAP, DIVERGING_CMAP} <= SAFE_CMAPS


def test_the_scan_finds_every_way_of_naming_a_colour_map():
    code = """imshow(x, cmap="jet")
plt.get_cmap("hsv")
plt.cm.rainbow
colormaps["turbo"]
rc["image.cmap"] = "nipy_spectral"
"""
    assert colour_maps(code) == {"jet", "hsv", "rainbow", "turbo", "nipy_spectral"}
    assert colour_maps("cm.ScalarMappable(norm)\ncmap=SEQUENTIAL_CMAP") == set()


def test_every_colour_map_is_colour_blind_safe():
    unsafe = {where: sorted(colour_maps(code) - SAFE_CMAPS) for where, code in sources().items()}
    unsafe = {where: names for where, names in unsafe.items() if names}
    assert not unsafe, f"colour maps not every reader can read (use {SEQUENTIAL_CMAP} or {DIVERGING_CMAP}): {unsafe}"


def test_no_figure_over_300_kb(site: Path):
    figures = [path for path in (site / "_images").rglob("*") if path.suffix.lower() in FIGURE_SUFFIXES]
    assert figures or not NOTEBOOKS, "the site has chapters but no figures in _images/"
    sizes = {str(path.relative_to(site)): path.stat().st_size for path in figures}
    heavy = {name: size for name, size in sizes.items() if size > FIGURE_LIMIT_BYTES}
    assert not heavy, f"figures over {FIGURE_LIMIT_BYTES // 1000} KB: {heavy}"


def test_the_site_stays_small(site: Path, report: list[str]):
    files = [path for path in site.rglob("*") if path.is_file()]
    total = sum(path.stat().st_size for path in files)
    figures = [path.stat().st_size for path in (site / "_images").rglob("*") if path.is_file()]
    report.append(
        f"site: {total / 1e6:.1f} MB in {len(files)} files; {len(figures)} figures, {sum(figures) / 1e6:.2f} MB,"
        f" the largest {max(figures, default=0) / 1e3:.0f} KB"
    )
    assert total < SITE_LIMIT_BYTES, f"the site weighs {total / 1e6:.1f} MB, over {SITE_LIMIT_BYTES / 1e6:.0f} MB"
