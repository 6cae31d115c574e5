/* pt_spawn.h: running child processes (posix_spawn, never a shell).
 *
 * A struct pt_child describes one child and, once started, tracks it:
 *
 *     struct pt_child c = PT_CHILD_INIT;
 *     int status;
 *
 *     pt_strvec_pushl(&c.args, "cc", "-c", "x.c", NULL);
 *     pt_strvec_push(&c.env, "LC_ALL=C");
 *     c.err.mode = PT_IO_NULL;
 *     if (pt_child_run(&c, &status, &err) == 0 && status == 0)
 *         ...;
 *     pt_child_release(&c);
 *
 * The caller owns the struct (stack or heap; heap ones go through
 * pt_child_init()) and everything in it; pt_child_release() frees the
 * vectors and closes the pipe ends still held. A struct runs one child: to
 * run another, release it and start again from PT_CHILD_INIT.
 *
 * args.v[0] names the program. A name without '/' is looked up in the
 * parent's PATH (pt_path_find_program(); a PATH set through `env` is the
 * child's, not the one searched); a name with '/' is used as it is, relative
 * to `dir` when that is set.
 *
 * The child starts with an empty signal mask and every signal at its default
 * action, whatever the calling thread blocks or the process ignores
 * (POSIX_SPAWN_SETSIGMASK, POSIX_SPAWN_SETSIGDEF; see ccache issue #1580).
 * Every descriptor this module opens is close-on-exec, so nothing of ours
 * leaks into this child or into children started later by any thread;
 * descriptors the caller opened without FD_CLOEXEC are inherited as usual.
 *
 * Threads: a struct must not be used by two threads at once; distinct
 * structs may be used in parallel. pt_child_start reads `environ`, so it
 * must not race with setenv()/putenv() in another thread. Waiting uses
 * waitpid() on this child's pid only (never -1), so other children of the
 * process are left for their owners; but a SIGCHLD disposition of SIG_IGN
 * or SA_NOCLDWAIT makes the kernel reap children itself and breaks waiting.
 *
 * Errors carry a message in the optional struct pt_error (see pt_error.h).
 */
#ifndef PROTUNE_PT_SPAWN_H
#define PROTUNE_PT_SPAWN_H

#include <sys/types.h>
#include <time.h>

#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"

/* What one of the child's standard streams is connected to. */
enum pt_io_mode {
	PT_IO_INHERIT = 0, /* the parent's own descriptor 0, 1 or 2 */
	PT_IO_NULL,        /* /dev/null */
	PT_IO_PIPE,        /* a new pipe; pt_child_start puts the parent's end
			    * (close-on-exec; write end for stdin, read end for
			    * stdout and stderr) in `fd` */
	PT_IO_FD           /* the caller's descriptor `fd`, which stays open and
			    * the caller's (the child gets a duplicate) */
};

struct pt_io {
	enum pt_io_mode mode;
	int fd;  /* PT_IO_FD: input; PT_IO_PIPE: output, -1 when not open */
};

struct pt_child {
	struct pt_strvec args;  /* argv; args.v[0] is the program */
	struct pt_strvec env;   /* "NAME=value" sets, "NAME" unsets, applied in
				 * order over the parent's environ */
	const char *dir;        /* working directory, or NULL for the parent's;
				 * borrowed, read only by pt_child_start */
	struct pt_io in, out, err;
	int timeout_ms;         /* > 0: the child may run this long, counted
				 * from pt_child_start (see pt_child_wait) */

	/* Set by this module; read-only for callers. */
	pid_t pid;              /* > 0 once started (kept after reaping) */
	int state;              /* private */
	int status;             /* private: the status once reaped */
	struct timespec started;/* private */
};

#define PT_CHILD_INIT {                                                   \
	.args = PT_STRVEC_INIT, .env = PT_STRVEC_INIT, .dir = NULL,          \
	.in = { PT_IO_INHERIT, -1 }, .out = { PT_IO_INHERIT, -1 },           \
	.err = { PT_IO_INHERIT, -1 }, .timeout_ms = 0, .pid = -1,            \
	.state = 0, .status = 0 }

/* Same as assigning PT_CHILD_INIT. */
void pt_child_init(struct pt_child *c);

/* Start the child. On success c->pid is set and, for each PT_IO_PIPE
 * stream, its `fd` holds the parent's end of the pipe: the caller reads or
 * writes it and may close it early (then set `fd` to -1), otherwise
 * pt_child_release() closes it. A parent that writes to the child's stdin
 * should be ready for EPIPE/SIGPIPE if the child exits without reading;
 * pt_child_capture() handles both for you.
 * Errors: PT_EINVAL (no args, malformed env entry, started twice, bad
 * mode), PT_ENOTFOUND (the program does not exist; the message names it),
 * PT_ESPAWN (posix_spawn or the working directory failed; message with
 * strerror), PT_EIO (pipe or /dev/null), PT_ENOMEM. On failure no child
 * exists and no descriptor is left open. */
int pt_child_start(struct pt_child *c, struct pt_error *err);

/* Wait for a started child to end and store in *status (may be NULL) its
 * exit status, or 128 + the signal number if a signal killed it. Calling it
 * again returns the same status. waitpid() is retried when a signal handler
 * interrupts it.
 * With c->timeout_ms > 0, a child still running timeout_ms after it started
 * is killed with SIGKILL and reaped, and the call returns PT_ETIMEDOUT with
 * *status set (normally 128 + SIGKILL). The limit is enforced only while
 * pt_child_wait() or pt_child_capture() is waiting.
 * Pipe ends the parent holds are left open: close the stdin pipe first if
 * the child reads it to EOF, and drain output pipes (or use
 * pt_child_capture()) if the child may write more than a pipe holds.
 * Errors: PT_EINVAL (not started), PT_ETIMEDOUT, PT_ESPAWN (waitpid
 * failed, e.g. the child was reaped elsewhere). */
int pt_child_wait(struct pt_child *c, int *status, struct pt_error *err);

/* pt_child_start() then pt_child_wait(). No stream may be PT_IO_PIPE
 * (PT_EINVAL): use pt_child_start() or pt_child_capture() for those. */
int pt_child_run(struct pt_child *c, int *status, struct pt_error *err);

/* Run the child with stdout captured into `out`, and with `errout` not
 * NULL stderr captured into it, both appended to what the buffers hold;
 * with `in` not NULL, the child's stdin is a pipe fed the `in_len` bytes at
 * `in`, then closed (input the child does not read is dropped, without
 * SIGPIPE). A NULL buffer leaves that stream as configured in `c`, which
 * must not be PT_IO_PIPE. The streams are served together with poll(), so
 * a child writing much to both stdout and stderr, or writing while it is
 * still being fed, cannot deadlock. Then waits as pt_child_wait(),
 * including its timeout (which also stops the capture).
 * Returns as pt_child_start() and pt_child_wait(), plus PT_EIO if a pipe
 * read or write failed (the child is then killed and reaped). On
 * PT_ETIMEDOUT the buffers hold what was read before the kill. */
int pt_child_capture(struct pt_child *c, const void *in, size_t in_len,
		     struct pt_strbuf *out, struct pt_strbuf *errout,
		     int *status, struct pt_error *err);

/* Send signal `sig` to a started child that has not been reaped.
 * Errors: PT_EINVAL (not started, already reaped, or bad signal),
 * PT_ESPAWN (kill failed). */
int pt_child_kill(struct pt_child *c, int sig, struct pt_error *err);

/* Free the vectors and close the pipe ends in `fd` fields that are still
 * open; `c` is PT_CHILD_INIT again. Does not wait for or kill the child: a
 * child that was started and not waited for keeps running and stays a
 * zombie after it exits, until reaped. */
void pt_child_release(struct pt_child *c);

/* Read `fd` to end of file, appending to `sb`; retries on EINTR and waits
 * with poll() if `fd` is non-blocking. Does not close `fd`. On error `sb`
 * keeps what was read. Errors: PT_EIO (message with strerror), PT_ENOMEM. */
int pt_spawn_read_fd(int fd, struct pt_strbuf *sb, struct pt_error *err);

#endif
