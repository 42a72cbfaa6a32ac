#!/usr/bin/env python3
"""What a second costs the daemon at a receiver's rate: CPU a second, and the wake-ups
behind it, with one watcher, idle (the receiver silent) and at 1 Hz (six sentences of the
demo capture written each second into a pseudo-terminal the daemon reads).

Each daemon given is run in turn, A B A B, on a pseudo-terminal of its own; CPU is the
process's CPU clock (every thread, live and gone, nanoseconds), read over the measured
seconds. With --syscalls, a further round runs each under `strace -f -c` and prints the
calls that wake a thread (epoll_wait) or arm a timer (timerfd_settime), a second.

With --threads, each thread's share: its CPU and its wake-ups (voluntary context switches)
a second.

With --instructions, a further round runs each under Valgrind's callgrind and prints the
user-space instructions a 1 Hz cycle runs, and the functions that run most of them: a
count that does not move with the machine's load, where CPU time does by 10 to 20%. It
needs `valgrind`, and a binary with its symbol table: the package's is stripped, so give
the build's (`.build-package/release/gpsfix`) without its DWARF 5 debugging sections,
which Debian 12's Valgrind cannot read (`objcopy --strip-debug`).

Usage: python3 Benchmarks/second_cost.py [--seconds 30] [--rounds 2] [--syscalls] [--threads] [--instructions] GPSFIXD [GPSFIXD ...]
(GPSFIXD: the binary, or a link to it named gpsfixd: the one binary runs the daemon when
called by that name; a path not named gpsfixd is linked as such in a temporary folder).
"""

import argparse
import collections
import os
import re
import pty
import socket
import subprocess
import tempfile
import time
import tty

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Sources/gpsfixd/demo.nmea")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_cpu_ns(pid):
    """The thread group's CPU clock (CPUCLOCK_SCHED), nanoseconds."""
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def threads(pid):
    """Each live thread's name, CPU nanoseconds and voluntary switches (wake-ups), by id."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            cpu = int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
            status = open(f"/proc/{pid}/task/{tid}/status").read()
        except OSError:
            continue
        switches = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("voluntary_ctxt_switches:"))
        found[tid] = (name, cpu, switches)
    return found


class DemoFeed:
    """A pseudo-terminal for a daemon to read, written six sentences of the demo capture
    at each cycle."""

    def __init__(self):
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)
        self.device = os.ttyname(self.slave)
        self.sentences = [line + b"\n" for line in open(DEMO, "rb").read().split(b"\n") if line.startswith(b"$")]
        self.written = 0

    def cycle(self):
        count = len(self.sentences)
        os.write(self.master, b"".join(self.sentences[(self.written + k) % count] for k in range(6)))
        self.written += 6

    def close(self):
        os.close(self.master)
        os.close(self.slave)


def named_gpsfixd(binary, folder, number):
    """`binary`, which runs the daemon when called gpsfixd: itself if so named, else a link
    by that name in a folder `number` of `folder`."""
    binary = os.path.abspath(binary)
    if os.path.basename(binary) == "gpsfixd":
        return binary
    link = os.path.join(folder, str(number))
    os.mkdir(link)
    os.symlink(binary, os.path.join(link, "gpsfixd"))
    return os.path.join(link, "gpsfixd")


def watch(port, attempts):
    """A client watching the daemon on `port` for JSON reports, not blocking, once the
    daemon listens (tried every 0.1 s, `attempts` times); None if it never does."""
    for _ in range(attempts):
        try:
            client = socket.create_connection(("127.0.0.1", port))
        except OSError:
            time.sleep(0.1)
            continue
        client.sendall(b'?WATCH={"enable":true,"json":true};\n')
        client.setblocking(False)
        return client
    return None


def drain(client):
    try:
        while client.recv(65536):
            pass
    except BlockingIOError:
        pass


def callgrind_costs(path):
    """Instructions in all, and each function's own, from a callgrind output file."""
    names, own, total = {}, collections.Counter(), 0
    function, call_follows = None, False
    for line in open(path):
        named = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
        if named:
            if named.group(2):
                names[named.group(1)] = named.group(2).strip()
            if line.startswith("fn="):
                function = names.get(named.group(1))
        elif line.startswith("calls="):
            call_follows = True  # the next cost line is the callee's, not this function's
        elif line[:1].isdigit() or line[:1] in "+-*":
            fields = line.split()
            if len(fields) >= 2 and not call_follows:
                own[function] += int(fields[1])
                total += int(fields[1])
            call_follows = False
    return total, own


def run(binary, seconds, feeding, folder, syscalls=False, callgrind=None):
    """CPU-µs a second (and, with `syscalls`, strace's counts) of one daemon; with
    `callgrind` (an output path), under callgrind, counting the measured seconds only."""
    feed = DemoFeed()
    port = free_port()
    wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind}"] if callgrind else []
    daemon = subprocess.Popen(
        wrapper + [binary, feed.device, "--tcp", f"127.0.0.1:{port}", "--socket", os.path.join(folder, f"{port}.sock")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tracer = None
    try:
        client = watch(port, attempts=600 if callgrind else 100)
        if client is None:
            raise SystemExit(f"{binary} did not listen on {port}")
        for _ in range(3):  # warm-up: the device is open, the watcher served
            feed.cycle()
            time.sleep(1)
            drain(client)
        if syscalls:
            summary = os.path.join(folder, f"strace-{port}.txt")
            tracer = subprocess.Popen(["strace", "-f", "-c", "-o", summary, "-p", str(daemon.pid)], stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        if callgrind:
            subprocess.run(["callgrind_control", "--zero", str(daemon.pid)], stdout=subprocess.DEVNULL, check=True)
        start = process_cpu_ns(daemon.pid)
        first = threads(daemon.pid)
        began = time.monotonic()
        fed = 0
        while time.monotonic() - began < seconds:
            if feeding:
                feed.cycle()
                fed += 1
            time.sleep(1)
            drain(client)
        used = process_cpu_ns(daemon.pid) - start
        per_thread = [
            (name, (cpu - first.get(tid, (name, 0, 0))[1]) / 1000 / seconds, (woken - first.get(tid, (name, 0, 0))[2]) / seconds)
            for tid, (name, cpu, woken) in sorted(threads(daemon.pid).items())]
        counts = {}
        if callgrind:
            subprocess.run(["callgrind_control", "--dump", str(daemon.pid)], stdout=subprocess.DEVNULL, check=True)
        if tracer:
            tracer.send_signal(2)
            tracer.wait(timeout=10)
            for line in open(summary):
                fields = line.split()
                if len(fields) >= 5 and fields[-1] in ("epoll_wait", "timerfd_settime", "read", "writev"):
                    counts[fields[-1]] = int(fields[3]) / seconds
        return used / 1000 / seconds, counts, per_thread, fed
    finally:
        if tracer and tracer.poll() is None:
            tracer.kill()
        daemon.terminate()
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        feed.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--syscalls", action="store_true")
    parser.add_argument("--threads", action="store_true", help="each thread's CPU and wake-ups a second, too")
    parser.add_argument("--instructions", action="store_true", help="instructions a 1 Hz cycle, under callgrind")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        daemons = [(binary, named_gpsfixd(binary, folder, number)) for number, binary in enumerate(arguments.binaries)]
        for name, binary in daemons * arguments.rounds:
            for feeding in (False, True):
                cost, _, per_thread, _ = run(binary, arguments.seconds, feeding, folder)
                print(f"{name}: {'1 Hz' if feeding else 'idle'}: {cost:.0f} µs of CPU a second", flush=True)
                if arguments.threads:
                    for thread, micros, wakes in per_thread:
                        print(f"    {thread}: {micros:.0f} µs, {wakes:.2f} wake-ups a second", flush=True)
        if arguments.syscalls:
            for name, binary in daemons:
                _, counts, _, _ = run(binary, arguments.seconds, True, folder, syscalls=True)
                print(f"{name}: 1 Hz, a second: " + ", ".join(f"{call} {rate:.2f}" for call, rate in sorted(counts.items())))
        if arguments.instructions:
            for number, (name, binary) in enumerate(daemons):
                output = os.path.join(folder, f"callgrind-{number}")
                *_, cycles = run(binary, arguments.seconds, True, folder, callgrind=output)
                # The dump asked for holds the measured seconds; the one at exit, the rest.
                total, own = callgrind_costs(output + ".1")
                print(f"{name}: 1 Hz: {total / cycles:,.0f} instructions a cycle (user space), the most:")
                for function, count in own.most_common(12):
                    print(f"    {count / total:6.1%}  {(function or '?')[:110]}")


if __name__ == "__main__":
    main()
