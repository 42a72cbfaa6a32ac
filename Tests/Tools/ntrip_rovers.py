#!/usr/bin/env python3
"""NTRIP clients for the caster tests: COUNT rovers at once, half NTRIP 1.0 and half 2.0,
plus one with the wrong password and, with --slow, one that never reads.

Usage: ntrip_rovers.py PORT MOUNT USER:PASSWORD COUNT SENT DONE [--slow]

Prints "READY" once every rover has its stream's head (the non-reader included), then reads
until the file DONE exists and every rover has as many bytes as SENT holds (at most 30 s
more), and prints one JSON
line: for each rover its version and whether its payload (after the head; de-chunked for
2.0) is exactly the file SENT; the wrong password's status line; and whether the non-reader
was cut off (its connection ends before the stream does).
"""
import base64
import json
import os
import select
import socket
import sys
import time

port, mount, credentials, count, sent_path, done_path = (
    int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
with_slow = "--slow" in sys.argv[7:]


def connect(version, credentials, receive_buffer=None):
    connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    connection.connect(("127.0.0.1", port))
    token = base64.b64encode(credentials.encode()).decode()
    head = f"GET /{mount} HTTP/1.{1 if version == 2 else 0}\r\nUser-Agent: NTRIP ntrip_rovers.py\r\n"
    if version == 2:
        head += "Host: 127.0.0.1\r\nNtrip-Version: Ntrip/2.0\r\n"
    connection.sendall((head + f"Authorization: Basic {token}\r\n\r\n").encode())
    return connection


def read_head(connection):
    """The answer's head, and what came after it."""
    data = b""
    while True:
        marker = b"\r\n\r\n" if not data.startswith(b"ICY") else b"\r\n"
        if marker in data:
            end = data.index(marker) + len(marker)
            return data[:end], data[end:]
        more = connection.recv(4096)
        if not more:
            return data, b""
        data += more


def dechunk(data):
    payload, offset = b"", 0
    while True:
        line_end = data.find(b"\r\n", offset)
        if line_end < 0:
            return payload, False
        size = int(data[offset:line_end], 16)
        start = line_end + 2
        if size == 0 or start + size + 2 > len(data):
            return payload, size == 0
        payload += data[start:start + size]
        offset = start + size + 2


rovers = []
for index in range(count):
    version = 1 if index % 2 == 0 else 2
    connection = connect(version, credentials)
    head, rest = read_head(connection)
    rovers.append({"version": version, "socket": connection, "head": head.split(b"\r\n")[0].decode(), "data": rest})

wrong = connect(2, credentials.split(":")[0] + ":wrong")
wrong_head, _ = read_head(wrong)
wrong.close()

slow = connect(1, credentials, receive_buffer=4096) if with_slow else None
slow_head, _ = read_head(slow) if slow else (b"", b"")
print("READY", flush=True)

def payload(rover):
    return rover["data"] if rover["version"] == 1 else dechunk(rover["data"])[0]


# Read until DONE exists and every rover has as many bytes as were sent (or 30 s after DONE).
sockets = {rover["socket"].fileno(): rover for rover in rovers}
open_sockets = set(sockets)
deadline = None
while open_sockets:
    readable, _, _ = select.select(list(open_sockets), [], [], 0.2)
    for descriptor in readable:
        rover = sockets[descriptor]
        more = rover["socket"].recv(65536)
        if more:
            rover["data"] += more
        else:
            open_sockets.discard(descriptor)
    if deadline is None and os.path.exists(done_path):
        deadline = time.monotonic() + 30
        expected = len(open(sent_path, "rb").read())
    if deadline is not None and not readable:
        if time.monotonic() > deadline or all(len(payload(rover)) >= expected for rover in rovers):
            break

# The non-reader reads now: a connection cut off by the caster ends in an EOF or a reset.
cut_off = False
if slow:
    slow.settimeout(5)
    try:
        while slow.recv(65536):
            pass
        cut_off = True
    except ConnectionResetError:
        cut_off = True
    except socket.timeout:
        pass

sent = open(sent_path, "rb").read()
results = []
for rover in rovers:
    received = payload(rover)
    results.append({"version": rover["version"], "head": rover["head"], "complete": received == sent, "bytes": len(received)})
print(json.dumps({
    "rovers": results, "sent": len(sent), "wrong": wrong_head.split(b"\r\n")[0].decode(),
    "slow": slow_head.split(b"\r\n")[0].decode(), "slowCutOff": cut_off,
}), flush=True)
