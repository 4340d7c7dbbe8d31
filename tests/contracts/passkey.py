"""Contracts of the passkey experiment (transformerland.passkey) and the lookup task (transformerland.recall).

The model is a one-layer transformers Llama of width 16 with SmolLM2's kind of rotary module, made
here in milliseconds; the tokenizer a stand-in that turns each character into its code point.
"""

from __future__ import annotations

import torch
from transformerland import passkey, recall
from transformers import LlamaConfig, LlamaForCausalLM

from . import Choice, Count, Fixed, Number, Size, Tensor, Text, contract, record

NOT_MODELS = [None, "model", 3, torch.nn.Linear(2, 2)]


class CharTokenizer:
    """Each character one token, its code point modulo 128: enough to build a prompt of exact length."""

    def __call__(self, text: str, add_special_tokens: bool = False):
        return type("Encoding", (), {"input_ids": [ord(c) % 128 for c in text]})()

    def decode(self, ids) -> str:
        return "".join(chr(int(i)) for i in ids)


def tiny_llama() -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=128,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    return LlamaForCausalLM(config).eval()


def _inside_recipe(model, scaling, seq_len):
    """The frequencies the model uses inside the ``with`` block, and whether they are restored after it."""
    with passkey.rope_recipe(model, scaling, seq_len) as inside:
        rotary = next(m for m in inside.modules() if hasattr(m, "inv_freq"))
        used = rotary.inv_freq.clone()
    restored = torch.equal(rotary.inv_freq, tiny_llama().model.rotary_emb.inv_freq)
    return used, restored


TRIAL = {"recipe": "plain RoPE", "n_tokens": 64, "found": True}

CONTRACTS = [
    record(
        "transformerland.experiments.passkey.Wording",
        "four texts; passkey_prompt checks the wording's name",
        example=lambda: passkey.WORDINGS[passkey.WORDING],
        holds=lambda w: w.needle.count("{key}") == 2 and not any(c.isdigit() for c in w.intro + w.filler + w.question),
    ),
    record(
        "transformerland.experiments.passkey.PasskeyPrompt",
        "made by passkey_prompt from checked arguments",
        example=lambda: passkey.passkey_prompt(CharTokenizer(), 400, 0.5, "40721"),
        holds=lambda p: p.input_ids.shape == (1, 400) and p.key == "40721",
    ),
    record(
        "transformerland.experiments.passkey.PasskeyResult",
        "made by passkey_trial from checked arguments",
        example=lambda: passkey.passkey_trial(tiny_llama(), CharTokenizer(), 400, 0.5, "40721", new_tokens=2),
        holds=lambda r: (
            r.n_tokens == 400 and isinstance(r.found, bool) and r.found == passkey.passkey_found(r.answer, r.key)
        ),
    ),
    contract(
        "transformerland.experiments.passkey.passkey_prompt",
        tokenizer=Fixed(CharTokenizer(), bad=[None, 3, "tokenizer"]),
        n_tokens=Size(400, cap=2**20),
        depth=Number(0.5, low=0.0, high=1.0, edges=(0.0, 1.0)),
        key=Fixed("40721", bad=[None, 40721, "4o721", ""]),
        wording=Choice(passkey.WORDING, tuple(passkey.WORDINGS)),
        raises=(),
        reference=lambda out, a: out.input_ids.shape == (1, a["n_tokens"]) and out.key == a["key"],
    ),
    contract(
        "transformerland.experiments.passkey.passkey_found",
        answer=Text(" 40721."),
        key=Fixed("40721", bad=[None, 40721, "4072", "4o721"]),
        reference=lambda out, a: out is True,
    ),
    contract(
        "transformerland.experiments.passkey.passkey_keys",
        count=Size(3),
        seed=Count(0),
        reference=lambda out, a: len(out) == a["count"] and all(len(k) == 5 and k.isdigit() for k in out),
    ),
    contract(
        "transformerland.experiments.passkey.needle_depths",
        count=Size(4),
        reference=lambda out, a: len(out) == a["count"] and all(0 < d < 1 for d in out),
    ),
    contract(
        "transformerland.experiments.passkey.rope_recipe",
        call=_inside_recipe,
        model=Fixed(tiny_llama, bad=NOT_MODELS, make=True),
        scaling=Fixed({"rope_type": "linear", "factor": 2.0}, bad=[{"rope_type": "nonsense"}, "linear", 3]),
        seq_len=Size(32, optional=True),
        reference=lambda out, a: out[1],
    ),
    contract(
        "transformerland.experiments.passkey.greedy_digits",
        model=Fixed(tiny_llama, bad=NOT_MODELS, make=True),
        input_ids=Tensor(lambda: torch.tensor([[1, 2, 3, 4]]), kind="index", wrong_shapes=((2, 4), (1, 0), (4,))),
        new_tokens=Size(3, cap=passkey.MAX_NEW_TOKENS),
        reference=lambda out, a: out.shape == (a["new_tokens"],),
        refuse=({"input_ids": torch.tensor([[1, 2, 128]])}, {"input_ids": torch.tensor([[-1, 2]])}),  # vocabulary: 128
    ),
    contract(
        "transformerland.experiments.passkey.passkey_trial",
        model=Fixed(tiny_llama, bad=NOT_MODELS, make=True),
        tokenizer=Fixed(CharTokenizer(), bad=[None, 3]),
        n_tokens=Fixed(400, bad=[0, -1, 2.5, None, 10]),
        depth=Number(0.5, low=0.0, high=1.0),
        key=Fixed("40721", bad=[None, 40721]),
        recipe=Text("plain RoPE"),
        new_tokens=Size(2, cap=passkey.MAX_NEW_TOKENS),
        reference=lambda out, a: out.n_tokens == 400 and isinstance(out.found, bool),
    ),
    contract(
        "transformerland.experiments.passkey.passkey_trials",
        model=Fixed(tiny_llama, bad=NOT_MODELS, make=True),
        tokenizer=Fixed(CharTokenizer(), bad=[None, 3]),
        n_tokens=Fixed(400, bad=[0, -1, 2.5, None, 10]),
        depths=Fixed([0.25, 0.75], bad=[[], 0.5, None, [0.5], [0.5, 2.0]]),
        keys=Fixed(["40721", "13579"], bad=[None, "40721", [40721, 13579], ["40721"]]),
        recipe=Text("plain RoPE"),
        new_tokens=Size(2, cap=passkey.MAX_NEW_TOKENS),
        reference=lambda out, a: [r.key for r in out] == a["keys"] and all(r.n_tokens == 400 for r in out),
    ),
    contract(
        "transformerland.experiments.passkey.load_passkey_grid",
        reference=lambda out, a: {"trials", "runs"} <= set(out) and len(out["trials"]) > 0,
    ),
    contract(
        "transformerland.experiments.passkey.passkey_scores",
        trials=Fixed([TRIAL, {**TRIAL, "found": False}], bad=[None, "trials", {"a": 1}, [1, 2], [{"recipe": "x"}]]),
        reference=lambda out, a: out == {"plain RoPE": {64: 0.5}},
    ),
    contract(
        "transformerland.experiments.recall.LookupTask",
        n_keys=Size(16),
        n_values=Size(4, low=2),
        reference=lambda out, a: out.vocab_size == a["n_keys"] * a["n_values"] + a["n_keys"] + a["n_values"],
    ),
    contract(
        "transformerland.experiments.recall.LookupTask.sample",
        call=lambda batch_size, length, generator: recall.LookupTask(16, 4).sample(batch_size, length, generator),
        batch_size=Size(2),
        length=Size(9, low=3, cap=33),
        generator=Fixed(torch.Generator, bad=[None, 0, "seed"], make=True),
        reference=lambda out, a: out.inputs.shape == (a["batch_size"], a["length"]),
    ),
    contract(
        "transformerland.experiments.passkey.wilson_interval",
        found=Count(8, low=0, high=10),
        trials=Size(10),
        z=Number(1.96, low=0.0, low_open=True, span=(0.1, 4.0)),
        reference=lambda out, a: 0.0 <= out[0] <= a["found"] / a["trials"] <= out[1] <= 1.0,
    ),
    contract(
        "transformerland.experiments.passkey.fisher_p",
        found_a=Count(3, low=0, high=4),
        trials_a=Size(4),
        found_b=Count(1, low=0, high=4),
        trials_b=Size(4),
        reference=lambda out, a: 0.0 < out <= 1.0,
    ),
    contract(
        "transformerland.experiments.passkey.mcnemar_p",
        only_a=Count(5, low=0),
        only_b=Count(2, low=0),
        reference=lambda out, a: 0.0 < out <= 1.0,
    ),
    contract(
        "transformerland.experiments.passkey.long_context_recipes",
        original_length=Size(8192, edges=(1, 4096)),
        factor=Number(4.0, low=1.0, span=(1.0, 64.0)),
        reference=lambda out, a: (
            out["plain RoPE"] is None
            and out["dynamic NTK (f=1)"]["factor"] == 1.0
            and out[f"dynamic NTK (f={a['factor']:g})"]["factor"] == a["factor"]
        ),
    ),
]
