#!/usr/bin/python3
"""Reads a gpsd server through libgps, the C library cgps, gpxlogger, xgps and gps2udp
read with, until libgps has read a SKY.

Usage: libgps_sky.py HOST PORT. Prints "sky" and exits 0 once gps_read has set
SATELLITE_SET; prints the error and exits 1 when gps_read fails; exits 2 when ten reads
brought no SKY, as when libgps 3.22 drops each SKY that lists more than its MAXCHANNELS
(140) satellites; exits 3 when libgps is not installed.
"""
import ctypes
import ctypes.util
import sys

WATCH_ENABLE, WATCH_JSON = 0x01, 0x10
SATELLITE_SET = 1 << 15

found = ctypes.util.find_library("gps")
if found is None:
    print("libgps is not installed (Debian: libgps28 or libgps30t64)")
    sys.exit(3)
library = ctypes.CDLL(found)
library.gps_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
library.gps_waiting.argtypes = [ctypes.c_void_p, ctypes.c_int]
library.gps_waiting.restype = ctypes.c_bool
library.gps_stream.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]
library.gps_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p]

# struct gps_data_t, whose first member is the 64-bit mask of what the last read set; the
# rest is room enough for any libgps release's structure.
data = ctypes.create_string_buffer(4 << 20)
if library.gps_open(sys.argv[1].encode(), sys.argv[2].encode(), data) != 0:
    print("gps_open failed")
    sys.exit(1)
library.gps_stream(data, WATCH_ENABLE | WATCH_JSON, None)
for _ in range(10):
    if not library.gps_waiting(data, 5_000_000):
        break
    status = library.gps_read(data, None, 0)
    if status < 0:
        print(f"gps_read failed: {status}")
        sys.exit(1)
    if ctypes.c_uint64.from_buffer(data).value & SATELLITE_SET:
        print("sky")
        sys.exit(0)
print("no SKY read")
sys.exit(2)
