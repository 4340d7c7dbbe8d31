"""Chapter 5's lookup and remedies over seeds: the trainings the chapter reads rather than runs.

For each seed, trains chapter 5's five decoders on the lookup task (one point is
:func:`transformerland.experiments.extrapolation_sweep.lookup_point`; the learned one also tries the sliding windows
and the interpolated table), and the same five decoders on the Markov source
(:func:`~transformerland.experiments.extrapolation_sweep.markov_point`: the learned one then fine-tuned from its
table extended or interpolated, ALiBi trained 120 steps more, the others scored at 256 and 512 tokens), and the fair
race (:func:`~transformerland.experiments.extrapolation_sweep.race_point`: ALiBi and rotary on the Markov source, each
trained 720 steps instead of 240). The chapter
cannot afford these trainings in its 45 s, so it reads the results from the file this script writes (by default the
library's ``data/extrapolation_sweep.json``), with their provenance: the code's commit (and whether the work tree
had changes), the date, the machine, the versions, the command and the seconds.
``tests/test_extrapolation_sweep.py`` re-runs one point and compares it with the file.

Each point takes about 10 to 25 s of one idle CPU core (a runner of the race about three times that); the points
run ``--jobs`` at a time, one core each.

    python -m benchmarks.extrapolation_sweep                          # seeds 0-2, every point
    python -m benchmarks.extrapolation_sweep --seeds 0 --out /tmp/one.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from transformerland.experiments.extrapolation_sweep import (
    EXTRAPOLATION_SWEEP,
    lookup_point,
    markov_point,
    race_point,
)
from transformerland.model import POSITION_SCHEMES

from benchmarks.provenance import sweep_sitting
from benchmarks.sweep import run_points, sweep_parser

RESULTS = Path(__file__).parents[1] / "lib" / "transformerland" / "data" / "extrapolation_sweep.json"
POINTS = {"lookup": lookup_point, "markov": markov_point, "race": race_point}


def _point(kind: str, scheme: str, seed: int) -> dict[str, Any]:
    return POINTS[kind](scheme, seed)


def main() -> int:
    args = sweep_parser(__doc__, RESULTS).parse_args()
    start = time.perf_counter()
    schemes = {
        "lookup": list(POSITION_SCHEMES),
        "markov": EXTRAPOLATION_SWEEP["markov_schemes"],
        "race": EXTRAPOLATION_SWEEP["race"]["schemes"],
    }
    results: dict[str, dict[str, dict[str, Any]]] = {kind: {s: {} for s in schemes[kind]} for kind in POINTS}
    # the longest points first (the race's 720 steps, then the learned model's fine-tunes), so that the two
    # cores finish together
    points = [("race", s, seed) for seed in args.seeds for s in schemes["race"]]
    points += [("markov", s, seed) for seed in args.seeds for s in schemes["markov"]]
    points += [("lookup", s, seed) for seed in args.seeds for s in schemes["lookup"]]
    seconds = []
    for (kind, scheme, seed), result, took in run_points(_point, points, args.jobs):
        results[kind][scheme][str(seed)] = result
        seconds.append(took)
        head = result["shares"] if kind == "lookup" else result["losses"]
        print(f"{kind:7s} {scheme:11s} seed {seed}: " + " ".join(f"{v:.3f}" for v in head) + f"  ({took:.0f} s)")
    for kind in POINTS:  # seeds in order, whatever order the points finished in
        for scheme, by_seed in results[kind].items():
            results[kind][scheme] = {str(seed): by_seed[str(seed)] for seed in args.seeds}
    sweep = {
        "setup": EXTRAPOLATION_SWEEP,
        **results,
        "provenance": sweep_sitting("benchmarks.extrapolation_sweep", args.seeds, args.jobs, seconds, start),
    }
    args.out.write_text(json.dumps(sweep, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
