#include "pt_test.h"
#include "protune/pt_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char example[] =
	"protune-schedule 1\n"
	"key 0123456789abcdef0123456789abcdef\n"
	"meta tuner=baseline\n"
	"meta seed=17\n"
	"meta note=\"a\"=b,c\n"
	"func f0 inline label \"input_im\"\n"
	"func f1 root\n"
	"  stage 0\n"
	"    split v0 v0o v0i 8 guard\n"
	"    reorder v0i v1 v0o\n"
	"    vectorize v0i\n"
	"    parallel v1\n"
	"func f2 at f3 v1 label \"blur_x\"\n"
	"func f3 at f4 y0 store root\n"
	"  stage 0\n"
	"    unroll v0\n"
	"  stage 2\n"
	"    split r0 r0o _r0i 16777216 round\n"
	"func f4 root label \"output\"\n"
	"  stage 0\n"
	"    split v1 y0 y1 16 shift\n"
	"    parallel y0\n"
	"func f5 at f4 y1 store at f4 y0\n";

static char *print_str(const struct pt_sched *s)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	if (pt_sched_print(s, &sb)) {
		pt_strbuf_release(&sb);
		return NULL;
	}
	return pt_strbuf_detach(&sb, NULL);
}

PT_TEST(round_trip)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_sched *s = NULL;
	const struct pt_directive *d;
	char *out;

	if (pt_sched_parse(example, strlen(example), "ex", &s, &err))
		fprintf(stderr, "# %s\n", err.msg);
	PT_REQUIRE(s != NULL);
	PT_CHECK_INT(s->version, PT_SCHED_FORMAT_VERSION);
	PT_CHECK_INT(s->key[0], 0x01);
	PT_CHECK_INT(s->key[15], 0xef);
	PT_CHECK_INT(s->meta.nr, 3);
	PT_CHECK_STR(s->meta.v[1], "seed=17");
	PT_CHECK_INT(s->nfuncs, 6);
	PT_CHECK(s->funcs[0].compute == PT_COMPUTE_INLINE);
	PT_CHECK_STR(s->funcs[0].label, "input_im");
	PT_CHECK_INT(s->funcs[0].nstages, 0);
	PT_CHECK(s->funcs[1].compute == PT_COMPUTE_ROOT);
	PT_CHECK_INT(s->funcs[1].nstages, 1);
	PT_REQUIRE(s->funcs[1].stages[0].ndirs == 4);
	d = &s->funcs[1].stages[0].dirs[0];
	PT_CHECK(d->kind == PT_DIR_SPLIT && d->factor == 8 &&
		 d->tail == PT_TAIL_GUARD);
	PT_CHECK_STR(d->dim, "v0");
	PT_CHECK_STR(d->outer, "v0o");
	PT_CHECK_STR(d->inner, "v0i");
	d = &s->funcs[1].stages[0].dirs[1];
	PT_CHECK(d->kind == PT_DIR_REORDER && d->order.nr == 3);
	PT_CHECK_STR(d->order.v[2], "v0o");
	/* No store: stored where computed. */
	PT_CHECK(s->funcs[2].compute == PT_COMPUTE_AT);
	PT_CHECK_INT(s->funcs[2].compute_at.func, 3);
	PT_CHECK_STR(s->funcs[2].compute_at.loop, "v1");
	PT_CHECK(!s->funcs[2].store_root);
	PT_CHECK_INT(s->funcs[2].store_at.func, 3);
	PT_CHECK_STR(s->funcs[2].store_at.loop, "v1");
	PT_CHECK(s->funcs[3].store_root);
	/* Sparse stages: stage 1 is empty. */
	PT_CHECK_INT(s->funcs[3].nstages, 3);
	PT_CHECK_INT(s->funcs[3].stages[1].ndirs, 0);
	PT_CHECK(s->funcs[3].stages[2].dirs[0].tail == PT_TAIL_ROUND);
	PT_CHECK(s->funcs[4].stages[0].dirs[0].tail == PT_TAIL_SHIFT);
	PT_CHECK_STR(s->funcs[5].store_at.loop, "y0");
	PT_CHECK_STR(s->funcs[5].compute_at.loop, "y1");
	out = print_str(s);
	PT_CHECK_STR(out, example);
	free(out);
	pt_sched_free(s);
	pt_sched_free(NULL);
}

PT_TEST(copy_is_deep)
{
	struct pt_sched *s, *c;
	char *a, *b;

	PT_REQUIRE(pt_sched_parse(example, strlen(example), "ex", &s, NULL) ==
		   0);
	c = pt_sched_copy(s);
	PT_REQUIRE(c != NULL);
	a = print_str(s);
	b = print_str(c);
	PT_CHECK_STR(b, a);
	free(b);
	/* Change the copy everywhere; the original stays. */
	c->funcs[1].stages[0].dirs[0].dim[0] = 'w';
	c->funcs[1].stages[0].dirs[1].order.v[0][0] = 'w';
	c->funcs[2].compute_at.loop[0] = 'w';
	c->funcs[2].label[0] = 'X';
	c->meta.v[0][0] = 'x';
	pt_sched_free(s);
	b = print_str(c);
	PT_CHECK(b != NULL && strcmp(a, b) != 0);
	PT_CHECK(strstr(b, "split w0 v0o") != NULL);
	free(a);
	free(b);
	pt_sched_free(c);
}

PT_TEST(new_for_a_model)
{
	static const char model[] =
		"protune-model 1\n"
		"halide \"14.0.0\"\n"
		"target \"t\"\n"
		"machine-params \"1,2,3\"\n"
		"func f0 types f32 args 0\n"
		"  region\n"
		"  stage 0\n"
		"    def \"f0() = 1\"\n"
		"func f1 types f32 args 0 output\n"
		"  region\n"
		"  stage 0\n"
		"    def \"f1() = 0\"\n"
		"  stage 1\n"
		"    access f0 value 0 count 1\n"
		"    access f1 value 0 count 1 store\n"
		"    def \"f1() = f1() + f0()\"\n";
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	struct pt_sched *s;
	struct pt_directive *d;
	char *out, hex[33], want[256];

	if (pt_model_parse(model, strlen(model), "m", &m, &err))
		fprintf(stderr, "# %s\n", err.msg);
	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_model_hash(m) == 0);
	s = pt_sched_new_for(m);
	PT_REQUIRE(s != NULL);
	PT_CHECK(memcmp(s->key, m->key, 16) == 0);
	PT_CHECK_INT(s->nfuncs, 2);
	PT_CHECK_INT(s->funcs[0].nstages, 1);
	PT_CHECK_INT(s->funcs[1].nstages, 2);
	PT_CHECK(s->funcs[1].compute == PT_COMPUTE_ROOT);
	pt_hash_hex(m->key, hex);
	snprintf(want, sizeof(want), "protune-schedule 1\nkey %s\n"
		 "func f0 root\nfunc f1 root\n", hex);
	out = print_str(s);
	PT_CHECK_STR(out, want);
	free(out);
	d = pt_sched_add_directive(&s->funcs[1].stages[1]);
	PT_REQUIRE(d != NULL);
	PT_CHECK(d->order.v != NULL && d->order.nr == 0);
	d->kind = PT_DIR_PARALLEL;
	d->dim = strdup("x");
	PT_CHECK(pt_strvec_push(&s->meta, "tuner=test") == 0);
	snprintf(want, sizeof(want), "protune-schedule 1\nkey %s\n"
		 "meta tuner=test\nfunc f0 root\nfunc f1 root\n  stage 1\n"
		 "    parallel x\n", hex);
	out = print_str(s);
	PT_CHECK_STR(out, want);
	free(out);
	/* The printer refuses what the parser would. */
	free(d->dim);
	d->dim = strdup("X");
	PT_CHECK(print_str(s) == NULL);
	free(d->dim);
	d->dim = strdup("x");
	d->kind = PT_DIR_SPLIT;
	d->outer = strdup("xo");
	d->inner = strdup("xi");
	d->factor = 1;
	PT_CHECK(print_str(s) == NULL);
	d->factor = 2;
	out = print_str(s);
	PT_CHECK(out != NULL && strstr(out, "    split x xo xi 2 guard\n"));
	free(out);
	pt_sched_free(s);
	pt_model_free(m);
}

static void expect_error(const char *from, const char *to, int line,
			 const char *what)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_sched *s = (struct pt_sched *)&err;
	const char *at = strstr(example, from);
	char *text, prefix[32];
	size_t n;

	if (!PT_CHECK(at != NULL))
		return;
	n = strlen(example) - strlen(from) + strlen(to);
	text = malloc(n + 1);
	memcpy(text, example, (size_t)(at - example));
	strcpy(text + (at - example), to);
	strcat(text, at + strlen(from));
	PT_CHECK_INT(pt_sched_parse(text, n, "t.sched", &s, &err), PT_EFORMAT);
	PT_CHECK(s == NULL);
	snprintf(prefix, sizeof(prefix), "t.sched:%d: ", line);
	if (!PT_CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0) ||
	    !PT_CHECK(strstr(err.msg, what) != NULL))
		fprintf(stderr, "# for '%s' -> '%s': %s\n", from, to, err.msg);
	free(text);
}

PT_TEST(parse_errors)
{
	expect_error("protune-schedule 1", "protune-schedule 2", 1, "version");
	expect_error("protune-schedule 1\n", "", 1, "not a protune schedule");
	expect_error("key 0123", "key 0X23", 2, "bad key");
	expect_error("cdef\n", "cde\n", 2, "bad key");
	expect_error("meta seed=17", "meta Seed=17", 4, "bad meta");
	expect_error("meta seed=17", "meta seed", 4, "bad meta");
	expect_error("meta seed=17", "meta seed=1 7", 4, "expected the end");
	expect_error("func f1 root\n", "func f1 root\nmeta x=y\n", 8,
		     "unexpected 'meta'");
	expect_error("func f1 root", "func f2 root", 7, "out of order");
	expect_error("func f1 root", "func f1 rot", 7, "expected 'inline'");
	expect_error("func f1 root", "func f1 root root", 7,
		     "expected the end");
	expect_error("func f2 at f3 v1", "func f2 at f3 V1", 13, "bad name");
	expect_error("func f2 at f3 v1", "func f2 at 3 v1", 13,
		     "expected a Func");
	expect_error("func f2 at f3 v1", "func f2 at f3 v1 store at f3 v1", 13,
		     "leave it out");
	expect_error("func f2 at f3 v1", "func f2 at f3 v1 store f3 v1", 13,
		     "expected 'at'");
	expect_error("func f0 inline", "func f0 inline store root", 6,
		     "expected the end");
	expect_error("  stage 0\n    split v0", "  stage 0\n    splat v0", 9,
		     "unknown directive");
	expect_error("8 guard", "1 guard", 9, "split factor");
	expect_error("8 guard", "08 guard", 9, "canonical integer");
	expect_error("8 guard", "8 guarded", 9, "expected 'guard'");
	expect_error("16777216 round", "16777217 round", 18, "split factor");
	expect_error("    reorder v0i v1 v0o", "    reorder v0i", 10,
		     "at least two");
	expect_error("    vectorize v0i", "    vectorize v0i v1", 11,
		     "expected the end");
	expect_error("    vectorize v0i", "    vectorize a23456789012345678901"
		     "234567890123", 11, "bad name");
	expect_error("  stage 2\n", "  stage 0\n", 17, "above the one before");
	expect_error("  stage 2\n", "  stage 65536\n", 17, "out of range");
	expect_error("  stage 2\n    split r0 r0o _r0i 16777216 round\n",
		     "  stage 2\n", 18, "expected a directive");
	expect_error("    unroll v0\n", "     unroll v0\n", 16,
		     "expected a directive, indented by 4");
	expect_error("    parallel v1\n", "    parallel v1\n\n", 13, "blank");
	expect_error("store at f4 y0\n", "store at f4 y0", 23, "no newline");
	expect_error("label \"blur_x\"", "label \"blur_x", 13, "unterminated");
}

PT_TEST(parse_edge_texts)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_sched *s;
	static const char minimal[] =
		"protune-schedule 1\n"
		"key 00000000000000000000000000000000\n"
		"func f0 root\n";
	char *out;

	PT_CHECK(pt_sched_parse("", 0, "e", &s, &err) == PT_EFORMAT);
	PT_CHECK_STR(err.msg, "e:1: empty text (expected 'protune-schedule "
		     "1')");
	PT_CHECK(pt_sched_parse(minimal, strlen(minimal) - 13, "e", &s,
				&err) == PT_EFORMAT);
	PT_CHECK_STR(err.msg, "e:3: unexpected end of text (expected "
		     "'func')");
	PT_CHECK(pt_sched_parse(minimal, strlen(minimal), "e", &s, &err) ==
		 0);
	out = print_str(s);
	PT_CHECK_STR(out, minimal);
	free(out);
	pt_sched_free(s);
}

PT_SUITE(sched,
	 { "round trip", round_trip },
	 { "copy is deep", copy_is_deep },
	 { "new for a model", new_for_a_model },
	 { "parse errors", parse_errors },
	 { "parse edge texts", parse_edge_texts });
