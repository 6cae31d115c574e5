#include "pt_test.h"
#include "protune/pt_jobserver.h"
#include "protune/pt_time.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct parse_case {
	const char *makeflags;
	int ret;
	enum pt_jobserver_kind kind;
	int read_fd, write_fd;
	const char *fifo;
	int jobs, legacy;
	const char *msg; /* for ret < 0 */
};

#define NONE PT_JOBSERVER_NONE
#define PIPE PT_JOBSERVER_PIPE
#define FIFO PT_JOBSERVER_FIFO

static const struct parse_case parse_cases[] = {
	/* What make 4.3 really writes (seen in recipes). */
	{ " -j2 --jobserver-auth=3,4", 0, PIPE, 3, 4, "", 2, 0, NULL },
	{ "s -j3 --jobserver-auth=3,4", 0, PIPE, 3, 4, "", 3, 0, NULL },
	{ "k -j3 --jobserver-auth=3,4 -- X=1", 0, PIPE, 3, 4, "", 3, 0, NULL },
	{ " -I/tmp -j3 -l2.5 -Oline --jobserver-auth=3,4", 0, PIPE, 3, 4, "", 3, 0, NULL },
	{ " -j", 0, NONE, -1, -1, "", -1, 0, NULL },
	{ "k -j1", 0, NONE, -1, -1, "", 1, 0, NULL },
	{ "eikrs", 0, NONE, -1, -1, "", 0, 0, NULL },
	{ "kw -j8", 0, NONE, -1, -1, "", 8, 0, NULL },
	/* make 3.8x */
	{ "--jobserver-fds=5,6 -j", 0, PIPE, 5, 6, "", -1, 1, NULL },
	{ " --jobserver-fds=3,4 -j", 0, PIPE, 3, 4, "", -1, 1, NULL },
	/* make 4.4 */
	{ "-j4 --jobserver-auth=fifo:/tmp/GMfifo123", 0, FIFO, -1, -1, "/tmp/GMfifo123", 4, 0, NULL },
	{ " -j4 --jobserver-auth=fifo:/tmp/GMfifo9 -- CC=gcc", 0, FIFO, -1, -1, "/tmp/GMfifo9", 4, 0, NULL },
	{ " --jobserver-auth=fifo:/tmp/a\\ b\\\\c", 0, FIFO, -1, -1, "/tmp/a b\\c", 0, 0, NULL },
	/* Variables after "--" are not options. */
	{ "w -- X=--jobserver-auth=9,9", 0, NONE, -1, -1, "", 0, 0, NULL },
	{ " -- --jobserver-auth=9,9 -j5", 0, NONE, -1, -1, "", 0, 0, NULL },
	/* The last jobserver option wins, and only it is checked. */
	{ " -j4 --jobserver-auth=3,4 --jobserver-auth=7,8", 0, PIPE, 7, 8, "", 4, 0, NULL },
	{ " --jobserver-fds=3,4 --jobserver-auth=fifo:/f", 0, FIFO, -1, -1, "/f", 0, 0, NULL },
	{ " --jobserver-auth=fifo:/f --jobserver-fds=5,6", 0, PIPE, 5, 6, "", 0, 1, NULL },
	{ " --jobserver-auth=garbage --jobserver-auth=3,4", 0, PIPE, 3, 4, "", 0, 0, NULL },
	{ " -j2 -j6", 0, NONE, -1, -1, "", 6, 0, NULL },
	/* Blanks, "-j N", an argument word, an assignment first. */
	{ "\t-j2\t--jobserver-auth=3,4\n", 0, PIPE, 3, 4, "", 2, 0, NULL },
	{ " -j 5 --jobserver-auth=3,4", 0, PIPE, 3, 4, "", 5, 0, NULL },
	{ " -I --jobserver-auth=3,4", 0, NONE, -1, -1, "", 0, 0, NULL },
	{ "X=1 -j2", 0, NONE, -1, -1, "", 2, 0, NULL },
	{ " --jobserver-authx=3,4 --jobserver-style=fifo", 0, NONE, -1, -1, "", 0, 0, NULL },
	{ "", 0, NONE, -1, -1, "", 0, 0, NULL },
	{ "   ", 0, NONE, -1, -1, "", 0, 0, NULL },
	{ "hello world", 0, NONE, -1, -1, "", 0, 0, NULL },
	/* Malformed. */
	{ " --jobserver-auth=3,4 --jobserver-auth=garbage", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-auth=garbage: expected R,W or fifo:PATH" },
	{ " -j2 --jobserver-auth=3", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-auth=3: expected R,W or fifo:PATH" },
	{ " --jobserver-auth=-2,-2", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-auth=-2,-2: expected R,W or fifo:PATH" },
	{ " --jobserver-auth=3,4x", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-auth=3,4x: expected R,W or fifo:PATH" },
	{ " --jobserver-auth=99999999999,4", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-auth=99999999999,4: expected R,W or fifo:PATH" },
	{ " --jobserver-auth=", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-auth=: expected R,W or fifo:PATH" },
	{ " --jobserver-auth=fifo:", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-auth=fifo:: empty fifo path" },
	{ " --jobserver-fds=fifo:/x", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: --jobserver-fds=fifo:/x: expected R,W" },
	{ " -jx --jobserver-auth=3,4", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: invalid -j argument 'x'" },
	{ " -j0", PT_EFORMAT, NONE, -1, -1, "", 0, 0,
	  "MAKEFLAGS: invalid -j argument '0'" },
};

PT_TEST(parse_real_and_odd_makeflags)
{
	size_t i;

	for (i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct pt_jobserver_auth a;
		struct pt_error err = PT_ERROR_INIT;
		int ret, ok;

		memset(&a, 0x55, sizeof(a));
		strcpy(err.msg, "untouched");
		ret = pt_jobserver_parse(c->makeflags, &a, &err);
		ok = PT_CHECK_INT(ret, c->ret);
		ok &= PT_CHECK_INT(a.kind, c->kind);
		ok &= PT_CHECK_INT(a.read_fd, c->read_fd);
		ok &= PT_CHECK_INT(a.write_fd, c->write_fd);
		ok &= PT_CHECK_STR(a.fifo, c->fifo);
		ok &= PT_CHECK_INT(a.jobs, c->jobs);
		ok &= PT_CHECK_INT(a.legacy, c->legacy);
		ok &= PT_CHECK_STR(err.msg, c->msg ? c->msg : "untouched");
		if (!ok)
			printf("#   in case %zu: MAKEFLAGS=\"%s\"\n", i, c->makeflags);
		if (c->ret)
			PT_CHECK_INT(err.code, c->ret);
	}
}

PT_TEST(parse_null_and_long_path)
{
	struct pt_jobserver_auth a;
	struct pt_error err = PT_ERROR_INIT;
	static char mf[PT_JOBSERVER_PATH_MAX + 100];
	size_t n;

	PT_CHECK_INT(pt_jobserver_parse(NULL, &a, &err), 0);
	PT_CHECK_INT(a.kind, NONE);
	PT_CHECK_INT(a.jobs, 0);

	/* The longest path that fits, then one byte more. */
	n = (size_t)snprintf(mf, sizeof(mf), " --jobserver-auth=fifo:/");
	memset(mf + n, 'p', PT_JOBSERVER_PATH_MAX - 2);
	mf[n + PT_JOBSERVER_PATH_MAX - 2] = '\0';
	PT_CHECK_INT(pt_jobserver_parse(mf, &a, &err), 0);
	PT_CHECK_INT(a.kind, FIFO);
	PT_CHECK_INT(strlen(a.fifo), PT_JOBSERVER_PATH_MAX - 1);
	mf[n + PT_JOBSERVER_PATH_MAX - 2] = 'p';
	mf[n + PT_JOBSERVER_PATH_MAX - 1] = '\0';
	PT_CHECK_INT(pt_jobserver_parse(mf, &a, &err), PT_EFORMAT);
	PT_CHECK_STR(err.msg, "MAKEFLAGS: jobserver fifo path is too long");
	PT_CHECK_INT(a.kind, NONE);
	PT_CHECK_STR(a.fifo, "");
}

/* A jobserver as make builds it: a pipe holding `tokens`. */
static void make_pipe(int p[2], const char *tokens, int nonblock_read)
{
	PT_REQUIRE(pipe(p) == 0);
	PT_REQUIRE(write(p[1], tokens, strlen(tokens)) == (ssize_t)strlen(tokens));
	if (nonblock_read)
		PT_REQUIRE(fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK) == 0);
}

static void open_pipe_js(struct pt_jobserver *js, int p[2], int jobs)
{
	struct pt_error err = PT_ERROR_INIT;
	char mf[128];

	snprintf(mf, sizeof(mf), "k -j%d --jobserver-auth=%d,%d", jobs, p[0], p[1]);
	PT_REQUIRE(pt_jobserver_open_makeflags(js, mf, &err) == 0);
	if (!PT_CHECK(pt_jobserver_active(js)))
		printf("#   why: %s\n", js->why);
	PT_REQUIRE(pt_jobserver_active(js));
	PT_CHECK_INT(js->kind, PIPE);
	PT_CHECK_INT(js->jobs, jobs);
}

/* Take all tokens, time out on one more, give them back, LIFO. */
static void exercise_tokens(struct pt_jobserver *js, int drain_fd)
{
	struct pt_error err = PT_ERROR_INIT;
	long long t0, dt;
	char back[8] = { 0 };
	ssize_t n;

	PT_CHECK_INT(pt_jobserver_acquire(js, 0, &err), 0);
	PT_CHECK_INT(pt_jobserver_acquire(js, 100, &err), 0);
	PT_CHECK_INT(pt_jobserver_acquire(js, -1, &err), 0);
	PT_CHECK_INT(pt_jobserver_held(js), 3);
	PT_CHECK(memcmp(js->held.buf, "+ab", 3) == 0);
	PT_CHECK_INT(pt_jobserver_acquire(js, 0, &err), PT_JOBSERVER_TIMEOUT);
	t0 = pt_time_now_ms();
	PT_CHECK_INT(pt_jobserver_acquire(js, 200, &err), PT_JOBSERVER_TIMEOUT);
	dt = pt_time_now_ms() - t0;
	if (!PT_CHECK(dt >= 195 && dt < 700))
		printf("#   timed out after %lld ms\n", dt);
	PT_CHECK_INT(pt_jobserver_held(js), 3);

	PT_CHECK_INT(pt_jobserver_release(js, &err), 0);
	PT_CHECK_INT(pt_jobserver_release(js, &err), 0);
	PT_CHECK_INT(pt_jobserver_release(js, &err), 0);
	PT_CHECK_INT(pt_jobserver_held(js), 0);
	PT_CHECK_INT(pt_jobserver_release(js, &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "jobserver: no token held");

	/* Exactly the bytes taken went back, last taken first. */
	PT_REQUIRE(fcntl(drain_fd, F_SETFL, fcntl(drain_fd, F_GETFL) | O_NONBLOCK) == 0);
	n = read(drain_fd, back, sizeof(back));
	PT_CHECK_INT(n, 3);
	PT_CHECK_STR(back, "ba+");
}

PT_TEST(pipe_nonblocking_like_make4)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	int p[2];

	make_pipe(p, "+ab", 1);
	open_pipe_js(&js, p, 4);
	PT_CHECK_INT(js.read_fd, p[0]);
	PT_CHECK(!js.own_read && !js.own_write);
	exercise_tokens(&js, p[0]);
	pt_jobserver_close(&js);
	/* Inherited fds stay open. */
	PT_CHECK(fcntl(p[0], F_GETFD) >= 0 && fcntl(p[1], F_GETFD) >= 0);
	PT_CHECK_INT(js.kind, NONE);
}

PT_TEST(pipe_blocking_like_make3)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	int p[2], rfd;

	make_pipe(p, "+ab", 0);
	open_pipe_js(&js, p, 4);
#ifdef __linux__
	/* Read through a private non-blocking description... */
	PT_CHECK(js.own_read);
	PT_CHECK(js.read_fd != p[0]);
	PT_CHECK(fcntl(js.read_fd, F_GETFD) & FD_CLOEXEC);
#endif
	/* ...and leave make's shared one blocking. */
	PT_CHECK(!(fcntl(p[0], F_GETFL) & O_NONBLOCK));
	rfd = js.read_fd;
	exercise_tokens(&js, p[0]);
	pt_jobserver_close(&js);
	if (rfd != p[0])
		PT_CHECK(fcntl(rfd, F_GETFD) < 0);
	PT_CHECK(fcntl(p[0], F_GETFD) >= 0);
}

PT_TEST(fifo_like_make44)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char path[512], mf[600];
	int mr, mw, rfd, wfd;

	/* make 4.4 keeps the fifo open; so do we, as "make". */
	snprintf(path, sizeof(path), "%s/GMfifo42", pt_test_tmpdir());
	PT_REQUIRE(mkfifo(path, 0600) == 0);
	mr = open(path, O_RDONLY | O_NONBLOCK);
	mw = open(path, O_WRONLY);
	PT_REQUIRE(mr >= 0 && mw >= 0);
	PT_REQUIRE(write(mw, "+ab", 3) == 3);
	snprintf(mf, sizeof(mf), " -j4 --jobserver-auth=fifo:%s", path);
	PT_REQUIRE(pt_jobserver_open_makeflags(&js, mf, &err) == 0);
	if (!PT_CHECK_INT(js.kind, FIFO))
		printf("#   why: %s\n", js.why);
	PT_REQUIRE(pt_jobserver_active(&js));
	PT_CHECK(js.own_read && js.own_write);
	PT_CHECK(fcntl(js.read_fd, F_GETFD) & FD_CLOEXEC);
	PT_CHECK(fcntl(js.write_fd, F_GETFD) & FD_CLOEXEC);
	rfd = js.read_fd;
	wfd = js.write_fd;
	exercise_tokens(&js, mr);
	pt_jobserver_close(&js);
	PT_CHECK(fcntl(rfd, F_GETFD) < 0 && fcntl(wfd, F_GETFD) < 0);
	close(mr);
	close(mw);
}

PT_TEST(close_gives_back_held_tokens)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	char back[8] = { 0 };
	int p[2];

	make_pipe(p, "xyz", 1);
	open_pipe_js(&js, p, 4);
	PT_CHECK_INT(pt_jobserver_acquire(&js, 0, NULL), 0);
	PT_CHECK_INT(pt_jobserver_acquire(&js, 0, NULL), 0);
	pt_jobserver_close(&js);
	PT_CHECK_INT(read(p[0], back, sizeof(back)), 3);
	PT_CHECK_STR(back, "zyx");
	PT_CHECK_INT(pt_jobserver_held(&js), 0);
}

PT_TEST(blocking_acquire_waits_for_a_release)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	long long t0, dt;
	int p[2], status;
	pid_t pid;

	make_pipe(p, "", 0);
	open_pipe_js(&js, p, 2);
	pid = fork();
	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		pt_time_sleep_ms(150);
		_exit(write(p[1], "t", 1) == 1 ? 0 : 1);
	}
	t0 = pt_time_now_ms();
	PT_CHECK_INT(pt_jobserver_acquire(&js, -1, NULL), 0);
	dt = pt_time_now_ms() - t0;
	PT_CHECK(dt >= 100);
	PT_CHECK(js.held.len == 1 && js.held.buf[0] == 't');
	PT_REQUIRE(waitpid(pid, &status, 0) == pid);
	PT_CHECK_INT(status, 0);
	pt_jobserver_close(&js);
}

static void on_usr1(int sig)
{
	(void)sig;
}

PT_TEST(signals_do_not_cut_the_wait_short)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	struct sigaction sa;
	long long t0, dt;
	int p[2], i;
	pid_t pid, parent = getpid();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: poll and read see EINTR */
	PT_REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	make_pipe(p, "", 0);
	open_pipe_js(&js, p, 2);
	pid = fork();
	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		for (i = 0; i < 5; i++) {
			pt_time_sleep_ms(40);
			kill(parent, SIGUSR1);
		}
		_exit(0);
	}
	t0 = pt_time_now_ms();
	PT_CHECK_INT(pt_jobserver_acquire(&js, 300, NULL), PT_JOBSERVER_TIMEOUT);
	dt = pt_time_now_ms() - t0;
	if (!PT_CHECK(dt >= 295 && dt < 900))
		printf("#   timed out after %lld ms\n", dt);
	waitpid(pid, NULL, 0);
	pt_jobserver_close(&js);
}

PT_TEST(two_clients_share_one_token)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	int p[2], st1, st2, got;
	pid_t a, b;

	make_pipe(p, "+", 1);
	open_pipe_js(&js, p, 2);
	/* Both wait for the one token; exactly one gets it within 300 ms. */
	a = fork();
	PT_REQUIRE(a >= 0);
	if (a == 0)
		_exit(pt_jobserver_acquire(&js, 300, NULL) == 0 ? 10 : 20);
	b = fork();
	PT_REQUIRE(b >= 0);
	if (b == 0)
		_exit(pt_jobserver_acquire(&js, 300, NULL) == 0 ? 10 : 20);
	waitpid(a, &st1, 0);
	waitpid(b, &st2, 0);
	got = (WEXITSTATUS(st1) == 10) + (WEXITSTATUS(st2) == 10);
	PT_CHECK_INT(got, 1);
	PT_CHECK_INT(WEXITSTATUS(st1) + WEXITSTATUS(st2), 30);
	pt_jobserver_close(&js);
}

static void check_none(const char *makeflags, const char *why)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	struct pt_error err = PT_ERROR_INIT;

	PT_CHECK_INT(pt_jobserver_open_makeflags(&js, makeflags, &err), 0);
	PT_CHECK_INT(js.kind, NONE);
	if (!PT_CHECK_STR(js.why, why))
		printf("#   MAKEFLAGS=\"%s\"\n", makeflags);
	PT_CHECK(js.read_fd == -1 && js.write_fd == -1);
	PT_CHECK(!js.own_read && !js.own_write);
	PT_CHECK_STR(err.msg, "");
	PT_CHECK_INT(pt_jobserver_acquire(&js, 0, &err), PT_EINVAL);
	PT_CHECK(strncmp(err.msg, "no jobserver: ", 14) == 0);
	pt_jobserver_close(&js);
}

#define HINT "(is the recipe marked with '+' or does it run $(MAKE)?)"

PT_TEST(unusable_jobserver_is_none_with_a_reason)
{
	char mf[600], why[700], path[512];
	int p[2], q[2], fd;

	/* fds closed, as in a recipe that make does not think recursive. */
	PT_REQUIRE(pipe(p) == 0);
	close(p[0]);
	close(p[1]);
	snprintf(mf, sizeof(mf), " -j3 --jobserver-auth=%d,%d", p[0], p[1]);
	snprintf(why, sizeof(why), "jobserver fd %d is not open %s", p[0], HINT);
	check_none(mf, why);

	/* A regular file on the read fd. */
	snprintf(path, sizeof(path), "%s/plain", pt_test_tmpdir());
	fd = open(path, O_RDWR | O_CREAT, 0600);
	PT_REQUIRE(fd >= 0 && pipe(p) == 0);
	snprintf(mf, sizeof(mf), " -j3 --jobserver-auth=%d,%d", fd, p[1]);
	snprintf(why, sizeof(why), "jobserver fd %d is not a pipe %s", fd, HINT);
	check_none(mf, why);

	/* Ends swapped. */
	snprintf(mf, sizeof(mf), " -j3 --jobserver-auth=%d,%d", p[1], p[0]);
	snprintf(why, sizeof(why), "jobserver fd %d is not open for reading %s",
		 p[1], HINT);
	check_none(mf, why);

#ifdef __linux__
	/* Ends of two different pipes. */
	PT_REQUIRE(pipe(q) == 0);
	snprintf(mf, sizeof(mf), " -j3 --jobserver-auth=%d,%d", p[0], q[1]);
	snprintf(why, sizeof(why), "jobserver fds %d and %d are not the two ends "
		 "of one pipe %s", p[0], q[1], HINT);
	check_none(mf, why);
#else
	(void)q;
#endif

	/* A missing fifo, and a fifo that is a plain file. */
	snprintf(mf, sizeof(mf), " -j3 --jobserver-auth=fifo:%s/nofifo",
		 pt_test_tmpdir());
	snprintf(why, sizeof(why), "cannot open jobserver fifo %s/nofifo: %s",
		 pt_test_tmpdir(), strerror(ENOENT));
	check_none(mf, why);
	snprintf(mf, sizeof(mf), " -j3 --jobserver-auth=fifo:%s", path);
	snprintf(why, sizeof(why), "jobserver fifo %s is not a fifo", path);
	check_none(mf, why);

	/* No jobserver named, or a malformed one. */
	check_none("kw -j8", "MAKEFLAGS has -j8 but no jobserver " HINT);
	check_none(" -j", "MAKEFLAGS has -j without a limit and no jobserver");
	check_none("", "MAKEFLAGS names no jobserver (not run by make -jN)");
	check_none(NULL, "MAKEFLAGS names no jobserver (not run by make -jN)");
	check_none(" --jobserver-auth=3",
		   "MAKEFLAGS: --jobserver-auth=3: expected R,W or fifo:PATH");
}

PT_TEST(open_twice_is_refused)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_jobserver_auth a;
	int p[2];

	make_pipe(p, "+", 1);
	open_pipe_js(&js, p, 2);
	PT_REQUIRE(pt_jobserver_parse(" --jobserver-auth=3,4", &a, NULL) == 0);
	PT_CHECK_INT(pt_jobserver_open(&js, &a, &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "jobserver is already open");
	PT_CHECK_INT(js.kind, PIPE);
	pt_jobserver_close(&js);
}

PT_SUITE(jobserver,
	{ "parse real and odd MAKEFLAGS", parse_real_and_odd_makeflags },
	{ "parse NULL and a long fifo path", parse_null_and_long_path },
	{ "pipe, non-blocking read end (make 4.x)", pipe_nonblocking_like_make4 },
	{ "pipe, blocking read end (make 3.8x)", pipe_blocking_like_make3 },
	{ "fifo (make 4.4)", fifo_like_make44 },
	{ "close gives back held tokens", close_gives_back_held_tokens },
	{ "blocking acquire waits for a release", blocking_acquire_waits_for_a_release },
	{ "signals do not cut the wait short", signals_do_not_cut_the_wait_short },
	{ "two clients share one token", two_clients_share_one_token },
	{ "unusable jobserver is none, with a reason", unusable_jobserver_is_none_with_a_reason },
	{ "open twice is refused", open_twice_is_refused },
);
