#!/usr/bin/env python3
"""Writes packaging/symbol-order.txt: the functions gpsfixd runs in every cycle while it
serves, then the others it runs while it serves, then those it runs while it starts or
stops, then those a client that comes and goes runs, which scripts/package has the
linker place together at the start of the code;
then the variables it has written once it serves, placed together at the start of its
zero-initialised data.

The daemon's code is about 14 MB, and serving fixes runs in about 1.5 MB of it, spread
all over: the kernel maps 64 KB around each page touched, so the pages resident are
several times the code that runs. Placed together, they are a few hundred pages.

The list comes from callgrind (valgrind): the daemon built as scripts/package builds it
(debug information removed, which valgrind cannot read, symbols kept) runs with one
client watching, once reading a device (a pseudo-terminal the demo is replayed into) and
once with --demo; in four of the windows below a second client comes, watches and leaves.
The functions that ran after the first 20 s, when it only serves, come first: those that
ran in every 5 s window of it (every cycle's), then the others. At 1 Hz a cycle's code is
read from cold caches, a line and a page at a time, and every cycle's functions named
among the occasional ones were spread over several times the pages they fill (measured
with Benchmarks/cycle_lines.py: 118 code pages a cycle, 88 once every cycle's came
first). Those that ran only while it started or stopped come after them, and last those
that ran in both windows a client visited and left alike, and in no other (its arrival
and departure: a client closing its end runs code the daemon's own closing of its clients
at the stop does not). Start-up code runs once, but its pages are what the peak (VmHWM)
is made of: scattered, each page it touches brings 64 KB in with it; placed together,
start-up reads a few hundred pages in a row. It needs every function in a section of its
own (scripts/package compiles with -function-sections), else the linker can only move
whole objects. Names the code no longer has are ignored by the linker, and a function
renamed or new is left out of place: when SatelliteTracker.add changed its signature (and
two functions beside it were new), the daemon spent 15% more CPU at 1 Hz until the list
was made again (scripts/package warns of names the binary does not have). Run this again
when the hot path changes.

After the functions, the list names the zero-initialised variables (.bss) that hold
something once the daemon has served a client: the Swift runtime's metadata caches and
one-time tokens, a few hundred of them scattered over some 700 KB, each written page
private to the process for its life. The linker places the sections that hold them first,
so the pages written are mostly those sections' (measured serving the demo:
Private_Dirty of the .bss 316 kB before, 208 kB after). A section holds one object's
variables (Swift and the prebuilt runtime have no section per variable), so a named
variable brings its neighbours with it.

Usage: python3 Benchmarks/symbol_order.py [BINARY]  (default .build-package/release/gpsfix)
"""

import glob
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(REPOSITORY, "Sources/gpsfixd/demo.nmea")
# How the daemon's serving under callgrind is cut: a function that ran in every window
# runs in every cycle (the demo's are a second apart), or as good as; an occasional one
# (the status every 60 s, a client's request) runs in one or two. A long window would
# count the occasional as every cycle's; a function that runs throughout (the event
# loop's) counts in each, since each window has its own costs.
SERVING_WINDOWS = 10
WINDOW_SECONDS = 5
# The windows in which a second client comes, watches for a while and leaves, as gpsd's
# clients do (cgps, gpspipe, a check that the daemon serves): in two it reads all it was
# sent before it closes its end; in two it leaves something unread, so that the kernel
# resets the connection (a client killed, or quit without reading), and the daemon's next
# read or write fails. The two departures run different code. Not every window, so that
# what only a client's arrival and departure run is told from every cycle's and the rest
# of serving's, and placed on its own. Left out, a client closing its end ran code from
# some 15 places outside the list, each bringing 64 KB with it: 600 kB more at the peak
# than a daemon whose one client stayed.
VISITS = {"reading everything": (1, 5), "leaving some unread": (3, 7)}
VISITED_WINDOWS = {window for windows in VISITS.values() for window in windows}
VISIT_SECONDS = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPOSITORY, ".build-package/release/gpsfix")
    folder = tempfile.mkdtemp(prefix="symbol-order-")
    daemon = os.path.join(folder, "gpsfixd")
    subprocess.run(["strip", "--strip-debug", "-o", daemon, binary], check=True)
    # The daemon as a receiver's owner runs it (a device's path, here a pseudo-terminal the
    # tool replays the demo into, from a copy of the binary) and as a first run does (--demo).
    replayer = os.path.join(folder, "gpsfix-replay")
    shutil.copy(binary, replayer)
    link = os.path.join(folder, "gps0")
    replay = subprocess.Popen([replayer, "replay", DEMO, "--loop", "--retime", "--link", link],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(link):
                break
            time.sleep(0.1)
        serving, every_cycle, visiting, starting, written = set(), set(), set(), set(), set()
        variables = zero_initialised_variables(daemon)
        for source in ([link], ["--demo"]):
            run_serving, run_every_cycle, run_visiting, run_starting = profile(daemon, source, folder)
            serving |= run_serving
            every_cycle |= run_every_cycle
            visiting |= run_visiting
            starting |= run_starting
            written |= variables_written(daemon, variables, source, folder)
        visiting -= serving
        starting -= serving | visiting
    finally:
        stop(replay)
        shutil.rmtree(folder, ignore_errors=True)
    # A function compiled into a section of its own can be placed anywhere. One in an
    # object's shared .text (much of the Swift runtime's: Swift.o's is 1.6 MB) moves with all
    # of it, and a local name such as `objectdestroyTm` places every function of that name,
    # some in shared sections of objects nothing runs (the regex parser's). Named among the
    # others, such a name would put whole objects between the functions that serve; so
    # sections of their own come first (every cycle's, the rest of serving's, start-up's and
    # the stop's, then a visiting client's), and the names with a definition in a shared
    # .text last, where the objects they drag split nothing. A visiting client's functions
    # sit apart from serving's and start-up's: among them, sorted by name, they spread those
    # over more pages in a daemon whose clients stay (a first try peaked some 300 kB higher).
    shared = functions_in_shared_sections(binary)
    groups = (every_cycle - shared, serving - every_cycle - shared, starting - shared, visiting - shared,
              serving & shared, starting & shared, visiting & shared)
    ordered = [name for names in (*groups, written) for name in sorted(names)]
    with open(os.path.join(REPOSITORY, "packaging/symbol-order.txt"), "w") as output:
        output.write("\n".join(ordered) + "\n")
    print(
        f"{len(serving)} serving ({len(every_cycle)} of them every cycle), {len(visiting)} more for a visiting "
        f"client and {len(starting)} starting or stopping functions in packaging/symbol-order.txt, "
        f"{len((serving | visiting | starting) & shared)} of them defined somewhere in an object's shared .text; "
        f"{len(written)} variables written")


def profile(daemon, source, folder):
    """The functions the daemon reading `source` runs while it serves one watching client
    (after its first 20 s), those of them that ran in each window of it (every cycle's),
    those that ran only in the windows a second client visited, and those it ran only
    before or after, under callgrind."""
    run = tempfile.mkdtemp(dir=folder)
    process, client, port = start_watched(
        ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={run}/callgrind.%p", daemon],
        source, run)
    output = f"{run}/callgrind.{process.pid}"

    def dump(number):
        """Has callgrind write what ran since the last dump to callgrind.PID.`number`
        (callgrind_control says nothing in its status when it cannot)."""
        subprocess.run(["callgrind_control", "--dump", str(process.pid)], capture_output=True, timeout=60)
        if not finished(f"{output}.{number}"):
            raise SystemExit(f"callgrind did not write {output}.{number}")
        return f"{output}.{number}"

    try:
        # What ran so far (starting) goes to a file of its own; each window of serving to
        # the next.
        serve(client, 20)
        starting_file = dump(1)
        windows = []
        for window in range(SERVING_WINDOWS):
            if window in VISITED_WINDOWS:
                visit(port, client, leaving_unread=window in VISITS["leaving some unread"])
                serve(client, WINDOW_SECONDS - VISIT_SECONDS)
            else:
                serve(client, WINDOW_SECONDS)
            windows.append(dump(window + 2))
    finally:
        stop(process, client, grace=60)
    # callgrind.PID, written at the exit, is the daemon's stop, which counts with its start:
    # closing a client or a device runs the same code, which a client that only checks
    # the daemon listens runs at its start; what a visiting client ran too goes with the
    # visits'. (Made empty at the start, it is written only by a daemon that stopped when
    # asked.)
    if not finished(output):
        raise SystemExit(f"the daemon did not stop when asked: {output} holds no stop")
    ran = [functions_run(window, daemon) for window in windows]
    # A visit's code ran in each visit of its kind and in no other window; what ran in one
    # visit alone is serving's occasional code (a timer, the status every minute) that fell
    # there.
    unvisited = set().union(*(names for window, names in enumerate(ran) if window not in VISITED_WINDOWS))
    visiting = set().union(*(set.intersection(*(ran[window] for window in windows)) for windows in VISITS.values()))
    visiting -= unvisited
    serving = set().union(*ran) - visiting
    ends = functions_run(starting_file, daemon) | functions_run(output, daemon)
    return serving, set.intersection(*ran), visiting, ends - serving - visiting


def finished(dump):
    """Whether `dump` is a whole callgrind file: its totals are written last."""
    try:
        with open(dump) as lines:
            return any(line.startswith("totals:") for line in lines)
    except FileNotFoundError:
        return False


def start_watched(command, source, run):
    """Starts the daemon (`command`: the daemon, or a valgrind command line that runs it)
    reading `source`, with its sockets in the folder `run`; returns it and a client
    watching it, and the port it listens on."""
    port = free_port()
    process = subprocess.Popen(
        [*command, *source, "--tcp", f"127.0.0.1:{port}", "--socket", f"{run}/gpsfixd.sock",
         "--control-socket", f"{run}/control.sock"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"the daemon exited ({process.returncode}) before it accepted a client")
        try:
            client = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.1)
    else:
        stop(process)
        raise SystemExit("the daemon did not accept a client within 60 s")
    client.sendall(b'?WATCH={"enable":true,"json":true};\n')
    client.setblocking(False)
    return process, client, port


def visit(port, client, leaving_unread):
    """A second client that connects, watches for VISIT_SECONDS while `client` is served,
    and closes its end: having read everything, or, `leaving_unread`, once the daemon has
    sent it more (waited for a window's time at most), which the close leaves unread."""
    visitor = socket.create_connection(("127.0.0.1", port), timeout=10)
    visitor.sendall(b'?WATCH={"enable":true,"json":true};\n')
    visitor.setblocking(False)
    try:
        serve([client, visitor], VISIT_SECONDS)
        if leaving_unread:
            select.select([visitor], [], [], WINDOW_SECONDS)
    finally:
        visitor.close()


def stop(process, client=None, grace=10):
    """Stops `process` (asked first, killed after `grace` seconds) and closes `client`."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if client is not None:
        client.close()


def serve(clients, seconds):
    """Reads and drops what the daemon sends `clients` (one, or a list) for `seconds`."""
    clients = clients if isinstance(clients, list) else [clients]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.3)
        for client in clients:
            try:
                while client.recv(65536):
                    pass
            except BlockingIOError:
                pass


def zero_initialised_variables(daemon):
    """The daemon's zero-initialised variables (.bss): (address, size, name) of each.
    Thread-local ones (.tbss) are listed as `b` too, at offsets in each thread's block:
    only addresses inside .bss are variables of its own."""
    sections = subprocess.run(["readelf", "-SW", daemon], capture_output=True, text=True).stdout
    bss = next(line.split("]", 1)[1].split() for line in sections.splitlines() if " .bss " in line)
    start, end = int(bss[2], 16), int(bss[2], 16) + int(bss[4], 16)
    symbols = subprocess.run(["nm", "-S", "--defined-only", daemon], capture_output=True, text=True).stdout
    variables = []
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in ("b", "B") and start <= int(fields[0], 16) < end:
            variables.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return variables


def variables_written(daemon, variables, source, folder):
    """The names of those of `variables` (the daemon's .bss) that are not all zeros once
    it has started, read `source` and served one watching client for 10 s (read from its
    memory, /proc/PID/mem). A variable written with zeros only, or only on a path this run
    does not take (MQTT, a gpsd:// device, errors), is missed and stays where it is."""
    run = tempfile.mkdtemp(dir=folder)
    process, client, _ = start_watched([daemon], source, run)
    try:
        serve(client, 10)
        # The binary's first mapping (offset 0) is where it was loaded: the linker puts its
        # first segment at address 0, so a symbol's address adds to it.
        path = os.path.realpath(daemon)
        with open(f"/proc/{process.pid}/maps") as maps:
            fields = (line.split(maxsplit=5) for line in maps)
            base = next((int(f[0].split("-", 1)[0], 16) for f in fields
                         if len(f) == 6 and f[5].rstrip("\n") == path and f[2] == "00000000"), None)
        if base is None:
            raise SystemExit(f"{path} is not mapped in the daemon (/proc/{process.pid}/maps)")
        written = set()
        with open(f"/proc/{process.pid}/mem", "rb") as memory:
            for address, size, name in variables:
                memory.seek(base + address)
                if any(memory.read(size)):
                    written.add(name)
        return written
    finally:
        stop(process, client)


def functions_run(dump, daemon):
    """The names, as the linker knows them, of the daemon's functions callgrind saw run in `dump`."""
    report = subprocess.run(["callgrind_annotate", "--threshold=100", "--show-percs=yes", dump],
                            capture_output=True, text=True).stdout
    # `COST (PERCENT%)  FILE:NAME [OBJECT]`: a function with a cost. One that only waited
    # on the stack since an earlier dump (the daemon's main) is listed with a dot and no
    # percentage, and is not taken.
    function = re.compile(r"^\s*[\d,]+ \(\s*[\d.]+%\)\s+(.+) \[" + re.escape(daemon) + r"\]$")
    names = set()
    for line in report.splitlines():
        if match := function.match(line):
            name = match.group(1)
            name = name.split(":", 1)[1] if name.startswith("???:") else name
            # callgrind marks recursion levels ('2); names stay as the linker knows them
            # (--demangle=no), the Swift runtime's C++ ones included.
            name = name.split("'", 1)[0]
            if " " not in name and "(" not in name and not name.startswith("0x"):
                names.add(name)
    return names


def functions_in_shared_sections(binary):
    """The names of functions defined, in at least one of the objects `binary` was linked
    from (the build folder's, the static Swift runtime's, libstdc++'s), in a section that
    holds other functions too. An archive's member counts when one of its global symbols
    is in the binary: the runtime's folder holds archives the daemon does not link."""
    build = os.path.dirname(os.path.realpath(binary))
    swiftc = os.path.realpath(subprocess.run(["which", "swiftc"], capture_output=True, text=True).stdout.strip())
    runtime = os.path.join(os.path.dirname(os.path.dirname(swiftc)), "lib/swift_static/linux")
    libstdcxx = subprocess.run(["clang", "-print-file-name=libstdc++.a"], capture_output=True, text=True).stdout.strip()
    files = glob.glob(f"{build}/**/*.o", recursive=True) + glob.glob(f"{runtime}/*.a") + [libstdcxx]
    linked = set(subprocess.run(["nm", "--defined-only", "-j", binary], capture_output=True, text=True).stdout.split())
    names = set()

    def take(sections, functions, global_names):
        """One object's names in shared sections, when the object was linked."""
        if global_names.isdisjoint(linked):
            return
        for section, by_value in functions.items():
            if len(by_value) > 1 and sections.get(section, "").startswith(".text"):
                names.update(name for group in by_value.values() for name in group)

    for start in range(0, len(files), 100):
        report = subprocess.run(
            ["readelf", "-SsW", *files[start : start + 100]], capture_output=True, text=True, errors="replace").stdout
        # One object's section names by index, its functions by section and value, its global names.
        sections, functions, global_names = {}, {}, set()
        for line in report.splitlines():
            if line.startswith("File: "):
                take(sections, functions, global_names)
                sections, functions, global_names = {}, {}, set()
            elif line.startswith("  [") and "]" in line:
                # A section header: [Nr] Name Type ...
                index, rest = line[3:].split("]", 1)
                fields = rest.split()
                if fields:
                    sections[index.strip()] = fields[0]
            else:
                # A symbol: Num: Value Size Type Bind Vis Ndx Name
                fields = line.split()
                if len(fields) == 8 and fields[6].isdigit() and fields[3] in ("FUNC", "OBJECT"):
                    if fields[4] == "GLOBAL":
                        global_names.add(fields[7])
                    if fields[3] == "FUNC":
                        functions.setdefault(fields[6], {}).setdefault(fields[1], []).append(fields[7])
        take(sections, functions, global_names)
    return names


if __name__ == "__main__":
    main()
