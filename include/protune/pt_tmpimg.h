/* pt_tmpimg.h: the ".tmp" image files that Halide's RunGen reads and writes.
 *
 * Format (ImageStack's, as written by Halide's halide_image_io.h): five
 * native-endian int32 values, extents of dimensions 0..3 (each > 0, unused
 * ones 1) and a type code, followed by the elements in planar order
 * (dimension 0 fastest). Type codes: 0 float32, 1 float64, 2 uint8, 3 int8,
 * 4 uint16, 5 int16, 6 uint32, 7 int32, 8 uint64, 9 int64.
 *
 * Used by the correctness harness (reference vs scheduled outputs) and by
 * measurement, which checks candidate outputs against a reference.
 */
#ifndef PROTUNE_PT_TMPIMG_H
#define PROTUNE_PT_TMPIMG_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"

enum pt_tmpimg_type {
	PT_TMP_F32 = 0, PT_TMP_F64, PT_TMP_U8, PT_TMP_I8, PT_TMP_U16,
	PT_TMP_I16, PT_TMP_U32, PT_TMP_I32, PT_TMP_U64, PT_TMP_I64,
	PT_TMP_NTYPES
};

struct pt_tmpimg {
	int32_t extent[4];
	enum pt_tmpimg_type type;
	size_t nelem;      /* product of the extents */
	size_t elem_size;  /* bytes per element */
	void *data;        /* nelem * elem_size bytes, owned by the struct */
};

#define PT_TMPIMG_INIT { { 0, 0, 0, 0 }, PT_TMP_U8, 0, 0, NULL }

/* Name of a type code ("float32", "uint8", ...), or "?" if out of range. */
const char *pt_tmpimg_type_name(enum pt_tmpimg_type t);

/* Parse a whole .tmp file held in memory. On success `img` owns a copy of
 * the payload (release with pt_tmpimg_release). `what` names the source in
 * error messages. Errors: PT_EFORMAT (bad header, size mismatch),
 * PT_ENOMEM. On failure `img` is left empty. */
int pt_tmpimg_parse(struct pt_tmpimg *img, const void *buf, size_t len,
		    const char *what, struct pt_error *err);

/* Read and parse `path`. Errors as pt_tmpimg_parse plus PT_EIO. */
int pt_tmpimg_load(struct pt_tmpimg *img, const char *path,
		   struct pt_error *err);

/* Write `img` to `path` (replacing it). Errors: PT_EIO. */
int pt_tmpimg_save(const struct pt_tmpimg *img, const char *path,
		   struct pt_error *err);

/* Free the payload; `img` becomes empty and may be reused. */
void pt_tmpimg_release(struct pt_tmpimg *img);

/* Element `i` (0 <= i < nelem) converted to double (exact for every type
 * but 64-bit integers beyond 2^53). */
double pt_tmpimg_get(const struct pt_tmpimg *img, size_t i);

/* Tolerance for comparing float elements: |got - ref| <= abs + rel * |ref|.
 * Integer elements are always compared exactly. A zero tolerance compares
 * float elements bit for bit (so -0.0 differs from 0.0, and a NaN equals
 * only the same NaN bits). */
struct pt_tmpimg_tol {
	double abs;
	double rel;
};

struct pt_tmpimg_diff {
	size_t ndiff;       /* elements that differ beyond the tolerance */
	size_t first;       /* index of the first such element (if ndiff) */
	int32_t first_at[4];/* its coordinates */
	double max_abs;     /* largest |got - ref| over all elements */
};

/* Compare `got` against `ref`. Returns 0 when they agree within `tol`,
 * PT_EMISMATCH when shapes or types differ (message in `err`) or elements
 * differ (details in `diff`, which may be NULL, and a message in `err`). */
int pt_tmpimg_compare(const struct pt_tmpimg *ref, const struct pt_tmpimg *got,
		      const struct pt_tmpimg_tol *tol,
		      struct pt_tmpimg_diff *diff, struct pt_error *err);

/* Change element `i` by +1 (integers wrap; floats add 1.0, and a float
 * that +1.0 would leave unchanged, NaN, infinite or huge, becomes 0), so the
 * element always changes. For tests that prove the comparison catches a
 * single wrong pixel. Errors: PT_EINVAL. */
int pt_tmpimg_perturb(struct pt_tmpimg *img, size_t i, struct pt_error *err);

#endif
