import gzip
import json
from pathlib import Path

import pytest
import yaml

from tests import ROOT as REPO


def synthetic_run(run_id="0000-sweep-default-dl-r075-bl-0", direction="downlink", transport="striped",
                  ratio=75.0, demand=None, bytes_a=93_750_000, bytes_b=31_250_000, seconds=1.0,
                  iface_a=None, iface_b=None, phone_cpu_us=(100_000, 150_000), ap_cpu_us=(0, 200_000),
                  part="sweep", config="default", backup=False, primary="a"):
    """A synthetic raw run record in the kit's format with hand-computable numbers."""
    ns = 1_000_000_000
    if transport == "striped":
        rx_conns = [{"local": "10.93.0.2:40000", "peer": "10.93.0.1:5301", "bytes": bytes_a},
                    {"local": "10.94.0.2:40001", "peer": "10.94.0.1:5301", "bytes": bytes_b}]
        if direction == "uplink":
            rx_conns = [{"local": "10.93.0.1:5301", "peer": "10.93.0.2:40000", "bytes": bytes_a},
                        {"local": "10.94.0.1:5301", "peer": "10.94.0.2:40001", "bytes": bytes_b}]
    else:
        rx_conns = [{"local": "10.93.0.2:40000", "peer": "10.93.0.1:5301", "bytes": bytes_a + bytes_b}]
    tx_conns = [dict(c, local=c["peer"], peer=c["local"]) for c in rx_conns]
    iface_a = bytes_a if iface_a is None else iface_a
    iface_b = bytes_b if iface_b is None else iface_b

    def tool(role, mode, conns, cpu):
        return {"tool": "mtmp_xfer", "role": role, "mode": mode, "mptcp": transport == "mptcp",
                "ratio_a_pct": ratio, "rate_mbps": demand or 0, "duration_s": 1, "chunk": 65536,
                "start_ns": 0, "first_byte_ns": ns, "last_byte_ns": ns + int(seconds * ns), "end_ns": 3 * ns,
                "utime_us": cpu[0], "stime_us": cpu[1], "conns": conns}

    phone_mode = "recv" if direction == "downlink" else "send"
    ap_mode = "send" if direction == "downlink" else "recv"
    counter = "rx_bytes" if direction == "downlink" else "tx_bytes"
    other = "tx_bytes" if direction == "downlink" else "rx_bytes"
    zero = {"pa": {counter: 1000, other: 0, "rx_packets": 0, "tx_packets": 0},
            "pb": {counter: 2000, other: 0, "rx_packets": 0, "tx_packets": 0}}
    after = {"pa": {counter: 1000 + iface_a, other: 10, "rx_packets": 1, "tx_packets": 1},
             "pb": {counter: 2000 + iface_b, other: 10, "rx_packets": 1, "tx_packets": 1}}
    return {
        "run_id": run_id,
        "spec": {"part": part, "config": config, "transport": transport, "direction": direction,
                 "ratio_a_pct": ratio if transport == "striped" else None, "demand_mbps": demand,
                 "gro_off": [], "rps": None, "primary": primary, "backup": backup, "rep": 0},
        "started_utc": "2026-01-01T00:00:00+00:00", "loadavg1": 0.5, "cpu_mhz_before": [2000.0],
        "cpu_mhz_after": [2000.0], "phone_gro": {"a": "on", "b": "on"},
        "if_before": zero, "if_after": after,
        # busy jiffies 100 -> 250 (1.5 s), softirq 10 -> 30 (0.2 s)
        "proc_stat_before": ["cpu  50 0 40 1000 0 0 10 0 0 0", "cpu0 1 0 1 1 0 0 0 0 0 0"],
        "proc_stat_after": ["cpu  100 0 120 1500 0 0 30 0 0 0", "cpu0 1 0 1 1 0 0 0 0 0 0"],
        "phone": tool("client", phone_mode, rx_conns if direction == "downlink" else tx_conns, phone_cpu_us),
        "ap": tool("server", ap_mode, tx_conns if direction == "downlink" else rx_conns, ap_cpu_us),
    }


def write_session(root: Path, records, device="synthetic-host", session="s1", scale=1.0, n_runs=None):
    folder = root / device / session
    folder.mkdir(parents=True)
    manifest = {"study": "mptcp-dualband", "schema": 1, "device": device, "session": session,
                "config": {"scale": scale, "path_rates_mbps": {"downlink": {"a": 1600, "b": 600},
                                                               "uplink": {"a": 1450, "b": 600}},
                           "paper_path_rates_mbps": {"downlink": {"a": 1600, "b": 600},
                                                     "uplink": {"a": 1450, "b": 600}}},
                "n_runs": len(records) if n_runs is None else n_runs, "host": {"kernel": "synthetic"}}
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest))
    with gzip.open(folder / "runs.jsonl.gz", "wt") as fh:
        for r in records:
            fh.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return folder


@pytest.fixture
def md_repo() -> Path:
    return REPO
