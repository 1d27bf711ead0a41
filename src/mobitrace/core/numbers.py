"""Numbers for people: the one formatter of every number the book shows.

Rules (the book's style): significant figures chosen per column; thousands
separators; no scientific notation between 0.001 and 10**15 (large
magnitudes keep their digits: ``1,234,567``); p-values as
``0.0125`` or ``< 0.0001``; intervals as ``3.12 [2.41, 3.92]``; a missing
value as an en dash. Every function returns plain text (no HTML).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MISSING = "–"
MINUS = "−"  # U+2212: typographic minus, as in printed tables
SCI_LOW, SCI_HIGH = 1e-3, 1e15
P_FLOOR = 1e-4


def _missing(x) -> bool:
    if x is None:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return str(x) in ("<NA>", "NaT")  # pandas' missing markers


def _sign(text: str) -> str:
    return MINUS + text[1:] if text.startswith("-") else text


def decimals_for(x: float, sig: int = 3) -> int:
    """Decimal places that show `x` to `sig` significant figures (0 for
    magnitudes of 10**sig and above)."""
    if x == 0 or not math.isfinite(x):
        return 0
    return max(0, sig - 1 - math.floor(math.log10(abs(x))))


def scientific(x: float, sig: int = 3) -> str:
    """`x` as 1.23 × 10⁻⁵ (for magnitudes outside [0.001, 10**15))."""
    mantissa, exponent = f"{x:.{sig - 1}e}".split("e")
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return _sign(f"{mantissa} × 10{str(int(exponent)).translate(sup)}")


def number(x, sig: int = 3, decimals: int | None = None) -> str:
    """One number for a reader: `decimals` places when given (a column's
    choice), else `sig` significant figures; thousands separators; integers
    stay integers; scientific only outside [0.001, 10**15)."""
    if _missing(x):
        return MISSING
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int) or (hasattr(x, "dtype") and getattr(x.dtype, "kind", "") in "iu"):
        return _sign(f"{int(x):,}")
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else MINUS + "∞"
    if x != 0 and not (SCI_LOW <= abs(x) < SCI_HIGH):
        return scientific(x, sig)
    places = decimals_for(x, sig) if decimals is None else decimals
    text = f"{x:,.{places}f}"
    if float(text.replace(",", "")) == 0:
        text = text.lstrip("-")
    return _sign(text)


def column_decimals(values: Iterable, sig: int = 3) -> int:
    """One number of decimal places for a whole column: enough to show its
    typical (median) magnitude to `sig` significant figures."""
    finite = sorted(abs(float(v)) for v in values
                    if not _missing(v) and math.isfinite(float(v)) and float(v) != 0)
    if not finite:
        return 0
    return decimals_for(finite[len(finite) // 2], sig)


def p_value(p) -> str:
    """A p-value: ``< 0.0001`` below 1e-4, else four decimals (``0.0125``)."""
    if _missing(p):
        return MISSING
    p = float(p)
    if p < P_FLOOR:
        return f"< {P_FLOOR:.4f}"
    return f"{p:.4f}"


def interval(estimate, low, high, sig: int = 3) -> str:
    """``3.12 [2.41, 3.92]``: estimate and interval to the same decimals,
    enough for the largest of them to `sig` significant figures and for the
    interval's width to 1 (an estimate near 0 does not add digits to its
    bounds: ``2.75 [−0.05, 5.49]``, not ``2.7510 [−0.0542, 5.4947]``)."""
    if _missing(estimate):
        return MISSING
    finite = [abs(float(v)) for v in (estimate, low, high) if not _missing(v) and float(v) != 0]
    places = decimals_for(max(finite), sig) if finite else 0
    if not (_missing(low) or _missing(high)) and float(high) != float(low):
        places = max(places, decimals_for(abs(float(high) - float(low)), 1))
    if all(SCI_LOW <= f < SCI_HIGH for f in finite):
        fmt = lambda v: number(v, decimals=places)  # noqa: E731
    else:
        fmt = lambda v: number(v, sig=sig)  # noqa: E731
    if _missing(low) or _missing(high):
        return fmt(estimate)
    return f"{fmt(estimate)} [{fmt(low)}, {fmt(high)}]"


def level(alpha: float) -> str:
    """The level of a 100(1 - alpha)% interval, for labels and prose:
    0.05 -> "95%"."""
    return f"{1 - alpha:.0%}"


def percent(x, sig: int = 3) -> str:
    """A fraction as a percentage: 0.1234 -> ``12.3%``."""
    return MISSING if _missing(x) else f"{number(float(x) * 100, sig=sig)}%"


def as_printed(x) -> str:
    """A number as a paper prints it: no padding zeros (``50``, ``1.7``,
    ``0.0125``), thousands separators; up to 6 significant figures."""
    if _missing(x):
        return MISSING
    x = float(x)
    if x != 0 and not (SCI_LOW <= abs(x) < SCI_HIGH):
        return scientific(x, 3)
    text = f"{x:,.{decimals_for(x, 6)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return _sign(text)


def with_unit(text: str, unit: str) -> str:
    """``36.0%``, ``3.36×``, ``374 Mbps``: no space before % and ×."""
    if not unit or text == MISSING:
        return text
    unit = "×" if unit == "x" else unit
    return f"{text}{unit}" if unit in ("%", "×") else f"{text} {unit}"


# One unit system for sizes across the book: SI (1 kB = 1,000 B), as the
# papers print theirs ("100 MB", "1.5 KB" datagrams) and as rates (Mbps) are.
# A power-of-two quantity is shown by its value in SI (16,384 B: 16.4 kB).
BYTE_UNITS = ("B", "kB", "MB", "GB", "TB")


def data_size(n_bytes, sig: int = 3) -> str:
    """A size in SI units: ``1.5 kB``, ``16.4 kB`` (16,384 B), ``100 MB``,
    ``1.07 GB`` (2**30 B); up to `sig` significant figures, no padding zeros."""
    if _missing(n_bytes):
        return MISSING
    value, k = float(n_bytes), 0
    while abs(value) >= 1000 and k < len(BYTE_UNITS) - 1:
        value, k = value / 1000, k + 1
    if float(f"{value:.{sig}g}") >= 1000 and k < len(BYTE_UNITS) - 1:  # 999.9 kB rounds to 1 MB
        value, k = value / 1000, k + 1
    text = f"{float(f'{value:.{sig}g}'):,.{decimals_for(value, sig)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{_sign(text)} {BYTE_UNITS[k]}"


# A claim's value for people. Statistics read as "p < 0.0001", "R² ≥ 0.9";
# other units follow the number; true=1 flags read as yes / no.
STATISTICS = {"p": "p", "R^2": "R²", "R²": "R²", "rho": "ρ"}
UNITS = {"x": "×", "us": "µs"}
RELATIONS = {">=": "≥", "<=": "≤"}
FLAG_UNIT = "true=1"


def claim_value(value, unit=None, relation=None, low=None, high=None) -> str:
    """``p < 0.0001``, ``R² ≥ 0.9``, ``< 50%``, ``3.12 [2.41, 3.92]×``, ``yes``:
    a paper's stated value (given its relation, "=" included: as printed) or
    ours (no relation: 3 significant figures, with its interval)."""
    if _missing(value):
        return MISSING
    unit = "" if _missing(unit) else str(unit)
    paper = not _missing(relation)  # a paper's value (relation "=", "<", ...) reads as printed
    rel = "" if not paper or relation == "=" else RELATIONS.get(relation, relation)
    if unit == FLAG_UNIT:
        return f"{rel} {'yes' if float(value) else 'no'}".strip()
    if unit == "p" and _missing(low) and _missing(high):
        v = float(value)
        text = as_printed(v) if v >= 1 or (paper and v >= SCI_LOW) else p_value(v)  # a paper's "p > 0.05" as printed
        if text.startswith("<"):  # below the floor: "p < 0.0001" whatever the relation
            return f"p {text}"
        return f"p {rel or '='} {text}"
    if _missing(low) and _missing(high):
        text = as_printed(value) if paper else number(value)  # a paper's value as printed; ours to 3 figures
    else:
        text = interval(value, low, high)
    if unit in STATISTICS:
        return f"{STATISTICS[unit]} {rel or '='} {text}"
    return (f"{rel} " if rel else "") + with_unit(text, UNITS.get(unit, unit))


def metric(x) -> float | None:
    """A number for metrics.json: rounded to 6 decimals, None when missing
    (JSON has no NaN)."""
    return None if _missing(x) else round(float(x), 6)


def direction(x, up: str = "higher", down: str = "lower", zero: str = "no different") -> str:
    """The word for the sign of a computed value, so that prose never types a
    direction the data could reverse: `up` when x > 0, `down` when x < 0,
    `zero` when x == 0, an en dash when x is missing."""
    if _missing(x):
        return MISSING
    x = float(x)
    return up if x > 0 else down if x < 0 else zero
