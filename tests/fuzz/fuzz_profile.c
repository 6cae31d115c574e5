/* Fuzz target for the reader of Halide's profiler report in RunGen's output
 * (pt_measure_parse_profile(); libFuzzer entry point, tests/fuzz/driver.c
 * runs it without libFuzzer). Invariants beyond "no crash, no undefined
 * behaviour": a success gives Funcs with non-empty one-line names and
 * finite, non-negative times and counts; a failure is PT_EFORMAT and gives
 * nothing; reading is deterministic. */
#include "protune/pt_measure.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sane(double v)
{
	return isfinite(v) && v >= 0;
}

static void check(const char *s)
{
	struct pt_measure_func *f = NULL, *g = NULL;
	double heap = -1, heap2 = -1;
	int n = -1, n2 = -1, i, ret;

	ret = pt_measure_parse_profile(s, &f, &n, &heap);
	if (ret == PT_ENOMEM)
		return;
	if (ret == 0) {
		if (n < 0 || (n > 0 && !f) || !sane(heap))
			abort();
		for (i = 0; i < n; i++) {
			const struct pt_measure_func *x = &f[i];

			if (!memchr(x->name, '\0', sizeof(x->name)) ||
			    !x->name[0] || strchr(x->name, '\n') ||
			    !sane(x->ms) || !sane(x->allocs) || x->share != 0)
				abort();
		}
	} else if (ret != PT_EFORMAT || f || n != 0 || heap != 0) {
		abort();
	}
	if (pt_measure_parse_profile(s, &g, &n2, &heap2) != ret || n2 != n ||
	    memcmp(&heap, &heap2, sizeof(heap)) != 0 ||
	    (n > 0 && memcmp(f, g, (size_t)n * sizeof(*f)) != 0))
		abort();
	free(f);
	free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check(s);
	free(s);
	return 0;
}
