"""The book read as a reader reads it, at 390 px (a phone) and 1280 px, in
headless Chromium (the fixtures of test_browser): the menu buttons open
their drawers, tables and captions stay on the screen, figure text is large
enough to read, study chapters stay short. Screenshots of what each check
did land in book/_build/screens/ (reading-*.png), to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_browser import (  # noqa: F401  (fixtures)
    DESKTOP,
    PHONE,
    _landing_and_chapters,
    _load,
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


@pytest.mark.parametrize("width", WIDTHS)
def test_every_visible_menu_toggle_opens_and_closes_its_drawer(browser, site, repo, width):
    """Each visible ☰ / contents button, tapped, opens its drawer (with links
    in it) or collapses the chapter list, and Escape (a drawer) or a second
    tap (the sidebar) puts the page back as it was."""
    base, html_dir = site
    dead, unmenued = {}, []
    with _viewport(browser, width, SCREEN_HEIGHT):
        for page in _landing_and_chapters(html_dir):
            _load(browser, base + page)
            toggles = _visible_toggles(browser)
            if not any("primary-toggle" in b.get_attribute("class") for b in toggles):
                unmenued.append(page)
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
                    button.click()
                else:
                    dead[(page, n, kind)] = {"before": before, "after tap": opened}
                    continue
                after = browser.execute_script(_DRAWERS)
                if after != before:
                    dead[(page, n, kind)] = {"before": before, "open": opened, "closed": after}
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
def test_no_caption_or_key_column_falls_outside_the_screen(browser, site, repo, width):
    """Every table's caption wraps inside the screen; scrolled all the way
    right, its first (key) column is still in view; its box stays in the text
    column; and a table wider than its box says that it scrolls."""
    base, html_dir = site
    outside, seen = {}, 0
    with _viewport(browser, width, SCREEN_HEIGHT):
        for page in _landing_and_chapters(html_dir):
            _load(browser, base + page)
            for table in browser.execute_script(_TABLES):
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
            if page.endswith("priority-boost.html"):
                browser.execute_script("""const b = document.querySelectorAll(".mobitrace-table-scroll")[1];
                    b.scrollIntoView(); window.scrollBy(0, -80); b.scrollLeft = b.scrollWidth;""")
                _shot(browser, repo, f"table-scrolled-{width}")
    assert seen > 50
    assert not outside, outside
