#ifndef CMOSQUITTO_H
#define CMOSQUITTO_H

#include <mosquitto.h>

/// Loads libmosquitto (libmosquitto.so.1) the first time MQTT is used, rather than when
/// the daemon starts: with it come OpenSSL and its dependencies, megabytes of resident
/// memory a daemon without MQTT would carry for nothing. The mosquitto_* functions the
/// daemon calls are defined here, each calling the library's own.
///
/// Returns NULL once the library is loaded (at the first call; later calls return at
/// once), or why it cannot be (dlerror's text, which names the missing file or symbol).
const char *cmosquitto_load(void);

#endif
