#include "pt_test.h"
#include "protune/pt_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every construct of the model text: buffer and scalar inputs (estimate,
 * none, a 0-dim buffer, a negative value), tuples, an inlinable Func, an
 * update with RVars, rationals, one-sided clamps, non-affine, partial and
 * data-dependent coords, a store, a Func of no args, escapes. */
static const char full[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"generator \"blur\"\n"
	"function \"blur\"\n"
	"argv \"/abs/blur.generator\" \"-g\" \"blur\" \"-o\" \"out dir\" "
	"\"target=host\"\n"
	"input i0 buffer u16 dims 2 est -2 1540 0 2560 label \"input\"\n"
	"input i1 scalar f32 est 0x3f800000 label \"sigma\"\n"
	"input i2 scalar i32 est none label \"n\"\n"
	"input i3 scalar i8 est 0xffffffffffffff80\n"
	"input i4 buffer f64 dims 0 est label \"\"\n"
	"func f0 types u16 args 2 inline label \"input_im\"\n"
	"  region 0 1536 0 2560\n"
	"  stage 0\n"
	"    dim v0 0 1536 label \"_0\"\n"
	"    dim v1 0 2560 label \"_1\"\n"
	"    op load.u16 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = i0(v0, v1)\"\n"
	"func f1 types u16,f32 args 2 output label \"output\"\n"
	"  region 0 1536 0 2560\n"
	"  stage 0\n"
	"    dim v0 0 1536 label \"x\"\n"
	"    dim v1 0 2560 label \"y\"\n"
	"    op add.u16 2\n"
	"    op cast.f32 1\n"
	"    access f0 value 0 count 2\n"
	"      coord 1/2*v0 + [-1/2,0] clamp [0,1535]\n"
	"      coord -1*v0 1*v1 + [1,1]\n"
	"    access f0 value 0 count 1\n"
	"      coord any clamp [_,7]\n"
	"      coord 3*v1 + [0,0] clamp [-9223372036854775808,_]\n"
	"    def \"f1(v0, v1) = {f0(v0/2, v1 - v0 + 1), 1.5f}\"\n"
	"  stage 1\n"
	"    dim r0 0 256 label \"r$x\"\n"
	"    dim v0 0 1536 label \"x\"\n"
	"    op add.f32 1\n"
	"    access f1 value 0 count 1 store data-dependent\n"
	"      coord any clamp [0,255]\n"
	"      coord + [0,3]\n"
	"    access f1 value 1 count 2\n"
	"      coord any 1*v0 + [-3,4] varies r0 clamp [0,_]\n"
	"      coord 2*r0 -1*v0 + [0,0]\n"
	"    def \"f1(...) = \\\"q\\\"\\\\\\t\\n\\x01\\x7f\\xc3\"\n"
	"func f2 types f32 args 0 output\n"
	"  region\n"
	"  stage 0\n"
	"    def \"f2() = 1.0f\"\n"
	"  stage 1\n"
	"    dim r0 0 10\n"
	"    access f1 value 1 count 1\n"
	"      coord 1*r0 + [0,0]\n"
	"      coord + [9223372036854775807,9223372036854775807]\n"
	"    access f2 value 0 count 1 store\n"
	"    def \"f2() = f2() + f1(r0, 5)\"\n";

/* `text` without labels, generator, function and argv lines. */
static char *strip_labels(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *line = text, *nl, *lab;

	while (*line) {
		nl = strchr(line, '\n');
		if (strncmp(line, "generator ", 10) == 0 ||
		    strncmp(line, "function ", 9) == 0 ||
		    strncmp(line, "argv ", 5) == 0) {
			line = nl + 1;
			continue;
		}
		lab = strstr(line, " label \"");
		if (!lab || lab > nl)
			lab = nl;
		memcpy(o, line, (size_t)(lab - line));
		o += lab - line;
		*o++ = '\n';
		line = nl + 1;
	}
	*o = '\0';
	return out;
}

static char *print_str(const struct pt_model *m, unsigned flags)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	if (pt_model_print(m, flags, &sb)) {
		pt_strbuf_release(&sb);
		return NULL;
	}
	return pt_strbuf_detach(&sb, NULL);
}

PT_TEST(round_trip_with_labels)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	char *out;

	if (pt_model_parse(full, strlen(full), "full", &m, &err))
		fprintf(stderr, "# %s\n", err.msg);
	PT_REQUIRE(m != NULL);
	PT_CHECK_INT(m->ninputs, 5);
	PT_CHECK_INT(m->nfuncs, 3);
	PT_CHECK_INT(m->nstages, 5);
	PT_CHECK_INT(m->argv.nr, 6);
	PT_CHECK_STR(m->argv.v[4], "out dir");
	PT_CHECK_STR(m->stages[2].def,
		     "f1(...) = \"q\"\\\t\n\x01\x7f\xc3");
	PT_CHECK(m->inputs[1].has_estimate &&
		 m->inputs[1].est_bits == 0x3f800000);
	PT_CHECK(!m->inputs[2].has_estimate);
	PT_CHECK(m->funcs[0].can_inline && !m->funcs[0].is_output);
	PT_CHECK_INT(m->funcs[1].ntypes, 2);
	PT_CHECK_INT(m->stages[1].accesses[0].coords[0].coef[0].den, 2);
	PT_CHECK_INT(m->stages[1].accesses[0].coords[0].off_min.num, -1);
	PT_CHECK(!m->stages[1].accesses[1].coords[0].has_clamp_min);
	PT_CHECK_INT(m->stages[1].accesses[1].coords[0].clamp_max, 7);
	PT_CHECK(m->stages[2].accesses[0].is_store &&
		 m->stages[2].accesses[0].data_dependent);
	out = print_str(m, PT_MODEL_PRINT_LABELS);
	PT_CHECK_STR(out, full);
	free(out);
	pt_model_free(m);
}

PT_TEST(round_trip_without_labels)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL, *m2 = NULL;
	char *bare = strip_labels(full), *out, *out2;

	PT_REQUIRE(pt_model_parse(full, strlen(full), "full", &m, &err) == 0);
	out = print_str(m, 0);
	PT_CHECK_STR(out, bare);
	if (pt_model_parse(bare, strlen(bare), "bare", &m2, &err))
		fprintf(stderr, "# %s\n", err.msg);
	PT_REQUIRE(m2 != NULL);
	PT_CHECK(m2->generator == NULL && m2->argv.nr == 0 &&
		 m2->funcs[0].label == NULL);
	out2 = print_str(m2, PT_MODEL_PRINT_LABELS);
	PT_CHECK_STR(out2, bare);
	free(out2);
	out2 = print_str(m2, 0);
	PT_CHECK_STR(out2, bare);
	free(out2);
	free(out);
	free(bare);
	pt_model_free(m);
	pt_model_free(m2);
}

static void set_coord(struct pt_coord *c, int ndims, const int64_t *nd,
		      int64_t lo, int64_t hi)
{
	int d;

	c->affine = 1;
	c->coef = calloc((size_t)ndims, sizeof(*c->coef));
	for (d = 0; d < ndims; d++)
		pt_rat_make(nd[2 * d], nd[2 * d + 1], &c->coef[d]);
	pt_rat_make(lo, 1, &c->off_min);
	pt_rat_make(hi, 1, &c->off_max);
}

static struct pt_access *add_access(struct pt_stage *s, int func, int prod,
				    int ncoords, int count)
{
	struct pt_access *a = pt_stage_add_access(s);

	a->kind = func ? PT_ACCESS_FUNC : PT_ACCESS_INPUT;
	a->producer = prod;
	a->count = count;
	a->ncoords = ncoords;
	a->coords = calloc((size_t)ncoords, sizeof(*a->coords));
	return a;
}

/* Builders, then canonicalize: unsorted and repeated ops and accesses come
 * out sorted and merged. */
PT_TEST(builders_and_canonicalize)
{
	static const char want[] =
		"protune-model 1\n"
		"halide \"14.0.0\"\n"
		"target \"t\"\n"
		"machine-params \"1,2,3\"\n"
		"input i0 buffer f32 dims 1 est 0 100\n"
		"func f0 types f32 args 1 output\n"
		"  region 0 98\n"
		"  stage 0\n"
		"    dim v0 0 98\n"
		"    op add.f32 2\n"
		"    op load.f32 3\n"
		"    access i0 value 0 count 2\n"
		"      coord 1*v0 + [0,0]\n"
		"    access i0 value 0 count 1\n"
		"      coord 1*v0 + [2,2]\n"
		"    def \"f0(v0) = i0(v0) + i0(v0 + 1) + i0(v0)\"\n";
	static const int64_t one[] = { 1, 1 };
	struct pt_model *m = pt_model_new();
	struct pt_input *in;
	struct pt_func *f;
	struct pt_stage *s;
	struct pt_dim *d;
	struct pt_access *a;
	char *out;

	PT_REQUIRE(m != NULL);
	PT_CHECK_INT(m->version, PT_MODEL_FORMAT_VERSION);
	m->halide_version = pt_model_strdup("14.0.0");
	m->target = pt_model_strdup("t");
	m->machine_params = pt_model_strdup("1,2,3");
	PT_CHECK(pt_model_strdup(NULL) == NULL);
	in = pt_model_add_input(m);
	in->is_buffer = 1;
	in->type.code = PT_TYPE_FLOAT;
	in->type.bits = 32;
	in->ndims = 1;
	in->est_min = calloc(1, sizeof(int64_t));
	in->est_extent = calloc(1, sizeof(int64_t));
	in->est_extent[0] = 100;
	f = pt_model_add_func(m);
	f->ntypes = 1;
	f->types = calloc(1, sizeof(*f->types));
	f->types[0].code = PT_TYPE_FLOAT;
	f->types[0].bits = 32;
	f->nargs = 1;
	f->is_output = 1;
	f->region_min = calloc(1, sizeof(int64_t));
	f->region_extent = calloc(1, sizeof(int64_t));
	f->region_extent[0] = 98;
	PT_CHECK(pt_model_stage(m, 0, 0) == NULL);
	s = pt_model_add_stage(m);
	PT_REQUIRE(s != NULL);
	PT_CHECK_INT(s->func, 0);
	PT_CHECK_INT(s->index, 0);
	PT_CHECK_INT(m->funcs[0].nstages, 1);
	PT_CHECK(pt_model_stage(m, 0, 0) == s);
	PT_CHECK(pt_model_stage(m, 0, 1) == NULL);
	PT_CHECK(pt_model_stage(m, 1, 0) == NULL);
	PT_CHECK(pt_model_stage(m, -1, 0) == NULL);
	d = pt_stage_add_dim(s);
	d->extent = 98;
	PT_CHECK(pt_stage_add_op(s, "load.f32", 2) == 0);
	PT_CHECK(pt_stage_add_op(s, "add.f32", 2) == 0);
	PT_CHECK(pt_stage_add_op(s, "load.f32", 1) == 0);
	a = add_access(s, 0, 0, 1, 1);
	set_coord(&a->coords[0], 1, one, 2, 2);
	a = add_access(s, 0, 0, 1, 1);
	set_coord(&a->coords[0], 1, one, 0, 0);
	a = add_access(s, 0, 0, 1, 1);
	set_coord(&a->coords[0], 1, one, 0, 0);
	s->def = pt_model_strdup("f0(v0) = i0(v0) + i0(v0 + 1) + i0(v0)");
	PT_CHECK(pt_model_validate(m, NULL) != 0);  /* not canonical yet */
	PT_CHECK(pt_stage_canonicalize(s) == 0);
	PT_CHECK_INT(s->naccesses, 2);
	PT_CHECK(pt_model_validate(m, NULL) == 0);
	out = print_str(m, PT_MODEL_PRINT_LABELS);
	PT_CHECK_STR(out, want);
	free(out);
	PT_CHECK(pt_stage_canonicalize(s) == 0);  /* idempotent */
	out = print_str(m, 0);
	PT_CHECK_STR(out, want);
	free(out);
	pt_model_free(m);
	pt_model_free(NULL);
}

PT_TEST(canonicalize_sorts_many)
{
	struct pt_model *m;
	struct pt_stage *s;
	char name[16];
	int i;

	PT_REQUIRE(pt_model_parse(full, strlen(full), "f", &m, NULL) == 0);
	s = &m->stages[1];
	/* Reverse the accesses and add ops backwards: canonical again. */
	{
		struct pt_access t = s->accesses[0];

		s->accesses[0] = s->accesses[1];
		s->accesses[1] = t;
	}
	PT_CHECK(pt_model_validate(m, NULL) != 0);
	for (i = 20; i > 0; i--) {
		snprintf(name, sizeof(name), "z%02d.i32", i % 7);
		PT_CHECK(pt_stage_add_op(s, name, i) == 0);
	}
	PT_CHECK(pt_stage_canonicalize(s) == 0);
	PT_CHECK_INT(s->nops, 9);
	for (i = 1; i < s->nops; i++)
		PT_CHECK(strcmp(s->ops[i - 1].name, s->ops[i].name) < 0);
	PT_CHECK(pt_model_validate(m, NULL) == 0);
	PT_CHECK_INT(s->accesses[0].count, 2);
	pt_model_free(m);
}

PT_TEST(rat_and_type_helpers)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	struct pt_type t;
	struct pt_rat r;

	PT_CHECK(pt_rat_make(4, -6, &r) == 0);
	PT_CHECK(r.num == -2 && r.den == 3);
	PT_CHECK(pt_rat_make(0, -5, &r) == 0);
	PT_CHECK(r.num == 0 && r.den == 1);
	PT_CHECK(pt_rat_make(INT64_MIN, 2, &r) == 0);
	PT_CHECK(r.num == INT64_MIN / 2 && r.den == 1);
	PT_CHECK(pt_rat_make(INT64_MIN, -1, &r) == PT_EINVAL);
	PT_CHECK(pt_rat_make(1, INT64_MIN, &r) == PT_EINVAL);
	PT_CHECK(pt_rat_make(1, 0, &r) == PT_EINVAL);
	t.code = PT_TYPE_UINT;
	t.bits = 1;
	PT_CHECK(pt_type_print(t, &sb) == 0);
	t.code = PT_TYPE_HANDLE;
	t.bits = 64;
	PT_CHECK(pt_type_print(t, &sb) == 0);
	t.code = PT_TYPE_FLOAT;
	t.bits = 8;
	PT_CHECK(pt_type_print(t, &sb) == PT_EINVAL);
	PT_CHECK_STR(sb.buf, "u1h64");
	pt_strbuf_release(&sb);
}

/* Replace the first `from` in `full` with `to`, parse, and expect an error
 * on `line` whose message contains `what`. */
static void expect_error(const char *from, const char *to, int line,
			 const char *what)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = (struct pt_model *)&err;
	const char *at = strstr(full, from);
	char *text, prefix[32];
	size_t n;
	int ret;

	if (!PT_CHECK(at != NULL))
		return;
	n = strlen(full) - strlen(from) + strlen(to);
	text = malloc(n + 1);
	memcpy(text, full, (size_t)(at - full));
	strcpy(text + (at - full), to);
	strcat(text, at + strlen(from));
	ret = pt_model_parse(text, n, "t.model", &m, &err);
	PT_CHECK_INT(ret, PT_EFORMAT);
	PT_CHECK(m == NULL);
	if (line > 0)
		snprintf(prefix, sizeof(prefix), "t.model:%d: ", line);
	else
		snprintf(prefix, sizeof(prefix), "t.model: ");
	if (!PT_CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0) ||
	    !PT_CHECK(strstr(err.msg, what) != NULL))
		fprintf(stderr, "# for '%s' -> '%s': %s\n", from, to, err.msg);
	free(text);
}

PT_TEST(parse_errors_have_line_numbers)
{
	expect_error("protune-model 1", "protune-model 2", 1, "version");
	expect_error("protune-model 1", "protune-modal 1", 1, "not a protune");
	expect_error("halide \"14.0.0\"\n", "", 2, "expected 'halide'");
	expect_error("target \"x86", "target  \"x86", 3, "two spaces");
	expect_error("\"2,16777216,40\"", "\"2,16777216,40\" ", 4,
		     "trailing space");
	expect_error("argv \"/abs/blur.generator\" \"-g\" \"blur\" \"-o\" "
		     "\"out dir\" \"target=host\"", "argv", 7, "argv without");
	expect_error("input i1", "input i2", 9, "out of order");
	expect_error("scalar f32", "scalar f31", 9, "bad type");
	expect_error("est 0x3f800000", "est 0x03f800000", 9, "bad estimate");
	expect_error("i8 est 0xffffffffffffff80", "i8 est 0xff", 11,
		     "does not fit");
	expect_error("i8 est 0xffffffffffffff80", "i8 est 0xffffffffffffff7f",
		     11, "does not fit");
	expect_error("f32 est 0x3f800000", "f32 est 0x13f800000", 9,
		     "does not fit");
	expect_error("est none", "est nothing", 10, "bad estimate");
	expect_error("dims 2 est -2 1540 0 2560", "dims 4 est -2 1540 0 2560",
		     8, "8 estimate numbers");
	expect_error("est -2 1540", "est -02 1540", 8, "canonical integer");
	expect_error("est -2 1540", "est -2 0", 8, "out of range");
	expect_error("est -2 1540", "est -0 1540", 8, "canonical integer");
	expect_error("  region 0 1536 0 2560\n", "  region 0 1536\n", 14,
		     "region has 2 numbers");
	expect_error("  region 0 1536 0 2560\n", "  region 0 1536 0 2560\n\n",
		     15, "blank line");
	expect_error("    dim v1 0 2560 label \"_1\"",
		     "    dim v2 0 2560 label \"_1\"", 17, "out of range");
	expect_error("    dim v1 0 2560 label \"_1\"",
		     "    dim v0 0 2560 label \"_1\"", 17, "repeated");
	expect_error("    dim v1 0 2560 label \"_1\"",
		     "    dim r0 0 2560 label \"_1\"", 17, "RVar in a pure");
	expect_error("    op add.u16 2\n    op cast.f32 1\n",
		     "    op cast.f32 1\n    op add.u16 2\n", 29,
		     "out of order");
	expect_error("    op add.u16 2\n", "    op Add.u16 2\n", 28,
		     "bad op name");
	expect_error("    op add.u16 2\n", "    op add.u16 0\n", 28,
		     "out of range");
	expect_error("      coord 1/2*v0 + [-1/2,0]", "      coord 2/4*v0 + "
		     "[-1/2,0]", 31, "bad term");
	expect_error("      coord 1/2*v0 + [-1/2,0]", "      coord 1/2*v0 + "
		     "[1/2,0]", 31, "min > max");
	expect_error("      coord -1*v0 1*v1", "      coord 1*v1 -1*v0", 32,
		     "dim order");
	expect_error("      coord -1*v0 1*v1", "      coord -1*v0 1*v2", 32,
		     "names no dim");
	expect_error("      coord -1*v0 1*v1", "      coord -1*v0 0*v1", 32,
		     "bad term");
	expect_error("clamp [_,7]", "clamp [_,_]", 34, "leave the clamp");
	expect_error("clamp [_,7]", "clamp [8,7]", 34, "min > max");
	expect_error("    access f0 value 0 count 1\n      coord any",
		     "    access f0 value 0 count 1\n      coord 1/2*v0 + "
		     "[-1/2,0] clamp [0,1535]\n      coord -1*v0 1*v1 + [1,1]\n"
		     "    access f0 value 0 count 1\n      coord any", 33,
		     "repeated");
	expect_error("    access f1 value 0 count 1 store data-dependent",
		     "    access f1 value 0 count 1 data-dependent store", 41,
		     "expected the end");
	expect_error("    access f1 value 1 count 2\n",
		     "    access f1 value 2 count 2\n", 44, "out of range");
	expect_error("    access f1 value 1 count 2\n",
		     "    access f1 value 1 count 2 store\n", 44, "a store is");
	expect_error("    access f1 value 1 count 2\n",
		     "    access f3 value 1 count 2\n", 44, "out of range");
	expect_error("    access f1 value 1 count 2\n",
		     "    access i1 value 0 count 2\n", 44, "scalar");
	expect_error("    access f0 value 0 count 2\n",
		     "    access f1 value 0 count 2\n", 30, "pure definition");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"\n", "", 22,
		     "indented by 0 spaces (expected 4: 'access' or 'def')");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"",
		     "    def \"f0(v0, v1) = i0(v0, v1)", 22, "unterminated");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"",
		     "    def \"f0(v0, v1) = i0(v0,\tv1)\"", 22, "tab");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"",
		     "    def \"f0(v0, v1) = \\x41\"", 22, "needless");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"",
		     "    def \"f0(v0, v1) = \\q\"", 22, "unknown escape");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"",
		     "    def \"f0(v0, v1) = \\xZZ\"", 22, "bad \\x");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"",
		     "    def \"f0(v0, v1) = i0(v0, v1)\" x", 22,
		     "expected the end");
	expect_error("    def \"f0(v0, v1) = i0(v0, v1)\"",
		     "    def \"f0(v0, v1) = i0(v0, v1)\"x", 22, "no space");
	expect_error("func f1 types", "func f2 types", 23, "out of order");
	expect_error("inline label \"input_im\"", "label \"input_im\" inline",
		     13, "expected the end");
	expect_error("args 2 output label", "args 2 inline output label",
		     23, "expected the end");
	expect_error("  stage 1\n", "  stage 2\n", 37, "stage number");
	expect_error("    dim r0 0 10\n    access f1 value 1 count 1\n"
		     "      coord 1*r0", "    dim r1 0 10\n    access f1 value "
		     "1 count 1\n      coord 1*r1", 0,
		     "invalid model: f2 stage 1: dim 0: r1 out of range");
	expect_error("func f0 types u16 args 2 inline label \"input_im\"\n"
		     "  region", "func f0 types u16 args 2 inline label "
		     "\"input_im\"\n region", 14, "indented by 1");
	expect_error("      coord 1*v1 + [0,0]\n", "    coord 1*v1 + [0,0]\n",
		     21, "indented by 4");
	expect_error("    def \"f2() = f2() + f1(r0, 5)\"\n",
		     "    def \"f2() = f2() + f1(r0, 5)\"", 58, "no newline");
	expect_error("    def \"f2() = f2() + f1(r0, 5)\"\n",
		     "    def \"f2() = f2() + f1(r0, 5)\"\n\n", 59, "blank");
	expect_error("    def \"f2() = f2() + f1(r0, 5)\"\n",
		     "    def \"f2() = f2() + f1(r0, 5)\"\nfunc f3 types f32 "
		     "args 0\n", 60, "end of text (expected 'region')");
	expect_error("    def \"f2() = f2() + f1(r0, 5)\"\n",
		     "    def \"f2() = f2() + f1(r0, 5)\"\r\n", 58,
		     "carriage return");
	expect_error("generator \"blur\"\nfunction \"blur\"\n",
		     "function \"blur\"\ngenerator \"blur\"\n", 6,
		     "unexpected 'generator'");
	expect_error("est -2 1540 0 2560 label \"input\"",
		     "est -2 1540 0 2560 label input", 8, "quoted string");
	expect_error("9223372036854775807,9223372036854775807",
		     "9223372036854775807,9223372036854775808", 56,
		     "bad offset");
}

PT_TEST(parse_rejects_edge_texts)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m;
	static const char nul[] = "protune-model 1\n\0";

	PT_CHECK(pt_model_parse("", 0, "e", &m, &err) == PT_EFORMAT);
	PT_CHECK(m == NULL);
	PT_CHECK_STR(err.msg, "e:1: empty text (expected 'protune-model 1')");
	PT_CHECK(pt_model_parse(nul, sizeof(nul) - 1, "e", &m, &err) ==
		 PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "NUL") != NULL);
	PT_CHECK(pt_model_parse(full, 200, "e", &m, &err) == PT_EFORMAT);
	PT_CHECK(m == NULL);
	/* Header only: at least one Func is needed. */
	PT_CHECK(pt_model_parse(full, (size_t)(strstr(full, "generator") -
					       full), "e", &m, &err) ==
		 PT_EFORMAT);
	PT_CHECK_STR(err.msg, "e:5: unexpected end of text (expected 'func')");
}

PT_TEST(validate_names_the_problem)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m;

	PT_REQUIRE(pt_model_parse(full, strlen(full), "f", &m, NULL) == 0);
	PT_CHECK(pt_model_validate(m, &err) == 0);
	m->stages[4].accesses[0].producer = 2;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "f2 stage 1: access 0 reads value 1 of f2")
		 != NULL);
	m->stages[4].accesses[0].producer = 1;
	m->funcs[1].region_extent[1] = 0;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "f1: region of arg 1") != NULL);
	m->funcs[1].region_extent[1] = 2560;
	m->stages[2].dims[0].is_rvar = 0;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "f1 stage 1: dim v0 twice") != NULL);
	m->stages[2].dims[0].is_rvar = 1;
	m->stages[1].accesses[0].coords[0].coef[0].num = 2;
	m->stages[1].accesses[0].coords[0].coef[0].den = 4;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "not reduced") != NULL);
	m->stages[1].accesses[0].coords[0].coef[0].num = 1;
	m->stages[1].accesses[0].coords[0].coef[0].den = 2;
	m->inputs[3].est_bits = 0x80;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "i3") != NULL);
	m->inputs[3].est_bits = 0x7f;
	PT_CHECK(pt_model_validate(m, &err) == 0);
	m->funcs[0].can_inline = 1;
	m->funcs[2].is_output = 0;
	m->funcs[1].is_output = 0;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "no output") != NULL);
	m->funcs[2].is_output = 1;
	PT_CHECK(pt_model_validate(m, &err) == 0);
	{
		struct pt_strbuf sb = PT_STRBUF_INIT;

		m->stages[4].dims[0].index = 3;
		PT_CHECK(pt_model_print(m, 0, &sb) == PT_EINVAL);
		PT_CHECK_INT(sb.len, 0);
		pt_strbuf_release(&sb);
	}
	pt_model_free(m);
}

/* A partial coordinate (doc/model-format.md): its fields, its parse
 * errors and validation. */
PT_TEST(partial_coordinates)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m;
	const struct pt_coord *c;

	PT_REQUIRE(pt_model_parse(full, strlen(full), "f", &m, NULL) == 0);
	/* f1 stage 1 (model stage 2): dims r0, v0; access 1's first coord */
	c = &m->stages[2].accesses[1].coords[0];
	PT_CHECK_INT(c->affine, 0);
	PT_CHECK_INT(c->partial, 1);
	PT_REQUIRE(c->coef != NULL && c->varies != NULL);
	PT_CHECK_INT(c->coef[0].num, 0);
	PT_CHECK_INT(c->coef[1].num, 1);
	PT_CHECK_INT(c->varies[0], 1);
	PT_CHECK_INT(c->varies[1], 0);
	PT_CHECK_INT(c->off_min.num, -3);
	PT_CHECK_INT(c->off_max.num, 4);
	PT_CHECK(c->has_clamp_min && !c->has_clamp_max);

	m->stages[2].accesses[1].coords[0].varies[1] = 1;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "both affine and varying") != NULL);
	m->stages[2].accesses[1].coords[0].varies[0] = 0;
	m->stages[2].accesses[1].coords[0].varies[1] = 0;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "partial without varying dims") != NULL);
	m->stages[2].accesses[1].coords[0].varies[0] = 1;
	m->stages[2].accesses[1].coords[0].affine = 1;
	PT_CHECK(pt_model_validate(m, &err) == PT_EINVAL);
	PT_CHECK(strstr(err.msg, "affine and partial") != NULL);
	m->stages[2].accesses[1].coords[0].affine = 0;
	PT_CHECK(pt_model_validate(m, &err) == 0);
	pt_model_free(m);

	expect_error("any 1*v0 + [-3,4] varies r0", "any 1*v0 + [-3,4]", 45,
		     "expected 'varies'");
	expect_error("any 1*v0 + [-3,4] varies r0", "any 1*v0 + [-3,4] "
		     "varies", 45, "'varies' without a dim");
	expect_error("any 1*v0 + [-3,4] varies r0", "any 1*v0 + [-3,4] "
		     "varies clamp", 45, "'varies' without a dim");
	expect_error("any 1*v0 + [-3,4] varies r0", "any 1*v0 + [-3,4] "
		     "varies v0", 45, "has a term and varies");
	expect_error("any 1*v0 + [-3,4] varies r0", "any 1*v0 + [-3,4] "
		     "varies r1", 45, "names no dim");
	expect_error("any 1*v0 + [-3,4] varies r0", "any + [-3,4] "
		     "varies v0 r0", 45, "dim order");
	expect_error("any 1*v0 + [-3,4] varies r0", "any 1*v0 + [4,-3] "
		     "varies r0", 45, "min > max");
	expect_error("any 1*v0 + [-3,4] varies r0", "any 1*v0 varies r0", 45,
		     "bad term");
}

PT_SUITE(model,
	 { "round trip with labels", round_trip_with_labels },
	 { "round trip without labels", round_trip_without_labels },
	 { "builders and canonicalize", builders_and_canonicalize },
	 { "canonicalize sorts many", canonicalize_sorts_many },
	 { "rationals and types", rat_and_type_helpers },
	 { "parse errors have line numbers", parse_errors_have_line_numbers },
	 { "parse rejects edge texts", parse_rejects_edge_texts },
	 { "validate names the problem", validate_names_the_problem },
	 { "partial coordinates", partial_coordinates });
