"""Sphinx extension for the book: the `provenance` directive.

In a chapter (MyST Markdown, also inside notebooks):

    ```{provenance} published, modeled
    :stage: analyze_cpu_gbps

    Published points; lines through two of them (modeled).
    ```

renders one short line (the provenance kinds and a "how this was made"
toggle); folded under it, the data sources behind the stage (or the stages:
`:stage:` may name several, separated by spaces) with the md5 DVC pinned for
each in dvc.lock, the command that rebuilds it, the text and the full list of
sources and hashes. A strip identical to an earlier one on the page is shown
as its kinds and a link to that one.
All text goes through docutils nodes, so it is escaped in the HTML.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.search.en import SearchEnglish
from sphinx.util.docutils import SphinxDirective

from mobitrace.book import provenance

KINDS = ("measured", "published", "modeled")


class ProvenanceDirective(SphinxDirective):
    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {"stage": directives.unchanged_required}

    def run(self):
        kinds = [k.strip() for k in self.arguments[0].split(",") if k.strip()]
        bad = [k for k in kinds if k not in KINDS]
        if bad or not kinds:
            raise self.error(f"provenance: kinds must be among {', '.join(KINDS)}; found {self.arguments[0]!r}")
        stage = self.options.get("stage")
        if not stage:
            raise self.error("provenance: the :stage: option is required")
        lock_path = Path(self.env.app.confdir).parent / "dvc.lock"
        self.env.note_dependency(str(lock_path))
        try:
            found = {src.path: src for name in stage.split() for src in provenance.lock_sources(lock_path, name)}
        except (FileNotFoundError, KeyError) as exc:
            raise self.error(f"provenance: {exc}")

        return [provenance_line(kinds, " ".join(line.strip() for line in self.content),
                                [found[p] for p in sorted(found)], provenance.rebuild_command(stage))]


def _short_md5(md5: str) -> str:
    return md5.split(".")[0][:8]


def provenance_line(kinds: list[str], text: str, stage_sources, command: str) -> nodes.Element:
    """One short line (the kinds, and a toggle) and, folded under it, the
    data files with their short md5, the rebuild command, the description and
    every source with its full hash. Kinds come from KINDS; every other
    string goes through docutils nodes, so it is escaped."""
    box = nodes.container(classes=["provenance"])
    label = " + ".join(f'<span class="provenance-kind provenance-{k}">{k}</span>' for k in kinds if k in KINDS)
    box += nodes.raw("", f'<details><summary>{label}<span class="provenance-more"> · how this was made</span>'
                         "</summary>", format="html")
    head = nodes.paragraph(classes=["provenance-line"])
    for i, src in enumerate(stage_sources[:2]):
        if i:
            head += nodes.Text(", ")
        head += nodes.literal(text=src.path)
        head += nodes.inline(text=f" md5 {_short_md5(src.md5)}", classes=["provenance-md5"])
    if len(stage_sources) > 2:
        head += nodes.Text(f" and {len(stage_sources) - 2} more")
    if stage_sources:
        head += nodes.Text(" · ")
    head += nodes.literal(text=command)
    box += head
    details = nodes.container(classes=["provenance-details"])
    if text:
        details += nodes.paragraph(text=text)
    if stage_sources:
        listing = nodes.bullet_list(classes=["provenance-sources"])
        for src in stage_sources:
            item = nodes.paragraph()
            item += nodes.literal(text=src.path)
            detail = f" md5 {src.md5}"
            if src.nfiles:
                detail += f" ({src.nfiles:,} files)"
            item += nodes.Text(detail)
            listing += nodes.list_item("", item)
        details += listing
    rebuild = nodes.paragraph()
    rebuild += nodes.Text("Rebuild it and everything it needs: ")
    rebuild += nodes.literal(text=command)
    details += rebuild
    box += details
    box += nodes.raw("", "</details>", format="html")
    return box


def _one_strip_per_provenance(app, doctree, docname):
    """A page shows each provenance once: a strip identical to an earlier
    one on the page becomes its kinds and a link to that one."""
    first: dict[str, str] = {}
    for n, box in enumerate(list(doctree.findall(
            lambda node: isinstance(node, nodes.container) and "provenance" in node["classes"]))):
        key = "\n".join(child.astext() for child in box.children)
        if key not in first:
            first[key] = f"provenance-{n + 1}"
            box["ids"].append(first[key])
            continue
        summary = box.children[0].astext()
        kinds = [k for k in KINDS if f"provenance-{k}" in summary]
        line = nodes.paragraph(classes=["provenance-line"])
        for i, kind in enumerate(kinds):
            if i:
                line += nodes.Text(" + ")
            line += nodes.inline(text=kind, classes=["provenance-kind", f"provenance-{kind}"])
        line += nodes.Text(" · ")
        line += nodes.reference("", "same as above", refuri=f"#{first[key]}")
        box.replace_self(nodes.container("", line, classes=["provenance", "provenance-repeat"]))


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    """sphinx-thebe adds its inline config script twice under Jupyter Book 1
    (both `const THEBE_JS_URL` declarations run, and the second is a console
    SyntaxError on every page); keep the first of identical scripts."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attrs = getattr(js, "attributes", {}) or {}
        key = (str(getattr(js, "filename", js) or ""), tuple(sorted((k, str(v)) for k, v in attrs.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    # In place: the list is the builder's, which later handlers (MathJax's,
    # on pages with math) append to; a new list would lose their scripts.
    scripts[:] = unique


def _static_files_in_a_fixed_order(app, config):
    """Jupyter Book adds book/_static's stylesheets (landing.css,
    mobitrace.css: after the extensions', so these win) and scripts in the
    order the file system lists them (ext4 and tmpfs differ, and so the
    book's bytes did): sorted instead."""
    def name(entry):
        return entry if isinstance(entry, str) else entry[0]
    config.html_css_files = sorted(config.html_css_files, key=name)
    config.html_js_files = sorted(config.html_js_files, key=name)


def _only_the_mathjax_entry_point_in_use(app, exc):
    """sphinx-mathjax-offline copies all of MathJax 3 (24 MB), with each of
    its combined entry points (tex-svg.js, mml-chtml.js, ...: 14 MB); a page
    loads the one `mathjax_path` names, which fetches what else it needs
    from the folders beside it (output/svg for the SVG renderer of its menu,
    a11y and sre for the explorer): those stay, the other entry points go."""
    folder = Path(app.outdir) / "_static" / "mathjax"
    used = Path(app.config.mathjax_path).name
    if exc is None and (folder / used).is_file():
        for path in folder.glob("*.js"):
            if path.name != used:
                path.unlink()


def _no_theme_catalogs(app, exc):
    """sphinx-book-theme keeps its message catalogs (.po, .mo: 92 files) in
    its static folder, so Sphinx copies them into the site; Sphinx reads
    them from the theme's package at build time, and no page fetches them."""
    if exc is None:
        shutil.rmtree(Path(app.outdir) / "_static" / "locales", ignore_errors=True)


class SearchEnglishStemmedOnce(SearchEnglish):
    """Sphinx's English search index, its words stemmed once per build:
    Sphinx memoises the (pure Python) Porter stemmer per page, and the
    book's pages share most of their words. Same stems, same index."""

    def init(self, options) -> None:
        super().init(options)
        self.stem = functools.cache(self.stem)


def setup(app):
    app.add_directive("provenance", ProvenanceDirective)
    app.add_search_language(SearchEnglishStemmedOnce)
    app.connect("doctree-resolved", _one_strip_per_provenance)
    app.connect("config-inited", _static_files_in_a_fixed_order)
    # Early: html-page-context stops at the first handler that returns a value.
    app.connect("html-page-context", _dedupe_scripts, priority=100)
    # After sphinx-mathjax-offline's copy (at the default priority, 500).
    app.connect("build-finished", _only_the_mathjax_entry_point_in_use, priority=600)
    app.connect("build-finished", _no_theme_catalogs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
