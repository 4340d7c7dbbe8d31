"""Entries for chapter 5's sweep of the lookup and the remedies: one point of each kind, and the results."""

from __future__ import annotations

from transformerland.experiments import extrapolation_sweep
from transformerland.experiments.extrapolation_sweep import EXTRAPOLATION_SWEEP
from transformerland.model import POSITION_SCHEMES

from . import Choice, Count, Size, contract

MARKOV_SCHEMES = tuple(EXTRAPOLATION_SWEEP["markov_schemes"])
RACE_SCHEMES = tuple(EXTRAPOLATION_SWEEP["race"]["schemes"])

CONTRACTS = [
    contract(
        "transformerland.experiments.extrapolation_sweep.lookup_point",
        scheme=Choice("learned", POSITION_SCHEMES),
        seed=Count(0),
        steps=Size(2, optional=True),
        run_good=False,  # a point trains a model: only its bad values are tried here
    ),
    contract(
        "transformerland.experiments.extrapolation_sweep.markov_point",
        scheme=Choice("learned", MARKOV_SCHEMES),
        seed=Count(0),
        steps=Size(2, optional=True),
        run_good=False,
    ),
    contract(
        "transformerland.experiments.extrapolation_sweep.race_point",
        scheme=Choice("alibi", RACE_SCHEMES),
        seed=Count(0),
        run_good=False,
    ),
    contract(
        "transformerland.experiments.extrapolation_sweep.load_extrapolation_sweep",
        reference=lambda out, a: (
            list(out["lookup"]) == list(POSITION_SCHEMES)
            and list(out["markov"]) == list(MARKOV_SCHEMES)
            and list(out["race"]) == list(RACE_SCHEMES)
            and out["provenance"]["seeds"] == [0, 1, 2]
        ),
    ),
]
assert extrapolation_sweep.__all__ == [
    "EXTRAPOLATION_SWEEP",
    "load_extrapolation_sweep",
    "lookup_point",
    "markov_point",
    "race_point",
]
