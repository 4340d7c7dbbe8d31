"""Contracts of attention, model, symmetry, tasks, training, remedies and analysis."""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch
from transformerland import analysis, attention, model, remedies, symmetry, tasks, training
from transformerland.model import POSITION_SCHEMES, TinyTransformer, TransformerConfig

from . import Bool, Choice, Count, Device, Fixed, Made, Number, Size, Tensor, Text, close, contract, finite, record

NOT_MODELS = [None, "model", 3]


def tiny(position: str = "learned", causal: bool = True) -> TinyTransformer:
    return TinyTransformer(
        TransformerConfig(8, d_model=8, n_heads=2, n_layers=1, d_ff=8, max_len=8, position=position, causal=causal)
    )


def batch() -> tasks.Batch:
    return tasks.MarkovTask(8, order=1).sample(2, 6, torch.Generator().manual_seed(0))


def attend(q, k, v, mask=None, bias=None):
    """``softmax(q kᵀ/√d + bias)`` over the allowed keys; a row with no allowed key: zeros."""
    scores = q.double() @ k.double().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + (bias.double() if isinstance(bias, torch.Tensor) else bias)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1), nan=0.0)
    return weights @ v.double(), weights


def interpolated(table: torch.Tensor, rows: int) -> torch.Tensor:
    """Each column linearly interpolated (numpy's interp) at ``rows`` evenly spaced old positions."""
    old = np.arange(table.shape[0])
    where = np.linspace(0, table.shape[0] - 1, rows)
    return torch.tensor(np.stack([np.interp(where, old, column) for column in table.double().numpy().T], 1))


def masked_rows() -> torch.Tensor:
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    mask[2] = False  # query 2 may see no key
    return mask


CONTRACTS = [
    # --- attention ---------------------------------------------------------------------------------
    contract(
        "transformerland.attention.causal_mask",
        length=Size(5),
        device=Device(None),
        reference=lambda out, a: torch.equal(out, torch.ones(a["length"], a["length"], dtype=torch.bool).tril()),
    ),
    contract(
        "transformerland.attention.check_heads",
        d_model=Size(8, edges=(12, 16)),
        n_heads=Size(2, cap=4096),
        position=Choice("none", attention.ATTENTION_POSITIONS),
        reference=lambda out, a: out == (a["d_model"], a["n_heads"]) and a["d_model"] % a["n_heads"] == 0,
    ),
    contract(
        "transformerland.attention.scaled_dot_product_attention",
        q=Tensor(lambda: torch.randn(2, 4, 8), wrong_shapes=((8,), (2, 4, 6), (3, 4, 8))),
        k=Tensor(lambda: torch.randn(2, 4, 8), wrong_shapes=((8,), (2, 4, 6), (2, 5, 8))),
        v=Tensor(lambda: torch.randn(2, 4, 3), wrong_shapes=((3,), (2, 5, 3))),
        mask=Tensor(
            lambda: torch.ones(4, 4, dtype=torch.bool).tril(),
            kind="bool",
            wrong_shapes=((3, 4),),
            edges=(masked_rows, lambda: torch.zeros(4, 4, dtype=torch.bool)),
            optional=True,
        ),
        bias=Tensor(lambda: -torch.rand(4, 4), wrong_shapes=((3, 4),), optional=True),
        reference=lambda out, a: all(
            close(x, y, 1e-4) for x, y in zip(out, attend(a["q"], a["k"], a["v"], a["mask"], a["bias"]), strict=True)
        ),
    ),
    contract(
        "transformerland.attention.single_head_attention",
        x=Tensor(lambda: torch.randn(4, 6), wrong_shapes=((6,), (4, 5))),
        w_q=Tensor(lambda: torch.randn(6, 3), wrong_shapes=((5, 3), (6, 2))),
        w_k=Tensor(lambda: torch.randn(6, 3), wrong_shapes=((5, 3), (6, 2))),
        w_v=Tensor(lambda: torch.randn(6, 2), wrong_shapes=((5, 2),)),
        mask=Tensor(lambda: torch.ones(4, 4, dtype=torch.bool).tril(), kind="bool", optional=True),
    ),
    contract(
        "transformerland.attention.SelfAttention",
        d_model=Size(8, even=True, edges=(16,)),
        n_heads=Size(2, cap=4096, edges=(1, 2, 4)),
        causal=Bool(False),
        position=Choice("none", attention.ATTENTION_POSITIONS),
        rope_base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: out.n_heads == a["n_heads"] and out.causal == a["causal"],
    ),
    contract(
        "transformerland.attention.SelfAttention.forward",
        call=lambda x, return_weights: attention.SelfAttention(8, 2, causal=True, position="rope")(x, return_weights),
        x=Tensor(lambda: torch.randn(2, 5, 8), wrong_shapes=((5, 8), (2, 5, 6), (2, 0, 8))),
        return_weights=Bool(False),
        reference=lambda out, a: (out[0] if a["return_weights"] else out).shape == a["x"].shape,
    ),
    # --- model --------------------------------------------------------------------------------------
    contract(
        "transformerland.model.TransformerConfig",
        vocab_size=Size(8),
        d_model=Size(8, even=True, edges=(16,)),
        n_layers=Size(1),
        n_heads=Size(2, cap=4096, edges=(1, 2)),
        d_ff=Size(8),
        max_len=Size(8),
        position=Choice("learned", POSITION_SCHEMES),
        causal=Bool(True),
        embed_init_std=Number(0.02, low=0, low_open=True, optional=True, span=(0, 10)),
        learned_init_std=Number(0.02, low=0, low_open=True, optional=True, span=(0, 10)),
        rope_base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: out.d_model == a["d_model"] and out.d_model % out.n_heads == 0,
    ),
    contract(
        "transformerland.model.TinyTransformer",
        config=Fixed(TransformerConfig(8, d_model=8, n_heads=2, n_layers=1, d_ff=8), bad=[None, {"vocab_size": 8}]),
        seed=Fixed(0, bad=[-1, "0", 2.5, True]),
    ),
    contract(
        "transformerland.model.TinyTransformer.forward",
        call=lambda tokens: tiny("rope")(tokens),
        tokens=Tensor(
            lambda: torch.randint(8, (2, 5)),
            kind="index",
            wrong_shapes=((5,), (2, 0)),
            edges=(lambda: torch.full((2, 9), 8),),
        ),
        reference=lambda out, a: out.shape == (*a["tokens"].shape, 8),
    ),
    contract(
        "transformerland.model.TransformerBlock",
        config=Fixed(TransformerConfig(8, d_model=8, n_heads=2, n_layers=1, d_ff=8), bad=[None, "config"]),
    ),
    # --- symmetry -----------------------------------------------------------------------------------
    contract(
        "transformerland.experiments.symmetry.permute_tokens",
        x=Tensor(lambda: torch.randn(2, 4, 3), kind="any", wrong_shapes=((4,),)),
        perm=Fixed([2, 0, 3, 1], bad=[[0, 0, 1, 2], [0, 1, 2], "0123", torch.tensor([2.0, 0, 3, 1]), None]),
        reference=lambda out, a: torch.equal(out, a["x"][..., [2, 0, 3, 1], :]),
    ),
    contract(
        "transformerland.experiments.symmetry.mean_pool",
        x=Tensor(lambda: torch.randn(2, 4, 3), wrong_shapes=((4,), (2, 0, 3))),
        reference=lambda out, a: close(out, a["x"].double().mean(-2)),
    ),
    contract(
        "transformerland.experiments.symmetry.equivariance_gap",
        fn=Fixed(lambda x: x * 2, bad=[None, 3, "fn", lambda x: x.mean(-2), lambda x: "not a tensor"]),
        x=Tensor(lambda: torch.randn(4, 3), kind="any", wrong_shapes=((4,),)),
        perm=Fixed([1, 0, 3, 2], bad=[[0, 0, 1, 2], [5, 0, 1, 2], None]),
    ),
    contract(
        "transformerland.experiments.symmetry.invariance_gap",
        fn=Fixed(lambda x: x.sum(-2), bad=[None, 3, lambda x: 1.0]),
        x=Tensor(lambda: torch.randn(4, 3), kind="any", wrong_shapes=((4,),)),
        perm=Fixed([1, 0, 3, 2], bad=[[0, 0, 1, 2], None]),
    ),
    # --- tasks --------------------------------------------------------------------------------------
    record(
        "transformerland.tasks.Batch",
        "its tensors are checked where a batch is read (masked_loss, position_losses)",
        example=batch,
        holds=lambda b: b.inputs.shape == b.targets.shape == b.mask.shape == (2, 6) and b.mask.dtype == torch.bool,
    ),
    contract(
        "transformerland.tasks.MarkovTask",
        vocab_size=Size(8, edges=(1, 2)),
        order=Size(2, cap=16),
        concentration=Number(0.3, low=0, low_open=True, span=(0, 100)),
        seed=Count(0),
        reference=lambda out, a: out.transitions.shape == (a["vocab_size"] ** a["order"], a["vocab_size"]),
    ),
    contract(
        "transformerland.tasks.MarkovTask.sample",
        call=lambda batch_size, length, generator: tasks.MarkovTask(8, order=1).sample(batch_size, length, generator),
        batch_size=Size(2),
        length=Size(5, edges=(1,)),
        generator=Fixed(torch.Generator, bad=[None, 0, "seed"], make=True),
    ),
    contract(
        "transformerland.tasks.MarkovTask.source_log_probs",
        call=lambda tokens: tasks.MarkovTask(8, order=2).source_log_probs(tokens),
        tokens=Tensor(lambda: torch.randint(8, (2, 5)), kind="index", wrong_shapes=((5,), (2, 5, 1))),
        reference=lambda out, a: out.shape == (*a["tokens"].shape, 8) and close(out.exp().sum(-1), torch.ones(2, 5)),
    ),
    contract(
        "transformerland.tasks.ReverseTask",
        vocab_size=Size(8),
        reference=lambda out, a: out.vocab_size == a["vocab_size"],
    ),
    contract(
        "transformerland.tasks.SortTask",
        vocab_size=Size(8),
        reference=lambda out, a: out.vocab_size == a["vocab_size"],
    ),
    # --- training -----------------------------------------------------------------------------------
    contract(
        "transformerland.training.pick_device",
        prefer=Device(None),
        reference=lambda out, a: isinstance(out, torch.device),
    ),
    record(
        "transformerland.training.EvalResult",
        "a result of evaluate(), made from checked numbers",
        example=lambda: training.evaluate(tiny(), tasks.MarkovTask(8, order=1), length=4, batch_size=2, n_batches=1),
        holds=lambda r: finite(r.loss) and 0 <= r.token_accuracy <= 1 and 0 <= r.sequence_accuracy <= 1,
    ),
    record(
        "transformerland.training.TrainResult",
        "a result of train(); smoothed() checks its window",
        example=lambda: training.train(
            tiny(), tasks.MarkovTask(8, order=1), steps=2, length=4, batch_size=2, warmup=1, progress=False
        ),
        holds=lambda r: len(r.losses) == 2 and all(map(finite, r.losses)) and len(r.smoothed(2)) == 2,
    ),
    contract(
        "transformerland.training.masked_loss",
        logits=Tensor(lambda: torch.randn(2, 6, 8), wrong_shapes=((2, 5, 8), (6, 8))),
        batch=Fixed(batch, bad=[None, (torch.zeros(2, 6), torch.zeros(2, 6))], make=True),
        reference=lambda out, a: finite(out),
        refuse=({"logits": Made(lambda: torch.randn(2, 6, 4))},),  # targets up to 7, but only 4 classes
    ),
    contract(
        "transformerland.training.train",
        model=Fixed(tiny, bad=NOT_MODELS, make=True),
        task=Fixed(lambda: tasks.MarkovTask(8, order=1), bad=[None, "task", 8], make=True),
        steps=Size(1),
        length=Fixed(4, bad=[0, -1, "4", (6, 2), (1, 2, 3), 2.5, None, 10**12]),
        batch_size=Size(2),
        lr=Number(3e-3, low=0, low_open=True),
        weight_decay=Number(0.01, low=0),
        warmup=Count(1),
        clip=Number(1.0, low=0, low_open=True),
        seed=Count(0),
        device=Device(None),
        progress=Bool(False),
        desc=Text("training"),
    ),
    contract(
        "transformerland.training.evaluate",
        model=Fixed(tiny, bad=NOT_MODELS, make=True),
        task=Fixed(lambda: tasks.MarkovTask(8, order=1), bad=[None, "task"], make=True),
        length=Size(4),
        batch_size=Size(2),
        n_batches=Size(1, cap=10_000),
        seed=Count(0),
        device=Device(None),
    ),
    contract(
        "transformerland.training.evaluation_batches",
        call=lambda task, length, batch_size, n_batches, seed: list(
            training.evaluation_batches(task, length=length, batch_size=batch_size, n_batches=n_batches, seed=seed)
        ),
        task=Fixed(lambda: tasks.MarkovTask(8, order=1), bad=[None, "task"], make=True),
        length=Size(4),
        batch_size=Size(2),
        n_batches=Size(1, cap=10_000),
        seed=Count(0),
        reference=lambda out, a: (
            len(out) == a["n_batches"] and all(b.inputs.shape == (a["batch_size"], a["length"]) for b in out)
        ),
    ),
    contract(
        "transformerland.training.side_by_side",
        fn=Fixed(lambda x: x + 1, bad=[None, 3, "fn"]),
        items=Fixed([1, 2, 3], bad=[None, 3]),
        workers=Size(2, cap=64),
        device=Device(None),
        reference=lambda out, a: out == [2, 3, 4],
    ),
    # --- remedies -----------------------------------------------------------------------------------
    contract(
        "transformerland.experiments.remedies.truncate",
        tokens=Tensor(lambda: torch.arange(10)[None].repeat(2, 1), kind="any", wrong_shapes=((2, 2, 2),)),
        max_len=Size(4),
        keep=Choice("first", ("first", "last")),
        reference=lambda out, a: torch.equal(
            out,
            a["tokens"][..., : a["max_len"]] if a["keep"] == "first" else a["tokens"][..., -a["max_len"] :],
        ),
    ),
    contract(
        "transformerland.experiments.remedies.window_spans",
        length=Size(20, edges=(1, 100)),
        window=Size(8),
        stride=Size(4, optional=True, edges=(1, 2, 8)),
        reference=lambda out, a: (
            out[0][0] == 0
            and out[-1][1] == a["length"]
            and all(e - s <= a["window"] and 0 <= s < e for s, e in out)
            and all(s2 <= e1 for (_, e1), (s2, _) in itertools.pairwise(out))
        ),
    ),
    contract(
        "transformerland.experiments.remedies.window_reach",
        length=Size(20, edges=(1, 100)),
        window=Size(8),
        stride=Size(4, optional=True, edges=(1, 2, 8)),
        reference=lambda out, a: (
            tuple(out.shape) == (a["length"],)
            and bool((out >= 0).all())
            and bool((out <= torch.arange(a["length"])).all())
            and bool((out < a["window"]).all())
        ),
    ),
    contract(
        "transformerland.experiments.remedies.sliding_window_logits",
        model=Fixed(tiny, bad=[None, "model", tiny("learned", causal=False)], make=True),
        tokens=Tensor(lambda: torch.randint(8, (2, 12)), kind="index", wrong_shapes=((12,),)),
        window=Size(6, edges=(8,)),
        stride=Size(3, optional=True, edges=(1, 6)),
        reference=lambda out, a: out.shape == (2, 12, 8) and finite(out),
    ),
    contract(
        "transformerland.experiments.remedies.interpolate_table",
        table=Tensor(
            lambda: torch.tensor([[0.0, 1.0], [10.0, 3.0], [20.0, 5.0]]),
            wrong_shapes=((3,), (0, 2)),
            edges=(lambda: torch.tensor([[4.0, 2.0]]),),
        ),
        new_len=Size(5, edges=(1, 2, 9)),
        reference=lambda out, a: close(out, interpolated(a["table"], a["new_len"]), 1e-5),
    ),
    contract(
        "transformerland.experiments.remedies.extend_table",
        table=Tensor(lambda: torch.randn(3, 2), wrong_shapes=((3,),)),
        new_len=Size(5, edges=(3, 4)),
        init_std=Number(0.02, low=0, low_open=True, span=(0, 10)),
        seed=Count(0),
        reference=lambda out, a: out.shape == (a["new_len"], 2) and torch.equal(out[:3], a["table"]),
        refuse=({"table": Made(lambda: torch.randn(8, 256)), "new_len": 2**20},),  # 2**28 numbers, drawn in float64
    ),
    contract(
        "transformerland.experiments.remedies.with_position_table",
        model=Fixed(tiny, bad=[None, tiny("rope")], make=True),
        table=Tensor(lambda: torch.randn(12, 8), wrong_shapes=((12,), (12, 6))),
        reference=lambda out, a: out.positions.max_len == 12,
    ),
    contract(
        "transformerland.experiments.remedies.fine_tune",
        model=Fixed(tiny, bad=NOT_MODELS, make=True),
        task=Fixed(lambda: tasks.MarkovTask(8, order=1), bad=[None, "task"], make=True),
        steps=Size(1),
        length=Fixed(4, bad=[0, "4", (6, 2)]),
        lr=Number(1e-3, low=0, low_open=True),
        warmup=Count(1),
    ),
    contract(
        "transformerland.experiments.remedies.position_losses",
        logits=Tensor(lambda: torch.randn(2, 6, 8), wrong_shapes=((2, 5, 8), (6, 8))),
        batch=Fixed(batch, bad=[None, "batch"], make=True),
        reference=lambda out, a: out.shape == (6,),
    ),
    contract(
        "transformerland.experiments.remedies.prefix_losses",
        per_position=Tensor(
            lambda: torch.tensor([float("nan"), 2.0, 1.0, 3.0]),
            wrong_shapes=((2, 2),),
            edges=(lambda: torch.full((3,), float("nan")),),
        ),
        reference=lambda out, a: close(
            out,
            torch.tensor(
                [
                    (lambda kept: sum(kept) / len(kept) if kept else float("nan"))(
                        [v for v in a["per_position"][: t + 1].tolist() if not math.isnan(v)]
                    )
                    for t in range(len(a["per_position"]))
                ]
            ),
        ),
    ),
    # --- analysis -----------------------------------------------------------------------------------
    contract(
        "transformerland.experiments.analysis.cosine_similarity_matrix",
        table=Tensor(lambda: torch.randn(5, 3), wrong_shapes=((5,),), edges=(lambda: torch.zeros(3, 2),)),
        reference=lambda out, a: close(
            out,
            torch.nn.functional.normalize(a["table"].double(), dim=1)
            @ torch.nn.functional.normalize(a["table"].double(), dim=1).T,
            1e-5,
        ),
        refuse=({"table": Made(lambda: torch.randn(2**15, 8))},),  # a (2**15, 2**15) matrix: 2**30 numbers
    ),
    contract(
        "transformerland.experiments.analysis.similarity_by_offset",
        similarity=Tensor(lambda: torch.randn(5, 5), wrong_shapes=((5, 4), (5,), (0, 0))),
        max_offset=Size(2, optional=True, edges=(4, 10)),
        # (K + 1,) for K = max_offset, as documented: an offset past N - 1 is refused, not cut
        reference=lambda out, a: close(
            out,
            torch.stack([a["similarity"].double().diagonal(k).mean() for k in range((a["max_offset"] or 4) + 1)]),
        ),
        refuse=({"similarity": Made(lambda: torch.randn(6, 6)), "max_offset": 6},),
    ),
    contract(
        "transformerland.experiments.analysis.linear_position_probe",
        table=Tensor(lambda: torch.randn(12, 3), wrong_shapes=((12,),), edges=(lambda: torch.ones(12, 3),)),
        folds=Size(4, edges=(2, 12, 13)),
        ridge=Number(1e-3, low=0, low_open=True, span=(0, 10)),
        seed=Count(0),
        reference=lambda out, a: 0 <= out < 12,
    ),
    contract(
        "transformerland.experiments.analysis.pca",
        table=Tensor(lambda: torch.randn(6, 3), wrong_shapes=((6,),), edges=(lambda: torch.ones(6, 3),)),
        k=Size(2, edges=(3, 4, 10)),
        reference=lambda out, a: out[0].shape == (6, a["k"]) and math.isclose(float(out[1].sum()), 1.0, rel_tol=1e-5),
    ),
]

_ = (analysis, model, remedies, symmetry, training)  # the modules these entries cover
