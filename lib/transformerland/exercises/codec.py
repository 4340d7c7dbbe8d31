"""What crosses the sandbox's wall: a student's answer to one call, as data (JSON and safetensors, never pickle).

The notebook's checker and the grader's sandbox call the student's code the same way, :func:`capture`, and
keep what happened as an :class:`Answer`: the value it returned, or the exception it raised. For a class
exercise (a call with ``feeds``), the value is what the built object *does*, as plain data: its type's name,
its trainable parameters, and its output on each feed. Nothing here judges; the grader decides in its own
process, from this data alone.

:func:`encode` turns a value (numbers, strings, ``None``, tensors, NumPy arrays, and lists, tuples and dicts of
them) into JSON-ready data and a dict of named tensors; :func:`decode` turns them back. A value of any other
type crosses as a stand-in object whose type has the same name, so that a verdict can still say "it returned
a Module, not a tensor". Unpickling runs code, and what comes out of a sandbox was made by a student's code.
"""

from __future__ import annotations

import base64
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from safetensors.torch import load, save

__all__ = ["Answer", "capture", "decode", "encode", "from_bytes", "to_bytes"]


@dataclass(frozen=True)
class Answer:
    """What the student's code did on one call: returned ``value``, or raised ``raised`` (the exception's class
    name) with ``message``, from line ``lineno`` of their code (``line``). ``after``: the positional arguments as
    the call left them, when it wrote into them."""

    value: Any = None
    raised: str = ""
    message: str = ""
    line: str = ""
    lineno: int = 0
    after: tuple[Any, ...] | None = None

    def to_data(self, tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
        """The answer as JSON-ready data; its tensors go into ``tensors``."""
        data = {k: getattr(self, k) for k in ("raised", "message", "line", "lineno")}
        after = encode(self.after, tensors) if self.after is not None else None
        return {**data, "value": encode(self.value, tensors), "after": after}

    @classmethod
    def from_data(cls, data: Any, tensors: Mapping[str, torch.Tensor]) -> Answer:
        """The answer :meth:`to_data` wrote; ``ValueError`` on anything it cannot have written."""
        if not isinstance(data, dict):
            raise ValueError("an answer is a JSON object")
        texts = {k: data.get(k, "") for k in ("raised", "message", "line")}
        lineno = data.get("lineno", 0)
        if not all(isinstance(v, str) for v in texts.values()) or type(lineno) is not int:
            raise ValueError("an answer's fields have the wrong types")
        after = decode(data.get("after"), tensors)
        return cls(decode(data.get("value"), tensors), lineno=lineno, after=tuple(after) if after else None, **texts)


def _raised(error: BaseException) -> Answer:
    where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    line, lineno = (where.line or "", where.lineno or 0) if where else ("", 0)
    return Answer(raised=type(error).__name__, message=str(error)[:500], line=line[:200], lineno=lineno)


def _copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and (a is b or a == b)


def _call(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> Answer:
    args, kwargs = tuple(_copy(a) for a in args), {k: _copy(v) for k, v in kwargs.items()}
    given = tuple(_copy(a) for a in args)
    try:
        value = fn(*args, **kwargs)
    except Exception as error:  # the student's bug, kept as data
        return _raised(error)
    return Answer(value=value, after=None if _same(args, given) else args)


def capture(
    student: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], feeds: Sequence[Any] | None = None
) -> Answer:
    """Call ``student(*args, **kwargs)`` on fresh copies of the arguments and keep what happened.

    With ``feeds`` (a class exercise), the value is the built object's behaviour as data::

        {"type": "LearnedPositions", "parameters": {"table.weight": Tensor (max_len, d)},
         "outputs": [{"value": Tensor, "raised": "", "message": ""}, ...]}   # object(feed) for each feed

    computed without gradients.
    """
    built = _call(student, args, kwargs)
    if feeds is None or built.raised:
        return built
    thing = built.value
    parameters = getattr(thing, "named_parameters", None)
    found: dict[str, Any] = {"type": type(thing).__name__, "parameters": {}, "outputs": []}
    if callable(parameters):
        try:
            named = [(name, p) for name, p in parameters() if isinstance(p, torch.Tensor) and p.requires_grad]
        except Exception as error:
            return _raised(error)
        found["parameters"] = {name: p.detach().clone() for name, p in named}
    with torch.no_grad():
        for feed in feeds:
            answer = (
                _call(thing, (feed,), {}) if callable(thing) else Answer(raised="TypeError", message="not callable")
            )
            found["outputs"].append({"value": answer.value, "raised": answer.raised, "message": answer.message})
    return Answer(value=found)


def encode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """``value`` as JSON-ready data; its tensors go into ``tensors`` under fresh names."""
    if value is None or isinstance(value, (bool, float, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else {"int": str(value)}
    if isinstance(value, torch.Tensor) or type(value).__module__ == "numpy":
        try:
            tensor = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            return {"object": type(value).__name__}
        if tensor.ndim == 0 and not isinstance(value, torch.Tensor):  # a NumPy scalar: a plain number
            return encode(tensor.item(), tensors)
        name = f"t{len(tensors)}"
        tensors[name] = tensor.detach().cpu().contiguous().clone()
        return {"tensor": name}
    if isinstance(value, list):
        return [encode(v, tensors) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode(v, tensors) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, (str, int)) for k in value):
        return {"dict": [[k, encode(v, tensors)] for k, v in value.items()]}
    return {"object": type(value).__name__}


def decode(data: Any, tensors: Mapping[str, torch.Tensor]) -> Any:
    """The value :func:`encode` turned into ``data``; raises ``ValueError`` on data it cannot have made."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, tensors) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        ((kind, inner),) = data.items()
        if kind == "tensor" and isinstance(inner, str) and inner in tensors:
            return tensors[inner]
        if kind == "tuple" and isinstance(inner, list):
            return tuple(decode(v, tensors) for v in inner)
        if kind == "dict" and isinstance(inner, list) and all(isinstance(p, list) and len(p) == 2 for p in inner):
            return {_key(k): decode(v, tensors) for k, v in inner}
        if kind == "int" and isinstance(inner, str) and inner.lstrip("-").isdigit() and len(inner) < 5000:
            return int(inner)
        if kind == "object" and isinstance(inner, str) and inner.isidentifier():
            return type(inner, (), {"__repr__": lambda self: f"<a {type(self).__name__}>"})()
    raise ValueError(f"data that encode() does not make: {str(data)[:80]!r}")


def _key(key: Any) -> str | int:
    if isinstance(key, (str, int)) and not isinstance(key, bool):
        return key
    raise ValueError("a dict's key is a string or an int")


def to_bytes(tensors: Mapping[str, torch.Tensor]) -> str:
    """Named tensors as safetensors bytes, in base64 (for a JSON message)."""
    return base64.b64encode(save(dict(tensors))).decode("ascii") if tensors else ""


def from_bytes(text: str) -> dict[str, torch.Tensor]:
    """The named tensors :func:`to_bytes` wrote."""
    return load(base64.b64decode(text)) if text else {}
