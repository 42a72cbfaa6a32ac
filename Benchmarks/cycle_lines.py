#!/usr/bin/env python3
"""What one 1 Hz cycle touches: the distinct cache lines (64 bytes) and pages (4 KiB) of
code and of data that a daemon reads or writes for one second's sentences, with one
watcher, under Valgrind's lackey.

At 1 Hz the caches have gone cold by the next cycle, so each line a cycle touches is
likely a miss, and each page a walk of the page tables: a cycle costs about what it
touches, more than what it runs (gpsd runs four times GPSFix's instructions a cycle for
about the same CPU time). This counts both, for gpsfixd and for gpsd in turn, on the same
six demo sentences a second written into a pseudo-terminal, as second_cost.py writes them.

lackey prints every instruction's and every access's address; its output is read through
a pipe and kept only for the measured cycles, each cut at the moment its sentences are
written (lackey's output buffer holds a few dozen accesses back at a cut: noise of a
percent). The figures are medians over the cycles.

Usage: python3 Benchmarks/cycle_lines.py [--cycles 6] [--gpsd] GPSFIXD ...
(GPSFIXD: the binary, or a link to it named gpsfixd, as second_cost.py takes it.)
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import threading
import time

from second_cost import DemoFeed, drain, free_port, named_gpsfixd, watch


def trace(command, cycles):
    """Runs `command` (a daemon's, with {device} and {port}) under lackey, one watcher
    reading; returns the trace of each of `cycles` 1 Hz cycles after a warm-up."""
    feed = DemoFeed()
    port = free_port()
    output, into = os.pipe()
    arguments = [part.format(device=feed.device, port=port) for part in command]
    daemon = subprocess.Popen(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-fd={into}", *arguments],
                              pass_fds=[into], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(into)
    kept, recording, lock = bytearray(), [False], threading.Lock()

    def read():
        while chunk := os.read(output, 1 << 20):
            with lock:
                if recording[0]:
                    kept.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        client = watch(port, attempts=1200)
        if client is None:
            raise SystemExit(f"{command[0]} did not listen under valgrind")
        for _ in range(8):  # warm-up: the device open, the watcher served, the tables made
            feed.cycle()
            time.sleep(2)
            drain(client)
        with lock:
            recording[0] = True
        cuts = []
        for _ in range(cycles):
            with lock:
                cuts.append(len(kept))
            feed.cycle()
            time.sleep(1)
            drain(client)
        with lock:
            cuts.append(len(kept))
            return [bytes(kept[start:end]) for start, end in zip(cuts, cuts[1:])]
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        feed.close()


def touched(cycle):
    """Instructions, and distinct code lines, data lines, code pages and data pages, of
    one cycle's trace (lackey's `I  ADDR,SIZE` and ` L|S|M ADDR,SIZE` lines)."""
    instructions, code, data = 0, set(), set()
    for line in cycle.split(b"\n"):
        if len(line) < 4 or b"," not in line:
            continue
        try:
            address = int(line[3:].split(b",", 1)[0], 16)
        except ValueError:
            continue
        if line.startswith(b"I "):
            instructions += 1
            code.add(address >> 6)
        elif line[:2] in (b" L", b" S", b" M"):
            data.add(address >> 6)
    return instructions, len(code), len(data), len({l >> 6 for l in code}), len({l >> 6 for l in data})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="*")
    parser.add_argument("--cycles", type=int, default=6)
    parser.add_argument("--gpsd", action="store_true", help="gpsd (-N -n) too")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        daemons = []
        for number, binary in enumerate(arguments.binaries):
            binary = named_gpsfixd(binary, folder, number)
            socket_path = os.path.join(folder, f"{number}.sock")
            daemons.append((arguments.binaries[number], [binary, "{device}", "--tcp", "127.0.0.1:{port}", "--socket", socket_path]))
        if arguments.gpsd:
            daemons.append(("gpsd", ["gpsd", "-N", "-n", "-S", "{port}", "{device}"]))
        print("daemon: instructions; distinct code lines, data lines, code pages, data pages (medians of a 1 Hz cycle)")
        for name, command in daemons:
            counts = [touched(cycle) for cycle in trace(command, arguments.cycles)]
            medians = [statistics.median(column) for column in zip(*counts)]
            print(f"{name}: {medians[0]:,.0f}; {medians[1]:,.0f}, {medians[2]:,.0f}, {medians[3]:,.0f}, {medians[4]:,.0f}"
                  f" ({len(counts)} cycles)", flush=True)


if __name__ == "__main__":
    main()
