"""The book read as a reader reads it, at 390 px (a phone) and 1280 px, in
headless Chromium (the fixtures of test_browser): the menu buttons open
their drawers, tables and captions stay on the screen, figure text is large
enough to read, study chapters stay short. Screenshots of what each check
did land in book/_build/screens/ (reading-*.png), to look at.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest

from .test_browser import (  # noqa: F401  (fixtures)
    DESKTOP,
    PHONE,
    _landing_and_chapters,
    _load,
    _load_every_image,
    _study_chapters,
    _viewport,
    browser,
    site,
)

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_phone_reading")]
WIDTHS = (DESKTOP[0], PHONE[0])
SCREEN_HEIGHT = PHONE[1]


def _shot(browser, repo: Path, name: str) -> None:
    """The screen as it is once its transitions (a drawer sliding in) end."""
    browser.execute_async_script("""const done = arguments[arguments.length - 1];
        Promise.all(document.getAnimations().map(a => a.finished)).then(() => done(), () => done());""")
    screens = repo / "book" / "_build" / "screens"
    screens.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(screens / f"reading-{name}.png"))


# What a toggle opens: the theme's drawer (a modal <dialog>) on narrow screens,
# or, for the chapter list on wide ones, the sidebar it collapses and restores.
_DRAWERS = """
    const dialog = id => document.getElementById(id);
    const sidebar = document.getElementById("pst-primary-sidebar");
    return {primary: dialog("pst-primary-sidebar-modal")?.open ?? null,
            secondary: dialog("pst-secondary-sidebar-modal")?.open ?? null,
            links: Array.from(document.querySelectorAll("dialog[open] a")).filter(a => a.checkVisibility()).length,
            collapsed: sidebar ? sidebar.classList.contains("pst-sidebar-hidden") : null};"""


def _visible_toggles(browser):
    from selenium.webdriver.common.by import By

    return [b for b in browser.find_elements(By.CSS_SELECTOR, ".primary-toggle, .secondary-toggle")
            if b.is_displayed()]


def _escape(browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    ActionChains(browser).send_keys(Keys.ESCAPE).perform()


def _tap_every_toggle(browser, repo: Path, page: str, width: int) -> tuple[bool, dict]:
    """Tap each visible menu button of the loaded page and put it back:
    (a chapter-list button is visible, {(page, n, kind): what went wrong})."""
    dead = {}
    toggles = _visible_toggles(browser)
    for n, button in enumerate(toggles):
        kind = "primary" if "primary-toggle" in button.get_attribute("class") else "secondary"
        before = browser.execute_script(_DRAWERS)
        button.click()
        opened = browser.execute_script(_DRAWERS)
        if page.endswith("cpu-gbps.html"):
            _shot(browser, repo, f"toggle-{kind}-{width}")
        if opened[kind] is True and opened["links"] > 0:
            _escape(browser)
        elif kind == "primary" and opened["collapsed"] != before["collapsed"]:
            # the second tap: the theme's tooltip now sits where the moved button is
            browser.execute_script("arguments[0].click()", button)
        else:
            dead[(page, n, kind)] = {"before": before, "after tap": opened}
            continue
        after = browser.execute_script(_DRAWERS)
        if after != before:
            dead[(page, n, kind)] = {"before": before, "open": opened, "closed": after}
    return any("primary-toggle" in b.get_attribute("class") for b in toggles), dead


@pytest.mark.parametrize("width", WIDTHS)
def test_every_visible_menu_toggle_opens_and_closes_its_drawer(reads, width):
    """Each visible ☰ / contents button, tapped, opens its drawer (with links
    in it) or collapses the chapter list, and Escape (a drawer) or a second
    tap (the sidebar) puts the page back as it was."""
    unmenued = [page for page, read in reads[width].items() if not read["menu"]]
    dead = {k: v for read in reads[width].values() for k, v in read["dead"].items()}
    assert not unmenued, f"no visible chapter-list button: {unmenued}"
    assert not dead, dead


# Each table, its box scrolled all the way right: where its caption and the
# cells of its first (key) column lie, and how wide its box is.
_TABLES = """
    const vw = document.documentElement.clientWidth;
    const column = document.querySelector(".bd-article").getBoundingClientRect();
    const out = [];
    for (const table of document.querySelectorAll(".bd-article table")) {
        if (!table.checkVisibility()) continue;
        const box = table.closest(".mobitrace-table-scroll") || table.parentElement;
        box.scrollLeft = box.scrollWidth;
        const rect = e => { const r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; };
        const keys = Array.from(table.rows).map(r => r.cells[0]).filter(Boolean).map(rect);
        out.push({caption: table.caption ? table.caption.textContent.slice(0, 60) : "(no caption)",
                  captionAt: table.caption ? rect(table.caption) : null, keys,
                  box: rect(box), scrolls: box.scrollWidth > box.clientWidth + 1,
                  hint: !!(box.previousElementSibling && box.previousElementSibling.matches(".mobitrace-scroll-hint:not([hidden])")),
                  vw, column: [Math.round(column.left), Math.round(column.right)]});
        box.scrollLeft = 0;
    }
    return out;"""


@pytest.mark.parametrize("width", WIDTHS)
def test_no_caption_or_key_column_falls_outside_the_screen(reads, width):
    """Every table's caption wraps inside the screen; scrolled all the way
    right, its first (key) column is still in view; its box stays in the text
    column; and a table wider than its box says that it scrolls."""
    outside, seen = {}, 0
    for page, read in reads[width].items():
        for table in read["tables"]:
            seen += 1
            vw, (left, right) = table["vw"], table["column"]
            problems = []
            if table["captionAt"] and not (0 <= table["captionAt"][0] and table["captionAt"][1] <= vw):
                problems.append(f"caption at {table['captionAt']}")
            if any(not (0 <= a and b <= vw) for a, b in table["keys"]):
                problems.append("key column off screen")
            if not (left - 1 <= table["box"][0] and table["box"][1] <= right + 1):
                problems.append(f"box {table['box']} outside the text column {table['column']}")
            if table["scrolls"] and not table["hint"]:
                problems.append("scrolls without saying so")
            if problems:
                outside[(page, table["caption"])] = problems
    assert seen > 50
    assert not outside, outside


_FIGURES = """
    return Array.from(document.querySelectorAll("figure.mobitrace-figure img")).filter(i => i.checkVisibility())
        .map(i => ({src: i.currentSrc, width: i.getBoundingClientRect().width, alt: i.alt.slice(0, 50)}));"""
# matplotlib draws each text (svg.fonttype "path") as a group scaled by its
# size in pt / 100; the SVG's user unit is the pt of its viewBox.
_TEXT_SCALE = re.compile(r'<g (?:style="[^"]*" )?transform="translate\([^)]*\)(?: rotate\([^)]*\))? scale\(([0-9.]+) -\1\)"')
_VIEWBOX = re.compile(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"')
MIN_TEXT_PX = {DESKTOP[0]: 11, PHONE[0]: 9}


def smallest_text_pt(svg: str) -> tuple[float, float]:
    """(size of the SVG's smallest text, width of its viewBox), both in its pt."""
    sizes = [100 * float(s) for s in _TEXT_SCALE.findall(svg)]
    assert sizes, "no text found in the SVG: has matplotlib's SVG output changed?"
    return min(sizes), float(_VIEWBOX.search(svg).group(1))


def test_smallest_text_pt_reads_matplotlib_svg_synthetic(tmp_path):
    import matplotlib.pyplot as plt

    from mobitrace.book.figures import save_svg

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("tiny", fontsize=7)
    ax.tick_params(labelsize=30)
    fig.set_layout_engine("constrained")
    fig.savefig(tmp_path / "f.svg", format="svg")
    assert smallest_text_pt((tmp_path / "f.svg").read_text())[0] == pytest.approx(7)
    save_svg(fig, tmp_path / "g.svg")  # enlarged to the book's minimum
    assert smallest_text_pt((tmp_path / "g.svg").read_text())[0] > 7


@pytest.mark.parametrize("width", WIDTHS)
def test_every_figures_smallest_text_is_readable(reads, width):
    """Each figure's smallest text, as rendered (its size in the SVG scaled
    to the width the page shows it at), is at least 9 CSS px on a phone and
    11 at 1280 px: phones get the stacked layout (<picture>)."""
    small, seen, cache = {}, 0, {}
    for page, read in reads[width].items():
        for figure in read["figures"]:
            seen += 1
            if figure["src"] not in cache:
                with urllib.request.urlopen(figure["src"], timeout=10) as resp:
                    cache[figure["src"]] = smallest_text_pt(resp.read().decode("utf-8"))
            text_pt, box_pt = cache[figure["src"]]
            rendered = text_pt * figure["width"] / box_pt
            if rendered < MIN_TEXT_PX[width]:
                small[(page, figure["src"].rsplit("/", 1)[-1])] = round(rendered, 1)
    assert seen > 20
    assert not small, f"smallest text (CSS px) below {MIN_TEXT_PX[width]}: {small}"


@pytest.fixture(scope="module")
def reads(browser, site, repo) -> dict:
    """{width: {page: what the checks read}}, from one load of each page at
    each width (x 844 px), in this order, each step leaving the page as the
    next one reads it: its tables (_TABLES), then every image loaded (made
    eager), its figures (_FIGURES) and document height, then its text with
    every <details> opened, then, scrolled back to the top, its menu buttons
    tapped (_tap_every_toggle). Screenshots of a scrolled table, a figure and
    the open drawers as each step leaves them. Each check asserts on its own
    share."""
    base, html_dir = site
    out = {}
    for width in WIDTHS:
        out[width] = {}
        with _viewport(browser, width, SCREEN_HEIGHT):
            for page in _landing_and_chapters(html_dir):
                _load(browser, base + page)
                read = {"tables": browser.execute_script(_TABLES)}
                if page.endswith("priority-boost.html"):
                    browser.execute_script("""const b = document.querySelectorAll(".mobitrace-table-scroll")[1];
                        b.scrollIntoView(); window.scrollBy(0, -80); b.scrollLeft = b.scrollWidth;""")
                    _shot(browser, repo, f"table-scrolled-{width}")
                _load_every_image(browser)
                read["figures"] = browser.execute_script(_FIGURES)
                read["height"] = browser.execute_script("return document.documentElement.scrollHeight")
                if page.endswith("transfer-tuning.html"):
                    browser.execute_script('document.querySelector("figure.mobitrace-figure").scrollIntoView()')
                    _shot(browser, repo, f"figure-{width}")
                read["text"] = browser.execute_script("""document.querySelectorAll('details').forEach(d => d.open = true);
                    return document.querySelector(".bd-article").innerText;""")
                browser.execute_script("window.scrollTo(0, 0)")
                read["menu"], read["dead"] = _tap_every_toggle(browser, repo, page, width)
                out[width][page] = read
    return out


SCREENS_PER_CHAPTER = 10


@pytest.fixture(scope="module")
def chapter_heights(reads, site) -> dict:
    """{study chapter: its document height at 390 x 844 px}, every lazy
    figure loaded (so its height counts)."""
    _, html_dir = site
    return {page: reads[PHONE[0]][page]["height"] for page in _study_chapters(html_dir) if page in reads[PHONE[0]]}


def _main_chapters() -> list:
    from mobitrace.studies import registry
    return [c.name for c in registry.chapters()]


@pytest.mark.parametrize("chapter", _main_chapters())
def test_each_study_chapter_is_at_most_ten_phone_screens(chapter_heights, chapter):
    """The main page of each study is at most 10 screens of 844 px at 390 px
    wide (methods, run conditions and per-device detail live elsewhere)."""
    page = f"chapters/{chapter}.html"
    assert page in chapter_heights, sorted(chapter_heights)
    assert chapter_heights[page] <= SCREENS_PER_CHAPTER * SCREEN_HEIGHT, \
        f"{page}: {chapter_heights[page] / SCREEN_HEIGHT:.1f} screens"


_FLOAT_NOISE = re.compile(r"\d\.\d{9,}")
_INTERNAL_NAME = re.compile(r"^[a-z][a-z0-9.]*(?:_[a-z0-9.]+)+$")


def test_tables_show_numbers_and_labels_for_people(site):
    """In every table of the built book: no float noise (19.999999999999996),
    no Python literals (True, None, [1]), no snake_case column names."""
    from bs4 import BeautifulSoup

    _, html_dir = site
    found, tables = {}, 0
    for page in _landing_and_chapters(html_dir):
        soup = BeautifulSoup((html_dir / page).read_text(encoding="utf-8"), "html.parser")
        for table in soup.select("article table"):
            tables += 1
            cells = [c.get_text(" ", strip=True) for c in table.select("td, th")]
            bad = [c for c in cells if _FLOAT_NOISE.search(c) or c in ("True", "False", "None", "nan")
                   or re.fullmatch(r"\[[\d, ]*\]", c)]
            bad += [h.get_text(strip=True) for h in table.select("thead th")
                    if _INTERNAL_NAME.match(h.get_text(strip=True))]
            if bad:
                found[(page, table.caption.get_text(strip=True)[:50] if table.caption else "")] = bad[:5]
    assert tables > 50
    assert not found, found


def _article_text(page_html: str) -> str:
    """A page's article as a reader reads it: no code, no scripts."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page_html, "html.parser")
    article = soup.select_one("article") or soup
    for tag in article.select("pre, code, script, style, .cell_input"):
        tag.decompose()
    return re.sub(r"\s+", " ", article.get_text(" ", strip=True))


# Sizes in SI (kB, MB, GB; mobitrace.core.numbers.data_size) and rates in bps:
# no binary prefixes, no "KB", no "Mbit/s" beside "Mbps".
_OTHER_UNITS = re.compile(r"\d\s?(?:KiB|MiB|GiB|TiB|KB|Kb|Mbit/s|Gbit/s|kbit/s)\b")


def test_sizes_and_rates_read_in_one_unit_system(site):
    _, html_dir = site
    found = {}
    for page in sorted(html_dir.rglob("*.html")):
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        hits = _OTHER_UNITS.findall(_article_text(page.read_text(encoding="utf-8")))
        if hits:
            found[str(page.relative_to(html_dir))] = sorted(set(hits))[:5]
    assert not found, found


def _svg_colour_names(svg: str) -> set[str]:
    """The names (COLOUR_NAMES) of the colours an SVG fills or strokes with,
    each drawn colour named by the nearest of them in CIELAB."""
    import numpy as np

    from mobitrace.book.figures import COLOUR_NAMES
    from tests.unit.test_colours import seen_with

    named = {name: seen_with(None, hexa) for name, hexa in COLOUR_NAMES.items()}
    drawn = set(re.findall(r"(?:fill|stroke)(?:=\"|:\s*)(#[0-9a-fA-F]{6})", svg)) - {"#ffffff"}
    return {min(named, key=lambda n: np.linalg.norm(named[n] - seen_with(None, c))) for c in drawn}


# A caption's colour word, and the palette names it may stand for.
_CAPTION_COLOURS = {"blue": {"blue", "sky blue"}, "sky blue": {"sky blue"}, "orange": {"orange"},
                    "green": {"green"}, "teal": {"green"}, "red": {"vermilion"}, "vermilion": {"vermilion"},
                    "purple": {"purple"}, "pink": {"pink", "purple"}, "brown": {"brown"}, "grey": {"grey"},
                    "gray": {"grey"}, "yellow": {"yellow"}, "black": {"black"}}


def test_svg_colour_names_synthetic():
    assert _svg_colour_names('<path style="fill: #de8f05"/><path stroke="#029e73"/>') == {"orange", "green"}
    assert _svg_colour_names('<path style="fill: #ff0000"/>') == {"vermilion"}


def test_captions_name_only_colours_their_figure_draws(site):
    """A caption that says "shaded orange" or "green bars" is about a figure
    that draws that colour (a palette colour named so in book/figures.py)."""
    from bs4 import BeautifulSoup

    _, html_dir = site
    wrong, named = {}, 0
    for page in _landing_and_chapters(html_dir):
        soup = BeautifulSoup((html_dir / page).read_text(encoding="utf-8"), "html.parser")
        for figure in soup.select("figure.mobitrace-figure"):
            caption, img = figure.select_one("figcaption"), figure.select_one("img")
            if caption is None or img is None:
                continue
            text = caption.get_text(" ", strip=True).lower()
            words = {w for w in _CAPTION_COLOURS if re.search(rf"\b{w}\b", text)}
            if not words:
                continue
            named += 1
            drawn = _svg_colour_names(((html_dir / page).parent / img["src"]).resolve().read_text())
            missing = sorted(w for w in words if not _CAPTION_COLOURS[w] & drawn)
            if missing:
                wrong[(page, img["src"].rsplit("/", 1)[-1])] = {"named": missing, "drawn": sorted(drawn)}
    assert named >= 2
    assert not wrong, wrong


def test_landing_counts_add_up_to_the_total_of_claims(site):
    """The landing page's per-card counts add up to each card's total, the
    cards to the total its opening sentence states, and that sentence's
    evidence and counted-apart numbers to the same total."""
    from bs4 import BeautifulSoup

    _, html_dir = site
    page = html_dir / "chapters" / "overview.html"
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    cards = 0
    for line in soup.select("p.landing-counts"):
        total = int(re.search(r"All ([\d,]+) claims", line.get_text()).group(1).replace(",", ""))
        parts = [int(re.match(r"[✓✗?–≡⊘ ]*([\d,]+)", b.get_text(strip=True)).group(1).replace(",", ""))
                 for b in line.select("span.verdict")]
        assert sum(parts) == total, line.get_text(" ", strip=True)
        cards += total
    text = _article_text(page.read_text(encoding="utf-8"))
    stated = re.search(r"Of the ([\d,]+) claims it checks, ([\d,]+) are evidence.*?The other ([\d,]+) are counted "
                       r"apart: ([\d,]+) are testbed-bound .*? and ([\d,]+) follow from the model", text)
    assert stated, text[:600]
    total, evidence, apart, bound, model = (int(g.replace(",", "")) for g in stated.groups())
    assert cards == total and evidence + apart == total and bound + model == apart
    evidence_parts = re.search(r"evidence about the paper: ([\d,]+) are reproduced .*?, ([\d,]+) are not .*?, "
                               r"([\d,]+) are inconclusive .*?, and ([\d,]+) cannot", text)
    assert evidence_parts and sum(int(g.replace(",", "")) for g in evidence_parts.groups()) == evidence


# Each badge of the claims ledger as the browser draws it.
_BADGES = """
    return Array.from(document.querySelectorAll(".bd-article span.verdict")).filter(b => b.checkVisibility())
        .map(b => { const s = getComputedStyle(b), r = b.getBoundingClientRect();
                    return {cls: Array.from(b.classList).find(c => c.startsWith("verdict-")), text: b.textContent,
                            sign: getComputedStyle(b, "::before").content, border: s.borderTopColor,
                            size: parseFloat(s.fontSize), width: r.width, inTable: !!b.closest("td")}; });"""
_RGB = re.compile(r"rgba?\((\d+), (\d+), (\d+)")
MIN_BADGE_PX = 12


@pytest.mark.parametrize("width", WIDTHS)
def test_ledger_badges_read_by_text_sign_and_colour(browser, site, repo, width):
    """On the claims ledger every claim's verdict and category is a badge
    with its text, a sign and a border colour, at 12 CSS px or more; its
    table shows each claim's interval; and the badges' colours, as drawn,
    stay apart under each colour-vision-deficiency simulation."""
    import itertools

    import numpy as np

    from tests.unit.test_colours import MACHADO_2009, MIN_DELTA_E, seen_with

    base, html_dir = site
    with _viewport(browser, width, SCREEN_HEIGHT):
        _load(browser, base + "chapters/claims-ledger.html")
        browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
        badges = browser.execute_script(_BADGES)
        cells = browser.execute_script("""return Array.from(document.querySelectorAll(".bd-article table"))
            .filter(t => Array.from(t.tHead?.rows[0]?.cells || []).some(c => c.textContent.includes("interval")))
            .map(t => Array.from(t.tBodies[0].rows).map(r => r.cells[3].textContent));""")
        browser.execute_script("""const b = document.querySelector(".bd-article table:not(.key-findings-table) td span.verdict");
            b.scrollIntoView({block: "center", inline: "center"});""")
        _shot(browser, repo, f"ledger-{width}")
    in_tables = [b for b in badges if b["inTable"]]
    from mobitrace.core import claims as cl
    # the ledger the served book was built from (html_dir is <project>/book/_build/html)
    ledger = cl.read_claims(html_dir.parents[2] / "data" / "results" / "claims.csv")
    assert len(in_tables) >= 2 * len(ledger), (len(in_tables), len(ledger))  # a verdict and a category per claim
    bad = [b for b in badges if b["size"] < MIN_BADGE_PX or b["sign"] in ("none", "normal", '""')
           or not b["text"].strip() or b["width"] > width]
    assert not bad, bad[:5]
    with_interval = int(ledger["ci_low"].notna().sum())
    shown = sum("[" in c for table in cells for c in table)
    assert shown >= with_interval > 0, (shown, with_interval)
    colours = {}
    for b in badges:
        if b["cls"] in ("verdict-evidence",):
            continue
        colours[b["cls"]] = "#%02x%02x%02x" % tuple(int(v) for v in _RGB.match(b["border"]).groups())
    assert len(colours) >= 4, colours
    for deficiency in [None, *MACHADO_2009]:
        close = [(a, b) for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2)
                 if np.linalg.norm(seen_with(deficiency, ca) - seen_with(deficiency, cb)) < MIN_DELTA_E]
        assert not close, (deficiency, close)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_float_noise_in_what_a_reader_sees(reads, width):
    """No number with 9 or more decimals (19.999999999999996) in the text a
    reader sees on any page, tables opened, at either width."""
    noisy = {page: _FLOAT_NOISE.findall(read["text"])[:3] for page, read in reads[width].items()
             if _FLOAT_NOISE.search(read["text"])}
    assert not noisy, noisy


_INTERVAL = re.compile(r"^([−\-]?[\d,]+(?:\.(\d+))?) \[([−\-]?[\d,]+(?:\.\d+)?), ([−\-]?[\d,]+(?:\.\d+)?)\]")


def _value(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def test_intervals_carry_the_digits_their_width_supports(site):
    """In every table, an interval ``2.75 [−0.05, 5.49]`` has no more
    decimals than its largest number to 3 significant figures or its width to
    1 needs (not ``2.7510 [−0.0542, 5.4947]``)."""
    from bs4 import BeautifulSoup

    from mobitrace.core.numbers import decimals_for

    _, html_dir = site
    noisy, seen = {}, 0
    for page in _landing_and_chapters(html_dir):
        soup = BeautifulSoup((html_dir / page).read_text(encoding="utf-8"), "html.parser")
        for cell in soup.select("article td"):
            m = _INTERVAL.match(cell.get_text(" ", strip=True))
            if not m:
                continue
            seen += 1
            estimate, low, high = (_value(m.group(i)) for i in (1, 3, 4))
            largest = max(abs(estimate), abs(low), abs(high))
            shown = len(m.group(2) or "")
            width = high - low - 10 ** -shown  # the narrowest width these rounded bounds allow
            allowed = max(decimals_for(largest, 3) if largest else 0, decimals_for(width, 1) if width > 0 else 0)
            if shown > allowed:
                noisy.setdefault(page, []).append(m.group(0))
    assert seen > 20
    assert not noisy, {p: v[:3] for p, v in noisy.items()}
