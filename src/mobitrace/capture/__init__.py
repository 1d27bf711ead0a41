"""The capture library shared by every capture kit under scripts/capture/:

- netns: network namespaces and veth pairs, always removed (errors, signals)
- lock: the machine-wide measurement lock (flock on --lock)
- command: run a command with a timeout (process group killed), rusage
- host: the one host-metadata collector (schema 2)
- session: the session writer (`.partial`, renamed when finished)
- progress: a progress line with ETA for every run
- sampler, cgroup: periodic /proc sampling; a CPU-limited cgroup
- idle: the idle gate (CPU used outside the experiment, before and during each run)
"""

from mobitrace.capture.command import CommandError, Result, output, read, run, sh, spawn, wait
from mobitrace.capture.host import SCHEMA, collect as host_metadata
from mobitrace.capture.idle import IdleGate, NotIdle
from mobitrace.capture.lock import MeasurementLock
from mobitrace.capture.netns import SKIP, Interrupted, Namespaces, handle_signals, missing_tool, why_not
from mobitrace.capture.progress import Progress
from mobitrace.capture.session import SessionWriter

__all__ = ["CommandError", "IdleGate", "Interrupted", "MeasurementLock", "Namespaces", "NotIdle", "Progress",
           "Result", "SCHEMA", "SKIP", "SessionWriter", "handle_signals", "host_metadata", "output", "read", "run",
           "missing_tool", "sh", "spawn", "wait", "why_not"]
