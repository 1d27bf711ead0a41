"""Run a command: in a network namespace or not, with a timeout that kills
its whole process group, returning exit status, output and the exact
wait4() rusage of the process."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


class CommandError(RuntimeError):
    """A command that had to succeed did not; the message has its stderr."""


def in_netns(netns: str | None, cmd) -> list[str]:
    """`cmd` as run inside network namespace `netns` (unchanged for None)."""
    cmd = [str(c) for c in cmd]
    return ["ip", "netns", "exec", netns, *cmd] if netns else cmd


def rusage_of(ru) -> dict:
    return {"utime_s": ru.ru_utime, "stime_s": ru.ru_stime, "maxrss_kb": ru.ru_maxrss,
            "nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw}


def spawn(cmd, *, netns: str | None = None, preexec=None, **popen) -> subprocess.Popen:
    """Popen `cmd` in a process group of its own (so a timeout or cleanup
    kills it with its children); `preexec` runs in the child after that."""
    def pre():
        os.setpgrp()
        if preexec is not None:
            preexec()
    return subprocess.Popen(in_netns(netns, cmd), preexec_fn=pre, **popen)


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Signal the process group of a spawn()ed process, if it is alive."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def wait(proc: subprocess.Popen, timeout: float | None) -> tuple[int | None, dict, bool]:
    """Wait for `proc` at most `timeout` s: (exit status, rusage of exactly
    this process, timed out). On a timeout its process group is killed and
    reaped; the status is then None."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, rusage_of(ru), False
        if deadline is not None and time.monotonic() > deadline:
            kill_group(proc)
            _, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return None, rusage_of(ru), True
        time.sleep(0.01)


@dataclass
class Result:
    argv: list[str]
    returncode: int | None            # None: killed on the timeout
    stdout: str
    stderr: str
    rusage: dict = field(default_factory=dict)
    wall_s: float = 0.0
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run(cmd, timeout: float | None = None, *, netns: str | None = None, check: bool = False,
        preexec=None, env=None, cwd=None) -> Result:
    """Run `cmd` to the end (or `timeout` s, then kill its process group).
    Output goes through temporary files, so nothing blocks on a full pipe."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = spawn(cmd, netns=netns, preexec=preexec, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                     env=env, cwd=cwd)
        rc, ru, timed_out = wait(proc, timeout)
        wall = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        res = Result(list(proc.args), rc, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                     ru, wall, timed_out)
    if check and not res.ok:
        why = f"timed out after {timeout:g} s" if timed_out else f"exit {rc}"
        raise CommandError(f"{' '.join(res.argv)}: {why}: {res.stderr.strip()[:500]}")
    return res


def sh(*cmd, netns: str | None = None, check: bool = True, attempts: int = 1, timeout: float = 120) -> str:
    """A set-up command (ip, tc, ethtool, sysctl...): its stripped stdout.
    Raises CommandError (with stderr) unless check=False; retries a failed
    one `attempts` times (`ip netns exec` fails transiently on a busy host)."""
    for i in range(attempts):
        try:
            r = subprocess.run(in_netns(netns, cmd), capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError as exc:
            if check:
                raise CommandError(f"{' '.join(map(str, cmd))}: {exc}") from None
            return ""
        if r.returncode == 0 or not check:
            return r.stdout.strip()
        time.sleep(0.2 * (i + 1))
    raise CommandError(f"{' '.join(map(str, cmd))} failed ({r.returncode}): {r.stderr.strip()}")


def output(*cmd, netns: str | None = None, timeout: float = 10) -> str:
    """What a command prints (stdout, else stderr), for metadata; never raises."""
    try:
        r = subprocess.run(in_netns(netns, cmd), text=True, capture_output=True, timeout=timeout)
        return (r.stdout or r.stderr).strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable: {exc}"


def first_line(*cmd) -> str:
    return (output(*cmd).splitlines() or ["not available"])[0]


def read(path) -> str | None:
    """A small file's stripped text, or None when it cannot be read."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None
