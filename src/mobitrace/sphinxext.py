"""Sphinx extension for the book: the `provenance` directive.

In a chapter (MyST Markdown, also inside notebooks):

    ```{provenance} published, modeled
    :stage: analyze@cpu-gbps

    Published points; lines through two of them (modeled).
    ```

renders the provenance kinds, the text, every data source behind the stage
with the hash DVC pinned for it in dvc.lock, and the command that rebuilds it.
All text goes through docutils nodes, so it is escaped in the HTML.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from . import provenance

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
            stage_sources = provenance.sources(provenance.load_lock(lock_path), stage)
        except (FileNotFoundError, KeyError) as exc:
            raise self.error(f"provenance: {exc}")

        box = nodes.container(classes=["provenance"])
        head = nodes.paragraph()
        head += nodes.strong(text="Provenance: ")
        for i, kind in enumerate(kinds):
            if i:
                head += nodes.Text(", ")
            head += nodes.inline(text=kind, classes=["provenance-kind", f"provenance-{kind}"])
        box += head
        if self.content:
            text = nodes.paragraph()
            text += nodes.Text(" ".join(line.strip() for line in self.content))
            box += text
        if stage_sources:
            listing = nodes.bullet_list(classes=["provenance-sources"])
            for src in stage_sources:
                item = nodes.paragraph()
                item += nodes.literal(text=src.path)
                detail = f" md5 {src.md5}"
                if src.nfiles:
                    detail += f" ({src.nfiles} files)"
                item += nodes.Text(detail)
                listing += nodes.list_item("", item)
            box += listing
        rebuild = nodes.paragraph()
        rebuild += nodes.Text("Rebuild: ")
        rebuild += nodes.literal(text=provenance.rebuild_command(stage))
        box += rebuild
        return [box]


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
    context["script_files"] = unique


def setup(app):
    app.add_directive("provenance", ProvenanceDirective)
    # Early: html-page-context stops at the first handler that returns a value.
    app.connect("html-page-context", _dedupe_scripts, priority=100)
    app.add_css_file("mobitrace.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
