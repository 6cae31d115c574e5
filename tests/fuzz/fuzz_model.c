/* Fuzz target for the model text parser (libFuzzer entry point;
 * tests/fuzz/driver.c runs it without libFuzzer). Invariants beyond "no
 * crash, no leak, no undefined behaviour": a failure leaves *out NULL and
 * says why; a success is canonical, so printing it with labels gives back
 * exactly the input; the hashed form (no labels) parses and prints to
 * itself; canonicalizing a parsed stage changes nothing; hashing works and
 * is deterministic. */
#include "protune/pt_model.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *print(const struct pt_model *m, unsigned flags, size_t *len)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	if (pt_model_print(m, flags, &sb) != 0)
		abort();
	return pt_strbuf_detach(&sb, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = (struct pt_model *)&err, *m2 = NULL;
	char *text, *bare, *bare2;
	size_t len, blen, blen2;
	uint8_t key[16];
	int i;

	if (pt_model_parse((const char *)data, size, "fuzz", &m, &err) != 0) {
		if (m != NULL || err.msg[0] == '\0' || err.code >= 0)
			abort();
		return 0;
	}
	text = print(m, PT_MODEL_PRINT_LABELS, &len);
	if (len != size || memcmp(text, data, size) != 0)
		abort();
	bare = print(m, 0, &blen);
	if (pt_model_parse(bare, blen, "bare", &m2, &err) != 0)
		abort();
	bare2 = print(m2, PT_MODEL_PRINT_LABELS, &blen2);
	if (blen2 != blen || memcmp(bare, bare2, blen) != 0)
		abort();
	for (i = 0; i < m2->nstages; i++)
		if (pt_stage_canonicalize(&m2->stages[i]) != 0)
			abort();
	free(bare2);
	bare2 = print(m2, 0, &blen2);
	if (blen2 != blen || memcmp(bare, bare2, blen) != 0)
		abort();
	if (pt_model_hash(m) != 0 || pt_model_hash(m2) != 0 ||
	    memcmp(m->key, m2->key, 16) != 0)
		abort();
	memcpy(key, m->key, 16);
	if (pt_model_hash(m) != 0 || memcmp(key, m->key, 16) != 0)
		abort();
	for (i = 0; i < m->nstages; i++)
		if (memcmp(m->stages[i].hash, m2->stages[i].hash, 16) != 0)
			abort();
	free(text);
	free(bare);
	free(bare2);
	pt_model_free(m);
	pt_model_free(m2);
	return 0;
}
