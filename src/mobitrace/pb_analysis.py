"""Analyses of the priority-boost chapter: the audit of the published tables
(Welch from reported mean/SD/n, rounding ranges, Hedges' g, Holm) and the
same tests on measured per-run samples."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import welch as w

CONDITIONS = ["cpu_procs", "cross_pct"]


def table_precision(cells: pd.DataFrame) -> dict:
    """Digits after the point each statistic is printed with in most cells of
    a table (e.g. 1 for means, 2 for SDs): the precision a printed "81" or
    "0" is read with when trailing zeros are taken to have been dropped."""
    return {s: int(g["decimals"].mode().max()) for s, g in cells.groupby("statistic")}


def audit_published(stats: pd.DataFrame, table: str, p_table: str | None, baseline: str = "original",
                    alpha: float = 0.05, level: float = 0.95, grid: int = 21) -> pd.DataFrame:
    """Every policy-versus-baseline comparison of a mean/SD table: the
    recomputed Welch test, the range of p over the rounding intervals (as
    printed, and at the table's precision), the published p where there is
    one and whether it lies in the range, Hedges' g with its interval, and
    Holm's correction over the comparisons of the table."""
    from .published import mean_sd_table

    cells = stats[stats["table"] == table]
    prec = table_precision(cells)
    wide = mean_sd_table(stats, table)
    base = wide[wide["policy"] == baseline].set_index("column")
    pubp = stats[stats["table"] == p_table].set_index(["policy", "column"]) if p_table else None
    rows = []
    for r in wide[wide["policy"] != baseline].sort_values(["column", "policy"]).itertuples(index=False):
        b = base.loc[r.column]
        t = w.welch_from_stats(r.mean, r.sd, r.n, b["mean"], b["sd"], b["n"])
        g, glo, ghi = w.hedges_g(r.mean, r.sd, r.n, b["mean"], b["sd"], b["n"], level)
        lo_p, hi_p = w.p_range(r.mean, r.mean_decimals, r.sd, r.sd_decimals, r.n,
                               b["mean"], b["mean_decimals"], b["sd"], b["sd_decimals"], b["n"], grid)
        lo_t, hi_t = w.p_range(r.mean, max(r.mean_decimals, prec["mean"]), r.sd, max(r.sd_decimals, prec["sd"]),
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
                       in_range_table=w.p_consistent(q["relation"], q["value"], q["decimals"], lo_t, hi_t),
                       in_range_printed=w.p_consistent(q["relation"], q["value"], q["decimals"], lo_p, hi_p))
        rows.append(row)
    out = pd.DataFrame(rows)
    reject, adj = w.holm(out["p"].to_numpy(), alpha)
    out["p_holm"], out["reject_holm"] = adj, reject
    out["reject_unadjusted"] = out["p"] < alpha
    if p_table:
        pub = out["p_published"].to_numpy()
        rej, adjp = w.holm(pub, alpha)
        out["p_published_holm"], out["reject_published_holm"] = adjp, rej
    return out


def cell_summary(runs: pd.DataFrame, value: str = "metric") -> pd.DataFrame:
    """Mean, SD (ddof=1) and n of a per-run value per table, condition and policy."""
    keys = ["table", *CONDITIONS, "policy"]
    g = runs.groupby(keys)[value]
    out = g.agg(mean="mean", sd=lambda s: s.std(ddof=1), n="count").reset_index()
    return out


def compare_measured(runs: pd.DataFrame, baseline: str = "original", value: str = "metric",
                     alpha: float = 0.05, level: float = 0.95) -> pd.DataFrame:
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
                t = w.welch_samples(x, base)
                g, glo, ghi = w.hedges_g_samples(x, base, level)
                row.update(t=t.t, df=t.df, p=t.p, g=g, g_lo=glo, g_hi=ghi)
            else:
                row.update(t=np.nan, df=np.nan, p=np.nan, g=np.nan, g_lo=np.nan, g_hi=np.nan)
            rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["p_holm"], out["reject_holm"] = np.nan, False
    for table, idx in out.groupby("table").groups.items():
        reject, adj = w.holm(out.loc[idx, "p"].to_numpy(), alpha)
        out.loc[idx, "p_holm"], out.loc[idx, "reject_holm"] = adj, reject
    out["reject_holm"] = out["reject_holm"].astype(bool)
    out["reject_unadjusted"] = out["p"] < alpha
    return out


def compare_paired(runs: pd.DataFrame, baseline: str = "original", value: str = "metric",
                   alpha: float = 0.05) -> pd.DataFrame:
    """Supplementary paired comparison: every repetition of a cell uses the
    same on/off link schedule (seed) for all policies, so runs can be paired
    by (session, rep). Per policy and condition: the number of pairs, the
    median of policy/original per pair, and the two-sided Wilcoxon
    signed-rank p of the paired differences (scipy.stats.wilcoxon; Wilcoxon,
    Biometrics Bulletin 1 (1945) 80-83), with Holm over each table.
    """
    from scipy import stats as st

    rows = []
    keys = ["table", *CONDITIONS]
    for (table, cpu, cross), grp in runs.groupby(keys):
        base = grp[grp["policy"] == baseline].set_index(["session", "rep"])[value]
        for policy, sub in grp[grp["policy"] != baseline].groupby("policy"):
            pair = pd.concat([sub.set_index(["session", "rep"])[value].rename("x"), base.rename("b")],
                             axis=1, join="inner").dropna()
            d = pair["x"] - pair["b"]
            p = np.nan
            if len(d) >= 2 and (d != 0).any():
                p = float(st.wilcoxon(pair["x"], pair["b"]).pvalue)
            rows.append({"table": table, "cpu_procs": cpu, "cross_pct": cross, "policy": policy,
                         "pairs": len(d), "median_ratio": float((pair["x"] / pair["b"]).median()) if len(d) else np.nan,
                         "pairs_lower": int((d < 0).sum()), "p_wilcoxon": p})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["p_holm"], out["reject_holm"] = np.nan, False
    for table, idx in out.groupby("table").groups.items():
        reject, adj = w.holm(out.loc[idx, "p_wilcoxon"].to_numpy(), alpha)
        out.loc[idx, "p_holm"], out.loc[idx, "reject_holm"] = adj, reject
    out["reject_holm"] = out["reject_holm"].astype(bool)
    return out
