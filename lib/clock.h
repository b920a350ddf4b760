/*  lib/clock.h - a monotonic clock in nanoseconds.  */
#ifndef WEIR_CLOCK_H_INCLUDED
#define WEIR_CLOCK_H_INCLUDED

#include <stdint.h>
#include <time.h>

static inline uint64_t weir__now_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#endif
