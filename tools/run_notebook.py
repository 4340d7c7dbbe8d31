"""Run a notebook as a student's fresh runtime would: a new kernel whose working folder is empty.

The one place where the tools and the tests execute a notebook: saving the chapters
(:mod:`tools.execute_chapters`), timing the chapters
(:mod:`benchmarks.run_chapters`), and the tests that run the chapters in a Colab-like runtime (each with its
handout's first exercise, :func:`tools.handouts.with_first_stub`) and the fixture book's handouts. (Graded
submissions run elsewhere: inside a sandbox, by :mod:`transformerland.exercises.harness`.)
"""

from __future__ import annotations

import tempfile
import time

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

#: Arguments every kernel is started with: its log at errors only (see run_in_empty_folder).
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]


def run_in_empty_folder(
    notebook: nbformat.NotebookNode,
    timeout: int = 150,
    *,
    allow_errors: bool = False,
    interrupt_on_timeout: bool = False,
    kernel_name: str = "",
    kernel_manager: KernelManager | None = None,
    env: dict[str, str] | None = None,
) -> float:
    """Execute ``notebook`` in place, in a fresh kernel whose working folder is empty; return seconds.

    Args:
        notebook: the notebook; its cells receive their outputs.
        timeout: seconds a cell may run.
        allow_errors: go on after a cell raises (the error is kept as the cell's output); otherwise the
            first error raises ``nbclient.exceptions.CellExecutionError`` (cells tagged ``raises-exception``
            may raise either way).
        interrupt_on_timeout: interrupt a cell that runs too long and go on, instead of raising.
        kernel_name: the kernel to start (default: the notebook's kernelspec), in this environment.
        kernel_manager: the kernel manager to start it with instead (another environment's kernel).
        env: the kernel's environment variables (default: this process's).
    """
    start = time.perf_counter()
    # The kernel's own log stays quiet below errors: ipykernel warns on every start that its local TCP sockets
    # are not encrypted, a line that reads like a fault in the middle of a build's progress.
    options = {"km": kernel_manager} if kernel_manager is not None else {}
    with tempfile.TemporaryDirectory(prefix="notebook-") as folder:
        client = NotebookClient(
            notebook,
            timeout=timeout,
            allow_errors=allow_errors,
            interrupt_on_timeout=interrupt_on_timeout,
            kernel_name=kernel_name,
            resources={"metadata": {"path": folder}},
            extra_arguments=KERNEL_ARGUMENTS,
            **options,
        )
        client.execute(**({"env": env} if env is not None else {}))
    return time.perf_counter() - start
