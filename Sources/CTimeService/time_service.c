#include "CTimeService.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>
#include <linux/pps.h>
#include <linux/serial.h>

#define GPSFIX_NTPD_BASE 0x4E545030
#define GPSFIX_LEAP_NOTINSYNC 3

struct gpsfix_shm_time *gpsfix_shm_attach(int unit, int permissions, unsigned *mode, unsigned *owner) {
    int id = shmget((key_t)(GPSFIX_NTPD_BASE + unit), sizeof(struct gpsfix_shm_time), IPC_CREAT | permissions);
    if (id == -1) return NULL;
    if ((permissions & 077) == 0) {
        struct shmid_ds status;
        if (shmctl(id, IPC_STAT, &status) == -1) return NULL;
        // Its creator too: whoever made it may change its owner and mode at will.
        uid_t self = geteuid();
        int made_by_other = status.shm_perm.cuid != self && status.shm_perm.cuid != 0;
        int owned_by_other = status.shm_perm.uid != self && status.shm_perm.uid != 0;
        if ((status.shm_perm.mode & 022) != 0 || made_by_other || owned_by_other) {
            *mode = status.shm_perm.mode & 0777;
            *owner = made_by_other ? status.shm_perm.cuid : status.shm_perm.uid;
            errno = 0;
            return NULL;
        }
    }
    void *address = shmat(id, NULL, 0);
    if (address == (void *)-1) return NULL;
    struct gpsfix_shm_time *segment = address;
    // As gpsd prepares a segment: not in sync until the first sample is written.
    memset(segment, 0, sizeof(*segment));
    segment->mode = 1;
    segment->leap = GPSFIX_LEAP_NOTINSYNC;
    segment->precision = -20;
    segment->nsamples = 3;
    return segment;
}

void gpsfix_shm_detach(struct gpsfix_shm_time *segment) {
    (void)shmdt(segment);
}

void gpsfix_shm_write(struct gpsfix_shm_time *segment, long long real_sec, long real_nsec,
                      long long clock_sec, long clock_nsec, int leap, int precision) {
    segment->valid = 0;
    segment->count++;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    segment->clockTimeStampSec = (time_t)real_sec;
    segment->clockTimeStampUSec = (int)(real_nsec / 1000);
    segment->clockTimeStampNSec = (unsigned)real_nsec;
    segment->receiveTimeStampSec = (time_t)clock_sec;
    segment->receiveTimeStampUSec = (int)(clock_nsec / 1000);
    segment->receiveTimeStampNSec = (unsigned)clock_nsec;
    segment->leap = leap;
    segment->precision = precision;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    segment->count++;
    segment->valid = 1;
}

int gpsfix_pps_capabilities(int descriptor, int *capabilities) {
    return ioctl(descriptor, PPS_GETCAP, capabilities);
}

int gpsfix_pps_capture_assert(int descriptor) {
    struct pps_kparams parameters;
    if (ioctl(descriptor, PPS_GETPARAMS, &parameters) == -1) return -1;
    parameters.mode |= PPS_CAPTUREASSERT | PPS_TSFMT_TSPEC;
    return ioctl(descriptor, PPS_SETPARAMS, &parameters);
}

int gpsfix_pps_fetch(int descriptor, int timeout_seconds, unsigned *sequence, long long *sec, long *nsec) {
    struct pps_fdata data;
    memset(&data, 0, sizeof(data));
    data.timeout.sec = timeout_seconds;
    data.timeout.nsec = 0;
    data.timeout.flags = 0;
    if (ioctl(descriptor, PPS_FETCH, &data) == -1) return -1;
    *sequence = data.info.assert_sequence;
    *sec = data.info.assert_tu.sec;
    *nsec = data.info.assert_tu.nsec;
    return 0;
}

int gpsfix_read_carrier_line(int descriptor, struct gpsfix_carrier_line *line) {
    struct serial_icounter_struct before, after;
    int counted = ioctl(descriptor, TIOCGICOUNT, &before) == 0;
    for (int attempt = 0;; attempt++) {
        int lines = 0;
        if (ioctl(descriptor, TIOCMGET, &lines) == -1) return -1;
        line->level = (lines & TIOCM_CD) != 0;
        line->counted = counted && ioctl(descriptor, TIOCGICOUNT, &after) == 0;
        if (!line->counted) return 0;
        line->changes = (unsigned)after.dcd;
        /* A line changing faster than it can be read (noise) is taken as last read. */
        if (after.dcd == before.dcd || attempt == 3) return 0;
        before = after;
    }
}

int gpsfix_wait_for_carrier_change(int descriptor, long long *sec, long *nsec) {
    if (ioctl(descriptor, TIOCMIWAIT, TIOCM_CD) == -1) return -1;
    /* Stamped before anything else: on a USB adapter (cp210x, FTDI) reading the line is a
       control transfer of about a millisecond, with its jitter, which would be in every
       pulse's time. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    *sec = now.tv_sec;
    *nsec = now.tv_nsec;
    return 0;
}
