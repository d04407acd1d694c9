/* clock.h - the monotonic clock in milliseconds.
 *
 * Contract: base_now_ms() reads CLOCK_MONOTONIC and returns milliseconds as a
 * double (sub-millisecond precision).  Only differences between two readings
 * mean anything; the value never goes backwards and is unaffected by changes
 * to the wall clock.  Safe from any thread and from a forked child. */
#ifndef PASSFS_BASE_CLOCK_H
#define PASSFS_BASE_CLOCK_H

double base_now_ms(void);

#endif
