"""Analyses of the priority-boost chapter: the audit of the published tables
(Welch from reported mean/SD/n, rounding ranges, Hedges' g, Holm) and the
same tests on measured per-run samples."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mobitrace.stats import intervals
from mobitrace.stats import resampling as rs
from mobitrace.stats.intervals import MIN_N
from mobitrace.stats import welch

CONDITIONS = ["cpu_procs", "cross_pct"]


def table_precision(cells: pd.DataFrame) -> dict:
    """Digits after the point each statistic is printed with in most cells of
    a table (e.g. 1 for means, 2 for SDs): the precision a printed "81" or
    "0" is read with when trailing zeros are taken to have been dropped."""
    return {s: int(g["decimals"].mode().max()) for s, g in cells.groupby("statistic")}


def audit_published(stats: pd.DataFrame, table: str, p_table: str | None, baseline: str = "original",
                    *, alpha: float, grid: int = 21) -> pd.DataFrame:
    """Every policy-versus-baseline comparison of a mean/SD table: the
    recomputed Welch test, the range of p over the rounding intervals (as
    printed, and at the table's precision), the published p where there is
    one and whether it lies in the range, Hedges' g with its interval, and
    Holm's correction over the comparisons of the table."""
    from mobitrace.core.published import mean_sd_table

    cells = stats[stats["table"] == table]
    prec = table_precision(cells)
    wide = mean_sd_table(stats, table)
    base = wide[wide["policy"] == baseline].set_index("column")
    pubp = stats[stats["table"] == p_table].set_index(["policy", "column"]) if p_table else None
    rows = []
    for r in wide[wide["policy"] != baseline].sort_values(["column", "policy"]).itertuples(index=False):
        b = base.loc[r.column]
        t = welch.welch_from_stats(r.mean, r.sd, r.n, b["mean"], b["sd"], b["n"])
        g, glo, ghi = welch.hedges_g(r.mean, r.sd, r.n, b["mean"], b["sd"], b["n"], alpha)
        lo_p, hi_p = welch.p_range(r.mean, r.mean_decimals, r.sd, r.sd_decimals, r.n,
                               b["mean"], b["mean_decimals"], b["sd"], b["sd_decimals"], b["n"], grid)
        lo_t, hi_t = welch.p_range(r.mean, max(r.mean_decimals, prec["mean"]), r.sd, max(r.sd_decimals, prec["sd"]),
                               r.n, b["mean"], max(b["mean_decimals"], prec["mean"]), b["sd"],
                               max(b["sd_decimals"], prec["sd"]), b["n"], grid)
        row = {"table": table, "policy": r.policy, "column": r.column, "cpu_procs": r.cpu_procs,
               "cross_pct": r.cross_pct, "n": r.n, "mean": r.mean, "sd": r.sd, "mean_base": b["mean"],
               "sd_base": b["sd"], "diff": r.mean - b["mean"], "t": t.t, "df": t.df, "p": t.p,
               "p_lo_table": lo_t, "p_hi_table": hi_t, "p_lo_printed": lo_p, "p_hi_printed": hi_p,
               "g": g, "g_lo": glo, "g_hi": ghi,
               "p_published_text": None, "p_published": np.nan, "p_published_relation": None,
               "in_range_table": None, "in_range_printed": None}
        if pubp is not None and (r.policy, r.column) in pubp.index:
            q = pubp.loc[(r.policy, r.column)]
            row.update(p_published_text=q["text"], p_published=q["value"], p_published_relation=q["relation"],
                       in_range_table=welch.p_consistent(q["relation"], q["value"], q["decimals"], lo_t, hi_t),
                       in_range_printed=welch.p_consistent(q["relation"], q["value"], q["decimals"], lo_p, hi_p))
        rows.append(row)
    out = pd.DataFrame(rows)
    reject, adj = welch.holm(out["p"].to_numpy(), alpha)
    out["p_holm"], out["reject_holm"] = adj, reject
    out["reject_unadjusted"] = out["p"] < alpha
    if p_table:
        pub = out["p_published"].to_numpy()
        rej, adjp = welch.holm(pub, alpha)
        out["p_published_holm"], out["reject_published_holm"] = adjp, rej
    return out


def cell_summary(runs: pd.DataFrame, value: str = "metric") -> pd.DataFrame:
    """Mean, SD (ddof=1) and n of a per-run value per table, condition and policy."""
    keys = ["table", *CONDITIONS, "policy"]
    g = runs.groupby(keys)[value]
    out = g.agg(mean="mean", sd=lambda s: s.std(ddof=1), n="count").reset_index()
    return out


def compare_measured(runs: pd.DataFrame, baseline: str = "original", value: str = "metric",
                     *, alpha: float) -> pd.DataFrame:
    """Welch tests and Hedges' g of each policy against the baseline on the
    per-run samples of every (table, condition); Holm over each table's
    comparisons. Cells with fewer than two runs on either side are kept with
    NaN statistics."""
    rows = []
    keys = ["table", *CONDITIONS]
    for (table, cpu, cross), grp in runs.groupby(keys):
        base = grp.loc[grp["policy"] == baseline, value].dropna().to_numpy()
        for policy, sub in grp[grp["policy"] != baseline].groupby("policy"):
            x = sub[value].dropna().to_numpy()
            row = {"table": table, "cpu_procs": cpu, "cross_pct": cross, "policy": policy,
                   "n": len(x), "n_base": len(base),
                   "mean": x.mean() if len(x) else np.nan, "mean_base": base.mean() if len(base) else np.nan,
                   "sd": x.std(ddof=1) if len(x) > 1 else np.nan,
                   "sd_base": base.std(ddof=1) if len(base) > 1 else np.nan}
            row["diff"] = row["mean"] - row["mean_base"]
            row["rel_diff"] = row["diff"] / row["mean_base"] if row["mean_base"] else np.nan
            if len(x) >= 2 and len(base) >= 2:
                t = welch.welch_samples(x, base)
                g, glo, ghi = welch.hedges_g_samples(x, base, alpha)
                row.update(t=t.t, df=t.df, p=t.p, g=g, g_lo=glo, g_hi=ghi)
            else:
                row.update(t=np.nan, df=np.nan, p=np.nan, g=np.nan, g_lo=np.nan, g_hi=np.nan)
            rows.append(row)
    out = _holm_per_table(pd.DataFrame(rows), "p", alpha)
    if not out.empty:
        out["reject_unadjusted"] = out["p"] < alpha
    return out


def _holm_per_table(out: pd.DataFrame, p_column: str, alpha: float) -> pd.DataFrame:
    """Holm-adjusted p and reject flag over the comparisons of each paper table."""
    if out.empty:
        return out
    out["p_holm"], out["reject_holm"] = np.nan, False
    for table, idx in out.groupby("table").groups.items():
        reject, adj = welch.holm(out.loc[idx, p_column].to_numpy(), alpha)
        out.loc[idx, "p_holm"], out.loc[idx, "reject_holm"] = adj, reject
    out["reject_holm"] = out["reject_holm"].astype(bool)
    return out


def _pairs(runs: pd.DataFrame, baseline: str, value: str):
    """Per (table, condition) and policy other than `baseline`, in sorted
    order: (table, cpu_procs, cross_pct, policy, x, b), the policy's and the
    baseline's `value` of the runs of the same (session, rep), in the
    policy's run order, pairs with a NaN dropped (numpy arrays: a pandas join
    per comparison costs more than its tests)."""
    for (table, cpu, cross), grp in runs.groupby(["table", *CONDITIONS]):
        policies = grp["policy"].to_numpy(dtype=object)
        keys = list(zip(grp["session"], grp["rep"]))
        values = grp[value].to_numpy(dtype=float)
        base = {k: v for k, v, p in zip(keys, values, policies) if p == baseline}
        for policy in sorted(set(policies) - {baseline}):
            matched = [i for i in np.flatnonzero(policies == policy) if keys[i] in base]
            x = values[matched]
            b = np.array([base[keys[i]] for i in matched], dtype=float)
            keep = ~(np.isnan(x) | np.isnan(b))
            yield table, cpu, cross, policy, x[keep], b[keep]


def paired_change(runs: pd.DataFrame, alpha: float, baseline: str = "original",
                  value: str = "metric") -> pd.DataFrame:
    """The re-run analysed as designed, paired by seed: every repetition of
    a cell uses the same link schedule for all policies, so each policy run
    is paired with the original's run of the same (session, rep). Per
    policy and condition: the pairs, the mean change in % of the original,
    100 (exp(mean log(x / b)) - 1), its (1 - 2 alpha) paired-t interval (the
    interval of a TOST equivalence test at level alpha: Schuirmann, J.
    Pharmacokin. Biopharm. 15 (1987) 657-680) and the two-sided paired t p of
    the log ratios (scipy.stats.ttest_1samp). Fewer than 3 pairs: no
    interval and no p."""
    from scipy import stats as st

    rows = []
    for table, cpu, cross, policy, x, b in _pairs(runs, baseline, value):
        positive = (x > 0) & (b > 0)
        d = np.log(x[positive] / b[positive])
        row = {"table": table, "cpu_procs": cpu, "cross_pct": cross, "policy": policy, "pairs": len(d),
               "change_pct": 100 * np.expm1(d.mean()) if len(d) else np.nan,
               "change_lo_pct": np.nan, "change_hi_pct": np.nan, "p_paired": np.nan}
        if len(d) >= 3 and np.ptp(d) > 0:
            half = st.t.ppf(1 - alpha, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
            row.update(change_lo_pct=100 * np.expm1(d.mean() - half), change_hi_pct=100 * np.expm1(d.mean() + half),
                       p_paired=float(st.ttest_1samp(d, 0.0).pvalue))
        rows.append(row)
    return pd.DataFrame(rows)


def equivalence_of(frame: pd.DataFrame, margin_pct: float, est: str = "change_pct", low: str = "change_lo_pct",
                   high: str = "change_hi_pct") -> tuple[float, tuple[float, float], str]:
    """The comparison that decides "no difference in any of `frame`'s
    comparisons" against an equivalence margin of ±`margin_pct`: one whose
    interval lies wholly outside the margin if any (the claim fails there),
    else the one whose interval reaches farthest from 0 (every other one is
    then inside the margin when it is). Returns (change, (low, high), which:
    a label of the row)."""
    f = frame.dropna(subset=[low, high])
    if f.empty:
        return float("nan"), (float("nan"), float("nan")), "no comparison with an interval"
    outside = f[(f[low] > margin_pct) | (f[high] < -margin_pct)]
    pick = outside if len(outside) else f
    reach = pick[[low, high]].abs().max(axis=1) if not len(outside) else pick[est].abs()
    r = pick.loc[reach.idxmax()]
    which = f"{POLICY_NAMES.get(r['policy'], r['policy'])}, {condition_label(r['cpu_procs'], r['cross_pct'])}"
    return float(r[est]), (float(r[low]), float(r[high])), which


def welch_change(audit: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The published comparisons (an audit table: mean, sd, n of policy and
    baseline) as a change in % of the baseline's mean with the (1 - 2 alpha)
    Welch interval (`gain_pct_ci`, sign flipped): the TOST form of the
    paper's own statistics."""
    out = audit.copy()
    n_base = out["n_base"] if "n_base" in out else out["n"]
    ci = [gain_pct_ci(m, s, n, mb, sb, nb, 2 * alpha) for m, s, n, mb, sb, nb in
          zip(out["mean"], out["sd"], out["n"], out["mean_base"], out["sd_base"], n_base)]
    out["change_pct"] = [-g for g, _, _ in ci]
    out["change_lo_pct"] = [-hi for _, _, hi in ci]
    out["change_hi_pct"] = [-lo for _, lo, _ in ci]
    return out


def median_ratio_ci(ratios, alpha: float, seed: int = 20261123) -> tuple[float, float]:
    """BCa bootstrap interval of the median of per-pair ratios
    (`rs.bca_ci`, scipy.stats.bootstrap, fixed seed): the effect size beside
    a Wilcoxon p. Fewer than MIN_N pairs or all ratios equal: NaN."""
    ratios = np.asarray(ratios, float)
    if len(ratios) < MIN_N or np.ptp(ratios) == 0:
        return np.nan, np.nan
    return rs.bca_ci((ratios,), np.median, alpha, 2000, seed, possible=(0.0, np.inf))


def compare_paired(runs: pd.DataFrame, baseline: str = "original", value: str = "metric",
                   *, alpha: float) -> pd.DataFrame:
    """Supplementary paired comparison: every repetition of a cell uses the
    same on/off link schedule (seed) for all policies, so runs can be paired
    by (session, rep). Per policy and condition: the number of pairs, the
    median of policy/original per pair, and the two-sided Wilcoxon
    signed-rank p of the paired differences (scipy.stats.wilcoxon; Wilcoxon,
    Biometrics Bulletin 1 (1945) 80-83), with Holm over each table; the
    median ratio's BCa interval (`median_ratio_ci`) is its effect size.
    """
    from scipy import stats as st

    rows = []
    for table, cpu, cross, policy, x, b in _pairs(runs, baseline, value):
        d = x - b
        p = np.nan
        if len(d) >= 2 and (d != 0).any():
            p = float(st.wilcoxon(x, b).pvalue)
        ratio = x / b
        lo, hi = median_ratio_ci(ratio, alpha)
        rows.append({"table": table, "cpu_procs": cpu, "cross_pct": cross, "policy": policy,
                     "pairs": len(d), "median_ratio": float(np.median(ratio)) if len(d) else np.nan,
                     "median_ratio_lo": lo, "median_ratio_hi": hi,
                     "pairs_lower": int((d < 0).sum()), "p_wilcoxon": p})
    return _holm_per_table(pd.DataFrame(rows), "p_wilcoxon", alpha)


# ---------------------------------------------------------------------------
# Presentation helpers of the chapter: labels, the paper's table layout, and
# the intervals its figures and key findings show.

POLICY_NAMES = {"original": "Original", "incr": "INCR", "decr": "DECR", "static": "static"}
POLICY_ORDER = ("original", "incr", "decr", "static")


def condition_label(cpu_procs, cross_pct) -> str:
    """A table column as the chapter names it: ``10 proc, 0%``."""
    return f"{int(cpu_procs)} proc, {int(cross_pct)}%"


def printed_grid(stats: pd.DataFrame, table: str) -> pd.DataFrame:
    """A published table as printed: policies as rows, conditions as columns
    (cells joined with "/" where the paper prints mean/SD)."""
    t = stats[stats["table"] == table]
    cells = t.groupby(["policy", "column"])["text"].agg("/".join).unstack("column")
    cols = t.drop_duplicates("column").set_index("column")
    cells.columns = [condition_label(r.cpu_procs, r.cross_pct) for r in cols.loc[cells.columns].itertuples()]
    order = [p for p in POLICY_ORDER if p in cells.index]
    cells = cells.loc[order]
    cells.index = [POLICY_NAMES[p] for p in order]
    return cells.reset_index(names="policy")


def published_means(stats: pd.DataFrame, table: str, alpha: float) -> pd.DataFrame:
    """Every cell of a published mean/SD table with its t-based interval
    (`intervals.mean_ci_from_stats`), policy and condition labelled for a figure."""
    from mobitrace.core.published import mean_sd_table

    wide = mean_sd_table(stats, table)
    wide["ci_lo"], wide["ci_hi"] = intervals.mean_ci_from_stats(wide["mean"], wide["sd"], wide["n"], alpha)
    wide["policy_name"] = wide["policy"].map(POLICY_NAMES)
    wide["condition"] = [condition_label(c, x) for c, x in zip(wide["cpu_procs"], wide["cross_pct"])]
    order = {p: i for i, p in enumerate(POLICY_ORDER)}
    return wide.sort_values(["column", "policy"], key=lambda s: s.map(order) if s.name == "policy" else s,
                            ignore_index=True)


def gain_pct_ci(mean, sd, n, mean_base, sd_base, n_base, alpha: float) -> tuple[float, float, float]:
    """The gain of a policy over the baseline in % of the baseline's mean,
    100 (m_base - m) / m_base, with the Welch interval of the difference of
    means (welch.welch_diff_ci) divided by the baseline's mean (its own
    uncertainty is not propagated), clipped at 100% (a time cannot fall
    below 0)."""
    lo, hi = welch.welch_diff_ci(mean_base, sd_base, n_base, mean, sd, n, alpha)
    scale = 100.0 / mean_base
    lo, hi = intervals.clip(lo * scale, hi * scale, (-np.inf, 100.0))
    return (mean_base - mean) * scale, float(lo), float(hi)


def audit_shown(a: pd.DataFrame, with_published: bool, alpha: float) -> pd.DataFrame:
    """An audit table (audit_published) for people: the conditions and the
    p-values first, p ranges and Hedges' g with their intervals in one cell
    each, units in the headers."""
    from mobitrace.core import numbers

    def p_span(lo, hi):
        return f"{numbers.p_value(lo)} to {numbers.p_value(hi)}"

    out = pd.DataFrame({
        "policy": a["policy"].map(POLICY_NAMES),
        "competing processes": a["cpu_procs"], "cross traffic (%)": a["cross_pct"],
        "Δ mean (s)": a["diff"], "t": a["t"], "df": a["df"], "p (recomputed)": a["p"],
        "attainable p (table precision)": [p_span(lo, hi) for lo, hi in zip(a["p_lo_table"], a["p_hi_table"])],
        "attainable p (as printed)": [p_span(lo, hi) for lo, hi in zip(a["p_lo_printed"], a["p_hi_printed"])],
    })
    if with_published:
        out["p (paper)"] = a["p_published_text"]
        out["paper p attainable (table precision)"] = a["in_range_table"].map({True: "yes", False: "no"})
        out["paper p attainable (as printed)"] = a["in_range_printed"].map({True: "yes", False: "no"})
    out[f"Hedges' g [{numbers.level(alpha)} CI]"] = [numbers.interval(g, lo, hi) for g, lo, hi in zip(a["g"], a["g_lo"], a["g_hi"])]
    out["p (Holm)"] = a["p_holm"]
    out["Holm family"] = holm_family(a)
    # The p-values are the table's point: first after the conditions, so a phone shows them.
    key = ["policy", "competing processes", "cross traffic (%)", "p (paper)", "p (recomputed)", "p (Holm)"]
    first = [c for c in key if c in out.columns]
    return out[first + [c for c in out.columns if c not in first]]


FAMILY_NAMES = {"transfer_cpu": "CPU-load table", "transfer_net": "network-load table", "cpu": "CPU-load table",
                "net": "network-load table", "audio": "audio table"}


def holm_family(frame: pd.DataFrame, p_column: str = "p") -> list[str]:
    """The family each row's Holm correction ran over, named for the tables:
    the paper's table and its number of tests (``CPU-load table, 10 tests``)."""
    sizes = frame.groupby("table")[p_column].transform(lambda p: int(p.notna().sum()))
    return [f"{FAMILY_NAMES.get(t, t)}, {n} test{'' if n == 1 else 's'}" for t, n in zip(frame["table"], sizes)]


def comparisons_shown(comp: pd.DataFrame, unit_of: dict, alpha: float) -> pd.DataFrame:
    """Welch tests on measured runs (compare_measured) for people."""
    from mobitrace.core import numbers

    return pd.DataFrame({
        "table": comp["table"], "policy": comp["policy"].map(POLICY_NAMES),
        "competing processes": comp["cpu_procs"], "cross traffic (%)": comp["cross_pct"],
        "n": comp["n"], "n (original)": comp["n_base"],
        "mean": comp["mean"], "mean (original)": comp["mean_base"], "unit": comp["table"].map(unit_of),
        "Δ / original (%)": 100 * comp["rel_diff"], "t": comp["t"], "df": comp["df"], "p": comp["p"],
        f"Hedges' g [{numbers.level(alpha)} CI]": [numbers.interval(g, lo, hi) for g, lo, hi in zip(comp["g"], comp["g_lo"], comp["g_hi"])],
        "p (Holm)": comp["p_holm"], "Holm significant": comp["reject_holm"].map({True: "yes", False: "no"}),
        "Holm family": holm_family(comp),
    })


def measured_grid(runs: pd.DataFrame, table: str) -> pd.DataFrame:
    """The paper's table layout from measured runs: mean/SD (n) per policy
    and condition."""
    t = runs[runs["table"] == table]
    if t.empty:
        return pd.DataFrame()
    s = cell_summary(t.dropna(subset=["metric"]))
    digits = 0 if table == "audio" else 2
    s["text"] = [f"{m:.{digits}f}/{sd:.{digits}f} ({n})" for m, sd, n in zip(s["mean"], s["sd"].fillna(0), s["n"])]
    grid = s.pivot(index="policy", columns=["cpu_procs", "cross_pct"], values="text")
    grid = grid.reindex(columns=sorted(grid.columns))
    grid.columns = [condition_label(c, x) for c, x in grid.columns]
    order = [p for p in POLICY_ORDER if p in grid.index]
    grid = grid.loc[order]
    grid.index = [POLICY_NAMES[p] for p in order]
    return grid.reset_index(names="policy")


def session_view(sessions: pd.DataFrame) -> pd.DataFrame:
    """The captures behind the measured results, one row per session."""
    import json

    conf = sessions["configuration"].map(json.loads)
    return pd.DataFrame({
        "device": sessions["device"], "session": sessions["session"],
        "capture sha256": sessions["capture_sha256"].str[:16],
        "files": sessions["files"], "MB": (sessions["bytes"] / 1e6).round(2),
        "runs ok": sessions["runs_ok"], "timeouts": sessions["runs_timeout"],
        "failed attempts": sessions["runs_failed_attempts"],
        "kernel": sessions["kernel"], "CPU": sessions["cpu_model"], "cores": sessions["cpu_count"],
        "file (bytes)": sessions["file_bytes"],
        "slow CPU": conf.map(lambda c: f"{c['slow_cpu']['quota_us']}/{c['slow_cpu']['period_us']} us "
                                       f"({c['slow_cpu']['mechanism'].split(' (')[0]})"),
        "reps": conf.map(lambda c: c["repetitions_per_cell"]),
        "background load (idle gate)": sessions["background_load"],
    })


def interval_rows(frame: pd.DataFrame, estimate: str = "mean", low: str = "ci_lo", high: str = "ci_hi") -> pd.DataFrame:
    """Long form of a table of estimates with intervals, for seaborn: three
    rows per estimate (low, estimate, high) in a column `value`, so that
    `sns.pointplot(..., estimator="median", errorbar=pba.extent)` draws the
    estimate with exactly its precomputed interval."""
    keep = [c for c in frame.columns if c not in (estimate, low, high)]
    parts = [frame[keep].assign(value=frame[c].astype(float), bound=c) for c in (low, estimate, high)]
    return pd.concat(parts, ignore_index=True)


def extent(values) -> tuple[float, float]:
    """An errorbar function for seaborn: the smallest and largest value."""
    values = np.asarray(values, float)
    return float(values.min()), float(values.max())


# ---------------------------------------------------------------------------
# Tables of the chapter built from the published and measured inputs.

TABLE_TITLES = {"cpu": "Transfer time (s) against competing CPU-bound processes",
                "net": "Transfer time (s) against cross traffic",
                "audio": "Audio send-time jitter SD (µs)"}
UNITS = {"cpu": "s", "net": "s", "audio": "µs"}
# The paper's tables (published names) and the capture kit's names for them.
KIT_TABLE_OF = {"transfer_cpu": "cpu", "transfer_net": "net", "audio_jitter": "audio"}


def published_means_both(stats: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """`published_means` of the CPU-load and the network-load tables, one
    after the other, with a column `load` naming the table."""
    return pd.concat([published_means(stats, t, alpha).assign(load=name)
                      for t, name in (("transfer_cpu", "CPU load"), ("transfer_net", "network load"))])


def audio_change(stats: pd.DataFrame) -> pd.DataFrame:
    """Per column of the paper's audio table, the change of the jitter SD of
    INCR and DECR against the original (policy - original, µs), with the
    column's conditions."""
    audio = stats[stats["table"] == "audio_jitter"]
    wide = audio.pivot(index="column", columns="policy", values="value")
    cols = audio.drop_duplicates("column").set_index("column")
    inc = pd.concat([(wide[p] - wide["original"]).rename(p) for p in ("incr", "decr")], axis=1)
    return inc.join(cols[["cpu_procs", "cross_pct"]])


def load_measured(interim_dir, devices) -> dict:
    """{device: (runs, sessions)} from data/interim/priority-boost/<device>/,
    without smoke sessions and their runs."""
    from pathlib import Path

    measured = {}
    for device in devices:
        folder = Path(interim_dir) / device
        runs = pd.read_parquet(folder / "runs.parquet")
        sessions = pd.read_parquet(folder / "sessions.parquet")
        sessions = sessions[~sessions["smoke"]]
        runs = runs[runs["session"].isin(sessions["session"])]
        measured[device] = (runs, sessions)
    return measured


def paired_view(pc: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The paired comparison (compare_paired) for people."""
    from mobitrace.core import numbers

    view = pc.assign(median_ratio=[numbers.interval(m, lo, hi) for m, lo, hi in
                                   zip(pc["median_ratio"], pc["median_ratio_lo"], pc["median_ratio_hi"])],
                     family=holm_family(pc, "p_wilcoxon"))
    view = view.drop(columns=["median_ratio_lo", "median_ratio_hi"])
    view = view.rename(columns={"cpu_procs": "competing processes", "cross_pct": "cross traffic (%)",
                                "median_ratio": f"median policy/original [{numbers.level(alpha)} CI]", "pairs_lower": "pairs faster",
                                "p_wilcoxon": "p (Wilcoxon)", "p_holm": "p (Holm)", "reject_holm": "Holm significant",
                                "family": "Holm family"})
    view["policy"] = view["policy"].map(POLICY_NAMES)
    view["Holm significant"] = view["Holm significant"].map({True: "yes", False: "no"})
    return view


def run_conditions(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Did each run get its conditions? Per table, condition and policy: runs,
    timeouts, mean fraction of link-up time, mean renices, lowest nice, mean
    cross traffic achieved (Mbps), mean CPU throttling (s), mean audio send
    errors and refused sends. Returns (table, table for people)."""
    q = runs.groupby(["table", "cpu_procs", "cross_pct", "policy"]).agg(
        runs=("run_id", "count"), timeouts=("status", lambda s: int((s == "timeout").sum())),
        link_up=("link_up_fraction", "mean"), renices=("renices", "mean"), min_nice=("min_nice", "min"),
        cross_mbps=("cross_offered_bps", lambda s: s.mean() / 1e6),
        throttled_s=("throttled_ms", lambda s: s.mean() / 1e3),
        audio_send_errors=("send_errors", lambda s: float(s.astype(float).mean())),
        audio_refused=("send_refused", lambda s: float(s.astype(float).mean())),
    ).reset_index()
    q["policy"] = q["policy"].map(POLICY_NAMES)
    shown = q.rename(columns={"cpu_procs": "competing processes", "cross_pct": "cross traffic (%)",
                              "link_up": "link up (fraction)", "renices": "renices per run", "min_nice": "lowest nice",
                              "cross_mbps": "cross traffic (Mbps)", "throttled_s": "CPU throttled (s)",
                              "audio_send_errors": "audio send errors", "audio_refused": "audio sends refused"})
    return q, shown


def refused_sends(runs: pd.DataFrame) -> dict:
    """Runs whose audio sends were refused (ECONNREFUSED): the cells they are
    in ("none" if there are none) and the most refused sends in one run."""
    refused = runs[runs["send_refused"].fillna(0) > 0]
    return {"m_refused_cells": ", ".join(sorted(refused["cell"].unique())) or "none",
            "m_refused_max": int(refused["send_refused"].max()) if len(refused) else 0}


def missing_cells(runs: pd.DataFrame, stats: pd.DataFrame) -> list[str]:
    """The cells of the paper's tables that a capture has no runs for, as
    "<table> <procs> proc/<cross>%", in the paper's order."""
    have = set(zip(runs["table"], runs["cpu_procs"], runs["cross_pct"]))
    want = stats[stats["table"].isin(KIT_TABLE_OF)].drop_duplicates(["table", "cpu_procs", "cross_pct"])
    return [f"{KIT_TABLE_OF[r.table]} {r.cpu_procs} proc/{r.cross_pct}%" for r in want.itertuples()
            if (KIT_TABLE_OF[r.table], r.cpu_procs, r.cross_pct) not in have]
