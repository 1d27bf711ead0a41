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
# # Mobile network stacks at gigabit rates
#
# This book re-derives {glue:text}`n_papers` papers on what gigabit data rates
# cost a mobile device's CPU and battery, from the numbers the papers print
# and from captures of our own. Of the {glue:text}`n_total` claims it
# checks, {glue:text}`n_evidence` are evidence about the paper:
# {glue:text}`n_reproduced` are reproduced (the whole interval satisfies
# the paper's statement), {glue:text}`n_not_reproduced` are not (the whole
# interval contradicts it), {glue:text}`n_inconclusive` are inconclusive (the
# interval holds values on both sides), and {glue:text}`n_not_checkable` cannot
# be checked from what the papers publish. The other {glue:text}`n_not_evidence`
# are counted apart: {glue:text}`n_testbed_bound` are *testbed-bound* (a
# magnitude this testbed cannot reach or was not built to reach) and
# {glue:text}`n_follows_from_the_model` *follow from the model* (the power
# model, the shaping or the grid implies them). Each card below is one paper: its headline claim, what this
# artifact finds (with its interval where there is one) and the verdicts
# of all its claims; the
# {doc}`claims ledger <claims-ledger>` lists every claim.

# %% tags=["parameters"]
study = "overview"

# %% tags=["remove-cell"]
from pathlib import Path

from IPython.display import HTML, display

from mobitrace.core import claims as cl
from mobitrace.core import params
from mobitrace.book import landing
from mobitrace.book.chapter import ChapterOutputs
from mobitrace.studies.registry import studies as registered

results = Path(params.section_of(params.load(), study)["results_dir"])
studies = [s.card() for s in registered()]
out = ChapterOutputs(results / study, "overview")
ledger, _, _ = landing.read_ledger(studies, results)
counts = cl.verdict_counts(ledger)
out.put_all(cl.keyed(counts, "n_"))
out.put("n_evidence", sum(counts[v] for v in cl.VERDICTS))
out.put("n_not_evidence", len(ledger) - sum(counts[v] for v in cl.VERDICTS))
out.put("n_total", len(ledger))
out.put("n_papers", len(studies))
summary = out.save_table(landing.summary_frame(studies, results), "studies")

# %% tags=["hide-input"]
display(HTML(landing.landing_html(studies, summary)))
out.provenance("Published, measured and modeled values, as each chapter's key findings and claims table give them.")

# %% [markdown]
# Every figure and table in the chapters says where its numbers come from:
# **measured** (from raw captures), **published** (transcribed from a paper)
# or **modeled** (computed by a stated model); {doc}`about this book <../intro>`
# says more.
#
# ## Rebuild in two commands
#
# From a clone of the repository (Python 3.11; every input is in git):
#
# ```sh
# make        # set up .venv from the pinned lock, then `dvc repro`: data, chapters, this book
# make test   # the same set-up, then the test suite
# ```
#
# ## Add your device in three
#
# Capture a Linux host with the kit (as root; it makes its own network
# namespaces), register the capture, and rebuild: the device gets its own
# section in the chapter, and only its stages run again.
#
# ```sh
# make capture STUDY=cpu-gbps DEVICE=my-laptop
# python -m mobitrace add-device data/raw/cpu-gbps/my-laptop
# make
# ```
#
# {doc}`Bring your own device <../byod>` covers phones over adb, the other
# studies' kits and what `validate` reports.
