#include <gps.h>
#include <stddef.h>

// libgps changes its file name with each change of struct gps_data_t's layout: Debian 12
// has gpsd 3.22's libgps.so.28 (API 11), Debian 13 gpsd 3.25's libgps.so.30 (API 14).
// The daemon calls gps_open, gps_stream, gps_close and gps_errstr, which take the same
// arguments (and WATCH_ flags) in both, and reads one member, gps_fd, which follows `set`
// (a uint64_t) and `online` (a struct timespec) in both. On a 64-bit system these are
// alike in both, so gps_fd is at the same place; what differs is the struct's size
// (24,496 and 29,224 bytes on x86-64), so the daemon lends libgps a block larger than
// either, and one binary reads gpsd through whichever of the two it finds. On a 32-bit
// system Debian 13's timespec is larger (64-bit time), so there only this header's own
// library will do.
#define CLIBGPS_DATA_BYTES 65536
_Static_assert(sizeof(struct gps_data_t) <= CLIBGPS_DATA_BYTES, "a gps_data_t larger than the block lent to libgps");

#if __SIZEOF_POINTER__ == 8
_Static_assert(offsetof(struct gps_data_t, gps_fd) == 24, "gps_fd not where API 11 and API 14 put it");
#endif

// The file name of the library this gps.h belongs to.
#if GPSD_API_MAJOR_VERSION == 11
#define CLIBGPS_SONAME "libgps.so.28"
#elif GPSD_API_MAJOR_VERSION == 14
#define CLIBGPS_SONAME "libgps.so.30"
#else
#define CLIBGPS_SONAME "libgps.so"
#endif
