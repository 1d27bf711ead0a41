"""What a session manifest records about its host: the schema-2 `host:`
keys, and where each schema-1 capture kit (already committed) wrote them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from mobitrace.core.capture_reader import check_number, is_count
from mobitrace.core.errors import InputError

HOST_SCHEMA = 2
# The one key set of `host:` in a schema-2 manifest (mobitrace.capture.host writes it).
HOST_KEYS = ("hostname_hash", "kernel", "kernel_version", "machine", "os", "cpu_model", "cpu_count", "cpus_online",
             "hypervisor", "virtualization", "user_hz", "cpu_mhz", "cpufreq", "memory_kb", "clocksource",
             "kernel_config", "irqbalance_running", "dmi_product", "sys_vendor", "sysctls", "loadavg_1min",
             "tools", "note")


def hostname_hash(name: str) -> str:
    """What the kits record instead of a host name (privacy)."""
    return hashlib.sha256(str(name).encode()).hexdigest()[:12]


def _as_list(v):
    return None if v is None else [str(x) for x in v] if isinstance(v, list) else [str(v)]


def _mhz(values):
    if not isinstance(values, list):
        return None
    out = []
    for v in values:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(None)
    return out


def _hz(v):
    return int(v) if isinstance(v, str) and is_count(v) else v if isinstance(v, int) else None


def _freq_table(freqs):
    return [{k: f.get(k) for k in ("cpu", "governor", "cur_khz", "max_khz")} for f in freqs if isinstance(f, dict)] \
        if isinstance(freqs, list) else None


def _per_cpu_dicts(host):
    gov, cur = host.get("governor"), host.get("cpufreq_cur_khz")
    if not isinstance(gov, dict):
        return None
    cur = cur if isinstance(cur, dict) else {}
    return [{"cpu": int(c[3:]) if c[3:].isdigit() else c, "governor": g, "cur_khz": cur.get(c), "max_khz": None}
            for c, g in gov.items()]


# Where the schema-1 kits wrote each schema-2 key: (path in the manifest, conversion), first present wins.
#   cpu-gbps (capture.py, adb_capture.py): hostname, cpu.{model,count,online,hypervisor,frequency}, user_hz, ...
#   priority-boost, mptcp-dualband: hostname_hash, cpu_model [list], cpu_count, kernel_hz_hint (getconf CLK_TCK)
#   stack-trim: hostname_hash, cpu_model [list], cpu_count, cpuinfo_mhz, cpufreq (a note), user_hz
#   transfer-tuning: hostname, cpu_model (text), cpus, cpu_mhz, loadavg_at_start
_same = None
HOST_SCHEMA1 = {
    "hostname_hash": [(("host", "hostname_hash"), _same), (("host", "hostname"), hostname_hash)],
    "kernel": [(("host", "kernel"), _same)],
    "kernel_version": [(("host", "kernel_version"), _same)],
    "machine": [(("host", "machine"), _same)],
    "os": [(("host", "os_release", "PRETTY_NAME"), _same)],
    "cpu_model": [(("host", "cpu_model"), _as_list), (("host", "cpu", "model"), _as_list)],
    "cpu_count": [(("host", "cpu_count"), _same), (("host", "cpus"), _same), (("host", "cpu", "count"), _same)],
    "cpus_online": [(("host", "cpu", "online"), _same)],
    "hypervisor": [(("host", "hypervisor"), _same), (("host", "cpu", "hypervisor"), _same)],
    "virtualization": [(("host", "virtualization"), _same)],
    "user_hz": [(("host", "user_hz"), _same), (("host", "kernel_hz_hint"), _hz)],
    "cpu_mhz": [(("host", "cpu_mhz"), _mhz), (("host", "cpuinfo_mhz"), _mhz),
                (("host", "cpu", "frequency"), lambda fs: _mhz([f.get("cpuinfo_mhz") for f in fs
                                                                if isinstance(f, dict)]) if isinstance(fs, list) else None)],
    "cpufreq": [(("host", "cpufreq"), _same), (("host", "cpu", "frequency"), _freq_table),
                (("host", "governor"), "per-cpu"), (("host", "cpu_mhz_source"), _same)],
    "memory_kb": [(("host", "memory_kb"), _same)],
    "clocksource": [(("host", "clocksource"), _same)],
    "kernel_config": [(("host", "kernel_config"), _same)],
    "irqbalance_running": [(("host", "irqbalance_running"), _same)],
    "dmi_product": [(("host", "dmi_product"), _same)],
    "sys_vendor": [(("host", "sys_vendor"), _same)],
    "sysctls": [(("host", "sysctls"), _same)],
    "loadavg_1min": [(("host", "loadavg_1min"), _same), (("host", "loadavg_at_start"), _same)],
    "tools": [(("host", "tools"), _same), (("tools",), _same)],
    "note": [(("host", "note"), _same), (("host", "shared_host_note"), _same), (("host", "shared_host"), _same)],
}


def manifest_schema(manifest) -> int:
    """A manifest's schema: its `schema:` field, 1 where there is none."""
    s = manifest.get("schema", 1) if isinstance(manifest, dict) else 1
    return s if isinstance(s, int) and not isinstance(s, bool) else 1


def _get(doc, keys):
    cur = doc
    for k in keys:
        if not isinstance(cur, dict) or k not in cur:
            return False, None
        cur = cur[k]
    return True, cur


def host_sources(manifest: dict) -> dict[str, tuple[str, ...] | None]:
    """For each schema-2 host key, where this manifest keeps it (a key path),
    or None: the schema-2 path, or the schema-1 path it is mapped from."""
    if manifest_schema(manifest) >= 2:
        return {k: ("host", k) for k in HOST_KEYS}
    out = {}
    for key in HOST_KEYS:
        out[key] = next((keys for keys, _ in HOST_SCHEMA1[key] if _get(manifest, keys)[0]), None)
    return out


def host_metadata(manifest: dict, path: str | Path) -> dict:
    """The host metadata of a session manifest with exactly the schema-2 keys
    (HOST_KEYS; None where the kit did not record it), from a schema-2
    manifest or mapped from a schema-1 one (HOST_SCHEMA1: plain host names
    are hashed, a single CPU model becomes a list, `cpus` and `cpu.count`
    become cpu_count, getconf CLK_TCK becomes user_hz, ...). cpu_count and
    user_hz, where recorded, must be integers >= 1 (InputError naming the
    field as written in the file)."""
    if not isinstance(manifest, dict):
        raise InputError(path, None, None, "a mapping", type(manifest).__name__)
    host = manifest.get("host")
    if not isinstance(host, dict):
        raise InputError(path, None, "host", "a mapping", host if host is not None else "nothing")
    out = {}
    if manifest_schema(manifest) >= 2:
        out = {k: host.get(k) for k in HOST_KEYS}
        where = {k: f"host.{k}" for k in HOST_KEYS}
    else:
        where = {}
        for key in HOST_KEYS:
            out[key] = None
            for keys, convert in HOST_SCHEMA1[key]:
                found, value = _get(manifest, keys)
                if found:
                    if convert == "per-cpu":  # priority-boost: governor and cur_khz by cpuN
                        value = _per_cpu_dicts(host)
                    elif convert is not None:
                        value = convert(value)
                    if value is not None:
                        out[key], where[key] = value, ".".join(keys)
                        break
    for key in ("cpu_count", "user_hz"):
        if out[key] is not None:
            check_number(out[key], path, None, where[key], minimum=1, integer=True)
    return out


def host_list(value) -> list[str]:
    """A CPU model list (schema 2) from a list or one text (schema 1)."""
    return _as_list(value) or []


def host_key_paths(manifest: dict, legacy: dict[str, list[str]], columns: dict[str, str]) -> dict[str, list[str]]:
    """For a reader's columns {column: schema-2 host key}: the key path each
    is read from in this manifest (host_sources), or, where a schema-1
    manifest lacks it, the reader's own schema-1 path `legacy[column]`
    (so that a missing field is named as that reader always named it)."""
    src = host_sources(manifest)
    return {col: list(src[key] or legacy.get(col) or ("host", key)) for col, key in columns.items()}


# Sessions ingest skips: {"<device>/<session>": why}, from the study's
