"""Time the sandboxed grader: seconds per submission, beside the chapter's own run time.

For each chapter given (default: chapter 1), the chapter notebook itself is the sample submission (every
exercise answered): it is run once as a student would run it (:func:`tools.run_notebook.run_in_empty_folder`)
and graded ``--copies`` times in sandboxes (:mod:`tools.grade_submissions`, one at a time). The grader's
overhead is its seconds per submission minus the chapter's own; the aim is at most 5 s. A benchmark, not a
test: it exits 0 unless the grader gives an honest submission anything but PASSED.

    python -m benchmarks.grading [book/02_sinusoidal.ipynb ...] [--copies 3]    # from the repository's root
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from tools.book import ROOT, chapter_number, read
from tools.grade_submissions import grade_folder, instructor_chapters
from tools.run_notebook import run_in_empty_folder

AIM_SECONDS = 5.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to grade (default: chapter 1)")
    parser.add_argument("--copies", type=int, default=3, help="submissions graded per chapter (default: 3)")
    args = parser.parse_args()
    notebooks = args.notebooks or [ROOT / "book" / "01_why_order_matters.ipynb"]
    chapters = instructor_chapters(ROOT, "transformerland.exercises")
    print(f"{'chapter':<28}{'own run':>9}{'graded':>9}{'overhead':>10}  verdict")
    status = 0
    for path in notebooks:
        own = run_in_empty_folder(read(path), timeout=600)
        forced = next(c for c in chapters if c.number == chapter_number(path))
        with tempfile.TemporaryDirectory(prefix="grading-bench-") as folder:
            for copy in range(args.copies):
                (Path(folder) / f"student{copy}").mkdir()
                shutil.copy(path, Path(folder) / f"student{copy}" / path.name)
            start = time.perf_counter()
            rows = grade_folder(Path(folder), Path(folder) / "grades.csv", chapters, seed=1, forced=forced)
            per_submission = (time.perf_counter() - start) / args.copies
        if any(row["verdict"] != "PASSED" for row in rows):
            status = 1
            print(f"{path.stem}: an honest submission was not PASSED: {[r for r in rows if r['verdict'] != 'PASSED']}")
        overhead = per_submission - own
        verdict = "ok" if overhead <= AIM_SECONDS else "SLOW"
        print(f"{path.stem:<28}{own:>9.1f}{per_submission:>9.1f}{overhead:>10.1f}  {verdict}", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
