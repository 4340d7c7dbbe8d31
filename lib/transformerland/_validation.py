"""Small argument checks shared by the library, so that bad input fails early and clearly.

Every check raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right kind,
wrong value) with a message that says what was received and what to pass instead.
"""

from __future__ import annotations

import numbers

import torch


def require_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an ``int`` if it is a positive integer, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r} ({type(value).__name__}).")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}.")
    return int(value)


def require_positive_float(value: object, name: str) -> float:
    """Return ``value`` as a ``float`` if it is a positive real number, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r} ({type(value).__name__}).")
    if not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value}.")
    return float(value)


def require_even(value: int, name: str, why: str) -> int:
    """Raise ``ValueError`` if ``value`` is odd; ``why`` explains the need for evenness."""
    if value % 2:
        raise ValueError(f"{name} must be even, got {value}: {why} Use {value - 1} or {value + 1}.")
    return value


def require_tensor(x: object, name: str, ndim: int | tuple[int, ...] | None = None) -> torch.Tensor:
    """Check that ``x`` is a tensor with the expected number of dimensions."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}. Wrap it with torch.tensor(...).")
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if allowed is not None and x.dim() not in allowed:
        want = " or ".join(str(n) for n in allowed)
        raise ValueError(f"{name} must have {want} dimensions, got shape {tuple(x.shape)} ({x.dim()} dimensions).")
    return x


def require_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    """Check that ``value`` is one of ``choices``."""
    if value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return str(value)
