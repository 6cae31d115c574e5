/* pipe2, posix_spawn_file_actions_addchdir_np (glibc 2.29+), syscall() */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "protune/pt_spawn.h"
#include "protune/pt_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { CHILD_NEW = 0, CHILD_RUNNING, CHILD_REAPED, CHILD_TIMEDOUT };

#define IO_CHUNK 65536

void pt_child_init(struct pt_child *c)
{
	static const struct pt_child blank = PT_CHILD_INIT;

	*c = blank;
}

static void close_fd(int *fd)
{
	/* On Linux the descriptor is gone even when close() reports EINTR,
	 * so it is never retried. */
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Milliseconds until the child's time limit, rounded up; -1 without a
 * limit, 0 once it has passed. */
static int remaining_ms(const struct pt_child *c)
{
	int64_t deadline, left;

	if (c->timeout_ms <= 0)
		return -1;
	deadline = (int64_t)c->started.tv_sec * 1000000000 + c->started.tv_nsec +
		(int64_t)c->timeout_ms * 1000000;
	left = deadline - now_ns();
	if (left <= 0)
		return 0;
	left = (left + 999999) / 1000000;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* The parent's environ with c->env applied, as an array of borrowed
 * strings in *out, malloc'd if and only if c->env is not empty. */
static int build_env(const struct pt_child *c, char ***out,
		     struct pt_error *err)
{
	char *const *base = environ;
	size_t n = 0, i, j, k;
	char **envp;

	if (!base) {
		static char *none[1];
		base = none;
	}
	if (!c->env.nr) {
		*out = (char **)base;
		return 0;
	}
	while (base[n])
		n++;
	if (n > SIZE_MAX / sizeof(char *) - c->env.nr - 1)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	envp = malloc((n + c->env.nr + 1) * sizeof(*envp));
	if (!envp)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	memcpy(envp, base, n * sizeof(*envp));
	for (i = 0; i < c->env.nr; i++) {
		char *e = c->env.v[i];
		size_t len = strcspn(e, "=");

		if (!len) {
			free(envp);
			return pt_error_set(err, PT_EINVAL,
					    "bad environment entry '%s'", e);
		}
		for (j = k = 0; j < n; j++)
			if (strncmp(envp[j], e, len) || envp[j][len] != '=')
				envp[k++] = envp[j];
		n = k;
		if (e[len] == '=')
			envp[n++] = e;
	}
	envp[n] = NULL;
	*out = envp;
	return 0;
}

/* A name from a relative PATH entry would be looked up again relative to
 * c->dir after the chdir; anchor it to our own directory first. */
static int anchor_to_cwd(struct pt_strbuf *prog, struct pt_error *err)
{
	struct pt_strbuf abs = PT_STRBUF_INIT;
	size_t size = 256;
	int ret;

	for (;;) {
		if (pt_strbuf_grow(&abs, size)) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			goto cleanup;
		}
		if (getcwd(abs.buf, abs.alloc))
			break;
		if (errno != ERANGE) {
			ret = pt_error_set(err, PT_ESPAWN,
					   "cannot get the current directory: %s",
					   strerror(errno));
			goto cleanup;
		}
		size *= 2;
	}
	abs.len = strlen(abs.buf);
	if (pt_strbuf_addf(&abs, "/%s", prog->buf)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto cleanup;
	}
	pt_strbuf_release(prog);
	*prog = abs;
	return 0;
cleanup:
	pt_strbuf_release(&abs);
	return ret;
}

/* Descriptors 0-2 are about to be replaced in the child; a source there
 * could be overwritten before it is copied, so move it above them. */
static int above_stdio(int *fd, int *owned)
{
	int nfd;

	if (*fd > 2)
		return 0;
	nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -1;
	if (*owned >= 0)
		close(*owned);
	*owned = nfd;
	*fd = nfd;
	return 0;
}

/* posix_spawn reports a failed chdir or exec only where it can (glibc
 * 2.24+, musl), not e.g. under valgrind, which turns its clone into a fork;
 * checking first gives the same errors everywhere. The mapping of
 * posix_spawn's own error stays for what changes in between. */
static int check_dir_and_program(const struct pt_child *c, const char *prog,
				 struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	struct stat st;
	int ret = 0;

	if (c->dir) {
		int e = 0;

		if (stat(c->dir, &st) < 0)
			e = errno;
		else if (!S_ISDIR(st.st_mode))
			e = ENOTDIR;
		else if (access(c->dir, X_OK) < 0)
			e = errno;
		if (e)
			return pt_error_set(err, PT_ESPAWN,
					    "%s: cannot change to directory '%s': %s",
					    c->args.v[0], c->dir, strerror(e));
	}
	if (c->dir && prog[0] != '/') {
		if (pt_strbuf_addf(&path, "%s/%s", c->dir, prog))
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		prog = path.buf;
	}
	if (stat(prog, &st) < 0)
		ret = pt_error_set(err, errno == ENOENT || errno == ENOTDIR ?
				   PT_ENOTFOUND : PT_ESPAWN, "%s: cannot run %s: %s",
				   c->args.v[0], prog, strerror(errno));
	else if (S_ISDIR(st.st_mode))
		ret = pt_error_set(err, PT_ESPAWN, "%s: cannot run %s: %s",
				   c->args.v[0], prog, strerror(EISDIR));
	else if (access(prog, X_OK) < 0)
		ret = pt_error_set(err, PT_ESPAWN, "%s: cannot run %s: %s",
				   c->args.v[0], prog, strerror(errno));
	pt_strbuf_release(&path);
	return ret;
}

int pt_child_start(struct pt_child *c, struct pt_error *err)
{
	struct pt_io *io[3] = { &c->in, &c->out, &c->err };
	struct pt_strbuf prog = PT_STRBUF_INIT;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int have_fa = 0, have_attr = 0;
	int child_end[3] = { -1, -1, -1 };
	char **envp = NULL;
	const char *name;
	sigset_t set;
	pid_t pid;
	int ret, e = 0, i;

	if (c->state != CHILD_NEW)
		return pt_error_set(err, PT_EINVAL, "child process already started");
	if (!c->args.nr || !*c->args.v[0])
		return pt_error_set(err, PT_EINVAL, "no program to run");
	name = c->args.v[0];
	for (i = 0; i < 3; i++) {
		if (io[i]->mode == PT_IO_PIPE)
			io[i]->fd = -1;
		else if (io[i]->mode == PT_IO_FD && io[i]->fd < 0)
			return pt_error_set(err, PT_EINVAL,
					    "%s: bad descriptor %d for stream %d",
					    name, io[i]->fd, i);
		else if (io[i]->mode != PT_IO_INHERIT && io[i]->mode != PT_IO_NULL &&
			 io[i]->mode != PT_IO_FD)
			return pt_error_set(err, PT_EINVAL,
					    "%s: bad mode for stream %d", name, i);
	}

	if (strchr(name, '/'))
		ret = pt_strbuf_addstr(&prog, name) ?
			pt_error_set(err, PT_ENOMEM, "out of memory") : 0;
	else
		ret = pt_path_find_program(name, getenv("PATH"), NULL, &prog, err);
	if (!ret && c->dir && !strchr(name, '/') && prog.buf[0] != '/')
		ret = anchor_to_cwd(&prog, err);
	if (!ret)
		ret = check_dir_and_program(c, prog.buf, err);
	if (!ret)
		ret = build_env(c, &envp, err);
	if (ret)
		goto cleanup;

	if ((e = posix_spawn_file_actions_init(&fa)) != 0)
		goto cleanup;
	have_fa = 1;
	for (i = 0; i < 3; i++) {
		int src = -1, p[2];

		switch (io[i]->mode) {
		case PT_IO_INHERIT:
			continue;
		case PT_IO_NULL:
			e = posix_spawn_file_actions_addopen(&fa, i, "/dev/null",
							     i ? O_WRONLY : O_RDONLY, 0);
			if (e)
				goto cleanup;
			continue;
		case PT_IO_PIPE:
			if (pipe2(p, O_CLOEXEC) < 0) {
				ret = pt_error_set(err, PT_EIO, "%s: cannot create a pipe: %s",
						   name, strerror(errno));
				goto cleanup;
			}
			io[i]->fd = i ? p[0] : p[1];
			child_end[i] = src = i ? p[1] : p[0];
			break;
		case PT_IO_FD:
			src = io[i]->fd;
			break;
		}
		if (above_stdio(&src, &child_end[i]) < 0) {
			ret = pt_error_set(err, PT_EIO, "%s: cannot duplicate descriptor: %s",
					   name, strerror(errno));
			goto cleanup;
		}
		if ((e = posix_spawn_file_actions_adddup2(&fa, src, i)) != 0)
			goto cleanup;
	}
	if (c->dir && (e = posix_spawn_file_actions_addchdir_np(&fa, c->dir)) != 0)
		goto cleanup;

	if ((e = posix_spawnattr_init(&attr)) != 0)
		goto cleanup;
	have_attr = 1;
	sigemptyset(&set);
	if ((e = posix_spawnattr_setsigmask(&attr, &set)) != 0)
		goto cleanup;
	sigfillset(&set);
	sigdelset(&set, SIGKILL);
	sigdelset(&set, SIGSTOP);
	if ((e = posix_spawnattr_setsigdefault(&attr, &set)) != 0 ||
	    (e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
					  POSIX_SPAWN_SETSIGDEF)) != 0)
		goto cleanup;

	clock_gettime(CLOCK_MONOTONIC, &c->started);
	e = posix_spawn(&pid, prog.buf, &fa, &attr, c->args.v, envp);
	if (e) {
		int spawn_errno = e;

		e = 0;
		if (c->dir && access(c->dir, X_OK) != 0)
			ret = pt_error_set(err, PT_ESPAWN,
					   "%s: cannot change to directory '%s': %s",
					   name, c->dir, strerror(errno));
		else
			ret = pt_error_set(err, spawn_errno == ENOENT ?
					   PT_ENOTFOUND : PT_ESPAWN,
					   "%s: cannot run %s: %s", name, prog.buf,
					   strerror(spawn_errno));
		goto cleanup;
	}
	c->pid = pid;
	c->state = CHILD_RUNNING;
	ret = 0;
cleanup:
	if (e) /* a posix_spawn_file_actions_* or posix_spawnattr_* call */
		ret = pt_error_set(err, e == ENOMEM ? PT_ENOMEM : PT_ESPAWN,
				   "%s: cannot prepare the child: %s", name,
				   strerror(e));
	for (i = 0; i < 3; i++) {
		close_fd(&child_end[i]);
		if (ret && io[i]->mode == PT_IO_PIPE)
			close_fd(&io[i]->fd);
	}
	if (have_attr)
		posix_spawnattr_destroy(&attr);
	if (have_fa)
		posix_spawn_file_actions_destroy(&fa);
	if (c->env.nr)
		free(envp);
	pt_strbuf_release(&prog);
	return ret;
}

/* Returns 1 once reaped, 0 if still running (with WNOHANG), or an error. */
static int reap(struct pt_child *c, int options, struct pt_error *err)
{
	pid_t r;
	int ws;

	do
		r = waitpid(c->pid, &ws, options);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return pt_error_set(err, PT_ESPAWN, "%s: waitpid %ld: %s",
				    c->args.v[0], (long)c->pid, strerror(errno));
	if (r == 0)
		return 0;
	if (WIFEXITED(ws))
		c->status = WEXITSTATUS(ws);
	else if (WIFSIGNALED(ws))
		c->status = 128 + WTERMSIG(ws);
	else
		c->status = 255;
	c->state = CHILD_REAPED;
	return 1;
}

static int kill_on_timeout(struct pt_child *c, struct pt_error *err)
{
	int ret;

	kill(c->pid, SIGKILL);
	ret = reap(c, 0, err);
	if (ret < 0)
		return ret;
	c->state = CHILD_TIMEDOUT;
	return 0;
}

static int timed_out(const struct pt_child *c, struct pt_error *err)
{
	return pt_error_set(err, PT_ETIMEDOUT, "%s: killed after %d ms",
			    c->args.v[0], c->timeout_ms);
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* A pidfd becomes readable when the child exits; it is close-on-exec
	 * from birth. Absent before Linux 5.3 or under some seccomp filters. */
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* Wait for the child until its time limit, without SIGCHLD (which would be
 * process-wide state): poll a pidfd, or else poll waitpid with backoff. */
static int wait_with_limit(struct pt_child *c, struct pt_error *err)
{
	int pidfd = open_pidfd(c->pid);
	int backoff_ms = 1, ret, left;

	for (;;) {
		ret = reap(c, WNOHANG, err);
		if (ret)
			break;
		left = remaining_ms(c);
		if (left == 0) {
			ret = kill_on_timeout(c, err);
			break;
		}
		if (pidfd >= 0) {
			struct pollfd pfd = { pidfd, POLLIN, 0 };

			if (poll(&pfd, 1, left) < 0 && errno != EINTR) {
				close_fd(&pidfd);
				continue;
			}
		} else {
			struct timespec ts;
			int ms = backoff_ms < left ? backoff_ms : left;

			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (long)(ms % 1000) * 1000000;
			nanosleep(&ts, NULL);
			if (backoff_ms < 20)
				backoff_ms *= 2;
		}
	}
	close_fd(&pidfd);
	return ret < 0 ? ret : 0;
}

int pt_child_wait(struct pt_child *c, int *status, struct pt_error *err)
{
	int ret = 0;

	if (c->state == CHILD_NEW)
		return pt_error_set(err, PT_EINVAL, "child process not started");
	if (c->state == CHILD_RUNNING) {
		if (c->timeout_ms > 0)
			ret = wait_with_limit(c, err);
		else
			ret = reap(c, 0, err);
		if (ret < 0)
			return ret;
	}
	if (status)
		*status = c->status;
	return c->state == CHILD_TIMEDOUT ? timed_out(c, err) : 0;
}

int pt_child_run(struct pt_child *c, int *status, struct pt_error *err)
{
	int ret;

	if (c->in.mode == PT_IO_PIPE || c->out.mode == PT_IO_PIPE ||
	    c->err.mode == PT_IO_PIPE)
		return pt_error_set(err, PT_EINVAL,
				    "pt_child_run cannot serve pipes; use pt_child_capture");
	ret = pt_child_start(c, err);
	if (ret)
		return ret;
	return pt_child_wait(c, status, err);
}

int pt_child_kill(struct pt_child *c, int sig, struct pt_error *err)
{
	if (c->state != CHILD_RUNNING)
		return pt_error_set(err, PT_EINVAL, "child process not running");
	if (kill(c->pid, sig) < 0)
		return pt_error_set(err, errno == EINVAL ? PT_EINVAL : PT_ESPAWN,
				    "%s: cannot send signal %d: %s", c->args.v[0],
				    sig, strerror(errno));
	return 0;
}

void pt_child_release(struct pt_child *c)
{
	if (c->state != CHILD_NEW) {
		if (c->in.mode == PT_IO_PIPE)
			close_fd(&c->in.fd);
		if (c->out.mode == PT_IO_PIPE)
			close_fd(&c->out.fd);
		if (c->err.mode == PT_IO_PIPE)
			close_fd(&c->err.fd);
	}
	pt_strvec_release(&c->args);
	pt_strvec_release(&c->env);
	pt_child_init(c);
}

/* One read() into `sb`: bytes read, 0 at end of file, -1 with errno. */
static ssize_t read_some(int fd, struct pt_strbuf *sb)
{
	ssize_t n;

	if (pt_strbuf_grow(sb, IO_CHUNK)) {
		errno = ENOMEM;
		return -1;
	}
	do
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
	}
	return n;
}

int pt_spawn_read_fd(int fd, struct pt_strbuf *sb, struct pt_error *err)
{
	ssize_t n;

	while ((n = read_some(fd, sb)) != 0) {
		if (n > 0)
			continue;
		if (errno == ENOMEM)
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pfd = { fd, POLLIN, 0 };

			poll(&pfd, 1, -1);
			continue;
		}
		return pt_error_set(err, PT_EIO, "read from descriptor %d: %s",
				    fd, strerror(errno));
	}
	return 0;
}

/* write() with SIGPIPE held off for this thread only: the disposition is
 * process-wide and other threads may rely on it. A SIGPIPE raised by this
 * write is consumed unless one was already pending. */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	struct timespec zero = { 0, 0 };
	int was_pending, saved;
	ssize_t n;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	n = write(fd, buf, len);
	if (n < 0 && errno == EPIPE && !was_pending) {
		saved = errno;
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
		errno = saved;
	}
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

int pt_child_capture(struct pt_child *c, const void *in, size_t in_len,
		     struct pt_strbuf *out, struct pt_strbuf *errout,
		     int *status, struct pt_error *err)
{
	struct pt_strbuf *bufs[3] = { NULL, out, errout };
	int *fds[3] = { &c->in.fd, &c->out.fd, &c->err.fd };
	const char *src = in;
	size_t off = 0;
	int ret = 0, expired = 0, i, flags;

	if (c->state != CHILD_NEW)
		return pt_error_set(err, PT_EINVAL, "child process already started");
	if ((!in && c->in.mode == PT_IO_PIPE) ||
	    (!out && c->out.mode == PT_IO_PIPE) ||
	    (!errout && c->err.mode == PT_IO_PIPE))
		return pt_error_set(err, PT_EINVAL,
				    "pt_child_capture cannot serve a pipe without a buffer");
	if (in)
		c->in.mode = PT_IO_PIPE;
	if (out)
		c->out.mode = PT_IO_PIPE;
	if (errout)
		c->err.mode = PT_IO_PIPE;
	ret = pt_child_start(c, err);
	if (ret)
		return ret;

	if (in) {
		flags = fcntl(c->in.fd, F_GETFL);
		if (flags < 0 || fcntl(c->in.fd, F_SETFL, flags | O_NONBLOCK) < 0) {
			ret = pt_error_set(err, PT_EIO, "%s: fcntl: %s",
					   c->args.v[0], strerror(errno));
			goto cleanup;
		}
		if (!in_len)
			close_fd(&c->in.fd);
	}

	for (;;) {
		struct pollfd pfd[3];
		int which[3], nfds = 0, left, n;

		for (i = 0; i < 3; i++) {
			if (*fds[i] < 0 || (i == 0 && !in) || (i > 0 && !bufs[i]))
				continue;
			pfd[nfds].fd = *fds[i];
			pfd[nfds].events = i ? POLLIN : POLLOUT;
			pfd[nfds].revents = 0;
			which[nfds++] = i;
		}
		if (!nfds)
			break;
		left = remaining_ms(c);
		if (left == 0) {
			expired = 1;
			break;
		}
		n = poll(pfd, (nfds_t)nfds, left);
		if (n < 0 && errno != EINTR) {
			ret = pt_error_set(err, PT_EIO, "%s: poll: %s",
					   c->args.v[0], strerror(errno));
			goto cleanup;
		}
		for (i = 0; i < nfds && n > 0; i++) {
			int k = which[i];
			ssize_t got;

			if (!pfd[i].revents)
				continue;
			if (pfd[i].revents & POLLNVAL) {
				ret = pt_error_set(err, PT_EIO, "%s: bad pipe descriptor",
						   c->args.v[0]);
				goto cleanup;
			}
			if (k == 0) {
				size_t want = in_len - off;

				got = write_nosigpipe(*fds[0], src + off,
						      want < IO_CHUNK ? want : IO_CHUNK);
				if (got > 0)
					off += (size_t)got;
				else if (got < 0 && errno == EPIPE)
					off = in_len; /* the child stopped reading */
				else if (got < 0 && errno != EINTR && errno != EAGAIN &&
					 errno != EWOULDBLOCK) {
					ret = pt_error_set(err, PT_EIO, "%s: write to stdin: %s",
							   c->args.v[0], strerror(errno));
					goto cleanup;
				}
				if (off == in_len)
					close_fd(fds[0]);
				continue;
			}
			got = read_some(*fds[k], bufs[k]);
			if (got == 0)
				close_fd(fds[k]);
			else if (got < 0 && errno == ENOMEM) {
				ret = pt_error_set(err, PT_ENOMEM, "out of memory");
				goto cleanup;
			} else if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
				ret = pt_error_set(err, PT_EIO, "%s: read from %s: %s",
						   c->args.v[0], k == 1 ? "stdout" : "stderr",
						   strerror(errno));
				goto cleanup;
			}
		}
	}

cleanup:
	for (i = 0; i < 3; i++)
		if ((i == 0 && in) || (i > 0 && bufs[i]))
			close_fd(fds[i]);
	if (ret || expired) {
		int r = kill_on_timeout(c, err);

		if (!ret && r)
			ret = r;
		if (ret) {
			if (c->state == CHILD_TIMEDOUT)
				c->state = CHILD_REAPED; /* the failure is ours */
			if (status)
				*status = c->status;
			return ret;
		}
	}
	return pt_child_wait(c, status, err);
}
