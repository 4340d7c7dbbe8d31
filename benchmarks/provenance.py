"""What a benchmark records about the sitting that measured it: code, machine and versions."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import torch
import transformerland
import transformers

ROOT = Path(__file__).parents[1]


def git_commit() -> str:
    """The repository's commit, with ``+dirty`` when tracked files differ from it.

    On a copy of the working tree (another machine), its git metadata may not be the tree's: there
    the environment variable ``BENCHMARK_COMMIT``, when set, names the commit the copy was made
    from, and is recorded as given. Outside git and without it: ``"unknown"``.
    """
    given = os.environ.get("BENCHMARK_COMMIT", "").strip()
    if given:
        return f"{given} (given: the working tree was copied to another machine)"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if changed else "")


def device_name(device: torch.device) -> str:
    """The GPU's name and CUDA version, or the CPU and its thread count."""
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda})"
    return f"CPU, {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"


def command(module: str, argv: list[str] | None = None) -> str:
    """The command that reproduces a run of ``module`` with ``argv`` (this process's arguments by default)."""
    return f"python -m {module} " + shlex.join(argv if argv is not None else sys.argv[1:])


def sitting(module: str, argv: list[str] | None, device: torch.device) -> dict[str, object]:
    """The provenance of one run: date, commit, the command that reproduces it, device and versions."""
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "command": command(module, argv),
        "device": device_name(device),
        "dtype": "float32",
        "attention": "sdpa",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "transformerland": transformerland.__version__,
    }


def sweep_sitting(module: str, seeds: list[int], jobs: int, seconds: list[float], started: float) -> dict[str, object]:
    """The provenance of a sweep of small trainings, ``jobs`` at a time and one CPU thread each: commit, date,
    machine, seeds, command, versions, the mean seconds of one training (``seconds``, one per training) and of
    the whole sweep (``started``: :func:`time.perf_counter` when it began)."""
    return {
        "commit": git_commit(),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()} CPU, {platform.system()}, one thread per training, {jobs} at once",
        "seeds": seeds,
        "command": command(module),
        "transformerland": transformerland.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "seconds_per_training": round(sum(seconds) / len(seconds), 1),
        "seconds": round(time.perf_counter() - started, 1),
    }
