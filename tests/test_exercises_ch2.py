"""Chapter 2's checkers: the reference answers pass, typical mistakes fail with the hint that names them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformerland.encodings import sinusoidal_encoding, tensor2tensor_encoding
from transformerland.exercises import VERDICT_PATTERN
from transformerland.exercises.ch2 import check_first_near_repeat, check_sinusoidal_encoding, check_wavelength

# --- ex-2-1: the table from the formula ----------------------------------------------------------


def reference_encoding(num_positions, d_model, base=10000.0, layout="interleaved"):
    position = torch.arange(num_positions, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = position / base ** (two_i / d_model)
    if layout == "interleaved":
        table = torch.zeros(num_positions, d_model, dtype=torch.float64)
        table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
        return table.float()
    return torch.cat([angle.sin(), angle.cos()], dim=1).float()


def loop_encoding(num_positions, d_model, base=10000.0, layout="interleaved", *, mistake=None):
    """A student's loop version of the formula, with one typical mistake switched on."""
    table = np.zeros((num_positions, d_model))
    for pos in range(num_positions):
        for i in range(d_model // 2):
            exponent = {
                None: 2 * i / d_model,
                "integer division": (2 * i) // d_model,
                "i instead of 2i": i / d_model,
                "2i doubled": 2 * (2 * i) / d_model,
            }.get(mistake, 2 * i / d_model)
            angle = pos / base**exponent
            if mistake == "floor":
                angle = pos // base**exponent
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
    def student(num_positions, d_model, base=10000.0, layout="interleaved"):
        return loop_encoding(num_positions, d_model, base, layout, mistake=mistake)

    return student


def test_reference_and_library_and_numpy_loop_pass(capsys):
    assert check_sinusoidal_encoding(reference_encoding)
    assert check_sinusoidal_encoding(sinusoidal_encoding)
    assert check_sinusoidal_encoding(with_mistake(None))
    line = capsys.readouterr().out.splitlines()[-1]
    match = VERDICT_PATTERN.match(line)
    assert match and match["exercise"] == "ex-2-1" and match["verdict"] == "PASSED"


@pytest.mark.parametrize(
    ("mistake", "problem", "hint"),
    [
        ("swapped", "sine and cosine are swapped", "sin(pos/base^(2i/d)) first"),
        ("integer division", "as if the exponent 2i/d were always 0", "integer division"),
        ("floor", "angles were rounded down", "integer division (//)"),
        ("i instead of 2i", "exponent looks like i/d instead of 2i/d", "multiply it by 2"),
        ("2i doubled", "exponent looks like 4i/d instead of 2i/d", "do not double it again"),
        ("column exponent", "each column got its own frequency", "use the pair index i"),
        ("ignores layout", "came out in the interleaved layout", "all d/2 sine columns first"),
        ("constant base", "ignores base=500.0", "use the base argument"),
    ],
)
def test_typical_mistakes_are_named(mistake, problem, hint, capsys):
    result = check_sinusoidal_encoding(with_mistake(mistake))
    assert not result
    assert problem in result.message and hint in result.hint
    assert "NOT YET" in capsys.readouterr().out


def test_other_wrong_tables():
    def multiplied(num_positions, d_model, base=10000.0, layout="interleaved"):
        return sinusoidal_encoding(num_positions, d_model, 1 / base, layout)

    def fairseq(num_positions, d_model, base=10000.0, layout="interleaved"):
        return tensor2tensor_encoding(num_positions, d_model, base)

    def integer_table(num_positions, d_model, base=10000.0, layout="interleaved"):
        return sinusoidal_encoding(num_positions, d_model, base, layout).long()

    def transposed(num_positions, d_model, base=10000.0, layout="interleaved"):
        return sinusoidal_encoding(num_positions, d_model, base, layout).T

    def no_layout(num_positions, d_model, base=10000.0):
        return sinusoidal_encoding(num_positions, d_model, base)

    def nothing_yet(num_positions, d_model, base=10000.0, layout="interleaved"):
        raise NotImplementedError

    def a_little_off(num_positions, d_model, base=10000.0, layout="interleaved"):
        return sinusoidal_encoding(num_positions, d_model, base, layout) + 0.01

    cases = [
        (multiplied, "frequencies grow instead of shrinking", "not multiply"),
        (fairseq, "spaced as in tensor2tensor and fairseq", "log(base)/(d/2)"),
        (integer_table, "dtype torch.int64", "as floats"),
        (transposed, "has shape (8, 16), expected (16, 8)", "rows are positions"),
        (no_layout, "unexpected keyword argument 'layout'", "look at line"),
        (nothing_yet, "not written yet", "stub"),
        (a_little_off, "differs from the formula by up to 0.01", "compute that one entry by hand"),
    ]
    for fn, problem, hint in cases:
        result = check_sinusoidal_encoding(fn)
        assert not result, fn.__name__
        assert problem in result.message and hint in result.hint, (fn.__name__, result)


# --- ex-2-2: a wavelength -------------------------------------------------------------------------------


def reference_wavelength(column, d_model, base=10000.0):
    i = column // 2
    return 2 * math.pi * base ** (2 * i / d_model)


def test_wavelength_reference_passes():
    assert check_wavelength(reference_wavelength)
    assert reference_wavelength(256, 512) == pytest.approx(200 * math.pi)


@pytest.mark.parametrize(
    ("fn", "problem", "hint"),
    [
        (lambda c, d, base=10000.0: base ** (2 * (c // 2) / d), "divided by 2π", "2π divided by the frequency"),
        (lambda c, d, base=10000.0: base ** (-2 * (c // 2) / d), "that is the frequency", "2π / frequency"),
        (lambda c, d, base=10000.0: 2 * math.pi * base ** (2 * c / d), "column number was used", "i = column // 2"),
        (lambda c, d, base=10000.0: 2 * math.pi * base ** (c / d), "odd column got an exponent", "same wavelength"),
        (lambda c, d, base=10000.0: 2 * math.pi * base ** ((c // 2) / d), "like i/d instead of 2i/d", "factor 2"),
        (lambda c, d, base=10000.0: 360 * base ** (2 * (c // 2) / d), "not the wavelength", "2π radians"),
        (lambda c, d, base=10000.0: [1.0, 2.0], "not a single number", "return one number"),
    ],
)
def test_wavelength_mistakes_are_named(fn, problem, hint):
    result = check_wavelength(fn)
    assert not result
    assert problem in result.message and hint in result.hint, result


# --- ex-2-4: the first near-repeat ----------------------------------------------------------------------


def reference_first_near_repeat(d_model, base, tol, max_position):
    table = sinusoidal_encoding(max_position + 1, d_model, base).double()
    distance = (table - table[0]).norm(dim=1)
    near = (distance[1:] < tol).nonzero()
    return int(near[0]) + 1 if len(near) else None


def test_near_repeat_reference_passes():
    assert check_first_near_repeat(reference_first_near_repeat)
    assert reference_first_near_repeat(4, 100.0, 0.2, 1000) == 63


def near_repeat_variant(kind):
    def student(d_model, base, tol, max_position):
        table = sinusoidal_encoding(max_position + 1, d_model, base).double()
        distance = (table - table[0]).norm(dim=1)
        if kind == "from zero":
            near = (distance < tol).nonzero()
            return int(near[0]) if len(near) else None
        if kind == "squared":
            near = (distance[1:] ** 2 < tol).nonzero()
        elif kind == "short range":
            near = (distance[1:max_position] < tol).nonzero()
        elif kind == "first column only":
            near = ((table[1:, :2] - table[0, :2]).norm(dim=1) < tol).nonzero()
        else:
            near = (distance[1:] < tol).nonzero()
        if kind == "off by one":
            return int(near[0]) if len(near) else None
        if kind == "never none":
            return int(near[0]) + 1 if len(near) else max_position
        return int(near[0]) + 1 if len(near) else None

    return student


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        ("from zero", "start the search at position 1"),
        ("off by one", "one away from the answer"),
        ("squared", "use the Euclidean distance of the whole vectors"),
        ("first column only", "use the Euclidean distance of the whole vectors"),
        ("never none", "return None when the search finds nothing"),
    ],
)
def test_near_repeat_mistakes_are_named(kind, hint):
    result = check_first_near_repeat(near_repeat_variant(kind))
    assert not result
    assert hint in result.hint, result


def test_near_repeat_other_mistakes():
    def later(d_model, base, tol, max_position):
        answer = reference_first_near_repeat(d_model, base, tol, max_position)
        return None if answer is None else answer + 10

    def gives_up(d_model, base, tol, max_position):
        return None

    def text(d_model, base, tol, max_position):
        return "sixty-three"

    for fn, hint in [
        (later, "an earlier position is already within tol"),
        (gives_up, "there is such a position"),
        (text, "return a whole number"),
    ]:
        result = check_first_near_repeat(fn)
        assert not result and hint in result.hint, (fn.__name__, result)
