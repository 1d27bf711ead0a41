"""The capture kit's smoke mode end to end (seconds of traffic): needs root,
network namespaces, MPTCP, tc, ethtool and gcc; skipped with the reason
otherwise. The capture goes to a temporary folder and is then ingested.
Holds the machine-wide measurement lock when MOBITRACE_CAPTURE_LOCK names one."""

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from mobitrace.capture import netns
from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.studies.mptcp_dualband import ingest as md
from tests.helpers import smoke_command

MPTCP = Path("/proc/sys/net/mptcp/enabled")


def _why_not() -> str | None:
    if not (MPTCP.exists() and MPTCP.read_text().strip() == "1"):
        return "MPTCP not enabled in this kernel (net.mptcp.enabled)"
    return netns.why_not("mtmp-", tools=("ip", "tc", "gcc", "ethtool"))


REASON = _why_not()


@pytest.mark.capture
@pytest.mark.skipif(REASON is not None, reason=f"capture smoke test skipped: {REASON}")
def test_capture_smoke_then_ingest(tmp_path, md_repo):
    out = tmp_path / "raw"
    cmd = smoke_command(md_repo / "scripts/capture/mptcp_dualband/run.py", out, "--parts", "mptcp,sweep,backup")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=md_repo)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        for line in ns.splitlines():  # clean up only this kit's namespaces, then fail
            name = line.split()[0] if line.split() else ""
            if name.startswith("mtmp-ph") or name.startswith("mtmp-ap"):
                subprocess.run(["ip", "netns", "del", name], capture_output=True)
    assert "mtmp-ph" not in ns and "mtmp-ap" not in ns, "namespaces left behind"
    md.ingest(out / "smoke-host", tmp_path / "interim")
    runs = pd.read_parquet(tmp_path / "interim" / "runs.parquet")
    gate = capture_reader.background_load(safe_yaml.read_manifest(out / "smoke-host" / "smoke" / "manifest.yaml"))
    assert gate["max_pct"] == 5.0 and set(gate["runs"]) == set(runs["run_id"])  # the idle gate: every run
    assert set(runs["part"]) == {"mptcp", "sweep", "backup"}
    assert (runs["tput_mbps"] > 0).all()
    # the striping sender honours 0:100 and 100:0
    sw = runs[runs["part"] == "sweep"]
    assert (sw.loc[sw["ratio_a_pct"] == 0, "bytes_a"] == 0).all()
    assert (sw.loc[sw["ratio_a_pct"] == 100, "bytes_b"] == 0).all()


def test_capture_smoke_reason_is_printed(capsys):
    print(f"capture smoke test: {'runs' if REASON is None else 'skipped: ' + REASON}")
    assert "capture smoke test" in capsys.readouterr().out
