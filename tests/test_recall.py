"""transformerland.recall: the table, the questions and their answers, the mask, and bad input."""

from __future__ import annotations

import math

import pytest
import torch
from transformerland.recall import LookupTask
from transformerland.tasks import Task


def test_is_a_task_with_a_chance_loss_and_repeats_with_its_seed():
    task = LookupTask(n_keys=8, n_values=4)
    assert isinstance(task, Task) and task.vocab_size == 8 * 4 + 8 + 4
    assert task.chance_loss == pytest.approx(math.log(4))
    first, again = (task.sample(4, 15, torch.Generator().manual_seed(3)) for _ in range(2))
    assert torch.equal(first.inputs, again.inputs)


@pytest.mark.parametrize("length", [3, 8, 33, 129])
def test_lookup_answers_are_the_values_written_in_the_table(length):
    task = LookupTask(n_keys=64, n_values=4)
    batch = task.sample(6, length, torch.Generator().manual_seed(1))
    entries = length // 2
    assert batch.inputs.shape == batch.mask.shape == (6, length) and task.vocab_size == 64 * 4 + 64 + 4
    for inputs, targets, mask in zip(batch.inputs, batch.targets, batch.mask, strict=True):
        table = {int(e) // 4: int(e) % 4 for e in inputs[:entries]}
        assert len(table) == entries and int(inputs[:entries].max()) < 256  # distinct keys, entry symbols
        assert int(mask.sum()) == (length - entries + 1) // 2 and not mask[:entries].any()
        for question, answer in zip(inputs[mask].tolist(), targets[mask].tolist(), strict=True):
            assert table[question - 256] == answer - 256 - 64


@pytest.mark.parametrize(("args", "length", "match"), [((4, 4), 2, "at least 3"), ((4, 4), 10, "only n_keys = 4"),
                                                       ((4, 1), 6, "n_values"), ((0, 4), 6, "n_keys")])  # fmt: skip
def test_lookup_refuses_bad_input(args, length, match):
    with pytest.raises(ValueError, match=match):
        LookupTask(*args).sample(2, length, torch.Generator())


def test_entry_distances_point_back_to_the_entry_that_holds_the_asked_key():
    task = LookupTask(n_keys=64, n_values=4)
    batch = task.sample(8, 128, torch.Generator().manual_seed(5))
    distances = task.entry_distances(batch)
    assert distances.shape == (8, 128) and bool((distances[~batch.mask] == -1).all())
    rows, positions = batch.mask.nonzero(as_tuple=True)
    for b, p in zip(rows.tolist(), positions.tolist(), strict=True):
        d = int(distances[b, p])
        entry, question = int(batch.inputs[b, p - d]), int(batch.inputs[b, p])
        assert 1 <= d <= p and p - d < 64
        assert entry // task.n_values == question - task.n_keys * task.n_values
        assert int(batch.targets[b, p]) - task.n_keys * task.n_values - task.n_keys == entry % task.n_values
    assert int(distances.max()) <= 126
    with pytest.raises(TypeError, match="batch"):
        task.entry_distances(batch.inputs)
