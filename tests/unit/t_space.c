/* Unit tests of the schedule space (pt_space.h): the root's children on a
 * small model counted by hand, each pruning switch, determinism, that a
 * random child is always one of the enumerated children, and that every
 * random complete state of the hand-built models and of the 13 example
 * models (tests/unit/data/) gives a schedule pt_sched_check() accepts. */
#include "pt_test.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
	"blur", "unsharp", "harris", "bilateral_grid", "max_filter",
	"local_laplacian", "interpolate", "stencil_chain", "camera_pipe",
	"conv_layer", "matmul", "hist_eq", "iir_blur"
};
#define NEXAMPLES (sizeof(examples) / sizeof(examples[0]))

/* AVX2: 8 lanes of f32; 8 cores, so parallel tilings give 8 to 128
 * tasks. */
#define HEADER "protune-model 1\nhalide \"14.0.0\"\n" \
	"target \"x86-64-linux-avx-avx2-fma-sse41\"\n" \
	"machine-params \"8,16777216,40\"\n"

/* f1(x, y) = f0(x, y) + f0(x + 1, y) over 256 x 64; f0 = 2 * input. */
static const char two_text[] = HEADER
	"input i0 buffer f32 dims 2 est 0 257 0 64\n"
	"func f0 types f32 args 2 inline\n"
	"  region 0 257 0 64\n"
	"  stage 0\n"
	"    dim v0 0 257\n"
	"    dim v1 0 64\n"
	"    op load.f32 1\n"
	"    op mul.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = (i0(v0, v1)*(f32)2)\"\n"
	"func f1 types f32 args 2 output\n"
	"  region 0 256 0 64\n"
	"  stage 0\n"
	"    dim v0 0 256\n"
	"    dim v1 0 64\n"
	"    op add.f32 1\n"
	"    op load.f32 2\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [1,1]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = (f0(v0, v1) + f0((v0 + 1), v1))\"\n";

/* f1 reads f0 sixteen times over a 128-wide window: inlining f0 computes
 * it 16 times over, and computing it per vector of f1 about 17 times. */
static const char wide_text[] = HEADER
	"input i0 buffer f32 dims 2 est 0 639 0 64\n"
	"func f0 types f32 args 2 inline\n"
	"  region 0 639 0 64\n"
	"  stage 0\n"
	"    dim v0 0 639\n"
	"    dim v1 0 64\n"
	"    op add.f32 1\n"
	"    op load.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = (i0(v0, v1) + (f32)1)\"\n"
	"func f1 types f32 args 2 output\n"
	"  region 0 512 0 64\n"
	"  stage 0\n"
	"    dim v0 0 512\n"
	"    dim v1 0 64\n"
	"    op add.f32 16\n"
	"    op load.f32 16\n"
	"    access f0 value 0 count 16\n"
	"      coord 1*v0 + [0,127]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = window(f0, v0, v1)\"\n";

/* f0 is a big expression (200 operations), read once. */
static const char big_text[] = HEADER
	"input i0 buffer f32 dims 2 est 0 256 0 64\n"
	"func f0 types f32 args 2 inline\n"
	"  region 0 256 0 64\n"
	"  stage 0\n"
	"    dim v0 0 256\n"
	"    dim v1 0 64\n"
	"    op add.f32 200\n"
	"    op load.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = big(i0(v0, v1))\"\n"
	"func f1 types f32 args 2 output\n"
	"  region 0 256 0 64\n"
	"  stage 0\n"
	"    dim v0 0 256\n"
	"    dim v1 0 64\n"
	"    op load.f32 1\n"
	"    op mul.f32 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = (f0(v0, v1)*(f32)3)\"\n";

/* A small output (8 x 4: too small to run in parallel) reading f0 along
 * its rows: a line buffer. SLIDE_ONE moves one of f0's coordinates per
 * row, SLIDE_TWO both (f0(x + y, y)). */
#define SLIDE_TEXT(C0) HEADER \
	"input i0 buffer f32 dims 2 est 0 16 0 5\n" \
	"func f0 types f32 args 2\n" \
	"  region 0 16 0 5\n" \
	"  stage 0\n" \
	"    dim v0 0 16\n" \
	"    dim v1 0 5\n" \
	"    op add.f32 1\n" \
	"    op load.f32 1\n" \
	"    access i0 value 0 count 1\n" \
	"      coord 1*v0 + [0,0]\n" \
	"      coord 1*v1 + [0,0]\n" \
	"    def \"f0(v0, v1) = (i0(v0, v1) + (f32)1)\"\n" \
	"func f1 types f32 args 2 output\n" \
	"  region 0 8 0 4\n" \
	"  stage 0\n" \
	"    dim v0 0 8\n" \
	"    dim v1 0 4\n" \
	"    op add.f32 1\n" \
	"    op load.f32 2\n" \
	"    access f0 value 0 count 1\n" \
	"      coord " C0 " + [0,0]\n" \
	"      coord 1*v1 + [0,0]\n" \
	"    access f0 value 0 count 1\n" \
	"      coord " C0 " + [0,0]\n" \
	"      coord 1*v1 + [1,1]\n" \
	"    def \"f1(v0, v1) = (f0(v0, v1) + f0(v0, (v1 + 1)))\"\n"

static const char slide_one_text[] = SLIDE_TEXT("1*v0");
static const char slide_two_text[] = SLIDE_TEXT("1*v0 1*v1");

/* interpolate's upsampling on a narrow level: f1 reads f0 at x / 2 and at
 * x / 2 - 1 + 2 * (x % 2), y / 2; f1 is 6 wide, too narrow for a vector
 * of 8, so the space vectorizes it along y. */
static const char upy_text[] = HEADER
	"input i0 buffer f32 dims 2 est 0 16 0 32\n"
	"func f0 types f32 args 2 inline\n"
	"  region -1 5 0 32\n"
	"  stage 0\n"
	"    dim v0 -1 5\n"
	"    dim v1 0 32\n"
	"    op load.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0] clamp [0,15]\n"
	"      coord 1*v1 + [0,0] clamp [0,31]\n"
	"    def \"f0(v0, v1) = i0(clamp(v0), clamp(v1))\"\n"
	"func f1 types f32 args 2 output\n"
	"  region 0 6 0 64\n"
	"  stage 0\n"
	"    dim v0 0 6\n"
	"    dim v1 0 64\n"
	"    op add.f32 1\n"
	"    op load.f32 2\n"
	"    access f0 value 0 count 1\n"
	"      coord 1/2*v0 + [-1,1/2]\n"
	"      coord 1/2*v1 + [-1/2,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1/2*v0 + [-1/2,0]\n"
	"      coord 1/2*v1 + [-1/2,0]\n"
	"    def \"f1(v0, v1) = up(f0)\"\n";

/* A histogram and its cumulative sum: updates with reduction loops. */
static const char hist_text[] = HEADER
	"input i0 buffer u8 dims 2 est 0 300 0 200\n"
	"func f0 types i32 args 1\n"
	"  region 0 256\n"
	"  stage 0\n"
	"    dim v0 0 256\n"
	"    def \"f0(v0) = 0\"\n"
	"  stage 1\n"
	"    dim r0 0 300\n"
	"    dim r1 0 200\n"
	"    op add.i32 1\n"
	"    op cast.i32 1\n"
	"    op load.i32 1\n"
	"    op load.u8 1\n"
	"    access f0 value 0 count 1\n"
	"      coord any clamp [0,255]\n"
	"    access f0 value 0 count 1 store data-dependent\n"
	"      coord any clamp [0,255]\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*r0 + [0,0]\n"
	"      coord 1*r1 + [0,0]\n"
	"    def \"f0(cast<i32>(i0(r0, r1))) = (f0(cast<i32>(i0(r0, r1))) + 1) "
	"rdom r0(0, 300) r1(0, 200)\"\n"
	"func f1 types f32 args 2 output\n"
	"  region 0 256 0 64\n"
	"  stage 0\n"
	"    dim v0 0 256\n"
	"    dim v1 0 64\n"
	"    def \"f1(v0, v1) = 0.0f\"\n"
	"  stage 1\n"
	"    dim r0 0 16\n"
	"    dim v0 0 256\n"
	"    dim v1 0 64\n"
	"    op add.f32 1\n"
	"    op cast.f32 1\n"
	"    op load.f32 1\n"
	"    op load.i32 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*r0 1*v0 + [0,0]\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f1 value 0 count 1 store\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = (f1(v0, v1) + cast<f32>(f0((v0 + r0)))) "
	"rdom r0(0, 16)\"\n";

/* --- helpers -------------------------------------------------------------- */

static struct pt_model *parse(const char *text, size_t len, const char *name)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;

	if (pt_model_parse(text, len, name, &m, &err)) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	pt_model_hash(m);
	return m;
}

static struct pt_model *model(const char *text)
{
	return parse(text, strlen(text), "<test>");
}


struct fix {
	struct pt_model *m;
	struct pt_space *sp;
	struct pt_space_work *w;
	struct pt_space_state *root, *st;
	/* the last scratch schedule (a copy) and its revisions */
	struct pt_sched *prev;
	uint64_t rev[64];
	/* the same for coarse schedules, built with cw (made when first
	 * wanted) */
	struct pt_space_work *cw;
	struct pt_sched *cprev;
	uint64_t crev[64];
};

static int setup_model(struct fix *x, struct pt_model *m, unsigned prune)
{
	struct pt_space_opts o = PT_SPACE_OPTS_INIT;
	struct pt_error err = PT_ERROR_INIT;

	memset(x, 0, sizeof(*x));
	x->m = m;
	if (!x->m)
		return -1;
	o.prune = prune;
	if (pt_space_new(x->m, &o, &x->sp, &err)) {
		printf("# %s\n", err.msg);
		return -1;
	}
	x->w = pt_space_work_new(x->sp);
	x->root = pt_space_state_new(x->sp);
	x->st = pt_space_state_new(x->sp);
	if (!x->w || !x->root || !x->st)
		return -1;
	return pt_space_root(x->sp, x->w, x->root);
}

static int setup(struct fix *x, const char *text, unsigned prune)
{
	return setup_model(x, model(text), prune);
}

static void teardown(struct fix *x)
{
	free(x->root);
	free(x->st);
	pt_sched_free(x->prev);
	pt_sched_free(x->cprev);
	pt_space_work_free(x->w);
	pt_space_work_free(x->cw);
	pt_space_free(x->sp);
	pt_model_free(x->m);
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Do two entries have the same compute and store sites and stages? */
static int same_site(const struct pt_sched_func *p,
		     const struct pt_sched_func *q)
{
	if (p->compute != q->compute || p->nstages != q->nstages)
		return 0;
	return p->compute != PT_COMPUTE_AT ||
		(p->compute_at.func == q->compute_at.func &&
		 same_str(p->compute_at.loop, q->compute_at.loop) &&
		 p->store_root == q->store_root &&
		 (p->store_root || (p->store_at.func == q->store_at.func &&
				    same_str(p->store_at.loop,
					     q->store_at.loop))));
}

/* Are Func f's entries in a and b the same? */
static int same_entry(const struct pt_sched *a, const struct pt_sched *b,
		      int f)
{
	const struct pt_sched_func *p = &a->funcs[f], *q = &b->funcs[f];
	int i, k;
	size_t o;

	if (!same_site(p, q))
		return 0;
	for (i = 0; i < p->nstages; i++) {
		const struct pt_sched_stage *u = &p->stages[i];
		const struct pt_sched_stage *v = &q->stages[i];

		if (u->ndirs != v->ndirs)
			return 0;
		for (k = 0; k < u->ndirs; k++) {
			const struct pt_directive *d = &u->dirs[k];
			const struct pt_directive *e = &v->dirs[k];

			if (d->kind != e->kind || !same_str(d->dim, e->dim) ||
			    d->order.nr != e->order.nr)
				return 0;
			if (d->kind == PT_DIR_SPLIT &&
			    (d->factor != e->factor || d->tail != e->tail ||
			     !same_str(d->outer, e->outer) ||
			     !same_str(d->inner, e->inner)))
				return 0;
			for (o = 0; o < d->order.nr; o++)
				if (!same_str(d->order.v[o], e->order.v[o]))
					return 0;
		}
	}
	return 1;
}

/* pt_space_scratch_revs(w) after a scratch schedule t: every revision
 * set, and a Func whose revision is the one it had at the last scratch
 * schedule (*prev, with revisions last[]) has the entry it had then.
 * Keeps a copy of t and its revisions for the next. */
static int revs_hold_in(const struct pt_space_work *w, struct pt_sched **prev,
			uint64_t *last, const struct pt_sched *t)
{
	const uint64_t *rev = pt_space_scratch_revs(w);
	int f, ok = rev && t->nfuncs <= 64;

	for (f = 0; ok && f < t->nfuncs; f++)
		ok = rev[f] && (!*prev || rev[f] != last[f] ||
				same_entry(*prev, t, f));
	pt_sched_free(*prev);
	*prev = pt_sched_copy(t);
	for (f = 0; ok && f < t->nfuncs; f++)
		last[f] = rev[f];
	return ok && *prev;
}

static int revs_hold(struct fix *x, const struct pt_sched *t)
{
	return revs_hold_in(x->w, &x->prev, x->rev, t);
}

/* Is stage entry c what pt_space_sched_coarse() makes of the full one,
 * u: u's splits, then its parallel directives, in u's order? */
static int coarse_stage(const struct pt_sched_stage *u,
			const struct pt_sched_stage *c)
{
	int k, n = 0;

	for (k = 0; k < u->ndirs; k++) {
		const struct pt_directive *d = &u->dirs[k], *e;

		if (d->kind != PT_DIR_SPLIT && d->kind != PT_DIR_PARALLEL)
			continue;
		if (n >= c->ndirs)
			return 0;
		e = &c->dirs[n++];
		if (d->kind != e->kind || !same_str(d->dim, e->dim) ||
		    e->order.nr)
			return 0;
		if (d->kind == PT_DIR_SPLIT &&
		    (d->factor != e->factor || !same_str(d->outer, e->outer) ||
		     !same_str(d->inner, e->inner)))
			return 0;
	}
	return n == c->ndirs;
}

/* Is st's coarse schedule (built with x->cw, its revisions holding) s's
 * sites, splits and parallel loops? */
static int same_as_coarse(struct fix *x, const struct pt_space_state *st,
			  const struct pt_sched *s)
{
	const struct pt_sched *c = NULL;
	int f, i;

	if (!x->cw && !(x->cw = pt_space_work_new(x->sp)))
		return 0;
	if (pt_space_sched_coarse(x->sp, st, x->cw, &c) || !c ||
	    c->nfuncs != s->nfuncs ||
	    !revs_hold_in(x->cw, &x->cprev, x->crev, c))
		return 0;
	for (f = 0; f < s->nfuncs; f++) {
		const struct pt_sched_func *p = &s->funcs[f], *q = &c->funcs[f];

		if (!same_site(p, q))
			return 0;
		for (i = 0; i < p->nstages; i++)
			if (!coarse_stage(&p->stages[i], &q->stages[i]))
				return 0;
	}
	return 1;
}

/* Does w's scratch schedule of st (and a copy of it) print as s does? */
static int same_as_scratch(struct fix *x, const struct pt_space_state *st,
			   const struct pt_sched *s)
{
	struct pt_strbuf a = PT_STRBUF_INIT, b = PT_STRBUF_INIT;
	struct pt_strbuf c = PT_STRBUF_INIT;
	const struct pt_sched *t = NULL;
	struct pt_sched *copy = NULL;
	int same = 0;

	if (!pt_space_sched_scratch(x->sp, st, x->w, &t) && revs_hold(x, t) &&
	    (copy = pt_sched_copy(t)) && !pt_sched_print(s, &a) &&
	    !pt_sched_print(t, &b) && !pt_sched_print(copy, &c))
		same = !strcmp(a.buf, b.buf) && !strcmp(a.buf, c.buf);
	pt_sched_free(copy);
	pt_strbuf_release(&a);
	pt_strbuf_release(&b);
	pt_strbuf_release(&c);
	return same;
}

/* Does pt_space_compute() say of every Func what schedule s says? */
static int same_compute(struct fix *x, const struct pt_space_state *st,
			const struct pt_sched *s)
{
	int f, c, site;

	if (pt_space_nfuncs(x->sp) != s->nfuncs)
		return 0;
	for (f = 0; f < s->nfuncs; f++) {
		site = -1;
		c = pt_space_compute(x->sp, st, f, &site);
		if (c != (int)s->funcs[f].compute ||
		    (c == PT_COMPUTE_AT && site != s->funcs[f].compute_at.func))
			return 0;
	}
	return 1;
}

/* The schedule of a state, checked (and the scratch schedule and
 * pt_space_compute() the same); NULL (and a failure) when refused. */
static struct pt_sched *checked(struct fix *x, const struct pt_space_state *st)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_sched *s = NULL;

	if (!PT_CHECK(pt_space_sched(x->sp, st, &s) == 0))
		return NULL;
	PT_CHECK(same_as_scratch(x, st, s));
	PT_CHECK(same_as_coarse(x, st, s));
	PT_CHECK(same_compute(x, st, s));
	if (!PT_CHECK(pt_sched_check(x->m, s, &err) == 0)) {
		struct pt_strbuf sb = PT_STRBUF_INIT;

		pt_sched_print(s, &sb);
		printf("# %s\n# ---\n%s", err.msg, sb.buf);
		pt_strbuf_release(&sb);
		pt_sched_free(s);
		return NULL;
	}
	return s;
}

/* Children of a state, kept. */
struct kids {
	size_t size;
	int n, cap;
	unsigned char *v;
};

static int keep(void *arg, const struct pt_space_state *child)
{
	struct kids *k = arg;

	if (k->n == k->cap) {
		unsigned char *v;

		k->cap = k->cap ? 2 * k->cap : 64;
		v = realloc(k->v, (size_t)k->cap * k->size);
		if (!v)
			return PT_ENOMEM;
		k->v = v;
	}
	memcpy(k->v + (size_t)k->n++ * k->size, child, k->size);
	return 0;
}

static const struct pt_space_state *kid(const struct kids *k, int i)
{
	return (const struct pt_space_state *)(const void *)
		(k->v + (size_t)i * k->size);
}

static int children(struct fix *x, const struct pt_space_state *st,
		    struct kids *k)
{
	memset(k, 0, sizeof(*k));
	k->size = pt_space_state_size(x->sp);
	return pt_space_children(x->sp, st, x->w, keep, k);
}

/* Take the first child until the state waits for Func f's granularity. */
static int walk_to(struct fix *x, struct pt_space_state *st, int f)
{
	int func, what, steps = 0;
	struct kids k;

	while (!pt_space_next(x->sp, st, &func, NULL, &what) &&
	       !(func == f && what == PT_SPACE_GRAN) && steps++ < 1000) {
		if (children(x, st, &k) < 1) {
			free(k.v);
			return -1;
		}
		memcpy(st, kid(&k, 0), k.size);
		free(k.v);
	}
	return func == f && what == PT_SPACE_GRAN ? 0 : -1;
}

/* Product of the extents of a stage's parallel loops (0: none). */
static double tasks(struct fix *x, const struct pt_sched *s, int f, int st)
{
	struct pt_nest n;
	double t = 0;
	int i;

	if (pt_sched_nest(x->m, s, f, st, &n, NULL))
		return -1;
	for (i = 0; i < n.nloops; i++)
		if (n.loops[i].kind == PT_LOOP_PARALLEL)
			t = (t ? t : 1) * (double)n.loops[i].extent;
	free(n.loops);
	return t;
}

static int has_dir(const struct pt_sched *s, int f, int kind,
		   const char *prefix)
{
	int st, i;

	for (st = 0; st < s->funcs[f].nstages; st++)
		for (i = 0; i < s->funcs[f].stages[st].ndirs; i++) {
			const struct pt_directive *d =
				&s->funcs[f].stages[st].dirs[i];

			if ((int)d->kind == kind && (!prefix ||
			    !strncmp(d->dim, prefix, strlen(prefix))))
				return 1;
		}
	return 0;
}

static int sliding(const struct pt_sched_func *sf)
{
	return sf->compute == PT_COMPUTE_AT &&
		(sf->store_root || strcmp(sf->store_at.loop,
					  sf->compute_at.loop));
}

/* --- the root ------------------------------------------------------------- */

/* The output's granularity is forced (root), so the root state waits for
 * its tiling: the vector dim is v0 (8 lanes), and tiles of 2^c vectors in
 * x (c = 0..4) or whole, 2^c rows (c = 0..5) or whole, whose tile count
 * is within [8, 128] (worked out by hand: 4 with x whole, 3 with y whole,
 * 19 with both split). */
PT_TEST(root_children)
{
	struct fix x;
	struct kids k;
	int n, i, func, stage, what;
	double t;

	PT_REQUIRE(setup(&x, two_text, PT_SPACE_PRUNE_ALL) == 0);
	PT_CHECK(!pt_space_complete(x.sp, x.root));
	PT_CHECK_INT(pt_space_depth(x.sp, x.root), 0);
	PT_CHECK(pt_space_next(x.sp, x.root, &func, &stage, &what) == 0);
	PT_CHECK_INT(func, 1);
	PT_CHECK_INT(stage, 0);
	PT_CHECK_INT(what, PT_SPACE_TILE);
	n = children(&x, x.root, &k);
	PT_CHECK_INT(n, 26);
	PT_CHECK_INT(k.n, 26);
	PT_CHECK_INT(pt_space_children(x.sp, x.root, x.w, NULL, NULL), 26);
	for (i = 0; i < k.n; i++) {
		struct pt_sched *s = checked(&x, kid(&k, i));

		PT_CHECK_INT(pt_space_depth(x.sp, kid(&k, i)), 1);
		PT_CHECK(pt_space_next(x.sp, kid(&k, i), &func, &stage,
				       &what) == 0);
		PT_CHECK(func == 1 && what == PT_SPACE_INNER);
		if (!s)
			continue;
		PT_CHECK(s->funcs[1].compute == PT_COMPUTE_ROOT);
		PT_CHECK(has_dir(s, 1, PT_DIR_VECTORIZE, "v0"));
		t = tasks(&x, s, 1, 0);
		if (!PT_CHECK(t >= 8 && t <= 128))
			printf("# child %d: %g tasks\n", i, t);
		pt_sched_free(s);
	}
	/* All distinct. */
	for (i = 1; i < k.n; i++)
		PT_CHECK(memcmp(kid(&k, i - 1), kid(&k, i), k.size));
	free(k.v);
	teardown(&x);
}

/* Decisions follow the header's order, and a complete state has no
 * children. */
PT_TEST(order_and_complete)
{
	struct fix x;
	uint64_t rng = 7;
	int func, stage, what, last = 1 << 30, r;

	PT_REQUIRE(setup(&x, two_text, PT_SPACE_PRUNE_ALL) == 0);
	memcpy(x.st, x.root, pt_space_state_size(x.sp));
	while (!pt_space_complete(x.sp, x.st)) {
		int depth = pt_space_depth(x.sp, x.st);

		PT_REQUIRE(pt_space_next(x.sp, x.st, &func, &stage, &what)
			   == 0);
		PT_CHECK(func <= last);  /* outputs back to inputs */
		last = func;
		PT_CHECK(pt_space_children(x.sp, x.st, x.w, NULL, NULL) >= 2);
		PT_REQUIRE(pt_space_random_child(x.sp, x.st, x.w, &rng, x.st)
			   == 0);
		PT_CHECK_INT(pt_space_depth(x.sp, x.st), depth + 1);
	}
	PT_CHECK(pt_space_next(x.sp, x.st, NULL, NULL, NULL) == PT_EINVAL);
	r = pt_space_children(x.sp, x.st, x.w, NULL, NULL);
	PT_CHECK_INT(r, PT_EINVAL);
	PT_CHECK(pt_space_random_child(x.sp, x.st, x.w, &rng, x.st) ==
		 PT_EINVAL);
	teardown(&x);
}

PT_TEST(bad_options)
{
	struct pt_space_opts o = PT_SPACE_OPTS_INIT;
	struct pt_model *m = model(two_text);
	struct pt_space *sp = NULL;

	PT_REQUIRE(m != NULL);
	o.max_levels = PT_SPACE_MAX_LEVELS + 1;
	PT_CHECK(pt_space_new(m, &o, &sp, NULL) == PT_EINVAL);
	PT_CHECK(sp == NULL);
	o.max_levels = 0;
	o.prune = 1u << 20;
	PT_CHECK(pt_space_new(m, &o, &sp, NULL) == PT_EINVAL);
	PT_CHECK(pt_space_new(m, NULL, &sp, NULL) == 0);
	PT_CHECK(pt_space_state_size(sp) > 0);
	pt_space_free(sp);
	pt_model_free(m);
}

/* --- determinism and agreement -------------------------------------------- */

static int same_sched(struct fix *x, const struct pt_space_state *a,
		      const struct pt_space_state *b)
{
	struct pt_sched *s1 = NULL, *s2 = NULL;
	struct pt_strbuf t1 = PT_STRBUF_INIT, t2 = PT_STRBUF_INIT;
	int same;

	pt_space_sched(x->sp, a, &s1);
	pt_space_sched(x->sp, b, &s2);
	pt_sched_print(s1, &t1);
	pt_sched_print(s2, &t2);
	same = t1.len == t2.len && !memcmp(t1.buf, t2.buf, t1.len);
	pt_strbuf_release(&t1);
	pt_strbuf_release(&t2);
	pt_sched_free(s1);
	pt_sched_free(s2);
	return same;
}

PT_TEST(deterministic)
{
	struct fix x;
	struct pt_space_state *other;
	uint64_t seed, r1, r2;
	int differ = 0;

	PT_REQUIRE(setup_model(&x, pt_test_example("local_laplacian"),
			       PT_SPACE_PRUNE_ALL) == 0);
	other = pt_space_state_new(x.sp);
	PT_REQUIRE(other != NULL);
	for (seed = 1; seed <= 20; seed++) {
		r1 = r2 = seed;
		PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w, &r1,
						    x.st) == 0);
		PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w, &r2,
						    other) == 0);
		PT_CHECK(r1 == r2);
		PT_CHECK(!memcmp(x.st, other, pt_space_state_size(x.sp)));
		PT_CHECK(same_sched(&x, x.st, other));
		/* A fresh work area gives the same. */
		r2 = seed;
		{
			struct pt_space_work *w2 = pt_space_work_new(x.sp);

			PT_REQUIRE(w2 != NULL);
			PT_CHECK(pt_space_random_complete(x.sp, x.root, w2,
							  &r2, other) == 0);
			pt_space_work_free(w2);
		}
		PT_CHECK(!memcmp(x.st, other, pt_space_state_size(x.sp)));
		r2 = seed + 1000;
		pt_space_random_complete(x.sp, x.root, x.w, &r2, other);
		differ += !!memcmp(x.st, other, pt_space_state_size(x.sp));
	}
	PT_CHECK(differ >= 18);
	free(other);
	teardown(&x);
}

/* Along random paths, every random child is one of the enumerated
 * children, and the enumeration is the same each time. */
static void agree_on(struct pt_model *m, int paths)
{
	struct fix x;
	struct kids k, k2;
	uint64_t rng = 99;
	int p, i, j, d;

	PT_REQUIRE(setup_model(&x, m, PT_SPACE_PRUNE_ALL) == 0);
	for (p = 0; p < paths; p++) {
		memcpy(x.st, x.root, pt_space_state_size(x.sp));
		for (d = 0; !pt_space_complete(x.sp, x.st); d++) {
			int n = children(&x, x.st, &k);

			PT_CHECK(n >= 1 && n == k.n);
			children(&x, x.st, &k2);
			PT_CHECK(k2.n == k.n && !memcmp(k.v, k2.v,
					(size_t)k.n * k.size));
			free(k2.v);
			for (i = 0; i < 6; i++) {
				uint64_t r = rng + (uint64_t)i * 7919;
				struct pt_space_state *c = x.st;

				/* into a copy, not the state itself */
				c = (struct pt_space_state *)malloc(k.size);
				PT_REQUIRE(c != NULL);
				PT_CHECK(pt_space_random_child(x.sp, x.st, x.w,
							       &r, c) == 0);
				for (j = 0; j < k.n; j++)
					if (!memcmp(kid(&k, j), c, k.size))
						break;
				if (!PT_CHECK(j < k.n))
					printf("# path %d depth %d: random "
					       "child not enumerated\n", p, d);
				free(c);
			}
			/* Intermediate states are legal schedules too. */
			if (d % 4 == 0)
				pt_sched_free(checked(&x, x.st));
			PT_REQUIRE(pt_space_random_child(x.sp, x.st, x.w,
							 &rng, x.st) == 0);
			free(k.v);
		}
	}
	teardown(&x);
}

PT_TEST(random_child_is_a_child)
{
	agree_on(model(two_text), 20);
	agree_on(model(hist_text), 20);
	agree_on(pt_test_example("bilateral_grid"), 3);
	agree_on(pt_test_example("stencil_chain"), 2);
	agree_on(pt_test_example("local_laplacian"), 1);
}

/* --- legality ------------------------------------------------------------- */

static void all_legal(struct pt_model *m, const char *name, int draws,
		      unsigned prune)
{
	struct fix x;
	int i, bad = 0;

	if (!PT_CHECK(setup_model(&x, m, prune) == 0)) {
		printf("# %s\n", name);
		teardown(&x);
		return;
	}
	for (i = 0; i < draws; i++) {
		uint64_t rng = (uint64_t)i;
		struct pt_sched *s;

		PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w, &rng,
						    x.st) == 0);
		PT_CHECK(pt_space_complete(x.sp, x.st));
		s = checked(&x, x.st);
		if (!s && ++bad < 3)
			printf("# %s: seed %d\n", name, i);
		pt_sched_free(s);
	}
	teardown(&x);
}

PT_TEST(legal_hand_models)
{
	all_legal(model(two_text), "two", 1000, PT_SPACE_PRUNE_ALL);
	all_legal(model(wide_text), "wide", 1000, PT_SPACE_PRUNE_ALL);
	all_legal(model(big_text), "big", 300, PT_SPACE_PRUNE_ALL);
	all_legal(model(slide_one_text), "slide_one", 300,
		  PT_SPACE_PRUNE_ALL);
	all_legal(model(hist_text), "hist", 1000, PT_SPACE_PRUNE_ALL);
	all_legal(model(two_text), "two, no pruning", 1000, 0);
	all_legal(model(hist_text), "hist, no pruning", 1000, 0);
	all_legal(model(slide_two_text), "slide_two, no pruning", 300, 0);
}

PT_TEST(legal_examples)
{
	size_t i;

	for (i = 0; i < NEXAMPLES; i++)
		all_legal(pt_test_example(examples[i]), examples[i], 1000,
			  PT_SPACE_PRUNE_ALL);
}

PT_TEST(legal_examples_unpruned)
{
	size_t i;

	for (i = 0; i < NEXAMPLES; i++)
		all_legal(pt_test_example(examples[i]), examples[i], 150, 0);
}

/* --- pruning switches ----------------------------------------------------- */

/* Without the task bounds: every tiling with two tasks or more, and the
 * serial one (41 + 1); without the vector-dim rule, also v1 vectorized
 * (20 more, by hand as above). */
PT_TEST(prune_parallel_tasks_and_vector_dim)
{
	struct fix x;
	struct kids k;
	int i, serial = 0, v1 = 0;

	PT_REQUIRE(setup(&x, two_text, PT_SPACE_PRUNE_ALL &
			 ~PT_SPACE_PRUNE_PARALLEL_TASKS) == 0);
	PT_CHECK_INT(children(&x, x.root, &k), 42);
	for (i = 0; i < k.n; i++) {
		struct pt_sched *s = checked(&x, kid(&k, i));
		double t;

		if (!s)
			continue;
		t = tasks(&x, s, 1, 0);
		serial += t == 0;
		PT_CHECK(t == 0 || t >= 2);
		pt_sched_free(s);
	}
	PT_CHECK_INT(serial, 1);
	free(k.v);
	teardown(&x);

	PT_REQUIRE(setup(&x, two_text, PT_SPACE_PRUNE_ALL &
			 ~PT_SPACE_PRUNE_VECTOR_DIM) == 0);
	PT_CHECK_INT(children(&x, x.root, &k), 46);
	for (i = 0; i < k.n; i++) {
		struct pt_sched *s = checked(&x, kid(&k, i));
		double t;

		if (!s)
			continue;
		v1 += has_dir(s, 1, PT_DIR_VECTORIZE, "v1");
		t = tasks(&x, s, 1, 0);
		PT_CHECK(t >= 8 && t <= 128);
		pt_sched_free(s);
	}
	PT_CHECK_INT(v1, 20);
	free(k.v);
	teardown(&x);
}

/* Parallel loops only in Funcs at root; without the rule, Funcs at a site
 * may have them too. */
PT_TEST(prune_parallel_outer)
{
	unsigned modes[2] = { PT_SPACE_PRUNE_ALL,
			      PT_SPACE_PRUNE_ALL &
			      ~PT_SPACE_PRUNE_PARALLEL_OUTER };
	int mode, i, f, inner_par[2] = { 0, 0 };

	for (mode = 0; mode < 2; mode++) {
		struct fix x;

		PT_REQUIRE(setup_model(&x, pt_test_example("unsharp"), modes[mode])
			   == 0);
		for (i = 0; i < 300; i++) {
			uint64_t rng = (uint64_t)i;
			struct pt_sched *s;

			PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w,
							    &rng, x.st) == 0);
			s = checked(&x, x.st);
			for (f = 0; s && f < s->nfuncs; f++)
				if (s->funcs[f].compute == PT_COMPUTE_AT &&
				    has_dir(s, f, PT_DIR_PARALLEL, NULL))
					inner_par[mode]++;
			pt_sched_free(s);
		}
		teardown(&x);
	}
	PT_CHECK_INT(inner_par[0], 0);
	PT_CHECK(inner_par[1] > 0);
}

/* The granularity children of f0 in `text`, with f1 decided by first
 * children; counts of inlined, site and sliding children. */
struct gran_count {
	int n, inl, root, at, slide;
};

static struct gran_count gran_children(const char *text, unsigned prune)
{
	struct gran_count c;
	struct fix x;
	struct kids k;
	int i;

	memset(&c, 0, sizeof(c));
	if (!PT_CHECK(setup(&x, text, prune) == 0)) {
		teardown(&x);
		return c;
	}
	memcpy(x.st, x.root, pt_space_state_size(x.sp));
	if (PT_CHECK(walk_to(&x, x.st, 0) == 0)) {
		c.n = children(&x, x.st, &k);
		for (i = 0; i < k.n; i++) {
			struct pt_sched *s = checked(&x, kid(&k, i));

			if (!s)
				continue;
			c.inl += s->funcs[0].compute == PT_COMPUTE_INLINE;
			c.root += s->funcs[0].compute == PT_COMPUTE_ROOT;
			c.at += s->funcs[0].compute == PT_COMPUTE_AT &&
				!sliding(&s->funcs[0]);
			c.slide += sliding(&s->funcs[0]);
			pt_sched_free(s);
		}
		free(k.v);
	}
	teardown(&x);
	return c;
}

PT_TEST(prune_recompute)
{
	struct gran_count on = gran_children(wide_text, PT_SPACE_PRUNE_ALL);
	struct gran_count off = gran_children(wide_text, PT_SPACE_PRUNE_ALL &
					      ~PT_SPACE_PRUNE_RECOMPUTE);

	/* Inlining computes f0 16 x 512 / 639 = 12.8 times over. */
	PT_CHECK_INT(on.inl, 0);
	PT_CHECK_INT(off.inl, 1);
	PT_CHECK_INT(on.root, 1);
	PT_CHECK(on.at < off.at);
	PT_CHECK(on.n < off.n);
	PT_CHECK(on.n == on.inl + on.root + on.at + on.slide);
}

PT_TEST(prune_inline_size)
{
	struct gran_count on = gran_children(big_text, PT_SPACE_PRUNE_ALL);
	struct gran_count off = gran_children(big_text, PT_SPACE_PRUNE_ALL &
					      ~PT_SPACE_PRUNE_INLINE_SIZE);

	PT_CHECK_INT(on.inl, 0);
	PT_CHECK_INT(off.inl, 1);
	PT_CHECK_INT(off.n, on.n + 1);
}

PT_TEST(prune_slide_one_dim)
{
	struct gran_count one = gran_children(slide_one_text,
					      PT_SPACE_PRUNE_ALL);
	struct gran_count two = gran_children(slide_two_text,
					      PT_SPACE_PRUNE_ALL);
	struct gran_count two_off = gran_children(slide_two_text,
		PT_SPACE_PRUNE_ALL & ~PT_SPACE_PRUNE_SLIDE_ONE_DIM);

	PT_CHECK_INT(one.slide, 1);
	PT_CHECK_INT(two.slide, 0);
	PT_CHECK_INT(two_off.slide, 1);
	PT_CHECK_INT(two_off.n, two.n + 1);
}

/* Sliding windows off: none in the examples that have them. */
PT_TEST(no_sliding)
{
	struct pt_space_opts o = PT_SPACE_OPTS_INIT;
	struct fix x;
	int mode, i, f, slides[2] = { 0, 0 };

	for (mode = 0; mode < 2; mode++) {
		struct pt_error err = PT_ERROR_INIT;

		memset(&x, 0, sizeof(x));
		x.m = pt_test_example("bilateral_grid");
		PT_REQUIRE(x.m != NULL);
		o.sliding = mode;
		PT_REQUIRE(pt_space_new(x.m, &o, &x.sp, &err) == 0);
		x.w = pt_space_work_new(x.sp);
		x.root = pt_space_state_new(x.sp);
		x.st = pt_space_state_new(x.sp);
		PT_REQUIRE(pt_space_root(x.sp, x.w, x.root) == 0);
		for (i = 0; i < 300; i++) {
			uint64_t rng = (uint64_t)i;
			struct pt_sched *s;

			PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w,
							    &rng, x.st) == 0);
			s = checked(&x, x.st);
			for (f = 0; s && f < s->nfuncs; f++)
				slides[mode] += sliding(&s->funcs[f]);
			pt_sched_free(s);
		}
		teardown(&x);
	}
	PT_CHECK_INT(slides[0], 0);
	PT_CHECK(slides[1] > 0);
}

/* With two levels at most, no dim is split more than twice (the vector
 * split and one tile); with the default four, some are split three
 * times. */
PT_TEST(max_levels)
{
	int mode, i, f, st, k, most[2] = { 0, 0 };

	for (mode = 0; mode < 2; mode++) {
		struct pt_space_opts o = PT_SPACE_OPTS_INIT;
		struct pt_error err = PT_ERROR_INIT;
		struct fix x;

		memset(&x, 0, sizeof(x));
		x.m = pt_test_example("blur");
		PT_REQUIRE(x.m != NULL);
		o.max_levels = mode ? 0 : 2;
		PT_REQUIRE(pt_space_new(x.m, &o, &x.sp, &err) == 0);
		x.w = pt_space_work_new(x.sp);
		x.root = pt_space_state_new(x.sp);
		x.st = pt_space_state_new(x.sp);
		PT_REQUIRE(pt_space_root(x.sp, x.w, x.root) == 0);
		for (i = 0; i < 300; i++) {
			uint64_t rng = (uint64_t)i;
			struct pt_sched *s;

			PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w,
							    &rng, x.st) == 0);
			s = checked(&x, x.st);
			for (f = 0; s && f < s->nfuncs; f++)
				for (st = 0; st < s->funcs[f].nstages; st++) {
					int n[2] = { 0, 0 };
					const struct pt_sched_stage *ss =
						&s->funcs[f].stages[st];

					for (k = 0; k < ss->ndirs; k++)
						if (ss->dirs[k].kind ==
						    PT_DIR_SPLIT)
							n[ss->dirs[k].dim[1] ==
							  '1']++;
					for (k = 0; k < 2; k++)
						if (n[k] > most[mode])
							most[mode] = n[k];
				}
			pt_sched_free(s);
		}
		teardown(&x);
	}
	PT_CHECK_INT(most[0], 2);
	PT_CHECK(most[1] >= 3);
}

/* Rule 6, strided loads at constant addresses: the space never computes
 * f0 where f1, vectorized along y, would load it every third element
 * from constant addresses (the interpolate crash), and still computes it
 * at other loops of f1. */
PT_TEST(const_strided)
{
	struct fix x;
	int i, at = 0;

	all_legal(model(upy_text), "upy", 1000, PT_SPACE_PRUNE_ALL);
	all_legal(model(upy_text), "upy, no pruning", 300, 0);
	PT_REQUIRE(setup_model(&x, model(upy_text), PT_SPACE_PRUNE_ALL) == 0);
	for (i = 0; i < 300; i++) {
		uint64_t rng = (uint64_t)i;
		struct pt_sched *s;

		PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w, &rng,
						    x.st) == 0);
		s = checked(&x, x.st);
		at += s && s->funcs[0].compute == PT_COMPUTE_AT;
		pt_sched_free(s);
	}
	PT_CHECK(at >= 30);
	teardown(&x);
}

/* Whether a stage vectorizes the inner loop of a guarded split (*gv),
 * and whether it unrolls anything (*un). */
static void stage_flags(const struct pt_sched_stage *ss, int *gv, int *un)
{
	int i, j;

	*gv = *un = 0;
	for (i = 0; i < ss->ndirs; i++) {
		const struct pt_directive *v = &ss->dirs[i];

		*un |= v->kind == PT_DIR_UNROLL;
		if (v->kind != PT_DIR_VECTORIZE)
			continue;
		for (j = 0; j < ss->ndirs; j++)
			if (ss->dirs[j].kind == PT_DIR_SPLIT &&
			    ss->dirs[j].tail == PT_TAIL_GUARD &&
			    !strcmp(ss->dirs[j].inner, v->dim))
				*gv = 1;
	}
}

/* No stage both guards its vectors and unrolls (the camera_pipe schedule
 * that kept LLVM busy past 600 s), while guarded vectors and unrolled
 * stages each still occur. */
PT_TEST(no_unroll_with_guarded_vectors)
{
	size_t e;
	int guarded = 0, unrolled = 0, both = 0;

	for (e = 0; e < NEXAMPLES; e++) {
		struct fix x;
		int i;

		PT_REQUIRE(setup_model(&x, pt_test_example(examples[e]),
				       PT_SPACE_PRUNE_ALL) == 0);
		for (i = 0; i < 200; i++) {
			uint64_t rng = (uint64_t)i;
			struct pt_sched *s = NULL;
			int f, k, gv, un;

			PT_REQUIRE(pt_space_random_complete(x.sp, x.root, x.w,
							    &rng, x.st) == 0);
			PT_REQUIRE(pt_space_sched(x.sp, x.st, &s) == 0);
			for (f = 0; f < s->nfuncs; f++)
				for (k = 0; k < s->funcs[f].nstages; k++) {
					stage_flags(&s->funcs[f].stages[k],
						    &gv, &un);
					guarded += gv;
					unrolled += un;
					if (gv && un && ++both <= 3)
						printf("# %s seed %d: f%d stage %d\n",
						       examples[e], i, f, k);
				}
			pt_sched_free(s);
		}
		teardown(&x);
	}
	PT_CHECK_INT(both, 0);
	PT_CHECK(guarded > 100);
	PT_CHECK(unrolled > 100);
}

PT_SUITE(space,
	 { "root children", root_children },
	 { "decision order and complete states", order_and_complete },
	 { "bad options", bad_options },
	 { "deterministic for a seed", deterministic },
	 { "random child is an enumerated child", random_child_is_a_child },
	 { "hand-built models give legal schedules", legal_hand_models },
	 { "examples give legal schedules", legal_examples },
	 { "examples without pruning give legal schedules",
	   legal_examples_unpruned },
	 { "prune: parallel tasks, vector dim",
	   prune_parallel_tasks_and_vector_dim },
	 { "prune: parallel outer", prune_parallel_outer },
	 { "prune: recompute", prune_recompute },
	 { "prune: inline size", prune_inline_size },
	 { "prune: slide one dim", prune_slide_one_dim },
	 { "no sliding", no_sliding },
	 { "max levels", max_levels },
	 { "rule 6: strided loads at constant addresses", const_strided },
	 { "no unroll with guarded vectors",
	   no_unroll_with_guarded_vectors });
