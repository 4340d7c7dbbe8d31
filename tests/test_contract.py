"""The library keeps its word: every public callable, driven with generated bad and edge-case arguments.

For each entry of ``tests/contracts`` (one per public callable), hypothesis varies one argument of
a good call at a time. A bad value must be refused with a ``ValueError`` or ``TypeError`` raised
in ``transformerland``'s own code, with a message, within a second; an edge value must be refused
the same way or give a result the entry's reference accepts. A public callable (a name in some
module's ``__all__``) without an entry fails :func:`test_every_public_callable_has_a_contract`.
Each entry's named bad calls (``refuse=``) must be refused the same way; a refusal whose message opens
with an argument's name must name one of the callable's own; a record's example must hold what its
entry says. The counts go to pytest's terminal summary (``tests/conftest.py``).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import signal
import time
from pathlib import Path
from typing import Any, Protocol

import pytest
import transformerland
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.contracts import COUNTS, Contract, all_contracts

PACKAGE_DIR = Path(transformerland.__file__).parent
#: Left to their own helper: the exercises' checkers answer a student with a verdict, not an error.
NOT_HERE = ("transformerland.exercises",)
SECOND = 1.0
EXAMPLES = 12

CONTRACTS = {c.target: c for c in all_contracts()}
#: A message that opens with an argument's name: ``head_dim must be even``, ``scaling['factor'] = 0.5 ...``.
OPENS_WITH_A_NAME = re.compile(r"^([a-z_][a-z0-9_]*)(?:\[[^\]]*\]|\.[a-z_]+)* (?:must|=|has|holds|is) ")


def public_callables() -> dict[str, Any]:
    """``module.qualname`` → object, for every callable named in a module's ``__all__`` (defined in the package)."""
    found = {}
    for info in pkgutil.walk_packages(transformerland.__path__, "transformerland."):
        if info.name.startswith(NOT_HERE):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not callable(obj) or not getattr(obj, "__module__", "").startswith("transformerland"):
                continue
            if inspect.isclass(obj) and (issubclass(obj, BaseException) or Protocol in obj.__mro__):
                continue  # an error class, or a protocol (a description of what a task has), is no entry point
            found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_public_callable_has_a_contract():
    callables = public_callables()
    missing = sorted(set(callables) - set(CONTRACTS))
    assert not missing, (
        f"{len(missing)} public callable(s) have no contract entry: {missing}. Add one to tests/contracts/ "
        "(one entry per function: its arguments' kinds and a reference)."
    )
    strays = sorted(t for t, c in CONTRACTS.items() if t not in callables and c.call is None)
    assert not strays, f"entries that name no public callable (a method's entry needs call=): {strays}"
    COUNTS["public callables"] = len(callables)


class _TooSlow(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _TooSlow


def _raised_in_our_code(error: BaseException) -> bool:
    """Whether the innermost frame of ``error``'s traceback lies in the package (not in torch or Python)."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(PACKAGE_DIR.resolve())


def _run(entry: Contract, args: dict[str, Any]) -> tuple[str, Any]:
    """``("refused", error)``, ``("returned", result)``; fails on any other error or on a slow call."""
    function = entry.function()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 10 * SECOND)  # a hang ends here instead of stopping the suite
    start = time.perf_counter()
    try:
        result = function(**args)
        outcome: tuple[str, Any] = ("returned", result)
    except (ValueError, TypeError, *entry.raises) as error:
        outcome = ("refused", error)
    except _TooSlow:
        pytest.fail(f"{entry.target}({_show(args)}) ran for more than {10 * SECOND:.0f} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    if outcome[0] == "refused":
        error = outcome[1]
        assert _raised_in_our_code(error), f"{entry.target}({_show(args)}): a bare {error!r} from outside the library"
        assert str(error).strip(), f"{entry.target}({_show(args)}): an error without a message"
        assert seconds < SECOND, f"{entry.target}({_show(args)}): refused only after {seconds:.1f} s"
        named = OPENS_WITH_A_NAME.match(str(error))
        own = _parameters(function)
        assert named is None or own is None or named[1] in own, (
            f"{entry.target}({_show(args)}): the message names {named[1]!r}, which is no argument of the call "
            f"({sorted(own or ())}): {error}"
        )
    return outcome


def _parameters(function: Any) -> set[str] | None:
    """The names of ``function``'s arguments (``None`` when it takes ``**kwargs`` or has no signature)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters}


def _show(args: dict[str, Any]) -> str:
    def short(v: Any) -> str:
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return f"tensor{tuple(v.shape)} {v.dtype}"
        text = repr(v)
        return text if len(text) < 40 else text[:37] + "..."

    return ", ".join(f"{k}={short(v)}" for k, v in args.items())


@pytest.mark.parametrize(
    "target", [pytest.param(t, marks=pytest.mark.slow) if CONTRACTS[t].slow else t for t in sorted(CONTRACTS)]
)
def test_the_contract_holds(target: str):
    entry = CONTRACTS[target]
    if entry.record:
        example = entry.example()
        assert type(example).__name__ == target.rpartition(".")[2], f"{target}: the example is a {type(example)}"
        assert entry.holds(example), f"{target}: the example does not hold what its entry says: {example!r}"
        COUNTS["records made and checked"] += 1
        return
    COUNTS["callables driven"] += 1
    if entry.run_good:
        good = entry.good_args()
        kind, result = _run(entry, good)
        assert kind == "returned", f"{target}: the good call was refused: {result}"
        if entry.reference is not None:
            assert entry.reference(result, good), f"{target}({_show(good)}): the reference disagrees with {result!r}"
            COUNTS["answered right"] += 1
    varied = [name for name, arg in entry.args.items() if not arg.fixed]
    if not varied:
        return

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def drive(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(varied), label="argument")
        arg = entry.args[name]
        edges = arg.edge if entry.reference is not None else st.nothing()
        which, value = data.draw(st.one_of(arg.bad.map(lambda v: ("bad", v)), edges.map(lambda v: ("edge", v))))
        args = {**entry.good_args(), name: value}
        kind, result = _run(entry, args)
        if which == "bad":
            assert kind == "refused", f"{target}({_show(args)}): the bad {name}={value!r} was accepted"
            COUNTS["refused"] += 1
        elif kind == "refused":
            COUNTS["refused"] += 1
        else:
            assert entry.reference(result, args), f"{target}({_show(args)}): the reference disagrees"
            COUNTS["answered right"] += 1

    drive()


NAMED = [(target, i) for target, entry in sorted(CONTRACTS.items()) for i in range(len(entry.refuse))]


@pytest.mark.parametrize(("target", "index"), NAMED, ids=[f"{t}-{i}" for t, i in NAMED])
def test_the_named_bad_calls_are_refused(target: str, index: int):
    entry = CONTRACTS[target]
    args = entry.refused_args(index)
    kind, result = _run(entry, args)
    assert kind == "refused", (
        f"{target}({_show(args)}): this named bad call was accepted and gave {_show({'': result})}"
    )
    COUNTS["named bad calls refused"] += 1
