"""A stranger's capture can't script the published book.

A copy of the repository registers a cpu-gbps device whose every manifest
string that the book shows is a payload (<script>, an attribute breakout with
onerror, a javascript: URL, MyST role and directive syntax, matplotlib
mathtext), rebuilds (a copy of the shared cold build, so only the new
devices' stages, the chapters that summarize devices, the ledger and the
book run; the copy is test_add_device's too: the `byod` fixture of
tests/e2e/conftest.py), and opens the pages in Debian's Chromium: no
payload ran (the window flag stays unset, no element has an event-handler
attribute that came from a capture) and the text shows literally."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest
import yaml

from mobitrace.core.host_info import hostname_hash

from .conftest import run
from .test_browser import _QuietHandler, browser  # noqa: F401  (the Chromium fixture)

# One worker runs this module and test_add_device: they share the session fixture `byod`.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("byod")]

from tests import ROOT
BASE = ROOT / "data" / "raw" / "cpu-gbps" / "vm-veth-default"  # a committed capture the chapter handles
DEVICE = "payload-host"
FLAG = "__mobitrace_pwned"
PAYLOADS = {
    ("host", "hostname"): f"<script>window.{FLAG}=1</script>",
    # Starts as a spreadsheet formula too: a downloadable CSV must not run it.
    ("host", "cpu", "model"): f'=HYPERLINK("http://x")"><img src=x onerror="window.{FLAG}=2">',
    ("host", "kernel"): f"{{raw}}`html <img src=x onerror=window.{FLAG}=3>`",
    ("tools", "iperf3"): f"javascript:window.{FLAG}=4",
    ("host", "os_release", "PRETTY_NAME"): f"```{{raw}} html\n<script>window.{FLAG}=5</script>\n```",
    ("configuration", "description"): f"$\\alpha$ [x](javascript:window.{FLAG}=6) {{eval-rst}}`.. raw:: html`",
}
PAGES = ["chapters/cpu-gbps-measured.html", "chapters/cpu-gbps-measured-methods.html", "claims-ledger.html",
         "reproducibility.html", "search.html?q=payload"]


def _set(doc: dict, keys: tuple, value: str) -> None:
    for k in keys[:-1]:
        doc = doc[k]
    doc[keys[-1]] = value


def register_payload_device(work: Path, scratch: Path) -> None:
    """The payload device, made from a committed capture in `scratch` and
    registered in the copy `work` (the `byod` fixture rebuilds it)."""
    session = next(p for p in sorted(BASE.iterdir()) if p.is_dir())
    capture = scratch / DEVICE / session.name
    shutil.copytree(session, capture)
    manifest = capture / "manifest.yaml"
    doc = yaml.safe_load(manifest.read_text())
    doc["device"] = DEVICE
    for keys, value in PAYLOADS.items():
        _set(doc, keys, value)
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    run(["python", "-m", "mobitrace", "validate", str(capture)], work)
    run(["python", "-m", "mobitrace", "add-device", str(capture)], work)


@pytest.fixture(scope="module")
def payload_site(byod):
    """(base_url, html_dir, log) of the copy of the built repository rebuilt with the payload device."""
    clone, _, log = byod
    html_dir = clone / "book" / "_build" / "html"
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", html_dir, log
    server.shutdown()
    server.server_close()


def test_the_payload_device_was_built(payload_site):
    _, html_dir, log = payload_site
    assert f"ingest_analyze_cpu_gbps@{DEVICE}" in log
    page = (html_dir / "chapters" / "cpu-gbps-measured.html").read_text()
    assert DEVICE in page


@pytest.mark.parametrize("page", PAGES)
def test_no_payload_runs_in_chromium(browser, payload_site, page):  # noqa: F811
    base, _, _ = payload_site
    browser.get(base + page)
    browser.execute_script("return document.readyState")
    assert browser.execute_script(f"return typeof window.{FLAG}") == "undefined"
    handlers = browser.execute_script(
        "return Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)"
        ".filter(a => a.name.startsWith('on') && a.value.includes(arguments[0])).map(a => e.tagName + ' ' + a.name))",
        FLAG)
    assert handlers == []
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
        ".filter(h => h.trim().toLowerCase().startsWith('javascript'))")
    assert links == []


def test_the_payloads_show_literally(browser, payload_site):  # noqa: F811
    base, _, _ = payload_site
    browser.get(base + "chapters/cpu-gbps-measured-methods.html")  # the captures table, with the host metadata
    text = browser.execute_script("return document.body.innerText")
    for keys in (("host", "cpu", "model"), ("host", "kernel"), ("tools", "iperf3")):
        assert PAYLOADS[keys] in text, keys
    # A schema-1 manifest's plain host name is published as its hash, as schema 2 records it.
    assert PAYLOADS[("host", "hostname")] not in text
    assert hostname_hash(PAYLOADS[("host", "hostname")]) in text


def test_a_formula_in_a_capture_is_text_in_every_downloadable_csv(payload_site):
    _, html_dir, _ = payload_site
    formula = PAYLOADS[("host", "cpu", "model")]
    cells = [(csv.relative_to(html_dir), cell) for csv in sorted(html_dir.rglob("*.csv"))
             for row in __import__("csv").reader(csv.read_text().splitlines()) for cell in row if formula in cell]
    assert cells, "the payload reached no downloadable CSV"
    assert all(cell.startswith("'=") for _, cell in cells), cells
