"""Exercises of chapter 2, the Clock Room (sinusoidal positional encoding), as specs (words in ``ch2.toml``).

* :data:`SINUSOIDAL_ENCODING` (ex-2-1): the table from the formula, both layouts.
* :data:`WAVELENGTH` (ex-2-2): the wavelength of one column of the table.
* :data:`FIRST_NEAR_REPEAT` (ex-2-4): the first position whose encoding nearly repeats position 0.
"""

from __future__ import annotations

import math
import random
from typing import Any

import torch

from ..encodings.sinusoidal import sinusoid_frequencies, sinusoidal_encoding, tensor2tensor_frequencies
from .checking import Check, Mistake, spot_mistake
from .spec import Case, Exercise, chapter_data, declared

__all__ = [
    "EXERCISES",
    "FIRST_NEAR_REPEAT",
    "SINUSOIDAL_ENCODING",
    "WAVELENGTH",
    "check_first_near_repeat",
    "check_sinusoidal_encoding",
    "check_wavelength",
]

_DATA = chapter_data(__name__)


def _compare_naming(check: Check, spec: Exercise, case: Case, got: Any, expected: Any, **fields: Any) -> None:
    """Record that ``got`` is close to ``expected``; a wrong answer stops with the text ``wrong`` naming the
    problem of the slip it matches (or the text ``unknown``), and that slip's hint (or ``unknown_hint``).

    :func:`~.spec.compare` would stop with the case's problem whatever the slip: here each slip names its own.
    """
    if not spec.tolerance(got, expected):
        unknown = Mistake(None, spec.say("unknown_hint"), spec.say("unknown", **fields))
        found = spot_mistake(got, spec.mistakes(case), spec.tolerance, unknown)
        check.fail(spec.say("wrong", problem=found.problem, **fields), found.hint)
    check.that(True, "", "")


def _table(angles: torch.Tensor, layout: str, swap: bool = False) -> torch.Tensor:
    """The table ``(N, d)`` of the sines and cosines of ``angles`` ``(N, d/2)``, cosines first if ``swap``."""
    first, second = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    if layout == "interleaved":
        return torch.stack([first, second], dim=-1).flatten(1)
    return torch.cat([first, second], dim=-1)


def _table_slips(positions: int, d_model: int, base: float = 10000.0, layout: str = "interleaved") -> dict[str, Any]:
    at = torch.arange(positions, dtype=torch.float64)[:, None]
    omega, pair = sinusoid_frequencies(d_model, base), torch.arange(d_model // 2, dtype=torch.float64)
    columns = torch.arange(d_model, dtype=torch.float64)
    own = at * base ** (-columns / d_model)  # every column its own frequency
    other = "concatenated" if layout == "interleaved" else "interleaved"
    return {
        "swapped": _table(at * omega, layout, swap=True),
        f"as_{other}": _table(at * omega, other),
        "same_speed": _table(at * torch.ones_like(omega), layout),
        "floored": _table(torch.floor(at * omega), layout),
        "i_over_d": _table(at * base ** (-pair / d_model), layout),
        "four_i_over_d": _table(at * base ** (-4 * pair / d_model), layout),
        "column_frequencies": torch.where(columns % 2 == 0, own.sin(), own.cos()),
        "growing": _table(at * (1 / omega), layout),
        "tensor2tensor": _table(at * tensor2tensor_frequencies(d_model, base), layout),
        "tensor2tensor_other_layout": _table(at * tensor2tensor_frequencies(d_model, base), other),
        "base_ignored": _table(at * sinusoid_frequencies(d_model, 10000.0), layout),
    }


def _judge_table(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    """A float table of the reference's shape, finite, close; a wrong one named by its slip, or its worst entry."""
    call, kind = "fn" + case.shown(), type(got).__name__
    table = check.convert(got, torch.as_tensor, *spec.said("not_a_table", call=call, kind=kind))
    shape, expected = tuple(expected.shape), expected.double()
    check.shape(table, shape, *spec.said("shape", call=call, got=tuple(table.shape), expected=shape))
    check.that(table.is_floating_point(), *spec.said("integers", call=call, dtype=table.dtype))
    table = table.double()
    check.that(bool(torch.isfinite(table).all()), *spec.said("not_finite", call=call))
    difference = (table - expected).abs()
    row, column = divmod(int(difference.argmax()), shape[1])
    worst = float(difference.max())
    _compare_naming(check, spec, case, table, expected, call=call, worst=worst, row=row, column=column)


def _table_hidden(seed: int) -> list[tuple[Any, ...]]:
    r = random.Random(seed)
    return [
        (r.randrange(8, 24), 2 * r.randrange(2, 6)),
        (r.randrange(30, 70), 2 * r.randrange(16, 40), {"base": 10000.0, "layout": "interleaved"}),
        (r.randrange(8, 16), 2 * r.randrange(2, 5), {"base": 10000.0, "layout": "interleaved"}),
        (1, 2, {"base": 10000.0, "layout": "interleaved"}),
        (r.randrange(30, 50), 8, {"base": r.choice([100.0, 500.0, 2000.0]), "layout": "interleaved"}),
        (r.randrange(10, 20), 2 * r.randrange(3, 6), {"base": 10000.0, "layout": "concatenated"}),
        (r.randrange(20, 40), 12, {"base": r.choice([5.0, 10.0, 50.0]), "layout": "concatenated"}),
    ]


SINUSOIDAL_ENCODING = declared(
    _DATA,
    "ex-2-1",
    reference=sinusoidal_encoding,
    hidden=_table_hidden,
    slips=_table_slips,
    words=lambda positions, d_model, base=10000.0, layout="interleaved": {"base": base},
    judge=_judge_table,
)


def _wavelength(column: int, d_model: int, base: float) -> float:
    return 2 * math.pi / float(sinusoid_frequencies(d_model, base)[column // 2])


def _wavelength_slips(column: int, d_model: int, base: float) -> dict[str, float]:
    expected = _wavelength(column, d_model, base)
    return {
        "over_two_pi": expected / (2 * math.pi),
        "frequency": 2 * math.pi / expected,
        "column_as_pair": 2 * math.pi * base ** (2 * column / d_model),
        "odd_column": 2 * math.pi * base ** (column / d_model),
        "i_over_d": 2 * math.pi * base ** (column // 2 / d_model),
    }


def _wavelength_hidden(seed: int) -> list[tuple[Any, ...]]:
    r = random.Random(seed)
    d_model = r.choice([32, 64, 128, 256])
    even = 2 * r.randrange(1, d_model // 2)
    calls = [(even, 10000.0), (even + 1, 10000.0), (0, 500.0), (d_model - 1, 10.0)]
    return [(column, d_model, {"base": base}) for column, base in calls]


def _judge_wavelength(check: Check, spec: Exercise, case: Case, got: Any, expected: float) -> None:
    call = "fn" + case.shown()
    value = check.convert(got, float, *spec.said("not_a_number", call=call, got=got))
    _compare_naming(check, spec, case, value, expected, call=call, value=value)


WAVELENGTH = declared(
    _DATA, "ex-2-2", reference=_wavelength, hidden=_wavelength_hidden, slips=_wavelength_slips, judge=_judge_wavelength
)


def _distances_from_origin(d_model: int, base: float, max_position: int) -> torch.Tensor:
    """``‖PE(k) - PE(0)‖`` for ``k = 0 … max_position``, shape ``(max_position + 1,)``."""
    k = torch.arange(max_position + 1, dtype=torch.float64)[:, None]
    return (2 * (1 - torch.cos(k * sinusoid_frequencies(d_model, base))).sum(-1)).sqrt()


def _first_near_repeat(d_model: int, base: float, tol: float, max_position: int) -> int | None:
    near = (_distances_from_origin(d_model, base, max_position)[1:] < tol).nonzero()
    return int(near[0]) + 1 if len(near) else None


def _near_repeat_slip(got: int | None, expected: int | None, max_position: int) -> str:
    """The key of the hint for ``got``, a wrong answer to ex-2-4 (``expected`` is the right one)."""
    if got == 0:
        return "from_zero"
    if got is not None and not 1 <= got <= max_position:
        return "out_of_range"
    if expected is None:
        return "none_within"
    if got is None:
        return "there_is_one"
    if abs(got - expected) == 1:
        return "off_by_one"
    return "too_early" if got < expected else "too_late"


def _judge_near_repeat(check: Check, spec: Exercise, case: Case, got: Any, expected: int | None) -> None:
    (d_model, base, tol, max_position), call = case.args, "fn" + case.shown()
    if got is not None:
        got = check.convert(got, int, *spec.said("not_a_position", call=call, got=got))
    hint = ""
    if got != expected:
        slip = _near_repeat_slip(got, expected, max_position)
        distance = float(_distances_from_origin(d_model, base, got)[got]) if slip == "too_early" else math.nan
        hint = spec.say(slip, got=got, tol=tol, max_position=max_position, distance=distance)
    check.that(got == expected, spec.say("wrong", call=call, got=got), hint)


def _near_repeat_hidden(seed: int) -> list[tuple[Any, ...]]:
    r = random.Random(seed)
    return [
        (4, r.choice([20.0, 50.0, 200.0]), 0.3, 3000),
        (6, r.choice([5.0, 30.0]), 0.6, 3000),
        (4, 10.0, 0.2, r.randrange(100, 350)),
        (32, 10000.0, 0.4, 1500),
    ]


FIRST_NEAR_REPEAT = declared(
    _DATA, "ex-2-4", reference=_first_near_repeat, hidden=_near_repeat_hidden, judge=_judge_near_repeat
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [SINUSOIDAL_ENCODING, WAVELENGTH, FIRST_NEAR_REPEAT]

check_sinusoidal_encoding = SINUSOIDAL_ENCODING.checker_function()
check_wavelength = WAVELENGTH.checker_function()
check_first_near_repeat = FIRST_NEAR_REPEAT.checker_function()
