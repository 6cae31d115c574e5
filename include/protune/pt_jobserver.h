/* pt_jobserver.h: a client of the GNU make jobserver.
 *
 * `make -jN` hands out N job slots. Every process that make starts already
 * owns one slot, the implicit token: a client runs its first job without
 * asking, and reads one token byte from the jobserver for each further job
 * it runs at the same time. A token must be written back when that job
 * ends, as the very byte that was read (make may give bytes a meaning),
 * and every token must be back before the client exits, or make reports
 * lost tokens and the build loses parallelism. The implicit token is never
 * read or written: it is not tracked here, the caller simply owns it.
 *
 * Make passes the jobserver in MAKEFLAGS:
 *   --jobserver-auth=R,W    make 4.0+, R and W are inherited pipe fds
 *   --jobserver-fds=R,W     make 3.8x, same meaning
 *   --jobserver-auth=fifo:PATH  make 4.4+, a named pipe to open
 * The pipe fds reach only recipes that make considers recursive: lines
 * prefixed with `+` or containing $(MAKE). Other recipes see the option in
 * MAKEFLAGS but find the fds closed (or reused for something else); that
 * is "no jobserver", not an error: run one job at a time.
 *
 * Fork and exec: the pipe fds belong to make. This module never closes
 * them nor changes their close-on-exec flag, so children that are
 * themselves make-aware (another make, another protune-cc) inherit them
 * with MAKEFLAGS; to keep them from other children, set FD_CLOEXEC yourself
 * in the child before exec. Fds that this module opens (the fifo ends, a
 * private read end) are close-on-exec; a fifo jobserver needs nothing
 * inherited, children find the path in MAKEFLAGS. A struct pt_jobserver
 * must be used by one process only: after fork, let the child forget it
 * (do not call pt_jobserver_close() there, which would hand back the
 * parent's tokens). It is not thread-safe; guard it with a mutex if threads
 * share it.
 */
#ifndef PROTUNE_PT_JOBSERVER_H
#define PROTUNE_PT_JOBSERVER_H

#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"

enum pt_jobserver_kind {
	PT_JOBSERVER_NONE = 0, /* no jobserver (see `why`) */
	PT_JOBSERVER_PIPE,     /* inherited pipe fds */
	PT_JOBSERVER_FIFO      /* a named pipe */
};

#define PT_JOBSERVER_PATH_MAX 4096

/* What MAKEFLAGS says, before anything is opened. */
struct pt_jobserver_auth {
	enum pt_jobserver_kind kind;
	int read_fd, write_fd;            /* PIPE: the fds; otherwise -1 */
	char fifo[PT_JOBSERVER_PATH_MAX]; /* FIFO: the path; otherwise "" */
	int jobs;  /* last -jN: N; -1 for -j without a number (no limit);
		    * 0 without -j. make 4.x passes -jN with the jobserver,
		    * make 3.8x only -j. */
	int legacy; /* the winning option was --jobserver-fds */
};

#define PT_JOBSERVER_JOBS_UNLIMITED (-1)

/* Parse a MAKEFLAGS value (NULL is taken as ""). Pure: no fd is checked.
 *
 * The first word, if it does not start with '-', holds single-letter flags
 * ("ks"); other words are options ("-j3", "-I/usr/include",
 * "--jobserver-auth=3,4"); everything after a "--" word is variable
 * assignments and is ignored. Blanks and backslashes inside a word are
 * escaped with a backslash. The last --jobserver-auth or --jobserver-fds
 * wins and only that one is checked; unknown options are ignored.
 *
 * Returns 0 with `out` filled (kind NONE when MAKEFLAGS names no
 * jobserver), or PT_EFORMAT for a malformed winning jobserver option or a
 * malformed -j argument, with `out` reset to "none" and a message starting
 * "MAKEFLAGS: ". Callers should treat a failure as "no jobserver". */
int pt_jobserver_parse(const char *makeflags, struct pt_jobserver_auth *out,
		       struct pt_error *err);

/* An open jobserver. Start from PT_JOBSERVER_INIT; end with
 * pt_jobserver_close(). */
struct pt_jobserver {
	enum pt_jobserver_kind kind; /* NONE if there is no usable jobserver */
	int read_fd, write_fd;
	int own_read, own_write;     /* close these fds in pt_jobserver_close */
	int jobs;                    /* as in struct pt_jobserver_auth */
	struct pt_strbuf held;       /* token bytes taken and not given back */
	char why[PT_ERROR_MSG_MAX];  /* kind NONE: the reason, one line */
};

#define PT_JOBSERVER_INIT \
	{ PT_JOBSERVER_NONE, -1, -1, 0, 0, 0, PT_STRBUF_INIT, { 0 } }

/* Connect to the jobserver that `auth` describes.
 *
 * Pipe style: both fds must be open (fcntl F_GETFD), be pipes, allow
 * reading and writing respectively, and (on Linux) be the two ends of one
 * pipe. Fifo style: the path is opened twice, for reading (non-blocking,
 * so a dead make cannot hang us) and for writing, as make 4.4 does.
 *
 * When the jobserver is absent or unusable, returns 0 with js->kind NONE
 * and the reason in js->why ("fd 3 is not open: is the recipe marked with
 * '+'?"), because a missing jobserver must never fail a build. Negative
 * returns: PT_EINVAL (js already open), PT_ENOMEM. */
int pt_jobserver_open(struct pt_jobserver *js,
		      const struct pt_jobserver_auth *auth, struct pt_error *err);

/* pt_jobserver_parse() then pt_jobserver_open(); a parse error also gives
 * kind NONE with the parse message in js->why. `makeflags` is normally
 * getenv("MAKEFLAGS") and may be NULL. */
int pt_jobserver_open_makeflags(struct pt_jobserver *js, const char *makeflags,
				struct pt_error *err);

/* Nonzero if js has a usable jobserver. */
#define pt_jobserver_active(js) ((js)->kind != PT_JOBSERVER_NONE)

/* Token bytes held now (not counting the implicit token). */
#define pt_jobserver_held(js) ((js)->held.len)

/* Returned by pt_jobserver_acquire() when no token came in time. */
#define PT_JOBSERVER_TIMEOUT 1

/* Take one token: wait at most `timeout_ms` milliseconds (0: do not wait;
 * negative: wait as long as it takes). Signals do not cut the wait short.
 * The byte read is remembered for pt_jobserver_release().
 *
 * Returns 0 with one more token held, PT_JOBSERVER_TIMEOUT, or PT_EINVAL
 * (no jobserver), PT_EIO (read failed, or the jobserver pipe hit end of
 * file), PT_ENOMEM (the byte is then written back first).
 *
 * On Linux an inherited blocking read end is reopened privately so that a
 * token stolen by another process between poll and read cannot make us
 * block past the timeout; elsewhere that race can make a timed wait last
 * until some token is freed. */
int pt_jobserver_acquire(struct pt_jobserver *js, int timeout_ms,
			 struct pt_error *err);

/* Give back the most recently taken token byte. Returns 0, PT_EINVAL (no
 * token held), or PT_EIO (write failed; the token stays held). */
int pt_jobserver_release(struct pt_jobserver *js, struct pt_error *err);

/* Give back every held token, close the fds this module opened, and reset
 * js to PT_JOBSERVER_INIT. Inherited pipe fds stay open. */
void pt_jobserver_close(struct pt_jobserver *js);

#endif
