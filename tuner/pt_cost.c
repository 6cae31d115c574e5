/* pt_cost.c: the cost model (pt_cost.h; doc/cost-model.md).
 *
 * The terms are sums over the stages of a schedule; each is a count of
 * something whose cost is roughly constant on one machine (an operation on
 * a native vector, a cache line moved, an allocation, a task launched),
 * divided by the speedup the stage gets from its parallel loops. Loads are
 * counted from the loop nests, after the compiler's hoisting of the loads
 * that do not move along the loops just outside the vector loop. The
 * linear layer weighs the terms, fitted on the logs of the runtimes; the
 * trees may correct what a weighted sum cannot express, on inputs that do
 * not depend on the pipeline's size.
 */
#include "protune/pt_cost.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "protune/pt_footprint.h"
#include "protune/pt_gbt.h"
#include "protune/pt_randsched.h"
#include "../common/pt_text.h"

#include "pt_keep_int.h"

#define L2_BYTES (2048.0 * 1024.0)  /* per core; Sapphire Rapids */
#define PAGE_BYTES 4096.0
#define STACK_MAX 16384.0  /* larger buffers are malloc'd (Halide 14) */
/* The C library's allocator (glibc's, as the pipelines run here): */
#define MMAP_MAX (32.0 * 1024 * 1024)  /* larger blocks are always mapped
					* afresh */
#define MMAP_MIN (128.0 * 1024)        /* the first mapping threshold */
#define TOP_PAD (128.0 * 1024)         /* kept at the top when trimming */
#define HEAP_FUNCS 64                  /* Funcs heap_faults follows */
#define HEAP_ALLOCS (4 * HEAP_FUNCS)   /* their blocks, 4 values each */

struct pt_cost {
	double coef[PT_TERM_COUNT];
	struct pt_gbt *gbt;   /* NULL: linear only */
};

static const char *const term_names[PT_TERM_COUNT] = {
	"stages", "vector_ops", "scalar_ops", "vector_loads",
	"gathers", "broadcasts", "scalar_loads", "stores", "update_stores",
	"lines", "l2_lines", "spill_lines", "allocs", "pages", "tasks",
	"loops", "productions", "strided_loads", "boundary_gathers",
};

const char *pt_term_name(int term)
{
	return term >= 0 && term < PT_TERM_COUNT ? term_names[term] : NULL;
}

/* --- terms ---------------------------------------------------------------- */

static int type_bytes(int tc)
{
	static const int b[PT_TC_COUNT] = { 1, 1, 2, 4, 8, 4, 8 };

	return tc >= 0 && tc < PT_TC_COUNT ? b[tc] : 4;
}

/* The machine's cores from the model's machine params
 * ("cores,llc_bytes,balance"). */
static double machine_cores(const struct pt_model *m)
{
	double c = m->machine_params ? strtod(m->machine_params, NULL) : 0;

	return c >= 1 && c < 1e5 ? floor(c) : 1;
}

/* The speedup of spreading `tasks` equal tasks over `cores`. */
static double speedup(double tasks, double cores)
{
	if (!(tasks > 1))
		return 1;
	return tasks / ceil(tasks / cores);
}

/* A fraction of traffic that misses a cache of `cap` bytes when the data
 * reused spans `ws` bytes: smooth, 0 far below, 1 far above. */
static double miss(double ws, double cap)
{
	return ws > 0 ? ws / (ws + cap) : 0;
}

static int is_inlined(const double *rows, const struct pt_model *m, int func)
{
	int s = m->funcs[func].first_stage;

	return !(rows[(size_t)s * PT_FEAT_COUNT + PT_FEAT_NUM_PRODUCTIONS] > 0);
}

/* What one transcendental call costs, in instructions, as Halide 14
 * compiles it for x86 (doc/cost-model.md, "Transcendental calls"):
 * exp_f32, log_f32 and pow_f32 become polynomials of vector arithmetic,
 * `reg` instructions a register of 32-bit floats; the others (the f64
 * ones, sin, atan2, tanh...) call libm once a lane, `lane` instructions
 * each with its spills. Counted in the vector loops Halide 14 emits for
 * f(x) = op(a(x)) and, for libm, under callgrind (the f64 figures are
 * exp's, log's and pow's). 0 and 0: not a transcendental (an intrinsic
 * of one instruction, say). */
struct transcendental {
	const char *name;
	int reg, lane;
};

static const struct transcendental transcendentals[] = {
	{ "exp_f32", 21, 0 },   { "log_f32", 27, 0 },   { "pow_f32", 67, 0 },
	{ "exp", 0, 62 },       { "log", 0, 62 },       { "pow", 0, 138 },
	{ "sin", 0, 34 },       { "cos", 0, 34 },       { "tan", 0, 88 },
	{ "asin", 0, 47 },      { "acos", 0, 60 },      { "atan", 0, 64 },
	{ "atan2", 0, 143 },    { "sinh", 0, 115 },     { "cosh", 0, 81 },
	{ "tanh", 0, 111 },     { "asinh", 0, 103 },    { "acosh", 0, 101 },
	{ "atanh", 0, 112 },
};

/* op: a histogram entry ("call.exp_f32"). The first entry of the table
 * that is the whole name, or its base before the type suffix, holds. */
static void transcendental_cost(const char *op, int *reg, int *lane)
{
	size_t i, n;

	*reg = *lane = 0;
	if (strncmp(op, "call.", 5))
		return;
	op += 5;
	for (i = 0; i < sizeof(transcendentals) / sizeof(transcendentals[0]);
	     i++) {
		const struct transcendental *t = &transcendentals[i];

		if (t->name[0] != op[0])
			continue;
		n = strlen(t->name);
		if (!strncmp(op, t->name, n) && (op[n] == '_' || !op[n])) {
			*reg = t->reg;
			*lane = t->lane;
			return;
		}
	}
}

/* --- loads, with loop-invariant code motion ----------------------------------
 *
 * The loads of a stage are walked through the Funcs inlined into it, as
 * the features do, but here each load (a leaf: a read of a Func that is
 * not inlined, or of an input) is followed to the loops it depends on. A
 * load that does not move along the loops just outside the vector loop is
 * hoisted out of them by the compiler (LLVM's loop-invariant code
 * motion): it runs once per iteration of the innermost loop it depends on,
 * not once per vector. Unrolled loops it depends on do not stop the
 * hoisting while their copies fit in registers (at most 16). An update's
 * reads and stores of its own Func, when the loops just outside the
 * vector loop are reduction loops, are hoisted the same way: the
 * accumulator stays in a register.
 *
 * What the walk needs of the model (the accesses grouped by how they
 * move, their coefficients as doubles, their element sizes, the inputs'
 * sizes) is the same for every schedule: struct pt_cost_prep holds it
 * (below), so that a schedule's walk is only the arithmetic that depends
 * on its loops and on which Funcs it inlines.
 */
#define WALK_MAXDIMS PT_FP_MAXDIMS
#define INL_MAX 256   /* Funcs whose per-Func flags and speedups are kept
		       * in arrays */
#define WALK_BUDGET 4096   /* accesses visited per stage */
#define WALK_SITE_MAX 32   /* consumer loops around a compute site walked */
#define WALK_UNROLL_REGS 16
#define LLVM_VEC_MIN 16    /* iterations of a loop LLVM vectorizes */
#define LLVM_VEC_BYTES 32  /* the vectors it prefers on x86 */
#define STREAM_ROWS 32     /* streams an L2 streamer follows at once
			    * (Intel: 32, one per 4 KiB page) */
#define BURST_BYTES 256.0  /* a run along a row shorter than this (4
			    * lines) before the walk turns to another row
			    * is a short burst (burst_restarts()) */
#define BURST_STREAMS 16.0 /* rows a production's reads can interleave in
			    * short bursts before the prefetchers lose
			    * track of them */

/* How one coordinate of an access moves with the loop dims of the stage
 * being costed: coef[d] per dim of that stage, plus, not affinely, with
 * the dims marked in var (a partial coordinate's varying offset), unless
 * `any` (not affine, or read through something that is not). */
struct dep {
	int any;
	double coef[WALK_MAXDIMS];
	unsigned char var[WALK_MAXDIMS];
	/* edges of the image where the coordinate, or one it is read
	 * through, is clamped and the reads go past the clamp (0 to 2):
	 * see boundary() */
	unsigned char edges;
};

/* --- what the terms need of the model ------------------------------------- */

/* One operation of a stage's histogram other than loads and calls, or
 * the instructions of its polynomial calls: the count per point and the
 * width, 1 << b bytes a lane. */
struct cp_op {
	double n;
	int b;
};

/* A dim of a stage that a coordinate moves with: by ce (the rational
 * coefficient as a double), or not affinely (ve); src is the pure var of
 * the stage's Func the dim is, -1 for an RVar. */
struct cp_term {
	double ce;
	int src;
	int ve;
};

/* A coordinate of an access: `any` (neither affine nor partial), else its
 * terms, the dims with a non-zero coefficient or varying, in dim order. */
struct cp_coord {
	int any;
	int tm0, ntm;         /* in prep->tm */
};

/* Accesses of a stage next to each other that move alike (same_motion():
 * a stencil's taps), walked as one. */
struct cp_group {
	double cnt;           /* their counts, summed in order */
	double far;           /* an input's miss() against L2 */
	double in_bytes;      /* an input's estimated size */
	int n;                /* coordinates followed (<= WALK_MAXDIMS) */
	int co;               /* the first in prep->co and prep->root */
	int func;             /* reads (or stores) a Func; else an input */
	int producer;
	int store;
	int through;          /* a read of another Func: walked through it
			       * when the schedule inlines it */
	int bytes;            /* bytes an element, >= 1 */
	unsigned mask, across;/* dep_masks() of its root deps */
};

/* Lane counts whose op_counts() are made once per stage: 1 to 128. */
#define CP_LANES 8

/* Per stage. */
struct cp_stage {
	/* op_counts() per point, but for the vector registers, which
	 * depend on the lanes: instructions of scalar code, and those of
	 * its libm calls, made once a lane in vector code too */
	double scalars, libm;
	int op0, nop;         /* its other operations and its transcendental
			       * polynomials in prep->op */
	int call0, ncall;     /* its calls of one instruction in prep->call */
	unsigned sizes;       /* bit b: an operation 1 << b bytes wide */
	int fb;               /* bytes of its Func's first value (4: none) */
	int grp0, ngrp;       /* its access groups in prep->grp */
	int eff0, neff;       /* Funcs it accesses (pt_cost_terms()'s
			       * inl_eff), in prep->fn */
	int rd0, nrd;         /* other Funcs it reads (promoted()), in
			       * prep->fn */
	double vr[CP_LANES];  /* op_counts()'s vector registers for 1 << i
			       * lanes, made once (prep_lanes()) */
};

struct pt_cost_prep {
	const struct pt_model *m;
	double cores;         /* machine_cores() */
	int vbytes;           /* bytes of a native vector */
	struct cp_stage *st;  /* m->nstages */
	struct cp_op *op;
	double *call;
	struct cp_group *grp;
	struct cp_coord *co;
	/* Parallel to co: a group's coordinates as deps on the dims of its
	 * own stage, when it is the stage costed (its ndims at most
	 * WALK_MAXDIMS; else unused). */
	struct dep *root;
	struct cp_term *tm;
	int *fn;
	/* heap_faults(), when m->nfuncs <= HEAP_FUNCS: each Func's blocks
	 * and their shares of its bytes, and the (reader, Func read) pairs
	 * in the order the uses are passed on. */
	int *nblk;
	double (*share)[4];
	int (*edge)[2];
	int nedge;
	double thr0;          /* mapping threshold the pipeline starts with */
};

/* The dims an access moves with (all when a coordinate is not affine),
 * and those that move it across rows, in a coordinate other than its
 * first (all when one is not affine). */
static void dep_masks(const struct dep *dep, int n, int nd, unsigned *mask,
		      unsigned *across)
{
	int k, i;

	*mask = *across = 0;
	for (k = 0; k < n; k++) {
		if (dep[k].any) {
			*mask = *across = ~0u;
			return;
		}
		for (i = 0; i < nd; i++)
			if (dep[k].coef[i] != 0 || dep[k].var[i]) {
				*mask |= 1u << i;
				if (k > 0)
					*across |= 1u << i;
			}
	}
}

static void op_counts_of(const struct pt_cost_prep *p,
			 const struct cp_stage *cs, double lanes,
			 double *vregs, double *scalars);

/* Stage s's op_counts() for 1, 2, 4 ... 128 lanes. */
static void prep_lanes(struct pt_cost_prep *p, int s)
{
	struct cp_stage *cs = &p->st[s];
	double scal;
	int i;

	for (i = 0; i < CP_LANES; i++)
		op_counts_of(p, cs, (double)(1 << i), &cs->vr[i], &scal);
}

/* What op_counts() needs of stage s: the scalar and libm counts summed in
 * its order (the histogram, then the calls), and the operations whose
 * registers depend on the lanes, in that order too: the histogram's and
 * the polynomials' (transcendental_cost()), then the calls of one
 * instruction. */
static void prep_ops(struct pt_cost_prep *p, const struct pt_features *fx,
		     int s, int *nop, int *ncall)
{
	const struct pt_stage *st = &p->m->stages[s];
	const struct pt_func *f = &p->m->funcs[st->func];
	const double *algo = pt_features_algo(fx, s);
	struct cp_stage *cs = &p->st[s];
	int op, tc, i, b;

	cs->fb = f->ntypes ? (f->types[0].bits + 7) / 8 : 4;
	cs->op0 = *nop;
	for (op = 0; op < PT_OP_COUNT; op++)
		for (tc = 0; tc < PT_TC_COUNT; tc++) {
			double n = algo[PT_ALGO_OP(op, tc)];

			if (n <= 0 || op == PT_OP_LOAD || op == PT_OP_CALL)
				continue;
			cs->scalars += n;
			for (b = 0; (1 << b) < type_bytes(tc); b++)
				;
			p->op[*nop].n = n;
			p->op[(*nop)++].b = b;
			cs->sizes |= 1u << b;
		}
	cs->call0 = *ncall;
	for (tc = 0; tc < PT_TC_COUNT; tc++)
		if (algo[PT_ALGO_OP(PT_OP_CALL, tc)] > 0)
			break;
	for (i = 0; tc < PT_TC_COUNT && i < st->nops; i++) {
		double n = (double)st->ops[i].count;
		int reg, lane;

		if (strncmp(st->ops[i].name, "call.", 5))
			continue;
		transcendental_cost(st->ops[i].name, &reg, &lane);
		if (reg) {
			/* A polynomial on 32-bit floats. */
			cs->scalars += n * reg;
			p->op[*nop].n = n * reg;
			p->op[(*nop)++].b = 2;
			cs->sizes |= 1u << 2;
		} else if (lane) {
			cs->scalars += n * lane;
			cs->libm += n * lane;
		} else {
			cs->scalars += n;
			p->call[(*ncall)++] = n;
		}
	}
	cs->nop = *nop - cs->op0;
	cs->ncall = *ncall - cs->call0;
}

/* Do accesses a and b read the same producer with the same coefficients
 * and varying dims (any offsets and clamps)? */
static int same_motion(const struct pt_access *a, const struct pt_access *b,
		       int ndims)
{
	int k, e;

	if (a->kind != b->kind || a->producer != b->producer ||
	    a->value_index != b->value_index || a->is_store || b->is_store ||
	    a->ncoords != b->ncoords)
		return 0;
	for (k = 0; k < a->ncoords; k++) {
		const struct pt_coord *x = &a->coords[k], *y = &b->coords[k];

		if (x->affine != y->affine ||
		    pt_coord_partial(x) != pt_coord_partial(y) ||
		    !(x->affine || pt_coord_partial(x)) || !x->coef ||
		    !y->coef)
			return 0;
		for (e = 0; e < ndims; e++)
			if (x->coef[e].num != y->coef[e].num ||
			    x->coef[e].den != y->coef[e].den ||
			    (!x->affine && x->varies[e] != y->varies[e]))
				return 0;
	}
	return 1;
}

/* Coordinate k of access ac of stage st as group g's: its terms, and its
 * dep when st is the stage costed. */
static void prep_coord(struct pt_cost_prep *p, const struct pt_stage *st,
		       const struct pt_access *ac, const struct cp_group *g,
		       int k, int *ntm)
{
	const struct pt_coord *c = &ac->coords[k];
	struct cp_coord *co = &p->co[g->co + k];
	struct dep *dep = &p->root[g->co + k];
	int e;

	co->tm0 = *ntm;
	if (!(c->affine && c->coef) && !pt_coord_partial(c)) {
		co->any = dep->any = 1;
		return;
	}
	for (e = 0; e < st->ndims; e++) {
		struct cp_term *t = &p->tm[*ntm];

		t->ve = !c->affine && c->varies[e];
		if (!c->coef[e].num && !t->ve)
			continue;
		t->ce = (double)c->coef[e].num / (double)c->coef[e].den;
		t->src = st->dims[e].is_rvar ? -1 : st->dims[e].index;
		(*ntm)++;
		/* as the stage costed: its own dims */
		if (dep->any || st->ndims > WALK_MAXDIMS)
			continue;
		if (t->ve)
			dep->var[e] = 1;
		else
			dep->coef[e] += t->ce;
	}
	co->ntm = *ntm - co->tm0;
}

/* The edges (0 to 2) where coordinate k of access ac of stage st is
 * clamped and the stage, over its estimated bounds, reads past the clamp. */
static int clamp_edges(const struct pt_stage *st, const struct pt_access *ac,
		       int k)
{
	const struct pt_coord *c = &ac->coords[k];
	double lo, hi;
	int e;

	if (!c->has_clamp_min && !c->has_clamp_max)
		return 0;
	if (!(c->affine && c->coef) && !pt_coord_partial(c))
		return 0;
	lo = (double)c->off_min.num / (double)c->off_min.den;
	hi = (double)c->off_max.num / (double)c->off_max.den;
	for (e = 0; e < st->ndims; e++) {
		double ce = (double)c->coef[e].num / (double)c->coef[e].den;
		double a = ce * (double)st->dims[e].min;
		double b = ce * (double)(st->dims[e].min +
					 st->dims[e].extent - 1);

		lo += a < b ? a : b;
		hi += a < b ? b : a;
	}
	return (c->has_clamp_min && lo < (double)c->clamp_min) +
		(c->has_clamp_max && hi > (double)c->clamp_max);
}

/* The access groups of stage s (walk_stage()). */
static void prep_groups(struct pt_cost_prep *p, int s, int *ngrp, int *nco,
			int *ntm)
{
	const struct pt_model *m = p->m;
	const struct pt_stage *st = &m->stages[s];
	struct cp_stage *cs = &p->st[s];
	int a, k, d;

	cs->grp0 = *ngrp;
	for (a = 0; a < st->naccesses; a++) {
		const struct pt_access *ac = &st->accesses[a];
		struct cp_group *g = &p->grp[(*ngrp)++];
		int a0 = a, b;

		g->cnt = ac->count;
		while (a + 1 < st->naccesses &&
		       same_motion(ac, &st->accesses[a + 1], st->ndims))
			g->cnt += st->accesses[++a].count;
		g->n = ac->ncoords < WALK_MAXDIMS ? ac->ncoords : WALK_MAXDIMS;
		g->co = *nco;
		*nco += g->n;
		g->func = ac->kind == PT_ACCESS_FUNC;
		g->producer = ac->producer;
		g->store = ac->is_store;
		g->through = g->func && !ac->is_store &&
			ac->producer != st->func;
		if (g->func) {
			const struct pt_func *f = &m->funcs[ac->producer];
			int v = ac->value_index < f->ntypes ?
				ac->value_index : 0;

			g->bytes = f->ntypes ? (f->types[v].bits + 7) / 8 : 4;
		} else {
			const struct pt_input *ip = &m->inputs[ac->producer];
			double far;

			g->bytes = (ip->type.bits + 7) / 8;
			far = g->bytes;
			for (d = 0; d < ip->ndims; d++)
				far *= (double)(ip->est_extent &&
						ip->est_extent[d] > 0 ?
						ip->est_extent[d] : 1);
			g->far = miss(far, L2_BYTES);
			g->in_bytes = far;
		}
		if (g->bytes <= 0)
			g->bytes = 1;
		for (k = 0; k < g->n; k++) {
			struct dep *r = &p->root[g->co + k];

			prep_coord(p, st, ac, g, k, ntm);
			for (b = a0; b <= a; b++) {
				int ed = clamp_edges(st, &st->accesses[b], k);

				if (ed > r->edges)
					r->edges = (unsigned char)ed;
			}
		}
		dep_masks(&p->root[g->co], g->n,
			  st->ndims < WALK_MAXDIMS ? st->ndims : WALK_MAXDIMS,
			  &g->mask, &g->across);
	}
	cs->ngrp = *ngrp - cs->grp0;
}

/* Append f to the list from fn[first] to fn[*n] unless it is there. */
static void add_func(int *fn, int first, int *n, int f)
{
	int i;

	for (i = first; i < *n; i++)
		if (fn[i] == f)
			return;
	fn[(*n)++] = f;
}

/* The Funcs stage s accesses: all those below INL_MAX (inl_eff), and the
 * other Funcs it reads below min(nfuncs, INL_MAX) (promoted()). Each once:
 * what is done with them does not depend on how often. */
static void prep_funcs(struct pt_cost_prep *p, int s, int *nfn)
{
	const struct pt_model *m = p->m;
	const struct pt_stage *st = &m->stages[s];
	struct cp_stage *cs = &p->st[s];
	int a, n = m->nfuncs < INL_MAX ? m->nfuncs : INL_MAX;

	cs->eff0 = *nfn;
	for (a = 0; a < st->naccesses; a++)
		if (st->accesses[a].kind == PT_ACCESS_FUNC &&
		    st->accesses[a].producer < INL_MAX)
			add_func(p->fn, cs->eff0, nfn,
				 st->accesses[a].producer);
	cs->neff = *nfn - cs->eff0;
	cs->rd0 = *nfn;
	for (a = 0; a < st->naccesses; a++) {
		const struct pt_access *ac = &st->accesses[a];

		if (ac->kind == PT_ACCESS_FUNC && !ac->is_store &&
		    ac->producer < n && ac->producer != st->func)
			add_func(p->fn, cs->rd0, nfn, ac->producer);
	}
	cs->nrd = *nfn - cs->rd0;
}

/* heap_faults()'s blocks per Func (one per value of a Tuple, at most 4,
 * sized by the widths of its values) and the order in which it passes
 * the Funcs' last uses on: from the last Func back, each reader's to what
 * it reads, once per pair (a stencil reads its producer many times; the
 * reader's use does not change while it is passed on). */
static void prep_heap(struct pt_cost_prep *p)
{
	const struct pt_model *m = p->m;
	int nf = m->nfuncs, f, g, s, a, k, first;

	for (f = 0; f < nf; f++) {
		const struct pt_func *mf = &m->funcs[f];
		int nt = mf->ntypes > 4 ? 4 : mf->ntypes > 0 ? mf->ntypes : 1;
		int bits = 0;

		for (k = 0; k < nt && mf->ntypes > 0; k++)
			bits += mf->types[k].bits;
		for (k = 0; k < nt; k++)
			p->share[f][k] = bits ? (double)mf->types[k].bits /
				bits : 1.0 / nt;
		p->nblk[f] = nt;
	}
	for (g = nf - 1; g >= 0; g--) {
		first = p->nedge;
		for (s = m->funcs[g].first_stage;
		     s < m->funcs[g].first_stage + m->funcs[g].nstages; s++)
			for (a = 0; a < m->stages[s].naccesses; a++) {
				const struct pt_access *ac =
					&m->stages[s].accesses[a];

				if (ac->kind != PT_ACCESS_FUNC ||
				    ac->producer < 0 || ac->producer >= g)
					continue;
				for (k = first; k < p->nedge &&
				     p->edge[k][1] != ac->producer; k++)
					;
				if (k < p->nedge)
					continue;
				p->edge[p->nedge][0] = g;
				p->edge[p->nedge++][1] = ac->producer;
			}
	}
}

/* calloc of n (at least 1) elements of size sz; NULL sets *bad. */
static void *prep_alloc(size_t n, size_t sz, int *bad)
{
	void *q = calloc(n ? n : 1, sz);

	if (!q)
		*bad = 1;
	return q;
}

/* RunGen (the harness the samples are measured in) allocates each input at
 * its estimate, asks the pipeline what it reads, and replaces an input
 * whose estimate does not cover that by one that does: the first one is
 * freed, and when glibc had mapped it (all of them are, from 128 KiB to
 * MMAP_MAX) its size becomes the mapping threshold the pipeline starts
 * with. */
static double rungen_threshold(const struct pt_model *m)
{
	struct pt_fp *fp = NULL;
	struct pt_fp_acc acc;
	struct pt_box *reg, dims;
	struct pt_error err = PT_ERROR_INIT;
	double thr = MMAP_MIN;
	int s, n, d;

	if (pt_fp_new(m, &fp, &err))
		return thr;
	reg = calloc((size_t)m->nfuncs + 1, sizeof(*reg));
	if (!reg || pt_fp_acc_init(&acc, fp)) {
		free(reg);
		pt_fp_free(fp);
		return thr;
	}
	pt_fp_root_regions(fp, &acc, reg);
	pt_fp_acc_clear(&acc);
	for (s = 0; s < m->nstages; s++) {
		pt_fp_stage_dims(fp, s, &reg[m->stages[s].func], &dims);
		pt_fp_reads(fp, s, &dims, NULL, 0, &acc);
	}
	for (n = m->nfuncs; n < pt_fp_nnodes(fp); n++) {
		const struct pt_box *est = pt_fp_node_region(fp, n);
		const struct pt_box *rd = pt_fp_acc_get(&acc, n);
		int nd = pt_fp_node_ndims(fp, n), out = 0;
		double b;

		if (!rd || nd < 1)
			continue;
		/* outside the estimate, or strides that differ: the query
		 * answers with the dense strides of what is read */
		for (d = 0; d < nd; d++)
			if (rd->lo[d] < est->lo[d] || rd->hi[d] > est->hi[d] ||
			    (d < nd - 1 && rd->hi[d] - rd->lo[d] !=
			     est->hi[d] - est->lo[d]))
				out = 1;
		b = pt_box_points(est, nd) * pt_fp_node_bytes(fp, n);
		if (out && b >= MMAP_MIN && b <= MMAP_MAX && b + PAGE_BYTES > thr)
			thr = b + PAGE_BYTES;
	}
	pt_fp_acc_release(&acc);
	free(reg);
	pt_fp_free(fp);
	return thr;
}

int pt_cost_prep_new(const struct pt_model *m, const struct pt_features *fx,
		     struct pt_cost_prep **out, struct pt_error *err)
{
	struct pt_cost_prep *p = calloc(1, sizeof(*p));
	/* bounds: accesses, their coordinates and terms, ops */
	size_t nacc = 0, nco = 0, ntm = 0, nops = 0;
	/* filled so far */
	int op = 0, call = 0, grp = 0, co = 0, tm = 0, fn = 0;
	int s, a, bad = !p, heap;

	*out = NULL;
	if (!p)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	p->m = m;
	p->cores = machine_cores(m);
	p->vbytes = pt_model_vector_lanes(m, 8);  /* lanes of bytes */
	for (s = 0; s < m->nstages; s++) {
		const struct pt_stage *st = &m->stages[s];

		nacc += (size_t)st->naccesses;
		nops += (size_t)st->nops;
		for (a = 0; a < st->naccesses; a++) {
			int n = st->accesses[a].ncoords;

			n = n < WALK_MAXDIMS ? n : WALK_MAXDIMS;
			nco += (size_t)n;
			ntm += (size_t)n * (size_t)st->ndims;
		}
	}
	heap = m->nfuncs <= HEAP_FUNCS;
	p->st = prep_alloc((size_t)m->nstages, sizeof(*p->st), &bad);
	p->op = prep_alloc((size_t)m->nstages * PT_OP_COUNT * PT_TC_COUNT +
			   nops, sizeof(*p->op), &bad);
	p->call = prep_alloc(nops, sizeof(*p->call), &bad);
	p->grp = prep_alloc(nacc, sizeof(*p->grp), &bad);
	p->co = prep_alloc(nco, sizeof(*p->co), &bad);
	p->root = prep_alloc(nco, sizeof(*p->root), &bad);
	p->tm = prep_alloc(ntm, sizeof(*p->tm), &bad);
	p->fn = prep_alloc(2 * nacc, sizeof(*p->fn), &bad);
	p->nblk = prep_alloc(heap ? (size_t)m->nfuncs : 0, sizeof(*p->nblk),
			     &bad);
	p->share = prep_alloc(heap ? (size_t)m->nfuncs : 0, sizeof(*p->share),
			      &bad);
	p->edge = prep_alloc(heap ? nacc : 0, sizeof(*p->edge), &bad);
	if (bad) {
		pt_cost_prep_free(p);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	for (s = 0; s < m->nstages; s++) {
		prep_ops(p, fx, s, &op, &call);
		prep_groups(p, s, &grp, &co, &tm);
		prep_funcs(p, s, &fn);
	}
	for (s = 0; s < m->nstages; s++)
		prep_lanes(p, s);
	if (heap) {
		prep_heap(p);
		p->thr0 = rungen_threshold(m);
	}
	*out = p;
	return 0;
}

void pt_cost_prep_free(struct pt_cost_prep *p)
{
	if (!p)
		return;
	free(p->st);
	free(p->op);
	free(p->call);
	free(p->grp);
	free(p->co);
	free(p->root);
	free(p->tm);
	free(p->fn);
	free(p->nblk);
	free(p->share);
	free(p->edge);
	free(p);
}

/* --- terms, per schedule -------------------------------------------------- */

/* Per point of stage cs: native vector registers an operation of width V
 * lanes occupies, summed over its arithmetic, its polynomials and its
 * calls of one instruction (loads and stores apart), plus V times the
 * instructions of its libm calls; and its scalar instructions. A call of
 * one instruction has the registers of the Func's type (the histogram
 * does not say the call's). */
static void op_counts_of(const struct pt_cost_prep *p,
			 const struct cp_stage *cs, double lanes,
			 double *vregs, double *scalars)
{
	double regs[4] = { 0 }, cregs;
	int i, b;

	for (b = 0; b < 4; b++)
		if (cs->sizes & 1u << b)
			regs[b] = ceil(lanes * (1 << b) / p->vbytes);
	*vregs = 0;
	for (i = 0; i < cs->nop; i++)
		*vregs += p->op[cs->op0 + i].n * regs[p->op[cs->op0 + i].b];
	if (cs->ncall) {
		cregs = ceil(lanes * (cs->fb > 0 ? cs->fb : 1) / p->vbytes);
		for (i = 0; i < cs->ncall; i++)
			*vregs += p->call[cs->call0 + i] * cregs;
	}
	*vregs += cs->libm * lanes;
	*scalars = cs->scalars;
}

/* op_counts_of(), from the stage's table when the lanes are a power of
 * two it holds (the same arithmetic, made once: prep_lanes()). */
static void op_counts(const struct pt_cost_prep *p, const struct cp_stage *cs,
		      double lanes, double *vregs, double *scalars)
{
	int n = lanes >= 1 && lanes < 1 << CP_LANES ? (int)lanes : 0;

	if (n && n == lanes && !(n & (n - 1))) {
		*vregs = cs->vr[__builtin_ctz((unsigned)n)];
		*scalars = cs->scalars;
		return;
	}
	op_counts_of(p, cs, lanes, vregs, scalars);
}

struct walk {
	const struct pt_cost_prep *p;
	const struct pt_features *fx;
	const struct pt_model *m;
	const double *rows;
	const struct pt_feat_loop *loops;
	int nloops;
	int vec;              /* the vector loop, -1 if none */
	int nd;               /* the costed stage's dims (<= WALK_MAXDIMS) */
	int vbytes;
	int budget;
	/* per vector (or per scalar point for sl), before hoisting is
	 * undone by the counts of vectors */
	double vl, ga, bc, sl, tail, us, bg;
	/* prefetch streams restarted (per vector, or per scalar point) on
	 * data too large for L2: see walk_leaf() */
	double jl;
	/* the rows the production's reads interleave in short bursts, and
	 * the lines of those bursts (per vector): see burst_restarts() */
	double b_rows, b_runs;
	double nvs;           /* the stage's vectors and scalars */
	/* per Func (NULL, or indices >= INL_MAX: none): its buffer lives
	 * in registers inside the costed stage (promoted()) */
	const unsigned char *reg;
	/* Funcs below it are not decided yet (a partial state): their
	 * rows are 0, but they are at root, not inlined */
	int first;
	/* per dim of the costed stage: the loop that Halide partitions for
	 * a clamp of a coordinate moving with it, as a position in the nest
	 * from root, and the share of the points in one boundary iteration
	 * of it (partitions()) */
	int ppos[WALK_MAXDIMS];
	double pshare[WALK_MAXDIMS];
	/* The loops around the costed stage's productions when its Func is
	 * computed inside a consumer: that consumer's last stage's loops
	 * from the outermost to the compute site (nsite of them, 0 at root),
	 * and the dims of that stage its reads of the Func move with
	 * (site_mask()) */
	const struct pt_feat_loop *site;
	int nsite;
	unsigned smask;
	/* per loop of site: the costed stage's dim its region moves along
	 * (the pure dim of the same index), or -1 (site_dims()) */
	int sdim[WALK_SITE_MAX];
};

/* The lines a walk touches: up to SWEEP_MAX loops, each a byte step and
 * an extent, over the producer's buffer (row-major, dim 0 innermost). */
#define SWEEP_MAX 8
#define L1_SETS 64
#define L1_WAYS 12
struct sweep {
	int n, ok;
	double pitch[WALK_MAXDIMS];
	int ncoords;
	int64_t step[SWEEP_MAX], ext[SWEEP_MAX];
};

/* Start the walk of group g: the row pitch of each coordinate of what it
 * reads (a Func's realization, an input's estimate); not ok when the
 * producer has no box (inlined). */
static void sweep_init(const struct walk *w, const struct cp_group *g,
		       struct sweep *sw)
{
	const struct pt_box *b = pt_features_storage(w->fx, g->func ?
		g->producer : w->m->nfuncs + g->producer);
	double p = g->bytes;
	int k;

	sw->n = 0;
	sw->ok = b != NULL;
	sw->ncoords = g->n;
	for (k = 0; k < g->n && b; k++) {
		sw->pitch[k] = p;
		p *= (double)(b->hi[k] - b->lo[k] + 1);
	}
}

/* Add loop l to the walk: its byte step, from how each coordinate moves
 * with its dim; a coordinate that is not affine in it ends the walk. */
static void sweep_add(struct sweep *sw, const struct dep *dep,
		      const struct pt_feat_loop *l)
{
	double st = 0;
	int k;

	if (!sw->ok)
		return;
	if (sw->n == SWEEP_MAX) {
		sw->ok = 0;
		return;
	}
	for (k = 0; k < sw->ncoords; k++) {
		if (dep[k].any || dep[k].var[l->dim]) {
			sw->ok = 0;
			return;
		}
		st += dep[k].coef[l->dim] * (double)l->stride * sw->pitch[k];
	}
	sw->step[sw->n] = (int64_t)fabs(st);
	sw->ext[sw->n] = l->extent;
	sw->n++;
}

/* Whether the lines of the first n loops of the walk fit L1: at most
 * L1_WAYS lines in any of its L1_SETS sets. Loops that step less than a
 * line make one contiguous span (a vector, a run along a row); the
 * others place copies of it. */
static int sweep_fits_l1(const struct sweep *sw, int n)
{
	int64_t span = 1, pts = 1, i, nl;
	int per[L1_SETS] = { 0 }, k;

	if (!sw->ok)
		return 0;
	for (k = 0; k < n; k++) {
		if (sw->step[k] < 64)
			span += sw->step[k] * (sw->ext[k] - 1);
		else if ((pts *= sw->ext[k]) > L1_SETS * L1_WAYS)
			return 0;
	}
	nl = (span + 63) / 64;
	if (pts * nl > L1_SETS * L1_WAYS)
		return 0;
	for (i = 0; i < pts; i++) {
		int64_t a = 0, r = i, t;

		for (k = 0; k < n; k++) {
			if (sw->step[k] < 64)
				continue;
			a += (r % sw->ext[k]) * sw->step[k];
			r /= sw->ext[k];
		}
		for (t = 0; t < nl; t++) {
			if (++per[(a / 64 + t) % L1_SETS] > L1_WAYS)
				return 0;
		}
	}
	return 1;
}

/* How far from the core (0 to 1) the data group g reads lives: its
 * producer's realization (or the input) against L2. A producer not
 * decided yet (partial pricing) is taken to be near: it may still be
 * computed inside the reader's tiles, and pricing what is not decided
 * optimistically is what the searches' partial states are priced for
 * (doc/search.md). */
static double leaf_far(const struct walk *w, const struct cp_group *g)
{
	if (!g->func)
		return g->far;
	if (g->producer < w->first)
		return 0;
	return miss(w->rows[(size_t)w->m->funcs[g->producer].first_stage *
			    PT_FEAT_COUNT + PT_FEAT_BYTES_AT_REALIZATION],
		    L2_BYTES);
}

/* How a walk interleaves rows: the run along a row it makes before it
 * first turns across rows (in vectors, or points without a vector loop;
 * 0: it never turns), and the rows it has turned across when a loop
 * along the rows last brings it back to them (1: it never comes back,
 * a walk down the rows). */
struct burst {
	double run, rows;
};

/* One more loop of the walk: across the rows or along them, with the
 * walk's `rows` and `run` before it. */
static void burst_step(struct burst *b, int is_across, double rows,
		       double run)
{
	if (is_across && b->run == 0)
		b->run = run;
	if (!is_across && b->run > 0)
		b->rows = rows;
}

/* How access group g walks memory, from the vector loop out: loops that
 * move it across rows multiply the rows it interleaves (a gather whose
 * lanes lie in different rows, as iir_blur's scans vectorized across
 * them, starts with as many rows as lanes); loops that move it along its
 * rows (its first coordinate only) lengthen the run it makes in each row
 * while those rows are few enough for the prefetcher to follow (the
 * streams go on); past STREAM_ROWS rows, a loop along the rows comes back
 * to each row only after its stream is lost, and the walk stops there.
 * Loops that run once take no step. A loop it does not move with, once
 * one it moves with is inside, comes back to the same lines: they are
 * still in L1 when the loops inside it touch few enough of them in each
 * of L1's sets (rows 4 KiB apart share one), and the walk then restarts
 * once per pass of that loop, not at every step: *reuse is the product
 * of those loops' extents (worked out only for a walk past STREAM_ROWS
 * rows). Returns the rows; *run is the run along each; *bu how it
 * interleaves them. */
static double walk_rows(const struct walk *w, const struct cp_group *g,
			const struct dep *dep, unsigned mask, unsigned across,
			double *run, double *reuse, struct burst *bu)
{
	const struct pt_feat_loop *l = w->loops;
	struct sweep sw;
	double rows = 1;
	int j, k, dep_seen = 0, nr = 0, rn[SWEEP_MAX];
	int64_t rx[SWEEP_MAX];

	*run = *reuse = 1;
	bu->run = 0;
	bu->rows = 1;
	if (w->vec >= 0 && (across & (1u << l[w->vec].dim)))
		rows = (double)l[w->vec].extent;
	sweep_init(w, g, &sw);
	if (w->vec >= 0 && (mask & (1u << l[w->vec].dim)))
		sweep_add(&sw, dep, &l[w->vec]);
	for (j = (w->vec >= 0 ? w->vec : w->nloops) - 1; j >= 0; j--) {
		if (l[j].extent <= 1)
			continue;
		if (!(mask & (1u << l[j].dim))) {
			if (dep_seen && nr < SWEEP_MAX) {
				rn[nr] = sw.n;
				rx[nr++] = l[j].extent;
			}
			continue;
		}
		dep_seen = 1;
		sweep_add(&sw, dep, &l[j]);
		if (rows <= STREAM_ROWS)
			burst_step(bu, !!(across & (1u << l[j].dim)), rows,
				   *run);
		if (across & (1u << l[j].dim))
			rows *= (double)l[j].extent;
		else if (rows <= STREAM_ROWS)
			*run *= (double)l[j].extent;
		else
			break;
	}
	/* Out of the production, on through the consumer's loops around
	 * the compute site while they move its region (along the pure dim
	 * of the same index): successive productions go on down the rows
	 * (harris' input_im computed for 2 rows of 16 columns inside a
	 * loop down 1024 rows) or along them. A loop that does not move
	 * it, or one along the rows past STREAM_ROWS rows, ends the walk. */
	for (j = j < 0 && rows <= STREAM_ROWS && w->nsite <= WALK_SITE_MAX ?
		     w->nsite - 1 : -1; j >= 0; j--) {
		int d = w->sdim[j];

		if (w->site[j].extent <= 1)
			continue;
		if (d < 0 || !(mask & (1u << d)))
			break;
		if (rows <= STREAM_ROWS)
			burst_step(bu, !!(across & (1u << d)), rows, *run);
		if (across & (1u << d))
			rows *= (double)w->site[j].extent;
		else if (rows <= STREAM_ROWS)
			*run *= (double)w->site[j].extent;
		else
			break;
	}
	if (rows <= STREAM_ROWS)
		return rows;
	for (k = 0; k < nr; k++) {
		/* more loops inside touch more lines */
		if ((!k || rn[k] != rn[k - 1]) && !sweep_fits_l1(&sw, rn[k]))
			break;
		*reuse *= (double)rx[k];
	}
	return rows;
}

/* The share of the vectors of a dense load that Halide turns into gathers:
 * Halide (PartitionLoops) splits a loop into a steady state, where a
 * clamp is dropped, and boundary iterations that keep every clamp. It
 * partitions, for each clamped coordinate, the outermost loop whose
 * variable the coordinate uses: a tile loop of a consumer the stage is
 * computed in when the stage's own dim is split (its base follows the
 * consumer's tile), else the stage's own loop; and it does not partition
 * inside the boundary iterations. So a vector lane's clamp stays (a
 * gather) in the boundary iterations of its own partitioned loop and of
 * every clamped coordinate's that is partitioned further out. */
static double boundary(const struct walk *w, const struct dep *dep, int n)
{
	int dv = w->loops[w->vec].dim, pv = INT_MAX, k, d;
	double steady = 1;

	for (k = 0; k < n; k++)
		if (dep[k].edges && !dep[k].any && dep[k].coef[dv] != 0)
			for (d = 0; d < w->nd; d++)
				if (dep[k].coef[d] != 0 && w->ppos[d] < pv)
					pv = w->ppos[d];
	if (pv == INT_MAX)
		return 0;
	for (k = 0; k < n; k++) {
		int pk = INT_MAX, dk = -1;

		if (!dep[k].edges || dep[k].any)
			continue;
		for (d = 0; d < w->nd; d++)
			if (dep[k].coef[d] != 0 && w->ppos[d] < pk) {
				pk = w->ppos[d];
				dk = d;
			}
		if (dk >= 0 && pk <= pv)
			steady *= 1 - fmin(1, dep[k].edges * w->pshare[dk]);
	}
	return 1 - steady;
}

/* Fill w->ppos and w->pshare for stage s (boundary()). The consumers'
 * loops enclosing the stage's compute site come first (root first), then
 * the stage's own; a consumer's loop over the pure var of the same index
 * moves the stage's region along that dim. */
static void partitions(struct walk *w, int s)
{
	const struct pt_model *m = w->m;
	const struct pt_stage *st = &m->stages[s];
	int anc[32], acp[32], na = 0, f = st->func, j, p, d, i, pos = 0;

	for (d = 0; d < w->nd; d++)
		w->ppos[d] = -1;
	while (na < 32 && pt_features_site(w->fx, f, &j, &p) > 0) {
		anc[na] = j;
		acp[na++] = p;
		f = j;
	}
	while (na-- > 0) {
		const struct pt_func *cf = &m->funcs[anc[na]];
		int cs = cf->first_stage + cf->nstages - 1;
		const struct pt_stage *cst = &m->stages[cs];
		const struct pt_feat_loop *cl;
		int ncl = pt_features_loops(w->fx, cs, &cl);

		for (i = 0; i <= acp[na] && i < ncl; i++, pos++) {
			const struct pt_dim *cd = &cst->dims[cl[i].dim];

			if (cd->is_rvar || cl[i].extent <= 1)
				continue;
			for (d = 0; d < w->nd; d++) {
				const struct pt_dim *sd = &st->dims[d];
				int idx = cd->index;

				if (w->ppos[d] >= 0 || sd->is_rvar ||
				    sd->index != idx || idx >= cf->nargs ||
				    cf->region_extent[idx] <= 0)
					continue;
				w->ppos[d] = pos;
				w->pshare[d] = (double)cl[i].stride /
					(double)cf->region_extent[idx];
			}
		}
	}
	for (d = 0; d < w->nd; d++) {
		int first = -1, nl = 0;

		for (i = 0; i < w->nloops; i++)
			if (w->loops[i].dim == d && nl++ == 0)
				first = i;
		/* an unsplit dim's clamp uses the stage's own loop variable */
		if (w->ppos[d] >= 0 && nl > 1)
			continue;
		w->ppos[d] = first >= 0 ? pos + first : INT_MAX;
		w->pshare[d] = first >= 0 && st->dims[d].extent > 0 ?
			(double)w->loops[first].stride /
			(double)st->dims[d].extent : 0;
	}
}

/* Short bursts (burst_restarts()) of a read of group g made `execs`
 * times a vector, whose walk turned across rows as `bu` says. A
 * coordinate other than the first that is not affine (a plane picked by
 * a value: local_laplacian's pyramid level `li`) picks a row of a run
 * that goes on along the first: the bursts are those of the walk with
 * that coordinate held. Weighted by how far the data lives and by the
 * share of the reads that touch their bytes for the first time (bytes
 * of the buffer over bytes read, at most 1): a buffer read many times
 * over (conv_layer's input, once per output channel) is mostly read
 * from cache. */
static void bursts(struct walk *w, const struct cp_group *g,
		   const struct dep *dep, struct burst *bu, double execs)
{
	const struct pt_feat_loop *l = w->loops;
	double far, buf, read, first = 1, V, bytes;
	int k, held = 0;

	if (w->vec < 0 || dep[0].any || (far = leaf_far(w, g)) <= 0)
		return;
	for (k = 1; k < g->n; k++)
		held |= dep[k].any;
	if (held) {
		struct dep sd[WALK_MAXDIMS];
		unsigned sm, sa;
		double run, reuse;

		for (k = 0; k < g->n; k++) {
			sd[k] = dep[k];
			if (k && dep[k].any)
				memset(&sd[k], 0, sizeof(sd[k]));
		}
		dep_masks(sd, g->n, w->nd, &sm, &sa);
		walk_rows(w, g, sd, sm, sa, &run, &reuse, bu);
	}
	V = (double)l[w->vec].extent;
	if (g->func) {
		const double *r = &w->rows[(size_t)w->m->funcs[g->producer]
					   .first_stage * PT_FEAT_COUNT];

		buf = r[PT_FEAT_BYTES_AT_REALIZATION] *
			(r[PT_FEAT_NUM_REALIZATIONS] > 1 ?
			 r[PT_FEAT_NUM_REALIZATIONS] : 1);
	} else {
		buf = g->in_bytes;
	}
	read = w->nvs * execs * V * g->bytes;
	if (read > buf)
		first = buf / read;
	w->b_rows += bu->rows * far * first;
	/* a burst the prefetchers do not follow waits for each of its
	 * lines */
	if (bu->rows > 1 && (bytes = bu->run * V * g->bytes) < BURST_BYTES)
		w->b_runs += far * first * execs / bu->run * ceil(bytes / 64);
}

/* One load or store, group g's: count `cnt` per point of the stage,
 * g->bytes per element, coordinates `dep`, which move with the loop dims
 * in `mask` and across rows (dep_masks()) with those in `across`.
 *
 * Besides the loads themselves, the order of their addresses: walking
 * along a row, the hardware prefetchers stream the lines in; walking
 * across a few rows, each row is a stream of its own, and they follow
 * those too. Across more rows than they track (STREAM_ROWS), each time
 * the walk comes back to a row it starts that stream again, and for data
 * that does not stay in L2 waits on memory: blur's stencil walked down
 * 64-row columns ran 3 times slower than the same work along its rows
 * (doc/cost-model.md). strided_loads counts those restarts, one per run
 * along a row, weighted by how far the data lives (leaf_far()). */
static void walk_leaf(struct walk *w, const struct cp_group *g,
		      const struct dep *dep, unsigned mask, unsigned across,
		      double cnt)
{
	const struct pt_feat_loop *l = w->loops;
	double amort = 1, unr = 1, cost, run, rows, reuse, far;
	struct burst bu;
	int i, k, cls, n = g->n;

	for (i = (w->vec >= 0 ? w->vec : w->nloops) - 1; i >= 0; i--) {
		if (l[i].extent <= 1)
			continue;
		if (mask & (1u << l[i].dim)) {
			if (l[i].kind == PT_LOOP_UNROLL &&
			    unr * (double)l[i].extent <= WALK_UNROLL_REGS) {
				unr *= (double)l[i].extent;
				continue;
			}
			break;
		}
		amort *= (double)l[i].extent;
	}
	/* A load left in no loop of the production is hoisted on out of
	 * the consumer's loops around it that the region computed does not
	 * move with (conv_layer's filter gathered for a vector of output
	 * channels, computed inside the loops over pixels) */
	for (k = i < 0 ? w->nsite - 1 : -1; k >= 0; k--) {
		const struct pt_feat_loop *c = &w->site[k];

		if (c->dim >= 32 || (w->smask & (1u << c->dim)))
			break;
		amort *= (double)(c->extent > 1 ? c->extent : 1);
	}
	rows = walk_rows(w, g, dep, mask, across, &run, &reuse, &bu);
	if (!g->store)
		bursts(w, g, dep, &bu, cnt / amort);
	if (rows > STREAM_ROWS && (far = leaf_far(w, g)) > 0)
		w->jl += far * cnt / amort / run / reuse;
	if (g->store) {
		w->us += cnt / amort;
		return;
	}
	if (w->vec < 0) {
		w->sl += cnt / amort;
		return;
	}
	/* 0: dense, 1: gather, 2: broadcast */
	{
		int dv = l[w->vec].dim, moves = 0, other = 0;
		double c0 = 0, V = (double)l[w->vec].extent;

		cls = 1;
		for (k = 0; k < n && !dep[k].any && !dep[k].var[dv]; k++) {
			double c = dep[k].coef[dv] * (double)l[w->vec].stride;

			if (c != 0) {
				moves = 1;
				if (k)
					other = 1;
				else
					c0 = fabs(c);
			}
		}
		if (k == n) {
			if (!moves)
				cls = 2;
			else if (!other && c0 <= 4)
				cls = 0;
		}
		cost = cls == 0 ? ceil(V * c0 * g->bytes / w->vbytes) :
			cls == 1 ? V : 1;
		if (cost < 1)
			cost = 1;
	}
	if (cls == 0) {
		double f = boundary(w, dep, n);

		w->vl += cnt * cost * (1 - f) / amort;
		w->bg += cnt * (double)l[w->vec].extent * f / amort;
	} else if (cls == 1)
		w->ga += cnt * cost / amort;
	else
		w->bc += cnt * cost / amort;
	w->tail += cnt / amort;
}

/* The coordinates of group g of a stage inlined into the costed one as
 * deps on the costed stage's dims, through `in`: how the pure dims of the
 * inlined stage's Func move there. */
static void compose(const struct walk *w, const struct cp_group *g,
		    const struct dep *in, int nin, struct dep *dep)
{
	const struct pt_cost_prep *p = w->p;
	int k, t, d;

	for (k = 0; k < g->n; k++) {
		const struct cp_coord *c = &p->co[g->co + k];

		dep[k].any = 0;
		dep[k].edges = p->root[g->co + k].edges;
		for (d = 0; d < w->nd; d++) {
			dep[k].coef[d] = 0;
			dep[k].var[d] = 0;
		}
		if (c->any) {
			dep[k].any = 1;
			continue;
		}
		for (t = 0; t < c->ntm && !dep[k].any; t++) {
			const struct cp_term *x = &p->tm[c->tm0 + t];
			const struct dep *src;

			if (x->src < 0 || x->src >= nin || in[x->src].any) {
				dep[k].any = 1;
				continue;
			}
			src = &in[x->src];
			if (src->edges > dep[k].edges)
				dep[k].edges = src->edges;
			for (d = 0; d < w->nd; d++) {
				if (x->ve) {
					dep[k].var[d] |= src->coef[d] != 0 ||
						src->var[d];
					continue;
				}
				dep[k].coef[d] += x->ce * src->coef[d];
				dep[k].var[d] |= src->var[d];
			}
		}
	}
}

/* Walk the accesses of stage s; `in` maps the pure dims of its Func to
 * the costed stage's dims (NULL: s is the costed stage). */
static void walk_stage(struct walk *w, int s, const struct dep *in, int nin,
		       double mult, int depth)
{
	const struct pt_cost_prep *p = w->p;
	const struct cp_stage *cs = &p->st[s];
	struct dep buf[WALK_MAXDIMS];
	int i;

	for (i = 0; i < cs->ngrp && w->budget > 0; i++) {
		const struct cp_group *g = &p->grp[cs->grp0 + i];
		const struct dep *dep = &p->root[g->co];
		unsigned mask = g->mask, across = g->across;

		w->budget--;
		if (in) {
			compose(w, g, in, nin, buf);
			dep = buf;
		}
		if (g->through && depth < 32 && g->producer >= w->first &&
		    is_inlined(w->rows, w->m, g->producer)) {
			walk_stage(w, w->m->funcs[g->producer].first_stage,
				   dep, g->n, mult * g->cnt, depth + 1);
			continue;
		}
		if (g->func && !g->store && w->reg &&
		    g->producer < INL_MAX && w->reg[g->producer])
			continue;
		if (in)
			dep_masks(dep, g->n, w->nd, &mask, &across);
		walk_leaf(w, g, dep, mask, across, mult * g->cnt);
	}
}

/* The dims of stage c that its reads of Func f move with: those of its
 * direct reads, and of its reads of the Funcs it inlines that read f
 * (a superset). ~0u when not known. */
static unsigned site_mask(const struct walk *w, int c, int f, int depth)
{
	const struct pt_cost_prep *p = w->p;
	const struct cp_stage *cs = &p->st[c];
	const struct pt_stage *st = &w->m->stages[c];
	unsigned mask = 0;
	int i;

	if (depth > 32 || st->ndims > WALK_MAXDIMS)
		return ~0u;
	for (i = 0; i < cs->ngrp; i++) {
		const struct cp_group *g = &p->grp[cs->grp0 + i];
		int reads = 0;

		if (!g->func || g->store)
			continue;
		if (g->producer == f)
			reads = 1;
		else if (g->through && g->producer >= w->first &&
			 is_inlined(w->rows, w->m, g->producer))
			reads = site_mask(w, w->m->funcs[g->producer].first_stage,
					  f, depth + 1) != 0;
		if (reads)
			mask |= g->n < WALK_MAXDIMS ? g->mask : ~0u;
	}
	return mask;
}

/* w->sdim for the loops of consumer stage c around stage s's compute
 * site: a loop over a pure var moves s's region along s's pure dim of
 * the same index (as partitions() takes it); a reduction loop, or one
 * whose index s has no pure dim for, does not. */
static void site_dims(struct walk *w, int c, int s)
{
	const struct pt_stage *cst = &w->m->stages[c];
	const struct pt_stage *st = &w->m->stages[s];
	int i, d;

	for (i = 0; i < w->nsite && i < WALK_SITE_MAX; i++) {
		const struct pt_dim *cd = &cst->dims[w->site[i].dim];

		w->sdim[i] = -1;
		for (d = 0; d < st->ndims && d < WALK_MAXDIMS && !cd->is_rvar;
		     d++)
			if (!st->dims[d].is_rvar &&
			    st->dims[d].index == cd->index) {
				w->sdim[i] = d;
				break;
			}
	}
}

/* The loop of a stage the schedule leaves scalar that LLVM's loop
 * vectorizer (which Halide 14 leaves on) turns into vector code, or -1:
 * the innermost loop left in the code (loops of one iteration are not)
 * when it is a serial loop over the Func's first pure var, the one its
 * storage is dense along, running at least LLVM_VEC_MIN times and at
 * least one vector. Its vector width is *vf lanes: LLVM's preferred
 * registers (32 bytes on AVX2 and AVX-512 targets, as it compiles
 * Halide's code) over the Func's widest type. Checked against the IR
 * Halide 14 emits for the third machine's training schedules
 * (doc/cost-model.md, "LLVM's loop vectorizer"). */
static int llvm_vector_loop(const struct pt_cost_prep *p,
			    const struct pt_features *fx, const double *rows,
			    int s, double *vf)
{
	const double *r = &rows[(size_t)s * PT_FEAT_COUNT];
	const struct pt_model *m = p->m;
	const struct pt_func *f = &m->funcs[m->stages[s].func];
	const struct pt_feat_loop *l;
	const struct pt_dim *d;
	int n = pt_features_loops(fx, s, &l), i, b = 1;

	if (r[PT_FEAT_VECTOR_SIZE] > 1)
		return -1;
	while (n > 0 && l[n - 1].extent == 1)
		n--;
	if (n < 1 || l[n - 1].kind != PT_LOOP_SERIAL ||
	    l[n - 1].extent < LLVM_VEC_MIN)
		return -1;
	d = &m->stages[s].dims[l[n - 1].dim];
	if (d->is_rvar || d->index != 0)
		return -1;
	for (i = 0; i < f->ntypes; i++)
		if ((f->types[i].bits + 7) / 8 > b)
			b = (f->types[i].bits + 7) / 8;
	*vf = (double)((p->vbytes < LLVM_VEC_BYTES ? p->vbytes :
			LLVM_VEC_BYTES) / b);
	return *vf > 1 && (double)l[n - 1].extent >= *vf ? n - 1 : -1;
}

/* Stream restarts from short bursts. A production that reads its rows a
 * few lines at a time, turning from row to row (local_laplacian's
 * out_pyr_0 computed 32 columns by 4 rows at a time), keeps as many
 * prefetch streams going as the rows its reads interleave, summed over
 * its reads (`rows`, weighted as in bursts()). Beyond BURST_STREAMS the
 * prefetchers cannot follow them all, and in that share of the bursts
 * each line (`runs` counts the bursts' lines) waits on memory, as
 * strided_loads' restarts do. Measured on out_pyr_0 (doc/cost-model.md):
 * 38 ms a run in productions of 32 columns by 1 row, 70 by 2 rows, 118
 * by 4 rows, 48 by 4 rows of 128 columns. */
static double burst_restarts(double rows, double runs)
{
	return rows > BURST_STREAMS ? runs * (rows - BURST_STREAMS) / rows : 0;
}

/* The load and store terms of non-inlined stage s, scaled by its vectors
 * nv, scalars ns and parallel speedup; `av`: the loop LLVM vectorizes
 * (llvm_vector_loop()), or -1 for the schedule's own vector loop, if
 * any. Falls back on the features' own load counts (no hoisting) for a
 * stage too large to walk. */
static void load_terms(const struct pt_cost_prep *p,
		       const struct pt_features *fx, const double *rows,
		       int first, int s, double eff, const unsigned char *reg,
		       int av, double nv, double ns, double *terms)
{
	const struct pt_model *m = p->m;
	const double *r = &rows[(size_t)s * PT_FEAT_COUNT];
	struct walk w;
	int i;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.fx = fx;
	w.m = m;
	w.rows = rows;
	w.vbytes = p->vbytes;
	w.reg = reg;
	w.first = first;
	w.budget = WALK_BUDGET;
	w.nvs = nv + ns;
	w.nloops = pt_features_loops(fx, s, &w.loops);
	w.vec = av;
	for (i = 0; i < w.nloops && av < 0; i++)
		if (w.loops[i].kind == PT_LOOP_VECTOR)
			w.vec = i;
	for (i = 0; i < w.nloops && w.loops[i].dim < WALK_MAXDIMS; i++)
		;
	w.nd = m->stages[s].ndims;
	{
		int f = m->stages[s].func, j, pos;

		if (pt_features_site(fx, f, &j, &pos) == 1) {
			const struct pt_func *cf = &m->funcs[j];
			int c = cf->first_stage + cf->nstages - 1;
			int ncl = pt_features_loops(fx, c, &w.site);

			w.nsite = pos < ncl ? pos + 1 : 0;
			w.smask = site_mask(&w, c, f, 0);
			site_dims(&w, c, s);
		}
	}
	if (i == w.nloops && w.nd <= WALK_MAXDIMS) {
		if (w.vec >= 0)
			partitions(&w, s);
		walk_stage(&w, s, NULL, 0, 1, 0);
	}
	if (i < w.nloops || m->stages[s].ndims > WALK_MAXDIMS ||
	    w.budget <= 0) {
		w.vl = r[PT_FEAT_VECTOR_LOADS_PER_VECTOR];
		w.ga = r[PT_FEAT_SCALAR_LOADS_PER_VECTOR];
		w.bc = w.us = w.tail = w.jl = w.bg = w.b_runs = 0;
		w.sl = r[PT_FEAT_SCALAR_LOADS_PER_SCALAR];
	}
	terms[PT_TERM_VECTOR_LOADS] += nv * w.vl / eff;
	terms[PT_TERM_GATHERS] += nv * w.ga / eff;
	terms[PT_TERM_BOUNDARY_GATHERS] += nv * w.bg / eff;
	terms[PT_TERM_BROADCASTS] += nv * w.bc / eff;
	terms[PT_TERM_SCALAR_LOADS] += ns * (w.sl + w.tail) / eff;
	terms[PT_TERM_UPDATE_STORES] += (nv + ns) * w.us / eff;
	terms[PT_TERM_STRIDED_LOADS] += (nv + ns) * (w.jl +
		burst_restarts(w.b_rows, w.b_runs)) / eff;
}

/* Iterations of the innermost loop of stage s that the compiled code
 * really has: vectorized and unrolled loops, and loops that run once,
 * are straight-line code inside it. 0 when a production has no such loop
 * (a Func computed a vector at a time inside its consumer's innermost
 * loop). */
static double loop_iterations(const struct pt_features *fx, const double *r,
			      int s)
{
	const struct pt_feat_loop *l;
	int n = pt_features_loops(fx, s, &l);
	double inner = 1;

	while (n-- > 0) {
		if (l[n].kind != PT_LOOP_VECTOR &&
		    l[n].kind != PT_LOOP_UNROLL && l[n].extent > 1)
			return r[PT_FEAT_POINTS_TOTAL] / inner;
		inner *= l[n].extent > 1 ? (double)l[n].extent : 1;
	}
	return 0;
}

/* Which Funcs live in registers: LLVM promotes a small buffer to
 * registers when every access to it has constant indices, which is the
 * case when the Func's production has no loop left (only vectorized,
 * unrolled or single-iteration loops) and it is realized once per
 * iteration of the innermost loop of every stage that reads it (or more
 * often). Its stores and its readers' loads of it are then register
 * moves: matmul with `b`'s row vector computed inside the accumulation
 * loop stores nothing to memory for it. reg[f] for f < INL_MAX. */
#define REG_FILE 16   /* vector registers a promoted buffer may fill */
static void promoted(const struct pt_cost_prep *p,
		     const struct pt_features *fx, const double *rows,
		     unsigned char *reg)
{
	const struct pt_model *m = p->m;
	int f, s, i, any = 0, n = m->nfuncs < INL_MAX ? m->nfuncs : INL_MAX;

	for (f = 0; f < n; f++) {
		const struct pt_func *mf = &m->funcs[f];
		const double *r = &rows[(size_t)mf->first_stage *
					PT_FEAT_COUNT];

		reg[f] = !mf->is_output && r[PT_FEAT_NUM_PRODUCTIONS] > 0 &&
			r[PT_FEAT_BYTES_AT_REALIZATION] <=
			REG_FILE * (double)p->vbytes;
		for (s = mf->first_stage;
		     reg[f] && s < mf->first_stage + mf->nstages; s++)
			if (loop_iterations(fx, &rows[(size_t)s *
						     PT_FEAT_COUNT], s) > 0)
				reg[f] = 0;
		any |= reg[f];
	}
	if (!any)
		return;
	for (s = 0; s < m->nstages; s++) {
		const struct cp_stage *cs = &p->st[s];
		const double *r = &rows[(size_t)s * PT_FEAT_COUNT];
		/* An inlined reader (-1: reads through it are not followed,
		 * so a Func read that way stays in memory) or the iterations
		 * of the reader's innermost loop. */
		double it;

		if (!cs->nrd)
			continue;
		it = r[PT_FEAT_NUM_PRODUCTIONS] > 0 ?
			loop_iterations(fx, r, s) : -1;
		for (i = 0; i < cs->nrd; i++) {
			int q = p->fn[cs->rd0 + i];

			if (!reg[q])
				continue;
			if (it < 0 ||
			    rows[(size_t)m->funcs[q].first_stage *
				 PT_FEAT_COUNT + PT_FEAT_NUM_REALIZATIONS] <
			    0.99 * it)
				reg[q] = 0;
		}
	}
}

/* The speedup an inlined Func gets: the largest of the stages (not
 * inlined) that read it; 1 without such a reader. */
static double reader_speedup(const struct pt_model *m, const double *rows,
			     int s, double cores)
{
	double eff = 1;
	int k, a;

	for (k = s + 1; k < m->nstages; k++) {
		const double *q = &rows[(size_t)k * PT_FEAT_COUNT];

		if (!(q[PT_FEAT_NUM_PRODUCTIONS] > 0))
			continue;
		for (a = 0; a < m->stages[k].naccesses; a++)
			if (m->stages[k].accesses[a].kind == PT_ACCESS_FUNC &&
			    m->stages[k].accesses[a].producer ==
			    m->stages[s].func) {
				double e = speedup(
					q[PT_FEAT_INNER_PARALLELISM] *
					q[PT_FEAT_OUTER_PARALLELISM], cores);

				eff = e > eff ? e : eff;
				break;
			}
	}
	return eff;
}

/* A model of glibc's malloc, as the pipelines run here, for `pages`: the
 * main arena's heap as blocks in address order below a free top, best
 * fit from free blocks, blocks from the mapping threshold up mapped when
 * the heap cannot hold them, the threshold raised to the size of a mapped
 * block when it is freed (up to MMAP_MAX; the mapping is a page more
 * than the block, so a block of that size fits the heap next time), the
 * heap grown by TOP_PAD more than it needs and its top trimmed to
 * TOP_PAD when a free leaves twice the threshold there. Faults are counted in
 * bytes of memory touched for the first time since it was mapped. */
struct heap {
	struct hblock {
		double size;
		int id;             /* its allocation, -1 when free */
	} b[HEAP_ALLOCS];           /* in address order */
	int n;
	double top, thr, faults;
	double fresh;               /* untouched bytes at the end of the top */
	double trimmed;             /* touched bytes given back by trims */
	int mapped[HEAP_ALLOCS];    /* allocation id was mapped */
	double bytes[HEAP_ALLOCS];  /* allocation id's size */
};

/* Block i leaves the list (merged into a neighbour or the top). */
static void heap_remove(struct heap *h, int i)
{
	memmove(&h->b[i], &h->b[i + 1], (size_t)(h->n - i - 1) * sizeof(*h->b));
	h->n--;
}

static void heap_alloc(struct heap *h, int id, double b)
{
	int i, best = -1;

	h->mapped[id] = 0;
	h->bytes[id] = b;
	for (i = 0; i < h->n; i++)
		if (h->b[i].id < 0 && h->b[i].size >= b &&
		    (best < 0 || h->b[i].size < h->b[best].size))
			best = i;
	if (best >= 0) {
		double rest = h->b[best].size - b;

		h->b[best].id = id;
		h->b[best].size = b;
		if (rest > 0 && h->n < HEAP_ALLOCS) {
			memmove(&h->b[best + 2], &h->b[best + 1],
				(size_t)(h->n - best - 1) * sizeof(*h->b));
			h->b[best + 1].size = rest;
			h->b[best + 1].id = -1;
			h->n++;
		}
		return;
	}
	if (h->top < b && (b >= h->thr || h->n == HEAP_ALLOCS)) {
		h->mapped[id] = 1;
		h->faults += b;
		return;
	}
	if (h->top < b) {       /* the heap grows, TOP_PAD more */
		h->fresh += b - h->top + TOP_PAD;
		h->top = b + TOP_PAD;
	}
	/* the block takes the bottom of the top; its end is untouched */
	if (b > h->top - h->fresh)
		h->faults += b - (h->top - h->fresh);
	h->top -= b;
	if (h->fresh > h->top)
		h->fresh = h->top;
	h->b[h->n].size = b;
	h->b[h->n++].id = id;
}

static void heap_free(struct heap *h, int id)
{
	double b = h->bytes[id];
	int i;

	if (h->mapped[id]) {
		/* the mapping's size: the block and its header, in pages */
		if (b + PAGE_BYTES > h->thr && b <= MMAP_MAX)
			h->thr = b + PAGE_BYTES;
		return;
	}
	for (i = 0; i < h->n && h->b[i].id != id; i++)
		;
	if (i == h->n)
		return;
	h->b[i].id = -1;
	if (i + 1 < h->n && h->b[i + 1].id < 0) {  /* merge the next */
		h->b[i].size += h->b[i + 1].size;
		heap_remove(h, i + 1);
	}
	if (i > 0 && h->b[i - 1].id < 0) {         /* into the previous */
		h->b[i - 1].size += h->b[i].size;
		heap_remove(h, i--);
	}
	if (i == h->n - 1) {                       /* into the top */
		h->top += h->b[i].size;
		h->n--;
		if (h->top >= 2 * h->thr) {
			double t = h->top - h->fresh - TOP_PAD;

			if (t > 0)
				h->trimmed += t;
			h->top = TOP_PAD;
			h->fresh = 0;
		}
	}
}

/* One schedule's allocations in heap_faults()'s terms, for each Func f:
 * its blocks on the heap (ids 4 f + k, sizes blk[]: its bytes split by
 * the widths of its values), whether it is realized once (root), and the
 * Funcs at root whose last use is f's production: the first in freed[f],
 * the others each after the one before in next[], lowest first (Halide
 * frees the buffers its last use releases in the order it allocated
 * them). */
struct heap_plan {
	int nf;
	int nblk[HEAP_FUNCS], root[HEAP_FUNCS];
	int freed[HEAP_FUNCS], next[HEAP_FUNCS];
	/* the Funcs realized inside the production of Func f at root:
	 * grp[grp0[f]] on, ngrp[f] of them, outer ones first; each one's
	 * realizations per run in real[] */
	int grp[HEAP_FUNCS], grp0[HEAP_FUNCS], ngrp[HEAP_FUNCS];
	double real[HEAP_FUNCS];
	double blk[HEAP_ALLOCS];
	/* the Func at root in whose production the first parallel loop
	 * runs, -1 for none: the thread pool starts there (below) */
	int pin;
};

/* Allocate the blocks of the n Funcs G[], in that order. */
static void group_alloc(struct heap *h, const struct heap_plan *pl,
			const int *G, int n)
{
	int i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < pl->nblk[G[i]]; k++)
			heap_alloc(h, 4 * G[i] + k, pl->blk[4 * G[i] + k]);
}

/* Free them in the reverse order; with `repeat`, what the free of a Func
 * trims is faulted again by each of its realizations after this one. */
static void group_free(struct heap *h, const struct heap_plan *pl,
		       const int *G, int n, int repeat)
{
	int i, k;

	for (i = n; i-- > 0;) {
		double t0 = h->trimmed;

		for (k = pl->nblk[G[i]]; k-- > 0;)
			heap_free(h, 4 * G[i] + k);
		if (repeat && pl->real[G[i]] > 1)
			h->faults += (h->trimmed - t0) * (pl->real[G[i]] - 1);
	}
}

/* The Funcs realized inside the production of Func f at root: all of
 * them allocated, outer ones first, then freed in the reverse order, as
 * one realization of the loop nest; then a second realization, in which
 * what the free of a Func trims from the top is faulted again by each of
 * its realizations after the first (Halide allocates a Func's buffer
 * inside the loop it is stored at, and frees it at the end of that loop's
 * body). */
static void heap_group(struct heap *h, const struct heap_plan *pl, int f)
{
	const int *G = &pl->grp[pl->grp0[f]];
	int i, n = pl->ngrp[f];
	double keep;

	group_alloc(h, pl, G, n);
	group_free(h, pl, G, n, 0);
	for (i = 0; i < n && !(pl->real[G[i]] > 1); i++)
		;
	if (i == n)
		return;
	keep = h->faults;
	group_alloc(h, pl, G, n);
	h->faults = keep;
	group_free(h, pl, G, n, 1);
}

/* One run of the pipeline's allocations and frees on heap h. In the
 * first (`first`), Halide's thread pool starts at the first parallel loop
 * and allocates a few bytes that it never frees: on the heap's top, above
 * every block allocated before, which a trim can then never give back
 * (strace of RunGen: camera_pipe's buffers below it are reused run after
 * run). */
#define PIN_BYTES 64.0
static void heap_run(struct heap *h, const struct heap_plan *pl, int first)
{
	int f, g, k;

	for (f = 0; f < pl->nf; f++) {
		if (!pl->root[f])
			continue;
		for (k = 0; k < pl->nblk[f]; k++)
			heap_alloc(h, 4 * f + k, pl->blk[4 * f + k]);
		if (first && f == pl->pin)
			heap_alloc(h, 4 * pl->nf, PIN_BYTES);
		heap_group(h, pl, f);
		/* after f's production: what f was the last to read */
		for (g = pl->freed[f]; g >= 0; g = pl->next[g])
			for (k = pl->nblk[g]; k-- > 0;)
				heap_free(h, 4 * g + k);
	}
}

static int same_bits(double a, double b)
{
	return !memcmp(&a, &b, sizeof(a));
}

/* Is the heap's state, all a run reads of it (the blocks, the top, the
 * threshold), bit for bit that of s? Then the next run does exactly what
 * the one from s did. */
static int heap_same(const struct heap *h, const struct heap *s)
{
	int i;

	if (h->n != s->n || !same_bits(h->top, s->top) ||
	    !same_bits(h->thr, s->thr) || !same_bits(h->fresh, s->fresh))
		return 0;
	for (i = 0; i < h->n; i++)
		if (h->b[i].id != s->b[i].id ||
		    !same_bits(h->b[i].size, s->b[i].size))
			return 0;
	return 1;
}

/* Does a stage of Func f run a parallel loop? */
static int parallel_func(const struct pt_model *m, const double *rows, int f)
{
	int s;

	for (s = m->funcs[f].first_stage;
	     s < m->funcs[f].first_stage + m->funcs[f].nstages; s++)
		if (rows[(size_t)s * PT_FEAT_COUNT +
			 PT_FEAT_INNER_PARALLELISM] > 1)
			return 1;
	return 0;
}

/* The blocks and roots of the plan, and the last use of each Func
 * (use[f]: the last Func at root whose production reads it), which gives
 * its freed lists; the pages of blocks too large for the heap. */
static double heap_plan(const struct pt_cost_prep *p,
			const struct pt_features *fx, const double *rows,
			struct heap_plan *pl)
{
	const struct pt_model *m = p->m;
	int under[HEAP_FUNCS], na = 0;
	int use[HEAP_FUNCS], f, g, i, k;
	double mapped = 0;

	pl->nf = m->nfuncs;
	for (f = 0; f < pl->nf; f++) {
		const struct pt_func *mf = &m->funcs[f];
		const double *r = &rows[(size_t)mf->first_stage *
					PT_FEAT_COUNT];
		double bytes = r[PT_FEAT_BYTES_AT_REALIZATION];

		pl->nblk[f] = 0;
		pl->root[f] = 0;
		use[f] = -1;
		if (!(r[PT_FEAT_NUM_PRODUCTIONS] > 0))
			continue;
		pl->root[f] = mf->is_output ||
			r[PT_FEAT_NUM_REALIZATIONS] <= 1;
		use[f] = pl->root[f] ? f : -1;
		if (mf->is_output || !(bytes > 0))
			continue;
		if (bytes > MMAP_MAX) {
			mapped += r[PT_FEAT_NUM_REALIZATIONS] *
				ceil(bytes / PAGE_BYTES);
			continue;
		}
		for (k = 0; k < p->nblk[f]; k++)
			pl->blk[4 * f + k] = bytes * p->share[f][k];
		pl->nblk[f] = p->nblk[f];
		pl->real[f] = r[PT_FEAT_NUM_REALIZATIONS];
	}
	/* A Func on the heap realized many times is under the Func at root
	 * whose production holds it: the end of the chain of the consumers
	 * it is computed in. */
	for (f = 0; f < pl->nf; f++) {
		int j = f, q, c, hops = 0;

		under[f] = -1;
		if (pl->root[f] || !pl->nblk[f])
			continue;
		while (hops++ < pl->nf && pt_features_site(fx, j, &c, &q) == 1 &&
		       c >= 0 && c < pl->nf)
			j = c;
		under[f] = pl->root[j] ? j : -1;
	}
	/* Outer ones (fewer realizations) first; among equals, consumers
	 * first, as Halide nests their allocations. */
	for (f = 0; f < pl->nf; f++) {
		pl->grp0[f] = na;
		pl->ngrp[f] = 0;
		if (!pl->root[f])
			continue;
		for (g = pl->nf; g-- > 0;) {
			if (under[g] != f)
				continue;
			for (i = na; i > pl->grp0[f] &&
			     pl->real[pl->grp[i - 1]] > pl->real[g]; i--)
				pl->grp[i] = pl->grp[i - 1];
			pl->grp[i] = g;
			na++;
		}
		pl->ngrp[f] = na - pl->grp0[f];
	}
	/* The first parallel loop: in a Func at root or in one realized
	 * inside its production (room for the pin's id: 4 nf). */
	pl->pin = -1;
	for (f = 0; f < pl->nf && pl->pin < 0 && pl->nf < HEAP_FUNCS; f++) {
		int par = pl->root[f] && parallel_func(m, rows, f);

		for (i = 0; pl->root[f] && !par && i < pl->ngrp[f]; i++)
			par = parallel_func(m, rows, pl->grp[pl->grp0[f] + i]);
		if (par)
			pl->pin = f;
	}
	/* Readers come after what they read: from the last Func back, each
	 * one's use is complete when it passes it on. A reader at root reads
	 * in its own production (its use is when it is freed); one inlined
	 * or realized inside another, in the production that holds it. */
	for (i = 0; i < p->nedge; i++) {
		int u;

		g = p->edge[i][0];
		u = pl->root[g] ? g : use[g];
		if (u > use[p->edge[i][1]])
			use[p->edge[i][1]] = u;
	}
	/* A use is never before the Func itself (only readers pass theirs
	 * on), so the lists hold each Func at root once. */
	for (f = 0; f < pl->nf; f++)
		pl->freed[f] = -1;
	for (g = pl->nf; g-- > 0;)
		if (pl->root[g] && use[g] >= g) {
			pl->next[g] = pl->freed[use[g]];
			pl->freed[use[g]] = g;
		}
	return mapped;
}

/* A stage's terms as they were last computed (stage_one()) and the bytes
 * of everything they were computed from (terms_key()). */
struct tmemo {
	unsigned char *key;
	size_t len, cap;      /* len 0: nothing kept */
	uint64_t call;        /* the memo's call that last gave them */
	int lo;               /* the lowest Func the key names */
	double t[PT_TERM_COUNT];
};

/* A heap run heap_faults() kept: its plan's key and the pages it gave
 * (the mapped blocks' included). */
#define PLAN_SLOTS 256        /* kept at once, by their keys' hashes */
struct plan_slot {
	unsigned char *key;
	size_t len;           /* 0: none */
	uint64_t hash;
	double pages;
};

/* One thread's memo (pt_cost.h): heap_faults()'s runs of the last plans
 * (a beam's candidates share few: 94% of stencil_chain's lookups find
 * theirs), and the stages' terms. */
struct pt_cost_memo {
	size_t cap;           /* bytes of room in each key buffer */
	struct plan_slot ps[PLAN_SLOTS];
	unsigned char *key;   /* room for the next one */
	/* per stage, its terms as last computed; the key being built; per
	 * Func, a stamp of the last key that listed it */
	struct tmemo *st;
	unsigned char *kbuf;  /* TKEY_BYTES() */
	size_t kcap, klen;
	unsigned *seen, stamp;
	int *stack;           /* per Func: the walk of terms_key() */
	unsigned char *g;     /* per Func: its flags in this schedule */
	unsigned char *glast; /* and in the last one looked up */
	struct pt_keep keep;  /* whether a schedule looks stages up */
	int nstages;
	/* the calls that looked stages up; of the last: the features
	 * context and its schedule (pt_features_serial()), the first
	 * decided Func */
	uint64_t calls, fxser;
	const struct pt_features *fx;
	int first;
	int klo;              /* the lowest Func the key built names */
};

/* A plan_key() of at most HEAP_FUNCS Funcs, each: three ints and two
 * doubles. */
#define MEMO_BYTES(nf) ((size_t)(nf) * (3 * sizeof(int) + 2 * sizeof(double)))

/* The most bytes terms_key() writes for a model of nfuncs Funcs: the
 * first Func, the flags, a row, the stage's loops, up to 32 sites with
 * their loops, and each Func read once with its box and bytes. */
#define KLOOPS PT_KEY_LOOPS_BYTES(PT_FEAT_MAXLOOPS)
#define TKEY_BYTES(nf) (sizeof(int) + (size_t)(nf) + \
			PT_FEAT_COUNT * sizeof(double) + KLOOPS + \
			32 * (2 * sizeof(int) + KLOOPS) + \
			(size_t)(nf) * (sizeof(int) + sizeof(double) + \
					sizeof(struct pt_box)))

struct pt_cost_memo *pt_cost_memo_new(const struct pt_cost_prep *p)
{
	struct pt_cost_memo *mm = calloc(1, sizeof(*mm));
	int nf = p->m->nfuncs <= HEAP_FUNCS ? p->m->nfuncs : 0;

	if (!mm)
		return NULL;
	mm->nstages = p->m->nstages;
	mm->cap = MEMO_BYTES(nf);
	mm->key = malloc(mm->cap);
	mm->st = calloc((size_t)p->m->nstages + 1, sizeof(*mm->st));
	mm->kcap = TKEY_BYTES(p->m->nfuncs);
	mm->kbuf = malloc(mm->kcap);
	mm->seen = calloc((size_t)p->m->nfuncs + 1, sizeof(*mm->seen));
	mm->stack = calloc((size_t)p->m->nfuncs + 1, sizeof(*mm->stack));
	mm->g = calloc((size_t)p->m->nfuncs + 1, 1);
	mm->glast = calloc((size_t)p->m->nfuncs + 1, 1);
	if (!mm->key || !mm->st || !mm->seen || !mm->stack ||
	    !mm->g || !mm->glast || !mm->kbuf) {
		pt_cost_memo_free(mm);
		return NULL;
	}
	return mm;
}

void pt_cost_memo_free(struct pt_cost_memo *mm)
{
	int i;

	if (!mm)
		return;
	for (i = 0; mm->st && i < mm->nstages; i++)
		free(mm->st[i].key);
	free(mm->st);
	free(mm->seen);
	free(mm->stack);
	free(mm->g);
	free(mm->glast);
	free(mm->kbuf);
	for (i = 0; i < PLAN_SLOTS; i++)
		free(mm->ps[i].key);
	free(mm->key);
	free(mm);
}

static unsigned char *put_int(unsigned char *o, int v)
{
	memcpy(o, &v, sizeof(v));
	return o + sizeof(v);
}

static unsigned char *put_dbl(unsigned char *o, double v)
{
	memcpy(o, &v, sizeof(v));
	return o + sizeof(v);
}

/* Everything of a schedule heap_plan() reads, in bytes, into out (room:
 * MEMO_BYTES(nfuncs)); returns their count. Per Func: whether it is
 * produced, whether a stage of it runs a parallel loop, the Func it is
 * computed in (-1 none), its realizations and the bytes of one. Equal
 * keys, equal plans, so heap_plan() itself (a sort of each root's group
 * and walks up the compute sites) is skipped for the lookups that hit:
 * 94% of those of stencil_chain's beam. */
static size_t plan_key(const struct pt_cost_prep *p,
		       const struct pt_features *fx, const double *rows,
		       unsigned char *out)
{
	const struct pt_model *m = p->m;
	unsigned char *o = out;
	int f, c, q;

	for (f = 0; f < m->nfuncs; f++) {
		const double *r = &rows[(size_t)m->funcs[f].first_stage *
					PT_FEAT_COUNT];

		o = put_int(o, r[PT_FEAT_NUM_PRODUCTIONS] > 0);
		o = put_int(o, parallel_func(m, rows, f));
		if (pt_features_site(fx, f, &c, &q) != 1)
			c = -1;
		o = put_int(o, c);
		o = put_dbl(o, r[PT_FEAT_NUM_REALIZATIONS]);
		o = put_dbl(o, r[PT_FEAT_BYTES_AT_REALIZATION]);
	}
	return (size_t)(o - out);
}

/* Page faults per run of the pipeline from its allocations (`pages`), in
 * the steady state of repeated runs (the fourth of four, or the first
 * that leaves the heap as it found it: the runs after it repeat it). Each
 * Func realized once (at root) is allocated when it is produced, one
 * block per value of a Tuple, in the model's order (producers first), and
 * freed right after the production of the last Func at root that reads
 * it, directly or through Funcs inlined or computed inside loops (Halide
 * frees buffers after their last use). The Funcs realized many times
 * inside that production are allocated and freed as heap_group() says:
 * each realization reuses the blocks of the one before unless their frees
 * trim the top (one heap for all threads: the arenas of other threads
 * trim the same way). Blocks over MMAP_MAX are mapped afresh at every
 * realization. The heap starts with the mapping threshold RunGen leaves
 * (rungen_threshold()). */
static double heap_faults(const struct pt_cost_prep *p,
			  const struct pt_features *fx, const double *rows,
			  struct pt_cost_memo *mm)
{
	struct heap_plan pl;
	struct heap h, before;
	struct plan_slot *slot = NULL;
	double mapped;
	uint64_t hash;
	size_t len = 0;
	int run;

	if (p->m->nfuncs > HEAP_FUNCS)
		return 0;
	if (mm && mm->cap >= MEMO_BYTES(p->m->nfuncs)) {
		len = plan_key(p, fx, rows, mm->key);
		hash = XXH3_64bits(mm->key, len);
		slot = &mm->ps[hash % PLAN_SLOTS];
		if (len == slot->len && hash == slot->hash &&
		    !memcmp(mm->key, slot->key, len))
			return slot->pages;
	}
	mapped = heap_plan(p, fx, rows, &pl);
	/* Only the heap's counts need a start: a block's id, size and
	 * mapping are written when it is allocated, before any read. */
	h.n = 0;
	h.top = h.fresh = h.trimmed = 0;
	h.thr = p->thr0;
	for (run = 0; run < 4; run++) {
		before.n = h.n;
		before.top = h.top;
		before.thr = h.thr;
		before.fresh = h.fresh;
		memcpy(before.b, h.b, (size_t)h.n * sizeof(*h.b));
		h.faults = 0;
		heap_run(&h, &pl, run == 0);
		if (heap_same(&h, &before))
			break;
	}
	if (len) {
		/* the key built becomes the slot's: buffers swapped (a slot's
		 * made when first filled) */
		unsigned char *t = slot->key ? slot->key : malloc(mm->cap);

		if (t) {
			slot->key = mm->key;
			mm->key = t;
			slot->len = len;
			slot->hash = hash;
			slot->pages = mapped + ceil(h.faults / PAGE_BYTES);
		}
	}
	return mapped + ceil(h.faults / PAGE_BYTES);
}

static void stage_terms(const struct pt_cost_prep *p,
			const struct pt_features *fx, const double *rows,
			int first, struct pt_cost_memo *mm, double *terms,
			double *per);

void pt_cost_terms(const struct pt_cost_prep *p,
		   const struct pt_features *fx, const double *rows,
		   double *terms)
{
	stage_terms(p, fx, rows, 0, NULL, terms, NULL);
}

void pt_cost_terms_partial(const struct pt_cost_prep *p,
			   const struct pt_features *fx, const double *rows,
			   int first_func, struct pt_cost_memo *memo,
			   double *terms)
{
	stage_terms(p, fx, rows, first_func, memo, terms, NULL);
}

void pt_cost_stage_terms(const struct pt_cost_prep *p,
			 const struct pt_features *fx, const double *rows,
			 double *terms, double *per)
{
	stage_terms(p, fx, rows, 0, NULL, terms, per);
}

/* Add stage s's terms to t: for an inlined Func, the work it adds to
 * its readers (whose largest speedup over it is inl_eff[its Func], for
 * Funcs below INL_MAX); `reg`: promoted(). */
static void stage_one(const struct pt_cost_prep *p,
		      const struct pt_features *fx, const double *rows,
		      int first, int s, const double *inl_eff,
		      const unsigned char *reg, double *t)
{
	const struct pt_model *m = p->m;
	double cores = p->cores;
	int vbytes = p->vbytes;
	const double *r = &rows[(size_t)s * PT_FEAT_COUNT];
	const struct pt_stage *st = &m->stages[s];
	const struct cp_stage *cs = &p->st[s];
	double eff, lanes, vregs, scal, nv, ns, sregs, vf;
	int inl = !(r[PT_FEAT_NUM_PRODUCTIONS] > 0), av;

	lanes = r[PT_FEAT_VECTOR_SIZE] > 1 ? r[PT_FEAT_VECTOR_SIZE] : 1;
	nv = r[PT_FEAT_NUM_VECTORS];
	ns = r[PT_FEAT_NUM_SCALARS];
	op_counts(p, cs, lanes, &vregs, &scal);
	if (inl) {
		/* Evaluated inside its readers: their speedup. */
		eff = st->func < INL_MAX ? inl_eff[st->func] :
			reader_speedup(m, rows, s, cores);
		if (eff < 1)
			eff = 1;
		t[PT_TERM_VECTOR_OPS] += nv * vregs / eff;
		t[PT_TERM_SCALAR_OPS] += ns * scal / eff;
		return;
	}
	eff = speedup(r[PT_FEAT_INNER_PARALLELISM] *
		      r[PT_FEAT_OUTER_PARALLELISM], cores);
	if ((av = llvm_vector_loop(p, fx, rows, s, &vf)) >= 0) {
		/* Whole vectors of each run of the loop; the rest of
		 * each run stays scalar. */
		const struct pt_feat_loop *l;
		double x, share;

		pt_features_loops(fx, s, &l);
		x = (double)l[av].extent;
		share = floor(x / vf) * vf / x;
		lanes = vf;
		nv = ns * share / vf;
		ns -= ns * share;
		op_counts(p, cs, lanes, &vregs, &scal);
	}
	sregs = ceil(lanes * (r[PT_FEAT_BYTES_AT_ROOT] /
			      (r[PT_FEAT_POINTS_MINIMUM] > 0 ?
			       r[PT_FEAT_POINTS_MINIMUM] : 1)) / vbytes);
	if (!(sregs >= 1))
		sregs = 1;
	t[PT_TERM_STAGES] += 1;
	t[PT_TERM_VECTOR_OPS] += nv * vregs / eff;
	t[PT_TERM_SCALAR_OPS] += ns * scal / eff;
	load_terms(p, fx, rows, first, s, eff, reg, av, nv, ns, t);
	if (!(st->func < INL_MAX && reg[st->func]))
		t[PT_TERM_STORES] += (nv * sregs + ns) / eff;
	{
		/* Cache lines moved: the bytes, plus one partly
		 * used line at the end of each contiguous run. */
		double lines = r[PT_FEAT_NUM_PRODUCTIONS] *
			(r[PT_FEAT_BYTES_READ_PER_PRODUCTION] / 64 +
			 r[PT_FEAT_LINES_READ_PER_PRODUCTION]);
		double ws = r[PT_FEAT_BYTES_READ_PER_PRODUCTION] +
			r[PT_FEAT_BYTES_AT_PRODUCTION];

		t[PT_TERM_LINES] += lines / eff;
		t[PT_TERM_L2_LINES] += lines * miss(ws, L2_BYTES) / eff;
		/* What a Func writes to a buffer too large for L2
		 * goes out to the shared cache or memory, and comes
		 * back when its consumers read it (those reads are
		 * in l2_lines). The output's writes are the same
		 * for every schedule. */
		if (!m->funcs[st->func].is_output)
			t[PT_TERM_SPILL_LINES] +=
				r[PT_FEAT_NUM_REALIZATIONS] *
				r[PT_FEAT_BYTES_AT_REALIZATION] / 64 *
				miss(r[PT_FEAT_BYTES_AT_REALIZATION],
				     L2_BYTES) / eff;
	}
	if (st->index == 0 && !m->funcs[st->func].is_output &&
	    r[PT_FEAT_BYTES_AT_REALIZATION] > STACK_MAX)
		t[PT_TERM_ALLOCS] += r[PT_FEAT_NUM_REALIZATIONS] / eff;
	if (r[PT_FEAT_INNER_PARALLELISM] > 1)
		t[PT_TERM_TASKS] += r[PT_FEAT_NUM_PRODUCTIONS] *
			r[PT_FEAT_INNER_PARALLELISM];
	t[PT_TERM_LOOPS] += loop_iterations(fx, r, s) / eff;
	t[PT_TERM_PRODUCTIONS] += r[PT_FEAT_NUM_PRODUCTIONS] / eff;
}

/* --- stage terms kept between schedules ------------------------------------ */

/* Whether this schedule's stages are looked up (pt_keep_int.h), and if
 * so, each Func's flags that every stage's terms may depend on: promoted
 * to registers, inlined (a decided Func); and in *lim, the highest Func
 * whose stages' terms may differ from the last call's for a reason
 * pt_features_row_same() does not see (the last Func when the last call
 * was not for the schedule fx featurized before, or for another first
 * Func): the highest whose register flag changed, or pt_features_top(),
 * whichever is higher. */
static int terms_memo_start(const struct pt_cost_prep *p,
			    const struct pt_features *fx, const double *rows,
			    int first, const unsigned char *reg,
			    struct pt_cost_memo *mm, int *lim)
{
	int f, use = pt_keep_begin(&mm->keep);
	uint64_t ser = pt_features_serial(fx);

	*lim = p->m->nfuncs - 1;
	if (!use)
		return 0;
	if (mm->fx == fx && mm->fxser + 1 == ser && mm->first == first)
		*lim = pt_features_top(fx);
	for (f = 0; f < p->m->nfuncs; f++) {
		mm->g[f] = (unsigned char)((f < INL_MAX && reg[f]) |
					   (f >= first &&
					    is_inlined(rows, p->m, f)) << 1);
		if (mm->g[f] != mm->glast[f]) {
			if (f > *lim)
				*lim = f;
			mm->glast[f] = mm->g[f];
		}
	}
	mm->calls++;
	mm->fx = fx;
	mm->fxser = ser;
	mm->first = first;
	return 1;
}

/* The key of non-inlined stage s's terms, into mm->kbuf (mm->klen bytes,
 * at most TKEY_BYTES()): the bytes of everything
 * stage_one() reads that the model does not fix. Those are the first
 * decided Func, every Func's flags (terms_memo_start()), the stage's row
 * but its working sets, its loops, the sites its Func is computed in up
 * to root with their loops out to the site (the hoisting out of a
 * consumer's loops, the partitioned loops), and each Func its loads
 * reach, through the decided Funcs inlined: its storage (row pitches)
 * and its realized bytes (how far it lives). */
static void terms_key(const struct pt_cost_prep *p,
		      const struct pt_features *fx, const double *rows,
		      int first, int s, struct pt_cost_memo *mm)
{
	const struct pt_model *m = p->m;
	const struct pt_feat_loop *l;
	unsigned char *o = mm->kbuf;
	int f = m->stages[s].func, j, pos, n, depth, top = 0, i;

	o = pt_key_put(o, &first, sizeof(first));
	o = pt_key_put(o, mm->g, (size_t)m->nfuncs);
	o = pt_key_put_big(o, &rows[(size_t)s * PT_FEAT_COUNT],
			   PT_FEAT_WORKING_SET * sizeof(*rows));
	n = pt_features_loops(fx, s, &l);
	o = pt_key_loops(o, l, n);
	for (depth = 0; depth < 32 && pt_features_site(fx, f, &j, &pos) > 0;
	     depth++) {
		const struct pt_func *cf = &m->funcs[j];

		n = pt_features_loops(fx, cf->first_stage + cf->nstages - 1,
				      &l);
		o = pt_key_put(o, &j, sizeof(j));
		o = pt_key_put(o, &pos, sizeof(pos));
		o = pt_key_loops(o, l, pos + 1 < n ? pos + 1 : n);
		f = j;
	}
	/* the Funcs read, through inlined ones, each once */
	if (++mm->stamp == 0) {
		memset(mm->seen, 0, (size_t)m->nfuncs * sizeof(*mm->seen));
		mm->stamp = 1;
	}
	mm->stack[top++] = s;
	mm->klo = m->stages[s].func;
	while (top > 0) {
		const struct cp_stage *cs = &p->st[mm->stack[--top]];

		for (i = 0; i < cs->ngrp; i++) {
			const struct cp_group *g = &p->grp[cs->grp0 + i];
			const struct pt_box *b;
			int q = g->producer, d;

			if (!g->func || mm->seen[q] == mm->stamp)
				continue;
			mm->seen[q] = mm->stamp;
			if (q < mm->klo)
				mm->klo = q;
			o = pt_key_put(o, &q, sizeof(q));
			if (q >= first && is_inlined(rows, m, q)) {
				/* each Func once: at most nfuncs pushed */
				mm->stack[top++] = m->funcs[q].first_stage;
				continue;
			}
			if ((b = pt_features_storage(fx, q)))
				for (d = 0; d < m->funcs[q].nargs; d++) {
					o = pt_key_put(o, &b->lo[d], sizeof(b->lo[d]));
					o = pt_key_put(o, &b->hi[d], sizeof(b->hi[d]));
				}
			o = pt_key_put(o, &rows[(size_t)m->funcs[q].first_stage *
					  PT_FEAT_COUNT +
					  PT_FEAT_BYTES_AT_REALIZATION],
				 sizeof(double));
		}
	}
	mm->klen = (size_t)(o - mm->kbuf);
}

/* Non-inlined stage s's terms into c (zeroed first): the last call's
 * when its row is the last schedule's (pt_features_row_same()) and every
 * Func its key names lies above `lim` (terms_memo_start()), without the
 * key built; those kept for it when its key is the same as then; or
 * computed (and kept). */
static void stage_kept(const struct pt_cost_prep *p,
		       const struct pt_features *fx, const double *rows,
		       int first, int s, const double *inl_eff,
		       const unsigned char *reg, int lim,
		       struct pt_cost_memo *mm, double *c)
{
	struct tmemo *tm = &mm->st[s];

	mm->keep.tries++;
	if (tm->call + 1 == mm->calls && tm->len && tm->lo > lim &&
	    pt_features_row_same(fx, s)) {
		memcpy(c, tm->t, sizeof(tm->t));
		mm->keep.hits++;
		tm->call = mm->calls;
		return;
	}
	terms_key(p, fx, rows, first, s, mm);
	if (tm->len == mm->klen &&
	    !memcmp(tm->key, mm->kbuf, mm->klen)) {
		memcpy(c, tm->t, sizeof(tm->t));
		mm->keep.hits++;
		tm->call = mm->calls;
		return;
	}
	memset(c, 0, PT_TERM_COUNT * sizeof(*c));
	stage_one(p, fx, rows, first, s, inl_eff, reg, c);
	tm->len = 0;
	if (mm->klen > tm->cap) {
		unsigned char *k = realloc(tm->key, mm->klen);

		if (!k)
			return;
		tm->key = k;
		tm->cap = mm->klen;
	}
	memcpy(tm->key, mm->kbuf, mm->klen);
	tm->len = mm->klen;
	tm->lo = mm->klo;
	tm->call = mm->calls;
	memcpy(tm->t, c, sizeof(tm->t));
}

static void stage_terms(const struct pt_cost_prep *p,
			const struct pt_features *fx, const double *rows,
			int first, struct pt_cost_memo *mm, double *terms,
			double *per)
{
	const struct pt_model *m = p->m;
	double cores = p->cores, inl_eff[INL_MAX];
	unsigned char reg[INL_MAX];
	int s, k, use, lim;

	memset(terms, 0, PT_TERM_COUNT * sizeof(*terms));
	if (per)
		memset(per, 0, (size_t)m->nstages * PT_TERM_COUNT *
		       sizeof(*per));
	/* The largest speedup of the stages that read each inlined Func. */
	for (k = 0; k < m->nfuncs && k < INL_MAX; k++)
		inl_eff[k] = 1;
	for (s = 0; s < m->nstages; s++) {
		const struct cp_stage *cs = &p->st[s];
		const double *q = &rows[(size_t)s * PT_FEAT_COUNT];
		double e;
		int i;

		if (!(q[PT_FEAT_NUM_PRODUCTIONS] > 0) || !cs->neff)
			continue;
		e = speedup(q[PT_FEAT_INNER_PARALLELISM] *
			    q[PT_FEAT_OUTER_PARALLELISM], cores);
		for (i = 0; i < cs->neff; i++)
			if (e > inl_eff[p->fn[cs->eff0 + i]])
				inl_eff[p->fn[cs->eff0 + i]] = e;
	}
	promoted(p, fx, rows, reg);
	use = mm && terms_memo_start(p, fx, rows, first, reg, mm, &lim);
	for (s = 0; s < m->nstages; s++) {
		double *t = per ? &per[(size_t)s * PT_TERM_COUNT] : terms;
		double c[PT_TERM_COUNT];

		if (use && m->stages[s].func >= first &&
		    rows[(size_t)s * PT_FEAT_COUNT +
			 PT_FEAT_NUM_PRODUCTIONS] > 0) {
			/* One addition per term and stage either way, in
			 * stage order: the same sums bit for bit. */
			stage_kept(p, fx, rows, first, s, inl_eff, reg, lim,
				   mm, c);
			for (k = 0; k < PT_TERM_COUNT; k++)
				t[k] += c[k];
			continue;
		}
		stage_one(p, fx, rows, first, s, inl_eff, reg, t);
	}
	pt_keep_end(&mm->keep, use);
	if (per) {
		for (s = 0; s < m->nstages; s++)
			for (k = 0; k < PT_TERM_COUNT; k++)
				terms[k] += per[(size_t)s * PT_TERM_COUNT + k];
	}
	terms[PT_TERM_PAGES] = heap_faults(p, fx, rows, mm);
}

void pt_cost_gbt_input(const double *coef, const double *terms, double *x)
{
	double lin = 0;
	int k;

	for (k = 0; k < PT_TERM_COUNT; k++)
		lin += coef[k] * terms[k];
	for (k = 0; k < PT_TERM_COUNT; k++) {
		x[k] = lin > 0 ? coef[k] * terms[k] / lin : 0;
		x[PT_TERM_COUNT + k] = log10(1 + terms[k]);
	}
	x[2 * PT_TERM_COUNT] = lin > 0 ? log10(lin) : -30;
}

/* --- prediction ----------------------------------------------------------- */

double pt_cost_linear(const struct pt_cost *c, const double *terms)
{
	double lin = 0;
	int k;

	for (k = 0; k < PT_TERM_COUNT; k++)
		lin += c->coef[k] * terms[k];
	return lin;
}

double pt_cost_predict(const struct pt_cost *c, const double *terms)
{
	double lin = pt_cost_linear(c, terms), x[PT_COST_GBT_DIMS];

	if (!c->gbt)
		return lin;
	pt_cost_gbt_input(c->coef, terms, x);
	return lin * exp(pt_gbt_predict(c->gbt, x));
}

const double *pt_cost_coef(const struct pt_cost *c)
{
	return c->coef;
}

int pt_cost_has_trees(const struct pt_cost *c)
{
	return c->gbt != NULL;
}

void pt_cost_free(struct pt_cost *c)
{
	if (!c)
		return;
	pt_gbt_free(c->gbt);
	free(c);
}

/* --- fitting -------------------------------------------------------------- */

/* Solve the k x k system a x = b (a row-major, both destroyed) by Gaussian
 * elimination with partial pivoting; -1 when singular. */
static int solve(double *a, double *b, int k, double *x)
{
	int i, j, r;

	for (i = 0; i < k; i++) {
		int p = i;
		double t;

		for (r = i + 1; r < k; r++)
			if (fabs(a[r * k + i]) > fabs(a[p * k + i]))
				p = r;
		if (!(fabs(a[p * k + i]) > 1e-300))
			return -1;
		if (p != i) {
			for (j = 0; j < k; j++) {
				t = a[i * k + j];
				a[i * k + j] = a[p * k + j];
				a[p * k + j] = t;
			}
			t = b[i], b[i] = b[p], b[p] = t;
		}
		for (r = i + 1; r < k; r++) {
			double f = a[r * k + i] / a[i * k + i];

			for (j = i; j < k; j++)
				a[r * k + j] -= f * a[i * k + j];
			b[r] -= f * b[i];
		}
	}
	for (i = k - 1; i >= 0; i--) {
		double s = b[i];

		for (j = i + 1; j < k; j++)
			s -= a[i * k + j] * x[j];
		x[i] = s / a[i * k + i];
	}
	return 0;
}

/* The least squares solution restricted to the passive set: z[j] for j in
 * the set, 0 elsewhere. */
static int passive_solve(const double *g, const double *h, const int *pas,
			 int k, double *z)
{
	double a[PT_TERM_COUNT * PT_TERM_COUNT], b[PT_TERM_COUNT];
	double y[PT_TERM_COUNT];
	int idx[PT_TERM_COUNT], n = 0, i, j;

	for (i = 0; i < k; i++)
		if (pas[i])
			idx[n++] = i;
	for (i = 0; i < n; i++) {
		b[i] = h[idx[i]];
		for (j = 0; j < n; j++)
			a[i * n + j] = g[idx[i] * k + idx[j]];
	}
	if (n && solve(a, b, n, y))
		return -1;
	for (i = 0; i < k; i++)
		z[i] = 0;
	for (i = 0; i < n; i++)
		z[idx[i]] = y[i];
	return 0;
}

/* Non-negative least squares on the normal equations g x = h (Lawson and
 * Hanson's active set method). */
static void nnls(const double *g, const double *h, int k, double *x)
{
	int pas[PT_TERM_COUNT] = { 0 }, iter, i;
	double z[PT_TERM_COUNT], w[PT_TERM_COUNT];

	for (i = 0; i < k; i++)
		x[i] = 0;
	for (iter = 0; iter < 10 * k; iter++) {
		int best = -1;

		for (i = 0; i < k; i++) {
			int j;

			w[i] = h[i];
			for (j = 0; j < k; j++)
				w[i] -= g[i * k + j] * x[j];
			if (!pas[i] && w[i] > 1e-12 &&
			    (best < 0 || w[i] > w[best]))
				best = i;
		}
		if (best < 0)
			break;
		pas[best] = 1;
		for (;;) {
			double alpha = 1;
			int neg = 0;

			if (passive_solve(g, h, pas, k, z)) {
				pas[best] = 0;  /* dependent column: drop */
				break;
			}
			for (i = 0; i < k; i++)
				if (pas[i] && z[i] <= 0) {
					double t = x[i] / (x[i] - z[i]);

					if (!neg || t < alpha)
						alpha = t;
					neg = 1;
				}
			if (!neg) {
				memcpy(x, z, (size_t)k * sizeof(*x));
				break;
			}
			for (i = 0; i < k; i++) {
				x[i] += alpha * (z[i] - x[i]);
				if (pas[i] && x[i] <= 1e-15) {
					pas[i] = 0;
					x[i] = 0;
				}
			}
		}
	}
}

/* Per pipeline, the weighted (1/ms^2) means of the terms and of the
 * runtime: PT_TERM_COUNT + 1 doubles per group id from gmin. */
struct gmeans {
	int gmin;
	double *mean;
	double *gscale;   /* per group: geometric mean runtime */
};

/* The weight of a sample: 1 / (ms^p * scale^(2-p)), with scale the
 * pipeline's geometric mean runtime: p = 2 weighs relative errors, p = 0
 * errors relative to the pipeline's typical runtime (slow schedules
 * count fully), p = 1 between. */
static double weight(double ms, double scale, double p)
{
	return 1 / (pow(ms, p) * pow(scale, 2 - p));
}

/* The smallest group id, and how many ids the groups span (0 when the
 * span is too large to index). */
static size_t group_range(const int *group, size_t n, int *gmin)
{
	int lo = group[0], hi = group[0];
	size_t i, ng;

	for (i = 1; i < n; i++) {
		lo = group[i] < lo ? group[i] : lo;
		hi = group[i] > hi ? group[i] : hi;
	}
	*gmin = lo;
	ng = (size_t)((long long)hi - lo) + 1;
	return ng < 100000000u ? ng : 0;
}

static int group_means(const double *terms, const double *ms,
		       const int *group, size_t n, double p,
		       struct gmeans *gm)
{
	size_t i, ng = group_range(group, n, &gm->gmin);
	int gmin = gm->gmin, j;
	double *wsum;

	gm->mean = ng ? calloc(ng * (PT_TERM_COUNT + 1), sizeof(*gm->mean)) :
		NULL;
	gm->gscale = ng ? calloc(ng, sizeof(*gm->gscale)) : NULL;
	wsum = ng ? calloc(ng, sizeof(*wsum)) : NULL;
	if (!gm->mean || !wsum || !gm->gscale) {
		free(gm->mean);
		free(gm->gscale);
		free(wsum);
		return PT_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		gm->gscale[group[i] - gmin] += log(ms[i]);
		wsum[group[i] - gmin] += 1;
	}
	for (i = 0; i < ng; i++) {
		gm->gscale[i] = wsum[i] > 0 ? exp(gm->gscale[i] / wsum[i]) : 1;
		wsum[i] = 0;
	}
	for (i = 0; i < n; i++) {
		size_t gi = (size_t)(group[i] - gmin);
		double w = weight(ms[i], gm->gscale[gi], p);
		double *mu = &gm->mean[gi * (PT_TERM_COUNT + 1)];

		for (j = 0; j < PT_TERM_COUNT; j++)
			mu[j] += w * terms[i * PT_TERM_COUNT + j];
		mu[PT_TERM_COUNT] += w * ms[i];
		wsum[gi] += w;
	}
	for (i = 0; i < ng; i++)
		for (j = 0; j <= PT_TERM_COUNT && wsum[i] > 0; j++)
			gm->mean[i * (PT_TERM_COUNT + 1) + j] /= wsum[i];
	free(wsum);
	return 0;
}

/* The trees of c (whose linear layer is fitted): on the residual
 * log(ms / linear), centred per pipeline. */
static int fit_trees(struct pt_cost *c, const double *terms,
		     const double *ms, const int *group, size_t n,
		     const struct pt_cost_fit_opts *o, struct pt_error *err)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	double *X = malloc(n * PT_COST_GBT_DIMS * sizeof(*X));
	double *y = malloc(n * sizeof(*y));
	double *sum = NULL;
	int *cnt = NULL, gmin;
	size_t i, ng = group_range(group, n, &gmin);
	int ret;

	if (X && y && ng) {
		sum = calloc(ng, sizeof(*sum));
		cnt = calloc(ng, sizeof(*cnt));
	}
	if (!sum || !cnt) {
		free(X), free(y), free(sum), free(cnt);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const double *t = &terms[i * PT_TERM_COUNT];
		double lin = pt_cost_linear(c, t);

		pt_cost_gbt_input(c->coef, t, &X[i * PT_COST_GBT_DIMS]);
		y[i] = log(ms[i]) - log(lin > 1e-300 ? lin : 1e-300);
		sum[group[i] - gmin] += y[i];
		cnt[group[i] - gmin]++;
	}
	for (i = 0; i < n; i++)
		y[i] -= sum[group[i] - gmin] / cnt[group[i] - gmin];
	p.trees = o->trees;
	p.seed = o->seed;
	ret = pt_gbt_fit(X, n, PT_COST_GBT_DIMS, y, NULL, &p, &c->gbt, err);
	free(X), free(y), free(sum), free(cnt);
	return ret;
}

/* Scale the normal equations g x = h (k x k) so that every column has
 * unit norm (diagonal 1; a zero column gets a unit diagonal and no
 * right-hand side), add the ridge, solve under x >= 0, and unscale into
 * coef. */
static void scaled_nnls(double *g, double *h, double ridge, double *coef)
{
	double scale[PT_TERM_COUNT], x[PT_TERM_COUNT];
	int j, k;

	for (j = 0; j < PT_TERM_COUNT; j++)
		scale[j] = g[j * PT_TERM_COUNT + j] > 0 ?
			sqrt(g[j * PT_TERM_COUNT + j]) : 0;
	for (j = 0; j < PT_TERM_COUNT; j++) {
		for (k = 0; k < PT_TERM_COUNT; k++)
			g[j * PT_TERM_COUNT + k] = scale[j] > 0 && scale[k] > 0 ?
				g[j * PT_TERM_COUNT + k] / (scale[j] * scale[k]) :
				(j == k);
		h[j] = scale[j] > 0 ? h[j] / scale[j] : 0;
		g[j * PT_TERM_COUNT + j] += ridge;
	}
	nnls(g, h, PT_TERM_COUNT, x);
	for (j = 0; j < PT_TERM_COUNT; j++)
		coef[j] = scale[j] > 0 ? x[j] / scale[j] : 0;
}

/* The linear loss (PT_COST_LOSS_LINEAR, pt_cost.h). */
static int fit_linear(const double *terms, const double *ms, const int *group,
		      size_t n, const struct pt_cost_fit_opts *o,
		      double *coef)
{
	struct gmeans gm;
	double g[PT_TERM_COUNT * PT_TERM_COUNT] = { 0 }, h[PT_TERM_COUNT] = { 0 };
	size_t i;
	int j, k, ret;

	/* Weighted least squares (weight() above) with a free intercept per
	 * pipeline: the intercepts are eliminated by
	 * centring every column and the runtimes on their weighted means
	 * within the pipeline, so the coefficients explain how runtimes
	 * differ within a pipeline (what ranking needs), not how pipelines
	 * differ from each other. */
	if ((ret = group_means(terms, ms, group, n, o->weight_power, &gm)))
		return ret;
	for (i = 0; i < n; i++) {
		const double *t = &terms[i * PT_TERM_COUNT];
		const double *mu = &gm.mean[(size_t)(group[i] - gm.gmin) *
					    (PT_TERM_COUNT + 1)];
		double w = weight(ms[i], gm.gscale[group[i] - gm.gmin],
				  o->weight_power);
		double a[PT_TERM_COUNT], b;

		for (j = 0; j < PT_TERM_COUNT; j++)
			a[j] = t[j] - mu[j];
		b = ms[i] - mu[PT_TERM_COUNT];
		for (j = 0; j < PT_TERM_COUNT; j++) {
			h[j] += w * a[j] * b;
			for (k = 0; k < PT_TERM_COUNT; k++)
				g[j * PT_TERM_COUNT + k] += w * a[j] * a[k];
		}
	}
	free(gm.mean);
	free(gm.gscale);
	scaled_nnls(g, h, o->ridge, coef);
	return 0;
}

/* Scratch of the log loss: per row the prediction, per pipeline sums of
 * PT_TERM_COUNT + 1 values and counts. */
struct logfit {
	const double *terms, *ms;
	const int *group;
	size_t n, ng;
	int gmin;
	double *pred;
	double *gsum;     /* ng * (PT_TERM_COUNT + 1) */
	double *gcnt;
};

static double predict_row(const double *t, const double *coef)
{
	double p = 0;
	int k;

	for (k = 0; k < PT_TERM_COUNT; k++)
		p += coef[k] * t[k];
	return p > 1e-300 ? p : 1e-300;
}

/* sum over rows of (log ms - log pred - its pipeline's mean)^2. */
static double log_loss(struct logfit *f, const double *coef)
{
	double loss = 0;
	size_t i;

	memset(f->gsum, 0, f->ng * sizeof(*f->gsum));
	for (i = 0; i < f->n; i++) {
		f->pred[i] = log(f->ms[i]) -
			log(predict_row(&f->terms[i * PT_TERM_COUNT], coef));
		f->gsum[f->group[i] - f->gmin] += f->pred[i];
	}
	for (i = 0; i < f->n; i++) {
		size_t gi = (size_t)(f->group[i] - f->gmin);
		double r = f->pred[i] - f->gsum[gi] / f->gcnt[gi];

		loss += r * r;
	}
	return loss;
}

/* One Gauss-Newton step of the log loss from coef: linearizing log(pred)
 * around the current prediction p gives, for the new coefficients x,
 * residuals (log ms - log p + 1) - sum_k x_k term_k / p, centred per
 * pipeline; solved under x >= 0 into next. */
static void log_step(struct logfit *f, const double *coef, double ridge,
		     double *next)
{
	double g[PT_TERM_COUNT * PT_TERM_COUNT] = { 0 };
	double h[PT_TERM_COUNT] = { 0 };
	const size_t w = PT_TERM_COUNT + 1;
	size_t i;
	int j, k;

	memset(f->gsum, 0, f->ng * w * sizeof(*f->gsum));
	for (i = 0; i < f->n; i++) {
		const double *t = &f->terms[i * PT_TERM_COUNT];
		double *s = &f->gsum[(size_t)(f->group[i] - f->gmin) * w];
		double p = predict_row(t, coef);

		f->pred[i] = p;
		for (k = 0; k < PT_TERM_COUNT; k++)
			s[k] += t[k] / p;
		s[PT_TERM_COUNT] += log(f->ms[i]) - log(p) + 1;
	}
	for (i = 0; i < f->n; i++) {
		const double *t = &f->terms[i * PT_TERM_COUNT];
		size_t gi = (size_t)(f->group[i] - f->gmin);
		const double *s = &f->gsum[gi * w];
		double a[PT_TERM_COUNT], b, p = f->pred[i], c = f->gcnt[gi];

		for (k = 0; k < PT_TERM_COUNT; k++)
			a[k] = t[k] / p - s[k] / c;
		b = log(f->ms[i]) - log(p) + 1 - s[PT_TERM_COUNT] / c;
		for (j = 0; j < PT_TERM_COUNT; j++) {
			h[j] += a[j] * b;
			for (k = 0; k < PT_TERM_COUNT; k++)
				g[j * PT_TERM_COUNT + k] += a[j] * a[k];
		}
	}
	scaled_nnls(g, h, ridge, next);
}

/* The log loss (PT_COST_LOSS_LOG, pt_cost.h). Starts with every term
 * contributing equally on average. */
static int fit_log(const double *terms, const double *ms, const int *group,
		   size_t n, const struct pt_cost_fit_opts *o, double *coef)
{
	struct logfit f;
	double mean[PT_TERM_COUNT] = { 0 }, next[PT_TERM_COUNT];
	double trial[PT_TERM_COUNT], loss, shift = 0;
	size_t i;
	int k, it, nz = 0;

	f.terms = terms;
	f.ms = ms;
	f.group = group;
	f.n = n;
	f.ng = group_range(group, n, &f.gmin);
	f.pred = malloc(n * sizeof(*f.pred));
	f.gsum = f.ng ? calloc(f.ng * (PT_TERM_COUNT + 1),
			       sizeof(*f.gsum)) : NULL;
	f.gcnt = f.ng ? calloc(f.ng, sizeof(*f.gcnt)) : NULL;
	if (!f.pred || !f.gsum || !f.gcnt) {
		free(f.pred), free(f.gsum), free(f.gcnt);
		return PT_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		f.gcnt[group[i] - f.gmin] += 1;
		for (k = 0; k < PT_TERM_COUNT; k++)
			mean[k] += terms[i * PT_TERM_COUNT + k] / (double)n;
	}
	for (k = 0; k < PT_TERM_COUNT; k++)
		nz += mean[k] > 0;
	for (k = 0; k < PT_TERM_COUNT; k++)
		coef[k] = mean[k] > 0 ? 1 / (nz * mean[k]) : 0;
	loss = log_loss(&f, coef);
	for (it = 0; it < 200; it++) {
		double alpha = 1, l = loss;

		log_step(&f, coef, o->ridge, next);
		for (; alpha > 1e-6; alpha /= 2) {
			for (k = 0; k < PT_TERM_COUNT; k++)
				trial[k] = coef[k] + alpha * (next[k] - coef[k]);
			if ((l = log_loss(&f, trial)) < loss)
				break;
		}
		if (!(l < loss))
			break;
		memcpy(coef, trial, sizeof(trial));
		if (loss - l <= 1e-12 * loss) {
			loss = l;
			break;
		}
		loss = l;
	}
	/* The common scale: predictions' geometric mean = the runtimes'. */
	for (i = 0; i < n; i++)
		shift += (log(ms[i]) -
			  log(predict_row(&terms[i * PT_TERM_COUNT], coef))) /
			(double)n;
	for (k = 0; k < PT_TERM_COUNT; k++)
		coef[k] *= exp(shift);
	free(f.pred), free(f.gsum), free(f.gcnt);
	return 0;
}

int pt_cost_fit(const double *terms, const double *ms, const int *group,
		size_t n, const struct pt_cost_fit_opts *opts,
		struct pt_cost **out, struct pt_error *err)
{
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	struct pt_cost *c;
	size_t i;
	int j, ret;

	*out = NULL;
	if (opts)
		o = *opts;
	if (!n)
		return pt_error_set(err, PT_EINVAL, "no samples to fit");
	for (i = 0; i < n; i++) {
		if (!(ms[i] > 0) || !isfinite(ms[i]))
			return pt_error_set(err, PT_EINVAL,
					    "sample %zu: runtime %g is not a positive number",
					    i, ms[i]);
		for (j = 0; j < PT_TERM_COUNT; j++)
			if (!isfinite(terms[i * PT_TERM_COUNT + j]) ||
			    terms[i * PT_TERM_COUNT + j] < 0)
				return pt_error_set(err, PT_EINVAL,
						    "sample %zu: term %s is %g",
						    i, term_names[j],
						    terms[i * PT_TERM_COUNT + j]);
	}
	if (o.loss != PT_COST_LOSS_LOG && o.loss != PT_COST_LOSS_LINEAR)
		return pt_error_set(err, PT_EINVAL, "unknown loss %d", o.loss);
	if (!(c = calloc(1, sizeof(*c))))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	ret = o.loss == PT_COST_LOSS_LOG ?
		fit_log(terms, ms, group, n, &o, c->coef) :
		fit_linear(terms, ms, group, n, &o, c->coef);
	if (ret) {
		pt_cost_free(c);
		return pt_error_set(err, ret, "out of memory");
	}
	if (o.trees > 0 && (ret = fit_trees(c, terms, ms, group, n, &o, err))) {
		pt_cost_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* --- text ----------------------------------------------------------------- */

int pt_cost_write(const struct pt_cost *c, struct pt_strbuf *out)
{
	int k;

	if (pt_strbuf_addf(out, "protune-cost %d\nfeatures %d\n",
			   PT_COST_FORMAT_VERSION, PT_FEAT_VERSION))
		return PT_ENOMEM;
	for (k = 0; k < PT_TERM_COUNT; k++)
		if (pt_strbuf_addf(out, "term %s %.17g\n", term_names[k],
				   c->coef[k]))
			return PT_ENOMEM;
	return c->gbt ? pt_gbt_write(c->gbt, out) : 0;
}

/* Take a finite, non-negative double token. */
static int take_double(struct pt_text *t, double *out, const char *what)
{
	struct pt_tok tok;
	char buf[64], *end;
	int ret;

	if ((ret = pt_text_tok(t, &tok, what)))
		return ret;
	if (tok.n == 0 || tok.n >= sizeof(buf))
		return pt_text_error(t, "bad %s", what);
	memcpy(buf, tok.s, tok.n);
	buf[tok.n] = 0;
	*out = strtod(buf, &end);
	if (*end || !isfinite(*out) || *out < 0)
		return pt_text_error(t, "bad %s '%s' (expected a finite number >= 0)",
				     what, buf);
	return 0;
}

int pt_cost_parse(const char *text, size_t len, const char *name,
		  struct pt_cost **out, struct pt_error *err)
{
	struct pt_text t;
	struct pt_cost *c;
	int64_t v;
	int k, ret;

	*out = NULL;
	if (!(c = calloc(1, sizeof(*c))))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	pt_text_init(&t, text, len, name, err);
	if ((ret = pt_text_next(&t)) <= 0) {
		ret = ret ? ret : pt_text_error(&t, "empty cost model");
		goto fail;
	}
	if ((ret = pt_text_word(&t, "protune-cost")) ||
	    (ret = pt_text_int(&t, 0, 1000000, &v, "format version")) ||
	    (ret = pt_text_end(&t)))
		goto fail;
	if (v != PT_COST_FORMAT_VERSION) {
		ret = pt_text_error(&t, "cost model format %lld, this protune reads %d: train it again (protune train)",
				    (long long)v, PT_COST_FORMAT_VERSION);
		goto fail;
	}
	if ((ret = pt_text_next(&t)) <= 0 ||
	    (ret = pt_text_word(&t, "features")) ||
	    (ret = pt_text_int(&t, 0, 1000000, &v, "feature version")) ||
	    (ret = pt_text_end(&t))) {
		ret = ret ? ret : pt_text_error(&t, "expected 'features'");
		goto fail;
	}
	if (v != PT_FEAT_VERSION) {
		ret = pt_text_error(&t, "fitted to features version %lld, this protune computes version %d: train it again (protune train)",
				    (long long)v, PT_FEAT_VERSION);
		goto fail;
	}
	for (k = 0; k < PT_TERM_COUNT; k++) {
		if ((ret = pt_text_next(&t)) <= 0 ||
		    (ret = pt_text_word(&t, "term")) ||
		    (ret = pt_text_word(&t, term_names[k])) ||
		    (ret = take_double(&t, &c->coef[k], "coefficient")) ||
		    (ret = pt_text_end(&t))) {
			ret = ret ? ret : pt_text_error(&t,
				"expected 'term %s'", term_names[k]);
			goto fail;
		}
	}
	if ((ret = pt_text_next(&t)) < 0)
		goto fail;
	if (ret) {
		pt_text_unread(&t);
		if ((ret = pt_gbt_read(&t, &c->gbt)))
			goto fail;
		if (pt_gbt_dims(c->gbt) != PT_COST_GBT_DIMS) {
			ret = pt_text_error(&t, "trees over %d inputs, expected %d",
					    pt_gbt_dims(c->gbt),
					    PT_COST_GBT_DIMS);
			goto fail;
		}
		if ((ret = pt_text_next(&t)) != 0) {
			if (ret > 0)
				ret = pt_text_error(&t, "unexpected line after the trees");
			goto fail;
		}
	}
	pt_text_release(&t);
	*out = c;
	return 0;
fail:
	pt_text_release(&t);
	pt_cost_free(c);
	return ret;
}

/* --- ranking -------------------------------------------------------------- */

struct rk {
	double v;
	size_t i;
};

static int rk_cmp(const void *a, const void *b)
{
	const struct rk *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Average ranks (ties share the mean of their positions) into r. */
static int ranks(const double *v, size_t n, double *r)
{
	struct rk *a = malloc(n * sizeof(*a));
	size_t i, j, k;

	if (!a)
		return -1;
	for (i = 0; i < n; i++)
		a[i].v = v[i], a[i].i = i;
	qsort(a, n, sizeof(*a), rk_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && a[j].v == a[i].v; j++)
			;
		for (k = i; k < j; k++)
			r[a[k].i] = 0.5 * (double)(i + j - 1);
	}
	free(a);
	return 0;
}

double pt_cost_spearman(const double *a, const double *b, size_t n)
{
	double *ra = malloc(n * sizeof(*ra)), *rb = malloc(n * sizeof(*rb));
	double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0, res = 0;
	size_t i;

	if (ra && rb && n >= 2 && !ranks(a, n, ra) && !ranks(b, n, rb)) {
		for (i = 0; i < n; i++)
			ma += ra[i], mb += rb[i];
		ma /= (double)n, mb /= (double)n;
		for (i = 0; i < n; i++) {
			sab += (ra[i] - ma) * (rb[i] - mb);
			saa += (ra[i] - ma) * (ra[i] - ma);
			sbb += (rb[i] - mb) * (rb[i] - mb);
		}
		res = saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
	}
	free(ra), free(rb);
	return res;
}

double pt_cost_top1_regret(const double *predicted, const double *measured,
			   size_t n)
{
	size_t i, best = 0, fastest = 0;

	for (i = 1; i < n; i++) {
		if (predicted[i] < predicted[best])
			best = i;
		if (measured[i] < measured[fastest])
			fastest = i;
	}
	return n ? measured[best] / measured[fastest] : 0;
}
