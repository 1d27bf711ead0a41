"""The mptcp-dualband chapter's claims: their ids per device, the paper's
values against the measured and modeled ones, their intervals, and the
chapter's metrics. The tables and values they read are made in
mobitrace.studies.mptcp_dualband.analysis."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from mobitrace.core import claims as cl
from mobitrace.core.numbers import metric
from mobitrace.studies.mptcp_dualband import schema as sc
from mobitrace.studies.mptcp_dualband.analysis import (
    PAPER_ENERGY_OPT, Comparisons, Runs, backup_diff_pct, backup_runs, backup_table, comparisons, gro_gain_pct,
    guideline_table, mptcp_runs, pair, power_table, sweep_summary, uplink_power_change, validated,
)
from mobitrace.studies.mptcp_dualband.ratios import optima
from mobitrace.studies.mptcp_dualband.schema import DIRECTIONS

@dataclass
class Tolerances:
    """params.yaml's claim tolerances: "x" within rel_equal, "~x" within
    rel_approx, a ratio (% on path a) within ratio_pp percentage points; a
    demand counts as met at satisfied_frac of it; intervals are
    100(1 - alpha)%."""
    rel_equal: float
    rel_approx: float
    ratio_pp: float
    satisfied_frac: float
    alpha: float


def _short(direction: str) -> str:
    return "dl" if direction == "downlink" else "ul"


def device_key(device: str) -> str:
    """A device name as it ends a claim id (vm-veth-2path -> vm_veth_2path)."""
    return device.replace("-", "_")


def claim_id(base: str, device: str) -> str:
    """The id of claim `base` checked on `device`: each device's claims are its own rows of the ledger."""
    return f"{base}_{device_key(device)}"


# The throughput-optimal ratio follows from the two path rates, which our htb
# shaping sets to the paper's (data/published/claim-categories.yaml).
TESTBED_RATIO = ("measured ratio sweep, backlogged, over paths shaped to the paper's rates "
                 "(the optimum follows from the shaped rates)")


def shared_claims(values, gl: pd.DataFrame) -> cl.Claims:
    """The claims that no device's data decide (arithmetic on the paper's
    own numbers and rules): checked once, on the guideline table `gl` of
    the reference device, whose path rates are the paper's."""
    v = values
    claims = cl.Claims(sc.STUDY)
    dl_ad, dl_ac, ul_ad = v("sptcp_dl_ad"), v("sptcp_dl_ac"), v("sptcp_ul_ad")
    dl_opt = v("ratio_dl_tput_opt")
    claims.add("tput_opt_ratio_arith_dl", f"Downlink throughput-optimal ratio = ratio of the single-path throughputs, "
               f"{pair(dl_opt)}", location="§3.2", relation="=", paper=dl_opt,
               artifact=100 * dl_ad / (dl_ad + dl_ac), unit="%", basis=f"arithmetic {dl_ad:g} / ({dl_ad:g} + {dl_ac:g})",
               provenance="published", section="mptcp-dualband-fig4-7", abs_tol=1.0)
    for d, dem_id, vid in PAPER_ENERGY_OPT:
        dem, ratio = v(dem_id), v(vid)
        gl_row = gl[(gl["direction"] == d) & (gl["demand"] == float(dem))]
        claims.add(f"{_short(d)}_{dem:g}_guideline", f"Guideline (Fig. 9 rules) gives {pair(ratio)} for {d} "
                   f"{dem:g} Mbps", location="§4.2; Fig. 9", relation="=", paper=ratio,
                   artifact=float(gl_row["guideline_ratio"].iloc[0]) if len(gl_row) else None, unit="%",
                   basis=f"guideline_ratio(demand, {dl_ad:g}|{ul_ad:g}, {dl_ac:g}) (arithmetic on published rules)",
                   provenance="published", section="mptcp-dualband-methods#mptcp-dualband-guideline", abs_tol=1.0)
    return claims


class _DeviceClaims(cl.Claims):
    """Claims of one device: each id ends with the device (claim_id), each
    basis starts with it."""

    def __init__(self, device: str, alpha: float):
        super().__init__(sc.STUDY, alpha=alpha)
        self.device = device

    def add(self, cid: str, text: str, **kwargs) -> str:
        kwargs["basis"] = f"on {self.device}: {kwargs['basis']}"
        return super().add(claim_id(cid, self.device), text, **kwargs)


def chapter_claims(values, c: Comparisons, opt: pd.DataFrame, r1: pd.DataFrame, gro_gain: float,
                   cdf: pd.DataFrame, ul_excess: float, bk_diff: float,
                   tol: Tolerances, device: str) -> cl.Claims:
    """The claims checked on one device: each paper value (from `values`,
    mobitrace.core.published.Values) against that device's, with its
    tolerance; ids end with the device (claim_id)."""
    v = values
    claims = _DeviceClaims(device, tol.alpha)
    o = opt.astype({"direction": object}).set_index(["direction", "demand"])  # object keys: 5x cheaper to index than str
    dl_ad, dl_ac, ul_ad = v("sptcp_dl_ad"), v("sptcp_dl_ac"), v("sptcp_ul_ad")
    dl_opt, ul_opt, ul_eopt = v("ratio_dl_tput_opt"), v("ul_tput_opt_ratio"), v("ul_energy_opt_ratio")
    claims.add("tput_opt_ratio_dl", f"Downlink throughput-optimal ratio is {pair(dl_opt)} (rate ratio "
               f"{dl_ad:g}:{dl_ac:g})", location="§3.2", relation="=", paper=dl_opt,
               artifact=float(o.loc[("downlink", 0.0), "tput_opt_ratio"]), unit="%",
               basis=TESTBED_RATIO, provenance="measured", section="mptcp-dualband-fig4-7",
               abs_tol=tol.ratio_pp)
    claims.add("tput_opt_ratio_ul", f"Uplink throughput-optimal ratio is {pair(ul_opt)} (rate ratio "
               f"{ul_ad:g}:{v('sptcp_ul_ac'):g})", location="§3.2; §4.2", relation="=", paper=ul_opt,
               artifact=c.ul_t, unit="%", basis=TESTBED_RATIO, provenance="measured",
               section="mptcp-dualband-fig4-7", abs_tol=tol.ratio_pp)
    for d, vid in (("downlink", "expected_dl"), ("uplink", "expected_ul")):
        claims.add(f"mptcp_sum_{d}", f"Backlogged MPTCP reaches the sum of the two paths ({d}, about {v(vid):g} Mbps)",
                   location="§3.2", relation="~", paper=v(vid), artifact=float(r1.loc[d, "total"]), unit="Mbps",
                   basis="measured mean of backlogged MPTCP runs over paths shaped to the "
                         "paper's rates, so the sum is set by our shaping",
                   provenance="measured", section="mptcp-dualband-fig1", rel_tol=tol.rel_approx)
    cdf_median = float(cdf.set_index("configuration").loc["GRO on (default)", "median_gbps"])
    for cid, text, where, vid, art, unit, basis, prov, section, tolerance in (
            ("gro_gain", f"GRO on the 802.11ac interface improves downlink MPTCP throughput by {v('gro_gain_pct'):g}%",
             "§3.3", "gro_gain_pct", gro_gain, "%", "median GRO on vs GRO off on path b (veth; receiver not CPU-bound)",
             "measured", "mptcp-dualband-fig1", {"abs_tol": 5.0}),
            ("cdf_default_median", f"Median downlink MPTCP throughput with GRO on is {v('cdf_default_median'):g} Gbps",
             "§3.4", "cdf_default_median", cdf_median, "Gbps",
             "measured CDF of the backlogged downlink MPTCP runs; here bounded by the htb "
             "paths shaped to the paper's rates, not by the CPU",
             "measured", "mptcp-dualband-devices", {"rel_tol": tol.rel_equal}),
            ("ul_power_excess", f"Uplink power is {v('ul_power_excess'):g}% above downlink power (backlogged MPTCP)",
             "§4.1", "ul_power_excess", ul_excess, "%", "modeled radio + CPU power at the measured rates", "modeled",
             "mptcp-dualband-methods#mptcp-dualband-power", {"rel_tol": 0.2})):
        claims.add(cid, text, location=where, relation="=", paper=v(vid), artifact=float(art), unit=unit, basis=basis,
                   provenance=prov, section=section, **tolerance)
    claims.add("dl_tput_opt_is_energy_opt", f"Downlink: the throughput-optimal ratio ({pair(dl_opt)}) is also the "
               "energy-optimal two-path ratio", location="§4.2", relation="=", paper=dl_opt, artifact=c.dl_ratio,
               unit="%", basis="modeled nJ/bit over the measured two-path ratios", provenance="modeled",
               section="mptcp-dualband-fig4-7", abs_tol=tol.ratio_pp)
    claims.add("dl_tput_gain", f"Downlink: the right two-path ratio gives {v('dl_tput_gain_pct'):g}% more throughput "
               f"than {pair(c.dl_against)}", location="§4.2", relation="=", paper=v("dl_tput_gain_pct"),
               artifact=float(c.dl_tput_gain), unit="%",
               basis=f"measured, throughput-optimal ratio {c.dl_t:g} vs {c.dl_against:g}; the gain "
                     "follows from the path rates our shaping sets", provenance="measured",
               section="mptcp-dualband-fig4-7", abs_tol=5.0)
    claims.add("dl_energy_cost", f"Downlink: that ratio costs only {v('dl_energy_cost_pct'):g}% more energy per bit "
               f"than {pair(c.dl_against)}", location="§4.2",
               relation="=", paper=v("dl_energy_cost_pct"), artifact=float(c.dl_energy_cost), unit="%",
               basis=f"modeled nJ/bit, ratio {c.dl_t:g} vs {c.dl_against:g}", provenance="modeled",
               section="mptcp-dualband-fig4-7", abs_tol=2.0)
    claims.add("ul_energy_opt", f"Uplink energy-optimal ratio is {pair(ul_eopt)} (among two-path ratios)",
               location="§4.2", relation="=", paper=ul_eopt, artifact=c.ul_e, unit="%",
               basis="modeled nJ/bit over the measured two-path ratios", provenance="modeled",
               section="mptcp-dualband-fig4-7", abs_tol=tol.ratio_pp)
    claims.add("ul_tput_gain", f"Uplink: {pair(c.ul_a)} gives {v('ul_tput_gain_pct'):g}% more throughput than "
               f"{pair(c.ul_b)}", location="§4.2", relation="=", paper=v("ul_tput_gain_pct"),
               artifact=float(c.ul_tput_gain), unit="%",
               basis="measured; the gain follows from the path rates our shaping sets",
               provenance="measured", section="mptcp-dualband-fig4-7", abs_tol=5.0)
    claims.add("ul_energy_cost", f"Uplink: {pair(c.ul_a)} costs {v('ul_energy_cost_pct'):g}% more energy per bit "
               f"than {pair(c.ul_b)}", location="§4.2",
               relation="=", paper=v("ul_energy_cost_pct"), artifact=float(c.ul_energy_cost), unit="%",
               basis=f"modeled nJ/bit, {c.ul_a:g} vs {c.ul_b:g}", provenance="modeled", section="mptcp-dualband-fig4-7",
               abs_tol=3.0)
    for d, dem_id, vid in PAPER_ENERGY_OPT:
        dem, ratio = v(dem_id), v(vid)
        key = (d, float(dem))
        art = float(o.loc[key, "energy_opt_satisfying_ratio"]) if key in o.index else None
        claims.add(f"{_short(d)}_{dem:g}_energy_opt", f"{d.capitalize()}, {dem:g} Mbps: energy-optimal ratio "
                   f"{pair(ratio)}", location="§4.2", relation="=", paper=ratio, artifact=art, unit="%",
                   basis=f"modeled nJ/bit over measured ratios meeting >= {tol.satisfied_frac:.0%} of the demand",
                   provenance="modeled", section="mptcp-dualband-fig4-7", abs_tol=tol.ratio_pp)
    claims.add("backup_similar", "Backup mode and a 0-packet ratio draw very similar power", location="§4.2, Fig. 8",
               relation="~", paper=v("backup_power_diff_pct"), artifact=bk_diff, unit="%",
               basis="largest modeled power difference between the two modes (measured per-path bytes)",
               provenance="modeled", section="mptcp-dualband-devices", abs_tol=5.0)
    claims.add("sirq_big_cores", f"Steering SoftIRQs to big cores raises the median to {v('cdf_affinity_median'):g} Gbps",
               location="§3.4", relation="=", paper=v("cdf_affinity_median"), artifact=None, unit="Gbps",
               basis="not checkable: the host's cores are identical (no big/LITTLE)", provenance="measured",
               section="mptcp-dualband-devices")
    return claims


def modeled_at(r: Runs, values, tol: Tolerances) -> dict:
    """The one path from the priced runs `r` to the modeled quantities the
    claims compare: the ratio sweep's summary and optima, the paper's ratio
    comparisons, the backlogged MPTCP runs and their power table, the uplink
    power change, the guideline table and the backup-mode table and largest
    difference. The chapter calls it with the assumed coefficients; the
    robustness analysis (:func:`claims_at`) with others."""
    ref_energy = r.ref_energy()
    summary = sweep_summary(ref_energy)
    opt = optima(summary, tol.satisfied_frac)
    mp = mptcp_runs(r)
    pw = power_table(mp)
    bk_sum = backup_table(backup_runs(ref_energy))
    return {"summary": summary, "opt": opt, "cmp": comparisons(summary, opt, values), "mp": mp, "pw": pw,
            "ul_excess": uplink_power_change(pw, r.ref),
            "gl": guideline_table(summary, opt, r.rates_paper, tol.satisfied_frac), "bk_sum": bk_sum,
            "bk_diff": backup_diff_pct(bk_sum)}


@dataclass
class Measured:
    """What one device's claims take besides the modeled quantities: its
    Figure 1 rows (fig1_ref) and its downlink CDF summary (cdf_table)."""
    r1: pd.DataFrame
    cdf: pd.DataFrame


def claims_at(m: dict[str, dict], values, measured: dict[str, Measured], tol: Tolerances,
              intervals: dict | None = None) -> pd.DataFrame:
    """The claims table, the shared claims first, then each device's (in
    the order of `m`, the reference device first) from its modeled
    quantities `m[device]` (:func:`modeled_at`) and its measured tables
    `measured[device]`; each verdict decided on its interval in `intervals`
    (:func:`claim_intervals`) where it has one."""
    first = next(iter(m))
    frames = [shared_claims(values, m[first]["gl"]).frame(intervals)]
    for device, md in m.items():
        r1, cdf = measured[device].r1, measured[device].cdf
        frames.append(chapter_claims(values, md["cmp"], md["opt"], r1, gro_gain_pct(cdf), cdf, md["ul_excess"],
                                     md["bk_diff"], tol, device).frame(intervals))
    return cl.claims_frame(pd.concat(frames, ignore_index=True).to_dict("records"))


def claim_intervals(oci: pd.DataFrame, r1: pd.DataFrame, cis: dict, device: str) -> dict[str, tuple]:
    """The 100(1 - alpha)% interval of each of `device`'s claims (claim_id) where it has
    one: bootstrap for ratios, comparisons and the GRO gain, Student-t for
    the MPTCP means."""
    return {claim_id(k, device): v for k, v in _intervals(oci, r1, cis).items()}


def _intervals(oci: pd.DataFrame, r1: pd.DataFrame, cis: dict) -> dict[str, tuple]:
    o_ci = oci.set_index(["direction", "demand"])

    def pair(key, col):
        return tuple(o_ci.loc[key, [f"{col}_low", f"{col}_high"]])

    return {
        "gro_gain": cis["gro_gain"],
        "tput_opt_ratio_dl": pair(("downlink", 0.0), "tput_opt_ratio"),
        "tput_opt_ratio_ul": pair(("uplink", 0.0), "tput_opt_ratio"),
        "mptcp_sum_downlink": tuple(r1.loc["downlink", ["total_ci_low", "total_ci_high"]]),
        "mptcp_sum_uplink": tuple(r1.loc["uplink", ["total_ci_low", "total_ci_high"]]),
        "ul_power_excess": cis["ul_power_excess"],
        "dl_tput_opt_is_energy_opt": pair(("downlink", 0.0), "energy_opt_both_ratio"),
        "ul_energy_opt": pair(("uplink", 0.0), "energy_opt_both_ratio"),
        **{k: cis[k] for k in ("dl_tput_gain", "dl_energy_cost", "ul_tput_gain", "ul_energy_cost")},
        **{f"{_short(d)}_{m:g}_energy_opt": pair((d, m), "energy_opt_satisfying_ratio")
           for d, m in o_ci.index if m > 0},
    }




def device_metrics(r: Runs, r1: pd.DataFrame, cdf: pd.DataFrame, c: Comparisons, gl: pd.DataFrame) -> dict:
    """One device's key numbers for metrics.json (rounded, mobitrace.core.numbers.metric)."""
    return {
        "scale": r.scale,
        "runs": int(len(r.ref_runs)),
        "mptcp_mbps": {d: metric(r1.loc[d, "total"]) for d in DIRECTIONS},
        "cdf_median_gbps": {k: metric(x) for k, x in cdf.set_index("configuration")["median_gbps"].items()},
        "backlogged": {"dl_tput_opt_ratio": metric(c.dl_t), "dl_energy_opt_both_ratio": metric(c.dl_ratio),
                       "ul_tput_opt_ratio": metric(c.ul_t), "ul_energy_opt_both_ratio": metric(c.ul_e),
                       "dl_tput_gain_pct": metric(c.dl_tput_gain), "dl_energy_cost_pct": metric(c.dl_energy_cost)},
        "guideline_max_excess_energy_pct": metric(gl["excess_energy_pct"].max()),
    }


def metrics(ref: str, per_device: dict[str, dict], claims_table: pd.DataFrame) -> dict:
    """metrics.json: the reference device's key numbers (device_metrics) at
    the top, every device's under "devices", and the claims per verdict."""
    return {"reference_device": ref, **per_device[ref], "devices": per_device,
            "claims": cl.keyed(cl.verdict_counts(claims_table))}


def comparison_table(rows: dict[str, dict]) -> pd.DataFrame:
    """The cross-device comparison, one row per device: `rows[device]` holds
    its runs used, its Figure 1 rows (r1), optima with intervals (opt, oci),
    comparisons and their intervals (cmp, cis) and claims (a claims frame)."""
    out = []
    for device, x in rows.items():
        o = x["opt"].merge(x["oci"], on=["direction", "demand"]).set_index(["direction", "demand"])
        dl, ul = o.loc[("downlink", 0.0)], o.loc[("uplink", 0.0)]
        counts = cl.counted_as(x["claims"]).value_counts()
        out.append({"device": device, "runs": int(x["runs"]),
                    "dl_mptcp_mbps": float(x["r1"].loc["downlink", "total"]),
                    "ul_mptcp_mbps": float(x["r1"].loc["uplink", "total"]),
                    "dl_tput_opt_ratio": float(dl["tput_opt_ratio"]),
                    "dl_tput_opt_ratio_low": float(dl["tput_opt_ratio_low"]),
                    "dl_tput_opt_ratio_high": float(dl["tput_opt_ratio_high"]),
                    "ul_energy_opt_both_ratio": float(ul["energy_opt_both_ratio"]),
                    "dl_tput_gain_pct": float(x["cmp"].dl_tput_gain), "dl_tput_gain_low": x["cis"]["dl_tput_gain"][0],
                    "dl_tput_gain_high": x["cis"]["dl_tput_gain"][1],
                    "dl_energy_cost_pct": float(x["cmp"].dl_energy_cost),
                    "dl_energy_cost_low": x["cis"]["dl_energy_cost"][0],
                    "dl_energy_cost_high": x["cis"]["dl_energy_cost"][1],
                    "claims_reproduced": int(counts.get(cl.REPRODUCED, 0)),
                    "claims_not_reproduced": int(counts.get(cl.NOT_REPRODUCED, 0)),
                    "claims_inconclusive": int(counts.get(cl.INCONCLUSIVE, 0))})
    return validated(pd.DataFrame(out), "device_comparison")


# The radio model's assumptions that the paper does not state (it gives only
# backlogged powers): idle power 0 and power linear in the load. A wake-up
# floor f > 0 departs from both.
FLOOR_ASSUMPTION = "the radio floor (idle 0 and linearity assumed)"


def floor_labels(claims: pd.DataFrame, floor_wide: pd.DataFrame, tol: Tolerances, device: str) -> dict[str, str]:
    """Robustness of the energy-optimal-ratio claims at a demand to the
    radio model's assumptions: each claim's verdict recomputed
    (mobitrace.core.claims.decide) from `floor_wide` (:func:`floor_table`) at
    every floor f; {claim_id: "depends on the radio floor ... (f = ...)"}
    for the claims whose verdict changes at some f > 0."""
    by_key = {claim_id(f"{_short(d)}_{dem:g}_energy_opt", device): row for (d, dem), row in
              floor_wide.set_index(["direction", "demand"]).iterrows() if dem > 0}
    labels = {}
    for c in claims.itertuples():
        row = by_key.get(c.claim_id)
        if row is None or c.verdict == cl.NOT_CHECKABLE:
            continue
        at = {col: cl.decide("=", c.paper_value, float(x), abs_tol=tol.ratio_pp).verdict
              for col, x in row.items() if pd.notna(x)}
        base = at.pop("f = 0", None)
        flips = [col for col, v in at.items() if v != base]
        if flips:
            labels[c.claim_id] = f"{cl.DEPENDS}{FLOOR_ASSUMPTION} ({', '.join(flips)})"
    return labels
