"""The grading build: a copy of the ``transformerland`` package that holds no working answer to the chapter graded.

A submission's code can rewrite anything in its own process (switch a check off, copy a function's
``__code__``, forge a printed verdict), so the only defence is that the answer is not there to take. Before
a chapter is graded, :func:`write` copies the library into a temporary folder, which the sandbox mounts
read-only in place of the library (:mod:`tools.sandbox`). In that copy:

* the exercise toolkit is gone: every module of ``exercises/`` (the chapters' ``ch<N>.py`` with their
  references and the toolkit's own modules) except what the harness that runs in
  the sandbox needs (:func:`kept_modules`: ``harness.py``, ``codec.py`` and what they import from
  ``exercises/``), with no ``__pycache__`` anywhere;
* ``exercises/__init__.py`` and each ``exercises/ch<N>.py`` are stubs: any ``check_…`` name is a function
  that only prints ``ex-… checked by the grader`` (so that a notebook's ``from
  transformerland.exercises.ch2 import check_…`` cells still run), and any other name raises
  ``AttributeError`` (withheld while grading);
* every library function that an exercise withholds (:func:`withheld_names`: dotted names such as
  ``transformerland.encodings.sinusoidal.sinusoidal_encoding``, or ``module.Class.method``) keeps its
  signature and docstring, and its body is one ``raise RuntimeError(... is withheld while this chapter is
  graded ...)``: the module's source is rewritten with :mod:`ast`, so nothing of the original body remains.

    with tempfile.TemporaryDirectory() as folder:
        package = write(library_dir(), Path(folder), withheld_names(specs), checkers)
"""

from __future__ import annotations

import ast
import importlib
import inspect
import shutil
import tempfile
import threading
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: The modules of ``exercises/`` that the sandbox runs: the harness and the codec of its messages.
HARNESS = ("harness.py", "codec.py")

STUB = '''\
"""Withheld while grading: this sandbox holds no exercise's reference, checker or data.

A ``check_...`` name is a function that only says the grader checks the exercise; any other name raises
``AttributeError``.
"""

_CHECKED = {checked!r}


def __getattr__(name: str):
    if name.startswith("check_"):

        def checked(*args, **kwargs):
            print(f"{{_CHECKED.get(name, name)}} checked by the grader")

        checked.__name__ = name
        return checked
    raise AttributeError(f"{{__name__}}.{{name}} is withheld while grading")
'''


def withheld_names(specs: Iterable[Any]) -> tuple[str, ...]:
    """The library functions that ``specs`` (exercises, ``None`` skipped) withhold, each once, in order."""
    return tuple(dict.fromkeys(name for spec in specs if spec is not None for name in spec.withheld))


def checker_labels(specs: Iterable[Any]) -> dict[str, str]:
    """``{"check_…": "ex-…"}`` for the specs that name their checker (the stubs' printed label)."""
    found = {}
    for spec in specs:
        checker = getattr(spec, "checker", None) if spec is not None else None
        if isinstance(checker, str) and checker:
            found[checker] = spec.label
    return found


def kept_modules(exercises: Path) -> set[str]:
    """The files of ``exercises/`` the sandbox needs: :data:`HARNESS` and every module of ``exercises/`` they
    import, directly or not (relative imports, or ``transformerland.exercises.<name>``)."""
    kept: set[str] = set()
    todo = [name for name in HARNESS if (exercises / name).exists()]
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        kept.add(name)
        tree = ast.parse((exercises / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    targets = [node.module] if node.module else [alias.name for alias in node.names]
                elif node.module and node.module.startswith("transformerland.exercises."):
                    targets = [node.module.removeprefix("transformerland.exercises.")]
                else:
                    continue
                todo += [f"{t.split('.')[0]}.py" for t in targets if (exercises / f"{t.split('.')[0]}.py").exists()]
    return kept


def write(library: Path, into: Path, withheld: Iterable[str] = (), checkers: Mapping[str, str] | None = None) -> Path:
    """Write the grading build of the package at ``library`` into ``into``; return the copy's package folder.

    Args:
        library: the package to copy (``transformerland``, the grader's own).
        into: an empty folder; the copy goes to ``into/<package name>``.
        withheld: dotted names of the package's Python functions (or methods) whose bodies are withheld.
        checkers: ``{"check_…": "ex-…"}``, the labels the stubs print (default: the checker's own name).

    Raises ``ValueError`` naming a withheld name that is not a Python function of the package.
    """
    package = into / library.name
    shutil.copytree(library, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo"))
    exercises = package / "exercises"
    if exercises.is_dir():
        kept = kept_modules(library / "exercises")
        stubbed = {"__init__.py", *(p.name for p in exercises.glob("ch*.py") if p.stem[2:].isdigit())}
        for path in sorted(exercises.iterdir()):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.name not in kept:
                path.unlink()
        text = STUB.format(checked=dict(checkers or {}))
        for name in stubbed:
            (exercises / name).write_text(text, encoding="utf-8")
    for module, functions in _by_module(library, withheld).items():
        path = package.joinpath(*module.split(".")[1:])
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        path.write_text(_withhold(path.read_text(encoding="utf-8"), functions), encoding="utf-8")
    return package


def _by_module(library: Path, names: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{module: {qualified name in it: dotted name withheld}}``: where each withheld function is defined."""
    found: dict[str, dict[str, str]] = {}
    for name in names:
        target = _resolve(name)
        if not isinstance(target, types.FunctionType):
            raise ValueError(f"withheld names {name!r}, which is not a Python function of the library.")
        module = target.__module__
        if module.split(".")[0] != library.name:
            raise ValueError(f"withheld names {name!r}, defined in {module}, outside {library.name}.")
        found.setdefault(module, {})[target.__qualname__] = name
    return found


def _resolve(name: str) -> Any:
    """The object a dotted name names: the longest importable module, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                value = getattr(value, attribute)
        except AttributeError:
            break
        return inspect.unwrap(value)
    raise ValueError(f"withheld names {name!r}, which the library does not define.")


def _withhold(source: str, functions: Mapping[str, str]) -> str:
    """``source`` with the body of each function named (by qualified name) replaced by a ``raise``."""
    tree = ast.parse(source)
    done: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and prefix + node.name in functions:
                name = functions[prefix + node.name]
                docstring = ast.get_docstring(node, clean=False)
                raised = ast.parse(
                    f"raise RuntimeError({name + ' is withheld while this chapter is graded: write it yourself'!r})"
                ).body
                node.body = ([ast.Expr(ast.Constant(docstring))] if docstring is not None else []) + raised
                done.add(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    missing = set(functions) - done
    if missing:
        raise ValueError(f"withheld functions not defined at a module's or class's top level: {sorted(missing)}")
    return ast.unparse(tree) + "\n"


class Builds:
    """The grading builds of one batch, one per chapter, made when first needed, in a temporary folder.

    ``with Builds() as builds: builds.package(number, specs)`` gives the package folder to mount for chapter
    ``number`` (its exercises' ``specs``); the folder goes when the ``with`` block ends. Safe across threads.
    """

    def __init__(self, library: Path | None = None) -> None:
        from tools.sandbox import library_dir  # the sandbox mounts what is made here

        self.library = library or library_dir()
        self._folder: tempfile.TemporaryDirectory | None = None
        self._made: dict[int, Path] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> Builds:
        self._folder = tempfile.TemporaryDirectory(prefix="grading-build-")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def package(self, number: int, specs: Iterable[Any]) -> Path:
        """The grading build for chapter ``number`` (made on first use)."""
        if self._folder is None:
            raise RuntimeError("use Builds in a with block")
        with self._lock:
            if number not in self._made:
                specs = [spec for spec in specs if spec is not None]
                into = Path(self._folder.name) / f"ch{number}"
                into.mkdir()
                package = write(self.library, into, withheld_names(specs), checker_labels(specs))
                _readable(Path(self._folder.name))
                self._made[number] = package
            return self._made[number]


def _readable(folder: Path) -> None:
    """Let the sandbox's user (nobody) read the build: folders 755, files 644."""
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
