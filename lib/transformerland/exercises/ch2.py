"""Exercises of chapter 2, the Clock Room (sinusoidal positional encoding): the worked example of the format.

* :data:`SINUSOIDAL_ENCODING` (ex-2-1): the table from the formula, both layouts.
* :data:`WAVELENGTH` (ex-2-2): the wavelength of one column of the table.
* :data:`FIRST_NEAR_REPEAT` (ex-2-4): the first position whose encoding nearly repeats position 0.
"""

from __future__ import annotations

import math
import random

import torch

from ..encodings.sinusoidal import sinusoid_frequencies, sinusoidal_encoding, tensor2tensor_frequencies
from .exercise import Exercise, Number, Slip, Tensor, call

__all__ = [
    "EXERCISES",
    "FIRST_NEAR_REPEAT",
    "SINUSOIDAL_ENCODING",
    "WAVELENGTH",
    "check_first_near_repeat",
    "check_sinusoidal_encoding",
    "check_wavelength",
]

# --- ex-2-1: the table ------------------------------------------------------------------------------------


def _table(angles: torch.Tensor, layout: str, swap: bool = False) -> torch.Tensor:
    """The table ``(N, d)`` of the sines and cosines of ``angles`` ``(N, d/2)``, cosines first if ``swap``."""
    first, second = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    if layout == "interleaved":
        return torch.stack([first, second], dim=-1).flatten(1)
    return torch.cat([first, second], dim=-1)


def _angles(positions: int, frequencies: torch.Tensor) -> torch.Tensor:
    """``m · ω_i`` for every position ``m`` and pair ``i``: ``(positions, d/2)``."""
    return torch.arange(positions, dtype=torch.float64)[:, None] * frequencies


def _other(layout: str) -> str:
    return "concatenated" if layout == "interleaved" else "interleaved"


def _slipped_frequencies(exponent: float):
    """The slip of a table whose pair ``i`` turns at ``base^(-exponent·i/d)`` instead of ``base^(-2i/d)``."""

    def table(positions: int, d_model: int, base: float = 10000.0, layout: str = "interleaved") -> torch.Tensor:
        pair = torch.arange(d_model // 2, dtype=torch.float64)
        return _table(_angles(positions, base ** (-exponent * pair / d_model)), layout)

    return table


def _column_frequencies(positions: int, d_model: int, base: float = 10000.0, layout: str = "interleaved"):
    """Each column with a frequency of its own (the cosine column of a pair turning slower than its sine)."""
    own = _angles(positions, base ** (-torch.arange(d_model, dtype=torch.float64) / d_model))
    return torch.where(torch.arange(d_model) % 2 == 0, own.sin(), own.cos())


def _tensor2tensor(got: object, n: int, d: int, base: float = 10000.0, layout: str = "interleaved") -> bool:
    """Whether ``got`` is the table with tensor2tensor's and fairseq's spacing, in either layout."""
    angles = _angles(n, tensor2tensor_frequencies(d, base))
    return any(_CLOSE.close(got, _table(angles, one)) for one in (layout, _other(layout)))


_CLOSE = Tensor(atol=1e-4)
_EXPONENT_HINT = (
    "count what your i stands for, pairs (0, 1, 2, …) or columns (0, 2, 4, …), and write the exponent with it."
)

SINUSOIDAL_ENCODING = Exercise(
    "ex-2-1",
    "my_sinusoidal_encoding",
    checker="check_sinusoidal_encoding",
    what="sinusoidal table, both layouts",
    reference=sinusoidal_encoding,
    withheld=(
        "transformerland.encodings.sinusoidal.sinusoidal_encoding",
        "transformerland.encodings.sinusoidal.sinusoid_frequencies",
    ),
    public=[
        call(16, 8),
        call(50, 64),
        call(12, 6),
        call(1, 2),
        call(40, 8, base=500.0),
        call(16, 8, layout="concatenated"),
        call(30, 12, base=10.0, layout="concatenated"),
    ],
    hidden=lambda r: [
        call(r.randrange(8, 24), 2 * r.randrange(2, 6)),
        call(r.randrange(30, 70), 2 * r.randrange(16, 40)),
        call(1, 2),
        call(r.randrange(30, 50), 8, base=r.choice([100.0, 500.0, 2000.0])),
        call(r.randrange(10, 20), 2 * r.randrange(3, 6), layout="concatenated"),
        call(r.randrange(20, 40), 12, base=r.choice([5.0, 10.0, 50.0]), layout="concatenated"),
    ],
    answer=_CLOSE,
    slips=[
        Slip(
            when=lambda got, *args, **kwargs: not torch.as_tensor(got).is_floating_point(),
            says="your table holds whole numbers: the sines and cosines were rounded when they were stored.",
            then="look at the dtype of the tensor you write the values into.",
        ),
        Slip(
            lambda n, d, base=10000.0, layout="interleaved": _table(
                _angles(n, sinusoid_frequencies(d, base)), layout, True
            ),
            says="in each pair, sine and cosine sit in each other's places: look at what row 0 holds.",
            then="at position 0 every angle is 0: which of sin and cos is 0 there, and in which column?",
        ),
        Slip(
            lambda n, d, base=10000.0, layout="interleaved": _table(
                _angles(n, sinusoid_frequencies(d, base)), _other(layout)
            ),
            says="the values are right but in the other layout than the one asked for ({layout}).",
            then="interleaved alternates sine and cosine column by column; concatenated puts all sines first.",
        ),
        Slip(
            _slipped_frequencies(0.0),
            says="every pair turns at the same speed: the exponent came out 0 for every pair. Look at how you divide.",
            then="an integer division drops the fraction, and the exponent must be a fraction between 0 and 1.",
        ),
        Slip(
            lambda n, d, base=10000.0, layout="interleaved": _table(
                torch.floor(_angles(n, sinusoid_frequencies(d, base))), layout
            ),
            says="the angles were rounded down to whole radians somewhere before the sine and cosine.",
            then="an integer division of the position, or an int() of the angle, floors it: the angle keeps its"
            " fraction.",
        ),
        Slip(
            _slipped_frequencies(1.0),
            says="your frequencies fall too slowly along the row: the slowest pair's wavelength is far too short."
            " Look at the exponent.",
            then=_EXPONENT_HINT,
        ),
        Slip(
            _slipped_frequencies(4.0),
            says="your frequencies fall twice as fast as they should along the row. Look at the exponent.",
            then=_EXPONENT_HINT,
        ),
        Slip(
            _column_frequencies,
            says="the two columns of a pair turn at different speeds, so a sine and its cosine no longer share an"
            " angle.",
            then="the frequency belongs to the pair, not to the column.",
        ),
        Slip(
            lambda n, d, base=10000.0, layout="interleaved": _table(
                _angles(n, 1 / sinusoid_frequencies(d, base)), layout
            ),
            says="your frequencies grow along the row instead of shrinking: the first pair should turn fastest.",
            then="check whether you multiply by the power of the base where the formula divides.",
        ),
        Slip(
            when=_tensor2tensor,
            says="your frequencies are spaced as tensor2tensor and fairseq space them, not as the paper does:"
            " compare your slowest pair's frequency with the formula's.",
            then="count the pairs, d/2 of them, and work out the paper's exponent for the last one: is it 1?",
        ),
        Slip(
            lambda n, d, base=10000.0, layout="interleaved": _table(
                _angles(n, sinusoid_frequencies(d, 10000.0)), layout
            ),
            says="the table ignores the base it was given ({base}): it matches base 10000.",
            then="the base argument has to reach the exponent.",
        ),
    ],
    otherwise=Slip(
        says="compute one entry by hand (a small position, a middle column) and compare it with yours.",
        then="write out the angles of columns 2i and 2i+1 at position m, then check which of your columns hold which.",
    ),
)

# --- ex-2-2: a column's wavelength ------------------------------------------------------------------------


def _wavelength(column: int, d_model: int, base: float = 10000.0) -> float:
    """Positions it takes column ``column`` of the table to repeat."""
    return 2 * math.pi / float(sinusoid_frequencies(d_model, base)[column // 2])


def _hidden_wavelengths(r: random.Random) -> list:
    d_model = r.choice([32, 64, 128, 256])
    even = 2 * r.randrange(1, d_model // 2)
    return [
        call(even, d_model),
        call(even + 1, d_model),
        call(0, d_model, base=500.0),
        call(d_model - 1, d_model, base=10.0),
    ]


WAVELENGTH = Exercise(
    "ex-2-2",
    "wavelength",
    checker="check_wavelength",
    what="wavelengths",
    reference=_wavelength,
    withheld=("transformerland.encodings.sinusoidal.sinusoid_frequencies",),
    public=[
        call(256, 512),
        call(257, 512),
        call(7, 16, base=100.0),
        call(0, 64),
        call(1, 64),
        call(62, 64),
        call(10, 12, base=10.0),
    ],
    hidden=_hidden_wavelengths,
    answer=Number(rel=1e-4),
    slips=[
        Slip(
            lambda column, d, base=10000.0: _wavelength(column, d, base) / (2 * math.pi),
            says="your answer is 2π times too small: one full turn of a hand is more than one radian.",
            then="a wavelength counts the positions it takes the angle to grow by a full turn.",
        ),
        Slip(
            lambda column, d, base=10000.0: 2 * math.pi / _wavelength(column, d, base),
            says="that is a frequency (radians per position), not a wavelength (positions per turn).",
            then="the two are related through the angle of one full turn.",
        ),
        Slip(
            lambda column, d, base=10000.0: 2 * math.pi * base ** (2 * column / d),
            says="for this column the exponent is too large: the column's number was used where the pair's belongs.",
            then="a pair is two columns: how many whole pairs come before column {column}?",
        ),
        Slip(
            lambda column, d, base=10000.0: 2 * math.pi * base ** (column / d),
            says="this odd column got a wavelength different from its even partner's.",
            then="an odd column holds the cosine of the same angle as the column just before it.",
        ),
        Slip(
            lambda column, d, base=10000.0: _wavelength(column, d, base) * 180 / math.pi,
            says="your answer is about 57.3 times too large: a full turn was counted in degrees, and the"
            " angles of the table are in radians.",
            then="the angle m·ω grows by ω radians per position: how many radians make one turn?",
        ),
        Slip(
            lambda column, d, base=10000.0: _wavelength(column, d, 10000.0),
            says="the wavelength ignores the base it was given ({base}): it matches base 10000.",
            then="the base argument has to reach the exponent.",
        ),
        Slip(
            lambda column, d, base=10000.0: 2 * math.pi * base ** (column // 2 / d),
            says="your exponent is half what it should be. Look at the factor in front of the pair's index.",
            then="the formula's exponent is written with the pair's index; check how it is scaled by d.",
        ),
    ],
    otherwise=Slip(
        says="work out one wavelength by hand, column 0 (the fastest pair) for instance, and compare.",
        then="write down how far a pair's angle grows from one position to the next, then how many positions"
        " make one turn.",
    ),
)

# --- ex-2-4: the first near-repeat ------------------------------------------------------------------------


def _distances_from_origin(d_model: int, base: float, max_position: int) -> torch.Tensor:
    """``‖PE(k) - PE(0)‖`` for ``k = 0 … max_position``, shape ``(max_position + 1,)``."""
    k = torch.arange(max_position + 1, dtype=torch.float64)[:, None]
    return (2 * (1 - torch.cos(k * sinusoid_frequencies(d_model, base))).sum(-1)).sqrt()


def _first_near_repeat(d_model: int, base: float, tol: float, max_position: int) -> int | None:
    near = (_distances_from_origin(d_model, base, max_position)[1:] < tol).nonzero()
    return int(near[0]) + 1 if len(near) else None


def _position(got: object) -> bool:
    return isinstance(got, int) and not isinstance(got, bool)


def _squared(got: object, d_model: int, base: float, tol: float, max_position: int) -> bool:
    """Whether ``got`` is the answer for ``tol²`` or ``√tol``: a squared distance compared with ``tol``, or the like."""
    right = _first_near_repeat(d_model, base, tol, max_position)
    others = {_first_near_repeat(d_model, base, t, max_position) for t in (tol * tol, math.sqrt(tol))}
    return _position(got) and got != right and got in others


FIRST_NEAR_REPEAT = Exercise(
    "ex-2-4",
    "first_near_repeat",
    checker="check_first_near_repeat",
    what="first near-repeats",
    reference=_first_near_repeat,
    public=[
        call(4, 100.0, 0.2, 1000),
        call(4, 10.0, 0.2, 1000),
        call(6, 10.0, 0.5, 1000),
        call(8, 10.0, 0.5, 5000),
        call(4, 10.0, 0.2, 300),
        call(64, 10000.0, 0.5, 2000),
        call(4, 100.0, 0.2, 63),  # the answer is max_position itself: "1 … max_position" includes it
    ],
    hidden=lambda r: [
        call(4, r.choice([20.0, 50.0, 200.0]), 0.3, 3000),
        call(6, r.choice([5.0, 30.0]), 0.6, 3000),
        call(4, 10.0, 0.2, r.randrange(100, 350)),
        call(32, 10000.0, 0.4, 1500),
    ],
    slips=[
        Slip(
            when=lambda got, *args: got is not None and not _position(got),
            says="it returned something other than a whole number: the answer is a position (a Python int) or None.",
            then="int(…) turns a tensor's single entry into a Python int.",
        ),
        Slip(
            when=lambda got, *args: got == 0,
            says="position 0 is always at distance 0 from itself: the question is about the positions after it.",
        ),
        Slip(
            when=lambda got, d, base, tol, max_position: _position(got) and not 1 <= got <= max_position,
            says="the answer must be a position from 1 to max_position ({max_position}), or None.",
        ),
        Slip(
            when=lambda got, *args: _position(got) and _first_near_repeat(*args) is None,
            says="no position up to max_position comes within tol of position 0 here: the answer is None.",
            then="check the distance you compare with tol (the Euclidean norm itself, not its square), and what"
            " your search returns when it finds nothing.",
        ),
        Slip(
            when=lambda got, *args: got is None,
            says="there is such a position within 1 … max_position: your search misses it.",
            then="does your search reach max_position itself?",
        ),
        Slip(
            when=_squared,
            says="your answer is the first position within tol² (or √tol) of position 0: a squared distance is"
            " compared with tol, or a distance with tol squared.",
            then="tol bounds the distance itself, the length of PE(k) − PE(0).",
        ),
        Slip(
            when=lambda got, *args: abs(got - _first_near_repeat(*args)) == 1,
            says="one away from the answer: check which position each of your rows stands for.",
        ),
        Slip(
            when=lambda got, *args: got < _first_near_repeat(*args),
            says="the position you returned is not within tol of position 0: check the distance you compute.",
            then="the distance is over the whole vector, for the d_model and base you were given.",
        ),
        Slip(
            when=lambda got, *args: got > _first_near_repeat(*args),
            says="an earlier position is already within tol of position 0: the search must return the first one.",
        ),
    ],
)

#: Every exercise of the chapter with a checker, in order.
EXERCISES = [SINUSOIDAL_ENCODING, WAVELENGTH, FIRST_NEAR_REPEAT]

check_sinusoidal_encoding = SINUSOIDAL_ENCODING.checker_function()
check_wavelength = WAVELENGTH.checker_function()
check_first_near_repeat = FIRST_NEAR_REPEAT.checker_function()
