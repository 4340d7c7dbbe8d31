"""transformerland.experiments.long_text: the loss of every prediction of one long input, in chunks, and its means by
position; and (slow) one point of the committed long-text benchmark re-run on this machine."""

from __future__ import annotations

import pytest
import torch
from transformerland.experiments.long_text import bucket_means, load_long_text_losses, token_losses


def test_token_losses_are_the_cross_entropy_of_the_full_logits(tiny_llama):
    ids = torch.randint(0, 256, (1, 50), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits = tiny_llama(ids).logits[0, :-1]
    expected = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none").double()
    for chunk in (1, 7, 49, 1024):
        got = token_losses(tiny_llama, ids, chunk=chunk)
        assert got.shape == (49,) and got.dtype == torch.float64
        assert torch.allclose(got, expected, atol=1e-5), chunk


def test_bucket_means_average_runs_of_positions_and_keep_a_short_last_run():
    losses = torch.arange(10, dtype=torch.float64)
    assert bucket_means(losses, 4) == [1.5, 5.5, 8.5]
    assert bucket_means(losses, 10) == [4.5]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda m: token_losses(object(), torch.zeros(1, 4, dtype=torch.long)), TypeError, "causal language model"),
        (lambda m: token_losses(m, torch.zeros(2, 4, dtype=torch.long)), ValueError, "one text"),
        (lambda m: token_losses(m, torch.zeros(1, 1, dtype=torch.long)), ValueError, "at least 2"),
        (lambda m: token_losses(m, torch.zeros(1, 4, dtype=torch.long), chunk=0), ValueError, "chunk"),
        (lambda m: bucket_means(torch.zeros(0), 4), ValueError, "at least one loss"),
        (lambda m: bucket_means(torch.zeros(5), 0), ValueError, "width"),
    ],
)
def test_bad_input_is_named(tiny_llama, call, error, match):
    with pytest.raises(error, match=match):
        call(tiny_llama)


def test_the_committed_results_record_their_provenance():
    results = load_long_text_losses()
    assert "public domain" in results["text"]["source"] and results["text"]["words"] > 30_000
    assert results["tokens"] > results["context"] == 8192
    if results["measured"]:
        for run in results["runs"]:
            for field in ("date", "commit", "command", "device", "torch", "transformers", "transformerland"):
                assert run[field], field
        buckets = -(-(results["tokens"] - 1) // results["bucket"])
        assert all(len(row) == buckets for row in results["losses"].values())
        assert set(results["losses"]) <= set(results["recipes"])


@pytest.mark.slow
def test_a_shorter_window_repeats_the_losses_of_a_longer_one_on_smollm2():
    """What the benchmark's check rests on: under a recipe fixed in advance, a prediction does not depend on the
    tokens after it, so the first positions of a longer window have the losses of a shorter one (SmolLM2, YaRN,
    the benchmark's own text)."""
    from pathlib import Path

    from transformerland.llm import load_smollm2
    from transformerland.passkey import long_context_recipes, rope_recipe

    text = (Path(__file__).parents[1] / "benchmarks" / "data" / "genesis_kjv.txt").read_text()
    model, tokenizer = load_smollm2()
    model.set_attn_implementation("sdpa")
    ids = tokenizer(text[:8000], return_tensors="pt").input_ids[:, :640]
    yarn = long_context_recipes()["YaRN"]
    with rope_recipe(model, yarn, seq_len=640):
        longer = token_losses(model, ids)
    with rope_recipe(model, yarn, seq_len=512):
        shorter = token_losses(model, ids[:, :512])
    assert torch.allclose(longer[:511], shorter, atol=1e-3), (longer[:511] - shorter).abs().max()
    assert 1.0 < float(longer.mean()) < 6.0  # English that the model reads: a few nats a token


@pytest.mark.slow
def test_the_first_run_of_positions_comes_out_as_the_file_says():
    """One point of the benchmark again: the mean loss of the first ``bucket`` predictions under plain RoPE.

    Plain RoPE's prediction at a position depends only on the tokens before it, so the first run of a
    16,384-token window is the same as that of a window one run long: seconds instead of minutes."""
    from transformerland.llm import load_smollm2

    from benchmarks.long_text_perplexity import text_ids

    results = load_long_text_losses()
    if "plain RoPE" not in results["losses"]:
        pytest.fail("data/long_text_losses.json holds no plain-RoPE losses: run benchmarks/long_text_perplexity.py")
    model, tokenizer = load_smollm2()
    model.set_attn_implementation("sdpa")
    ids = text_ids(tokenizer, results["bucket"] + 1)
    first = bucket_means(token_losses(model, ids), results["bucket"])[0]
    assert abs(first - results["losses"]["plain RoPE"][0]) < 2e-3, (first, results["losses"]["plain RoPE"][0])
