import matplotlib.pyplot as plt

from mobitrace.book.figures import save_svg


def test_svg_output_is_byte_identical_across_saves_synthetic(tmp_path):
    paths = []
    for name in ("a.svg", "b.svg"):
        fig, ax = plt.subplots()
        ax.plot([0, 1, 2], [1, 3, 2], label="synthetic")
        ax.legend()
        paths.append(save_svg(fig, tmp_path / "sub" / name))
        plt.close(fig)
    first, second = (p.read_bytes() for p in paths)
    assert first == second
    assert b"<dc:date>" not in first


def test_stacked_phone_panels_keep_their_y_labels_synthetic():
    """Panels side by side that share a y axis (only the first carries its
    label) each get the label back once stacked for a phone."""
    from mobitrace.book.figures import stack_for_phones

    fig, axes = plt.subplots(2, 2, sharey="row")
    for row, name in enumerate(("throughput (Mbps)", "energy (J)")):
        for ax in axes[row]:
            ax.plot([0, 1], [row, row + 1])
        axes[row][0].set_ylabel(name)
    stack_for_phones(fig)
    assert sorted(ax.get_ylabel() for ax in axes.flat) == ["energy (J)"] * 2 + ["throughput (Mbps)"] * 2
    assert all(any(t.get_visible() and t.get_text() for t in ax.get_yticklabels()) for ax in axes.flat)
    plt.close(fig)


def test_count_axes_get_whole_ticks_synthetic():
    """An axis of counts gets ticks at whole numbers only (not 2.5 claims)."""
    from mobitrace.book.figures import whole_ticks_on_counts

    fig, ax = plt.subplots()
    ax.barh(["a", "b"], [2, 3])
    ax.set_xlabel("claims (count)")
    assert any(t % 1 for t in ax.get_xticks())  # matplotlib's default: 0.5 steps
    whole_ticks_on_counts(fig)
    assert not any(t % 1 for t in ax.get_xticks())
    plt.close(fig)


def test_text_is_drawn_with_matplotlibs_own_dejavu_whatever_the_machine_has(tmp_path):
    """A system DejaVu of another version has other glyph indices, which the
    SVG's glyph ids carry: the figures' bytes must not depend on it. Here a
    copy in another folder stands first in the font list and findfont has
    already cached it, as a rebuilt font cache left things on one machine."""
    import shutil
    from pathlib import Path

    import matplotlib
    from matplotlib import font_manager

    from mobitrace.book import figures

    bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    manager = font_manager.fontManager
    for name in ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"):
        shutil.copy(bundled / name, tmp_path / name)
        manager.addfont(str(tmp_path / name))
    copies = [f for f in manager.ttflist if Path(f.fname).parent == tmp_path]
    manager.ttflist = copies + [f for f in manager.ttflist if f not in copies]
    for weight in ("normal", "bold"):  # findfont caches the system copy
        assert Path(font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans", weight=weight))).parent \
            == tmp_path
    figures.apply_theme()
    for weight in ("normal", "bold"):
        found = Path(font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans", weight=weight)))
        assert found.parent == bundled, found


def test_heatmap_laid_out_alone_rotates_its_labels_as_a_whole_figure_draw_does_synthetic():
    import numpy as np
    import pandas as pd
    import seaborn as sns

    from mobitrace.book.figures import layout_only_draws

    def rotations(columns, per_axes):
        fig, axes = plt.subplots(1, 2, figsize=(6, 3))
        for ax in axes:
            with layout_only_draws(fig, ax if per_axes else None):
                sns.heatmap(pd.DataFrame(np.arange(3.0 * len(columns)).reshape(3, -1), columns=columns), ax=ax)
        out = [[t.get_rotation() for t in ax.get_xticklabels()] for ax in axes]
        plt.close(fig)
        return out

    crowded = [f"long label {i}" for i in range(20)]
    turned = rotations(crowded, True)
    assert turned == rotations(crowded, False) and {r for ax in turned for r in ax} == {90.0}  # they overlapped
    assert rotations(["1", "2", "4"], True) == rotations(["1", "2", "4"], False) == [[0.0] * 3] * 2


def _synthetic_figures():
    """Figures of the kinds the chapters save: a constrained grid with a
    legend outside, a tight_layout grid with a colour bar and a title, a
    seaborn heatmap, twin axes with a legend placed "best"."""
    import numpy as np
    import seaborn as sns

    def constrained():
        fig, axes = plt.subplots(2, 2, layout="constrained", sharex="col")
        for k, ax in enumerate(axes.flat):
            ax.plot(np.arange(5), np.arange(5) ** (k / 2 + 1), label=f"series {k}")
            ax.set_title(f"panel {k}")
        fig.legend(loc="outside right upper")
        return fig

    def tight():
        fig, axes = plt.subplots(1, 2)
        image = axes[0].imshow(np.arange(12.0).reshape(3, 4))
        fig.colorbar(image, ax=axes[0], label="value")
        axes[1].bar(["a", "b", "c"], [3, 1, 2])
        axes[1].set_ylabel("runs (count)")
        fig.suptitle("synthetic")
        fig.tight_layout()
        return fig

    def heatmap():
        fig, axes = plt.subplots(2, 1, squeeze=False)
        for ax in axes.flat:
            sns.heatmap(np.arange(20.0).reshape(4, 5), annot=True, cbar_kws={"label": "value"}, ax=ax)
        fig.tight_layout()
        return fig

    def twins():
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [3, 1, 2], label="left")
        ax.twinx().plot([1, 2, 3], [10, 30, 20], color="C1")
        ax.legend(loc="best")
        return fig

    return {"constrained": constrained, "tight": tight, "heatmap": heatmap, "twins": twins}


def test_saved_svg_is_the_bytes_plain_savefig_gives_synthetic(tmp_path):
    """save_svg's savefig (the layout draw before the measure answered by
    the layout engine alone) writes what plain savefig(bbox_inches="tight")
    writes, wide and stacked for phones."""
    from mobitrace.book import figures as F

    for name, make in _synthetic_figures().items():
        saved = F.save_svg(make(), tmp_path / f"{name}.svg")
        fig = make()
        F.whole_ticks_on_counts(fig)
        F.text_at_least(fig, F.WIDE_COLUMN_PX, F.WIDE_TEXT_PX)
        fig.savefig(tmp_path / "plain.svg", format="svg", metadata=F.SVG_METADATA, bbox_inches="tight",
                    pad_inches=F.TIGHT_PAD_IN)
        F.stack_for_phones(fig)
        F.text_at_least(fig, F.NARROW_COLUMN_PX, F.NARROW_TEXT_PX)
        fig.savefig(tmp_path / "plain-narrow.svg", format="svg", metadata=F.SVG_METADATA, bbox_inches="tight",
                    pad_inches=F.TIGHT_PAD_IN)
        assert "draw" not in vars(fig)
        plt.close("all")
        assert saved.read_bytes() == (tmp_path / "plain.svg").read_bytes(), name
        assert F.narrow_path(saved).read_bytes() == (tmp_path / "plain-narrow.svg").read_bytes(), name


def test_saved_width_after_the_layout_engine_is_the_width_after_a_draw_synthetic():
    """text_at_least measures a constrained figure after running its layout
    engine, not after a whole draw: the same width."""
    from mobitrace.book import figures as F

    widths = []
    for run_engine_only in (True, False):
        fig = _synthetic_figures()["constrained"]()
        F.stack_for_phones(fig)
        if not run_engine_only:
            fig.draw_without_rendering()
        widths.append(F._saved_width_px(fig))
        plt.close(fig)
    assert widths[0] == widths[1]
