"""Checkers for chapter 2, the Clock Room (sinusoidal positional encoding).

* :func:`check_sinusoidal_encoding` (ex-2-1): the table from the formula, both layouts.
* :func:`check_wavelength` (ex-2-2): the wavelength of one column of the table.
* :func:`check_first_near_repeat` (ex-2-4): the first position whose encoding nearly repeats position 0.

Each prints one verdict line and returns a :class:`~transformerland.exercises.checking.CheckResult`.
"""

from __future__ import annotations

import math
import random
from typing import Any

import torch

from ..encodings.sinusoidal import sinusoid_frequencies, sinusoidal_encoding, tensor2tensor_frequencies
from .checking import Check, Mistake, numbers_close, spot_mistake, tensors_close
from .spec import Case, Exercise

__all__ = [
    "EXERCISES",
    "FIRST_NEAR_REPEAT",
    "SINUSOIDAL_ENCODING",
    "TABLE_TOLERANCE",
    "WAVELENGTH",
    "check_first_near_repeat",
    "check_sinusoidal_encoding",
    "check_wavelength",
]

#: How close a student's table must be to the reference, entry by entry.
TABLE_TOLERANCE = 1e-4
_tables_close = tensors_close(atol=TABLE_TOLERANCE)
_numbers_close = numbers_close(rel_tol=1e-4)


def _table(
    num_positions: int,
    omega: torch.Tensor,
    layout: str,
    *,
    swap: bool = False,
    floor_angles: bool = False,
    column_exponents: torch.Tensor | None = None,
) -> torch.Tensor:
    """A sinusoid table, right or wrong in one of the ways a student might go wrong. Shape ``(N, d)``."""
    positions = torch.arange(num_positions, dtype=torch.float64)[:, None]
    if column_exponents is not None:  # every column its own frequency: sin in even columns, cos in odd
        angles = positions * column_exponents[None, :]
        columns = torch.arange(column_exponents.numel())
        return torch.where(columns % 2 == 0, angles.sin(), angles.cos())
    angles = positions * omega[None, :]
    if floor_angles:
        angles = torch.floor(angles)
    first, second = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    if layout == "interleaved":
        return torch.stack([first, second], dim=-1).reshape(num_positions, -1)
    return torch.cat([first, second], dim=-1)


def _known_mistakes(num_positions: int, d_model: int, base: float, layout: str) -> list[Mistake]:
    """Tables produced by typical mistakes, with the problem and the hint that name each one."""
    omega = sinusoid_frequencies(d_model, base)
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    other = "concatenated" if layout == "interleaved" else "interleaved"
    layouts = {
        "interleaved": "sin in the even columns 2i, cos in the odd columns 2i+1",
        "concatenated": "all d/2 sine columns first, then all d/2 cosine columns",
    }
    tables_problems_hints = [
        (
            _table(num_positions, omega, layout, swap=True),
            "sine and cosine are swapped",
            "the formula puts sin(pos/base^(2i/d)) first in each pair and cos second; row 0 should start 0, 1, 0, 1 "
            "in the interleaved layout.",
        ),
        (
            _table(num_positions, omega, other),
            f"with layout={layout!r} the table came out in the {other} layout",
            f"layout={layout!r} means {layouts[layout]}.",
        ),
        (
            _table(num_positions, torch.ones_like(omega), layout),
            "every (sin, cos) pair turns at the same speed, as if the exponent 2i/d were always 0",
            "this is what integer division does: (2 * i) // d_model is 0 for every i < d/2. Use true division (/) "
            "so that the exponent runs from 0 up to (d-2)/d.",
        ),
        (
            _table(num_positions, omega, layout, floor_angles=True),
            "the angles were rounded down to whole numbers",
            "integer division (//) of the position by base^(2i/d) floors the angle; use true division (/).",
        ),
        (
            _table(num_positions, base ** (-pair / d_model), layout),
            "the frequencies fall too slowly: the exponent looks like i/d instead of 2i/d",
            "for the pair in columns (2i, 2i+1) the exponent is 2i/d_model; with i counting pairs, multiply it by 2.",
        ),
        (
            _table(num_positions, base ** (-4 * pair / d_model), layout),
            "the frequencies fall twice too fast: the exponent looks like 4i/d instead of 2i/d",
            "if your loop variable already steps through the even columns 0, 2, 4, … it is 2i itself: "
            "divide it by d_model, do not double it again.",
        ),
        (
            _table(
                num_positions,
                omega,
                layout,
                column_exponents=base ** (-torch.arange(d_model, dtype=torch.float64) / d_model),
            ),
            "each column got its own frequency, so the cosine column of a pair turns slower than its sine column",
            "columns 2i and 2i+1 share one frequency, 1/base^(2i/d): use the pair index i, not the column index.",
        ),
        (
            _table(num_positions, 1 / omega, layout),
            "the frequencies grow instead of shrinking",
            "divide the position by base^(2i/d) (or multiply by base^(-2i/d)), not multiply by base^(2i/d).",
        ),
        *(
            (
                _table(num_positions, tensor2tensor_frequencies(d_model, base), some_layout),
                "the frequencies are spaced as in tensor2tensor and fairseq, log(base)/(d/2 - 1) apart",
                "the paper's spacing is log(base)/(d/2): the slowest frequency is base^(-(d-2)/d), not 1/base.",
            )
            for some_layout in (layout, other)
        ),
        (
            _table(num_positions, sinusoid_frequencies(d_model, 10000.0), layout),
            f"the table ignores base={base}: it matches base=10000",
            "use the base argument in the exponent instead of the constant 10000.",
        ),
    ]
    return [Mistake(table, hint, problem) for table, problem, hint in tables_problems_hints]


def _as_table(check: Check, got: object, shape: tuple[int, int], call: str) -> torch.Tensor:
    """Turn the student's result into a float64 tensor of the expected shape, or stop with a hint."""
    table = check.convert(
        got,
        torch.as_tensor,
        f"{call} returned a {type(got).__name__}, which is not a table of numbers",
        "return a torch.Tensor (or a NumPy array) of shape (num_positions, d_model).",
    )
    check.shape(
        table,
        shape,
        f"{call} has shape {tuple(table.shape)}, expected {shape}",
        "rows are positions 0 … num_positions-1 and columns are the d_model dimensions.",
    )
    check.that(
        table.is_floating_point(),
        f"{call} has dtype {table.dtype}; the sines and cosines were rounded to integers",
        "create the table as floats, e.g. torch.zeros(num_positions, d_model) (float32 by default).",
    )
    table = table.double()
    check.that(
        bool(torch.isfinite(table).all()),
        f"{call} contains NaN or infinite values",
        "look for a division by zero or a power that overflows in your exponent.",
    )
    return table


def _table_cases(seed: int) -> list[Case]:
    """The defaults, small and large tables, an odd base, both layouts; other sizes and bases for other seeds."""
    calls: list[tuple[int, int, float, str]] = [
        (50, 64, 10000.0, "interleaved"),
        (12, 6, 10000.0, "interleaved"),
        (1, 2, 10000.0, "interleaved"),
        (40, 8, 500.0, "interleaved"),
        (16, 8, 10000.0, "concatenated"),
        (30, 12, 10.0, "concatenated"),
    ]
    first = (16, 8)
    if seed != 0:
        draw = random.Random(seed)
        first = (draw.randrange(8, 24), 2 * draw.randrange(2, 6))
        calls = [
            (draw.randrange(30, 70), 2 * draw.randrange(16, 40), 10000.0, "interleaved"),
            (draw.randrange(8, 16), 2 * draw.randrange(2, 5), 10000.0, "interleaved"),
            (1, 2, 10000.0, "interleaved"),
            (draw.randrange(30, 50), 8, draw.choice([100.0, 500.0, 2000.0]), "interleaved"),
            (draw.randrange(10, 20), 2 * draw.randrange(3, 6), 10000.0, "concatenated"),
            (draw.randrange(20, 40), 12, draw.choice([5.0, 10.0, 50.0]), "concatenated"),
        ]
    return [Case(first)] + [Case((n, d), {"base": base, "layout": layout}) for n, d, base, layout in calls]


def _judge_table(check: Check, spec: Exercise, case: Case, got: Any, expected: torch.Tensor) -> None:
    (num_positions, d_model), base = case.args, case.kwargs.get("base", 10000.0)
    layout = case.kwargs.get("layout", "interleaved")
    call = f"fn({num_positions}, {d_model}" + (f", base={base}, layout={layout!r})" if case.kwargs else ")")
    table = _as_table(check, got, (num_positions, d_model), call)
    difference = (table - expected.double()).abs()
    worst = float(difference.max())
    problem, hint = "", ""
    if worst > TABLE_TOLERANCE:
        row, column = divmod(int(difference.argmax()), d_model)
        unknown = Mistake(
            None,
            problem=f"differs from the formula by up to {worst:.3g}, first at position {row}, column {column}",
            hint="column 2i holds sin(pos / base^(2i/d)) and column 2i+1 holds cos of the same angle; "
            "compute that one entry by hand and compare.",
        )
        mistakes = _known_mistakes(num_positions, d_model, base, layout)
        found = spot_mistake(table, mistakes, _tables_close, unknown)
        problem, hint = found.problem, found.hint
    check.that(worst <= TABLE_TOLERANCE, f"{call}: {problem}", hint)


SINUSOIDAL_ENCODING = Exercise(
    label="ex-2-1",
    what="sinusoidal table, both layouts",
    checker="check_sinusoidal_encoding",
    function="my_sinusoidal_encoding",
    signature='(num_positions, d_model, base=10000.0, layout="interleaved") -> Tensor (num_positions, d_model): '
    "the table from the formula",
    cases=_table_cases,
    reference=sinusoidal_encoding,
    judge=_judge_table,
)

check_sinusoidal_encoding = SINUSOIDAL_ENCODING.checker_function()


def _reference_wavelength(column: int, d_model: int, base: float) -> float:
    return 2 * math.pi / float(sinusoid_frequencies(d_model, base)[column // 2])


def _wavelength_mistakes(column: int, d_model: int, base: float) -> list[Mistake]:
    """Wavelengths from typical slips, with the problem and the hint that name each one."""
    expected = _reference_wavelength(column, d_model, base)
    pair = column // 2
    return [
        Mistake(
            expected / (2 * math.pi),
            problem="that is the wavelength divided by 2π",
            hint="a full turn of the hand is 2π radians: the wavelength is 2π divided by the frequency.",
        ),
        Mistake(
            2 * math.pi / expected,
            problem="that is the frequency (radians per position), not the wavelength",
            hint="the wavelength is the number of positions for one full turn: 2π / frequency.",
        ),
        Mistake(
            2 * math.pi * base ** (2 * column / d_model),
            problem="the column number was used as the pair index i",
            hint="columns 2i and 2i+1 form pair i, whose exponent is 2i/d: take i = column // 2.",
        ),
        Mistake(
            2 * math.pi * base ** (column / d_model),
            problem="the odd column got an exponent of its own",
            hint="an odd column 2i+1 holds the cosine of the angle in column 2i, so it has the same wavelength.",
        ),
        Mistake(
            2 * math.pi * base ** (pair / d_model),
            problem="the exponent looks like i/d instead of 2i/d",
            hint="pair i has frequency 1/base^(2i/d); remember the factor 2.",
        ),
    ]


def _wavelength_cases(seed: int) -> list[Case]:
    if seed == 0:
        calls = [(256, 512, 10000.0), (257, 512, 10000.0), (7, 16, 100.0), (0, 64, 10000.0), (1, 64, 10000.0)]
        calls += [(62, 64, 10000.0), (10, 12, 10.0)]
    else:
        draw = random.Random(seed)
        d_model = draw.choice([32, 64, 128, 256])
        even = 2 * draw.randrange(1, d_model // 2)
        calls = [
            (even, d_model, 10000.0),
            (even + 1, d_model, 10000.0),
            (0, d_model, 500.0),
            (d_model - 1, d_model, 10.0),
        ]
    return [Case((column, d_model), {"base": base}) for column, d_model, base in calls]


def _judge_wavelength(check: Check, spec: Exercise, case: Case, got: Any, expected: float) -> None:
    (column, d_model), base = case.args, case.kwargs["base"]
    call = f"fn({column}, {d_model}, base={base})"
    value = check.convert(
        got,
        float,  # type: ignore[arg-type]
        f"{call} returned {got!r}, not a single number",
        "return one number: how many positions it takes that column to repeat.",
    )
    unknown = Mistake(
        None,
        problem="that is not the wavelength of this column",
        hint="pair i = column // 2 turns at 1/base^(2i/d) radians per position; one turn is 2π radians.",
    )
    found = spot_mistake(value, _wavelength_mistakes(column, d_model, base), _numbers_close, unknown)
    check.that(_numbers_close(value, expected), f"{call} = {value:.6g}: {found.problem}", found.hint)


WAVELENGTH = Exercise(
    label="ex-2-2",
    what="wavelengths",
    checker="check_wavelength",
    function="wavelength",
    signature="(column: int, d_model: int, base=10000.0) -> float: the wavelength, in positions, of that column",
    cases=_wavelength_cases,
    reference=_reference_wavelength,
    judge=_judge_wavelength,
)

check_wavelength = WAVELENGTH.checker_function()


def _distances_from_origin(d_model: int, base: float, max_position: int) -> torch.Tensor:
    """``‖PE(k) - PE(0)‖`` for ``k = 0 … max_position``, shape ``(max_position + 1,)``."""
    k = torch.arange(max_position + 1, dtype=torch.float64)[:, None]
    return (2 * (1 - torch.cos(k * sinusoid_frequencies(d_model, base))).sum(-1)).sqrt()


def _reference_first_near_repeat(d_model: int, base: float, tol: float, max_position: int) -> int | None:
    near = (_distances_from_origin(d_model, base, max_position)[1:] < tol).nonzero()
    return int(near[0]) + 1 if len(near) else None


def _near_repeat_hint(
    got: int | None, expected: int | None, d_model: int, base: float, tol: float, max_position: int
) -> str:
    """The likely mistake behind a wrong answer to ex-2-4."""
    if got == 0:
        return "position 0 is always at distance 0 from itself: start the search at position 1."
    if got is not None and not 1 <= got <= max_position:
        return f"the answer must be a position between 1 and max_position ({max_position}), or None."
    if expected is None:
        return (
            f"no position up to {max_position} is within {tol} of position 0: return None when the search finds "
            "nothing, and compare the Euclidean distance ‖PE(k) - PE(0)‖ with tol itself (not its square)."
        )
    if got is None:
        return f"there is such a position within 1 … {max_position}: search every position up to and including it."
    if abs(got - expected) == 1:
        return "one away from the answer: row r of sinusoidal_encoding(n, d) is position r; check your offsets."
    if got < expected:
        distance = float(_distances_from_origin(d_model, base, got)[got])
        return (
            f"‖PE({got}) - PE(0)‖ = {distance:.3f}, not below {tol}: use the Euclidean distance of the whole "
            "vectors, with the requested d_model and base."
        )
    return "an earlier position is already within tol of position 0: check every position from 1 upwards, in order."


def _near_repeat_cases(seed: int) -> list[Case]:
    if seed == 0:
        calls = [(4, 100.0, 0.2, 1000), (4, 10.0, 0.2, 1000), (6, 10.0, 0.5, 1000), (8, 10.0, 0.5, 5000)]
        calls += [(4, 10.0, 0.2, 300), (64, 10000.0, 0.5, 2000)]
    else:
        draw = random.Random(seed)
        calls = [(4, draw.choice([20.0, 50.0, 200.0]), 0.3, 3000), (6, draw.choice([5.0, 30.0]), 0.6, 3000)]
        calls += [(4, 10.0, 0.2, draw.randrange(100, 350)), (32, 10000.0, 0.4, 1500)]
    return [Case(call) for call in calls]


def _judge_near_repeat(check: Check, spec: Exercise, case: Case, got: Any, expected: int | None) -> None:
    d_model, base, tol, max_position = case.args
    call = f"fn({d_model}, {base}, {tol}, {max_position})"
    if got is not None:
        got = check.convert(
            got,
            int,  # type: ignore[arg-type]
            f"{call} returned {got!r}, not a position",
            "return a whole number (the position) or None.",
        )
    hint = "" if got == expected else _near_repeat_hint(got, expected, d_model, base, tol, max_position)
    check.that(got == expected, f"{call} returned {got}", hint)


FIRST_NEAR_REPEAT = Exercise(
    label="ex-2-4",
    what="first near-repeats",
    checker="check_first_near_repeat",
    function="first_near_repeat",
    signature="(d_model, base, tol, max_position) -> the first k in 1 … max_position with ‖PE(k) − PE(0)‖ < tol, "
    "or None",
    cases=_near_repeat_cases,
    reference=_reference_first_near_repeat,
    judge=_judge_near_repeat,
)

check_first_near_repeat = FIRST_NEAR_REPEAT.checker_function()


#: Every exercise of the chapter with a checker, in order.
EXERCISES = [SINUSOIDAL_ENCODING, WAVELENGTH, FIRST_NEAR_REPEAT]
