#!/usr/bin/env python3
"""Hostile clients of one listener of a daemon, all at once, for a while: request floods
that read a trickle, slowloris, over-long lines, binary garbage, half-open connections,
connect/disconnect churn, readers that never read, and a horde of up to 2,000 idle
connections. Each reconnects when it is cut off. Loopback only.

--listener says what the port speaks: gpsd (requests, JSON and raw:2 watchers), http
(pipelined GETs of the page, the API and /metrics; event streams) or nmea (NMEA 0183 out,
whose input the daemon ignores; readers of the feed).

Usage: attackers.py --port PORT [--listener gpsd|http|nmea] [--seconds 30]
"""
import argparse
import os
import socket
import threading
import time


def attacker(port, deadline, body):
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                s.settimeout(0.5)
                body(s, deadline)
        except OSError:
            time.sleep(0.05)


REQUESTS = {
    "gpsd": b"?POLL;" * 170 + b"\n",
    "http": b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/sky HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 8,
    "nmea": b"$GPGGA,flood*00\r\n" * 60,
}
WATCHES = {
    "gpsd": [b'?WATCH={"enable":true,"json":true}\n'] * 2 + [b'?WATCH={"raw":2}\n'],
    "http": [b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n"] * 3,
    "nmea": [b""] * 3,
}
line = REQUESTS["gpsd"]


def flood(s, deadline):
    s.setblocking(False)
    while time.monotonic() < deadline:
        try:
            s.send(line)
        except BlockingIOError:
            time.sleep(0.001)
        try:
            if s.recv(64) == b"":
                return
        except BlockingIOError:
            pass


def slowloris(s, deadline):
    while time.monotonic() < deadline:
        s.send(b"?")
        time.sleep(1)


def long_lines(s, deadline):
    while time.monotonic() < deadline:
        s.sendall(b"x" * 100_000 + b"\n")
        time.sleep(0.02)


def garbage(s, deadline):
    while time.monotonic() < deadline:
        s.sendall(os.urandom(4096))
        time.sleep(0.01)


def half_open(s, deadline):
    s.shutdown(socket.SHUT_WR)
    while time.monotonic() < deadline:
        time.sleep(0.1)


def churn(s, deadline):
    s.sendall(line)
    time.sleep(0.005)


def never_reads(watch):
    def body(s, deadline):
        s.sendall(watch)
        while time.monotonic() < deadline:
            time.sleep(0.1)
    return body


def horde(port, deadline):
    held = []
    while time.monotonic() < deadline:
        alive = []
        for s in held:
            try:
                if s.recv(1024, socket.MSG_DONTWAIT) == b"":
                    s.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                continue
            alive.append(s)
        held = alive
        while len(held) < 2000:
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=2))
            except OSError:
                break
        time.sleep(0.2)
    for s in held:
        s.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--listener", choices=sorted(REQUESTS), default="gpsd")
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    global line
    line = REQUESTS[args.listener]
    deadline = time.monotonic() + args.seconds
    kinds = [flood] * 3 + [slowloris] * 5 + [long_lines, garbage, half_open, churn]
    kinds += [never_reads(watch) for watch in WATCHES[args.listener]]
    threads = [threading.Thread(target=attacker, args=(args.port, deadline, kind), daemon=True) for kind in kinds]
    threads.append(threading.Thread(target=horde, args=(args.port, deadline), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
