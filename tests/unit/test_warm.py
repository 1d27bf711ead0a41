"""mobitrace.warm, the run's fork server, with a synthetic probe module: a
command forked from the server sees what it would see as a new process
(argv, folder, environment, standard streams) and ends the same way (exit
status, signals); a caller the server must not serve runs the command itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from mobitrace import warm

PROBE = '''
import json, os, signal, sys, time
mode = sys.argv[1]
report = {"argv": sys.argv[1:], "cwd": os.getcwd(), "probe_env": os.environ.get("PROBE_ENV"),
          "pid": os.getpid(), "ppid": os.getppid(), "name": __name__,
          "path0": sys.path[0], "stdin": sys.stdin.readline() if mode == "echo" else None}
print(json.dumps(report), flush=True)
print("to stderr", file=sys.stderr, flush=True)
if mode == "exit":
    sys.exit(int(sys.argv[2]))
if mode == "kill-self":
    os.kill(os.getpid(), signal.SIGTERM)
if mode == "wait":
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "warm_probe.py").write_text(PROBE)
    return tmp_path


def _env(extra=None):
    env = {k: v for k, v in os.environ.items() if k != warm.ENV}
    env["PROBE_ENV"] = "seen"
    env.update(extra or {})
    return env


def _caller(project, env, *args, **kw):
    return subprocess.Popen([sys.executable, "-m", "mobitrace.warm", "run", "warm_probe", *args], cwd=project,
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def _alive(pid: int) -> bool:
    """Running, not a zombie (its reaper may be slow: not what is tested)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _report(out: str) -> dict:
    return json.loads(out.splitlines()[0])


def _server_pid(env) -> int:
    """The server's pid: the process that listens on the socket is our child."""
    for pid in Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split():
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if env[warm.ENV].encode() in cmdline:
            return int(pid)
    raise AssertionError("no server process")


def test_synthetic_probe_forked_sees_what_a_new_process_sees(project):
    with warm.running(_env(), cwd=project) as env:
        assert warm.ENV in env
        server = _server_pid(env)
        proc = _caller(project, env, "echo", "a b", "--flag")
        out, err = proc.communicate("a line for stdin\n", timeout=60)
        forked = _report(out)
    proc = _caller(project, _env(), "echo", "a b", "--flag")
    out_local, err_local = proc.communicate("a line for stdin\n", timeout=60)
    local = _report(out_local)
    assert forked["ppid"] == server and forked["pid"] != proc.pid  # a fork of the server...
    assert local["pid"] == proc.pid  # ...where without a server the caller runs it
    for report in (forked, local):
        assert report["argv"] == ["echo", "a b", "--flag"]
        assert report["cwd"] == str(project)
        assert report["probe_env"] == "seen"
        assert report["name"] == "__main__"
        assert report["stdin"] == "a line for stdin\n"
    assert forked["path0"] == local["path0"]
    assert err == err_local == "to stderr\n"


@pytest.mark.parametrize("code", [0, 3, 2])
def test_synthetic_probe_exit_status_is_the_callers(project, code):
    with warm.running(_env(), cwd=project) as env:
        proc = _caller(project, env, "exit", str(code))
        out, _ = proc.communicate(timeout=60)
        assert _report(out)["ppid"] == _server_pid(env)
    assert proc.returncode == code


def test_synthetic_probe_killed_by_a_signal_kills_the_caller_so(project):
    with warm.running(_env(), cwd=project) as env:
        proc = _caller(project, env, "kill-self")
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM


def _wait_started(proc) -> dict:
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return json.loads(line)


def test_synthetic_probe_gets_the_callers_sigint(project):
    with warm.running(_env(), cwd=project) as env:
        proc = _caller(project, env, "wait")
        report = _wait_started(proc)
        assert report["ppid"] == _server_pid(env)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert out == "interrupted\n"
    assert proc.returncode == 130


def test_synthetic_probe_dies_with_its_caller(project):
    with warm.running(_env(), cwd=project) as env:
        proc = _caller(project, env, "wait")
        fork = _wait_started(proc)["pid"]
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(fork) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(fork)


def test_synthetic_probe_the_server_stops_its_forks_and_removes_its_socket(project):
    with warm.running(_env(), cwd=project) as env:
        server = _server_pid(env)
        proc = _caller(project, env, "wait")
        fork = _wait_started(proc)["pid"]
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL  # the fork's end, relayed
    assert not Path(env[warm.ENV]).parent.exists()
    assert not _alive(server) and not _alive(fork)


@pytest.mark.parametrize("change", ["environment", "folder"])
def test_synthetic_probe_a_caller_unlike_the_server_runs_it_itself(project, change):
    with warm.running(_env(), cwd=project) as env:
        if change == "environment":  # an import-relevant variable differs
            proc = _caller(project, {**env, "PYTHONHASHSEED": "7"}, "exit", "4")
        else:
            (project / "sub").mkdir()
            (project / "sub" / "warm_probe.py").write_text(PROBE)
            proc = _caller(project / "sub", env, "exit", "4")
        out, _ = proc.communicate(timeout=60)
    assert _report(out)["pid"] == proc.pid
    assert proc.returncode == 4


def test_synthetic_run_killed_outright_takes_its_server_along(project):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom mobitrace import warm\n"
         "with warm.running() as env:\n    print(env[warm.ENV], flush=True)\n    time.sleep(120)"],
        cwd=project, env=_env(), stdout=subprocess.PIPE, text=True)
    socket_path = Path(holder.stdout.readline().strip())
    assert socket_path.exists()
    server = [int(p) for p in Path(f"/proc/{holder.pid}/task/{holder.pid}/children").read_text().split()]
    holder.kill()
    holder.wait()
    deadline = time.monotonic() + 10
    while (socket_path.parent.exists() or any(_alive(p) for p in server)) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not socket_path.parent.exists()
    assert not any(_alive(p) for p in server)


def test_only_its_user_reaches_the_server(project):
    with warm.running(_env(), cwd=project) as env:
        assert Path(env[warm.ENV]).parent.stat().st_mode & 0o777 == 0o700
    request = {"module": "warm_probe", "executable": sys.executable, "cwd": os.getcwd(), "env": dict(os.environ)}
    server = types.SimpleNamespace(env=warm._import_env(os.environ))
    assert warm._Server._refusal(server, request, os.getuid(), 3) is None
    assert warm._Server._refusal(server, request, os.getuid() + 1, 3) == "another user"
    assert warm._Server._refusal(server, {**request, "module": "x; y"}, os.getuid(), 3) == "malformed request"


def test_no_server_no_delegation(project, monkeypatch):
    monkeypatch.setenv(warm.ENV, str(project / "no-such-socket"))
    assert warm.delegate("warm_probe", ["exit", "0"]) is None
    monkeypatch.delenv(warm.ENV)
    assert warm.delegate("warm_probe", ["exit", "0"]) is None
