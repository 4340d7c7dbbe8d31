"""Chapter 9's checkers: each reference passes, and each typical slip fails with the hint that names it."""

from __future__ import annotations

import pytest
import torch
from transformerland.exercises.ch9 import (
    EXERCISES,
    check_kv_cache_ratio,
    check_longrope_frequencies,
    check_mrope_position_ids,
    check_partial_frequencies,
)

# ex-9-1 ------------------------------------------------------------------------------------------


def partial(head_dim, factor, base):
    width = int(head_dim * factor)
    return base ** (-torch.arange(0, width, 2, dtype=torch.float64) / width)


def partial_over_head(head_dim, factor, base):
    width = int(head_dim * factor)
    return (base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))[: width // 2]


def partial_without_two(head_dim, factor, base):
    width = int(head_dim * factor)
    return base ** (-torch.arange(width // 2, dtype=torch.float64) / width)


def partial_all_pairs(head_dim, factor, base):
    return base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


# ex-9-2 ------------------------------------------------------------------------------------------


def longrope(head_dim, base, short, long, original, seq_len):
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return theta / torch.tensor(long if seq_len > original else short, dtype=torch.float64)


def longrope_multiplied(head_dim, base, short, long, original, seq_len):
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return theta * torch.tensor(long if seq_len > original else short, dtype=torch.float64)


def longrope_switch_at_original(head_dim, base, short, long, original, seq_len):
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return theta / torch.tensor(long if seq_len >= original else short, dtype=torch.float64)


# ex-9-3 ------------------------------------------------------------------------------------------


def mrope_ids(before, h, w, after):
    text = torch.arange(before).expand(3, before)
    rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    image = torch.stack([torch.zeros(h * w, dtype=torch.long), rows.flatten(), cols.flatten()]) + before
    start = int(image.max()) + 1
    return torch.cat([text, image, torch.arange(start, start + after).expand(3, after)], dim=1)


def mrope_ids_counting_tokens(before, h, w, after):
    ids = mrope_ids(before, h, w, after)
    ids[:, before + h * w :] = torch.arange(before + h * w, before + h * w + after)
    return ids


def mrope_ids_from_zero(before, h, w, after):
    ids = mrope_ids(before, h, w, after)
    ids[1:, before : before + h * w] -= before
    return ids


def mrope_ids_column_major(before, h, w, after):
    ids = mrope_ids(before, h, w, after)
    k = torch.arange(h * w)
    ids[1, before : before + h * w], ids[2, before : before + h * w] = k % h + before, k // h + before
    return ids


# ex-9-4 ------------------------------------------------------------------------------------------


def ratio(n_heads, head_dim, rank, rope):
    return 2 * n_heads * head_dim / (rank + rope)


def ratio_without_values(n_heads, head_dim, rank, rope):
    return n_heads * head_dim / (rank + rope)


def ratio_rope_per_head(n_heads, head_dim, rank, rope):
    return 2 * n_heads * head_dim / (rank + n_heads * rope)


def ratio_without_rope(n_heads, head_dim, rank, rope):
    return 2 * n_heads * head_dim / rank


def stub(*args):
    raise NotImplementedError


@pytest.mark.parametrize(
    ("checker", "solution"),
    [
        (check_partial_frequencies, partial),
        (check_longrope_frequencies, longrope),
        (check_mrope_position_ids, mrope_ids),
        (check_kv_cache_ratio, ratio),
    ],
)
def test_reference_passes(checker, solution, verdict) -> None:
    result = checker(solution)
    assert result and verdict(result).word == "PASSED"


@pytest.mark.parametrize(
    ("checker", "wrong", "words"),
    [
        (check_partial_frequencies, partial_over_head, "rotated width r"),
        (check_partial_frequencies, partial_without_two, "used -i/r"),
        (check_partial_frequencies, partial_all_pairs, "one frequency per rotated pair"),
        (check_longrope_frequencies, longrope_multiplied, "divide the frequencies"),
        (check_longrope_frequencies, longrope_switch_at_original, "including the original length"),
        (check_mrope_position_ids, mrope_ids_counting_tokens, "counts positions, not tokens"),
        (check_mrope_position_ids, mrope_ids_from_zero, "start at p"),
        (check_mrope_position_ids, mrope_ids_column_major, "row-major"),
        (check_kv_cache_ratio, ratio_without_values, "a key and a value"),
        (check_kv_cache_ratio, ratio_rope_per_head, "shared by all heads"),
        (check_kv_cache_ratio, ratio_without_rope, "d_c + d_R"),
        (check_kv_cache_ratio, stub, "NotImplementedError"),
    ],
)
def test_typical_mistakes_fail_with_their_hint(checker, wrong, words, verdict) -> None:
    result = checker(wrong)
    seen = verdict(result)
    assert not result and seen.word == "NOT YET" and words in seen.out, seen.out


@pytest.mark.parametrize("spec", EXERCISES, ids=lambda spec: spec.label)
@pytest.mark.parametrize("seed", [1, 7])
def test_hidden_cases_are_of_the_same_kinds(spec, seed) -> None:
    public, hidden = spec.cases(0), spec.cases(seed)
    assert len(public) == len(hidden)
    assert all(spec.reference(*case.args, **case.kwargs) is not None for case in hidden)
