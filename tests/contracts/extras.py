"""Contract entries for what a chapter's set-up cell calls: transformerland.extras."""

from __future__ import annotations

from transformerland import extras

from . import Choice, contract

EXTRAS = ("bert", "llm")

CONTRACTS = [
    contract(
        "transformerland.environment.extras.release", reference=lambda out, a: isinstance(out, str) and out[0].isdigit()
    ),
    contract(
        "transformerland.environment.extras.floors",
        extra=Choice("llm", EXTRAS),
        call=lambda extra: extras.floors(extra),
        reference=lambda out, a: isinstance(out, dict) and "torch" in out,
    ),
    contract(
        "transformerland.environment.extras.needed",
        extra=Choice("bert", EXTRAS),
        call=lambda extra: extras.needed(extra),
        reference=lambda out, a: isinstance(out, list),
    ),
    # The good call would install what is missing: only its refusals are tried here (tests/test_extras.py runs it).
    contract(
        "transformerland.environment.extras.ensure",
        extra=Choice("bert", EXTRAS),
        call=lambda extra: extras.ensure(extra),
        run_good=False,
    ),
]
