"""ALiBi (Press, Smith & Lewis, 2022): no position vectors, a linear distance penalty on scores.

Head ``h`` subtracts ``slope_h · (i - j)`` from the score of query ``i`` on key ``j``;
the slopes form a geometric sequence, ``2^(-8/H), 2^(-16/H), …`` for ``H`` heads.
"""

from __future__ import annotations

import math

import torch

from .._validation import MAX_HEADS, optional_device, require_bool, require_elements, require_positive_int

__all__ = ["alibi_bias", "alibi_slopes"]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """Head slopes, shape ``(n_heads,)``.

    For a power of two ``H`` they are ``2^(-8k/H)``, ``k = 1 … H``. Otherwise, as in the
    paper's code, take the slopes of the nearest smaller power of two and fill up with
    every other slope of twice that many heads. At most :data:`~transformerland._validation.MAX_HEADS` heads.
    """
    n_heads = require_positive_int(n_heads, "n_heads", cap=MAX_HEADS)

    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]

    if n_heads & (n_heads - 1) == 0:
        return torch.tensor(power_of_two(n_heads))
    lower = 2 ** math.floor(math.log2(n_heads))
    extra = power_of_two(2 * lower)[0::2][: n_heads - lower]
    return torch.tensor(power_of_two(lower) + extra)


def alibi_bias(
    n_heads: int, length: int, *, causal: bool = True, device: torch.device | str | None = None
) -> torch.Tensor:
    """Additive attention bias, shape ``(n_heads, T, T)``: ``-slope_h · distance(i, j)``.

    With ``causal`` the distance is ``i - j`` (future keys are masked elsewhere, so their
    entries are set to 0 here); without it the distance is ``|i - j|``. ``causal`` must be a real
    ``bool``; ``device`` one this machine has.
    """
    causal = require_bool(causal, "causal", "True: distance i - j for a decoder; False: |i - j|")
    device = optional_device(device)
    n_heads = require_positive_int(n_heads, "n_heads", cap=MAX_HEADS)
    length = require_positive_int(length, "length")
    require_elements(n_heads * length * length, "the ALiBi bias (n_heads × length × length)")
    positions = torch.arange(length, device=device)
    distance = (positions[:, None] - positions[None, :]).float()  # (T, T), i - j
    distance = distance.clamp(min=0) if causal else distance.abs()
    return -alibi_slopes(n_heads).to(device)[:, None, None] * distance
