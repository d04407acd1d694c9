/* clock.c - see clock.h. */
#include "clock.h"

#include <errno.h>
#include <time.h>

static double read_ms(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double base_now_ms(void)
{
	return read_ms(CLOCK_MONOTONIC);
}

double base_thread_cpu_ms(void)
{
	return read_ms(CLOCK_THREAD_CPUTIME_ID);
}

void base_sleep_ms(double ms)
{
	if (!(ms > 0))
		return;
	struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
