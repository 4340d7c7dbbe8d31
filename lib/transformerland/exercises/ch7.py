"""Exercises of chapter 7, the Observatory (a real RoPE language model), as specs (words in ``ch7.toml``).

* :data:`POSITION_IDS` (ex-7-1): position ids from a padding mask.
* :data:`GGUF_UNPERMUTE` (ex-7-2): llama.cpp's query/key row order back to transformers' halves.
* :data:`TURNING_PAIRS` (ex-7-3): which rotary pairs complete a full turn within a context.
"""

from __future__ import annotations

import math
import random
from typing import Any

import torch

from ..encodings.rotary import halves_to_pairs
from ..llm import gguf_rows_to_halves, position_ids_from_mask, rotary_turns
from .checking import Check
from .spec import Case, Exercise, chapter_data, compare, declared

__all__ = [
    "EXERCISES",
    "GGUF_UNPERMUTE",
    "POSITION_IDS",
    "TURNING_PAIRS",
    "check_gguf_unpermute",
    "check_position_ids",
    "check_turning_pairs",
]

_DATA = chapter_data(__name__)


def _padded_masks(seed: int) -> list[tuple[list[list[int]]]]:
    """Left-, right- and left-padded masks, their widths and real tokens drawn from ``seed``."""
    draw, masks = random.Random(seed), []
    for left in (True, False, True):
        width = draw.randrange(4, 9)
        reals = [draw.randrange(1, width + 1) for _ in range(draw.randrange(2, 4))]
        masks.append(([[0] * (width - n) + [1] * n if left else [1] * n + [0] * (width - n) for n in reals],))
    return masks


def _position_slips(mask: torch.Tensor) -> dict[str, torch.Tensor]:
    arange = torch.arange(mask.shape[1]).expand_as(mask)
    return {
        "padding_counted": arange,
        "from_one": mask.cumsum(dim=1),
        "padding_subtracted": arange - (mask == 0).sum(dim=1, keepdim=True),
    }


def _judge_positions(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    """Real tokens count 0, 1, 2, … from each row's first real token; padding slots hold any position >= 0."""
    (mask,) = case.args
    got = check.integers(got, spec.say("ids"))
    check.shape(got, mask.shape, *spec.said("wrong_shape", tuple(mask.shape), tuple(got.shape)))
    real, rows = mask == 1, mask.tolist()
    problem = spec.say("wrong_positions", rows, got[real].tolist(), expected[real].tolist())
    compare(check, spec, case, got, expected, lambda a, b: torch.equal(a[real], b[real]), problem)
    check.that(bool((got[~real] >= 0).all()), *spec.said("negative", rows))


POSITION_IDS = declared(
    _DATA,
    "ex-7-1",
    reference=position_ids_from_mask,
    hidden=_padded_masks,
    inputs=lambda mask: (torch.tensor(mask),),
    slips=_position_slips,
    judge=_judge_positions,
)


def _random_weights(seed: int) -> list[tuple[int, int, int, torch.Tensor]]:
    """The grader's calls: weights of other head counts, their entries drawn from ``seed``."""
    g = torch.Generator().manual_seed(seed)
    return [(n, d, c, torch.randn(n * d * c, generator=g)) for n, d, c in ((4, 16, 3), (1, 8, 2), (6, 32, 2))]


def _weight(n_heads: int, head_dim: int, columns: int, entries: torch.Tensor | None = None) -> tuple[torch.Tensor, int]:
    """The weight (``n_heads · head_dim`` rows) of ``entries``, or else counting up, and ``n_heads``."""
    if entries is None:
        entries = torch.arange(n_heads * head_dim * columns, dtype=torch.float32)
    return entries.reshape(n_heads * head_dim, columns), n_heads


def _unpermute_slips(weight: torch.Tensor, n_heads: int) -> dict[str, torch.Tensor]:
    head_dim = len(weight) // n_heads
    permuted = weight.reshape(n_heads, head_dim, -1)[:, halves_to_pairs(head_dim)].reshape(weight.shape)
    return {"permuted": permuted, "one_head": gguf_rows_to_halves(weight, 1), "file_order": weight}


def _judge_unpermute(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    weight, n_heads = case.args
    not_a_tensor = spec.said("not_a_tensor", type(got).__name__)
    got = check.convert(got, lambda v: torch.as_tensor(v).detach().cpu().float(), *not_a_tensor)
    check.shape(got, weight.shape, *spec.said("wrong_shape", tuple(weight.shape), tuple(got.shape)))
    problem = spec.say("wrong_rows", n_heads, len(weight) // n_heads)
    compare(check, spec, case, got, expected, problem=problem)


GGUF_UNPERMUTE = declared(
    _DATA,
    "ex-7-2",
    reference=gguf_rows_to_halves,
    hidden=_random_weights,
    inputs=_weight,
    slips=_unpermute_slips,
    judge=_judge_unpermute,
)


def _turn_hidden(seed: int) -> list[tuple[Any, ...]]:
    return [(random.Random(seed).choice([32, 64, 128]), 10_000.0, 256 + seed % 4000), (16, 500.0, 50 + seed % 30)]


def _turning(head_dim: int, base: float, context: int) -> torch.Tensor:
    """The pairs (0-based) that complete a full turn over the largest offset in the context, ``context - 1``."""
    return torch.nonzero(rotary_turns(context - 1, head_dim, base) >= 1).flatten()


def _turn_slips(head_dim: int, base: float, context: int) -> dict[str, torch.Tensor]:
    i = torch.arange(head_dim // 2, dtype=torch.float64)
    theta = base ** (-2 * i / head_dim)
    turns = {
        "whole_context": context * theta >= 2 * math.pi,
        "radians": (context - 1) * theta >= 1,
        "no_two": (context - 1) * base ** (-i / head_dim) >= 2 * math.pi,
        "never": rotary_turns(context - 1, head_dim, base) < 1,
    }
    return {key: torch.nonzero(turning).flatten() for key, turning in turns.items()}


def _judge_turns(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    """Any order of the pair indices is fine; a 0/1 flag per pair is told apart."""
    got = check.integers(got, spec.say("pairs")).flatten()
    if got.numel() == case.args[0] // 2 and set(got.unique().tolist()) <= {0, 1}:
        check.fail(*spec.said("flags"))
    compare(check, spec, case, got.sort().values, expected)


TURNING_PAIRS = declared(
    _DATA, "ex-7-3", reference=_turning, hidden=_turn_hidden, slips=_turn_slips, judge=_judge_turns
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [POSITION_IDS, GGUF_UNPERMUTE, TURNING_PAIRS]

check_position_ids = POSITION_IDS.checker_function()
check_gguf_unpermute = GGUF_UNPERMUTE.checker_function()
check_turning_pairs = TURNING_PAIRS.checker_function()
