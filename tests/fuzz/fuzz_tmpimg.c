/* Fuzz target for the .tmp image parser and comparison (libFuzzer entry
 * point; tests/fuzz/driver.c runs it without libFuzzer). Invariants checked
 * beyond "no crash, no leak, no undefined behaviour": a parsed image is
 * exactly as big as its header says, compares equal to itself, and differs
 * from itself after one perturbation. */
#include "protune/pt_tmpimg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT, b = PT_TMPIMG_INIT;
	struct pt_tmpimg_tol tol = { 1e-6, 1e-6 };
	struct pt_error err = PT_ERROR_INIT;

	if (pt_tmpimg_parse(&a, data, size, "fuzz", &err) != 0) {
		if (a.data != NULL || err.msg[0] == '\0')
			abort();
		return 0;
	}
	if (20 + a.nelem * a.elem_size != size)
		abort();
	if (pt_tmpimg_parse(&b, data, size, "fuzz", &err) != 0)
		abort();
	if (pt_tmpimg_compare(&a, &b, NULL, NULL, &err) != 0)
		abort();
	(void)pt_tmpimg_compare(&a, &b, &tol, NULL, &err);
	if (a.nelem > 0) {
		size_t i = (size_t)data[size - 1] % a.nelem;
		if (pt_tmpimg_perturb(&b, i, &err) != 0)
			abort();
		if (pt_tmpimg_compare(&a, &b, NULL, NULL, &err) != PT_EMISMATCH)
			abort();
	}
	pt_tmpimg_release(&a);
	pt_tmpimg_release(&b);
	return 0;
}
