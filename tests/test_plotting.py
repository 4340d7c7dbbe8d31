"""transformerland.plotting: one style, colour-blind-safe maps, labelled axes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
from transformerland.model import POSITION_SCHEMES
from transformerland.plotting import DIVERGING_CMAP, PALETTE, SCHEME_COLOURS, SEQUENTIAL_CMAP, heatmap, use_book_style


def test_every_scheme_has_a_palette_colour():
    assert set(SCHEME_COLOURS) == set(POSITION_SCHEMES)
    assert set(SCHEME_COLOURS.values()) <= set(PALETTE)


def test_style_uses_the_palette_and_a_modest_dpi():
    use_book_style()
    assert matplotlib.rcParams["savefig.dpi"] <= 100
    assert matplotlib.rcParams["image.cmap"] == SEQUENTIAL_CMAP


def test_heatmap_labels_axes_and_centres_diverging_maps():
    ax = heatmap(
        torch.tensor([[-1.0, 0.5], [0.2, 2.0]]), title="t", xlabel="x", ylabel="y", colorbar_label="c", diverging=True
    )
    image = ax.get_images()[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("x", "y", "t")
    assert image.get_cmap().name == DIVERGING_CMAP
    assert image.get_clim() == (-2.0, 2.0)
    plt.close(ax.figure)


def test_heatmap_rejects_non_matrices():
    with pytest.raises(ValueError, match="2-D"):
        heatmap(torch.zeros(3), title="t", xlabel="x", ylabel="y", colorbar_label="c")
