/* Fuzz target for the cost model file parser (pt_cost.h, with the trees of
 * pt_gbt.h inside; libFuzzer entry point, tests/fuzz/driver.c runs it
 * without libFuzzer). Invariants beyond "no crash, no leak, no undefined
 * behaviour": a failure leaves *out NULL and says why; a success writes
 * back text that parses again and writes the same bytes, and predicts the
 * same for both. */
#include "protune/pt_cost.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cost *c = (struct pt_cost *)&err, *c2 = NULL;
	struct pt_strbuf a = PT_STRBUF_INIT, b = PT_STRBUF_INIT;
	double terms[PT_TERM_COUNT];
	int k;

	if (pt_cost_parse((const char *)data, size, "fuzz", &c, &err) != 0) {
		if (c != NULL || err.msg[0] == '\0' || err.code >= 0)
			abort();
		return 0;
	}
	if (pt_cost_write(c, &a) != 0 ||
	    pt_cost_parse(a.buf, a.len, "again", &c2, &err) != 0 ||
	    pt_cost_write(c2, &b) != 0 || a.len != b.len ||
	    memcmp(a.buf, b.buf, a.len) != 0)
		abort();
	for (k = 0; k < PT_TERM_COUNT; k++)
		terms[k] = (double)(k * 1000 + 1);
	{
		double p1 = pt_cost_predict(c, terms);
		double p2 = pt_cost_predict(c2, terms);

		if (memcmp(&p1, &p2, sizeof(p1)) != 0)
			abort();
	}
	pt_strbuf_release(&a);
	pt_strbuf_release(&b);
	pt_cost_free(c);
	pt_cost_free(c2);
	return 0;
}
