"""What every sweep benchmark shares: its command line, and its points run side by side, one core each.

A sweep trains the book's tiny models at several points (a scheme, a plan or a part of an
experiment, and a seed) and writes one results file that a chapter reads. Each point is a
function of the library called with plain arguments; :func:`run_points` runs them ``jobs`` at a
time in separate processes, each with one CPU thread, and times each one (the seconds go into
the file's provenance, :func:`benchmarks.provenance.sweep_sitting`)::

    parser = sweep_parser(__doc__, RESULTS)
    args = parser.parse_args()
    for (scheme, seed), result, seconds in run_points(markov_point, points, args.jobs):
        ...
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch


def sweep_parser(doc: str | None, results: Path, what: str = "trainings") -> argparse.ArgumentParser:
    """The options every sweep takes: ``--seeds`` (default 0 1 2), ``--jobs`` (default 2), ``--out``."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2, help=f"{what} at once, one CPU core each")
    parser.add_argument("--out", type=Path, default=results, help=f"JSON file to write (default {results})")
    return parser


def _timed(fn: Callable[..., Any], point: tuple) -> tuple[Any, float]:
    """``fn(*point)`` with one CPU thread, and its seconds."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    result = fn(*point)
    return result, time.perf_counter() - start


def run_points(fn: Callable[..., Any], points: Sequence[tuple], jobs: int) -> Iterator[tuple[tuple, Any, float]]:
    """``(point, fn(*point), seconds)`` for each point, in the points' order, ``jobs`` processes at a time.

    ``fn`` must be importable by name (a module-level function), since it runs in other processes.
    """
    points = list(points)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for point, (result, seconds) in zip(points, pool.map(_timed, [fn] * len(points), points), strict=True):
            yield point, result, seconds
