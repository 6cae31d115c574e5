#include "protune/pt_tmpimg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	size_t size;
} type_info[PT_TMP_NTYPES] = {
	{ "float32", 4 }, { "float64", 8 }, { "uint8", 1 }, { "int8", 1 },
	{ "uint16", 2 }, { "int16", 2 }, { "uint32", 4 }, { "int32", 4 },
	{ "uint64", 8 }, { "int64", 8 },
};

const char *pt_tmpimg_type_name(enum pt_tmpimg_type t)
{
	if ((int)t < 0 || t >= PT_TMP_NTYPES)
		return "?";
	return type_info[t].name;
}

void pt_tmpimg_release(struct pt_tmpimg *img)
{
	struct pt_tmpimg empty = PT_TMPIMG_INIT;

	free(img->data);
	*img = empty;
}

int pt_tmpimg_parse(struct pt_tmpimg *img, const void *buf, size_t len,
		    const char *what, struct pt_error *err)
{
	struct pt_tmpimg empty = PT_TMPIMG_INIT;
	int32_t header[5];
	size_t nelem = 1, payload;
	int d;

	*img = empty;
	if (len < sizeof(header))
		return pt_error_set(err, PT_EFORMAT,
				    "%s: %zu bytes, too short for a .tmp header",
				    what, len);
	memcpy(header, buf, sizeof(header));
	for (d = 0; d < 4; d++) {
		if (header[d] <= 0)
			return pt_error_set(err, PT_EFORMAT,
					    "%s: extent %d is %d, must be > 0",
					    what, d, (int)header[d]);
		/* Bound the element count so nelem * 8 cannot overflow. */
		if (nelem > (SIZE_MAX / 8) / (size_t)header[d])
			return pt_error_set(err, PT_EFORMAT,
					    "%s: image extents overflow", what);
		nelem *= (size_t)header[d];
	}
	if (header[4] < 0 || header[4] >= PT_TMP_NTYPES)
		return pt_error_set(err, PT_EFORMAT,
				    "%s: unknown type code %d", what,
				    (int)header[4]);
	payload = nelem * type_info[header[4]].size;
	if (len - sizeof(header) != payload)
		return pt_error_set(err, PT_EFORMAT,
				    "%s: payload is %zu bytes, header says %zu",
				    what, len - sizeof(header), payload);
	img->data = malloc(payload ? payload : 1);
	if (!img->data)
		return pt_error_set(err, PT_ENOMEM, "%s: out of memory", what);
	memcpy(img->data, (const char *)buf + sizeof(header), payload);
	for (d = 0; d < 4; d++)
		img->extent[d] = header[d];
	img->type = (enum pt_tmpimg_type)header[4];
	img->nelem = nelem;
	img->elem_size = type_info[header[4]].size;
	return 0;
}

int pt_tmpimg_load(struct pt_tmpimg *img, const char *path,
		   struct pt_error *err)
{
	struct pt_tmpimg empty = PT_TMPIMG_INIT;
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	*img = empty;
	f = fopen(path, "rb");
	if (!f)
		return pt_error_set(err, errno == ENOENT ? PT_ENOTFOUND : PT_EIO,
				    "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			char *nb;
			cap = cap ? cap * 2 : 1 << 16;
			nb = realloc(buf, cap);
			if (!nb) {
				ret = pt_error_set(err, PT_ENOMEM,
						   "%s: out of memory", path);
				goto cleanup;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		ret = pt_error_set(err, PT_EIO, "%s: read error", path);
		goto cleanup;
	}
	ret = pt_tmpimg_parse(img, buf, len, path, err);
cleanup:
	free(buf);
	fclose(f);
	return ret;
}

int pt_tmpimg_save(const struct pt_tmpimg *img, const char *path,
		   struct pt_error *err)
{
	int32_t header[5];
	FILE *f;
	int d, ok;

	for (d = 0; d < 4; d++)
		header[d] = img->extent[d];
	header[4] = (int32_t)img->type;
	f = fopen(path, "wb");
	if (!f)
		return pt_error_set(err, PT_EIO, "%s: %s", path, strerror(errno));
	ok = fwrite(header, sizeof(header), 1, f) == 1 &&
	     (img->nelem == 0 ||
	      fwrite(img->data, img->elem_size, img->nelem, f) == img->nelem);
	if (fclose(f) != 0)
		ok = 0;
	if (!ok)
		return pt_error_set(err, PT_EIO, "%s: write error", path);
	return 0;
}

double pt_tmpimg_get(const struct pt_tmpimg *img, size_t i)
{
	const char *p = (const char *)img->data + i * img->elem_size;

	switch (img->type) {
#define GET(code, T) case code: { T v; memcpy(&v, p, sizeof v); return (double)v; }
	GET(PT_TMP_F32, float)
	GET(PT_TMP_F64, double)
	GET(PT_TMP_U8, uint8_t)
	GET(PT_TMP_I8, int8_t)
	GET(PT_TMP_U16, uint16_t)
	GET(PT_TMP_I16, int16_t)
	GET(PT_TMP_U32, uint32_t)
	GET(PT_TMP_I32, int32_t)
	GET(PT_TMP_U64, uint64_t)
	GET(PT_TMP_I64, int64_t)
#undef GET
	default:
		break;
	}
	return 0;
}

static int is_float(enum pt_tmpimg_type t)
{
	return t == PT_TMP_F32 || t == PT_TMP_F64;
}

static void coords(const struct pt_tmpimg *img, size_t i, int32_t at[4])
{
	int d;

	for (d = 0; d < 4; d++) {
		at[d] = (int32_t)(i % (size_t)img->extent[d]);
		i /= (size_t)img->extent[d];
	}
}

int pt_tmpimg_compare(const struct pt_tmpimg *ref, const struct pt_tmpimg *got,
		      const struct pt_tmpimg_tol *tol,
		      struct pt_tmpimg_diff *diff, struct pt_error *err)
{
	struct pt_tmpimg_diff local;
	int bitwise = !is_float(ref->type) || !tol ||
		      (tol->abs == 0 && tol->rel == 0);
	size_t i;
	int d;

	if (!diff)
		diff = &local;
	memset(diff, 0, sizeof(*diff));
	if (ref->type != got->type)
		return pt_error_set(err, PT_EMISMATCH,
				    "type differs: reference %s, got %s",
				    pt_tmpimg_type_name(ref->type),
				    pt_tmpimg_type_name(got->type));
	for (d = 0; d < 4; d++)
		if (ref->extent[d] != got->extent[d])
			return pt_error_set(
				err, PT_EMISMATCH,
				"shape differs: reference %dx%dx%dx%d, got %dx%dx%dx%d",
				ref->extent[0], ref->extent[1], ref->extent[2],
				ref->extent[3], got->extent[0], got->extent[1],
				got->extent[2], got->extent[3]);
	for (i = 0; i < ref->nelem; i++) {
		double a = pt_tmpimg_get(ref, i), b = pt_tmpimg_get(got, i);
		double ad = fabs(a - b);
		int same;

		if (bitwise) {
			same = memcmp((const char *)ref->data + i * ref->elem_size,
				      (const char *)got->data + i * got->elem_size,
				      ref->elem_size) == 0;
		} else if (isnan(a) || isnan(b)) {
			same = isnan(a) && isnan(b);
		} else {
			same = ad <= tol->abs + tol->rel * fabs(a);
		}
		if (!isnan(ad) && ad > diff->max_abs)
			diff->max_abs = ad;
		if (!same) {
			if (diff->ndiff == 0) {
				diff->first = i;
				coords(ref, i, diff->first_at);
			}
			diff->ndiff++;
		}
	}
	if (diff->ndiff == 0)
		return 0;
	return pt_error_set(
		err, PT_EMISMATCH,
		"%zu of %zu elements differ; first at (%d,%d,%d,%d): reference %.9g, got %.9g; max |diff| %.9g",
		diff->ndiff, ref->nelem, diff->first_at[0], diff->first_at[1],
		diff->first_at[2], diff->first_at[3],
		pt_tmpimg_get(ref, diff->first), pt_tmpimg_get(got, diff->first),
		diff->max_abs);
}

int pt_tmpimg_perturb(struct pt_tmpimg *img, size_t i, struct pt_error *err)
{
	char *p;

	if (i >= img->nelem)
		return pt_error_set(err, PT_EINVAL,
				    "element %zu out of range (%zu elements)", i,
				    img->nelem);
	p = (char *)img->data + i * img->elem_size;
	switch (img->type) {
	/* +1.0 leaves NaN, infinities and huge values unchanged: those
	 * become 0 so that the element always changes. */
	case PT_TMP_F32: {
		float v, nv;
		memcpy(&v, p, 4);
		nv = v + 1.0f;
		if (isnan(v) || memcmp(&nv, &v, 4) == 0)
			nv = 0.0f;
		memcpy(p, &nv, 4);
		break;
	}
	case PT_TMP_F64: {
		double v, nv;
		memcpy(&v, p, 8);
		nv = v + 1.0;
		if (isnan(v) || memcmp(&nv, &v, 8) == 0)
			nv = 0.0;
		memcpy(p, &nv, 8);
		break;
	}
	default: {
		/* Add one to the little-endian unsigned value: wraps like the
		 * type's own arithmetic. */
		uint64_t v = 0;
		memcpy(&v, p, img->elem_size);
		v++;
		memcpy(p, &v, img->elem_size);
		break;
	}
	}
	return 0;
}
