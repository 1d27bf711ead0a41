"""The cpu-gbps-measured chapter's claims: their ids per device, the paper's
values against each device's measured ones with the rule that decides them,
the capture notes they carry, the headline and the chapter's metrics.
Tables and prose are in mobitrace.studies.cpu_gbps.chapter_measured."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mobitrace.core import claims as cl
from mobitrace.core import numbers
from mobitrace.core.capture_reader import NOT_MEASURED
from mobitrace.core.numbers import as_printed, metric
from mobitrace.stats import cpufit
from mobitrace.stats.intervals import mean_ci
from mobitrace.studies.cpu_gbps.device_analysis import beyond_range, beyond_text
from mobitrace.studies.cpu_gbps.measured_analysis import anchor_of, claim_key, fit_of, max_runs

# "Almost identical" / "reached at every frequency" (§3.2) read as a ratio of about 1.
SAME_RATIO = 1.0


def paper_gro_ratio(values) -> float:
    """GRO-off / GRO-on throughput as the paper states them (§3.3.1)."""
    return values("rog_gro_off_tput") / (values("rog_gro_on_tput") * 1000)


LINEAR_SOURCES = ("stat_total", "stat_softirq", "precise_total")


def linear_claim_id(source: str, device: str) -> str:
    return f"measured_linear_{source}_{claim_key(device)}"


def under_claim_id(device: str) -> str:
    return f"measured_1p6gbps_under_50pct_{claim_key(device)}"


def device_claim_ids(device: str) -> list[str]:
    """The ids of the claims checked on one device (its page shows them)."""
    return [*(linear_claim_id(s, device) for s in LINEAR_SOURCES), under_claim_id(device)]


def measured_claims(values, data: dict, comparisons: dict, p: dict) -> tuple[pd.DataFrame, dict]:
    """The measured chapter's claims (Claims, study "cpu-gbps") and the 95%
    intervals of their artifact values. `values`: the paper's stated numbers
    (Values); `data`: runs, fits, extra; `comparisons`: gro, rps, slow
    (measured_analysis.compare frames, empty when not captured); `p`: the
    chapter's parameters (devices, reference_device, offloads_off_device,
    rps_devices, slow_device, alpha, linear_r2_min, sharp_drop_max_ratio,
    rel_tol_approx). Paper values: the §3.2 bound on the Pixel 2's CPU at
    1.6 Gbps, the smaller §3.1 SoftIRQ share (8.1 of 17.1%), the §3.3.1
    GRO ratio and the §3.3.2 gain, all from `values`."""
    runs, fits, extra = data["runs"], data["fits"], data["extra"]
    gro, rps, slow = comparisons["gro"], comparisons["rps"], comparisons["slow"]
    claims, intervals = cl.Claims("cpu-gbps", alpha=p["alpha"]), {}

    def add(claim_id, text, location, relation, paper, artifact, unit, basis, provenance, **kw):
        claims.add(claim_id, text, location=location, relation=relation, paper=paper, artifact=artifact,
                   unit=unit, basis=basis, provenance=provenance, section=anchor_of(claim_id), **kw)

    r2_min, alpha = p["linear_r2_min"], p["alpha"]
    cpu_bound = values.row("pixel2_cpu_at_1p6")
    for device in p["devices"]:
        for source, name, src_text in (("stat_total", "Total", "/proc/stat Total"),
                                       ("stat_softirq", "SoftIRQ", "/proc/stat SoftIRQ"),
                                       ("precise_total", "Total (precise source)", "precise Total")):
            f = fit_of(fits, device, "down", source)
            claim_id = linear_claim_id(source, device)
            add(claim_id, f"{name} CPU grows linearly with throughput (Fig. 1), on {device}, downlink",
                "§3.2, Fig. 1", ">=", r2_min, float(f["r2"]), "R^2",
                f"OLS of {src_text} on throughput, {int(f['n'])} runs; the paper gives no R^2, "
                f"'linear' is read as R^2 >= {r2_min:g}", "modeled")
            intervals[claim_id] = cpufit.r2_ci(float(f["r2"]), int(f["n"]), float(f["slope"]), alpha)
        e = extra[(extra["device"] == device) & (extra["direction"] == "down") & (extra["source"] == "stat_total")]
        at = e.loc[np.isclose(e["target_gbps"], cpu_bound["throughput_gbps"])].iloc[0]
        claim_id = under_claim_id(device)
        # A rate above what the device reached is read off the line, not measured: the claim says so.
        saturation = float(fit_of(fits, device, "down", "stat_total")["saturation_gbps"])
        beyond = (f" ({beyond_text(saturation)})" if beyond_range(float(at["target_gbps"]), saturation) else "")
        add(claim_id, f"{as_printed(cpu_bound['throughput_gbps'])} Gbps can be supported with less than "
            f"{as_printed(cpu_bound['value'])}% CPU (said of the Pixel 2), on {device}{beyond}",
            cpu_bound["location"], cpu_bound["relation"], float(cpu_bound["value"]), float(at["cpu_pct"]), "%",
            f"/proc/stat Total line at {as_printed(cpu_bound['throughput_gbps'])} Gbps, downlink", "modeled")
        intervals[claim_id] = (float(at["mean_ci_lo"]), float(at["mean_ci_hi"]))

    ref, off = p["reference_device"], p["offloads_off_device"]
    ref_max = max_runs(runs, ref, "down")
    if not ref_max.empty:
        shares = ref_max["stat_all_softirq_pct"] / ref_max["stat_all_total_pct"]
        v = values
        rog_share = v("rog_baseline_sirq") / v("rog_baseline_cpu")
        add("measured_sirq_significant_share",
            "SoftIRQs account for a significant portion of Total CPU at the maximum throughput "
            f"(ROG Phone: {as_printed(v('rog_baseline_sirq'))} of {as_printed(v('rog_baseline_cpu'))}%, "
            f"a share of {rog_share:.2f}; Pixel 2: {as_printed(v('pixel2_baseline_sirq'))} of "
            f"{as_printed(v('pixel2_baseline_cpu'))}%)",
            v.row("rog_baseline_sirq")["location"], ">=", round(rog_share, 6), float(shares.mean()), "ratio",
            f"/proc/stat SoftIRQ / Total at the unlimited rate, {ref}, downlink; "
            "bound: at least the smaller published share", "measured")
        intervals["measured_sirq_significant_share"] = mean_ci(shares, alpha)[1:]
    if not gro.empty:
        d = gro.set_index("direction").loc["down"]
        paper_ratio = paper_gro_ratio(values)
        off_row, on_row = values.row("rog_gro_off_tput"), values.row("rog_gro_on_tput")
        add("measured_gro_off_ratio",
            f"With GRO off the throughput falls from {as_printed(on_row['value'])} {on_row['unit']} to "
            f"{as_printed(off_row['value'])} {off_row['unit']} (ratio {paper_ratio:.2f})",
            off_row["location"], "~", round(paper_ratio, 6), float(d["ratio_b_over_a"]), "ratio",
            f"{off} / {ref} downlink throughput at the unlimited rate "
            "(GRO, GSO and TSO off on both veth ends)", "measured", rel_tol=p["rel_tol_approx"])
        add("measured_gro_off_sharp_drop",
            "GSO/GRO optimizations are extremely critical for multi-Gbps rates (a sharp drop without them)",
            f"{off_row['location']} Remark", "<=", p["sharp_drop_max_ratio"], float(d["ratio_b_over_a"]), "ratio",
            f"same ratio; 'sharp drop' read as at most {p['sharp_drop_max_ratio']:g} of the offloads-on throughput",
            "measured")
        intervals["measured_gro_off_ratio"] = intervals["measured_gro_off_sharp_drop"] = (d["ratio_lo"],
                                                                                            d["ratio_hi"])
    rps_devices = p["rps_devices"]
    if not rps.empty:
        d = rps.set_index("direction").loc["down"]
        flipped = d["ratio_b_over_a"] < 1
        gain = values.row("rog_affinity_gain")
        add("measured_affinity_4x",
            f"Choosing the CPU that does SoftIRQ processing changes throughput about {as_printed(gain['value'])}x "
            "(LITTLE to big core, GRO off)",
            gain["location"], "~", float(gain["value"]), float(max(d["ratio_b_over_a"], 1 / d["ratio_b_over_a"])),
            "x", f"larger / smaller downlink throughput at the unlimited rate of {rps_devices[0]} and "
            f"{rps_devices[1]} (RPS masks; offloads on). Not checkable: the paper moves SoftIRQ work between a "
            "LITTLE and a big core; this host's cores are identical, so the ratio shows only what steering "
            "alone changes", "measured", rel_tol=p["rel_tol_approx"], checkable=False,
            tolerance="needs heterogeneous (big.LITTLE) cores")
        intervals["measured_affinity_4x"] = ((1 / d["ratio_hi"], 1 / d["ratio_lo"]) if flipped
                                             else (d["ratio_lo"], d["ratio_hi"]))
    for frame, claim_id, text, location in [
            (gro, "measured_gro_off_sharp_drop", "GSO/GRO optimizations are extremely critical for multi-Gbps rates",
             "§3.3.1 Remark"),
            (rps, "measured_affinity_4x", "Choosing the CPU that does SoftIRQ processing changes throughput about "
             f"{as_printed(values('rog_affinity_gain'))}x", "§3.3.2"),
            (slow, "measured_fig1c_same_trend",
             "With less CPU capacity the CPU-vs-throughput trend is almost identical (Fig. 1c)", "§3.2, Fig. 1c")]:
        if frame.empty:
            add(claim_id, text, location, None, None, None, "n/a", "the configuration it needs was not captured "
                "for this build (see params.yaml)", "measured", checkable=False)
    if not slow.empty:
        d = slow.set_index("direction").loc["down"]
        slow_device = p["slow_device"]
        add("measured_fig1c_same_trend",
            "With less CPU capacity the CPU-vs-throughput trend is almost identical (Fig. 1c, ROG at "
            f"{as_printed(values('rog_fixed_freq_compare'))} GHz)",
            "§3.2, Fig. 1c", "~", SAME_RATIO, float(d["b_stat_slope"] / d["a_stat_slope"]), "ratio",
            f"/proc/stat Total slope of {slow_device} / {ref}, downlink; a CPU quota on the "
            "device's iperf3, not a lower clock", "modeled", rel_tol=p["rel_tol_approx"])
        add("measured_max_tput_at_lower_capacity",
            "The maximum throughput is reached at every big-core frequency (less CPU capacity)",
            "§3.2", "~", SAME_RATIO, float(d["ratio_b_over_a"]), "ratio",
            f"{slow_device} / {ref} downlink throughput at the unlimited rate", "measured",
            rel_tol=p["rel_tol_approx"])
        intervals["measured_max_tput_at_lower_capacity"] = (d["ratio_lo"], d["ratio_hi"])
    return claims.frame(intervals), intervals


def capture_notes(sessions: pd.DataFrame, devices: list[str]) -> dict[str, str]:
    """{device: its capture's caveats}: "ungated" when a session was
    captured before the idle gate, and its kernel build(s)."""
    notes = {}
    for device in devices:
        s = sessions[sessions["device"] == device]
        ungated = (s["background_load"] == NOT_MEASURED).any()
        notes[device] = (f"{cl.UNGATED}, " if ungated else "") + \
            f"kernel {', '.join(sorted(s['kernel'].astype(str).unique()))}"
    return notes


def with_capture_notes(claims: pd.DataFrame, sessions: pd.DataFrame, p: dict) -> pd.DataFrame:
    """The claims with the caveats of the captures behind them in the basis:
    each device-specific claim its device's (`capture_notes`), each
    comparison both devices' and whether they ran different kernel builds."""
    notes = capture_notes(sessions, p["devices"])
    kernels = {d: set(sessions.loc[sessions["device"] == d, "kernel"].astype(str)) for d in p["devices"]}
    pairs = {"measured_gro_off": (p["reference_device"], p["offloads_off_device"]),
             "measured_affinity": tuple(p["rps_devices"]),
             "measured_fig1c": (p["reference_device"], p["slow_device"]),
             "measured_max_tput_at_lower": (p["reference_device"], p["slow_device"]),
             "measured_sirq_significant": (p["reference_device"],)}
    basis = []
    for cid, b in zip(claims["claim_id"], claims["basis"]):
        devs = next((d for prefix, d in pairs.items() if cid.startswith(prefix)), None)
        if devs is None:
            devs = tuple(d for d in p["devices"] if cid.endswith(claim_key(d)))
        devs = tuple(d for d in devs if d in notes)
        extra = [f"{d}: {notes[d]}" for d in devs]
        if len(devs) == 2 and kernels[devs[0]] != kernels[devs[1]]:
            extra.append("a comparison across kernel builds")
        basis.append("; ".join([b, *extra]))
    return cl.claims_frame(claims.assign(basis=basis).to_dict("records"))


def claims_for_people(claims_table: pd.DataFrame, intervals: dict, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(claims with the paper's derived ratios to 3 significant figures and
    R² spelt for people; the shown table with paper text and our value with
    its interval). claims.csv keeps the exact values."""
    from mobitrace.book.chapter import paper_text
    display = claims_table.assign(
        unit=claims_table["unit"].replace({"R^2": "R²"}),
        paper_value=[float(f"{v:.3g}") if pd.notna(v) else v for v in claims_table["paper_value"]])
    shown = display.assign(
        paper=[paper_text(r, v) for r, v in zip(display["paper_relation"], display["paper_value"])],
        artifact=[numbers.interval(v, *intervals.get(c, (None, None))) for c, v in
                  zip(claims_table["claim_id"], claims_table["artifact_value"])])
    shown = shown[["claim", "location", "paper", "artifact", "unit", "tolerance", "verdict", "category"]]
    return display, shown.rename(columns={"artifact": f"this artifact [{numbers.level(alpha)} CI]"})


def headline(claims_table: pd.DataFrame, reference_device: str) -> list[str]:
    """The key findings' claim ids that this build has, in order."""
    ids = [linear_claim_id("stat_total", reference_device), linear_claim_id("precise_total", reference_device),
           under_claim_id(reference_device), "measured_sirq_significant_share", "measured_gro_off_ratio",
           "measured_affinity_4x"]
    return [c for c in ids if c in set(claims_table["claim_id"])]


def chapter_metrics(data: dict, gaps: pd.DataFrame, comparisons: dict, devices: list[str], thr: str,
                    counts: dict) -> dict:
    """metrics.json: per device the downlink /proc/stat and precise lines,
    the mean throughput at the unlimited rate per direction and the
    downlink gap; the comparison ratios; the claims per verdict."""
    runs, fits = data["runs"], data["fits"]
    metrics = {"devices": {}, "claims": cl.keyed(counts)}
    for device in devices:
        m = {}
        for source in ("stat_total", "precise_total"):
            f = fit_of(fits, device, "down", source)
            m[f"down.{source}"] = {"slope_pct_per_gbps": metric(f["slope"]), "intercept_pct": metric(f["intercept"]),
                                   "r2": metric(f["r2"]), f"gbps_at_{thr}pct": metric(f["gbps_at_threshold"]),
                                   f"gbps_at_{thr}pct_ci_lo": metric(f["gbps_at_threshold_lo"]),
                                   f"gbps_at_{thr}pct_ci_hi": metric(f["gbps_at_threshold_hi"])}
        for direction in ("down", "up"):
            mr = max_runs(runs, device, direction)
            m[f"{direction}.max_throughput_gbps"] = metric(mr["throughput_gbps"].mean()) if not mr.empty else None
        g = gaps[gaps["device"] == device].set_index("direction")
        m["down.procstat_minus_precise_pp"] = metric(g.loc["down", "gap_pp"])
        metrics["devices"][device] = m
    for key, name in (("gro", "offloads_off_over_on_down"), ("rps", "rps_b_over_a_down"),
                      ("slow", "slow_over_reference_down")):
        if not comparisons[key].empty:
            metrics[name] = metric(comparisons[key].set_index("direction").loc["down", "ratio_b_over_a"])
    return metrics
