#!/usr/bin/env python3
"""How long a first `scripts/demo` takes on a bare Debian 12 machine that has Swift.

The machine is a bare Debian 12 root made by mmdebstrap, with what swift.org lists for
installing Swift on Debian 12, and this machine's toolchain (/opt/swift) and Swift package
copies (/opt/swift-packages, which git reads github.com from) mounted into it. A clone of
this repository's HEAD runs `scripts/demo` there, from nothing built and no build package
installed; the clock stops when the daemon's first TPV reaches a client on its TCP port.
Each line the demo prints is stamped, so the note can say where the time went.

Usage (as root): python3 Benchmarks/first_demo.py [--keep]
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What Swift's own Debian 12 image installs beside the toolchain, and certificates.
SWIFT_NEEDS = (
    "binutils-gold libicu-dev libcurl4-openssl-dev libedit-dev libsqlite3-dev libncurses-dev libpython3-dev "
    "libxml2-dev pkg-config uuid-dev tzdata git gcc libstdc++-12-dev ca-certificates"
).split()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_tpv(port, deadline, demo):
    while time.monotonic() < deadline and demo.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as client:
                client.sendall(b'?WATCH={"enable":true,"json":true};\n')
                client.settimeout(5)
                data = b""
                while b'"class":"TPV"' not in data:
                    chunk = client.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if b'"class":"TPV"' in data:
                    return True
        except OSError:
            pass
        time.sleep(0.5)
    return False


def main():
    # A SIGTERM unwinds like an exception, so that the mounts are undone.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    folder = tempfile.mkdtemp(prefix="first-demo-")
    root = os.path.join(folder, "root")
    mounts = []
    demo = None
    try:
        subprocess.run(
            ["mmdebstrap", "--quiet", "--variant=apt", "--include=" + ",".join(SWIFT_NEEDS), "bookworm", root], check=True)
        for source in ("/opt/swift", "/opt/swift-packages", "/proc", "/dev"):
            target = root + source
            os.makedirs(target, exist_ok=True)
            subprocess.run(["mount", "--rbind", source, target], check=True)
            mounts.append(target)
        shutil.copy("/etc/resolv.conf", root + "/etc/resolv.conf")
        with open(root + "/etc/gitconfig", "w") as config:
            config.write('[url "/opt/swift-packages/"]\n\tinsteadOf = https://github.com/\n')
        subprocess.run(["git", "clone", "--quiet", REPOSITORY, root + "/root/gpsfix"], check=True)
        port, http = free_port(), free_port()
        environment = {
            "PATH": "/opt/swift/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
            "GPSFIXD_PORT": str(port), "GPSFIXD_HTTP_PORT": str(http), "XDG_RUNTIME_DIR": "/tmp",
        }
        start = time.monotonic()
        demo = subprocess.Popen(
            ["chroot", root, "/bin/sh", "-c", "cd /root/gpsfix && exec scripts/demo"], env=environment,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
        log = []

        def stamp():
            for line in demo.stdout:
                log.append((time.monotonic() - start, line.rstrip()))

        import threading
        threading.Thread(target=stamp, daemon=True).start()
        served = first_tpv(port, start + 1200, demo)
        elapsed = time.monotonic() - start
        marks = {}
        for at, line in log:
            for key, text in (("apt", "Installing from Debian"), ("fetch", "Fetching"), ("compile", "Compiling"),
                              ("link", "Linking"), ("built", "Build of product"), ("serving", "gpsfixd: socket")):
                if text in line and key not in marks:
                    marks[key] = at
        print(f"first scripts/demo: {'served a TPV' if served else 'NO TPV'} after {elapsed:.0f} s")
        for key, at in sorted(marks.items(), key=lambda item: item[1]):
            print(f"  {at:6.0f} s  first '{key}' line")
        if not served:
            print("\n".join(line for _, line in log[-30:]))
        return 0 if served else 1
    finally:
        if demo is not None and demo.poll() is None:
            os.killpg(demo.pid, signal.SIGTERM)
            demo.wait(timeout=30)
        for target in reversed(mounts):
            subprocess.run(["umount", "--recursive", "--lazy", target])
        if "--keep" not in sys.argv:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
