"""The verdicts' colours stay apart for readers with a colour-vision
deficiency: every pair, simulated with the matrices of Machado, Oliveira and
Fernandes (2009, "A physiologically-based model for simulation of color
vision deficiency", IEEE TVCG 15(6), severity 1.0) in linear sRGB, differs
by at least MIN_DELTA_E in CIELAB (CIE76). The badges of the book's
stylesheet use the figures' colours."""

import itertools
import re

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from mobitrace.book.chapter import VERDICT_BADGES
from mobitrace.book.figures import SOURCE_COLOURS, VERDICT_COLORS, VERDICT_HATCHES
from tests import ROOT

MACHADO_2009 = {
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}
MIN_DELTA_E = 20  # CIE76: ~2.3 is just noticeable; 20 reads as another colour at a glance
SRGB_TO_XYZ = [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]
D65 = [0.95047, 1.0, 1.08883]


def _linear(rgb):
    c = np.asarray(rgb, float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb):
    xyz = np.asarray(SRGB_TO_XYZ) @ linear_rgb / np.asarray(D65)
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def seen_with(deficiency: str | None, colour) -> np.ndarray:
    rgb = _linear(to_rgb(colour))
    if deficiency:
        rgb = np.clip(np.asarray(MACHADO_2009[deficiency]) @ rgb, 0, 1)
    return _lab(rgb)


def test_the_simulation_merges_red_and_green_for_deuteranopes_synthetic():
    """The check can fail: pure red and green, far apart for most readers,
    come close under the deuteranopia matrix."""
    normal = np.linalg.norm(seen_with(None, "#ff0000") - seen_with(None, "#00ff00"))
    deutan = np.linalg.norm(seen_with("deuteranopia", "#ff0000") - seen_with("deuteranopia", "#00ff00"))
    assert normal > 80 and deutan < normal / 2


@pytest.mark.parametrize("deficiency", [None, *MACHADO_2009])
def test_verdict_colours_stay_distinct_under_colour_vision_deficiency(deficiency):
    close = [(a, b, round(float(d), 1)) for (a, ca), (b, cb) in itertools.combinations(VERDICT_COLORS.items(), 2)
             if (d := np.linalg.norm(seen_with(deficiency, ca) - seen_with(deficiency, cb))) < MIN_DELTA_E]
    assert not close, close


def test_verdicts_are_told_apart_by_more_than_colour():
    """In figures each verdict has its own hatch, except the two plain ones,
    whose colours are the furthest apart; every badge has its text and the
    verdict colour as its border."""
    hatches = [h for h in VERDICT_HATCHES.values() if h]
    assert len(set(hatches)) == len(hatches) and set(VERDICT_HATCHES) == set(VERDICT_COLORS)
    css = (ROOT / "book" / "_static" / "mobitrace.css").read_text()
    for verdict, badge in VERDICT_BADGES.items():
        rule = re.search(rf"span\.verdict-{badge} \{{([^}}]*)\}}", css)
        assert rule and f"border-color: {VERDICT_COLORS[verdict]}" in rule.group(1), badge


def test_each_colour_has_one_meaning_across_the_book():
    """A verdict's colour is not also a source's (measured, published, modeled)."""
    verdicts = {to_rgb(c) for c in VERDICT_COLORS.values()}
    assert len(verdicts) == len(VERDICT_COLORS)
    assert not verdicts & {to_rgb(c) for c in SOURCE_COLOURS.values()}


def _contrast(colour, background) -> float:
    """WCAG 2 contrast ratio of `colour` on `background`."""
    luminance = lambda c: float(np.dot([0.2126, 0.7152, 0.0722], _linear(to_rgb(c))))  # noqa: E731
    return (luminance(background) + 0.05) / (luminance(colour) + 0.05)


def test_provenance_labels_use_the_sources_colours():
    """The provenance line's measured / published / modeled words are drawn
    in the colour the figures give that source (the nearest named palette
    colour is the same), dark enough for text on the line's grey (WCAG AA, 4.5:1)."""
    from mobitrace.book.figures import COLOUR_NAMES

    css = (ROOT / "book" / "_static" / "mobitrace.css").read_text()
    named = {n: seen_with(None, c) for n, c in COLOUR_NAMES.items()}
    nearest = lambda c: min(named, key=lambda n: np.linalg.norm(named[n] - seen_with(None, c)))  # noqa: E731
    for source, colour in SOURCE_COLOURS.items():
        text = re.search(rf"span\.provenance-{source} \{{ color: (#[0-9a-f]{{6}}); \}}", css).group(1)
        assert nearest(text) == nearest(colour), (source, text)
        background = re.search(r"div\.provenance \{[^}]*background: (#[0-9a-f]{6})", css).group(1)
        assert _contrast(text, background) >= 4.5, (source, text, background)


def test_the_figures_default_colours_leave_the_verdicts_colours_alone():
    """Categories drawn with the theme's cycle (datasets, paths) never take
    the green of "reproduced" or the vermilion of "not reproduced"."""
    import matplotlib.pyplot as plt

    import mobitrace.book.figures  # noqa: F401  (applies the theme)

    cycle = {to_rgb(c) for c in plt.rcParams["axes.prop_cycle"].by_key()["color"]}
    assert not cycle & {to_rgb(VERDICT_COLORS[v]) for v in ("reproduced", "not reproduced")}
