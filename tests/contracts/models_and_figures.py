"""Contracts of the real models' modules (BERT's embeddings, SmolLM2) and of the figures."""

from __future__ import annotations

import functools
import math
import types

import torch
from transformerland import encodings, interactive, llm
from transformerland.bert import BERT_BASE, BertEmbeddingConfig, BertEmbeddings, load_minilm_tokenizer
from transformerland.interactive import choice, slider, toggle

from . import Bool, Choice, Count, Device, Fixed, Number, Size, Tensor, Text, close, contract, finite, record

B = "transformerland.bert.weights"
G = "transformerland.llm.gguf_file"
I = "transformerland.llm.inside"  # noqa: E741
X = "transformerland.interactive"
NOT_PATHS = [None, 3, ["path"]]


@functools.cache
def tokenizer():
    return load_minilm_tokenizer()


def small_bert() -> BertEmbeddings:
    return BertEmbeddings(BertEmbeddingConfig(vocab_size=16, hidden_size=4, max_position_embeddings=8))


class _Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj, self.k_proj = torch.nn.Linear(8, 8), torch.nn.Linear(8, 4)


class _Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = _Attention()


def fake_llama() -> torch.nn.Module:
    """The shape of a transformers Llama model that record_queries_keys reads, without transformers."""
    model = torch.nn.Module()
    model.config = types.SimpleNamespace(num_attention_heads=2, num_key_value_heads=1, head_dim=4, hidden_size=8)
    model.model = torch.nn.Module()
    model.model.layers = torch.nn.ModuleList([_Layer()])
    return model


def _recorded(model: torch.nn.Module):
    """What record_queries_keys holds after one pass of three tokens through ``model``'s projections."""
    with llm.record_queries_keys(model) as record:
        attention = model.model.layers[0].self_attn
        x = torch.randn(1, 3, 8)
        attention.q_proj(x), attention.k_proj(x)
    return record


def attentions() -> torch.Tensor:
    return torch.rand(2, 1, 3, 4, 4).softmax(-1)


def tiny_decoder() -> torch.nn.Module:
    from transformerland.model import TinyTransformer, TransformerConfig

    return TinyTransformer(TransformerConfig(8, d_model=8, n_heads=2, n_layers=1, d_ff=8, position="rope"))


CURVES = {"learned": torch.tensor([1.0, 2.0, 3.0]), "rope": torch.tensor([2.0, 1.0, 0.5])}

CONTRACTS = [
    # --- BERT -----------------------------------------------------------------------------------------
    contract(
        "transformerland.bert.embeddings.BertEmbeddingConfig",
        vocab_size=Size(16),
        hidden_size=Size(4),
        max_position_embeddings=Size(8),
        type_vocab_size=Size(2),
        layer_norm_eps=Number(1e-12, low=0, low_open=True, high=1, span=(0, 1)),
        hidden_dropout_prob=Number(0.1, low=0, high=1, high_open=True),
        pad_token_id=Count(0, low=0, high=15),
        reference=lambda out, a: out.num_parameters == sum(out.parameter_counts().values()),
    ),
    contract("transformerland.bert.embeddings.BertEmbeddings", config=Fixed(BERT_BASE, bad=[None, {"vocab_size": 8}])),
    contract(
        "transformerland.bert.embeddings.BertEmbeddings.forward",
        call=lambda input_ids, token_type_ids, position_ids: small_bert()(input_ids, token_type_ids, position_ids),
        input_ids=Tensor(
            lambda: torch.randint(16, (2, 5)),
            kind="index",
            wrong_shapes=((5,), (2, 0), (2, 9)),
            edges=(lambda: torch.full((2, 5), 16), lambda: torch.full((2, 5), -1)),
        ),
        token_type_ids=Tensor(
            lambda: torch.zeros(2, 5, dtype=torch.long), kind="index", wrong_shapes=((2, 4),), optional=True
        ),
        position_ids=Tensor(lambda: torch.arange(5)[None], kind="index", wrong_shapes=((1, 4),), optional=True),
        reference=lambda out, a: out.shape == (2, 5, 4) and finite(out),
    ),
    record(
        "transformerland.bert.embeddings.Contributions",
        "three tensors made by BertEmbeddings.contributions",
        example=lambda: small_bert().contributions(torch.tensor([[1, 2, 3]])),
        holds=lambda c: all(t.shape == (1, 3, 4) for t in c) and close(c.total(), (c.word + c.segment) + c.position),
    ),
    record(
        f"{B}.EncodedPair",
        "made by encode_pair from the tokenizer's own output",
        example=lambda: __import__("transformerland").bert.encode_pair(tokenizer(), "The apple fell.", "It was ripe."),
        holds=lambda p: (
            p.input_ids.shape == p.token_type_ids.shape and set(p.token_type_ids.unique().tolist()) == {0, 1}
        ),
    ),
    contract(
        f"{B}.encode_pair",
        tokenizer=Fixed(tokenizer, bad=[None, "tokenizer"], make=True),
        first=Text("The apple fell."),
        second=Fixed("It was ripe.", bad=[3, b"bytes", ["text"]]),
    ),
    contract(
        f"{B}.load_bert_embeddings",
        folder=Fixed("/nonexistent", bad=[*NOT_PATHS, "/nonexistent"]),
        device=Device(),
        raises=(FileNotFoundError,),
        run_good=False,
    ),
    contract(f"{B}.load_minilm_embeddings", device=Fixed("cpu", bad=["cuda:99", "tpu", 3]), run_good=False),
    contract(f"{B}.load_minilm_tokenizer"),
    contract(f"{B}.minilm_model_path"),
    # --- SmolLM2 ------------------------------------------------------------------------------------
    contract(f"{G}.smollm2_gguf_path"),
    contract(
        f"{G}.GGUFFile",
        path=Fixed(None, bad=[3, ["x"], "/nonexistent.gguf", __file__]),
        raises=(FileNotFoundError,),
        run_good=False,
    ),
    record(
        f"{G}.GGUFTensorInfo",
        "read from the file by GGUFFile",
        example=lambda: llm.GGUFFile().tensors["blk.0.attn_q.weight"],
        holds=lambda t: t.name == "blk.0.attn_q.weight" and len(t.shape) == 2 and t.nbytes > 0,
        slow=True,  # opening the file reads its 49,152-token vocabulary: seconds
    ),
    contract(
        f"{G}.gguf_rows_to_halves",
        weight=Tensor(lambda: torch.randn(16, 3), kind="any", wrong_shapes=((16,), (15, 3))),
        n_heads=Size(2, edges=(1, 4, 3)),
        reference=lambda out, a: torch.equal(llm.halves_rows_to_gguf(out, a["n_heads"]), a["weight"]),
    ),
    contract(
        f"{G}.halves_rows_to_gguf",
        weight=Tensor(lambda: torch.randn(16, 3), kind="any", wrong_shapes=((16,), (15, 3))),
        n_heads=Size(2, edges=(1, 4, 3)),
        reference=lambda out, a: torch.equal(llm.gguf_rows_to_halves(out, a["n_heads"]), a["weight"]),
    ),
    contract(
        "transformerland.llm.loading.load_smollm2", device=Fixed("cpu", bad=["cuda:99", "tpu", 3, None]), run_good=False
    ),
    contract(
        "transformerland.llm.positions.position_ids_from_mask",
        attention_mask=Tensor(
            lambda: torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]),
            kind="index",
            wrong_shapes=((5,),),
            edges=(
                lambda: torch.tensor([[0, 1], [1, 0]]),
                lambda: torch.tensor([[0, 0]]),
                lambda: torch.tensor([[2, 1]]),
            ),
        ),
        reference=lambda out, a: torch.equal(
            out, torch.where(a["attention_mask"] == 1, a["attention_mask"].cumsum(1) - 1, 0)
        ),
    ),
    contract(
        "transformerland.llm.positions.sliding_window_mask",
        length=Size(6),
        window=Size(3),
        sinks=Count(0),
        device=Device(None),
        reference=lambda out, a: (
            out.shape == (1, 1, a["length"], a["length"])
            and all(
                (out[0, 0, i, j] == 0) == (j <= i and (i - j < a["window"] or j < a["sinks"]))
                for i in range(a["length"])
                for j in range(a["length"])
            )
        ),
    ),
    contract(
        f"{I}.rotary_turns",
        max_offset=Number(100.0, low=0, low_open=True, span=(0, 1e6)),
        head_dim=Size(8, even=True),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        reference=lambda out, a: close(
            out, a["max_offset"] * encodings.sinusoid_frequencies(a["head_dim"], a["base"]) / (2 * math.pi)
        ),
    ),
    record(
        f"{I}.QueryKeyRecord",
        "filled by record_queries_keys; queries() and keys() check the layer",
        example=lambda: _recorded(fake_llama()),
        holds=lambda r: r.queries(0).shape == (1, 2, 3, 4) and r.keys(0).shape == (1, 1, 3, 4),
    ),
    contract(
        f"{I}.record_queries_keys",
        call=lambda model: _enter(llm.record_queries_keys(model)),
        model=Fixed(fake_llama, bad=[None, torch.nn.Linear(2, 2), "model"], make=True),
    ),
    contract(
        f"{I}.rotary_attention_weights",
        queries=Tensor(lambda: torch.randn(1, 2, 4, 8), wrong_shapes=((2, 4, 8), (1, 2, 4, 6))),
        keys=Tensor(lambda: torch.randn(1, 1, 4, 8), wrong_shapes=((1, 3, 4, 8), (1, 1, 5, 8))),
        base=Number(10000.0, low=0, low_open=True, span=(0, 1e6)),
        positions=Tensor(lambda: torch.arange(4), kind="any", wrong_shapes=((3,),), optional=True, finite=True),
        reference=lambda out, a: out.shape == (1, 2, 4, 4) and close(out.sum(-1), torch.ones(1, 2, 4), 1e-5),
    ),
    contract(
        f"{I}.rotary_pair_norms",
        x=Tensor(lambda: torch.randn(3, 8), wrong_shapes=((3, 7),)),
        reference=lambda out, a: close(out, (a["x"].double()[..., :4] ** 2 + a["x"].double()[..., 4:] ** 2).sqrt()),
    ),
    contract(
        f"{I}.first_token_attention",
        attentions=Tensor(attentions, wrong_shapes=((2, 3, 4, 4),)),
        skip=Count(1, high=3),
        reference=lambda out, a: close(out, a["attentions"].double()[..., a["skip"] :, 0].mean(dim=(1, 3))),
    ),
    contract(
        f"{I}.next_token_loss",
        model=Fixed(tiny_decoder, bad=[None, "model", torch.nn.Identity()], make=True),
        input_ids=Tensor(lambda: torch.randint(8, (1, 5)), kind="index", wrong_shapes=((5,), (1, 1))),
        reference=lambda out, a: math.isfinite(out) and out > 0,
        refuse=({"input_ids": torch.tensor([[1, 2, 8]])}, {"input_ids": torch.tensor([[1, -2, 3]])}),  # vocabulary: 8
    ),
    contract(
        f"{I}.raw_query_key_weights",
        model=Fixed(fake_llama, bad=[None, torch.nn.Linear(2, 2)], make=True),
        gguf_file=Fixed(None, bad=[None, "file", 3]),
        run_good=False,
    ),
    contract(
        f"{I}.replaced_parameters",
        call=lambda model, replacements: _enter(llm.replaced_parameters(model, replacements)),
        model=Fixed(lambda: torch.nn.Linear(3, 2), bad=[None, "model"], make=True),
        replacements=Fixed(
            {"weight": torch.zeros(2, 3)},
            bad=[None, {"weight": [[0.0] * 3] * 2}, {"weight": torch.zeros(3, 3)}, {"wieght": torch.zeros(2, 3)}],
        ),
        raises=(KeyError,),
    ),
    # --- figures --------------------------------------------------------------------------------------
    contract(
        "transformerland.plotting.heatmap",
        call=lambda matrix, title, diverging: _closed(
            __import__("transformerland").plotting.heatmap(
                matrix, title=title, xlabel="x", ylabel="y", colorbar_label="c", diverging=diverging
            )
        ),
        matrix=Tensor(lambda: torch.randn(3, 4), kind="array", wrong_shapes=((3,), (2, 3, 4))),
        title=Text("a title"),
        diverging=Bool(False),
    ),
    contract("transformerland.plotting.use_book_style"),
    contract(f"{X}.use_interactive_style"),
    contract(
        f"{X}.slider",
        field=Text("step"),
        label=Text("Step"),
        values=Fixed([0, 10, 20], bad=[[], [0, 10, 30], [0, "a"], None, [True, False]]),
        value=Fixed(None, bad=[5, "0"]),
    ),
    contract(
        f"{X}.choice",
        field=Text("scheme"),
        label=Text("Scheme"),
        options=Fixed(["learned", "rope"], bad=[[], None, 3]),
        value=Fixed(None, bad=["alibi"]),
        kind=Choice("radio", ("radio", "select")),
    ),
    contract(f"{X}.toggle", field=Text("show"), label=Text("Show"), value=Bool(True)),
    contract(
        f"{X}.Control",
        call=lambda field: interactive.Control(field, "Label", "radio", ("a", "b"), "a"),
        field=Fixed("f", bad=[None, 3]),
    ),
    contract(
        f"{X}.heatmap_explorer",
        call=lambda frames, controls, description: interactive.heatmap_explorer(
            frames, controls, title="t", x_title="x", y_title="y", value_title="v", description=description
        ),
        frames=Fixed(
            {0: torch.eye(3), 10: torch.ones(3, 3)}, bad=[{}, None, {0: torch.eye(3), 10: torch.ones(2, 3)}, {0: "m"}]
        ),
        controls=Fixed([slider("step", "Step", [0, 10])], bad=[[], None, [slider("step", "Step", [0, 5])]]),
        description=Fixed("Two matrices.", bad=["", "  ", None, 3]),
    ),
    contract(
        f"{X}.clock_wall",
        call=lambda table, description: interactive.clock_wall(table, description=description),
        table=Tensor(lambda: encodings.sinusoidal_encoding(8, 4), wrong_shapes=((8,), (8, 5))),
        description=Fixed("Clocks.", bad=["", None, 3]),
    ),
    contract(
        f"{X}.row_explorer",
        call=lambda matrix, rows, description: interactive.row_explorer(
            matrix, rows, title="t", x_title="x", y_title="y", description=description
        ),
        matrix=Tensor(lambda: torch.randn(4, 4), wrong_shapes=((4,),)),
        rows=Fixed([0, 2], bad=[[], None, [0, 9], ["a"]]),
        description=Fixed("Rows.", bad=["", None]),
    ),
    contract(
        f"{X}.curve_toggles",
        call=lambda x, curves, description: interactive.curve_toggles(
            x, curves, title="t", x_title="x", y_title="y", description=description
        ),
        x=Fixed([1, 2, 3], bad=[[], None, ["a", "b", "c"], [1, 2]]),
        curves=Fixed(CURVES, bad=[{}, None, {"learned": torch.ones(2)}, {"learned": [1, 2, 3]}]),
        description=Fixed("Curves.", bad=["", None]),
    ),
    contract(
        f"{X}.curve_explorer",
        call=lambda x, frames, controls, description: interactive.curve_explorer(
            x, frames, controls, title="t", x_title="x", y_title="y", description=description
        ),
        x=Fixed([1, 2, 3], bad=[[], None, [1, 2]]),
        frames=Fixed({"a": CURVES, "b": CURVES}, bad=[{}, None, {"a": {"learned": torch.ones(2)}, "b": CURVES}]),
        controls=Fixed([choice("k", "K", ["a", "b"])], bad=[[], None, [choice("k", "K", ["a", "c"])]]),
        description=Fixed("Curves.", bad=["", None]),
    ),
    contract(
        f"{X}.rope_pair_explorer",
        call=lambda query, key, rotate, positions, pairs, description: interactive.rope_pair_explorer(
            query, key, rotate, positions=positions, pairs=pairs, description=description
        ),
        query=Tensor(lambda: torch.randn(8), wrong_shapes=((2, 8), (6,))),
        key=Tensor(lambda: torch.randn(8), wrong_shapes=((2, 8), (6,))),
        rotate=Fixed(encodings.apply_rotary, bad=[None, 3]),
        positions=Size(4, cap=64),
        pairs=Fixed([0, 1], bad=[[], None, [9], ["a"]]),
        description=Fixed("Pairs.", bad=["", None]),
    ),
    contract(
        f"{X}.TableSnapshots",
        module=Fixed(lambda: torch.nn.Embedding(4, 2), bad=[None, torch.nn.ReLU(), "table"], make=True),
        every=Size(1),
    ),
]


def _enter(manager):
    with manager as value:
        return value


def _closed(ax):
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
    return ax


_ = (toggle,)
