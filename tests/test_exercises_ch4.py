"""Chapter 4's exercises: the reference answers pass, typical slips are named, and hints grow in two stages."""

from __future__ import annotations

import pytest
import torch
from transformerland.exercises.ch4 import (
    EXERCISES,
    check_bert_sum,
    check_most_alike_pair,
    check_padded_position_ids,
)

# ex-4-1 ------------------------------------------------------------------------------------


def bert_sum(
    input_ids, token_type_ids, word_table, segment_table, position_table, ln_weight, ln_bias, eps=1e-12,
    position_ids=None,
):  # fmt: skip
    positions = torch.arange(input_ids.shape[1]) if position_ids is None else position_ids
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[positions]
    mean = total.mean(-1, keepdim=True)
    var = total.var(-1, unbiased=False, keepdim=True)
    return (total - mean) / torch.sqrt(var + eps) * ln_weight + ln_bias


def bert_sum_with_torch(
    input_ids, token_type_ids, word_table, segment_table, position_table, ln_weight, ln_bias, eps, position_ids=None
):
    if position_ids is None:
        position_ids = torch.arange(input_ids.shape[1]).expand_as(input_ids)
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[position_ids]
    return torch.nn.functional.layer_norm(total, (word_table.shape[1],), ln_weight, ln_bias, eps)


def ignores_position_ids(input_ids, token_type_ids, word_table, segment_table, position_table, w, b, eps, **_):
    return bert_sum(input_ids, token_type_ids, word_table, segment_table, position_table, w, b, eps)


def sum_without_layer_norm(input_ids, token_type_ids, word_table, segment_table, position_table, *_):
    return word_table[input_ids] + segment_table[token_type_ids] + position_table[: input_ids.shape[1]]


def sum_without_segments(input_ids, token_type_ids, word_table, segment_table, position_table, w, b, eps):
    total = word_table[input_ids] + position_table[: input_ids.shape[1]]
    return torch.nn.functional.layer_norm(total, (total.shape[-1],), w, b, eps)


def positions_from_one(input_ids, token_type_ids, word_table, segment_table, position_table, w, b, eps):
    t = input_ids.shape[1]
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[1 : t + 1]
    return torch.nn.functional.layer_norm(total, (total.shape[-1],), w, b, eps)


def positions_by_token_id(input_ids, token_type_ids, word_table, segment_table, position_table, w, b, eps):
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[input_ids]
    return torch.nn.functional.layer_norm(total, (total.shape[-1],), w, b, eps)


def unbiased_variance(input_ids, token_type_ids, word_table, segment_table, position_table, w, b, eps):
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[: input_ids.shape[1]]
    return (total - total.mean(-1, keepdim=True)) / torch.sqrt(total.var(-1, keepdim=True) + eps) * w + b


def forgot_gain_and_bias(input_ids, token_type_ids, word_table, segment_table, position_table, w, b, eps):
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[: input_ids.shape[1]]
    return torch.nn.functional.layer_norm(total, (total.shape[-1],), eps=eps)


def one_row_per_batch(input_ids, token_type_ids, word_table, *_):
    return word_table[input_ids[0]]


def stub(*_):
    raise NotImplementedError


# ex-4-2 ------------------------------------------------------------------------------------


def position_ids(attention_mask):
    real = attention_mask.long()
    return (real.cumsum(-1) - 1).clamp(min=0) * real


def position_ids_by_loop(attention_mask):
    ids = torch.zeros_like(attention_mask, dtype=torch.long)
    for b, row in enumerate(attention_mask.tolist()):
        seat = 0
        for t, real in enumerate(row):
            if real:
                ids[b, t] = seat
                seat += 1
    return ids


def plain_arange(attention_mask):
    return torch.arange(attention_mask.shape[1]).expand(attention_mask.shape)


def counts_from_one(attention_mask):
    return attention_mask.long().cumsum(-1) * attention_mask.long()


def pads_at_minus_one(attention_mask):
    return attention_mask.long().cumsum(-1) - 1


def pads_at_one(attention_mask):  # transformers' generate() convention
    ids = attention_mask.long().cumsum(-1) - 1
    return ids.masked_fill(attention_mask == 0, 1)


def assumes_right_padding(attention_mask):
    seats = torch.arange(attention_mask.shape[1])
    return torch.where(seats < attention_mask.sum(-1, keepdim=True), seats, 0)


def as_floats(attention_mask):
    return position_ids(attention_mask).float()


def drops_the_batch(attention_mask):
    return position_ids(attention_mask)[0]


# ex-4-3 ------------------------------------------------------------------------------------


def most_alike(table):
    unit = table / table.norm(dim=1, keepdim=True)
    similarity = unit @ unit.T
    similarity.fill_diagonal_(-2.0)
    i, j = divmod(int(similarity.argmax()), table.shape[0])
    return min(i, j), max(i, j)


def keeps_the_diagonal(table):
    unit = table / table.norm(dim=1, keepdim=True)
    i, j = divmod(int((unit @ unit.T).argmax()), table.shape[0])
    return i, j


def dot_products(table):
    similarity = table @ table.T
    similarity.fill_diagonal_(float("-inf"))
    i, j = divmod(int(similarity.argmax()), table.shape[0])
    return min(i, j), max(i, j)


def absolute_cosine(table):
    unit = table / table.norm(dim=1, keepdim=True)
    similarity = (unit @ unit.T).abs()
    similarity.fill_diagonal_(-1.0)
    i, j = divmod(int(similarity.argmax()), table.shape[0])
    return min(i, j), max(i, j)


def larger_first(table):
    i, j = most_alike(table)
    return j, i


def only_one_position(table):
    return most_alike(table)[0]


@pytest.mark.parametrize(
    ("checker", "solution"),
    [
        (check_bert_sum, bert_sum),
        (check_bert_sum, bert_sum_with_torch),
        (check_padded_position_ids, position_ids),
        (check_padded_position_ids, position_ids_by_loop),
        (check_most_alike_pair, most_alike),
        (check_most_alike_pair, lambda table: list(most_alike(table))),
    ],
)
def test_reference_solutions_pass(verdict, checker, solution):
    result = checker(solution)
    out = verdict(result).out
    assert result, out
    assert "PASSED" in out and "Hint" not in out


@pytest.mark.parametrize(
    ("checker", "wrong", "says", "then"),
    [
        (check_bert_sum, sum_without_layer_norm, "raw sum", "ends with LayerNorm"),
        (check_bert_sum, sum_without_segments, "segment stream is missing", "segment id"),
        (check_bert_sum, positions_from_one, "one seat off", "count from 0"),
        (check_bert_sum, positions_by_token_id, "wrong index", "not on which token it is"),
        (check_bert_sum, unbiased_variance, "divides by D − 1", "not an estimate"),
        (check_bert_sum, forgot_gain_and_bias, "not rescaled", "a part to play"),
        (check_bert_sum, one_row_per_batch, "one row of width D", "whole (B, T) tensor"),
        (check_bert_sum, stub, "not written yet", ""),
        (check_bert_sum, ignores_position_ids, "still reads rows 0 … T − 1", "says which row"),
        (check_padded_position_ids, plain_arange, "count the padding", "when it stands alone"),
        (check_padded_position_ids, counts_from_one, "one seat too far", "at a sentence's first real token"),
        (check_padded_position_ids, pads_at_minus_one, "got −1", "which id a padding position gets"),
        (check_padded_position_ids, pads_at_one, "padding positions got 1", ""),
        (check_padded_position_ids, assumes_right_padding, "padding comes first", "zeros of the mask"),
        (check_padded_position_ids, as_floats, "floating-point", "dtype"),
        (check_padded_position_ids, drops_the_batch, "it has shape (5,)", "the statement fixes"),
        (check_most_alike_pair, keeps_the_diagonal, "one position twice", "two distinct positions"),
        (check_most_alike_pair, dot_products, "largest dot product", "whatever the rows' lengths"),
        (check_most_alike_pair, absolute_cosine, "opposite directions", "signed cosines"),
        (check_most_alike_pair, larger_first, "wrong order", ""),
        (check_most_alike_pair, only_one_position, "one number", ""),
    ],
)
def test_typical_slips_are_named_then_hinted(verdict, checker, wrong, says, then):
    result = checker(wrong)
    first = verdict(result).out
    assert not result
    assert says in first, first
    if then:
        assert then not in first
        checker(wrong)
        assert then in verdict().out


def test_writing_into_the_mask_is_not_yet(verdict):
    def writes(attention_mask):
        ids = position_ids(attention_mask)
        attention_mask.zero_()
        return ids

    assert not check_padded_position_ids(writes)
    assert "changed the arguments" in verdict().out


def test_checkers_do_not_reveal_the_solution(capsys):
    check_bert_sum(sum_without_layer_norm)
    check_most_alike_pair(dot_products)
    check_padded_position_ids(plain_arange)
    out = capsys.readouterr().out
    assert "def " not in out and "fill_diagonal_" not in out and "cumsum" not in out


def test_hidden_verdicts_name_the_slip_without_the_inputs():
    spec = EXERCISES[1]
    for seed in (1, 2, 3):
        result = spec.grade(spec.answers(plain_arange, seed), seed)
        assert not result and "count the padding" in result.message and "tensor" not in result.message, result
