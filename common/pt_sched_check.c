/* pt_sched_check.c: whether a schedule fits a model and is legal in
 * protune's rules (doc/schedule-legality.md gives each rule and the Halide
 * behaviour it avoids), and the loop nests a stage's directives build.
 *
 * Everything here reads the model and the schedule and writes only memory
 * it allocates itself; every refusal is PT_EMISMATCH (PT_ENOMEM when out of
 * memory) with a message that names the Func by position and label, the
 * stage where one is concerned, and the reason.
 */
#include "protune/pt_sched.h"
#include "protune/pt_strided.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INLINED_FEEDING 8   /* inlined Funcs feeding one stage */
#define MAX_INLINE_COPIES 64    /* copies of one inlined Func in a stage */
#define MAX_VECTOR 64           /* lanes of a vectorized loop */
#define MAX_UNROLL 16           /* extent of one unrolled loop */
#define MAX_UNROLL_PRODUCT 64   /* product of a stage's unrolled extents */
#define MAX_NAME 31             /* length of a split result's name */
#define MAX_FACTOR (1 << 24)    /* a split factor */

/* One loop while a stage's directives are replayed. */
struct xloop {
	const char *sname;  /* the schedule's name; NULL for an original dim */
	char pname[16];     /* the positional name ("v0", "r1") of an original
			     * dim */
	int orig;           /* index in the stage's dims of the original dim
			     * this loop descends from */
	int is_rvar;
	int64_t extent;
	int const_extent;
	int kind;           /* PT_LOOP_* */
	uint64_t path;      /* the splits from the original dim: bit k is 1
			     * when the k-th split took the inner half */
	int depth;          /* how many splits */
	int tail;           /* the tail strategy of the split that made the
			     * loop (enum pt_tail), -1 for an original dim */
};

/* A stage's loops after its directives, innermost first (the order of
 * Halide's dims()), and the split results the schedule named in it. */
struct xnest {
	int n;
	struct xloop *l;
	int nnames;
	const char **names;
};

/* What the legality rules need besides the stage itself; NULL when only
 * the structure of the directives is checked (pt_sched_nest). */
struct rules {
	const unsigned char *exact;  /* per Func: its computed region must
				      * stay inside exact-size buffers */
};

static const char *xname(const struct xloop *l)
{
	return l->sname ? l->sname : l->pname;
}

static const char *func_label(const struct pt_model *m, int f)
{
	const char *label = m->funcs[f].label;

	return label && *label ? label : "?";
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int fail(struct pt_error *err, const struct pt_model *m, int f, int st,
		const char *fmt, ...)
{
	char msg[PT_ERROR_MSG_MAX];
	va_list ap;

	if (!err)  /* a probe: nobody reads the message */
		return PT_EMISMATCH;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st >= 0)
		return pt_error_set(err, PT_EMISMATCH, "f%d (%s) stage %d: %s",
				    f, func_label(m, f), st, msg);
	return pt_error_set(err, PT_EMISMATCH, "f%d (%s): %s", f,
			    func_label(m, f), msg);
}

static int oom(struct pt_error *err)
{
	return pt_error_set(err, PT_ENOMEM, "out of memory");
}

static const char *kind_word(int kind)
{
	switch (kind) {
	case PT_LOOP_PARALLEL: return "parallel";
	case PT_LOOP_VECTOR: return "vectorized";
	case PT_LOOP_UNROLL: return "unrolled";
	}
	return "serial";
}

static const char *tail_word(enum pt_tail t)
{
	switch (t) {
	case PT_TAIL_GUARD: return "guard";
	case PT_TAIL_SHIFT: return "shift";
	case PT_TAIL_ROUND: return "round";
	}
	return "?";
}

static const struct pt_stage *model_stage(const struct pt_model *m, int f,
					  int st)
{
	return &m->stages[m->funcs[f].first_stage + st];
}

static int last_stage(const struct pt_model *m, int f)
{
	return m->funcs[f].nstages - 1;
}

/* A split result's name: [a-z_][a-z0-9_]{0,30} (the schedule format's
 * names), and not of the form vN or rN, which name the original dims. */
static int valid_name(const char *s)
{
	size_t i, n;

	if (!s || !((*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	n = strlen(s);
	if (n > MAX_NAME)
		return 0;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	if ((s[0] == 'v' || s[0] == 'r') && n > 1 &&
	    strspn(s + 1, "0123456789") == n - 1)
		return 0;
	return 1;
}

/* The Halide name of a dim of any stage of Func f that `name` would clash
 * with, or NULL. */
static const char *label_clash(const struct pt_model *m, int f,
			       const char *name)
{
	const struct pt_func *fn = &m->funcs[f];
	int i, j;

	for (i = 0; i < fn->nstages; i++) {
		const struct pt_stage *st = model_stage(m, f, i);

		for (j = 0; j < st->ndims; j++)
			if (pt_halide_name_match(st->dims[j].label, name))
				return st->dims[j].label;
	}
	return NULL;
}

static int find_loop(const struct xnest *x, const char *name)
{
	int i;

	if (!name)
		return -1;
	for (i = 0; i < x->n; i++)
		if (!strcmp(xname(&x->l[i]), name))
			return i;
	return -1;
}

/* The positional name of a dim: "v3", "r0". */
static void pos_name(char *buf, int is_rvar, int index)
{
	char tmp[12];
	int n = 0;
	unsigned v = index < 0 ? 0 : (unsigned)index;

	*buf++ = is_rvar ? 'r' : 'v';
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 11);
	while (n)
		*buf++ = tmp[--n];
	*buf = '\0';
}

/* Is `name` an original dim of the stage or a split result named before? */
static int name_used(const struct pt_stage *st, const struct xnest *x,
		     const char *name)
{
	char buf[16];
	int i;

	if ((name[0] == 'v' || name[0] == 'r') && name[1] >= '0' &&
	    name[1] <= '9')
		for (i = 0; i < st->ndims; i++) {
			pos_name(buf, st->dims[i].is_rvar, st->dims[i].index);
			if (!strcmp(buf, name))
				return 1;
		}
	for (i = 0; i < x->nnames; i++)
		if (!strcmp(x->names[i], name))
			return 1;
	return 0;
}

static void xnest_release(struct xnest *x)
{
	free(x->l);
	free(x->names);
	x->l = NULL;
	x->names = NULL;
	x->n = x->nnames = 0;
}

static int64_t div_up(int64_t a, int64_t b)
{
	if (a <= 0)
		return 0;
	return a / b + (a % b != 0);
}

static int check_new_name(struct pt_error *err, const struct pt_model *m,
			  int f, int st, const struct pt_stage *stage,
			  const struct xnest *x, const char *name)
{
	const char *clash;

	if (!valid_name(name))
		return fail(err, m, f, st,
			    "bad split result name '%s' (want "
			    "[a-z_][a-z0-9_]*, at most %d characters, not "
			    "vN or rN)", name ? name : "(none)", MAX_NAME);
	if (name_used(stage, x, name))
		return fail(err, m, f, st,
			    "split result '%s' is already a name in this "
			    "stage (Halide rejects duplicate names)", name);
	clash = label_clash(m, f, name);
	if (clash)
		return fail(err, m, f, st,
			    "split result '%s' clashes with Halide's dim name "
			    "'%s' of this Func", name, clash);
	return 0;
}

static int check_tail(const struct pt_model *m, const struct pt_sched *s,
		      int f, int st, const struct rules *r,
		      const struct pt_directive *d, const struct xloop *parent,
		      struct pt_error *err)
{
	const char *w = tail_word(d->tail);

	if (d->tail == PT_TAIL_GUARD)
		return 0;
	if (d->tail != PT_TAIL_SHIFT && d->tail != PT_TAIL_ROUND)
		return fail(err, m, f, st,
			    "split of '%s' with an unknown tail strategy",
			    d->dim);
	if (!r)
		return 0;
	if (st > 0)
		return fail(err, m, f, st,
			    "tail %s in an update (Halide rejects ShiftInwards "
			    "there and RoundUp may recompute values); use "
			    "guard", w);
	if (d->tail == PT_TAIL_ROUND) {
		if (!r->exact[f])
			return 0;
		return fail(err, m, f, st,
			    "tail round on a Func whose region must stay "
			    "exact (an output, or it reads an input buffer "
			    "directly or through its producers): rounding up "
			    "would access outside exact-size buffers");
	}
	if (s->funcs[f].compute != PT_COMPUTE_ROOT)
		return fail(err, m, f, st,
			    "tail shift on a Func that is not computed at "
			    "root (its region at the compute site may be "
			    "smaller than the factor, and Halide 14 then "
			    "writes outside its buffer)");
	if (d->factor > parent->extent)
		return fail(err, m, f, st,
			    "tail shift with factor %lld above the estimated "
			    "extent %lld of '%s' (the shifted tile would "
			    "start before the region)", (long long)d->factor,
			    (long long)parent->extent, d->dim);
	return 0;
}

static int do_split(const struct pt_model *m, const struct pt_sched *s,
		    int f, int st, const struct pt_stage *stage,
		    const struct rules *r, const struct pt_directive *d,
		    struct xnest *x, struct pt_error *err)
{
	struct xloop parent, *l;
	int i, ret;

	if (!d->dim)
		return fail(err, m, f, st, "split without a dim");
	i = find_loop(x, d->dim);
	if (i < 0) {
		if (name_used(stage, x, d->dim))
			return fail(err, m, f, st,
				    "split of '%s', which was already split "
				    "(a dim is split at most once)", d->dim);
		return fail(err, m, f, st, "split of unknown dim '%s'",
			    d->dim);
	}
	if ((ret = check_new_name(err, m, f, st, stage, x, d->outer)) ||
	    (ret = check_new_name(err, m, f, st, stage, x, d->inner)))
		return ret;
	if (!strcmp(d->outer, d->inner))
		return fail(err, m, f, st,
			    "split of '%s' into two dims named '%s'", d->dim,
			    d->outer);
	if (d->factor < 2 || d->factor > MAX_FACTOR)
		return fail(err, m, f, st,
			    "split of '%s' by %lld (the factor must be in "
			    "2..%d)", d->dim, (long long)d->factor,
			    MAX_FACTOR);
	if (x->l[i].kind != PT_LOOP_SERIAL)
		return fail(err, m, f, st,
			    "split of '%s' after it was marked %s", d->dim,
			    kind_word(x->l[i].kind));
	if (r && x->l[i].path)
		return fail(err, m, f, st,
			    "split of '%s', which comes from the inner half "
			    "of an earlier split (split the outer loop "
			    "instead: the same loops, and Halide 14 reads "
			    "outside buffers for some such splits)", d->dim);
	if ((ret = check_tail(m, s, f, st, r, d, &x->l[i], err)))
		return ret;

	l = realloc(x->l, (size_t)(x->n + 1) * sizeof(*l));
	if (!l)
		return oom(err);
	x->l = l;
	parent = l[i];
	memmove(&l[i + 1], &l[i], (size_t)(x->n - i) * sizeof(*l));
	x->n++;
	/* The inner loop takes the parent's place; the outer one is just
	 * outside it. */
	l[i] = parent;
	l[i].sname = d->inner;
	l[i].extent = d->factor;
	l[i].const_extent = 1;
	l[i + 1] = parent;
	l[i + 1].sname = d->outer;
	l[i + 1].extent = div_up(parent.extent, d->factor);
	l[i].tail = l[i + 1].tail = (int)d->tail;
	if (parent.depth < 64) {
		l[i].path |= UINT64_C(1) << parent.depth;
		l[i].depth++;
		l[i + 1].depth++;
	}
	x->names[x->nnames++] = d->outer;
	x->names[x->nnames++] = d->inner;
	return 0;
}

static int do_reorder(const struct pt_model *m, int f, int st,
		      const struct rules *r, const struct pt_directive *d,
		      struct xnest *x, struct pt_error *err)
{
	struct xloop *nl;
	int i, j, k, n = x->n;

	if (d->order.nr < 2)
		return fail(err, m, f, st,
			    "reorder of fewer than two dims");
	if (d->order.nr != (size_t)n)
		return fail(err, m, f, st,
			    "reorder lists %zu dims, the stage has %d at that "
			    "point (it must list every current dim once)",
			    d->order.nr, n);
	for (i = 0; i < n; i++) {
		if (find_loop(x, d->order.v[i]) < 0)
			return fail(err, m, f, st,
				    "reorder names unknown dim '%s'",
				    d->order.v[i]);
		for (j = 0; j < i; j++)
			if (!strcmp(d->order.v[i], d->order.v[j]))
				return fail(err, m, f, st,
					    "reorder lists '%s' twice",
					    d->order.v[i]);
	}
	if (r) {
		/* RVar-derived loops keep their relative order. */
		for (i = j = 0; i < n; i++) {
			k = find_loop(x, d->order.v[i]);
			if (!x->l[k].is_rvar)
				continue;
			while (!x->l[j].is_rvar)
				j++;
			if (j != k)
				return fail(err, m, f, st,
					    "reorder moves reduction loop '%s' "
					    "past reduction loop '%s' (only "
					    "pure dims may move across "
					    "reduction dims)", d->order.v[i],
					    xname(&x->l[j]));
			j++;
		}
	}
	nl = malloc((size_t)(n > 0 ? n : 1) * sizeof(*nl));
	if (!nl)
		return oom(err);
	for (i = 0; i < n; i++)
		nl[i] = x->l[find_loop(x, d->order.v[i])];
	free(x->l);
	x->l = nl;
	return 0;
}

static int do_annotate(const struct pt_model *m, int f, int st,
		       const struct rules *r, const struct pt_directive *d,
		       struct xnest *x, struct pt_error *err)
{
	static const char *const what[] = { "vectorize", "parallel",
					    "unroll" };
	int kind, i;
	const char *w;
	struct xloop *l;

	switch (d->kind) {
	case PT_DIR_VECTORIZE: kind = PT_LOOP_VECTOR; w = what[0]; break;
	case PT_DIR_PARALLEL: kind = PT_LOOP_PARALLEL; w = what[1]; break;
	default: kind = PT_LOOP_UNROLL; w = what[2]; break;
	}
	if (!d->dim)
		return fail(err, m, f, st, "%s without a dim", w);
	i = find_loop(x, d->dim);
	if (i < 0)
		return fail(err, m, f, st, "%s of unknown dim '%s'", w,
			    d->dim);
	l = &x->l[i];
	if (l->kind != PT_LOOP_SERIAL)
		return fail(err, m, f, st,
			    "%s of '%s', which is already marked %s (a dim "
			    "takes one of vectorize, parallel, unroll)", w,
			    d->dim, kind_word(l->kind));
	if (r && kind != PT_LOOP_UNROLL && l->is_rvar)
		return fail(err, m, f, st,
			    "%s of '%s', which comes from a reduction dim "
			    "(Halide races or rejects it)", w, d->dim);
	if (r && kind == PT_LOOP_VECTOR &&
	    (!l->const_extent || l->extent < 2 || l->extent > MAX_VECTOR))
		return fail(err, m, f, st,
			    "vectorize of '%s', which has %s extent %lld "
			    "(want a constant extent in 2..%d, e.g. a split's "
			    "inner dim)", d->dim,
			    l->const_extent ? "constant" : "estimated",
			    (long long)l->extent, MAX_VECTOR);
	if (r && kind == PT_LOOP_UNROLL &&
	    (!l->const_extent || l->extent > MAX_UNROLL))
		return fail(err, m, f, st,
			    "unroll of '%s', which has %s extent %lld (want "
			    "a constant extent of at most %d)", d->dim,
			    l->const_extent ? "constant" : "estimated",
			    (long long)l->extent, MAX_UNROLL);
	l->kind = kind;
	return 0;
}

/* The loops split from one dim keep the split's order: every loop from a
 * split's inner half lies inside every loop from its outer half. Halide
 * 14 wrote outside a buffer when a nested split's inner loop was moved
 * outside its outer loop under GuardWithIf. */
static int check_split_order(const struct pt_model *m, int f, int st,
			     const struct xnest *x, struct pt_error *err)
{
	int a, b, k, depth;
	uint64_t diff;

	for (a = 0; a < x->n; a++)
		for (b = a + 1; b < x->n; b++) {
			const struct xloop *in = &x->l[a], *out = &x->l[b];

			/* in is inside out (innermost first). */
			if (in->orig != out->orig)
				continue;
			depth = in->depth < out->depth ? in->depth :
				out->depth;
			diff = in->path ^ out->path;
			for (k = 0; k < depth && !((diff >> k) & 1); k++)
				;
			if (k < depth && !((in->path >> k) & 1))
				return fail(err, m, f, st,
					    "'%s' is inside '%s', but comes "
					    "from the outer half of a split "
					    "whose inner half gave '%s' (keep "
					    "each split's inner loops inside "
					    "its outer ones)", xname(in),
					    xname(out), xname(out));
		}
	return 0;
}

/* Replay the directives of stage `st` of Func `f` into *x, checking their
 * structure, and with `r` the per-stage legality rules too. */
static int replay(const struct pt_model *m, const struct pt_sched *s, int f,
		  int st, const struct rules *r, struct xnest *x,
		  struct pt_error *err)
{
	const struct pt_stage *stage = model_stage(m, f, st);
	const struct pt_sched_stage *ss = NULL;
	int i, ret, ndirs = 0;
	int64_t unrolled = 1;

	memset(x, 0, sizeof(*x));
	if (st < s->funcs[f].nstages) {
		ss = &s->funcs[f].stages[st];
		ndirs = ss->ndirs;
		if (ndirs < 0 || (ndirs && !ss->dirs))
			return fail(err, m, f, st, "bad directive list");
	}
	x->l = malloc((size_t)(stage->ndims + 1) * sizeof(*x->l));
	x->names = malloc((size_t)(2 * ndirs + 1) * sizeof(*x->names));
	if (!x->l || !x->names) {
		xnest_release(x);
		return oom(err);
	}
	for (i = 0; i < stage->ndims; i++) {
		const struct pt_dim *dim = &stage->dims[i];
		struct xloop *l = &x->l[i];

		memset(l, 0, sizeof(*l));
		pos_name(l->pname, dim->is_rvar, dim->index);
		l->orig = i;
		l->is_rvar = dim->is_rvar;
		l->extent = dim->extent;
		l->const_extent = dim->is_rvar &&
			pt_stage_rvar_constant(stage, dim->index);
		l->kind = PT_LOOP_SERIAL;
		l->tail = -1;
	}
	x->n = stage->ndims;

	for (i = 0; i < ndirs; i++) {
		const struct pt_directive *d = &ss->dirs[i];

		switch (d->kind) {
		case PT_DIR_SPLIT:
			ret = do_split(m, s, f, st, stage, r, d, x, err);
			break;
		case PT_DIR_REORDER:
			ret = do_reorder(m, f, st, r, d, x, err);
			break;
		case PT_DIR_VECTORIZE:
		case PT_DIR_PARALLEL:
		case PT_DIR_UNROLL:
			ret = do_annotate(m, f, st, r, d, x, err);
			break;
		default:
			ret = fail(err, m, f, st, "unknown directive %d",
				   (int)d->kind);
		}
		if (ret) {
			xnest_release(x);
			return ret;
		}
	}
	if (!r)
		return 0;

	if ((ret = check_split_order(m, f, st, x, err))) {
		xnest_release(x);
		return ret;
	}
	for (i = 0; i < x->n; i++) {
		const struct xloop *l = &x->l[i];

		if (l->kind == PT_LOOP_VECTOR && i != 0) {
			ret = fail(err, m, f, st,
				   "vectorized '%s' is not the innermost loop "
				   "(innermost is '%s')", xname(l),
				   xname(&x->l[0]));
			xnest_release(x);
			return ret;
		}
		if (l->kind == PT_LOOP_UNROLL) {
			unrolled *= l->extent > 0 ? l->extent : 1;
			if (unrolled > MAX_UNROLL_PRODUCT) {
				ret = fail(err, m, f, st,
					   "unrolled loops multiply to more "
					   "than %d iterations",
					   MAX_UNROLL_PRODUCT);
				xnest_release(x);
				return ret;
			}
		}
	}
	return 0;
}

/* --- the public loop nest ------------------------------------------------- */

static int check_func_stage(const struct pt_model *m, const struct pt_sched *s,
			    int f, int st, struct pt_error *err)
{
	if (!m || !s || f < 0 || f >= m->nfuncs || f >= s->nfuncs ||
	    st < 0 || st >= m->funcs[f].nstages)
		return pt_error_set(err, PT_EMISMATCH,
				    "no stage %d of Func f%d in the model", st,
				    f);
	if (s->funcs[f].nstages > m->funcs[f].nstages ||
	    s->funcs[f].nstages < 0 ||
	    (s->funcs[f].nstages && !s->funcs[f].stages))
		return fail(err, m, f, -1,
			    "the schedule has %d stages, the Func has %d",
			    s->funcs[f].nstages, m->funcs[f].nstages);
	return 0;
}

int pt_sched_nest(const struct pt_model *m, const struct pt_sched *s,
		  int func, int stage, struct pt_nest *nest,
		  struct pt_error *err)
{
	struct xnest x;
	struct pt_loop *loops;
	size_t names = 0, off;
	char *store;
	int ret, i;

	nest->nloops = 0;
	nest->loops = NULL;
	if ((ret = check_func_stage(m, s, func, stage, err)))
		return ret;
	if ((ret = replay(m, s, func, stage, NULL, &x, err)))
		return ret;
	for (i = 0; i < x.n; i++)
		if (!x.l[i].sname)
			names += strlen(x.l[i].pname) + 1;
	/* One block: the loops, then the positional names they point to. */
	loops = malloc((size_t)(x.n ? x.n : 1) * sizeof(*loops) + names);
	if (!loops) {
		xnest_release(&x);
		return oom(err);
	}
	store = (char *)(loops + (x.n ? x.n : 1));
	off = 0;
	for (i = 0; i < x.n; i++) {
		const struct xloop *l = &x.l[x.n - 1 - i];
		struct pt_loop *o = &loops[i];

		if (l->sname) {
			o->name = l->sname;
		} else {
			strcpy(store + off, l->pname);
			o->name = store + off;
			off += strlen(l->pname) + 1;
		}
		o->label = model_stage(m, func, stage)->dims[l->orig].label;
		o->is_rvar = l->is_rvar;
		o->extent = l->extent;
		o->const_extent = l->const_extent;
		o->kind = l->kind;
	}
	nest->nloops = x.n;
	nest->loops = loops;
	xnest_release(&x);
	return 0;
}

/* --- the whole schedule --------------------------------------------------- */

struct state {
	const struct pt_model *m;
	const struct pt_sched *s;
	unsigned char *exact;     /* per Func */
	struct xnest *nests;      /* per model stage */
	int *site_pos;            /* per Func at a site: the compute loop's
				   * index, outermost first, in the site's
				   * nest */
	uint64_t *uses;           /* per Func: bitset over model stages of
				   * the non-inlined stages that read it,
				   * directly or through inlined Funcs */
	int words;                /* uint64_t per bitset */
	unsigned char *pdone;     /* per Func: pmask computed (rule 6) */
	uint64_t *pmask;          /* per Func: its pure dims whose region in
				   * one instance may be a single point */
	struct bdim **ibound;     /* per Func, once known: how Halide may
				   * bound each dim of its buffer (rule 6) */
	struct bctx *broot;       /* the root context of ibound (rule 6) */
};

static int is_inlined(const struct state *S, int f)
{
	return S->s->funcs[f].compute == PT_COMPUTE_INLINE;
}

static void find_uses(struct state *S)
{
	const struct pt_model *m = S->m;
	int g, i, j, w;

	for (g = m->nfuncs - 1; g >= 0; g--) {
		const struct pt_func *fn = &m->funcs[g];

		for (i = 0; i < fn->nstages; i++) {
			int sidx = fn->first_stage + i;
			const struct pt_stage *st = &m->stages[sidx];

			for (j = 0; j < st->naccesses; j++) {
				const struct pt_access *a = &st->accesses[j];
				uint64_t *u, *gu;

				if (a->kind != PT_ACCESS_FUNC || a->is_store ||
				    a->producer < 0 || a->producer >= g)
					continue;
				u = S->uses + (size_t)a->producer * S->words;
				if (!is_inlined(S, g)) {
					u[sidx / 64] |= UINT64_C(1) <<
						(sidx % 64);
					continue;
				}
				gu = S->uses + (size_t)g * S->words;
				for (w = 0; w < S->words; w++)
					u[w] |= gu[w];
			}
		}
	}
}

static int has_use(const struct state *S, int f, int sidx)
{
	return (S->uses[(size_t)f * S->words + sidx / 64] >> (sidx % 64)) & 1;
}

static int64_t access_count(const struct pt_access *a)
{
	return a->count > 0 ? a->count : 1;
}

/* acc + a * b, saturating at 2^40 (all operands are >= 0). */
static int64_t sat_mul_add(int64_t acc, int64_t a, int64_t b)
{
	const int64_t cap = INT64_C(1) << 40;

	if (acc >= cap || a >= cap || b >= cap)
		return cap;
	if (a && b > (cap - acc) / a)
		return cap;
	return acc + a * b;
}

/* Rule 3: bounded inline chains. */
static int check_inline_chains(struct state *S, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	int *feeding, f, g, i, j, sidx, ret = 0;
	int64_t *copies;

	feeding = calloc((size_t)m->nstages + 1, sizeof(*feeding));
	copies = calloc((size_t)m->nfuncs + 1, sizeof(*copies));
	if (!feeding || !copies) {
		ret = oom(err);
		goto out;
	}
	for (f = 0; f < m->nfuncs && !ret; f++) {
		if (!is_inlined(S, f))
			continue;
		for (sidx = 0; sidx < m->nstages; sidx++) {
			if (!has_use(S, f, sidx))
				continue;
			if (++feeding[sidx] > MAX_INLINED_FEEDING) {
				const struct pt_stage *st = &m->stages[sidx];

				ret = fail(err, m, st->func, st->index,
					   "more than %d inlined Funcs feed "
					   "this stage (the last is f%d); "
					   "compute some of them at root or "
					   "at a loop", MAX_INLINED_FEEDING,
					   f);
				break;
			}
		}
		if (ret)
			break;
		/* copies[g]: copies of f's body in one evaluation of the
		 * inlined g; then in every non-inlined stage. */
		memset(copies, 0, (size_t)m->nfuncs * sizeof(*copies));
		copies[f] = 1;
		for (g = f + 1; g < m->nfuncs && !ret; g++) {
			const struct pt_func *fn = &m->funcs[g];
			int64_t total;

			for (i = 0; i < fn->nstages && !ret; i++) {
				const struct pt_stage *st =
					model_stage(m, g, i);

				total = 0;
				for (j = 0; j < st->naccesses; j++) {
					const struct pt_access *a =
						&st->accesses[j];

					if (a->kind != PT_ACCESS_FUNC ||
					    a->is_store || a->producer < f ||
					    a->producer >= g ||
					    !is_inlined(S, a->producer))
						continue;
					total = sat_mul_add(total,
						access_count(a),
						copies[a->producer]);
				}
				if (is_inlined(S, g)) {
					copies[g] = total;
				} else if (total > MAX_INLINE_COPIES) {
					ret = fail(err, m, g, i,
						   "inlining makes %s%lld "
						   "copies of f%d (%s) here "
						   "(at most %d)",
						   total >= INT64_C(1) << 40 ?
						   "over " : "",
						   (long long)total, f,
						   func_label(m, f),
						   MAX_INLINE_COPIES);
				}
			}
		}
	}
out:
	free(feeding);
	free(copies);
	return ret;
}

/* The index, outermost first, of loop `name` in the nest of Func j's last
 * stage, or -1. */
static int site_loop(const struct state *S, int j, const char *name)
{
	const struct xnest *x =
		&S->nests[S->m->funcs[j].first_stage + last_stage(S->m, j)];
	int i = find_loop(x, name);

	return i < 0 ? -1 : x->n - 1 - i;
}

static const struct xloop *site_xloop(const struct state *S, int j, int pos)
{
	const struct xnest *x =
		&S->nests[S->m->funcs[j].first_stage + last_stage(S->m, j)];

	return &x->l[x->n - 1 - pos];
}

/* Rule 4 for Func f computed at (J, L). */
static int check_compute_at(struct state *S, int f, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	const struct pt_sched_func *sf = &S->s->funcs[f];
	int jf = sf->compute_at.func, pos = S->site_pos[f];
	int sidx, nuses = 0;

	for (sidx = 0; sidx < m->nstages; sidx++) {
		const struct pt_stage *st = &m->stages[sidx];
		int g = st->func, h;

		if (!has_use(S, f, sidx))
			continue;
		nuses++;
		if (g == jf) {
			if (st->index != last_stage(m, jf))
				return fail(err, m, f, -1,
					    "compute_at f%d (%s) '%s', but "
					    "f%d stage %d reads it and only "
					    "the last stage (%d) holds the "
					    "site", jf, func_label(m, jf),
					    sf->compute_at.loop, jf,
					    st->index, last_stage(m, jf));
			continue;
		}
		for (h = g; S->s->funcs[h].compute == PT_COMPUTE_AT;
		     h = S->s->funcs[h].compute_at.func) {
			if (S->s->funcs[h].compute_at.func != jf)
				continue;
			if (S->site_pos[h] < pos)
				return fail(err, m, f, -1,
					    "compute_at f%d (%s) '%s', but "
					    "its reader f%d (%s) is computed "
					    "at '%s', outside that loop", jf,
					    func_label(m, jf),
					    sf->compute_at.loop, g,
					    func_label(m, g),
					    S->s->funcs[h].compute_at.loop);
			break;
		}
		if (S->s->funcs[h].compute != PT_COMPUTE_AT)
			return fail(err, m, f, -1,
				    "compute_at f%d (%s) '%s', but f%d (%s) "
				    "stage %d reads it and is not computed "
				    "inside that loop", jf, func_label(m, jf),
				    sf->compute_at.loop, g, func_label(m, g),
				    st->index);
	}
	if (!nuses)
		return fail(err, m, f, -1,
			    "compute_at f%d (%s), but nothing reads it", jf,
			    func_label(m, jf));
	return 0;
}

/* Does stage `st` read f, directly or through inlined Funcs? */
static int reads_func(const struct state *S, const struct pt_stage *st,
		      int f, int depth)
{
	int i;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];

		if (a->kind != PT_ACCESS_FUNC || a->is_store ||
		    a->producer < f || a->producer >= st->func)
			continue;
		if (a->producer == f)
			return 1;
		if (is_inlined(S, a->producer) && depth < 64 &&
		    reads_func(S, model_stage(S->m, a->producer, 0), f,
			       depth + 1))
			return 1;
	}
	return 0;
}

/* Does stage `st` read f, directly or through inlined Funcs, with a
 * coordinate that steps by more than one element per step of a `moving`
 * dim (a downsampling read) somewhere on the way? */
static int strided_reads(const struct state *S, const struct pt_stage *st,
			 int f, uint64_t moving, int depth)
{
	const struct pt_model *m = S->m;
	int i, k, d;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];
		const struct pt_stage *ps;
		uint64_t pm = 0, pmov = 0;
		int strided = 0;

		if (a->kind != PT_ACCESS_FUNC || a->is_store ||
		    a->producer < f || a->producer >= st->func)
			continue;
		if (a->producer != f && (!is_inlined(S, a->producer) ||
					 depth > 64))
			continue;
		for (k = 0; k < a->ncoords; k++) {
			const struct pt_coord *c = &a->coords[k];

			if (!c->affine || !c->coef)
				continue;
			for (d = 0; d < st->ndims && d < 64; d++) {
				int64_t num = c->coef[d].num;

				if (!num || !((moving >> d) & 1))
					continue;
				if ((num < 0 ? -num : num) > c->coef[d].den)
					strided = 1;
				pm |= UINT64_C(1) << (k & 63);
			}
		}
		if (a->producer == f) {
			if (strided)
				return 1;
			continue;
		}
		ps = model_stage(m, a->producer, 0);
		if (strided && reads_func(S, ps, f, depth + 1))
			return 1;
		for (d = 0; d < ps->ndims && d < 64; d++)
			if (!ps->dims[d].is_rvar && ps->dims[d].index < 64 &&
			    ((pm >> ps->dims[d].index) & 1))
				pmov |= UINT64_C(1) << d;
		if (pmov && strided_reads(S, ps, f, pmov, depth + 1))
			return 1;
	}
	return 0;
}

/* Rule 4, vector tiles: f may not be computed per vector tile of J (at a
 * loop inside a loop split from J's vectorized dim, or at one) when J
 * reads it with a stride of two or more along the vectorized dim. Under
 * ASan, Halide 14's strided vector loads then read past the tile's
 * buffer of f. */
static int check_vector_site(struct state *S, int f, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	const struct pt_sched_func *sf = &S->s->funcs[f];
	int j = sf->compute_at.func, i, p, tile = 0;
	const struct xnest *x =
		&S->nests[m->funcs[j].first_stage + last_stage(m, j)];

	for (i = 0; i < x->n; i++)
		if (x->l[i].kind == PT_LOOP_VECTOR)
			break;
	if (i == x->n || x->l[i].orig >= 64)
		return 0;
	/* A loop of the vector dim at or outside the compute loop. */
	for (p = 0; p <= S->site_pos[f]; p++)
		if (site_xloop(S, j, p)->orig == x->l[i].orig)
			tile = 1;
	if (!tile || !strided_reads(S, model_stage(m, j, last_stage(m, j)),
				    f, UINT64_C(1) << x->l[i].orig, 0))
		return 0;
	return fail(err, m, f, -1,
		    "compute_at f%d (%s) '%s', inside a vector tile of f%d, "
		    "which reads it with a stride along the vectorized '%s' "
		    "(Halide 14's strided vector loads then read past the "
		    "tile's buffer)", j, func_label(m, j), sf->compute_at.loop,
		    j, xname(&x->l[i]));
}

/* Rule 5: the store site encloses the compute site, with no parallel loop
 * strictly inside the store site and enclosing the compute loop. */
static int check_store(struct state *S, int f, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	const struct pt_sched_func *sf = &S->s->funcs[f];
	/* Built in memory, a store site without a loop means the compute
	 * site, as in the text. */
	const struct pt_site *ss = sf->store_at.loop ? &sf->store_at :
		&sf->compute_at;
	int j = sf->compute_at.func, pos = S->site_pos[f];
	int store_func = -1, store_pos = -1;

	if (!sf->store_root) {
		store_func = ss->func;
		if (store_func < 0 || store_func >= m->nfuncs ||
		    is_inlined(S, store_func))
			return fail(err, m, f, -1,
				    "store_at names Func f%d, which is not a "
				    "scheduled Func", store_func);
		store_pos = site_loop(S, store_func, ss->loop);
		if (store_pos < 0)
			return fail(err, m, f, -1,
				    "store_at f%d (%s) '%s', which is not a "
				    "loop of its last stage", store_func,
				    func_label(m, store_func), ss->loop);
	}
	/* Walk the enclosing loops from the compute loop outwards. */
	for (;;) {
		for (; pos >= 0; pos--) {
			const struct xloop *l;

			if (j == store_func && pos == store_pos)
				return 0;
			l = site_xloop(S, j, pos);
			if (l->kind == PT_LOOP_PARALLEL)
				return fail(err, m, f, -1,
					    "parallel loop '%s' of f%d (%s) "
					    "lies between the store site and "
					    "the compute site (a race on the "
					    "shared storage)", xname(l), j,
					    func_label(m, j));
		}
		if (S->s->funcs[j].compute != PT_COMPUTE_AT)
			break;
		pos = S->site_pos[j];
		j = S->s->funcs[j].compute_at.func;
	}
	if (store_func >= 0)
		return fail(err, m, f, -1,
			    "store_at f%d (%s) '%s', which does not enclose "
			    "the compute site", store_func,
			    func_label(m, store_func), ss->loop);
	return 0;
}

/* Is f stored outside its compute site (a sliding window)? */
static int is_sliding(const struct state *S, int f)
{
	const struct pt_sched_func *sf = &S->s->funcs[f];

	if (sf->compute != PT_COMPUTE_AT)
		return 0;
	if (sf->store_root)
		return 1;
	return sf->store_at.loop &&
		(sf->store_at.func != sf->compute_at.func ||
		 strcmp(sf->store_at.loop, sf->compute_at.loop));
}

/* A coordinate whose every coefficient is 0 or 1: the read moves forward
 * with the loop, one element a step at most per dim, neither up- nor
 * downsampled. */
static int unit_coord(const struct pt_stage *st, const struct pt_coord *c)
{
	int d;

	if (!c->affine || !c->coef)
		return 0;
	for (d = 0; d < st->ndims; d++)
		if (c->coef[d].den != 1 ||
		    (c->coef[d].num != 0 && c->coef[d].num != 1))
			return 0;
	return 1;
}

/* Does stage `st` read f, directly or through inlined Funcs, only with
 * unit coordinates? `moving` marks the stage's dims that move with the
 * slid loop; the coordinates of f they move are added to *slid.
 * Returns 1 (reads f, all unit), 0 (does not read f) or -1. */
static int unit_reads(const struct state *S, const struct pt_stage *st,
		      int f, uint64_t moving, uint64_t *slid, int depth)
{
	const struct pt_model *m = S->m;
	int i, k, d, r, reads = 0;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];
		const struct pt_stage *ps;
		uint64_t pm = 0, cm = 0;
		int unit = 1;

		if (a->kind != PT_ACCESS_FUNC || a->is_store ||
		    a->producer < f || a->producer >= st->func)
			continue;
		if (a->producer != f && (!is_inlined(S, a->producer) ||
					 depth > 64))
			continue;
		for (k = 0; k < a->ncoords; k++) {
			const struct pt_coord *c = &a->coords[k];

			if (!unit_coord(st, c)) {
				unit = 0;
				continue;
			}
			for (d = 0; d < st->ndims && d < 64; d++)
				if (c->coef[d].num && ((moving >> d) & 1))
					cm |= UINT64_C(1) << (k & 63);
		}
		if (a->producer == f) {
			if (!unit)
				return -1;
			*slid |= cm;
			reads = 1;
			continue;
		}
		ps = model_stage(m, a->producer, 0);
		for (d = 0; d < ps->ndims && d < 64; d++)
			if (!ps->dims[d].is_rvar && ps->dims[d].index < 64 &&
			    ((cm >> ps->dims[d].index) & 1))
				pm |= UINT64_C(1) << d;
		r = unit_reads(S, ps, f, pm, slid, depth + 1);
		if (r < 0 || (r > 0 && !unit))
			return -1;
		reads |= r;
	}
	return reads;
}

/* Rule 5, sliding windows: the one pattern Halide 14 slides correctly. */
static int check_sliding(struct state *S, int f, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	const struct pt_sched_func *sf = &S->s->funcs[f];
	int j = sf->compute_at.func, pos = S->site_pos[f];
	const struct xloop *l = site_xloop(S, j, pos);
	const struct pt_stage *jst = model_stage(m, j, last_stage(m, j));
	const struct pt_stage *fst = model_stage(m, f, 0);
	const struct pt_sched_stage *ss;
	uint64_t slid = 0;
	int h, sidx, i, k, n, orig[2 * 64 + 64];
	const char *names[2 * 64 + 64];

	if (!is_sliding(S, f))
		return 0;
	if (sf->store_root ?
	    S->s->funcs[j].compute != PT_COMPUTE_ROOT || pos != 0 :
	    sf->store_at.func != j ||
	    site_loop(S, j, sf->store_at.loop) != pos - 1)
		return fail(err, m, f, -1,
			    "sliding window over more than one loop: store "
			    "it at the loop just outside its compute loop "
			    "'%s' (or at root when that is the outermost "
			    "loop of a Func at root)", sf->compute_at.loop);
	if (l->sname || l->is_rvar)
		return fail(err, m, f, -1,
			    "sliding window over '%s', which is %s (Halide 14 "
			    "slides only plain pure loops correctly)",
			    xname(l), l->is_rvar ? "a reduction loop" :
			    "a split result");
	if (l->kind != PT_LOOP_SERIAL)
		return fail(err, m, f, -1,
			    "sliding window over %s loop '%s'",
			    kind_word(l->kind), xname(l));
	if (m->funcs[f].nstages > 1)
		return fail(err, m, f, -1,
			    "sliding window of a Func with updates");
	for (h = j;; h = S->s->funcs[h].compute_at.func) {
		if (is_sliding(S, h))
			return fail(err, m, f, -1,
				    "sliding window inside the sliding window "
				    "of f%d (%s) (Halide 14 gets chains of "
				    "them wrong)", h, func_label(m, h));
		if (S->s->funcs[h].compute != PT_COMPUTE_AT)
			break;
	}
	for (sidx = 0; sidx < m->nstages; sidx++) {
		const struct pt_stage *st = &m->stages[sidx];

		if (!has_use(S, f, sidx))
			continue;
		if (st != jst)
			return fail(err, m, f, -1,
				    "sliding window read by f%d (%s) stage "
				    "%d, which is not the last stage of its "
				    "site Func f%d", st->func,
				    func_label(m, st->func), st->index, j);
		if (unit_reads(S, st, f, l->orig < 64 ?
			       UINT64_C(1) << l->orig : 0, &slid, 0) < 0)
			return fail(err, m, f, -1,
				    "sliding window read with scaled or "
				    "non-affine coordinates (Halide 14 slides "
				    "up- and downsampling wrongly)");
	}
	/* f's own directives: no split of a dim that slides, guard tails
	 * only. Follow split names back to f's pure vars. */
	if (!sf->nstages)
		return 0;
	ss = &sf->stages[0];
	n = 0;
	for (i = 0; i < ss->ndirs; i++) {
		const struct pt_directive *d = &ss->dirs[i];
		int o = -1;

		if (d->kind != PT_DIR_SPLIT)
			continue;
		for (k = 0; k < fst->ndims; k++) {
			char buf[16];

			pos_name(buf, 0, fst->dims[k].index);
			if (!strcmp(buf, d->dim))
				o = fst->dims[k].index;
		}
		for (k = 0; k < n; k++)
			if (!strcmp(names[k], d->dim))
				o = orig[k];
		if (d->tail != PT_TAIL_GUARD)
			return fail(err, m, f, 0,
				    "tail %s in a Func that slides (use guard)",
				    tail_word(d->tail));
		if (o >= 0 && o < 64 && ((slid >> o) & 1))
			return fail(err, m, f, 0,
				    "split of '%s', a dim that slides along "
				    "'%s' (Halide 14 slides split dims "
				    "wrongly)", d->dim, sf->compute_at.loop);
		if (n + 2 <= (int)(sizeof(orig) / sizeof(orig[0]))) {
			names[n] = d->outer;
			orig[n++] = o;
			names[n] = d->inner;
			orig[n++] = o;
		}
	}
	return 0;
}

/* --- rule 6: one-element buffers ------------------------------------------ */

/* A loop that comes from the inner half of a split (never split again). */
static int is_inner(const struct xloop *l)
{
	return l->depth > 0 && l->depth <= 64 &&
		((l->path >> (l->depth - 1)) & 1);
}

/* A coordinate of a Func within one instance of it: a point, c0 plus
 * coef[b] times dim b of the site Func's last stage for the dims b that
 * stay fixed in the instance, or a range (two or more values, or a size
 * Halide cannot know at compile time). */
struct pform {
	int range;
	int opaque;    /* a point that is not affine in the fixed dims (a
			* clamp of one, a fraction of one): counted equal to
			* every other point, so that the analysis errs on the
			* side of a single element */
	double c0;
	double *coef;  /* nb entries */
};

/* The coordinates of Funcs within one instance of the Func the context is
 * for: relative to the loops of its site Func j's last stage that stay
 * fixed in that instance (j is -1 at root, where nothing stays fixed). */
struct octx {
	struct state *S;
	int j, nb;
	struct pform *jdims;  /* per dim of j's last stage */
	struct pform **memo;  /* per Func: its coordinates, once known */
};

/* n forms (structs of `size` bytes whose `double *` member at offset
 * `coef` points to their coefficients), then nb coefficients for each, in
 * one zeroed block for free(); NULL when out of memory. The three analyses
 * of rule 6 keep their forms so. */
static void *forms_alloc(int n, int nb, size_t size, size_t coef)
{
	size_t one = size + (size_t)nb * sizeof(double);
	char *p;
	double *c;
	int i;

	if (n < 1)
		n = 1;
	p = calloc((size_t)n, one);
	if (!p)
		return NULL;
	c = (double *)(void *)(p + (size_t)n * size);
	for (i = 0; i < n; i++) {
		double *ci = c + (size_t)i * (size_t)nb;

		memcpy(p + (size_t)i * size + coef, &ci, sizeof(ci));
	}
	return p;
}

/* n forms of nb coefficients each, in one block, all points at 0. */
static struct pform *forms_new(int n, int nb)
{
	return forms_alloc(n, nb, sizeof(struct pform),
			   offsetof(struct pform, coef));
}

static void form_copy(struct pform *to, const struct pform *from, int nb)
{
	to->range = from->range;
	to->opaque = from->opaque;
	to->c0 = from->c0;
	memcpy(to->coef, from->coef, (size_t)nb * sizeof(double));
}

static int is_whole(double v)
{
	return v > -1e15 && v < 1e15 && (double)(long long)v == v;
}

static double rat_value(struct pt_rat r)
{
	return (double)r.num / (double)(r.den ? r.den : 1);
}

/* Coordinate c of an access from stage `st`, whose dims are dims[]. */
static void coord_form(const struct pt_stage *st, const struct pt_coord *c,
		       const struct pform *dims, int nb, struct pform *out)
{
	int d, b, constant = 1;

	out->range = out->opaque = 0;
	out->c0 = 0;
	memset(out->coef, 0, (size_t)nb * sizeof(double));
	if (c->has_clamp_min && c->has_clamp_max &&
	    c->clamp_min == c->clamp_max) {
		out->c0 = (double)c->clamp_min;
		return;
	}
	if (!c->affine || !c->coef || c->off_min.num != c->off_max.num ||
	    c->off_min.den != c->off_max.den) {
		out->range = 1;
		return;
	}
	out->c0 = rat_value(c->off_min);
	for (d = 0; d < st->ndims; d++) {
		double k;

		if (!c->coef[d].num)
			continue;
		if (dims[d].range) {
			out->range = 1;
			return;
		}
		k = rat_value(c->coef[d]);
		out->opaque |= dims[d].opaque;
		out->c0 += k * dims[d].c0;
		for (b = 0; b < nb; b++)
			out->coef[b] += k * dims[d].coef[b];
	}
	for (b = 0; b < nb; b++) {
		if (out->coef[b] != 0)
			constant = 0;
		if (!is_whole(out->coef[b]))
			out->opaque = 1;
	}
	if (!is_whole(out->c0))
		out->opaque = 1;
	if (!c->has_clamp_min && !c->has_clamp_max)
		return;
	if (!constant || out->opaque) {
		out->opaque = 1;
		return;
	}
	if (c->has_clamp_min && out->c0 < (double)c->clamp_min)
		out->c0 = (double)c->clamp_min;
	if (c->has_clamp_max && out->c0 > (double)c->clamp_max)
		out->c0 = (double)c->clamp_max;
}

static int form_same(const struct pform *a, const struct pform *b, int nb)
{
	int i;

	if (a->range || b->range)
		return 0;
	if (a->opaque || b->opaque)
		return 1;
	if (a->c0 != b->c0)
		return 0;
	for (i = 0; i < nb; i++)
		if (a->coef[i] != b->coef[i])
			return 0;
	return 1;
}

/* Add what stage `st` (dims[]) reads of Func h, directly or through
 * inlined Funcs, to acc (h's coordinates; *seen once one read is in). */
static int collect(struct octx *c, const struct pt_stage *st,
		   const struct pform *dims, int h, struct pform *acc,
		   int *seen, int depth)
{
	const struct pt_model *m = c->S->m;
	int i, k, d, n = m->funcs[h].nargs, ret = 0;

	for (i = 0; i < st->naccesses && !ret; i++) {
		const struct pt_access *a = &st->accesses[i];
		const struct pt_stage *ps;
		struct pform *cf, *pd;
		int p = a->producer;

		if (a->kind != PT_ACCESS_FUNC || a->is_store || p < h ||
		    p >= st->func || (p != h && !is_inlined(c->S, p)))
			continue;
		if (a->ncoords != m->funcs[p].nargs || depth > 64) {
			for (k = 0; k < n; k++)
				acc[k].range = 1;
			*seen = 1;
			continue;
		}
		cf = forms_new(a->ncoords, c->nb);
		if (!cf)
			return PT_ENOMEM;
		for (k = 0; k < a->ncoords; k++)
			coord_form(st, &a->coords[k], dims, c->nb, &cf[k]);
		if (p == h) {
			for (k = 0; k < n; k++)
				if (!*seen)
					form_copy(&acc[k], &cf[k], c->nb);
				else if (!form_same(&acc[k], &cf[k], c->nb))
					acc[k].range = 1;
			*seen = 1;
			free(cf);
			continue;
		}
		/* Through an inlined Func: its dims are the coordinates. */
		ps = model_stage(m, p, 0);
		pd = forms_new(ps->ndims, c->nb);
		if (!pd) {
			free(cf);
			return PT_ENOMEM;
		}
		for (d = 0; d < ps->ndims; d++)
			if (ps->dims[d].is_rvar ||
			    ps->dims[d].index >= a->ncoords)
				pd[d].range = 1;
			else
				form_copy(&pd[d], &cf[ps->dims[d].index],
					  c->nb);
		ret = collect(c, ps, pd, h, acc, seen, depth + 1);
		free(pd);
		free(cf);
	}
	return ret;
}

/* Does a split of Func g's pure dim k (its first split, which makes the
 * loop that holds the dim's last element) round it up or shift it, so that
 * g computes more than its region along k? */
static int enlarged(const struct state *S, int g, int k)
{
	const struct pt_model *m = S->m;
	int st, i;

	for (st = 0; st < m->funcs[g].nstages; st++) {
		const struct pt_stage *stage = model_stage(m, g, st);
		const struct xnest *x = &S->nests[m->funcs[g].first_stage + st];

		for (i = 0; i < x->n; i++) {
			const struct xloop *l = &x->l[i];

			if (!stage->dims[l->orig].is_rvar &&
			    stage->dims[l->orig].index == k &&
			    l->depth == 1 && l->path == 1 &&
			    l->tail != PT_TAIL_GUARD)
				return 1;
		}
	}
	return 0;
}

/* h's coordinates in the context's instance (memoized); NULL when out of
 * memory. */
static const struct pform *site_region(struct octx *c, int h)
{
	struct state *S = c->S;
	const struct pt_model *m = S->m;
	int n = m->funcs[h].nargs, sidx, d, seen = 0;
	struct pform *acc;

	if (c->memo[h])
		return c->memo[h];
	acc = forms_new(n, c->nb);
	if (!acc)
		return NULL;
	for (sidx = 0; sidx < m->nstages; sidx++) {
		const struct pt_stage *st = &m->stages[sidx];
		const struct pform *gr = NULL;
		struct pform *dims;
		int g = st->func, ret;

		if (!has_use(S, h, sidx))
			continue;
		if (c->j >= 0 && g != c->j &&
		    S->s->funcs[g].compute == PT_COMPUTE_AT) {
			/* Computed within the instance: the region of it the
			 * instance needs. */
			gr = site_region(c, g);
			if (!gr) {
				free(acc);
				return NULL;
			}
		}
		dims = forms_new(st->ndims, c->nb);
		if (!dims) {
			free(acc);
			return NULL;
		}
		for (d = 0; d < st->ndims; d++) {
			const struct pt_dim *dim = &st->dims[d];

			if (g == c->j && st->index == last_stage(m, g))
				form_copy(&dims[d], &c->jdims[d], c->nb);
			else if (gr && !dim->is_rvar &&
				 dim->index < m->funcs[g].nargs &&
				 !enlarged(S, g, dim->index))
				form_copy(&dims[d], &gr[dim->index], c->nb);
			else
				dims[d].range = 1;
		}
		ret = collect(c, st, dims, h, acc, &seen, 0);
		free(dims);
		if (ret) {
			free(acc);
			return NULL;
		}
	}
	if (!seen)
		for (d = 0; d < n; d++)
			acc[d].range = 1;
	c->memo[h] = acc;
	return acc;
}

static int point_dims(struct state *S, int h, uint64_t *mask);

/* May loop l of Func j's last stage (stage dims jst) run a single
 * iteration that Halide knows at compile time? jmask: j's pure dims whose
 * region may be a single point. */
static int loop_may_be_one(const struct state *S, int j,
			   const struct pt_stage *jst, const struct xloop *l,
			   uint64_t jmask)
{
	const struct pt_dim *dim = &jst->dims[l->orig];

	if (!dim->is_rvar && dim->index < 64 && ((jmask >> dim->index) & 1))
		return 1;
	if (l->const_extent && l->extent <= 1)
		return 1;
	if (is_inner(l))  /* a guard tail of 2 leaves one iteration */
		return l->tail == PT_TAIL_GUARD && l->extent == 2;
	if (l->depth == 0 || l->const_extent)
		return 0;
	/* An outer loop: one iteration when j's region is a small constant,
	 * which only a Func computed at a loop can have. */
	return S->s->funcs[j].compute == PT_COMPUTE_AT;
}

static void octx_release(struct octx *c)
{
	int i;

	if (c->memo)
		for (i = 0; i < c->S->m->nfuncs; i++)
			free(c->memo[i]);
	free(c->memo);
	free(c->jdims);
}

/* The pure dims of Func h whose region in one instance may be a single
 * point, and that h does not enlarge (memoized in S). */
static int point_dims(struct state *S, int h, uint64_t *mask)
{
	const struct pt_model *m = S->m;
	const struct pt_sched_func *sf = &S->s->funcs[h];
	const struct pform *r;
	struct octx c;
	const struct xnest *x;
	unsigned char fixed[64];
	uint64_t jmask = 0;
	int k, p, ret = 0;

	*mask = S->pmask[h];
	if (S->pdone[h])
		return 0;  /* known, or (impossible) being computed: none */
	S->pdone[h] = 1;
	if (m->funcs[h].is_output || m->funcs[h].nargs > 64)
		return 0;
	memset(&c, 0, sizeof(c));
	c.S = S;
	c.j = -1;
	c.memo = calloc((size_t)m->nfuncs + 1, sizeof(*c.memo));
	if (!c.memo)
		return PT_ENOMEM;
	if (sf->compute == PT_COMPUTE_AT) {
		const struct pt_stage *jst;
		int j = sf->compute_at.func;

		if ((ret = point_dims(S, j, &jmask)))
			goto out;
		jst = model_stage(m, j, last_stage(m, j));
		c.j = j;
		c.nb = jst->ndims;
		c.jdims = forms_new(jst->ndims, c.nb);
		if (!c.jdims || jst->ndims > 64) {
			ret = c.jdims ? 0 : PT_ENOMEM;
			goto out;
		}
		memset(fixed, 1, sizeof(fixed));
		/* The loops inside the compute loop run within one instance. */
		x = &S->nests[m->funcs[j].first_stage + last_stage(m, j)];
		for (p = S->site_pos[h] + 1; p < x->n; p++) {
			const struct xloop *l = site_xloop(S, j, p);

			if (!loop_may_be_one(S, j, jst, l, jmask))
				fixed[l->orig] = 0;
		}
		for (k = 0; k < jst->ndims; k++) {
			c.jdims[k].range = !fixed[k];
			c.jdims[k].coef[k] = 1;
		}
	}
	r = site_region(&c, h);
	if (!r) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (k = 0; k < m->funcs[h].nargs; k++)
		if (!r[k].range && !enlarged(S, h, k))
			*mask |= UINT64_C(1) << k;
	S->pmask[h] = *mask;
out:
	octx_release(&c);
	return ret;
}

/* Rule 6, one-element buffers: no vector loop with a guard tail in a
 * stage that also rounds up an outer loop of the same dim, when the
 * Func's buffer may hold a single element. Halide 14 allocates such a
 * buffer on the stack with the element's alignment, and then stores
 * masked whole vectors into it with the alignment the index suggests. */
static int check_one_element(struct state *S, int f, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	int st, i, n = m->funcs[f].nargs, ret;
	uint64_t mask;

	for (st = 0; st < m->funcs[f].nstages; st++) {
		const struct xnest *x = &S->nests[m->funcs[f].first_stage + st];
		const struct xloop *v, *rnd = NULL;

		if (!x->n || x->l[0].kind != PT_LOOP_VECTOR)
			continue;
		v = &x->l[0];
		if (v->tail != PT_TAIL_GUARD)
			continue;
		for (i = 1; i < x->n; i++)
			if (x->l[i].orig == v->orig && is_inner(&x->l[i]) &&
			    x->l[i].tail == PT_TAIL_ROUND)
				rnd = &x->l[i];
		if (!rnd || n < 1 || n > 64)
			continue;
		if ((ret = point_dims(S, f, &mask)))
			return oom(err);
		if (mask != (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1))
			continue;
		return fail(err, m, f, st,
			    "vectorized '%s' has a guard tail and '%s' of the "
			    "same dim a round one, in a Func whose buffer may "
			    "be a single element (Halide 14 then stores "
			    "aligned vectors into a one-element stack buffer "
			    "and crashes); give the split that made '%s' a "
			    "guard tail", xname(v), xname(rnd), xname(rnd));
	}
	return 0;
}

/* --- rule 6: unrolled iterations past a bounded buffer -------------------- */

#define BIG 1e300  /* a size Halide knows no compile-time bound for */

/* The values a coordinate of a Func takes within one instance of it: from
 * lo plus the sum of coef[b] times the first value of dim b of the site
 * Func's last stage in the instance, up to `spread` more.
 * - sym: Halide knows no compile-time bound for how many there are;
 * - fixed: Halide's count of them is a compile-time constant, or has no
 *   bound at all; otherwise it may be an expression with a constant
 *   bound that varies from instance to instance (min(32, width - x));
 * - known: fixed, and the constant is spread + 1;
 * - loose: lo and coef are unknown and only the spread holds, so that the
 *   form cannot be lined up with another one. */
struct bform {
	int sym, fixed, known, loose;
	double lo, spread;
	double *coef;  /* nb entries */
};

/* How Halide may bound one dim of a Func's buffer in one instance. */
struct bdim {
	double size;  /* the fewest points it may bound it to; BIG: none */
	int fixed;    /* the size is a compile-time constant (or unbounded) */
	int known;    /* ... and it is `size` */
};

/* The coordinates of Funcs within one instance of a Func computed at loop
 * pos (outermost first) of Func j's last stage; j is -1 at root, where the
 * instance is the whole pipeline and nothing lines up. */
struct bctx {
	struct state *S;
	int j, pos, nb;
	struct bform *jdims;  /* per dim of j's last stage */
	struct bform **memo;  /* per Func, once known */
};

/* n forms of nb coefficients each, in one block, all the fixed point 0. */
static struct bform *bforms_new(int n, int nb)
{
	struct bform *p;
	int i;

	if (n < 1)
		n = 1;
	p = forms_alloc(n, nb, sizeof(struct bform),
			offsetof(struct bform, coef));
	for (i = 0; p && i < n; i++)
		p[i].fixed = p[i].known = 1;
	return p;
}

static void bform_copy(struct bform *to, const struct bform *from, int nb)
{
	to->sym = from->sym;
	to->fixed = from->fixed;
	to->known = from->known;
	to->loose = from->loose;
	to->lo = from->lo;
	to->spread = from->spread;
	memcpy(to->coef, from->coef, (size_t)nb * sizeof(double));
}

/* Coordinates Halide may know more about than we can tell: they count as
 * a single point, which may vary. */
static void bform_small(struct bform *f, int nb)
{
	f->sym = f->fixed = f->known = 0;
	f->loose = 1;
	f->lo = f->spread = 0;
	memset(f->coef, 0, (size_t)nb * sizeof(double));
}

/* Coordinate co of access a from stage `st` (dims[]: the forms of its
 * dims) to a Func whose estimated region along it has `est` points. */
static void bcoord(const struct bctx *c, const struct pt_stage *st,
		   const struct pt_access *a, const struct pt_coord *co,
		   const struct bform *dims, double est, struct bform *out)
{
	int d, b, both = co->has_clamp_min && co->has_clamp_max;
	double cw = both ? (double)co->clamp_max - (double)co->clamp_min : 0;

	if (cw < 0)
		cw = 0;
	bform_small(out, c->nb);
	out->fixed = out->known = 1;
	out->loose = 0;
	if (!co->affine || !co->coef) {
		out->loose = 1;
		out->spread = est - 1;
		if (both && cw < out->spread)
			out->spread = cw;
		if (out->spread < 0)
			out->spread = 0;
		/* A data-dependent read is bounded by the loaded type or by
		 * its clamps: constants, or parameters Halide cannot bound
		 * (which ones, the model does not say; within an instance
		 * they may depend on the instance). Any other one may have a
		 * varying bound, and within an instance a small one. */
		out->known = 0;
		if (!a->data_dependent) {
			out->fixed = 0;
			if (c->j >= 0)
				out->spread = 0;
		}
		return;
	}
	out->lo = rat_value(co->off_min);
	out->spread = rat_value(co->off_max) - out->lo;
	for (d = 0; d < st->ndims; d++) {
		const struct bform *dim = &dims[d];
		double k;

		if (!co->coef[d].num)
			continue;
		if (dim->sym) {
			out->sym = 1;
			break;
		}
		k = rat_value(co->coef[d]);
		if (co->coef[d].den != 1 || !dim->fixed)
			out->fixed = 0;
		out->known &= dim->known;
		out->loose |= dim->loose;
		out->lo += k * dim->lo + (k < 0 ? k * dim->spread : 0);
		out->spread += (k < 0 ? -k : k) * dim->spread;
		for (b = 0; b < c->nb; b++)
			out->coef[b] += k * dim->coef[b];
	}
	if (!co->has_clamp_min && !co->has_clamp_max)
		return;
	if (out->sym) {
		if (!both)
			return;
		/* Only the clamps bound it, and the ends of what they clamp
		 * follow the pipeline's sizes: max(min(width - 1, 255), 0)
		 * varies. */
		bform_small(out, c->nb);
		out->spread = cw;
		return;
	}
	/* A clamp moves the values and may cut them short. */
	out->loose = 1;
	if (out->spread > 0 || !out->fixed) {
		out->fixed = out->known = 0;
		if (both && out->spread > cw)
			out->spread = cw;
	}
	out->known &= out->fixed;
}

/* acc becomes the union of acc and f. */
static void bform_union(struct bform *acc, const struct bform *f, int nb)
{
	double hi;
	int b, same = !acc->loose && !f->loose;

	if (acc->sym || f->sym) {
		acc->sym = 1;
		return;
	}
	for (b = 0; b < nb && same; b++)
		if (acc->coef[b] != f->coef[b])
			same = 0;
	if (!same) {
		/* They cannot be lined up: at least the larger one. Two
		 * constants may still make a constant, whose value we do not
		 * know (assuming a varying bound instead would let through
		 * what rule 6 refuses for constants). */
		acc->loose = 1;
		acc->fixed &= f->fixed;
		acc->known = 0;
		if (f->spread > acc->spread)
			acc->spread = f->spread;
		return;
	}
	acc->fixed &= f->fixed;
	acc->known &= f->known;
	hi = acc->lo + acc->spread;
	if (f->lo + f->spread > hi)
		hi = f->lo + f->spread;
	if (f->lo < acc->lo)
		acc->lo = f->lo;
	acc->spread = hi - acc->lo;
}

/* Add what stage `st` (dims[]) reads of Func h, directly or through
 * inlined Funcs, to acc (h's coordinates; *seen once one read is in). */
static int bcollect(struct bctx *c, const struct pt_stage *st,
		    const struct bform *dims, int h, struct bform *acc,
		    int *seen, int depth)
{
	const struct pt_model *m = c->S->m;
	int i, k, d, n = m->funcs[h].nargs, ret = 0;

	for (i = 0; i < st->naccesses && !ret; i++) {
		const struct pt_access *a = &st->accesses[i];
		const struct pt_stage *ps;
		struct bform *cf, *pd;
		int p = a->producer;

		if (a->kind != PT_ACCESS_FUNC || a->is_store || p < h ||
		    p >= st->func || (p != h && !is_inlined(c->S, p)))
			continue;
		if (a->ncoords != m->funcs[p].nargs || depth > 64) {
			for (k = 0; k < n; k++)
				bform_small(&acc[k], c->nb);
			*seen = 1;
			continue;
		}
		cf = bforms_new(a->ncoords, c->nb);
		if (!cf)
			return PT_ENOMEM;
		for (k = 0; k < a->ncoords; k++)
			bcoord(c, st, a, &a->coords[k], dims,
			       (double)m->funcs[p].region_extent[k], &cf[k]);
		if (p == h) {
			for (k = 0; k < n; k++)
				if (!*seen)
					bform_copy(&acc[k], &cf[k], c->nb);
				else
					bform_union(&acc[k], &cf[k], c->nb);
			*seen = 1;
			free(cf);
			continue;
		}
		/* Through an inlined Func: its dims are the coordinates. */
		ps = model_stage(m, p, 0);
		pd = bforms_new(ps->ndims, c->nb);
		if (!pd) {
			free(cf);
			return PT_ENOMEM;
		}
		for (d = 0; d < ps->ndims; d++)
			if (ps->dims[d].is_rvar ||
			    ps->dims[d].index >= a->ncoords)
				bform_small(&pd[d], c->nb);
			else
				bform_copy(&pd[d], &cf[ps->dims[d].index],
					   c->nb);
		ret = bcollect(c, ps, pd, h, acc, seen, depth + 1);
		free(pd);
		free(cf);
	}
	return ret;
}

/* h's coordinates in the context's instance (memoized); NULL when out of
 * memory. */
static const struct bform *bsite_region(struct bctx *c, int h)
{
	struct state *S = c->S;
	const struct pt_model *m = S->m;
	int n = m->funcs[h].nargs, sidx, d, seen = 0;
	struct bform *acc;

	if (c->memo[h])
		return c->memo[h];
	acc = bforms_new(n, c->nb);
	if (!acc)
		return NULL;
	if (m->funcs[h].is_output) {
		/* The output buffer's size is known only at run time. */
		for (d = 0; d < n; d++)
			acc[d].sym = 1;
		c->memo[h] = acc;
		return acc;
	}
	for (sidx = 0; sidx < m->nstages; sidx++) {
		const struct pt_stage *st = &m->stages[sidx];
		const struct bform *gr = NULL;
		struct bform *dims;
		int g = st->func, ret, own;

		if (!has_use(S, h, sidx))
			continue;
		own = c->j >= 0 && g == c->j &&
			st->index == last_stage(m, g);
		/* Any other reader is computed within the instance (rule
		 * 4), or anywhere at root. */
		if (!own && (c->j < 0 ||
			     S->s->funcs[g].compute == PT_COMPUTE_AT)) {
			gr = bsite_region(c, g);
			if (!gr) {
				free(acc);
				return NULL;
			}
		}
		dims = bforms_new(st->ndims, c->nb);
		if (!dims) {
			free(acc);
			return NULL;
		}
		for (d = 0; d < st->ndims; d++) {
			const struct pt_dim *dim = &st->dims[d];

			if (own) {
				bform_copy(&dims[d], &c->jdims[d], c->nb);
			} else if (dim->is_rvar) {
				/* The whole RDom in every instance of g. */
				dims[d].loose = 1;
				if (pt_stage_rvar_constant(st, dim->index))
					dims[d].spread = dim->extent > 1 ?
						(double)dim->extent - 1 : 0;
				else
					dims[d].sym = 1;
			} else if (gr && dim->index < m->funcs[g].nargs) {
				bform_copy(&dims[d], &gr[dim->index], c->nb);
			} else {
				bform_small(&dims[d], c->nb);
			}
		}
		ret = bcollect(c, st, dims, h, acc, &seen, 0);
		free(dims);
		if (ret) {
			free(acc);
			return NULL;
		}
	}
	if (!seen)
		for (d = 0; d < n; d++)
			bform_small(&acc[d], c->nb);
	c->memo[h] = acc;
	return acc;
}

static void bctx_release(struct bctx *c)
{
	int i;

	if (!c)
		return;
	if (c->memo)
		for (i = 0; i < c->S->m->nfuncs; i++)
			free(c->memo[i]);
	free(c->memo);
	free(c->jdims);
}

static const struct bdim *ibound(struct state *S, int h);

/* The dims of Func j's last stage in one instance of a Func computed at
 * its loop pos: they run as far as the loops of the dim inside that loop
 * go. A guard tail on the split that made one of those loops cuts the
 * last instance short, and Halide bounds that instance's buffer on its
 * own (ext % 32, where the others have 32). */
static int bjdims(struct bctx *c)
{
	struct state *S = c->S;
	const struct pt_model *m = S->m;
	const struct pt_stage *jst = model_stage(m, c->j, last_stage(m, c->j));
	const struct xnest *x =
		&S->nests[m->funcs[c->j].first_stage + last_stage(m, c->j)];
	int d, p;

	c->jdims = bforms_new(jst->ndims, c->nb);
	if (!c->jdims)
		return PT_ENOMEM;
	for (d = 0; d < jst->ndims; d++) {
		struct bform *f = &c->jdims[d];
		const struct pt_dim *dim = &jst->dims[d];
		double prod = 1;
		int inside = 0, all_const = 1, guard = 0;
		const struct bdim *w;

		f->coef[d] = 1;
		for (p = 0; p < x->n; p++) {
			const struct xloop *l = site_xloop(S, c->j, p);

			if (l->orig != d || p <= c->pos)
				continue;
			inside = 1;
			guard |= l->tail == PT_TAIL_GUARD;
			if (!l->const_extent)
				all_const = 0;
			else if (prod < 1e15)
				prod *= (double)(l->extent > 1 ? l->extent : 1);
		}
		if (!inside)
			continue;
		if (all_const) {
			f->spread = prod - 1;
			if (guard) {
				f->fixed = f->known = 0;
				if (prod >= 2)
					f->spread = prod - 2;
			}
			continue;
		}
		/* A loop of symbolic extent: as far as j's own region goes
		 * in one instance of j. */
		if (dim->is_rvar || dim->index >= m->funcs[c->j].nargs) {
			f->sym = 1;
			continue;
		}
		w = ibound(S, c->j);
		if (!w)
			return PT_ENOMEM;
		if (w[dim->index].size >= BIG) {
			f->sym = 1;
			continue;
		}
		f->spread = w[dim->index].size - 1;
		f->fixed = w[dim->index].fixed;
		f->known = w[dim->index].known;
	}
	return 0;
}

/* How Halide may bound each pure dim of Func h's buffer in one instance
 * (memoized in S); NULL when out of memory. */
static const struct bdim *ibound(struct state *S, int h)
{
	const struct pt_model *m = S->m;
	const struct pt_sched_func *sf = &S->s->funcs[h];
	const struct bform *r;
	struct bctx c, *cx = &c;
	struct bdim *w;
	int k, n = m->funcs[h].nargs;

	if (S->ibound[h])
		return S->ibound[h];
	w = calloc((size_t)(n > 0 ? n : 1), sizeof(*w));
	if (!w)
		return NULL;
	memset(&c, 0, sizeof(c));
	c.S = S;
	if (sf->compute == PT_COMPUTE_AT) {
		c.j = sf->compute_at.func;
		c.pos = S->site_pos[h];
		c.nb = model_stage(m, c.j, last_stage(m, c.j))->ndims;
		c.memo = calloc((size_t)m->nfuncs + 1, sizeof(*c.memo));
		if (!c.memo || bjdims(&c))
			goto oom;
	} else {
		if (!S->broot) {
			S->broot = calloc(1, sizeof(*S->broot));
			if (!S->broot)
				goto oom;
			S->broot->S = S;
			S->broot->j = -1;
			S->broot->memo = calloc((size_t)m->nfuncs + 1,
						sizeof(*S->broot->memo));
			if (!S->broot->memo) {
				free(S->broot);
				S->broot = NULL;
				goto oom;
			}
		}
		cx = S->broot;
	}
	r = bsite_region(cx, h);
	if (!r)
		goto oom;
	for (k = 0; k < n; k++) {
		double s = r[k].spread < 0 ? 0 : r[k].spread;

		w[k].size = r[k].sym || s >= 1e15 ? BIG :
			(double)(long long)s + 1;
		w[k].fixed = r[k].fixed;
		w[k].known = r[k].known && r[k].fixed;
		/* At root a constant region is the estimated one. */
		if (cx != &c && w[k].size < BIG && w[k].fixed) {
			w[k].size = (double)m->funcs[h].region_extent[k];
			w[k].known = 1;
		}
	}
	if (cx == &c)
		bctx_release(&c);
	S->ibound[h] = w;
	return w;
oom:
	if (cx == &c)
		bctx_release(&c);
	free(w);
	return NULL;
}

/* Where pure dim k of a stage (nest x) may start in the last iteration
 * that loop partitioning peels off, given how Halide bounds it (*w): a
 * dim of constant size split with a guard tail into more than one tile
 * starts its last tile at (size - 1) / f * f, f the tile's size; at its
 * last point when the constant is not known. Otherwise the loops run from
 * 0 (no guard, no tail to peel, or a bound that varies, where nothing is
 * known beyond 0). */
static double peeled_start(const struct pt_stage *stage,
			   const struct xnest *x, int k, const struct bdim *w)
{
	int i;

	if (!w->fixed || w->size >= BIG)
		return 0;
	for (i = 0; i < x->n; i++) {
		const struct xloop *l = &x->l[i];
		const struct pt_dim *dim = &stage->dims[l->orig];
		double f = (double)l->extent;

		if (dim->is_rvar || dim->index != k || l->depth != 1 ||
		    l->path != 1)
			continue;
		if (l->tail != PT_TAIL_GUARD || w->size <= f)
			return 0;
		if (!w->known)
			return w->size - 1;
		return (double)(long long)((w->size - 1) / f) * f;
	}
	return 0;
}

/* Rule 6, unrolled tails: a stage that vectorizes a dim with a guard tail
 * masks the lanes past the region's end instead of skipping them, and a
 * round split of that dim's outer loop adds whole iterations past it.
 * Unrolled, each such iteration stores at a constant offset from the
 * loops outside it, and Halide 14's simplifier takes a store whose
 * smallest index is at or past the end of a buffer with a compile-time
 * bound for unreachable code, masked or not: it drops the code around it
 * (the Func's computation, or the last iteration of a loop), or crashes.
 * The smallest index is the copy's offset while the loops outside run
 * from 0, or, in the last iteration that loop partitioning peels off,
 * where that iteration starts. */
static int check_unrolled_tail(struct state *S, int f, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	int st, i, k, k0, n = m->funcs[f].nargs;

	for (st = 0; st < m->funcs[f].nstages; st++) {
		const struct pt_stage *stage = model_stage(m, f, st);
		const struct xnest *x = &S->nests[m->funcs[f].first_stage + st];
		const struct xloop *v, *u = NULL;
		const struct bdim *w;
		double span = 1, start, size, copies, index, total;

		if (!x->n)
			continue;
		v = &x->l[0];
		if (v->kind != PT_LOOP_VECTOR || v->tail != PT_TAIL_GUARD ||
		    v->depth != 1 || v->path != 1 || v->is_rvar ||
		    stage->dims[v->orig].index >= n)
			continue;
		k0 = stage->dims[v->orig].index;
		/* Outwards from the vector loop along its dim: an unrolled
		 * inner loop of a round split, with no guard split before
		 * it (a guard split's `if` skips what lies past the end). */
		for (i = 0; i < x->n && !u; i++) {
			const struct xloop *l = &x->l[i];

			if (l->orig != v->orig)
				continue;
			if (i && (!is_inner(l) || l->tail == PT_TAIL_GUARD))
				break;
			if (l->kind == PT_LOOP_UNROLL &&
			    l->tail == PT_TAIL_ROUND)
				u = l;
			else
				span *= (double)l->extent;
		}
		if (!u)
			continue;
		w = ibound(S, f);
		if (!w)
			return oom(err);
		for (k = 0; k < n && w[k].size < BIG; k++)
			;
		if (k < n)
			continue;  /* no compile-time bound: nothing dropped */
		size = w[k0].size;
		if (!w[k0].fixed) {
			/* Bounds that vary: the loops outside from 0. */
			start = (double)(u->extent - 1) * span;
		} else if (w[k0].known) {
			/* A constant size: copies of span points, in groups of
			 * u's extent. One group is unrolled whole at compile
			 * time, and Halide folds the masks past the end. */
			copies = (double)(long long)((size + span - 1) / span);
			if (copies <= (double)u->extent ||
			    (long long)copies % u->extent == 0)
				continue;
			start = ((double)(long long)((copies - 1) /
						     (double)u->extent) + 1) *
				(double)u->extent * span - span;
		} else {
			start = BIG;  /* a constant we do not know */
		}
		/* The smallest index, in elements of the buffer: the copy's
		 * start along the vector dim, and where the other dims may
		 * start in a last iteration peeled off. */
		index = 0;
		total = 1;
		for (k = 0; k < n; k++) {
			index += (k == k0 ? start :
				  peeled_start(stage, x, k, &w[k])) * total;
			total *= w[k].size;
		}
		if (index < total)
			continue;
		if (start >= BIG)
			return fail(err, m, f, st,
				    "unrolled '%s' comes from a round split of "
				    "the dim of vectorized '%s' (guard tail), "
				    "and its last copies may store past the "
				    "end of the buffer, whose size Halide knows "
				    "at compile time (Halide 14 then drops code "
				    "as unreachable or crashes); give the split "
				    "that made '%s' a guard tail", xname(u),
				    xname(v), xname(u));
		return fail(err, m, f, st,
			    "unrolled '%s' comes from a round split of the "
			    "dim of vectorized '%s' (guard tail): a copy "
			    "stores from element %.0f of a buffer Halide may "
			    "bound to %.0f elements (Halide 14 then drops "
			    "code as unreachable or crashes); give the split "
			    "that made '%s' a guard tail", xname(u), xname(v),
			    index, total, xname(u));
	}
	return 0;
}

/* --- rule 6: strided loads at constant addresses -------------------------- */

/* The analysis itself is pt_strided.c's, shared with the schedule space;
 * here the reads of f are walked, and noted or judged one by one. */

/* What the walk over the site's reads of f needs. */
struct cctx {
	const struct state *S;
	int f, nb, vd;           /* vd: the stage dim of j's vector loop */
	int collect;             /* 1: note the extents; 0: judge reads */
	uint64_t moving;         /* j's dims with a loop in the instance that
				  * is neither vectorized nor unrolled */
	const double *span;      /* per dim of j: its points in the instance;
				  * 0 when they vary (a loop of j's region,
				  * j at root), -1 when no constant is known */
	struct pt_strided_dim *cd;   /* per dim of f */
	struct pt_strided_step *cs;  /* [k * nb + d] */
	double *elo, *ehi;       /* per dim of f: its buffer's extent */
	double *nhi;             /* ... before f's own round tail */
	unsigned char *konst;    /* ... may be a compile-time constant */
	unsigned char *rbad;     /* the read at hand: per dim of f */
	double *rlo, *rhi;
	struct pt_strided_coef *rcoef;  /* [k * nb + d] */
	double smin, smax;       /* the refused read's stride (out) */
};

static struct pt_strided_form *cforms_new(int n, int nb)
{
	return forms_alloc(n, nb, sizeof(struct pt_strided_form),
			   offsetof(struct pt_strided_form, coef));
}

static void form_ccopy(struct pt_strided_form *to,
		       const struct pt_strided_form *from, int nb)
{
	to->bad = from->bad;
	to->lo = from->lo;
	to->hi = from->hi;
	memcpy(to->coef, from->coef, (size_t)nb * sizeof(double));
}

/* Note one read of f (coordinates cf[]; co[] its own coordinates when it
 * is the site stage's own access) into what f's buffer looks like, or
 * judge it: 1 when it is refused, else 0. */
static int one_read(struct cctx *c, const struct pt_strided_form *cf,
		    const struct pt_coord *co)
{
	int n = c->S->m->funcs[c->f].nargs;
	struct pt_strided_read r;

	pt_strided_read_of(n, c->nb, cf, co, 0, c->rbad, c->rlo, c->rhi,
			   c->rcoef);
	r.bad = c->rbad;
	r.lo = c->rlo;
	r.hi = c->rhi;
	r.coef = c->rcoef;
	if (c->collect) {
		pt_strided_note(c->cd, c->cs, n, c->nb, c->span, &r);
		return 0;
	}
	return pt_strided_bad(&r, n, c->nb, c->vd, c->moving, c->konst,
			      c->elo, c->ehi, c->nhi, &c->smin, &c->smax);
}

/* Walk what stage st (dims[]) reads of f, directly or through inlined
 * Funcs (inl[] marks them), noting or judging each read: 1 when a read
 * is refused, 0, or PT_ENOMEM. */
static int cwalk(struct cctx *c, const unsigned char *inl,
		 const struct pt_stage *st, const struct pt_strided_form *dims,
		 int depth)
{
	const struct pt_model *m = c->S->m;
	int i, k, d, ret = 0;

	for (i = 0; i < st->naccesses && !ret; i++) {
		const struct pt_access *a = &st->accesses[i];
		const struct pt_stage *ps;
		struct pt_strided_form *cf, *pd;
		int p = a->producer;

		if (a->kind != PT_ACCESS_FUNC || a->is_store || p < c->f ||
		    p >= st->func || (p != c->f && !inl[p]) || depth > 64)
			continue;
		if (a->ncoords != m->funcs[p].nargs) {
			if (c->collect)  /* no idea what it reads */
				for (k = 0; k < m->funcs[c->f].nargs; k++)
					c->cd[k].state = 3;
			continue;
		}
		cf = cforms_new(a->ncoords, c->nb);
		if (!cf)
			return PT_ENOMEM;
		for (k = 0; k < a->ncoords; k++)
			pt_strided_form_of(c->nb, st, &a->coords[k], dims,
					   &cf[k]);
		if (p == c->f) {
			ret = one_read(c, cf, depth ? NULL : a->coords);
			free(cf);
			continue;
		}
		ps = model_stage(m, p, 0);
		pd = cforms_new(ps->ndims, c->nb);
		if (!pd) {
			free(cf);
			return PT_ENOMEM;
		}
		for (d = 0; d < ps->ndims; d++)
			if (ps->dims[d].is_rvar ||
			    ps->dims[d].index >= a->ncoords)
				pd[d].bad = 1;
			else
				form_ccopy(&pd[d], &cf[ps->dims[d].index],
					   c->nb);
		ret = cwalk(c, inl, ps, pd, depth + 1);
		free(pd);
		free(cf);
	}
	return ret;
}

/* The extent of dim k of f's buffer after f's own round tail on the
 * first split of k, which computes whole tiles (v rounded up). */
static double rounded(const struct state *S, int f, int k, double v)
{
	const struct pt_stage *stage = model_stage(S->m, f, 0);
	const struct xnest *x = &S->nests[S->m->funcs[f].first_stage];
	int i;

	if (v >= BIG)
		return v;
	for (i = 0; i < x->n; i++) {
		const struct xloop *l = &x->l[i];
		double t = (double)l->extent;

		if (!stage->dims[l->orig].is_rvar &&
		    stage->dims[l->orig].index == k && l->depth == 1 &&
		    l->path == 1 && l->tail == PT_TAIL_ROUND && t >= 2)
			return (double)(long long)((v + t - 1) / t) * t;
	}
	return v;
}

/* Rule 6, strided loads at constant addresses: f computed at a loop of
 * j, whose last stage is vectorized and reads f, within one instance of
 * f, at addresses that move with no loop (only the vector loop and
 * unrolled loops run inside the instance along the dims the read
 * follows), with a stride of 2 to 4 elements of f's buffer between the
 * lanes (which f's small constant extents make). Halide 14 loads such a
 * vector densely from the address rounded down to a multiple of the
 * stride and, when that address is a constant, tags the load with the
 * alignment of a whole native vector (CodeGen_LLVM, visit(const Load *):
 * the remainder is reduced modulo the address's modulus, 0 for a
 * constant, and Halide defines x mod 0 as 0). Unless the address happens
 * to be aligned, the aligned load (vmovaps) faults. An address that moves
 * with a loop keeps its true alignment. */
static int check_const_strided(struct state *S, int f, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	const struct pt_sched_func *sf = &S->s->funcs[f];
	int j = sf->compute_at.func, n = m->funcs[f].nargs, p, k, ret = 0;
	int jsite = S->s->funcs[j].compute == PT_COMPUTE_AT, others = 0;
	const struct pt_stage *jst = model_stage(m, j, last_stage(m, j));
	const struct xnest *x =
		&S->nests[m->funcs[j].first_stage + last_stage(m, j)];
	int store = S->site_pos[f], sidx;
	struct pt_strided_form *dims = NULL;
	unsigned char *inl = NULL;
	double *span = NULL, *cdc = NULL;
	struct cctx c;
	char stride[32];

	if (!x->n || x->l[0].kind != PT_LOOP_VECTOR || jst->ndims > 64 ||
	    n < 1)
		return 0;
	/* A sliding window's buffer lives at its store site: the compute
	 * loop runs within it. */
	if (is_sliding(S, f)) {
		store = sf->store_root ? -1 : site_loop(S, j,
							sf->store_at.loop);
		others = 1;
	}
	memset(&c, 0, sizeof(c));
	c.S = S;
	c.f = f;
	c.nb = jst->ndims;
	c.vd = x->l[0].orig;
	for (p = store + 1; p < x->n; p++) {
		const struct xloop *l = site_xloop(S, j, p);

		if (l->kind != PT_LOOP_VECTOR && l->kind != PT_LOOP_UNROLL &&
		    !(l->const_extent && l->extent <= 1))
			c.moving |= UINT64_C(1) << l->orig;
	}
	if ((c.moving >> c.vd) & 1)
		return 0;  /* every read along the vector moves */
	for (sidx = 0; sidx < m->nstages; sidx++)
		if (has_use(S, f, sidx) && &m->stages[sidx] != jst)
			others = 1;
	span = malloc((size_t)c.nb * sizeof(*span));
	inl = calloc((size_t)m->nfuncs + 1, 1);
	dims = cforms_new(c.nb, c.nb);
	c.cd = calloc((size_t)n, sizeof(*c.cd));
	cdc = calloc((size_t)n * (size_t)c.nb + 1, sizeof(*cdc));
	c.cs = calloc((size_t)n * (size_t)c.nb + 1, sizeof(*c.cs));
	c.elo = calloc((size_t)n, sizeof(double));
	c.ehi = calloc((size_t)n, sizeof(double));
	c.nhi = calloc((size_t)n, sizeof(double));
	c.konst = calloc((size_t)n, 1);
	c.rbad = calloc((size_t)n, 1);
	c.rlo = calloc((size_t)n, sizeof(double));
	c.rhi = calloc((size_t)n, sizeof(double));
	c.rcoef = calloc((size_t)n * (size_t)c.nb + 1, sizeof(*c.rcoef));
	if (!span || !inl || !dims || !c.cd || !cdc || !c.cs || !c.elo ||
	    !c.ehi || !c.nhi || !c.konst || !c.rbad || !c.rlo || !c.rhi ||
	    !c.rcoef) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (k = 0; k < m->nfuncs; k++)
		inl[k] = is_inlined(S, k);
	for (k = 0; k < n; k++)
		c.cd[k].coef = cdc + (size_t)k * (size_t)c.nb;
	/* The points of each of j's dims in one instance of f: its loops
	 * inside the compute loop. A guard tail makes the last instance
	 * shorter, but Halide's loop partitioning gives the others a steady
	 * state of the full, constant size (rp:39's seed 23 crashed so), so
	 * it counts as a constant too. A loop of j's own region has a
	 * constant size only when j is computed at a loop (and then one we
	 * do not know). */
	for (k = 0; k < c.nb; k++) {
		span[k] = 1;
		dims[k].coef[k] = 1;
	}
	for (p = S->site_pos[f] + 1; p < x->n; p++) {
		const struct xloop *l = site_xloop(S, j, p);
		double *sp = &span[l->orig];

		if (*sp < 0)
			continue;
		if (l->is_rvar)  /* not sized here: any constant */
			*sp = -1;
		else if (!l->const_extent)
			*sp = jsite ? -1 : 0;
		else if (*sp < 1e15)
			*sp *= (double)(l->extent > 1 ? l->extent : 1);
	}
	c.span = span;
	if (others) {
		for (k = 0; k < n; k++)
			c.cd[k].state = 3;
	} else {
		c.collect = 1;
		ret = cwalk(&c, inl, jst, dims, 0);
		c.collect = 0;
	}
	if (ret)
		goto out;
	pt_strided_extents(c.cd, c.cs, n, c.nb, span, c.konst, c.elo, c.ehi);
	for (k = 0; k < n; k++) {
		c.nhi[k] = c.ehi[k];
		c.elo[k] = rounded(S, f, k, c.elo[k]);
		c.ehi[k] = rounded(S, f, k, c.ehi[k]);
	}
	ret = cwalk(&c, inl, jst, dims, 0);
out:
	free(span);
	free(inl);
	free(dims);
	free(c.cd);
	free(cdc);
	free(c.cs);
	free(c.elo);
	free(c.ehi);
	free(c.nhi);
	free(c.konst);
	free(c.rbad);
	free(c.rlo);
	free(c.rhi);
	free(c.rcoef);
	if (ret < 0)
		return oom(err);
	if (!ret)
		return 0;
	if (c.smin == c.smax)
		snprintf(stride, sizeof(stride), "%.0f", c.smin);
	else
		snprintf(stride, sizeof(stride), "%.0f to %.0f", c.smin,
			 c.smax);
	return fail(err, m, f, -1,
		    "computed at f%d (%s) '%s', whose vectorized '%s' then "
		    "reads it at addresses fixed at compile time with a "
		    "stride of %s elements (Halide 14 tags the dense load "
		    "behind such a strided load with a whole vector's "
		    "alignment, and the misaligned load crashes); compute it "
		    "at a loop outside a serial loop of f%d that moves the "
		    "read, or at root", j, func_label(m, j),
		    sf->compute_at.loop, xname(&x->l[0]), stride, j);
}

/* Rules 3, 4 and 5: compute and store decisions. */
static int check_compute(struct state *S, struct pt_error *err)
{
	const struct pt_model *m = S->m;
	int f, i, g, steps, ret;

	for (f = 0; f < m->nfuncs; f++) {
		const struct pt_sched_func *sf = &S->s->funcs[f];
		const struct pt_func *fn = &m->funcs[f];
		int jf;

		S->site_pos[f] = -1;
		switch (sf->compute) {
		case PT_COMPUTE_ROOT:
			continue;
		case PT_COMPUTE_INLINE:
			if (fn->is_output)
				return fail(err, m, f, -1,
					    "an output cannot be inlined "
					    "(outputs are computed at root)");
			if (!fn->can_inline)
				return fail(err, m, f, -1,
					    "cannot be inlined (it has "
					    "updates or Halide forbids it)");
			for (i = 0; i < sf->nstages; i++)
				if (sf->stages[i].ndirs)
					return fail(err, m, f, i,
						    "an inlined Func takes no "
						    "directives");
			continue;
		case PT_COMPUTE_AT:
			break;
		default:
			return fail(err, m, f, -1,
				    "unknown compute decision %d",
				    (int)sf->compute);
		}
		if (fn->is_output)
			return fail(err, m, f, -1,
				    "an output must be computed at root");
		jf = sf->compute_at.func;
		if (jf < 0 || jf >= m->nfuncs)
			return fail(err, m, f, -1,
				    "compute_at names Func f%d, which does "
				    "not exist", jf);
		if (jf <= f)
			return fail(err, m, f, -1,
				    "compute_at f%d (%s), which is not a "
				    "consumer (a site Func comes after the "
				    "Func in topological order)", jf,
				    func_label(m, jf));
	}
	for (f = 0; f < m->nfuncs; f++) {
		const struct pt_sched_func *sf = &S->s->funcs[f];
		int jf = sf->compute_at.func;
		const struct xloop *l;

		if (sf->compute != PT_COMPUTE_AT)
			continue;
		if (is_inlined(S, jf))
			return fail(err, m, f, -1,
				    "compute_at f%d (%s), which is inlined",
				    jf, func_label(m, jf));
		S->site_pos[f] = site_loop(S, jf, sf->compute_at.loop);
		if (S->site_pos[f] < 0)
			return fail(err, m, f, -1,
				    "compute_at f%d (%s) '%s', which is not a "
				    "loop of its last stage (stage %d)", jf,
				    func_label(m, jf),
				    sf->compute_at.loop ? sf->compute_at.loop :
				    "(none)", last_stage(m, jf));
		l = site_xloop(S, jf, S->site_pos[f]);
		if (l->kind == PT_LOOP_VECTOR)
			return fail(err, m, f, -1,
				    "compute_at f%d (%s) '%s', a vectorized "
				    "loop", jf, func_label(m, jf),
				    sf->compute_at.loop);
	}
	/* Compute sites form chains that end at root. */
	for (f = 0; f < m->nfuncs; f++) {
		for (g = f, steps = 0;
		     S->s->funcs[g].compute == PT_COMPUTE_AT;
		     g = S->s->funcs[g].compute_at.func)
			if (++steps > m->nfuncs)
				return fail(err, m, f, -1,
					    "compute_at sites form a cycle");
	}
	find_uses(S);
	if ((ret = check_inline_chains(S, err)))
		return ret;
	for (f = 0; f < m->nfuncs; f++) {
		if (S->s->funcs[f].compute != PT_COMPUTE_AT)
			continue;
		if ((ret = check_compute_at(S, f, err)) ||
		    (ret = check_vector_site(S, f, err)) ||
		    (ret = check_store(S, f, err)) ||
		    (ret = check_sliding(S, f, err)))
			return ret;
	}
	for (f = 0; f < m->nfuncs; f++)
		if (!is_inlined(S, f) &&
		    ((ret = check_one_element(S, f, err)) ||
		     (ret = check_unrolled_tail(S, f, err))))
			return ret;
	for (f = 0; f < m->nfuncs; f++)
		if (S->s->funcs[f].compute == PT_COMPUTE_AT &&
		    (ret = check_const_strided(S, f, err)))
			return ret;
	return 0;
}

int pt_sched_check(const struct pt_model *m, const struct pt_sched *s,
		   struct pt_error *err)
{
	struct state S;
	struct rules r;
	char a[33], b[33];
	int f, i, ret = 0;

	if (!m || !s)
		return pt_error_set(err, PT_EINVAL, "no model or schedule");
	if (memcmp(m->key, s->key, sizeof(m->key))) {
		pt_hash_hex(s->key, a);
		pt_hash_hex(m->key, b);
		return pt_error_set(err, PT_EMISMATCH,
				    "the schedule is for key %s, the model's "
				    "key is %s", a, b);
	}
	if (s->nfuncs != m->nfuncs || (s->nfuncs && !s->funcs))
		return pt_error_set(err, PT_EMISMATCH,
				    "the schedule has %d Funcs, the model %d",
				    s->nfuncs, m->nfuncs);
	for (f = 0; f < m->nfuncs; f++)
		if ((ret = check_func_stage(m, s, f, 0, err)))
			return ret;

	memset(&S, 0, sizeof(S));
	S.m = m;
	S.s = s;
	S.words = (m->nstages + 63) / 64;
	S.exact = calloc((size_t)m->nfuncs + 1, 1);
	S.nests = calloc((size_t)m->nstages + 1, sizeof(*S.nests));
	S.site_pos = calloc((size_t)m->nfuncs + 1, sizeof(*S.site_pos));
	S.uses = calloc((size_t)m->nfuncs * (size_t)S.words + 1,
			sizeof(*S.uses));
	S.pdone = calloc((size_t)m->nfuncs + 1, 1);
	S.pmask = calloc((size_t)m->nfuncs + 1, sizeof(*S.pmask));
	S.ibound = calloc((size_t)m->nfuncs + 1, sizeof(*S.ibound));
	if (!S.exact || !S.nests || !S.site_pos || !S.uses || !S.pdone ||
	    !S.pmask || !S.ibound) {
		ret = oom(err);
		goto out;
	}
	pt_model_exact_funcs(m, S.exact);
	r.exact = S.exact;
	for (f = 0; f < m->nfuncs && !ret; f++)
		for (i = 0; i < m->funcs[f].nstages && !ret; i++)
			ret = replay(m, s, f, i, &r,
				     &S.nests[m->funcs[f].first_stage + i],
				     err);
	if (!ret)
		ret = check_compute(&S, err);
out:
	if (S.nests)
		for (i = 0; i < m->nstages; i++)
			xnest_release(&S.nests[i]);
	free(S.nests);
	free(S.exact);
	free(S.site_pos);
	free(S.uses);
	free(S.pdone);
	free(S.pmask);
	if (S.ibound)
		for (f = 0; f < m->nfuncs; f++)
			free(S.ibound[f]);
	free(S.ibound);
	bctx_release(S.broot);
	free(S.broot);
	return ret;
}
