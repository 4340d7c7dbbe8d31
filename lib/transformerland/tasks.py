"""Synthetic tasks whose answers depend on word order, sized for a CPU.

Every task samples a :class:`Batch` of ``inputs``, ``targets`` and a ``mask`` of the
target positions that are scored, from an explicit ``torch.Generator`` so that runs repeat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch

from ._validation import (
    require_elements,
    require_ids_below,
    require_index_tensor,
    require_int,
    require_positive_float,
    require_positive_int,
)

__all__ = ["Batch", "MarkovTask", "ReverseTask", "SortTask", "Task"]


@dataclass
class Batch:
    """``inputs`` and ``targets``: ``(B, T)`` long; ``mask``: ``(B, T)`` bool, True where scored."""

    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(self.inputs.to(device), self.targets.to(device), self.mask.to(device))


@runtime_checkable
class Task(Protocol):
    """Anything with a ``vocab_size`` and a seeded ``sample(batch_size, length, generator)``: what training needs."""

    vocab_size: int

    def sample(self, batch_size: int, length: int, generator: torch.Generator) -> Batch: ...


def _sample_sizes(batch_size: object, length: object, generator: object) -> tuple[int, int]:
    """Check what every ``sample`` takes: sizes up to their caps, and a ``torch.Generator``."""
    batch_size = require_positive_int(batch_size, "batch_size")
    length = require_positive_int(length, "length")
    require_elements(batch_size * (length + 1), "the batch (batch_size × length)")
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}: "
            "pass torch.Generator().manual_seed(0)."
        )
    return batch_size, length


class MarkovTask:
    """Next-token prediction on an order-``order`` Markov source (a causal language model task).

    The first ``order`` tokens of a sequence are uniform; each later token is drawn from a
    fixed distribution that depends on the ``order`` tokens before it. Only targets with a
    full context are scored, so the best possible loss is the source's entropy rate.

    Args:
        vocab_size: number of symbols.
        order: how many previous tokens the next one depends on.
        concentration: Dirichlet concentration of the transition rows (smaller: more predictable).
        seed: seed of the transition table.
    """

    def __init__(self, vocab_size: int = 16, order: int = 2, concentration: float = 0.3, seed: int = 0) -> None:
        self.vocab_size = require_positive_int(vocab_size, "vocab_size")
        self.order = require_positive_int(order, "order", cap=16)
        require_elements(self.vocab_size ** (self.order + 1), "the transition table (vocab_size^(order + 1))")
        seed = require_int(seed, "seed", low=0)
        generator = torch.Generator().manual_seed(seed)
        alpha = torch.full((vocab_size,), require_positive_float(concentration, "concentration"))
        gamma = torch._standard_gamma(alpha.expand(vocab_size**order, vocab_size).contiguous(), generator=generator)
        self.transitions = gamma / gamma.sum(-1, keepdim=True)  # (V^order, V)

    def _context_index(self, window: torch.Tensor) -> torch.Tensor:
        index = torch.zeros(window.shape[0], dtype=torch.long)
        for j in range(self.order):
            index = index * self.vocab_size + window[:, j]
        return index

    def sample(self, batch_size: int, length: int, generator: torch.Generator) -> Batch:
        """``length`` model inputs per sequence (so ``length + 1`` tokens are drawn)."""
        batch_size, length = _sample_sizes(batch_size, length, generator)
        if length <= self.order:
            raise ValueError(f"length must exceed the Markov order {self.order}, got {length}.")
        seq = torch.empty(batch_size, length + 1, dtype=torch.long)
        seq[:, : self.order] = torch.randint(self.vocab_size, (batch_size, self.order), generator=generator)
        for t in range(self.order, length + 1):
            probs = self.transitions[self._context_index(seq[:, t - self.order : t])]
            seq[:, t] = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        mask = torch.ones(batch_size, length, dtype=torch.bool)
        mask[:, : self.order - 1] = False
        return Batch(seq[:, :-1], seq[:, 1:], mask)

    def _next_rows(self, inputs: torch.Tensor) -> torch.Tensor:
        """The source's next-token distributions after each full context of ``inputs`` ``(B, T)``: ``(S, B, V)``
        for positions ``order - 1`` to ``T - 1`` (``S = T - order + 1``)."""
        places = range(self.order - 1, inputs.shape[1])
        return torch.stack(
            [self.transitions[self._context_index(inputs[:, i - self.order + 1 : i + 1])] for i in places]
        )

    def _scored(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The source's next-token distributions at the scored targets of ``batch``, ``(S, B, V)``, and those
        targets, ``(S, B)`` long (``S = T - order + 1`` scored places per sequence)."""
        return self._next_rows(batch.inputs.cpu()), batch.targets.cpu()[:, self.order - 1 :].T

    def source_log_probs(self, tokens: torch.Tensor) -> torch.Tensor:
        """The source's own next-token log-probabilities after each prefix of ``tokens``: the source as a model.

        Args:
            tokens: ``(B, T)`` long, the inputs of a batch.

        Returns:
            ``(B, T, V)`` float on the CPU: at position ``i`` (from ``order - 1`` on), the log of the true
            distribution of the token after ``tokens[:, i - order + 1 : i + 1]``; at the positions before, whose
            targets are not scored, a uniform row. Fed to a loss like a model's logits, it scores what the source
            itself scores (per position, :func:`~transformerland.experiments.remedies.position_losses`).
        """
        tokens = require_index_tensor(tokens, "tokens", ndim=2).cpu()
        require_ids_below(tokens, "tokens", self.vocab_size, whose="this source")
        logits = torch.full((*tokens.shape, self.vocab_size), -float(torch.log(torch.tensor(self.vocab_size))))
        logits[:, self.order - 1 :] = self._next_rows(tokens).log().transpose(0, 1)
        return logits

    def entropy_rate(self, batch: Batch) -> float:
        """Mean entropy (nats) of the true next-token distribution over the scored targets of ``batch``.

        This is the loss a perfect model would reach on average on that batch's contexts; on the batch's own
        targets it reaches :meth:`source_loss`, which sampling puts a little above or below.
        """
        probs, _ = self._scored(batch)
        return float((-(probs * probs.clamp_min(1e-12).log()).sum(-1)).mean())

    def stationary_bigrams(self, steps: int = 512) -> torch.Tensor:
        """How often each (current, next) pair of tokens occurs once a sequence has run long.

        Starting from uniform contexts (the ``order`` tokens before a next one), the distribution over contexts
        is carried ``steps`` tokens forward by the transition table; the last token of a context and the token
        drawn after it then form a pair. From the result follow the bounds of simpler models: the entropy of
        ``next`` given ``current`` is the best loss of a model that sees only the current token, and the entropy
        of ``next`` alone that of a model that sees no token.

        Args:
            steps: how many tokens to carry the contexts forward (the distribution settles in far fewer
                than 512 for the book's sources).

        Returns:
            ``(V, V)`` float64 on the CPU, summing to 1: entry ``(b, c)`` is the probability of token ``b``
            followed by token ``c``.
        """
        steps = require_int(steps, "steps", low=0)
        V, n_contexts = self.vocab_size, self.vocab_size**self.order
        table = self.transitions.double()
        table = table / table.sum(-1, keepdim=True)  # (V^order, V): context → next token, rows summing to 1
        # context (a₁ … a_k) followed by c becomes context (a₂ … a_k, c): (V^order · V,), row-major like the flow
        following = ((torch.arange(n_contexts)[:, None] % (n_contexts // V)) * V + torch.arange(V)).flatten()
        contexts = torch.full((n_contexts,), 1 / n_contexts, dtype=torch.float64)
        for _ in range(steps):
            flow = (contexts[:, None] * table).flatten()
            contexts = torch.zeros_like(contexts).index_add_(0, following, flow)
        return (contexts[:, None] * table).reshape(-1, V, V).sum(0)  # the context's last token is its index mod V

    def source_loss(self, batch: Batch) -> float:
        """Mean loss (nats) of the source's own next-token distributions on the scored targets of ``batch``.

        The loss of the perfect model, the source itself, on that batch: no model beats it on average.
        """
        probs, targets = self._scored(batch)
        return float(-probs.gather(-1, targets[..., None]).clamp_min(1e-12).log().mean())


class ReverseTask:
    """Reverse a random string, position by position (an encoder task, ``causal=False``).

    The input is ``x₁ … xₙ``; the target at position ``i`` is ``x_{n+1-i}``. A model with no
    position information is permutation-equivariant and cannot do this.
    """

    def __init__(self, vocab_size: int = 16) -> None:
        self.vocab_size = require_positive_int(vocab_size, "vocab_size")

    def sample(self, batch_size: int, length: int, generator: torch.Generator) -> Batch:
        """``length`` symbols per sequence."""
        batch_size, length = _sample_sizes(batch_size, length, generator)
        x = torch.randint(self.vocab_size, (batch_size, length), generator=generator)
        return Batch(x, x.flip(1), torch.ones_like(x, dtype=torch.bool))


class SortTask:
    """Sort a random string in place (an encoder task, ``causal=False``).

    The input is ``x₁ … xₙ``; the target at position ``i`` is the ``i``-th smallest symbol.
    What to write is fixed by the bag of symbols alone; where to write it is fixed by the
    position. A model with no position information is permutation-equivariant: its best
    strategy is to write the bag's most frequent symbol everywhere
    (see :meth:`position_free_ceiling`).
    """

    def __init__(self, vocab_size: int = 16) -> None:
        self.vocab_size = require_positive_int(vocab_size, "vocab_size")

    def sample(self, batch_size: int, length: int, generator: torch.Generator) -> Batch:
        """``length`` symbols per sequence; every target is scored."""
        batch_size, length = _sample_sizes(batch_size, length, generator)
        x = torch.randint(self.vocab_size, (batch_size, length), generator=generator)
        return Batch(x, x.sort(dim=1).values, torch.ones_like(x, dtype=torch.bool))

    def position_free_ceiling(self, batch: Batch) -> float:
        """The best token accuracy a model blind to positions can expect on ``batch``.

        Such a model gives the same answer at every position holding the same symbol, and
        each position is equally likely to be any rank, so the best it can do is to answer the
        bag's most frequent symbol everywhere: right ``(count of the mode) / n`` of the time.
        Returns that share averaged over the batch's sequences.
        """
        inputs = batch.inputs.cpu()
        counts = torch.zeros(inputs.shape[0], self.vocab_size, dtype=torch.long)
        counts.scatter_add_(1, inputs, torch.ones_like(inputs))
        return float((counts.max(dim=1).values / inputs.shape[1]).mean())
