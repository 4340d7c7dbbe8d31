"""Time every chapter notebook against the book's budgets.

Each notebook is executed with nbclient in a fresh kernel whose working folder is empty,
as a student would run it. Prints seconds per chapter beside its budget (``budget_seconds`` in
the chapter's metadata, :mod:`tools.facts`), and the whole book against 4 minutes. A benchmark,
not a test: it always exits 0 unless a notebook fails to run.

    python -m benchmarks.run_chapters [book/02_sinusoidal.ipynb ...]    # from the repository's root
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.book import chapters, read
from tools.facts import facts
from tools.run_notebook import run_in_empty_folder

BOOK_BUDGET = 240.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to time (default: every chapter)")
    notebooks = parser.parse_args().notebooks or chapters()
    print(f"{'chapter':<28}{'seconds':>9}{'budget':>9}  verdict")
    total = 0.0
    for path in notebooks:
        notebook = read(path)
        budget = facts(path, notebook).budget_seconds
        seconds = run_in_empty_folder(notebook, timeout=600)
        total += seconds
        verdict = "ok" if seconds <= budget else "OVER BUDGET"
        print(f"{path.stem:<28}{seconds:>9.1f}{budget:>9.0f}  {verdict}", flush=True)
    verdict = "ok" if total <= BOOK_BUDGET else "OVER BUDGET"
    print(f"{'whole book':<28}{total:>9.1f}{BOOK_BUDGET:>9.0f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
