"""Chapter 9's checkers: each reference passes, each typical slip is named first and hinted at the second time."""

from __future__ import annotations

import pytest
import torch
from transformerland.exercises.ch9 import (
    BREAK_EVEN_HEADS,
    EXERCISES,
    LONGROPE_FREQUENCIES,
    check_break_even_heads,
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


def partial_rounded(head_dim, factor, base):
    width = round(head_dim * factor)
    return base ** (-torch.arange(0, width, 2, dtype=torch.float64) / width)


def partial_rounded_pairs(head_dim, factor, base):
    width = round(head_dim * factor)
    return base ** (-2 * torch.arange(width // 2, dtype=torch.float64) / width)


def partial_slowest_first(head_dim, factor, base):
    return partial(head_dim, factor, base).flip(0)


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


def longrope_lists_swapped(head_dim, base, short, long, original, seq_len):
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return theta / torch.tensor(short if seq_len > original else long, dtype=torch.float64)


# ex-9-3 ------------------------------------------------------------------------------------------


def mrope_ids(before, frames, h, w, after):
    text = torch.arange(before).expand(3, before)
    t, rows, cols = torch.meshgrid(torch.arange(frames), torch.arange(h), torch.arange(w), indexing="ij")
    grid = torch.stack([t.flatten(), rows.flatten(), cols.flatten()]) + before
    start = int(grid.max()) + 1
    return torch.cat([text, grid, torch.arange(start, start + after).expand(3, after)], dim=1)


def mrope_ids_counting_tokens(before, frames, h, w, after):
    ids = mrope_ids(before, frames, h, w, after)
    end = before + frames * h * w
    ids[:, end:] = torch.arange(end, end + after)
    return ids


def mrope_ids_from_zero(before, frames, h, w, after):
    ids = mrope_ids(before, frames, h, w, after)
    ids[1:, before : before + frames * h * w] -= before
    return ids


def mrope_ids_column_major(before, frames, h, w, after):
    ids = mrope_ids(before, frames, h, w, after)
    k = torch.arange(h * w).repeat(frames)
    grid = slice(before, before + frames * h * w)
    ids[1, grid], ids[2, grid] = k % h + before, k // h + before
    return ids


def mrope_ids_image_rule_for_video(before, frames, h, w, after):
    """An image's rule applied to every frame: time stays at p."""
    ids = mrope_ids(before, 1, h, w, 0)
    grid = ids[:, before:].repeat(1, frames)
    start = before + max(h, w)
    return torch.cat([ids[:, :before], grid, torch.arange(start, start + after).expand(3, after)], dim=1)


def mrope_ids_resume_after_space(before, frames, h, w, after):
    ids = mrope_ids(before, frames, h, w, after)
    end = before + frames * h * w
    ids[:, end:] = torch.arange(after) + before + max(h, w)
    return ids


def mrope_ids_rows_swapped(before, frames, h, w, after):
    return mrope_ids(before, frames, h, w, after)[[0, 2, 1]]


def mrope_ids_resume_at_largest(before, frames, h, w, after):
    ids = mrope_ids(before, frames, h, w, after)
    end = before + frames * h * w
    ids[:, end:] -= 1
    return ids


# ex-9-4 ------------------------------------------------------------------------------------------


def heads(head_dim, rank, rope):
    return (rank + rope) // (2 * head_dim) + 1


def heads_at_least(head_dim, rank, rope):
    return -(-(rank + rope) // (2 * head_dim))


def heads_without_values(head_dim, rank, rope):
    return (rank + rope) // head_dim + 1


def heads_rope_per_head(head_dim, rank, rope):
    return rank // (2 * head_dim - rope) + 1


def heads_without_rope(head_dim, rank, rope):
    return rank // (2 * head_dim) + 1


def heads_as_float(head_dim, rank, rope):
    return float(heads(head_dim, rank, rope))


def stub(*args):
    raise NotImplementedError


@pytest.mark.parametrize(
    ("checker", "solution"),
    [
        (check_partial_frequencies, partial),
        (check_longrope_frequencies, longrope),
        (check_mrope_position_ids, mrope_ids),
        (check_break_even_heads, heads),
    ],
)
def test_reference_passes(checker, solution, verdict) -> None:
    result = checker(solution)
    assert result and verdict(result).word == "PASSED"


SLIPS = [
    (check_partial_frequencies, partial_over_head, "which width the exponent"),
    (check_partial_frequencies, partial_without_two, "what i counts"),
    (check_partial_frequencies, partial_rounded, "makes the width a whole number"),
    (check_partial_frequencies, partial_rounded_pairs, "makes the width a whole number"),
    (check_partial_frequencies, partial_slowest_first, "fastest pair first"),
    (check_longrope_frequencies, longrope_multiplied, "what a stretch factor does"),
    (check_longrope_frequencies, longrope_switch_at_original, "already switched lists"),
    (check_longrope_frequencies, longrope_lists_swapped, "the other list of factors"),
    (check_mrope_position_ids, mrope_ids_counting_tokens, "counts positions"),
    (check_mrope_position_ids, mrope_ids_from_zero, "where the grid starts"),
    (check_mrope_position_ids, mrope_ids_column_major, "the order in which the patches are read"),
    (check_mrope_position_ids, mrope_ids_image_rule_for_video, "what the time axis is for"),
    (check_mrope_position_ids, mrope_ids_resume_after_space, "which axis reaches furthest"),
    (check_mrope_position_ids, mrope_ids_rows_swapped, "the order of the three rows"),
    (check_mrope_position_ids, mrope_ids_resume_at_largest, "reuses the grid's largest id"),
    (check_break_even_heads, heads_at_least, "the boundary of your comparison"),
    (check_break_even_heads, heads_without_values, "what multi-head attention keeps per head"),
    (check_break_even_heads, heads_rope_per_head, "how many rotary keys"),
    (check_break_even_heads, heads_without_rope, "everything MLA keeps"),
    (check_break_even_heads, heads_as_float, "not a Python int"),
]


@pytest.mark.parametrize(("checker", "wrong", "words"), SLIPS)
def test_typical_slips_are_named_first_and_hinted_at_second(checker, wrong, words, verdict) -> None:
    first = checker(wrong)
    seen = verdict(first)
    assert not first and seen.word == "NOT YET" and words in first.message, first
    second = checker(wrong)
    assert words in second.message
    spec = next(spec for spec in EXERCISES if spec.checker == checker.__name__)
    slip = next(slip for slip in spec.slips if words in slip.says)
    assert second.hint == slip.then, second  # the stronger hint comes the second time, when there is one


@pytest.mark.parametrize(
    ("checker", "wrong", "words"),
    [
        (check_partial_frequencies, partial_all_pairs, "it has shape (40,); expected (16,)"),
        (check_partial_frequencies, stub, "not written yet"),
        (check_mrope_position_ids, lambda *args: "ids", "not a tensor of numbers"),
        (check_break_even_heads, lambda *args: 4, "it returned 4, expected another"),
    ],
)
def test_other_wrong_answers_say_what_is_wrong(checker, wrong, words) -> None:
    result = checker(wrong)
    assert not result and words in result.message, result


def test_the_library_s_own_answers_are_refused() -> None:
    from transformerland.encodings import mrope_position_ids, partial_frequencies, rope_frequencies

    assert "library's own answer" in check_partial_frequencies(partial_frequencies).message

    def through_rope_frequencies(head_dim, factor, base):
        return rope_frequencies(head_dim, base, {"rope_type": "default", "partial_rotary_factor": factor})[0]

    assert "library's own answer" in check_partial_frequencies(through_rope_frequencies).message

    def through_the_library(before, frames, h, w, after):
        return mrope_position_ids([("text", before), ("image", (frames, h, w)), ("text", after)])

    assert "library's own answer" in check_mrope_position_ids(through_the_library).message

    from transformerland.mla import kv_cache_per_token

    def by_trying(head_dim, rank, rope):  # a loop over the library's cache sizes, knowing neither
        mla = kv_cache_per_token("mla", n_layers=1, kv_lora_rank=rank, rope_dim=rope)
        n = 1
        while kv_cache_per_token("mha", n_layers=1, n_heads=n, head_dim=head_dim) <= mla:
            n += 1
        return n

    assert "library's own answer" in check_break_even_heads(by_trying).message


def test_the_statement_s_whole_width_is_told_from_a_rounded_one() -> None:
    """48 × 0.6 = 28.8: int() gives the statement's 28, round() 29; a call of the notebook parts them."""
    from transformerland.exercises.ch9 import PARTIAL_FREQUENCIES

    assert any(int(d * f) != round(d * f) for d, f, _ in (one.args for one in PARTIAL_FREQUENCIES.public))


def test_the_boundary_is_told_apart() -> None:
    """ex-9-4 asks for *more*: at a tie, the count where the caches are equal is wrong, one more is right."""
    assert BREAK_EVEN_HEADS.reference(24, 512, 64) == 13 and 2 * 12 * 24 == 512 + 64
    assert LONGROPE_FREQUENCIES.reference(16, 1e4, [1.0] * 8, [2.0] * 8, 64, 64)[-1] > 0
    at, past = (LONGROPE_FREQUENCIES.reference(16, 1e4, [1.0] * 8, [2.0] * 8, 64, n) for n in (64, 65))
    assert torch.equal(at * 2, past * 2 * 2)  # short factors at exactly the original length, long ones past it


@pytest.mark.parametrize("spec", EXERCISES, ids=lambda spec: spec.label)
@pytest.mark.parametrize("seed", [1, 7])
def test_a_hidden_verdict_shows_neither_inputs_nor_answer(spec, seed) -> None:
    result = spec.grade(spec.answers(stub, seed), seed)
    assert not result and "grader's calls" in result.message and spec.function + "(" not in result.message
