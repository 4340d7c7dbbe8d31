"""The seed sweeps (``tests/test_claims_seeds.py``) run only with ``make test-seeds``; here each of their
experiments runs for two steps in the slow tier (``make test``: a model built and trained per scheme, seconds
each, too slow for ``make test-fast``), so that a change to the library cannot break them unseen. Chapters 5
and 8's seed tests read the sweeps' points: each point runs here with its first training cut to two steps, and
gives the numbers those tests read."""

from __future__ import annotations

import math

import pytest
from test_claims_seeds import point, sort_accuracy
from transformerland.experiments.recipe_sweep import SWEEP_PARTS, sweep_recipes
from transformerland.model import POSITION_SCHEMES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("scheme", POSITION_SCHEMES)
def test_chapter5_sweep_points_train_and_evaluate(scheme):
    markov = point("markov", scheme, 0, steps=2)
    losses = [*markov["losses"], *markov.get("far", []), *markov.get("more", [])]
    assert len(markov["losses"]) == 3 and all(math.isfinite(x) for x in losses), markov
    assert ("far" in markov) == (scheme != "learned") and ("more" in markov) == (scheme == "alibi")
    if scheme == "learned":
        assert {name: len(run["after"]) for name, run in markov["fine_tune"].items()} == {
            "extend + fine-tune": 2,
            "interpolate + fine-tune": 2,
        }
    lookup = point("lookup", scheme, 0, steps=2)
    assert len(lookup["shares"]) == 3 and all(0 <= a <= 1 for a in lookup["shares"]), lookup
    if scheme == "learned":
        read = ("full context", "sliding windows", "interpolated table", "windows, entry inside")
        assert all(0 <= lookup["remedies"][name] <= 1 for name in read), lookup


@pytest.mark.parametrize("part", SWEEP_PARTS)
def test_chapter8_sweep_points_train_and_evaluate(part):
    result = point("recipes", part, 0, steps=2)
    rows = [result["losses"]] if "losses" in result else [*result["zero_shot"].values(), *result["fine_tuned"].values()]
    assert all(len(row) == 3 and all(math.isfinite(x) for x in row) for row in rows), result
    if "zero_shot" in result:
        assert list(result["zero_shot"]) == list(sweep_recipes())


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal"])
def test_chapter3_sweep_models_train_and_evaluate(scheme):
    assert 0 <= sort_accuracy(scheme, 0, steps=2) <= 1
