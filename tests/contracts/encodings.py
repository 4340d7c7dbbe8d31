"""Contracts of transformerland.encodings: sinusoidal, learned, rotary, ALiBi and the RoPE scaling recipes."""

from __future__ import annotations

import math

import torch
from transformerland.encodings import LAYOUTS, ROTARY_LAYOUTS, scaling_recipes
from transformerland.model import TinyTransformer, TransformerConfig

from . import Bool, Choice, Count, Device, Fixed, Number, Size, Tensor, close, contract, finite

S = "transformerland.encodings.sinusoidal"
R = "transformerland.encodings.rotary"
A = "transformerland.encodings.alibi"
L = "transformerland.encodings.learned"
Q = "transformerland.encodings.rope_scaling"
T = "transformerland.encodings.t5_bias"


def theta(d: int, base: float) -> torch.Tensor:
    return torch.tensor([base ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)


def table(positions: torch.Tensor, d: int, base: float, layout: str = "interleaved") -> torch.Tensor:
    """``PE[p, 2i] = sin(p ω_i)``, ``PE[p, 2i+1] = cos(p ω_i)`` (or all sines, then all cosines)."""
    angles = positions.double()[:, None] * theta(d, base)[None]
    if layout == "interleaved":
        return torch.stack([angles.sin(), angles.cos()], -1).flatten(-2)
    return torch.cat([angles.sin(), angles.cos()], -1)


def rotated(x: torch.Tensor, positions: torch.Tensor, base: float, halves: bool, gain: float = 1.0) -> torch.Tensor:
    """RoPE through complex numbers: pair ``i`` times ``e^{i m θ_i}`` (adjacent pairs, or ``i`` with ``i + d/2``)."""
    x = x.double()
    d = x.shape[-1]
    pairs = torch.complex(x[..., : d // 2], x[..., d // 2 :]) if halves else torch.complex(x[..., 0::2], x[..., 1::2])
    turned = (
        pairs * torch.polar(torch.ones(1, dtype=torch.float64), positions.double()[:, None] * theta(d, base)) * gain
    )
    if halves:
        return torch.cat([turned.real, turned.imag], -1)
    return torch.stack([turned.real, turned.imag], -1).flatten(-2)


def t5_bucket(offset: int, bidirectional: bool, n_buckets: int, max_distance: int) -> int:
    """T5's bucket of one offset (key minus query), in plain Python: exact near, logarithmic far, capped."""
    per_side, side = (n_buckets // 2, (n_buckets // 2) * (offset > 0)) if bidirectional else (n_buckets, 0)
    distance = abs(offset) if bidirectional else max(-offset, 0)
    exact = per_side // 2
    if distance < exact:
        return side + distance
    far = exact + int(math.log(distance / exact) / math.log(max_distance / exact) * (per_side - exact))
    return side + min(per_side - 1, far)


def t5_buckets_agree(out: torch.Tensor, a: dict) -> bool:
    """Long integers of the offsets' shape, each T5's bucket (one off at most where float32 rounds a boundary)."""
    if out.dtype != torch.long or out.shape != a["offsets"].shape:
        return False
    rule = [t5_bucket(int(o), a["bidirectional"], a["n_buckets"], a["max_distance"]) for o in a["offsets"].flatten()]
    return all(abs(int(b) - r) <= 1 for b, r in zip(out.flatten(), rule, strict=True))


def rotary_contract(name: str, halves: bool):
    """RoPE in either layout: the result is the complex-number rotation of each pair, times the factor."""
    layout = {} if halves else {"layout": Choice("pairs", ROTARY_LAYOUTS)}
    return contract(
        f"{R}.{name}",
        **layout,
        x=Tensor(lambda: torch.randn(2, 5, 8), wrong_shapes=((8,), (2, 5, 7))),
        positions=Tensor(lambda: torch.arange(5), kind="any", wrong_shapes=((4,), (1, 5)), optional=True, finite=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        attention_factor=Number(1.0, low=0, low_open=True, span=(0, 10)),
        reference=lambda out, a: close(
            out,
            rotated(
                a["x"],
                torch.arange(5) if a["positions"] is None else a["positions"],
                a["base"],
                halves or a.get("layout") == "halves",
            )
            * a["attention_factor"],
            1e-4,
        ),
    )


def rope_model() -> TinyTransformer:
    return TinyTransformer(TransformerConfig(8, d_model=8, n_heads=2, n_layers=1, d_ff=8, position="rope"))


RECIPES = list(scaling_recipes(16).values())
BAD_RECIPES = [
    3,
    "linear",
    {"rope_type": "nope"},
    {"rope_type": "linear"},
    {"rope_type": "linear", "factor": 0.5},
    {"rope_type": "linear", "factor": float("nan")},
    {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 16, "attention_factor": -2.0},
    {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 16, "truncate": "no"},
    {"rope_type": "linear", "factor": 2.0, "low_freq_factor": 1.0},
]

CONTRACTS = [
    # --- sinusoidal -----------------------------------------------------------------------------
    contract(
        f"{S}.sinusoid_frequencies",
        d_model=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: close(out, theta(a["d_model"], a["base"])),
    ),
    contract(
        f"{S}.sinusoidal_encoding",
        num_positions=Size(6),
        d_model=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        layout=Choice("interleaved", LAYOUTS),
        reference=lambda out, a: close(
            out, table(torch.arange(a["num_positions"]), a["d_model"], a["base"], a["layout"]), 1e-4
        ),
    ),
    contract(
        f"{S}.layout_permutation",
        d_model=Size(8, even=True),
        reference=lambda out, a: out.tolist() == list(range(0, a["d_model"], 2)) + list(range(1, a["d_model"], 2)),
    ),
    contract(
        f"{S}.shift_rotation",
        k=Number(3.0, span=(-100, 100)),
        d_model=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        layout=Choice("interleaved", LAYOUTS),
        reference=lambda out, a: close(
            table(torch.arange(4.0), a["d_model"], a["base"], a["layout"]) @ out.T,
            table(torch.arange(4.0) + a["k"], a["d_model"], a["base"], a["layout"]),
            1e-6,
        ),
    ),
    contract(
        f"{S}.tensor2tensor_frequencies",
        d_model=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: close(
            out,
            torch.exp(-math.log(a["base"]) / max(a["d_model"] // 2 - 1, 1) * torch.arange(a["d_model"] // 2).double()),
        ),
    ),
    contract(
        f"{S}.tensor2tensor_encoding",
        num_positions=Size(6),
        d_model=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: out.shape == (a["num_positions"], a["d_model"]) and finite(out),
    ),
    contract(
        f"{S}.SinusoidalPositionalEncoding",
        d_model=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True),
        layout=Choice("interleaved", LAYOUTS),
        reference=lambda out, a: out.d_model == a["d_model"],
    ),
    contract(
        f"{S}.SinusoidalPositionalEncoding.forward",
        call=lambda x: __import__("transformerland").encodings.SinusoidalPositionalEncoding(8)(x),
        x=Tensor(lambda: torch.randn(2, 5, 8), wrong_shapes=((5, 8), (2, 5, 6))),
        reference=lambda out, a: close(out, a["x"].double() + table(torch.arange(5), 8, 10000.0), 1e-4),
    ),
    # --- learned ------------------------------------------------------------------------------------
    contract(
        f"{L}.LearnedPositionalEmbedding",
        max_len=Size(16),
        d_model=Size(8),
        init_std=Number(0.02, low=0, low_open=True, span=(0, 10), optional=True),
        reference=lambda out, a: tuple(out.weight.shape) == (a["max_len"], a["d_model"]),
    ),
    contract(
        f"{L}.LearnedPositionalEmbedding.forward",
        call=lambda x: __import__("transformerland").encodings.LearnedPositionalEmbedding(6, 8)(x),
        x=Tensor(lambda: torch.randn(2, 5, 8), wrong_shapes=((5, 8), (2, 5, 6), (2, 7, 8))),
        reference=lambda out, a: out.shape == a["x"].shape,
    ),
    contract(
        f"{L}.check_fits",
        length=Count(4, low=0),
        max_len=Size(8),
        reference=lambda out, a: out is None and a["length"] <= a["max_len"],
    ),
    # --- rotary -----------------------------------------------------------------------------------
    *(rotary_contract(name, halves) for name, halves in (("apply_rotary", False), ("apply_rotary_half", True))),
    contract(
        f"{R}.rotate_half",
        x=Tensor(lambda: torch.randn(3, 8), wrong_shapes=((3, 7), ())),
        reference=lambda out, a: close(out, torch.cat([-a["x"][..., 4:], a["x"][..., :4]], -1)),
    ),
    contract(
        f"{R}.halves_to_pairs",
        dim=Size(8, even=True),
        reference=lambda out, a: out.tolist() == [j for i in range(a["dim"] // 2) for j in (i, i + a["dim"] // 2)],
    ),
    contract(
        f"{R}.interpolated_positions",
        length=Size(8),
        trained_length=Size(4),
        reference=lambda out, a: close(
            out, torch.arange(a["length"]).double() * min(1.0, a["trained_length"] / a["length"])
        ),
    ),
    contract(
        f"{R}.rotary_angles",
        positions=Tensor(lambda: torch.arange(5), kind="any", wrong_shapes=((1, 5),), finite=True),
        dim=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: close(out, a["positions"].double()[:, None] * theta(a["dim"], a["base"])),
    ),
    contract(
        f"{R}.rotary_decay_bound",
        distances=Tensor(lambda: torch.arange(4.0), kind="any", wrong_shapes=((2, 2),), finite=True),
        dim=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: close(
            out,
            torch.polar(
                torch.ones(1, dtype=torch.float64), a["distances"].double()[:, None] * theta(a["dim"], a["base"])
            )
            .cumsum(-1)
            .abs()
            .mean(-1),
        ),
    ),
    # --- ALiBi ------------------------------------------------------------------------------------
    contract(
        f"{A}.alibi_slopes",
        n_heads=Size(8, cap=4096, edges=(16, 12)),
        reference=lambda out, a: (
            len(out) == a["n_heads"]
            and bool(((out > 0) & (out < 1)).all())
            and (
                a["n_heads"] & (a["n_heads"] - 1)
                or close(out, 2.0 ** (-8.0 * torch.arange(1, a["n_heads"] + 1) / a["n_heads"]))
            )
        ),
    ),
    contract(
        f"{A}.alibi_bias",
        n_heads=Size(4, cap=4096),
        length=Size(5),
        causal=Bool(True),
        device=Device(None),
        reference=lambda out, a: (
            out.shape == (a["n_heads"], a["length"], a["length"])
            and close(
                out,
                -__import__("transformerland").encodings.alibi_slopes(a["n_heads"])[:, None, None]
                * (
                    (torch.arange(a["length"])[:, None] - torch.arange(a["length"])[None]).clamp(min=0)
                    if a["causal"]
                    else (torch.arange(a["length"])[:, None] - torch.arange(a["length"])[None]).abs()
                ),
            )
        ),
    ),
    # --- RoPE scaling ------------------------------------------------------------------------------
    contract(
        f"{Q}.rope_frequencies",
        head_dim=Size(16, even=True, low=4),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        scaling=Fixed(RECIPES[1], bad=BAD_RECIPES),
        seq_len=Size(32, optional=True),
        reference=lambda out, a: (
            out[0].shape == (a["head_dim"] // 2,)
            and bool((out[0] <= theta(a["head_dim"], a["base"]) * (1 + 1e-9)).all())
            and bool((out[0] >= theta(a["head_dim"], a["base"]) / 4 * (1 - 1e-9)).all())
            and out[1] == 1.0
        ),
    ),
    contract(
        f"{Q}.ntk_base",
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        factor=Number(4.0, low=1, span=(0, 1e3)),  # below 1 it would shrink the context: refused
        head_dim=Size(64, even=True, low=4),
        reference=lambda out, a: math.isclose(out, a["base"] * a["factor"] ** (a["head_dim"] / (a["head_dim"] - 2))),
        refuse=({"factor": 1e300},),  # the new base overflows a float
    ),
    contract(
        f"{Q}.depends_on_length",
        # the recipe's name and keys are checked here; its numbers where the frequencies are made
        scaling=Fixed(RECIPES[3], bad=BAD_RECIPES[:4]),
        reference=lambda out, a: out is (a["scaling"]["rope_type"] in ("dynamic", "longrope")),
    ),
    contract(
        f"{Q}.dynamic_factor",
        factor=Number(4.0, low=1, span=(0, 1e3)),
        seq_len=Size(32),
        original_length=Size(16),
        reference=lambda out, a: (
            math.isclose(
                out, a["factor"] * max(a["seq_len"], a["original_length"]) / a["original_length"] - (a["factor"] - 1)
            )
            and out >= 1 - 1e-9
        ),
    ),
    contract(
        f"{Q}.yarn_ramp",
        head_dim=Size(64, even=True),
        base=Number(10000.0, low=1, low_open=True, span=(0, 1e6)),
        original_length=Size(128),
        beta_fast=Number(32.0, low=0, low_open=True),
        beta_slow=Number(1.0, low=0, low_open=True, high=32, high_open=True),
        truncate=Bool(True),
        reference=lambda out, a: (
            out.shape == (a["head_dim"] // 2,)
            and bool(((out >= 0) & (out <= 1)).all())
            and bool((out.diff() >= 0).all())
        ),
    ),
    contract(
        f"{Q}.yarn_attention_factor",
        factor=Number(4.0, low=0, low_open=True, span=(0, 1e3)),
        reference=lambda out, a: math.isclose(out, 1.0 if a["factor"] <= 1 else 0.1 * math.log(a["factor"]) + 1),
    ),
    contract(
        f"{Q}.llama3_bands",
        wavelengths=Tensor(lambda: torch.tensor([2.0, 10.0, 100.0, 1000.0]), finite=True),
        original_length=Size(128),
        low_freq_factor=Number(1.0, low=0, low_open=True, high=4, high_open=True),
        high_freq_factor=Number(4.0, low=1, low_open=True),
        reference=lambda out, a: out.shape == a["wavelengths"].shape and bool(((out >= 0) & (out <= 1)).all()),
        refuse=({"wavelengths": torch.zeros(4)}, {"wavelengths": torch.tensor([-1.0, 2.0])}),  # not distances
    ),
    contract(
        f"{Q}.rope_wavelengths",
        inv_freq=Tensor(
            lambda: theta(8, 10000.0), wrong_shapes=((2, 2),), edges=(lambda: torch.tensor([0.0, 1.0]),), finite=True
        ),
        reference=lambda out, a: close(out, 2 * math.pi / a["inv_freq"].double()),
    ),
    contract(
        f"{Q}.scaling_recipes",
        original_length=Size(16),
        factor=Number(4.0, low=1, span=(0, 1e3)),
        reference=lambda out, a: len(out) == 6,
    ),
    contract(
        f"{Q}.set_rope_scaling",
        model=Fixed(rope_model, bad=[None, "model", torch.nn.Linear(2, 2)], make=True),
        scaling=Fixed(RECIPES[4], bad=BAD_RECIPES),
    ),
    contract(
        f"{Q}.with_rope_scaling",
        model=Fixed(rope_model, bad=[None, "model", torch.nn.Linear(2, 2)], make=True),
        scaling=Fixed(RECIPES[5], bad=BAD_RECIPES),
    ),
    # --- T5's relative buckets -------------------------------------------------------------------------
    contract(
        f"{T}.t5_relative_buckets",
        offsets=Tensor(lambda: torch.arange(-300, 301), kind="index", wrong_shapes=()),
        bidirectional=Bool(True),
        n_buckets=Size(32, even=True, cap=1 << 16, edges=(4, 8, 64)),
        max_distance=Size(128, edges=(9, 20, 1000)),
        reference=t5_buckets_agree,
    ),
    contract(
        f"{T}.T5RelativeBias",
        n_heads=Size(4, cap=1 << 12),
        n_buckets=Size(32, even=True, cap=1 << 16, edges=(4, 8)),
        max_distance=Size(128, edges=(9, 20)),
        bidirectional=Bool(True),
        reference=lambda out, a: tuple(out.table.shape) == (a["n_buckets"], a["n_heads"]),
    ),
    contract(
        f"{T}.T5RelativeBias.forward",
        call=lambda query_length, key_length: __import__("transformerland").encodings.T5RelativeBias(3, 8, 16)(
            query_length, key_length
        ),
        query_length=Size(5),
        key_length=Size(7),
        reference=lambda out, a: tuple(out.shape) == (3, a["query_length"], a["key_length"]),
    ),
]
