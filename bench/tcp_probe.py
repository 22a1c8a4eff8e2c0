"""A link's TCP rate for bench/compression_bench.sh: one stream, 64 MiB.

    tcp_probe.py serve ADDR PORT_FILE        # binds ADDR on a free port,
                                             # writes it, drains one client
    tcp_probe.py send ADDR PORT_FILE LINK    # prints {"link_probe": ...}

Both ends give up after 60 s without progress (socket timeouts).
"""
import json
import os
import socket
import sys
import time

TOTAL = 64 << 20
CHUNK = 1 << 20


def serve(addr, port_file):
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


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    else:
        send(sys.argv[2], sys.argv[3], sys.argv[4])
