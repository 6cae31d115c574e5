/* pt_lock.h: a machine-wide exclusive lock, so that two benchmark runs
 * never measure at the same time.
 *
 * The lock is flock(2) on the file DIR/NAME, which is created (mode 0666,
 * so other users can share it) when missing and never removed. Processes
 * that use the same file exclude each other, whoever they are. The kernel
 * drops the lock when the holder's last fd on it is closed, which includes
 * the holder's death by any signal: a lock is never stale. Use a local
 * filesystem: flock on NFS is emulated and may behave differently.
 *
 * Waiters pass a turnstile first, a second flock(2) on DIR/NAME.turn
 * (created the same way): an exclusive waiter holds it exclusively until
 * it has the lock, so that shared holders arriving after it wait behind
 * it instead of keeping it out for ever (flock(2) alone gives no
 * preference). A process that holds the lock shared must therefore not
 * wait for it again, shared or not, before releasing it: an exclusive
 * waiter in between would wait for the first hold while the second waits
 * for it.
 *
 * The holder writes its pid, in decimal and a newline, into the file, for
 * diagnostics only (pt_lock_holder()); the pid is erased on release.
 *
 * The lock belongs to the open file description: it is not recursive (a
 * second pt_lock_acquire() in the same process waits for the first one,
 * possibly forever), the fd is close-on-exec (exec'd children, such as the
 * benchmark itself, do not hold it), but a child that forks without exec
 * shares it and keeps it held after the parent dies. A struct pt_lock is
 * used by one thread at a time.
 */
#ifndef PROTUNE_PT_LOCK_H
#define PROTUNE_PT_LOCK_H

#include <sys/types.h>

#include "protune/pt_error.h"

struct pt_lock {
	int fd;     /* >= 0 while held */
	int shared; /* held by pt_lock_acquire_shared() */
};

#define PT_LOCK_INIT { -1, 0 }

/* The turnstile's file is the lock's path with this appended. */
#define PT_LOCK_TURN_SUFFIX ".turn"

/* Returned by pt_lock_acquire() when another process held the lock for
 * the whole wait. */
#define PT_LOCK_BUSY 1

/* Wait for the lock DIR/NAME at most `timeout_ms` milliseconds: 0 tries
 * once and returns at once, a negative value waits as long as it takes.
 * Signals do not cut the wait short. A timed wait polls with a backoff
 * from 1 to 50 ms, so the lock may go to another waiter first and the
 * wait may end up to 50 ms after the lock is freed.
 *
 * Returns 0 with the lock held (lk->fd >= 0), PT_LOCK_BUSY, PT_EINVAL (lk
 * already holds a lock, empty dir or name), PT_EIO (the file cannot be
 * opened or locked; the message names it), PT_ENOMEM. The directory must
 * exist. */
int pt_lock_acquire(struct pt_lock *lk, const char *dir, const char *name,
		    int timeout_ms, struct pt_error *err);

/* The same, shared: any number of shared holders at once, none while an
 * exclusive holder has it (so work that must not overlap a benchmark run,
 * such as a compile, takes it shared, and the run exclusive). Shared
 * holders record no pid. An exclusive waiter goes first (the turnstile,
 * above): shared waiters that arrive while it waits get the lock after
 * it. */
int pt_lock_acquire_shared(struct pt_lock *lk, const char *dir,
			   const char *name, int timeout_ms,
			   struct pt_error *err);
/* Erase the pid (exclusive holders) and drop the lock; lk becomes PT_LOCK_INIT. Does nothing
 * on a lock that is not held. */
void pt_lock_release(struct pt_lock *lk);

/* The pid recorded in DIR/NAME, into *pid: 0 when the file is missing or
 * empty, or the recorded process no longer exists (it was killed while
 * holding the lock, so the lock is free). Diagnostics only: the answer
 * can be stale by the time it is read, and pids are reused. Returns 0,
 * PT_EIO or PT_ENOMEM. */
int pt_lock_holder(const char *dir, const char *name, pid_t *pid,
		   struct pt_error *err);

#endif
