#include <gps.h>

// The file name of the libgps this gps.h belongs to: the daemon loads it when a gpsd://
// device is first opened, not at start (it brings D-Bus and systemd's libraries with it).
// Each gps.h describes one layout of gps_data_t, so only its own library will do.
#if GPSD_API_MAJOR_VERSION == 11
#define CLIBGPS_SONAME "libgps.so.28"
#elif GPSD_API_MAJOR_VERSION == 14
#define CLIBGPS_SONAME "libgps.so.30"
#else
#define CLIBGPS_SONAME "libgps.so"
#endif
