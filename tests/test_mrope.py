"""M-RoPE against transformers' Qwen2-VL rotary functions, on tensors of our own."""

from __future__ import annotations

import pytest
import torch
from transformerland.encodings import apply_mrope, apply_rotary_half, mrope_angles, mrope_axes, mrope_position_ids

transformers = pytest.importorskip("transformers")
from transformers import Qwen2VLTextConfig  # noqa: E402
from transformers.models.qwen2_vl.modeling_qwen2_vl import (  # noqa: E402
    Qwen2VLRotaryEmbedding,
    apply_rotary_pos_emb,
)

SEGMENTS = [("text", 3), ("image", (1, 3, 4)), ("text", 2), ("image", (2, 2, 2)), ("text", 1)]


def qwen_rotary(head_dim: int, section: list[int], base: float) -> Qwen2VLRotaryEmbedding:
    config = Qwen2VLTextConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        num_key_value_heads=2,
        rope_parameters={"rope_type": "default", "rope_theta": base, "mrope_section": section},
    )
    return Qwen2VLRotaryEmbedding(config)


@pytest.mark.parametrize(("head_dim", "section", "base"), [(128, [16, 24, 24], 1e6), (16, [2, 3, 3], 10000.0)])
def test_matches_qwen2_vl(head_dim: int, section: list[int], base: float) -> None:
    ids = mrope_position_ids(SEGMENTS)  # (3, T)
    x = torch.randn(2, 3, ids.shape[1], head_dim, generator=torch.Generator().manual_seed(0))
    cos, sin = qwen_rotary(head_dim, section, base)(x, ids[:, None, :])  # position ids (3, batch, T)
    expected, _ = apply_rotary_pos_emb(x, x, cos, sin)
    torch.testing.assert_close(apply_mrope(x, ids, section, base), expected, atol=2e-5, rtol=1e-5)


def test_position_ids_follow_qwen2_vl() -> None:
    ids = mrope_position_ids([("text", 2), ("image", (1, 2, 3)), ("text", 2)])
    expected = torch.tensor(
        [
            [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
        ]
    )
    torch.testing.assert_close(ids, expected)


def test_text_alone_is_plain_rope() -> None:
    x = torch.randn(5, 32, dtype=torch.float64)
    ids = mrope_position_ids([("text", 5)])
    torch.testing.assert_close(apply_mrope(x, ids, [4, 6, 6]), apply_rotary_half(x))


def test_scores_depend_on_offsets_per_axis() -> None:
    generator = torch.Generator().manual_seed(2)
    q, k = (
        torch.randn(1, 16, dtype=torch.float64, generator=generator),
        torch.randn(1, 16, dtype=torch.float64, generator=generator),
    )

    def score(pq, pk):
        return float(
            apply_mrope(q, torch.tensor(pq)[:, None], [2, 3, 3])
            @ apply_mrope(k, torch.tensor(pk)[:, None], [2, 3, 3]).T
        )

    assert abs(score([4, 7, 1], [2, 3, 0]) - score([12, 9, 5], [10, 5, 4])) < 1e-12
    assert abs(score([4, 7, 1], [2, 3, 0]) - score([4, 7, 2], [2, 3, 0])) > 1e-6


def test_angles_and_axes() -> None:
    assert mrope_axes([1, 2, 1]).tolist() == [0, 1, 1, 2]
    ids = torch.tensor([[1], [2], [3]])
    angles = mrope_angles(ids, 8, [1, 2, 1])
    theta = 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)
    torch.testing.assert_close(angles[0], theta * torch.tensor([1.0, 2.0, 2.0, 3.0], dtype=torch.float64))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: mrope_axes([16, 24]), ValueError, "three counts"),
        (lambda: mrope_axes("16,24,24"), TypeError, "list of three"),
        (lambda: mrope_angles(torch.zeros(3, 4), 16, [2, 3, 2]), ValueError, "add up to head_dim / 2"),
        (lambda: mrope_angles(torch.zeros(2, 4), 16, [2, 3, 3]), ValueError, r"\(3, T\)"),
        (lambda: apply_mrope(torch.zeros(5, 16), torch.zeros(3, 4), [2, 3, 3]), ValueError, "one column per token"),
        (lambda: mrope_position_ids([("audio", 3)]), ValueError, "kind 'audio'"),
        (lambda: mrope_position_ids([("image", (2, 2))]), ValueError, r"\(t, h, w\)"),
        (lambda: mrope_position_ids([]), TypeError, "non-empty"),
    ],
)
def test_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
