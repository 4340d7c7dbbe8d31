"""Chapter 4's checkers: the reference solutions pass, typical wrong answers fail with a hint naming the mistake."""

from __future__ import annotations

import pytest
import torch
from transformerland.exercises.ch4 import check_bert_sum, check_most_alike_pair, check_segment_ids

# ex-4-1 ------------------------------------------------------------------------------------


def bert_sum(input_ids, token_type_ids, word_table, segment_table, position_table, ln_weight, ln_bias, eps=1e-12):
    positions = torch.arange(input_ids.shape[1])
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[positions]
    mean = total.mean(-1, keepdim=True)
    var = total.var(-1, unbiased=False, keepdim=True)
    return (total - mean) / torch.sqrt(var + eps) * ln_weight + ln_bias


def bert_sum_with_torch(input_ids, token_type_ids, word_table, segment_table, position_table, ln_weight, ln_bias, eps):
    total = word_table[input_ids] + segment_table[token_type_ids] + position_table[: input_ids.shape[1]]
    return torch.nn.functional.layer_norm(total, (word_table.shape[1],), ln_weight, ln_bias, eps)


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


def segment_ids(tokens):
    first = tokens.index("[SEP]")
    return [0] * (first + 1) + [1] * (len(tokens) - first - 1)


def segment_ids_as_tensor(tokens):
    return torch.tensor(segment_ids(tokens))


def first_sep_in_b(tokens):
    first = tokens.index("[SEP]")
    return [0] * first + [1] * (len(tokens) - first)


def last_sep_in_a(tokens):
    ids = segment_ids(tokens)
    ids[-1] = 0
    return ids


def all_zeros(tokens):
    return [0] * len(tokens)


def needs_two_seps(tokens):
    first = tokens.index("[SEP]")
    second = tokens.index("[SEP]", first + 1)
    return [0] * (first + 1) + [1] * (second - first)


def skips_specials(tokens):
    return segment_ids([t for t in tokens if t != "[CLS]"])


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
        (check_segment_ids, segment_ids),
        (check_segment_ids, segment_ids_as_tensor),
        (check_most_alike_pair, most_alike),
    ],
)
def test_reference_solutions_pass(verdict, checker, solution):
    result = checker(solution)
    out = verdict(result).out
    assert result, out
    assert "PASSED" in out and "Hint" not in out


@pytest.mark.parametrize(
    ("checker", "wrong", "hint"),
    [
        (check_bert_sum, sum_without_layer_norm, "LayerNorm"),
        (check_bert_sum, sum_without_segments, "segment stream is missing"),
        (check_bert_sum, positions_from_one, "positions count from 0"),
        (check_bert_sum, positions_by_token_id, "not by its token id"),
        (check_bert_sum, unbiased_variance, "biased variance"),
        (check_bert_sum, forgot_gain_and_bias, "scale by ln_weight and add ln_bias"),
        (check_bert_sum, one_row_per_batch, "shape"),
        (check_bert_sum, stub, "not written yet"),
        (check_segment_ids, first_sep_in_b, "closes sentence A still belongs to segment A"),
        (check_segment_ids, last_sep_in_a, "final [SEP] closes sentence B"),
        (check_segment_ids, all_zeros, "after the first [SEP]"),
        (check_segment_ids, needs_two_seps, "raised ValueError"),
        (check_segment_ids, skips_specials, "one segment id per token"),
        (check_most_alike_pair, keeps_the_diagonal, "leave out the diagonal"),
        (check_most_alike_pair, dot_products, "compare directions, not lengths"),
        (check_most_alike_pair, absolute_cosine, "largest cosine"),
        (check_most_alike_pair, larger_first, "smaller position first"),
        (check_most_alike_pair, only_one_position, "a tuple (i, j)"),
    ],
)
def test_typical_mistakes_fail_with_a_hint_naming_them(verdict, checker, wrong, hint):
    result = checker(wrong)
    out = verdict(result).out
    assert not result
    assert hint in out, out


def test_checkers_do_not_reveal_the_solution(capsys):
    check_bert_sum(sum_without_layer_norm)
    check_most_alike_pair(dot_products)
    out = capsys.readouterr().out
    assert "def " not in out and "fill_diagonal_" not in out
