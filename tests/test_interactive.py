"""The interactive figures' builders: their data come from the library's numbers, their controls are bound inputs.

What the charts do in a browser (that moving a control redraws them) is tested on the built site,
in ``tests/site/test_site_interactive.py``; here, the Vega-Lite specifications themselves.
"""

from __future__ import annotations

import json
import math

import altair as alt
import pytest
import torch
from torch import nn
from transformerland.encodings import apply_rotary, sinusoidal_encoding
from transformerland.interactive import (
    Control,
    TableSnapshots,
    choice,
    clock_wall,
    curve_explorer,
    curve_toggles,
    heatmap_explorer,
    rope_pair_explorer,
    row_explorer,
    slider,
    toggle,
    use_interactive_style,
)
from transformerland.model import TinyTransformer, TransformerConfig
from transformerland.plotting import SCHEME_COLOURS
from transformerland.tasks import SortTask
from transformerland.training import train


def spec(chart: alt.TopLevelMixin) -> dict:
    """The chart's Vega-Lite specification (validated against the schema by Altair)."""
    return chart.to_dict()


def datasets(chart: alt.TopLevelMixin) -> list[list[dict]]:
    """Every table of data in the specification, inline or in its top-level ``datasets``."""
    found: list[list[dict]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("values"), list) and "data" not in node:
                found.append(node["values"])
            for key, value in node.items():
                if key == "datasets":
                    found.extend(value.values())
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(spec(chart))
    return found


def bindings(chart: alt.TopLevelMixin) -> dict[str, dict]:
    """Parameter name → its ``bind``, for every parameter bound to an input."""
    return {p["name"]: p["bind"] for p in spec(chart).get("params", []) if "bind" in p}


def test_charts_render_as_html_that_loads_vega_and_draws_svg():
    use_interactive_style()
    chart = heatmap_explorer(
        {0: torch.eye(3), 1: torch.ones(3, 3)},
        [slider("step", "step", [0, 1])],
        title="t",
        x_title="x",
        y_title="y",
        value_title="v",
        description="An identity and a matrix of ones.",
    )
    bundle = chart._repr_mimebundle_()
    html = (bundle[0] if isinstance(bundle, tuple) else bundle)["text/html"]
    assert "vegaEmbed(" in html and '{"renderer": "svg", "actions": false' in html
    assert '"description":"An identity and a matrix of ones."' in html  # compact JSON


def test_the_same_figure_renders_the_same_html_so_a_rerun_leaves_the_notebook_unchanged():
    use_interactive_style()
    make = lambda: clock_wall(sinusoidal_encoding(3, 4), description="Two clocks.")  # noqa: E731
    first, second = make()._repr_mimebundle_(), make()._repr_mimebundle_()
    assert first == second
    assert first != clock_wall(sinusoidal_encoding(4, 4), description="Two clocks.")._repr_mimebundle_()


class TestControls:
    def test_a_slider_steps_through_its_values(self):
        assert bindings_of(slider("p", "position", range(0, 30, 5))) == {
            "input": "range",
            "min": 0,
            "max": 25,
            "step": 5,
            "name": "position",
        }

    def test_choices_and_toggles_bind_radio_buttons_lists_and_check_boxes(self):
        assert bindings_of(choice("h", "head", ["a", "b"]))["input"] == "radio"
        assert bindings_of(choice("h", "head", ["a", "b"], kind="select"))["options"] == ["a", "b"]
        assert bindings_of(toggle("s", "show"))["input"] == "checkbox"
        assert choice("h", "head", ["a", "b"], "b").value == "b"

    @pytest.mark.parametrize(
        ("make", "error", "words"),
        [
            (lambda: slider("p", "p", [0, 1, 3]), ValueError, "equal steps"),
            (lambda: slider("p", "p", [3, 2, 1]), ValueError, "equal steps"),
            (lambda: slider("p", "p", []), TypeError, "non-empty"),
            (lambda: slider("p", "p", [0, 1], value=5), ValueError, "not one of its values"),
            (lambda: choice("h", "head", []), ValueError, "at least one option"),
            (lambda: choice("h", "head", ["a"], "z"), ValueError, "not one of its options"),
            (lambda: choice("h", "head", ["a"], kind="slider"), ValueError, "kind must be one of"),
            (lambda: toggle("s", "show", 1), TypeError, "True"),
        ],
    )
    def test_bad_controls_are_refused_clearly(self, make, error, words):
        with pytest.raises(error, match=words):
            make()


def bindings_of(control: Control) -> dict:
    return control.param().param.to_dict()["bind"]


def unflattened(record: dict, digits: int = 2) -> torch.Tensor:
    """A record's string of whole hundredths back as numbers (NaN where the chart leaves a gap)."""
    return torch.tensor([int(v) / 10**digits if v else math.nan for v in record["v"].split(",")], dtype=torch.float64)


def close(stored: torch.Tensor, exact: torch.Tensor) -> bool:
    """Whether the chart's data is the exact value rounded to two decimals."""
    return torch.allclose(stored, exact.double(), atol=0.005 + 1e-9)


class TestHeatmapExplorer:
    def frames(self) -> dict:
        generator = torch.Generator().manual_seed(0)
        return {step: torch.rand(4, 5, generator=generator) * 2 - 1 for step in (0, 10, 20)}

    def make(self, frames, controls=None, **options):
        controls = controls or [slider("step", "training step", [0, 10, 20])]
        labels = dict(title="t", x_title="key", y_title="query", value_title="cos", description="A test map.")
        return heatmap_explorer(frames, controls, **labels | options)

    def test_each_frame_is_kept_rounded_and_picked_by_the_control(self):
        frames = self.frames()
        chart = self.make(frames, diverging=True)
        (records,) = datasets(chart)
        assert [r["step"] for r in records] == [0, 10, 20]
        for record, matrix in zip(records, frames.values(), strict=True):
            assert close(unflattened(record), matrix.flatten())
        transforms = spec(chart)["transform"]
        assert transforms[0] == {"filter": "datum.step == step_control"}
        assert {"calculate": "floor(datum.index / 5)", "as": "row"} in transforms
        assert set(bindings(chart)) == {"step_control"}
        assert spec(chart)["encoding"]["color"]["scale"]["scheme"] == "purpleorange"
        limit = max(float(m.abs().max()) for m in frames.values())
        assert spec(chart)["encoding"]["color"]["scale"]["domain"] == pytest.approx([-limit, limit])

    def test_masked_entries_are_left_blank_and_labels_name_the_axes(self):
        matrix = torch.tensor([[1.0, float("nan")], [0.5, 0.5]])
        chart = self.make(
            {"a": matrix, "b": matrix * 0},
            [choice("head", "head", ["a", "b"])],
            x_labels=["apple", "pip"],
            y_labels=["apple", "pip"],
        )
        assert datasets(chart)[0][0]["v"] == "100,,50,50"
        assert {"filter": "datum.v !== ''"} in spec(chart)["transform"]
        assert spec(chart)["encoding"]["x"]["sort"] == ["apple", "pip"]
        assert spec(chart)["encoding"]["color"]["scale"]["domain"] == [0.0, 1.0]

    def test_two_controls_pick_a_frame_by_a_pair_of_values(self):
        controls = [choice("order", "order", ["ab", "ba"]), toggle("seats", "add positions", False)]
        frames = {(order, seats): torch.eye(2) for order in ("ab", "ba") for seats in (False, True)}
        chart = self.make(frames, controls)
        assert len(datasets(chart)[0]) == 4
        assert set(bindings(chart)) == {"order_control", "seats_control"}

    @pytest.mark.parametrize(
        ("frames", "options", "words"),
        [
            ({}, {}, "at least one matrix"),
            ({0: torch.eye(2), 10: torch.eye(3)}, {}, "same shape"),
            ({5: torch.eye(2)}, {}, "not an option"),
            ({0: torch.ones(2)}, {}, "2 dimensions"),
            ({0: torch.eye(2)}, {"x_labels": ["a"]}, "2 distinct names"),
            ({0: torch.eye(2)}, {"description": " "}, "needs a description"),
        ],
    )
    def test_bad_input_is_refused_clearly(self, frames, options, words):
        with pytest.raises(ValueError, match=words):
            self.make(frames, **options)


def test_the_clock_wall_draws_the_table_it_is_given():
    table = sinusoidal_encoding(11, 8)
    chart = clock_wall(table, description="Four clocks.")
    (rows,) = datasets(chart)
    assert [row["position"] for row in rows] == list(range(11))
    assert close(unflattened(rows[7]), table[7])
    position = {"input": "range", "min": 0, "max": 10, "step": 1, "name": "position p"}
    assert bindings(chart)["position_control"] == position
    assert spec(chart)["description"] == "Four clocks."
    with pytest.raises(ValueError, match="even width"):
        clock_wall(torch.zeros(5, 7), description="d")
    with pytest.raises(ValueError, match="2 dimensions"):
        clock_wall(torch.zeros(5), description="d")


def test_the_row_explorer_offers_the_chosen_rows_of_the_matrix():
    matrix = torch.linspace(-1, 1, 64).reshape(8, 8)
    chart = row_explorer(matrix, range(0, 8, 2), title="t", x_title="q", y_title="cos", description="Rows.")
    (records,) = datasets(chart)
    assert [r["row"] for r in records] == [0, 2, 4, 6]
    assert close(unflattened(records[1]), matrix[2])
    assert bindings(chart)["row_control"]["step"] == 2
    with pytest.raises(ValueError, match="rows must lie in"):
        row_explorer(matrix, [0, 8], title="t", x_title="q", y_title="cos", description="Rows.")


def test_curve_toggles_give_every_curve_its_check_box_and_colour():
    curves = {"learned": torch.tensor([1.0, 2.0, float("nan")]), "rope": torch.tensor([1.0, 1.0, 1.0])}
    labels = dict(title="t", x_title="position", y_title="loss", description="Two curves.")
    chart = curve_toggles([0, 1, 2], curves, rule_at=1, rule_label="training length", **labels)
    assert [b["input"] for b in bindings(chart).values()] == ["checkbox", "checkbox"]
    assert [b["name"] for b in bindings(chart).values()] == ["learned", "rope"]
    layer = spec(chart)["layer"][0]
    assert layer["encoding"]["color"]["scale"]["range"] == [SCHEME_COLOURS["learned"], SCHEME_COLOURS["rope"]]
    points = next(d for d in datasets(chart) if len(d) == 6)
    assert points[2] == {"curve": "learned", "x": 2, "y": None}
    with pytest.raises(ValueError, match="no colour"):
        curve_toggles([0], {"mystery": torch.zeros(1)}, **labels)
    with pytest.raises(ValueError, match="has 2 values for 3"):
        curve_toggles([0, 1, 2], {"rope": torch.zeros(2)}, **labels)


class TestCurveExplorer:
    def make(self, frames=None, controls=None, **options):
        frames = (
            frames
            if frames is not None
            else {
                s: {"rope": torch.tensor([1.0, 2.0, 4.0]) * s, "alibi": torch.tensor([1.0, float("nan"), 3.0])}
                for s in (1, 2, 3)
            }
        )
        controls = controls or [slider("factor", "factor", [1, 2, 3])]
        labels = dict(title="t", x_title="pair", y_title="wavelength", description="Curves that scale.")
        return curve_explorer([0, 5, 10], frames, controls, **labels | options)

    def test_each_frame_keeps_every_curve_rounded_and_picked_by_the_control(self):
        chart = self.make(digits=2)
        (records,) = datasets(chart)
        assert [(r["factor"], r["curve"]) for r in records][:3] == [(1, "rope"), (1, "alibi"), (2, "rope")]
        assert close(unflattened(records[2]), torch.tensor([2.0, 4.0, 8.0]))
        assert records[1]["v"] == "100,,300"  # a NaN is a gap
        transforms = spec(chart)["layer"][0]["transform"]
        assert transforms[0] == {"filter": "datum.factor == factor_control"}
        assert {"window": [{"op": "row_number", "field": "", "as": "index"}], "groupby": ["curve"]} in transforms
        assert {"calculate": "[0, 5, 10][datum.index]", "as": "x"} in transforms
        assert [b["input"] for b in bindings(chart).values()] == ["range", "checkbox", "checkbox"]
        assert spec(chart)["layer"][0]["encoding"]["y"]["scale"]["domain"] == [1.0, 12.0]  # every frame's extent

    def test_a_log_axis_keeps_logarithms_and_levels_move_with_the_frame(self):
        levels = {s: {"old": 4.0, "new": 4.0 * s} for s in (1, 2, 3)}
        chart = self.make(levels=levels, log_y=True, digits=3)
        curves = next(d for d in datasets(chart) if "v" in d[0])
        assert close(unflattened(curves[4], digits=3), torch.tensor([3.0, 6.0, 12.0]).log10())
        assert {"calculate": "pow(10, datum.value)", "as": "y"} in spec(chart)["layer"][0]["transform"]
        assert spec(chart)["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
        rules = next(d for d in datasets(chart) if "label" in d[0])
        assert rules[-1] == {"factor": 3, "label": "new", "y": 12.0, "left": False}
        assert rules[0]["left"] and spec(chart)["layer"][1]["transform"] == [
            {"filter": "datum.factor == factor_control"}
        ]
        fine = self.make(levels={1: {"context": 262_144, "weight": 0.0053771234}}, log_y=True)
        assert [level["y"] for level in next(d for d in datasets(fine) if "label" in d[0])] == [262_144, 0.00537712]
        three = self.make(levels={s: {"a": 1.0, "b": 2.0, "c": 3.0} for s in (1, 2)})
        assert [level["left"] for level in datasets(three)[1]] == [True, False, True] * 2  # alternate within a frame

    def test_two_controls_and_a_single_curve_without_a_check_box(self):
        controls = [slider("layer", "layer", [0, 1]), choice("head", "head", ["a", "b"])]
        frames = {(layer, head): {"rope": torch.ones(3)} for layer in (0, 1) for head in ("a", "b")}
        chart = self.make(frames, controls)
        assert set(bindings(chart)) == {"layer_control", "head_control"}
        assert len(datasets(chart)[0]) == 4

    @pytest.mark.parametrize(
        ("frames", "options", "error", "words"),
        [
            ({}, {}, ValueError, "at least one frame"),
            ({1: {}}, {}, ValueError, "at least one curve"),
            ({1: {"rope": torch.ones(3)}, 2: {"alibi": torch.ones(3)}}, {}, ValueError, "same curves"),
            ({1: {"rope": torch.ones(2)}}, {}, ValueError, "has 2 values for 3"),
            ({1: {"rope": torch.ones(3, 1)}}, {}, ValueError, "have 1 dimensions"),
            ({7: {"rope": torch.ones(3)}}, {}, ValueError, "not an option"),
            ({1: {"mystery": torch.ones(3)}}, {}, ValueError, "no colour"),
            ({1: {"rope": torch.zeros(3)}}, {"log_y": True}, ValueError, "positive values"),
            ({1: {"rope": torch.ones(3)}}, {"log_y": True, "y_domain": (0, 1)}, ValueError, "positive y_domain"),
            ({1: {"rope": torch.ones(3)}}, {"levels": {1: {"old": "high"}}}, TypeError, "sequence of numbers"),
            ({1: {"rope": torch.ones(3)}}, {"description": ""}, ValueError, "needs a description"),
        ],
    )
    def test_bad_input_is_refused_clearly(self, frames, options, error, words):
        with pytest.raises(error, match=words):
            self.make(frames, **options)

    def test_needs_a_control(self):
        with pytest.raises(ValueError, match="at least one control"):
            curve_explorer([0], {1: {"rope": torch.ones(1)}}, [], title="t", x_title="x", y_title="y", description="d")


def test_the_rope_explorer_shows_scores_that_depend_on_the_offset_only():
    generator = torch.Generator().manual_seed(0)
    query, key = torch.randn(2, 8, generator=generator, dtype=torch.float64)
    chart = rope_pair_explorer(query, key, apply_rotary, positions=6, pairs=[0, 3], description="RoPE.")
    arrows = next(d for d in datasets(chart) if "vector" in d[0])
    grid = next(d for d in datasets(chart) if "offset" in d[0])
    by_offset: dict[int, set[float]] = {}
    for cell in grid:
        by_offset.setdefault(cell["offset"], set()).add(cell["score"])
    assert len(grid) == 36 and all(len(scores) == 1 for scores in by_offset.values())
    query_0 = {a["seat"]: math.hypot(a["x"], a["y"]) for a in arrows if a["vector"] == "query" and a["pair"] == 0}
    assert max(query_0.values()) - min(query_0.values()) < 0.002  # a rotation keeps each pair's length
    assert set(bindings(chart)) == {"m_control", "n_control", "pair_control"}
    with pytest.raises(ValueError, match="pairs must be indices"):
        rope_pair_explorer(query, key, apply_rotary, positions=6, pairs=[4], description="RoPE.")
    with pytest.raises(ValueError, match="one even width"):
        rope_pair_explorer(query, key[:6], apply_rotary, positions=6, pairs=[0], description="RoPE.")


class TestTableSnapshots:
    def trained(self, every: int | None) -> tuple[TinyTransformer, dict | None]:
        config = TransformerConfig(8, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=8, position="learned")
        model = TinyTransformer(config)
        copies = TableSnapshots(model.positions, every=every) if every else None
        train(model, SortTask(vocab_size=8), steps=6, length=6, batch_size=4, progress=False, device="cpu")
        model(torch.zeros(1, 6, dtype=torch.long))  # an evaluation pass: not a training step
        return model, copies.finish() if copies else None

    def test_copies_every_few_steps_and_the_final_table_without_changing_training(self):
        model, snapshots = self.trained(every=2)
        assert list(snapshots) == [0, 2, 4, 6]
        assert torch.equal(snapshots[6], model.positions.weight.detach())
        assert not torch.equal(snapshots[0], snapshots[6])
        unobserved, _ = self.trained(every=None)
        assert torch.equal(unobserved.positions.weight, model.positions.weight)

    def test_refuses_a_module_without_a_table(self):
        with pytest.raises(TypeError, match="weight table"):
            TableSnapshots(nn.ReLU(), every=2)
        with pytest.raises(ValueError, match="every must be a positive integer"):
            TableSnapshots(nn.Embedding(3, 2), every=0)


def test_chart_data_stay_small():
    """The largest figure of the book (MiniLM's 512 rows, every eighth one) fits well under 200 KB."""
    similarity = torch.rand(512, 512) * 2 - 1
    chart = row_explorer(similarity, range(0, 512, 8), title="t", x_title="q", y_title="cos", description="d")
    assert len(json.dumps(spec(chart))) < 200_000


def test_every_chart_loads_the_javascript_the_site_serves():
    """Whichever Altair draws a chart (Colab's 5, our pinned 6), its HTML asks for JS_VERSIONS: what the site serves."""
    from transformerland import interactive

    from sphinx_ext.vendor_js import PACKAGES, check_versions

    check_versions(interactive.JS_VERSIONS)  # the vendored files satisfy what the charts ask for
    assert interactive.JS_VERSIONS == {
        "vega": alt.VEGA_VERSION,
        "vega-lite": alt.VEGALITE_VERSION,
        "vega-embed": alt.VEGAEMBED_VERSION,
    }, "the pinned Altair's own request"
    interactive.use_interactive_style()
    html = alt.renderers.get()(alt.Chart().mark_point().to_dict())["text/html"]
    for name, version in interactive.JS_VERSIONS.items():
        assert f"/{name}@{version}" in html and PACKAGES[name][0].startswith(version.split(".")[0])
