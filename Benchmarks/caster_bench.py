#!/usr/bin/env python3
"""What the caster costs: gpsfixd reading a base receiver's 1 Hz MSM7 stream, once
without the caster and once with it serving 10 NTRIP rovers, CPU per second of each run.

The receiver is a pseudo-terminal this script writes one second of a base's output into,
every second: MSM7 of four constellations (1077, 1087, 1097 and 1107, real frames from
fixtures/rtcm/rtcm3.2.log) and, every 10 s, the station's position (1005). The rovers are
NTRIP 1.0 clients that read everything. CPU is the daemon's user and system time from
/proc/PID/stat over the measured seconds (after a 5 s settling), as a share of one core.

Usage: python3 Benchmarks/caster_bench.py --gpsfixd .build/release/gpsfix [--seconds 60] [--rovers 10]
(the one binary, run as gpsfixd; or the packaged /usr/sbin/gpsfixd).
"""

import argparse
import os
import select
import socket
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")


def crc24q(data):
    crc = 0
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def frame(message):
    body = bytes([0xD3, len(message) >> 8, len(message) & 0xFF]) + message
    crc = crc24q(body)
    return body + bytes([crc >> 16, (crc >> 8) & 0xFF, crc & 0xFF])


def station_1005():
    """RTCM 1005 for a point at 52 N 4.37 E (ECEF in 0.1 mm)."""
    fields = [(1005, 12), (0, 12), (0, 6), (0b1110, 4), (39235513863, 38), (0, 2), (2998343789, 38), (0, 2), (50028427460, 38)]
    bits = "".join(format(value & ((1 << width) - 1), "0%db" % width) for value, width in fields)
    bits += "0" * (-len(bits) % 8)
    return frame(bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8)))


def msm7_second():
    data = open(os.path.join(ROOT, "fixtures/rtcm/rtcm3.2.log"), "rb").read()
    while data.startswith(b"#"):
        data = data[data.index(b"\n") + 1:]
    found, offset = {}, 0
    while offset + 6 <= len(data):
        length = ((data[offset + 1] & 3) << 8) | data[offset + 2]
        candidate = data[offset:offset + length + 6]
        if data[offset] == 0xD3 and len(candidate) == length + 6 and frame(candidate[3:-3]) == candidate:
            number = (candidate[3] << 4) | (candidate[4] >> 4)
            found.setdefault(number, candidate)
            offset += length + 6
        else:
            offset += 1
    return b"".join(found[n] for n in (1077, 1087, 1097, 1107))


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rover(port, stop, received):
    for _ in range(100):
        try:
            connection = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.1)
    else:
        raise SystemExit(f"no caster on port {port}")
    connection.sendall(b"GET /GPSFIX HTTP/1.0\r\nUser-Agent: NTRIP caster_bench\r\n\r\n")
    while not stop.is_set():
        if select.select([connection], [], [], 0.5)[0]:
            more = connection.recv(65536)
            if not more:
                break
            received.append(len(more))


def run(gpsfixd, seconds, rovers):
    master, slave = os.openpty()
    folder = tempfile.mkdtemp(prefix="caster-bench-")
    port = free_port()
    arguments = ["gpsfixd", os.ttyname(slave), "--speed", "115200", "--socket", os.path.join(folder, "gpsfixd.sock")]
    if rovers is not None:
        arguments += ["--caster", f"127.0.0.1:{port}"]
    daemon = subprocess.Popen(arguments, executable=gpsfixd, stderr=subprocess.DEVNULL)
    stop, received, threads = threading.Event(), [], []
    for _ in range(rovers or 0):
        thread = threading.Thread(target=rover, args=(port, stop, received))
        thread.start()
        threads.append(thread)
    second, station = msm7_second(), station_1005()
    try:
        start, cpu_start, origin = None, None, time.monotonic()
        for tick in range(seconds + 5):
            if tick == 5:
                start, cpu_start = time.monotonic(), cpu_seconds(daemon.pid)
            os.write(master, second + (station if tick % 10 == 0 else b""))
            time.sleep(max(0.0, origin + tick + 1 - time.monotonic()))
        used = cpu_seconds(daemon.pid) - cpu_start
        elapsed = time.monotonic() - start
        if daemon.poll() is not None:
            raise SystemExit(f"gpsfixd ended with status {daemon.returncode}: {' '.join(arguments)}")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        daemon.terminate()
        daemon.wait(10)
        os.close(master)
        os.close(slave)
    return used / elapsed * 100, sum(received)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpsfixd", required=True)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--rovers", type=int, default=10)
    options = parser.parse_args()
    without, _ = run(options.gpsfixd, options.seconds, None)
    with_rovers, received = run(options.gpsfixd, options.seconds, options.rovers)
    print(f"1 Hz MSM7, {options.seconds} s each:")
    print(f"  without the caster:          {without:.3f} % of one core")
    print(f"  caster with {options.rovers} rovers:       {with_rovers:.3f} % of one core ({received} bytes to the rovers)")
    print(f"  the caster's cost:           {with_rovers - without:.3f} % of one core (target: at most 5 %)")


if __name__ == "__main__":
    main()
