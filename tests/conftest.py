"""Fixtures shared by the library's and the checkers' tests, and the real models, each loaded once per session.

A test that asks for one of :data:`REAL_MODELS` is marked ``slow`` here (loading SmolLM2 takes about 20 s on a
2-core CPU and opening its GGUF file about 10, more than the tests themselves), so that ``make test-fast`` leaves
it out. MiniLM's embedding layer and tokenizer load in about a second: their tests stay in the fast tier.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pytest
from transformerland.exercises import VERDICT_PATTERN, CheckResult

#: The fixtures that load a real model; the tests that use them are slow.
REAL_MODELS = {"smollm2", "smollm2_sentence", "gguf_file"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that needs a real language model (:data:`REAL_MODELS`)."""
    for item in items:
        if REAL_MODELS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def gguf_file():
    """SmolLM2's GGUF file, opened (its header read, the tensors mapped, not loaded)."""
    from transformerland import llm

    return llm.GGUFFile()


@pytest.fixture(scope="session")
def smollm2():
    """``(model, tokenizer)``: SmolLM2-135M from its GGUF file, loaded once for the whole session.

    Shared by every test that asks for it: a test that changes the model puts it back as it found it.
    """
    from transformerland import llm

    return llm.load_smollm2()


@pytest.fixture(scope="session")
def smollm2_sentence(smollm2):
    """One English sentence as SmolLM2's ids, ``(1, T)``."""
    _, tokenizer = smollm2
    return tokenizer("The apple fell from the tree because it was ripe.", return_tensors="pt").input_ids


@pytest.fixture(scope="session")
def minilm_embeddings():
    """MiniLM's BERT embedding layer (the real weights), loaded once for the session."""
    from transformerland.bert import load_minilm_embeddings

    return load_minilm_embeddings()


@pytest.fixture(scope="session")
def minilm_tokenizer():
    """MiniLM's tokenizer, loaded once for the session."""
    from transformerland.bert import load_minilm_tokenizer

    return load_minilm_tokenizer()


class Verdict(NamedTuple):
    """The verdict word (``PASSED`` or ``NOT YET``) and everything the checker printed."""

    word: str
    out: str


@pytest.fixture
def verdict(capsys: pytest.CaptureFixture[str]) -> Callable[[CheckResult | None], Verdict]:
    """Read what the last checker printed; it must hold a verdict line.

    Call it as ``verdict()``, or ``verdict(result)`` to also require that the printed word agrees
    with the returned result (PASSED when it is truthy).
    """

    def read(result: CheckResult | None = None) -> Verdict:
        out = capsys.readouterr().out
        match = VERDICT_PATTERN.search(out)
        assert match is not None, out
        if result is not None:
            assert match["verdict"] == ("PASSED" if result else "NOT YET")
        return Verdict(match["verdict"], out)

    return read


@pytest.fixture(scope="session")
def working_sandbox() -> None:
    """Grading tests need a sandbox that starts: without one the test FAILS (it never skips), naming bubblewrap."""
    from tools import sandbox

    why = sandbox.problem()
    if why:
        pytest.fail(f"no working bubblewrap sandbox on this machine, so grading cannot be tested:\n{why}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a worker of ``pytest -n``: hand the contract test's counts to the main process."""
    from tests.contracts import COUNTS

    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["contract_counts"] = dict(COUNTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """In the main process of ``pytest -n``: add up the counts each worker handed over (pytest-xdist's hook)."""
    from tests.contracts import COUNTS

    COUNTS.update(getattr(node, "workeroutput", {}).get("contract_counts", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The contract test's counts (tests/test_contract.py), added up over the workers under ``pytest -n``."""
    from tests.contracts import COUNTS

    if COUNTS:
        line = ", ".join(f"{count} {what}" for what, count in sorted(COUNTS.items()))
        terminalreporter.write_sep("-", "the library's contract")
        terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def fresh_stages() -> None:
    """Each test starts with no slip seen before (a checker's hint stages live in the kernel)."""
    from transformerland.exercises import exercise

    exercise._SEEN.clear()


@pytest.fixture(scope="session")
def tiny_llama():
    """A seeded one-layer transformers Llama of width 32, for the passkey and long-text tests."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=64, rope_parameters={"rope_type": "default", "rope_theta": 1e4},
    )  # fmt: skip
    torch.manual_seed(0)
    return LlamaForCausalLM(config).eval()
