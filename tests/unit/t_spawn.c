#define _XOPEN_SOURCE 700 /* setitimer, realpath */
#include "pt_test.h"
#include "protune/pt_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define SH "/bin/sh"
/* A limit on children that should end quickly, so that a bug fails a test
 * instead of hanging the run. */
#define SAFETY_MS 10000

/* Run `argv` with stdout captured; returns pt_child_capture's result. */
static int capture(const char *const *argv, struct pt_strbuf *out, int *status)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	PT_REQUIRE(pt_strvec_pushv(&c.args, argv) == 0);
	c.timeout_ms = SAFETY_MS;
	ret = pt_child_capture(&c, NULL, 0, out, NULL, status, &err);
	if (ret)
		printf("# capture: %s\n", err.msg);
	pt_child_release(&c);
	return ret;
}

static int run_sh(const char *script, int *status)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c", script, NULL) == 0);
	ret = pt_child_run(&c, status, &err);
	if (ret)
		printf("# run: %s\n", err.msg);
	pt_child_release(&c);
	return ret;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(struct pt_strbuf *sb, size_t len)
{
	size_t i;

	PT_REQUIRE(pt_strbuf_grow(sb, len) == 0);
	for (i = 0; i < len; i++)
		sb->buf[i] = (char)('a' + (i * 7 + i / 4093) % 26);
	if (len > 100)
		sb->buf[100] = '\0'; /* binary-safe, not string-safe */
	sb->len = len;
	sb->buf[len] = '\0';
}

PT_TEST(argv_passed_exactly)
{
	const char *argv[] = {
		SH, "-c", "for a in \"$@\"; do printf '[%s]' \"$a\"; done", "sh",
		"a b", "", "'q'", "\"dq\"", "back\\slash", "$HOME", "*", "  ",
		"new\nline", NULL
	};
	struct pt_strbuf out = PT_STRBUF_INIT;
	int status = -1;

	PT_REQUIRE(capture(argv, &out, &status) == 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK_STR(out.buf, "[a b][]['q'][\"dq\"][back\\slash][$HOME][*][  ]"
		     "[new\nline]");
	pt_strbuf_release(&out);
}

PT_TEST(exit_codes)
{
	int status = -1;

	PT_CHECK_INT(run_sh("exit 0", &status), 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK_INT(run_sh("exit 3", &status), 0);
	PT_CHECK_INT(status, 3);
	PT_CHECK_INT(run_sh("exit 255", &status), 0);
	PT_CHECK_INT(status, 255);
	/* The shell's own "command not found" convention. */
	PT_CHECK_INT(run_sh("exec 2>/dev/null; pt-no-such-program-3141", &status), 0);
	PT_CHECK_INT(status, 127);
}

PT_TEST(missing_program_is_not_found)
{
	const char *names[] = { "pt-no-such-program-3141", "/nonexistent/pt-prog",
				"./pt-no-such-program" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct pt_child c = PT_CHILD_INIT;
		struct pt_error err = PT_ERROR_INIT;
		int status = -7;

		PT_REQUIRE(pt_strvec_push(&c.args, names[i]) == 0);
		PT_CHECK_INT(pt_child_run(&c, &status, &err), PT_ENOTFOUND);
		PT_CHECK_INT(err.code, PT_ENOTFOUND);
		PT_CHECK(strstr(err.msg, names[i]) != NULL);
		PT_CHECK_INT(status, -7);
		PT_CHECK(pt_child_wait(&c, NULL, NULL) == PT_EINVAL);
		pt_child_release(&c);
	}
}

PT_TEST(not_executable_is_spawn_error)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/data.txt", pt_test_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	PT_REQUIRE(fd >= 0);
	close(fd);
	PT_REQUIRE(pt_strvec_push(&c.args, path) == 0);
	PT_CHECK_INT(pt_child_run(&c, NULL, &err), PT_ESPAWN);
	PT_CHECK(strstr(err.msg, "data.txt") != NULL);
	PT_CHECK(strstr(err.msg, strerror(EACCES)) != NULL);
	pt_child_release(&c);
}

PT_TEST(death_by_signal_is_128_plus_sig)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int status = -1;

	PT_CHECK_INT(run_sh("kill -TERM $$", &status), 0);
	PT_CHECK_INT(status, 128 + SIGTERM);
	PT_CHECK_INT(run_sh("kill -KILL $$", &status), 0);
	PT_CHECK_INT(status, 128 + SIGKILL);

	PT_REQUIRE(pt_strvec_pushl(&c.args, "sleep", "10", NULL) == 0);
	PT_REQUIRE(pt_child_start(&c, &err) == 0);
	PT_CHECK(c.pid > 0);
	PT_CHECK_INT(pt_child_kill(&c, SIGINT, &err), 0);
	PT_CHECK_INT(pt_child_wait(&c, &status, &err), 0);
	PT_CHECK_INT(status, 128 + SIGINT);
	/* Reaped: the status sticks and the pid may not be signalled. */
	status = -1;
	PT_CHECK_INT(pt_child_wait(&c, &status, &err), 0);
	PT_CHECK_INT(status, 128 + SIGINT);
	PT_CHECK_INT(pt_child_kill(&c, SIGTERM, &err), PT_EINVAL);
	pt_child_release(&c);
}

static const char *find_line(const char *text, const char *prefix)
{
	const char *p = text;
	size_t n = strlen(prefix);

	while (p && *p) {
		if (!strncmp(p, prefix, n))
			return p + n;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

PT_TEST(env_set_and_unset)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	int status = -1;

	PT_REQUIRE(setenv("PT_T_KEEP", "kept", 1) == 0);
	PT_REQUIRE(setenv("PT_T_GONE", "should not be seen", 1) == 0);
	PT_REQUIRE(setenv("PT_T_OVER", "old", 1) == 0);
	PT_REQUIRE(pt_strvec_pushl(&c.args, "/usr/bin/env", NULL) == 0);
	PT_REQUIRE(pt_strvec_pushl(&c.env, "PT_T_NEW=a value=with equals",
				   "PT_T_GONE", "PT_T_OVER=new", "PT_T_EMPTY=",
				   "PT_T_TWICE=1", "PT_T_TWICE=2",
				   "PT_T_NEVER", NULL) == 0);
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, NULL, 0, &out, NULL, &status, &err) == 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK(find_line(out.buf, "PT_T_KEEP=kept\n") != NULL);
	PT_CHECK(find_line(out.buf, "PT_T_NEW=a value=with equals\n") != NULL);
	PT_CHECK(find_line(out.buf, "PT_T_GONE=") == NULL);
	PT_CHECK(find_line(out.buf, "PT_T_OVER=new\n") != NULL);
	PT_CHECK(find_line(out.buf, "PT_T_OVER=old") == NULL);
	PT_CHECK(find_line(out.buf, "PT_T_EMPTY=\n") != NULL);
	PT_CHECK(find_line(out.buf, "PT_T_TWICE=2\n") != NULL);
	PT_CHECK(find_line(out.buf, "PT_T_TWICE=1") == NULL);
	PT_CHECK(find_line(out.buf, "PT_T_NEVER") == NULL);
	/* The parent's own environment is untouched. */
	PT_CHECK_STR(getenv("PT_T_GONE"), "should not be seen");
	PT_CHECK_STR(getenv("PT_T_OVER"), "old");
	pt_child_release(&c);
	pt_strbuf_release(&out);

	PT_REQUIRE(pt_strvec_pushl(&c.args, "/usr/bin/env", NULL) == 0);
	PT_REQUIRE(pt_strvec_push(&c.env, "=oops") == 0);
	PT_CHECK_INT(pt_child_run(&c, &status, &err), PT_EINVAL);
	pt_child_release(&c);
}

PT_TEST(working_directory)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	char real[PATH_MAX], script[PATH_MAX], want[PATH_MAX + 16], here[PATH_MAX];
	int status = -1;
	FILE *f;

	PT_REQUIRE(realpath(pt_test_tmpdir(), real) != NULL);
	PT_REQUIRE(getcwd(here, sizeof(here)) != NULL);
	PT_REQUIRE(pt_strvec_pushl(&c.args, "pwd", "-P", NULL) == 0);
	c.dir = pt_test_tmpdir();
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, NULL, 0, &out, NULL, &status, &err) == 0);
	snprintf(want, sizeof(want), "%s\n", real);
	PT_CHECK_STR(out.buf, want);
	pt_child_release(&c);
	pt_strbuf_reset(&out);

	/* A program named with a '/' is found relative to the new directory. */
	snprintf(script, sizeof(script), "%s/hello.sh", pt_test_tmpdir());
	f = fopen(script, "w");
	PT_REQUIRE(f != NULL);
	fputs("#!/bin/sh\necho \"hello from $(pwd -P)\"\n", f);
	fclose(f);
	PT_REQUIRE(chmod(script, 0755) == 0);
	PT_REQUIRE(pt_strvec_push(&c.args, "./hello.sh") == 0);
	c.dir = pt_test_tmpdir();
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, NULL, 0, &out, NULL, &status, &err) == 0);
	snprintf(want, sizeof(want), "hello from %s\n", real);
	PT_CHECK_STR(out.buf, want);
	pt_child_release(&c);

	/* The parent stays where it was. */
	PT_REQUIRE(getcwd(script, sizeof(script)) != NULL);
	PT_CHECK_STR(script, here);

	PT_REQUIRE(pt_strvec_push(&c.args, "/bin/true") == 0);
	c.dir = "/nonexistent/pt-dir";
	PT_CHECK_INT(pt_child_run(&c, &status, &err), PT_ESPAWN);
	PT_CHECK(strstr(err.msg, "/nonexistent/pt-dir") != NULL);
	pt_child_release(&c);
	pt_strbuf_release(&out);
}

PT_TEST(big_stdin_and_stdout_through_cat)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf in = PT_STRBUF_INIT, out = PT_STRBUF_INIT;
	int status = -1;

	fill(&in, (3u << 20) + 12345);
	PT_REQUIRE(pt_strvec_push(&c.args, "/bin/cat") == 0);
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, in.buf, in.len, &out, NULL, &status,
				    &err) == 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK_INT(out.len, in.len);
	PT_CHECK(out.len == in.len && memcmp(out.buf, in.buf, in.len) == 0);
	pt_child_release(&c);
	pt_strbuf_release(&in);
	pt_strbuf_release(&out);
}

PT_TEST(big_stderr_first_then_stdout)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf in = PT_STRBUF_INIT, out = PT_STRBUF_INIT;
	struct pt_strbuf errout = PT_STRBUF_INIT;
	char path[PATH_MAX];
	int status = -1;
	FILE *f;

	/* A reader that drained stdout before stderr would deadlock here. */
	fill(&in, 2u << 20);
	snprintf(path, sizeof(path), "%s/big", pt_test_tmpdir());
	f = fopen(path, "wb");
	PT_REQUIRE(f != NULL);
	PT_REQUIRE(fwrite(in.buf, 1, in.len, f) == in.len);
	fclose(f);
	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c",
				   "cat \"$1\" >&2; cat \"$1\"; cat \"$1\" >&2; exit 5",
				   "sh", path, NULL) == 0);
	PT_REQUIRE(pt_strbuf_addstr(&out, "kept:") == 0);
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, NULL, 0, &out, &errout, &status, &err) == 0);
	PT_CHECK_INT(status, 5);
	PT_CHECK_INT(out.len, 5 + in.len);
	PT_CHECK(!memcmp(out.buf, "kept:", 5) && !memcmp(out.buf + 5, in.buf, in.len));
	PT_CHECK_INT(errout.len, 2 * in.len);
	PT_CHECK(errout.len == 2 * in.len &&
		 !memcmp(errout.buf + in.len, in.buf, in.len));
	pt_child_release(&c);
	pt_strbuf_release(&in);
	pt_strbuf_release(&out);
	pt_strbuf_release(&errout);
}

PT_TEST(unread_stdin_is_dropped_without_sigpipe)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf in = PT_STRBUF_INIT, out = PT_STRBUF_INIT;
	int status = -1;

	fill(&in, 4u << 20);
	PT_REQUIRE(pt_strvec_pushl(&c.args, "/usr/bin/head", "-c", "10", NULL) == 0);
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, in.buf, in.len, &out, NULL, &status,
				    &err) == 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK_INT(out.len, 10);
	PT_CHECK(out.len == 10 && !memcmp(out.buf, in.buf, 10));
	pt_child_release(&c);
	pt_strbuf_release(&in);
	pt_strbuf_release(&out);
}

PT_TEST(pipes_by_hand_and_caller_fd)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	char path[PATH_MAX];
	int status = -1, fd;

	/* stdout to a pipe, read with the helper. */
	PT_REQUIRE(pt_strvec_pushl(&c.args, "ls", "-a", "/", NULL) == 0);
	c.out.mode = PT_IO_PIPE;
	PT_REQUIRE(pt_child_start(&c, &err) == 0);
	PT_CHECK(c.out.fd > 2);
	PT_CHECK(fcntl(c.out.fd, F_GETFD) & FD_CLOEXEC);
	PT_REQUIRE(pt_spawn_read_fd(c.out.fd, &out, &err) == 0);
	PT_CHECK_INT(pt_child_wait(&c, &status, &err), 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK(find_line(out.buf, "..\n") != NULL);
	pt_child_release(&c);
	pt_strbuf_reset(&out);

	/* stdin from a pipe written by hand, stdout to the caller's file. */
	snprintf(path, sizeof(path), "%s/out", pt_test_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	PT_REQUIRE(fd >= 0);
	PT_REQUIRE(pt_strvec_push(&c.args, "cat") == 0);
	c.in.mode = PT_IO_PIPE;
	c.out.mode = PT_IO_FD;
	c.timeout_ms = SAFETY_MS;
	c.out.fd = fd;
	PT_REQUIRE(pt_child_start(&c, &err) == 0);
	PT_CHECK(fcntl(c.in.fd, F_GETFD) & FD_CLOEXEC);
	PT_CHECK_INT(write(c.in.fd, "via pipe\n", 9), 9);
	close(c.in.fd);
	c.in.fd = -1;
	PT_CHECK_INT(pt_child_wait(&c, &status, &err), 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK(fcntl(fd, F_GETFD) >= 0); /* still the caller's */
	close(fd);
	pt_child_release(&c);
	fd = open(path, O_RDONLY);
	PT_REQUIRE(fd >= 0);
	PT_REQUIRE(pt_spawn_read_fd(fd, &out, &err) == 0);
	close(fd);
	PT_CHECK_STR(out.buf, "via pipe\n");
	pt_strbuf_release(&out);
}

static void slurp(const char *path, struct pt_strbuf *sb)
{
	int fd = open(path, O_RDONLY);

	PT_REQUIRE(fd >= 0);
	pt_strbuf_reset(sb);
	PT_REQUIRE(pt_spawn_read_fd(fd, sb, NULL) == 0);
	close(fd);
}

PT_TEST(swapped_stdout_and_stderr)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf got = PT_STRBUF_INIT;
	char a[PATH_MAX], b[PATH_MAX];
	int save1, save2, fa, fb, status = -1, ret;

	/* Our 1 is file a, our 2 is file b; the child gets them crossed
	 * ("2>&1 1>&2" done right needs the sources moved out of the way). */
	snprintf(a, sizeof(a), "%s/a", pt_test_tmpdir());
	snprintf(b, sizeof(b), "%s/b", pt_test_tmpdir());
	fa = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fb = open(b, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	PT_REQUIRE(fa >= 0 && fb >= 0);
	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c", "echo out; echo err >&2",
				   NULL) == 0);
	c.out.mode = PT_IO_FD;
	c.out.fd = 2;
	c.err.mode = PT_IO_FD;
	c.err.fd = 1;
	fflush(stdout);
	save1 = dup(1);
	save2 = dup(2);
	PT_REQUIRE(save1 >= 0 && save2 >= 0);
	dup2(fa, 1);
	dup2(fb, 2);
	ret = pt_child_run(&c, &status, &err);
	dup2(save1, 1);
	dup2(save2, 2);
	close(save1);
	close(save2);
	close(fa);
	close(fb);
	PT_CHECK_INT(ret, 0);
	PT_CHECK_INT(status, 0);
	slurp(a, &got);
	PT_CHECK_STR(got.buf, "err\n");
	slurp(b, &got);
	PT_CHECK_STR(got.buf, "out\n");
	pt_child_release(&c);
	pt_strbuf_release(&got);
}

PT_TEST(dev_null_streams)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	int status = -1;

	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c",
				   "readlink /proc/$$/fd/0 /proc/$$/fd/2; "
				   "echo noise >&2; cat", NULL) == 0);
	c.in.mode = PT_IO_NULL;
	c.err.mode = PT_IO_NULL;
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, NULL, 0, &out, NULL, &status, &err) == 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK_STR(out.buf, "/dev/null\n/dev/null\n");
	pt_child_release(&c);
	pt_strbuf_release(&out);
}

static unsigned long long status_mask(const char *text, const char *field)
{
	const char *p = find_line(text, field);

	return p ? strtoull(p, NULL, 16) : ~0ULL;
}

PT_TEST(signal_state_not_inherited)
{
	const char *argv[] = { "/bin/cat", "/proc/self/status", NULL };
	struct pt_strbuf out = PT_STRBUF_INIT;
	unsigned long long std = 0, blk, ign, mine;
	struct sigaction sa;
	sigset_t set;
	int status = -1, sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	PT_REQUIRE(sigaction(SIGINT, &sa, NULL) == 0);
	PT_REQUIRE(sigaction(SIGHUP, &sa, NULL) == 0);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	PT_REQUIRE(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
	PT_REQUIRE(capture(argv, &out, &status) == 0);
	PT_CHECK_INT(status, 0);
	for (sig = 1; sig < 32; sig++)
		std |= 1ULL << (sig - 1);
	blk = status_mask(out.buf, "SigBlk:\t");
	ign = status_mask(out.buf, "SigIgn:\t");
	PT_CHECK_INT(blk & std, 0);
	PT_CHECK_INT(ign & std, 0);
	/* The test would prove nothing if our own state were clean. */
	pt_strbuf_reset(&out);
	{
		FILE *f = fopen("/proc/self/status", "r");
		char line[256];

		PT_REQUIRE(f != NULL);
		while (fgets(line, sizeof(line), f))
			PT_REQUIRE(pt_strbuf_addstr(&out, line) == 0);
		fclose(f);
	}
	mine = status_mask(out.buf, "SigBlk:\t");
	PT_CHECK(mine & (1ULL << (SIGTERM - 1)));
	mine = status_mask(out.buf, "SigIgn:\t");
	PT_CHECK(mine & (1ULL << (SIGINT - 1)));
	pt_strbuf_release(&out);
}

PT_TEST(no_descriptor_leaks_into_child)
{
	struct pt_child other = PT_CHILD_INIT, c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT, allowed = PT_STRBUF_INIT;
	int status = -1, fd, n;

	/* Descriptors of ours the child must not see: another child's pipe
	 * ends and a close-on-exec file. */
	PT_REQUIRE(pt_strvec_push(&other.args, "/bin/cat") == 0);
	other.in.mode = PT_IO_PIPE;
	other.timeout_ms = SAFETY_MS;
	other.out.mode = PT_IO_PIPE;
	other.err.mode = PT_IO_NULL;
	PT_REQUIRE(pt_child_start(&other, &err) == 0);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	PT_REQUIRE(fd >= 0);
	/* Descriptors inherited from whoever ran us (a make jobserver, say)
	 * are not close-on-exec and legitimately pass through. */
	for (n = 3; n < 256; n++) {
		int flags = fcntl(n, F_GETFD);

		if (flags >= 0 && !(flags & FD_CLOEXEC))
			PT_REQUIRE(pt_strbuf_addf(&allowed, "%d ", n) == 0);
	}
	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c",
				   "n=3; while [ $n -lt 256 ]; do "
				   "[ -e /proc/self/fd/$n ] && printf '%s ' $n; "
				   "n=$((n+1)); done; exit 0", NULL) == 0);
	c.err.mode = PT_IO_FD; /* a duplicate of our 2 is made for it */
	c.err.fd = 2;
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, "x", 1, &out, NULL, &status, &err) == 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK_STR(out.buf, allowed.buf);
	pt_child_release(&c);
	close(fd);
	close(other.in.fd);
	other.in.fd = -1;
	PT_CHECK_INT(pt_child_wait(&other, &status, &err), 0);
	PT_CHECK_INT(status, 0);
	pt_child_release(&other);
	pt_strbuf_release(&out);
	pt_strbuf_release(&allowed);
}

PT_TEST(timeout_kills_sleep)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int status = -1;
	double t0, dt;

	PT_REQUIRE(pt_strvec_pushl(&c.args, "sleep", "10", NULL) == 0);
	c.timeout_ms = 300;
	t0 = now_s();
	PT_CHECK_INT(pt_child_run(&c, &status, &err), PT_ETIMEDOUT);
	dt = now_s() - t0;
	PT_CHECK_INT(err.code, PT_ETIMEDOUT);
	PT_CHECK(strstr(err.msg, "sleep") != NULL);
	PT_CHECK_INT(status, 128 + SIGKILL);
	PT_CHECK(dt >= 0.29);
	PT_CHECK(dt < 2.0);
	if (dt < 0.29 || dt >= 2.0)
		printf("# took %.3f s\n", dt);
	/* Asking again gives the same answer. */
	PT_CHECK_INT(pt_child_wait(&c, &status, NULL), PT_ETIMEDOUT);
	pt_child_release(&c);

	/* A child that ends in time is not affected. */
	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c", "sleep 0.1; exit 4", NULL) == 0);
	c.timeout_ms = 5000;
	PT_CHECK_INT(pt_child_run(&c, &status, &err), 0);
	PT_CHECK_INT(status, 4);
	pt_child_release(&c);
}

PT_TEST(timeout_stops_capture)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	int status = -1;
	double t0, dt;

	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c", "echo started; exec sleep 10",
				   NULL) == 0);
	c.timeout_ms = 300;
	t0 = now_s();
	PT_CHECK_INT(pt_child_capture(&c, NULL, 0, &out, NULL, &status, &err),
		     PT_ETIMEDOUT);
	dt = now_s() - t0;
	PT_CHECK_STR(out.buf, "started\n");
	PT_CHECK_INT(status, 128 + SIGKILL);
	PT_CHECK(dt >= 0.29 && dt < 2.0);
	pt_child_release(&c);
	pt_strbuf_release(&out);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

PT_TEST(signals_interrupting_the_wait)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf in = PT_STRBUF_INIT, out = PT_STRBUF_INIT;
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;
	int status = -1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: calls fail with EINTR */
	sigemptyset(&sa.sa_mask);
	PT_REQUIRE(sigaction(SIGALRM, &sa, NULL) == 0);
	PT_REQUIRE(setitimer(ITIMER_REAL, &it, NULL) == 0);

	PT_CHECK_INT(run_sh("sleep 0.3; exit 6", &status), 0);
	PT_CHECK_INT(status, 6);

	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c", "sleep 0.2; exit 7", NULL) == 0);
	c.timeout_ms = 10000;
	PT_CHECK_INT(pt_child_run(&c, &status, &err), 0);
	PT_CHECK_INT(status, 7);
	pt_child_release(&c);

	fill(&in, 2u << 20);
	PT_REQUIRE(pt_strvec_pushl(&c.args, SH, "-c", "sleep 0.1; cat", NULL) == 0);
	c.timeout_ms = SAFETY_MS;
	PT_REQUIRE(pt_child_capture(&c, in.buf, in.len, &out, NULL, &status,
				    &err) == 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK(out.len == in.len && !memcmp(out.buf, in.buf, in.len));
	pt_child_release(&c);

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	PT_CHECK(alarms > 20);
	pt_strbuf_release(&in);
	pt_strbuf_release(&out);
}

PT_TEST(misuse_is_rejected)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	int status;

	PT_CHECK_INT(pt_child_start(&c, &err), PT_EINVAL); /* no args */
	PT_CHECK_INT(pt_child_wait(&c, &status, &err), PT_EINVAL);
	PT_CHECK_INT(pt_child_kill(&c, SIGTERM, &err), PT_EINVAL);
	PT_REQUIRE(pt_strvec_push(&c.args, "/bin/true") == 0);
	c.out.mode = PT_IO_PIPE;
	PT_CHECK_INT(pt_child_run(&c, &status, &err), PT_EINVAL);
	PT_CHECK_INT(pt_child_capture(&c, NULL, 0, NULL, NULL, &status, &err),
		     PT_EINVAL);
	c.out.mode = PT_IO_FD;
	c.out.fd = -1;
	PT_CHECK_INT(pt_child_run(&c, &status, &err), PT_EINVAL);
	c.out.mode = PT_IO_INHERIT;
	PT_CHECK_INT(pt_child_run(&c, &status, &err), 0);
	PT_CHECK_INT(status, 0);
	PT_CHECK_INT(pt_child_start(&c, &err), PT_EINVAL); /* twice */
	PT_CHECK_INT(pt_child_capture(&c, NULL, 0, &out, NULL, &status, &err),
		     PT_EINVAL);
	pt_child_release(&c);
	PT_CHECK(c.args.nr == 0 && c.pid == -1);
	pt_strbuf_release(&out);
}

PT_SUITE(spawn,
	 { "argv passed exactly", argv_passed_exactly },
	 { "exit codes", exit_codes },
	 { "missing program is not found", missing_program_is_not_found },
	 { "not executable is a spawn error", not_executable_is_spawn_error },
	 { "death by signal is 128+sig", death_by_signal_is_128_plus_sig },
	 { "env set and unset", env_set_and_unset },
	 { "working directory", working_directory },
	 { "3 MiB through cat both ways", big_stdin_and_stdout_through_cat },
	 { "big stderr before stdout", big_stderr_first_then_stdout },
	 { "unread stdin dropped without SIGPIPE", unread_stdin_is_dropped_without_sigpipe },
	 { "pipes by hand and caller fds", pipes_by_hand_and_caller_fd },
	 { "swapped stdout and stderr", swapped_stdout_and_stderr },
	 { "/dev/null streams", dev_null_streams },
	 { "signal state not inherited", signal_state_not_inherited },
	 { "no descriptor leaks", no_descriptor_leaks_into_child },
	 { "timeout kills sleep", timeout_kills_sleep },
	 { "timeout stops capture", timeout_stops_capture },
	 { "EINTR while waiting", signals_interrupting_the_wait },
	 { "misuse is rejected", misuse_is_rejected });
