"""The book's landing page (notebooks/overview.py): one card per study with
the paper, its headline claim, this artifact's result with its interval, the
verdict counts and a thumbnail figure, all read from the chapters' results.

A chapter's headline claims are its tables/key_findings.csv (written by
mobitrace.book.chapter.ChapterOutputs.findings). A chapter that does not write one
yet falls back to its first checkable claims (verdict reproduced or not
reproduced) from its claims.csv, without an interval.

Every string that reaches the page is escaped; the page lives at
chapters/overview.html, so chapters are linked as <chapter>.html and figures
as ../results/<chapter>/figures/<name>.svg (the book copies data/results/).
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
from pandera import errors as pa_errors

from mobitrace.core import claims as cl
from mobitrace.book.chapter import KEY_FINDINGS_COLUMNS, VERDICT_BADGES, paper_text
from mobitrace.core import numbers

KEY_FINDINGS = "key_findings"
FROM_KEY_FINDINGS = "key findings"
FROM_CLAIMS = "claims (no key findings yet)"


def _esc(x) -> str:
    return html.escape(str(x), quote=True)


def headline_claims(chapter_dir: str | Path, n: int = 1) -> pd.DataFrame:
    """The first `n` headline claims of a chapter (KEY_FINDINGS_COLUMNS plus
    `source`): its tables/key_findings.csv, or, when the chapter has none, its
    first claims whose verdict is reproduced or not reproduced (no interval)."""
    chapter_dir = Path(chapter_dir)
    path = chapter_dir / "tables" / f"{KEY_FINDINGS}.csv"
    if path.is_file():
        rows = pd.read_csv(path, dtype={"claim_id": str, "claim": str, "paper_relation": str, "unit": str,
                                        "verdict": str}, keep_default_na=False, na_values=[""])
        source = FROM_KEY_FINDINGS
    else:
        claims = cl.read_claims(chapter_dir / "claims.csv")
        rows = claims[claims["verdict"].isin([cl.REPRODUCED, cl.NOT_REPRODUCED])
                      & (claims["category"] == cl.EVIDENCE)].copy()
        rows["artifact_low"] = float("nan")
        rows["artifact_high"] = float("nan")
        rows = rows[KEY_FINDINGS_COLUMNS]
        source = FROM_CLAIMS
    rows = rows.head(n).reset_index(drop=True)
    rows["unit"] = rows["unit"].fillna("")
    rows["source"] = source
    return rows


def verdict_counts(chapter_dir: str | Path) -> dict[str, int]:
    """The chapter's claims per counted label (claims.verdict_counts)."""
    return cl.verdict_counts(cl.read_claims(Path(chapter_dir) / "claims.csv"))


def ours_text(row) -> str:
    """This artifact's value with its interval and unit: ``36.0 [30.0, 42.5]%``."""
    return numbers.claim_value(row["artifact_value"], row["unit"], low=row["artifact_low"], high=row["artifact_high"])


def _label(row) -> str:
    category = row.get("category", cl.EVIDENCE)
    return row["verdict"] if pd.isna(category) or category == cl.EVIDENCE else category


def badge(verdict: str, text: str | None = None) -> str:
    return f'<span class="verdict verdict-{VERDICT_BADGES[verdict]}">{_esc(text or verdict)}</span>'


def counts_html(counts: dict[str, int]) -> str:
    return " ".join(badge(v, f"{counts.get(v, 0)} {v}") for v in cl.shown_verdicts(counts))


def summary_frame(studies: list[dict], results_dir: str | Path) -> pd.DataFrame:
    """One row per chapter of every study: its headline claim (paper value,
    ours with the interval bounds, verdict), where the row comes from, and the
    chapter's verdict counts: the landing page's data."""
    rows = []
    for study in studies:
        thumb = Path(results_dir) / study["figure"]["chapter"] / "figures" / f'{study["figure"]["name"]}.svg'
        if not thumb.is_file():
            raise FileNotFoundError(f"src/mobitrace/studies ({study['name']}): thumbnail: "
                                    f"expected a figure the chapter saves, found no {thumb}")
        for chapter in study["chapters"]:
            chapter_dir = Path(results_dir) / chapter["chapter"]
            head = headline_claims(chapter_dir).iloc[0]
            counts = verdict_counts(chapter_dir)
            rows.append({"study": study["name"], "chapter": chapter["chapter"], **head.to_dict(),
                         **cl.keyed(counts, "n_")})
    return pd.DataFrame(rows)


def card_html(study: dict, summary: pd.DataFrame) -> str:
    """One study's card: thumbnail (linking into the chapter), title, venue,
    and per chapter its headline claim, paper vs ours and verdict counts."""
    sid = f"study-{study['name']}"
    fig = study["figure"]
    thumb = (f'<a class="landing-thumb" href="{_esc(fig["chapter"])}.html">'
             f'<img src="../results/{_esc(fig["chapter"])}/figures/{_esc(fig["name"])}.svg" '
             f'alt="{_esc(fig["alt"])}" loading="lazy"></a>')
    first = study["chapters"][0]["chapter"]
    parts = [f'<article class="landing-card" aria-labelledby="{_esc(sid)}">', thumb,
             f'<h3 id="{_esc(sid)}"><a href="{_esc(first)}.html">{_esc(study["title"])}</a></h3>',
             f'<p class="landing-venue">{_esc(study["venue"])}</p>']
    for chapter in study["chapters"]:
        row = summary[(summary["study"] == study["name"]) & (summary["chapter"] == chapter["chapter"])].iloc[0]
        counts = {v: int(row["n_" + cl.key(v)]) for v in cl.COUNTED}
        parts += [
            '<div class="landing-chapter">',
            f'<p class="landing-chapter-name"><a href="{_esc(chapter["chapter"])}.html">{_esc(chapter["label"])}</a></p>',
            f'<p class="landing-claim">{_esc(row["claim"])}</p>',
            '<dl class="landing-result">',
            f'<div><dt>Paper</dt><dd>{_esc(paper_text(row["paper_relation"], row["paper_value"], row["unit"]))}</dd></div>',
            f'<div><dt>This artifact</dt><dd>{_esc(ours_text(row))} {badge(_label(row))}</dd></div>',
            "</dl>",
            f'<p class="landing-counts"><span class="landing-counts-label">All '
            f'{sum(counts.values())} claims:</span> {counts_html(counts)}</p>',
            "</div>",
        ]
    parts.append("</article>")
    return "\n".join(parts)


def landing_html(studies: list[dict], summary: pd.DataFrame) -> str:
    """The grid of study cards (stacks to one column on a phone: landing.css)."""
    cards = "\n".join(card_html(study, summary) for study in studies)
    return f'<div class="landing-grid">\n{cards}\n</div>'


def ledger_summary_html(counts: pd.DataFrame, title: str = "Summary") -> str:
    """The claims ledger's opening block, in the style of a chapter's key
    findings: every claim's verdict tallied, then one line per chapter (a
    link to it and its verdict badges). `counts` has one row per chapter
    (the index) and a column per verdict."""
    counts = counts.reindex(columns=list(cl.COUNTED), fill_value=0)
    totals = {v: int(counts[v].sum()) for v in cl.COUNTED}
    rows = []
    for chapter, row in counts.iterrows():
        n = {v: int(row[v]) for v in cl.COUNTED}
        rows.append(f'<tr><th scope="row"><a href="{_esc(chapter)}.html">{_esc(chapter)}</a></th>'
                    f'<td class="num" data-label="Claims">{sum(n.values())}</td>'
                    f'<td data-label="Verdicts">{counts_html(n)}</td></tr>')
    return "\n".join([
        '<div class="key-findings">',
        f'<p class="key-findings-title"><strong>{_esc(title)}</strong> · all {sum(totals.values())} claims of '
        f'{len(counts)} chapters: {counts_html(totals)}</p>',
        '<div class="mobitrace-table-scroll" role="region" tabindex="0" aria-label="Verdicts per chapter">',
        '<table class="mobitrace-table key-findings-table">',
        '<thead><tr><th scope="col">Chapter</th><th scope="col" class="num">Claims</th>'
        '<th scope="col">Verdicts</th></tr></thead>',
        "<tbody>", *rows, "</tbody></table></div>",
        "</div>",
    ])




def verdict_colors() -> dict[str, str]:
    """The colour of each verdict (mobitrace.book.figures.VERDICT_COLORS, one
    colour per verdict across the book; imported here: the landing page draws nothing)."""
    from mobitrace.book.figures import VERDICT_COLORS

    return dict(VERDICT_COLORS)


def verdict_bars(counts: pd.DataFrame):
    """Horizontal bars (seaborn barplot) of the claims per verdict for each
    chapter (`counts`: one row per chapter, a column per verdict), the legend
    below the axes. Returns the figure."""
    from mobitrace.book.figures import VERDICT_HATCHES, legend_outside  # first: it sets the theme

    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.ticker import MaxNLocator
    counts = counts.reindex(columns=list(cl.COUNTED), fill_value=0)
    shown = [v for v in cl.COUNTED if counts[v].sum() > 0]  # a verdict no claim has gets no bars
    long = (counts[shown].rename_axis("chapter").reset_index()
            .melt(id_vars="chapter", var_name="verdict", value_name="claims"))
    fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(counts) + 1.6))
    sns.barplot(data=long, y="chapter", x="claims", hue="verdict", hue_order=shown,
                palette=verdict_colors(), orient="h", ax=ax, edgecolor="#333333", linewidth=0.6)
    for verdict, bars in zip(shown, ax.containers):
        for bar in bars:
            bar.set_hatch(VERDICT_HATCHES[verdict])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts: whole ticks
    ax.set_xlabel("claims (count)")
    ax.set_ylabel("")
    legend_outside(ax, below=True)
    for handle, verdict in zip(ax.get_legend().legend_handles, shown):
        handle.set_hatch(VERDICT_HATCHES[verdict])
        handle.set_edgecolor("#333333")
    fig.tight_layout()
    return fig


def read_ledger(studies: list[dict], results_dir: str | Path) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The claims ledger: every chapter's claims.csv (the chapters of the
    `studies` cards), each claim_id prefixed with its chapter; with the
    chapter of each row and the chapters. The ledger page writes it to
    data/results/claims.csv; the landing page reads the chapters' own, so
    that it does not wait for the ledger."""
    # A study may have several chapters (published and measured), so rows keep
    # the chapter they come from.
    chapters = [chapter["chapter"] for card in studies for chapter in card["chapters"]]
    paths = [Path(results_dir) / chapter / "claims.csv" for chapter in chapters]
    parts = [cl.read_claims(path, validate=False) for path in paths]
    chapter_of = [chapter for chapter, part in zip(chapters, parts) for _ in range(len(part))]
    ledger = pd.concat(parts, ignore_index=True)
    ledger["claim_id"] = [f"{c}/{i}" for c, i in zip(chapter_of, ledger["claim_id"])]
    # One check of the joined table (ids prefixed per chapter: unique exactly when
    # each file's are; every other check is row-wise), not one per file; when it
    # fails, each file is checked in order so that a bad file's error comes first.
    try:
        return cl.claims_frame(ledger.to_dict("records")), chapter_of, chapters
    except (pa_errors.SchemaError, pa_errors.SchemaErrors):
        for path in paths:
            cl.read_claims(path)
        raise


def ledger_counts(ledger: pd.DataFrame, chapter_of: list[str], chapters: list[str]) -> pd.DataFrame:
    """Claims per chapter (rows, in `chapters` order) and verdict (columns,
    in cl.COUNTED order), with a total column; `chapter_of` names each
    ledger row's chapter."""
    counts = (ledger.assign(chapter=chapter_of, label=cl.counted_as(ledger)).groupby(["chapter", "label"]).size()
              .unstack(fill_value=0)
              .reindex(columns=list(cl.COUNTED), fill_value=0).reindex(chapters, fill_value=0))
    counts["total"] = counts.sum(axis=1)
    return counts


def ledger_metrics(ledger: pd.DataFrame, counts: pd.DataFrame) -> dict:
    """claims-metrics.json: the verdict counts of all chapters ("all") and of
    each, and how many modeled verdicts are robust or depend on a coefficient
    ("robustness")."""
    keys = [*cl.COUNTED, "total"]
    totals = counts.sum()
    return {"all": {cl.key(k): int(totals[k]) for k in keys},
            **{s: {cl.key(k): int(counts.loc[s, k]) for k in keys} for s in counts.index},
            "robustness": {"robust": int((ledger["robustness"] == cl.ROBUST).sum()),
                           "depends": int(ledger["robustness"].str.startswith(cl.DEPENDS).sum())}}
