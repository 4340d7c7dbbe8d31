"""Chapter 5's sweep of the lookup and the remedies, shipped as a data file: every point, and one re-run."""

from __future__ import annotations

import pytest
from transformerland.experiments.extrapolation_sweep import (
    EXTRAPOLATION_SWEEP,
    load_extrapolation_sweep,
    lookup_point,
)
from transformerland.model import POSITION_SCHEMES

#: The point the slow test trains again: the learned model on the lookup, whose remedies the chapter reads. (A
#: runner of the fair race would cost three times as much; it goes through the same training and scoring, and the
#: seed tests run every runner afresh.)
POINT = ("learned", "0")
LENGTHS = len(EXTRAPOLATION_SWEEP["eval_lengths"])


def test_the_sweep_has_every_point_and_its_provenance() -> None:
    sweep = load_extrapolation_sweep()
    assert sweep["setup"] == EXTRAPOLATION_SWEEP, "the library's recipe changed since the sweep ran: run it again"
    seeds = [str(seed) for seed in sweep["provenance"]["seeds"]]
    assert seeds == ["0", "1", "2"]
    assert list(sweep["lookup"]) == list(POSITION_SCHEMES)
    assert list(sweep["markov"]) == EXTRAPOLATION_SWEEP["markov_schemes"]
    assert list(sweep["race"]) == EXTRAPOLATION_SWEEP["race"]["schemes"]
    for kind in ("lookup", "markov", "race"):
        for by_seed in sweep[kind].values():
            assert list(by_seed) == seeds
    for scheme, by_seed in sweep["lookup"].items():
        for point in by_seed.values():
            assert len(point["shares"]) == LENGTHS and all(0 <= x <= 1 for x in point["shares"])
            assert ("remedies" in point) == (scheme == "learned")
    for point in sweep["lookup"]["learned"].values():
        assert all(0 <= x <= 1 for x in point["remedies"].values()) and len(point["remedies"]) == 6
    for scheme, by_seed in sweep["markov"].items():
        for point in by_seed.values():
            assert len(point["losses"]) == LENGTHS and all(x > 0 for x in point["losses"])
            assert ("fine_tune" in point) == (scheme == "learned") and ("more" in point) == (scheme == "alibi")
            assert ("far" in point) == (scheme != "learned")
    for by_seed in sweep["race"].values():
        for point in by_seed.values():
            assert list(point) == ["losses", "far"], list(point)
            assert len(point["losses"]) == LENGTHS and len(point["far"]) == len(EXTRAPOLATION_SWEEP["far"]["lengths"])
            assert all(x > 0 for x in point["losses"] + point["far"])
    for point in sweep["markov"]["learned"].values():
        for run in point["fine_tune"].values():
            assert len(run["losses"]) == EXTRAPOLATION_SWEEP["tune"]["steps"] and len(run["after"]) == 2
    provenance = sweep["provenance"]
    assert len(provenance["commit"].removesuffix("+dirty")) == 40 and provenance["date"] and provenance["machine"]


@pytest.mark.slow
def test_one_point_of_the_sweep_comes_out_the_same() -> None:
    """Train the point again with the library's recipe: the shares match the file's (same seed, same data)."""
    scheme, seed = POINT
    recorded = load_extrapolation_sweep()["lookup"][scheme][seed]
    again = lookup_point(scheme, int(seed))
    assert all(abs(a - b) < 0.02 for a, b in zip(again["shares"], recorded["shares"], strict=True)), (again, recorded)
    assert again["remedies"].keys() == recorded["remedies"].keys()
    assert all(abs(again["remedies"][k] - v) < 0.02 for k, v in recorded["remedies"].items()), (again, recorded)
