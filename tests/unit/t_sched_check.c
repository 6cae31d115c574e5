/* Unit tests of pt_sched_check(), pt_sched_nest() and pt_sched_to_cpp(),
 * on small models built by hand (pt_test_sched_model(), also used by
 * t_randsched.c). */
#include "pt_test.h"
#include "protune/pt_model.h"
#include "protune/pt_randsched.h"
#include "protune/pt_sched.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- building models ------------------------------------------------------ */

static const char *const pure_labels[] = { "x", "y", "c", "w" };

static struct pt_model *new_model(void)
{
	struct pt_model *m = pt_model_new();
	int i;

	m->halide_version = pt_model_strdup("14.0.0");
	m->target = pt_model_strdup("x86-64-linux-avx-avx2-sse41");
	m->machine_params = pt_model_strdup("2,16777216,40");
	for (i = 0; i < 16; i++)
		m->key[i] = (uint8_t)(0xa0 + i);
	return m;
}

static int add_input(struct pt_model *m, const char *label, int bits,
		     int64_t w, int64_t h)
{
	struct pt_input *in = pt_model_add_input(m);

	in->label = pt_model_strdup(label);
	in->is_buffer = 1;
	in->type.code = PT_TYPE_UINT;
	in->type.bits = bits;
	in->ndims = 2;
	in->est_min = calloc(2, sizeof(int64_t));
	in->est_extent = calloc(2, sizeof(int64_t));
	in->est_extent[0] = w;
	in->est_extent[1] = h;
	return m->ninputs - 1;
}

/* A Func with `nargs` pure args of extents ext[] and its pure stage. */
static struct pt_stage *add_func(struct pt_model *m, const char *label,
				 int nargs, const int64_t *ext, int ntypes,
				 int bits, int is_output)
{
	struct pt_func *f = pt_model_add_func(m);
	struct pt_stage *st;
	int i;

	f->label = pt_model_strdup(label);
	f->ntypes = ntypes;
	f->types = calloc((size_t)ntypes, sizeof(*f->types));
	for (i = 0; i < ntypes; i++) {
		f->types[i].code = PT_TYPE_UINT;
		f->types[i].bits = bits;
	}
	f->nargs = nargs;
	f->is_output = is_output;
	f->can_inline = !is_output;
	f->region_min = calloc((size_t)nargs + 1, sizeof(int64_t));
	f->region_extent = calloc((size_t)nargs + 1, sizeof(int64_t));
	for (i = 0; i < nargs; i++)
		f->region_extent[i] = ext[i];
	st = pt_model_add_stage(m);
	for (i = 0; i < nargs; i++) {
		struct pt_dim *d = pt_stage_add_dim(st);

		d->label = pt_model_strdup(pure_labels[i]);
		d->index = i;
		d->extent = ext[i];
	}
	st->def = pt_model_strdup("(hand-built)");
	pt_stage_add_op(st, "add.u16", 1);
	return st;
}

/* An update of the last Func: `nr` RVars (extents rext[]) inside its pure
 * dims when `pure` (an update like f(x, r) = ...), else RVars only. */
static struct pt_stage *add_update(struct pt_model *m, int nr,
				   const int64_t *rext, int pure,
				   const char *def)
{
	struct pt_func *f = &m->funcs[m->nfuncs - 1];
	struct pt_stage *st = pt_model_add_stage(m);
	char label[16];
	int i;

	f->can_inline = 0;
	for (i = 0; i < nr; i++) {
		struct pt_dim *d = pt_stage_add_dim(st);

		snprintf(label, sizeof(label), "r6$%c", "xyzw"[i]);
		d->label = pt_model_strdup(label);
		d->is_rvar = 1;
		d->index = i;
		d->extent = rext[i];
	}
	for (i = 0; pure && i < f->nargs; i++) {
		struct pt_dim *d;

		if (pure == 2 && i == f->nargs - 1)
			break;  /* that arg is the RVar */
		d = pt_stage_add_dim(st);
		d->label = pt_model_strdup(pure_labels[i]);
		d->index = i;
		d->extent = f->region_extent[i];
	}
	st->def = pt_model_strdup(def);
	pt_stage_add_op(st, "add.u16", 1);
	return st;
}

/* Coordinate k of an access: affine in stage dim `dim` (-1: constant)
 * with coefficient 1 and offset off, optionally clamped to [lo, hi]. */
static void coord(struct pt_stage *st, struct pt_access *a, int k, int dim,
		  int64_t off, int clamp, int64_t lo, int64_t hi)
{
	struct pt_coord *c = &a->coords[k];
	int d;

	c->affine = 1;
	c->coef = calloc((size_t)st->ndims + 1, sizeof(*c->coef));
	for (d = 0; d < st->ndims; d++) {
		c->coef[d].num = d == dim;
		c->coef[d].den = 1;
	}
	c->off_min.num = c->off_max.num = off;
	c->off_min.den = c->off_max.den = 1;
	if (clamp) {
		c->has_clamp_min = c->has_clamp_max = 1;
		c->clamp_min = lo;
		c->clamp_max = hi;
	}
}

/* The stage dim that is pure var k, or -1. */
static int pure_dim(const struct pt_stage *st, int k)
{
	int d;

	for (d = 0; d < st->ndims; d++)
		if (!st->dims[d].is_rvar && st->dims[d].index == k)
			return d;
	return -1;
}

/* An access whose coordinate k is pure var k plus off[k] (dx, dy). */
static struct pt_access *access(struct pt_stage *st, int kind, int producer,
				int ncoords, int64_t dx, int64_t dy)
{
	struct pt_access *a = pt_stage_add_access(st);
	int k;

	a->kind = kind;
	a->producer = producer;
	a->count = 1;
	a->ncoords = ncoords;
	a->coords = calloc((size_t)ncoords + 1, sizeof(*a->coords));
	for (k = 0; k < ncoords; k++)
		coord(st, a, k, pure_dim(st, k), k == 0 ? dx : k == 1 ? dy : 0,
		      0, 0, 0);
	return a;
}

static void finish(struct pt_model *m)
{
	int i;

	for (i = 0; i < m->nstages; i++)
		pt_stage_canonicalize(&m->stages[i]);
}

#define FUNC PT_ACCESS_FUNC
#define INPUT PT_ACCESS_INPUT

struct pt_model *pt_test_sched_model(const char *name);

/* Models by name:
 *   chain   f0 in_im, f1 a = in_im + 1, f2 b = 3-tap stencil of a in x,
 *           f3 out = b
 *   clamp   f0 in_im, f1 clamped = in_im at clamped coords, f2 blur_x,
 *           f3 blur_y (3-tap stencils), f4 out
 *   tuple   f0 in_im, f1 pair (2 values), f2 out = pair[0] + pair[1]
 *   hist    f0 in_im, f1 hist(i) += 1 over an RDom of the image (data-
 *           dependent store), f2 out = hist(in_im(x, y))
 *   scan    f0 in_im, f1 scan(x, y) = in_im; scan(x, r) += scan(x, r-1),
 *           f2 out = scan
 *   conv    f0 in_im, f1 conv(x, y) = 0; conv(x, y) += in_im(x + r.x,
 *           y + r.y) over a constant 3x3 RDom, f2 out = conv
 *   fanout  f0 in_im, f1 a, f2 b = a(x+1, y), f3 c = a(x, y+1),
 *           f4 out = b + c
 *   multi   f0 in_im, f1 a, f2 out1 = a (output), f3 out2 = a + out1
 *           (output)
 *   long    f0 in_im, f1 .. f12 pointwise chain, f13 out
 *   taps    f0 in_im, f1 .. f5 3-tap stencils in x, f6 out
 *   onept   f0 in_im, f1 clamped (as in clamp), f2 p = clamped, f3 q = p
 *           (pointwise), f4 k = clamped(0, 0) (a 1x1 region), f5 out =
 *           q(x, y) + k(0, 0)
 *   upy     f0 in_im, f1 a (as clamped), f2 up = a(x / 2, y / 2) + a(x / 2 - 1
 *           + 2 * (x % 2), y / 2) (interpolate's upsampling: offsets
 *           [-1/2, 0] and [-1, 1/2] of x / 2), f3 out = up
 */
struct pt_model *pt_test_sched_model(const char *name)
{
	static const int64_t e2[2] = { 64, 48 };
	static const int64_t e256[1] = { 256 };
	struct pt_model *m = new_model();
	struct pt_stage *st;
	struct pt_access *a;
	int in, i;

	in = add_input(m, "input", 16, 64, 48);
	st = add_func(m, "input_im", 2, e2, 1, 16, 0);
	access(st, INPUT, in, 2, 0, 0);

	if (!strcmp(name, "chain")) {
		st = add_func(m, "a", 2, e2, 1, 16, 0);
		access(st, FUNC, 0, 2, 0, 0);
		st = add_func(m, "b", 2, e2, 1, 16, 0);
		for (i = -1; i <= 1; i++)
			access(st, FUNC, 1, 2, i, 0);
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 2, 2, 0, 0);
	} else if (!strcmp(name, "clamp")) {
		st = add_func(m, "clamped", 2, e2, 1, 16, 0);
		a = access(st, FUNC, 0, 2, 0, 0);
		a->coords[0].has_clamp_min = a->coords[0].has_clamp_max = 1;
		a->coords[0].clamp_max = 63;
		a->coords[1].has_clamp_min = a->coords[1].has_clamp_max = 1;
		a->coords[1].clamp_max = 47;
		st = add_func(m, "blur_x", 2, e2, 1, 16, 0);
		for (i = -1; i <= 1; i++)
			access(st, FUNC, 1, 2, i, 0);
		st = add_func(m, "blur_y", 2, e2, 1, 16, 0);
		for (i = -1; i <= 1; i++)
			access(st, FUNC, 2, 2, 0, i);
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 3, 2, 0, 0);
	} else if (!strcmp(name, "tuple")) {
		st = add_func(m, "pair", 2, e2, 2, 32, 0);
		access(st, FUNC, 0, 2, 0, 0);
		st = add_func(m, "out", 2, e2, 1, 32, 1);
		access(st, FUNC, 1, 2, 0, 0);
		a = access(st, FUNC, 1, 2, 0, 0);
		a->value_index = 1;
	} else if (!strcmp(name, "hist")) {
		static const int64_t r2[2] = { 64, 48 };

		st = add_func(m, "hist", 1, e256, 1, 32, 0);
		st = add_update(m, 2, r2, 0, "f1(f0(r0, r1)) = (f1(f0(r0, "
				"r1)) + 1) rdom r0(0, i0.extent.0) "
				"r1(0, i0.extent.1)");
		a = pt_stage_add_access(st);  /* the data-dependent store */
		a->kind = FUNC;
		a->producer = 1;
		a->count = 1;
		a->is_store = 1;
		a->data_dependent = 1;
		a->ncoords = 1;
		a->coords = calloc(1, sizeof(*a->coords));
		a->coords[0].has_clamp_min = a->coords[0].has_clamp_max = 1;
		a->coords[0].clamp_max = 255;
		a = pt_stage_add_access(st);  /* its previous value */
		a->kind = FUNC;
		a->producer = 1;
		a->count = 1;
		a->data_dependent = 1;
		a->ncoords = 1;
		a->coords = calloc(1, sizeof(*a->coords));
		a->coords[0].has_clamp_min = a->coords[0].has_clamp_max = 1;
		a->coords[0].clamp_max = 255;
		a = pt_stage_add_access(st);  /* input_im(r.x, r.y) */
		a->kind = FUNC;
		a->producer = 0;
		a->count = 1;
		a->ncoords = 2;
		a->coords = calloc(2, sizeof(*a->coords));
		coord(st, a, 0, 0, 0, 0, 0, 0);
		coord(st, a, 1, 1, 0, 0, 0, 0);
		st = add_func(m, "out", 2, e2, 1, 32, 1);
		access(st, FUNC, 0, 2, 0, 0);
		a = pt_stage_add_access(st);
		a->kind = FUNC;
		a->producer = 1;
		a->count = 1;
		a->data_dependent = 1;
		a->ncoords = 1;
		a->coords = calloc(1, sizeof(*a->coords));
		a->coords[0].has_clamp_min = a->coords[0].has_clamp_max = 1;
		a->coords[0].clamp_max = 255;
	} else if (!strcmp(name, "scan")) {
		static const int64_t r1[1] = { 47 };

		st = add_func(m, "scan", 2, e2, 1, 16, 0);
		access(st, FUNC, 0, 2, 0, 0);
		st = add_update(m, 1, r1, 2, "f1(v0, r0) = (f1(v0, (r0 - 1)) "
				"+ f1(v0, r0)) rdom r0(1, 47)");
		/* scan(x, r) = scan(x, r - 1) + scan(x, r): dims r0, v0 */
		a = pt_stage_add_access(st);
		a->kind = FUNC;
		a->producer = 1;
		a->count = 1;
		a->is_store = 1;
		a->ncoords = 2;
		a->coords = calloc(2, sizeof(*a->coords));
		coord(st, a, 0, 1, 0, 0, 0, 0);
		coord(st, a, 1, 0, 1, 0, 0, 0);
		a = pt_stage_add_access(st);
		a->kind = FUNC;
		a->producer = 1;
		a->count = 1;
		a->ncoords = 2;
		a->coords = calloc(2, sizeof(*a->coords));
		coord(st, a, 0, 1, 0, 0, 0, 0);
		coord(st, a, 1, 0, 0, 0, 0, 0);
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 1, 2, 0, 0);
	} else if (!strcmp(name, "conv")) {
		static const int64_t r3[2] = { 3, 3 };

		st = add_func(m, "conv", 2, e2, 1, 32, 0);
		st = add_update(m, 2, r3, 1, "f1(v0, v1) = (f1(v0, v1) + "
				"f0((v0 + r0), (v1 + r1))) rdom r0(0, 3) "
				"r1(0, 3)");
		a = access(st, FUNC, 1, 2, 0, 0);
		a->is_store = 1;
		access(st, FUNC, 1, 2, 0, 0);
		a = access(st, FUNC, 0, 2, 0, 0);
		a->coords[0].coef[0].num = 1;  /* x + r.x */
		a->coords[1].coef[1].num = 1;  /* y + r.y */
		st = add_func(m, "out", 2, e2, 1, 32, 1);
		access(st, FUNC, 1, 2, 0, 0);
	} else if (!strcmp(name, "fanout")) {
		st = add_func(m, "a", 2, e2, 1, 16, 0);
		access(st, FUNC, 0, 2, 0, 0);
		st = add_func(m, "b", 2, e2, 1, 16, 0);
		access(st, FUNC, 1, 2, 1, 0);
		st = add_func(m, "c", 2, e2, 1, 16, 0);
		access(st, FUNC, 1, 2, 0, 1);
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 2, 2, 0, 0);
		access(st, FUNC, 3, 2, 0, 0);
	} else if (!strcmp(name, "multi")) {
		st = add_func(m, "a", 2, e2, 1, 16, 0);
		access(st, FUNC, 0, 2, 0, 0);
		st = add_func(m, "out1", 2, e2, 1, 16, 1);
		access(st, FUNC, 1, 2, 0, 0);
		st = add_func(m, "out2", 2, e2, 1, 8, 1);
		access(st, FUNC, 1, 2, 0, 0);
		access(st, FUNC, 2, 2, 0, 0);
	} else if (!strcmp(name, "long")) {
		char label[16];

		for (i = 1; i <= 12; i++) {
			snprintf(label, sizeof(label), "p%d", i);
			st = add_func(m, label, 2, e2, 1, 16, 0);
			access(st, FUNC, i - 1, 2, 0, 0);
		}
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 12, 2, 0, 0);
	} else if (!strcmp(name, "taps")) {
		char label[16];
		int k;

		for (i = 1; i <= 5; i++) {
			snprintf(label, sizeof(label), "t%d", i);
			st = add_func(m, label, 2, e2, 1, 16, 0);
			for (k = -1; k <= 1; k++)
				access(st, FUNC, i - 1, 2, k, 0);
		}
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 5, 2, 0, 0);
	} else if (!strcmp(name, "upy")) {
		st = add_func(m, "a", 2, e2, 1, 16, 0);
		a = access(st, FUNC, 0, 2, 0, 0);
		a->coords[0].has_clamp_min = a->coords[0].has_clamp_max = 1;
		a->coords[0].clamp_max = 63;
		a->coords[1].has_clamp_min = a->coords[1].has_clamp_max = 1;
		a->coords[1].clamp_max = 47;
		st = add_func(m, "up", 2, e2, 1, 16, 0);
		for (i = 0; i < 2; i++) {
			int k;

			a = access(st, FUNC, 1, 2, 0, 0);
			for (k = 0; k < 2; k++) {
				struct pt_coord *c = &a->coords[k];

				c->coef[k].den = 2;
				c->off_min.num = -1;
				c->off_min.den = 2;
				c->off_max.num = 0;
			}
			if (i) {  /* x / 2 - 1 + 2 * (x % 2) */
				a->coords[0].off_min.num = -1;
				a->coords[0].off_min.den = 1;
				a->coords[0].off_max.num = 1;
				a->coords[0].off_max.den = 2;
			}
		}
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 2, 2, 0, 0);
	} else if (!strcmp(name, "onept")) {
		static const int64_t e1[2] = { 1, 1 };

		st = add_func(m, "clamped", 2, e2, 1, 16, 0);
		a = access(st, FUNC, 0, 2, 0, 0);
		a->coords[0].has_clamp_min = a->coords[0].has_clamp_max = 1;
		a->coords[0].clamp_max = 63;
		a->coords[1].has_clamp_min = a->coords[1].has_clamp_max = 1;
		a->coords[1].clamp_max = 47;
		st = add_func(m, "p", 2, e2, 1, 16, 0);
		access(st, FUNC, 1, 2, 0, 0);
		st = add_func(m, "q", 2, e2, 1, 16, 0);
		access(st, FUNC, 2, 2, 0, 0);
		st = add_func(m, "k", 2, e1, 1, 16, 0);
		a = access(st, FUNC, 1, 2, 0, 0);
		for (i = 0; i < 2; i++) {
			free(a->coords[i].coef);
			coord(st, a, i, -1, 0, 1, 0, 0);
		}
		st = add_func(m, "out", 2, e2, 1, 16, 1);
		access(st, FUNC, 3, 2, 0, 0);
		a = access(st, FUNC, 4, 2, 0, 0);
		for (i = 0; i < 2; i++) {
			free(a->coords[i].coef);
			coord(st, a, i, -1, 0, 0, 0, 0);
		}
	} else {
		pt_model_free(m);
		return NULL;
	}
	finish(m);
	return m;
}

/* --- building schedules --------------------------------------------------- */

static struct pt_directive *dir(struct pt_sched *s, int f, int st,
				enum pt_directive_kind kind, const char *dim)
{
	struct pt_directive *d;

	d = pt_sched_add_directive(&s->funcs[f].stages[st]);

	d->kind = kind;
	d->dim = pt_model_strdup(dim);
	return d;
}

static void split(struct pt_sched *s, int f, int st, const char *dim,
		  const char *outer, const char *inner, int64_t factor,
		  enum pt_tail tail)
{
	struct pt_directive *d = dir(s, f, st, PT_DIR_SPLIT, dim);

	d->outer = pt_model_strdup(outer);
	d->inner = pt_model_strdup(inner);
	d->factor = factor;
	d->tail = tail;
}

/* reorder(s, f, st, "a", "b", ..., NULL), innermost first */
static void reorder(struct pt_sched *s, int f, int st, ...)
{
	struct pt_directive *d = dir(s, f, st, PT_DIR_REORDER, NULL);
	const char *n;
	va_list ap;

	va_start(ap, st);
	while ((n = va_arg(ap, const char *)))
		pt_strvec_push(&d->order, n);
	va_end(ap);
}

static void at(struct pt_sched *s, int f, int j, const char *loop)
{
	struct pt_sched_func *sf = &s->funcs[f];

	sf->compute = PT_COMPUTE_AT;
	sf->compute_at.func = j;
	free(sf->compute_at.loop);
	sf->compute_at.loop = pt_model_strdup(loop);
	sf->store_at.func = j;
	free(sf->store_at.loop);
	sf->store_at.loop = pt_model_strdup(loop);
}

static void store_root(struct pt_sched *s, int f)
{
	s->funcs[f].store_root = 1;
}

static void store_at(struct pt_sched *s, int f, int j, const char *loop)
{
	struct pt_sched_func *sf = &s->funcs[f];

	sf->store_at.func = j;
	free(sf->store_at.loop);
	sf->store_at.loop = pt_model_strdup(loop);
}

/* Check, and on refusal, that the message holds each of the strings. */
static int refused(const struct pt_model *m, const struct pt_sched *s, ...)
{
	struct pt_error err = PT_ERROR_INIT;
	const char *want;
	va_list ap;
	int ret = pt_sched_check(m, s, &err), ok = 1;

	if (ret != PT_EMISMATCH) {
		fprintf(stderr, "# expected a refusal, got %d\n", ret);
		return 0;
	}
	va_start(ap, s);
	while ((want = va_arg(ap, const char *)))
		if (!strstr(err.msg, want)) {
			fprintf(stderr, "# '%s' not in: %s\n", want, err.msg);
			ok = 0;
		}
	va_end(ap);
	return ok;
}

static int accepted(const struct pt_model *m, const struct pt_sched *s)
{
	struct pt_error err = PT_ERROR_INIT;

	if (pt_sched_check(m, s, &err) == 0)
		return 1;
	fprintf(stderr, "# refused: %s\n", err.msg);
	return 0;
}

static struct pt_model *model(const char *name)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = pt_test_sched_model(name);

	PT_REQUIRE(m != NULL);
	if (pt_model_validate(m, &err))
		fprintf(stderr, "# %s: %s\n", name, err.msg);
	PT_REQUIRE(pt_model_validate(m, NULL) == 0);
	return m;
}

/* --- tests ---------------------------------------------------------------- */

PT_TEST(models_are_valid)
{
	static const char *const names[] = { "chain", "clamp", "tuple",
		"hist", "scan", "conv", "fanout", "multi", "long", "taps",
		"onept", "upy" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct pt_model *m = model(names[i]);
		struct pt_sched *s = pt_sched_new_for(m);

		/* All at root, no directives: always legal. */
		PT_CHECK(accepted(m, s));
		pt_sched_free(s);
		pt_model_free(m);
	}
}

PT_TEST(rule1_shape)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);

	PT_CHECK(accepted(m, s));
	s->key[3] ^= 1;
	PT_CHECK(refused(m, s, "key", NULL));
	s->key[3] ^= 1;
	s->nfuncs--;
	PT_CHECK(refused(m, s, "3 Funcs, the model 4", NULL));
	s->nfuncs++;
	s->funcs[2].nstages = 2;
	PT_CHECK(refused(m, s, "f2 (b)", "2 stages, the Func has 1", NULL));
	s->funcs[2].nstages = 0;  /* fewer stages: no directives */
	PT_CHECK(accepted(m, s));
	s->funcs[2].nstages = 1;
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(rule2_names)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);

	split(s, 3, 0, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	split(s, 3, 0, "xo", "xoo", "xoi", 2, PT_TAIL_GUARD);
	reorder(s, 3, 0, "xi", "v1", "xoi", "xoo", NULL);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v7", "a", "b", 8, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "f3 (out) stage 0", "unknown dim 'v7'", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);  /* Halide's name of v1 is "y" */
	split(s, 3, 0, "v0", "y", "xi", 8, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "f3 (out) stage 0", "'y'", "clashes", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	split(s, 3, 0, "v1", "yo", "xo", 8, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "'xo' is already a name", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	split(s, 3, 0, "v0", "xo2", "xi2", 2, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "already split", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "v5", "xi", 8, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "bad split result name 'v5'", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	reorder(s, 3, 0, "xi", "xo", NULL);
	PT_CHECK(refused(m, s, "reorder lists 2 dims, the stage has 3", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	dir(s, 3, 0, PT_DIR_PARALLEL, "v1");
	dir(s, 3, 0, PT_DIR_PARALLEL, "v1");
	PT_CHECK(refused(m, s, "already marked parallel", NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(rule3_inline)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);
	int i;

	s->funcs[0].compute = PT_COMPUTE_INLINE;
	s->funcs[1].compute = PT_COMPUTE_INLINE;
	PT_CHECK(accepted(m, s));
	s->funcs[3].compute = PT_COMPUTE_INLINE;
	PT_CHECK(refused(m, s, "f3 (out)", "output cannot be inlined", NULL));
	s->funcs[3].compute = PT_COMPUTE_ROOT;
	dir(s, 1, 0, PT_DIR_PARALLEL, "v1");
	PT_CHECK(refused(m, s, "f1 (a) stage 0", "takes no directives", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	m = model("hist");
	s = pt_sched_new_for(m);
	s->funcs[1].compute = PT_COMPUTE_INLINE;
	PT_CHECK(refused(m, s, "f1 (hist)", "cannot be inlined", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* At most 8 inlined Funcs feed a stage. */
	m = model("long");
	s = pt_sched_new_for(m);
	for (i = 5; i <= 12; i++)
		s->funcs[i].compute = PT_COMPUTE_INLINE;
	PT_CHECK(accepted(m, s));
	s->funcs[4].compute = PT_COMPUTE_INLINE;
	PT_CHECK(refused(m, s, "f13 (out) stage 0", "more than 8 inlined",
			 NULL));
	s->funcs[8].compute = PT_COMPUTE_ROOT;
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	pt_model_free(m);

	/* At most 64 copies: out reads t5 once, each tN reads t(N-1) three
	 * times; inlining t2..t5 gives 27 copies of t2, t1 too 81 of t1. */
	m = model("taps");
	s = pt_sched_new_for(m);
	for (i = 2; i <= 5; i++)
		s->funcs[i].compute = PT_COMPUTE_INLINE;
	PT_CHECK(accepted(m, s));
	s->funcs[1].compute = PT_COMPUTE_INLINE;
	PT_CHECK(refused(m, s, "f6 (out) stage 0", "81 copies of f1 (t1)",
			 NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(rule4_compute_at)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);

	split(s, 3, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
	at(s, 2, 3, "xo");
	at(s, 1, 3, "v1");
	PT_CHECK(accepted(m, s));
	at(s, 1, 3, "xi");  /* b, which reads a, is at xo, outside xi */
	PT_CHECK(refused(m, s, "f1 (a)", "reader f2 (b)",
			 "outside that loop", NULL));
	at(s, 1, 2, "v0");  /* at its consumer, inside xo: fine */
	PT_CHECK(accepted(m, s));
	at(s, 2, 3, "v0");
	PT_CHECK(refused(m, s, "f2 (b)", "'v0', which is not a loop", NULL));
	at(s, 2, 1, "v0");
	PT_CHECK(refused(m, s, "f2 (b)", "not a consumer", NULL));
	at(s, 2, 3, "xo");
	s->funcs[2].compute = PT_COMPUTE_INLINE;
	PT_CHECK(refused(m, s, "f1 (a)", "which is inlined", NULL));
	s->funcs[2].compute = PT_COMPUTE_ROOT;
	at(s, 1, 3, "xo");  /* b reads it and is at root */
	PT_CHECK(refused(m, s, "f1 (a)", "f2 (b) stage 0 reads it", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_VECTORIZE, "xi");
	at(s, 2, 3, "xi");
	PT_CHECK(refused(m, s, "f2 (b)", "vectorized loop", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* Fan-out: a is read by b and c; it may sit at out's loop only if
	 * both are inside it. */
	m = model("fanout");
	s = pt_sched_new_for(m);
	at(s, 1, 4, "v1");
	PT_CHECK(refused(m, s, "f1 (a)", "f2 (b) stage 0 reads it", NULL));
	at(s, 2, 4, "v0");
	at(s, 3, 4, "v1");
	PT_CHECK(accepted(m, s));
	at(s, 1, 4, "v0");  /* c is at v1, outside v0 */
	PT_CHECK(refused(m, s, "f1 (a)", "reader f3 (c)", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* Not per vector tile of a consumer that downsamples it. */
	m = model("chain");
	m->stages[3].accesses[0].coords[0].coef[0].num = 2;  /* b(2x, y) */
	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	split(s, 3, 0, "xo", "xoo", "xoi", 2, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_VECTORIZE, "xi");
	at(s, 2, 3, "v1");
	PT_CHECK(accepted(m, s));
	at(s, 2, 3, "xoi");
	PT_CHECK(refused(m, s, "f2 (b)", "inside a vector tile of f3",
			 "stride along the vectorized 'xi'", NULL));
	m->stages[3].accesses[0].coords[0].coef[0].num = 1;
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	/* The same when a tile loop of x is outside the site loop y. */
	m->stages[3].accesses[0].coords[0].coef[0].num = 2;
	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	reorder(s, 3, 0, "xi", "v1", "xo", NULL);
	dir(s, 3, 0, PT_DIR_VECTORIZE, "xi");
	at(s, 2, 3, "v1");
	PT_CHECK(refused(m, s, "f2 (b)", "inside a vector tile of f3", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* Only the last stage of the site Func holds the site. */
	m = model("scan");
	s = pt_sched_new_for(m);
	at(s, 0, 1, "v0");
	PT_CHECK(refused(m, s, "f0 (input_im)", "f1 stage 0 reads it",
			 "last stage (1)", NULL));
	at(s, 1, 2, "v1");
	PT_CHECK(refused(m, s, "f0 (input_im)", NULL));
	s->funcs[0].compute = PT_COMPUTE_ROOT;
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(rule5_store)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);

	/* Line buffering: b per row of out, kept across rows. */
	at(s, 2, 3, "v1");
	s->funcs[2].store_root = 1;
	PT_CHECK(accepted(m, s));
	dir(s, 3, 0, PT_DIR_PARALLEL, "v1");
	PT_CHECK(refused(m, s, "f2 (b)", "parallel loop 'v1' of f3 (out)",
			 NULL));
	pt_sched_free(s);

	/* Stored at the loop just outside the compute loop. */
	s = pt_sched_new_for(m);
	at(s, 2, 3, "v0");
	store_at(s, 2, 3, "v1");
	PT_CHECK(accepted(m, s));
	dir(s, 3, 0, PT_DIR_PARALLEL, "v1");
	PT_CHECK(accepted(m, s));  /* the store loop itself is parallel */
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	at(s, 2, 3, "v1");
	store_at(s, 2, 3, "v0");  /* inside the compute loop */
	PT_CHECK(refused(m, s, "f2 (b)", "does not enclose", NULL));
	pt_sched_free(s);

	/* A store site in an outer nest encloses the compute site, but
	 * slides over two loops. */
	s = pt_sched_new_for(m);
	at(s, 2, 3, "v0");
	at(s, 1, 2, "v0");
	store_at(s, 1, 3, "v1");
	PT_CHECK(refused(m, s, "f1 (a)", "more than one loop", NULL));
	dir(s, 2, 0, PT_DIR_PARALLEL, "v1");
	PT_CHECK(refused(m, s, "f1 (a)", "parallel loop 'v1' of f2 (b)",
			 NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

/* Sliding windows: only the shape Halide 14 gets right. */
PT_TEST(rule5_sliding)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);

	at(s, 2, 3, "v0");
	store_root(s, 2);  /* v0 is not out's outermost loop */
	PT_CHECK(refused(m, s, "f2 (b)", "more than one loop", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v1", "yo", "yi", 4, PT_TAIL_GUARD);
	at(s, 2, 3, "yi");
	store_at(s, 2, 3, "yo");
	PT_CHECK(refused(m, s, "f2 (b)", "'yi', which is a split result",
			 NULL));
	pt_sched_free(s);

	/* b slides along out's x: it may not split x, and only guard. */
	s = pt_sched_new_for(m);
	at(s, 2, 3, "v0");
	store_at(s, 2, 3, "v1");
	split(s, 2, 0, "v1", "yo", "yi", 4, PT_TAIL_GUARD);
	PT_CHECK(accepted(m, s));
	split(s, 2, 0, "v0", "xo", "xi", 4, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "f2 (b) stage 0", "split of 'v0', a dim that "
			 "slides", NULL));
	pt_sched_free(s);
	pt_model_free(m);
	m = model("clamp");  /* blur_x need not stay exact */
	s = pt_sched_new_for(m);
	at(s, 2, 3, "v0");
	store_at(s, 2, 3, "v1");
	split(s, 2, 0, "v1", "yo", "yi", 4, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f2 (blur_x) stage 0", "tail round in a Func "
			 "that slides", NULL));
	pt_sched_free(s);
	pt_model_free(m);
	m = model("chain");

	/* No sliding window inside another. */
	s = pt_sched_new_for(m);
	at(s, 2, 3, "v1");
	store_root(s, 2);
	at(s, 1, 2, "v0");
	PT_CHECK(accepted(m, s));
	store_at(s, 1, 2, "v1");
	PT_CHECK(refused(m, s, "f1 (a)", "inside the sliding window of f2 "
			 "(b)", NULL));
	pt_sched_free(s);

	/* Up- and downsampling do not slide. */
	m->stages[3].accesses[0].coords[0].coef[0].num = 2;
	s = pt_sched_new_for(m);
	at(s, 2, 3, "v0");
	store_at(s, 2, 3, "v1");
	PT_CHECK(refused(m, s, "f2 (b)", "scaled", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* Nor does a Func with updates. */
	m = model("scan");
	s = pt_sched_new_for(m);
	at(s, 1, 2, "v1");
	store_root(s, 1);
	PT_CHECK(refused(m, s, "f1 (scan)", "Func with updates", NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(rule6_annotations)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);

	split(s, 3, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
	split(s, 3, 0, "v1", "yo", "yi", 4, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_VECTORIZE, "xi");
	dir(s, 3, 0, PT_DIR_UNROLL, "yi");
	dir(s, 3, 0, PT_DIR_PARALLEL, "yo");
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	dir(s, 3, 0, PT_DIR_VECTORIZE, "v0");
	PT_CHECK(refused(m, s, "f3 (out) stage 0", "vectorize of 'v0'",
			 "estimated extent 64", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 128, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_VECTORIZE, "xi");
	PT_CHECK(refused(m, s, "constant extent 128", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v1", "yo", "yi", 8, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_VECTORIZE, "yi");
	PT_CHECK(refused(m, s, "vectorized 'yi' is not the innermost",
			 NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	dir(s, 3, 0, PT_DIR_UNROLL, "v1");
	PT_CHECK(refused(m, s, "unroll of 'v1'", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 32, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_UNROLL, "xi");
	PT_CHECK(refused(m, s, "unroll of 'xi'", "constant extent 32", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
	split(s, 3, 0, "v1", "yo", "yi", 8, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_UNROLL, "xi");
	dir(s, 3, 0, PT_DIR_UNROLL, "yi");
	PT_CHECK(refused(m, s, "multiply to more than 64", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* Reduction dims: never parallel or vectorized; unroll a constant
	 * split of one. */
	m = model("scan");
	s = pt_sched_new_for(m);
	split(s, 1, 1, "r0", "ro", "ri", 4, PT_TAIL_GUARD);
	dir(s, 1, 1, PT_DIR_UNROLL, "ri");
	dir(s, 1, 1, PT_DIR_PARALLEL, "v0");
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	dir(s, 1, 1, PT_DIR_UNROLL, "r0");  /* rdom r0(1, 47) */
	PT_CHECK(refused(m, s, "unroll of 'r0'", "constant extent 47",
			 NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	dir(s, 1, 1, PT_DIR_PARALLEL, "r0");
	PT_CHECK(refused(m, s, "f1 (scan) stage 1", "parallel of 'r0'",
			 "reduction dim", NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	split(s, 1, 1, "r0", "ro", "ri", 4, PT_TAIL_GUARD);
	dir(s, 1, 1, PT_DIR_VECTORIZE, "ri");
	PT_CHECK(refused(m, s, "vectorize of 'ri'", "reduction dim", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* An RDom with literal bounds unrolls as it is; one bounded by the
	 * input's size does not. */
	m = model("conv");
	s = pt_sched_new_for(m);
	dir(s, 1, 1, PT_DIR_UNROLL, "r0");
	dir(s, 1, 1, PT_DIR_UNROLL, "r1");
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	pt_model_free(m);
	m = model("hist");
	s = pt_sched_new_for(m);
	dir(s, 1, 1, PT_DIR_UNROLL, "r0");
	PT_CHECK(refused(m, s, "unroll of 'r0'", "estimated extent 64", NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(rule7_tails)
{
	struct pt_model *m = model("clamp");
	struct pt_sched *s = pt_sched_new_for(m);

	/* blur_x reads clamped coordinates only: free to round up. */
	split(s, 2, 0, "v0", "xo", "xi", 16, PT_TAIL_ROUND);
	split(s, 3, 0, "v0", "xo", "xi", 32, PT_TAIL_SHIFT);
	/* out is exact, at root, factor <= 64: shift is fine. */
	split(s, 4, 0, "v0", "xo", "xi", 64, PT_TAIL_SHIFT);
	PT_CHECK(accepted(m, s));
	/* Shift needs root: at a loop the region may be shorter than the
	 * factor, exact or not. */
	at(s, 3, 4, "xo");
	PT_CHECK(refused(m, s, "f3 (blur_y) stage 0", "not computed at root",
			 NULL));
	s->funcs[3].compute = PT_COMPUTE_ROOT;
	at(s, 2, 3, "xo");
	PT_CHECK(accepted(m, s));  /* round is fine there */
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 65, PT_TAIL_SHIFT);
	PT_CHECK(refused(m, s, "f3 (blur_y) stage 0", "factor 65 above",
			 "extent 64", NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 4, 0, "v0", "xo", "xi", 8, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f4 (out) stage 0", "tail round", NULL));
	pt_sched_free(s);

	/* Nested: the extent of a split's outer loop bounds the factor. */
	s = pt_sched_new_for(m);
	split(s, 4, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
	split(s, 4, 0, "xo", "xoo", "xoi", 4, PT_TAIL_SHIFT);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	split(s, 4, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
	split(s, 4, 0, "xo", "xoo", "xoi", 5, PT_TAIL_SHIFT);
	PT_CHECK(refused(m, s, "factor 5 above the estimated extent 4 of "
			 "'xo'", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* In the chain everything follows the input: round is refused even
	 * on a Func that reads only other Funcs. */
	m = model("chain");
	s = pt_sched_new_for(m);
	split(s, 2, 0, "v0", "xo", "xi", 8, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f2 (b) stage 0", "tail round", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	m = model("scan");
	s = pt_sched_new_for(m);
	split(s, 1, 1, "v0", "xo", "xi", 8, PT_TAIL_SHIFT);
	PT_CHECK(refused(m, s, "f1 (scan) stage 1", "tail shift in an update",
			 NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	split(s, 1, 1, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(rule8_update_order)
{
	struct pt_model *m = model("hist");
	struct pt_sched *s = pt_sched_new_for(m);

	split(s, 1, 1, "r0", "rxo", "rxi", 8, PT_TAIL_GUARD);
	reorder(s, 1, 1, "rxi", "rxo", "r1", NULL);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	reorder(s, 1, 1, "r1", "r0", NULL);
	PT_CHECK(refused(m, s, "f1 (hist) stage 1", "reorder moves reduction",
			 NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	split(s, 1, 1, "r0", "rxo", "rxi", 8, PT_TAIL_GUARD);
	reorder(s, 1, 1, "rxo", "rxi", "r1", NULL);
	PT_CHECK(refused(m, s, "reorder moves reduction loop", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* Pure dims move across reduction dims. */
	m = model("scan");
	s = pt_sched_new_for(m);
	split(s, 1, 1, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	reorder(s, 1, 1, "xi", "r0", "xo", NULL);
	dir(s, 1, 1, PT_DIR_VECTORIZE, "xi");
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	pt_model_free(m);
}

/* Loops split from one dim keep the split's order; other dims' loops may
 * go between them (tiling). */
PT_TEST(split_order)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);

	/* Tiling: y split twice (the outer loop again), x's loop between
	 * them. */
	split(s, 3, 0, "v1", "yo", "yi", 2, PT_TAIL_GUARD);
	split(s, 3, 0, "yo", "yoo", "yoi", 4, PT_TAIL_GUARD);
	reorder(s, 3, 0, "yi", "v0", "yoi", "yoo", NULL);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v1", "yo", "yi", 2, PT_TAIL_GUARD);
	split(s, 3, 0, "yo", "yoo", "yoi", 4, PT_TAIL_GUARD);
	reorder(s, 3, 0, "v0", "yoi", "yi", "yoo", NULL);
	PT_CHECK(refused(m, s, "f3 (out) stage 0", "'yoi' is inside 'yi'",
			 NULL));
	pt_sched_free(s);

	s = pt_sched_new_for(m);
	split(s, 3, 0, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	reorder(s, 3, 0, "xo", "v1", "xi", NULL);
	PT_CHECK(refused(m, s, "'xo' is inside 'xi'", NULL));
	pt_sched_free(s);

	/* A split's inner loop is not split again. */
	s = pt_sched_new_for(m);
	split(s, 3, 0, "v1", "yo", "yi", 8, PT_TAIL_GUARD);
	split(s, 3, 0, "yi", "yio", "yii", 2, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "f3 (out) stage 0", "split of 'yi', which "
			 "comes from the inner half", NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

/* The one-element pattern on stage 0 of Func f: x split by 16 with a
 * guard tail (`vtail`), vectorized, and its outer loop by 4 (`otail`). */
static void one_pattern(struct pt_sched *s, int f, enum pt_tail vtail,
			enum pt_tail otail)
{
	split(s, f, 0, "v0", "xo", "xi", 16, vtail);
	split(s, f, 0, "xo", "xoo", "xoi", 4, otail);
	dir(s, f, 0, PT_DIR_VECTORIZE, "xi");
}

/* Rule 6, one-element buffers (onept: f2 p, f3 q pointwise, f4 k read at
 * one point, f5 out). */
PT_TEST(one_element)
{
	struct pt_model *m = model("onept");
	struct pt_sched *s;

	/* q per pixel of out: one element; the harris seed 17 shape. */
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v0");
	one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f3 (q) stage 0", "vectorized 'xi'",
			 "'xoi'", "single element", NULL));
	pt_sched_free(s);

	/* Guard on the outer split, a round vector split (the buffer grows
	 * to 16), or a round first split of y (it grows to 2) are fine. */
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v0");
	one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_GUARD);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v0");
	one_pattern(s, 3, PT_TAIL_ROUND, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v0");
	one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_ROUND);
	split(s, 3, 0, "v1", "yo", "yi", 2, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	/* Per row of out: 64 points. */
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v1");
	one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	/* Inside the compute loop, a guard split by 2 leaves a tail of one
	 * iteration; by 3, two or more. A round one always runs both. */
	s = pt_sched_new_for(m);
	split(s, 5, 0, "v0", "ox", "oxi", 2, PT_TAIL_GUARD);
	at(s, 3, 5, "ox");
	one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f3 (q) stage 0", "single element", NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	split(s, 5, 0, "v0", "ox", "oxi", 3, PT_TAIL_GUARD);
	at(s, 3, 5, "ox");
	one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	/* Read through an inlined Func, or by a Func computed in the same
	 * instance, still one point. */
	s = pt_sched_new_for(m);
	s->funcs[3].compute = PT_COMPUTE_INLINE;
	at(s, 2, 5, "v0");
	one_pattern(s, 2, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f2 (p) stage 0", "single element", NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v0");
	at(s, 2, 5, "v0");
	one_pattern(s, 2, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f2 (p) stage 0", "single element", NULL));
	pt_sched_free(s);

	/* p per pixel of q, q per row of out: one point; p per row of q:
	 * q's x loop (64 points) runs inside. */
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v1");
	at(s, 2, 3, "v0");
	one_pattern(s, 2, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f2 (p) stage 0", "single element", NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	at(s, 3, 5, "v1");
	at(s, 2, 3, "v1");
	one_pattern(s, 2, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	/* At root: k is read at one constant point; p over the image. */
	s = pt_sched_new_for(m);
	one_pattern(s, 4, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f4 (k) stage 0", "single element", NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	one_pattern(s, 2, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	pt_model_free(m);

	/* A stencil read is three points (clamp: f2 blur_x per pixel of f3
	 * blur_y, which reads it at y - 1, y, y + 1). */
	m = model("clamp");
	s = pt_sched_new_for(m);
	at(s, 2, 3, "v0");
	one_pattern(s, 2, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	at(s, 3, 4, "v0");
	one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f3 (blur_y) stage 0", "single element",
			 NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

/* The unrolled-tail pattern on stage 0 of Func f: x split by 16 with a
 * guard tail, vectorized, its outer loop by 4 (`otail`), and that split's
 * inner loop unrolled. */
static void tail_pattern(struct pt_sched *s, int f, enum pt_tail otail)
{
	one_pattern(s, f, PT_TAIL_GUARD, otail);
	dir(s, f, 0, PT_DIR_UNROLL, "xoi");
}

/* Rule 6, unrolled tails (clamp: f1 clamped, f2 blur_x, f3 blur_y, f4
 * out; hist: f1 hist, read by f2 out at data-dependent points). */
PT_TEST(unrolled_tail)
{
	struct pt_model *m = model("clamp");
	struct pt_sched *s;
	int k;

	/* harris seed 82: blur_y per 32 columns of out; the last group of
	 * out has at most 31, and the copy at 48 lies past that. */
	s = pt_sched_new_for(m);
	split(s, 4, 0, "v0", "ox", "oxi", 32, PT_TAIL_GUARD);
	at(s, 3, 4, "ox");
	tail_pattern(s, 3, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f3 (blur_y) stage 0", "unrolled 'xoi'",
			 "vectorized 'xi'", "element 48", "bound to 31",
			 "guard tail", NULL));
	pt_sched_free(s);
	/* Groups of 63 (62 in the last one) hold every copy; of 49 (48)
	 * not. */
	for (k = 0; k < 2; k++) {
		s = pt_sched_new_for(m);
		split(s, 4, 0, "v0", "ox", "oxi", k ? 49 : 63, PT_TAIL_GUARD);
		at(s, 3, 4, "ox");
		tail_pattern(s, 3, PT_TAIL_ROUND);
		PT_CHECK(k ? refused(m, s, "bound to 48", NULL) :
			 accepted(m, s));
		pt_sched_free(s);
	}

	/* Each change of the pattern is fine: a guard tail on the unrolled
	 * loop's split, a round vector split, no unroll, no vectorize, or a
	 * guard split between the vector loop and the unrolled one. */
	for (k = 0; k < 5; k++) {
		s = pt_sched_new_for(m);
		split(s, 4, 0, "v0", "ox", "oxi", 32, PT_TAIL_GUARD);
		at(s, 3, 4, "ox");
		if (k == 0) {
			tail_pattern(s, 3, PT_TAIL_GUARD);
		} else if (k == 1) {
			one_pattern(s, 3, PT_TAIL_ROUND, PT_TAIL_ROUND);
			dir(s, 3, 0, PT_DIR_UNROLL, "xoi");
		} else if (k == 2) {
			one_pattern(s, 3, PT_TAIL_GUARD, PT_TAIL_ROUND);
		} else if (k == 3) {
			split(s, 3, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
			split(s, 3, 0, "xo", "xoo", "xoi", 4, PT_TAIL_ROUND);
			dir(s, 3, 0, PT_DIR_UNROLL, "xoi");
		} else {
			split(s, 3, 0, "v0", "xo", "xi", 16, PT_TAIL_GUARD);
			split(s, 3, 0, "xo", "xoo", "xoi", 2, PT_TAIL_GUARD);
			split(s, 3, 0, "xoo", "x3", "x3i", 4, PT_TAIL_ROUND);
			dir(s, 3, 0, PT_DIR_VECTORIZE, "xi");
			dir(s, 3, 0, PT_DIR_UNROLL, "x3i");
		}
		PT_CHECK(accepted(m, s));
		pt_sched_free(s);
	}
	/* A guard split outside the unrolled loop does not help. */
	s = pt_sched_new_for(m);
	split(s, 4, 0, "v0", "ox", "oxi", 32, PT_TAIL_GUARD);
	at(s, 3, 4, "ox");
	tail_pattern(s, 3, PT_TAIL_ROUND);
	split(s, 3, 0, "xoo", "x3", "x3i", 2, PT_TAIL_GUARD);
	PT_CHECK(refused(m, s, "f3 (blur_y) stage 0", "element 48", NULL));
	pt_sched_free(s);

	/* No compile-time bound: at root, or per row of out. */
	s = pt_sched_new_for(m);
	tail_pattern(s, 3, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	at(s, 3, 4, "v1");
	tail_pattern(s, 3, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	/* Rows of out in groups of 4 inside the compute loop: 31 x 3 points
	 * at least, the copy at 48 within; in groups of 2, 31 x 1. */
	for (k = 0; k < 2; k++) {
		s = pt_sched_new_for(m);
		split(s, 4, 0, "v0", "ox", "oxi", 32, PT_TAIL_GUARD);
		split(s, 4, 0, "v1", "oy", "oyi", k ? 2 : 4, PT_TAIL_GUARD);
		reorder(s, 4, 0, "oxi", "oyi", "ox", "oy", NULL);
		at(s, 3, 4, "ox");
		tail_pattern(s, 3, PT_TAIL_ROUND);
		PT_CHECK(k ? refused(m, s, "element 48", NULL) :
			 accepted(m, s));
		pt_sched_free(s);
	}

	/* A constant region: blur_x per 80 columns of blur_y, which rounds
	 * them up, is 80 x 3 points. The unrolled copies come in groups of
	 * 64 points; the last group, at 64, holds copies at 96 and 112. While
	 * the rows run from 0, that is within the buffer; with y split by 2,
	 * the last tile of rows (row 2) is peeled off too: 2 * 80 + 112. */
	for (k = 0; k < 2; k++) {
		s = pt_sched_new_for(m);
		split(s, 3, 0, "v0", "bx", "bxi", 80, PT_TAIL_ROUND);
		at(s, 2, 3, "bx");
		tail_pattern(s, 2, PT_TAIL_ROUND);
		if (k)
			split(s, 2, 0, "v1", "yo", "yi", 2, PT_TAIL_GUARD);
		PT_CHECK(k ? refused(m, s, "f2 (blur_x) stage 0",
				     "element 272", "bound to 240", NULL) :
			 accepted(m, s));
		pt_sched_free(s);
	}
	/* 48 points fit in one group, unrolled whole at compile time;
	 * 128 fill two groups. */
	for (k = 0; k < 2; k++) {
		s = pt_sched_new_for(m);
		split(s, 3, 0, "v0", "bx", "bxi", k ? 128 : 48, PT_TAIL_ROUND);
		at(s, 2, 3, "bx");
		tail_pattern(s, 2, PT_TAIL_ROUND);
		split(s, 2, 0, "v1", "yo", "yi", 2, PT_TAIL_GUARD);
		PT_CHECK(accepted(m, s));
		pt_sched_free(s);
	}
	pt_model_free(m);

	/* A data-dependent read: 256 points at root, where the region is
	 * the estimated one. By 16 and 4, whole groups; by 32 and 3, the
	 * last group starts at 192 and has copies at 224 and 256. Within an
	 * instance the constant is not known: refused. */
	m = model("hist");
	s = pt_sched_new_for(m);
	tail_pattern(s, 1, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	split(s, 1, 0, "v0", "xo", "xi", 32, PT_TAIL_GUARD);
	split(s, 1, 0, "xo", "xoo", "xoi", 3, PT_TAIL_ROUND);
	dir(s, 1, 0, PT_DIR_VECTORIZE, "xi");
	dir(s, 1, 0, PT_DIR_UNROLL, "xoi");
	PT_CHECK(refused(m, s, "f1 (hist) stage 0", "element 256",
			 "bound to 256", NULL));
	pt_sched_free(s);
	s = pt_sched_new_for(m);
	at(s, 1, 2, "v1");
	tail_pattern(s, 1, PT_TAIL_ROUND);
	PT_CHECK(refused(m, s, "f1 (hist) stage 0", "past the end", NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

/* A stage of Func f vectorized along y (v1 split by 8, round) with x
 * (v0) outside the vector loop and y's outer loop outside x. */
static void ycols(struct pt_sched *s, int f)
{
	split(s, f, 0, "v1", "yo", "yi", 8, PT_TAIL_ROUND);
	reorder(s, f, 0, "yi", "v0", "yo", NULL);
	dir(s, f, 0, PT_DIR_VECTORIZE, "yi");
}

/* Rule 6, strided loads at constant addresses (clamp: f1 clamped, f2
 * blur_x reads it at x - 1, x, x + 1; upy: f1 a, f2 up reads it at
 * x / 2 and at x / 2 - 1 + 2 * (x % 2), y / 2). */
PT_TEST(const_strided)
{
	struct pt_model *m = model("clamp");
	struct pt_sched *s;

	/* clamped per column of blur_x, which is vectorized along y: its
	 * buffer is 3 wide and blur_x loads every third element from
	 * constant addresses. */
	s = pt_sched_new_for(m);
	ycols(s, 2);
	at(s, 1, 2, "v0");
	PT_CHECK(refused(m, s, "f1 (clamped)", "computed at f2 (blur_x) 'v0'",
			 "vectorized 'yi'", "stride of 3 elements", NULL));
	pt_sched_free(s);

	/* Per 8 rows of the column: yo runs inside and moves the reads. */
	s = pt_sched_new_for(m);
	split(s, 2, 0, "v1", "yo", "yi", 8, PT_TAIL_ROUND);
	reorder(s, 2, 0, "yi", "yo", "v0", NULL);
	dir(s, 2, 0, PT_DIR_VECTORIZE, "yi");
	at(s, 1, 2, "v0");
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	/* Two columns at a time: a serial x loop inside moves the reads;
	 * unrolled it does not (a buffer 4 wide), with a guard tail too:
	 * the last instance is narrower, but loop partitioning gives the
	 * others a steady state 4 wide (a random pipeline's space schedule
	 * crashed so, doc/schedule-legality.md). */
	s = pt_sched_new_for(m);
	split(s, 2, 0, "v0", "xo", "xi", 2, PT_TAIL_SHIFT);
	split(s, 2, 0, "v1", "yo", "yi", 8, PT_TAIL_ROUND);
	reorder(s, 2, 0, "yi", "xi", "xo", "yo", NULL);
	dir(s, 2, 0, PT_DIR_VECTORIZE, "yi");
	at(s, 1, 2, "xo");
	PT_CHECK(accepted(m, s));
	dir(s, 2, 0, PT_DIR_UNROLL, "xi");
	PT_CHECK(refused(m, s, "f1 (clamped)", "'xo'", "stride of 4", NULL));
	s->funcs[2].stages[0].dirs[0].tail = PT_TAIL_GUARD;
	PT_CHECK(refused(m, s, "f1 (clamped)", "'xo'", "stride of 4", NULL));
	pt_sched_free(s);

	/* At root, or rounded up to 16 wide by its own vector split: fine. */
	s = pt_sched_new_for(m);
	ycols(s, 2);
	PT_CHECK(accepted(m, s));
	at(s, 1, 2, "v0");
	split(s, 1, 0, "v0", "xo", "xi", 16, PT_TAIL_ROUND);
	dir(s, 1, 0, PT_DIR_VECTORIZE, "xi");
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);

	/* blur_x per column of blur_y: one element wide, dense loads; its
	 * own round tail makes it 4 wide, but every read starts at the
	 * first element of a row (a multiple of the stride). */
	s = pt_sched_new_for(m);
	ycols(s, 3);
	at(s, 2, 3, "v0");
	PT_CHECK(accepted(m, s));
	split(s, 2, 0, "v0", "xo", "xi", 4, PT_TAIL_ROUND);
	PT_CHECK(accepted(m, s));
	pt_sched_free(s);
	/* clamped there, read through the inlined blur_x: 3 wide. */
	s = pt_sched_new_for(m);
	ycols(s, 3);
	s->funcs[2].compute = PT_COMPUTE_INLINE;
	at(s, 1, 3, "v0");
	PT_CHECK(refused(m, s, "f1 (clamped)", "computed at f3 (blur_y)",
			 "stride of 3", NULL));
	pt_sched_free(s);
	pt_model_free(m);

	/* The interpolate seed 27 shape: x / 2 and x / 2 - 1 + 2 * (x % 2)
	 * at one x make a buffer 3 wide (Halide: [x / 2 - 1, x / 2 + 1]). */
	m = model("upy");
	s = pt_sched_new_for(m);
	ycols(s, 2);
	at(s, 1, 2, "v0");
	PT_CHECK(refused(m, s, "f1 (a)", "computed at f2 (up) 'v0'",
			 "stride of 2 to 3", NULL));
	pt_sched_free(s);
	/* Over 2 or 4 values of x the width depends on the parity of x;
	 * over 3 it is a constant again. */
	s = pt_sched_new_for(m);
	split(s, 2, 0, "v0", "xo", "xi", 2, PT_TAIL_ROUND);
	split(s, 2, 0, "v1", "yo", "yi", 8, PT_TAIL_ROUND);
	reorder(s, 2, 0, "yi", "xi", "xo", "yo", NULL);
	dir(s, 2, 0, PT_DIR_VECTORIZE, "yi");
	dir(s, 2, 0, PT_DIR_UNROLL, "xi");
	at(s, 1, 2, "xo");
	PT_CHECK(accepted(m, s));
	s->funcs[2].stages[0].dirs[0].factor = 4;
	PT_CHECK(accepted(m, s));
	s->funcs[2].stages[0].dirs[0].factor = 3;
	PT_CHECK(refused(m, s, "f1 (a)", "stride of 3 to 4", NULL));
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(nest)
{
	struct pt_model *m = model("scan");
	struct pt_sched *s = pt_sched_new_for(m);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_nest n;

	split(s, 1, 1, "v0", "xo", "xi", 8, PT_TAIL_GUARD);
	split(s, 1, 1, "r0", "ro", "ri", 4, PT_TAIL_GUARD);
	reorder(s, 1, 1, "xi", "ri", "ro", "xo", NULL);
	dir(s, 1, 1, PT_DIR_VECTORIZE, "xi");
	dir(s, 1, 1, PT_DIR_PARALLEL, "xo");
	PT_REQUIRE(pt_sched_nest(m, s, 1, 1, &n, &err) == 0);
	PT_REQUIRE(n.nloops == 4);
	PT_CHECK_STR(n.loops[0].name, "xo");
	PT_CHECK_STR(n.loops[0].label, "x");
	PT_CHECK_INT(n.loops[0].extent, 8);  /* 64 / 8 */
	PT_CHECK_INT(n.loops[0].const_extent, 0);
	PT_CHECK_INT(n.loops[0].kind, PT_LOOP_PARALLEL);
	PT_CHECK_STR(n.loops[1].name, "ro");
	PT_CHECK_STR(n.loops[1].label, "r6$x");
	PT_CHECK_INT(n.loops[1].is_rvar, 1);
	PT_CHECK_INT(n.loops[1].extent, 12);  /* ceil(47 / 4) */
	PT_CHECK_STR(n.loops[2].name, "ri");
	PT_CHECK_INT(n.loops[2].extent, 4);
	PT_CHECK_INT(n.loops[2].const_extent, 1);
	PT_CHECK_STR(n.loops[3].name, "xi");
	PT_CHECK_INT(n.loops[3].kind, PT_LOOP_VECTOR);
	free(n.loops);

	/* Unscheduled stage: the model's dims, outermost first. */
	PT_REQUIRE(pt_sched_nest(m, s, 2, 0, &n, &err) == 0);
	PT_REQUIRE(n.nloops == 2);
	PT_CHECK_STR(n.loops[0].name, "v1");
	PT_CHECK_STR(n.loops[0].label, "y");
	PT_CHECK_INT(n.loops[0].extent, 48);
	PT_CHECK_STR(n.loops[1].name, "v0");
	free(n.loops);

	PT_CHECK(pt_sched_nest(m, s, 2, 1, &n, &err) == PT_EMISMATCH);
	split(s, 2, 0, "v9", "a", "b", 2, PT_TAIL_GUARD);
	PT_CHECK(pt_sched_nest(m, s, 2, 0, &n, &err) == PT_EMISMATCH);
	PT_CHECK(strstr(err.msg, "f2 (out) stage 0: split of unknown dim") !=
		 NULL);
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(cpp)
{
	struct pt_model *m = model("scan");
	struct pt_sched *s = pt_sched_new_for(m);
	struct pt_strbuf out = PT_STRBUF_INIT;
	static const char want[] =
		"    // protune schedule for key "
		"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\n"
		"    Func f_0 = pipeline.get_func(0);  // input_im\n"
		"    Func f_1 = pipeline.get_func(1);  // scan\n"
		"    Func f_2 = pipeline.get_func(2);  // out\n"
		"    Var y(\"y\");\n"
		"    RVar r6_x(\"r6$x\");\n"
		"    RVar ro(\"ro\");\n"
		"    RVar ri(\"ri\");\n"
		"    Var x(\"x\");\n"
		"    Var xo(\"xo\");\n"
		"    Var xi(\"xi\");\n"
		"    f_0.compute_inline();\n"
		"    f_1.compute_at(f_2, y);\n"
		"    f_1.update(0).split(r6_x, ro, ri, 4, "
		"TailStrategy::GuardWithIf)\n"
		"        .unroll(ri)\n"
		"        .parallel(x);\n"
		"    f_2.compute_root();\n"
		"    f_2.split(x, xo, xi, 8, TailStrategy::ShiftInwards)\n"
		"        .reorder(xi, y, xo)\n"
		"        .vectorize(xi);\n";

	s->funcs[0].compute = PT_COMPUTE_INLINE;
	at(s, 1, 2, "v1");
	split(s, 1, 1, "r0", "ro", "ri", 4, PT_TAIL_GUARD);
	dir(s, 1, 1, PT_DIR_UNROLL, "ri");
	dir(s, 1, 1, PT_DIR_PARALLEL, "v0");
	split(s, 2, 0, "v0", "xo", "xi", 8, PT_TAIL_SHIFT);
	reorder(s, 2, 0, "xi", "v1", "xo", NULL);
	dir(s, 2, 0, PT_DIR_VECTORIZE, "xi");
	PT_REQUIRE(accepted(m, s));
	PT_REQUIRE(pt_sched_to_cpp(m, s, &out) == 0);
	PT_CHECK_STR(out.buf, want);
	pt_strbuf_release(&out);
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(cpp_identifiers)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);
	struct pt_strbuf out = PT_STRBUF_INIT;

	/* Labels that are not identifiers, or clash with the body's own
	 * names, get sanitized unique identifiers. */
	free(m->stages[3].dims[0].label);
	m->stages[3].dims[0].label = pt_model_strdup("f_1");
	free(m->stages[3].dims[1].label);
	m->stages[3].dims[1].label = pt_model_strdup("in\"t");
	split(s, 3, 0, "v0", "in_t", "pipeline", 8, PT_TAIL_GUARD);
	dir(s, 3, 0, PT_DIR_PARALLEL, "v1");
	PT_REQUIRE(accepted(m, s));
	PT_REQUIRE(pt_sched_to_cpp(m, s, &out) == 0);
	PT_CHECK(strstr(out.buf, "    Var f_1_2(\"f_1\");\n") != NULL);
	PT_CHECK(strstr(out.buf, "    Var in_t(\"in_t\");\n") != NULL);
	PT_CHECK(strstr(out.buf, "    Var pipeline_2(\"pipeline\");\n") !=
		 NULL);
	PT_CHECK(strstr(out.buf, "    Var in_t_2(\"in\\\"t\");\n") != NULL);
	PT_CHECK(strstr(out.buf, ".split(f_1_2, in_t, pipeline_2, 8, "
			"TailStrategy::GuardWithIf)\n"
			"        .parallel(in_t_2);") != NULL);
	pt_strbuf_release(&out);
	pt_sched_free(s);
	pt_model_free(m);
}

PT_TEST(cpp_store_at)
{
	struct pt_model *m = model("chain");
	struct pt_sched *s = pt_sched_new_for(m);
	struct pt_strbuf out = PT_STRBUF_INIT;

	at(s, 2, 3, "v1");
	store_root(s, 2);
	at(s, 1, 2, "v0");
	PT_REQUIRE(accepted(m, s));
	PT_REQUIRE(pt_sched_to_cpp(m, s, &out) == 0);
	PT_CHECK(strstr(out.buf, "    f_1.compute_at(f_2, x);\n"
			"    f_2.compute_at(f_3, y).store_root();\n") != NULL);
	pt_strbuf_reset(&out);
	s->funcs[2].store_root = 0;
	store_at(s, 1, 2, "v1");
	PT_REQUIRE(accepted(m, s));
	PT_REQUIRE(pt_sched_to_cpp(m, s, &out) == 0);
	PT_CHECK(strstr(out.buf, "    f_1.compute_at(f_2, x).store_at(f_2, "
			"y);\n    f_2.compute_at(f_3, y);\n") != NULL);
	/* A schedule that was not checked: an unknown loop is refused, not
	 * rendered. */
	pt_strbuf_reset(&out);
	at(s, 2, 3, "nosuch");
	PT_CHECK(pt_sched_to_cpp(m, s, &out) == PT_EINVAL);
	PT_CHECK_INT(out.len, 0);
	pt_strbuf_release(&out);
	pt_sched_free(s);
	pt_model_free(m);
}

/* Corrupted schedules (a stale or damaged cache entry) are refused or
 * accepted, never crash; whatever is accepted renders as C++. */
static uint64_t mix(uint64_t *st)
{
	uint64_t z = (*st += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void replace(char **p, const char *v)
{
	free(*p);
	*p = v ? pt_model_strdup(v) : NULL;
}

PT_TEST(corrupt_schedules)
{
	static const char *const names[] = { "v0", "v1", "v2", "r0", "r1",
		"xo", "xi", "v0o", "v0i", "v1o", "v1i", "x", "nosuch", NULL };
	static const char *const mnames[] = { "chain", "hist", "scan",
		"fanout", "conv" };
	uint64_t st = 42;
	int it, accepted_n = 0;

	for (it = 0; it < 3000; it++) {
		struct pt_model *m = pt_test_sched_model(mnames[it % 5]);
		struct pt_sched *s = pt_randsched(m, (uint64_t)it);
		struct pt_strbuf out = PT_STRBUF_INIT;
		struct pt_error err = PT_ERROR_INIT;
		int k, f = (int)(mix(&st) % (uint64_t)m->nfuncs), i;
		struct pt_sched_func *sf = &s->funcs[f];
		const char *nm = names[mix(&st) % 14];

		switch (mix(&st) % 8) {
		case 0:
			sf->compute = (enum pt_compute)(mix(&st) % 4);
			sf->compute_at.func = (int)(mix(&st) % 7) - 2;
			replace(&sf->compute_at.loop, nm);
			break;
		case 1:
			sf->store_root = (int)(mix(&st) % 2);
			sf->store_at.func = (int)(mix(&st) % 7) - 2;
			replace(&sf->store_at.loop, nm);
			break;
		case 2:
			sf->nstages = (int)(mix(&st) % 4) - 1;
			if (sf->nstages > 0 && !sf->stages)
				sf->nstages = 0;
			if (sf->nstages > m->funcs[f].nstages)
				sf->nstages = m->funcs[f].nstages + 1;
			if (sf->nstages > m->funcs[f].nstages)
				break;
			break;
		default:
			for (k = 0; k < sf->nstages; k++) {
				struct pt_sched_stage *ss = &sf->stages[k];
				struct pt_directive *d;

				if (!ss->ndirs)
					continue;
				d = &ss->dirs[mix(&st) % (uint64_t)ss->ndirs];
				switch (mix(&st) % 6) {
				case 0:
					d->kind = (enum pt_directive_kind)
						(mix(&st) % 6);
					break;
				case 1: replace(&d->dim, nm); break;
				case 2: replace(&d->outer, nm); break;
				case 3:
					d->factor = (int64_t)(mix(&st) % 200) -
						50;
					break;
				case 4:
					d->tail = (enum pt_tail)(mix(&st) % 4);
					break;
				default:
					if (d->order.nr)
						pt_strvec_pop(&d->order);
					else
						pt_strvec_push(&d->order,
							       nm ? nm : "x");
				}
			}
		}
		/* Keep nstages within what the struct holds. */
		if (sf->nstages > m->funcs[f].nstages) {
			PT_CHECK(pt_sched_check(m, s, &err) == PT_EMISMATCH);
			sf->nstages = m->funcs[f].nstages;
		} else if (sf->nstages < 0) {
			PT_CHECK(pt_sched_check(m, s, &err) == PT_EMISMATCH);
			sf->nstages = m->funcs[f].nstages;
		}
		if (pt_sched_check(m, s, &err) == 0) {
			accepted_n++;
			PT_CHECK(pt_sched_to_cpp(m, s, &out) == 0);
		} else {
			PT_CHECK(err.msg[0] == 'f' || err.msg[0] == 't');
		}
		for (i = 0; i < m->nfuncs; i++) {
			struct pt_nest n;

			if (pt_sched_nest(m, s, i, 0, &n, NULL) == 0)
				free(n.loops);
		}
		pt_strbuf_release(&out);
		pt_sched_free(s);
		pt_model_free(m);
	}
	PT_CHECK(accepted_n > 0 && accepted_n < 3000);
}

PT_SUITE(sched_check,
	 { "hand-built models are valid", models_are_valid },
	 { "rule 1: key, Funcs, stages", rule1_shape },
	 { "rule 2: names", rule2_names },
	 { "rule 3: inline", rule3_inline },
	 { "rule 4: compute_at", rule4_compute_at },
	 { "rule 5: store", rule5_store },
	 { "rule 5: sliding windows", rule5_sliding },
	 { "rule 6: annotations", rule6_annotations },
	 { "rule 7: tails", rule7_tails },
	 { "rule 8: reduction order", rule8_update_order },
	 { "rule 6: split order", split_order },
	 { "rule 6: one-element buffers", one_element },
	 { "rule 6: unrolled tails", unrolled_tail },
	 { "rule 6: strided loads at constant addresses", const_strided },
	 { "loop nests", nest },
	 { "C++", cpp },
	 { "C++ identifiers", cpp_identifiers },
	 { "C++ store_at and unchecked input", cpp_store_at },
	 { "corrupted schedules never crash", corrupt_schedules });
