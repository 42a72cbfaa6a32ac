#!/usr/bin/env python3
"""Every cycle's latency over a long run at 1 Hz, one daemon at a time: how often a cycle
is slow, which a 60 s round of daemon_bench.py cannot say (its p99 is its slowest cycle).

Each daemon reads a pseudo-terminal of its own, into which daemon_bench.py's own cycle
(GGA, GSA, three GSV, RMC; imported from ../shared/tools) is written once a second; one
watcher over TCP times each cycle from the write to its TPV's arrival. The daemons run in
turn, in the order given, each for --seconds; for each: the percentiles and the slowest
cycle, how many took over 1, 2 and 5 ms, and the main thread's and each other thread's
wake-ups (voluntary context switches) a cycle.

Usage: python3 Benchmarks/cycle_latency.py [--seconds 600] [--tools ../shared/tools]
    "DIR/usr/sbin/gpsfixd {device} --tcp 127.0.0.1:{port} --socket {sock}"
    "gpsd -N -n -S {port} -F {sock} {device}"
"""

import argparse
import os
import pty
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tty


def wakeups(pid):
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as comm, open(f"/proc/{pid}/task/{task}/status") as status:
                name = comm.read().strip()
                switches = int(status.read().split("voluntary_ctxt_switches:")[1].split()[0])
        except (OSError, IndexError):
            continue
        counts[name] = counts.get(name, 0) + switches
    return counts


def run(template, seconds, bench):
    master, slave = pty.openpty()
    tty.setraw(master)
    folder = tempfile.mkdtemp(prefix="cycle-latency-")
    port = bench.free_port()
    argv = bench.expand(template, {"device": os.ttyname(slave), "port": str(port), "sock": os.path.join(folder, "d.sock")})
    daemon = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start_ms = int(time.time()) * 1000
    written = 0
    buffered = b""

    def write_cycle():
        nonlocal written
        os.write(master, bench.cycle_bytes(start_ms + written * 1000, written))
        written += 1

    def first_tpv(deadline):
        # The first TPV's arrival before `deadline`, reading the pty back so it never fills.
        nonlocal buffered
        while True:
            ready, _, _ = select.select([client, master], [], [], max(0, deadline - time.monotonic()))
            if not ready:
                return None
            if master in ready:
                try:
                    os.read(master, 65536)
                except OSError:
                    pass
            if client in ready:
                data = client.recv(65536)
                if not data:
                    return None
                arrived = time.monotonic()
                buffered += data
                lines = buffered.split(b"\n")
                buffered = lines.pop()
                if any(b'"class":"TPV"' in line for line in lines):
                    return arrived

    try:
        for _ in range(5):
            write_cycle()
            time.sleep(0.3)
        client = None
        for _ in range(100):
            try:
                client = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.1)
        if client is None:
            raise SystemExit(f"nothing listens on port {port}: {argv}")
        client.sendall(b'?WATCH={"enable":true,"json":true};\n')
        for _ in range(3):
            write_cycle()
            first_tpv(time.monotonic() + 1)
        before = wakeups(daemon.pid)
        latencies = []
        next_cycle = time.monotonic()
        for _ in range(int(seconds)):
            next_cycle += 1
            wrote = time.monotonic()
            write_cycle()
            arrived = first_tpv(wrote + 0.5)
            latencies.append(None if arrived is None else (arrived - wrote) * 1000)
            # The rest of the second after its TPV (the cycle's SKY is read then too).
            first_tpv(next_cycle)
        after = wakeups(daemon.pid)
    finally:
        daemon.terminate()
        daemon.wait()
        os.close(master)
        os.close(slave)
        shutil.rmtree(folder, ignore_errors=True)
    return latencies, {name: (after[name] - before.get(name, 0)) / len(latencies) for name in after}


def report(template, latencies, switches, bench):
    timed = sorted(value for value in latencies if value is not None)
    print(template.split()[0])
    print(f"  {len(latencies)} cycles, {len(latencies) - len(timed)} without a TPV within 0.5 s")
    # Nearest-rank percentiles, as daemon_bench.py gives them.
    print("  " + "  ".join(f"p{p:g} {bench.pct(timed, p):.3f}" for p in (50, 99, 99.9)) + f"  max {timed[-1]:.3f} ms")
    print("  over 1 / 2 / 5 ms: " + " / ".join(str(sum(value > limit for value in timed)) for limit in (1, 2, 5)))
    print("  wake-ups a cycle: " + ", ".join(f"{name} {count:.2f}" for name, count in sorted(switches.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("daemons", nargs="+", help="command templates: {device}, {port}, {sock}")
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--tools", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/tools"))
    arguments = parser.parse_args()
    sys.path.insert(0, arguments.tools)
    import daemon_bench

    for template in arguments.daemons:
        report(template, *run(template, arguments.seconds, daemon_bench), daemon_bench)


if __name__ == "__main__":
    main()
