"""The built book in a real browser: Debian's Chromium, headless, driven by
Selenium against the HTML served on localhost. Every page loads without a
console error, every image loads, every internal link (and its #fragment)
resolves, and the search page finds a known term. For readers: math is
typeset (no raw `\\(` or `$$`), nothing is requested from another host, code
inputs are folded, each study chapter shows a figure or its key findings in
the first 800 px, no page scrolls sideways at 390 px, axe-core finds no
serious or critical violation, and Lighthouse scores accessibility and best
practices at least 95. Screenshots of the top of every page at 1280 and
390 px land in book/_build/screens/.

axe-core and Lighthouse come from tests/browser/ (`npm ci`, run by `make
browser-tools`, which `make test` depends on). Lighthouse runs in
tests/e2e/test_lighthouse.py, on another xdist worker.

Each page is loaded once per window size, at 1280 px from the server and at
390 px from `make site`'s folder on disk (file://; the same files), and
everything the checks read is gathered on that load (`visits`, `at_widths`);
each check still asserts on its own share, so each can fail alone.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import pytest
import yaml
from tests import ROOT

# One worker runs the module: the page visits (module fixtures) are made once.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_browser")]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
BROWSER_TOOLS = ROOT / "tests" / "browser" / "node_modules"
DESKTOP, PHONE = (1280, 800), (390, 844)


@pytest.fixture(scope="module")
def site(request):
    """(base_url, html_dir): the built book served on 127.0.0.1: the cold
    build of a clone, or the book at $MOBITRACE_BOOK_HTML (a quicker check
    of an existing build, e.g. book/_build/html)."""
    if os.environ.get("MOBITRACE_BOOK_HTML"):
        html_dir = Path(os.environ["MOBITRACE_BOOK_HTML"]).resolve()
    else:
        clone, _ = request.getfixturevalue("built")
        html_dir = clone / "book" / "_build" / "html"
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", html_dir
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        reason = f"needs {CHROMIUM} and {CHROMEDRIVER} (Debian packages chromium, chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(reason + ": .ci/run installs them")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _pages(html_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(html_dir)) for p in html_dir.rglob("*.html")
                  if "_sources" not in p.parts and "_static" not in p.parts)


def _load(browser, url, drain=True):
    """Load url (math typeset); its console errors. drain=False keeps the
    performance log for `visits` to read."""
    browser.get(url)
    _wait_for_math(browser)
    if drain:
        browser.get_log("performance")
    return _severe(browser)


def _severe(browser) -> list[dict]:
    """The console's errors since it was last read."""
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _wait_for_math(browser):
    """Until MathJax (on pages with math) has typeset the page."""
    browser.set_script_timeout(30)
    browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const ready = () => !window.MathJax || (MathJax.startup && MathJax.startup.promise);
        const wait = () => ready() ? (window.MathJax ? MathJax.startup.promise.then(() => done(), () => done())
                                                     : done())
                                   : setTimeout(wait, 50);
        wait();
    """)


def _study_chapters(html_dir: Path) -> list[str]:
    """The chapters of the table of contents' "Studies" part (not the
    supplements nested under them: methods pages, which have no findings)."""
    toc = yaml.safe_load((html_dir.parents[1] / "_toc.yml").read_text())
    part = next(p for p in toc["parts"] if p["caption"] == "Studies")
    return [c["file"] + ".html" for c in part["chapters"]]


def _landing_and_chapters(html_dir: Path) -> list[str]:
    """The landing page, every page of the table of contents (a chapter's
    supplement, nested under it, too) and every device page."""
    toc = yaml.safe_load((html_dir.parents[1] / "_toc.yml").read_text())
    pages = [toc["root"] + ".html"] + [e["file"] + ".html" for p in toc["parts"] for c in p["chapters"]
                                       for e in (c, *c.get("sections", []))]
    # and every device's generated page (registry.Chapter.device_pages), which the chapters link to
    return pages + sorted(str(p.relative_to(html_dir)) for p in html_dir.glob("chapters/*-devices/*.html"))


@contextlib.contextmanager
def _viewport(browser, width, height):
    """The page laid out as on a screen of width x height CSS px (a phone's
    when narrow: mobile viewport, touch)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    try:
        yield
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})



# Read on each page right after its load (math typeset), for the checks below.
_FACTS = """
    const text = document.body.innerText;
    return {raw: ["\\\\(", "\\\\[", "$$"].filter(t => text.includes(t)),
            math: document.querySelectorAll(".math").length,
            typeset: document.querySelectorAll(".math mjx-container").length,
            inputs: Array.from(document.querySelectorAll('.cell_input')).filter(e => e.checkVisibility()).length,
            hrefs: Array.from(document.querySelectorAll('a[href]')).map(a => a.href)};"""
_AXE_RUN = """
    const done = arguments[arguments.length - 1];
    axe.run(document, {resultTypes: ["violations"]})
       .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
                                               first: v.nodes[0].target.join(" ")}))),
             e => done([{id: "axe-error", impact: "critical", nodes: 0, first: String(e)}]));"""


_FIRST_FIGURE_TOP = """
    const found = Array.from(document.querySelectorAll(
        ".bd-article .key-findings, .bd-article figure, .bd-article img, .bd-article .cell_output svg"))
      .filter(e => e.checkVisibility());
    return found.length ? Math.min(...found.map(e => e.getBoundingClientRect().top + window.scrollY)) : null;"""
_SIDEWAYS = """
    const root = document.documentElement, vw = root.clientWidth;
    if (root.scrollWidth <= vw) return null;
    const inScrollBox = e => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
        if (["auto", "scroll", "hidden"].includes(getComputedStyle(a).overflowX)) return true; return false; };
    const out = Array.from(document.body.querySelectorAll("*")).filter(e =>
        e.getBoundingClientRect().right > vw + 1 && !inScrollBox(e) && getComputedStyle(e).position !== "fixed");
    return {scrollWidth: root.scrollWidth, width: vw,
            widest: out.slice(-5).map(e => e.tagName.toLowerCase() + "." + e.className)};"""


def _requests(browser) -> list[str]:
    """The URLs of Chromium's performance log (drained) since it was last read."""
    return [json.loads(e["message"])["message"]["params"]["request"]["url"]
            for e in browser.get_log("performance") if '"Network.requestWillBeSent"' in e["message"]]


@pytest.fixture(scope="module")
def visits(browser, site, repo) -> dict:
    """{page: what the checks read}, from one load of each page at 1280 x
    800 px: the screenshot of its top (book/_build/screens/<page>-1280.png)
    and, on a study chapter, what _FIRST_FIGURE_TOP finds, both as a reader
    first sees it; then its console errors and every request it made (its
    images' included, made eager and fetched, see _load_every_image), the
    facts of _FACTS, then axe-core's violations (None without axe-core)."""
    axe_js = BROWSER_TOOLS / "axe-core" / "axe.min.js"
    axe = axe_js.read_text() if axe_js.exists() else None  # test_axe_... skips or fails on its own
    base, html_dir = site
    study = set(_study_chapters(html_dir))
    browser.get("about:blank")  # ends the start-up tab, whose chrome:// requests are no page's
    found = {}
    with _viewport(browser, *DESKTOP):
        for page in _pages(html_dir):
            browser.get_log("performance")  # what the previous page left
            errors = _load(browser, base + page, drain=False)
            visit = {"shot": _screenshot(browser, repo, page, DESKTOP[0]),
                     "found": browser.execute_script(_FIRST_FIGURE_TOP) if page in study else None}
            visit.update(browser.execute_script(_FACTS))
            visit["images"] = _load_every_image(browser)
            visit["console"] = errors + _severe(browser)
            visit["requests"] = _requests(browser)
            visit["axe"] = None
            if axe is not None:
                browser.execute_script(axe)
                browser.set_script_timeout(60)
                visit["axe"] = browser.execute_async_script(_AXE_RUN)
                browser.get_log("browser")  # axe's own messages are no page's errors
            found[page] = visit
    return found


def _screenshot(browser, repo: Path, page: str, width: int) -> tuple[Path, bool]:
    """The top of the page, saved in book/_build/screens/ (path, saved)."""
    screens = repo / "book" / "_build" / "screens"
    screens.mkdir(parents=True, exist_ok=True)
    shot = screens / f"{page.removesuffix('.html').replace('/', '--')}-{width}.png"
    return shot, browser.save_screenshot(str(shot))


def test_every_page_loads_without_console_errors_and_with_all_images(visits):
    pages = list(visits)
    assert "chapters/cpu-gbps.html" in pages and "chapters/claims-ledger.html" in pages
    problems = {}
    for page, visit in visits.items():
        errors = visit["console"]
        broken = [i["src"] for i in visit["images"] if not i["width"] > 0]
        if errors or broken:
            problems[page] = {"console": [e["message"] for e in errors], "broken images": broken}
    assert not problems, problems


def _load_every_image(browser) -> list[dict]:
    """Every image of the page fetched and decoded, lazy ones included:
    figures are `<img loading="lazy">` (readers fetch only what they scroll
    to), which a headless window never scrolls to, so they are switched to
    eager first. Returns [{src, width (naturalWidth), lazy}] per image."""
    browser.set_script_timeout(30)
    return browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const imgs = Array.from(document.images);
        const lazy = imgs.map(i => i.loading === "lazy");
        imgs.forEach(i => { i.loading = "eager"; });
        const settled = i => i.complete ? Promise.resolve() : new Promise(r => {
            i.addEventListener("load", r, {once: true}); i.addEventListener("error", r, {once: true}); });
        const report = () => done(imgs.map((i, n) => ({src: i.currentSrc || i.src, width: i.naturalWidth, lazy: lazy[n]})));
        Promise.race([Promise.all(imgs.map(settled)), new Promise(r => setTimeout(r, 20000))]).then(report, report);
    """)


def test_chapters_show_figures(browser, site):
    """Figures load (once fetched) and are lazy for readers: only what is
    scrolled to is fetched."""
    base, _ = site
    _load(browser, base + "chapters/cpu-gbps.html")
    figures = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure.mobitrace-figure img')).map(i => i.loading)")
    images = _load_every_image(browser)
    assert images and all(i["width"] > 0 for i in images), images
    assert figures and set(figures) == {"lazy"}, figures


def _ids(html: str) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', html))


def test_every_internal_link_resolves(visits, site):
    base, _ = site
    host = urlparse(base).netloc
    fetched: dict[str, str | None] = {}

    def fetch(url):
        if url not in fetched:
            try:
                with urllib.request.urlopen(url, timeout=10) as resp:
                    fetched[url] = resp.read().decode("utf-8", "replace")
            except (urllib.error.URLError, OSError):
                fetched[url] = None
        return fetched[url]

    broken = []
    for page, visit in visits.items():
        for href in visit["hrefs"]:
            parsed = urlparse(href)
            if parsed.scheme not in ("http", "https") or parsed.netloc != host:
                continue
            target, fragment = urldefrag(href)
            body = fetch(target)
            if body is None:
                broken.append((page, href, "no page"))
            elif fragment and target.endswith(".html") and fragment not in _ids(body):
                broken.append((page, href, f"no element with id {fragment!r}"))
    assert not broken, broken


def test_search_finds_a_known_term(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    base, _ = site
    _load(browser, base + "search.html?q=SoftIRQ")
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results ul.search li"))
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#search-results a")]
    assert any("chapters/cpu-gbps.html" in link for link in links), links


def test_reproducibility_page_shows_the_build_machine(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    base, _ = site
    assert not _load(browser, base + "reproducibility.html")
    WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#build-info table"))
    text = browser.find_element(By.ID, "build-info").text
    assert "Python" in text and "analyze_cpu_gbps" in text and "book" in text


def test_math_is_typeset_and_no_raw_tex_is_visible(visits):
    problems = {page: {k: v[k] for k in ("raw", "math", "typeset")} for page, v in visits.items()
                if v["raw"] or v["typeset"] < v["math"]}
    assert not problems, f"raw TeX visible or math not typeset: {problems}"


def test_pages_request_nothing_from_other_hosts(visits, site):
    """Chromium's performance log of every page load, MathJax's fonts and
    every image included."""
    base, _ = site
    host = urlparse(base).netloc
    foreign = {}
    for page, visit in visits.items():
        others = sorted({u for u in visit["requests"] if urlparse(u).scheme not in ("data", "blob", "about")
                         and urlparse(u).netloc != host})
        if others:
            foreign[page] = others
    assert not foreign, foreign


def test_no_code_input_is_visible_by_default(visits):
    shown = {page: v["inputs"] for page, v in visits.items() if v["inputs"]}
    assert not shown, f"visible code inputs per page: {shown}"


@pytest.fixture(scope="module")
def site_folder(site, tmp_path_factory) -> tuple[Path, list[str]]:
    """`make site`'s folder (scripts/publish.py make_site: the built book's
    files, copied) and the asset problems it reported."""
    import importlib.util

    script = ROOT / "scripts" / "publish.py"
    spec = importlib.util.spec_from_file_location("mobitrace_publish", script)
    publish = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(publish)
    _, html_dir = site
    out = tmp_path_factory.mktemp("dist")
    problems = publish.make_site(html_dir, out / "site", out / "site.tar.gz")
    return out / "site", problems


_FILE_PAGE = """return {
    sheets: Array.from(document.querySelectorAll("link[rel=stylesheet]")).filter(l => !l.sheet).map(l => l.href),
    untypeset: document.querySelectorAll(".math").length - document.querySelectorAll(".math mjx-container").length};"""


@pytest.fixture(scope="module")
def at_widths(visits, browser, site_folder, repo) -> dict:
    """{width: {page: {"shot": (png, saved), "found": ...}}}: at 1280 px
    from `visits`; at 390 x 844 px from one load of each page of `make
    site`'s folder, opened from disk (file://, no server), as a reader
    offline would: the screenshot of its top, what _SIDEWAYS finds, and
    ("offline") its console errors, stylesheets not loaded, images not
    loaded (made eager first) and math not typeset."""
    folder, _ = site_folder
    out = {DESKTOP[0]: {page: {k: v[k] for k in ("shot", "found")} for page, v in visits.items()}, PHONE[0]: {}}
    with _viewport(browser, *PHONE):
        for page in _pages(folder):
            errors = _load(browser, (folder / page).as_uri())
            seen = {"found": browser.execute_script(_SIDEWAYS), "shot": _screenshot(browser, repo, page, PHONE[0])}
            offline = browser.execute_script(_FILE_PAGE)
            offline["images"] = [i["src"] for i in _load_every_image(browser) if not i["width"] > 0]
            offline["console"] = [e["message"] for e in errors + _severe(browser)]
            seen["offline"] = offline
            out[PHONE[0]][page] = seen
    return out


def test_each_study_chapter_shows_a_figure_or_its_findings_in_the_first_800px(at_widths, site):
    _, html_dir = site
    desktop = at_widths[DESKTOP[0]]
    tops = {page: desktop.get(page, {}).get("found") for page in _study_chapters(html_dir)}
    late = {page: top for page, top in tops.items() if top is None or top >= 800}
    assert not late, f"first figure or findings block at (px from the top; None: none): {late}"


def test_no_page_scrolls_sideways_on_a_phone(at_widths):
    wide = {page: seen["found"] for page, seen in at_widths[PHONE[0]].items() if seen["found"]}
    assert not wide, wide


def test_screenshots_of_every_page_top_at_desktop_and_phone_width(at_widths, site):
    """book/_build/screens/<page>-<width>.png, to look at (every page of the
    book at 1280 px; of `make site`'s folder, the same files, at 390 px)."""
    _, html_dir = site
    for width, _ in (DESKTOP, PHONE):
        assert sorted(at_widths[width]) == _pages(html_dir)
        for seen in at_widths[width].values():
            shot, saved = seen["shot"]
            assert saved and shot.stat().st_size > 0, shot


def _tool(relative: str) -> Path:
    path = BROWSER_TOOLS / relative
    if not path.exists():
        reason = f"needs {path}: run `make browser-tools` (npm ci in tests/browser)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def _report(repo: Path, name: str, data) -> None:
    """The measured figures next to the screenshots, for the release note."""
    out = repo / "book" / "_build" / "screens" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def test_axe_finds_no_serious_or_critical_violation(visits, repo):
    _tool("axe-core/axe.min.js")
    results, bad = {}, {}
    for page, visit in visits.items():
        violations = visit["axe"]
        results[page] = {impact: sum(1 for v in violations if v["impact"] == impact)
                         for impact in ("minor", "moderate", "serious", "critical")}
        serious = [v for v in violations if v["impact"] in ("serious", "critical")]
        if serious:
            bad[page] = serious
    _report(repo, "axe.json", results)
    assert not bad, bad


def test_site_folder_works_from_file_urls(site_folder, at_widths):
    """`make site`'s folder opened from disk, no server (at 390 px, the
    phone checks' load): every page's stylesheets and images load, its math
    is typeset, its console has no error."""
    _, problems = site_folder
    assert problems == []
    broken = {page: seen["offline"] for page, seen in at_widths[PHONE[0]].items()
              if any(seen["offline"][k] for k in ("sheets", "images", "untypeset", "console"))}
    assert not broken, broken
