#ifndef UNLEASHED_CLINUX_SHIM_H
#define UNLEASHED_CLINUX_SHIM_H

/* Linux calls that Swift's Glibc module leaves out: the eventfd that wakes a thread, and ppoll,
   whose timeout is in nanoseconds (poll's is in milliseconds, too coarse for a run's deadlines).
   ppoll is a GNU extension that <poll.h> declares only under _GNU_SOURCE, which a module cannot
   set for the system's headers; it is declared here as glibc defines it. Also the kernel's clock
   discipline (adjtimex), whose estimated error a host of a rig reports with its fire times. */
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/timex.h>
#include <time.h>

extern int ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask);

#endif
