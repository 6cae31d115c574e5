/* pt_test.h: protune's small unit-test framework.
 *
 * A test file defines cases with PT_TEST(name) { ... } and lists them in a
 * suite:
 *     PT_SUITE(strbuf, { "grows", grows }, ...);
 * and the suite is added to the table in pt_test.c. Every case runs in a
 * forked child, so a crash fails that case only. Output is TAP; the plan
 * comes last. `unit-tests [SUBSTRING]` runs the cases whose "suite: name"
 * contains SUBSTRING.
 *
 * Checks record a failure with file and line and let the case go on;
 * PT_REQUIRE stops the case.
 */
#ifndef PT_TEST_H
#define PT_TEST_H

#include <stddef.h>

struct pt_test_case {
	const char *name;
	void (*fn)(void);
};

struct pt_test_suite {
	const char *name;
	const struct pt_test_case *cases;
	size_t ncases;
};

#define PT_TEST(fn) static void fn(void)
#define PT_SUITE(sname, ...)                                                 \
	static const struct pt_test_case sname##_cases[] = { __VA_ARGS__ };   \
	const struct pt_test_suite pt_suite_##sname = {                       \
		#sname, sname##_cases,                                         \
		sizeof(sname##_cases) / sizeof(sname##_cases[0]) }

/* Returns cond; prints a diagnostic and marks the case failed if false. */
int pt_test_check(int cond, const char *expr, const char *file, int line);
int pt_test_check_str(const char *got, const char *want, const char *expr,
		      const char *file, int line);
int pt_test_check_int(long long got, long long want, const char *expr,
		      const char *file, int line);
void pt_test_abort(void);

/* The example model tests/unit/data/NAME.model (found through PT_SRCDIR
 * or this file's path), parsed and hashed; NULL (with a diagnostic) when
 * it cannot be read. pt_model_free() it. */
struct pt_model;
struct pt_model *pt_test_example(const char *name);

/* The same for the model of example NAME at benchmark size, as the
 * first machine's training data has it (tuner/train/models/NAME.model). */
struct pt_model *pt_test_bench_example(const char *name);

/* A fresh empty directory for this case (removed by the runner). */
const char *pt_test_tmpdir(void);

#define PT_CHECK(c) pt_test_check(!!(c), #c, __FILE__, __LINE__)
#define PT_CHECK_STR(got, want) \
	pt_test_check_str((got), (want), #got, __FILE__, __LINE__)
#define PT_CHECK_INT(got, want) \
	pt_test_check_int((long long)(got), (long long)(want), #got, __FILE__, __LINE__)
#define PT_REQUIRE(c) \
	do { if (!PT_CHECK(c)) pt_test_abort(); } while (0)

#endif
