"""The sweep benchmarks' shared runner: points in their order, each timed, in other processes."""

from __future__ import annotations

import operator

from benchmarks.sweep import run_points, sweep_parser


def test_points_come_back_in_their_order_with_their_seconds():
    points = [(2, 3), (5, 7), (11, 13)]
    out = list(run_points(operator.mul, points, jobs=2))
    assert [(point, result) for point, result, _ in out] == [((2, 3), 6), ((5, 7), 35), ((11, 13), 143)]
    assert all(seconds >= 0 for _, _, seconds in out)


def test_every_sweep_takes_seeds_jobs_and_out(tmp_path):
    args = sweep_parser("doc", tmp_path / "r.json").parse_args(["--seeds", "1", "2", "--jobs", "1"])
    assert (args.seeds, args.jobs, args.out) == ([1, 2], 1, tmp_path / "r.json")
    assert sweep_parser("doc", tmp_path / "r.json").parse_args([]).seeds == [0, 1, 2]
