"""The library's one validation layer: every public entry point checks its arguments here, first.

Every check raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right kind, wrong
value) with a message that names the argument, says what was received and what to pass
instead. The rules, the same in every module:

* **booleans** are real ``bool`` values: ``"no"``, ``0`` or ``None`` where ``True``/``False`` belongs
  is refused (a non-empty string would otherwise be taken as true);
* **numbers** are real and finite (``nan`` and ``inf`` are refused) and lie in their range;
* **sizes** (lengths, widths, heads, counts) are integers from 1 up to a named cap, checked
  before anything is allocated: :data:`MAX_SIZE` for one dimension, :data:`MAX_HEADS` for
  attention heads, :data:`MAX_ELEMENTS` for a whole table or batch;
* **tensors** the maths treats as real numbers (token vectors, queries, keys, position tables,
  attention scores) must have a floating dtype. Integer, boolean and complex tensors are
  *refused* with a ``TypeError`` that says to call ``.float()``; they are never promoted
  silently, because a result computed in integers and cast back is truncated. Ids, positions
  and masks have their own dtypes, checked where they are read;
* tensors that meet in one computation share a **device** and a **dtype**;
* a requested **device** exists on this machine (``"cuda"`` without a GPU is refused here,
  not deep inside PyTorch);
* **positions, angles, frequencies and factors** are finite: a NaN or infinite position is refused,
  because it would turn into a NaN result that looks like any other tensor;
* **token ids** lie in ``[0, vocab_size)`` of the model they are fed to, checked before the model runs.

**NaN activations pass through.** Token vectors, queries, keys, values, logits and the other
activations are *not* scanned for NaN or infinity: like torch's own layers, the library computes
with what it is given, and a NaN in comes out as a NaN. (Scanning every activation would cost a
pass over each tensor and a device synchronisation in every forward pass.) Only the numbers that
say *where* or *how much* (positions, frequencies, factors, sizes) are checked.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import torch

#: The largest size of one dimension (tokens, rows, width, vocabulary, window, ...): 2**20 = 1,048,576.
MAX_SIZE = 1 << 20
#: The most attention heads a layer may have.
MAX_HEADS = 1 << 12
#: The most numbers one table, batch or model may hold before it is allocated: 2**28 (1 GiB of float32).
MAX_ELEMENTS = 1 << 28

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _kind(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


def require_bool(value: object, name: str, meaning: str = "") -> bool:
    """Return ``value`` if it is ``True`` or ``False``; ``meaning`` says what ``True`` does."""
    if not isinstance(value, bool):
        what = f" ({meaning})" if meaning else ""
        raise TypeError(f"{name} must be True or False{what}, got {_kind(value)}.")
    return value


def require_int(value: object, name: str, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer in ``[low, high]`` (either end may be open: ``None``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number (int), got {_kind(value)}.")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"from {low}" if high is None else f"up to {high}" if low is None else f"from {low} to {high}"
        raise ValueError(f"{name} must be a whole number {span}, got {value}.")
    return value


def require_positive_int(value: object, name: str, cap: int = MAX_SIZE) -> int:
    """Return ``value`` as an ``int`` if it is an integer from 1 to ``cap`` (:data:`MAX_SIZE` by default)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {_kind(value)}.")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}.")
    if value > cap:
        raise ValueError(
            f"{name} = {value:,} is more than this library allows ({cap:,}, a named cap in "
            "transformerland._validation): pass a smaller size."
        )
    return int(value)


def require_real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    what: str = "a number",
) -> float:
    """Return ``value`` as a finite ``float`` in the range ``low … high`` (ends open or closed), else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {_kind(value)}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be {what}, and finite: got {value}.")
    below = low is not None and (value <= low if low_open else value < low)
    above = high is not None and (value >= high if high_open else value > high)
    if below or above:
        left = "" if low is None else f"{'>' if low_open else '≥'} {low:g}"
        right = "" if high is None else f"{'<' if high_open else '≤'} {high:g}"
        raise ValueError(f"{name} must be {what} ({' and '.join(s for s in (left, right) if s)}), got {value:g}.")
    return value


def require_positive_float(value: object, name: str) -> float:
    """Return ``value`` as a ``float`` if it is a finite number above 0, else raise."""
    return require_real(value, name, low=0.0, low_open=True, what="a positive number")


def require_at_least(value: object, name: str, low: float, why: str) -> float:
    """A finite number ``≥ low``; ``why`` explains the bound in the message."""
    number = require_real(value, name)
    if number < low:
        raise ValueError(f"{name} must be at least {low:g} ({why}), got {number:g}.")
    return number


def require_ordered(low: float, high: float, low_name: str, high_name: str, why: str) -> None:
    """Raise ``ValueError`` unless ``low < high``; ``why`` says what the two numbers mark."""
    if not low < high:
        raise ValueError(f"{high_name} ({high:g}) must be larger than {low_name} ({low:g}): {why}")


def require_even(value: int, name: str, why: str) -> int:
    """Raise ``ValueError`` if ``value`` is odd; ``why`` explains the need for evenness."""
    if value % 2:
        raise ValueError(f"{name} must be even, got {value}: {why} Use {value - 1} or {value + 1}.")
    return value


def require_elements(count: int, name: str) -> int:
    """Raise ``ValueError`` if a table of ``count`` numbers would pass :data:`MAX_ELEMENTS`, before it is made."""
    if count > MAX_ELEMENTS:
        raise ValueError(
            f"{name} would hold {count:,} numbers, more than this library allows ({MAX_ELEMENTS:,}, "
            "MAX_ELEMENTS in transformerland._validation): pass smaller sizes."
        )
    return count


def require_tensor(x: object, name: str, ndim: int | tuple[int, ...] | None = None) -> torch.Tensor:
    """Check that ``x`` is a tensor with the expected number of dimensions."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}. Wrap it with torch.tensor(...).")
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if allowed is not None and x.dim() not in allowed:
        want = " or ".join(str(n) for n in allowed)
        raise ValueError(f"{name} must have {want} dimensions, got shape {tuple(x.shape)} ({x.dim()} dimensions).")
    return x


def require_float_tensor(x: object, name: str, ndim: int | tuple[int, ...] | None = None) -> torch.Tensor:
    """A tensor of floating dtype (refused, never promoted, otherwise: see the module's rules)."""
    require_tensor(x, name, ndim)
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"{name} must hold real numbers in a floating dtype, got dtype {x.dtype}: an integer result would be "
            f"truncated. Convert it first with {name}.float()."
        )
    return x


def require_min_dims(x: torch.Tensor, name: str, ndim: int, layout: str) -> torch.Tensor:
    """Raise ``ValueError`` unless ``x`` has at least ``ndim`` dimensions; ``layout`` names them."""
    if x.dim() < ndim:
        dims = "dimension" if ndim == 1 else "dimensions"
        raise ValueError(f"{name} must have at least {ndim} {dims} ({layout}), got shape {tuple(x.shape)}.")
    return x


def require_index_tensor(
    x: object, name: str, ndim: int | tuple[int, ...] | None = None, what: str = "integer ids"
) -> torch.Tensor:
    """A tensor of integer ids or positions (any integer dtype; floats, complex and booleans refused)."""
    require_tensor(x, name, ndim)
    if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool:
        raise TypeError(f"{name} must hold {what} (torch.long), got dtype {x.dtype}; convert with {name}.long().")
    return x


def require_position_tensor(x: object, name: str, ndim: int | tuple[int, ...] | None = None) -> torch.Tensor:
    """Positions: integer or finite floating values (fractional positions are allowed); booleans and complex refused."""
    require_tensor(x, name, ndim)
    if x.dtype.is_complex or x.dtype == torch.bool:
        raise TypeError(f"{name} must hold positions as integers or floats, got dtype {x.dtype}.")
    return require_finite_tensor(x, name, "positions")


def require_finite_tensor(x: torch.Tensor, name: str, what: str = "numbers") -> torch.Tensor:
    """Raise ``ValueError`` if a floating ``x`` holds NaN or an infinity (positions, frequencies, angles)."""
    if x.dtype.is_floating_point and x.numel() and not bool(torch.isfinite(x).all()):
        bad = int((~torch.isfinite(x)).sum())
        raise ValueError(
            f"{name} must hold finite {what}, but {bad} of its {x.numel()} values are NaN or infinite; "
            f"find where they were made (torch.isfinite({name}) shows which)."
        )
    return x


def require_ids_below(ids: torch.Tensor, name: str, vocab_size: int | None, whose: str = "the model") -> torch.Tensor:
    """Raise ``ValueError`` unless every id in ``ids`` lies in ``[0, vocab_size)`` (``None``: only ``≥ 0`` checked)."""
    if not ids.numel():
        return ids
    low, high = int(ids.min()), int(ids.max())
    if low < 0:
        raise ValueError(f"{name} holds the negative id {low}; token ids count from 0.")
    if vocab_size is not None and high >= vocab_size:
        raise ValueError(
            f"{name} holds the id {high}, but {whose} knows {vocab_size} tokens (ids 0 to {vocab_size - 1}): "
            "encode the text with the model's own tokenizer."
        )
    return ids


def model_vocab_size(model: object) -> int | None:
    """The number of token ids ``model`` embeds (``model.config.vocab_size``), or ``None`` when it does not say."""
    size = getattr(getattr(model, "config", None), "vocab_size", None)
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def require_same(tensors: Sequence[tuple[str, torch.Tensor]]) -> None:
    """Raise unless every ``(name, tensor)`` shares the first one's device and dtype."""
    (first_name, first), *rest = tensors
    for name, t in rest:
        if t.device != first.device:
            raise ValueError(
                f"{name} is on {t.device} but {first_name} is on {first.device}: move them to one device "
                f"with .to({str(first.device)!r})."
            )
        if t.dtype != first.dtype:
            raise TypeError(
                f"{name} has dtype {t.dtype} but {first_name} has dtype {first.dtype}: "
                f"convert with .to({first_name}.dtype)."
            )


def require_device(device: object, name: str = "device") -> torch.device:
    """Return ``device`` as a ``torch.device`` if it names a device this machine has, else raise."""
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"{name} must be a device name such as 'cpu' or 'cuda', got {_kind(device)}.")
    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise ValueError(f"{name} = {device!r} is not a device name; use 'cpu', 'cuda' or 'cuda:0'.") from None
    if parsed.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"{name} = {device!r}, but this machine has no CUDA GPU: use 'cpu' (or pick_device()).")
        if parsed.index is not None and parsed.index >= count:
            raise ValueError(f"{name} = {device!r}, but this machine has {count} GPU(s): use 'cuda:0'.")
    elif parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"{name} = {device!r}, but Apple's MPS is not available here: use 'cpu'.")
    elif parsed.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"{name} = {device!r}: this library runs on 'cpu', 'cuda' or 'mps'.")
    return parsed


def optional_device(device: object, name: str = "device") -> torch.device | None:
    """``None`` stays ``None`` (the default device); anything else as :func:`require_device`."""
    return None if device is None else require_device(device, name)


def require_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    """Check that ``value`` is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return str(value)


def require_str(value: object, name: str) -> str:
    """A string (a label, a title, a text)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {_kind(value)}.")
    return value


def require_callable(value: object, name: str, what: str) -> object:
    """Something to call; ``what`` says what it should be."""
    if not callable(value):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}.")
    return value
