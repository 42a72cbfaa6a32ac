// The C side of GPSFix's time service: the shared structures whose layout is fixed by
// other programs (ntpd's shared-memory refclock, chrony's SOCK refclock), and the ioctls
// whose request numbers are function-like macros Swift cannot import (RFC 2783 PPS,
// TIOCMIWAIT).
#ifndef GPSFIX_CTIMESERVICE_H
#define GPSFIX_CTIMESERVICE_H

#include <sys/time.h>
#include <time.h>

/// ntpd's `struct shmTime` (refclock_shm.c), the layout ntpd, chrony and ntpshmmon read.
struct gpsfix_shm_time {
    int mode;
    volatile int count;
    time_t clockTimeStampSec;
    int clockTimeStampUSec;
    time_t receiveTimeStampSec;
    int receiveTimeStampUSec;
    int leap;
    int precision;
    int nsamples;
    volatile int valid;
    unsigned clockTimeStampNSec;
    unsigned receiveTimeStampNSec;
    int dummy[8];
};

/// chrony's `struct sock_sample` (refclock_sock.c): chronyd refuses a datagram of any
/// other size.
struct gpsfix_sock_sample {
    struct timeval tv;
    double offset;
    int pulse;
    int leap;
    int _pad;
    int magic;
};

/// Attaches NTP shared-memory unit `unit` (key 0x4E545030 + unit), creating it with
/// `permissions` when it does not exist. NULL, with errno set, when refused. With
/// owner-only `permissions`, a segment that already exists must be owned and have been
/// created by this user or root, and be writable by no one else: otherwise NULL, errno 0,
/// its `*mode`, and in `*owner` the other user (its creator first: whoever made it may
/// change its owner and mode; anyone who may write it could feed the clock that reads it).
struct gpsfix_shm_time *gpsfix_shm_attach(int unit, int permissions, unsigned *mode, unsigned *owner);

/// Detaches a segment attached by gpsfix_shm_attach.
void gpsfix_shm_detach(struct gpsfix_shm_time *segment);

/// Writes one sample with the mode 1 protocol: `valid` cleared and `count` bumped before
/// the values, `count` bumped and `valid` set after, with barriers between, so a reader
/// that sees the same count before and after its read has a consistent sample.
void gpsfix_shm_write(struct gpsfix_shm_time *segment, long long real_sec, long real_nsec,
                      long long clock_sec, long clock_nsec, int leap, int precision);

/// The RFC 2783 capabilities of a /dev/ppsN descriptor (PPS_GETCAP); -1 and errno when
/// it is no PPS device.
int gpsfix_pps_capabilities(int descriptor, int *capabilities);

/// Asks the kernel to capture assert edges as timespecs (PPS_SETPARAMS); -1 and errno
/// when refused (a descriptor opened read-only keeps the device's defaults).
int gpsfix_pps_capture_assert(int descriptor);

/// Waits up to `timeout_seconds` for the next event (PPS_FETCH) and gives the last assert
/// edge and its sequence number; -1 and errno (ETIMEDOUT when none came).
int gpsfix_pps_fetch(int descriptor, int timeout_seconds, unsigned *sequence, long long *sec, long *nsec);

/// A serial port's carrier-detect line (DCD) as the kernel last saw it: whether it is up
/// (TIOCMGET), and how many times it has changed (TIOCGICOUNT's `dcd`) where the driver
/// counts them (`counted`: the UART drivers and the USB serial adapters' do, of the
/// changes they see; a pseudo-terminal's does not).
struct gpsfix_carrier_line {
    int level;
    int counted;
    unsigned changes;
};

/// Reads the carrier-detect line: the count on both sides of the level, again when a
/// change came between, so that level and count describe the same moment. 0, or -1 and
/// errno (EINVAL or ENOTTY: the line has no modem status, as a pseudo-terminal).
int gpsfix_read_carrier_line(int descriptor, struct gpsfix_carrier_line *line);

/// Blocks until the carrier-detect line changes (TIOCMIWAIT) and stamps the wake at once
/// (CLOCK_REALTIME, into sec and nsec), before any other call: 0, or -1 and errno (EINVAL
/// or ENOTTY: the line has no modem-status interrupts, as a pseudo-terminal).
int gpsfix_wait_for_carrier_change(int descriptor, long long *sec, long *nsec);

#endif
