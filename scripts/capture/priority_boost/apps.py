"""The programs one priority-boost run is made of (run by run.py, as root).

    apps.py receiver --addr A --port P          peer namespace: TCP sink that
                                                acknowledges the byte count, UDP sink
    apps.py send --addr A --port P --file F     device: encrypted bulk transfer
                                                (openssl enc | TCP); JSON result
    apps.py audio --addr A --port P ...         device: 80 B every 20 ms over UDP,
                                                send time of every packet (CSV)
    apps.py cross --addr A --port P --rate-bps  device: paced UDP cross traffic
    apps.py oracle ...                          host: on/off link schedule and the
                                                boosting policy (setpriority)

Device-side programs start, print "ready" and wait for a line on stdin ("go")
before doing anything, so that start-up costs are not part of a run.
"""

from __future__ import annotations

import argparse
import errno
import gzip
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy import onoff_schedule, target_nice  # noqa: E402

CHUNK = 16 * 1024


def _write_atomic(path, text):
    tmp = Path(str(path) + ".part")
    tmp.write_text(text)
    tmp.replace(path)


def _wait_go():
    print("ready", flush=True)
    line = sys.stdin.readline()
    if line.strip() != "go":
        sys.exit(0)


# --------------------------------------------------------------------- receiver
def receiver(args):
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((args.addr, args.port))
    tcp.listen(16)
    # UDP sinks on the port and the next two (audio and cross traffic use
    # port + 1 and port + 2): a closed port would answer with ICMP errors.
    udps = []
    for port in (args.port, args.port + 1, args.port + 2):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((args.addr, port))
        udps.append(u)

    def udp_sink(udp):
        while True:
            udp.recv(65536)

    def serve(conn):
        total = 0
        with conn:
            while True:
                data = conn.recv(1 << 16)
                if not data:
                    break
                total += len(data)
            conn.sendall(total.to_bytes(8, "big"))

    for u in udps:
        threading.Thread(target=udp_sink, args=(u,), daemon=True).start()
    print("ready", flush=True)
    while True:
        conn, _ = tcp.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


# ------------------------------------------------------------------------- send
def send(args):
    _wait_go()
    t_go = time.monotonic()
    enc = subprocess.Popen(["openssl", "enc", f"-{args.cipher}", "-K", args.key, "-iv", args.iv,
                            "-in", args.file], stdout=subprocess.PIPE)
    sock, connect_tries, connect_errors = None, 0, []
    while sock is None:
        connect_tries += 1
        try:
            sock = socket.create_connection((args.addr, args.port), timeout=None)
        except OSError as exc:
            connect_errors.append(errno.errorcode.get(exc.errno, str(exc.errno)))
            if time.monotonic() - t_go > args.timeout_s:
                raise
            time.sleep(0.05)
    sent = 0
    while True:
        data = enc.stdout.read1(CHUNK) if hasattr(enc.stdout, "read1") else enc.stdout.read(CHUNK)
        if not data:
            break
        view = memoryview(data)
        while view:  # write(2), not send(2): the controller counts write system calls
            view = view[os.write(sock.fileno(), view):]
        sent += len(data)
    enc.wait()
    sock.shutdown(socket.SHUT_WR)
    ack = b""
    while len(ack) < 8:
        more = sock.recv(8 - len(ack))
        if not more:
            break
        ack += more
    t_end = time.monotonic()
    sock.close()
    usage = os.times()
    result = {
        "bytes_plain": os.path.getsize(args.file), "bytes_sent": sent,
        "bytes_acked": int.from_bytes(ack, "big") if len(ack) == 8 else -1,
        "t_go_s": round(t_go, 6), "t_end_s": round(t_end, 6), "duration_s": round(t_end - t_go, 6),
        "cipher": args.cipher, "connect_tries": connect_tries,
        "connect_errors": sorted(set(connect_errors)), "openssl_rc": enc.returncode,
        "cpu_user_s": round(usage.user + usage.children_user, 4),
        "cpu_sys_s": round(usage.system + usage.children_system, 4),
    }
    _write_atomic(args.out, json.dumps(result, sort_keys=True) + "\n")
    print("done", flush=True)


# ------------------------------------------------------------------------ audio
def _keystream_xor(key: bytes, counter: int, data: bytes) -> bytes:
    """Stand-in for the paper's audio encryption: XOR with a SHA-256 counter keystream."""
    pad = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
    pad = (pad * (len(data) // len(pad) + 1))[: len(data)]
    return bytes(a ^ b for a, b in zip(data, pad))


def audio(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((args.addr, args.port))
    fd = sock.fileno()
    key = bytes.fromhex(args.key)
    sample = bytes(range(args.size))
    n = int(round(args.duration_s * 1000 / args.period_ms))
    rows = []
    _wait_go()
    period = args.period_ms / 1000
    deadline = time.monotonic()
    for seq in range(n):
        deadline += period
        delay = deadline - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        payload = _keystream_xor(key, seq, sample)  # "reads 80 bytes ... encrypts"
        t_ns = time.monotonic_ns()
        try:
            os.write(fd, payload)  # write(2) on a connected UDP socket: a sendto without address
            err = 0
        except OSError as exc:
            err = exc.errno or -1
        rows.append(f"{seq},{t_ns},{err}\n")
    with gzip.open(args.out + ".part", "wt", compresslevel=9) as fh:
        fh.write("seq,t_ns,errno\n")
        fh.writelines(rows)
    os.replace(args.out + ".part", args.out)
    print("done", flush=True)


# ------------------------------------------------------------------------ cross
def cross(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((args.addr, args.port))
    fd = sock.fileno()
    payload = b"\0" * args.size
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    _wait_go()
    tick = 0.005
    per_tick = args.rate_bps * tick / 8
    credit, sent, errs, t0 = 0.0, 0, 0, time.monotonic()
    next_t = t0
    while not stop.is_set():
        next_t += tick
        credit += per_tick
        while credit >= args.size:
            credit -= args.size
            try:
                os.write(fd, payload)
                sent += 1
            except OSError:
                errs += 1
        delay = next_t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        elif delay < -1.0:  # far behind (starved of CPU): do not burst to catch up
            next_t = time.monotonic()
    elapsed = time.monotonic() - t0
    _write_atomic(args.out, json.dumps({
        "packets_sent": sent, "send_errors": errs, "bytes_sent": sent * args.size,
        "packet_bytes": args.size, "elapsed_s": round(elapsed, 6),
        "target_bps": args.rate_bps,
        "offered_bps": round(sent * args.size * 8 / elapsed, 1) if elapsed > 0 else 0.0,
    }, sort_keys=True) + "\n")


# ----------------------------------------------------------------------- oracle
def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return out


def _io(pid: int) -> tuple[int, int] | None:
    """(write system calls, bytes written) of a process, from /proc/<pid>/io."""
    try:
        with open(f"/proc/{pid}/io") as fh:
            kv = dict(line.split(": ") for line in fh.read().splitlines())
        return int(kv["syscw"]), int(kv["wchar"])
    except (OSError, KeyError, ValueError):
        return None


def oracle(args):
    """Toggle the device's link on the seeded schedule and apply the policy to
    the managed processes (and their children) until SIGTERM."""
    schedule = onoff_schedule(args.seed, args.mean_s, args.horizon_s)
    managed = [int(p) for p in args.pids.split(",") if p]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    log = []
    t0 = time.monotonic()

    def note(event, pid=-1, value=0):
        log.append(f"{time.monotonic() - t0:.6f},{event},{pid},{value}\n")

    def set_link(up):
        subprocess.run(["ip", "-n", args.netns, "link", "set", "dev", args.dev, "up" if up else "down"],
                       check=True)
        note("link_up" if up else "link_down")

    current = {}
    base = {}

    def renice(pid, value):
        for p in [pid] + _children(pid):
            try:
                if os.getpriority(os.PRIO_PROCESS, p) != value:
                    os.setpriority(os.PRIO_PROCESS, p, value)
                    note("nice", p, value)
            except OSError:
                pass
        current[pid] = value

    link_up = True
    set_link(True)
    for pid in managed:
        base[pid] = _io(pid) or (0, 0)
    print("ready", flush=True)
    k = 1
    while not stop.is_set():
        now = time.monotonic() - t0
        if k < len(schedule) and now >= schedule[k][0]:
            link_up = schedule[k][1]
            k += 1
            set_link(link_up)
            for pid in managed:
                base[pid] = _io(pid) or base[pid]
        for pid in managed:
            io = _io(pid)
            if io is None:
                continue
            want = target_nice(args.policy, link_up, io[0] - base[pid][0], io[1] - base[pid][1],
                               args.decr_step_bytes)
            if want is not None:
                renice(pid, want)
        stop.wait(args.poll_s)
    if not link_up:
        set_link(True)
    note("stop")
    with gzip.open(args.out, "wt", compresslevel=9) as fh:
        fh.write("t_s,event,pid,value\n")
        fh.writelines(log)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("receiver")
    p.add_argument("--addr", required=True)
    p.add_argument("--port", type=int, required=True)
    p = sub.add_parser("send")
    for a in ("--addr", "--file", "--out", "--key", "--iv"):
        p.add_argument(a, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--cipher", default="des-ede3-cbc")
    p.add_argument("--timeout-s", type=float, default=300)
    p = sub.add_parser("audio")
    for a in ("--addr", "--out", "--key"):
        p.add_argument(a, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--period-ms", type=float, default=20.0)
    p.add_argument("--size", type=int, default=80)
    p.add_argument("--duration-s", type=float, required=True)
    p = sub.add_parser("cross")
    for a in ("--addr", "--out"):
        p.add_argument(a, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rate-bps", type=float, required=True)
    p.add_argument("--size", type=int, default=1400)
    p = sub.add_parser("oracle")
    for a in ("--netns", "--dev", "--policy", "--out"):
        p.add_argument(a, required=True)
    p.add_argument("--pids", default="")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--mean-s", type=float, default=5.0)
    p.add_argument("--horizon-s", type=float, default=3600.0)
    p.add_argument("--poll-s", type=float, default=0.005)
    p.add_argument("--decr-step-bytes", type=int, default=60 * 1024)
    args = ap.parse_args(argv)
    {"receiver": receiver, "send": send, "audio": audio, "cross": cross, "oracle": oracle}[args.cmd](args)


if __name__ == "__main__":
    main()
