#include "pt_test.h"
#include "protune/pt_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two branches from f0: f0 -> f1 -> f2 -> f4 and f0 -> f3 -> f4; f4 has an
 * update. i1 and i2 are scalars nobody reads. */
static const char chain[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"generator \"chain\"\n"
	"function \"chain\"\n"
	"argv \"/home/a/chain.generator\" \"-o\" \"/tmp/x\"\n"
	"input i0 buffer f32 dims 1 est 0 100 label \"in\"\n"
	"input i1 scalar f32 est 0x3f800000 label \"k\"\n"
	"input i2 scalar i32 est none label \"n\"\n"
	"func f0 types f32 args 1 inline label \"in_im\"\n"
	"  region 0 100\n"
	"  stage 0\n"
	"    dim v0 0 100 label \"x\"\n"
	"    op load.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f0(v0) = i0(v0)\"\n"
	"func f1 types f32 args 1 inline label \"a\"\n"
	"  region 0 98\n"
	"  stage 0\n"
	"    dim v0 0 98 label \"x\"\n"
	"    op add.f32 1\n"
	"    access f0 value 0 count 2\n"
	"      coord 1*v0 + [0,2]\n"
	"    def \"f1(v0) = f0(v0) + f0(v0 + 2)\"\n"
	"func f2 types f32 args 1 inline label \"b\"\n"
	"  region 0 98\n"
	"  stage 0\n"
	"    dim v0 0 98 label \"x\"\n"
	"    op mul.f32 1\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f2(v0) = f1(v0)*0x1p+1f\"\n"
	"func f3 types f32 args 1 inline label \"c\"\n"
	"  region 0 98\n"
	"  stage 0\n"
	"    dim v0 0 98 label \"x\"\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [1,1]\n"
	"    def \"f3(v0) = f0(v0 + 1)\"\n"
	"func f4 types f32 args 1 output label \"out\"\n"
	"  region 0 98\n"
	"  stage 0\n"
	"    dim v0 0 98 label \"x\"\n"
	"    op add.f32 1\n"
	"    access f2 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    access f3 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f4(v0) = f2(v0) + f3(v0)\"\n"
	"  stage 1\n"
	"    dim r0 0 10 label \"r$x\"\n"
	"    op mul.f32 1\n"
	"    access f4 value 0 count 1 store\n"
	"      coord 1*r0 + [0,0]\n"
	"    def \"f4(r0) = f4(r0)*0x1p+1f\"\n";

/* Parse `chain` with the first `from` replaced by `to` (NULL: as it is),
 * and hash it. */
static struct pt_model *load(const char *from, const char *to)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	char *text = malloc(sizeof(chain) + (to ? strlen(to) : 0));
	const char *at = from ? strstr(chain, from) : NULL;

	strcpy(text, chain);
	if (from) {
		if (!PT_CHECK(at != NULL)) {
			fprintf(stderr, "# no '%s'\n", from);
			free(text);
			return NULL;
		}
		strcpy(text + (at - chain), to);
		strcat(text, at + strlen(from));
	}
	if (pt_model_parse(text, strlen(text), "chain", &m, &err))
		fprintf(stderr, "# %s -> %s: %s\n", from, to, err.msg);
	free(text);
	if (m && !PT_CHECK(pt_model_hash(m) == 0)) {
		pt_model_free(m);
		m = NULL;
	}
	return m;
}

PT_TEST(same_model_same_key)
{
	struct pt_model *a = load(NULL, NULL), *b = load(NULL, NULL);
	char hex[33];
	int i;

	PT_REQUIRE(a && b);
	PT_CHECK(memcmp(a->key, b->key, 16) == 0);
	for (i = 0; i < a->nstages; i++)
		PT_CHECK(memcmp(a->stages[i].hash, b->stages[i].hash, 16) == 0);
	/* Hashing twice gives the same. */
	PT_CHECK(pt_model_hash(a) == 0);
	PT_CHECK(memcmp(a->key, b->key, 16) == 0);
	/* Pinned (checked against XXH3-128 of the hand-stripped text):
	 * a change here means every stored schedule misses. Bump
	 * PT_SPACE_VERSION or the format version when that is intended. */
	pt_hash_hex(a->key, hex);
	PT_CHECK_STR(hex, "6eff521372f92be378b9b54fbe73a284");
	pt_model_free(a);
	pt_model_free(b);
}

PT_TEST(hashed_fields_change_the_key)
{
	static const char *const edits[][2] = {
		{ "f1(v0) = f0(v0) + f0(v0 + 2)",
		  "f1(v0) = f0(v0) + f0(v0 + 3)" },
		{ "f2(v0) = f1(v0)*0x1p+1f", "f2(v0) = f1(v0)*0x1.000002p+1f" },
		{ "func f2 types f32", "func f2 types f64" },
		{ "est 0 100", "est 0 101" },
		{ "est 0x3f800000", "est 0x3f800001" },
		{ "est none", "est 0x0" },
		{ "dim r0 0 10", "dim r0 0 11" },
		{ "dim r0 0 10", "dim r0 1 10" },
		{ "      coord 1*v0 + [0,2]", "      coord 2*v0 + [0,2]" },
		{ "      coord 1*v0 + [0,2]", "      coord 1*v0 + [0,1]" },
		{ "      coord 1*v0 + [0,2]",
		  "      coord 1*v0 + [0,2] clamp [0,_]" },
		{ "    access f0 value 0 count 2",
		  "    access f0 value 0 count 3" },
		{ "    op add.f32 1\n    access f0",
		  "    op add.f32 2\n    access f0" },
		{ "x86-64-linux-avx-avx2-f16c-fma-sse41",
		  "x86-64-linux-avx-avx2" },
		{ "\"2,16777216,40\"", "\"4,16777216,40\"" },
		{ "\"14.0.0\"", "\"14.0.1\"" },
		{ "func f3 types f32 args 1 inline",
		  "func f3 types f32 args 1" },
		{ "  region 0 100", "  region -1 100" },
	};
	struct pt_model *base = load(NULL, NULL), *m;
	size_t i;

	PT_REQUIRE(base != NULL);
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		m = load(edits[i][0], edits[i][1]);
		if (!PT_CHECK(m != NULL))
			continue;
		if (!PT_CHECK(memcmp(m->key, base->key, 16) != 0))
			fprintf(stderr, "# same key after '%s'\n", edits[i][1]);
		pt_model_free(m);
	}
	pt_model_free(base);
}

PT_TEST(labels_and_argv_do_not_change_the_key)
{
	static const char *const edits[][2] = {
		{ "label \"in_im\"", "label \"input_im$1\"" },
		{ " label \"in_im\"", "" },
		{ "label \"r$x\"", "label \"r48$x\"" },
		{ "generator \"chain\"\n", "generator \"other\"\n" },
		{ "function \"chain\"\n", "" },
		{ "argv \"/home/a/chain.generator\" \"-o\" \"/tmp/x\"\n",
		  "argv \"/home/b/src/chain.generator\" \"-o\" \"/tmp/y\"\n" },
		{ "generator \"chain\"\nfunction \"chain\"\nargv "
		  "\"/home/a/chain.generator\" \"-o\" \"/tmp/x\"\n", "" },
		{ "label \"n\"", "label \"count\"" },
	};
	struct pt_model *base = load(NULL, NULL), *m;
	size_t i;
	int k;

	PT_REQUIRE(base != NULL);
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		m = load(edits[i][0], edits[i][1]);
		if (!PT_CHECK(m != NULL))
			continue;
		if (!PT_CHECK(memcmp(m->key, base->key, 16) == 0))
			fprintf(stderr, "# key changed by '%s'\n", edits[i][1]);
		for (k = 0; k < m->nstages; k++)
			PT_CHECK(memcmp(m->stages[k].hash,
					base->stages[k].hash, 16) == 0);
		pt_model_free(m);
	}
	pt_model_free(base);
}

/* Which of the 6 stages (f0 f1 f2 f3 f4.0 f4.1) change after an edit. */
static void expect_changed(const char *from, const char *to,
			   const char *want, int key_changes)
{
	struct pt_model *base = load(NULL, NULL), *m = load(from, to);
	char got[8];
	int i;

	if (!PT_CHECK(base && m) || !PT_CHECK(m->nstages == 6))
		goto out;
	for (i = 0; i < 6; i++)
		got[i] = memcmp(m->stages[i].hash, base->stages[i].hash, 16) ?
			 'x' : '.';
	got[6] = '\0';
	if (!PT_CHECK(strcmp(got, want) == 0))
		fprintf(stderr, "# after '%s': %s, want %s\n", to, got, want);
	PT_CHECK(!memcmp(m->key, base->key, 16) == !key_changes);
out:
	pt_model_free(base);
	pt_model_free(m);
}

PT_TEST(stage_hashes_follow_the_data)
{
	/* f2 feeds f4 only: f0, f1 and the sibling branch f3 keep theirs. */
	expect_changed("f2(v0) = f1(v0)*0x1p+1f", "f2(v0) = f1(v0)*0x1p+2f",
		       "..x.xx", 1);
	/* f1 feeds f2 and so f4. */
	expect_changed("f1(v0) = f0(v0) + f0(v0 + 2)",
		       "f1(v0) = f0(v0) - f0(v0 + 2)", ".xx.xx", 1);
	/* The sibling branch. */
	expect_changed("f3(v0) = f0(v0 + 1)", "f3(v0) = f0(v0 + 1)*1",
		       "...xxx", 1);
	/* An update depends on the stage before it; that stage does not
	 * depend on the update. */
	expect_changed("f4(v0) = f2(v0) + f3(v0)", "f4(v0) = f3(v0) + f2(v0)",
		       "....xx", 1);
	expect_changed("f4(r0) = f4(r0)*0x1p+1f", "f4(r0) = f4(r0)*0x1p+0f",
		       ".....x", 1);
	/* An input read by f0 reaches everything; an unread scalar nothing,
	 * and neither do the target nor the machine params (the key has
	 * them). */
	expect_changed("est 0 100", "est 0 200", "xxxxxx", 1);
	expect_changed("est 0x3f800000", "est 0x40000000", "......", 1);
	expect_changed("\"2,16777216,40\"", "\"8,16777216,40\"", "......", 1);
	/* A Func's own line (its region) is in its stages' hashes. */
	expect_changed("func f3 types f32 args 1 inline label \"c\"\n"
		       "  region 0 98", "func f3 types f32 args 1 inline "
		       "label \"c\"\n  region 0 99", "...xxx", 1);
}

PT_TEST(hex_round_trip)
{
	uint8_t h[16], back[16];
	char hex[33];
	int i;

	for (i = 0; i < 16; i++)
		h[i] = (uint8_t)(i * 17 + 3);
	pt_hash_hex(h, hex);
	PT_CHECK_STR(hex, "031425364758697a8b9cadbecfe0f102");
	PT_CHECK(pt_hash_parse(hex, back) == 0);
	PT_CHECK(memcmp(h, back, 16) == 0);
	memset(back, 0, 16);
	PT_CHECK(pt_hash_parse("031425364758697a8b9cadbecfe0f10", back) ==
		 PT_EFORMAT);
	PT_CHECK(pt_hash_parse("031425364758697a8b9cadbecfe0f1023", back) ==
		 PT_EFORMAT);
	PT_CHECK(pt_hash_parse("031425364758697A8B9CADBECFE0F102", back) ==
		 PT_EFORMAT);
	PT_CHECK(pt_hash_parse("031425364758697a 9cadbecfe0f102", back) ==
		 PT_EFORMAT);
	PT_CHECK(pt_hash_parse("", back) == PT_EFORMAT);
	PT_CHECK(pt_hash_parse(NULL, back) == PT_EFORMAT);
	for (i = 0; i < 16; i++)
		PT_CHECK_INT(back[i], 0);
}

PT_TEST(hash_refuses_invalid_models)
{
	struct pt_model *m = pt_model_new();

	PT_REQUIRE(m != NULL);
	PT_CHECK(pt_model_hash(m) == PT_EINVAL);
	pt_model_free(m);
}

PT_SUITE(key,
	 { "same model, same key", same_model_same_key },
	 { "hashed fields change the key", hashed_fields_change_the_key },
	 { "labels and argv do not change the key",
	   labels_and_argv_do_not_change_the_key },
	 { "stage hashes follow the data", stage_hashes_follow_the_data },
	 { "hex round trip", hex_round_trip },
	 { "hash refuses invalid models", hash_refuses_invalid_models });
