#!/usr/bin/env python3
"""A caster's source table as a second NTRIP client library reads it: pygnssutils'
GNSSNTRIPClient (run with the python of a venv that has `pip install pygnssutils`).

Usage: pygnssutils_sourcetable.py HOST PORT [VERSION]

VERSION is "1.0" or "2.0" (the default). The client asks for the table as its own CLI does,
with an empty mountpoint: GET / over HTTP/1.0 for 1.0, over HTTP/1.1 with "Ntrip-Version:
Ntrip/2.0" for 2.0; here with no retries and the table handed over through an output queue.
It takes the first read off the socket (up to 4096 bytes) for the whole head, and the
response for a table when its status line begins "SOURCETABLE" or its Content-Type is exactly
gnss/sourcetable; it reads the body until the caster closes the connection (Content-Length,
chunking and ENDSOURCETABLE go unread) and keeps each line that begins "STR;", split at ";",
without the "STR".

Prints one JSON line, {"rows": [[field, ...], ...]}, those rows as pygnssutils parsed them,
and exits 0. Exits 1 with a message on stderr when there is no table: refused, an answer
other than 200, a 200 that is not a table (which the client would ask for again every
second), or nothing within 20 seconds.
"""
import json
import logging
import queue
import sys
import threading
import time

from pygnssutils import GNSSNTRIPClient

DEADLINE = 20

if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] not in ("1.0", "2.0")):
    sys.exit("usage: pygnssutils_sourcetable.py HOST PORT [1.0|2.0]")
host, port = sys.argv[1], int(sys.argv[2])
version = sys.argv[3] if len(sys.argv) == 4 else "2.0"


class Messages(logging.Handler):
    """The client's own log lines (its errors: refused, 401, ...), for the failure message."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


messages = Messages()
log = logging.getLogger("pygnssutils")
log.addHandler(messages)
log.setLevel(logging.INFO)
log.propagate = False

output = queue.Queue()
stop = threading.Event()
client = GNSSNTRIPClient(retries=0, retryinterval=1, timeout=5)
started = time.monotonic()
client.run(server=host, port=port, mountpoint="", version=version, output=output, stopevent=stop)
# The client's thread puts the table on the queue, then sets the stop event; it sets the
# event alone when the caster refuses, answers other than 200, or the connection fails. A 200
# that is not a table it does not give up on: it asks again every second, so that ends here.
# (Its status comes a moment before its headers, hence the half second.)
not_table, since = False, None
while not stop.wait(0.05) and time.monotonic() - started < DEADLINE:
    if client.status.get("code") == 200 and not client.is_sourcetable:
        since = since or time.monotonic()
        if time.monotonic() - since > 0.5:
            not_table = True
            break
    else:
        since = None
client.stop()
try:
    rows, _closest = output.get_nowait()
except queue.Empty:
    status = client.status
    if not_table:
        why = "a 200 that is not a source table (neither SOURCETABLE nor Content-Type gnss/sourcetable)"
    elif messages.lines:
        why = "; ".join(messages.lines)
    else:
        why = "no table within %d s" % DEADLINE
    sys.exit("pygnssutils_sourcetable.py: %s:%d NTRIP %s: %s (status line %r, Content-Type %r)"
             % (host, port, version, why, " ".join(str(v) for v in status.values()), client.content_type))
print(json.dumps({"rows": rows}))
