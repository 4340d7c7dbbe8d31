"""transformerland.passkey: prompts of exact length, a recipe put into a transformers RoPE model and taken out,
greedy trials; and (slow) one point of the committed grid re-run on this machine."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest
import torch
from transformerland.encodings import rope_frequencies, scaling_recipes
from transformerland.passkey import (
    WORDING,
    WORDINGS,
    fisher_p,
    load_passkey_grid,
    long_context_recipes,
    mcnemar_p,
    needle_depths,
    passkey_found,
    passkey_keys,
    passkey_prompt,
    passkey_scores,
    passkey_trial,
    passkey_trials,
    rope_recipe,
    wilson_interval,
)


class ByteTokenizer:
    """One token per byte: enough to check lengths and positions."""

    def __call__(self, text: str, add_special_tokens: bool = False) -> SimpleNamespace:
        return SimpleNamespace(input_ids=list(text.encode()))

    def decode(self, ids: torch.Tensor) -> str:
        return bytes(int(i) % 256 for i in ids).decode(errors="replace")


@pytest.mark.parametrize("depth", [0.0, 0.3, 1.0])
def test_prompt_has_the_exact_length_and_the_needle_at_its_depth(depth):
    prompt = passkey_prompt(ByteTokenizer(), 600, depth, "40721")
    words = WORDINGS[WORDING]
    assert prompt.input_ids.shape == (1, 600)
    text = bytes(prompt.input_ids[0].tolist()).decode()
    assert text.startswith(words.intro) and text.endswith(words.question)
    assert text.index(words.needle.format(key="40721")) == prompt.needle_at
    room = 600 - len(words.intro) - len(words.needle.format(key="40721")) - len(words.question)
    assert prompt.needle_at - len(words.intro) == round(depth * room)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_tokens": 20}, "no room for filler"),
        ({"depth": 1.5}, "depth"),
        ({"key": "4o721"}, "key"),
        ({"wording": "poem"}, "wording"),
    ],
)
def test_prompt_refuses_bad_input(kwargs, match):
    args = {"n_tokens": 600, "depth": 0.5, "key": "40721", **kwargs}
    with pytest.raises(ValueError, match=match):
        passkey_prompt(ByteTokenizer(), **args)


def test_keys_and_depths():
    keys = passkey_keys(50, seed=3)
    assert keys == passkey_keys(50, seed=3) and keys != passkey_keys(50, seed=4)
    assert all(len(k) == 5 and k.isdigit() for k in keys)
    assert needle_depths(10) == [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95]


def test_rope_recipe_puts_the_frequencies_in_and_takes_them_out(tiny_llama):
    rotary = tiny_llama.model.rotary_emb
    before = rotary.inv_freq.clone()
    yarn = scaling_recipes(original_length=16, factor=4.0)["YaRN"]
    expected, factor = rope_frequencies(16, 1e4, yarn)
    with rope_recipe(tiny_llama, yarn):
        assert torch.allclose(rotary.inv_freq.double(), expected, rtol=1e-6)
        assert rotary.attention_scaling == pytest.approx(factor) and factor > 1
    assert torch.equal(rotary.inv_freq, before) and rotary.attention_scaling == 1.0
    with pytest.raises(TypeError, match="language model"):
        with rope_recipe(torch.nn.Linear(2, 2), None):
            pass
    no_rotary = torch.nn.Linear(2, 2)
    no_rotary.config = tiny_llama.config
    with pytest.raises(ValueError, match="rotary"):
        with rope_recipe(no_rotary, None):
            pass


def test_plain_recipe_changes_nothing_and_dynamic_reads_the_length(tiny_llama):
    ids = torch.randint(256, (1, 40), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        plain = tiny_llama(ids).logits
        with rope_recipe(tiny_llama, None):
            assert torch.allclose(tiny_llama(ids).logits, plain, atol=1e-5)  # float32 frequencies, ours from float64
        dynamic = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": 16}
        with rope_recipe(tiny_llama, dynamic, seq_len=16):  # within L: plain RoPE
            assert torch.allclose(tiny_llama(ids).logits, plain, atol=1e-6)
        with rope_recipe(tiny_llama, dynamic, seq_len=40):  # 2.5 times L: the NTK-aware base at factor 2.5
            stretched = rope_frequencies(16, 1e4, {"rope_type": "ntk", "factor": 2.5})[0]
            assert torch.allclose(tiny_llama.model.rotary_emb.inv_freq.double(), stretched, rtol=1e-6)


def test_trial_reports_what_it_wrote(tiny_llama):
    result = passkey_trial(tiny_llama, ByteTokenizer(), 300, 0.5, "12345", new_tokens=3)
    assert result.n_tokens == 300 and result.recipe == "plain RoPE" and len(result.answer.encode(errors="ignore")) <= 6
    assert result.found == passkey_found(result.answer, "12345")


def test_a_batch_answers_as_its_prompts_do_one_at_a_time(tiny_llama):
    depths, keys = [0.1, 0.5, 0.9], ["12345", "67890", "24680"]
    dynamic = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 64}
    batch = passkey_trials(tiny_llama, ByteTokenizer(), 300, depths, keys, dynamic, "dynamic", new_tokens=4)
    alone = [
        passkey_trial(tiny_llama, ByteTokenizer(), 300, d, k, dynamic, "dynamic", 4)
        for d, k in zip(depths, keys, strict=True)
    ]
    assert [(r.depth, r.key, r.answer, r.found) for r in batch] == [(r.depth, r.key, r.answer, r.found) for r in alone]
    with pytest.raises(ValueError, match="pair up"):
        passkey_trials(tiny_llama, ByteTokenizer(), 300, depths, keys[:2])
    with pytest.raises(TypeError, match="non-empty lists"):
        passkey_trials(tiny_llama, ByteTokenizer(), 300, [], [])


@pytest.mark.parametrize(
    ("answer", "found"),
    [(" 40721.", True), (" 407213", True), (" 12345. The pass key is 40721", False), (" 4 0721", False),
     (" a key.\nThe pass key", False), (" 5.\n40721", True)],
)  # fmt: skip
def test_found_means_the_first_five_digit_run_is_the_key(answer, found):
    assert passkey_found(answer, "40721") is found
    with pytest.raises(ValueError, match="five digits"):
        passkey_found(answer, "4072")


def test_the_committed_grid_records_its_provenance():
    grid = load_passkey_grid()
    run = grid["runs"][-1]
    for field in ("date", "command", "device", "torch", "transformers", "transformerland", "trial_seconds"):
        assert run[field], field
    assert run["commit"] or run.get("commit_note"), "a sitting names its commit, or says why it cannot"
    assert grid["wording"] in WORDINGS and grid["prompt"] == vars(WORDINGS[grid["wording"]])
    assert grid["new_tokens"] >= 6 and grid["judging"], "the file says how long the answers were and how judged"
    needles = Counter((t["n_tokens"], t["recipe"]) for t in grid["trials"])
    assert len(set(needles.values())) == 1 and min(needles.values()) >= 10, "every cell has the same needles"
    scores = passkey_scores(grid["trials"])
    assert set(scores) == set(grid["recipes"]) and all(0 <= v <= 1 for row in scores.values() for v in row.values())


def test_one_grid_point_rerun_on_this_machine_agrees_with_the_file(smollm2):
    """The shortest length, plain RoPE, the first two needles: the same answers as the committed grid.

    On the session's SmolLM2 (tests/conftest.py; slow), with the grid's attention (sdpa), put back after.
    """
    grid = load_passkey_grid()
    shortest = min(t["n_tokens"] for t in grid["trials"])
    recorded = [t for t in grid["trials"] if t["n_tokens"] == shortest and t["recipe"] == "plain RoPE"][:2]
    model, tokenizer = smollm2
    before = model.config._attn_implementation
    model.set_attn_implementation("sdpa")
    try:
        for t in recorded:
            again = passkey_trial(
                model, tokenizer, t["n_tokens"], t["depth"], t["key"], None, new_tokens=grid["new_tokens"],
                wording=grid["wording"],
            )  # fmt: skip
            assert again.answer == t["answer"], (again, t)
            assert again.found == t["found"] == passkey_found(t["answer"], t["key"]), (again, t)
    finally:
        model.set_attn_implementation(before)


@pytest.mark.parametrize(
    ("found", "trials", "low", "high"),
    [(10, 10, 0.7225, 1.0), (0, 10, 0.0, 0.2775), (8, 10, 0.4902, 0.9433), (38, 40, 0.8350, 0.9862)],
)
def test_wilson_interval_matches_its_formula(found, trials, low, high):
    got = wilson_interval(found, trials)
    assert got == pytest.approx((low, high), abs=1e-4)
    assert got[0] <= found / trials <= got[1]


def test_wilson_interval_narrows_with_more_needles():
    ten, thirty = wilson_interval(8, 10), wilson_interval(24, 30)
    assert thirty[1] - thirty[0] < 0.65 * (ten[1] - ten[0])


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [((11, 10), ValueError, "more than trials"), ((1, 0), ValueError, "trials"), ((1.5, 3), TypeError, "found"),
     ((1, 3, -1.0), ValueError, "z must be")],
)  # fmt: skip
def test_wilson_interval_refuses_bad_counts(args, error, match):
    with pytest.raises(error, match=match):
        wilson_interval(*args)


@pytest.mark.parametrize(
    ("only_a", "only_b", "p"),
    [(24, 8, 0.00700037), (15, 9, 0.30745625), (5, 0, 0.0625), (0, 0, 1.0), (3, 3, 1.0), (1, 0, 1.0), (2, 3, 1.0)],
)
def test_mcnemar_p_is_the_two_sided_sign_test(only_a, only_b, p):
    assert mcnemar_p(only_a, only_b) == pytest.approx(p, rel=1e-6)  # scipy's binomtest agrees
    assert mcnemar_p(only_b, only_a) == mcnemar_p(only_a, only_b)


@pytest.mark.parametrize(
    ("counts", "p"),
    [((3, 4, 1, 4), 34 / 70), ((41, 60, 104, 120), 0.00495144), ((36, 60, 94, 120), 0.01322208),
     ((0, 5, 5, 5), 0.00793651), ((2, 30, 7, 30), 0.14549922), ((60, 60, 110, 120), 0.03207126),
     ((10, 10, 10, 10), 1.0), ((0, 60, 0, 120), 1.0)],
)  # fmt: skip
def test_fisher_p_is_the_two_sided_exact_test(counts, p):
    assert fisher_p(*counts) == pytest.approx(p, rel=1e-6)  # scipy's fisher_exact agrees
    a, n, b, m = counts
    assert fisher_p(b, m, a, n) == pytest.approx(fisher_p(*counts), rel=1e-9)  # the groups' order does not matter


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [((5, 4, 1, 4), ValueError, "found_a = 5 is more than trials_a"), ((1, 4, 9, 8), ValueError, "found_b"),
     ((1, 0, 1, 4), ValueError, "trials_a"), ((1.0, 4, 1, 4), TypeError, "found_a")],
)  # fmt: skip
def test_fisher_p_refuses_bad_counts(args, error, match):
    with pytest.raises(error, match=match):
        fisher_p(*args)


@pytest.mark.parametrize(("args", "error", "match"), [((-1, 3), ValueError, "only_a"), ((2, 1.5), TypeError, "only_b")])
def test_mcnemar_p_refuses_bad_counts(args, error, match):
    with pytest.raises(error, match=match):
        mcnemar_p(*args)


def test_long_context_recipes_name_each_dynamic_factor():
    rows = long_context_recipes(8192, 4.0)
    assert list(rows) == ["plain RoPE", "linear (PI)", "NTK-aware", "YaRN", "Llama 3", "dynamic NTK (f=1)",
                          "dynamic NTK (f=4)"]  # fmt: skip
    assert rows["dynamic NTK (f=1)"]["factor"] == 1.0 and rows["dynamic NTK (f=4)"]["factor"] == 4.0
    assert {k: v for k, v in rows.items() if not k.startswith("dynamic")} == {
        k: v for k, v in scaling_recipes(8192, 4.0).items() if k != "dynamic NTK"
    }
