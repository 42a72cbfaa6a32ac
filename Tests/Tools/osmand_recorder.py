#!/usr/bin/env python3
"""The tests' stand-in for Traccar's OsmAnd endpoint: records each request's query string,
one line each, in LOG, and answers with the status code in STATUS_FILE (200 when absent).

A timestamp is read as Traccar's OsmAnd decoder reads it (a whole number, else ISO 8601
when it holds a T, else yyyy-MM-dd HH:mm:ss); a request whose timestamp it cannot read is
answered as Traccar answers it: its decoder throws, and the connection is closed with no
answer, nothing recorded.

SIGTERM stops it as a server stops for a restart: it takes no new connection, answers the
requests it has begun, then exits. A position it records is answered, so the tests can
count each position once; one killed between the two (SIGKILL) is sent again, as HTTP
allows no better.

Usage: osmand_recorder.py PORT LOG STATUS_FILE
"""
import datetime
import http.server
import re
import signal
import socketserver
import sys
import threading
import urllib.parse

port, log, status_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def traccar_reads(timestamp):
    if re.fullmatch(r"[+-]?[0-9]+", timestamp):
        return True
    try:
        if "T" in timestamp:
            datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        else:
            datetime.datetime.strptime(timestamp, "%Y-%m-%d %H:%M:%S")
        return True
    except ValueError:
        return False


class Handler(http.server.BaseHTTPRequestHandler):
    # A request that stops arriving is given up, so that a stop waits for no one long.
    timeout = 5

    def answer(self):
        try:
            with open(status_file) as f:
                status = int(f.read().strip() or 200)
        except OSError:
            status = 200
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        query = urllib.parse.urlparse(self.path).query
        timestamps = urllib.parse.parse_qs(query).get("timestamp", [])
        if not all(traccar_reads(value) for value in timestamps):
            self.close_connection = True
            return
        if status == 200:
            with open(log, "a") as out:
                out.write(urllib.parse.urlparse(self.path).query + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = answer
    do_POST = answer

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingTCPServer):
    # Its request threads are not daemon threads, so server_close() waits for the requests
    # begun: HTTP/1.0, one request a connection.
    allow_reuse_address = True


server = Server(("127.0.0.1", port), Handler)
# shutdown() waits for serve_forever() to return, so it is called from another thread.
signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
server.serve_forever()
server.server_close()
