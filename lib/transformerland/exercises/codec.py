"""Answers and inputs as data that crosses the sandbox's wall: JSON for the structure, safetensors for tensors.

Never pickle: unpickling runs code, and what comes out of a sandbox was made by a student's code.
:func:`encode` turns a value (numbers, strings, ``None``, tensors, NumPy arrays, and lists, tuples and dicts
of them) into JSON-ready data and a dict of named tensors; :func:`decode` turns them back. A value of any
other type crosses as a stand-in object whose type has the same name, so that a verdict can still say
"it returned a Module, not a tensor".
"""

from __future__ import annotations

import base64
from typing import Any

import torch
from safetensors.torch import load, save

__all__ = ["decode", "encode", "from_bytes", "to_bytes"]


def encode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """``value`` as JSON-ready data; its tensors go into ``tensors`` under fresh names."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return (
            value
            if not isinstance(value, int) or isinstance(value, bool) or abs(value) < 2**53
            else {"int": str(value)}
        )
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


def decode(data: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """The value :func:`encode` turned into ``data``; raises ``ValueError`` on data it cannot have made."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, tensors) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        ((kind, inner),) = data.items()
        if kind == "tensor" and inner in tensors:
            return tensors[inner]
        if kind == "tuple" and isinstance(inner, list):
            return tuple(decode(v, tensors) for v in inner)
        if kind == "dict" and isinstance(inner, list):
            return {k: decode(v, tensors) for k, v in inner}
        if kind == "int" and isinstance(inner, str):
            return int(inner)
        if kind == "object" and isinstance(inner, str) and inner.isidentifier():
            return type(inner, (), {"__repr__": lambda self: f"<a {type(self).__name__}>"})()
    raise ValueError(f"data that encode() does not make: {str(data)[:80]}")


def to_bytes(tensors: dict[str, torch.Tensor]) -> str:
    """Named tensors as safetensors bytes, in base64 (for a JSON message)."""
    return base64.b64encode(save(tensors)).decode("ascii") if tensors else ""


def from_bytes(text: str) -> dict[str, torch.Tensor]:
    """The named tensors :func:`to_bytes` wrote."""
    return load(base64.b64decode(text)) if text else {}
