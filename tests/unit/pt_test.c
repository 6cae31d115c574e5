/* The unit-test runner: see pt_test.h. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "pt_test.h"

#include "protune/pt_model.h"

#include <ftw.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern const struct pt_test_suite pt_suite_error, pt_suite_strbuf,
	pt_suite_path, pt_suite_tmpimg, pt_suite_jobserver, pt_suite_lock,
	pt_suite_strvec, pt_suite_spawn, pt_suite_model, pt_suite_sched,
	pt_suite_key, pt_suite_sched_check, pt_suite_randsched, pt_suite_proto,
	pt_suite_measure, pt_suite_cache, pt_suite_store, pt_suite_config,
	pt_suite_genargs, pt_suite_space, pt_suite_footprint, pt_suite_gbt,
	pt_suite_cost, pt_suite_search, pt_suite_hosttarget;

static const struct pt_test_suite *const suites[] = {
	&pt_suite_error, &pt_suite_strbuf, &pt_suite_path, &pt_suite_tmpimg,
	&pt_suite_jobserver, &pt_suite_lock, &pt_suite_strvec, &pt_suite_spawn,
	&pt_suite_model, &pt_suite_sched, &pt_suite_key, &pt_suite_sched_check,
	&pt_suite_randsched, &pt_suite_proto, &pt_suite_measure,
	&pt_suite_cache, &pt_suite_store, &pt_suite_config, &pt_suite_genargs,
	&pt_suite_space, &pt_suite_footprint, &pt_suite_gbt, &pt_suite_cost, &pt_suite_search,
	&pt_suite_hosttarget,
};

static int failed;
static char tmpdir[256];

int pt_test_check(int cond, const char *expr, const char *file, int line)
{
	if (!cond) {
		printf("# %s:%d: check failed: %s\n", file, line, expr);
		failed = 1;
	}
	return cond;
}

int pt_test_check_str(const char *got, const char *want, const char *expr,
		      const char *file, int line)
{
	if (got && want && strcmp(got, want) == 0)
		return 1;
	printf("# %s:%d: %s\n#   got:  %s%s%s\n#   want: \"%s\"\n", file, line,
	       expr, got ? "\"" : "", got ? got : "NULL", got ? "\"" : "",
	       want ? want : "NULL");
	failed = 1;
	return 0;
}

int pt_test_check_int(long long got, long long want, const char *expr,
		      const char *file, int line)
{
	if (got == want)
		return 1;
	printf("# %s:%d: %s is %lld, want %lld\n", file, line, expr, got, want);
	failed = 1;
	return 0;
}

void pt_test_abort(void)
{
	fflush(stdout);
	_exit(1);
}

const char *pt_test_tmpdir(void)
{
	return tmpdir;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static int run_case(const struct pt_test_case *tc)
{
	pid_t pid;
	int status;

	snprintf(tmpdir, sizeof(tmpdir), "%s/pt-unit.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("# cannot create a temporary directory\n");
		return 0;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("# fork failed\n");
		return 0;
	}
	if (pid == 0) {
		failed = 0;
		tc->fn();
		fflush(stdout);
		_exit(failed ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		;
	if (nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		printf("# could not remove %s\n", tmpdir);
	if (WIFSIGNALED(status))
		printf("# killed by signal %d\n", WTERMSIG(status));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	int n = 0, nfail = 0;
	size_t s, c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (s = 0; s < sizeof(suites) / sizeof(suites[0]); s++) {
		for (c = 0; c < suites[s]->ncases; c++) {
			const struct pt_test_case *tc = &suites[s]->cases[c];
			char full[256];
			int ok;

			snprintf(full, sizeof(full), "%s: %s", suites[s]->name,
				 tc->name);
			if (filter && !strstr(full, filter))
				continue;
			ok = run_case(tc);
			printf("%sok %d - unit %s\n", ok ? "" : "not ", ++n, full);
			nfail += !ok;
		}
	}
	printf("1..%d\n", n);
	return nfail ? 1 : 0;
}

/* The model DIR/NAME.model, DIR relative to the source tree. */
static struct pt_model *load_model(const char *dir, const char *name)
{
	const char *src = getenv("PT_SRCDIR"), *slash = strrchr(__FILE__, '/');
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	char path[4096], *text = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;

	if (src && *src)
		snprintf(path, sizeof(path), "%s/%s/%s.model", src, dir, name);
	else    /* this file is tests/unit/pt_test.c */
		snprintf(path, sizeof(path), "%.*s%s../../%s/%s.model",
			 slash ? (int)(slash - __FILE__) : 0, __FILE__,
			 slash ? "/" : "", dir, name);
	if (!(f = fopen(path, "r"))) {
		printf("# cannot open %s\n", path);
		return NULL;
	}
	do {
		if (len + 4096 > cap) {
			char *t = realloc(text, cap = 2 * cap + 4096);

			if (!t)
				break;
			text = t;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	if (text && pt_model_parse(text, len, path, &m, &err))
		printf("# %s\n", err.msg);
	free(text);
	if (m && pt_model_hash(m)) {
		pt_model_free(m);
		m = NULL;
	}
	return m;
}

struct pt_model *pt_test_example(const char *name)
{
	return load_model("tests/unit/data", name);
}

struct pt_model *pt_test_bench_example(const char *name)
{
	return load_model("tuner/train/models", name);
}
