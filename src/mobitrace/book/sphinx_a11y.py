"""Accessibility fixes to third-party markup in the book's HTML, so that
axe-core and Lighthouse find no serious violation (tests/e2e/test_browser.py).

myst-nb writes a folded cell's summary as `<summary aria-label="Toggle hidden
content">` around the visible "Show code cell source": a name that does not
contain the visible text (axe: label-content-name-mismatch). Without the
aria-label the visible text is the name.

pydata-sphinx-theme's sidebar opens a page's sub-pages with a `<summary>`
that holds only a chevron icon: a control with no name (axe: summary-name,
serious). Each gets an aria-label naming the page whose sub-pages it shows.
"""

from __future__ import annotations

from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput, visit_HideCellInput

_MISMATCHED_LABEL = ' aria-label="Toggle hidden content"'


def _visit_hidden_cell(self, node):
    start = len(self.body)
    visit_HideCellInput(self, node)
    self.body[start:] = [part.replace(_MISMATCHED_LABEL, "") for part in self.body[start:]]


def _name_toggles(soup) -> None:
    """An aria-label on each summary without text, in the sidebar's soup."""
    for summary in soup.select("details > summary"):
        if summary.get_text(strip=True) or summary.has_attr("aria-label"):
            continue
        link = summary.parent.find_previous_sibling("a")
        summary["aria-label"] = f"Pages under {link.get_text(' ', strip=True)}" if link else "Pages under this one"


def _name_sidebar_toggles(app, pagename, templatename, context, doctree):
    generate = context.get("generate_toctree_html")
    if generate is None:
        return

    def generate_named(*args, **kwargs):
        # The arguments as the template gave them: the theme caches the tree
        # per page by them, and a changed call (kind by position) misses it.
        out = generate(*args, **kwargs)  # a BeautifulSoup, or "" for an empty tree
        if hasattr(out, "select"):
            _name_toggles(out)
        return out

    context["generate_toctree_html"] = generate_named


def setup(app):
    app.setup_extension("myst_nb")
    app.add_node(HideCodeCellNode, override=True, html=(_visit_hidden_cell, depart_HideCellInput))
    # after the theme's handler (priority 500) has put generate_toctree_html in the context
    app.connect("html-page-context", _name_sidebar_toggles, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
