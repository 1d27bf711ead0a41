"""Accessibility fixes to third-party markup in the book's HTML, so that
axe-core and Lighthouse find no serious violation (tests/e2e/test_browser.py).

myst-nb writes a folded cell's summary as `<summary aria-label="Toggle hidden
content">` around the visible "Show code cell source": a name that does not
contain the visible text (axe: label-content-name-mismatch). Without the
aria-label the visible text is the name.
"""

from __future__ import annotations

from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput, visit_HideCellInput

_MISMATCHED_LABEL = ' aria-label="Toggle hidden content"'


def _visit_hidden_cell(self, node):
    start = len(self.body)
    visit_HideCellInput(self, node)
    self.body[start:] = [part.replace(_MISMATCHED_LABEL, "") for part in self.body[start:]]


def setup(app):
    app.setup_extension("myst_nb")
    app.add_node(HideCodeCellNode, override=True, html=(_visit_hidden_cell, depart_HideCellInput))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
