"""Training and evaluation loops shared by every chapter: seeded, device-aware, with a progress bar."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import torch
from torch import nn
from tqdm import tqdm

from ._validation import (
    require_bool,
    require_callable,
    require_device,
    require_elements,
    require_float_tensor,
    require_ids_below,
    require_int,
    require_positive_float,
    require_positive_int,
    require_real,
    require_str,
)
from .tasks import Batch, Task

__all__ = [
    "CPU_THREADS",
    "EvalResult",
    "TrainResult",
    "evaluate",
    "evaluation_batches",
    "masked_loss",
    "pick_device",
    "side_by_side",
    "train",
]

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


def pick_device(prefer: str | None = None) -> torch.device:
    """``prefer`` if given (it must exist on this machine), else CUDA when available, else the CPU."""
    return _chosen_device(prefer, "prefer")


def _chosen_device(device: object, name: str) -> torch.device:
    """:func:`pick_device`'s choice, with ``device`` checked under the caller's own argument ``name``."""
    if device is not None:
        return require_device(device, name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


#: CPU threads for training and evaluating the book's models. They are so small that splitting
#: each matrix product across threads costs more than it saves, and on a busy machine two threads
#: that wait for each other ran a chapter 3 model 3.5 times slower than one thread did
#: (7 s against 24 s, measured on the book's 2-core machine).
CPU_THREADS = 1


@contextmanager
def _cpu_threads(count: int | None, device: torch.device) -> Iterator[None]:
    """Run the block with ``count`` CPU threads (``None``: PyTorch's setting), then restore it."""
    if count is None or device.type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(require_positive_int(count, "cpu_threads"))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _lengths(length: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(length, tuple):
        if len(length) != 2:
            raise ValueError(f"a length range must be (shortest, longest), got {length}.")
        low, high = (require_positive_int(v, "length") for v in length)
        if low > high:
            raise ValueError(f"a length range must be (shortest, longest), got {length}.")
        return low, high
    length = require_positive_int(length, "length")
    return length, length


def masked_loss(logits: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Mean cross-entropy over the scored targets. ``logits``: ``(B, T, V)``, floating.

    A batch with no scored target has no loss to average: it is refused.
    """
    _require_logits(logits, batch)
    if not bool(batch.mask.any()):
        raise ValueError("batch.mask scores no target (all False): there is no loss to average.")
    require_ids_below(batch.targets[batch.mask], "batch.targets", logits.shape[-1], "logits (its last dimension)")
    return nn.functional.cross_entropy(logits[batch.mask], batch.targets[batch.mask])


def _require_logits(logits: torch.Tensor, batch: Batch) -> None:
    """``logits`` ``(B, T, V)`` floating, one row per position of ``batch``."""
    require_float_tensor(logits, "logits", ndim=3)
    if not isinstance(batch, Batch):
        raise TypeError(f"batch must be a transformerland.tasks.Batch, got {type(batch).__name__}.")
    if logits.shape[:2] != batch.targets.shape:
        raise ValueError(
            f"logits of shape {tuple(logits.shape)} do not match the batch's targets {tuple(batch.targets.shape)}: "
            "one row of logits per input position."
        )


def _require_model_task(model: object, task: object) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module (a TinyTransformer, say), got {type(model).__name__}.")
    _require_task(task)


def _require_task(task: object) -> None:
    if not isinstance(task, Task):
        raise TypeError(
            f"task must have a vocab_size and a sample(batch_size, length, generator) method (MarkovTask, "
            f"ReverseTask, SortTask), got {type(task).__name__}."
        )


@dataclass
class TrainResult:
    """Per-step training losses and the wall time the run took."""

    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    device: str = "cpu"

    def smoothed(self, window: int = 20) -> list[float]:
        """Running mean of the losses over ``window`` steps (for plotting)."""
        window = require_positive_int(window, "window")
        out, total = [], 0.0
        for i, loss in enumerate(self.losses):
            total += loss - (self.losses[i - window] if i >= window else 0.0)
            out.append(total / min(i + 1, window))
        return out


def train(
    model: nn.Module,
    task: Task,
    *,
    steps: int,
    length: int | tuple[int, int],
    batch_size: int = 32,
    lr: float = 3e-3,
    weight_decay: float = 0.01,
    warmup: int = 100,
    clip: float = 1.0,
    seed: int = 0,
    device: torch.device | str | None = None,
    progress: bool = True,
    desc: str = "training",
    cpu_threads: int | None = CPU_THREADS,
) -> TrainResult:
    """Train ``model`` on batches from ``task`` with AdamW, warm-up and cosine decay.

    Args:
        steps: optimiser steps.
        length: training length, or a ``(shortest, longest)`` range sampled per batch.
        batch_size: sequences per step.
        lr: peak learning rate, finite and positive.
        weight_decay: AdamW's decoupled weight decay, finite and ``≥ 0``.
        warmup: steps of linear warm-up, ``≥ 0``.
        clip: the largest gradient norm, finite and positive (a negative or zero clip would turn
            every step around or stop learning; NaN would fill the weights with NaN).
        seed: seeds the data and any randomness in the model's forward pass.
        device: where to train, a device this machine has; the default is :func:`pick_device`.
        progress: show a progress bar (a real ``bool``).
        cpu_threads: CPU threads while training (see :data:`CPU_THREADS`); ``None`` keeps
            PyTorch's own setting. Restored afterwards.

    Every argument is checked before the first step.
    """
    _require_model_task(model, task)
    steps = require_positive_int(steps, "steps")
    low, high = _lengths(length)
    batch_size = require_positive_int(batch_size, "batch_size")
    require_elements(batch_size * high, "one batch (batch_size × length)")
    lr = require_positive_float(lr, "lr")
    weight_decay = require_real(weight_decay, "weight_decay", low=0.0, what="a non-negative number")
    warmup = require_int(warmup, "warmup", low=0)
    clip = require_positive_float(clip, "clip")
    seed = require_int(seed, "seed", low=0)
    progress = require_bool(progress, "progress", "show a progress bar")
    desc = require_str(desc, "desc")
    if cpu_threads is not None:
        require_positive_int(cpu_threads, "cpu_threads", cap=1024)
    device = _chosen_device(device, "device")
    model.to(device).train()
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimiser, schedule)
    result = TrainResult(device=str(device))
    start = time.perf_counter()
    bar = tqdm(range(steps), desc=desc, disable=not progress, file=sys.stdout, ncols=80, mininterval=1.0)
    with _cpu_threads(cpu_threads, device):
        for _ in bar:
            n = int(torch.randint(low, high + 1, (1,), generator=generator)) if high > low else low
            batch = task.sample(batch_size, n, generator).to(device)
            loss = masked_loss(model(batch.inputs), batch)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimiser.step()
            scheduler.step()
            result.losses.append(loss.item())
            bar.set_postfix(loss=f"{result.losses[-1]:.3f}", refresh=False)
    result.seconds = time.perf_counter() - start
    model.eval()
    return result


@dataclass
class EvalResult:
    """Loss (nats), accuracy over scored tokens, and the share of sequences right in full."""

    loss: float
    token_accuracy: float
    sequence_accuracy: float


@torch.no_grad()
def evaluate(
    model: nn.Module,
    task: Task,
    *,
    length: int,
    batch_size: int = 64,
    n_batches: int = 4,
    seed: int = 1234,
    device: torch.device | str | None = None,
    cpu_threads: int | None = CPU_THREADS,
) -> EvalResult:
    """Evaluate ``model`` on the batches of :func:`evaluation_batches` (same seed, same batches).

    ``batch_size``, ``seed``, ``device`` and ``cpu_threads`` as in :func:`train`.
    """
    _require_model_task(model, task)
    batches = evaluation_batches(task, length=length, batch_size=batch_size, n_batches=n_batches, seed=seed)
    if cpu_threads is not None:
        require_positive_int(cpu_threads, "cpu_threads", cap=1024)
    device = _chosen_device(device, "device")
    model.to(device).eval()
    losses, correct, scored, seq_right, seqs = 0.0, 0, 0, 0, 0
    with _cpu_threads(cpu_threads, device):
        for batch in batches:
            batch = batch.to(device)
            logits = model(batch.inputs)
            losses += masked_loss(logits, batch).item() * int(batch.mask.sum())
            hit = (logits.argmax(-1) == batch.targets) | ~batch.mask
            correct += int((hit & batch.mask).sum())
            scored += int(batch.mask.sum())
            seq_right += int(hit.all(dim=1).sum())
            seqs += batch.inputs.shape[0]
    return EvalResult(loss=losses / scored, token_accuracy=correct / scored, sequence_accuracy=seq_right / seqs)


def evaluation_batches(
    task: Task, *, length: int, batch_size: int = 64, n_batches: int = 4, seed: int = 1234
) -> Iterator[Batch]:
    """The held-out batches :func:`evaluate` scores with these arguments, on the CPU, one at a time.

    ``n_batches`` batches of ``(batch_size, length)``, sampled in turn from one generator seeded with
    ``seed``: the same every call, so every model and anything computed from the data alone (a source's
    entropy, say) meet the same sequences. The arguments are checked at once, the batches drawn lazily.
    """
    _require_task(task)
    length = require_positive_int(length, "length")
    n_batches = require_positive_int(n_batches, "n_batches", cap=10_000)
    batch_size = require_positive_int(batch_size, "batch_size")
    require_elements(batch_size * length, "one batch (batch_size × length)")
    seed = require_int(seed, "seed", low=0)
    return _drawn(task, length, batch_size, n_batches, torch.Generator().manual_seed(seed))


def _drawn(task: Task, length: int, batch_size: int, n_batches: int, generator: torch.Generator) -> Iterator[Batch]:
    for _ in range(n_batches):
        yield task.sample(batch_size, length, generator)


def side_by_side(
    fn: Callable[[_Item], _Result],
    items: Iterable[_Item],
    *,
    workers: int = 2,
    device: torch.device | str | None = None,
) -> list[_Result]:
    """``[fn(item) for item in items]``, run ``workers`` at a time on the CPU, one core each.

    One of the book's tiny models keeps one CPU core busy (:data:`CPU_THREADS`), so on a machine with
    two cores, like Colab's free CPU runtime, two trained side by side take little more time than one.
    The results are exactly those of the plain loop as long as ``fn`` draws nothing from PyTorch's
    global random generator while it runs: build the models first (each with its own seed), then
    train or evaluate them here (:func:`train` and :func:`evaluate` draw their data from their own
    generators, and the book's models have no dropout). The global generator is left as it was.
    Progress bars of runs side by side would overwrite each other: pass ``progress=False``.

    Args:
        fn: what to do with one item, e.g. ``lambda model: train(model, task, progress=False, **recipe)``.
        items: the items, e.g. the models to train.
        workers: how many run at once.
        device: where ``fn`` computes (the default is :func:`pick_device`); on a GPU the items run one
            after another, as the GPU is already shared by everything.
    """
    require_callable(fn, "fn", "a function of one item")
    workers = require_positive_int(workers, "workers", cap=64)
    try:
        items = list(items)
    except TypeError:
        raise TypeError(f"items must be an iterable (a list of models, say), got {type(items).__name__}.") from None
    if _chosen_device(device, "device").type != "cpu" or workers == 1:
        return [fn(item) for item in items]
    with torch.random.fork_rng(devices=[]), _cpu_threads(CPU_THREADS, torch.device("cpu")):
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(fn, items))
