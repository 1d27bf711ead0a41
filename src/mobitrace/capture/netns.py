"""Network namespaces and veth pairs that are always removed: on a normal
exit, on an exception and on SIGINT/SIGTERM/SIGHUP.

    with handle_signals(), Namespaces("mtst-", ["a", "b"]) as ns:
        ns.veth("a", "va", "b", "vb")
        ns.sh("a", "ip", "addr", "add", "10.91.0.1/30", "dev", "va")
        ...

handle_signals() turns those signals into an Interrupted exception (a
BaseException, like KeyboardInterrupt, so `except Exception` in a kit's run
loop does not swallow it), so every `with`/`finally` unwinds; removal runs
with the signals blocked, and an atexit hook removes whatever is left.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

from mobitrace.capture.command import CommandError, in_netns, sh

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SKIP = 77  # exit status of a kit that cannot capture on this machine
_LIVE: list["Namespaces"] = []


class Interrupted(BaseException):
    """A kit got SIGINT, SIGTERM or SIGHUP; exit with `status` (128 + signal)."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signal.Signals(signum).name}")
        self.signum = signum
        self.status = 128 + signum


def _raise(signum, _frame):
    raise Interrupted(signum)


@contextlib.contextmanager
def handle_signals():
    """Within the block, SIGINT/SIGTERM/SIGHUP raise Interrupted."""
    old = {s: signal.signal(s, _raise) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_blocked():
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def exists(name: str) -> bool:
    return Path("/run/netns", name).exists()


def listing(prefix: str = "") -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {ln.split()[0] for ln in out.splitlines() if ln.strip() and ln.startswith(prefix)}


def remove(name: str) -> None:
    """Kill every process in namespace `name`, then delete it (quietly)."""
    pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), 9)
        except (ProcessLookupError, ValueError):
            pass
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


# The Debian package of each program a kit runs (scripts/system-packages.txt
# lists them all), so that a missing one comes with its install line.
DEBIAN_PACKAGES = {"ip": "iproute2", "tc": "iproute2", "iperf3": "iperf3", "ethtool": "ethtool",
                   "gcc": "gcc", "nginx": "nginx-light", "openssl": "openssl", "sysctl": "procps"}


def missing_tool(tool: str) -> str:
    """The reason a kit gives for a program not on PATH, with how to install it."""
    package = DEBIAN_PACKAGES.get(tool, tool)
    return (f"{tool} not installed (Debian/Ubuntu: apt-get install {package}; "
            "every kit's packages: scripts/system-packages.txt)")


def why_not(prefix: str, tools=("ip",), root_reason: str = "not root") -> str | None:
    """Why a kit cannot capture here (not root, a tool missing, no network
    namespaces), or None when it can."""
    if os.geteuid() != 0:
        return root_reason
    for tool in tools:
        if shutil.which(tool) is None:
            return missing_tool(tool)
    probe = f"{prefix}probe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class Namespaces:
    """Named network namespaces `<prefix><name>[<pid>]`, created on enter
    (or create()) and removed, with their processes and veths, on exit
    (or close()). With per_process=False the names are fixed and a stale
    namespace of the same name (from a killed run) is removed first."""

    def __init__(self, prefix: str, names, *, per_process: bool = True):
        tag = str(os.getpid()) if per_process else ""
        self.prefix = prefix
        self.names = {n: f"{prefix}{n}{tag}" for n in names}
        self.created: list[str] = []
        self.veths: list[str] = []

    def __getitem__(self, name: str) -> str:
        return self.names[name]

    def create(self) -> "Namespaces":
        _LIVE.append(self)
        for full in self.names.values():
            # Recorded before it exists, with signals held back, so that a
            # SIGTERM at any moment finds it in `created` (close removes it).
            with signals_blocked():
                if exists(full):
                    remove(full)
                self.created.append(full)
                sh("ip", "netns", "add", full)
            sh("ip", "-n", full, "link", "set", "lo", "up")
        return self

    def veth(self, a: str, a_if: str, b: str, b_if: str) -> None:
        """A veth pair: end `a_if` in namespace `a`, `b_if` in `b`."""
        self.veths.append(a_if)
        sh("ip", "link", "add", a_if, "netns", self[a], "type", "veth", "peer", "name", b_if, "netns", self[b])

    def sh(self, name: str, *cmd, check: bool = True, attempts: int = 1) -> str:
        """Run a set-up command inside namespace `name`."""
        return sh(*cmd, netns=self[name], check=check, attempts=attempts)

    def argv(self, name: str, cmd) -> list[str]:
        """The argv that runs `cmd` inside namespace `name`."""
        return in_netns(self[name], cmd)

    def address(self, name: str, dev: str, cidr: str) -> None:
        self.sh(name, "ip", "addr", "add", cidr, "dev", dev)
        self.sh(name, "ip", "link", "set", dev, "up")

    def close(self) -> None:
        with signals_blocked():
            for full in reversed(self.created):
                remove(full)
            for dev in self.veths:  # a veth left in the host's namespace by a failed move
                subprocess.run(["ip", "link", "del", dev], capture_output=True)
            self.created.clear()
            if self in _LIVE:
                _LIVE.remove(self)

    def __enter__(self) -> "Namespaces":
        try:
            return self.create()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc) -> None:
        self.close()


@atexit.register
def _close_all() -> None:
    for ns in list(_LIVE):
        ns.close()


__all__ = ["CommandError", "Interrupted", "Namespaces", "SKIP", "exists", "handle_signals", "listing", "remove",
           "missing_tool", "why_not"]
