#!/usr/bin/env python3
"""The daemon's resident memory over a long, fast replay with every output on.

gpsfixd reads `gpsfix replay` of a capture in a loop at SPEED times real time (one fix a
cycle), and serves at once: a gpsd watcher (Unix socket), the HTTP event stream
(GET /events), NMEA 0183 out (TCP), MQTT with Home Assistant discovery to a mosquitto of
its own, and Traccar to Tests/Tools/osmand_recorder.py at ten positions a second (half
the pace it sends at, so it keeps up). Every stream is read and dropped. The daemon's
VmRSS is sampled every second, with the TPVs the watcher has read so far; after the
warm-up's fixes, the growth against the first sample past it is printed.

Usage: Benchmarks/soak.py --bin DIR [--fixes 100000] [--warm-up 5000] [--speed 600] [--outputs events,nmea,mqtt,traccar]
(DIR holds gpsfixd and gpsfix; Benchmarks/soak builds them in release mode and runs this.)
"""
import argparse
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, seconds=20):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            sys.exit(f"soak: {what} did not happen within {seconds} s")
        time.sleep(0.05)


def connects(address):
    try:
        family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
        with socket.socket(family) as s:
            s.connect(address)
        return True
    except OSError:
        return False


def resident_kilobytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the folder of gpsfixd and gpsfix")
    parser.add_argument("--fixes", type=int, default=100_000, help="fixes measured after the warm-up")
    parser.add_argument("--warm-up", type=int, default=5_000, help="fixes before the baseline sample")
    parser.add_argument("--speed", type=float, default=600, help="times real time (the capture is 1 Hz)")
    parser.add_argument("--fixture", default=os.path.join(ROOT, "fixtures/gpsd/haicom-305N.log"))
    parser.add_argument("--outputs", default="events,nmea,mqtt,traccar", help="beside the watcher (to find which one grows)")
    args = parser.parse_args()
    outputs = set(args.outputs.split(",")) - {""}

    folder = tempfile.mkdtemp(prefix="gpsfix-soak-")
    processes = []

    def start(command, **options):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, os.path.basename(command[0]) + ".err"), "w"), **options)
        processes.append(process)
        return process

    try:
        broker_port, endpoint_port, http_port, nmea_port = (free_port() for _ in range(4))
        with open(os.path.join(folder, "mosquitto.conf"), "w") as conf:
            conf.write(f"listener {broker_port} 127.0.0.1\npersistence false\nallow_anonymous true\n")
            if os.getuid() == 0:
                conf.write("user root\n")
        start(["/usr/sbin/mosquitto", "-c", os.path.join(folder, "mosquitto.conf")])
        start([sys.executable, os.path.join(ROOT, "Tests/Tools/osmand_recorder.py"), str(endpoint_port),
               os.path.join(folder, "positions.log"), os.path.join(folder, "status")])
        wait_for("mosquitto and the OsmAnd endpoint", lambda: connects(("127.0.0.1", broker_port)) and connects(("127.0.0.1", endpoint_port)))
        link, sock = os.path.join(folder, "gps0"), os.path.join(folder, "gpsfixd.sock")
        start([os.path.join(args.bin, "gpsfix"), "replay", args.fixture, "--link", link, "--loop", "--speed", str(args.speed)])
        wait_for("the replay's link", lambda: os.path.exists(link))
        options = []
        if "events" in outputs:
            options += ["--http", f"127.0.0.1:{http_port}"]
        if "nmea" in outputs:
            options += ["--nmea-tcp", f"127.0.0.1:{nmea_port}"]
        if "mqtt" in outputs:
            options += ["--mqtt", f"mqtt://127.0.0.1:{broker_port}/fleet/soak", "--mqtt-homeassistant"]
        if "traccar" in outputs:
            options += ["--traccar", f"http://127.0.0.1:{endpoint_port}/", "--traccar-id", "soak", "--traccar-interval", "0.1",
                        "--state-directory", os.path.join(folder, "state")]
        daemon = start([os.path.join(args.bin, "gpsfixd"), link, "--socket", sock, "--log-level", "warning"] + options)
        wait_for("the daemon", lambda: connects(sock) and ("events" not in outputs or connects(("127.0.0.1", http_port)))
                 and ("nmea" not in outputs or connects(("127.0.0.1", nmea_port))))

        watcher = socket.socket(socket.AF_UNIX)
        watcher.connect(sock)
        watcher.sendall(b'?WATCH={"enable":true,"json":true}\n')
        streams = {watcher: 0}
        if "events" in outputs:
            events = socket.create_connection(("127.0.0.1", http_port))
            events.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            streams[events] = 0
        if "nmea" in outputs:
            streams[socket.create_connection(("127.0.0.1", nmea_port))] = 0
        marker, tail, fixes = b'"class":"TPV"', b"", 0

        started = time.monotonic()
        samples, baseline = [], None
        next_sample = started
        print("seconds  fixes  rss_kB", flush=True)
        while fixes < args.warm_up + args.fixes:
            if daemon.poll() is not None:
                sys.exit(f"soak: the daemon ended ({daemon.returncode})")
            ready, _, _ = select.select(list(streams), [], [], 0.1)
            for stream in ready:
                data = stream.recv(1 << 16)
                if not data:
                    sys.exit("soak: the daemon closed a stream")
                streams[stream] += len(data)
                if stream is watcher:
                    window = tail + data
                    fixes += window.count(marker)
                    tail = window[-(len(marker) - 1):] if not window.endswith(marker) else b""
            now = time.monotonic()
            if now >= next_sample:
                next_sample += 1
                rss = resident_kilobytes(daemon.pid)
                samples.append((now - started, fixes, rss))
                print(f"{now - started:7.0f}  {fixes:6d}  {rss}", flush=True)
                if baseline is None and fixes >= args.warm_up:
                    baseline = rss
        rss = resident_kilobytes(daemon.pid)
        samples.append((time.monotonic() - started, fixes, rss))
        after = [s[2] for s in samples if s[1] >= args.warm_up]
        positions = 0
        if os.path.exists(os.path.join(folder, "positions.log")):
            with open(os.path.join(folder, "positions.log")) as log:
                positions = sum(1 for _ in log)
        print(f"fixes {fixes} in {samples[-1][0]:.0f} s with {','.join(sorted(outputs)) or 'the watcher alone'}; "
              f"bytes read: {', '.join(str(count) for count in streams.values())}; Traccar positions {positions}")
        print(f"RSS after {args.warm_up} fixes: {baseline} kB; at the end {rss} kB; highest {max(after)} kB; "
              f"growth {rss - baseline} kB (highest {max(after) - baseline} kB)")
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
