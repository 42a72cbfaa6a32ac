#!/usr/bin/env python3
"""gpsfixd against gpsd on the same u-blox UBX stream, in the same run.

A u-blox receiver at HZ epochs a second is simulated on a pseudo-terminal, each epoch
laid out as u-blox's interface description gives it: NAV-PVT (a 3D fix, the current UTC
time), NAV-SAT (20 satellites), NAV-DOP and NAV-EOE, checksummed. Each daemon reads the
pty in turn (A B A B ...: gpsd -N -n, then gpsfixd), one watcher reads its TPVs over
TCP, and for each daemon this prints CPU seconds per 100,000 UBX frames (the
scheduler's nanosecond clock, /proc/PID/task/*/schedstat), the share of epochs reported, and the latency from the write of an
epoch's last frame to the watcher's reading of its TPV (median and 99th percentile).
Anything a daemon writes to the receiver (gpsd's probes) is read and dropped.

Usage: Benchmarks/ubx_pair.py --gpsfixd PATH [--gpsd /usr/sbin/gpsd] [--hz 10] [--seconds 15] [--rounds 3]
(Benchmarks/ubx-vs-gpsd builds gpsfixd in release mode and runs this.)
"""
import argparse
import calendar
import json
import os
import pty
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time
import tty

GPS_EPOCH = 315_964_800
LEAP_SECONDS = 18


def frame(message_class, message_id, payload):
    body = bytes([message_class, message_id]) + struct.pack("<H", len(payload)) + payload
    a = b = 0
    for byte in body:
        a = (a + byte) & 0xFF
        b = (b + a) & 0xFF
    return b"\xb5\x62" + body + bytes([a, b])


def epoch_frames(unix_time):
    """NAV-PVT, NAV-SAT, NAV-DOP and NAV-EOE for the epoch at `unix_time` (UTC, seconds)."""
    milliseconds = round(unix_time * 1000)
    itow = (milliseconds - (GPS_EPOCH - LEAP_SECONDS) * 1000) % (604_800 * 1000)
    t = time.gmtime(milliseconds // 1000)
    nano = (milliseconds % 1000) * 1_000_000
    pvt = struct.pack(
        "<IHBBBBBBIiBBBBiiiiIIiiiiiIIHH4xiHH",
        itow, t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, 0x07, 20, nano,
        3, 0x01, 0, 12, 115_167_000, 481_173_000, 592_000, 545_400, 1_500, 2_500,
        100, 50, -10, 112, 2_500_000, 200, 50_000, 130, 0, 0, 0, 0)
    satellites = b"".join(
        struct.pack("<BBBbhhI", 0, prn, 30 + prn % 15, 10 + prn * 3, prn * 17 % 360, 0, 0x0F if prn <= 12 else 0x04)
        for prn in range(1, 21))
    sat = struct.pack("<IBB2x", itow, 1, 20) + satellites
    dop = struct.pack("<IHHHHHHH", itow, 180, 130, 90, 110, 70, 50, 60)
    return [frame(0x01, 0x07, pvt), frame(0x01, 0x35, sat), frame(0x01, 0x04, dop), frame(0x01, 0x61, struct.pack("<I", itow))]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """CPU time of every thread of `pid`, from the scheduler's nanosecond clock."""
    total = 0
    for thread in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{thread}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except OSError:
            pass  # a thread that ended meanwhile
    return total / 1e9


def connect(port, seconds=20):
    deadline = time.monotonic() + seconds
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=1)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def run_round(name, command, master, port, hz, seconds):
    folder = tempfile.mkdtemp(prefix="ubx-pair-")
    daemon = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "err"), "w"))
    try:
        watcher = connect(port)
        watcher.sendall(b'?WATCH={"enable":true,"json":true}\n')
        written = {}
        latencies = []
        buffer = b""
        interval = 1 / hz
        start_cpu = None
        frames = 0
        next_epoch = (time.time() // interval + 1) * interval
        warm_up_until = time.monotonic() + 2
        end = warm_up_until + seconds
        while time.monotonic() < end:
            timeout = max(0, next_epoch - time.time())
            ready, _, _ = select.select([watcher, master], [], [], timeout)
            if master in ready:
                os.read(master, 65536)  # what the daemon writes to the receiver
            if watcher in ready:
                data = watcher.recv(1 << 16)
                if not data:
                    sys.exit(f"{name} closed the watcher")
                received = time.monotonic()
                buffer += data
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if b'"class":"TPV"' not in line:
                        continue
                    report = json.loads(line)
                    key = report.get("time", "")[:23]
                    if key in written and start_cpu is not None:
                        latencies.append(received - written.pop(key))
            if time.time() >= next_epoch:
                stamp = next_epoch
                for data in epoch_frames(stamp):
                    os.write(master, data)
                key = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(round(stamp * 1000) // 1000)) + ".%03d" % (round(stamp * 1000) % 1000)
                if start_cpu is None and time.monotonic() >= warm_up_until:
                    start_cpu = cpu_seconds(daemon.pid)
                if start_cpu is not None:
                    written[key] = time.monotonic()
                    frames += 4
                next_epoch += interval
        used = cpu_seconds(daemon.pid) - start_cpu
        epochs = frames // 4
        latencies.sort()
        def percentile(p):
            return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else float("nan")
        return {"name": name, "cpu_per_100k": used / frames * 100_000 if frames else float("nan"),
                "reported": len(latencies) / epochs if epochs else 0, "p50_ms": percentile(0.5), "p99_ms": percentile(0.99)}
    finally:
        daemon.terminate()
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpsfixd", required=True)
    parser.add_argument("--gpsd", default="/usr/sbin/gpsd")
    parser.add_argument("--hz", type=float, default=10)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = []
    for round_number in range(args.rounds):
        for name in ("gpsd", "gpsfixd"):
            master, slave = pty.openpty()
            tty.setraw(slave)
            path = os.ttyname(slave)
            port = free_port()
            folder = tempfile.mkdtemp(prefix="ubx-pair-")
            if name == "gpsd":
                command = [args.gpsd, "-N", "-n", "-S", str(port), "-F", os.path.join(folder, "control"), path]
            else:
                command = [args.gpsfixd, path, "--tcp", f"127.0.0.1:{port}", "--socket", os.path.join(folder, "gpsfixd.sock"),
                           "--log-level", "warning"]
            try:
                result = run_round(name, command, master, port, args.hz, args.seconds)
            finally:
                os.close(master)
                os.close(slave)
            result["round"] = round_number + 1
            results.append(result)
            print(f"round {result['round']} {name:8} CPU {result['cpu_per_100k']:6.2f} s/100k frames, "
                  f"reported {result['reported'] * 100:5.1f}% of epochs, latency p50 {result['p50_ms']:6.2f} ms, p99 {result['p99_ms']:6.2f} ms",
                  flush=True)
    for name in ("gpsd", "gpsfixd"):
        mine = [r for r in results if r["name"] == name]
        print(f"{name:8} median over rounds: CPU {sorted(r['cpu_per_100k'] for r in mine)[len(mine) // 2]:6.2f} s/100k frames, "
              f"p99 {sorted(r['p99_ms'] for r in mine)[len(mine) // 2]:6.2f} ms")


if __name__ == "__main__":
    main()
