#include "protune/pt_jobserver.h"
#include "protune/pt_time.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* Copy the word starting at `p` (no leading blanks) into buf, undoing
 * backslash escapes, and return the end of the word. A word longer than
 * the buffer is cut short and *cut is set. */
static const char *read_word(const char *p, char *buf, size_t cap, int *cut)
{
	size_t n = 0;

	*cut = 0;
	while (*p && !is_blank(*p)) {
		if (*p == '\\' && p[1])
			p++;
		if (n + 1 < cap)
			buf[n++] = *p;
		else
			*cut = 1;
		p++;
	}
	buf[n] = '\0';
	return p;
}

static const char *skip_blanks(const char *p)
{
	while (is_blank(*p))
		p++;
	return p;
}

/* A decimal int >= 0 with nothing else, or -1. */
static int parse_uint(const char *s, const char *end)
{
	long v = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -1;
	}
	return (int)v;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static void auth_reset(struct pt_jobserver_auth *out)
{
	out->kind = PT_JOBSERVER_NONE;
	out->read_fd = out->write_fd = -1;
	out->fifo[0] = '\0';
	out->jobs = 0;
	out->legacy = 0;
}

#define AUTH_OPT "--jobserver-auth="
#define FDS_OPT "--jobserver-fds="

/* Check the winning jobserver option `word` (unescaped) into `out`. */
static int parse_auth_value(const char *word, int cut,
			    struct pt_jobserver_auth *out, struct pt_error *err)
{
	int legacy = !strncmp(word, FDS_OPT, strlen(FDS_OPT));
	const char *val = word + strlen(legacy ? FDS_OPT : AUTH_OPT);
	const char *comma;
	int r, w;

	if (!legacy && !strncmp(val, "fifo:", 5)) {
		if (cut || strlen(val + 5) >= sizeof(out->fifo))
			return pt_error_set(err, PT_EFORMAT,
					    "MAKEFLAGS: jobserver fifo path is too long");
		if (!val[5])
			return pt_error_set(err, PT_EFORMAT,
					    "MAKEFLAGS: %s: empty fifo path", word);
		out->kind = PT_JOBSERVER_FIFO;
		memcpy(out->fifo, val + 5, strlen(val + 5) + 1);
		return 0;
	}
	comma = strchr(val, ',');
	r = comma ? parse_uint(val, comma) : -1;
	w = comma ? parse_uint(comma + 1, comma + strlen(comma)) : -1;
	if (cut || r < 0 || w < 0)
		return pt_error_set(err, PT_EFORMAT,
				    "MAKEFLAGS: %.200s%s: expected R,W%s", word,
				    cut ? "..." : "",
				    legacy ? "" : " or fifo:PATH");
	out->kind = PT_JOBSERVER_PIPE;
	out->read_fd = r;
	out->write_fd = w;
	out->legacy = legacy;
	return 0;
}

int pt_jobserver_parse(const char *makeflags, struct pt_jobserver_auth *out,
		       struct pt_error *err)
{
	/* Room for "--jobserver-auth=fifo:" and a whole path. */
	char word[PT_JOBSERVER_PATH_MAX + 32];
	const char *p = makeflags ? makeflags : "";
	const char *win = NULL; /* the raw last jobserver option */
	const char *start;
	int first, lead, jobs = 0, cut, ret;

	auth_reset(out);
	/* Only a first word right at the start can be a letter group. */
	first = !is_blank(*p);
	while (*(p = skip_blanks(p))) {
		const char *letters;
		size_t i;

		lead = first;
		first = 0;
		start = p;
		p = read_word(p, word, sizeof(word), &cut);
		if (!strcmp(word, "--"))
			break;
		if (!strncmp(word, AUTH_OPT, strlen(AUTH_OPT)) ||
		    !strncmp(word, FDS_OPT, strlen(FDS_OPT))) {
			win = start; /* decoded again at the end */
			continue;
		}
		if (word[0] == '-' && word[1] == '-')
			continue;
		/* Single-letter flags: the first word without its '-', or an
		 * option word such as "-j3" or "-I/usr/include". */
		if (word[0] == '-')
			letters = word + 1;
		else if (lead && !strchr(word, '='))
			letters = word;
		else
			continue;
		for (i = 0; letters[i]; i++) {
			const char *rest = letters + i + 1;

			if (letters[i] == 'j') {
				char next[32];
				const char *q = skip_blanks(p);
				int ncut;

				if (*rest) {
					jobs = parse_uint(rest, rest + strlen(rest));
					if (jobs <= 0) {
						auth_reset(out);
						return pt_error_set(err, PT_EFORMAT,
							"MAKEFLAGS: invalid -j argument '%.100s'",
							rest);
					}
					break;
				}
				/* make also accepts "-j 3". */
				jobs = PT_JOBSERVER_JOBS_UNLIMITED;
				if (*q) {
					const char *e = read_word(q, next, sizeof(next), &ncut);
					if (!ncut && all_digits(next) &&
					    parse_uint(next, next + strlen(next)) > 0) {
						jobs = parse_uint(next, next + strlen(next));
						p = e;
					}
				}
				break;
			}
			if (strchr("lO", letters[i]))
				break; /* optional argument, attached */
			if (strchr("CfIoWE", letters[i])) {
				if (!*rest && *(p = skip_blanks(p)))
					p = read_word(p, word, sizeof(word), &cut);
				break;
			}
		}
	}
	if (win) {
		read_word(win, word, sizeof(word), &cut);
		ret = parse_auth_value(word, cut, out, err);
		if (ret) {
			auth_reset(out);
			return ret;
		}
	}
	out->jobs = jobs;
	return 0;
}

/* Fill js->why and leave js unconnected; a missing jobserver is no error. */
static int no_jobserver(struct pt_jobserver *js, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static int no_jobserver(struct pt_jobserver *js, const char *fmt, ...)
{
	va_list ap;

	if (js->own_read)
		close(js->read_fd);
	if (js->own_write)
		close(js->write_fd);
	js->kind = PT_JOBSERVER_NONE;
	js->read_fd = js->write_fd = -1;
	js->own_read = js->own_write = 0;
	va_start(ap, fmt);
	vsnprintf(js->why, sizeof(js->why), fmt, ap);
	va_end(ap);
	return 0;
}

#define NOT_RECURSIVE "is the recipe marked with '+' or does it run $(MAKE)?"

static int check_pipe_fd(struct pt_jobserver *js, int fd, int for_write,
			 struct stat *st)
{
	int fl;

	if (fcntl(fd, F_GETFD) < 0)
		return no_jobserver(js, "jobserver fd %d is not open (%s)", fd,
				    NOT_RECURSIVE), -1;
	if (fstat(fd, st) < 0 || !S_ISFIFO(st->st_mode))
		return no_jobserver(js, "jobserver fd %d is not a pipe (%s)", fd,
				    NOT_RECURSIVE), -1;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == (for_write ? O_RDONLY : O_WRONLY))
		return no_jobserver(js, "jobserver fd %d is not open for %s (%s)",
				    fd, for_write ? "writing" : "reading",
				    NOT_RECURSIVE), -1;
	return 0;
}

static int open_pipe(struct pt_jobserver *js, const struct pt_jobserver_auth *auth)
{
	struct stat rst, wst;
	int fl;

	if (check_pipe_fd(js, auth->read_fd, 0, &rst) ||
	    check_pipe_fd(js, auth->write_fd, 1, &wst))
		return 0;
#ifdef __linux__
	/* Both ends of a Linux pipe share one inode; anything else is some
	 * other pipe that happens to sit on these fd numbers. */
	if (rst.st_dev != wst.st_dev || rst.st_ino != wst.st_ino)
		return no_jobserver(js, "jobserver fds %d and %d are not the two "
				    "ends of one pipe (%s)", auth->read_fd,
				    auth->write_fd, NOT_RECURSIVE);
#endif
	js->read_fd = auth->read_fd;
	js->write_fd = auth->write_fd;
	fl = fcntl(js->read_fd, F_GETFL);
#ifdef __linux__
	/* make 4.x sets the shared read end non-blocking; make 3.8x leaves it
	 * blocking and would break if we changed that for everybody. Opening
	 * the pipe again through /proc gives a description of our own. */
	if (fl >= 0 && !(fl & O_NONBLOCK)) {
		char proc[64];
		int fd;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", js->read_fd);
		do
			fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd >= 0) {
			js->read_fd = fd;
			js->own_read = 1;
		}
	}
#else
	(void)fl;
#endif
	js->kind = PT_JOBSERVER_PIPE;
	return 0;
}

static int open_fifo(struct pt_jobserver *js, const struct pt_jobserver_auth *auth)
{
	struct stat st;
	int fd;

	/* Non-blocking, so that a fifo left behind by a dead make cannot hang
	 * us waiting for a writer. */
	do
		fd = open(auth->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return no_jobserver(js, "cannot open jobserver fifo %s: %s",
				    auth->fifo, strerror(errno));
	js->read_fd = fd;
	js->own_read = 1;
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return no_jobserver(js, "jobserver fifo %s is not a fifo",
				    auth->fifo);
	do
		fd = open(auth->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return no_jobserver(js, "cannot open jobserver fifo %s for "
				    "writing: %s", auth->fifo, strerror(errno));
	js->write_fd = fd;
	js->own_write = 1;
	js->kind = PT_JOBSERVER_FIFO;
	return 0;
}

int pt_jobserver_open(struct pt_jobserver *js,
		      const struct pt_jobserver_auth *auth, struct pt_error *err)
{
	if (js->kind != PT_JOBSERVER_NONE || js->own_read || js->own_write)
		return pt_error_set(err, PT_EINVAL, "jobserver is already open");
	js->why[0] = '\0';
	js->jobs = auth->jobs;
	switch (auth->kind) {
	case PT_JOBSERVER_PIPE:
		return open_pipe(js, auth);
	case PT_JOBSERVER_FIFO:
		return open_fifo(js, auth);
	default:
		break;
	}
	if (auth->jobs == PT_JOBSERVER_JOBS_UNLIMITED)
		return no_jobserver(js, "MAKEFLAGS has -j without a limit and no "
				    "jobserver");
	if (auth->jobs > 1)
		return no_jobserver(js, "MAKEFLAGS has -j%d but no jobserver (%s)",
				    auth->jobs, NOT_RECURSIVE);
	return no_jobserver(js, "MAKEFLAGS names no jobserver (not run by "
			    "make -jN)");
}

int pt_jobserver_open_makeflags(struct pt_jobserver *js, const char *makeflags,
				struct pt_error *err)
{
	struct pt_jobserver_auth auth;
	struct pt_error perr = PT_ERROR_INIT;

	if (js->kind != PT_JOBSERVER_NONE || js->own_read || js->own_write)
		return pt_error_set(err, PT_EINVAL, "jobserver is already open");
	if (pt_jobserver_parse(makeflags, &auth, &perr) < 0) {
		js->jobs = 0;
		return no_jobserver(js, "%s", perr.msg);
	}
	return pt_jobserver_open(js, &auth, err);
}

/* Wait for `events` on fd until `deadline` (ms, or -1: forever).
 * Returns 1 when ready, 0 on timeout, -1 with errno on error. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd pfd;
	int n, ms;

	for (;;) {
		if (deadline < 0) {
			ms = -1;
		} else {
			long long left = deadline - pt_time_now_ms();
			ms = left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
		}
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		n = poll(&pfd, 1, ms);
		if (n > 0)
			return 1;
		if (n == 0 && ms != INT_MAX)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

static int put_byte(int fd, unsigned char c)
{
	ssize_t n;

	for (;;) {
		n = write(fd, &c, 1);
		if (n == 1)
			return 0;
		if (n < 0 && errno == EAGAIN) {
			if (wait_fd(fd, POLLOUT, -1) < 0)
				return -1;
		} else if (n < 0 && errno != EINTR) {
			return -1;
		}
	}
}

int pt_jobserver_acquire(struct pt_jobserver *js, int timeout_ms,
			 struct pt_error *err)
{
	long long deadline = timeout_ms < 0 ? -1 : pt_time_now_ms() + timeout_ms;
	unsigned char c;
	ssize_t n;
	int ready;

	if (js->kind == PT_JOBSERVER_NONE)
		return pt_error_set(err, PT_EINVAL, "no jobserver: %s",
				    js->why[0] ? js->why : "not open");
	for (;;) {
		ready = wait_fd(js->read_fd, POLLIN, deadline);
		if (ready < 0)
			return pt_error_set(err, PT_EIO, "jobserver: poll: %s",
					    strerror(errno));
		if (!ready)
			return PT_JOBSERVER_TIMEOUT;
		/* Another client may take the token first: then EAGAIN on a
		 * non-blocking fd, and we wait again. */
		n = read(js->read_fd, &c, 1);
		if (n == 1)
			break;
		if (n == 0)
			return pt_error_set(err, PT_EIO, "jobserver: end of file "
					    "on the token pipe (did make exit?)");
		if (errno != EAGAIN && errno != EINTR)
			return pt_error_set(err, PT_EIO, "jobserver: read: %s",
					    strerror(errno));
	}
	if (pt_strbuf_addch(&js->held, c)) {
		put_byte(js->write_fd, c);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	return 0;
}

int pt_jobserver_release(struct pt_jobserver *js, struct pt_error *err)
{
	unsigned char c;

	if (js->kind == PT_JOBSERVER_NONE || !js->held.len)
		return pt_error_set(err, PT_EINVAL, "jobserver: no token held");
	c = (unsigned char)js->held.buf[js->held.len - 1];
	if (put_byte(js->write_fd, c) < 0)
		return pt_error_set(err, PT_EIO, "jobserver: write: %s",
				    strerror(errno));
	pt_strbuf_setlen(&js->held, js->held.len - 1);
	return 0;
}

void pt_jobserver_close(struct pt_jobserver *js)
{
	struct pt_jobserver fresh = PT_JOBSERVER_INIT;

	while (js->kind != PT_JOBSERVER_NONE && js->held.len &&
	       pt_jobserver_release(js, NULL) == 0)
		;
	if (js->own_read)
		close(js->read_fd);
	if (js->own_write)
		close(js->write_fd);
	pt_strbuf_release(&js->held);
	*js = fresh;
}
