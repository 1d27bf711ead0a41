"""The idle gate: CPU used outside the experiment, before and during each run.

A kit measures the *background load*: the CPU time of every process on the
machine except the kit's own process tree (the kit and every process it
started, which is the experiment), in % of one core:

- Method: snapshots of /proc/<pid>/stat of every process: utime + stime (the
  process's own CPU time, all its threads, live and exited) and cutime +
  cstime (the CPU time of the children it has reaped), keyed by (pid, start
  time) so that a reused pid is a new process. Per interval between two
  snapshots, the background is the sum over processes outside the kit's tree
  of the growth of utime+stime+cutime+cstime; a process that started in the
  interval counts whole; a process that exited in the interval is taken off
  at its last seen value, because its whole life reappears in its reaper's
  cutime+cstime (so a process that lived and died between two snapshots is
  counted through its parent, and one that ran long before is not counted
  twice). Kernel threads (PF_KTHREAD) are summed apart and not gated: during
  a run they do the experiment's own softirq and NAPI work.
- Why not /proc/stat: its busy ticks are sampled by the timer tick, which
  misreports paced network load on this VM; per-process utime+stime is the
  scheduler's exact run time (sum_exec_runtime), rounded to a clock tick.
  The fallback, where per-process times cannot be trusted, is /proc/stat's
  busy time minus the experiment's own per-process time.
- Blind spots: (1) each process's value is truncated to a clock tick
  (10 ms at USER_HZ 100), so a window with n busy processes is off by up to
  n ticks: a 2 s window with 5 busy processes by up to 2.5% of a core, a
  10 s run by 0.5%; (2) a process reaped without a wait (SIGCHLD ignored,
  kernel threads) takes its time since the last snapshot with it, and one
  seen before is then taken off wrongly (an interval never goes below 0);
  (3) hard and soft interrupt time that the kernel does not charge to a
  task (CONFIG_IRQ_TIME_ACCOUNTING) is not seen; (4) a process that leaves
  the kit's tree (a double-forked daemon) counts as background; (5) the
  snapshots are not atomic: a process that exits while /proc is read may be
  seen neither alive nor in its reaper; (6) the gate's own reading of /proc
  runs in the kit's process and so is never background, but it is CPU the
  experiment shares the machine with: its cost is recorded (`cost_pct`).

Policy: before a run the background is measured over `window_s`; above
`max_pct` the kit waits `wait_s` and measures again, at most `retries` more
times. A run that cannot start clean runs anyway and is flagged, or, with
`strict`, is not run (NotIdle). During the run a thread takes a snapshot
every `period_s`; a run whose background during it was above `max_pct` is
flagged too. Each run's record goes to the session manifest under
`idle_gate:` (read back by mobitrace.core.capture_reader.background_load).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass

from mobitrace.capture.sampler import Periodic

PF_KTHREAD = 0x00200000
TICK_HZ = os.sysconf("SC_CLK_TCK")
METHOD = ("per-process CPU time (/proc/<pid>/stat utime+stime, and cutime+cstime of reaped children) of every "
          "process outside the kit's process tree, in % of one core; kernel threads apart, not gated")
DEFAULTS = {"max_pct": 5.0, "wait_s": 10.0, "retries": 3, "window_s": 2.0, "period_s": 1.0}
# A smoke capture tests the kit, not the machine: it measures and flags, but does not wait.
SMOKE = {"retries": 0, "window_s": 0.5}


class NotIdle(Exception):
    """--idle-strict: the machine did not become idle enough to start a run.
    Not a RuntimeError, so that a kit's per-run error handling (which retries
    or records a failed run) lets it through; the kit exits with `status`."""

    status = 75  # EX_TEMPFAIL: try again later


@dataclass(frozen=True)
class Proc:
    ppid: int
    own: int        # utime + stime, ticks
    reaped: int     # cutime + cstime, ticks
    kthread: bool


Snapshot = dict  # (pid, starttime) -> Proc


def parse_stat(text: str) -> tuple[int, Proc]:
    """(start time, Proc) from the text of /proc/<pid>/stat (the command
    name, field 2, may hold spaces and parentheses: split after the last ')')."""
    f = text.rsplit(")", 1)[1].split()
    # f[0] is field 3 (state): ppid 4, flags 9, utime..cstime 14-17, starttime 22
    return int(f[19]), Proc(ppid=int(f[1]), own=int(f[11]) + int(f[12]), reaped=int(f[13]) + int(f[14]),
                            kthread=bool(int(f[6]) & PF_KTHREAD))


def snapshot(proc: str = "/proc") -> Snapshot:
    out = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/stat") as fh:
                start, p = parse_stat(fh.read())
        except (OSError, IndexError, ValueError):
            continue  # exited while we read
        out[(int(name), start)] = p
    return out


def tree(snap: Snapshot, roots) -> set:
    """The keys of `roots` and of all their descendants in `snap`."""
    children: dict[int, list] = {}
    for key, p in snap.items():
        children.setdefault(p.ppid, []).append(key)
    todo = [k for k in snap if k[0] in set(roots)]
    seen = set(todo)
    while todo:
        for child in children.get(todo.pop()[0], ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def outside_ticks(a: Snapshot, b: Snapshot, roots) -> tuple[int, int]:
    """CPU ticks used between snapshots `a` and `b` outside the process
    trees of `roots`: (user processes, kernel threads)."""
    inside = tree(a, roots) | tree(b, roots)
    live_inside_pids = {k[0] for k in tree(b, roots)}
    user = kernel = 0
    for key, p in b.items():
        if key in inside:
            continue
        was = a.get(key)
        if p.kthread:
            kernel += p.own - (was.own if was else 0)
        else:
            user += p.own + p.reaped - ((was.own + was.reaped) if was else 0)
    for key, p in a.items():
        if key in b or p.kthread:
            continue
        # Exited: its whole life is now in its reaper's cutime+cstime. The
        # experiment's own processes are reaped inside, unless orphaned.
        if key not in inside or p.ppid not in live_inside_pids:
            user -= p.own + p.reaped
    return max(0, user), max(0, kernel)


def pct(ticks: int, seconds: float) -> float:
    return round(100.0 * ticks / TICK_HZ / seconds, 2) if seconds > 0 else 0.0


class _During:
    """Background load while a run goes on: a snapshot every `period_s`."""

    def __init__(self, gate: "IdleGate"):
        self.gate = gate
        self.user = self.kernel = 0
        self.last: Snapshot | None = None
        self.cost_s = 0.0
        self.lock = threading.Lock()

    def sample(self) -> None:
        c0 = time.thread_time()
        snap = self.gate.snap()
        with self.lock:
            if self.last is not None:
                u, k = outside_ticks(self.last, snap, self.gate.roots)
                self.user, self.kernel = self.user + u, self.kernel + k
            self.last = snap
        self.cost_s += time.thread_time() - c0


class IdleGate:
    def __init__(self, max_pct: float = DEFAULTS["max_pct"], wait_s: float = DEFAULTS["wait_s"],
                 retries: int = DEFAULTS["retries"], window_s: float = DEFAULTS["window_s"],
                 period_s: float = DEFAULTS["period_s"], strict: bool = False, enabled: bool = True,
                 roots=None, log=None, snap=snapshot, sleep=time.sleep):
        self.max_pct, self.wait_s, self.retries = float(max_pct), float(wait_s), int(retries)
        self.window_s, self.period_s, self.strict, self.enabled = float(window_s), float(period_s), strict, enabled
        self.roots = set(roots) if roots is not None else {os.getpid()}
        self.log = log or (lambda msg: None)
        self.snap, self.sleep = snap, sleep
        self.runs: dict[str, dict] = {}

    @classmethod
    def add_arguments(cls, parser) -> None:
        g = parser.add_argument_group(
            "idle gate", "Before each run the kit measures the CPU used outside the experiment (every process but "
            "the kit and those it started, from /proc/<pid>/stat) over --idle-window-s; above --idle-max-pct of one "
            "core it waits --idle-wait-s and measures again, at most --idle-retries times, then runs anyway and "
            "flags the run (or, with --idle-strict, stops). The load during the run is measured too and a run above "
            "the threshold is flagged. Both go to the session manifest (idle_gate:).")
        g.add_argument("--idle-max-pct", type=float, default=DEFAULTS["max_pct"],
                       help="background load allowed, %% of one core (default %(default)s)")
        g.add_argument("--idle-wait-s", type=float, default=DEFAULTS["wait_s"],
                       help="wait between measurements when busy (default %(default)s)")
        g.add_argument("--idle-retries", type=int, default=None,
                       help=f"measurements after the first before a run is flagged (default {DEFAULTS['retries']}, "
                            f"--smoke {SMOKE['retries']})")
        g.add_argument("--idle-window-s", type=float, default=None,
                       help=f"length of one measurement before a run (default {DEFAULTS['window_s']}, "
                            f"--smoke {SMOKE['window_s']})")
        g.add_argument("--idle-strict", action="store_true",
                       help="stop (exit status 75, the session left unfinished) instead of running flagged "
                            "when the machine does not become idle")
        g.add_argument("--no-idle-gate", dest="idle_gate", action="store_false",
                       help="do not measure (the manifest then has no idle_gate)")

    @classmethod
    def from_args(cls, args, log=None) -> "IdleGate":
        base = {**DEFAULTS, **SMOKE} if getattr(args, "smoke", False) else DEFAULTS
        if args.idle_retries is None:
            args.idle_retries = base["retries"]
        if args.idle_window_s is None:
            args.idle_window_s = base["window_s"]
        for name in ("idle_max_pct", "idle_wait_s", "idle_window_s"):
            if not getattr(args, name) >= 0:
                raise SystemExit(f"--{name.replace('_', '-')}: expected a number >= 0")
        if args.idle_retries < 0:
            raise SystemExit("--idle-retries: expected an integer >= 0")
        return cls(args.idle_max_pct, args.idle_wait_s, args.idle_retries, args.idle_window_s,
                   strict=args.idle_strict, enabled=args.idle_gate, log=log)

    def measure(self, seconds: float) -> tuple[float, float]:
        """(user, kernel-thread) background over `seconds`, % of one core."""
        a, t0 = self.snap(), time.monotonic()
        self.sleep(seconds)
        b, t1 = self.snap(), time.monotonic()
        u, k = outside_ticks(a, b, self.roots)
        return pct(u, t1 - t0), pct(k, t1 - t0)

    def before(self) -> dict:
        """Measure, waiting and retrying while busy: the before-run record."""
        waited = 0.0
        for attempt in range(1, self.retries + 2):
            user, kernel = self.measure(self.window_s)
            if user <= self.max_pct or attempt > self.retries:
                break
            self.log(f"idle gate: background {user:.1f}% of a core > {self.max_pct:g}%; "
                     f"waiting {self.wait_s:g} s (attempt {attempt}/{self.retries + 1})")
            self.sleep(self.wait_s)
            waited += self.wait_s
        clean = user <= self.max_pct
        if not clean:
            if self.strict:
                raise NotIdle(f"idle gate: background {user:.1f}% of a core > {self.max_pct:g}% after "
                              f"{attempt} measurement{'s' * (attempt > 1)} ({waited:g} s waited)")
            self.log(f"idle gate: still {user:.1f}% of a core after {attempt} measurements; running flagged")
        return {"before_pct": user, "kthreads_before_pct": kernel, "attempts": attempt, "waited_s": waited,
                "clean_before": clean}

    @contextlib.contextmanager
    def run(self, run_id: str):
        """Around one run: the before-gate, then the load during the block.
        The record (also yielded, filled in on exit) goes to self.runs."""
        if not self.enabled:
            yield {}
            return
        rec = self.before()
        during = _During(self)
        thread = Periodic(self.period_s, during.sample)
        t0 = time.monotonic()
        thread.start()
        try:
            yield rec
        finally:
            thread.stop()
            secs = time.monotonic() - t0
            rec.update({"during_pct": pct(during.user, secs), "kthreads_during_pct": pct(during.kernel, secs),
                        "during_s": round(secs, 2), "cost_pct": round(100 * during.cost_s / secs, 2) if secs else 0.0})
            rec["flagged"] = not rec.pop("clean_before") or rec["during_pct"] > self.max_pct
            if rec["flagged"]:
                self.log(f"idle gate: run {run_id} flagged (background {rec['before_pct']:.1f}% before, "
                         f"{rec['during_pct']:.1f}% during; threshold {self.max_pct:g}%)")
            self.runs[run_id] = rec

    def manifest(self, previous: dict | None = None) -> dict | None:
        """The manifest's `idle_gate:`; `previous` (the one of a resumed
        session) keeps the records of runs done before."""
        if not self.enabled:
            return previous or None
        runs = {**((previous or {}).get("runs") or {}), **self.runs}
        return {"method": METHOD, "max_pct": self.max_pct, "window_s": self.window_s, "wait_s": self.wait_s,
                "retries": self.retries, "period_s": self.period_s, "strict": self.strict,
                "clock_ticks_per_s": TICK_HZ, "n_flagged": sum(1 for r in runs.values() if r.get("flagged")),
                "runs": runs}
