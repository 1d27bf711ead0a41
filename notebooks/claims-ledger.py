# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Claims ledger
#
# Every claim of the five papers that a chapter of this book addresses: what
# the paper says, what the artifact finds with its interval, and the verdict,
# with the rule it was judged by and a link to the section that derives it.
# One rule decides every verdict (`mobitrace.core.claims.decide`):
# **reproduced** when the whole interval of our value satisfies the paper's
# relation or lies in its tolerance band, **not reproduced** when the whole
# interval violates it, **inconclusive** otherwise; a claim without an
# interval is decided on its point value and its basis says so. **Not
# checkable**: the data to check it are not in the paper's text or not in
# this artifact (the row says why). A checked claim is also put in a
# **category**, with the reason in its basis
# (`data/published/claim-categories.yaml`): **evidence** about the paper, or
# **testbed-bound** (a magnitude this testbed cannot reach or was not built
# to reach) or **follows from the model** (the power model, the shaping or
# the grid implies the verdict). Only evidence is counted as reproduced or
# not; the two other categories are counted apart. A **modeled** verdict rests on assumed power coefficients;
# its chapter recomputes it with each assumed coefficient halved and raised by
# half and over a Latin hypercube of all of them, and the *robustness* column
# says **robust** (the verdict never changes) or **depends on** the
# coefficient that changes it.
#
# The same table is `data/results/claims.csv`; the counts are DVC metrics
# (`dvc metrics show`). Every claim was audited for comparing what the paper
# compared, with the paper's baseline: `data/published/claims-audit.csv` in
# the repository gives, per claim, the paper's comparison, ours before and
# after the audit (2026-11-23) and why; the values and verdicts are the ones
# in the table below.

# %% tags=["parameters"]
study = "claims-ledger"

# %% tags=["remove-cell"]
import json
from pathlib import Path

from IPython.display import HTML, display

from mobitrace.core import claims as cl, numbers, params
from mobitrace.book import landing
from mobitrace.book.build import link
from mobitrace.book.chapter import KEY_FINDINGS, ChapterOutputs, badge_html, paper_text, section_href, site_href
from mobitrace.studies.registry import studies as registered

results = Path(params.section_of(params.load(), study)["results_dir"])
studies = [s.card() for s in registered()]
out = ChapterOutputs(results / study, "ledger")
ledger, chapter_of, chapters = landing.read_ledger(studies, results)
cl.write_claims(ledger, results / "claims.csv")

counts = landing.ledger_counts(ledger, chapter_of, chapters)
totals = counts.sum()
metrics = landing.ledger_metrics(ledger, counts)
_ = (results / "claims-metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
for k in [*cl.COUNTED, "total"]:
    out.put("n_" + cl.key(k), int(totals[k]))
out.put("n_studies", len(chapters))
out.put_all({f"n_{k}": n for k, n in metrics["robustness"].items()})
display(HTML(landing.ledger_summary_html(counts)), metadata=KEY_FINDINGS)

# %% [markdown]
# ## Counts per verdict
#
# The {glue:text}`n_studies` chapters address {glue:text}`n_total` claims:
# {glue:text}`n_reproduced` reproduced, {glue:text}`n_not_reproduced` not
# reproduced, {glue:text}`n_inconclusive` inconclusive,
# {glue:text}`n_not_checkable` not checkable; and, counted apart,
# {glue:text}`n_testbed_bound` testbed-bound and
# {glue:text}`n_follows_from_the_model` that follow from the model. Of the modeled verdicts
# whose assumed coefficients were varied, {glue:text}`n_robust` are robust and
# {glue:text}`n_depends` depend on a coefficient.

# %% tags=["hide-input"]
out.figure(landing.verdict_bars(counts), "verdict_counts",
           alt="Horizontal bars, one group per chapter, of how many of its claims are reproduced, "
               "not reproduced, inconclusive, not checkable, testbed-bound, or follow from the model.",
           caption="Claims per verdict and chapter. Compare the plain green (reproduced) and cross-hatched "
                   "vermilion (not reproduced) bars within a chapter; dotted yellow bars are inconclusive, "
                   "striped grey bars are claims the papers' text cannot settle; striped pink bars are "
                   "testbed-bound and black bars follow from the model, neither of them evidence about the paper.")
out.table(counts.rename_axis("chapter").reset_index(), "verdict_counts", "Claims per verdict and chapter (count)")
out.provenance("Published, measured and modeled claims, counted from each chapter's claims table.")

# %% [markdown]
# ## Every claim
#
# One table per chapter; the paper's value as printed (with its qualifier:
# `<` "less than", `~` "about"), the artifact's value in the same unit, the
# verdict and the tolerance it was judged by. Long tables are folded: open
# them, or download the whole ledger as CSV.

# %% tags=["hide-input"]
shown = ledger.assign(
    chapter=chapter_of,
    paper=[paper_text(r, p, u) for r, p, u in zip(ledger["paper_relation"], ledger["paper_value"], ledger["unit"])],
    artifact=[numbers.claim_value(a, u, low=lo, high=hi) for a, u, lo, hi in
              zip(ledger["artifact_value"], ledger["unit"], ledger["ci_low"], ledger["ci_high"])],
    derived_in=[link(f"{c} ↗", section_href(c, a)) for c, a in zip(chapter_of, ledger["section"])],
    verdict=ledger["verdict"].map(badge_html), category=[badge_html(c, "category") for c in ledger["category"]],
)
columns = {"claim": "claim", "location": "location", "paper": "paper", "artifact": "this artifact [interval]", "verdict": "verdict",
           "category": "category", "tolerance": "rule", **{c: c for c in ("basis", "provenance", "robustness")}, "derived_in": "derived in"}
for chapter in chapters:
    rows = shown[shown["chapter"] == chapter]
    out.show(rows[list(columns)].rename(columns=columns), f"{chapter}: {len(rows)} claims",
             csv_href=site_href(results / "claims.csv"), html_columns=("derived in", "verdict", "category"))
out.provenance("Paper values are published; artifact values are measured, published or modeled as their row says.")
