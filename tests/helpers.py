"""Helpers shared by the studies' tests of their committed captures and
capture kits."""

from __future__ import annotations

import os
import contextlib
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests import ROOT


def committed_devices(study: str) -> list[str]:
    """The devices params.yaml lists for `study` (its committed captures)."""
    return yaml.safe_load((ROOT / "params.yaml").read_text())[study]["devices"]


def ingest_committed(study: str, device: str, ingest, out: Path, host_keys) -> tuple[Path, pd.DataFrame, list[dict]]:
    """(raw folder, runs table, session manifests) of a committed capture,
    ingested by the study's `ingest(folder, out)` into `out` as the pipeline
    does (params.yaml's superseded sessions left out); every session's host
    metadata, superseded or not, has its keys: `host_keys` where its kit
    wrote schema 1, the capture library's whole host record in schema 2."""
    from mobitrace.core import capture_reader, host_info
    folder = ROOT / "data" / "raw" / study / device
    superseded = yaml.safe_load((ROOT / "params.yaml").read_text())[study].get("superseded")
    with capture_reader.superseding(superseded, "params.yaml"):
        ingest(folder, out)
    runs = pd.read_parquet(out / "runs.parquet")
    manifests = [yaml.safe_load((session / "manifest.yaml").read_text()) for session in folder.iterdir()]
    for manifest in manifests:
        keys = host_keys if host_info.manifest_schema(manifest) == 1 else host_info.HOST_KEYS
        for key in keys:
            assert key in manifest["host"], key
    return folder, runs, manifests


def assert_lean(folder: Path, limit: float) -> None:
    """Each session folder of a device kept in git is under `limit` bytes
    (per session: raw data is immutable, so superseded sessions stay)."""
    for session in (p for p in folder.iterdir() if p.is_dir()):
        size = sum(f.stat().st_size for f in session.rglob("*") if f.is_file())
        assert size < limit, f"raw captures in git should stay lean: {session.name} holds {size} bytes"


def lock_args() -> list[str]:
    """A capture kit's --lock for the machine-wide measurement lock, if there
    is one: $MOBITRACE_CAPTURE_LOCK, or /work/capture.lock on the shared machine."""
    lock = os.environ.get("MOBITRACE_CAPTURE_LOCK") or (
        "/work/capture.lock" if Path("/work/capture.lock").exists() else None)
    return ["--lock", lock] if lock else []


def smoke_command(kit: Path, out: Path, *extra: str) -> list[str]:
    """A capture kit's smoke run of device smoke-host, session smoke, into `out`."""
    return [sys.executable, str(kit), "--device", "smoke-host", "--session", "smoke", "--out", str(out), "--smoke",
            *extra, *lock_args()]


def tool(repo: Path, name: str, installed_by: str) -> str:
    """The path of a command the tests need: in the venv, .tools/bin (made by
    `make`'s tool targets) or PATH. Missing: skip with the reason, or fail
    under CI=true (CI must run every test)."""
    found = shutil.which(name, path=f"{Path(sys.executable).parent}{os.pathsep}{repo / '.tools' / 'bin'}") \
        or shutil.which(name)
    if not found:
        reason = f"needs {name} ({installed_by})"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def stop(proc: subprocess.Popen, timeout: float) -> None:
    """End a server the test started: SIGTERM, then SIGKILL if it has not
    exited within `timeout` seconds (kill is a no-op once it has exited)."""
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    proc.kill()
    proc.wait()
