"""The one host-metadata collector: `host:` of every session manifest, with
exactly the schema-2 keys (mobitrace.core.host_info.HOST_KEYS, which
also maps the schema-1 manifests already committed). The host name is
recorded only as a hash."""

from __future__ import annotations

import gzip
import os
import platform
import re
import shutil
import sys
from pathlib import Path

from ..core.host_info import HOST_KEYS, HOST_SCHEMA, hostname_hash
from mobitrace.capture.command import first_line, output, read
from mobitrace.capture.sampler import cpuinfo_mhz

SCHEMA = HOST_SCHEMA
# Sysctls every kit records (a kit adds its own, e.g. net.mptcp.*).
SYSCTLS = ("net.core.rmem_max", "net.core.wmem_max", "net.core.netdev_max_backlog", "net.core.default_qdisc",
           "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control", "kernel.sched_autogroup_enabled")
KERNEL_CONFIG = ("CONFIG_HZ", "CONFIG_NO_HZ_IDLE", "CONFIG_NO_HZ_FULL", "CONFIG_IRQ_TIME_ACCOUNTING",
                 "CONFIG_VIRT_CPU_ACCOUNTING_GEN", "CONFIG_TICK_CPU_ACCOUNTING", "CONFIG_RPS", "CONFIG_SCHED_INFO")
# Tools every kit records: name -> command printing its version (first line kept).
TOOLS = {"iproute2": ["ip", "-V"], "tc": ["tc", "-V"], "ethtool": ["ethtool", "--version"]}


def kernel_config(keys=KERNEL_CONFIG) -> dict[str, str]:
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            text = f.read()
    except OSError:
        cfg = Path(f"/boot/config-{platform.release()}")
        text = cfg.read_text() if cfg.exists() else None
    if text is None:
        return {k: "not readable" for k in keys}
    out = {}
    for k in keys:
        m = re.search(rf"^{k}=(.*)$", text, re.M)
        out[k] = m.group(1) if m else "not set"
    return out


def cpufreq(n: int) -> list[dict] | str:
    if not Path("/sys/devices/system/cpu/cpu0/cpufreq").exists():
        return "not in sysfs: frequency is read from /proc/cpuinfo 'cpu MHz'"
    out = []
    for c in range(n):
        base = f"/sys/devices/system/cpu/cpu{c}/cpufreq"
        out.append({"cpu": c, "governor": read(f"{base}/scaling_governor"),
                    "cur_khz": read(f"{base}/scaling_cur_freq"), "max_khz": read(f"{base}/cpuinfo_max_freq")})
    return out


def sysctl_values(keys) -> dict[str, str | None]:
    return {k: read("/proc/sys/" + k.replace(".", "/")) for k in keys}


def collect(*, sysctls=(), tools: dict[str, list[str]] | None = None, note: str | None = None) -> dict:
    """This machine's metadata, keys HOST_KEYS. `sysctls` and `tools` add to
    SYSCTLS and TOOLS; `note` says how the host was shared."""
    cpuinfo = read("/proc/cpuinfo") or ""
    n = os.cpu_count() or 1
    flags = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.M)
    hyper = bool(flags and " hypervisor" in f" {flags.group(1)}")
    virt = output("systemd-detect-virt") if shutil.which("systemd-detect-virt") else \
        ("hypervisor flag set" if hyper else "none detected")
    meminfo = re.search(r"MemTotal:\s+(\d+)", read("/proc/meminfo") or "")
    tool_cmds = {**TOOLS, **(tools or {})}
    host = {
        "hostname_hash": hostname_hash(platform.node()),
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "machine": platform.machine(),
        "os": dict(re.findall(r'^(PRETTY_NAME)="?([^"\n]*)"?$', read("/etc/os-release") or "", re.M)).get(
            "PRETTY_NAME"),
        "cpu_model": sorted(set(re.findall(r"^model name\s*:\s*(.*)$", cpuinfo, re.M))) or
        [platform.processor() or "unknown"],
        "cpu_count": n,
        "cpus_online": read("/sys/devices/system/cpu/online"),
        "hypervisor": hyper,
        "virtualization": virt,
        "user_hz": os.sysconf("SC_CLK_TCK"),
        "cpu_mhz": cpuinfo_mhz(),
        "cpufreq": cpufreq(n),
        "memory_kb": int(meminfo.group(1)) if meminfo else None,
        "clocksource": read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "kernel_config": kernel_config(),
        "irqbalance_running": any((read(f"/proc/{p}/comm") or "") == "irqbalance"
                                  for p in os.listdir("/proc") if p.isdigit()),
        "dmi_product": read("/sys/class/dmi/id/product_name") or "not readable",
        "sys_vendor": read("/sys/class/dmi/id/sys_vendor") or "not readable",
        "sysctls": sysctl_values(dict.fromkeys([*SYSCTLS, *sysctls])),
        "loadavg_1min": os.getloadavg()[0],
        "tools": {"python": sys.version.split()[0], **{k: first_line(*cmd) for k, cmd in tool_cmds.items()}},
        "note": note,
    }
    assert tuple(host) == HOST_KEYS
    return host
