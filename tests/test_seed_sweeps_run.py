"""The seed sweeps (``tests/test_claims_seeds.py``) run only with ``make test-seeds``; here each of their
experiments runs for two steps in the slow tier (``make test``: a model built and trained per scheme, seconds
each, too slow for ``make test-fast``), so that a change to the library cannot break them unseen."""

from __future__ import annotations

import pytest
import torch
from test_claims_seeds import lookup_accuracy, markov_loss, markov_model, sort_accuracy
from transformerland.model import POSITION_SCHEMES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("scheme", POSITION_SCHEMES)
def test_chapter5_sweep_models_train_and_evaluate(scheme):
    loss = markov_loss(markov_model(scheme, 0, steps=2), 32)
    assert torch.isfinite(torch.tensor(loss))


@pytest.mark.parametrize("scheme", ["learned", "sinusoidal"])
def test_chapter3_sweep_models_train_and_evaluate(scheme):
    assert 0 <= sort_accuracy(scheme, 0, steps=2) <= 1


@pytest.mark.parametrize("scheme", POSITION_SCHEMES)
def test_chapter5_lookup_sweep_models_train_and_evaluate(scheme):
    assert all(0 <= a <= 1 for a in lookup_accuracy(scheme, 0, steps=2))
