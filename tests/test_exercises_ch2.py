"""Chapter 2's exercises: the reference answers pass, typical slips are named, and hints grow in two stages."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformerland.encodings import sinusoidal_encoding, tensor2tensor_encoding
from transformerland.exercises.ch2 import (
    FIRST_NEAR_REPEAT,
    SINUSOIDAL_ENCODING,
    WAVELENGTH,
    check_first_near_repeat,
    check_sinusoidal_encoding,
    check_wavelength,
)

# --- ex-2-1: the table from the formula ----------------------------------------------------------


def loop_encoding(num_positions, d_model, base=10000.0, layout="interleaved", *, mistake=None):
    """A student's loop version of the formula, with one typical mistake switched on."""
    table = np.zeros((num_positions, d_model))
    for pos in range(num_positions):
        for i in range(d_model // 2):
            exponent = {
                "integer division": (2 * i) // d_model,
                "i instead of 2i": i / d_model,
                "2i doubled": 2 * (2 * i) / d_model,
            }.get(mistake, 2 * i / d_model)
            angle = pos // base**exponent if mistake == "floor" else pos / base**exponent
            first, second = math.sin(angle), math.cos(angle)
            if mistake == "swapped":
                first, second = second, first
            if mistake == "column exponent":
                second = math.cos(pos / base ** ((2 * i + 1) / d_model))
            if mistake == "constant base":
                first, second = (f(pos / 10000 ** (2 * i / d_model)) for f in (math.sin, math.cos))
            if layout == "interleaved" or mistake == "ignores layout":
                table[pos, 2 * i], table[pos, 2 * i + 1] = first, second
            else:
                table[pos, i], table[pos, d_model // 2 + i] = first, second
    return table


def with_mistake(mistake):
    def my_sinusoidal_encoding(num_positions, d_model, base=10000.0, layout="interleaved"):
        return loop_encoding(num_positions, d_model, base, layout, mistake=mistake)

    return my_sinusoidal_encoding


def test_a_loop_and_a_numpy_table_pass(verdict):
    assert check_sinusoidal_encoding(with_mistake(None))
    assert verdict().word == "PASSED"


def test_the_library_s_own_table_is_refused():
    result = check_sinusoidal_encoding(sinusoidal_encoding)
    assert not result and "library's own answer" in result.message
    result = check_sinusoidal_encoding(lambda *a, **k: sinusoidal_encoding(*a, **k))
    assert not result and "write it yourself" in result.message


@pytest.mark.parametrize(
    ("mistake", "says"),
    [
        ("swapped", "sine and cosine sit in each other's places"),
        ("integer division", "every pair turns at the same speed"),
        ("floor", "rounded down to whole radians"),
        ("i instead of 2i", "fall too slowly"),
        ("2i doubled", "fall twice as fast"),
        ("column exponent", "the two columns of a pair turn at different speeds"),
        ("ignores layout", "in the other layout than the one asked for (concatenated)"),
        ("constant base", "ignores the base it was given (500.0)"),
    ],
)
def test_typical_slips_are_named_first_and_hinted_at_second(mistake, says):
    first = check_sinusoidal_encoding(with_mistake(mistake))
    assert not first and says in first.message and not first.hint, first
    second = check_sinusoidal_encoding(with_mistake(mistake))
    assert says in second.message and second.hint, second


def test_other_wrong_tables():
    def multiplied(num_positions, d_model, base=10000.0, layout="interleaved"):
        return torch.as_tensor(loop_encoding(num_positions, d_model, 1 / base, layout))

    def fairseq(num_positions, d_model, base=10000.0, layout="interleaved"):
        return tensor2tensor_encoding(num_positions, d_model, base)

    def integer_table(num_positions, d_model, base=10000.0, layout="interleaved"):
        return torch.as_tensor(loop_encoding(num_positions, d_model, base, layout)).long()

    def transposed(num_positions, d_model, base=10000.0, layout="interleaved"):
        return torch.as_tensor(loop_encoding(num_positions, d_model, base, layout)).T

    def no_layout(num_positions, d_model, base=10000.0):
        return loop_encoding(num_positions, d_model, base)

    def nothing_yet(num_positions, d_model, base=10000.0, layout="interleaved"):
        raise NotImplementedError

    def a_little_off(num_positions, d_model, base=10000.0, layout="interleaved"):
        return loop_encoding(num_positions, d_model, base, layout) + 0.01

    cases = [
        (multiplied, "grow along the row"),
        (fairseq, "spaced as tensor2tensor and fairseq space them"),
        (integer_table, "holds whole numbers"),
        (transposed, "it has shape (8, 16); expected (16, 8)"),
        (no_layout, "unexpected keyword argument 'layout'"),
        (nothing_yet, "not written yet"),
        (a_little_off, "differs from the right values by up to 0.01, first at index (0, 0)"),
    ]
    for fn, words in cases:
        result = check_sinusoidal_encoding(fn)
        assert not result and words in result.message, (fn.__name__, result)


def test_a_hidden_call_s_verdict_shows_neither_its_inputs_nor_the_answer():
    def transposed(num_positions, d_model, base=10000.0, layout="interleaved"):
        return torch.as_tensor(loop_encoding(num_positions, d_model, base, layout)).T

    for seed in (1, 2, 3):
        result = SINUSOIDAL_ENCODING.grade(SINUSOIDAL_ENCODING.answers(transposed, seed), seed)
        assert not result and "grader's calls" in result.message and "expected" not in result.message
        assert "my_sinusoidal_encoding(" not in result.message, result
        slipped = SINUSOIDAL_ENCODING.grade(SINUSOIDAL_ENCODING.answers(with_mistake("constant base"), seed), seed)
        assert ("{base}" not in slipped.message and "(base)" in slipped.message) or "10000" in slipped.message


# --- ex-2-2: a wavelength -------------------------------------------------------------------------------


def my_wavelength(column, d_model, base=10000.0):
    return 2 * math.pi * base ** (2 * (column // 2) / d_model)


def test_wavelength_reference_passes():
    assert check_wavelength(my_wavelength)


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (lambda c, d, base=10000.0: base ** (2 * (c // 2) / d), "2π times too small"),
        (lambda c, d, base=10000.0: base ** (-2 * (c // 2) / d), "that is a frequency"),
        (lambda c, d, base=10000.0: 2 * math.pi * base ** (2 * c / d), "column's number was used"),
        (lambda c, d, base=10000.0: 2 * math.pi * base ** (c / d), "odd column got a wavelength different"),
        (lambda c, d, base=10000.0: 2 * math.pi * base ** ((c // 2) / d), "exponent is half"),
        (lambda c, d, base=10000.0: 360 * base ** (2 * (c // 2) / d), "counted in degrees"),
        (lambda c, d, base=10000.0: 2 * math.pi * 10000.0 ** (2 * (c // 2) / d), "ignores the base it was given"),
        (lambda c, d, base=10000.0: 3 * base ** (2 * (c // 2) / d), "not the right number"),
        (lambda c, d, base=10000.0: [1.0, 2.0], "not a number"),
    ],
)
def test_wavelength_slips_are_named(fn, says):
    result = check_wavelength(fn)
    assert not result and says in result.message, result


def test_the_second_hint_asks_a_question_with_the_call_s_own_numbers():
    slip = lambda c, d, base=10000.0: 2 * math.pi * base ** (2 * c / d)  # noqa: E731
    check_wavelength(slip)
    assert "before column 256?" in check_wavelength(slip).hint


# --- ex-2-4: the first near-repeat ----------------------------------------------------------------------


def own_table(positions, d_model, base):
    return torch.as_tensor(loop_encoding(positions, d_model, base))


def first_near_repeat(d_model, base, tol, max_position, kind=None):
    table = own_table(max_position + 1, d_model, base)
    distance = (table - table[0]).norm(dim=1)
    if kind == "from zero":
        near = (distance < tol).nonzero()
        return int(near[0]) if len(near) else None
    near = {
        "squared": (distance[1:] ** 2 < tol),
        "short range": (distance[1:max_position] < tol),
        "first pair only": ((table[1:, :2] - table[0, :2]).norm(dim=1) < tol),
    }.get(kind, distance[1:] < tol).nonzero()
    if kind == "off by one":
        return int(near[0]) if len(near) else None
    if kind == "never none":
        return int(near[0]) + 1 if len(near) else max_position
    return int(near[0]) + 1 if len(near) else None


def test_near_repeat_reference_passes():
    assert check_first_near_repeat(first_near_repeat)


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("from zero", "position 0 is always at distance 0"),
        ("off by one", "one away from the answer"),
        ("squared", "a squared distance is compared with tol"),
        ("first pair only", "not within tol of position 0"),
        ("never none", "the answer is None"),
    ],
)
def test_near_repeat_slips_are_named(kind, says):
    result = check_first_near_repeat(lambda *args: first_near_repeat(*args, kind=kind))
    assert not result and says in result.message, result


def test_near_repeat_other_slips():
    later = lambda *args: None if first_near_repeat(*args) is None else first_near_repeat(*args) + 10  # noqa: E731
    for fn, says in [
        (later, "an earlier position is already within tol"),
        (lambda *args: None, "your search misses it"),
        (lambda *args: "sixty-three", "other than a whole number"),
        (lambda *args: 63.0, "other than a whole number"),
    ]:
        result = check_first_near_repeat(fn)
        assert not result and says in result.message, result


def test_every_exercise_draws_hidden_calls_the_notebook_never_made():
    for spec in (SINUSOIDAL_ENCODING, WAVELENGTH, FIRST_NEAR_REPEAT):
        public = {c.shown("f") for c in spec.public}
        for seed in range(1, 60):
            assert {c.shown("f") for c in spec.cases(seed)} - public, (spec.label, seed)


def test_a_search_that_stops_short_of_max_position_fails_on_the_boundary_call():
    """The statement says 1 … max_position: a public call's answer is max_position itself."""

    def stops_short(d_model, base, tol, max_position):
        k = torch.arange(max_position, dtype=torch.float64)[:, None]  # 0 … max_position − 1
        omega = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
        near = ((2 * (1 - torch.cos(k * omega))).sum(dim=1).sqrt()[1:] < tol).nonzero()
        return int(near[0]) + 1 if len(near) else None

    result = check_first_near_repeat(stops_short)
    assert not result and "(4, 100.0, 0.2, 63)" in result.message and "misses it" in result.message
