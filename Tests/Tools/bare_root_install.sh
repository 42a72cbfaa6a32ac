#!/bin/sh
# Installs a GPSFix package into a bare Debian root and uses it there, where no Swift exists.
#
# Usage: unshare --mount --propagation private --pid --fork --kill-child bare_root_install.sh ROOT DEB CAPTURE GPSD_PORT
#
# ROOT is made by `mmdebstrap --variant=apt SUITE ROOT` (bookworm, trixie). In this mount
# namespace of its own, /dev and /proc are mounted into ROOT (they go with the namespace,
# and every process started here dies with the script, which is the first of its PID
# namespace: the proc mounted in ROOT is that namespace's, and so are the PIDs here);
# the package is installed with apt (its dependencies from the registry); then gpsfixd
# --demo serves (without loading libgps or libmosquitto, which it needs for neither),
# gpsfix poll reads a TPV; gpsfixd reads the gpsd serving on 127.0.0.1:GPSD_PORT outside
# the root through the root's own libgps, and gpsfix poll reads its TPV; gpsfix decode
# decodes CAPTURE; the package is removed and installed again, then purged.
# Each step prints a line starting with "STEP"; anything failing ends the script non-zero.
set -eu
root=$1 deb=$2 capture=$3 gpsd_port=$4

mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/gpsfix.deb"
cp "$capture" "$root/tmp/capture.nmea"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

in_root apt-get update -qq
in_root apt-get install -y -qq /tmp/gpsfix.deb > /dev/null
echo "STEP installed $(in_root dpkg-query -W -f='${Version} ${Status}' gpsfix)"
echo "STEP swift $(in_root sh -c 'ls /usr/lib/swift /usr/share/swift 2>/dev/null | wc -l') $(in_root sh -c 'command -v swift || echo none')"
echo "STEP user $(in_root id -nG gpsfix)"
echo "STEP version $(in_root gpsfixd --version)"
in_root gpsfixd --config /etc/gpsfix/gpsfixd.conf --check-config > /dev/null && echo "STEP config checked"

# Starts gpsfixd in the root with the arguments after MODE and SOCKET; waits for a TPV of
# mode MODE (a pattern) from it on SOCKET, left in $tpv; fails, with the daemon's log,
# when none comes within 20 s. chroot and env exec the daemon: $! is its PID, left in
# $daemon.
serve() {
    mode=$1 socket=$2
    shift 2
    chroot "$root" env -i PATH=/usr/sbin:/usr/bin gpsfixd "$@" --socket "$socket" --log-level warning > "$root/tmp/gpsfixd.log" 2>&1 &
    daemon=$!
    tries=0
    until poll=$(in_root gpsfix poll --socket "$socket" 2>/dev/null) && echo "$poll" | grep -q "\"class\":\"TPV\".*\"mode\":$mode"; do
        tries=$((tries + 1))
        if [ $tries -ge 100 ]; then
            echo "STEP no TPV from gpsfixd $*"
            cat "$root/tmp/gpsfixd.log" >&2
            exit 1
        fi
        sleep 0.2
    done
    tpv=$(echo "$poll" | grep -o '"class":"TPV"[^}]*' | head -1)
}

# Stops the daemon: SIGTERM, and SIGKILL when it has not ended within 5 s.
stop_daemon() {
    kill $daemon 2> /dev/null || true
    tries=0
    while kill -0 $daemon 2> /dev/null && [ $tries -lt 50 ]; do
        tries=$((tries + 1))
        sleep 0.1
    done
    kill -9 $daemon 2> /dev/null || true
    wait $daemon 2> /dev/null || true
}

# Each of the daemon's threads but SwiftNIO's (its event loop; its thread pool, which
# writes the demo's sentences), with its wake-ups so far.
switches() {
    for task in "$root/proc/$daemon/task/"*; do
        case "$(cat "$task/comm")" in NIO-SGLTN-* | SGLTN-TP-*) continue ;; esac
        echo "${task##*/} $(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$task/status")"
    done
}

serve 3 /tmp/gpsfixd.sock --demo
echo "STEP poll $tpv"
echo "STEP loaded $(grep -c 'libgps\|libmosquitto' "$root/proc/$daemon/maps" || true) optional libraries"
# Over 2.5 s, a thread woken each second (libdispatch's worker-pool monitor) wakes twice.
before=$(switches)
sleep 2.5
after=$(switches)
# A thread started meanwhile counts from zero.
woken=$( (echo "$before" | sed 's/^/before /'; echo "$after" | sed 's/^/after /') |
    awk 'NF == 3 && $1 == "before" { first[$2] = $3 } NF == 3 && $1 == "after" && $3 - first[$2] > 1 { woken++ } END { print woken + 0 }')
echo "STEP threads woken besides SwiftNIO's: $woken"
stop_daemon

serve '[23]' /tmp/upstream.sock "gpsd://127.0.0.1:$gpsd_port"
echo "STEP upstream through $(grep -o 'libgps\.so\.[0-9]*' "$root/proc/$daemon/maps" | sort -u | paste -sd ' ')"
stop_daemon

echo "STEP decode $(in_root gpsfix decode /tmp/capture.nmea | grep -c '"class":"TPV"') TPVs"

# Removed (its units masked, as a removed package's are) and installed again: no unit of
# it left masked.
in_root apt-get remove -y -qq gpsfix > /dev/null
in_root apt-get install -y -qq /tmp/gpsfix.deb > /dev/null
echo "STEP masked after reinstalling: $(find "$root/etc/systemd/system" -maxdepth 1 -name 'gpsfixd.*' -lname /dev/null | wc -l)"

in_root apt-get purge -y -qq gpsfix > /dev/null
echo "STEP purged $(in_root sh -c 'ls /usr/sbin/gpsfixd /etc/gpsfix /var/lib/gpsfixd 2>&1 | grep -c "No such file"')"
