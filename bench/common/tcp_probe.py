"""A link's TCP rate and round-trip time, for bench/allreduce/compression_bench.sh and
bench/crosshost/crosshost_bench.sh. Rate: one stream, 64 MiB. Round trip: one byte
sent and echoed, ROUNDS times (default 50) on one connection (TCP_NODELAY),
after one untimed exchange.

    tcp_probe.py serve ADDR PORT_FILE        # binds ADDR on a free port,
                                             # writes it, drains one client
    tcp_probe.py send ADDR PORT_FILE LINK    # prints {"link_probe": ...}
    tcp_probe.py echo ADDR PORT_FILE         # as serve, but echoes
    tcp_probe.py rtt ADDR PORT_FILE LINK [ROUNDS]   # prints {"rtt_probe": ...}

Both ends give up after 60 s without progress (socket timeouts).
"""
import json
import os
import socket
import statistics
import sys
import time

TOTAL = 64 << 20
CHUNK = 1 << 20


def serve(addr, port_file, echo=False):
    with socket.socket() as s:
        s.settimeout(60)
        s.bind((addr, 0))
        s.listen(1)
        with open(port_file + ".tmp", "w") as f:
            f.write(str(s.getsockname()[1]))
        os.rename(port_file + ".tmp", port_file)
        conn, _ = s.accept()
        with conn:
            conn.settimeout(60)
            if echo:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                while (data := conn.recv(CHUNK)):
                    conn.sendall(data)
                return
            while conn.recv(CHUNK):
                pass
            conn.sendall(b"k")


def send(addr, port_file, link):
    port = int(open(port_file).read())
    buf = b"\0" * CHUNK
    with socket.create_connection((addr, port), timeout=60) as c:
        start = time.monotonic()
        for _ in range(TOTAL // CHUNK):
            c.sendall(buf)
        c.shutdown(socket.SHUT_WR)
        c.recv(1)  # The receiver has read everything.
        seconds = time.monotonic() - start
    print(json.dumps({"link_probe": {"link": link, "bytes": TOTAL,
                                     "seconds": seconds,
                                     "mbit_per_s": TOTAL * 8 / seconds / 1e6}}))


def rtt(addr, port_file, link, rounds=50):
    port = int(open(port_file).read())
    times = []
    with socket.create_connection((addr, port), timeout=60) as c:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(rounds + 1):
            start = time.monotonic()
            c.sendall(b"p")
            if c.recv(1) != b"p":
                sys.exit("tcp_probe.py rtt: the echo server closed the connection")
            if i > 0:  # the first exchange warms the path up
                times.append((time.monotonic() - start) * 1e3)
    times.sort()
    print(json.dumps({"rtt_probe": {"link": link, "rounds": rounds,
                                    "min_ms": times[0],
                                    "p50_ms": statistics.median(times),
                                    "p90_ms": times[int(0.9 * (len(times) - 1))],
                                    "max_ms": times[-1]}}))


def main(args):
    usage = "usage:\n" + __doc__.split("\n\n")[1]
    # Each mode's argument counts after the mode.
    counts = {"serve": (2,), "echo": (2,), "send": (3,), "rtt": (3, 4)}
    if not args or args[0] not in counts or len(args) - 1 not in counts[args[0]]:
        sys.exit(usage)
    mode = args[0]
    if mode in ("serve", "echo"):
        serve(args[1], args[2], echo=mode == "echo")
    elif mode == "send":
        send(args[1], args[2], args[3])
    else:
        rounds = args[4] if len(args) > 4 else "50"
        if not rounds.isdigit() or not 1 <= int(rounds) <= 100000:
            sys.exit(f"tcp_probe.py rtt: ROUNDS must be an integer in 1..100000, got {rounds!r}")
        rtt(args[1], args[2], args[3], int(rounds))


if __name__ == "__main__":
    main(sys.argv[1:])
