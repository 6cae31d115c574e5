/* pt_randsched.c: random legal schedules and the baseline schedule.
 *
 * pt_randsched() walks the Funcs from the outputs back to the inputs. For
 * each it picks a compute site among the legal ones (inline, root, or a
 * loop of the Func that holds every use), sometimes a coarser store site
 * (sliding window), and then, stage by stage, tilings, an order, and
 * parallel, vector and unroll annotations that are legal by construction.
 * Compute and store choices are confirmed with pt_sched_check() on the
 * whole schedule so far (every Func not decided yet is at root, which is
 * always legal), so every step keeps the schedule legal. A Func whose
 * directives the check refuses all the same (a bug in one of the two) loses
 * them and the schedule says so in a "randsched-fallback" meta entry.
 *
 * A sliding window (a store site outside the compute site) is drawn only in
 * the shape the check allows; the sliding Func's directives then use guard
 * tails and are drawn again, up to 8 times, until they leave the slid dims
 * alone (the check knows which those are), or dropped.
 *
 * Random schedules are compiled and run by the differential tests, so the
 * generator also keeps their cost sane (doc/schedule-legality.md): no
 * compute site that makes a Func do far more work than at root (a
 * reduction recomputed at every pixel), no site inside an unrolled loop,
 * inlining and unrolling within an operation budget (big expressions
 * copied into vectorized, unrolled loops made LLVM run for minutes), at
 * most three splits and one unroll a stage.
 */
#include "protune/pt_randsched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLITS 3
#define MAX_NAME 31
#define WORK_RATIO 16.0   /* a compute site may cost this much more than
			   * computing the Func at root */
#define INLINE_OPS 128.0  /* operations inlining may add to one stage */
#define INLINE_CODE 512.0 /* the same, times the stage's unrolled extents
			   * and vector registers */
#define UNROLL_CODE 1024.0 /* a stage's operations times its unrolled
			    * extents and vector registers */

/* --- a small generator: splitmix64 ---------------------------------------- */

struct rng {
	uint64_t state;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static int rng_below(struct rng *r, int n)
{
	return (int)(rng_next(r) % (uint64_t)n);
}

static int rng_percent(struct rng *r, int p)
{
	return rng_below(r, 100) < p;
}

/* --- model helpers -------------------------------------------------------- */

static const struct pt_stage *mstage(const struct pt_model *m, int f, int st)
{
	return &m->stages[m->funcs[f].first_stage + st];
}

static int last_stage(const struct pt_model *m, int f)
{
	return m->funcs[f].nstages - 1;
}

static int64_t dim_extent(const struct pt_dim *d)
{
	return d->extent > 0 ? d->extent : 1;
}

static int narrowest_bits(const struct pt_func *fn)
{
	int i, bits = 64;

	for (i = 0; i < fn->ntypes; i++)
		if (fn->types[i].bits < bits)
			bits = fn->types[i].bits;
	return fn->ntypes ? bits : 32;
}

int pt_model_vector_lanes(const struct pt_model *m, int bits)
{
	const char *t = m ? m->target : NULL;
	int vbits = 128, lanes;

	while (t && *t) {
		size_t n = strcspn(t, "-");

		if (n >= 6 && !strncmp(t, "avx512", 6))
			vbits = 512;
		else if (((n == 3 && !strncmp(t, "avx", 3)) ||
			  (n == 4 && !strncmp(t, "avx2", 4))) && vbits < 256)
			vbits = 256;
		t += n;
		if (*t == '-')
			t++;
	}
	if (bits < 8)
		bits = 8;  /* bools are stored and vectorized as bytes */
	lanes = vbits / bits;
	return lanes > 1 ? lanes : 1;
}

static double stage_ops(const struct pt_stage *st)
{
	double n = 0;
	int i;

	for (i = 0; i < st->nops; i++)
		n += (double)st->ops[i].count;
	return n > 1 ? n : 1;
}

/* Native vector registers a loop of `extent` lanes of Func f's narrowest
 * type fills (at least 1). */
static double vector_regs(const struct pt_model *m, int f, int64_t extent)
{
	double lanes = pt_model_vector_lanes(m,
			narrowest_bits(&m->funcs[f]));

	return (double)extent > lanes ? (double)extent / lanes : 1;
}

/* --- building directives -------------------------------------------------- */

/* A loop of the stage being built, innermost first. */
struct cl {
	char name[MAX_NAME + 1];
	int dim;          /* index of the original dim in the stage */
	int is_rvar;
	int64_t extent;
	int cons;         /* constant extent */
	int kind;         /* PT_LOOP_* */
	int inner;        /* from a split's inner half: not split again */
};

struct sbuild {
	const struct pt_model *m;
	int f, st;
	struct pt_sched_stage *out;
	int n;
	struct cl l[2 * MAX_SPLITS + 32];
	int nnames;
	char names[2 * MAX_SPLITS][MAX_NAME + 1];
	int failed;       /* out of memory */
};

static int name_free(const struct sbuild *b, const char *name)
{
	const struct pt_func *fn = &b->m->funcs[b->f];
	const struct pt_stage *st = mstage(b->m, b->f, b->st);
	char buf[16];
	int i, j;

	for (i = 0; i < st->ndims; i++) {
		snprintf(buf, sizeof(buf), "%c%d",
			 st->dims[i].is_rvar ? 'r' : 'v', st->dims[i].index);
		if (!strcmp(buf, name))
			return 0;
	}
	for (i = 0; i < b->nnames; i++)
		if (!strcmp(b->names[i], name))
			return 0;
	for (i = 0; i < fn->nstages; i++) {
		const struct pt_stage *s2 = mstage(b->m, b->f, i);

		for (j = 0; j < s2->ndims; j++)
			if (pt_halide_name_match(s2->dims[j].label, name))
				return 0;
	}
	return 1;
}

/* A new name for a split result of `base`: base + suffix, made unique. */
static void new_name(struct sbuild *b, const char *base, char suffix,
		     char *out)
{
	char stem[MAX_NAME + 1], buf[64];
	size_t len;
	int k;

	snprintf(stem, sizeof(stem), "%.*s%c", MAX_NAME - 8, base, suffix);
	strcpy(out, stem);
	for (k = 2; !name_free(b, out) && k < 100000; k++) {
		snprintf(buf, sizeof(buf), "%s_%d", stem, k);
		len = strlen(buf);
		if (len > MAX_NAME)
			len = MAX_NAME;
		memcpy(out, buf, len);
		out[len] = '\0';
	}
	strcpy(b->names[b->nnames++], out);
}

static struct pt_directive *add_dir(struct sbuild *b)
{
	struct pt_directive *d = pt_sched_add_directive(b->out);

	if (!d)
		b->failed = 1;
	return d;
}

static char *dup(struct sbuild *b, const char *s)
{
	char *c = pt_model_strdup(s);

	if (!c)
		b->failed = 1;
	return c;
}

/* Split loop i; returns the index of the inner loop (the outer is i + 1). */
static int split(struct sbuild *b, int i, int64_t factor, enum pt_tail tail)
{
	struct pt_directive *d;
	struct cl parent = b->l[i];
	char outer[MAX_NAME + 1], inner[MAX_NAME + 1];

	new_name(b, parent.name, 'o', outer);
	new_name(b, parent.name, 'i', inner);
	d = add_dir(b);
	if (!d)
		return i;
	d->kind = PT_DIR_SPLIT;
	d->dim = dup(b, parent.name);
	d->outer = dup(b, outer);
	d->inner = dup(b, inner);
	d->factor = factor;
	d->tail = tail;
	memmove(&b->l[i + 1], &b->l[i], (size_t)(b->n - i) * sizeof(b->l[0]));
	b->n++;
	strcpy(b->l[i].name, inner);
	b->l[i].extent = factor;
	b->l[i].cons = 1;
	b->l[i].inner = 1;
	strcpy(b->l[i + 1].name, outer);
	b->l[i + 1].extent = (parent.extent + factor - 1) / factor;
	b->l[i + 1].cons = parent.cons;
	return i;
}

static void annotate(struct sbuild *b, int i, enum pt_directive_kind kind)
{
	struct pt_directive *d = add_dir(b);

	if (!d)
		return;
	d->kind = kind;
	d->dim = dup(b, b->l[i].name);
	b->l[i].kind = kind == PT_DIR_VECTORIZE ? PT_LOOP_VECTOR :
		kind == PT_DIR_PARALLEL ? PT_LOOP_PARALLEL : PT_LOOP_UNROLL;
}

static void reorder(struct sbuild *b, const struct cl *order)
{
	struct pt_directive *d = add_dir(b);
	int i;

	if (!d)
		return;
	d->kind = PT_DIR_REORDER;
	for (i = 0; i < b->n; i++)
		if (pt_strvec_push(&d->order, order[i].name))
			b->failed = 1;
	memcpy(b->l, order, (size_t)b->n * sizeof(*order));
}

static const int64_t factors[] = { 2, 3, 4, 8, 16, 32, 64 };

/* A factor from the usual set, at most `extent`; 0 if none fits. */
static int64_t pick_factor(struct rng *r, int64_t extent)
{
	int n = 0;

	while (n < (int)(sizeof(factors) / sizeof(factors[0])) &&
	       factors[n] <= extent)
		n++;
	return n ? factors[rng_below(r, n)] : 0;
}

static enum pt_tail pick_tail(struct rng *r, int st, int exact, int root,
			      int64_t factor, int64_t extent)
{
	int shift_ok, round_ok, x;

	if (st != 0)  /* an update, or -1: guard only */
		return PT_TAIL_GUARD;
	shift_ok = root && factor <= extent;
	round_ok = !exact;
	x = rng_below(r, 100);
	if (x < 20 && shift_ok)
		return PT_TAIL_SHIFT;
	if (x >= 20 && x < 32 && round_ok)
		return PT_TAIL_ROUND;
	return PT_TAIL_GUARD;
}

static int first_pure(const struct sbuild *b)
{
	int i;

	for (i = 0; i < b->n; i++)
		if (!b->l[i].is_rvar)
			return i;
	return -1;
}

/* Directives for one stage of a Func that is not inlined. */
static int random_stage(const struct pt_model *m, struct pt_sched *s,
			struct rng *r, const unsigned char *exact, int f,
			int st, int guard_only)
{
	const struct pt_stage *stage = mstage(m, f, st);
	struct sbuild *b;
	int i, k, nsplits = 0, vec = -1, root, lanes, tst;
	char vname[MAX_NAME + 1] = "";
	int ret;

	b = calloc(1, sizeof(*b));
	if (!b)
		return PT_ENOMEM;
	b->m = m;
	b->f = f;
	b->st = st;
	b->out = &s->funcs[f].stages[st];
	if (stage->ndims > 32) {
		free(b);
		return 0;
	}
	for (i = 0; i < stage->ndims; i++) {
		struct cl *l = &b->l[b->n++];

		snprintf(l->name, sizeof(l->name), "%c%d",
			 stage->dims[i].is_rvar ? 'r' : 'v',
			 stage->dims[i].index);
		l->dim = i;
		l->is_rvar = stage->dims[i].is_rvar;
		l->extent = dim_extent(&stage->dims[i]);
		l->cons = l->is_rvar &&
			pt_stage_rvar_constant(stage, stage->dims[i].index);
	}
	root = s->funcs[f].compute == PT_COMPUTE_ROOT;
	lanes = pt_model_vector_lanes(m, narrowest_bits(&m->funcs[f]));
	tst = guard_only ? -1 : st;

	/* A vector split of the innermost pure dim. */
	i = first_pure(b);
	if (i >= 0 && b->l[i].extent >= 2 && rng_percent(r, 60)) {
		int64_t fac;

		/* Mostly the native width, sometimes half or twice it. */
		k = rng_below(r, 100);
		fac = k < 60 ? lanes : k < 85 ? lanes / 2 : 2 * lanes;
		if (fac > 64)
			fac = 64;
		if (fac < 2)
			fac = 2;
		k = split(b, i, fac, pick_tail(r, tst, exact[f], root, fac,
					       b->l[i].extent));
		strcpy(vname, b->l[k].name);
		nsplits++;
	}
	/* More splits of pure dims (tiling), rarely of a reduction dim. */
	for (k = rng_below(r, 3); k > 0 && nsplits < MAX_SPLITS; k--) {
		int cand[64], nc = 0;
		int64_t fac;

		for (i = 0; i < b->n && nc < 64; i++)
			if (!b->l[i].is_rvar && !b->l[i].inner &&
			    b->l[i].extent >= 2)
				cand[nc++] = i;
		if (!nc)
			break;
		i = cand[rng_below(r, nc)];
		fac = pick_factor(r, b->l[i].extent);
		if (!fac)
			continue;
		split(b, i, fac, pick_tail(r, tst, exact[f], root, fac,
					   b->l[i].extent));
		nsplits++;
	}
	if (st > 0 && nsplits < MAX_SPLITS && rng_percent(r, 15)) {
		int cand[64], nc = 0;
		int64_t fac;

		for (i = 0; i < b->n && nc < 64; i++)
			if (b->l[i].is_rvar && !b->l[i].inner &&
			    b->l[i].extent >= 2)
				cand[nc++] = i;
		if (nc) {
			i = cand[rng_below(r, nc)];
			fac = pick_factor(r, b->l[i].extent);
			if (fac) {
				split(b, i, fac, PT_TAIL_GUARD);
				nsplits++;
			}
		}
	}

	/* Order: sometimes shuffle the loops, then give the slots each group
	 * got back to the group in its own order: the loops split from one
	 * pure dim keep their split order, and the reduction loops all
	 * keep theirs (rules 6 and 8). The vector loop, the innermost of
	 * its group, is then moved innermost. */
	if (b->n >= 2) {
		struct cl order[sizeof(b->l) / sizeof(b->l[0])];
		int changed = 0, j, used[sizeof(b->l) / sizeof(b->l[0])];

		memcpy(order, b->l, (size_t)b->n * sizeof(order[0]));
		if (rng_percent(r, 30)) {
			for (i = b->n - 1; i > 0; i--) {
				struct cl t;

				j = rng_below(r, i + 1);
				t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
			memset(used, 0, sizeof(used));
			for (i = 0; i < b->n; i++) {
				int grp = order[i].is_rvar ? -1 : order[i].dim;

				for (j = 0; j < b->n; j++)
					if (!used[j] &&
					    (b->l[j].is_rvar ? -1 :
					     b->l[j].dim) == grp)
						break;
				used[j] = 1;
				order[i] = b->l[j];
			}
			changed = 1;
		}
		if (*vname && strcmp(order[0].name, vname)) {
			struct cl v;

			for (i = 0; strcmp(order[i].name, vname); i++)
				;
			v = order[i];
			memmove(&order[1], &order[0], (size_t)i * sizeof(v));
			order[0] = v;
			changed = 1;
		}
		for (i = 0, j = 0; i < b->n; i++)
			if (strcmp(order[i].name, b->l[i].name))
				j = 1;
		if (changed && j)
			reorder(b, order);
	}
	if (*vname) {
		for (vec = 0; strcmp(b->l[vec].name, vname); vec++)
			;
		annotate(b, vec, PT_DIR_VECTORIZE);
	}
	/* Parallel: usually the outermost pure loop. */
	if (rng_percent(r, 50)) {
		int cand[64], nc = 0;

		for (i = b->n - 1; i >= 0 && nc < 64; i--)
			if (!b->l[i].is_rvar && b->l[i].kind == PT_LOOP_SERIAL)
				cand[nc++] = i;
		if (nc)
			annotate(b, cand[rng_percent(r, 70) ? 0 :
					 rng_below(r, nc)], PT_DIR_PARALLEL);
	}
	/* Unroll a small constant loop, if the code stays small. */
	if (rng_percent(r, 25)) {
		int cand[64], nc = 0;
		double code = stage_ops(stage);

		if (vec >= 0)
			code *= vector_regs(m, f, b->l[vec].extent);
		for (i = 0; i < b->n && nc < 64; i++)
			if (b->l[i].cons && b->l[i].extent <= 16 &&
			    b->l[i].kind == PT_LOOP_SERIAL &&
			    code * (double)b->l[i].extent <= UNROLL_CODE)
				cand[nc++] = i;
		if (nc)
			annotate(b, cand[rng_below(r, nc)], PT_DIR_UNROLL);
	}
	ret = b->failed ? PT_ENOMEM : 0;
	free(b);
	return ret;
}

static void clear_stage(struct pt_sched_stage *st)
{
	int j;

	for (j = 0; j < st->ndirs; j++) {
		free(st->dirs[j].dim);
		free(st->dirs[j].outer);
		free(st->dirs[j].inner);
		pt_strvec_release(&st->dirs[j].order);
	}
	free(st->dirs);
	st->dirs = NULL;
	st->ndirs = 0;
}

/* --- compute sites -------------------------------------------------------- */

/* One loop of a decided Func's last stage, outermost first, with its
 * extent in one instance of that Func. */
struct site_loop {
	const char *name;
	int dim;
	double extent;
	int kind;
};

struct gen {
	const struct pt_model *m;
	struct pt_sched *s;
	struct rng rng;
	unsigned char *exact;
	double *inst;     /* per Func: instances of it in the pipeline */
	double *reg;      /* per Func: its region in one instance, maxargs
			   * entries */
	int maxargs;
};

static double *reg_of(struct gen *g, int f)
{
	return g->reg + (size_t)f * (size_t)g->maxargs;
}

/* The loops of Func j's last stage (decided), outermost first, with the
 * extents of one instance of j. Returns the count, or -1 when out of
 * memory; *out is malloc'd. */
static int site_loops(struct gen *g, int j, struct site_loop **out)
{
	const struct pt_model *m = g->m;
	int st = last_stage(m, j);
	const struct pt_stage *stage = mstage(m, j, st);
	const struct pt_sched_stage *ss = st < g->s->funcs[j].nstages ?
		&g->s->funcs[j].stages[st] : NULL;
	struct site_loop *l;
	int n = stage->ndims, cap, i, k, d;
	char (*pos)[16];

	cap = stage->ndims + (ss ? ss->ndirs : 0) + 1;
	l = calloc((size_t)cap, sizeof(*l) + sizeof(*pos));
	if (!l)
		return -1;
	pos = (char (*)[16])(l + cap);
	/* Innermost first while replaying, reversed at the end. */
	for (i = 0; i < n; i++) {
		const struct pt_dim *dim = &stage->dims[i];

		snprintf(pos[i], 16, "%c%d", dim->is_rvar ? 'r' : 'v',
			 dim->index);
		l[i].name = pos[i];
		l[i].dim = i;
		l[i].extent = (double)dim_extent(dim);
		if (!dim->is_rvar && dim->index < m->funcs[j].nargs)
			l[i].extent = reg_of(g, j)[dim->index];
		l[i].kind = PT_LOOP_SERIAL;
	}
	for (k = 0; ss && k < ss->ndirs; k++) {
		const struct pt_directive *dr = &ss->dirs[k];

		for (i = 0; i < n; i++)
			if (dr->dim && !strcmp(l[i].name, dr->dim))
				break;
		switch (dr->kind) {
		case PT_DIR_SPLIT: {
			struct site_loop p = l[i];

			memmove(&l[i + 1], &l[i], (size_t)(n - i) * sizeof(p));
			n++;
			l[i] = p;
			l[i].name = dr->inner;
			l[i].extent = (double)dr->factor < p.extent ?
				(double)dr->factor : p.extent;
			l[i + 1] = p;
			l[i + 1].name = dr->outer;
			l[i + 1].extent = ceil(p.extent / (double)dr->factor);
			if (l[i + 1].extent < 1)
				l[i + 1].extent = 1;
			break;
		}
		case PT_DIR_REORDER: {
			struct site_loop *tmp;
			size_t a;

			tmp = malloc((size_t)n * sizeof(*tmp));
			if (!tmp) {
				free(l);
				return -1;
			}
			for (a = 0; a < dr->order.nr; a++)
				for (d = 0; d < n; d++)
					if (!strcmp(l[d].name,
						    dr->order.v[a]))
						tmp[a] = l[d];
			memcpy(l, tmp, (size_t)n * sizeof(*tmp));
			free(tmp);
			break;
		}
		default:
			if (i < n)
				l[i].kind = dr->kind == PT_DIR_VECTORIZE ?
					PT_LOOP_VECTOR :
					dr->kind == PT_DIR_PARALLEL ?
					PT_LOOP_PARALLEL : PT_LOOP_UNROLL;
		}
	}
	for (i = 0; i < n / 2; i++) {
		struct site_loop t = l[i];

		l[i] = l[n - 1 - i];
		l[n - 1 - i] = t;
	}
	*out = l;
	return n;
}

/* Interval of a coordinate of an access from a stage whose dims range over
 * [lo[d], hi[d]]. */
static void coord_range(const struct pt_stage *st, const struct pt_coord *c,
			const double *lo, const double *hi, double full,
			double *clo, double *chi)
{
	int d;

	if (!c->affine || !c->coef) {
		*clo = c->has_clamp_min ? (double)c->clamp_min : 0;
		*chi = c->has_clamp_max ? (double)c->clamp_max :
			*clo + full - 1;
		if (!c->has_clamp_min && c->has_clamp_max)
			*clo = *chi - full + 1;
		return;
	}
	*clo = (double)c->off_min.num / (double)c->off_min.den;
	*chi = (double)c->off_max.num / (double)c->off_max.den;
	for (d = 0; d < st->ndims; d++) {
		double k = (double)c->coef[d].num / (double)c->coef[d].den;

		if (k >= 0) {
			*clo += k * lo[d];
			*chi += k * hi[d];
		} else {
			*clo += k * hi[d];
			*chi += k * lo[d];
		}
	}
	if (c->has_clamp_min && *clo < (double)c->clamp_min)
		*clo = (double)c->clamp_min;
	if (c->has_clamp_max && *chi > (double)c->clamp_max)
		*chi = (double)c->clamp_max;
	if (*chi < *clo)
		*chi = *clo;
}

/* Widen [rlo, rhi] (Func f's coordinates) by what stage `st` reads of f
 * when its dims range over [lo, hi], directly or through inlined Funcs. */
static void region_read(struct gen *g, const struct pt_stage *st,
			const double *lo, const double *hi, int f,
			double *rlo, double *rhi, int depth)
{
	const struct pt_model *m = g->m;
	int i, k;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];
		const struct pt_func *p;
		double plo[16], phi[16];

		if (a->kind != PT_ACCESS_FUNC || a->is_store ||
		    a->producer < f || a->producer >= st->func)
			continue;
		p = &m->funcs[a->producer];
		if (a->ncoords > 16 || a->ncoords != p->nargs)
			continue;
		if (a->producer != f &&
		    (g->s->funcs[a->producer].compute != PT_COMPUTE_INLINE ||
		     depth > 16))
			continue;
		for (k = 0; k < a->ncoords; k++)
			coord_range(st, &a->coords[k], lo, hi,
				    (double)(p->region_extent ?
					     p->region_extent[k] : 1),
				    &plo[k], &phi[k]);
		if (a->producer == f) {
			for (k = 0; k < a->ncoords; k++) {
				if (plo[k] < rlo[k])
					rlo[k] = plo[k];
				if (phi[k] > rhi[k])
					rhi[k] = phi[k];
			}
			continue;
		}
		region_read(g, mstage(m, a->producer, 0), plo, phi, f, rlo,
			    rhi, depth + 1);
	}
}

/* Does stage `st` read f, directly or through inlined Funcs? */
static int reads(struct gen *g, const struct pt_stage *st, int f, int depth)
{
	int i;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];

		if (a->kind != PT_ACCESS_FUNC || a->is_store ||
		    a->producer < f || a->producer >= st->func)
			continue;
		if (a->producer == f)
			return 1;
		if (g->s->funcs[a->producer].compute == PT_COMPUTE_INLINE &&
		    depth < 16 &&
		    reads(g, mstage(g->m, a->producer, 0), f, depth + 1))
			return 1;
	}
	return 0;
}

/* Does a non-inlined stage other than Func j's last read f? */
static int read_elsewhere(struct gen *g, int f, int j)
{
	const struct pt_model *m = g->m;
	int sidx;

	for (sidx = m->funcs[f].first_stage + m->funcs[f].nstages;
	     sidx < m->nstages; sidx++) {
		const struct pt_stage *st = &m->stages[sidx];

		if (st->func == j && st->index == last_stage(m, j))
			continue;
		if (g->s->funcs[st->func].compute == PT_COMPUTE_INLINE)
			continue;
		if (reads(g, st, f, 0))
			return 1;
	}
	return 0;
}

static double stage_points(const struct pt_model *m, int f, int st,
			   const double *reg)
{
	const struct pt_stage *stage = mstage(m, f, st);
	double p = 1;
	int d;

	for (d = 0; d < stage->ndims; d++) {
		const struct pt_dim *dim = &stage->dims[d];

		if (!dim->is_rvar && reg && dim->index < m->funcs[f].nargs)
			p *= reg[dim->index];
		else
			p *= (double)dim_extent(dim);
	}
	return p;
}

static double func_work(const struct pt_model *m, int f, const double *reg)
{
	double w = 0;
	int st;

	for (st = 0; st < m->funcs[f].nstages; st++)
		w += stage_points(m, f, st, reg);
	return w;
}

/* Estimate, for f computed at loop `pos` (outermost first) of j, the
 * instances of f and its region in one instance; 0 if the work stays
 * within WORK_RATIO of computing f at root, else -1. */
static int site_cost(struct gen *g, int f, int j, const struct site_loop *l,
		     int nl, int pos, double *inst, double *reg)
{
	const struct pt_model *m = g->m;
	const struct pt_func *fn = &m->funcs[f];
	const struct pt_stage *jst = mstage(m, j, last_stage(m, j));
	double lo[64], hi[64], rlo[16], rhi[16], n = g->inst[j];
	int i, d, k;

	if (jst->ndims > 64 || fn->nargs > 16)
		return -1;
	for (d = 0; d < jst->ndims; d++) {
		lo[d] = 0;
		hi[d] = 1;  /* a product of inner extents, fixed below */
	}
	for (i = 0; i < nl; i++) {
		if (i <= pos)
			n *= l[i].extent;
		else
			hi[l[i].dim] *= l[i].extent;
	}
	for (d = 0; d < jst->ndims; d++) {
		const struct pt_dim *dim = &jst->dims[d];
		double whole = (double)dim_extent(dim);

		if (!dim->is_rvar && dim->index < m->funcs[j].nargs)
			whole = reg_of(g, j)[dim->index];
		if (hi[d] > whole)
			hi[d] = whole;
		hi[d] -= 1;
	}
	for (k = 0; k < fn->nargs; k++) {
		rlo[k] = 1e300;
		rhi[k] = -1e300;
	}
	region_read(g, jst, lo, hi, f, rlo, rhi, 0);
	for (k = 0; k < fn->nargs; k++) {
		double whole = fn->region_extent ?
			(double)fn->region_extent[k] : 1;

		reg[k] = rhi[k] >= rlo[k] ? rhi[k] - rlo[k] + 1 : whole;
		if (reg[k] > whole)
			reg[k] = whole;
		if (reg[k] < 1)
			reg[k] = 1;
	}
	if (read_elsewhere(g, f, j))
		for (k = 0; k < fn->nargs; k++)
			reg[k] = fn->region_extent ?
				(double)fn->region_extent[k] : 1;
	*inst = n;
	if (n * func_work(m, f, reg) > WORK_RATIO * func_work(m, f, NULL))
		return -1;
	return 0;
}

/* The first non-inlined stage that reads f, directly or through inlined
 * Funcs; -1 if none. */
static int first_use(struct gen *g, int f)
{
	const struct pt_model *m = g->m;
	int sidx, i, u;

	for (sidx = m->funcs[f].first_stage + m->funcs[f].nstages;
	     sidx < m->nstages; sidx++) {
		const struct pt_stage *st = &m->stages[sidx];

		for (i = 0; i < st->naccesses; i++) {
			const struct pt_access *a = &st->accesses[i];

			if (a->kind != PT_ACCESS_FUNC || a->is_store ||
			    a->producer != f || st->func == f)
				continue;
			if (g->s->funcs[st->func].compute != PT_COMPUTE_INLINE)
				return sidx;
			u = first_use(g, st->func);
			if (u >= 0)
				return u;
		}
	}
	return -1;
}

struct cand {
	int j;
	const char *loop;
	double inst;
	double reg[16];
};

static int set_site(struct pt_sched_func *sf, int j, const char *loop)
{
	char *a = pt_model_strdup(loop), *b = pt_model_strdup(loop);

	if (!a || !b) {
		free(a);
		free(b);
		return PT_ENOMEM;
	}
	free(sf->compute_at.loop);
	free(sf->store_at.loop);
	sf->compute = PT_COMPUTE_AT;
	sf->compute_at.func = j;
	sf->compute_at.loop = a;
	sf->store_root = 0;
	sf->store_at.func = j;
	sf->store_at.loop = b;
	return 0;
}

static void set_simple(struct pt_sched_func *sf, enum pt_compute c)
{
	free(sf->compute_at.loop);
	free(sf->store_at.loop);
	sf->compute_at.loop = sf->store_at.loop = NULL;
	sf->compute_at.func = sf->store_at.func = 0;
	sf->store_root = 0;
	sf->compute = c;
}

static int legal(struct gen *g)
{
	return pt_sched_check(g->m, g->s, NULL) == 0;
}

/* The compute sites f may take, confirmed by the check; *out malloc'd. */
static int at_candidates(struct gen *g, int f, struct cand **out, int *nout)
{
	const struct pt_model *m = g->m;
	struct pt_sched_func *sf = &g->s->funcs[f];
	struct cand *c = NULL;
	int n = 0, cap = 0, use, js[64], nj = 0, h, a, i, ret = 0;

	*out = NULL;
	*nout = 0;
	if (m->funcs[f].nargs > 16)
		return 0;
	use = first_use(g, f);
	if (use < 0)
		return 0;
	h = m->stages[use].func;
	if (m->stages[use].index == last_stage(m, h))
		js[nj++] = h;
	while (g->s->funcs[h].compute == PT_COMPUTE_AT && nj < 64) {
		h = g->s->funcs[h].compute_at.func;
		js[nj++] = h;
	}
	for (a = 0; a < nj && !ret; a++) {
		struct site_loop *l;
		int nl = site_loops(g, js[a], &l);

		if (nl < 0)
			return PT_ENOMEM;
		for (i = 0; i < nl && !ret; i++) {
			struct cand cd;

			if (l[i].kind == PT_LOOP_UNROLL)
				break;  /* nothing at or inside it */
			if (l[i].kind == PT_LOOP_VECTOR)
				continue;
			memset(&cd, 0, sizeof(cd));
			cd.j = js[a];
			cd.loop = l[i].name;
			if (site_cost(g, f, js[a], l, nl, i, &cd.inst,
				      cd.reg))
				continue;
			if ((ret = set_site(sf, cd.j, cd.loop)))
				break;
			if (!legal(g))
				continue;
			/* Keep the name: l is freed below. */
			cd.loop = sf->compute_at.loop;
			sf->compute_at.loop = NULL;
			if (n == cap) {
				struct cand *nc;

				cap = cap ? 2 * cap : 8;
				nc = realloc(c, (size_t)cap * sizeof(*nc));
				if (!nc) {
					free((char *)cd.loop);
					ret = PT_ENOMEM;
					break;
				}
				c = nc;
			}
			c[n++] = cd;
		}
		free(l);
	}
	set_simple(sf, PT_COMPUTE_ROOT);
	if (ret) {
		for (i = 0; i < n; i++)
			free((char *)c[i].loop);
		free(c);
		return ret;
	}
	*out = c;
	*nout = n;
	return 0;
}

/* Maybe store f (computed at a site) outside its compute loop: a sliding
 * window. pt_sched_check() allows one shape only (the loop just outside
 * the compute loop in the same nest, or root when the compute loop is the
 * outermost loop of a Func at root), so that is the candidate. */
static int pick_store(struct gen *g, int f)
{
	struct pt_sched_func *sf = &g->s->funcs[f];
	int j = sf->compute_at.func, nl, pos;
	struct site_loop *l;
	char *a = NULL;

	if (!rng_percent(&g->rng, 30))
		return 0;
	nl = site_loops(g, j, &l);
	if (nl < 0)
		return PT_ENOMEM;
	for (pos = 0; pos < nl && strcmp(l[pos].name, sf->compute_at.loop);
	     pos++)
		;
	if (pos > 0 && pos < nl) {
		a = pt_model_strdup(l[pos - 1].name);
		if (!a) {
			free(l);
			return PT_ENOMEM;
		}
		free(sf->store_at.loop);
		sf->store_at.loop = a;
	} else if (pos == 0 && g->s->funcs[j].compute == PT_COMPUTE_ROOT) {
		sf->store_root = 1;
	}
	free(l);
	if (legal(g))
		return 0;
	/* Not that shape here: store at the compute site. */
	a = pt_model_strdup(sf->compute_at.loop);
	if (!a)
		return PT_ENOMEM;
	free(sf->store_at.loop);
	sf->store_root = 0;
	sf->store_at.loop = a;
	return 0;
}

static int is_sliding(const struct pt_sched_func *sf)
{
	return sf->compute == PT_COMPUTE_AT &&
		(sf->store_root || strcmp(sf->store_at.loop,
					  sf->compute_at.loop));
}

static void set_root_cost(struct gen *g, int f)
{
	const struct pt_func *fn = &g->m->funcs[f];
	int k;

	g->inst[f] = 1;
	for (k = 0; k < fn->nargs && k < g->maxargs; k++)
		reg_of(g, f)[k] = fn->region_extent ?
			(double)(fn->region_extent[k] > 0 ?
				 fn->region_extent[k] : 1) : 1;
}

/* How many copies of its body a decided stage's code holds: the product
 * of its unrolled extents and the vector registers of its vector loop. */
static double unrolled(struct gen *g, int f, int st)
{
	const struct pt_sched_func *sf = &g->s->funcs[f];
	struct pt_nest n;
	double u = 1;
	int i, any = 0;

	if (st >= sf->nstages)
		return 1;
	for (i = 0; i < sf->stages[st].ndirs; i++)
		any |= sf->stages[st].dirs[i].kind == PT_DIR_UNROLL ||
			sf->stages[st].dirs[i].kind == PT_DIR_VECTORIZE;
	if (!any || pt_sched_nest(g->m, g->s, f, st, &n, NULL))
		return 1;
	for (i = 0; i < n.nloops; i++)
		if (n.loops[i].kind == PT_LOOP_UNROLL)
			u *= (double)n.loops[i].extent;
		else if (n.loops[i].kind == PT_LOOP_VECTOR)
			u *= vector_regs(g->m, f, n.loops[i].extent);
	free(n.loops);
	return u;
}

/* Inlining copies a Func's expression into every use; the check bounds
 * the copies, but big expressions copied many times (a pyramid level
 * inlined into the next, twice) still make Halide and LLVM run for
 * minutes. Keep what inlining adds to each stage within INLINE_OPS
 * operations, and INLINE_CODE once multiplied by the stage's unrolling.
 * Returns 1 when the current inline decisions fit. */
static int inline_fits(struct gen *g)
{
	const struct pt_model *m = g->m;
	double *size = calloc((size_t)m->nfuncs + 1, sizeof(*size));
	int f, st, i, ok = 1;

	if (!size)
		return 0;
	for (f = 0; f < m->nfuncs && ok; f++) {
		int inl = g->s->funcs[f].compute == PT_COMPUTE_INLINE;

		for (st = 0; st < m->funcs[f].nstages && ok; st++) {
			const struct pt_stage *stage = mstage(m, f, st);
			double added = 0;

			for (i = 0; i < stage->naccesses; i++) {
				const struct pt_access *a =
					&stage->accesses[i];

				if (a->kind == PT_ACCESS_FUNC && !a->is_store &&
				    a->producer >= 0 && a->producer < f &&
				    g->s->funcs[a->producer].compute ==
				    PT_COMPUTE_INLINE)
					added += (double)(a->count > 0 ?
							  a->count : 1) *
						size[a->producer];
			}
			if (inl)
				size[f] = stage_ops(stage) + added;
			else if (added > INLINE_OPS ||
				 added * unrolled(g, f, st) > INLINE_CODE)
				ok = 0;
		}
	}
	free(size);
	return ok;
}

/* Decide where f is computed (and stored). */
static int random_compute(struct gen *g, int f)
{
	const struct pt_model *m = g->m;
	struct pt_sched_func *sf = &g->s->funcs[f];
	struct cand *c;
	int nc, can_inline = 0, x, k, ret, i;

	set_root_cost(g, f);
	if (m->funcs[f].is_output)
		return 0;
	if (m->funcs[f].can_inline) {
		sf->compute = PT_COMPUTE_INLINE;
		can_inline = legal(g) && inline_fits(g);
		sf->compute = PT_COMPUTE_ROOT;
	}
	if ((ret = at_candidates(g, f, &c, &nc)))
		return ret;
	/* Weights: inline 3, root 3, at 4. */
	x = rng_below(&g->rng, (can_inline ? 3 : 0) + 3 + (nc ? 4 : 0));
	if (can_inline && x < 3) {
		sf->compute = PT_COMPUTE_INLINE;
	} else if (nc && x >= (can_inline ? 3 : 0) + 3) {
		k = rng_below(&g->rng, nc);
		ret = set_site(sf, c[k].j, c[k].loop);
		g->inst[f] = c[k].inst;
		for (i = 0; i < m->funcs[f].nargs && i < g->maxargs; i++)
			reg_of(g, f)[i] = c[k].reg[i];
		if (!ret)
			ret = pick_store(g, f);
	}
	for (i = 0; i < nc; i++)
		free((char *)c[i].loop);
	free(c);
	return ret;
}

/* Rule 6 (one-element buffers, unrolled tails): in each stage that
 * vectorizes a dim, turn the round tails of that dim's other splits into
 * guard. Returns 1 when something changed. */
static int guard_vector_dim(struct pt_sched_func *sf)
{
	int st, i, k, n, changed = 0;

	for (st = 0; st < sf->nstages; st++) {
		struct pt_sched_stage *ss = &sf->stages[st];
		const char **fam;
		const char *v = NULL;

		for (i = 0; i < ss->ndirs; i++)
			if (ss->dirs[i].kind == PT_DIR_VECTORIZE)
				v = ss->dirs[i].dim;
		if (!v)
			continue;
		/* The loops of the vector dim outside the vector loop: the
		 * outer half of the split that made it, and what splitting
		 * that again makes. */
		fam = malloc((size_t)(2 * ss->ndirs + 1) * sizeof(*fam));
		if (!fam)
			return changed;
		n = 0;
		for (i = 0; i < ss->ndirs; i++) {
			struct pt_directive *d = &ss->dirs[i];
			int in = 0;

			if (d->kind != PT_DIR_SPLIT || !d->dim)
				continue;
			if (d->inner && !strcmp(d->inner, v)) {
				fam[n++] = d->outer;
				continue;
			}
			for (k = 0; k < n; k++)
				if (fam[k] && !strcmp(fam[k], d->dim))
					in = 1;
			if (!in)
				continue;
			fam[n++] = d->outer;
			fam[n++] = d->inner;
			if (d->tail == PT_TAIL_ROUND) {
				d->tail = PT_TAIL_GUARD;
				changed = 1;
			}
		}
		free(fam);
	}
	return changed;
}

static int add_meta_seed(struct pt_sched *s, const char *tuner, uint64_t seed,
			 int with_seed)
{
	if (pt_strvec_pushf(&s->meta, "tuner=%s", tuner))
		return PT_ENOMEM;
	if (with_seed && pt_strvec_pushf(&s->meta, "seed=%llu",
					 (unsigned long long)seed))
		return PT_ENOMEM;
	return 0;
}

struct pt_sched *pt_randsched(const struct pt_model *m, uint64_t seed)
{
	struct gen g;
	int f, st, ret = 0, k, ok;

	memset(&g, 0, sizeof(g));
	g.m = m;
	g.rng.state = seed;
	g.s = pt_sched_new_for(m);
	if (!g.s)
		return NULL;
	g.maxargs = 1;
	for (f = 0; f < m->nfuncs; f++)
		if (m->funcs[f].nargs > g.maxargs)
			g.maxargs = m->funcs[f].nargs;
	g.exact = calloc((size_t)m->nfuncs + 1, 1);
	g.inst = calloc((size_t)m->nfuncs + 1, sizeof(*g.inst));
	g.reg = calloc((size_t)(m->nfuncs + 1) * (size_t)g.maxargs,
		       sizeof(*g.reg));
	if (!g.exact || !g.inst || !g.reg ||
	    add_meta_seed(g.s, "random", seed, 1))
		goto fail;
	pt_model_exact_funcs(m, g.exact);
	for (f = m->nfuncs - 1; f >= 0; f--) {
		struct pt_sched_func *sf = &g.s->funcs[f];

		if ((ret = random_compute(&g, f)))
			goto fail;
		if (sf->compute == PT_COMPUTE_INLINE)
			continue;
		/* A sliding window may not split the dims it slides along
		 * (the check knows which): draw until it fits, or go
		 * without directives. */
		ok = 0;
		for (k = 0; k < (is_sliding(sf) ? 8 : 1) && !ok; k++) {
			for (st = 0; st < sf->nstages; st++) {
				clear_stage(&sf->stages[st]);
				if ((ret = random_stage(m, g.s, &g.rng,
							g.exact, f, st,
							is_sliding(sf))))
					goto fail;
			}
			ok = legal(&g);
			/* Rule 6 depends on what the whole pipeline reads
			 * of f and on the region f has at its compute site
			 * (one-element buffers, unrolled tails): the draw
			 * does not know them, so drop the round tails it
			 * refuses. */
			if (!ok && guard_vector_dim(sf))
				ok = legal(&g);
		}
		if (ok)
			continue;
		if (is_sliding(sf)) {
			for (st = 0; st < sf->nstages; st++)
				clear_stage(&sf->stages[st]);
			if (legal(&g))
				continue;
		}
		/* A bug in the generator or the check: keep the schedule
		 * legal and say so. */
		for (st = 0; st < sf->nstages; st++)
			clear_stage(&sf->stages[st]);
		k = pt_strvec_pushf(&g.s->meta, "randsched-fallback=f%d", f);
		if (k || !legal(&g))
			goto fail;
	}
	free(g.exact);
	free(g.inst);
	free(g.reg);
	return g.s;
fail:
	free(g.exact);
	free(g.inst);
	free(g.reg);
	pt_sched_free(g.s);
	return NULL;
}

/* --- the baseline --------------------------------------------------------- */

/* Is the access the identity map (coordinate k is dim k of the stage,
 * perhaps clamped)? */
static int identity_access(const struct pt_stage *st,
			   const struct pt_access *a)
{
	int k, d;

	if (a->data_dependent || a->ncoords > st->ndims)
		return 0;
	for (k = 0; k < a->ncoords; k++) {
		const struct pt_coord *c = &a->coords[k];

		if (!c->affine || !c->coef || c->off_min.num != 0 ||
		    c->off_max.num != 0)
			return 0;
		for (d = 0; d < st->ndims; d++)
			if (c->coef[d].num != (st->dims[d].index == k &&
					       !st->dims[d].is_rvar) ||
			    c->coef[d].den != 1)
				return 0;
	}
	return 1;
}

/* Input wrappers (one identity load of an input buffer, nothing else) and
 * cheap pointwise Funcs read by one other Func. */
static int baseline_inlines(const struct pt_model *m, int f)
{
	const struct pt_func *fn = &m->funcs[f];
	const struct pt_stage *st;
	int64_t ops = 0;
	int i, j, consumer = -1;

	if (!fn->can_inline || fn->is_output || fn->nstages != 1)
		return 0;
	st = mstage(m, f, 0);
	for (i = 0; i < st->naccesses; i++)
		if (st->accesses[i].is_store ||
		    !identity_access(st, &st->accesses[i]))
			return 0;
	for (i = 0; i < st->nops; i++)
		if (strncmp(st->ops[i].name, "load.", 5))
			ops += st->ops[i].count;
	if (st->naccesses == 1 &&
	    st->accesses[0].kind == PT_ACCESS_INPUT && ops == 0)
		return 1;
	if (ops > 8)
		return 0;
	for (i = m->funcs[f].first_stage + 1; i < m->nstages; i++) {
		const struct pt_stage *s2 = &m->stages[i];

		for (j = 0; j < s2->naccesses; j++) {
			const struct pt_access *a = &s2->accesses[j];

			if (a->kind != PT_ACCESS_FUNC || a->producer != f ||
			    a->is_store || s2->func == f)
				continue;
			if (consumer >= 0 && consumer != s2->func)
				return 0;
			consumer = s2->func;
		}
	}
	return consumer >= 0;
}

static int baseline_stage(const struct pt_model *m, struct pt_sched *s,
			  int f, int st, int lanes)
{
	struct sbuild *b;
	int i, outer = -1, inner = -1, ret;

	b = calloc(1, sizeof(*b));
	if (!b)
		return PT_ENOMEM;
	b->m = m;
	b->f = f;
	b->st = st;
	b->out = &s->funcs[f].stages[st];
	for (i = 0; i < mstage(m, f, st)->ndims && i < 32; i++) {
		const struct pt_dim *d = &mstage(m, f, st)->dims[i];
		struct cl *l = &b->l[b->n++];

		snprintf(l->name, sizeof(l->name), "%c%d",
			 d->is_rvar ? 'r' : 'v', d->index);
		l->dim = i;
		l->is_rvar = d->is_rvar;
		l->extent = dim_extent(d);
	}
	if (st == 0 && b->n && lanes >= 2 && b->l[0].extent >= lanes) {
		inner = split(b, 0, lanes, PT_TAIL_GUARD);
		annotate(b, inner, PT_DIR_VECTORIZE);
	}
	for (i = b->n - 1; i >= 0; i--)
		if (!b->l[i].is_rvar && b->l[i].kind == PT_LOOP_SERIAL) {
			outer = i;
			break;
		}
	if (outer >= 0)
		annotate(b, outer, PT_DIR_PARALLEL);
	ret = b->failed ? PT_ENOMEM : 0;
	free(b);
	return ret;
}

struct pt_sched *pt_sched_baseline(const struct pt_model *m)
{
	struct pt_sched *s = pt_sched_new_for(m);
	int f, st;

	if (!s || add_meta_seed(s, "baseline", 0, 0))
		goto fail;
	for (f = m->nfuncs - 1; f >= 0; f--) {
		if (!baseline_inlines(m, f))
			continue;
		s->funcs[f].compute = PT_COMPUTE_INLINE;
		if (pt_sched_check(m, s, NULL))
			s->funcs[f].compute = PT_COMPUTE_ROOT;
	}
	for (f = 0; f < m->nfuncs; f++) {
		int lanes = pt_model_vector_lanes(m,
				narrowest_bits(&m->funcs[f]));

		if (s->funcs[f].compute == PT_COMPUTE_INLINE)
			continue;
		for (st = 0; st < s->funcs[f].nstages; st++)
			if (baseline_stage(m, s, f, st, lanes))
				goto fail;
	}
	return s;
fail:
	pt_sched_free(s);
	return NULL;
}
