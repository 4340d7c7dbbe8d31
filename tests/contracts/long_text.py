"""Contracts of the long-text experiment (transformerland.experiments.long_text), on a one-layer Llama of width 16."""

from __future__ import annotations

import math

import torch
from transformerland.experiments import long_text

from . import Fixed, Size, Tensor, contract
from .passkey import NOT_MODELS, tiny_llama

CONTRACTS = [
    contract(
        "transformerland.experiments.long_text.token_losses",
        model=Fixed(tiny_llama(), bad=NOT_MODELS),
        input_ids=Tensor(lambda: torch.arange(12)[None] % 128, kind="index", wrong_shapes=((12,), (2, 12), (1, 1))),
        chunk=Size(5),
        reference=lambda out, a: out.shape == (a["input_ids"].shape[1] - 1,) and bool((out >= 0).all()),
    ),
    contract(
        "transformerland.experiments.long_text.bucket_means",
        losses=Tensor(lambda: torch.rand(10, dtype=torch.float64), wrong_shapes=((2, 5), (0,))),
        width=Size(4),
        reference=lambda out, a: (
            len(out) == math.ceil(a["losses"].numel() / a["width"])
            and math.isclose(out[0], float(a["losses"][: a["width"]].mean()), rel_tol=1e-6)
        ),
    ),
    contract(
        "transformerland.experiments.long_text.load_long_text_losses",
        reference=lambda out, a: isinstance(out["measured"], bool) and set(out["losses"]) <= set(out["recipes"]),
    ),
]
assert long_text.__all__ == ["bucket_means", "load_long_text_losses", "token_losses"]
