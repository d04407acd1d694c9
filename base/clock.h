/* clock.h - the monotonic clock and the calling thread's CPU clock, in
 * milliseconds.
 *
 * Contract: base_now_ms() reads CLOCK_MONOTONIC and returns milliseconds as a
 * double (sub-millisecond precision).  Only differences between two readings
 * mean anything; the value never goes backwards and is unaffected by changes
 * to the wall clock.  base_thread_cpu_ms() reads CLOCK_THREAD_CPUTIME_ID: the
 * CPU time the calling thread has used, which does not advance while it is
 * descheduled; differences on one thread only.  Both are safe from any thread
 * and from a forked child.  base_sleep_ms() sleeps ms milliseconds, resumed
 * after a signal interrupts it. */
#ifndef PASSFS_BASE_CLOCK_H
#define PASSFS_BASE_CLOCK_H

double base_now_ms(void);
double base_thread_cpu_ms(void);
void base_sleep_ms(double ms);

#endif
