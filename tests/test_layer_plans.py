"""Layer plans: NoPE layers interleaved, local windows with their own base, global layers."""

from __future__ import annotations

import pytest
import torch
from transformerland.experiments.layer_plans_lookup import lookup_sweep_accuracy
from transformerland.layer_plans import (
    LayerPlan,
    PlannedSelfAttention,
    apply_layer_plan,
    compared_plans,
    interleaved_plan,
    local_global_plan,
    sliding_window_mask,
)
from transformerland.model import TinyTransformer, TransformerConfig


def rope_model(n_layers: int = 4, **kwargs) -> TinyTransformer:
    return TinyTransformer(
        TransformerConfig(8, d_model=16, n_layers=n_layers, n_heads=2, d_ff=32, position="rope", **kwargs)
    )


def test_interleaved_plan_matches_smollm3() -> None:
    from transformers import SmolLM3Config

    plan = interleaved_plan(8, 4)
    uses_rope = SmolLM3Config(num_hidden_layers=8).no_rope_layers  # 1 = this layer uses RoPE
    assert [int(p.position == "rope") for p in plan] == uses_rope == [1, 1, 1, 0, 1, 1, 1, 0]


def test_local_global_plan_matches_gemma3() -> None:
    from transformers import Gemma3TextConfig

    plan = local_global_plan(12, 6, window=512)
    config = Gemma3TextConfig(num_hidden_layers=12)
    kinds = ["full_attention" if p.window is None else "sliding_attention" for p in plan]
    assert kinds == config.layer_types
    assert {p.base for p in plan if p.window} == {10000.0} and {p.base for p in plan if not p.window} == {1e6}


def test_window_mask() -> None:
    mask = sliding_window_mask(5, 2)
    assert mask.int().tolist() == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]
    assert sliding_window_mask(4).equal(torch.ones(4, 4, dtype=torch.bool).tril())


def test_a_plan_keeps_the_weights_and_changes_the_layers() -> None:
    model = rope_model()
    tokens = torch.randint(0, 8, (2, 12), generator=torch.Generator().manual_seed(0))
    before = model(tokens)
    apply_layer_plan(model, [LayerPlan()] * 4)
    torch.testing.assert_close(model(tokens), before)  # all-RoPE, global: the same model
    apply_layer_plan(model, interleaved_plan(4, 4))
    assert [b.attention.position for b in model.blocks] == ["rope", "rope", "rope", "none"]
    assert all(isinstance(b.attention, PlannedSelfAttention) for b in model.blocks)
    assert not torch.allclose(model(tokens), before)


def test_a_window_hides_far_keys() -> None:
    model = apply_layer_plan(rope_model(1), [LayerPlan("rope", 10000.0, window=3)])
    tokens = torch.randint(0, 8, (1, 10), generator=torch.Generator().manual_seed(1))
    _, weights = model.blocks[0].attention(model.embed(tokens), return_weights=True)
    assert (weights[0, :, 6, :4] == 0).all() and (weights[0, :, 6, 4:7] > 0).all()


def test_nope_layer_is_shift_invariant_in_its_scores() -> None:
    model = apply_layer_plan(rope_model(1), [LayerPlan("none")])
    assert (
        model.blocks[0]
        .attention._rotate(torch.ones(1, 1, 3, 8), torch.ones(1, 1, 3, 8))[0]
        .equal(torch.ones(1, 1, 3, 8))
    )


def test_base_per_layer() -> None:
    model = apply_layer_plan(rope_model(2), local_global_plan(2, 2, window=4))
    assert [b.attention.rope_base for b in model.blocks] == [10000.0, 1e6]
    assert [b.attention.window for b in model.blocks] == [4, None]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: LayerPlan("alibi"), ValueError, "position"),
        (lambda: LayerPlan(window=0), ValueError, "window"),
        (lambda: LayerPlan(base=-1.0), ValueError, "base"),
        (lambda: interleaved_plan(4, 0), ValueError, "nope_every"),
        (lambda: apply_layer_plan(rope_model(2), [LayerPlan()]), ValueError, "one per layer"),
        (lambda: apply_layer_plan(rope_model(1), LayerPlan()), TypeError, "list of LayerPlan"),
        (lambda: apply_layer_plan(rope_model(1), ["rope"]), TypeError, r"plan\[0\]"),
        (lambda: apply_layer_plan(TinyTransformer(TransformerConfig(8, position="alibi")), []), ValueError, "rope"),
        (lambda: apply_layer_plan(rope_model(1, causal=False), [LayerPlan(window=2)]), ValueError, "not causal"),
        (lambda: compared_plans(window=0), ValueError, "window"),
        (lambda: lookup_sweep_accuracy("Gemma 3", 0, steps=1), ValueError, "plan must be one of"),
        (lambda: lookup_sweep_accuracy("RoPE everywhere", -1, steps=1), ValueError, "seed"),
    ],
)
def test_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_compared_plans_are_the_published_patterns_and_a_control() -> None:
    plans = compared_plans(window=8)
    assert len(plans) == 5 and all(len(plan) == 4 for plan in plans.values())
    rope, smol, gemma, llama, local = plans.values()
    assert rope == [LayerPlan()] * 4 and smol == interleaved_plan(4, 4) and gemma == local_global_plan(4, 4, window=8)
    assert [p.window for p in llama] == [8, 8, 8, None] and [p.position for p in llama] == ["rope"] * 3 + ["none"]
    assert local == [LayerPlan("rope", window=8)] * 4  # no global layer at all


def test_a_lookup_sweep_point_runs_for_every_plan() -> None:
    """Two steps of each plan, so that a change to the library cannot break the sweep unseen."""
    for plan in compared_plans():
        shares = lookup_sweep_accuracy(plan, 0, steps=2)
        assert len(shares) == 3 and all(0.0 <= v <= 1.0 for v in shares)
