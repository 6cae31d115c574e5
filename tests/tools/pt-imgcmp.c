/* pt-imgcmp: compare two RunGen .tmp images, or perturb one element.
 *
 *   pt-imgcmp [--abs A] [--rel R] REFERENCE GOT
 *       exit 0 if equal within tolerance (floats only; integers are exact),
 *       1 if they differ (a line on stderr says where), 2 on usage or I/O
 *       errors.
 *   pt-imgcmp --perturb INDEX IN OUT
 *       write IN to OUT with element INDEX changed by +1.
 *   pt-imgcmp --stats FILE
 *       print "EXTENTS TYPE MIN MAX", e.g. "256x192x1x1 uint16 3 65530".
 */
#include "protune/pt_tmpimg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: pt-imgcmp [--abs A] [--rel R] REFERENCE GOT\n"
	      "       pt-imgcmp --perturb INDEX IN OUT\n"
	      "       pt-imgcmp --stats FILE\n", f);
}

static int parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && *out >= 0;
}

static int perturb(int argc, char **argv)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_tmpimg img = PT_TMPIMG_INIT;
	unsigned long long idx;
	char *end;
	int ret = 2;

	if (argc != 5) {
		usage(stderr);
		return 2;
	}
	errno = 0;
	idx = strtoull(argv[2], &end, 10);
	if (errno || *end || end == argv[2]) {
		fprintf(stderr, "pt-imgcmp: bad index '%s'\n", argv[2]);
		return 2;
	}
	if (pt_tmpimg_load(&img, argv[3], &err) == 0 &&
	    pt_tmpimg_perturb(&img, (size_t)idx, &err) == 0 &&
	    pt_tmpimg_save(&img, argv[4], &err) == 0)
		ret = 0;
	else
		fprintf(stderr, "pt-imgcmp: %s\n", err.msg);
	pt_tmpimg_release(&img);
	return ret;
}

static int stats(int argc, char **argv)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_tmpimg img = PT_TMPIMG_INIT;
	double lo = 0, hi = 0;
	size_t i;

	if (argc != 3) {
		usage(stderr);
		return 2;
	}
	if (pt_tmpimg_load(&img, argv[2], &err)) {
		fprintf(stderr, "pt-imgcmp: %s\n", err.msg);
		return 2;
	}
	for (i = 0; i < img.nelem; i++) {
		double v = pt_tmpimg_get(&img, i);
		if (i == 0 || v < lo)
			lo = v;
		if (i == 0 || v > hi)
			hi = v;
	}
	printf("%dx%dx%dx%d %s %.9g %.9g\n", img.extent[0], img.extent[1],
	       img.extent[2], img.extent[3], pt_tmpimg_type_name(img.type), lo,
	       hi);
	pt_tmpimg_release(&img);
	return 0;
}

int main(int argc, char **argv)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_tmpimg ref = PT_TMPIMG_INIT, got = PT_TMPIMG_INIT;
	struct pt_tmpimg_tol tol = { 0, 0 };
	int i, ret = 2;

	if (argc > 1 && strcmp(argv[1], "--perturb") == 0)
		return perturb(argc, argv);
	if (argc > 1 && strcmp(argv[1], "--stats") == 0)
		return stats(argc, argv);
	for (i = 1; i < argc && argv[i][0] == '-'; i += 2) {
		double *dst = strcmp(argv[i], "--abs") == 0 ? &tol.abs :
			      strcmp(argv[i], "--rel") == 0 ? &tol.rel : NULL;
		if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (!dst || i + 1 >= argc || !parse_double(argv[i + 1], dst)) {
			usage(stderr);
			return 2;
		}
	}
	if (argc - i != 2) {
		usage(stderr);
		return 2;
	}
	if (pt_tmpimg_load(&ref, argv[i], &err) ||
	    pt_tmpimg_load(&got, argv[i + 1], &err)) {
		fprintf(stderr, "pt-imgcmp: %s\n", err.msg);
		goto cleanup;
	}
	if (pt_tmpimg_compare(&ref, &got, &tol, NULL, &err)) {
		fprintf(stderr, "pt-imgcmp: %s differs from %s: %s\n",
			argv[i + 1], argv[i], err.msg);
		ret = 1;
		goto cleanup;
	}
	ret = 0;
cleanup:
	pt_tmpimg_release(&ref);
	pt_tmpimg_release(&got);
	return ret;
}
