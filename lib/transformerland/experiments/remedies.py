"""Remedies for inputs longer than a model's training length (chapter 5, "The edge of the map").

A model trained on sequences of ``L`` tokens meets a longer input. Each remedy is one small
function:

* cut the input down to what fits: :func:`truncate`;
* read it in overlapping pieces that fit: :func:`window_spans` and :func:`sliding_window_logits` (how far
  back each of its predictions sees: :func:`window_reach`);
* stretch a learned position table over the longer range, so that every new position falls
  between two trained rows: :func:`interpolate_table` (the position-interpolation idea of
  Chen et al., 2023, applied to a table of rows);
* give the table more rows and train them on longer sequences: :func:`extend_table`, then
  :func:`fine_tune`.

:func:`with_position_table` puts a new table into a copy of a model. :func:`position_losses`
and :func:`prefix_losses` measure the damage and the repair, position by position.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from .._validation import (
    MAX_SIZE,
    require_choice,
    require_elements,
    require_float_tensor,
    require_index_tensor,
    require_int,
    require_positive_float,
    require_positive_int,
    require_tensor,
)
from ..encodings.learned import LearnedPositionalEmbedding
from ..tasks import Batch, Task
from ..training import TrainResult, _require_logits, train

__all__ = [
    "extend_table",
    "fine_tune",
    "interpolate_table",
    "position_losses",
    "prefix_losses",
    "sliding_window_logits",
    "truncate",
    "window_reach",
    "window_spans",
    "with_position_table",
]


def truncate(tokens: torch.Tensor, max_len: int, *, keep: str = "first") -> torch.Tensor:
    """Cut a sequence (or a batch of them) to at most ``max_len`` tokens.

    Args:
        tokens: ``(T,)`` or ``(B, T)`` token ids.
        max_len: the longest input the model accepts.
        keep: ``"first"`` keeps tokens ``0 … max_len - 1`` (what BERT-style pipelines do to a long
            document); ``"last"`` keeps the final ``max_len`` (what a language model continuing a
            text keeps: the most recent context).

    Returns:
        ``(min(T, max_len),)`` or ``(B, min(T, max_len))``: a view of ``tokens``. Everything else is lost.
    """
    require_tensor(tokens, "tokens", ndim=(1, 2))
    max_len = require_positive_int(max_len, "max_len")
    keep = require_choice(keep, "keep", ("first", "last"))
    return tokens[..., :max_len] if keep == "first" else tokens[..., -max_len:]


def window_spans(length: int, window: int, stride: int | None = None) -> list[tuple[int, int]]:
    """Windows ``(start, end)`` of at most ``window`` positions that together cover ``0 … length - 1``.

    The first window is ``(0, window)``; each next one ends ``stride`` positions later (the last
    one ends at ``length``) and starts ``window`` positions before its end. Consecutive windows
    therefore share ``window - stride`` positions (the last may share more). An input that fits
    gets the single window ``(0, length)``.

    Args:
        length: number of positions to cover.
        window: the longest piece the model accepts.
        stride: how far each window moves on; ``1 … window``, default ``window // 2``
            (``stride = window`` gives non-overlapping chunks).

    ``length`` is at most :data:`~transformerland._validation.MAX_SIZE`, and so is the number of
    windows (about ``length / stride``): both are checked before the list is made.
    """
    length = require_positive_int(length, "length")
    window = require_positive_int(window, "window")
    stride = max(1, window // 2) if stride is None else require_positive_int(stride, "stride")
    if stride > window:
        raise ValueError(
            f"stride must be at most the window ({window}), got {stride}: a larger stride would skip positions."
        )
    if (length - window) // stride > MAX_SIZE // 16:
        raise ValueError(
            f"{length:,} positions with stride {stride} make about {(length - window) // stride:,} windows, more "
            f"than this library lists ({MAX_SIZE // 16:,}): pass a larger stride."
        )
    if length <= window:
        return [(0, length)]
    spans, end = [], window
    while True:
        spans.append((end - window, end))
        if end == length:
            return spans
        end = min(end + stride, length)


@torch.no_grad()
def sliding_window_logits(
    model: nn.Module, tokens: torch.Tensor, window: int, stride: int | None = None
) -> torch.Tensor:
    """Next-token logits for a long input, read by a causal model through windows of ``window`` tokens.

    The input is cut into the windows of :func:`window_spans`. Each window is a fresh input
    (positions counted from 0 again), and the model's predictions are kept only for the
    positions that no earlier window predicted. A prediction past the first window therefore
    sees between ``window - stride + 1`` and ``window`` tokens (itself included); tokens further
    back are lost to it.

    Args:
        model: a causal model mapping ``(B, t)`` ids to ``(B, t, V)`` logits for any ``t <= window``.
        tokens: ``(B, T)`` token ids, any ``T``.
        window: the longest input to give the model (its training length, say).
        stride: how far the window moves on (default ``window // 2``); cost: about ``T / stride``
            forward passes of ``window`` tokens.

    Returns:
        ``(B, T, V)`` logits; position ``t`` predicts token ``t + 1``, as for the full input.
    """
    require_index_tensor(tokens, "tokens", ndim=2)
    if not callable(model):
        raise TypeError(f"model must be a model mapping (B, t) ids to (B, t, V) logits, got {type(model).__name__}.")
    if not getattr(model, "causal", True):
        raise ValueError(
            "sliding_window_logits needs a causal model (each prediction may use only the tokens before it); "
            "for an encoder, split the input with window_spans and combine the windows' outputs yourself."
        )
    pieces, done = [], 0
    for start, end in window_spans(tokens.shape[1], window, stride):
        logits = model(tokens[:, start:end])  # (B, end - start, V)
        pieces.append(logits[:, done - start :])
        done = end
    return torch.cat(pieces, dim=1)


def window_reach(length: int, window: int, stride: int | None = None) -> torch.Tensor:
    """How far back each prediction of :func:`sliding_window_logits` can see: ``(length,)`` ``torch.long``.

    Entry ``t`` is ``t - start``, where ``start`` is the first position of the window that predicts
    position ``t``: the token ``d`` positions before ``t`` is in that window when ``d <= reach[t]``.
    Arguments as in :func:`window_spans`.
    """
    reach, done = torch.empty(require_positive_int(length, "length"), dtype=torch.long), 0
    for start, end in window_spans(length, window, stride):
        reach[done:end] = torch.arange(done, end) - start
        done = end
    return reach


def interpolate_table(table: torch.Tensor, new_len: int) -> torch.Tensor:
    """Stretch (or squeeze) a learned position table to ``new_len`` rows by linear interpolation.

    New row ``j`` stands at old position ``x_j = j · (L - 1) / (new_len - 1)``: the first and the
    last rows are kept, and every row between is the blend
    ``(1 - w) · table[⌊x_j⌋] + w · table[⌊x_j⌋ + 1]`` with ``w = x_j - ⌊x_j⌋``. No new position
    falls outside the trained range, which is the point of position interpolation; the price
    is that neighbouring positions are now less than one old position apart.

    Args:
        table: ``(L, D)`` trained rows.
        new_len: rows wanted, ``N``.

    Returns:
        ``(N, D)``, same dtype and device as ``table`` (``N = L`` returns a copy of it). A one-row
        table has nothing to blend: every new row is a copy of it. ``N = 1`` keeps the first row.
        ``table`` must be floating (an integer table is refused, not rounded).
    """
    require_float_tensor(table, "table", ndim=2)
    new_len = require_positive_int(new_len, "new_len")
    old_len = table.shape[0]
    if old_len == 0:
        raise ValueError("table has no rows to interpolate between: pass a table with at least one row.")
    require_elements(new_len * table.shape[1], "the interpolated table")
    where = torch.linspace(0, old_len - 1, new_len, dtype=torch.float64, device=table.device)  # (N,)
    below = where.floor().long().clamp(max=old_len - 1)
    above = (below + 1).clamp(max=old_len - 1)
    weight = (where - below).to(table.dtype)[:, None]  # (N, 1)
    return (1 - weight) * table[below] + weight * table[above]


def extend_table(table: torch.Tensor, new_len: int, *, init_std: float = 0.02, seed: int = 0) -> torch.Tensor:
    """Keep every row of ``table`` and append fresh rows up to ``new_len``, drawn from ``N(0, init_std²)``.

    The new rows start as a new ``LearnedPositionalEmbedding`` would (std 0.02, as in BERT):
    they exist, so a longer input no longer raises, but they say nothing until trained.

    Args:
        table: ``(L, D)`` trained rows.
        new_len: rows wanted, ``N >= L``.
        init_std: standard deviation of the new rows.
        seed: seed of the new rows (the global random state is not touched).

    Returns:
        ``(N, D)``, same dtype and device as ``table``.
    """
    require_float_tensor(table, "table", ndim=2)
    new_len = require_positive_int(new_len, "new_len")
    init_std = require_positive_float(init_std, "init_std")
    seed = require_int(seed, "seed", low=0)
    # the new rows are drawn in float64 first (so that a seed gives the same rows in every dtype): twice the numbers
    require_elements(
        new_len * table.shape[1] + 2 * max(new_len - table.shape[0], 0) * table.shape[1], "the extended table"
    )
    if new_len < table.shape[0]:
        raise ValueError(
            f"new_len must be at least the table's {table.shape[0]} rows, got {new_len}; "
            "to keep fewer rows, slice the table instead."
        )
    generator = torch.Generator().manual_seed(seed)
    fresh = torch.randn(new_len - table.shape[0], table.shape[1], generator=generator, dtype=torch.float64)
    return torch.cat([table, (init_std * fresh).to(device=table.device, dtype=table.dtype)])


def with_position_table(model: nn.Module, table: torch.Tensor) -> nn.Module:
    """A copy of ``model`` whose learned position table is ``table``; the original is left unchanged.

    Args:
        model: a model with learned positions in ``model.positions`` (a ``TinyTransformer`` built
            with ``position="learned"``).
        table: ``(N, D)`` rows; the copy then accepts inputs of up to ``N`` tokens.

    Returns:
        The copy, on the model's device, in the model's training or evaluation mode.
    """
    positions = getattr(model, "positions", None)
    if not isinstance(positions, LearnedPositionalEmbedding):
        raise TypeError(
            f"model must have a learned position table in model.positions, got {type(positions).__name__}; "
            'build it with TinyTransformer(TransformerConfig(..., position="learned")).'
        )
    new_positions = positions.with_table(table)
    new_model = copy.deepcopy(model)
    new_model.positions = new_positions
    return new_model


def fine_tune(
    model: nn.Module,
    task: Task,
    *,
    steps: int,
    length: int | tuple[int, int],
    lr: float = 1e-3,
    warmup: int = 10,
    **train_options: Any,
) -> tuple[nn.Module, TrainResult]:
    """Train a copy of ``model`` for ``steps`` more steps on sequences of ``length`` tokens.

    A short run whose defaults (``lr=1e-3``, 10 warm-up steps) are a smaller learning rate and a
    shorter warm-up than the book trains with from scratch (``lr=3e-3``), so that what the model
    already knows is adjusted rather than overwritten. Chapters 5 and 8 pass the from-scratch rate,
    ``lr=3e-3``, for their fine-tunes of 20 to 60 steps, and say so. Each step's loss is
    measured on a fresh batch before the update, so ``result.losses`` is also an honest curve
    of the loss at ``length`` against the number of fine-tuning steps.

    Args:
        model: the trained model (left unchanged).
        task, steps, length, lr, warmup, train_options: as for :func:`transformerland.training.train`.

    Returns:
        ``(the fine-tuned copy, its TrainResult)``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module (a trained TinyTransformer), got {type(model).__name__}.")
    tuned = copy.deepcopy(model)
    result = train(tuned, task, steps=steps, length=length, lr=lr, warmup=warmup, **train_options)
    return tuned, result


def position_losses(logits: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Mean cross-entropy at each position over the scored targets of ``batch``.

    Args:
        logits: ``(B, T, V)`` predictions for ``batch.inputs``.
        batch: the batch, with ``(B, T)`` targets and mask.

    Returns:
        ``(T,)`` float tensor on the CPU; NaN at positions where no target is scored.
    """
    _require_logits(logits, batch)
    mask = batch.mask.to(logits.device)
    each = nn.functional.cross_entropy(
        logits.detach().float().transpose(1, 2), batch.targets.to(logits.device), reduction="none"
    )  # (B, T)
    total = (each * mask).sum(0)
    count = mask.sum(0)
    return (total / count).cpu()  # 0 / 0 = NaN where nothing is scored


def prefix_losses(per_position: torch.Tensor) -> torch.Tensor:
    """Loss of the first ``t`` positions, for every ``t``: the loss a causal model gets on inputs of length ``t``.

    A causal model's prediction at position ``p`` sees only tokens ``0 … p``, so on the first ``t``
    positions of a long sequence it makes exactly the predictions it would make on those ``t``
    tokens alone. The loss at evaluation length ``t`` is then the mean of the per-position
    losses up to ``t`` (positions scored equally often; NaN positions are skipped).

    Args:
        per_position: ``(T,)`` from :func:`position_losses`.

    Returns:
        ``(T,)``: entry ``t - 1`` is the loss at evaluation length ``t`` (NaN until a position is scored).
    """
    require_float_tensor(per_position, "per_position", ndim=1)
    scored = ~per_position.isnan()
    total = torch.where(scored, per_position, torch.zeros_like(per_position)).cumsum(0)
    return total / scored.cumsum(0)
