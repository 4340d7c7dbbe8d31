"""Stretching RoPE to longer contexts: the frequency recipes of today's long-context models.

A RoPE model trained on sequences of ``L`` tokens has seen, for each pair ``i`` of query/key
dimensions, only the angles ``Δ·θ_i`` with ``|Δ| < L``. To serve ``s·L`` tokens, each recipe
changes the angular frequencies ``θ_i`` (and, for YaRN, the size of the rotated vectors):

* ``"default"``: plain RoPE, ``θ_i = base^(-2i/d)``;
* ``"linear"``: position interpolation (Chen et al., 2023): every ``θ_i`` divided by the factor;
* ``"ntk"``: "NTK-aware" scaling: the base raised to ``base · factor^(d/(d-2))``, which leaves
  the fastest pair alone and divides the slowest one by exactly the factor;
* ``"dynamic"``: the NTK-aware base recomputed from the current length ``seq_len``, with the
  effective factor ``factor · seq_len / L - (factor - 1)`` (1 up to ``L``);
* ``"yarn"``: YaRN (Peng et al., 2023): pairs that turn many times within ``L`` keep their
  frequency, pairs that turn less than once are interpolated, a linear ramp between; and the
  rotated queries and keys are multiplied by ``0.1·ln(factor) + 1``;
* ``"llama3"``: Llama 3.1's bands: short wavelengths kept, long ones divided by the factor,
  a smooth blend between;
* ``"longrope"``: LongRoPE (Ding et al., 2024; Phi-3): one searched factor per pair,
  ``θ_i / short_factor[i]`` up to the original length and ``θ_i / long_factor[i]`` beyond it, and
  cos and sin multiplied by ``sqrt(1 + ln(factor) / ln(L))``.

Any recipe also takes transformers' ``partial_rotary_factor`` ``f``: only ``r = int(d·f)`` of a
head's ``d`` dimensions turn, and the frequencies are spaced over ``r`` (see ``partial_rotary``).

:func:`rope_frequencies` takes ``scaling`` in the form of transformers' ``rope_parameters``
(``{"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192, ...}``), so a
real model's configuration can be copied into it. :func:`set_rope_scaling` puts a recipe into
a trained :class:`~transformerland.model.TinyTransformer`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping

import torch
from torch import nn

from .._validation import (
    require_at_least,
    require_bool,
    require_even,
    require_finite_tensor,
    require_float_tensor,
    require_ordered,
    require_positive_float,
    require_positive_int,
    require_real,
)
from .partial_rotary import rotary_width
from .sinusoidal import sinusoid_frequencies

__all__ = [
    "LENGTH_DEPENDENT",
    "OPTIONAL_KEYS",
    "REQUIRED_KEYS",
    "ROPE_INIT_FUNCTIONS",
    "ROPE_TYPES",
    "depends_on_length",
    "dynamic_factor",
    "llama3_bands",
    "ntk_base",
    "rope_frequencies",
    "rope_wavelengths",
    "scaling_recipes",
    "set_rope_scaling",
    "with_rope_scaling",
    "yarn_attention_factor",
    "yarn_ramp",
]

#: Keys each recipe needs in ``scaling`` (besides ``rope_type``).
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "default": (),
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "llama3": ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
    "longrope": ("factor", "original_max_position_embeddings", "short_factor", "long_factor"),
}

#: Keys a recipe may have besides the required ones. ``rope_theta`` (the base) and the old
#: spelling ``type`` of ``rope_type`` are accepted everywhere, so that a whole
#: ``rope_parameters`` dict can be passed as it is; ``original_max_position_embeddings`` is
#: accepted (and unused) where the recipe does not need it.
OPTIONAL_KEYS: dict[str, tuple[str, ...]] = {
    "default": ("original_max_position_embeddings",),
    "linear": ("original_max_position_embeddings",),
    "ntk": ("original_max_position_embeddings",),
    "dynamic": (),
    "yarn": ("beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate"),
    "llama3": (),
    "longrope": ("attention_factor",),
}
_EVERYWHERE = ("rope_type", "type", "rope_theta", "partial_rotary_factor")


def _rope_type(scaling: Mapping[str, object] | None) -> str:
    """The recipe's name, validated."""
    if scaling is None:
        return "default"
    if not isinstance(scaling, Mapping):
        raise TypeError(
            f"scaling must be None or a dict like transformers' rope_parameters, e.g. "
            f'{{"rope_type": "linear", "factor": 4.0}}; got {type(scaling).__name__}.'
        )
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind is None:
        raise ValueError(f"scaling must say which recipe to use with a 'rope_type' key, one of {ROPE_TYPES}.")
    if kind not in ROPE_TYPES:
        known = ", ".join(repr(k) for k in ROPE_TYPES)
        raise ValueError(f"unknown rope_type {kind!r}: this library implements {known}.")
    missing = [key for key in REQUIRED_KEYS[kind] if scaling.get(key) is None]
    if missing:
        raise ValueError(f"rope_type {kind!r} needs the key(s) {', '.join(missing)} in scaling, got {dict(scaling)}.")
    allowed = set(_EVERYWHERE) | set(REQUIRED_KEYS[kind]) | set(OPTIONAL_KEYS[kind])
    unknown = sorted(set(scaling) - allowed)
    if unknown:
        raise ValueError(
            f"rope_type {kind!r} does not use the key(s) {', '.join(unknown)}; "
            f"it reads {', '.join(sorted(allowed - {'type'}))}."
        )
    return str(kind)


def _factor(scaling: Mapping[str, object]) -> float:
    return _stretch(scaling["factor"], "scaling['factor']")


def _stretch(factor: object, name: str) -> float:
    """A context-stretching factor: a finite number of at least 1."""
    return require_at_least(
        factor, name, 1.0, "how many times longer the new context is; a factor below 1 would shrink it"
    )


def ntk_base(base: float, factor: float, head_dim: int) -> float:
    """The NTK-aware base ``base · factor^(d/(d-2))`` for a head of width ``d = head_dim``.

    With it the fastest pair (``θ_0 = 1``) is unchanged and the slowest pair's frequency
    ``base'^(-(d-2)/d)`` is exactly ``θ_{d/2-1} / factor``: the slowest pair is interpolated,
    the fastest extrapolated, and the pairs between are scaled by a factor that grows
    geometrically from one end to the other. ``factor`` must be at least 1 (a factor below 1 would
    shrink the context, as :func:`dynamic_factor` refuses too), and the new base must be a finite float.
    """
    head_dim = require_even(require_positive_int(head_dim, "head_dim"), "head_dim", "RoPE rotates pairs.")
    if head_dim < 4:
        raise ValueError(f"NTK-aware scaling needs head_dim >= 4 (it divides by d - 2), got {head_dim}.")
    base = require_positive_float(base, "base")
    factor = _stretch(factor, "factor")
    try:
        result = base * factor ** (head_dim / (head_dim - 2))
    except OverflowError:
        result = math.inf
    if not math.isfinite(result):
        raise ValueError(
            f"base = {base:g} and factor = {factor:g} make the NTK-aware base base · factor^(d/(d-2)) too large "
            f"for a float (head_dim = {head_dim}): pass a smaller factor."
        )
    return result


def dynamic_factor(factor: float, seq_len: int, original_length: int) -> float:
    """Dynamic NTK's effective factor at the current length: ``factor · s / L - (factor - 1)``, at least 1.

    It is 1 up to the original length ``L`` (nothing changes within it) and grows linearly
    with the current length ``s`` after it; with ``factor = 1`` it is simply ``s / L``.
    ``factor`` must be a finite number of at least 1.
    """
    factor = _stretch(factor, "factor")
    seq_len = max(require_positive_int(seq_len, "seq_len"), require_positive_int(original_length, "original_length"))
    return factor * seq_len / original_length - (factor - 1)


def yarn_ramp(
    head_dim: int,
    base: float,
    original_length: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    *,
    truncate: bool = True,
) -> torch.Tensor:
    """YaRN's share of interpolation for each pair, shape ``(head_dim/2,)``, float64, in ``[0, 1]``.

    Pair ``i`` turns ``r_i = L / λ_i`` times over the original context ``L`` (``λ_i = 2π/θ_i`` its
    wavelength). Pairs that turn more than ``beta_fast`` times get 0 (kept as they are), pairs
    that turn fewer than ``beta_slow`` times get 1 (divided by the factor), and the pairs between
    follow a straight ramp in the pair index. The ramp's ends are the (fractional) indices where
    ``r_i`` equals ``beta_fast`` and ``beta_slow``: ``d · ln(L / (2π·β)) / (2 ln base)``, rounded
    outwards (down, up) when ``truncate``, as in the YaRN code. ``base`` must be above 1 (the
    formula divides by ``ln base``).
    """
    head_dim = require_even(require_positive_int(head_dim, "head_dim"), "head_dim", "RoPE rotates pairs.")
    base = require_real(base, "base", low=1.0, low_open=True, what="a frequency base above 1 (YaRN divides by ln base)")
    original_length = require_positive_int(original_length, "original_length")
    beta_fast = require_positive_float(beta_fast, "beta_fast")
    beta_slow = require_positive_float(beta_slow, "beta_slow")
    truncate = require_bool(truncate, "truncate", "round the ramp's ends outwards")
    require_ordered(
        beta_slow,
        beta_fast,
        "beta_slow",
        "beta_fast",
        "they count the turns of the fast pairs (kept) and of the slow pairs (interpolated) over the original context.",
    )

    def index_of(turns: float) -> float:
        return head_dim * math.log(original_length / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = index_of(beta_fast), index_of(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001  # a step instead of a ramp, without dividing by zero
    pairs = torch.arange(head_dim // 2, dtype=torch.float64)
    return ((pairs - low) / (high - low)).clamp(0.0, 1.0)


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's multiplier on cos and sin: ``0.1·ln(factor) + 1`` (1 when ``factor <= 1``).

    Queries and keys are both multiplied by it, so the scores grow by its square: a softmax
    over more keys is made sharper again. DeepSeek-style configurations give ``mscale`` and
    ``mscale_all_dim``, and the factor becomes the ratio of two such terms. Every number must be
    finite and positive (``mscale`` and ``mscale_all_dim`` may be ``None`` or 0: unused).
    """
    factor = require_positive_float(factor, "factor")
    mscale, mscale_all_dim = (
        None if value is None else require_real(value, name, low=0.0, what="a non-negative number")
        for value, name in ((mscale, "mscale"), (mscale_all_dim, "mscale_all_dim"))
    )

    def term(scale: float) -> float:
        return 1.0 if factor <= 1 else 0.1 * scale * math.log(factor) + 1.0

    if mscale and mscale_all_dim:
        return term(float(mscale)) / term(float(mscale_all_dim))
    return term(1.0)


def llama3_bands(
    wavelengths: torch.Tensor, original_length: int, low_freq_factor: float = 1.0, high_freq_factor: float = 4.0
) -> torch.Tensor:
    """Llama 3.1's share of interpolation for each wavelength, same shape, float64, in ``[0, 1]``.

    Wavelengths shorter than ``L / high_freq_factor`` get 0 (kept), longer than
    ``L / low_freq_factor`` get 1 (divided by the factor), and between them the share falls
    linearly in ``L / λ``: ``1 - (L/λ - low) / (high - low)``. Every wavelength must be finite and
    positive (a distance in positions).
    """
    require_finite_tensor(require_float_tensor(wavelengths, "wavelengths"), "wavelengths", "wavelengths")
    if wavelengths.numel() and not bool((wavelengths > 0).all()):
        raise ValueError(
            f"wavelengths must be positive (a distance in positions), got the smallest {float(wavelengths.min()):g}."
        )
    original_length = require_positive_int(original_length, "original_length")
    low = require_positive_float(low_freq_factor, "low_freq_factor")
    high = require_positive_float(high_freq_factor, "high_freq_factor")
    require_ordered(
        low,
        high,
        "low_freq_factor",
        "high_freq_factor",
        "the band of kept wavelengths ends at L / high_freq_factor, the band of scaled ones starts at "
        "L / low_freq_factor.",
    )
    wavelengths = wavelengths.to(torch.float64)
    smooth = (original_length / wavelengths - low) / (high - low)  # 0 at L/low, 1 at L/high
    share = 1.0 - smooth
    share = torch.where(wavelengths > original_length / low, torch.ones_like(share), share)
    return torch.where(wavelengths < original_length / high, torch.zeros_like(share), share)


# One small function per recipe, as transformers' ROPE_INIT_FUNCTIONS: each gets the head width (after a
# partial_rotary_factor), the base, the validated ``scaling`` dict and the current length, and returns
# ``(inv_freq (d/2,) float64, attention_factor)``. rope_frequencies checks what they share first.


def _default(
    head_dim: int, base: float, scaling: Mapping[str, object], seq_len: int | None
) -> tuple[torch.Tensor, float]:
    """Plain RoPE: ``θ_i = base^(-2i/d)``."""
    return sinusoid_frequencies(head_dim, base), 1.0


def _linear(
    head_dim: int, base: float, scaling: Mapping[str, object], seq_len: int | None
) -> tuple[torch.Tensor, float]:
    """Position interpolation: every frequency divided by the factor."""
    return sinusoid_frequencies(head_dim, base) / _factor(scaling), 1.0


def _ntk(head_dim: int, base: float, scaling: Mapping[str, object], seq_len: int | None) -> tuple[torch.Tensor, float]:
    """NTK-aware: plain frequencies of the larger base :func:`ntk_base`."""
    return sinusoid_frequencies(head_dim, ntk_base(base, _factor(scaling), head_dim)), 1.0


def _dynamic(
    head_dim: int, base: float, scaling: Mapping[str, object], seq_len: int | None
) -> tuple[torch.Tensor, float]:
    """Dynamic NTK: the NTK-aware base of the effective factor at the current length."""
    factor, original = _factor(scaling), _original(scaling)
    effective = dynamic_factor(factor, original if seq_len is None else seq_len, original)
    return sinusoid_frequencies(head_dim, ntk_base(base, effective, head_dim)), 1.0


def _yarn(head_dim: int, base: float, scaling: Mapping[str, object], seq_len: int | None) -> tuple[torch.Tensor, float]:
    """YaRN: fast pairs kept, slow pairs interpolated, a ramp between; cos and sin scaled."""
    factor, original = _factor(scaling), _original(scaling)
    truncate = require_bool(scaling.get("truncate", True), "scaling['truncate']", "round the ramp's ends")
    beta_fast, beta_slow = scaling.get("beta_fast") or 32.0, scaling.get("beta_slow") or 1.0
    share = yarn_ramp(head_dim, base, original, beta_fast, beta_slow, truncate=truncate)
    attention = scaling.get("attention_factor")
    if attention is None:
        attention = yarn_attention_factor(factor, scaling.get("mscale"), scaling.get("mscale_all_dim"))
    return _blend(sinusoid_frequencies(head_dim, base), factor, share), _gain(attention)


def _llama3(
    head_dim: int, base: float, scaling: Mapping[str, object], seq_len: int | None
) -> tuple[torch.Tensor, float]:
    """Llama 3.1: short wavelengths kept, long ones interpolated, a blend between."""
    factor, original = _factor(scaling), _original(scaling)
    plain = sinusoid_frequencies(head_dim, base)
    share = llama3_bands(2 * math.pi / plain, original, scaling["low_freq_factor"], scaling["high_freq_factor"])
    return _blend(plain, factor, share), 1.0


def _longrope(
    head_dim: int, base: float, scaling: Mapping[str, object], seq_len: int | None
) -> tuple[torch.Tensor, float]:
    """LongRoPE: ``θ_i / short_factor[i]`` up to ``L`` tokens, ``θ_i / long_factor[i]`` past it; and its gain."""
    factor, original = _factor(scaling), _original(scaling)
    pairs = head_dim // 2
    chosen = "long_factor" if seq_len is not None and seq_len > original else "short_factor"
    per_pair = scaling[chosen]
    if isinstance(per_pair, str | bytes) or not hasattr(per_pair, "__len__"):
        raise TypeError(
            f"scaling[{chosen!r}] must be a list of {pairs} numbers, one per rotated pair; got {per_pair!r}."
        )
    if len(per_pair) != pairs:
        raise ValueError(f"scaling[{chosen!r}] must hold one factor per rotated pair, {pairs}, got {len(per_pair)}.")
    stretch = torch.tensor(
        [require_positive_float(v, f"scaling[{chosen!r}][i]") for v in per_pair], dtype=torch.float64
    )
    attention = scaling.get("attention_factor")
    if attention is None:
        attention = math.sqrt(1 + math.log(factor) / math.log(original)) if factor > 1 else 1.0
    return sinusoid_frequencies(head_dim, base) / stretch, _gain(attention)


def _original(scaling: Mapping[str, object]) -> int:
    """The training length ``L``."""
    return require_positive_int(
        scaling["original_max_position_embeddings"], "scaling['original_max_position_embeddings']"
    )


def _gain(attention: object) -> float:
    return require_positive_float(attention, "scaling['attention_factor']")


def _blend(plain: torch.Tensor, factor: float, share: torch.Tensor) -> torch.Tensor:
    """Each pair's frequency, interpolated by its ``share`` (0: kept, 1: divided by the factor)."""
    return plain / factor * share + plain * (1 - share)


#: The recipes :func:`rope_frequencies` knows, one function each, in the order the book introduces them.
ROPE_INIT_FUNCTIONS: dict[str, Callable[[int, float, Mapping[str, object], int | None], tuple[torch.Tensor, float]]]
ROPE_INIT_FUNCTIONS = {
    "default": _default,
    "linear": _linear,
    "ntk": _ntk,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "llama3": _llama3,
    "longrope": _longrope,
}
#: The recipes' names, in the same order.
ROPE_TYPES = tuple(ROPE_INIT_FUNCTIONS)

#: The recipes whose frequencies depend on the current length ``seq_len`` (all others: computed once per model).
LENGTH_DEPENDENT = ("dynamic", "longrope")


def depends_on_length(scaling: Mapping[str, object] | None) -> bool:
    """Whether the recipe ``scaling`` reads the current length (its name and keys are checked here, its numbers
    by :func:`rope_frequencies`)."""
    return _rope_type(scaling) in LENGTH_DEPENDENT


def rope_frequencies(
    head_dim: int, base: float = 10000.0, scaling: Mapping[str, object] | None = None, *, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """RoPE's angular frequencies after a scaling recipe, and the recipe's attention factor.

    Args:
        head_dim: width ``d`` of one attention head (even).
        base: the frequency base of the trained model (``rope_theta``).
        scaling: ``None`` for plain RoPE, or a dict in the form of transformers' ``rope_parameters``:
            ``rope_type`` (one of :data:`ROPE_TYPES`) and that recipe's keys (:data:`REQUIRED_KEYS`,
            :data:`OPTIONAL_KEYS`). ``original_max_position_embeddings`` is the training length ``L``.
        seq_len: the current length, read by ``"dynamic"`` and ``"longrope"`` only (``None``: ``L``, no change).
            (transformers' ``"dynamic"`` reads ``L`` from the model's ``max_position_embeddings``;
            here it is the dict's ``original_max_position_embeddings``, as for the other recipes.)

    Returns:
        ``(inv_freq, attention_factor)``: ``inv_freq`` the ``(d/2,)`` float64 frequencies ``θ_i``
        (pair ``i`` turns by ``m·θ_i`` at position ``m``; ``(r/2,)`` with a ``partial_rotary_factor``),
        ``attention_factor`` the number cos and sin are multiplied by (1.0 except for YaRN and LongRoPE).

    What every recipe shares is checked here; each recipe is then one function of :data:`ROPE_INIT_FUNCTIONS`.
    """
    head_dim = require_even(require_positive_int(head_dim, "head_dim"), "head_dim", "RoPE rotates pairs.")
    base = require_positive_float(base, "base")
    seq_len = None if seq_len is None else require_positive_int(seq_len, "seq_len")
    kind = _rope_type(scaling)
    scaling = {} if scaling is None else scaling
    if scaling.get("partial_rotary_factor") is not None:
        # only r = int(d·f) dimensions turn, and the frequencies are spaced over r, not d
        head_dim = rotary_width(head_dim, scaling["partial_rotary_factor"])
    theta = scaling.get("rope_theta")
    if kind != "default" and theta is not None:
        if not math.isclose(require_positive_float(theta, "scaling['rope_theta']"), base, rel_tol=1e-12):
            raise ValueError(
                f"scaling['rope_theta'] = {theta} disagrees with base = {base}; pass the model's base once."
            )
    return ROPE_INIT_FUNCTIONS[kind](head_dim, base, scaling, seq_len)


def scaling_recipes(original_length: int, factor: float = 4.0) -> dict[str, dict[str, object] | None]:
    """One ``scaling`` dict per recipe, all stretching a context of ``original_length`` by ``factor``.

    Keys are the recipes' names as the book prints them: ``"plain RoPE"`` (``None``), ``"linear (PI)"``,
    ``"NTK-aware"``, ``"dynamic NTK"``, ``"YaRN"`` (β = 32 and 1, the paper's) and ``"Llama 3"``
    (``low_freq_factor`` 1, ``high_freq_factor`` 4, Llama 3.1's).
    """
    original_length = require_positive_int(original_length, "original_length")
    factor = _stretch(factor, "factor")
    stretch = {"factor": factor, "original_max_position_embeddings": original_length}
    return {
        "plain RoPE": None,
        "linear (PI)": {"rope_type": "linear", **stretch},
        "NTK-aware": {"rope_type": "ntk", **stretch},
        "dynamic NTK": {"rope_type": "dynamic", **stretch},
        "YaRN": {"rope_type": "yarn", "beta_fast": 32.0, "beta_slow": 1.0, **stretch},
        "Llama 3": {"rope_type": "llama3", "low_freq_factor": 1.0, "high_freq_factor": 4.0, **stretch},
    }


def rope_wavelengths(inv_freq: torch.Tensor) -> torch.Tensor:
    """Wavelength ``2π / θ_i`` of each pair, in positions: the distance over which the pair turns once."""
    require_finite_tensor(require_float_tensor(inv_freq, "inv_freq", ndim=1), "inv_freq", "frequencies")
    if inv_freq.numel() and not bool((inv_freq > 0).all()):
        raise ValueError("inv_freq must hold positive frequencies (a zero frequency has no wavelength).")
    return 2 * math.pi / inv_freq.to(torch.float64)


def _rotary_layers(model: nn.Module) -> list[nn.Module]:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module (a TinyTransformer), got {type(model).__name__}.")
    layers = [m for m in model.modules() if hasattr(m, "rope_scaling") and getattr(m, "position", None) == "rope"]
    if not layers:
        raise ValueError(
            'model has no rotary attention layer to rescale; build it with TinyTransformer(..., position="rope").'
        )
    return layers


def set_rope_scaling(model: nn.Module, scaling: Mapping[str, object] | None) -> nn.Module:
    """Make every rotary attention layer of ``model`` use the recipe ``scaling`` (``None``: plain RoPE).

    The recipe is checked once here (each layer then calls :func:`rope_frequencies` with its
    own head width, base and the current length). Changes ``model`` in place and returns it.
    """
    layers = _rotary_layers(model)
    for layer in layers:
        head_dim = layer.qkv.in_features // layer.n_heads
        rope_frequencies(head_dim, layer.rope_base, scaling)  # fail now, not in the middle of a forward pass
        layer.rope_scaling = None if scaling is None else dict(scaling)
    return model


def with_rope_scaling(model: nn.Module, scaling: Mapping[str, object] | None) -> nn.Module:
    """A copy of ``model`` that uses the recipe ``scaling``; ``model`` itself is left unchanged."""
    _rotary_layers(model)
    return set_rope_scaling(copy.deepcopy(model), scaling)
