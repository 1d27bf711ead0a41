#!/usr/bin/env python3
"""HTTP download client of the transfer-tuning capture kit, with exactly the
paper's three knobs:

  concurrency  cc files in flight at once (cc file workers share a queue of files)
  parallelism  p  streams per file: each file is split into p byte ranges
                  fetched at once with HTTP/1.1 Range requests, one persistent
                  (keep-alive) TCP connection per stream
  I/O size     io bytes per recv() from the socket and per pwrite() of the
                  received data to the output file (the application's I/O
                  request size)

so a run opens cc x p connections. It runs in the client namespace and, at
`sample_ms` intervals, samples its own precise CPU time (getrusage of the
process), the nginx processes' precise CPU time (/proc/<pid>/schedstat), the
bytes received, the interface counters and /proc/stat's cpu line. The
sampling starts `idle_pre_s` before the first request (the base window) and
stops `idle_post_s` after the last byte (the tail window). Every range
request's start, first-byte and end times are recorded (CLOCK_MONOTONIC ns).

    python client.py CONFIG.json      (written by run.py; see there)
Outputs in the config's out_dir: samples.csv, transfers.csv, client.json.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))  # a checkout without `pip install -e .`
from mobitrace.capture.sampler import read_kernel_file  # noqa: E402

SAMPLE_FIELDS = ["t_ns", "client_cpu_ns", "server_cpu_ns", "rx_bytes_app", "if_rx_bytes", "if_tx_bytes",
                 "stat_user", "stat_nice", "stat_system", "stat_idle", "stat_iowait", "stat_irq", "stat_softirq"]
TRANSFER_FIELDS = ["file", "part", "conn", "offset", "length", "t_start_ns", "t_first_byte_ns", "t_end_ns",
                   "bytes", "status"]


class Conn:
    def __init__(self, cid, host, port, io, counter):
        self.cid, self.host, self.port, self.io = cid, host, port, io
        self.sock = None
        self.buf = bytearray(io)
        self.counter = counter  # one-element list, bytes received by the application

    def _connect(self):
        self.sock = socket.create_connection((self.host, self.port), timeout=60)

    def fetch(self, path, offset, length, fd):
        """GET path with Range offset..offset+length-1; write the body at
        `offset` of fd, io bytes at a time. Returns (t_first, bytes, status)."""
        if self.sock is None:
            self._connect()
        req = (f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n"
               f"Range: bytes={offset}-{offset + length - 1}\r\n\r\n").encode()
        self.sock.sendall(req)
        head = bytearray()
        t_first = None
        while b"\r\n\r\n" not in head:
            n = self.sock.recv_into(self.buf, self.io)
            if n == 0:
                raise ConnectionError("server closed the connection before the headers")
            if t_first is None:
                t_first = time.monotonic_ns()
            head += self.buf[:n]
        end = head.index(b"\r\n\r\n") + 4
        lines = bytes(head[:end]).decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        clen = None
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                clen = int(v.strip())
        if status != 206 or clen != length:
            raise ConnectionError(f"expected 206 with {length} bytes, got {status} with {clen}")
        body = bytes(head[end:])
        pos = offset
        if body:
            os.pwrite(fd, body, pos)
            pos += len(body)
            self.counter[0] += len(body)
        remaining = length - len(body)
        view = memoryview(self.buf)
        while remaining > 0:
            n = self.sock.recv_into(self.buf, min(self.io, remaining))
            if n == 0:
                raise ConnectionError(f"connection closed with {remaining} bytes to go")
            os.pwrite(fd, view[:n], pos)
            pos += n
            remaining -= n
            self.counter[0] += n
        return t_first, length, "ok"

    def close(self):
        if self.sock is not None:
            self.sock.close()


def read_stat_cpu():
    parts = read_kernel_file("/proc/stat").split("\n", 1)[0].split()
    return [int(x) for x in parts[1:8]]


def server_cpu_ns(pids):
    total = 0
    for pid in pids:
        text = read_kernel_file(f"/proc/{pid}/schedstat")
        if text is not None:
            total += int(text.split()[0])
    return total


def if_bytes(iface):
    out = []
    for k in ("rx_bytes", "tx_bytes"):
        text = read_kernel_file(f"/sys/class/net/{iface}/statistics/{k}")
        out.append(-1 if text is None else int(text))
    return out


def sample_row(cfg, counters):
    """One sample: time, own CPU ns, server CPU ns, bytes received, interface bytes, /proc/stat cpu."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return [time.monotonic_ns(), int(round((ru.ru_utime + ru.ru_stime) * 1e9)),
            server_cpu_ns(cfg["server_pids"]), sum(c[0] for c in counters),
            *if_bytes(cfg["iface"]), *read_stat_cpu()]


def main() -> int:
    cfg = json.loads(open(sys.argv[1]).read())
    host, port = cfg["host"], cfg["port"]
    cc, p, io = cfg["concurrency"], cfg["parallelism"], cfg["io_bytes"]
    files = cfg["files"]  # [{"path": "/html/f0001.bin", "size": N}]
    out_dir = cfg["out_dir"]
    sink = cfg["sink_dir"]
    counters = []
    samples = []
    stop = threading.Event()

    def sampler():
        period = cfg["sample_ms"] / 1000
        nxt = time.monotonic()
        while True:
            samples.append(sample_row(cfg, counters))
            if stop.is_set():
                return
            nxt += period
            time.sleep(max(0.0, nxt - time.monotonic()))

    records = []
    rec_lock = threading.Lock()
    files_q: queue.Queue = queue.Queue()
    for i, f in enumerate(files):
        files_q.put((i, f))
    errors = []

    def worker(w):
        conns: queue.Queue = queue.Queue()
        mine = []
        for k in range(p):
            counter = [0]
            counters.append(counter)
            c = Conn(w * p + k, host, port, io, counter)
            mine.append(c)
            conns.put(c)

        def part(args):
            i, path, fd, k, off, ln = args
            c = conns.get()
            t0 = time.monotonic_ns()
            try:
                t1, n, st = c.fetch(path, off, ln, fd)
            except (OSError, ConnectionError, ValueError) as exc:
                t1, n, st = None, 0, f"error: {exc}"
                c.close()
                c.sock = None
            t2 = time.monotonic_ns()
            conns.put(c)
            with rec_lock:
                records.append([i, k, c.cid, off, ln, t0, t1 if t1 is not None else -1, t2, n, st])
                if st != "ok":
                    errors.append(f"file {i} part {k}: {st}")

        with ThreadPoolExecutor(max_workers=p) as pool:
            while True:
                try:
                    i, f = files_q.get_nowait()
                except queue.Empty:
                    break
                size = f["size"]
                nparts = min(p, size)
                base, extra = divmod(size, nparts)
                fd = os.open(os.path.join(sink, f"w{w}.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                jobs, off = [], 0
                for k in range(nparts):
                    ln = base + (1 if k < extra else 0)
                    jobs.append((i, f["path"], fd, k, off, ln))
                    off += ln
                list(pool.map(part, jobs))
                os.close(fd)
        for c in mine:
            c.close()

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    time.sleep(cfg["idle_pre_s"])
    t_start = time.monotonic_ns()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    workers = [threading.Thread(target=worker, args=(w,)) for w in range(min(cc, len(files)))]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    t_end = time.monotonic_ns()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    time.sleep(cfg["idle_post_s"])
    stop.set()
    th.join()
    with open(os.path.join(out_dir, "samples.csv"), "w") as fh:
        fh.write(",".join(SAMPLE_FIELDS) + "\n")
        for r in samples:
            fh.write(",".join(str(x) for x in r) + "\n")
    records.sort(key=lambda r: (r[0], r[1]))
    with open(os.path.join(out_dir, "transfers.csv"), "w") as fh:
        fh.write(",".join(TRANSFER_FIELDS) + "\n")
        for r in records:
            fh.write(",".join(str(x) for x in r) + "\n")
    summary = {"t_transfer_start_ns": t_start, "t_transfer_end_ns": t_end,
               "bytes_expected": sum(f["size"] for f in files), "bytes_received": sum(r[8] for r in records),
               "connections": min(cc, len(files)) * p,
               "client_cpu_transfer_s": (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime),
               "errors": errors[:20], "n_errors": len(errors)}
    with open(os.path.join(out_dir, "client.json"), "w") as fh:
        json.dump(summary, fh, indent=1, sort_keys=True)
    return 0 if not errors else 3


if __name__ == "__main__":
    sys.exit(main())
