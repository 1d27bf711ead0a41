"""A capture kit's last words: a missing program comes with its install line,
and a finished capture prints the next step (validate, add-device, make).
The kit itself is replaced by a stand-in that writes a session folder (no
capture is made, no namespace created)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mobitrace import cli
from mobitrace.capture import netns


def test_missing_tool_names_its_debian_package(monkeypatch):
    monkeypatch.setattr(netns.os, "geteuid", lambda: 0)
    monkeypatch.setattr(netns.shutil, "which", lambda tool: None if tool == "iperf3" else f"/usr/bin/{tool}")
    reason = netns.why_not("mt", ("ip", "iperf3", "ethtool"))
    assert reason == ("iperf3 not installed (Debian/Ubuntu: apt-get install iperf3; "
                      "every kit's packages: scripts/system-packages.txt)")


def test_every_hinted_package_is_in_the_system_package_list():
    listed = {line.split("#")[0].strip() for line in (cli.repo_root() / "scripts/system-packages.txt").read_text().splitlines()}
    assert set(netns.DEBIAN_PACKAGES.values()) <= listed - {""}


def _fake_kit(tmp_path: Path, monkeypatch, writes: str | None, status: int = 0):
    """cli's capture, in a tmp project whose kit 'writes' data/raw/cpu-gbps/<writes>."""
    (tmp_path / "data/raw/cpu-gbps").mkdir(parents=True)
    (tmp_path / "params.yaml").write_text("cpu-gbps-measured:\n  devices: [old-host]\n")
    monkeypatch.setattr(cli, "repo_root", lambda: tmp_path)

    def run(cmd, *a, **k):
        assert cmd[0] == sys.executable
        if writes:
            (tmp_path / "data/raw/cpu-gbps" / writes).mkdir(parents=True)
        return subprocess.CompletedProcess(cmd, status)
    monkeypatch.setattr(subprocess, "run", run)


@pytest.mark.parametrize("device, add", [
    ("new-host", "add-device data/raw/cpu-gbps/new-host"),
    ("old-host", "add-device --append data/raw/cpu-gbps/old-host/20261128T040000Z"),
])
def test_a_finished_capture_prints_the_next_step(tmp_path, monkeypatch, capsys, device, add):
    _fake_kit(tmp_path, monkeypatch, f"{device}/20261128T040000Z")
    assert cli.main(["capture", "cpu-gbps", "--", "--device", device]) == 0
    out = capsys.readouterr().out
    assert f"Next: python -m mobitrace validate data/raw/cpu-gbps/{device}/20261128T040000Z" in out
    assert f"python -m mobitrace {add}\n" in out
    assert "make" in out.splitlines()[-1]


@pytest.mark.parametrize("writes, args, status", [
    ("h/20261128T040000Z", ["--device", "h", "--smoke"], 0),          # a smoke run tests the kit
    ("h/20261128T040000Z.partial", ["--device", "h"], 0),             # unfinished
    (None, ["--device", "h"], 77),                                     # could not capture here
])
def test_no_next_step_without_a_finished_capture(tmp_path, monkeypatch, capsys, writes, args, status):
    _fake_kit(tmp_path, monkeypatch, writes, status)
    assert cli.main(["capture", "cpu-gbps", "--", *args]) == status
    assert "Next:" not in capsys.readouterr().out
