"""What every chapter notebook does with its results, in one place: glue
numbers for the prose, save and show tables and figures for people, open the
chapter with its key findings, and write provenance lines (the
`{provenance}` directive of mobitrace.book.sphinxext).

A notebook makes one `ChapterOutputs(results_dir, stage)` and uses its
methods; every file it writes is deterministic (CSV with 6 significant
digits and \\n line ends, SVG through mobitrace.book.figures.save_svg).

The book copies data/results/ into the site as results/ (mobitrace.book.build.build),
so a chapter page links its full tables and figures as ../results/...
"""

from __future__ import annotations

import html
import inspect
import shutil
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pandas as pd

from mobitrace.core import claims as cl
from mobitrace.book.build import table_html
from mobitrace.core import numbers
from mobitrace.core import params
from mobitrace.core.escape import fence, md_text, safe_href
from mobitrace.core.io import csv_text, write_csv
# mobitrace.book.figures (matplotlib, seaborn; importing it sets the figure theme) is
# imported where a figure is saved or shown: every module that draws imports it
# itself before drawing, and the overview, which draws nothing, skips ~0.5-1 s.

PROVENANCE_KINDS = ("measured", "published", "modeled")
# Output metadata that marks a display for mobitrace.notebooks (moved to the
# top of the chapter: the key findings block).
KEY_FINDINGS = {"mobitrace": {"role": "key-findings"}}
# TODO(lead): set True once every chapter passes alt text and captions.
# One badge per label a claim counts under (claims.COUNTED); the two
# categories that are not evidence wear the theme's two blue-ish badges.
VERDICT_BADGES = {cl.REPRODUCED: "reproduced", cl.NOT_REPRODUCED: "not-reproduced",
                  cl.INCONCLUSIVE: "inconclusive", cl.NOT_CHECKABLE: "not-checkable",
                  cl.TESTBED_BOUND: "testbed-off", cl.FOLLOWS_FROM_MODEL: "testbed-ok"}
CATEGORY_BADGES = {cl.EVIDENCE: "evidence", cl.TESTBED_BOUND: "testbed-off", cl.FOLLOWS_FROM_MODEL: "testbed-ok"}


def badge_html(label, kind: str = "verdict") -> str:
    """A verdict (`kind` "verdict") or a claim's category ("category") as a
    badge: its text, a sign and its colour (book/_static/mobitrace.css), so
    colour is never the only cue; a missing label is an en dash."""
    from mobitrace.core.numbers import MISSING

    if label is None or (isinstance(label, float) and pd.isna(label)) or label == "":
        return MISSING
    badges = VERDICT_BADGES if kind == "verdict" else CATEGORY_BADGES
    return f'<span class="verdict verdict-{badges[label]}">{html.escape(str(label), quote=False)}</span>'


def provenance_block(text: str, stage: str) -> str:
    """The MyST source of a provenance line; its kinds are the ones `text`
    names. `text` may hold capture strings: it is the directive's plain-text
    body (mobitrace.book.sphinxext escapes it), and the fence is longer than any
    backtick run in it, so it can't end the block."""
    kinds = [k for k in PROVENANCE_KINDS if k in text.lower()]
    if not kinds:
        raise ValueError(f"provenance text names no kind of {PROVENANCE_KINDS}: {text!r}")
    text = " ".join(str(text).splitlines())  # one paragraph: no line can open or close a block
    mark = fence(text)  # longer than any backtick run in the text, which stays the directive's plain body
    return f"{mark}{{provenance}} {', '.join(kinds)}\n:stage: {stage}\n\n{text}\n{mark}"


def site_href(path: str | Path, depth: int = 1) -> str:
    """The link from a chapter page (chapters/<name>.html; `depth` 2 for a
    device page, chapters/<name>-devices/<device>.html) to a file under
    data/results/, which the book copies to results/."""
    parts = PurePosixPath(Path(path).as_posix()).parts
    if "results" not in parts:
        raise ValueError(f"not under data/results/: {path}")
    return "../" * depth + "/".join(parts[parts.index("results"):])


def section_href(chapter: str, section: str) -> str:
    """The link from the ledger to the section that derives a claim: an
    anchor of its chapter, or "<page>#<anchor>" (its methods page)."""
    page, _, anchor = section.rpartition("#")
    return f"{page or chapter}.html#{anchor}"


def paper_text(relation, value, unit: str = "") -> str:
    """A paper's stated value for people: ``< 50%``, ``~ 1.7 Gbps``, ``p < 0.0001``."""
    return numbers.claim_value(value, unit, "=" if relation is None or pd.isna(relation) else relation)


def shown_interval(claim: pd.Series, intervals: dict) -> tuple:
    """The interval shown beside a claim's value: the one its verdict was
    decided on (ci_low, ci_high) when the table carries it, else
    `intervals[claim_id]`; none when it has zero width (every resample
    agreed: not an interval)."""
    low, high = (claim["ci_low"], claim["ci_high"]) if "ci_low" in claim.index else (None, None)
    if low is None or pd.isna(low):
        low, high = intervals.get(claim.name, (None, None))
    if low is None or high is None or pd.isna(low) or pd.isna(high) or float(low) == float(high):
        return None, None
    return low, high


def findings_html(claims: pd.DataFrame, headline: list[str], intervals: dict | None = None,
                  title: str = "Key findings") -> str:
    """The key-findings block: for each headline claim (ids in `headline`, in
    that order) the claim, the paper's value, ours with its interval
    (`intervals[claim_id] = (low, high)`) and the verdict as a badge; then the
    chapter's verdict counts. Every string is escaped. Each interval's level
    is its claim's (the study's alpha, or 2 alpha for an equivalence test):
    the claims table's tolerance names it."""
    intervals = intervals or {}
    by_id = claims.set_index("claim_id")
    missing = [c for c in headline if c not in by_id.index]
    if missing:
        raise KeyError(f"headline claims not in the claims table: {missing}")
    esc = lambda x: html.escape(str(x), quote=False)  # noqa: E731
    rows = []
    for claim_id in headline:
        c = by_id.loc[claim_id]
        low, high = shown_interval(c, intervals)
        ours = numbers.claim_value(c["artifact_value"], c["unit"], low=low, high=high)
        label = c["verdict"] if c.get("category", cl.EVIDENCE) == cl.EVIDENCE else c["category"]
        badge = VERDICT_BADGES[label]
        rows.append(
            f'<tr><th scope="row">{esc(c["claim"])}</th>'
            f'<td class="num" data-label="Paper">{esc(paper_text(c["paper_relation"], c["paper_value"], c["unit"]))}</td>'
            f'<td class="num" data-label="Ours">{esc(ours)}</td>'
            f'<td data-label="Verdict"><span class="verdict verdict-{badge}">{esc(label)}</span></td></tr>')
    counts = cl.verdict_counts(claims)
    tally = ", ".join(f'<span class="verdict verdict-{VERDICT_BADGES[v]}">{counts[v]} {esc(v)}</span>'
                      for v in cl.shown_verdicts(counts))
    return "\n".join([
        '<div class="key-findings">',
        f'<p class="key-findings-title"><strong>{esc(title)}</strong> · all {len(claims)} claims: {tally}</p>',
        '<div class="mobitrace-table-scroll" role="region" tabindex="0" aria-label="Key findings">',
        '<table class="mobitrace-table key-findings-table">',
        '<thead><tr><th scope="col">Claim</th><th scope="col" class="num">Paper</th>'
        '<th scope="col" class="num">This artifact [CI]</th><th scope="col">Verdict</th></tr></thead>',
        "<tbody>", *rows, "</tbody></table></div>",
        '<p class="key-findings-more">Every claim, with its tolerance and basis, is in the claims table at the'
        ' end of this chapter and in the <a href="claims-ledger.html">claims ledger</a>.</p>',
        "</div>",
    ])


KEY_FINDINGS_COLUMNS = ["claim_id", "claim", "paper_relation", "paper_value", "unit", "artifact_value",
                        "artifact_low", "artifact_high", "verdict", "category"]


def key_findings_frame(claims: pd.DataFrame, headline: list[str], intervals: dict | None = None) -> pd.DataFrame:
    """The headline claims (ids in `headline`, in that order) with the
    interval of the artifact's value (`intervals[claim_id] = (low, high)`;
    missing bounds stay empty): the rows of the key-findings block, as data."""
    intervals = intervals or {}
    by_id = claims.set_index("claim_id")
    missing = [c for c in headline if c not in by_id.index]
    if missing:
        raise KeyError(f"headline claims not in the claims table: {missing}")
    frame = by_id.loc[list(headline)].reset_index()
    if "category" not in frame:
        frame["category"] = cl.EVIDENCE
    bounds = [shown_interval(by_id.loc[c], intervals) for c in headline]
    frame["artifact_low"] = pd.array([lo for lo, _ in bounds], dtype="Float64")
    frame["artifact_high"] = pd.array([hi for _, hi in bounds], dtype="Float64")
    return frame[KEY_FINDINGS_COLUMNS]


def figure_html(path: Path, name: str, alt: str, caption: str, folded: str | None = None, depth: int = 1) -> str:
    """A figure for every screen: its phone layout (mobitrace.book.figures.
    narrow_path) below 600 px, a tap opens the full-size SVG; folded under
    the summary `folded` if given (a replicate of a figure shown above);
    `depth`: the page's folder depth under book/. Escaped."""
    from mobitrace.book.figures import narrow_path

    wide, narrow = (html.escape(safe_href(site_href(p, depth))) for p in (path, narrow_path(path)))
    shown = (f'<figure class="mobitrace-figure" id="fig-{html.escape(name)}">\n'
             f'<a class="mobitrace-figure-full" href="{wide}" title="Open the figure full size">'
             f'<picture><source media="(max-width: 600px)" srcset="{narrow}">'
             f'<img src="{wide}" alt="{html.escape(alt)}" loading="lazy"></picture></a>\n'
             f"<figcaption>{html.escape(caption, quote=False)}</figcaption>\n</figure>")
    if folded:
        return (f'<details class="mobitrace-figure-fold"><summary>{html.escape(folded, quote=False)}</summary>\n'
                f"{shown}\n</details>")
    return shown


class ChapterOutputs:
    """Tables go to <results_dir>/tables, figures to <results_dir>/figures;
    provenance lines name `stage` (the dvc.yaml stage that runs the notebook)."""

    draws_figures = True

    def __init__(self, results_dir: str | Path, stage: str, device_stage: Callable[[str], str] | None = None):
        self.results_dir = Path(results_dir)
        self.tables_dir = self.results_dir / "tables"
        self.figures_dir = self.results_dir / "figures"
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        self.stage = stage
        # The stage that runs for one device alone (registry.Study.device_sources_stage),
        # given by the study's chapter: the book knows no study.
        self.device_stage = device_stage

    @staticmethod
    def put(name: str, value) -> None:
        """Glue a value for the prose (plain Python types format cleanly)."""
        from myst_nb import glue
        glue(name, value.item() if hasattr(value, "item") else value, display=False)

    @staticmethod
    def put_text(name: str, text: str) -> None:
        """Glue a word or phrase for the prose (a direction word computed from
        data, a formatted number): shown as plain text, escaped."""
        from myst_nb import glue
        glue(name, str(text), display=False)

    @classmethod
    def put_counts(cls, counts: dict[str, int]) -> None:
        """Glue a chapter's tally (claims.verdict_counts): n_<label> for each
        label and claims_tally, the tally in words."""
        cls.put_all(cl.keyed(counts, "n_"))
        cls.put_text("claims_tally", cl.tally_text(counts))

    @classmethod
    def put_all(cls, values: dict) -> None:
        """Glue every (name, value) in order: a str as text (put_text), any
        other value as a number (put)."""
        for name, value in values.items():
            (cls.put_text if isinstance(value, str) else cls.put)(name, value)

    def save_table(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        """Write `frame` to tables/<name>.csv and return it."""
        write_csv(frame, self.tables_dir / f"{name}.csv")
        return frame

    def href(self, name: str) -> str:
        """The chapter page's link to tables/<name>.csv in the site."""
        return site_href(self.tables_dir / f"{name}.csv")

    def table(self, frame: pd.DataFrame, name: str, caption: str, shown: pd.DataFrame | None = None,
              index: bool = False, digits: int = 3) -> pd.DataFrame:
        """Save `frame` as tables/<name>.csv and show it for people (`shown`,
        if given, is the display version: renamed columns with units, intervals
        joined by mobitrace.book.build.with_interval); long tables collapse with the
        CSV one click away. Returns `frame`."""
        self.save_table(frame, name)
        self.show(frame if shown is None else shown, caption, digits=digits, index=index,
                  csv_href=self.href(name))
        return frame

    def show(self, frame: pd.DataFrame, caption: str, digits: int = 3, index: bool = False,
             csv_href: str | None = None, html_columns: tuple[str, ...] = ()) -> None:
        """Display `frame` as a table for people (mobitrace.book.build.table_html).
        The chapter's own claims table (its CSV is this chapter's claims.csv)
        is folded, one click away: the key findings open the chapter with its
        headline claims, and the claims ledger lists every claim."""
        from IPython.display import display
        folded = csv_href is not None and csv_href == site_href(self.results_dir / "claims.csv")
        display(table_html(frame, caption=caption, digits=digits, index=index, csv_href=csv_href,
                           html_columns=html_columns, folded=folded))

    def superseded(self, superseded: dict | None, raw_dir: str) -> None:
        """The capture sessions kept in data/raw but left out of the analysis
        (params.yaml `superseded`: {"<device>/<session>": why}), as a table;
        nothing when there are none."""
        if not superseded:
            return
        rows = pd.DataFrame([{"session": key, "why superseded": why} for key, why in superseded.items()])
        self.table(rows, "superseded", "Capture sessions kept in data/raw but not analyzed (params.yaml superseded)")
        self.provenance(f"measured sessions named in params.yaml (superseded); their raw files stay in {raw_dir}.")

    def provenance(self, text: str, stage: str | None = None) -> None:
        """Display a provenance line for `text` (it must name its kind)."""
        from IPython.display import Markdown, display
        display(Markdown(provenance_block(text, stage or self.stage)))

    def device_provenance(self, text: str, device: str, published: bool = False) -> None:
        """A provenance line for one device's figure or table: its sources
        are that device's capture (and, if `published`, the study's published
        numbers), not every device's, so a chapter's boxes grow linearly with
        its devices, not with their square."""
        if self.device_stage is None:
            raise TypeError("device_provenance needs the ChapterOutputs' device_stage")
        self.provenance(text, " ".join([self.device_stage(device), *(["ingest_published"] if published else [])]))

    def figure(self, fig, name: str, alt: str, caption: str, folded: str | None = None) -> None:
        """Save `fig` as figures/<name>.svg, close it and show it with its alt
        text (what the figure shows, for screen readers) and its caption (what
        to look at). Returns nothing, so a cell that ends with it shows only
        the figure. `fig` may be a function that draws it: a supplement, which
        shows its chapter's file, then does not draw it (seaborn's bootstraps
        are most of a chapter's time). `fig` may also be the Path of an SVG an
        earlier stage saved (one of this stage's dependencies): it is copied,
        not drawn again. `folded`: the summary under which a replicate of a
        figure shown above (another device's) is folded."""
        import matplotlib.pyplot as plt
        from IPython.display import HTML, display
        if not alt or not caption:
            raise ValueError(f"figure {name!r}: alt text and caption are required")
        if isinstance(fig, Path):
            path = self._copy_svg(fig, name)
        else:
            if callable(fig):
                fig = fig() if self.draws_figures else None
            path = self._save_svg(fig, name)
            if fig is not None:
                plt.close(fig)
        display(HTML(figure_html(path, name, alt, caption, folded)))

    def _save_svg(self, fig, name: str) -> Path:
        from mobitrace.book.figures import save_svg

        return save_svg(fig, self.figures_dir / f"{name}.svg")

    def _copy_svg(self, source: Path, name: str) -> Path:
        from mobitrace.book.figures import narrow_path

        path = self.figures_dir / f"{name}.svg"
        shutil.copyfile(source, path)
        shutil.copyfile(narrow_path(source), narrow_path(path))
        return path

    def findings(self, claims: pd.DataFrame, headline: list[str], intervals: dict | None = None) -> None:
        """Show the key-findings block (mobitrace.notebooks moves it to the top
        of the chapter, right under the title) and save its rows as
        tables/key_findings.csv (KEY_FINDINGS_COLUMNS, in headline order), the
        data of the book's landing page."""
        from IPython.display import HTML, display
        block = findings_html(claims, headline, intervals)
        self.save_table(key_findings_frame(claims, headline, intervals), "key_findings")
        display(HTML(block), metadata=KEY_FINDINGS)


class ShownOutputs(ChapterOutputs):
    """The outputs of a chapter's supplement (registry.Chapter.supplement_to):
    the same calls as its chapter's, which alone writes `results_dir`; these
    show its tables and figures and link its files, and write nothing. A
    table that differs from the file its chapter wrote, or a figure the
    chapter did not save, is an error: the page would show one thing and link
    another."""

    draws_figures = False

    def __init__(self, results_dir: str | Path, stage: str, device_stage: Callable[[str], str] | None = None):
        self.results_dir = Path(results_dir)
        self.tables_dir = self.results_dir / "tables"
        self.figures_dir = self.results_dir / "figures"
        self.stage, self.device_stage = stage, device_stage

    def save_table(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        path = self.tables_dir / f"{name}.csv"
        text = csv_text(frame)
        if not path.is_file() or path.read_text() != text:
            raise ValueError(f"{path}: its chapter wrote {'another table' if path.is_file() else 'no such table'}")
        return frame

    def _save_svg(self, fig, name: str) -> Path:
        from mobitrace.book.figures import narrow_path

        path = self.figures_dir / f"{name}.svg"
        for saved in (path, narrow_path(path)):
            if not saved.is_file():
                raise FileNotFoundError(f"{saved}: its chapter saved no such figure")
        return path

    def _copy_svg(self, source: Path, name: str) -> Path:
        from mobitrace.book.figures import narrow_path

        path = self._save_svg(None, name)
        for saved, copied in ((path, source), (narrow_path(path), narrow_path(source))):
            if saved.read_bytes() != Path(copied).read_bytes():
                raise ValueError(f"{saved}: its chapter saved another figure than {copied}")
        return path

    def findings(self, *args, **kwargs) -> None:
        raise TypeError("a supplement has no key findings: they belong to its chapter")


def reference_first(devices: list[str], reference: str) -> list[str]:
    """`devices` with `reference` (params.yaml `reference_device`: the one
    the chapter's single-device comparisons use) first, where the analyses
    look for it."""
    if reference not in devices:
        raise ValueError(f"reference_device {reference!r} is not one of the devices {list(devices)} (params.yaml)")
    return [reference, *(d for d in devices if d != reference)]


class NotebookChapter:
    """Base of every study's chapter class (studies/<study>/chapter*.py): the
    notebook makes it from its parameters and calls one method per code cell."""

    @classmethod
    def from_parameters(cls, namespace: dict):
        """The chapter of the notebook's `study` (its one parameter), with
        every other argument of the constructor read from params.yaml
        (mobitrace.core.params.arguments)."""
        signature = inspect.signature(cls.__init__).parameters
        names = [p for p in signature if p != "self"]
        optional = {p for p in names if signature[p].default is not inspect.Parameter.empty}
        return cls(**params.arguments(namespace["study"], names, optional))


class SupplementChapter(NotebookChapter):
    """Base of a supplement's chapter class (registry.Chapter.supplement_to):
    `class Chapter(SupplementChapter, <its chapter's Chapter>)` makes the
    chapter's computations and shows them through `ShownOutputs`, so that
    the chapter alone writes its results."""

    @classmethod
    def from_parameters(cls, namespace: dict):
        page = super().from_parameters(namespace)
        page.out = ShownOutputs(page.out.results_dir, page.out.stage, page.out.device_stage)
        return page


class DevicePage:
    """A generated page of one device of a per-device chapter
    (registry.Chapter.device_pages): MyST Markdown with the device's figures
    and tables as HTML, each with a provenance box naming only the stages
    that fed it (the device's own, not the whole chapter's), so a page and
    its boxes stay the same size whatever the number of devices. The page is
    an orphan: linked from its chapter's cross-device comparison, not listed
    in the book's navigation (which every page carries)."""

    DEPTH = 2  # chapters/<chapter>-devices/<device>.html

    def __init__(self, chapter: str, device: str, title: str, intro: str):
        self.chapter, self.device = chapter, device
        self.blocks = ["---\norphan: true\n---", f"# {md_text(device)}: {md_text(title)}",
                       f"One device of {{doc}}`../{chapter}`. {intro}"]

    @staticmethod
    def href(chapter: str, device: str) -> str:
        """The link from the chapter's page to a device's page."""
        return f"{chapter}-devices/{device}.html"

    def heading(self, text: str) -> None:
        self.blocks.append(f"## {md_text(text)}")

    def text(self, markdown: str) -> None:
        """A paragraph of MyST Markdown (capture strings in it through md_text)."""
        self.blocks.append(" ".join(markdown.splitlines()))

    def figure(self, path: Path, name: str, alt: str, caption: str) -> None:
        self.blocks.append(figure_html(Path(path), name, alt, caption, depth=self.DEPTH))

    def table(self, frame: pd.DataFrame, caption: str, csv: Path | None = None, index: bool = False,
              html_columns: tuple[str, ...] = ()) -> None:
        body = table_html(frame, caption=caption, index=index, html_columns=html_columns,
                          csv_href=site_href(csv, self.DEPTH) if csv else None).data
        # One Markdown HTML block: a blank line would end it.
        self.blocks.append("\n".join(line for line in body.splitlines() if line.strip()))

    def provenance(self, text: str, stages: list[str]) -> None:
        self.blocks.append(provenance_block(text, " ".join(stages)))

    def write(self, folder: str | Path) -> Path:
        path = Path(folder) / f"{self.device}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(self.blocks) + "\n", encoding="utf-8")
        return path
