"""Run one submission's code in a bubblewrap sandbox of its own, and get its answers back as data.

What the sandbox gives the code (see the instructor's guide, "What the sandbox protects"):

* no network (its own empty network namespace), its own process, IPC and host-name namespaces;
* a read-only view of the system's ``/usr``, of the Python environment the grader runs in (``sys.prefix``,
  a virtual environment such as ``.venv`` with its packages, and the installation it was made from), and
  of the **grading build** of the ``transformerland`` package (:mod:`tools.grading_build`: no exercise's
  reference, checker or data, the withheld functions' bodies replaced by a ``raise``) in place of the
  library; nothing else of the machine: no home folder, no repository, no other submission, no ``/etc``;
* a private ``/tmp`` and ``/dev/shm`` in memory (``tmp_mb`` at most each), an unprivileged user (nobody),
  no capabilities;
* limits (:class:`Limits`): ``memory_mb`` for the whole sandbox, every process it starts and its files in
  memory together, and at most ``processes`` processes and threads, by a control group of its own where
  the machine lets the grader make one (cgroup v2, else v1); elsewhere ``memory_mb`` of address space per
  process, a process limit per user (the sandbox then starts as user nobody, also when the grader runs as
  root, for whom the kernel does not count processes), and ``/tmp`` and ``/dev/shm`` of ``tmp_mb`` each;
  ``seconds`` of wall time for the whole run: when the time is up the whole sandbox (every process it
  started, whatever session it put itself in) is killed, and nothing it started outlives it;
* its answers come back through a pipe, as JSON and safetensors, at most ``RESULT_LIMIT`` bytes.

    run_job(job, seconds=300, memory_mb=8192, library=grading_build_package) -> Outcome
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import transformerland

#: The most bytes of answers read back from a sandbox.
RESULT_LIMIT = 64 * 2**20
#: The unprivileged user and group the sandbox's code runs as.
NOBODY = 65534
#: Where the sandbox sees the (grading build of the) library: ``/opt/library/transformerland``.
MOUNTED_LIBRARY = "/opt/library"
HOW_TO = """\
The grader runs every submission in a bubblewrap sandbox, and bubblewrap was not found (or cannot start
a sandbox here). Install it: `sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install
bubblewrap` (Fedora), or grade inside a throwaway container or virtual machine that has it. Unprivileged
users need user namespaces enabled (`sysctl kernel.unprivileged_userns_clone=1` on older Debian kernels;
on Ubuntu 24.04 and later, AppArmor must allow bwrap them: `sysctl kernel.apparmor_restrict_unprivileged_userns`).
Only if the submissions are trusted, or you grade on a throwaway machine, run again with --unsafe: the
submissions then run with your user's rights, your files and the network within their reach."""


class NoSandbox(RuntimeError):
    """bubblewrap is missing or cannot start a sandbox here."""


@dataclass
class Outcome:
    """What came back from one sandbox: the answers' message, or why there is none."""

    result: dict[str, Any] | None
    problem: str = ""


def library_dir() -> Path:
    """The grader's own ``transformerland`` package (the grading build is made from it)."""
    return Path(transformerland.__file__).resolve().parent


def python_roots() -> list[Path]:
    """The folders of the Python environment the sandbox runs, mounted read-only at their own paths.

    The environment the grader runs in (``sys.prefix``: ``.venv``, with its packages), the installation it
    was made from (``sys.base_prefix``, its standard library), and the folder of the interpreter itself;
    those under ``/usr`` (always mounted) or under another of them are left out.
    """
    found = {Path(p).resolve() for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)}
    found.add(Path(sys.executable).resolve().parent)
    found.add(Path(sys.executable).parent.resolve())
    roots: list[Path] = []
    for path in sorted(found, key=lambda p: len(p.parts)):
        if path.is_relative_to("/usr") or any(path.is_relative_to(root) for root in roots):
            continue
        roots.append(path)
    return roots


def python_executable() -> str:
    """The interpreter the sandbox runs: the grader's own (``.venv/bin/python``), so it sees the same packages."""
    return sys.executable


# --- the limits ---------------------------------------------------------------------------------------------


@dataclass
class Limits:
    """Memory and processes for one sandbox: a control group of its own where possible, else per-process limits.

    ``memory_mb`` and ``processes`` hold for the whole sandbox in a control group (``kind`` "cgroup v2" or
    "cgroup v1"); without one (``kind`` "rlimits"), ``memory_mb`` is per process and ``processes`` per user.
    """

    memory_mb: int
    processes: int
    kind: str = "rlimits"
    groups: list[Path] = field(default_factory=list)

    @classmethod
    def make(cls, memory_mb: int, processes: int) -> Limits:
        """A control group for one sandbox with these limits, or per-process limits where none can be made."""
        name = f"grading-{uuid.uuid4().hex[:12]}"
        for kind, groups in (("cgroup v2", _v2_groups(name)), ("cgroup v1", _v1_groups(name))):
            if groups and _limit(kind, groups, memory_mb, processes):
                return cls(memory_mb, processes, kind, groups)
            for group in groups:
                with contextlib.suppress(OSError):
                    group.rmdir()
        return cls(memory_mb, processes)

    def enter(self) -> None:
        """In the sandbox's first process, before bubblewrap starts: join the group, or set the rlimits."""
        for group in self.groups:
            (group / "cgroup.procs").write_text(str(os.getpid()))
        if not self.groups:
            resource.setrlimit(resource.RLIMIT_AS, (self.memory_mb * 2**20, self.memory_mb * 2**20))
            resource.setrlimit(resource.RLIMIT_NPROC, (self.processes, self.processes))

    def out_of_memory(self) -> bool:
        """Whether the group's memory limit was hit (always False without a group)."""
        for group in self.groups:
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError, ValueError):
                    fields = dict(line.split() for line in (group / name).read_text().splitlines() if " " in line)
                    if int(fields.get("oom_kill", 0)):
                        return True
            with contextlib.suppress(OSError, ValueError):
                if int((group / "memory.failcnt").read_text()) > 0:
                    return True
        return False

    def close(self) -> None:
        """Kill whatever is left in the group, and remove it (in the background once the kill takes long: a
        few hundred processes can take half a minute to go)."""
        for group in self.groups:
            with contextlib.suppress(OSError):
                (group / "cgroup.kill").write_text("1")
            if not _emptied(group, 50):
                threading.Thread(target=_emptied, args=(group, 1200), daemon=True).start()

    def describe(self) -> str:
        """The limits in words (for the guide and the grader's output)."""
        if self.groups:
            return f"{self.memory_mb} MB and {self.processes} processes for the whole sandbox ({self.kind} group)"
        return f"{self.memory_mb} MB per process, {self.processes} processes of user nobody (no control group)"


def _emptied(group: Path, tries: int) -> bool:
    """Kill the group's processes until it is empty, then remove it; whether that happened in ``tries`` tenths
    of a second."""
    for _ in range(tries):
        pids = _pids(group)
        if not pids:
            with contextlib.suppress(OSError):
                group.rmdir()
                return True
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        threading.Event().wait(0.1)
    return False


def _own_cgroups() -> dict[str, str]:
    """``{controller or "": path}`` from ``/proc/self/cgroup`` ("" for cgroup v2's unified line)."""
    found = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found[controller] = path
    return found


def _v2_groups(name: str) -> list[Path]:
    root = Path("/sys/fs/cgroup")
    own = _own_cgroups().get("")
    if own is None or not (root / "cgroup.controllers").exists():
        return []
    parent = root / own.lstrip("/")
    try:
        (parent / name).mkdir()
    except OSError:
        return []
    return [parent / name]


def _v1_groups(name: str) -> list[Path]:
    own = _own_cgroups()
    made = []
    for controller in ("memory", "pids"):
        parent = Path("/sys/fs/cgroup") / controller / own.get(controller, "/").lstrip("/")
        if not parent.is_dir():
            parent = Path("/sys/fs/cgroup") / controller
        try:
            (parent / name).mkdir()
        except OSError:
            break
        made.append(parent / name)
    return made


def _limit(kind: str, groups: list[Path], memory_mb: int, processes: int) -> bool:
    """Write the limits into the groups; whether every one of them took."""
    memory = str(memory_mb * 2**20)
    if kind == "cgroup v2":
        wanted = {"memory.max": memory, "memory.swap.max": "0", "pids.max": str(processes)}
    else:
        wanted = {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory, "pids.max": str(processes)}
    optional = {"memory.swap.max", "memory.memsw.limit_in_bytes"}
    written = set()
    for key, value in wanted.items():
        for group in groups:
            if (group / key).exists():
                try:
                    (group / key).write_text(value)
                except OSError:
                    if key not in optional:
                        return False
                written.add(key)
    return written >= set(wanted) - optional


def _pids(group: Path) -> list[int]:
    with contextlib.suppress(OSError, ValueError):
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    return []


# --- the sandbox --------------------------------------------------------------------------------------------


def command(unsafe: bool = False, tmp_mb: int = 512, threads: int = 1, library: Path | None = None) -> list[str]:
    """The command that starts the harness: inside bubblewrap, or (``unsafe``) bare; torch inside uses ``threads``.

    ``library``: the package the sandbox sees as ``transformerland`` (the grading build; default: the grader's).
    """
    if unsafe:
        return [python_executable(), "-m", "transformerland.exercises.harness"]
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise NoSandbox(HOW_TO)
    library = (library or library_dir()).resolve()
    sandbox = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    sandbox += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "sandbox"]
    sandbox += ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]
    sandbox += ["--symlink", "usr/bin", "/bin"]
    # /tmp and /dev first: a bind below them (an environment made in /tmp) must land on top, not be hidden
    sandbox += ["--proc", "/proc", "--dev", "/dev", "--size", str(tmp_mb * 2**20), "--tmpfs", "/tmp"]
    sandbox += ["--size", str(tmp_mb * 2**20), "--tmpfs", "/dev/shm"]
    roots = python_roots()
    for root in roots:
        sandbox += ["--ro-bind", str(root), str(root)]
    original = library_dir()
    if any(original.is_relative_to(root) for root in [*roots, Path("/usr")]):  # installed in the environment
        sandbox += ["--ro-bind", str(library), str(original)]  # the grading build there too
    sandbox += ["--ro-bind", str(library), f"{MOUNTED_LIBRARY}/transformerland"]
    sandbox += ["--chdir", "/tmp"]
    path = f"{Path(python_executable()).parent}:/usr/bin:/bin"
    sandbox += ["--clearenv", "--setenv", "HOME", "/tmp", "--setenv", "PATH", path]
    for name, value in {
        "PYTHONPATH": MOUNTED_LIBRARY,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "MPLBACKEND": "Agg",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_NUM_THREADS": str(max(1, threads)),
    }.items():
        sandbox += ["--setenv", name, value]
    return [*sandbox, "--", python_executable(), "-m", "transformerland.exercises.harness"]


def available(library: Path | None = None) -> bool:
    """Whether bubblewrap can start a sandbox here that runs this environment's Python (see :func:`problem`)."""
    return not problem(library)


def problem(library: Path | None = None) -> str:
    """Why no sandbox can start here, in words, or "" when one starts and runs the grader's Python in it."""
    try:
        cmd = command(library=library)
    except NoSandbox as error:
        return str(error)
    probe = [*cmd[: cmd.index("--")], "--", python_executable(), "-c", "import torch, transformerland"]
    limits = Limits.make(2048, 256)
    try:
        done = subprocess.run(
            probe, capture_output=True, timeout=120, preexec_fn=lambda: _enter(limits, False), start_new_session=True
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"{HOW_TO}\n\n(bwrap did not start: {error})"
    finally:
        limits.close()
    if done.returncode:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{HOW_TO}\n\n(bwrap: {said[-1][:300] if said else f'exit status {done.returncode}'})"
    return ""


def _enter(limits: Limits, unsafe: bool, file_mb: int = 512) -> None:
    """Run in the child before bubblewrap starts: limits that every process of the sandbox inherits.

    Without a control group the kernel counts processes per user but never for root, so a grader running as
    root starts the sandbox (or, ``unsafe``, the submission) as user nobody.
    """
    limits.enter()
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb * 2**20, file_mb * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.geteuid() == 0 and (unsafe or not limits.groups):
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)


def run_job(
    job: dict[str, Any],
    seconds: int = 300,
    memory_mb: int = 8192,
    unsafe: bool = False,
    threads: int = 1,
    *,
    library: Path | None = None,
    processes: int = 256,
    tmp_mb: int = 512,
) -> Outcome:
    """Run the harness on ``job`` in a fresh sandbox, torch using ``threads`` threads there; the answers it sends
    back, or why there are none.

    ``library``: the grading build's package folder, seen in the sandbox as ``transformerland``.
    """
    read_end, write_end = os.pipe()
    env = None
    if unsafe:
        folder = str((library or library_dir()).resolve().parent)
        env = {**os.environ, "PYTHONPATH": folder, "MPLBACKEND": "Agg", "HOME": "/tmp"}
        env["OMP_NUM_THREADS"] = str(max(1, threads))
    limits = Limits.make(memory_mb, processes)
    try:
        process = subprocess.Popen(
            command(unsafe, tmp_mb=tmp_mb, threads=threads, library=library),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(write_end,),
            preexec_fn=lambda: _enter(limits, unsafe),  # before any thread starts
            start_new_session=True,
            env=env,
        )
    except BaseException:
        limits.close()
        os.close(read_end)
        os.close(write_end)
        raise
    os.close(write_end)
    received: list[bytes] = []
    stderr_tail: list[bytes] = []

    def read_result() -> None:
        # os.read, not a buffered read: what the harness wrote is kept as it comes, even when processes the
        # submission forked still hold the pipe open (then the end of the pipe comes only once they are killed)
        size = 0
        try:
            while chunk := os.read(read_end, 2**16):
                size += len(chunk)
                if size > RESULT_LIMIT:
                    received.append(b"\x00too large")
                    return
                received.append(chunk)
        finally:
            os.close(read_end)

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

    workers = [threading.Thread(target=f, daemon=True) for f in (read_result, read_stderr, feed)]
    for worker in workers:
        worker.start()
    try:
        code = process.wait(timeout=seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill(process)
        limits.close()
        code = process.wait()
    workers[0].join(timeout=10)
    data = b"".join(received)
    if timed_out:
        return Outcome(None, f"timed out: the notebook ran longer than {seconds} s and was stopped")
    if data.endswith(b"\x00too large"):
        return Outcome(None, f"its answers were larger than {RESULT_LIMIT // 2**20} MB")
    if not data:
        stderr = b"".join(stderr_tail).decode("utf-8", "replace")
        return Outcome(None, _died(code, stderr, memory_mb, limits.out_of_memory()))
    try:
        return Outcome(json.loads(data))
    except (ValueError, RecursionError):
        return Outcome(None, "its answers came back garbled (not JSON)")


def _kill(process: subprocess.Popen) -> None:
    """Kill the sandbox's whole session (bubblewrap's PID namespace dies with it)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _died(code: int, stderr: str, memory_mb: int, out_of_memory: bool = False) -> str:
    """Why a sandbox ended without sending answers, in words."""
    if out_of_memory:
        return f"the kernel died: out of memory (over {memory_mb} MB)"
    if code in (-signal.SIGKILL, 128 + signal.SIGKILL, 137):
        return f"the kernel died: killed (most likely for memory, over {memory_mb} MB)"
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return f"the kernel died: out of memory (over {memory_mb} MB)"
    if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
        return "the kernel died: it wrote a file larger than the limit"
    last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit status {code}"
    return f"the kernel died ({last[:200]})"
