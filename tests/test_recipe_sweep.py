"""Chapter 8's recipe sweep, shipped as a data file: every point and its provenance, and one point re-run."""

from __future__ import annotations

import pytest
from transformerland.experiments.recipe_sweep import (
    RECIPE_SWEEP,
    SWEEP_PARTS,
    load_recipe_sweep,
    recipe_sweep_point,
    sweep_recipes,
)

#: The point the slow test trains again: the one with the chapter's fine-tuning comparison, on the first seed.
POINT = ("markov", "0")


def test_the_sweep_has_every_point_and_its_provenance() -> None:
    sweep = load_recipe_sweep()
    assert sweep["setup"] == RECIPE_SWEEP, "the library's recipe changed since the sweep ran: run the benchmark again"
    assert sweep["recipes"] == sweep_recipes()
    seeds = [str(seed) for seed in sweep["provenance"]["seeds"]]
    assert seeds == ["0", "1", "2"] and list(sweep["results"]) == list(SWEEP_PARTS)
    lengths = len(RECIPE_SWEEP["eval_lengths"])
    for part, by_seed in sweep["results"].items():
        assert list(by_seed) == seeds, part
        for result in by_seed.values():
            if part in ("markov", "lookup"):
                assert list(result["zero_shot"]) == list(sweep_recipes())
                tuned = RECIPE_SWEEP["lookup_tuned"] if part == "lookup" else list(sweep_recipes())[:-1]
                assert list(result["fine_tuned"]) == tuned
                rows = [*result["zero_shot"].values(), *result["fine_tuned"].values()]
            else:
                rows = [result["losses"]]
            assert all(len(row) == lengths for row in rows)
            high = 1 if part == "lookup" else 3  # shares right; losses in nats (8 symbols: ln 8 = 2.08)
            assert all(0 <= x <= high for row in rows for x in row), (part, rows)
    provenance = sweep["provenance"]
    assert len(provenance["commit"].removesuffix("+dirty")) == 40 and provenance["date"] and provenance["machine"]


def test_a_point_names_its_part() -> None:
    with pytest.raises(ValueError, match="part"):
        recipe_sweep_point("gpt", 0, steps=1)


@pytest.mark.slow
def test_one_point_of_the_sweep_comes_out_the_same() -> None:
    """Train the point again with the library's recipe: every loss matches the file's (same seed, same data)."""
    part, seed = POINT
    recorded = load_recipe_sweep()["results"][part][seed]
    again = recipe_sweep_point(part, int(seed))
    for kind in ("zero_shot", "fine_tuned"):
        for name, losses in recorded[kind].items():
            assert all(abs(a - b) < 0.02 for a, b in zip(again[kind][name], losses, strict=True)), (kind, name)
