"""Chapter 7's exercises: the reference answers pass, typical slips are named at once and hinted at the second
time, and the grader's calls are drawn apart from the notebook's."""

from __future__ import annotations

import itertools
import math
import random

import pytest
import torch
from transformerland.exercises.ch7 import (
    EXERCISES,
    GGUF_UNPERMUTE,
    PACKED_POSITIONS,
    check_base_range,
    check_gguf_unpermute,
    check_packed_positions,
)

from tests.checkers import named_then_hinted

# --- ex-7-1: positions in a packed row -------------------------------------------------------------------


def looped_positions(text_ids, first_slot=1):
    """Slot by slot: one more than the slot before when the name is the same, else 0 (from ``first_slot``)."""
    positions = torch.zeros_like(text_ids)
    for row in range(text_ids.shape[0]):
        for slot in range(first_slot, text_ids.shape[1]):
            same = bool(text_ids[row, slot] == text_ids[row, slot - 1])
            positions[row, slot] = positions[row, slot - 1] + 1 if same else 0
    return positions


def run_lengths_positions(text_ids):
    """Row by row, the runs of equal names, each counted 0, 1, 2, …"""
    rows = []
    for row in text_ids:
        runs = torch.unique_consecutive(row, return_counts=True)[1]
        rows.append(torch.cat([torch.arange(int(n)) for n in runs]))
    return torch.stack(rows)


def counted_by_name(text_ids):
    """A student's slip: a counter per name, so a name that comes back goes on counting."""
    positions = torch.zeros_like(text_ids)
    for row in range(text_ids.shape[0]):
        seen = {}
        for slot, name in enumerate(text_ids[row].tolist()):
            positions[row, slot] = seen.get(name, 0)
            seen[name] = seen.get(name, 0) + 1
    return positions


def carried_across_rows(text_ids):
    """A student's slip: the loop's count carries over from the end of one row to the start of the next."""
    positions, before, count = torch.zeros_like(text_ids), None, -1
    for row in range(text_ids.shape[0]):
        for slot in range(text_ids.shape[1]):
            name = int(text_ids[row, slot])
            count = count + 1 if name == before else 0
            positions[row, slot], before = count, name
    return positions


def wrapped_round(text_ids):
    """A student's slip: the loop starts at slot 0, whose slot before is index -1, the row's last."""
    return looped_positions(text_ids, first_slot=0)


def test_the_packed_examples_come_out_as_a_reader_counts_them():
    assert PACKED_POSITIONS.reference(torch.tensor([[5, 5, 2, 2, 2, 5, 5]])).tolist() == [[0, 1, 0, 1, 2, 0, 1]]
    assert PACKED_POSITIONS.reference(torch.tensor([[0, 0, 1], [1, 1, 2]])).tolist() == [[0, 1, 0], [0, 1, 0]]


@pytest.mark.parametrize("fn", [looped_positions, run_lengths_positions])
def test_packed_positions_pass_written_with_or_without_a_loop(fn, verdict):
    assert check_packed_positions(fn)
    assert verdict().word == "PASSED"
    for seed in (1, 2, 3):  # and on the grader's calls
        assert PACKED_POSITIONS.grade(PACKED_POSITIONS.answers(fn, seed), seed)


def test_every_hidden_draw_holds_what_catches_the_slips():
    """On 5,000 grader seeds: each batch's first row has a name that comes back and ends with the name it starts
    with, and every later row starts with the name the row above ended with."""
    for seed in range(5000):
        for one in PACKED_POSITIONS.hidden(random.Random(seed)):
            rows = one.args[0].tolist()
            first = rows[0]
            runs = [name for k, name in enumerate(first) if k == 0 or name != first[k - 1]]
            assert len(runs) > len(set(runs)) and first[0] == first[-1], (seed, rows)
            assert all(row[0] == above[-1] for above, row in itertools.pairwise(rows)), (seed, rows)


@pytest.mark.parametrize(
    ("wrong", "says"),
    [(counted_by_name, "a name that comes back"), (carried_across_rows, "rows ran together"), (wrapped_round, "")],
)
@pytest.mark.parametrize("seed", [1, 2, 3, 3721, 5157])
def test_the_grader_s_calls_catch_the_students_slips(wrong, says, seed):
    result = PACKED_POSITIONS.grade(PACKED_POSITIONS.answers(wrong, seed), seed)
    assert not result and says in result.message, result


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda ids: torch.arange(ids.shape[1]).expand_as(ids), "counted from the start of its row"),
        (lambda ids: looped_positions(ids) + 1, "count from 1"),
        (counted_by_name, "a name that comes back"),
        (carried_across_rows, "rows ran together"),
        (lambda ids: looped_positions(ids)[:, 1:], "same shape as text_ids"),
        (lambda ids: looped_positions(ids).float(), "not an integer tensor"),
        (lambda ids: looped_positions(ids).tolist(), "not an integer tensor"),
        (lambda ids: looped_positions(ids).numpy(), "not an integer tensor"),
    ],
)
def test_packed_positions_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_packed_positions, wrong, says)


def test_packed_positions_that_write_into_the_input_or_crash_are_not_yet():
    result = check_packed_positions(lambda ids: ids.copy_(looped_positions(ids.clone())))
    assert not result and "changed the arguments" in result.message

    def stub(ids):
        raise NotImplementedError

    assert "not written yet" in check_packed_positions(stub).message
    assert "AttributeError" in check_packed_positions(lambda ids: ids.nope()).message


# --- ex-7-2: the GGUF row order undone -------------------------------------------------------------------


def reference_unpermute(weight, n_heads):
    rows, columns = weight.shape
    head_dim = rows // n_heads
    return weight.reshape(n_heads, head_dim // 2, 2, columns).transpose(1, 2).reshape(rows, columns)


def llama_cpp_permute(weight, n_heads):
    rows, columns = weight.shape
    return weight.reshape(n_heads, 2, rows // n_heads // 2, columns).transpose(1, 2).reshape(rows, columns)


def test_gguf_unpermute_reference_passes(verdict):
    assert check_gguf_unpermute(reference_unpermute)
    assert verdict().word == "PASSED"


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (llama_cpp_permute, "instead of undoing it"),
        (lambda weight, n_heads: reference_unpermute(weight, 1), "reordered as one head"),
        (lambda weight, n_heads: weight.clone(), "still in the file's order"),
        (lambda weight, n_heads: reference_unpermute(weight, n_heads)[:, :1], "same shape"),
    ],
)
def test_gguf_unpermute_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_gguf_unpermute, wrong, says)


def test_gguf_unpermute_in_place_or_not_a_tensor_is_not_yet():
    result = check_gguf_unpermute(lambda weight, n_heads: weight.copy_(reference_unpermute(weight.clone(), n_heads)))
    assert not result and "changed the arguments" in result.message
    result = check_gguf_unpermute(lambda weight, n_heads: "rows")
    assert not result and "not a tensor" in result.message


def test_the_one_head_hint_names_the_call_s_head_count():
    result = check_gguf_unpermute(lambda weight, n_heads: reference_unpermute(weight, 1))
    assert "each of the 2 heads" in result.message, result
    hidden = GGUF_UNPERMUTE.grade(GGUF_UNPERMUTE.answers(lambda weight, n_heads: reference_unpermute(weight, 1), 3), 3)
    assert "each of the n_heads heads" in hidden.message and "grader's calls" in hidden.message, hidden


# --- ex-7-3: the bases that make exactly the first pairs come full circle ----------------------------------


def base_range(d, L, n, turn=2 * math.pi, offset=1, step=2):
    """Exactly pairs 0 … n - 1 turn once over L - offset positions for low < base <= high: (low, high)."""
    reach = (L - offset) / turn  # pair i turns once when base ** (step * i / d) <= reach
    return reach ** (d / (step * n)), reach ** (d / (step * (n - 1)))


def turning(d, base, L):
    """How many pairs complete a turn over L - 1 positions at this base, counted directly."""
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    return int(((L - 1) * theta >= 2 * math.pi).sum())


def test_the_range_is_where_exactly_the_first_pairs_turn():
    for d, L, n in [(64, 8192, 16), (64, 8192, 20), (128, 32768, 40), (16, 100, 3)]:
        low, high = base_range(d, L, n)
        assert turning(d, low * 1.0001, L) == turning(d, high, L) == n
        assert turning(d, low, L) == n + 1 or turning(d, low * 0.9999, L) == n + 1
        assert turning(d, high * 1.0001, L) == n - 1


def test_base_range_reference_passes(verdict):
    assert check_base_range(base_range)
    assert verdict().word == "PASSED"
    assert check_base_range(lambda *args: torch.tensor(base_range(*args))), "a tensor is fine too"


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda d, L, n: base_range(d, L, n)[::-1], "wrong order"),
        (lambda d, L, n: base_range(d, L, n, offset=0), "one too large"),
        (lambda d, L, n: base_range(d, L, n, turn=1.0), "what one turn measures"),
        (lambda d, L, n: base_range(d, L, n + 1), "one pair too many"),
        (lambda d, L, n: base_range(d, L, n - 1), "one pair too few"),
        (lambda d, L, n: base_range(d, L, n, step=1), "half as fast"),
    ],
)
def test_base_range_slips_are_named_then_hinted(wrong, says):
    named_then_hinted(check_base_range, wrong, says)


def test_a_range_off_everywhere_gets_the_general_hint():
    result = check_base_range(lambda d, L, n: (2.0, 3.0))
    assert not result and "inequality on the base" in result.hint


def test_every_hidden_draw_makes_calls_the_notebook_never_made():
    for spec in EXERCISES:
        public = [repr((c.args, c.kwargs)) for c in spec.public]
        for seed in range(1, 30):
            drawn = [repr((c.args, c.kwargs)) for c in spec.cases(seed)]
            assert any(call not in public for call in drawn), (spec.label, seed)
