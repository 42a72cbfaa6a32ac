#!/usr/bin/env python3
"""Hostile clients of a gpsd-protocol daemon, all at once, for a while: request floods that
read a trickle, slowloris, over-long lines, binary garbage, half-open connections,
connect/disconnect churn, JSON and raw:2 watchers that never read. Each reconnects when
it is cut off. Loopback only.

Usage: attackers.py --port PORT [--seconds 30]
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


def flood(s, deadline):
    line = b"?POLL;" * 170 + b"\n"
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
    s.sendall(b'?WATCH={"enable":true}\n')
    time.sleep(0.005)


def never_reads(watch):
    def body(s, deadline):
        s.sendall(watch + b"\n")
        while time.monotonic() < deadline:
            time.sleep(0.1)
    return body


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    deadline = time.monotonic() + args.seconds
    kinds = [flood] * 3 + [slowloris] * 5 + [long_lines, garbage, half_open, churn]
    kinds += [never_reads(b'?WATCH={"enable":true,"json":true}')] * 2 + [never_reads(b'?WATCH={"raw":2}')]
    threads = [threading.Thread(target=attacker, args=(args.port, deadline, kind), daemon=True) for kind in kinds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
