#!/usr/bin/env python3
"""A base station for the NTRIP tests: connects to a caster's input (str2str's tcpsvr://),
sends an RTCM 3 capture there at a steady pace, in a loop, and records what the caster
relays back from its clients (their GGA uploads, with str2str's `-b 1`).

Usage: rtcm_base.py PORT CAPTURE SENT BACK [CHUNK] [EVERY]

SENT gets every byte sent, as sent; BACK every byte relayed back. The capture's leading
`#` lines are skipped. Runs until killed, reconnecting while the caster is away.
"""
import socket
import sys
import time

port, capture, sent_path, back_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
chunk = int(sys.argv[5]) if len(sys.argv) > 5 else 400
every = float(sys.argv[6]) if len(sys.argv) > 6 else 0.1

data = open(capture, "rb").read()
while data.startswith(b"#"):
    data = data[data.index(b"\n") + 1:]

sent = open(sent_path, "ab", buffering=0)
back = open(back_path, "ab", buffering=0)
offset = 0
while True:
    try:
        connection = socket.create_connection(("127.0.0.1", port), timeout=1)
    except OSError:
        time.sleep(0.1)
        continue
    connection.settimeout(0)
    try:
        while True:
            piece = data[offset:offset + chunk]
            connection.sendall(piece)
            sent.write(piece)
            offset = (offset + chunk) % len(data) if offset + chunk < len(data) else 0
            deadline = time.monotonic() + every
            while time.monotonic() < deadline:
                try:
                    relayed = connection.recv(65536)
                    if not relayed:
                        raise ConnectionError("caster closed")
                    back.write(relayed)
                except BlockingIOError:
                    time.sleep(0.01)
    except OSError:
        connection.close()
        time.sleep(0.1)
