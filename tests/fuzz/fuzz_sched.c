/* Fuzz target for the schedule text parser (libFuzzer entry point;
 * tests/fuzz/driver.c runs it without libFuzzer). Invariants beyond "no
 * crash, no leak, no undefined behaviour": a failure leaves *out NULL and
 * says why; a success is canonical, so printing it gives back exactly the
 * input, and so does printing a deep copy, which re-parses. */
#include "protune/pt_sched.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *print(const struct pt_sched *s, size_t *len)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	if (pt_sched_print(s, &sb) != 0)
		abort();
	return pt_strbuf_detach(&sb, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_sched *s = (struct pt_sched *)&err, *c, *s2 = NULL;
	char *text, *text2;
	size_t len, len2;

	if (pt_sched_parse((const char *)data, size, "fuzz", &s, &err) != 0) {
		if (s != NULL || err.msg[0] == '\0' || err.code >= 0)
			abort();
		return 0;
	}
	text = print(s, &len);
	if (len != size || memcmp(text, data, size) != 0)
		abort();
	c = pt_sched_copy(s);
	if (!c)
		abort();
	pt_sched_free(s);
	text2 = print(c, &len2);
	if (len2 != len || memcmp(text, text2, len) != 0)
		abort();
	if (pt_sched_parse(text2, len2, "again", &s2, &err) != 0)
		abort();
	free(text);
	free(text2);
	pt_sched_free(c);
	pt_sched_free(s2);
	return 0;
}
