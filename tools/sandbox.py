"""Run one submission's code in a bubblewrap sandbox of its own, and get its answers back as data.

What the sandbox gives the code (see the instructor's guide, "What the sandbox protects"):

* no network (its own empty network namespace), its own process, IPC and host-name namespaces;
* a read-only view of the system's ``/usr``, the Python installation, and the grader's own copy of the
  ``transformerland`` package, nothing else of the machine: no home folder, no repository, no other
  submission, no ``/etc`` beyond nothing at all;
* a private ``/tmp`` in memory (``tmp_mb`` at most), an unprivileged user (nobody), no capabilities;
* limits: ``memory_mb`` of address space, ``seconds`` of wall time for the whole run, files of at most
  ``tmp_mb``; when the time is up the whole sandbox (every process it started, whatever session it put
  itself in) is killed, and nothing it started outlives it (its own PID namespace, killed with it);
* its answers come back through a pipe, as JSON and safetensors, at most ``RESULT_LIMIT`` bytes.

    run_job(job, seconds=900, memory_mb=8192) -> Outcome
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import transformerland

#: The most bytes of answers read back from a sandbox.
RESULT_LIMIT = 64 * 2**20
HOW_TO = """\
The grader runs every submission in a bubblewrap sandbox, and bubblewrap was not found (or cannot start
a sandbox here). Install it: `sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install
bubblewrap` (Fedora), or grade inside a throwaway container or virtual machine that has it. Unprivileged
users need user namespaces enabled (`sysctl kernel.unprivileged_userns_clone=1` on older Debian kernels).
Only if the submissions are trusted, or you grade on a throwaway machine, run again with --unsafe: the
submissions then run with your user's rights, your files and the network within their reach."""


class NoSandbox(RuntimeError):
    """bubblewrap is missing or cannot start a sandbox here."""


@dataclass
class Outcome:
    """What came back from one sandbox: the answers' message, or why there is none."""

    result: dict[str, Any] | None
    problem: str = ""


def python_root() -> Path:
    """The Python installation the sandbox runs (this one), mounted read-only at its own path."""
    return Path(sys.base_prefix).resolve()


def library_dir() -> Path:
    """The grader's own ``transformerland`` package, mounted read-only in the sandbox."""
    return Path(transformerland.__file__).resolve().parent


def command(unsafe: bool = False, tmp_mb: int = 512, threads: int = 1) -> list[str]:
    """The command that starts the harness: inside bubblewrap, or (``unsafe``) bare; torch inside uses ``threads``."""
    if unsafe:
        return [sys.executable, "-m", "transformerland.exercises.harness"]
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise NoSandbox(HOW_TO)
    root = str(python_root())
    sandbox = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    sandbox += ["--unshare-user", "--uid", "65534", "--gid", "65534", "--hostname", "sandbox"]
    sandbox += ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]
    sandbox += ["--symlink", "usr/bin", "/bin", "--ro-bind", root, root]
    sandbox += ["--ro-bind", str(library_dir()), "/opt/library/transformerland"]
    sandbox += ["--proc", "/proc", "--dev", "/dev", "--size", str(tmp_mb * 2**20), "--tmpfs", "/tmp", "--chdir", "/tmp"]
    sandbox += ["--clearenv", "--setenv", "HOME", "/tmp", "--setenv", "PATH", "/usr/bin:/bin"]
    for name, value in {
        "PYTHONPATH": "/opt/library",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_NUM_THREADS": str(max(1, threads)),
    }.items():
        sandbox += ["--setenv", name, value]
    return [*sandbox, "--", root + "/bin/python3", "-m", "transformerland.exercises.harness"]


def available() -> bool:
    """Whether bubblewrap can start a sandbox here."""
    try:
        cmd = command()
    except NoSandbox:
        return False
    probe = [*cmd[: cmd.index("--")], "--", "/bin/true"]
    return subprocess.run(probe, capture_output=True, timeout=60).returncode == 0


def _limits(memory_mb: int, file_mb: int, unsafe: bool) -> None:
    """Run in the child before bubblewrap starts: limits that every process of the sandbox inherits.

    Without a sandbox (``unsafe``), a grader running as root at least runs the submission as user nobody.
    """
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb * 2**20, file_mb * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if unsafe and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)


def run_job(
    job: dict[str, Any], seconds: int = 900, memory_mb: int = 8192, unsafe: bool = False, threads: int = 1
) -> Outcome:
    """Run the harness on ``job`` in a fresh sandbox, torch using ``threads`` threads there; the answers it sends
    back, or why there are none."""
    read_end, write_end = os.pipe()
    env = None
    if unsafe:
        env = {**os.environ, "PYTHONPATH": str(library_dir().parent), "MPLBACKEND": "Agg", "HOME": "/tmp"}
        env["OMP_NUM_THREADS"] = str(max(1, threads))
    process = subprocess.Popen(
        command(unsafe, threads=threads),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(write_end,),
        preexec_fn=lambda: _limits(memory_mb, 512, unsafe),  # before any thread starts
        start_new_session=True,
        env=env,
    )
    os.close(write_end)
    received: list[bytes] = []
    stderr_tail: list[bytes] = []

    def read_result() -> None:
        with os.fdopen(read_end, "rb") as pipe:
            size = 0
            while chunk := pipe.read(2**16):
                size += len(chunk)
                if size > RESULT_LIMIT:
                    received.append(b"\x00too large")
                    return
                received.append(chunk)

    def read_stderr() -> None:
        assert process.stderr is not None
        while chunk := process.stderr.read(2**12):
            stderr_tail[:] = [(b"".join(stderr_tail) + chunk)[-4000:]]

    def feed() -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps({**job, "result_fd": write_end}).encode("utf-8"))
            process.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    threads = [threading.Thread(target=f, daemon=True) for f in (read_result, read_stderr, feed)]
    for thread in threads:
        thread.start()
    try:
        code = process.wait(timeout=seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill(process)
        code = process.wait()
    threads[0].join(timeout=10)
    data = b"".join(received)
    if timed_out:
        return Outcome(None, f"timed out: the notebook ran longer than {seconds} s and was stopped")
    if data.endswith(b"\x00too large"):
        return Outcome(None, f"its answers were larger than {RESULT_LIMIT // 2**20} MB")
    if not data:
        return Outcome(None, _died(code, b"".join(stderr_tail).decode("utf-8", "replace"), memory_mb))
    try:
        return Outcome(json.loads(data))
    except ValueError:
        return Outcome(None, "its answers came back garbled (not JSON)")


def _kill(process: subprocess.Popen) -> None:
    """Kill the sandbox's whole session (bubblewrap's PID namespace dies with it)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _died(code: int, stderr: str, memory_mb: int) -> str:
    """Why a sandbox ended without sending answers, in words."""
    if code in (-signal.SIGKILL, 128 + signal.SIGKILL, 137):
        return f"the kernel died: killed (most likely for memory, over {memory_mb} MB)"
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return f"the kernel died: out of memory (over {memory_mb} MB)"
    if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
        return "the kernel died: it wrote a file larger than the limit"
    last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit status {code}"
    return f"the kernel died ({last[:200]})"
