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
