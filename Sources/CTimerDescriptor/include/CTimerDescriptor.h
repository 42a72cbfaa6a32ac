// A Linux timer descriptor (timerfd(2)), which Swift's Glibc module does not declare:
// the timer of a device's silence watch, which the event loop reads like any descriptor.
#ifndef GPSFIX_CTIMERDESCRIPTOR_H
#define GPSFIX_CTIMERDESCRIPTOR_H

#include <stdint.h>

/// A new one-shot timer on the monotonic clock, disarmed, non-blocking and closed on
/// exec; -1 with errno set when refused.
int gpsfix_timer_create(void);

/// Arms `descriptor` to expire `nanoseconds` from now, or disarms it (0), in place of any
/// earlier setting and discarding an expiry not yet read; 0, or -1 with errno set.
int gpsfix_timer_set(int descriptor, int64_t nanoseconds);

#endif
