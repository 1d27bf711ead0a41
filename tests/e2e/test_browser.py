"""The built book in a real browser: Debian's Chromium, headless, driven by
Selenium against the HTML served on localhost. Every page loads without a
console error, every image loads, every internal link (and its #fragment)
resolves, and the search page finds a known term."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import pytest

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def site(built):
    """(base_url, html_dir): the built book served on 127.0.0.1."""
    clone, _ = built
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
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _pages(html_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(html_dir)) for p in html_dir.rglob("*.html")
                  if "_sources" not in p.parts and "_static" not in p.parts)


def _load(browser, url):
    browser.get(url)
    browser.execute_script("return document.readyState")
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


# Figures load lazily (loading="lazy"): a reader's browser fetches them when
# they scroll near. Here every image is made eager first, then awaited.
_LOAD_ALL_IMAGES = """
    const done = arguments[arguments.length - 1];
    const imgs = Array.from(document.images);
    imgs.forEach(i => { i.loading = "eager"; });
    Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })))
      .then(() => done(imgs.map(i => [i.src, i.naturalWidth])));
"""


def _broken_images(browser) -> list[str]:
    return [src for src, width in browser.execute_async_script(_LOAD_ALL_IMAGES) if not width > 0]


def test_every_page_loads_without_console_errors_and_with_all_images(browser, site):
    base, html_dir = site
    pages = _pages(html_dir)
    assert "chapters/cpu-gbps.html" in pages and "chapters/claims-ledger.html" in pages
    problems = {}
    for page in pages:
        errors = _load(browser, base + page)
        broken = _broken_images(browser)
        if errors or broken:
            problems[page] = {"console": [e["message"] for e in errors], "broken images": broken}
    assert not problems, problems


def test_chapters_show_figures(browser, site):
    base, _ = site
    _load(browser, base + "chapters/cpu-gbps.html")
    images = browser.execute_async_script(_LOAD_ALL_IMAGES)
    assert images and all(width > 0 for _, width in images), images


def _ids(html: str) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', html))


def test_every_internal_link_resolves(browser, site):
    base, html_dir = site
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
    for page in _pages(html_dir):
        _load(browser, base + page)
        hrefs = browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
        for href in hrefs:
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
    assert "Python" in text and "analyze@cpu-gbps" in text and "book" in text
