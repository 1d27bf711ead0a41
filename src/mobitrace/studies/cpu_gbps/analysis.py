"""Straight lines through stated points: the CPU-vs-throughput model that a
paper's stated extrapolations imply.

A paper that says "CPU would hit 84% at 4 Gbps" and "50% CPU at 2.3 Gbps" has
committed to one line, y = a + b x, through both points:

    b = (y2 - y1) / (x2 - x1),    a = y1 - b x1.

Every other statement about the same line can then be checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mobitrace.core.claims import Claims


@dataclass(frozen=True)
class Line:
    """y = intercept + slope * x."""

    slope: float
    intercept: float

    @classmethod
    def through(cls, p1: tuple[float, float], p2: tuple[float, float]) -> "Line":
        """The line through two points (x1, y1) and (x2, y2); x1 != x2."""
        (x1, y1), (x2, y2) = p1, p2
        if x1 == x2:
            raise ValueError(f"two points with the same x = {x1} do not define a line")
        slope = (y2 - y1) / (x2 - x1)
        return cls(slope=slope, intercept=y1 - slope * x1)

    def predict(self, x):
        """y at x (scalar or numpy array)."""
        return self.intercept + self.slope * x

    def inverse(self, y):
        """x at which the line reaches y (inverse prediction)."""
        if self.slope == 0:
            raise ValueError("a flat line has no inverse")
        return (y - self.intercept) / self.slope


# --------------------------------------------------------------------------- #
# The cpu-gbps chapter (notebooks/cpu-gbps.py): tables, figure, claims and
# metrics from the paper's stated numbers (mobitrace.core.published.Values).

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from mobitrace.core import claims as cl  # noqa: E402
from mobitrace.core.numbers import as_printed, metric  # noqa: E402
from mobitrace.studies.cpu_gbps.schema import (  # noqa: E402
    BATTERY_SCHEMA, DERIVED_SCHEMA, IMPLIED_LINES_SCHEMA, TABLE2_SCHEMA,
)

STATED_LOCATIONS = ("§3.1", "§3.2", "§1 and Abstract")
STATED_UNITS = ("%", "Mbps", "Gbps")
# Table 2 of the paper: (state, core) -> id in data/published/cpu-gbps.yaml.
TABLE2_IDS = {("Discharging", "big Core"): "t2_big_discharging",
              ("Discharging", "LITTLE Core"): "t2_little_discharging",
              ("Charging", "big Core"): "t2_big_charging",
              ("Charging", "LITTLE Core"): "t2_little_charging"}


def device_key(device: str) -> str:
    """A phone's name as a glue/metric key: "ROG Phone" -> "rog_phone"."""
    return device.lower().replace(" ", "_")


def text_table(text_tables: pd.DataFrame, name: str) -> pd.DataFrame:
    """A table of text (text_tables.parquet, long format) as printed: rows
    and columns in the file's order, no index or column names."""
    t = text_tables[text_tables["table"] == name]
    wide = t.pivot(index="row", columns="column", values="text").loc[t["row"].unique(), t["column"].unique()]
    wide.columns.name, wide.index.name = None, None
    return wide.reset_index(names="")


def stated_values(values: pd.DataFrame) -> pd.DataFrame:
    """The stated CPU and throughput numbers (§1, §3.1, §3.2), as printed."""
    stated = values[values["location"].isin(STATED_LOCATIONS) & values["unit"].isin(STATED_UNITS)]
    return stated[["device", "quantity", "throughput_gbps", "relation", "value", "unit", "location"]]


def implied_lines(values, line_points: dict, targets: list[float], threshold: float
                  ) -> tuple[dict, pd.DataFrame, dict]:
    """The line through each phone's two stated points (Line.through), with
    the CPU at each target rate and the throughput at `threshold` % CPU.
    `values` is a mobitrace.core.published.Values. Returns (lines by device,
    the implied_lines table, glue values: <device>_slope, <device>_intercept
    slope_ratio, the larger slope over the smaller, and slope_ratio_word,
    whether the ROG Phone needs less or more CPU per bit)."""
    lines, rows, glue = {}, [], {}
    for device, (id1, id2) in line_points.items():
        p1, p2 = values.row(id1), values.row(id2)
        line = Line.through((p1["throughput_gbps"], p1["value"]), (p2["throughput_gbps"], p2["value"]))
        lines[device] = line
        row = {"device": device, "defined_by": f"{id1}, {id2}",
               "slope_pct_per_gbps": line.slope, "intercept_pct": line.intercept,
               f"gbps_at_{threshold:g}pct_cpu": line.inverse(threshold)}
        for rate in targets:
            row[f"cpu_pct_at_{rate:g}gbps"] = line.predict(rate)
        beyond = [f"{r:g}" for r in targets if line.predict(r) > 100]
        row["note"] = f"line passes 100% CPU before {', '.join(beyond)} Gbps" if beyond else ""
        rows.append(row)
        glue[f"{device_key(device)}_slope"] = line.slope
        glue[f"{device_key(device)}_intercept"] = line.intercept
    ratio = lines["Pixel 2"].slope / lines["ROG Phone"].slope
    # The ROG Phone's CPU cost per bit against the Pixel 2's, worded from the ratio (published
    # numbers, exact: no interval), so the sentence follows the numbers.
    glue["slope_ratio"] = ratio if ratio >= 1 else 1 / ratio
    glue["slope_ratio_word"] = "times less" if ratio > 1 else "times more" if ratio < 1 else "times (the same)"
    glue["answer_text"] = answer_text(lines, max(targets), threshold)
    return lines, IMPLIED_LINES_SCHEMA.validate(pd.DataFrame(rows)), glue


def answer_text(lines: dict, top_gbps: float, threshold: float) -> str:
    """The chapter's answer in one sentence: per phone, whether its implied
    line stays within 100% CPU at the top target rate (the verb follows
    the number), with the CPU there and the rate at the threshold."""
    parts = []
    for device, line in lines.items():
        cpu, at = line.predict(top_gbps), line.inverse(threshold)
        verb = "keeps up" if cpu <= 100 else "cannot keep up"
        parts.append(f"the {device} {verb} (its line needs {cpu:.0f}% CPU at {top_gbps:g} Gbps and reaches "
                     f"{threshold:g}% at {at:.1f} Gbps)")
    return (f"By the paper's own numbers (a line through two stated points per phone, so no interval), "
            f"{'; '.join(parts)}.")


def line_frame(lines: dict, x_max: float, n: int = 200) -> pd.DataFrame:
    """Each line evaluated on n points from 0 to x_max (long format, for seaborn)."""
    x = np.linspace(0, x_max, n)
    return pd.concat([pd.DataFrame({"device": d, "throughput_gbps": x, "cpu_pct": ln.predict(x)})
                      for d, ln in lines.items()])


def line_points_frame(values: pd.DataFrame, line_points: dict) -> pd.DataFrame:
    """The stated (throughput, total CPU) points of the phones with lines,
    with their role: "defines the line" or "checked against it"."""
    points = values[values["device"].isin(list(line_points)) & values["throughput_gbps"].notna()
                    & (values["quantity"] == "total CPU at throughput")].copy()
    points["role"] = ["defines the line" if i in line_points[d] else "checked against it"
                      for i, d in zip(points["id"], points["device"])]
    return points


def table2(values) -> pd.DataFrame:
    """Table 2 (GRO-off throughput, Mbps) as printed: one row per battery
    state, one column per core."""
    t2 = pd.Series({k: values(i) for k, i in TABLE2_IDS.items()}).unstack()
    t2 = t2.loc[["Discharging", "Charging"], ["big Core", "LITTLE Core"]]
    return TABLE2_SCHEMA.validate(t2.reset_index(names="state"))


def _quoted(values, value_id: str) -> str:
    """A stated number with its unit as printed ("1.23 Gbps")."""
    return f"{as_printed(values(value_id))} {values.row(value_id)['unit']}"


def derived_ratios(values) -> tuple[pd.DataFrame, dict]:
    """The ratios the prose states, re-derived from Table 2 and §3.3:
    affinity gain = SIRQ-on-big throughput / GRO-off throughput; GRO penalty =
    GRO-off / GRO-on; LITTLE core discharging / charging; big core charging -
    discharging (Mbps). Returns (the table, the four values by name)."""
    v = values
    d = {"affinity_gain": v("rog_sirq_big_tput") * 1000 / v("rog_gro_off_tput"),
         "little_ratio": v("t2_little_discharging") / v("t2_little_charging"),
         "big_drop": v("t2_big_charging") - v("t2_big_discharging"),
         "gro_penalty": v("rog_gro_off_tput") / (v("rog_gro_on_tput") * 1000)}
    frame = pd.DataFrame([
        {"quantity": f"SIRQ LITTLE->big gain ({_quoted(v, 'rog_sirq_big_tput')} / {_quoted(v, 'rog_gro_off_tput')})",
         "value": d["affinity_gain"], "unit": "x"},
        {"quantity": f"GRO-off / GRO-on throughput ({_quoted(v, 'rog_gro_off_tput')} / "
                     f"{_quoted(v, 'rog_gro_on_tput')})", "value": d["gro_penalty"], "unit": "ratio"},
        {"quantity": "LITTLE core: discharging / charging (Table 2)", "value": d["little_ratio"], "unit": "ratio"},
        {"quantity": "big core: charging - discharging (Table 2)", "value": d["big_drop"], "unit": "Mbps"},
    ])
    return DERIVED_SCHEMA.validate(frame), d


def battery_drain(values) -> pd.DataFrame:
    """What §4.2's battery drop bounds, with Table 1's capacity C (mAh):
    charge drawn = C * drop / 100 (mAh); average current = that / hours (mA);
    data moved = rate (Gbps) * 60 * minutes / 8 (GB)."""
    v = values
    hours = v("battery_test_duration") / 60
    capacity = v("rog_battery")
    rows = [
        {"quantity": "charge drawn, low end", "value": capacity * v("battery_drop_low") / 100, "unit": "mAh"},
        {"quantity": "charge drawn, high end", "value": capacity * v("battery_drop_high") / 100, "unit": "mAh"},
        {"quantity": "average current, low end", "value": capacity * v("battery_drop_low") / 100 / hours,
         "unit": "mA"},
        {"quantity": "average current, high end", "value": capacity * v("battery_drop_high") / 100 / hours,
         "unit": "mA"},
    ]
    for direction, value_id in (("downlink", "battery_dl_tput"), ("uplink", "battery_ul_tput")):
        rows.append({"quantity": f"data moved {direction} at {_quoted(v, value_id)}",
                     "value": v(value_id) * 60 * v("battery_test_duration") / 8, "unit": "GB"})
    return BATTERY_SCHEMA.validate(pd.DataFrame(rows))


def chapter_claims(study: str, values, lines: dict, derived: dict, rel_tol_equal: float,
                   rel_tol_approx: float) -> pd.DataFrame:
    """The cpu-gbps chapter's claims table (mobitrace.core.claims.Claims):
    each claim's paper value, relation, unit and location from the published
    record named; "~" values within rel_tol_approx, plain ones within
    rel_tol_equal; bounds exact."""
    claims = Claims(study)

    def add(claim_id, text, value_id, artifact, basis, provenance, section, rel_tol=None, abs_tol=0.0,
            unit=None):
        rec = values.row(value_id)
        relation = rec["relation"]
        if rel_tol is None:
            rel_tol = rel_tol_approx if relation == "~" else rel_tol_equal
        claims.add(claim_id, text, location=rec["location"], relation=relation, paper=rec["value"],
                   artifact=artifact, unit=unit or rec["unit"], basis=basis, provenance=provenance,
                   section=section, rel_tol=rel_tol, abs_tol=abs_tol)

    v = values
    on_line = "implied line (modeled from two published points)"
    add("pixel2_1p6gbps_under_50pct", "Pixel 2 supports 1.6 Gbps with less than 50% CPU",
        "pixel2_cpu_at_1p6", lines["Pixel 2"].predict(1.6), on_line, "modeled", "cpu-gbps-lines")
    add("rog_1p7gbps_under_15pct", "ROG Phone's CPU stays below 15% at 1.7 Gbps",
        "rog_cpu_at_1p7", lines["ROG Phone"].predict(1.7), on_line, "modeled", "cpu-gbps-lines")
    add("affinity_4x", "Moving SIRQ from a LITTLE to a big core gives a 4x throughput gain (GRO off)",
        "rog_affinity_gain", derived["affinity_gain"],
        f"{_quoted(v, 'rog_sirq_big_tput')} ({v.row('rog_sirq_big_tput')['location']}) / "
        f"{_quoted(v, 'rog_gro_off_tput')} ({v.row('rog_gro_off_tput')['location']})",
        "published", "cpu-gbps-gro-eas")
    add("gro_off_366", "GRO off: 366 Mbps (§3.3.1) is Table 2's LITTLE-core discharging value",
        "rog_gro_off_tput", v("t2_little_discharging"), "Table 2", "published", "cpu-gbps-gro-eas")
    add("gro_on_1p6_vs_1p7", "GRO-on throughput: 1.6 Gbps (§3.3.1) and 1.7 Gbps (§3.3.2) state the same quantity",
        "rog_gro_on_tput", v("rog_gro_on_tput_s332"), "§3.3.2 value; both printed to 0.1 Gbps", "published",
        "cpu-gbps-gro-eas", abs_tol=0.1, rel_tol=0.0)
    add("sirq_big_1p23_vs_table2",
        "GRO off, SIRQ on a big core: 1.23 Gbps (§3.3.2) vs Table 2's big-core discharging value",
        "rog_sirq_big_tput", v("t2_big_discharging") / 1000, "Table 2", "published", "cpu-gbps-gro-eas")
    add("eas_little_charging_620", "LITTLE core, charging: ~620 Mbps", "s41_little_charging",
        v("t2_little_charging"), "Table 2", "published", "cpu-gbps-gro-eas")
    add("eas_little_almost_half", "LITTLE core: discharging throughput is almost half of charging",
        "s41_little_almost_half", derived["little_ratio"], "Table 2 ratio", "published", "cpu-gbps-gro-eas",
        unit="ratio")
    add("eas_big_charging_1p56", "big core, charging: 1.56 Gbps", "s41_big_charging",
        v("t2_big_charging") / 1000, "Table 2", "published", "cpu-gbps-gro-eas")
    add("eas_big_discharging_1p1", "big core, discharging: 1.1 Gbps", "s41_big_discharging",
        v("t2_big_discharging") / 1000, "Table 2", "published", "cpu-gbps-gro-eas")
    add("eas_big_drop_400", "big core: discharging costs ~400 Mbps", "s41_big_drop",
        derived["big_drop"], "Table 2 difference", "published", "cpu-gbps-gro-eas")
    for claim_id, text, section in [
        ("fig1_linear", "CPU (Total and SIRQ) grows linearly with throughput (Fig. 1a, 1b)", "§3.2"),
        ("fig1c_same_at_2p46", "ROG Phone at 2.46 GHz has almost the same CPU trend as at 2.95 GHz (Fig. 1c)",
         "§3.2"),
        ("little_826mhz", "ROG Phone reaches 1.7 Gbps at every big-core frequency and LITTLE-core frequencies "
                          "above 826 MHz", "§3.2"),
        ("battery_not_significant", "Battery life is not significantly affected by long Gbps transfers "
                                    "(4-5% in 20 min)", "§4.2"),
    ]:
        claims.add(claim_id, text, location=section, relation=None, paper=None, artifact=None, unit="",
                   basis="figure data or a power log needed; not in the text", provenance="published",
                   section="cpu-gbps-claims")
    return claims.frame()


def chapter_metrics(lines: dict, threshold: float, targets: list[float], affinity_gain: float,
                    counts: dict) -> dict:
    """metrics.json of the cpu-gbps chapter: each implied line (slope,
    intercept, throughput at the threshold, CPU at each target), the
    affinity gain and the claims per verdict (values rounded to 6 decimals)."""
    return {
        "implied_lines": {
            device: {
                "slope_pct_per_gbps": metric(line.slope),
                "intercept_pct": metric(line.intercept),
                f"gbps_at_{threshold:g}pct_cpu": metric(line.inverse(threshold)),
                **{f"cpu_pct_at_{r:g}gbps": metric(line.predict(r)) for r in targets},
            }
            for device, line in lines.items()
        },
        "affinity_gain_x": metric(affinity_gain),
        "claims": cl.keyed(counts),
    }
