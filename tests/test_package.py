"""The package's own lists stay complete: every module says what it exports, and the package names every module."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
import transformerland

MODULES = [m.name for m in pkgutil.walk_packages(transformerland.__path__, "transformerland.") if "._" not in m.name]


@pytest.mark.parametrize("name", MODULES)
def test_every_module_lists_what_it_defines(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    for item in exported:
        assert hasattr(module, item), f"{name}.__all__ names {item!r}, which it does not have"
    defined = {
        attribute
        for attribute, value in vars(module).items()
        if not attribute.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == name
    }
    assert defined <= set(exported), f"{name} defines {sorted(defined - set(exported))} but does not export them"


def test_the_package_docstring_names_every_top_level_module() -> None:
    top_level = {m.name for m in pkgutil.iter_modules(transformerland.__path__) if not m.name.startswith("_")}
    missing = {name for name in top_level if f"transformerland.{name}`" not in transformerland.__doc__}
    assert not missing, f"transformerland/__init__.py does not mention {sorted(missing)}"
