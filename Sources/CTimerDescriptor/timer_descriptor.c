#include "CTimerDescriptor.h"

#include <sys/timerfd.h>
#include <time.h>

int gpsfix_timer_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int gpsfix_timer_set(int descriptor, int64_t nanoseconds) {
    if (nanoseconds < 0) nanoseconds = 0;
    struct itimerspec setting = {
        .it_interval = {0, 0},
        .it_value = {.tv_sec = nanoseconds / 1000000000, .tv_nsec = nanoseconds % 1000000000},
    };
    return timerfd_settime(descriptor, 0, &setting, NULL);
}
