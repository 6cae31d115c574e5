#define _DEFAULT_SOURCE /* flock */
#include "protune/pt_lock.h"
#include "protune/pt_time.h"
#include "protune/pt_strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int lock_path(struct pt_strbuf *path, const char *dir, const char *name,
		     struct pt_error *err)
{
	if (!dir || !*dir || !name || !*name)
		return pt_error_set(err, PT_EINVAL, "lock: empty directory or name");
	if (pt_strbuf_addf(path, "%s/%s", dir, name))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	return 0;
}

static int open_lock_file(const char *path)
{
	int fd;

	/* The creator widens the mode past its umask so that other users can
	 * record their pid too; others open what exists. */
	do
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	while (fd < 0 && errno == EINTR);
	if (fd >= 0) {
		(void)fchmod(fd, 0666);
		return fd;
	}
	if (errno != EEXIST)
		return -1;
	do
		fd = open(path, O_RDWR | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	/* flock needs no write access: lock read-only, just keep no pid. */
	if (fd < 0 && errno == EACCES)
		do
			fd = open(path, O_RDONLY | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
	return fd;
}

static void record_pid(int fd)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());

	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, buf, (size_t)n, 0);
}

/* Wait for flock(fd, mode) until `deadline` (pt_time_now_ms(); -1: no
 * limit), polling with a backoff from 1 to 50 ms when there is one.
 * Returns 0, PT_LOCK_BUSY or PT_EIO naming `path`. */
static int wait_flock(int fd, int mode, long long deadline, const char *path,
		      struct pt_error *err)
{
	long backoff = 1;

	for (;;) {
		long long left;

		if (flock(fd, deadline < 0 ? mode : mode | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return pt_error_set(err, PT_EIO, "%s: flock: %s", path,
					    strerror(errno));
		left = deadline - pt_time_now_ms();
		if (left <= 0)
			return PT_LOCK_BUSY;
		pt_time_sleep_ms(backoff < left ? backoff : (long)left);
		backoff = backoff * 2 > 50 ? 50 : backoff * 2;
	}
}

static int acquire(struct pt_lock *lk, const char *dir, const char *name,
		   int timeout_ms, int mode, struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT, turn_path = PT_STRBUF_INIT;
	long long deadline = timeout_ms < 0 ? -1 : pt_time_now_ms() + timeout_ms;
	int fd = -1, turn = -1, ret;

	if (lk->fd >= 0)
		return pt_error_set(err, PT_EINVAL, "lock: already held");
	ret = lock_path(&path, dir, name, err);
	if (ret)
		goto cleanup;
	if (pt_strbuf_addf(&turn_path, "%s" PT_LOCK_TURN_SUFFIX, path.buf)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto cleanup;
	}
	fd = open_lock_file(path.buf);
	if (fd < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: cannot open lock file: %s",
				   path.buf, strerror(errno));
		goto cleanup;
	}
	turn = open_lock_file(turn_path.buf);
	if (turn < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: cannot open lock file: %s",
				   turn_path.buf, strerror(errno));
		goto cleanup;
	}
	/* The turnstile: an exclusive waiter holds it exclusively while it
	 * waits for the lock, so shared waiters that come after it queue
	 * behind it instead of overtaking it; a shared waiter holds it
	 * shared, which only exclusive waiters feel. Neither keeps it once
	 * it has the lock. */
	ret = wait_flock(turn, mode, deadline, turn_path.buf, err);
	if (!ret)
		ret = wait_flock(fd, mode, deadline, path.buf, err);
	if (ret)
		goto cleanup;
	if (mode == LOCK_EX)
		record_pid(fd);
	lk->fd = fd;
	lk->shared = mode == LOCK_SH;
	fd = -1;
cleanup:
	if (fd >= 0)
		close(fd);
	if (turn >= 0)
		close(turn);
	pt_strbuf_release(&path);
	pt_strbuf_release(&turn_path);
	return ret;
}

int pt_lock_acquire(struct pt_lock *lk, const char *dir, const char *name,
		    int timeout_ms, struct pt_error *err)
{
	return acquire(lk, dir, name, timeout_ms, LOCK_EX, err);
}

int pt_lock_acquire_shared(struct pt_lock *lk, const char *dir,
			   const char *name, int timeout_ms,
			   struct pt_error *err)
{
	return acquire(lk, dir, name, timeout_ms, LOCK_SH, err);
}

void pt_lock_release(struct pt_lock *lk)
{
	if (lk->fd < 0)
		return;
	/* Erase our pid while we still hold the lock, not after. */
	if (!lk->shared)
		(void)!ftruncate(lk->fd, 0);
	lk->shared = 0;
	close(lk->fd);
	lk->fd = -1;
}

int pt_lock_holder(const char *dir, const char *name, pid_t *pid,
		   struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	char buf[32];
	ssize_t n;
	long v = 0;
	int fd = -1, ret, i;

	*pid = 0;
	ret = lock_path(&path, dir, name, err);
	if (ret)
		goto cleanup;
	do
		fd = open(path.buf, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (errno != ENOENT)
			ret = pt_error_set(err, PT_EIO, "%s: %s", path.buf,
					   strerror(errno));
		goto cleanup;
	}
	do
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: read: %s", path.buf,
				   strerror(errno));
		goto cleanup;
	}
	/* A holder may be writing right now: take the leading digits only. */
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9' && v < 100000000; i++)
		v = v * 10 + (buf[i] - '0');
	if (v > 0 && (kill((pid_t)v, 0) == 0 || errno == EPERM))
		*pid = (pid_t)v;
cleanup:
	if (fd >= 0)
		close(fd);
	pt_strbuf_release(&path);
	return ret;
}
