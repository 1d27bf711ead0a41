#!/usr/bin/env python3
"""User-space delay line: an L2 bridge between two interfaces that holds
every frame for a fixed one-way delay before forwarding it.

The kernel here has no netem, so the round-trip time is emulated in user
space: the kit runs this script in a middle namespace whose two veth ends
carry no addresses; it reads every frame (AF_PACKET, ETH_P_ALL) arriving on
one interface and writes it out of the other `--delay-ms` later, in both
directions, so RTT = 2 x delay plus the (sub-millisecond) host latency.
Frames wait in a FIFO per direction; beyond `--queue-frames` waiting frames
a new frame is dropped (a tail-drop router queue). Offloads must be off on
the veths (frames <= MTU, checksums filled in); the kit does that.

What it emulates: propagation delay (TCP's window and slow-start dynamics
see the RTT). What it does not: delay jitter, reordering, random loss, the
radio's MAC. Counters are printed as JSON on SIGTERM.

    python delay_bridge.py IF_A IF_B --delay-ms 25
"""

from __future__ import annotations

import argparse
import collections
import json
import select
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("if_a")
    ap.add_argument("if_b")
    ap.add_argument("--delay-ms", type=float, required=True)
    ap.add_argument("--queue-frames", type=int, default=20000)
    args = ap.parse_args()
    delay_ns = int(args.delay_ms * 1e6)
    socks = []
    for name in (args.if_a, args.if_b):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
        s.bind((name, 0))
        s.setblocking(False)
        socks.append(s)
    queues = [collections.deque(), collections.deque()]  # frames to send out of socks[i]
    stats = {"forwarded": [0, 0], "dropped": [0, 0], "send_errors": [0, 0], "max_queue": [0, 0]}
    running = True

    def stop(*_):
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("ready", flush=True)
    while running:
        now = time.monotonic_ns()
        due = [q[0][0] for q in queues if q]
        timeout = max(0.0, (min(due) - now) / 1e9) if due else 0.2
        try:
            readable, _, _ = select.select(socks, [], [], timeout)
        except InterruptedError:
            continue
        for i, s in enumerate(socks):
            if s not in readable:
                continue
            out = 1 - i
            q = queues[out]
            while True:
                try:
                    data, addr = s.recvfrom(65536)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                if len(q) >= args.queue_frames:
                    stats["dropped"][out] += 1
                    continue
                q.append((time.monotonic_ns() + delay_ns, data))
            stats["max_queue"][out] = max(stats["max_queue"][out], len(q))
        now = time.monotonic_ns()
        for i, q in enumerate(queues):
            while q and q[0][0] <= now:
                _, data = q.popleft()
                try:
                    socks[i].send(data)
                    stats["forwarded"][i] += 1
                except OSError:
                    stats["send_errors"][i] += 1
    print(json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
