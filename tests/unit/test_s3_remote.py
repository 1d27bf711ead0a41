"""The DVC round trip of a big capture through a real S3-compatible server:
MinIO, built from its Go module into .tools/bin by `make s3-tools`,
serves a temporary bucket on a free 127.0.0.1 port with random credentials.
`add-device --dvc` pushes a session to the remote s3://<bucket>/mobitrace
(.dvc/config, committed as a team would; the credentials only in the
environment), a fresh `git clone` fetches it with scripts/pull_captures.py
(as `make` does), and the fetched bytes are the registered session's. Without the
binary the tests skip (fail under CI=true)."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import digest_tree
from tests.helpers import stop, tool
from tests.unit.test_add_device_dvc import SMOKE, _git, _upload

pytestmark = pytest.mark.waits  # a server to start: run first, beside the shared build (tests/conftest.py)

from tests import ROOT
BUCKET = "mobitrace-test"
CAP = f"data/raw/cpu-gbps/synthetic-s3/{SMOKE.name}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class S3:
    """A running MinIO: its endpoint, credentials and a botocore client."""

    def __init__(self, endpoint: str, key: str, secret: str, no_config: Path):
        import botocore.session
        self.endpoint, self.key, self.secret, self.no_config = endpoint, key, secret, str(no_config)
        self.client = botocore.session.get_session().create_client(
            "s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret,
            region_name="us-east-1")

    def env(self, secret: str | None = None) -> dict:
        """The environment a user has: credentials as AWS_*; empty AWS config
        files, not this machine's user's."""
        return {**os.environ, "AWS_ACCESS_KEY_ID": self.key, "AWS_SECRET_ACCESS_KEY": secret or self.secret,
                "AWS_CONFIG_FILE": self.no_config, "AWS_SHARED_CREDENTIALS_FILE": self.no_config,
                "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}

    def keys(self, prefix: str) -> set[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        return {obj["Key"] for page in pages for obj in page.get("Contents", [])}


@pytest.fixture(scope="module")
def s3(repo, tmp_path_factory):
    """MinIO on a free loopback port with a temporary data folder and random
    credentials, and an empty bucket; stopped at the end of the module."""
    minio = tool(repo, "minio", "make s3-tools")
    base = tmp_path_factory.mktemp("minio")
    port, console = _free_port(), _free_port()
    key, secret = "mt" + secrets.token_hex(8), secrets.token_hex(20)
    env = {**os.environ, "MINIO_ROOT_USER": key, "MINIO_ROOT_PASSWORD": secret,
           "MINIO_BROWSER": "off", "MINIO_UPDATE": "off", "MINIO_CI_CD": "on"}
    log = open(base / "minio.log", "w")
    proc = subprocess.Popen([minio, "server", "--quiet", "--address", f"127.0.0.1:{port}",
                             "--console-address", f"127.0.0.1:{console}", str(base / "data")],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:  # ready when its liveness probe answers
            if proc.poll() is not None:
                pytest.fail(f"minio exited ({proc.returncode}): {(base / 'minio.log').read_text()}")
            try:
                with urllib.request.urlopen(f"{endpoint}/minio/health/live", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"minio did not answer on {endpoint} within 60 s: {(base / 'minio.log').read_text()}")
            time.sleep(0.2)
        (base / "aws-config").write_text("")
        server = S3(endpoint, key, secret, base / "aws-config")
        server.client.create_bucket(Bucket=BUCKET)
        yield server
    finally:
        stop(proc, timeout=20)
        log.close()


def _run(project: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=project, env=env, capture_output=True, text=True)


def test_a_synthetic_session_goes_to_s3_and_a_fresh_clone_pulls_the_same_bytes(s3, dvc_project, tmp_path):
    url = f"s3://{BUCKET}/mobitrace"
    (dvc_project / "dvc.yaml").write_text("stages: {}\n")  # the CLI finds the project by dvc.yaml + params.yaml
    for args in (["url", url], ["endpointurl", s3.endpoint]):
        assert _run(dvc_project, s3.env(), "-m", "dvc", "remote", "modify", "store", *args).returncode == 0
    _git(dvc_project, "add", "-A")
    _git(dvc_project, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "the team's S3 remote")

    added = _run(dvc_project, s3.env(), "-m", "mobitrace", "add-device", str(_upload(tmp_path)),
                 "--device", "synthetic-s3", "--dvc")
    assert added.returncode == 0, added.stderr
    assert f"{CAP}.dvc, pushed to the DVC remote 'store'" in added.stdout, added.stdout
    # the bucket holds exactly the objects of the local cache (the .dir listing and each file)
    cache = dvc_project / ".dvc" / "cache"
    local = {p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file()}
    assert len(local) == sum(p.is_file() for p in SMOKE.rglob("*")) + 1
    assert s3.keys("mobitrace/") == {f"mobitrace/{k}" for k in local}

    _git(dvc_project, "add", "-A")
    _git(dvc_project, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "synthetic-s3")
    fresh = tmp_path / "fresh"
    _git(tmp_path, "clone", "-q", str(dvc_project), str(fresh))
    assert not (fresh / CAP).exists() and not (fresh / ".dvc" / "cache").exists()
    pull = [str(ROOT / "scripts" / "pull_captures.py")]

    # a wrong secret: the server refuses, one line naming the capture and the remote, nothing fetched
    refused = _run(fresh, s3.env(secret="not-" + s3.secret), *pull)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(f"error: capture {CAP} could not be fetched from DVC remote 'store' ({url}): "
                                     "failed to connect to s3"), refused.stderr
    assert "Forbidden" in refused.stderr  # DVC's reason: the server's 403
    assert not (fresh / CAP).exists()

    fetched = _run(fresh, s3.env(), *pull)
    assert (fetched.returncode, fetched.stderr) == (0, "")
    assert fetched.stdout == f"fetched capture {CAP} from DVC remote 'store' ({url})\n"
    # the bytes add-device registered (its manifest names the new device)
    got, registered = digest_tree(fresh, [CAP]), digest_tree(dvc_project, [CAP])
    assert got == registered and len(got) == sum(p.is_file() for p in SMOKE.rglob("*"))
    again = _run(fresh, s3.env(), *pull)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
