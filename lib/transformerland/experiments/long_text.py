"""Loss against position on one long text: does a model still predict well past its training length?

The long-context papers report, beside the passkey test, the perplexity of a long document read
in one piece. A model that has stopped reading its distant context, or that meets angles it never
saw, shows it as a loss that climbs with the position of the token it predicts.

:func:`token_losses` gives the loss of every prediction of one long input without ever holding
its ``(T, vocab)`` logits at once (for SmolLM2 at 16,384 tokens they would take 3 GB);
:func:`bucket_means` averages them over runs of positions. ``benchmarks/long_text_perplexity.py``
measures them for plain RoPE and every recipe on a public-domain text and ships the results with
the library (:func:`load_long_text_losses`), as chapter 8 reads them.
"""

from __future__ import annotations

import importlib.resources
import json
from typing import Any

import torch
from torch import nn

from .._validation import require_float_tensor, require_index_tensor, require_positive_int

__all__ = ["bucket_means", "load_long_text_losses", "token_losses"]


@torch.no_grad()
def token_losses(model: nn.Module, input_ids: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
    """The next-token loss (nats) of each prediction of one input: ``(T - 1,)`` float64 on the CPU.

    Entry ``p`` is the loss of predicting token ``p + 1`` from tokens ``0 … p``. The model is a
    transformers causal language model with ``.model`` (the decoder) and ``.lm_head``; the logits are
    computed ``chunk`` positions at a time.
    """
    if not isinstance(model, nn.Module) or not hasattr(model, "model") or not hasattr(model, "lm_head"):
        raise TypeError(
            "model must be a transformers causal language model with .model and .lm_head, such as "
            f"load_smollm2()'s, got {type(model).__name__}."
        )
    require_index_tensor(input_ids, "input_ids", ndim=2, what="token ids")
    if input_ids.shape[0] != 1 or input_ids.shape[1] < 2:
        raise ValueError(
            f"input_ids must be one text of at least 2 tokens, shape (1, T), got {tuple(input_ids.shape)}."
        )
    chunk = require_positive_int(chunk, "chunk")
    hidden = model.model(input_ids).last_hidden_state[0, :-1]  # (T - 1, D): the states that predict
    targets = input_ids[0, 1:]
    losses = [
        nn.functional.cross_entropy(
            model.lm_head(hidden[start : start + chunk]).float(), targets[start : start + chunk], reduction="none"
        )
        for start in range(0, hidden.shape[0], chunk)
    ]
    return torch.cat(losses).double().cpu()


def bucket_means(losses: torch.Tensor, width: int) -> list[float]:
    """Mean of ``losses`` ``(N,)`` over runs of ``width`` positions: ``[mean(0 … width−1), …]``.

    Returns one float per run; a short last run counts.
    """
    losses = require_float_tensor(losses, "losses", ndim=1)
    if losses.numel() == 0:
        raise ValueError("losses must hold at least one loss, such as token_losses() returns.")
    width = require_positive_int(width, "width")
    return [float(losses[start : start + width].mean()) for start in range(0, losses.numel(), width)]


def load_long_text_losses() -> dict[str, Any]:
    """The losses along a long public-domain text measured by ``benchmarks/long_text_perplexity.py``.

    A dict with ``"text"`` (what was read and where it comes from), ``"tokens"`` (the window's length),
    ``"bucket"`` (positions per mean), ``"recipes"`` (each recipe's ``scaling``), ``"losses"``
    (``recipe → [mean loss of each bucket of predicting positions]``), ``"runs"`` (provenance of
    each sitting: date, commit, command, device, versions, seconds) and ``"measured"`` (``False``
    while no sitting has filled ``"losses"``).
    """
    text = importlib.resources.files("transformerland").joinpath("data/long_text_losses.json").read_text()
    return json.loads(text)
