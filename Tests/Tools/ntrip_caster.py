#!/usr/bin/env python3
"""An NTRIP 2.0 caster of the tests' own, for what str2str (NTRIP 1.0) does not do.

Usage: ntrip_caster.py PORT CAPTURE RECORD MODE USER:PASSWORD

GET / answers the source table (gnss/sourcetable, chunked). GET /MOUNT with the right Basic
credentials answers per MODE:
  chunked  HTTP/1.1 200 with chunked transfer: the capture's payload (after its `#` lines),
           in a loop, in chunks of varying size, ten a second;
  silent   HTTP/1.1 200 with chunked transfer, then nothing at all;
  deaf     as chunked, but never reads what the rover uploads: its receive buffer, kept
           small, fills, and so does the rover's send buffer;
  kick     as chunked for a second, then closes the stream (an account another rover
           logs in with);
  foreign  as chunked, but bytes of another format that hold no RTCM 3 frame (a
           mountpoint of RTCM 2 or CMR chosen by mistake);
  slow     as chunked, but the answer comes 1.6 s after the request and the first
           chunk 1 s after the answer (a network that starts a virtual base for each
           rover).
Wrong or missing credentials get a 401. RECORD gets a line per request ("REQUEST path
user-agent ntrip-version"), per stream begun ("STREAM seconds", on a monotonic clock),
per uploaded line ("UPLOAD line"), and per chunk of payload sent
("SENT hex").
"""
import base64
import socket
import sys
import threading
import time

port, capture, record_path, mode, credentials = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
payload = open(capture, "rb").read()
while payload.startswith(b"#"):
    payload = payload[payload.index(b"\n") + 1:]
record = open(record_path, "a", buffering=1)
lock = threading.Lock()

TABLE = (
    "STR;MOUNT;Test base;RTCM 3.2;1077(1),1087(1);2;GPS+GLO;TEST;NLD;52.37;4.89;1;0;ntrip_caster.py;none;B;N;9600;\r\n"
    "STR;FAR;Far base;RTCM 3;1004(1);2;GPS;TEST;AUS;-33.87;151.21;0;0;ntrip_caster.py;none;N;N;4800;\r\n"
    "ENDSOURCETABLE\r\n"
)


def write(line):
    with lock:
        record.write(line + "\n")


def chunk(data):
    return b"%x\r\n" % len(data) + data + b"\r\n"


def serve(connection):
    connection.settimeout(30)
    head = b""
    while b"\r\n\r\n" not in head:
        data = connection.recv(4096)
        if not data:
            return
        head += data
    head, rest = head.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1]
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:] if ":" in line}
    write("REQUEST %s %s %s" % (path, headers.get("user-agent", "-").replace(" ", "_"), headers.get("ntrip-version", "-")))
    if path == "/":
        body = TABLE.encode()
        connection.sendall(b"HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\nContent-Type: gnss/sourcetable\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n" + chunk(body[:50]) + chunk(body[50:]) + b"0\r\n\r\n")
        return
    expected = "Basic " + base64.b64encode(credentials.encode()).decode()
    if headers.get("authorization") != expected:
        connection.sendall(b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n")
        return
    if mode == "slow":
        time.sleep(1.6)
    connection.sendall(b"HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\nContent-Type: gnss/data\r\n"
                       b"Transfer-Encoding: chunked\r\n\r\n")
    write("STREAM %.3f" % time.monotonic())
    if mode == "slow":
        time.sleep(1.0)
    if mode != "deaf":
        threading.Thread(target=uploads, args=(connection, rest), daemon=True).start()
    if mode == "silent":
        time.sleep(3600)
    offset, sizes, turn = 0, [37, 300, 1, 512, 96], 0
    while mode != "kick" or turn < 10:
        size = sizes[turn % len(sizes)]
        piece = payload[offset:offset + size] if mode != "foreign" else b"\x66\x59" * (size // 2 + 1)
        offset = offset + size if offset + size < len(payload) else 0
        turn += 1
        connection.sendall(chunk(piece))
        write("SENT " + piece.hex())
        time.sleep(0.1)


def uploads(connection, pending):
    while True:
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            write("UPLOAD " + line.decode("latin-1").strip())
        try:
            data = connection.recv(4096)
        except OSError:
            return
        if not data:
            return
        pending += data


def guarded(connection):
    try:
        serve(connection)
    except OSError:
        pass
    finally:
        connection.close()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if mode == "deaf":
    # Set before listen, so that the window the rover sees is small from the start.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
listener.bind(("127.0.0.1", port))
listener.listen(16)
while True:
    connection, _ = listener.accept()
    threading.Thread(target=guarded, args=(connection,), daemon=True).start()
