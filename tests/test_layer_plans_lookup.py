"""Chapter 9's lookup sweep, shipped as a data file: every point and its provenance, and one point re-run."""

from __future__ import annotations

import pytest
from transformerland.encodings.layer_plans import compared_plans
from transformerland.experiments.layer_plans_lookup import LOOKUP_SWEEP, load_lookup_sweep, lookup_sweep_accuracy

#: The point the slow test trains again: the pattern the chapter's argument turns on, on the first seed.
POINT = ("Llama 4: 3 local RoPE + 1 global NoPE", "0")


def test_the_sweep_has_every_point_and_its_provenance() -> None:
    sweep = load_lookup_sweep()
    assert sweep["setup"] == LOOKUP_SWEEP, "the library's recipe changed since the sweep ran: run the benchmark again"
    seeds = [str(seed) for seed in sweep["provenance"]["seeds"]]
    assert seeds == ["0", "1", "2"]
    assert list(sweep["accuracy"]) == list(compared_plans())
    assert list(sweep["accuracy_last"]) == LOOKUP_SWEEP["last"]
    for table in (sweep["accuracy"], sweep["accuracy_last"]):
        for by_seed in table.values():
            assert list(by_seed) == seeds
            for shares in by_seed.values():
                assert len(shares) == len(LOOKUP_SWEEP["eval_lengths"]) and all(0 <= x <= 1 for x in shares)
    provenance = sweep["provenance"]
    assert len(provenance["commit"].removesuffix("+dirty")) == 40 and provenance["date"] and provenance["machine"]


@pytest.mark.slow
def test_one_point_of_the_sweep_comes_out_the_same() -> None:
    """Train the point again with the library's recipe: the shares match the file's (same seed, same data)."""
    plan, seed = POINT
    recorded = load_lookup_sweep()["accuracy"][plan][seed]
    again = lookup_sweep_accuracy(plan, int(seed))
    assert all(abs(a - b) < 0.02 for a, b in zip(again, recorded, strict=True)), (again, recorded)
