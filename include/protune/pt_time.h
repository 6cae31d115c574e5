/* pt_time.h: monotonic time in milliseconds, and sleeping.
 *
 * Timeouts in libprotune (jobserver tokens, locks, child processes) are
 * measured on CLOCK_MONOTONIC, which wall-clock changes do not move.
 */
#ifndef PROTUNE_PT_TIME_H
#define PROTUNE_PT_TIME_H

/* Milliseconds on the monotonic clock since an arbitrary start. */
long long pt_time_now_ms(void);

/* Sleep `ms` milliseconds (nothing if ms <= 0), resuming after signals. */
void pt_time_sleep_ms(long ms);

#endif
