"""A warm fork server for the pipeline's Python processes.

Every stage command starts Python and imports pandas, pandera and pyarrow,
and a notebook stage also starts a kernel that imports seaborn, scipy and
statsmodels (`make bench` shows what that costs, with and without the
server). `python -m mobitrace repro` starts one server
that imports those libraries (and Sphinx) once; each stage command (`python -m mobitrace ...`, via
__main__.py) and each notebook kernel (`python -m mobitrace.warm run
ipykernel_launcher ...`, the kernel spec mobitrace/notebooks.py uses) then asks it
for a fork of itself that runs `python -m MODULE` with the caller's argv,
working directory, environment, sys.path and standard streams, and waits for
the fork's exit status, which it exits with (a signal that ended the fork
ends it too).
Signals the caller gets (SIGINT, SIGTERM, SIGHUP) go to the fork; a caller
that dies takes the fork's process group with it.

The server preloads third-party libraries only, never mobitrace's own
modules, so a fork imports the project's code as a new process would. It
serves only the user that started it (SO_PEERCRED), through a socket in a
private (0700) folder, and only callers whose interpreter, working directory
and import-relevant environment (PYTHON*, MPL*, locale, thread counts, ...)
are its own: anything else, or no server, runs the command in the calling
process as before. Plain `dvc repro` does not use it.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import re
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = "MOBITRACE_WARM"  # the server's socket, for the processes of one run
OFF = "MOBITRACE_NO_WARM"  # 1: no server; every command starts its own Python
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Environment that changes what an import does or finds: a caller whose
# values differ from the server's gets no fork.
_IMPORT_ENV = re.compile(r"^(PYTHON|MPL|MATPLOTLIB|OMP_|OPENBLAS|MKL_|NUMEXPR|ARROW|JUPYTER|IPYTHON|XDG_|LC_)"
                         r"|^(HOME|LANG|LANGUAGE|TZ)$")
# matplotlib reads MPLBACKEND at import, and a kernel sets it when it is
# unset, so without it no plotting library is preloaded. Nor is
# ipykernel.kernelapp, whose defaults read the kernel's own environment at
# import (JPY_PARENT_PID). pandera imports hypothesis only at its first
# validation, which a command then blocks (__main__.py) as it would alone.
_LIBRARIES = ("numpy", "pandas", "pyarrow", "pyarrow.parquet", "pandera.pandas", "yaml", "scipy.stats",
              "statsmodels.api", "statsmodels.formula.api", "nbformat", "jupytext", "papermill", "jupyter_client")
_PLOTTING = ("matplotlib", "matplotlib.pyplot", "seaborn")
_BOOK = ("jupyter_book.cli.main", "jupyter_book.sphinx", "myst_nb.sphinx_ext", "sphinx_book_theme",
         "sphinx_design.extension")  # the book stage's Sphinx, loaded last: it runs last

_in_fork = False  # True in a fork: its own commands run here, not in another fork


def _import_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if _IMPORT_ENV.match(k)}


def _send(sock: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    data = struct.pack("!I", len(data)) + data
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.sendall(data)


def _recv(sock: socket.socket, with_fds: bool = False) -> tuple[dict | None, list[int]]:
    """One message (None at end of stream) and the descriptors sent with it."""
    buf, fds = b"", []
    while len(buf) < 4 or len(buf) < 4 + struct.unpack("!I", buf[:4])[0]:
        if with_fds and not fds:
            chunk, fds, _, _ = socket.recv_fds(sock, 65536, 3)
        else:
            chunk = sock.recv(65536)
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None, []
        buf += chunk
    return json.loads(buf[4:]), list(fds)


# --- the caller ---------------------------------------------------------------

def delegate(module: str, argv: list[str]) -> int | None:
    """Run `python -m module argv` in a fork of the server named by
    $MOBITRACE_WARM and return its exit status, or None if there is no server
    or it refused (the caller then runs the command itself)."""
    path = os.environ.get(ENV)
    if not path or _in_fork:
        return None
    # From here on our signals are the fork's: kept until it has started.
    pending: list[int] = []
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    previous = {sig: signal.signal(sig, lambda signum, frame: pending.append(signum)) for sig in _FORWARDED}
    try:
        sock.connect(path)
        _send(sock, {"module": module, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
                     "path": sys.path, "executable": sys.executable}, [0, 1, 2])
        reply, _ = _recv(sock)
    except (OSError, ValueError):
        reply = None
    if not reply or "started" not in reply:  # run here, with what we got meanwhile
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in pending:
            os.kill(os.getpid(), sig)
        return None
    return _wait(sock, pending)


def _wait(sock: socket.socket, pending: list[int]) -> int:
    """Forward our signals to the fork until its exit status arrives."""
    def forward(signum, frame):
        with contextlib.suppress(OSError):
            _send(sock, {"signal": signum})
    for sig in _FORWARDED:
        signal.signal(sig, forward)
    for sig in pending:
        forward(sig, None)
    reply, _ = _recv(sock)
    if reply is None:
        print("error: the warm server (mobitrace.warm) ended before the command did", file=sys.stderr)
        return 1
    status = reply["exit"]
    if status < 0:  # ended by a signal: so do we, as a process of our own would
        if -status != signal.SIGKILL:
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        return 128 - status
    return status


# --- the server ---------------------------------------------------------------

class _Server:
    def __init__(self, path: str):
        self.path, self.pid = path, os.getpid()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)  # callers queue while the libraries load
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self.forks: dict[int, tuple[socket.socket, int]] = {}  # pid -> (caller, pidfd)
        self.env = _import_env(os.environ)
        self.stopping, self.libraries_asked = False, False
        self.todo: list[str] = []  # modules to preload, one per turn of the loop

    def serve(self) -> dict | None:
        """Serve until SIGTERM; in a fork, return its request instead."""
        while not self.stopping or self.forks:
            for key, _ in self.selector.select(0 if self.todo else None):
                what, data = key.data
                if what == "accept":
                    request = self._accept()
                elif what == "caller":
                    request = self._from_caller(key.fileobj, data)
                else:
                    request = self._reap(data)
                if request is not None:
                    return request
            if self.todo:  # one import at a time, so that a waiting caller is served meanwhile
                module = self.todo.pop(0)
                try:
                    importlib.import_module(module)
                except Exception as exc:  # noqa: BLE001 -- a fork imports it again, and fails visibly
                    _log(f"not preloaded: {module}: {type(exc).__name__}: {exc}")
                if not self.todo:
                    _log("preloaded")
        return None

    def _accept(self) -> dict | None:
        conn, _ = self.listener.accept()
        pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        try:
            conn.settimeout(10)
            request, fds = _recv(conn, with_fds=True)
            conn.settimeout(None)
        except (OSError, ValueError):
            conn.close()
            return None
        if request is None:
            conn.close()
            return None
        why = self._refusal(request, uid, len(fds))
        self._preload()
        _log(f"{'refused (' + why + ')' if why else 'fork'}: {request.get('module')} {request.get('argv')}")
        if why or self.stopping:
            with contextlib.suppress(OSError):
                _send(conn, {"refused": why or "stopping"})
            conn.close()
            for fd in fds:
                os.close(fd)
            return None
        gc.freeze()  # the fork's collections skip what is loaded, and leave its pages shared
        pid = os.fork()
        if pid == 0:
            conn.close()  # the server's end of it: the fork talks through its descriptors only
            return self._become_fork(request, fds)
        _log(f"forked {pid}")
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # also done in the fork: whichever runs first
        pidfd = os.pidfd_open(pid)
        self.forks[pid] = (conn, pidfd)
        self.selector.register(conn, selectors.EVENT_READ, ("caller", pid))
        self.selector.register(pidfd, selectors.EVENT_READ, ("exit", pid))
        with contextlib.suppress(OSError):
            _send(conn, {"started": pid})
        return None

    def _preload(self) -> None:
        """The libraries from the first request on: a no-op run loads none."""
        if not self.libraries_asked:
            self.libraries_asked = True
            self.todo += [*_LIBRARIES, *(_PLOTTING if os.environ.get("MPLBACKEND") else ()), *_BOOK]

    def _refusal(self, request: dict, uid: int, nfds: int) -> str | None:
        if uid != os.getuid():
            return "another user"
        if nfds != 3 or not re.fullmatch(r"\w+(\.\w+)*", str(request.get("module"))):
            return "malformed request"
        if request.get("executable") != sys.executable:
            return "another interpreter"
        if request.get("cwd") != os.getcwd():
            return "another working directory"
        if _import_env(request.get("env") or {}) != self.env:
            return "another environment"
        return None

    def _from_caller(self, conn: socket.socket, pid: int) -> None:
        try:
            message, _ = _recv(conn)
        except (OSError, ValueError):
            message = None
        if message is None:  # the caller is gone: so is its fork
            self.selector.unregister(conn)
            _kill_group(pid, signal.SIGKILL)
            return None
        if message.get("signal") in _FORWARDED:
            _kill_group(pid, message["signal"])
        return None

    def _reap(self, pid: int) -> None:
        _, status = os.waitpid(pid, 0)
        _log(f"exit {os.waitstatus_to_exitcode(status)}: {pid}")
        conn, pidfd = self.forks.pop(pid)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(conn)
        with contextlib.suppress(OSError):
            _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
        conn.close()
        return None

    def _become_fork(self, request: dict, fds: list[int]) -> dict:
        global _in_fork
        _in_fork = True
        _die_with_parent(signal.SIGKILL)  # its caller learns of the server's end: so must it
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        for sig in (*_FORWARDED, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.selector.close()
        self.listener.close()
        for conn, pidfd in self.forks.values():
            conn.close()
            os.close(pidfd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        return request

    def stop(self, signum=None, frame=None) -> None:
        """SIGTERM: refuse new callers, end the running forks, then exit."""
        if os.getpid() != self.pid:  # a fork, before its own handlers are set
            os._exit(128 + signal.SIGTERM)
        self.stopping = True
        for pid in self.forks:
            _kill_group(pid, signal.SIGKILL)
        if not self.forks:  # else the loop ends once they are reaped
            self.close()
            os._exit(0)  # no teardown of the loaded libraries: the run waits for this

    def close(self) -> None:
        if os.getpid() == self.pid:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            with contextlib.suppress(OSError):  # the private folder, if its creator is gone
                os.rmdir(os.path.dirname(self.path))


def _log(line: str) -> None:
    """$MOBITRACE_WARM_LOG, if set: a line per request (is the run warm?)."""
    path = os.environ.get("MOBITRACE_WARM_LOG")
    if path:
        with open(path, "a") as log:
            log.write(f"{time.time():.3f} {line}\n")


def _die_with_parent(sig: int) -> None:
    """prctl(PR_SET_PDEATHSIG): `sig` when our parent ends (not inherited by forks)."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, sig)  # 1: PR_SET_PDEATHSIG, linux/prctl.h


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _std_streams() -> None:
    """New sys.stdin/stdout/stderr over descriptors 0-2 (now the caller's),
    buffered as Python buffers a new process's."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        if fd and unbuffered:
            buffered = raw
        else:
            buffered = (io.BufferedReader if fd == 0 else io.BufferedWriter)(raw)
        stream = io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                  line_buffering=bool(fd) and (fd == 2 or os.isatty(fd)),
                                  write_through=bool(fd) and unbuffered)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run_request(request: dict) -> int:
    """Run the caller's command as `python -m` would: in a fork, in the
    caller's folder, environment and streams (a request without them: here)."""
    import runpy
    if "cwd" in request:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:] = request["path"]
        _std_streams()
    sys.argv = ["-m", *request["argv"]]
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def serve(path: str, parent: int) -> int:
    server = _Server(path)
    signal.signal(signal.SIGTERM, server.stop)
    _die_with_parent(signal.SIGTERM)  # a run killed outright (SIGKILL) takes its server along
    try:
        if os.getppid() != parent:  # it died before that
            return 0
        request = server.serve()
    finally:
        server.close()
    if request is None:
        os._exit(0)  # as in stop()
    code = _run_request(request)
    # Exit as a new process would, but without tearing down the preloaded
    # libraries' objects one by one (seconds for a fork that never used them).
    threading = sys.modules.get("threading")
    if threading is not None and hasattr(threading, "_shutdown"):
        threading._shutdown()  # non-daemon threads, as at interpreter exit
    import atexit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


@contextlib.contextmanager
def running(env: dict | None = None, cwd: Path | None = None):
    """A server for the callers in `cwd` (by default ours) for the duration
    of the block, listening when the block starts (~0.05 s); yields the
    environment they need (`env`, by default os.environ, plus $MOBITRACE_WARM)."""
    env = dict(os.environ if env is None else env)
    if env.get(OFF) == "1":  # for measuring what the server saves (make bench)
        yield env
        return
    folder = tempfile.mkdtemp(prefix="mobitrace-warm-")  # 0700: only we can connect
    path = os.path.join(folder, "socket")
    proc = subprocess.Popen([sys.executable, "-m", "mobitrace.warm", "serve", path, str(os.getpid())], env=env, cwd=cwd,
                            stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        yield {**env, ENV: path}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) == 3:
        return serve(argv[1], int(argv[2]))
    if argv[:1] == ["run"] and len(argv) >= 2:  # e.g. a notebook kernel: forked if a server runs, else here
        code = delegate(argv[1], argv[2:])
        if code is not None:
            return code
        return _run_request({"module": argv[1], "argv": argv[2:]})
    print("usage: python -m mobitrace.warm serve SOCKET PARENT-PID | run MODULE [ARGS]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    from mobitrace import warm  # the module's state (_in_fork) lives in one copy

    sys.exit(warm.main(sys.argv[1:]))
