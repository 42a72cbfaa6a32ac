#include <gps.h>

// libgps changes its file name with each change of struct gps_data_t's layout: Debian 12
// has gpsd 3.22's libgps.so.28 (API 11), Debian 13 gpsd 3.25's libgps.so.30 (API 14).
// The daemon uses gps_open, gps_stream and gps_close, whose signatures and WATCH_ flags
// are the same in both, and reads one member, gps_fd, which follows the same two members
// (set, online) in both, so it is at the same place. What differs is the struct's size
// (24,496 and 29,224 bytes on x86-64), so the daemon lends libgps a block larger than
// either: one binary reads gpsd through whichever of the two it finds.
#define CLIBGPS_DATA_BYTES 65536
_Static_assert(sizeof(struct gps_data_t) <= CLIBGPS_DATA_BYTES, "a gps_data_t larger than the block lent to libgps");
_Static_assert(GPSD_API_MAJOR_VERSION >= 9 && GPSD_API_MAJOR_VERSION <= 14,
               "a gps.h whose gps_data_t may not begin as API 9 to 14's do");
