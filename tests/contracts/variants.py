"""Contracts of chapter 9's modules: partial rotary, M-RoPE, axial RoPE, layer plans and MLA."""

from __future__ import annotations

import torch
from transformerland.layer_plans import LayerPlan
from transformerland.model import TinyTransformer, TransformerConfig

from . import Bool, Choice, Count, Fixed, Number, Size, Tensor, close, contract
from .encodings import theta

P = "transformerland.encodings.partial_rotary"
M = "transformerland.encodings.mrope"
X = "transformerland.encodings.axial"
LP = "transformerland.encodings.layer_plans"
MLA = "transformerland.encodings.mla"


def rope_model(n_layers: int = 2) -> TinyTransformer:
    config = TransformerConfig(8, d_model=8, n_heads=2, n_layers=n_layers, d_ff=8, position="rope")
    return TinyTransformer(config)


FRACTION = Number(0.5, low=0, high=1, low_open=True, span=(0, 1))

CONTRACTS = [
    # --- partial rotary and p-RoPE --------------------------------------------------------------
    contract(
        f"{P}.rotary_width",
        head_dim=Size(64),
        partial_rotary_factor=Fixed(0.25, bad=[0.0, -0.5, 1.5, float("nan"), "half", True, None]),
        reference=lambda out, a: out == int(a["head_dim"] * 0.25) and out % 2 == 0,
    ),
    contract(
        f"{P}.partial_frequencies",
        head_dim=Fixed(64, bad=[0, -2, 2.5, "64", None]),
        partial_rotary_factor=Fixed(0.25, bad=[0.0, 1.5, float("nan"), "x", None]),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: close(out, theta(16, a["base"])),
    ),
    contract(
        f"{P}.p_rope_frequencies",
        head_dim=Size(16, even=True),
        p=Fixed(0.5, bad=[0.0, -1.0, 2.0, float("nan"), "half", None]),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: close(
            out, theta(a["head_dim"], a["base"]) * (torch.arange(a["head_dim"] // 2) < a["head_dim"] // 4)
        ),
    ),
    contract(
        f"{P}.apply_partial_rotary",
        x=Tensor(lambda: torch.randn(2, 5, 8), wrong_shapes=((8,), (2, 5, 7))),
        positions=Tensor(lambda: torch.arange(5), kind="any", wrong_shapes=((4,), (1, 5)), optional=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        partial_rotary_factor=Fixed(0.5, bad=[0.0, 1.5, 0.3, float("nan"), "half", None]),
        attention_factor=Number(1.0, low=0, low_open=True, span=(0, 10)),
        reference=lambda out, a: out.shape == a["x"].shape and close(out[..., 4:], a["x"][..., 4:]),
    ),
    # --- M-RoPE ---------------------------------------------------------------------------------
    contract(
        f"{M}.mrope_axes",
        mrope_section=Fixed([1, 2, 1], bad=[[1, 2], [1, 0, 1], "1,2,1", 3, None, [1.5, 2, 1]]),
        reference=lambda out, a: out.tolist() == [0, 1, 1, 2],
    ),
    contract(
        f"{M}.mrope_angles",
        position_ids=Tensor(lambda: torch.arange(15).view(3, 5), kind="any", wrong_shapes=((5,), (2, 5))),
        head_dim=Fixed(8, bad=[7, 0, 10, "8", None]),
        mrope_section=Fixed([1, 2, 1], bad=[[1, 2], [2, 2, 2], None]),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: (
            out.shape == (5, 4) and close(out[:, 0], a["position_ids"][0].double() * theta(8, a["base"])[0])
        ),
    ),
    contract(
        f"{M}.apply_mrope",
        x=Tensor(lambda: torch.randn(2, 5, 8), wrong_shapes=((8,), (2, 4, 8))),
        position_ids=Fixed(torch.arange(5).expand(3, 5), bad=[torch.zeros(3, 4), torch.zeros(2, 5), [0, 1], None]),
        mrope_section=Fixed([1, 2, 1], bad=[[1, 2], [2, 2, 2], None]),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: out.shape == a["x"].shape and torch.isfinite(out).all(),
    ),
    contract(
        f"{M}.mrope_position_ids",
        segments=Fixed(
            [("text", 2), ("image", (1, 2, 3)), ("text", 1)],
            bad=[[], "text", [("audio", 3)], [("text", 0)], [("image", (2, 2))], [("text", 2.5)], None],
        ),
        reference=lambda out, a: (
            out.tolist() == [[0, 1, 2, 2, 2, 2, 2, 2, 5], [0, 1, 2, 2, 2, 3, 3, 3, 5], [0, 1, 2, 3, 4, 2, 3, 4, 5]]
        ),
        refuse=({"segments": [("image", (1, 2**20, 2**20))]}, {"segments": [("text", 3, 1)]}),
    ),
    # --- axial RoPE and resampled tables --------------------------------------------------------
    contract(
        f"{X}.patch_grid",
        height=Size(2),
        width=Size(3),
        reference=lambda out, a: len(out[0]) == a["height"] * a["width"] and int(out[1][-1]) == a["width"] - 1,
        refuse=({"height": 2**20, "width": 2**20},),
    ),
    contract(
        f"{X}.apply_axial_rotary",
        x=Tensor(lambda: torch.randn(6, 8), wrong_shapes=((8,), (6, 6))),
        rows=Fixed(torch.tensor([0, 0, 0, 1, 1, 1]), bad=[torch.tensor([0.0, 0, 0, 1, 1, float("nan")])]),
        cols=Fixed(torch.tensor([0, 1, 2, 0, 1, 2])),
        base=Number(100.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: out.shape == a["x"].shape and close(out[:1], a["x"][:1].to(out.dtype)),
    ),
    contract(
        f"{X}.resample_position_table",
        table=Tensor(lambda: torch.randn(1, 17, 4), wrong_shapes=((17, 4), (2, 17, 4), (1, 11, 4))),
        new_grid=Fixed((3, 3), bad=[(0, 3), (3,), "3x3", None, (2.5, 3)]),
        old_grid=Fixed(None, bad=[(3, 4), (0, 4), "4x4"]),
        prefix_tokens=Count(1, high=1),
        mode=Choice("bicubic", ("bicubic", "bilinear", "nearest")),
        antialias=Bool(True),
        reference=lambda out, a: out.shape == (1, a["prefix_tokens"] + 9, 4),
        refuse=({"new_grid": (2**20, 2**20)}, {"new_grid": (3,)}, {"new_grid": (3, 3, 3)}),
    ),
    # --- layer plans ----------------------------------------------------------------------------
    contract(
        f"{LP}.LayerPlan",
        position=Choice("rope", ("rope", "none")),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6), optional=True),
        window=Size(4, optional=True),
        reference=lambda out, a: out.position == a["position"],
    ),
    contract(
        f"{LP}.interleaved_plan",
        n_layers=Size(8),
        nope_every=Size(4),
        reference=lambda out, a: (
            len(out) == a["n_layers"] and sum(p.position == "none" for p in out) == a["n_layers"] // a["nope_every"]
        ),
    ),
    contract(
        f"{LP}.local_global_plan",
        n_layers=Size(6),
        global_every=Size(6),
        window=Size(4),
        local_base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        global_base=Number(1e6, low=0, low_open=True, span=(0, 1e7)),
        reference=lambda out, a: (
            len(out) == a["n_layers"] and sum(p.window is None for p in out) == a["n_layers"] // a["global_every"]
        ),
    ),
    contract(
        f"{LP}.sliding_window_mask",
        length=Size(5),
        window=Size(2, optional=True),
        device=Fixed(None),
        reference=lambda out, a: out.shape == (a["length"], a["length"]) and bool(out.diagonal().all()),
        refuse=({"length": 2**20, "window": 2},),  # a (2**20, 2**20) mask: causal_mask refuses the same
    ),
    contract(
        f"{LP}.apply_layer_plan",
        model=Fixed(
            rope_model, bad=[None, "model", TinyTransformer(TransformerConfig(8, position="alibi"))], make=True
        ),
        plan=Fixed([LayerPlan(), LayerPlan("none")], bad=[[LayerPlan()], LayerPlan(), ["rope", "none"], None]),
        reference=lambda out, a: [b.attention.position for b in out.blocks] == ["rope", "none"],
    ),
    contract(
        f"{LP}.PlannedSelfAttention",
        d_model=Fixed(8, bad=[0, -8, 7, "8", None]),
        n_heads=Fixed(2, bad=[0, 3, "2", None]),
        reference=lambda out, a: out.window is None,
    ),
    # --- MLA ------------------------------------------------------------------------------------
    contract(
        f"{MLA}.kv_cache_per_token",
        kind=Choice("mla", ("mla",)),
        n_layers=Size(2),
        kv_lora_rank=Size(16),
        rope_dim=Size(4),
        reference=lambda out, a: out == (a["kv_lora_rank"] + a["rope_dim"]) * a["n_layers"],
    ),
    contract(
        f"{MLA}.absorbed_weights",
        w_uq=Tensor(lambda: torch.randn(2, 6, 4), wrong_shapes=((6, 4), (3, 6, 4), (2, 6, 3))),
        w_uk=Tensor(lambda: torch.randn(2, 5, 4), wrong_shapes=((5, 4), (3, 5, 4), (2, 5, 3))),
        reference=lambda out, a: close(out, a["w_uq"].double() @ a["w_uk"].double().transpose(1, 2), 1e-4),
    ),
    contract(
        f"{MLA}.mla_content_scores",
        q_latent=Tensor(lambda: torch.randn(3, 6), wrong_shapes=((6,), (3, 5))),
        kv_latent=Tensor(lambda: torch.randn(4, 5), wrong_shapes=((5,), (4, 6))),
        w_uq=Fixed(torch.randn(2, 6, 4)),
        w_uk=Fixed(torch.randn(2, 5, 4)),
        absorb=Bool(True),
        reference=lambda out, a: out.shape == (2, 3, 4),
    ),
    contract(
        f"{MLA}.decoupled_rope_scores",
        q_rope=Tensor(lambda: torch.randn(2, 3, 4), wrong_shapes=((3, 4), (2, 3, 6))),
        k_rope=Tensor(lambda: torch.randn(5, 4), wrong_shapes=((4,), (5, 6))),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: out.shape == (2, 3, 5) and torch.isfinite(out).all(),
    ),
    contract(
        f"{LP}.compared_plans",
        window=Size(8, edges=(1, 2)),
        reference=lambda out, a: (
            len(out) == 5
            and all(len(plan) == 4 for plan in out.values())
            and all(layer.window == a["window"] for layer in out["all 4 local, no global layer"])
        ),
    ),
]
