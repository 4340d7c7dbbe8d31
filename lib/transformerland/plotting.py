"""One look for every figure in the book: colour-blind-safe colours, labelled axes, modest PNGs."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes

from ._validation import require_bool, require_str

__all__ = ["DIVERGING_CMAP", "PALETTE", "SCHEME_COLOURS", "SEQUENTIAL_CMAP", "heatmap", "use_book_style"]

#: The Okabe–Ito palette, distinguishable with the common forms of colour blindness.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
#: Colour for each position scheme, the same in every chapter.
SCHEME_COLOURS = {
    "none": "#000000",
    "learned": "#D55E00",
    "sinusoidal": "#0072B2",
    "rope": "#009E73",
    "alibi": "#CC79A7",
}
SEQUENTIAL_CMAP = "cividis"
DIVERGING_CMAP = "PuOr_r"


def use_book_style() -> None:
    """Set Matplotlib defaults for the book and make notebooks emit compact PNG figures."""
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 3.6),
            "figure.dpi": 80,
            "savefig.dpi": 80,
            "figure.constrained_layout.use": True,
            "axes.prop_cycle": mpl.cycler(color=PALETTE),
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "font.size": 10,
            "image.cmap": SEQUENTIAL_CMAP,
        }
    )
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png")
    except ImportError:  # outside IPython there is nothing to configure
        pass


def heatmap(
    matrix: torch.Tensor,
    ax: Axes | None = None,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    colorbar_label: str,
    diverging: bool = False,
) -> Axes:
    """Draw a 2-D tensor as an image with labelled axes and a colour bar.

    ``diverging`` centres a two-sided colour map on zero (for cosines and signed values).
    """
    for name, text in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel), ("colorbar_label", colorbar_label)):
        require_str(text, name)
    diverging = require_bool(diverging, "diverging", "a two-sided colour map centred on zero")
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}.")
    try:
        values = torch.as_tensor(matrix).detach().float().cpu().numpy()
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"matrix must be a 2-D tensor or array of numbers, got {type(matrix).__name__}.") from None
    if values.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {tuple(values.shape)}.")
    ax = ax or plt.subplots()[1]
    if diverging:
        limit = float(abs(values).max()) or 1.0
        image = ax.imshow(values, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    else:
        image = ax.imshow(values, cmap=SEQUENTIAL_CMAP, aspect="auto", interpolation="nearest")
    ax.grid(False)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.figure.colorbar(image, ax=ax, label=colorbar_label)
    return ax
