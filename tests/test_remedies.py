"""The remedies of chapter 5: truncation, sliding windows, table interpolation and extension, fine-tuning."""

from __future__ import annotations

import pytest
import torch
from transformerland.model import TinyTransformer, TransformerConfig
from transformerland.remedies import (
    extend_table,
    fine_tune,
    interpolate_table,
    position_losses,
    prefix_losses,
    sliding_window_logits,
    truncate,
    window_reach,
    window_spans,
    with_position_table,
)
from transformerland.tasks import Batch, MarkovTask


@pytest.fixture
def learned_model() -> TinyTransformer:
    return TinyTransformer(TransformerConfig(8, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=8)).eval()


def test_truncate_keeps_first_or_last():
    tokens = torch.arange(10)
    assert truncate(tokens, 4).tolist() == [0, 1, 2, 3]
    assert truncate(tokens, 4, keep="last").tolist() == [6, 7, 8, 9]
    assert truncate(tokens[None], 20).shape == (1, 10)


def test_truncate_rejects_bad_input():
    with pytest.raises(ValueError, match="keep must be one of"):
        truncate(torch.arange(5), 2, keep="middle")
    with pytest.raises(ValueError, match="max_len must be a positive integer"):
        truncate(torch.arange(5), 0)
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        truncate([1, 2, 3], 2)


def test_window_spans_cover_with_overlap():
    spans = window_spans(20, 8, 4)
    assert spans[0] == (0, 8) and spans[-1][1] == 20
    assert all(end - start == 8 for start, end in spans)
    covered = set().union(*(range(s, e) for s, e in spans))
    assert covered == set(range(20))
    assert window_spans(5, 8) == [(0, 5)]
    assert window_spans(16, 8, 8) == [(0, 8), (8, 16)]


def test_window_spans_rejects_bad_stride():
    with pytest.raises(ValueError, match="stride must be at most the window"):
        window_spans(20, 8, 9)
    with pytest.raises(TypeError, match="window must be a positive integer"):
        window_spans(20, 8.0)


def test_sliding_window_matches_full_input_when_it_fits(learned_model):
    tokens = torch.randint(8, (2, 6), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.allclose(sliding_window_logits(learned_model, tokens, 8), learned_model(tokens))


def test_sliding_window_reads_past_the_table(learned_model):
    tokens = torch.randint(8, (2, 30), generator=torch.Generator().manual_seed(0))
    logits = sliding_window_logits(learned_model, tokens, window=8, stride=4)
    assert logits.shape == (2, 30, 8)
    with torch.no_grad():
        assert torch.allclose(logits[:, :8], learned_model(tokens[:, :8]))
        # position 11 is predicted by the window 4 … 11, where it sits at seat 7
        assert torch.allclose(logits[:, 11], learned_model(tokens[:, 4:12])[:, 7], atol=1e-6)


def test_sliding_window_refuses_an_encoder():
    encoder = TinyTransformer(TransformerConfig(8, d_model=16, n_layers=1, n_heads=2, d_ff=32, causal=False))
    with pytest.raises(ValueError, match="needs a causal model"):
        sliding_window_logits(encoder, torch.zeros(1, 4, dtype=torch.long), 2)


def test_interpolate_table_keeps_ends_and_blends():
    table = torch.tensor([[0.0, 10.0], [1.0, 20.0], [2.0, 30.0]])
    out = interpolate_table(table, 5)
    assert out.shape == (5, 2) and out.dtype == table.dtype
    assert torch.allclose(out[:, 0], torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0]))
    assert torch.equal(interpolate_table(table, 3), table)
    assert torch.allclose(interpolate_table(table, 2), table[[0, 2]])


def test_interpolate_table_rejects_bad_input():
    with pytest.raises(ValueError, match="2 dimensions"):
        interpolate_table(torch.zeros(3), 4)
    with pytest.raises(ValueError, match="no rows"):
        interpolate_table(torch.zeros(0, 4), 4)
    with pytest.raises(ValueError, match="new_len must be a positive integer"):
        interpolate_table(torch.zeros(3, 4), -1)


def test_extend_table_keeps_rows_and_adds_small_fresh_ones():
    table = torch.ones(4, 16)
    out = extend_table(table, 1000, seed=3)
    assert out.shape == (1000, 16) and torch.equal(out[:4], table)
    assert 0.015 < float(out[4:].std()) < 0.025
    assert torch.equal(out, extend_table(table, 1000, seed=3))
    with pytest.raises(ValueError, match="at least the table's 4 rows"):
        extend_table(table, 3)
    with pytest.raises(ValueError, match="init_std must be a positive number"):
        extend_table(table, 8, init_std=0.0)


def test_with_position_table_copies_the_model(learned_model):
    table = torch.zeros(20, 16)
    longer = with_position_table(learned_model, table)
    assert longer.positions.max_len == 20 and torch.equal(longer.positions.weight, table)
    assert learned_model.positions.max_len == 8
    assert longer(torch.zeros(1, 20, dtype=torch.long)).shape == (1, 20, 8)
    with pytest.raises(ValueError, match="rows of width 3"):
        with_position_table(learned_model, torch.zeros(20, 3))
    with pytest.raises(TypeError, match="learned position table"):
        with_position_table(TinyTransformer(TransformerConfig(8, d_model=16, n_layers=1, position="alibi")), table)


def test_fine_tune_trains_a_copy(learned_model):
    before = learned_model.positions.weight.detach().clone()
    tuned, result = fine_tune(learned_model, MarkovTask(8, 2), steps=3, length=8, batch_size=4, progress=False)
    assert len(result.losses) == 3
    assert torch.equal(learned_model.positions.weight, before)
    assert not torch.equal(tuned.positions.weight.detach(), before)


def test_position_and_prefix_losses():
    targets = torch.tensor([[1, 0, 1], [0, 0, 1]])
    mask = torch.tensor([[False, True, True], [False, True, True]])
    logits = torch.zeros(2, 3, 2)
    each = position_losses(logits, Batch(targets, targets, mask))
    assert each[0].isnan() and torch.allclose(each[1:], torch.full((2,), torch.log(torch.tensor(2.0))))
    prefix = prefix_losses(torch.tensor([float("nan"), 1.0, 3.0]))
    assert prefix[0].isnan() and prefix[1:].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="do not match the batch's targets"):
        position_losses(torch.zeros(2, 4, 2), Batch(targets, targets, mask))
    with pytest.raises(ValueError, match="1 dimensions"):
        prefix_losses(torch.zeros(2, 2))


def test_window_reach_says_how_far_back_each_windowed_prediction_sees():
    reach = window_reach(128, 32, 16)
    assert reach.shape == (128,) and reach.dtype == torch.long
    assert torch.equal(reach[:32], torch.arange(32)), "the first window sees everything before it"
    assert int(reach[32:].min()) == 16 and int(reach[32:].max()) == 31  # window - stride ... window - 1
    # the same rule as sliding_window_logits: a model that counts its own positions reports reach + 0
    counted = []
    for start, end in window_spans(128, 32, 16):
        counted += list(range(max(len(counted), start) - start, end - start))
    assert reach.tolist() == counted
    assert torch.equal(window_reach(10, 32), torch.arange(10))
    with pytest.raises(ValueError, match="stride"):
        window_reach(100, 8, 9)
