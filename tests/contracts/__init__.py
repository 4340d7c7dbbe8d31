"""The library's contract, one declarative entry per public callable (run by tests/test_contract.py).

Every public callable of ``transformerland`` (each name in a module's ``__all__``) keeps one promise:
given a bad argument it raises a ``ValueError`` or ``TypeError`` **from our own code**, with a
message, within a second; given an unusual but valid argument it either does that or returns what
a reference says is right. An entry says, for each argument, a good value and what kind of value
it is; the kind knows the bad values (wrong types, NaN and infinities, negatives, zero, sizes past
the caps, strings for booleans, integer tensors, wrong shapes, devices this machine lacks) and the
edge values (the smallest sizes, float64 tensors, each option). The test varies one argument at a
time from the good call.

Adding a function = one entry in the file of its area here (a new area: a new file; it is found by
itself)::

    contract(
        "transformerland.encodings.sinusoidal.sinusoid_frequencies",
        d_model=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True),
        reference=lambda out, a: torch.allclose(out, a["base"] ** -(torch.arange(0, a["d_model"], 2) / a["d_model"])),
    )

``reference(result, args) -> bool`` judges a returned result (``args``: the arguments of the call);
without one only bad values are tried. ``call=`` runs something else than the target itself (a
method, a module's forward pass), with the same keyword arguments. ``refuse=`` lists named bad
calls, each a few arguments changed from the good call (:class:`Made` values are made afresh), that
must be refused as any bad value is: the cases a generated value does not reach (a size past a cap
only in product with another, a NaN inside a tensor, an id outside the model's vocabulary).

Wherever a call is refused, a message that opens with an argument's name (``"head_dim must be
even"``) must name an argument of the callable itself, not one of a function it calls.

A plain record type (a dataclass of results) is an entry too: :func:`record` makes one through the
public function that returns it (``example``) and checks what its fields hold (``holds``).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from hypothesis import strategies as st
from transformerland._validation import MAX_SIZE

HUGE = 10**12


@dataclass
class Arg:
    """One argument: a good value, values that must be refused, and valid edge values."""

    good: Any
    bad: st.SearchStrategy = field(default_factory=lambda: st.nothing())
    edge: st.SearchStrategy = field(default_factory=lambda: st.nothing())
    fixed: bool = False  # never varied (a model the call needs, say)
    make: bool = False  # good is a function that makes the value afresh for each call

    def value(self) -> Any:
        return self.good() if self.make else self.good


_NOT_NUMBERS = ["8", [8], True, False, b"8", object()]
_NOT_A_NUMBER = st.sampled_from([None, *_NOT_NUMBERS])


def Size(
    good: int | None,
    *,
    cap: int = MAX_SIZE,
    even: bool = False,
    low: int = 1,
    edges: tuple[int, ...] = (),
    optional: bool = False,
) -> Arg:
    """A whole number from ``low`` to ``cap`` (or ``None``, when ``optional``); ``even`` refuses odd ones."""
    bad = [
        st.sampled_from(_NOT_NUMBERS) if optional else _NOT_A_NUMBER,
        st.integers(min_value=-(10**6), max_value=low - 1),
        st.integers(min_value=cap + 1, max_value=HUGE),
        st.sampled_from([2.5, float("nan"), float("inf"), float(good or 1)]),
    ]
    small = [n for n in range(low, low + 9) if not (even and n % 2)]
    if even:
        bad.append(st.integers(min_value=max(low, 1), max_value=999).filter(lambda n: n % 2))
    return Arg(good, st.one_of(bad), st.sampled_from(small + list(edges) + ([None] if optional else [])))


def Count(good: int, *, low: int = 0, high: int | None = None) -> Arg:
    """A whole number in ``[low, high]`` (a seed, a number of sinks, an index)."""
    bad = [_NOT_A_NUMBER, st.integers(min_value=-(10**6), max_value=low - 1), st.sampled_from([2.5, float("nan")])]
    if high is not None:
        bad.append(st.integers(min_value=high + 1, max_value=HUGE))
    top = low + 5 if high is None else min(high, low + 5)
    return Arg(good, st.one_of(bad), st.integers(min_value=low, max_value=top))


def Number(
    good: float,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    edges: tuple[float, ...] = (),
    optional: bool = False,
    span: tuple[float, float] = (-1e3, 1e3),
) -> Arg:
    """A finite real number in its range (or ``None``, when ``optional``); edge values are drawn within ``span``."""
    bad = [
        st.sampled_from(_NOT_NUMBERS) if optional else _NOT_A_NUMBER,
        st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    ]
    if low is not None:
        bad.append(st.floats(max_value=low, exclude_max=not low_open, allow_nan=False, allow_infinity=False))
    if high is not None:
        bad.append(st.floats(min_value=high, exclude_min=not high_open, allow_nan=False, allow_infinity=False))
    lo = span[0] if low is None else max(low, span[0])
    hi = span[1] if high is None else min(high, span[1])
    inside = st.floats(min_value=lo, max_value=hi, exclude_min=low_open, exclude_max=high_open, allow_nan=False)
    edge = st.one_of(inside, st.sampled_from(list(edges) + [good] + ([None] if optional else [])))
    return Arg(good, st.one_of(bad), edge)


def Bool(good: bool) -> Arg:
    """A real ``bool``: strings, numbers and ``None`` are refused."""
    return Arg(
        good, st.sampled_from(["yes", "no", "", "False", 0, 1, 1.0, None, [True]]), st.sampled_from([True, False])
    )


def Choice(good: str, options: tuple[Any, ...]) -> Arg:
    """One of ``options``."""
    bad = st.one_of(
        st.text(max_size=8).filter(lambda s: s not in options), st.sampled_from([None, 0, str(good).upper() + "!"])
    )
    return Arg(good, bad, st.sampled_from(list(options)))


def Text(good: str) -> Arg:
    """A string."""
    return Arg(good, st.sampled_from([None, 3, b"text", ["text"]]), st.sampled_from([good]))


def Device(good: Any = "cpu", *, optional: bool = True) -> Arg:
    """A device this machine has (``None``: the default, when ``optional``)."""
    missing = ["cuda:99", "tpu", "gpu", "cpu:x", 3, ["cpu"]]
    if not torch.cuda.is_available():
        missing.append("cuda")
    edges = ["cpu", torch.device("cpu")] + ([None] if optional else [])
    return Arg(good, st.sampled_from(missing), st.sampled_from(edges))


def Tensor(
    make: Callable[[], torch.Tensor],
    *,
    kind: str = "float",
    wrong_shapes: tuple[tuple[int, ...], ...] = (),
    edges: tuple[Callable[[], torch.Tensor], ...] = (),
    optional: bool = False,
    finite: bool = False,
) -> Arg:
    """A tensor made by ``make``: ``kind`` ``"float"`` (integers refused), ``"index"`` (floats refused),
    ``"bool"``, ``"any"`` or ``"array"`` (any dtype, and lists too); ``wrong_shapes`` are refused, ``edges``
    are valid unusual ones; ``optional``: ``None`` is valid; ``finite``: positions, frequencies or lengths,
    so a NaN or an infinity among the values is refused (activations pass NaN through, as torch does)."""

    def variants(draw_index: int) -> Any:
        base = make()
        options = [None, "tensor", *(torch.zeros(s, dtype=base.dtype) for s in wrong_shapes)]
        if kind != "array":
            options.append(base.tolist())
        if optional:
            options.remove(None)
        if kind == "float":
            options += [base.round().long(), base > 0, base.to(torch.complex64)]
        elif kind == "index":
            options += [base.float(), base > 0]
        elif kind == "bool":
            options += [base.long(), base.float()]
        if finite:
            for poison in (float("nan"), float("inf"), float("-inf")):
                poisoned = base.double().clone()
                poisoned.view(-1)[0] = poison
                options.append(poisoned)
        return options[draw_index % len(options)]

    bad = st.integers(min_value=0, max_value=50).map(variants)
    edge_makers = list(edges) + ([lambda: make().double()] if kind == "float" else [])
    edge = st.sampled_from(edge_makers).map(lambda f: f()) if edge_makers else st.nothing()
    if optional:
        edge = st.one_of(edge, st.just(None))
    return Arg(make, bad, edge, make=True)


def Fixed(good: Any, *, bad: list[Any] | None = None, make: bool = False) -> Arg:
    """An argument never varied into an edge value (a model, a task); ``bad`` values must be refused.

    ``make=True``: ``good`` is a function that builds the value afresh for each call.
    """
    return Arg(good, st.sampled_from(bad) if bad else st.nothing(), st.nothing(), fixed=not bad, make=make)


@dataclass
class Contract:
    """The promise of one public callable: its arguments' kinds, and a reference for its results."""

    target: str
    args: dict[str, Arg]
    reference: Callable[[Any, dict[str, Any]], bool] | None = None
    call: Callable[..., Any] | None = None
    record: str = ""  # a plain record (no checks of its own): says where what it holds is checked
    raises: tuple[type[Exception], ...] = ()  # documented refusals besides ValueError and TypeError
    run_good: bool = True  # False: the good call is too slow for the fast tier (a loader); bad values only
    refuse: tuple[dict[str, Any], ...] = ()  # named bad calls: arguments changed from the good call
    example: Callable[[], Any] | None = None  # a record: makes one through the public function that returns it
    holds: Callable[[Any], bool] | None = None  # a record: what the example's fields must hold
    slow: bool = False  # the slow tier runs it (a record whose example reads a real model's file)

    def function(self) -> Callable[..., Any]:
        if self.call is not None:
            return self.call
        module, _, name = self.target.rpartition(".")
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj

    def good_args(self) -> dict[str, Any]:
        return {name: arg.value() for name, arg in self.args.items()}

    def refused_args(self, index: int) -> dict[str, Any]:
        """The good call with the ``index``-th named bad call's changes."""
        changes = {k: v.make() if isinstance(v, Made) else v for k, v in self.refuse[index].items()}
        return {**self.good_args(), **changes}


@dataclass(frozen=True)
class Made:
    """A value made afresh for each call (a tensor, a model) in a named bad call of ``refuse=``."""

    make: Callable[[], Any]


def contract(
    target: str,
    *,
    reference: Callable[[Any, dict[str, Any]], bool] | None = None,
    call: Callable[..., Any] | None = None,
    raises: tuple[type[Exception], ...] = (),
    run_good: bool = True,
    refuse: tuple[dict[str, Any], ...] = (),
    **args: Arg,
) -> Contract:
    """One entry: ``target`` is ``module.name`` (or ``module.Class.method`` with ``call=``).

    ``raises``: other errors the function documents as refusals (``FileNotFoundError`` for a path that
    is not there, ``KeyError`` for a name a mapping lacks); ``run_good=False`` for a loader whose good
    call takes seconds (only its bad values are tried); ``refuse``: named bad calls (see the module's docstring).
    """
    return Contract(target, args, reference, call, raises=raises, run_good=run_good, refuse=refuse)


def record(
    target: str, why: str, *, example: Callable[[], Any], holds: Callable[[Any], bool], slow: bool = False
) -> Contract:
    """A plain record type (a dataclass of results), with no checks of its own; ``why`` says where its fields are
    checked. ``example()`` makes one through the public function that returns it; ``holds(it)`` says what its
    fields must hold there; ``slow``: making it takes seconds (the slow tier checks it)."""
    return Contract(target, {}, record=why, example=example, holds=holds, slow=slow)


def close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-5) -> bool:
    """Same shape, and equal within ``tol`` relative to the size of ``b`` (NaN where both are NaN)."""
    a, b = a.detach().double().cpu(), b.detach().double().cpu()
    return a.shape == b.shape and bool(torch.allclose(a, b, rtol=tol, atol=tol, equal_nan=True))


def finite(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return bool(torch.isfinite(x).all())
    return math.isfinite(float(x))


#: What the contract test did in this session, shown in pytest's terminal summary (tests/conftest.py).
COUNTS: Counter[str] = Counter()


def all_contracts() -> list[Contract]:
    """Every entry of every file in this folder (``CONTRACTS`` in each)."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(module.CONTRACTS)
    return found
