#define _GNU_SOURCE
#include "CStopSignals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t write_end = -1;

// Async-signal-safe: one write(2), errno kept for the interrupted code. A pipe full of
// numbers not yet read loses this one, which asks what they asked.
static void caught(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    ssize_t written = write(write_end, &byte, 1);
    (void)written;
    errno = saved;
}

int gpsfix_stop_signals_catch(const int *signals, int count) {
    if (write_end != -1) {
        errno = EBUSY;
        return -1;
    }
    int ends[2];
    if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    write_end = ends[1];
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = caught;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    struct sigaction previous[count > 0 ? count : 1];
    for (int index = 0; index < count; index++) {
        if (sigaction(signals[index], &action, &previous[index]) != 0) {
            int failure = errno;
            while (index-- > 0) sigaction(signals[index], &previous[index], NULL);
            close(ends[0]);
            close(ends[1]);
            write_end = -1;
            errno = failure;
            return -1;
        }
    }
    return ends[0];
}
