"""The library keeps its word: every public callable, driven with generated bad and edge-case arguments.

For each entry of ``tests/contracts`` (one per public callable), hypothesis varies one argument of
a good call at a time. A bad value must be refused with a ``ValueError`` or ``TypeError`` raised
in ``transformerland``'s own code, with a message, within a second; an edge value must be refused
the same way or give a result the entry's reference accepts. A public callable (a name in some
module's ``__all__``) without an entry fails :func:`test_every_public_callable_has_a_contract`.
The counts are printed at the end of the run (``-s`` or the terminal summary).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any, Protocol

import pytest
import transformerland
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.contracts import Contract, all_contracts

PACKAGE_DIR = Path(transformerland.__file__).parent
#: Left to their own helper: the exercises' checkers answer a student with a verdict, not an error.
NOT_HERE = ("transformerland.exercises",)
SECOND = 1.0
EXAMPLES = 12

CONTRACTS = {c.target: c for c in all_contracts()}
COUNTS: Counter[str] = Counter()


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
    return outcome


def _show(args: dict[str, Any]) -> str:
    def short(v: Any) -> str:
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return f"tensor{tuple(v.shape)} {v.dtype}"
        text = repr(v)
        return text if len(text) < 40 else text[:37] + "..."

    return ", ".join(f"{k}={short(v)}" for k, v in args.items())


@pytest.mark.parametrize("target", sorted(CONTRACTS))
def test_the_contract_holds(target: str):
    entry = CONTRACTS[target]
    if entry.record:
        COUNTS["records (checked where they are read)"] += 1
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


def test_zz_report_the_counts(capsys: pytest.CaptureFixture[str]):
    """Runs last (by name): the counts of this run, printed."""
    with capsys.disabled():
        line = ", ".join(f"{count} {what}" for what, count in sorted(COUNTS.items()))
        print(f"\ncontract: {len(CONTRACTS)} entries; {line}")
