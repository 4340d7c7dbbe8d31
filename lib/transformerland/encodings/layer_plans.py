"""Layer plans: a different position scheme, base and reach for each attention layer.

Today's models do not give every layer the same positions. A *plan* lists, layer by layer:

* ``position``: ``"rope"`` or ``"none"`` (a NoPE layer: no rotation at all);
* ``base``: that layer's RoPE base (``None``: the model's ``rope_base``);
* ``window``: ``None`` for global causal attention, or ``w`` for a sliding window, where query
  ``i`` sees only the keys ``i - w < j <= i``.

SmolLM3 and Llama 4 drop RoPE in every fourth layer (:func:`interleaved_plan`); Gemma 3 alternates
five sliding-window layers of base 10,000 with one global layer of base 1,000,000
(:func:`local_global_plan`). :func:`apply_layer_plan` puts a plan into a
:class:`~transformerland.model.TinyTransformer` built with ``position="rope"``.

Chapter 9 compares five plans on four layers (:func:`compared_plans`): the published patterns and a
control with every layer local; :mod:`transformerland.experiments.layer_plans_lookup` measures them on
a task that needs far context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from .._validation import (
    optional_device,
    require_choice,
    require_elements,
    require_int,
    require_positive_float,
    require_positive_int,
)
from ..attention import SelfAttention

__all__ = [
    "LayerPlan",
    "PlannedSelfAttention",
    "apply_layer_plan",
    "compared_plans",
    "interleaved_plan",
    "local_global_plan",
    "sliding_window_mask",
]


@dataclass(frozen=True)
class LayerPlan:
    """One layer's positions: ``"rope"`` or ``"none"``, its base (``None``: the model's), its window (``None``: all)."""

    position: str = "rope"
    base: float | None = None
    window: int | None = None

    def __post_init__(self) -> None:
        require_choice(self.position, "position", ("rope", "none"))
        if self.base is not None:
            require_positive_float(self.base, "base")
        if self.window is not None:
            require_positive_int(self.window, "window")


def interleaved_plan(n_layers: int, nope_every: int) -> list[LayerPlan]:
    """RoPE in every layer but each ``nope_every``-th (layers ``nope_every - 1``, ``2·nope_every - 1``, …).

    SmolLM3's ``no_rope_layer_interval = 4`` and Llama 4's default give three RoPE layers to one NoPE layer.
    """
    n_layers, nope_every = require_positive_int(n_layers, "n_layers"), require_positive_int(nope_every, "nope_every")
    return [LayerPlan("none" if (i + 1) % nope_every == 0 else "rope") for i in range(n_layers)]


def local_global_plan(
    n_layers: int, global_every: int, window: int, local_base: float = 10000.0, global_base: float = 1000000.0
) -> list[LayerPlan]:
    """Sliding-window layers of ``local_base`` with every ``global_every``-th layer global, of ``global_base``.

    Gemma 3: ``global_every = 6`` (five local to one global), window 1,024 (512 in the 270M model),
    bases 10,000 and 1,000,000.
    """
    n_layers, every = require_positive_int(n_layers, "n_layers"), require_positive_int(global_every, "global_every")
    require_positive_int(window, "window")
    local_base = require_positive_float(local_base, "local_base")
    global_base = require_positive_float(global_base, "global_base")
    return [
        LayerPlan("rope", global_base) if (i + 1) % every == 0 else LayerPlan("rope", local_base, window)
        for i in range(n_layers)
    ]


def sliding_window_mask(
    length: int, window: int | None = None, device: torch.device | str | None = None
) -> torch.Tensor:
    """Boolean ``(T, T)`` mask, ``True`` where query ``i`` may see key ``j``: ``j <= i`` and ``i - j < window``."""
    length = require_positive_int(length, "length")
    window = None if window is None else require_positive_int(window, "window")
    device = optional_device(device)
    require_elements(length * length, "the mask (length × length)")
    query, key = torch.arange(length, device=device)[:, None], torch.arange(length, device=device)[None, :]
    allowed = key <= query
    if window is not None:
        allowed &= query - key < window
    return allowed


class PlannedSelfAttention(SelfAttention):
    """:class:`~transformerland.attention.SelfAttention` with an optional sliding ``window`` (``None``: global).

    Made from an existing layer by :func:`apply_layer_plan`, with the same weights.
    """

    window: int | None = None

    def _causal_mask(self, length: int) -> torch.Tensor:
        if self.mask.shape[0] < length:
            self.mask = sliding_window_mask(length, self.window, self.mask.device)
        return self.mask[:length, :length]


def apply_layer_plan(model: nn.Module, plan: Sequence[LayerPlan]) -> nn.Module:
    """Give each block of ``model`` its layer's plan; changes ``model`` in place and returns it.

    ``model`` must be a causal :class:`~transformerland.model.TinyTransformer` built with
    ``position="rope"``, with one plan entry per block. The weights are kept; do it before training.
    """
    blocks = getattr(model, "blocks", None)
    config = getattr(model, "config", None)
    if blocks is None or config is None or config.position != "rope":
        raise ValueError('model must be a TinyTransformer built with position="rope"; a plan can then turn layers off.')
    if isinstance(plan, LayerPlan) or not isinstance(plan, Sequence):
        raise TypeError(f"plan must be a list of LayerPlan, one per layer; got {type(plan).__name__}.")
    if len(plan) != len(blocks):
        raise ValueError(f"plan has {len(plan)} entries but the model has {len(blocks)} layers; give one per layer.")
    for i, (block, entry) in enumerate(zip(blocks, plan, strict=True)):
        if not isinstance(entry, LayerPlan):
            raise TypeError(f"plan[{i}] must be a LayerPlan, got {type(entry).__name__}.")
        if entry.window is not None and not config.causal:
            raise ValueError(f"plan[{i}] has a window, but the model is not causal; windows here are causal.")
        old = block.attention
        new = PlannedSelfAttention(
            old.qkv.in_features, old.n_heads, causal=old.causal, position="rope", rope_base=entry.base or old.rope_base
        )
        new.load_state_dict(old.state_dict())
        new.position, new.window = entry.position, entry.window
        new.rope_scaling = old.rope_scaling
        block.attention = new.to(old.qkv.weight.device)
    return model


def compared_plans(window: int = 8, special: int = 3) -> dict[str, list[LayerPlan]]:
    """The five four-layer plans chapter 9 compares, by name; ``window`` is the local layers' window.

    RoPE in every layer; SmolLM3's pattern (one layer without positions); Gemma 3's, three to one (three
    local layers with base 10,000, one global layer with base 1,000,000); Llama 4's (three local layers
    with RoPE, one global layer without positions); and a control with all four layers local, no global
    layer. ``special`` is the index of the one layer that differs (NoPE or global): 3, the last, is where
    "every fourth layer" puts it; 0 puts it first.
    """
    window = require_positive_int(window, "window")
    special = require_int(special, "special", low=0)
    if special > 3:
        raise ValueError(f"special must be the index of one of the four layers, 0 to 3; got {special}.")
    local = LayerPlan("rope", window=window)

    def one_of_four(odd: LayerPlan, others: LayerPlan) -> list[LayerPlan]:
        return [odd if i == special else others for i in range(4)]

    return {
        "RoPE everywhere": [LayerPlan()] * 4,
        "SmolLM3: 3 RoPE + 1 NoPE": one_of_four(LayerPlan("none"), LayerPlan()),
        "Gemma 3: 3 local + 1 global": one_of_four(LayerPlan("rope", 1e6), LayerPlan("rope", 1e4, window)),
        "Llama 4: 3 local RoPE + 1 global NoPE": one_of_four(LayerPlan("none"), local),
        "all 4 local, no global layer": [local] * 4,
    }
