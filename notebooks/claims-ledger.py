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
# the paper says, what the artifact finds, and the verdict, with the tolerance
# it was judged by and a link to the section that derives it. Verdicts:
# **reproduced** (within the stated tolerance, or the stated bound holds),
# **not reproduced**, **not checkable** (the data to check it are not in the
# paper's text or not in this artifact; the row says why).
#
# The same table is `data/results/claims.csv`; the counts are DVC metrics
# (`dvc metrics show`).

# %% tags=["parameters"]
study = "claims-ledger"
studies = ["cpu-gbps"]
results_dir = "data/results"

# %% tags=["hide-input"]
import json
from pathlib import Path

import pandas as pd
from IPython.display import display
from myst_nb import glue

from mobitrace import claims as cl
from mobitrace.book import link, table_html

results = Path(results_dir)
# `studies` are the chapters' result folders; a study may have several
# chapters (published and measured), so rows keep the chapter they come from.
parts = [cl.read_claims(results / chapter / "claims.csv") for chapter in studies]
chapter_of = [chapter for chapter, part in zip(studies, parts) for _ in range(len(part))]
ledger = pd.concat(parts, ignore_index=True)
ledger["claim_id"] = [f"{c}/{i}" for c, i in zip(chapter_of, ledger["claim_id"])]
ledger = cl.claims_frame(ledger.to_dict("records"))
cl.write_claims(ledger, results / "claims.csv")

counts = (ledger.assign(chapter=chapter_of).groupby(["chapter", "verdict"]).size().unstack(fill_value=0)
          .reindex(columns=list(cl.VERDICTS), fill_value=0).reindex(studies, fill_value=0))
counts["total"] = counts.sum(axis=1)
totals = counts.sum()
metrics = {"all": {k.replace(" ", "_"): int(totals[k]) for k in [*cl.VERDICTS, "total"]},
           **{s: {k.replace(" ", "_"): int(counts.loc[s, k]) for k in [*cl.VERDICTS, "total"]} for s in studies}}
_ = (results / "claims-metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
for k in [*cl.VERDICTS, "total"]:
    glue(f"n_{k.replace(' ', '_')}", int(totals[k]), display=False)
glue("n_studies", len(studies), display=False)

# %% [markdown]
# ## Counts per verdict
#
# The {glue:text}`n_studies` chapters address {glue:text}`n_total` claims:
# {glue:text}`n_reproduced` reproduced, {glue:text}`n_not_reproduced` not
# reproduced, {glue:text}`n_not_checkable` not checkable.
#
# ```{provenance} published, measured, modeled
# :stage: ledger
#
# Collected from each chapter's claims table; each row's provenance is in the ledger below.
# ```

# %% tags=["hide-input"]
display(table_html(counts.rename_axis(None).rename(columns=str), index=True))

# %% [markdown]
# ## Every claim
#
# ```{provenance} published, measured, modeled
# :stage: ledger
#
# Paper values are published; artifact values carry the provenance in their row.
# ```

# %% tags=["hide-input"]
shown = ledger.assign(
    paper=[f"{r} {p:g}" if isinstance(r, str) else "–" for r, p in zip(ledger["paper_relation"], ledger["paper_value"])],
    derived_in=[link(f"{c} ↗", f"{c}.html#{a}") for c, a in zip(chapter_of, ledger["section"])],
)
display(table_html(
    shown[["study", "claim", "location", "paper", "artifact_value", "unit", "verdict", "tolerance",
           "provenance", "derived_in"]].rename(columns={"artifact_value": "artifact", "derived_in": "derived in"}),
    html_columns=("derived in",)))
