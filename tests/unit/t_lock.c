#include "pt_test.h"
#include "protune/pt_lock.h"
#include "protune/pt_time.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NAME "bench.lock"

static pid_t holder(void)
{
	pid_t pid = -1;

	PT_CHECK_INT(pt_lock_holder(pt_test_tmpdir(), NAME, &pid, NULL), 0);
	return pid;
}

/* Run `fn` in a child; true if every check there passed. */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	PT_REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(fn() ? 0 : 1);
	PT_REQUIRE(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

PT_TEST(acquire_release_and_holder)
{
	struct pt_lock lk = PT_LOCK_INIT;
	struct stat st;
	char path[512];

	PT_CHECK_INT(holder(), 0); /* no file yet */
	PT_REQUIRE(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL) == 0);
	PT_CHECK(lk.fd >= 0);
	PT_CHECK_INT(holder(), getpid());
	snprintf(path, sizeof(path), "%s/%s", pt_test_tmpdir(), NAME);
	PT_REQUIRE(stat(path, &st) == 0);
	PT_CHECK_INT(st.st_mode & 0777, 0666);
	pt_lock_release(&lk);
	PT_CHECK_INT(lk.fd, -1);
	PT_CHECK_INT(holder(), 0);
	PT_CHECK(stat(path, &st) == 0); /* the file stays */
	pt_lock_release(&lk);           /* harmless */
	PT_REQUIRE(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, -1, NULL) == 0);
	pt_lock_release(&lk);
}

static pid_t parent_pid;

static int child_finds_lock_busy(void)
{
	struct pt_lock lk = PT_LOCK_INIT;
	long long t0, dt;
	int ok = 1;

	t0 = pt_time_now_ms();
	ok &= PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL),
			   PT_LOCK_BUSY);
	dt = pt_time_now_ms() - t0;
	ok &= PT_CHECK(dt < 50);
	ok &= PT_CHECK_INT(lk.fd, -1);
	t0 = pt_time_now_ms();
	ok &= PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 300, NULL),
			   PT_LOCK_BUSY);
	dt = pt_time_now_ms() - t0;
	if (!PT_CHECK(dt >= 295 && dt < 800)) {
		printf("#   gave up after %lld ms\n", dt);
		ok = 0;
	}
	ok &= PT_CHECK_INT(holder(), parent_pid);
	return ok;
}

PT_TEST(held_lock_is_busy_for_another_process)
{
	struct pt_lock lk = PT_LOCK_INIT;

	parent_pid = getpid();
	PT_REQUIRE(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL) == 0);
	PT_CHECK(in_child(child_finds_lock_busy));
	pt_lock_release(&lk);
}

PT_TEST(lock_is_not_recursive)
{
	struct pt_lock a = PT_LOCK_INIT, b = PT_LOCK_INIT;
	struct pt_error err = PT_ERROR_INIT;

	PT_REQUIRE(pt_lock_acquire(&a, pt_test_tmpdir(), NAME, 0, &err) == 0);
	PT_CHECK_INT(pt_lock_acquire(&b, pt_test_tmpdir(), NAME, 50, &err),
		     PT_LOCK_BUSY);
	PT_CHECK_INT(pt_lock_acquire(&a, pt_test_tmpdir(), NAME, 0, &err),
		     PT_EINVAL);
	PT_CHECK_STR(err.msg, "lock: already held");
	pt_lock_release(&a);
	PT_CHECK_INT(pt_lock_acquire(&b, pt_test_tmpdir(), NAME, 0, &err), 0);
	pt_lock_release(&b);
}

/* A child takes the lock, says so on `ready`, then waits for `go`. */
static pid_t spawn_holder(int ready[2], int go[2], int hold_ms)
{
	pid_t pid;

	PT_REQUIRE(pipe(ready) == 0 && pipe(go) == 0);
	pid = fork();
	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		struct pt_lock lk = PT_LOCK_INIT;
		char c = 0;

		if (pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL) != 0)
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		if (hold_ms < 0) {
			(void)!read(go[0], &c, 1);
		} else {
			struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		_exit(0); /* without pt_lock_release: exit drops the lock */
	}
	return pid;
}

static void wait_ready(int ready[2])
{
	char c;

	PT_REQUIRE(read(ready[0], &c, 1) == 1);
}

PT_TEST(lock_dies_with_a_killed_holder)
{
	struct pt_lock lk = PT_LOCK_INIT;
	int ready[2], go[2], status;
	pid_t pid;

	pid = spawn_holder(ready, go, -1);
	wait_ready(ready);
	PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL),
		     PT_LOCK_BUSY);
	PT_CHECK_INT(holder(), pid);
	PT_REQUIRE(kill(pid, SIGKILL) == 0);
	PT_REQUIRE(waitpid(pid, &status, 0) == pid);
	PT_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* The dead holder's pid is still in the file but is not reported. */
	PT_CHECK_INT(holder(), 0);
	PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL), 0);
	PT_CHECK_INT(holder(), getpid());
	pt_lock_release(&lk);
}

PT_TEST(lock_is_free_after_the_holder_exits)
{
	struct pt_lock lk = PT_LOCK_INIT;
	int ready[2], go[2], status;
	pid_t pid;

	pid = spawn_holder(ready, go, -1);
	wait_ready(ready);
	PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL),
		     PT_LOCK_BUSY);
	PT_REQUIRE(write(go[1], "g", 1) == 1);
	PT_REQUIRE(waitpid(pid, &status, 0) == pid);
	PT_CHECK_INT(status, 0);
	PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 0, NULL), 0);
	pt_lock_release(&lk);
}

PT_TEST(waits_end_when_the_holder_lets_go)
{
	struct pt_lock lk = PT_LOCK_INIT;
	int ready[2], go[2];
	long long t0, dt;
	pid_t pid;

	/* Blocking wait. */
	pid = spawn_holder(ready, go, 200);
	wait_ready(ready);
	t0 = pt_time_now_ms();
	PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, -1, NULL), 0);
	dt = pt_time_now_ms() - t0;
	PT_CHECK(dt >= 150 && dt < 1000);
	pt_lock_release(&lk);
	waitpid(pid, NULL, 0);

	/* Timed wait, freed before the deadline: at most ~50 ms late. */
	pid = spawn_holder(ready, go, 200);
	wait_ready(ready);
	t0 = pt_time_now_ms();
	PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NAME, 2000, NULL), 0);
	dt = pt_time_now_ms() - t0;
	if (!PT_CHECK(dt >= 150 && dt < 600))
		printf("#   got it after %lld ms\n", dt);
	pt_lock_release(&lk);
	waitpid(pid, NULL, 0);
}

/* Shared holders coexist; an exclusive one excludes them and they it; a
 * shared holder records no pid, and releasing it leaves the exclusive
 * holder's pid alone. */
PT_TEST(shared_and_exclusive)
{
	struct pt_lock a = PT_LOCK_INIT, b = PT_LOCK_INIT, x = PT_LOCK_INIT;
	const char *dir = pt_test_tmpdir();
	pid_t pid = 1;

	PT_CHECK_INT(pt_lock_acquire_shared(&a, dir, "l", 0, NULL), 0);
	PT_CHECK_INT(pt_lock_acquire_shared(&b, dir, "l", 0, NULL), 0);
	PT_CHECK_INT(pt_lock_holder(dir, "l", &pid, NULL), 0);
	PT_CHECK_INT(pid, 0);
	PT_CHECK_INT(pt_lock_acquire(&x, dir, "l", 0, NULL), PT_LOCK_BUSY);
	PT_CHECK_INT(pt_lock_acquire(&x, dir, "l", 30, NULL), PT_LOCK_BUSY);
	pt_lock_release(&a);
	PT_CHECK_INT(pt_lock_acquire(&x, dir, "l", 0, NULL), PT_LOCK_BUSY);
	pt_lock_release(&b);
	PT_CHECK_INT(pt_lock_acquire(&x, dir, "l", 0, NULL), 0);
	PT_CHECK_INT(pt_lock_acquire_shared(&a, dir, "l", 0, NULL),
		     PT_LOCK_BUSY);
	PT_CHECK_INT(pt_lock_holder(dir, "l", &pid, NULL), 0);
	PT_CHECK_INT(pid, getpid());
	pt_lock_release(&x);
	PT_CHECK_INT(pt_lock_acquire_shared(&a, dir, "l", 0, NULL), 0);
	pt_lock_release(&a);
}

/* An exclusive waiter is not overtaken by shared holders that come after
 * it (the turnstile): while a child waits for the lock that the parent
 * holds shared, a new shared request finds it busy; the child gets the
 * lock as soon as the parent lets go, and shared holders after it. (The
 * child is forked before the parent takes the lock: a forked child
 * shares its parent's locks.) */
PT_TEST(exclusive_waiter_goes_first)
{
	struct pt_lock a = PT_LOCK_INIT, b = PT_LOCK_INIT;
	const char *dir = pt_test_tmpdir();
	int start[2], got[2], go[2], queued = 0, status;
	long long t0;
	char c;
	pid_t pid;

	PT_REQUIRE(pipe(start) == 0 && pipe(got) == 0 && pipe(go) == 0);
	pid = fork();
	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		struct pt_lock x = PT_LOCK_INIT;

		if (read(start[0], &c, 1) != 1)
			_exit(2);
		if (pt_lock_acquire(&x, dir, "fair", -1, NULL) != 0)
			_exit(3);
		if (write(got[1], "x", 1) != 1)
			_exit(4);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	PT_REQUIRE(pt_lock_acquire_shared(&a, dir, "fair", 0, NULL) == 0);
	PT_REQUIRE(write(start[1], "s", 1) == 1);
	/* Until the child queues, shared requests still succeed. */
	t0 = pt_time_now_ms();
	while (!queued && pt_time_now_ms() - t0 < 5000) {
		int r = pt_lock_acquire_shared(&b, dir, "fair", 0, NULL);

		if (r == PT_LOCK_BUSY)
			queued = 1;
		else if (PT_CHECK_INT(r, 0))
			pt_lock_release(&b);
		else
			break;
		if (!queued)
			pt_time_sleep_ms(5);
	}
	PT_CHECK(queued);
	PT_CHECK_INT(pt_lock_acquire_shared(&b, dir, "fair", 60, NULL),
		     PT_LOCK_BUSY);
	pt_lock_release(&a);
	PT_REQUIRE(read(got[0], &c, 1) == 1);
	PT_CHECK_INT(pt_lock_acquire_shared(&b, dir, "fair", 0, NULL),
		     PT_LOCK_BUSY);
	PT_REQUIRE(write(go[1], "g", 1) == 1);
	PT_REQUIRE(waitpid(pid, &status, 0) == pid);
	PT_CHECK_INT(status, 0);
	PT_CHECK_INT(pt_lock_acquire_shared(&b, dir, "fair", 0, NULL), 0);
	pt_lock_release(&b);
	close(start[0]);
	close(start[1]);
	close(got[0]);
	close(got[1]);
	close(go[0]);
	close(go[1]);
}

PT_TEST(bad_arguments_and_missing_directory)
{
	struct pt_lock lk = PT_LOCK_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char dir[512], want[700];
	pid_t pid = 1;

	PT_CHECK_INT(pt_lock_acquire(&lk, "", NAME, 0, &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "lock: empty directory or name");
	PT_CHECK_INT(pt_lock_acquire(&lk, pt_test_tmpdir(), NULL, 0, &err), PT_EINVAL);
	snprintf(dir, sizeof(dir), "%s/missing", pt_test_tmpdir());
	PT_CHECK_INT(pt_lock_acquire(&lk, dir, NAME, -1, &err), PT_EIO);
	snprintf(want, sizeof(want), "%s/%s: cannot open lock file: %s", dir, NAME,
		 strerror(ENOENT));
	PT_CHECK_STR(err.msg, want);
	PT_CHECK_INT(lk.fd, -1);
	PT_CHECK_INT(pt_lock_holder(dir, NAME, &pid, &err), 0);
	PT_CHECK_INT(pid, 0);
}

PT_SUITE(lock,
	{ "acquire, release, holder", acquire_release_and_holder },
	{ "held lock is busy for another process", held_lock_is_busy_for_another_process },
	{ "lock is not recursive", lock_is_not_recursive },
	{ "shared and exclusive holders", shared_and_exclusive },
	{ "an exclusive waiter goes first", exclusive_waiter_goes_first },
	{ "lock dies with a killed holder", lock_dies_with_a_killed_holder },
	{ "lock is free after the holder exits", lock_is_free_after_the_holder_exits },
	{ "waits end when the holder lets go", waits_end_when_the_holder_lets_go },
	{ "bad arguments and a missing directory", bad_arguments_and_missing_directory },
);
