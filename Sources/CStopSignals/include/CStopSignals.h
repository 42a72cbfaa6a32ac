// Stop signals caught by a handler of our own, which writes each one's number to a pipe.
// The handler is in place the moment sigaction returns, so a signal sent at once (a
// service manager stopping what it just started) is read, not lost: a signal ignored
// until a dispatch source is registered for it, as libdispatch needs, is discarded
// meanwhile, and a process that was to stop runs on.
#ifndef GPSFIX_CSTOPSIGNALS_H
#define GPSFIX_CSTOPSIGNALS_H

/// Catches the `count` signals of `signals` (restarting the calls they interrupt where
/// the system can) and returns the read end of a pipe, non-blocking and closed on exec,
/// that gets one byte, the signal's number, for each one caught; -1 with errno set when
/// refused, the signals' handling then unchanged (EBUSY: called before in this process).
int gpsfix_stop_signals_catch(const int *signals, int count);

#endif
