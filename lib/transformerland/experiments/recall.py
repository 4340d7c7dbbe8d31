"""Associative recall: tasks whose answers lie far back in the context.

In :class:`LookupTask` a sequence first writes a *table*, one token per entry, each entry a key
with its value, and then *asks*: a key, and the model must answer the value written beside it.
The entry may stand anywhere earlier in the sequence, so a model answers only by reaching it, at
whatever distance. It is associative recall (Arora et al., 2023, study its multi-query form) with
each stored pair in one token, so that one attention step that matches the key can answer.
Unlike a Markov source, where the last few tokens are all a model needs, here a window that misses
the entry cannot do better than guessing.

For a sequence of ``length`` model inputs (``length + 1`` tokens)::

    e₁ e₂ … e_P │ q₁ a₁ q₂ a₂ …      P = length // 2 entries eᵢ = (kᵢ, vᵢ), distinct keys
                  qⱼ a key of the table, aⱼ its value; only the aⱼ are scored
"""

from __future__ import annotations

import math

import torch

from .._validation import require_positive_int
from ..tasks import Batch, _sample_sizes

__all__ = ["LookupTask"]


def _checked_sizes(n_keys: int, n_values: int) -> tuple[int, int]:
    """``(n_keys, n_values)``, validated: positive, and at least two values to tell apart."""
    n_keys, n_values = require_positive_int(n_keys, "n_keys"), require_positive_int(n_values, "n_values")
    if n_values < 2:
        raise ValueError(f"n_values must be at least 2 for a value to be worth recalling, got {n_values}.")
    return n_keys, n_values


class LookupTask:
    """Look a key up in a table written earlier: associative recall with each stored pair in one token.

    The first half of a sequence is a table of ``P = length // 2`` entries, each one token that
    stands for a pair ``(key, value)`` with a distinct key; the second half asks: a key token,
    then the value stored with it. One attention step that matches the key can answer, wherever
    the entry stands; what the task measures is whether a model *reaches* an entry far back.
    Symbols: entries ``0 … n_keys·n_values - 1`` (entry ``key · n_values + value``), then the
    ``n_keys`` question tokens, then the ``n_values`` answer tokens.

    Args:
        n_keys: distinct keys; ``length`` may be at most ``2 · n_keys + 1``.
        n_values: values; guessing scores ``ln(n_values)`` nats and ``1/n_values``.
    """

    def __init__(self, n_keys: int = 64, n_values: int = 4) -> None:
        self.n_keys, self.n_values = _checked_sizes(n_keys, n_values)
        self.vocab_size = self.n_keys * self.n_values + self.n_keys + self.n_values

    @property
    def chance_loss(self) -> float:
        """The loss of guessing the value uniformly: ``ln(n_values)`` nats."""
        return math.log(self.n_values)

    def sample(self, batch_size: int, length: int, generator: torch.Generator) -> Batch:
        """A :class:`~transformerland.tasks.Batch` of ``(batch_size, length)``; ``mask`` marks the answers."""
        batch_size, length = _sample_sizes(batch_size, length, generator)
        entries = length // 2
        if entries < 1 or length < 3:
            raise ValueError(f"length must be at least 3 (one entry and one question), got {length}.")
        if entries > self.n_keys:
            raise ValueError(
                f"length {length} would write {entries} entries, but there are only n_keys = {self.n_keys} "
                f"distinct keys; use length <= {2 * self.n_keys + 1} or a LookupTask with n_keys >= {entries}."
            )
        keys = torch.rand(batch_size, self.n_keys, generator=generator).argsort(dim=1)[:, :entries]  # (B, P)
        values = torch.randint(self.n_values, (batch_size, entries), generator=generator)  # (B, P)
        table = keys * self.n_values + values
        n_questions = (length + 1 - entries + 1) // 2
        asked = torch.randint(entries, (batch_size, n_questions), generator=generator)
        question_base, answer_base = self.n_keys * self.n_values, self.n_keys * self.n_values + self.n_keys
        questions = question_base + torch.gather(keys, 1, asked)
        answers = answer_base + torch.gather(values, 1, asked)
        tokens = torch.cat([table, torch.stack([questions, answers], 2).flatten(1)], dim=1)[:, : length + 1]
        position = torch.arange(length)
        mask = (position >= entries) & ((position - entries) % 2 == 0)  # inputs that are questions
        return Batch(tokens[:, :-1], tokens[:, 1:], mask.expand(batch_size, length).clone())

    def entry_distances(self, batch: Batch) -> torch.Tensor:
        """How far back each question's entry stands: ``(B, T)`` ``torch.long``, ``-1`` where nothing is scored.

        At a scored input position ``p`` (a question) the entry that holds the asked key stands at
        position ``e`` of the table; the entry is ``p - e`` tokens back. ``batch``: one of this task's
        samples (its inputs' first ``T // 2`` tokens are the table).
        """
        if not isinstance(batch, Batch):
            raise TypeError(f"batch must be a transformerland.tasks.Batch from sample(), got {type(batch).__name__}.")
        inputs, entries = batch.inputs, batch.inputs.shape[1] // 2
        question_base = self.n_keys * self.n_values
        if entries < 1 or bool((inputs[:, :entries] >= question_base).any()):
            raise ValueError("batch is not a LookupTask sample: its first half must be the table's entries.")
        keys = inputs[:, :entries] // self.n_values  # (B, P): the key of each entry
        asked = (inputs - question_base).clamp(min=0)  # (B, T): the key a question asks (junk elsewhere)
        where = (asked[:, :, None] == keys[:, None, :]).float().argmax(-1)  # (B, T): the entry holding it
        distances = torch.arange(inputs.shape[1], device=inputs.device) - where
        return torch.where(batch.mask, distances, torch.full_like(distances, -1))
