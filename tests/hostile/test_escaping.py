"""Capture strings are text in every output: HTML tables,
the key findings, links, provenance (MyST directive and its HTML), Markdown
that notebooks display, SVG text. Payloads: <script>, an attribute breakout
with onerror, a javascript: URL, MyST role/directive syntax, a fence."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from markdown_it import MarkdownIt  # noqa: E402

from mobitrace.book import build as book
from mobitrace.book import chapter  # noqa: E402
from mobitrace.core import claims as cl  # noqa: E402
from mobitrace.core.escape import fence, html_text, md_text, mpl_text, safe_href  # noqa: E402

PAYLOADS = [
    "<script>window.__pwned = 1</script>",
    '"><img src=x onerror="window.__pwned=1">',
    "javascript:window.__pwned=1",
    "{eval-rst}`.. raw:: html\n\n   <script>window.__pwned=1</script>`",
    "{raw}`html <b onmouseover=window.__pwned=1>x</b>`",
    "```{raw} html\n<script>window.__pwned=1</script>\n```",
    "[click](javascript:window.__pwned=1)",
    "$\\alpha$ & <b>bold</b> *em* __init__ {{ jinja }} \\ backslash",
]
BAD_TAGS = {"script", "img", "b", "iframe"}


class _Markup(HTMLParser):
    """Collects what a browser would see as markup: tags and attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in BAD_TAGS:
            self.bad.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or (name in ("href", "src") and value and value.lower().startswith("javascript")):
                self.bad.append(f"<{tag} {name}={value!r}>")


def _no_markup(out: str) -> None:
    """No tag or attribute of a payload made it into the markup (escaped text is fine)."""
    parser = _Markup()
    parser.feed(out)
    parser.close()
    assert not parser.bad, parser.bad


@pytest.mark.parametrize("payload", PAYLOADS)
def test_table_html_escapes_cells_headers_and_caption(payload):
    frame = pd.DataFrame({payload: [payload, "ok"], "n": [1.5, 2.0]})
    out = book.table_html(frame, caption=payload, csv_href=payload).data
    _no_markup(out)
    assert html.escape(payload.splitlines()[0], quote=False) in out


@pytest.mark.parametrize("payload", PAYLOADS)
def test_findings_escape_every_claim_string(payload):
    claims = cl.claims_frame([dict(
        study="cpu-gbps", claim_id="c1", claim=payload, location=payload, paper_relation="=",
        paper_value=1.0, artifact_value=1.0, unit=payload, tolerance=payload, verdict=cl.REPRODUCED,
        basis=payload, provenance="measured", section="s")])
    out = chapter.findings_html(claims, ["c1"], title=payload)
    _no_markup(out)


@pytest.mark.parametrize("href", ["javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)",
                                  "java\tscript:alert(1)", "data:text/html,<script>1</script>",
                                  "vbscript:x", "", "\x00javascript:x"])
def test_unsafe_link_targets_become_hash(href):
    assert safe_href(href) == "#"
    assert book.link("x", href) == '<a href="#">x</a>'


@pytest.mark.parametrize("href", ["../results/cpu-gbps/tables/t.csv", "claims-ledger.html#x",
                                  "https://example.org/a?b=c", "http://example.org", "#top", "a/b:c"])
def test_safe_link_targets_are_kept(href):
    assert safe_href(href) == href


@pytest.mark.parametrize("payload", PAYLOADS)
def test_md_text_renders_as_the_literal_text(payload):
    """What a notebook displays as Markdown shows the payload as text: no
    tags, links, code, math or emphasis come out of it."""
    rendered = MarkdownIt("commonmark").render(md_text(payload))
    inner = re.fullmatch(r"<p>(.*)</p>\n", rendered, re.DOTALL)
    assert inner, rendered
    assert html.unescape(inner.group(1)) == " ".join(payload.splitlines())
    _no_markup(rendered)


def test_md_text_leaves_no_myst_role_or_directive_syntax():
    out = md_text("{raw}`html <b>x</b>` ```{eval-rst}")
    assert not re.search(r"(?<!\\)[{}`]", out)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_provenance_block_keeps_the_payload_inside_its_fence(payload):
    text = f"measured on host {payload}"
    block = chapter.provenance_block(text, "analyze_x")
    mark = fence(" ".join(text.splitlines()))
    assert block.startswith(mark + "{provenance} measured\n:stage: analyze_x\n\n")
    assert block.endswith("\n" + mark)
    body = block[len(mark):-len(mark)]
    assert mark not in body  # the text can't close the block early
    assert body.count("\n") == 4  # argument, option, blank, one line of text


@pytest.mark.parametrize("payload", PAYLOADS)
def test_provenance_html_escapes_the_text(payload):
    """sphinxext builds the provenance box from docutils nodes."""
    from docutils.core import publish_from_doctree
    from docutils.utils import new_document
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser

    from mobitrace.book import provenance
    from mobitrace.book import sphinxext
    sources = [provenance.Source(path=f"data/raw/{payload}", md5="0123456789abcdef0123456789abcdef", size=1,
                                 nfiles=None)]
    node = sphinxext.provenance_line(["measured"], payload, sources, f"dvc repro {payload}")
    doc = new_document("<test>", get_default_settings(Parser))
    doc += node
    out = publish_from_doctree(doc, writer_name="html5").decode()
    body = out[out.index("<body>"):]
    body = body.replace("<details><summary>", "").replace("</summary>", "").replace("</details>", "")
    _no_markup(body)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_svg_text_is_escaped_and_not_mathtext(payload, tmp_path):
    from mobitrace.book.figures import save_svg
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label=mpl_text(payload))
    ax.set_title(mpl_text(payload))
    ax.legend()
    svg = save_svg(fig, tmp_path / "f.svg").read_text()
    plt.close(fig)
    _no_markup(svg)


def test_html_text_escapes_quotes_for_attributes():
    assert html_text('"><img src=x onerror=1>') == "&quot;&gt;&lt;img src=x onerror=1&gt;"
