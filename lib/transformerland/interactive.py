"""Figures a reader can turn: Vega-Altair charts whose sliders and buttons work without a kernel.

Each builder takes numbers that the chapter computed with the library (a sinusoidal table, a
similarity matrix, per-position losses, rotated queries and keys...) and returns an Altair chart.
The chart carries its data inside it, rounded and thinned so that a notebook stays small, and its
controls are Vega-Lite parameters bound to HTML inputs (range sliders, radio buttons, check
boxes), which run in the reader's browser: on the book's static site, in Jupyter and in Colab.

Every chart has a ``description``, which Vega writes as the ``aria-label`` of the drawing (its
alt text), is drawn as SVG (readable by assistive technology; ``use_interactive_style``), and its
controls are native inputs, so a keyboard operates them (Tab to reach one, arrow keys or Space to
change it). Colours follow :mod:`transformerland.plotting`.

Call :func:`use_interactive_style` once, before the first chart is shown.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import torch
from altair.utils.mimebundle import spec_to_mimebundle
from torch import nn

from ._validation import (
    require_bool,
    require_choice,
    require_float_tensor,
    require_positive_int,
    require_str,
    require_tensor,
)
from .plotting import PALETTE, SCHEME_COLOURS

__all__ = [
    "CONTROL_KINDS",
    "DIVERGING_SCHEME",
    "SEQUENTIAL_SCHEME",
    "WIDTH",
    "Control",
    "TableSnapshots",
    "choice",
    "clock_wall",
    "curve_explorer",
    "curve_toggles",
    "heatmap_explorer",
    "rope_pair_explorer",
    "row_explorer",
    "slider",
    "toggle",
    "use_interactive_style",
]

#: Vega's names for the library's colour maps (``plotting.SEQUENTIAL_CMAP`` and ``DIVERGING_CMAP``):
#: cividis, and purple (low) to orange (high), as matplotlib's ``PuOr_r``.
SEQUENTIAL_SCHEME = "cividis"
DIVERGING_SCHEME = "purpleorange"
CONTROL_KINDS = ("slider", "radio", "select", "checkbox")
#: Width of the book's charts in pixels: they fit the text column of the site.
WIDTH = 560
#: The Vega, Vega-Lite and vega-embed versions every chart's HTML loads, whichever Altair drew it (Colab's
#: Altair 5 as well as our pinned Altair 6): the site serves exactly these (``sphinx_ext/vendor_js.py``), so a
#: chart executed anywhere renders on the site without a CDN. Vega-Lite 6 also draws Altair 5's specifications.
JS_VERSIONS = {"vega": "6", "vega-lite": "6.4.1", "vega-embed": "7"}


def _html(spec: dict, **options: Any) -> dict[str, str]:
    """Altair's HTML output (its "universal" template), in a container named after the chart's content.

    The page loads the JavaScript of :data:`JS_VERSIONS`, not the installed Altair's own choice.

    Altair names the container with a random id, so every run would rewrite the saved notebook;
    a digest of the specification keeps a re-run's output identical when the figure is.
    """
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    versions = {"vega_version": JS_VERSIONS["vega"], "vegalite_version": JS_VERSIONS["vega-lite"]}
    return spec_to_mimebundle(
        spec,
        format="html",
        mode="vega-lite",
        vegaembed_version=JS_VERSIONS["vega-embed"],
        template="universal",
        output_div=f"figure-{digest}",
        **versions,
        **options,
    )


def use_interactive_style() -> None:
    """Show Altair charts as HTML (they run without a kernel), drawn as SVG, without an action menu.

    The specification is written without spaces after separators, which keeps notebooks smaller.
    """
    alt.renderers.register("transformerland", _html)
    alt.renderers.enable(
        "transformerland", embed_options={"renderer": "svg", "actions": False}, json_kwds={"separators": (",", ":")}
    )


@dataclass(frozen=True)
class Control:
    """One input that the reader operates, bound to a field of the chart's data.

    Build one with :func:`slider`, :func:`choice` or :func:`toggle`. The chart keeps the rows whose
    ``field`` equals the control's current value.
    """

    field: str
    label: str
    kind: str
    options: tuple[Any, ...]
    value: Any

    def __post_init__(self) -> None:
        require_str(self.field, "field")
        require_str(self.label, "label")
        require_choice(self.kind, "kind", CONTROL_KINDS)

    def param(self) -> alt.Parameter:
        """The Vega-Lite parameter, bound to its HTML input."""
        name = f"{self.field}_control"
        if self.kind == "slider":
            step = self.options[1] - self.options[0] if len(self.options) > 1 else 1
            bind = alt.binding_range(min=self.options[0], max=self.options[-1], step=step, name=self.label)
        elif self.kind == "checkbox":
            bind = alt.binding_checkbox(name=self.label)
        else:
            make = alt.binding_radio if self.kind == "radio" else alt.binding_select
            bind = make(options=list(self.options), name=self.label)
        return alt.param(name=name, value=self.value, bind=bind)


def slider(field: str, label: str, values: Sequence[int | float], value: int | float | None = None) -> Control:
    """A range slider over evenly spaced ``values`` (at least one), starting at ``value`` (the first)."""
    values = tuple(_numbers(values, field))
    steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
    if len(steps) > 1 or (steps and steps.pop() <= 0):
        raise ValueError(f"a slider's values must rise in equal steps, got {list(values)[:6]}…; use choice() instead.")
    value = values[0] if value is None else value
    if value not in values:
        raise ValueError(f"the slider {field!r} starts at {value!r}, which is not one of its values.")
    return Control(field, label, "slider", values, value)


def choice(field: str, label: str, options: Sequence[Any], value: Any = None, *, kind: str = "radio") -> Control:
    """Radio buttons (or a drop-down, ``kind="select"``) over ``options``, starting at ``value`` (the first)."""
    require_choice(kind, "kind", ("radio", "select"))
    options = tuple(options)
    if not options:
        raise ValueError(f"the choice {field!r} needs at least one option.")
    value = options[0] if value is None else value
    if value not in options:
        raise ValueError(f"the choice {field!r} starts at {value!r}, which is not one of its options {options}.")
    return Control(field, label, kind, options, value)


def toggle(field: str, label: str, value: bool = True) -> Control:
    """A check box: the chart keeps the rows whose boolean ``field`` equals the box's state."""
    require_bool(value, "value", "a toggle starts checked (True) or not (False)")
    return Control(field, label, "checkbox", (False, True), value)


def _numbers(values: Sequence[int | float], what: str) -> list[float]:
    values = [v.item() if isinstance(v, torch.Tensor) else v for v in values]
    if not values or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        raise TypeError(f"{what} needs a non-empty sequence of numbers, got {values!r}.")
    return values


def _round(value: float, digits: int) -> float | None:
    """A number for the chart's data: rounded, and ``None`` (a gap) where it is not finite."""
    value = float(value)
    return round(value, digits) if math.isfinite(value) else None


def _filtered(chart: alt.Chart, controls: Sequence[Control]) -> alt.Chart:
    for control in controls:
        chart = chart.transform_filter(f"datum.{control.field} == {control.field}_control")
    return chart


def _require_description(description: object) -> str:
    """A figure's description (its alt text): a non-empty string, checked before the figure is built."""
    if not require_str(description, "description").strip():
        raise ValueError("every interactive figure needs a description: one sentence on what it shows (its alt text).")
    return description


def _with_controls(
    chart: alt.TopLevelMixin, controls: Sequence[Control], description: str, data: Mapping[str, list[dict]]
) -> alt.TopLevelMixin:
    """The finished chart: its controls, its alt text, and its tables (each stored once, used by name)."""
    _require_description(description)
    chart = chart.add_params(*(c.param() for c in controls))
    return chart.properties(description=description, datasets=dict(data))


def _whole_numbers(values: torch.Tensor, digits: int) -> str:
    """``values`` as one string of comma-separated whole units of ``10^-digits``, empty where not finite.

    A third of the bytes of JSON decimals, and one string instead of a long list, which Altair
    checks and copies at once rather than number by number (seconds for MiniLM's 512 rows).
    """
    scaled = (values.detach().double().cpu() * 10**digits).tolist()
    return ",".join(str(round(v)) if math.isfinite(v) else "" for v in scaled)


def _unflatten(
    chart: alt.Chart, field: str, digits: int, width: int | None = None, groupby: Sequence[str] = ()
) -> alt.Chart:
    """Expand the string of numbers in ``field`` (:func:`_whole_numbers`) to one row per entry: ``index``
    (from 0), ``value``, and ``row``/``column`` of a row-major matrix ``width`` entries wide; entries that
    were not finite are dropped. With several records left, ``groupby`` names the fields that tell them
    apart (each record's entries are counted from 0)."""
    chart = (
        chart.transform_calculate(**{field: f"split(datum.{field}, ',')"})
        .transform_flatten([field])
        .transform_window(index="row_number()", **({"groupby": list(groupby)} if groupby else {}))
        .transform_filter(f"datum.{field} !== ''")
        .transform_calculate(index="datum.index - 1", value=f"toNumber(datum.{field}) / {10**digits}")
    )
    if width is not None:
        chart = chart.transform_calculate(row=f"floor(datum.index / {width})", column=f"datum.index % {width}")
    return chart


def heatmap_explorer(
    frames: Mapping[Any, torch.Tensor],
    controls: Sequence[Control],
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    description: str,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    diverging: bool = False,
    domain: tuple[float, float] | None = None,
    digits: int = 2,
    size: int = 360,
) -> alt.Chart:
    """A heatmap that shows one of several matrices, chosen by the reader's controls.

    Args:
        frames: the matrices, each ``(rows, columns)``, all the same shape. With one control a key
            is that control's value; with several, a tuple of their values in the same order.
            Non-finite entries (a causal mask, say) are left blank.
        controls: what picks the frame: :func:`slider`, :func:`choice` or :func:`toggle`.
        x_labels, y_labels: names of the columns and rows (default: their indices).
        diverging: colour around zero (``DIVERGING_SCHEME``) instead of ``SEQUENTIAL_SCHEME``.
        domain: the colour scale's range, the same for every frame (default: all frames' extent,
            symmetric about zero when ``diverging``).
        digits: decimals kept in the chart's data.
        size: width and height of the heatmap, in pixels.
    """
    _require_description(description)
    if not frames:
        raise ValueError("heatmap_explorer needs at least one matrix in frames.")
    if not controls:
        raise ValueError("heatmap_explorer needs at least one control to choose a frame.")
    shape, finite, records = None, [], []
    for key, matrix in frames.items():
        matrix = require_tensor(matrix, "each frame", ndim=2).detach().double().cpu()
        if shape is not None and matrix.shape != shape:
            raise ValueError(f"every frame must have the same shape; got {tuple(shape)} and {tuple(matrix.shape)}.")
        shape = matrix.shape
        finite.append(matrix[matrix.isfinite()])
        records.append({**_frame_fields(key, controls), "v": _whole_numbers(matrix.flatten(), digits)})
    if domain is None:
        everything = torch.cat(finite)
        low, high = float(everything.min()), float(everything.max())
        domain = (-max(abs(low), abs(high)), max(abs(low), abs(high))) if diverging else (low, high)
    scale = alt.Scale(scheme=DIVERGING_SCHEME if diverging else SEQUENTIAL_SCHEME, domain=list(domain))
    chart = _unflatten(_filtered(alt.Chart(alt.Data(name="frames")), controls), "v", digits, width=shape[1])
    axes = {}
    for name, labels, count, field in (("x", x_labels, shape[1], "column"), ("y", y_labels, shape[0], "row")):
        if labels is None:
            axes[name] = (field, "ascending")
        else:
            names = json.dumps(_axis_labels(labels, count, name))
            chart = chart.transform_calculate(**{name: f"{names}[datum.{field}]"})
            axes[name] = (name, [str(label) for label in labels])
    chart = (
        chart.mark_rect(aria=False)
        .encode(
            x=alt.X(f"{axes['x'][0]}:O", sort=axes["x"][1], title=x_title, axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{axes['y'][0]}:O", sort=axes["y"][1], title=y_title),
            color=alt.Color("value:Q", scale=scale, title=value_title),
            tooltip=[
                alt.Tooltip(f"{axes['y'][0]}:O", title=y_title),
                alt.Tooltip(f"{axes['x'][0]}:O", title=x_title),
                alt.Tooltip("value:Q", title=value_title),
            ],
        )
        .properties(width=size, height=size, title=title)
    )
    return _with_controls(chart, controls, description, {"frames": records})


def _frame_fields(key: Any, controls: Sequence[Control]) -> dict[str, Any]:
    """The control values that pick one frame, by field: ``key`` is one value, or a tuple with one per control."""
    keys = key if len(controls) > 1 else (key,)
    if not isinstance(keys, tuple) or len(keys) != len(controls):
        raise ValueError(f"with {len(controls)} controls each key must be a tuple of {len(controls)} values.")
    for control, part in zip(controls, keys, strict=True):
        if part not in control.options:
            raise ValueError(f"frame key {part!r} is not an option of the control {control.field!r}.")
    return {control.field: part for control, part in zip(controls, keys, strict=True)}


def _axis_labels(labels: Sequence[str], count: int, name: str) -> list[str]:
    labels = [str(label) for label in labels]
    if len(labels) != count or len(set(labels)) != count:
        raise ValueError(f"{name}_labels must give {count} distinct names, one per index; got {len(labels)}.")
    return labels


def clock_wall(table: torch.Tensor, *, description: str, title: str = "The clock wall") -> alt.VConcatChart:
    """The sinusoidal table as a wall of clocks, with a position slider: ch. 2's picture, turning.

    Pair ``i`` of the interleaved table (columns ``2i``, ``2i + 1``: ``sin pω_i``, ``cos pω_i``) is a
    clock whose hand points to ``(sin pω_i, cos pω_i)``: up at position 0, turning clockwise. Under
    the clocks, the encoding vector of the chosen position, one bar per column. The hands are drawn
    from the same numbers as the bars.

    Args:
        table: ``(positions, d)`` interleaved sinusoidal table (``sinusoidal_encoding``), d ≤ 32.
        description: one sentence on what the figure shows (its alt text).
    """
    _require_description(description)
    table = require_float_tensor(table, "table", ndim=2).detach().double().cpu()
    positions, width = table.shape
    if width % 2 or not 2 <= width <= 32:
        raise ValueError(f"the clock wall draws 1 to 16 clocks: table needs an even width up to 32, got {width}.")
    pairs, digits = width // 2, 2
    position = slider("position", "position p", range(positions))
    rows = [{"position": p, "v": _whole_numbers(table[p], digits)} for p in range(positions)]
    vector = _unflatten(_filtered(alt.Chart(alt.Data(name="table")), [position]), "v", digits).transform_calculate(
        column="datum.index", pair="floor(datum.index / 2)", kind="datum.index % 2 ? 'cos' : 'sin'"
    )
    x = alt.X("x:Q", axis=None, scale=alt.Scale(domain=[-1.2, 3 * pairs - 1.8]))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(domain=[-1.2, 1.2]))
    hands = (
        vector.transform_pivot("kind", value="value", groupby=["pair"])
        .transform_calculate(x="3 * datum.pair", y="0", x2="3 * datum.pair + datum.sin", y2="datum.cos")
        .mark_rule(color=SCHEME_COLOURS["sinusoidal"], strokeWidth=3)
        .encode(x=x, y=y, x2="x2:Q", y2="y2:Q", tooltip=["pair:O", "sin:Q", "cos:Q"])
    )
    wall = alt.layer(
        alt.Chart(alt.sequence(0, 49 * pairs, as_="k"))  # the faces: 48-gons of radius 1, made in the browser
        .transform_calculate(
            pair="floor(datum.k / 49)",
            x="3 * floor(datum.k / 49) + sin(2 * PI * (datum.k % 49) / 48)",
            y="cos(2 * PI * (datum.k % 49) / 48)",
        )
        .mark_line(color="#767676", strokeWidth=1, aria=False)
        .encode(x=x, y=y, detail="pair:N", order="k:Q"),
        hands,
    ).properties(width=WIDTH, height=WIDTH / (1.5 * pairs) + 20, title=f"{title}: pair 0 (fastest) to {pairs - 1}")
    bars = vector.mark_bar().encode(
        x=alt.X("column:O", title="column of PE(p)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[-1, 1]), title="value"),
        color=alt.Color(
            "kind:N", scale=alt.Scale(domain=["sin", "cos"], range=[PALETTE[0], PALETTE[1]]), title="column holds"
        ),
        tooltip=["column:O", "kind:N", "value:Q"],
    )
    bars = bars.properties(width=WIDTH, height=150, title="The encoding vector PE(p)")
    return _with_controls(alt.vconcat(wall, bars), [position], description, {"table": rows})


def row_explorer(
    matrix: torch.Tensor,
    rows: Sequence[int],
    *,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
    label: str = "row",
    colour: str = SCHEME_COLOURS["learned"],
    digits: int = 2,
) -> alt.Chart:
    """One row of a matrix at a time, as a curve over its columns, the row picked with a slider.

    A rule marks the column equal to the row (a position's own place, in a similarity matrix).

    Args:
        matrix: ``(N, M)``, e.g. the cosine similarity of every pair of rows of a position table.
        rows: the rows a reader can pick, evenly spaced (keeps the chart's data small).
        label: the slider's label.
    """
    _require_description(description)
    matrix = require_tensor(matrix, "matrix", ndim=2).detach().double().cpu()
    rows = [int(r) for r in rows]
    if any(not 0 <= r < matrix.shape[0] for r in rows):
        raise ValueError(f"rows must lie in 0 … {matrix.shape[0] - 1}, got {rows[:4]}… .")
    row = slider("row", label, rows)
    records = [{"row": r, "v": _whole_numbers(matrix[r], digits)} for r in rows]
    base = _filtered(alt.Chart(alt.Data(name="rows")), [row])
    curve = (
        _unflatten(base, "v", digits)
        .mark_line(color=colour, strokeWidth=1.5)
        .encode(
            x=alt.X("index:Q", title=x_title, scale=alt.Scale(domain=[0, matrix.shape[1] - 1], nice=False)),
            y=alt.Y("value:Q", title=y_title),
            tooltip=[alt.Tooltip("index:Q", title=x_title), alt.Tooltip("value:Q", title=y_title)],
        )
    )
    mark = base.mark_rule(color="#000000", strokeDash=[4, 3]).encode(x="row:Q")
    chart = alt.layer(curve, mark).properties(width=WIDTH, height=260, title=title)
    return _with_controls(chart, [row], description, {"rows": records})


def curve_toggles(
    x: Sequence[int | float],
    curves: Mapping[str, torch.Tensor],
    *,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
    colours: Mapping[str, str] = SCHEME_COLOURS,
    rule_at: float | None = None,
    rule_label: str = "",
    digits: int = 3,
) -> alt.Chart:
    """Several curves over the same ``x``, each shown or hidden with its own check box.

    Args:
        x: ``(N,)`` positions of the points.
        curves: name → ``(N,)`` values (a ``NaN`` leaves a gap). Each name gets a check box and its
            colour from ``colours``.
        rule_at: draw a dashed vertical rule at this ``x`` (e.g. the training length), labelled ``rule_label``.
    """
    _require_description(description)
    x = _numbers(list(x), "x")
    if not curves:
        raise ValueError("curve_toggles needs at least one curve.")
    shows, shown, colour = _curve_boxes(list(curves), colours)
    records = []
    for name, values in curves.items():
        values = require_tensor(values, f"curves[{name!r}]", ndim=1).detach().double().cpu()
        if len(values) != len(x):
            raise ValueError(f"curves[{name!r}] has {len(values)} values for {len(x)} x positions.")
        records += [{"curve": name, "x": a, "y": _round(b, digits)} for a, b in zip(x, values.tolist(), strict=True)]
    lines = (
        alt.Chart(alt.Data(name="curves"))
        .transform_filter(shown)
        .mark_line(point=alt.OverlayMarkDef(size=12), strokeWidth=1.5)
        .encode(
            x=alt.X("x:Q", title=x_title, scale=alt.Scale(nice=False)),
            y=alt.Y("y:Q", title=y_title),
            color=colour,
            tooltip=[alt.Tooltip("curve:N", title="curve"), alt.Tooltip("x:Q", title=x_title), "y:Q"],
        )
    )
    layers = [lines]
    if rule_at is not None:
        rule = alt.Chart(alt.Data(values=[{"x": rule_at, "label": rule_label}]))
        layers += [
            rule.mark_rule(color="#000000", strokeDash=[4, 3]).encode(x="x:Q"),
            rule.mark_text(align="left", dx=4, dy=-4, baseline="bottom", color="#000000").encode(
                x="x:Q", y=alt.value(12), text="label:N"
            ),
        ]
    chart = alt.layer(*layers).properties(width=WIDTH, height=300, title=title)
    return _with_controls(chart, shows, description, {"curves": records})


def _curve_boxes(names: Sequence[str], colours: Mapping[str, str]) -> tuple[list[Control], str, alt.Color]:
    """A check box per curve, the filter that keeps the ticked curves' rows, and the curves' colours."""
    missing = [name for name in names if name not in colours]
    if missing:
        raise ValueError(f"no colour for {missing}; pass colours={{name: '#rrggbb', …}} for every curve.")
    shows = [toggle(f"show_{i}", name) for i, name in enumerate(names)]
    shown = " || ".join(
        f"(datum.curve == {name!r} && {box.field}_control)" for name, box in zip(names, shows, strict=True)
    )
    scale = alt.Scale(domain=list(names), range=[colours[name] for name in names])
    return shows, shown, alt.Color("curve:N", scale=scale, title=None)


def curve_explorer(
    x: Sequence[int | float],
    frames: Mapping[Any, Mapping[str, torch.Tensor]],
    controls: Sequence[Control],
    *,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
    colours: Mapping[str, str] = SCHEME_COLOURS,
    levels: Mapping[Any, Mapping[str, float]] | None = None,
    log_y: bool = False,
    y_domain: tuple[float, float] | None = None,
    digits: int = 3,
) -> alt.LayerChart:
    """A family of curves over the same ``x``, one set per frame, the frame chosen by the reader's controls.

    With several curves, each also gets a check box that shows or hides it. The y axis keeps one range
    for every frame, so that what moves when a control moves is the curves, not the axis.

    Args:
        x: ``(N,)`` positions of the points, the same for every curve.
        frames: frame key → curve name → ``(N,)`` values (``NaN`` leaves a gap). With one control a key
            is that control's value; with several, a tuple of their values in the same order (as in
            :func:`heatmap_explorer`). Every frame names the same curves, each coloured by ``colours``.
        controls: what picks the frame: :func:`slider`, :func:`choice` or :func:`toggle`.
        levels: frame key → label → height: labelled dashed horizontal lines drawn with the frame (a
            context length, a baseline), kept to six significant digits. The first, third... are
            labelled at the left, the others at the right.
        log_y: a logarithmic y axis; the data are kept as ``log10`` of the values (``digits`` decimals of
            it: a relative precision that does not depend on the size), which must then be positive.
        y_domain: the y axis range (default: the extent of every frame's curves and levels); points
            outside it are drawn at its edge.
        digits: decimals kept in the chart's data.
    """
    _require_description(description)
    x = _numbers(list(x), "x")
    if not frames:
        raise ValueError("curve_explorer needs at least one frame of curves.")
    if not controls:
        raise ValueError("curve_explorer needs at least one control to choose a frame.")
    names = list(next(iter(frames.values())))
    if not names:
        raise ValueError("each frame of curve_explorer needs at least one curve.")
    shows, shown, colour = _curve_boxes(names, colours)
    if len(names) == 1:  # nothing to tick: the one curve is always shown
        shows, shown = [], "true"
    records, extent = [], []
    for key, curves in frames.items():
        fields = _frame_fields(key, controls)
        if list(curves) != names:
            raise ValueError(f"every frame must name the same curves {names}; frame {key!r} has {list(curves)}.")
        for name, values in curves.items():
            values = require_tensor(values, f"frames[{key!r}][{name!r}]", ndim=1).detach().double().cpu()
            if len(values) != len(x):
                raise ValueError(f"frames[{key!r}][{name!r}] has {len(values)} values for {len(x)} x positions.")
            extent.append(values[values.isfinite()])
            records.append({**fields, "curve": name, "v": _whole_numbers(_stored(values, log_y), digits)})
    level_records = []
    for key, heights in (levels or {}).items():
        fields = _frame_fields(key, controls)
        for place, (label, height) in enumerate(heights.items()):
            (height,) = _numbers([height], f"levels[{key!r}][{label!r}]")
            extent.append(torch.tensor([float(height)], dtype=torch.float64))
            stored = float(f"{height:.6g}")  # six significant digits, whatever the scale
            level_records.append({**fields, "label": str(label), "y": stored, "left": place % 2 == 0})
    if y_domain is None:
        everything = torch.cat(extent)
        y_domain = (float(everything.min()), float(everything.max()))
    if log_y and min(y_domain) <= 0:
        raise ValueError("a logarithmic y axis (log_y=True) needs positive values and a positive y_domain.")
    y_scale = alt.Scale(type="log" if log_y else "linear", domain=list(y_domain), nice=False, clamp=True)
    curves = _unflatten(
        _filtered(alt.Chart(alt.Data(name="curves")), controls).transform_filter(shown), "v", digits, groupby=["curve"]
    )
    curves = curves.transform_calculate(
        x=f"{json.dumps(x)}[datum.index]", y="pow(10, datum.value)" if log_y else "datum.value"
    )
    lines = curves.mark_line(point=alt.OverlayMarkDef(size=12), strokeWidth=1.5).encode(
        x=alt.X("x:Q", title=x_title, scale=alt.Scale(nice=False)),
        y=alt.Y("y:Q", title=y_title, scale=y_scale),
        color=colour,
        detail="curve:N",
        tooltip=[
            alt.Tooltip("curve:N", title="curve"),
            alt.Tooltip("x:Q", title=x_title),
            alt.Tooltip("y:Q", title=y_title, format=",.4~r"),
        ],
    )
    layers = [lines]
    if level_records:
        rules = _filtered(alt.Chart(alt.Data(name="levels")), controls)
        layers.append(rules.mark_rule(color="#000000", strokeDash=[4, 3]).encode(y=alt.Y("y:Q", scale=y_scale)))
        for left in (True, False):
            text = rules.transform_filter(f"{'' if left else '!'}datum.left").mark_text(
                align="left" if left else "right", dx=4 if left else -4, dy=-4, baseline="bottom", color="#000000"
            )
            layers.append(text.encode(x=alt.value(0 if left else WIDTH), y=alt.Y("y:Q", scale=y_scale), text="label:N"))
    chart = alt.layer(*layers).properties(width=WIDTH, height=320, title=title)
    data = {"curves": records, "levels": level_records} if level_records else {"curves": records}
    return _with_controls(chart, [*controls, *shows], description, data)


def _stored(values: torch.Tensor, log_y: bool) -> torch.Tensor:
    """The numbers a chart keeps: the values, or their ``log10`` for a logarithmic axis (positive values only)."""
    if not log_y:
        return values
    finite = values[values.isfinite()]
    if (finite <= 0).any():
        raise ValueError(f"a logarithmic y axis (log_y=True) needs positive values, got {float(finite.min())}.")
    return values.log10()


def rope_pair_explorer(
    query: torch.Tensor,
    key: torch.Tensor,
    rotate: Any,
    *,
    positions: int,
    pairs: Sequence[int],
    description: str,
) -> alt.HConcatChart:
    """RoPE's query and key, each at its own seat, with two sliders and a choice of pair.

    Left: pair ``i`` of the rotated query (at seat ``m``) and key (at seat ``n``) as two arrows.
    Right: the full score ``R_m q · R_n k`` of every seat pair plotted against the offset ``m - n``,
    with the chosen one highlighted: all pairs with the same offset share one score.

    Args:
        query, key: ``(d,)`` vectors before rotation.
        rotate: the rotation to show, called as ``rotate(x, positions)`` with ``x`` of shape
            ``(T, d)`` and ``positions`` ``(T,)``, e.g. :func:`transformerland.encodings.apply_rotary`.
        positions: seats ``0 … positions - 1`` on each slider.
        pairs: the dimension pairs a reader can look at (indices ``0 … d/2 - 1``).
    """
    _require_description(description)
    query = require_float_tensor(query, "query", ndim=1).detach().double().cpu()
    key = require_float_tensor(key, "key", ndim=1).detach().double().cpu()
    if query.shape != key.shape or query.shape[0] % 2:
        raise ValueError(f"query and key must share one even width, got {tuple(query.shape)} and {tuple(key.shape)}.")
    positions = require_positive_int(positions, "positions")
    pairs = [int(i) for i in pairs]
    if not pairs or any(not 0 <= i < query.shape[0] // 2 for i in pairs):
        raise ValueError(f"pairs must be indices 0 … {query.shape[0] // 2 - 1}, got {pairs}.")
    seats = torch.arange(positions)
    turned = {"query": rotate(query.expand(positions, -1), seats), "key": rotate(key.expand(positions, -1), seats)}
    scores = turned["query"] @ turned["key"].T  # (m, n)
    m_control = slider("m", "query seat m", range(positions))
    n_control = slider("n", "key seat n", range(positions))
    pair_control = choice("pair", "pair i", pairs)
    arrows = [
        {"vector": name, "seat": s, "pair": i, "x": _round(v[s, 2 * i], 3), "y": _round(v[s, 2 * i + 1], 3)}
        for name, v in turned.items()
        for s in range(positions)
        for i in pairs
    ]
    grid = [
        {"m": m, "n": n, "offset": m - n, "score": _round(scores[m, n], 3)}
        for m in range(positions)
        for n in range(positions)
    ]
    limit = 1.15 * max(math.hypot(r["x"], r["y"]) for r in arrows)
    axis = alt.Scale(domain=[-limit, limit])
    colours = alt.Scale(domain=["query", "key"], range=[PALETTE[0], PALETTE[1]])
    seat_of = "datum.vector == 'query' ? m_control : n_control"
    chosen = alt.Chart(alt.Data(name="arrows")).transform_filter(
        f"datum.pair == pair_control && datum.seat == ({seat_of})"
    )
    colour = alt.Color("vector:N", scale=colours, title="vector")
    arrow_chart = (
        chosen.transform_calculate(origin="0")
        .mark_rule(strokeWidth=3)
        .encode(
            x=alt.X("origin:Q", scale=axis, title="first coordinate of the pair"),
            y=alt.Y("origin:Q", scale=axis, title="second coordinate of the pair"),
            x2="x:Q",
            y2="y:Q",
            color=colour,
        )
    )
    tips = chosen.mark_point(filled=True, size=70).encode(
        x=alt.X("x:Q", scale=axis),
        y=alt.Y("y:Q", scale=axis),
        color=colour,
        tooltip=["vector:N", "seat:Q", "x:Q", "y:Q"],
    )
    left = alt.layer(arrow_chart, tips).properties(width=260, height=260, title="One pair of q and k, turned")
    everything = alt.Chart(alt.Data(name="scores")).encode(
        x=alt.X("offset:Q", title="offset m − n"), y=alt.Y("score:Q", title="score (R_m q) · (R_n k)")
    )
    right = alt.layer(
        everything.mark_circle(color="#767676", size=14, opacity=0.6, aria=False),
        _filtered(everything, [m_control, n_control])
        .mark_point(color=PALETTE[3], size=160, strokeWidth=3)
        .encode(tooltip=["m:Q", "n:Q", "offset:Q", "score:Q"]),
        _filtered(everything, [m_control, n_control])
        .mark_text(align="left", dx=10, dy=-10, color="#000000")
        .encode(text=alt.Text("score:Q", format="+.3f")),
    ).properties(width=300, height=260, title="Every (m, n): the score follows the offset")
    controls = [m_control, n_control, pair_control]
    return _with_controls(alt.hconcat(left, right), controls, description, {"arrows": arrows, "scores": grid})


class TableSnapshots:
    """Copies of a module's position table, taken every ``every`` training steps, for a scrubbable figure.

    A forward hook on ``module`` (any module with a ``weight`` of shape ``(N, D)``, such as
    :class:`~transformerland.encodings.LearnedPositionalEmbedding`) copies the table on every
    ``every``-th forward pass made in training mode, before that step's update: ``steps[k]`` is the
    number of updates made when ``tables[k]`` was copied. Evaluation passes are not counted.
    Call :meth:`close` (or :meth:`finish`) when training is done.
    """

    def __init__(self, module: nn.Module, every: int) -> None:
        if not isinstance(module, nn.Module) or not isinstance(getattr(module, "weight", None), torch.Tensor):
            raise TypeError(f"TableSnapshots needs a module with a weight table, got {type(module).__name__}.")
        self.every = require_positive_int(every, "every")
        self.steps: list[int] = []
        self.tables: list[torch.Tensor] = []
        self._calls = 0
        self._module = module
        self._handle = module.register_forward_pre_hook(self._copy)

    def _copy(self, module: nn.Module, inputs: Any) -> None:
        if not module.training:
            return
        if self._calls % self.every == 0:
            self.steps.append(self._calls)
            self.tables.append(module.weight.detach().cpu().clone())
        self._calls += 1

    def finish(self) -> dict[int, torch.Tensor]:
        """Stop copying; return ``{step: table}``, the table after the last step included."""
        self.close()
        snapshots = dict(zip(self.steps, self.tables, strict=True))
        snapshots[self._calls] = self._module.weight.detach().cpu().clone()
        return snapshots

    def close(self) -> None:
        """Remove the hook (training goes on unobserved)."""
        self._handle.remove()
