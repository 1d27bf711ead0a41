"""The book's figures: one theme for every chapter, and deterministic SVG
(the same data give byte-identical files).

Importing this module applies the theme (seaborn, colour-blind-safe palette,
one font and size everywhere). Chapters draw with seaborn for statistical
figures and save with `save_svg`; anything random (bootstrap intervals) takes
`mobitrace.stats.resampling.SEED`.
"""

from __future__ import annotations

import re
import textwrap
from contextlib import contextmanager, suppress
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from mobitrace.core import claims as cl  # noqa: E402

# Okabe-Ito via seaborn's "colorblind": distinguishable with every common
# colour-vision deficiency.
PALETTE = sns.color_palette("colorblind")
# Its colours by the name a caption gives them (tests/e2e/test_phone_reading.py
# checks that a caption names only colours its figure draws).
COLOUR_NAMES = {"blue": "#0173b2", "orange": "#de8f05", "green": "#029e73", "vermilion": "#d55e00",
                "purple": "#cc78bc", "brown": "#ca9161", "pink": "#fbafe4", "grey": "#949494",
                "yellow": "#ece133", "sky blue": "#56b4e9", "black": "#000000"}

# One meaning per colour across the book. Verdicts: Okabe-Ito hues, grey and
# near-black chosen so that every pair stays apart under deuteranopia,
# protanopia and tritanopia (tests/unit/test_colours.py), the badges' borders
# in book/_static/mobitrace.css; bars carry a hatch as well, so no verdict
# rests on colour alone.
VERDICT_COLORS = {cl.REPRODUCED: COLOUR_NAMES["green"], cl.NOT_REPRODUCED: COLOUR_NAMES["vermilion"],
                  cl.INCONCLUSIVE: COLOUR_NAMES["yellow"], cl.NOT_CHECKABLE: "#bdbdbd",
                  cl.FOLLOWS_FROM_MODEL: "#333333", cl.TESTBED_BOUND: COLOUR_NAMES["purple"]}
VERDICT_HATCHES = {cl.REPRODUCED: "", cl.NOT_REPRODUCED: "xx", cl.INCONCLUSIVE: "..", cl.NOT_CHECKABLE: "//",
                   cl.FOLLOWS_FROM_MODEL: "", cl.TESTBED_BOUND: "\\\\"}
# Where a value comes from, when a figure draws several sources: what this
# artifact measured, what a paper printed, what a model computed from them.
SOURCE_COLOURS = {"measured": COLOUR_NAMES["blue"], "published": COLOUR_NAMES["black"],
                  "modeled": COLOUR_NAMES["orange"]}
# The colours of any other categories (datasets, paths, series): the theme's
# cycle, without the verdicts' and the sources' meanings where it can.
SERIES = [COLOUR_NAMES[n] for n in ("blue", "orange", "sky blue", "brown", "pink", "grey")]
FIGSIZE = (7.0, 4.2)
SVG_METADATA = {"Date": None, "Creator": None}


def bundled_dejavu_only() -> None:
    """Draw text with matplotlib's own DejaVu fonts, never a system copy.
    Text is saved as paths whose ids carry the font's glyph indices, and
    another DejaVu version has other indices: which copy findfont picks
    depends on the order of the machine's font cache, so a figure's bytes
    would too."""
    from matplotlib import font_manager

    bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    manager = font_manager.fontManager
    manager.ttflist = [f for f in manager.ttflist if not f.name.startswith("DejaVu")]
    for path in sorted(bundled.glob("DejaVu*.ttf")):
        manager.addfont(str(path))


def apply_theme() -> None:
    """Set the book's figure theme (called on import)."""
    bundled_dejavu_only()
    sns.set_theme(context="notebook", style="whitegrid", palette=SERIES, font="DejaVu Sans",
                  rc={
                      "figure.figsize": FIGSIZE,
                      "axes.titlesize": 12, "axes.labelsize": 11,
                      "xtick.labelsize": 10, "ytick.labelsize": 10, "legend.fontsize": 10,
                      "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
                      # A fixed salt makes SVG element ids stable across runs.
                      "svg.hashsalt": "mobitrace", "svg.fonttype": "path",
                  })


apply_theme()


def legend_outside(ax, title: str | None = None, below: bool = False) -> None:
    """Move the axes' legend outside the data (right of it, or below it), so
    no legend covers data."""
    if below:
        sns.move_legend(ax, "upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, title=title, frameon=False)
    else:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.02, 1.0), title=title, frameon=False)


@contextmanager
def layout_only_draws(fig: "plt.Figure", ax=None):
    """Within the block, ``fig.canvas.draw()`` lays the figure out without
    rasterizing it (Figure.draw_without_rendering). seaborn's heatmap draws
    the whole figure only to measure tick labels for overlap: the sizes are
    the same, the Agg rendering of every artist drawn so far is skipped.
    With `ax`, only that Axes is laid out (its ticks and labels placed, as a
    draw places them): a heatmap measures its own labels, and a grid of them
    then costs one layout per panel, not one of every panel so far."""
    def lay_out_ax():
        ax.get_tightbbox(fig.canvas.get_renderer())
        fig.stale = False  # else seaborn draws the whole figure after all

    fig.canvas.draw = fig.draw_without_rendering if ax is None else lay_out_ax
    try:
        yield fig
    finally:
        del fig.canvas.draw


# Where the book shows a figure (CSS px, a little under the text column) and the smallest
# text a reader gets there (CSS px): a desktop's column, and a phone's (390 px
# screen), which gets its own layout (`narrow_path`, panels stacked).
WIDE_COLUMN_PX, WIDE_TEXT_PX = 640, 11
NARROW_COLUMN_PX, NARROW_TEXT_PX = 330, 9
NARROW_WIDTH_IN, NARROW_PANEL_IN = 4.2, 2.3
NARROW_LABEL_CHARS, NARROW_TICK_CHARS = 40, 22
PX_PER_IN, PT_PER_IN = 96, 72  # CSS px and SVG pt (matplotlib's user unit) per inch
TIGHT_PAD_IN = 0.1  # savefig's pad_inches with bbox_inches="tight"


def narrow_path(path: str | Path) -> Path:
    """The phone layout of the figure saved at `path`."""
    path = Path(path)
    return path.with_name(f"{path.stem}-narrow{path.suffix}")


def save_svg(fig: "plt.Figure", path: str | Path) -> Path:
    """Save `fig` as deterministic SVG at `path` (parents created), its text
    large enough to read in the book's column; then its phone layout
    (panels stacked, legends below, narrower) at narrow_path(path)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    whole_ticks_on_counts(fig)
    text_at_least(fig, WIDE_COLUMN_PX, WIDE_TEXT_PX)
    _save_tight(fig, path)
    stack_for_phones(fig)
    text_at_least(fig, NARROW_COLUMN_PX, NARROW_TEXT_PX)
    _save_tight(fig, narrow_path(path))
    return path


def _save_tight(fig, path: Path) -> None:
    """fig.savefig(bbox_inches="tight") as SVG, the same bytes at less cost.
    matplotlib's print_figure draws the figure once with drawing disabled
    (running its layout engine and laying out every artist), measures the
    tight bbox, then draws it for real. The measure lays out ticks, labels
    and legends itself, so that first draw need only run the layout engine
    as Figure.draw would: a one-shot `draw` on this figure does that
    (tests/unit/test_library_contracts.py pins the sequence)."""
    def layout_only(renderer):
        del fig.draw  # the save's real draw is the figure's own
        _lay_out(fig)
        fig.stale = False

    fig.draw = layout_only
    try:
        fig.savefig(path, format="svg", metadata=SVG_METADATA, bbox_inches="tight", pad_inches=TIGHT_PAD_IN)
    finally:
        fig.__dict__.pop("draw", None)


def _lay_out(fig) -> None:
    """Run the figure's layout engine as Figure.draw does (it lets a ValueError pass)."""
    engine = fig.get_layout_engine()
    if fig.axes and engine is not None:
        with suppress(ValueError):
            engine.execute(fig)


# An axis of counts (its label says "(count)", or counts runs, claims, files...)
COUNT_LABEL = re.compile(r"\(count\)|^(?:number of|count|runs|claims|files|repetitions)\b", re.IGNORECASE)


def whole_ticks_on_counts(fig) -> None:
    """Ticks at whole numbers on every axis that counts things (no 2.5 runs)."""
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if COUNT_LABEL.search(axis.get_label_text().strip()) and axis.get_scale() == "linear":
                axis.set_major_locator(MaxNLocator(integer=True))


def _saved_width_px(fig) -> float:
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    # Constrained layout places the axes (and "outside" legends) only when
    # the figure draws; get_tightbbox lays out ticks and titles itself, so
    # running the engine as a draw would is all the measure needs (a whole
    # draw, even without rendering, gives the same width at twice the cost).
    if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        _lay_out(fig)
    return (fig.get_tightbbox().width + 2 * TIGHT_PAD_IN) * PX_PER_IN


def text_at_least(fig, column_px: float, text_px: float, shrink: bool = False) -> None:
    """Enlarge every text of `fig` smaller than what renders at `text_px`
    CSS px once the saved SVG is scaled to fit `column_px` (it shows at its
    own size when narrower). Larger text widens the figure, so it repeats;
    with `shrink`, a figure wider than the column is first made narrower
    (its axes give up the room, the text keeps its size)."""
    import math

    from matplotlib.text import Text

    for _ in range(8):
        width = _saved_width_px(fig)
        if shrink and width > 1.02 * column_px:
            w, h = fig.get_size_inches()
            fig.set_size_inches(w * max(0.75, column_px / width), h)
            continue
        scale = min(1.0, column_px / width)
        needed = math.ceil(2 * text_px * PT_PER_IN / PX_PER_IN / scale) / 2  # pt, to the half point
        small = [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_fontsize() < needed]
        if not small:
            return
        for t in small:
            t.set_fontsize(needed)
        if fig.get_layout_engine() is None:
            with _quiet():
                fig.tight_layout()


@contextmanager
def _quiet():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def stack_for_phones(fig) -> None:
    """Lay `fig` out for a phone: its panels one under another in reading
    order (small multiples that stack), every panel with its own tick labels,
    legends below the data, NARROW_WIDTH_IN wide."""
    from matplotlib.gridspec import GridSpec, GridSpecFromSubplotSpec

    def colorbars(ax):
        return [m.colorbar.ax for m in [*ax.collections, *ax.images] if getattr(m, "colorbar", None)]

    bars = {bar for ax in fig.axes for bar in colorbars(ax)}
    panels = [ax for ax in fig.axes if ax.get_subplotspec() is not None and ax.axison and ax not in bars]
    spec = lambda ax: ax.get_subplotspec().get_topmost_subplotspec()  # noqa: E731
    # Down each column of the grid, then the next: a column is one condition's
    # panels (throughput over energy), which then stay together.
    panels.sort(key=lambda ax: (spec(ax).colspan.start, spec(ax).rowspan.start))
    columns = {spec(ax).colspan.start for ax in panels}
    for ax in panels:  # a panel whose x label its column's bottom panel carried gets its own
        if not ax.get_xlabel():
            below = [o.get_xlabel() for o in panels if spec(o).colspan.start == spec(ax).colspan.start
                     and o.get_xlabel()]
            ax.set_xlabel(below[-1] if below else "")
    for ax in panels:  # and one whose y label its row's first panel carried (shared y axes)
        if not ax.get_ylabel() and len(columns) > 1:
            beside = [o.get_ylabel() for o in panels if spec(o).rowspan.start == spec(ax).rowspan.start
                      and o.get_ylabel()]
            ax.set_ylabel(beside[0] if beside else "")
    for ax in fig.axes:
        if ax.get_subplotspec() is not None and not ax.axison and ax not in panels and ax not in bars:
            ax.set_visible(False)  # an empty cell of the grid
    rows = len({spec(ax).rowspan.start for ax in panels}) or 1
    panel = min(max(fig.get_size_inches()[1] / rows, 1.9), NARROW_PANEL_IN)
    if len(columns) > 1:
        grid = GridSpec(len(panels), 1, figure=fig)
        for k, ax in enumerate(panels):
            beside = colorbars(ax)
            if beside:  # the panel and its colour bar share the row
                cell = GridSpecFromSubplotSpec(1, 2, subplot_spec=grid[k], width_ratios=(20, 1), wspace=0.05)
                ax.set_subplotspec(cell[0])
                beside[0].set_subplotspec(cell[1])
            else:
                ax.set_subplotspec(grid[k])
            ax.tick_params(labelleft=True, labelbottom=True)
        rows = len(panels)
    for ax in fig.axes:  # long labels wrap: across, to the phone's width; upright, to a panel's height
        for label, chars in ((ax.xaxis.label, NARROW_LABEL_CHARS), (ax.title, NARROW_LABEL_CHARS),
                             (ax.yaxis.label, NARROW_TICK_CHARS)):
            if len(label.get_text()) > chars:
                label.set_text(textwrap.fill(label.get_text(), chars))
    for ax in panels:
        ticks = ax.get_yticklabels()
        if any(len(t.get_text()) > NARROW_TICK_CHARS for t in ticks):
            ax.set_yticks(ax.get_yticks(), labels=[textwrap.fill(t.get_text(), NARROW_TICK_CHARS) for t in ticks])
    for ax in fig.axes:
        if ax.get_legend() is not None and ax.get_legend().get_texts():
            sns.move_legend(ax, "upper left", bbox_to_anchor=(0.0, -0.22), ncol=1, frameon=False,
                            title=ax.get_legend().get_title().get_text() or None)
    legends = []
    for legend in list(fig.legends):
        legends.append((legend.legend_handles, [t.get_text() for t in legend.get_texts()],
                        legend.get_title().get_text() or None))
        legend.remove()
    fig.set_size_inches(NARROW_WIDTH_IN, panel * rows + 0.8)
    try:
        fig.set_layout_engine("constrained")
    except RuntimeError:  # colorbars made under another layout keep it
        with _quiet():
            fig.tight_layout()
    outside = fig.get_layout_engine() is not None and "constrained" in type(fig.get_layout_engine()).__name__.lower()
    for handles, labels, title in legends:
        fig.legend(handles, labels, title=title, loc="outside lower center" if outside else "upper center",
                   bbox_to_anchor=None if outside else (0.5, 0.0), ncol=1, frameon=False)


# Devices drawn in colour in a figure with one mark per device; the rest are
# grey. A cross-device figure stays readable (no colour repeats, a legend no
# taller than the plot) at any number of devices.
MOST_COLOURED = 8
OTHERS = "0.6"


def device_colours(devices: list[str], highlight: list[str], most: int = MOST_COLOURED) -> dict[str, object]:
    """Each device's colour: all of them in palette colours when there are at
    most `most`; otherwise the `highlight`ed ones (the devices the chapter
    names, at most `most`, in that order) in palette colours and the rest in
    grey (OTHERS)."""
    shown = devices if len(devices) <= most else [d for d in dict.fromkeys(highlight) if d in devices][:most]
    colours = dict(zip(shown, PALETTE))
    return {d: colours.get(d, OTHERS) for d in devices}


def others_label(colours: dict[str, object]) -> str | None:
    """The legend entry of the grey devices ("12 other devices"), None when all have a colour."""
    n = sum(1 for c in colours.values() if c == OTHERS)
    return None if not n else f"{n} other device{'s' if n > 1 else ''}"
