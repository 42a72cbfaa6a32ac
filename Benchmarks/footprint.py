#!/usr/bin/env python3
"""Resident memory of gpsfixd and gpsd, side by side, each serving the demo receiver to
one client.

gpsfixd runs `--demo` (its embedded capture, replayed through a pseudo-terminal); gpsd
(`-N -n`) reads the same capture, replayed by `gpsfix replay` through a pseudo-terminal
of its own. One client watches each (`?WATCH={"json":true}`). After --seconds, each
daemon's resident memory (VmRSS) is read, with its peak (VmHWM), its proportional share
(Pss) and the pages no other process can share (Private_Dirty), and what it is made of:
anonymous memory, and the pages of its binary and of each library. With --client-leaves,
a first client watches each for 3 s and leaves before the one that stays connects.

Usage: python3 Benchmarks/footprint.py --gpsfixd /usr/sbin/gpsfixd --gpsfix /usr/bin/gpsfix [--seconds 40]
[--client-leaves]
(the packaged binaries: `dpkg-deb -x dist/gpsfix_*~deb12_*.deb DIR`).
"""

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import time

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Sources/gpsfixd/demo.nmea")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def watch(port):
    for _ in range(200):
        try:
            client = socket.create_connection(("127.0.0.1", port))
            client.sendall(b'?WATCH={"enable":true,"json":true};\n')
            client.setblocking(False)
            return client
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port}")


def drain(client):
    count = 0
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            count += data.count(b'"class":"TPV"')
    except BlockingIOError:
        pass
    return count


def memory(pid):
    resident = {}
    name = None
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
                name = os.path.basename(fields[5]) if len(fields) > 5 else "[anon]"
            elif fields[0] == "Rss:":
                resident[name] = resident.get(name, 0) + int(fields[1])
    figures = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                figures[line.split(":")[0]] = int(line.split()[1])
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith(("Pss:", "Private_Dirty:")):
                figures[line.split(":")[0]] = int(line.split()[1])
    return figures, resident


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpsfixd", required=True)
    parser.add_argument("--gpsfix", required=True)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--client-leaves", action="store_true",
                        help="a first client watches for 3 s and leaves before the one measured with connects")
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="footprint-")
    # A binary just written (a package just unpacked) is dirty in the page cache until it
    # is written back, and smaps counts its mapped pages as private dirty: 10 MB of them.
    os.sync()
    processes = []
    try:
        fix_port, gpsd_port = free_port(), free_port()
        processes.append(subprocess.Popen(
            [options.gpsfixd, "--demo", "--tcp", f"127.0.0.1:{fix_port}", "--socket", f"{folder}/gpsfixd.sock",
             "--control-socket", f"{folder}/control.sock", "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        link = f"{folder}/gps0"
        # The replayer runs from a copy: the packaged gpsfix is gpsfixd's own binary, and
        # pages another process maps stay resident in gpsfixd too.
        replayer = f"{folder}/gpsfix-replay"
        shutil.copy(options.gpsfix, replayer)
        processes.append(subprocess.Popen(
            [replayer, "replay", DEMO, "--loop", "--retime", "--link", link],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(100):
            if os.path.exists(link):
                break
            time.sleep(0.1)
        processes.append(subprocess.Popen(
            ["gpsd", "-N", "-n", "-S", str(gpsd_port), "-F", f"{folder}/gpsd.sock", link],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        ports = {"gpsfixd": fix_port, "gpsd": gpsd_port}
        clients = {name: watch(port) for name, port in ports.items()}
        if options.client_leaves:
            # As gpsd's clients come and go (cgps, gpspipe, a check that the daemon serves).
            time.sleep(3)
            for client in clients.values():
                client.close()
            clients = {name: watch(port) for name, port in ports.items()}
        reports = {name: 0 for name in clients}
        end = time.monotonic() + options.seconds
        while time.monotonic() < end:
            time.sleep(0.5)
            for name, client in clients.items():
                reports[name] += drain(client)
        for name, pid in (("gpsfixd", processes[0].pid), ("gpsd", processes[2].pid)):
            figures, parts = memory(pid)
            shown = ", ".join(f"{part} {kb}" for part, kb in sorted(parts.items(), key=lambda item: -item[1]) if kb >= 100)
            print(f"{name:8} {figures['VmRSS']} kB resident (peak {figures['VmHWM']}, proportional {figures['Pss']}, "
                  f"private dirty {figures['Private_Dirty']}), {reports[name]} TPVs to its client ({shown})")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
