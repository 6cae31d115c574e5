#include "pt_test.h"
#include "protune/pt_tmpimg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A .tmp file in memory: header then payload. */
static size_t make_tmp(unsigned char *buf, int w, int h, int c, int n,
		       int type, const void *data, size_t bytes)
{
	int32_t hdr[5] = { w, h, c, n, type };

	memcpy(buf, hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), data, bytes);
	return sizeof(hdr) + bytes;
}

PT_TEST(parse_reads_header_and_payload)
{
	struct pt_tmpimg img = PT_TMPIMG_INIT;
	unsigned char buf[256];
	uint16_t px[6] = { 1, 2, 3, 4, 5, 65535 };
	size_t len = make_tmp(buf, 3, 2, 1, 1, PT_TMP_U16, px, sizeof(px));

	PT_REQUIRE(pt_tmpimg_parse(&img, buf, len, "mem", NULL) == 0);
	PT_CHECK_INT(img.extent[0], 3);
	PT_CHECK_INT(img.extent[1], 2);
	PT_CHECK_INT(img.nelem, 6);
	PT_CHECK_INT(img.type, PT_TMP_U16);
	PT_CHECK(pt_tmpimg_get(&img, 5) == 65535.0);
	pt_tmpimg_release(&img);
	PT_CHECK(img.data == NULL);
}

PT_TEST(parse_rejects_bad_input_with_message)
{
	struct pt_tmpimg img = PT_TMPIMG_INIT;
	struct pt_error err = PT_ERROR_INIT;
	unsigned char buf[256] = { 0 };
	uint8_t px[4] = { 0 };
	size_t len;

	PT_CHECK_INT(pt_tmpimg_parse(&img, buf, 10, "short.tmp", &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "short.tmp") != NULL);
	len = make_tmp(buf, 2, 2, 1, 1, PT_TMP_U8, px, 4);
	PT_CHECK_INT(pt_tmpimg_parse(&img, buf, len - 1, "trunc.tmp", &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "payload is 3 bytes, header says 4") != NULL);
	len = make_tmp(buf, 2, 0, 1, 1, PT_TMP_U8, px, 4);
	PT_CHECK_INT(pt_tmpimg_parse(&img, buf, len, "zero.tmp", &err), PT_EFORMAT);
	len = make_tmp(buf, 2, 2, 1, 1, 10, px, 4);
	PT_CHECK_INT(pt_tmpimg_parse(&img, buf, len, "type.tmp", &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "unknown type code 10") != NULL);
	len = make_tmp(buf, 0x7fffffff, 0x7fffffff, 0x7fffffff, 4, PT_TMP_U8, px, 0);
	PT_CHECK_INT(pt_tmpimg_parse(&img, buf, len, "huge.tmp", &err), PT_EFORMAT);
	PT_CHECK(img.data == NULL);
}

PT_TEST(compare_integers_exactly)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT, b = PT_TMPIMG_INIT;
	struct pt_tmpimg_tol tol = { 10, 10 }; /* ignored for integers */
	struct pt_tmpimg_diff d;
	struct pt_error err = PT_ERROR_INIT;
	unsigned char buf[256];
	uint8_t px[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	size_t len = make_tmp(buf, 2, 2, 2, 1, PT_TMP_U8, px, 8);

	PT_REQUIRE(pt_tmpimg_parse(&a, buf, len, "a", NULL) == 0);
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, len, "b", NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &tol, &d, &err), 0);
	PT_CHECK_INT(d.ndiff, 0);
	PT_REQUIRE(pt_tmpimg_perturb(&b, 7, NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &tol, &d, &err), PT_EMISMATCH);
	PT_CHECK_INT(d.ndiff, 1);
	PT_CHECK_INT(d.first_at[0], 1);
	PT_CHECK_INT(d.first_at[1], 1);
	PT_CHECK_INT(d.first_at[2], 1);
	PT_CHECK(strstr(err.msg, "1 of 8 elements differ; first at (1,1,1,0)") != NULL);
	pt_tmpimg_release(&a);
	pt_tmpimg_release(&b);
}

PT_TEST(perturb_wraps_integers)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT;
	unsigned char buf[64];
	uint16_t px[1] = { 65535 };
	size_t len = make_tmp(buf, 1, 1, 1, 1, PT_TMP_U16, px, 2);

	PT_REQUIRE(pt_tmpimg_parse(&a, buf, len, "a", NULL) == 0);
	PT_REQUIRE(pt_tmpimg_perturb(&a, 0, NULL) == 0);
	PT_CHECK(pt_tmpimg_get(&a, 0) == 0.0);
	PT_CHECK_INT(pt_tmpimg_perturb(&a, 1, NULL), PT_EINVAL);
	pt_tmpimg_release(&a);
}

PT_TEST(perturb_always_changes_floats)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT, b = PT_TMPIMG_INIT;
	unsigned char buf[64];
	double px[4] = { NAN, INFINITY, 1e300, -2.0 };
	size_t len = make_tmp(buf, 4, 1, 1, 1, PT_TMP_F64, px, sizeof(px));
	size_t i;

	PT_REQUIRE(pt_tmpimg_parse(&a, buf, len, "a", NULL) == 0);
	for (i = 0; i < 4; i++) {
		PT_REQUIRE(pt_tmpimg_parse(&b, buf, len, "b", NULL) == 0);
		PT_REQUIRE(pt_tmpimg_perturb(&b, i, NULL) == 0);
		PT_CHECK_INT(pt_tmpimg_compare(&a, &b, NULL, NULL, NULL), PT_EMISMATCH);
		pt_tmpimg_release(&b);
	}
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, len, "b", NULL) == 0);
	PT_REQUIRE(pt_tmpimg_perturb(&b, 3, NULL) == 0);
	PT_CHECK(pt_tmpimg_get(&b, 3) == -1.0);
	pt_tmpimg_release(&a);
	pt_tmpimg_release(&b);
}

PT_TEST(compare_floats_with_tolerance)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT, b = PT_TMPIMG_INIT;
	struct pt_tmpimg_tol exact = { 0, 0 }, loose = { 1e-6, 0 };
	unsigned char buf[64];
	float pa[2] = { 0.5f, -0.0f }, pb[2] = { 0.5f, 0.0f };
	size_t la = make_tmp(buf, 2, 1, 1, 1, PT_TMP_F32, pa, 8);

	PT_REQUIRE(pt_tmpimg_parse(&a, buf, la, "a", NULL) == 0);
	make_tmp(buf, 2, 1, 1, 1, PT_TMP_F32, pb, 8);
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, la, "b", NULL) == 0);
	/* bit for bit: -0.0 and 0.0 differ */
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &exact, NULL, NULL), PT_EMISMATCH);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &loose, NULL, NULL), 0);
	pb[0] = nextafterf(0.5f, 1.0f);
	pt_tmpimg_release(&b);
	make_tmp(buf, 2, 1, 1, 1, PT_TMP_F32, pb, 8);
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, la, "b", NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &loose, NULL, NULL), 0);
	PT_REQUIRE(pt_tmpimg_perturb(&b, 0, NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &loose, NULL, NULL), PT_EMISMATCH);
	pt_tmpimg_release(&a);
	pt_tmpimg_release(&b);
}

PT_TEST(nan_matches_only_nan)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT, b = PT_TMPIMG_INIT;
	struct pt_tmpimg_tol loose = { 1, 1 };
	unsigned char buf[64];
	float pa[1] = { NAN }, pb[1] = { 1.0f };
	size_t len = make_tmp(buf, 1, 1, 1, 1, PT_TMP_F32, pa, 4);

	PT_REQUIRE(pt_tmpimg_parse(&a, buf, len, "a", NULL) == 0);
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, len, "b", NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &loose, NULL, NULL), 0);
	pt_tmpimg_release(&b);
	make_tmp(buf, 1, 1, 1, 1, PT_TMP_F32, pb, 4);
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, len, "b", NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, &loose, NULL, NULL), PT_EMISMATCH);
	pt_tmpimg_release(&a);
	pt_tmpimg_release(&b);
}

PT_TEST(compare_reports_shape_and_type)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT, b = PT_TMPIMG_INIT;
	struct pt_error err = PT_ERROR_INIT;
	unsigned char buf[64];
	uint8_t px[4] = { 0 };
	size_t len = make_tmp(buf, 2, 2, 1, 1, PT_TMP_U8, px, 4);

	PT_REQUIRE(pt_tmpimg_parse(&a, buf, len, "a", NULL) == 0);
	len = make_tmp(buf, 4, 1, 1, 1, PT_TMP_U8, px, 4);
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, len, "b", NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, NULL, NULL, &err), PT_EMISMATCH);
	PT_CHECK_STR(err.msg, "shape differs: reference 2x2x1x1, got 4x1x1x1");
	pt_tmpimg_release(&b);
	len = make_tmp(buf, 2, 2, 1, 1, PT_TMP_I8, px, 4);
	PT_REQUIRE(pt_tmpimg_parse(&b, buf, len, "b", NULL) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, NULL, NULL, &err), PT_EMISMATCH);
	PT_CHECK_STR(err.msg, "type differs: reference uint8, got int8");
	pt_tmpimg_release(&a);
	pt_tmpimg_release(&b);
}

PT_TEST(save_then_load_round_trips)
{
	struct pt_tmpimg a = PT_TMPIMG_INIT, b = PT_TMPIMG_INIT;
	struct pt_error err = PT_ERROR_INIT;
	unsigned char buf[128];
	double px[3] = { 1.5, -2.25, 1e300 };
	size_t len = make_tmp(buf, 3, 1, 1, 1, PT_TMP_F64, px, sizeof(px));
	char path[512];

	snprintf(path, sizeof(path), "%s/x.tmp", pt_test_tmpdir());
	PT_REQUIRE(pt_tmpimg_parse(&a, buf, len, "a", NULL) == 0);
	PT_REQUIRE(pt_tmpimg_save(&a, path, &err) == 0);
	PT_REQUIRE(pt_tmpimg_load(&b, path, &err) == 0);
	PT_CHECK_INT(pt_tmpimg_compare(&a, &b, NULL, NULL, NULL), 0);
	pt_tmpimg_release(&b);
	snprintf(path, sizeof(path), "%s/missing.tmp", pt_test_tmpdir());
	PT_CHECK_INT(pt_tmpimg_load(&b, path, &err), PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "missing.tmp") != NULL);
	pt_tmpimg_release(&a);
}

PT_SUITE(tmpimg,
	 { "parse reads header and payload", parse_reads_header_and_payload },
	 { "parse rejects bad input with a message", parse_rejects_bad_input_with_message },
	 { "integers compare exactly", compare_integers_exactly },
	 { "perturb wraps integers", perturb_wraps_integers },
	 { "perturb always changes floats", perturb_always_changes_floats },
	 { "floats compare within tolerance", compare_floats_with_tolerance },
	 { "NaN matches only NaN", nan_matches_only_nan },
	 { "shape and type differences are reported", compare_reports_shape_and_type },
	 { "save then load round-trips", save_then_load_round_trips });
