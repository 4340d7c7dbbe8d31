"""Chapter 8's recipe sweep, shipped as a data file: every point and its provenance, and one point re-run;
the two decoders it ships, loaded and checked, and one of them trained again."""

from __future__ import annotations

import pytest
import torch
from transformerland.experiments import recipe_sweep
from transformerland.experiments.recipe_sweep import (
    MODELS_SEED,
    RECIPE_SWEEP,
    SWEEP_MODELS,
    SWEEP_PARTS,
    load_recipe_sweep,
    load_recipe_sweep_model,
    recipe_sweep_model,
    recipe_sweep_point,
    sweep_recipes,
)
from transformerland.tasks import MarkovTask
from transformerland.training import evaluate

#: The point the slow test trains again: the one with the chapter's fine-tuning comparison, on the first seed.
POINT = ("markov", "0")


def test_the_sweep_has_every_point_and_its_provenance() -> None:
    sweep = load_recipe_sweep()
    assert sweep["setup"] == RECIPE_SWEEP, "the library's recipe changed since the sweep ran: run the benchmark again"
    assert sweep["recipes"] == sweep_recipes()
    seeds = [str(seed) for seed in sweep["provenance"]["seeds"]]
    assert seeds == ["0", "1", "2"] and list(sweep["results"]) == list(SWEEP_PARTS)
    lengths = len(RECIPE_SWEEP["eval_lengths"])
    for part, by_seed in sweep["results"].items():
        assert list(by_seed) == seeds, part
        for result in by_seed.values():
            if part in ("markov", "lookup"):
                assert list(result["zero_shot"]) == list(sweep_recipes())
                tuned = RECIPE_SWEEP["lookup_tuned"] if part == "lookup" else list(sweep_recipes())[:-1]
                assert list(result["fine_tuned"]) == tuned
                rows = [*result["zero_shot"].values(), *result["fine_tuned"].values()]
            else:
                rows = [result["losses"]]
            assert all(len(row) == lengths for row in rows)
            high = 1 if part == "lookup" else 3  # shares right; losses in nats (8 symbols: ln 8 = 2.08)
            assert all(0 <= x <= high for row in rows for x in row), (part, rows)
    provenance = sweep["provenance"]
    assert len(provenance["commit"].removesuffix("+dirty")) == 40 and provenance["date"] and provenance["machine"]


def test_a_point_names_its_part() -> None:
    with pytest.raises(ValueError, match="part"):
        recipe_sweep_point("gpt", 0, steps=1)


@pytest.mark.slow
def test_one_point_of_the_sweep_comes_out_the_same() -> None:
    """Train the point again with the library's recipe: every loss matches the file's (same seed, same data)."""
    part, seed = POINT
    recorded = load_recipe_sweep()["results"][part][seed]
    again = recipe_sweep_point(part, int(seed))
    for kind in ("zero_shot", "fine_tuned"):
        for name, losses in recorded[kind].items():
            assert all(abs(a - b) < 0.02 for a, b in zip(again[kind][name], losses, strict=True)), (kind, name)


def test_the_shipped_rope_model_scores_what_the_sweep_recorded() -> None:
    """The shipped RoPE model, evaluated as the sweep evaluates, gives seed 0's plain-RoPE zero-shot losses."""
    sweep = load_recipe_sweep()
    assert sweep["models"]["seed"] == MODELS_SEED and list(sweep["models"]["runs"]) == list(SWEEP_MODELS)
    rope = load_recipe_sweep_model("rope")
    assert not rope.training and rope.config.position == "rope" and next(rope.parameters()).device.type == "cpu"
    task = MarkovTask(**RECIPE_SWEEP["markov"])
    losses = [
        evaluate(rope, task, length=n, device="cpu", **RECIPE_SWEEP["eval"]).loss for n in RECIPE_SWEEP["eval_lengths"]
    ]
    recorded = sweep["results"]["markov"][str(MODELS_SEED)]["zero_shot"]["plain RoPE"]
    assert all(abs(a - b) < 1e-6 for a, b in zip(losses, recorded, strict=True)), (losses, recorded)
    nope = load_recipe_sweep_model("none")
    assert nope.config.position == "none" and not nope.training
    assert rope.state_dict().keys() == nope.state_dict().keys()


def test_a_shipped_model_is_named_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="position"):
        load_recipe_sweep_model("alibi")
    with pytest.raises(ValueError, match="position"):
        recipe_sweep_model("learned", 0, steps=1)
    sweep = load_recipe_sweep()
    wrong = dict(sweep, models=dict(sweep["models"], sha256="0" * 64))
    monkeypatch.setattr(recipe_sweep, "load_recipe_sweep", lambda: wrong)
    with pytest.raises(ValueError, match=r"recipe_sweep_models\.pt.*reinstall"):
        load_recipe_sweep_model("none")


@pytest.mark.slow
def test_a_shipped_model_comes_out_the_same() -> None:
    """Train the model without positions again: its weights are those of the file, and so is its last loss.

    On the machine that wrote the file they come out bit for bit the same. Another CPU may round a sum in
    another order (its vector width), and 240 Adam steps carry such a rounding to about 1e-5; 1e-3 still
    tells any change of recipe, seed or data, which moves the weights by tenths.

    One part is left out: the keys' bias. Adding the same vector to every key adds the same number to
    all of a query's scores, which the softmax ignores, so its true gradient is zero and what it gets is
    rounding noise. Adam divides a gradient by its own running size, so that noise still moves it, by
    up to about 1e-3 on another CPU (seen at 1.4e-3), and differently on each: those numbers change
    nothing the model computes, which the logits check below confirms."""
    model, run = recipe_sweep_model("none", MODELS_SEED)
    shipped_model = load_recipe_sweep_model("none")
    shipped, trained = shipped_model.state_dict(), model.state_dict()
    assert trained.keys() == shipped.keys()

    def without_key_bias(name: str, tensor: torch.Tensor) -> torch.Tensor:
        if not name.endswith("attention.qkv.bias"):
            return tensor
        query, _, value = tensor.chunk(3)  # laid out as query, key, value
        return torch.cat([query, value])

    gaps = {
        name: float((without_key_bias(name, trained[name]) - without_key_bias(name, shipped[name])).abs().max())
        for name in shipped
    }
    assert max(gaps.values()) < 1e-3, gaps
    tokens = MarkovTask(**RECIPE_SWEEP["markov"]).sample(8, 32, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        logits_gap = (model(tokens.inputs) - shipped_model(tokens.inputs)).abs().max()
    assert float(logits_gap) < 1e-3, float(logits_gap)
    recorded = load_recipe_sweep()["models"]["runs"]["none"]
    assert len(run.losses) == recorded["steps"] and abs(run.losses[-1] - recorded["last_loss"]) < 1e-3
