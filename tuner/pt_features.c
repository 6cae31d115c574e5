/* pt_features.c: the features of a complete schedule (pt_features.h;
 * doc/features.md defines each one).
 *
 * pt_features_compute() works in passes over the schedule:
 *   1. Replay each stage's directives into its loop nest (the structure of
 *      pt_sched_nest(), plus, per loop, the stage dim it descends from and
 *      its step along that dim, so that its extent can be recomputed for
 *      any region of the Func), and resolve compute and store sites.
 *   2. Regions: the root site first (what the whole pipeline computes of
 *      every Func; it depends only on the inlined Funcs, and is kept per
 *      set of them), then, consumers first, every loop that is the compute,
 *      store or task site of some Func: the box one iteration of that loop
 *      covers in its stage, the footprints it reads (through inlined
 *      Funcs), and in decreasing order the regions of the Funcs computed
 *      inside it and what they read in turn. A Func's region per
 *      production, per realization and per task come out of these runs,
 *      together with its numbers of productions and realizations.
 *   3. Working sets: allocation sizes summed over loop sites bottom-up.
 *   4. Per stage: counts, vectors, loads (Jacobians composed through
 *      inlined Funcs), and footprints read at root, per realization, per
 *      production, per task and per vector.
 *   5. Inlined Funcs: how many times each is evaluated.
 * Pass 4 is skipped for a stage whose inputs are the bytes they were when
 * its row was last computed (row_key(), struct fx_smemo): the row kept
 * then is copied, and only its working sets computed.
 * All scratch lives in the context and grows only when a schedule needs
 * more loops than any before, when a new inlined set's reads at root
 * are kept (struct fx_rootset, a bounded number of sets), or when a
 * stage's key is longer than any before.
 */
#include "protune/pt_features.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protune/pt_footprint.h"
#include "protune/pt_randsched.h"

#include "pt_keep_int.h"

#define FX_MAXCHAIN 8     /* splits of one dim's outer loops */
#define FX_MAXDIRS 8      /* the vector loop and unrolled loops */
#define FX_MAXLEAVES 4096 /* load paths through inlined Funcs, per stage */
#define FX_ROOTSETS 64    /* inlined sets whose root pass is kept */
#define FX_ROOTBYTES (2 << 20)  /* about this much of them at most */

enum { ROLE_C = 1, ROLE_S = 2, ROLE_T = 4 };
enum { REG_INL = 1, REG_DECIDED = 2 };

/* A loop while its stage's directives are replayed. */
struct rloop {
	struct pt_feat_loop pub;
	int chain;         /* a split inner half of a dim's outer loops: its
			    * split's rank among them; else -1 */
};

/* Per model stage. */
struct fx_stage {
	/* fixed per model */
	int func;
	char pname[PT_FP_MAXDIMS][8];
	uint64_t pkey[PT_FP_MAXDIMS];   /* name_key() of pname */
	struct rloop init[PT_FP_MAXDIMS];  /* the loops before any directive */
	double min_points;
	/* per schedule */
	int first, nloops;
	int nchain[PT_FP_MAXDIMS];
	int chain[PT_FP_MAXDIMS][FX_MAXCHAIN];  /* split inner halves of the
						 * dim's outer loops, in
						 * split order */
	int64_t lo[PT_FP_MAXDIMS], ext[PT_FP_MAXDIMS];  /* one production */
	double points;     /* points of one production */
};

/* Per Func, per schedule. */
struct fx_func {
	int again;         /* its loops replay_again()'s in this schedule */
	int cj, cp;        /* compute site (cj < 0: root) */
	int sj, sp;        /* store site (sj < 0: root) */
	int tj, tp;        /* innermost parallel loop enclosing the compute
			    * site (tj < 0: none) */
	struct pt_box rc, rs, rt, rroot;
	double prod, real, outer_par;
	double bytes_real;
	double inside;     /* allocations inside its loops */
	/* where its compute [0] and store [1] loops were found (find_site())
	 * for the revisions [i][0] of its entry and [i][1] of the site
	 * Func's (site_at()); 0: none */
	uint64_t site_rev[2][2];
	int site_pos[2];
	/* regions(): the call that last found a Func at or below its `top`
	 * asking for a region at one of this Func's loops */
	uint64_t wanted;
};

struct fx_req {
	int func, roles, next;
};

/* Loads of a stage with the same producer and the same Jacobian (they
 * differ in offsets only): one group, counts added. The load features
 * depend on the Jacobian alone. */
struct fx_grp {
	int node;
	int self;
	int ncoords;
	int coord;         /* index of the first coordinate's Jacobian row */
	double count;
};

/* What depends only on which Funcs are inlined, kept for one such set:
 * the root regions (root_run()) and, per stage, what it reads at root (the
 * nodes reads_at() meets, in order, and their boxes), filled in as stages
 * need them. */
struct fx_rootset {
	uint64_t *key;     /* fx->words words of fx->inl */
	uint64_t gen;      /* which set it is: never the same for two */
	struct pt_box *rroot;  /* per Func */
	int *rd_first;     /* per stage: first of its reads, -1: not yet */
	int *rd_n;         /* per stage: how many */
	int n, cap;        /* reads kept, room for them */
	int *node;
	struct pt_box *box;
};

/* A stage's row as it was last computed (all but the working sets), and
 * the bytes of everything that row was computed from (row_key()). */
struct fx_smemo {
	unsigned char *key;
	size_t len, cap;   /* len 0: nothing kept */
	uint64_t cur;      /* the schedule (fx->serial) whose row `row` was
			    * last (0: none) */
	uint64_t same;     /* the last schedule whose row row_same() kept
			    * (fx->serial after it; 0: none) */
	double row[PT_FEAT_COUNT];
};

/* A stage's loops as its directives last replayed them (the rest of what
 * replay() sets, the chains, stays in its struct fx_stage). */
struct fx_replay {
	struct pt_feat_loop *l;
	uint64_t *k;       /* their name_key()s */
	int n, cap;
	int ext;           /* l holds the extents set_extents() last gave
			    * the stage (and its lo, ext and points are
			    * those) */
};

/* A load of another Func by a stage, in model order (inlined_counts()):
 * the Func and how many times a point calls it. */
struct fx_call {
	int func;
	int count;
};

struct pt_features {
	const struct pt_model *m;
	struct pt_fp *fp;
	struct pt_fp_acc acc, acc2;
	int nfuncs, nstages, words;
	struct fx_stage *st;
	/* per Func, fixed */
	int *last;         /* model stage index of the last stage */
	int *bytes;        /* bytes per point */
	/* per node (pt_footprint.h), fixed */
	int *nd;           /* dims */
	int *nbytes;       /* bytes per point */
	const struct pt_box **nregion;  /* the model's region */
	double *nalloc;    /* inputs: bytes of the whole region */
	int *lanes;        /* native vector lanes */
	int vbytes;        /* native vector bytes */
	/* per access (in model order), fixed: Jacobian rows */
	int *acc_first;    /* per stage: index of its first access */
	int *coord_first;  /* per access: index of its first coordinate */
	double *jac;       /* per coordinate: PT_FP_MAXDIMS coefficients
			    * (NaN: a partial coordinate's varying dim) */
	unsigned char *unknown;  /* per coordinate: not affine */
	double *algo;      /* per stage: PT_ALGO_COUNT */
	int *grp_first;    /* per stage: its first load group */
	struct fx_grp *grp;
	int *call_first;   /* per stage: its first call of another Func */
	uint64_t *cmask;   /* per stage: words bits, the Funcs it calls */
	struct fx_call *call;
	/* per Func: the accesses that read it (kind PT_ACCESS_FUNC), as
	 * (stage, access) pairs in model order, rdr[rdr_first[f] ..
	 * rdr_first[f + 1] - 1] */
	int *rdr_first;
	int (*rdr)[2];
	/* per schedule */
	struct fx_func *fn;
	uint64_t *inl;     /* bitset of inlined Funcs */
	unsigned char *inl1;  /* the same, a byte per Func (read often) */
	double *copies;    /* per Func, scratch of the inline count */
	int cap;           /* capacity of the per-loop arrays */
	struct pt_feat_loop *loops;
	uint64_t *lkey;    /* per loop: name_key() of its name */
	int *head;         /* per loop: first request for that site */
	double *direct;    /* per loop of a last stage: allocation bytes
			    * inside one iteration, not counting deeper
			    * loops */
	double *wsuf;      /* the same including deeper loops */
	int nreq, reqcap;
	struct fx_req *req;
	double wroot;
	/* the root pass of the last few inlined sets met, replaced in
	 * turn; rcur is the current schedule's */
	int rcap, rn, rnext, rcur;
	uint64_t rgen;     /* the last set's gen */
	struct fx_rootset *rset;
	/* per stage, its row as last computed (row_key()) */
	struct fx_smemo *sm;
	unsigned char *kbuf;  /* the key being built */
	size_t kcap;
	struct pt_keep keep;  /* whether a schedule looks rows up */
	/* per Func, the revision its stages were last replayed for (0:
	 * none; pt_features_compute_rev()), and per stage that replay */
	uint64_t *frev;
	struct fx_replay *rp;
	/* per Func, what regions() last computed its regions for: the
	 * revision of its entry (0: none) and its flags (REG_*); rvalid: they
	 * hold (the last call had revisions and finished) */
	uint64_t *rrev;
	unsigned char *rflag;
	int rvalid;
	uint64_t rcalls;      /* regions() calls, for fx_func.wanted */
	/* schedules featurized to the end, and the inlined set (its gen) of
	 * the last */
	uint64_t serial, sgen;
	int top;              /* regions_changed() of the last schedule */
};

/* --- names ---------------------------------------------------------------- */

static const char *const feat_names[PT_FEAT_COUNT] = {
	"num_realizations", "num_productions",
	"points_computed_per_realization", "points_computed_per_production",
	"points_computed_total", "points_computed_minimum",
	"redundant_recompute", "innermost_loop_extent",
	"innermost_pure_loop_extent", "unrolled_loop_extent",
	"inner_parallelism", "outer_parallelism", "vector_size",
	"native_vector_size", "num_vectors", "num_scalars", "inlined_calls",
	"vector_loads_per_vector", "scalar_loads_per_vector",
	"scalar_loads_per_scalar", "bytes_at_root", "innermost_bytes_at_root",
	"bytes_at_realization", "innermost_bytes_at_realization",
	"bytes_at_production", "innermost_bytes_at_production",
	"bytes_at_task", "innermost_bytes_at_task", "bytes_read_at_root",
	"lines_read_at_root", "bytes_read_per_realization",
	"lines_read_per_realization", "bytes_read_per_production",
	"lines_read_per_production", "bytes_read_per_task",
	"lines_read_per_task", "bytes_read_per_vector",
	"lines_read_per_vector", "allocation_bytes_read_per_realization",
	"working_set", "working_set_at_task", "working_set_at_production",
	"working_set_at_realization", "working_set_at_root"
};

static const char *const op_names[PT_OP_COUNT] = {
	"add", "sub", "mul", "div", "mod", "min", "max", "eq", "ne", "lt",
	"le", "gt", "ge", "and", "or", "not", "select", "cast", "load", "call",
	"other"
};

static const char *const tc_names[PT_TC_COUNT] = {
	"bool", "int8", "int16", "int32", "int64", "float", "double"
};

static const char *const pat_names[PT_PAT_COUNT] = {
	"pointwise", "transpose", "broadcast", "slice", "other"
};

static const char *const acc_names[PT_ACC_COUNT] = {
	"func", "self", "input", "store"
};

const char *pt_feat_name(int feat)
{
	return feat >= 0 && feat < PT_FEAT_COUNT ? feat_names[feat] : NULL;
}

int pt_algo_name(int index, char *buf, size_t size)
{
	int n;

	if (index < 0 || index >= PT_ALGO_COUNT || !buf)
		return PT_EINVAL;
	if (index < PT_OP_COUNT * PT_TC_COUNT)
		n = snprintf(buf, size, "op.%s.%s",
			     op_names[index / PT_TC_COUNT],
			     tc_names[index % PT_TC_COUNT]);
	else
		n = snprintf(buf, size, "access.%s.%s",
			     pat_names[(index - PT_OP_COUNT * PT_TC_COUNT) /
				       PT_ACC_COUNT],
			     acc_names[(index - PT_OP_COUNT * PT_TC_COUNT) %
				       PT_ACC_COUNT]);
	return n < 0 || (size_t)n >= size ? PT_EINVAL : 0;
}

/* --- helpers -------------------------------------------------------------- */

static int64_t div_up(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : a;
}

/* strcmp(a, b) == 0 for the short names of loops, inline. */
static int same_name(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* A loop name as an integer, so that looking a loop up by name compares
 * integers: the bytes of a name of 1 to 7 characters, zero-padded (two such
 * names are equal exactly when their keys are); 0 for any other name, which
 * is then compared as a string. */
static uint64_t name_key(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	uint64_t k = 0;
	int i;

	for (i = 0; i < 7; i++) {
		if (!u[i])
			return k;
		k |= (uint64_t)u[i] << (8 * i);
	}
	return u[7] ? 0 : k;
}

/* Does a name with key `ka` equal `b` with key `kb`? */
static int key_is(uint64_t ka, const char *a, uint64_t kb, const char *b)
{
	return ka == kb && (ka || same_name(a, b));
}

static int type_class(const char *t, size_t n, int *out)
{
	static const struct { const char *name; int tc; } map[] = {
		{ "u1", PT_TC_BOOL },
		{ "i8", PT_TC_INT8 }, { "u8", PT_TC_INT8 },
		{ "i16", PT_TC_INT16 }, { "u16", PT_TC_INT16 },
		{ "i32", PT_TC_INT32 }, { "u32", PT_TC_INT32 },
		{ "i64", PT_TC_INT64 }, { "u64", PT_TC_INT64 },
		{ "h64", PT_TC_INT64 }, { "f16", PT_TC_FLOAT },
		{ "f32", PT_TC_FLOAT }, { "f64", PT_TC_DOUBLE }
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].name) == n && !strncmp(map[i].name, t, n)) {
			*out = map[i].tc;
			return 1;
		}
	return 0;
}

static int type_class_of(struct pt_type t)
{
	if (t.code == PT_TYPE_FLOAT)
		return t.bits > 32 ? PT_TC_DOUBLE : PT_TC_FLOAT;
	if (t.bits <= 1)
		return PT_TC_BOOL;
	if (t.bits <= 8)
		return PT_TC_INT8;
	if (t.bits <= 16)
		return PT_TC_INT16;
	if (t.bits <= 32)
		return PT_TC_INT32;
	return PT_TC_INT64;
}

/* --- algorithm features --------------------------------------------------- */

static void op_features(const struct pt_model *m, const struct pt_stage *st,
			double *algo)
{
	const struct pt_func *fn = &m->funcs[st->func];
	int dflt = fn->ntypes ? type_class_of(fn->types[0]) : PT_TC_INT32;
	int i, k;

	for (i = 0; i < st->nops; i++) {
		const char *name = st->ops[i].name;
		const char *dot = strchr(name, '.');
		size_t kl = dot ? (size_t)(dot - name) : strlen(name);
		int op = PT_OP_OTHER, tc = dflt;

		for (k = 0; k < PT_OP_OTHER; k++)
			if (strlen(op_names[k]) == kl &&
			    !strncmp(op_names[k], name, kl))
				op = k;
		if (dot && op != PT_OP_CALL) {
			type_class(dot + 1, strlen(dot + 1), &tc);
		} else if (dot) {
			/* call.sqrt_f32: a type suffix when there is one */
			const char *u = strrchr(dot + 1, '_');

			if (u)
				type_class(u + 1, strlen(u + 1), &tc);
		}
		algo[PT_ALGO_OP(op, tc)] += (double)st->ops[i].count;
	}
}

static int access_pattern(const struct pt_stage *st, const struct pt_access *a)
{
	int rows[PT_FP_MAXDIMS] = { 0 }, cols[PT_FP_MAXDIMS] = { 0 };
	int k, d, all_rows1 = 1, rows_le1 = 1, all_cols1 = 1, cols_le1 = 1;
	int identity = 1;

	if (a->ncoords > PT_FP_MAXDIMS)
		return PT_PAT_OTHER;
	for (k = 0; k < a->ncoords; k++) {
		const struct pt_coord *c = &a->coords[k];

		if (!c->affine || !c->coef)
			return PT_PAT_OTHER;
		for (d = 0; d < st->ndims; d++) {
			if (!c->coef[d].num)
				continue;
			if (c->coef[d].num != 1 || c->coef[d].den != 1)
				return PT_PAT_OTHER;
			rows[k]++;
			cols[d]++;
			if (st->dims[d].is_rvar || st->dims[d].index != k)
				identity = 0;
		}
	}
	for (k = 0; k < a->ncoords; k++) {
		all_rows1 &= rows[k] == 1;
		rows_le1 &= rows[k] <= 1;
	}
	for (d = 0; d < st->ndims; d++) {
		all_cols1 &= cols[d] == 1;
		cols_le1 &= cols[d] <= 1;
	}
	if (all_rows1 && all_cols1 && a->ncoords == st->ndims)
		return identity ? PT_PAT_POINTWISE : PT_PAT_TRANSPOSE;
	if (all_rows1 && cols_le1)
		return PT_PAT_BROADCAST;
	if (rows_le1 && all_cols1)
		return PT_PAT_SLICE;
	return PT_PAT_OTHER;
}

static void access_features(const struct pt_stage *st, double *algo)
{
	int i;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];
		int kind = a->is_store ? PT_ACC_STORE :
			a->kind == PT_ACCESS_INPUT ? PT_ACC_INPUT :
			a->producer == st->func ? PT_ACC_SELF : PT_ACC_FUNC;

		algo[PT_ALGO_ACCESS(access_pattern(st, a), kind)] +=
			a->count > 0 ? a->count : 1;
	}
}

/* --- construction --------------------------------------------------------- */

static int grow_loops(struct pt_features *fx, int need)
{
	int cap = fx->cap;
	void *p;

	if (need <= cap)
		return 0;
	while (cap < need)
		cap = cap ? 2 * cap : 64;
#define GROW(field) do { \
		p = realloc(fx->field, (size_t)cap * sizeof(*fx->field)); \
		if (!p) \
			return PT_ENOMEM; \
		fx->field = p; \
	} while (0)
	GROW(loops);
	GROW(lkey);
	GROW(head);
	GROW(direct);
	GROW(wsuf);
#undef GROW
	fx->cap = cap;
	return 0;
}

/* The loop of dim d before any directive (pname[d] is set). */
static void init_loop(struct fx_stage *fs, int d)
{
	struct rloop *o = &fs->init[d];

	memset(o, 0, sizeof(*o));
	o->pub.name = fs->pname[d];
	o->pub.dim = d;
	o->pub.kind = PT_LOOP_SERIAL;
	o->pub.tail = -1;
	o->pub.stride = 1;
	o->chain = -1;
	fs->pkey[d] = name_key(fs->pname[d]);
}

/* Build the load groups of stage `sidx` (its Jacobian rows are in). */
static void group_loads(struct pt_features *fx, int sidx)
{
	const struct pt_stage *st = &fx->m->stages[sidx];
	int first = fx->grp_first[sidx], n = 0, i, j, k;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];
		int ci = fx->coord_first[fx->acc_first[sidx] + i];
		int node = a->kind == PT_ACCESS_FUNC ? a->producer :
			fx->m->nfuncs + a->producer;
		int self = a->kind == PT_ACCESS_FUNC && a->producer == st->func;
		struct fx_grp *g;

		if (a->is_store)
			continue;
		for (j = 0; j < n; j++) {
			g = &fx->grp[first + j];
			if (g->node != node || g->self != self ||
			    g->ncoords != a->ncoords)
				continue;
			for (k = 0; k < a->ncoords; k++)
				if (fx->unknown[g->coord + k] !=
				    fx->unknown[ci + k] ||
				    memcmp(&fx->jac[(size_t)(g->coord + k) *
						    PT_FP_MAXDIMS],
					   &fx->jac[(size_t)(ci + k) *
						    PT_FP_MAXDIMS],
					   PT_FP_MAXDIMS * sizeof(double)))
					break;
			if (k == a->ncoords)
				break;
		}
		if (j == n) {
			g = &fx->grp[first + n++];
			g->node = node;
			g->self = self;
			g->ncoords = a->ncoords;
			g->coord = ci;
			g->count = 0;
		} else {
			g = &fx->grp[first + j];
		}
		g->count += a->count > 0 ? a->count : 1;
	}
	fx->grp_first[sidx + 1] = first + n;
}

/* The loads of other Funcs by stage `sidx`, for inlined_counts(). */
static void list_calls(struct pt_features *fx, int sidx)
{
	const struct pt_stage *st = &fx->m->stages[sidx];
	int n = fx->call_first[sidx], i;

	for (i = 0; i < st->naccesses; i++) {
		const struct pt_access *a = &st->accesses[i];

		if (a->kind != PT_ACCESS_FUNC || a->is_store ||
		    a->producer == st->func)
			continue;
		fx->call[n].func = a->producer;
		fx->call[n].count = a->count > 0 ? a->count : 1;
		fx->cmask[(size_t)sidx * fx->words + (a->producer >> 6)] |=
			UINT64_C(1) << (a->producer & 63);
		n++;
	}
	fx->call_first[sidx + 1] = n;
}

/* fx->rdr_first, fx->rdr: each Func's readers (a counting sort of the
 * accesses by the Func they read, stable). */
static void list_readers(struct pt_features *fx)
{
	const struct pt_model *m = fx->m;
	int s, a, f, n = 0;

	for (s = 0; s < m->nstages; s++)
		for (a = 0; a < m->stages[s].naccesses; a++) {
			const struct pt_access *ac = &m->stages[s].accesses[a];

			if (ac->kind == PT_ACCESS_FUNC && ac->producer >= 0 &&
			    ac->producer < m->nfuncs)
				fx->rdr_first[ac->producer + 1]++;
		}
	for (f = 0; f < m->nfuncs; f++)
		fx->rdr_first[f + 1] += fx->rdr_first[f];
	for (s = 0; s < m->nstages; s++)
		for (a = 0; a < m->stages[s].naccesses; a++) {
			const struct pt_access *ac = &m->stages[s].accesses[a];

			if (ac->kind != PT_ACCESS_FUNC || ac->producer < 0 ||
			    ac->producer >= m->nfuncs)
				continue;
			/* rdr_first[f] runs ahead as f's slots fill */
			n = fx->rdr_first[ac->producer]++;
			fx->rdr[n][0] = s;
			fx->rdr[n][1] = a;
		}
	for (f = m->nfuncs; f > 0; f--)
		fx->rdr_first[f] = fx->rdr_first[f - 1];
	fx->rdr_first[0] = 0;
}

int pt_features_new(const struct pt_model *m, struct pt_features **out,
		    struct pt_error *err)
{
	struct pt_features *fx;
	int i, j, k, d, nacc = 0, ncoords = 0, nnodes, ret;

	*out = NULL;
	fx = calloc(1, sizeof(*fx));
	if (!fx)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	fx->m = m;
	if ((ret = pt_fp_new(m, &fx->fp, err))) {
		free(fx);
		return ret;
	}
	fx->nfuncs = m->nfuncs;
	fx->nstages = m->nstages;
	fx->words = (m->nfuncs + 63) / 64;
	for (i = 0; i < m->nstages; i++) {
		nacc += m->stages[i].naccesses;
		for (j = 0; j < m->stages[i].naccesses; j++)
			ncoords += m->stages[i].accesses[j].ncoords;
	}
	fx->st = calloc((size_t)m->nstages, sizeof(*fx->st));
	fx->last = calloc((size_t)m->nfuncs, sizeof(*fx->last));
	fx->bytes = calloc((size_t)m->nfuncs, sizeof(*fx->bytes));
	fx->lanes = calloc((size_t)m->nfuncs, sizeof(*fx->lanes));
	nnodes = pt_fp_nnodes(fx->fp);
	fx->nd = calloc((size_t)nnodes, sizeof(*fx->nd));
	fx->nbytes = calloc((size_t)nnodes, sizeof(*fx->nbytes));
	fx->nregion = calloc((size_t)nnodes, sizeof(*fx->nregion));
	fx->nalloc = calloc((size_t)nnodes, sizeof(*fx->nalloc));
	fx->acc_first = calloc((size_t)m->nstages + 1,
			       sizeof(*fx->acc_first));
	fx->coord_first = calloc((size_t)nacc + 1, sizeof(*fx->coord_first));
	fx->jac = calloc((size_t)ncoords * PT_FP_MAXDIMS + 1,
			 sizeof(*fx->jac));
	fx->unknown = calloc((size_t)ncoords + 1, 1);
	fx->algo = calloc((size_t)m->nstages * PT_ALGO_COUNT,
			  sizeof(*fx->algo));
	fx->grp_first = calloc((size_t)m->nstages + 1,
			       sizeof(*fx->grp_first));
	fx->grp = calloc((size_t)nacc + 1, sizeof(*fx->grp));
	fx->call_first = calloc((size_t)m->nstages + 1,
				sizeof(*fx->call_first));
	fx->call = calloc((size_t)nacc + 1, sizeof(*fx->call));
	fx->rdr_first = calloc((size_t)m->nfuncs + 1, sizeof(*fx->rdr_first));
	fx->rdr = calloc((size_t)nacc + 1, sizeof(*fx->rdr));
	fx->cmask = calloc((size_t)m->nstages * fx->words + 1,
			   sizeof(*fx->cmask));
	fx->fn = calloc((size_t)m->nfuncs, sizeof(*fx->fn));
	fx->inl = calloc((size_t)fx->words + 1, sizeof(*fx->inl));
	fx->inl1 = calloc((size_t)m->nfuncs + 1, 1);
	fx->copies = calloc((size_t)m->nfuncs, sizeof(*fx->copies));
	fx->sm = calloc((size_t)m->nstages + 1, sizeof(*fx->sm));
	fx->rp = calloc((size_t)m->nstages + 1, sizeof(*fx->rp));
	fx->frev = calloc((size_t)m->nfuncs + 1, sizeof(*fx->frev));
	fx->rrev = calloc((size_t)m->nfuncs + 1, sizeof(*fx->rrev));
	fx->rflag = calloc((size_t)m->nfuncs + 1, sizeof(*fx->rflag));
	/* a set's regions and about four boxes read per stage */
	fx->rcap = FX_ROOTBYTES / ((int)sizeof(struct pt_box) *
				   (m->nfuncs + 4 * m->nstages) + 1);
	if (fx->rcap > FX_ROOTSETS)
		fx->rcap = FX_ROOTSETS;
	if (fx->rcap < 1)
		fx->rcap = 1;
	fx->rset = calloc((size_t)fx->rcap, sizeof(*fx->rset));
	for (i = 0; fx->rset && i < fx->rcap; i++) {
		struct fx_rootset *r = &fx->rset[i];

		r->key = calloc((size_t)fx->words + 1, sizeof(*r->key));
		r->rroot = calloc((size_t)m->nfuncs + 1, sizeof(*r->rroot));
		r->rd_first = calloc((size_t)m->nstages + 1,
				     sizeof(*r->rd_first));
		r->rd_n = calloc((size_t)m->nstages + 1, sizeof(*r->rd_n));
		if (!r->key || !r->rroot || !r->rd_first || !r->rd_n) {
			pt_features_free(fx);
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		}
	}
	if (!fx->rset ||
	    !fx->st || !fx->last || !fx->bytes || !fx->lanes || !fx->nd ||
	    !fx->nbytes || !fx->nregion || !fx->nalloc ||
	    !fx->acc_first || !fx->coord_first || !fx->jac || !fx->unknown ||
	    !fx->algo || !fx->fn || !fx->inl || !fx->inl1 || !fx->copies ||
	    !fx->sm ||
	    !fx->rp || !fx->frev || !fx->rrev || !fx->rflag ||
	    !fx->grp_first || !fx->grp || !fx->call_first || !fx->call ||
	    !fx->cmask || !fx->rdr_first || !fx->rdr ||
	    pt_fp_acc_init(&fx->acc, fx->fp) ||
	    pt_fp_acc_init(&fx->acc2, fx->fp) || grow_loops(fx, 256)) {
		pt_features_free(fx);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	fx->vbytes = pt_model_vector_lanes(m, 8);
	list_readers(fx);
	for (i = 0; i < nnodes; i++) {
		fx->nd[i] = pt_fp_node_ndims(fx->fp, i);
		fx->nbytes[i] = pt_fp_node_bytes(fx->fp, i);
		fx->nregion[i] = pt_fp_node_region(fx->fp, i);
		/* as reads_at() would compute it for every read */
		fx->nalloc[i] = pt_box_points(fx->nregion[i], fx->nd[i]) *
			fx->nbytes[i];
	}
	for (i = 0; i < m->nfuncs; i++) {
		const struct pt_func *f = &m->funcs[i];
		int bits = 64;

		fx->last[i] = f->first_stage + f->nstages - 1;
		fx->bytes[i] = pt_fp_node_bytes(fx->fp, i);
		for (j = 0; j < f->ntypes; j++)
			if (f->types[j].bits < bits)
				bits = f->types[j].bits;
		fx->lanes[i] = pt_model_vector_lanes(m, f->ntypes ? bits : 32);
	}
	nacc = ncoords = 0;
	for (i = 0; i < m->nstages; i++) {
		const struct pt_stage *s = &m->stages[i];
		struct fx_stage *fs = &fx->st[i];

		fs->func = s->func;
		fs->min_points = 1;
		for (d = 0; d < s->ndims; d++) {
			snprintf(fs->pname[d], sizeof(fs->pname[d]), "%c%d",
				 s->dims[d].is_rvar ? 'r' : 'v',
				 s->dims[d].index);
			fs->min_points *= (double)s->dims[d].extent;
			init_loop(fs, d);
		}
		fx->acc_first[i] = nacc;
		for (j = 0; j < s->naccesses; j++) {
			const struct pt_access *a = &s->accesses[j];

			fx->coord_first[nacc++] = ncoords;
			for (k = 0; k < a->ncoords; k++, ncoords++) {
				const struct pt_coord *c = &a->coords[k];
				double *row = &fx->jac[(size_t)ncoords *
						       PT_FP_MAXDIMS];

				if (pt_coord_partial(c)) {
					/* NaN: moves with the dim, not
					 * affinely (walk()) */
					for (d = 0; d < s->ndims; d++)
						row[d] = c->varies[d] ? NAN :
							(double)c->coef[d].num /
							(double)c->coef[d].den;
					continue;
				}
				if (!c->affine || !c->coef) {
					/* clamped to one value: constant */
					fx->unknown[ncoords] =
						!(c->has_clamp_min &&
						  c->has_clamp_max &&
						  c->clamp_min ==
						  c->clamp_max);
					continue;
				}
				for (d = 0; d < s->ndims; d++)
					row[d] = (double)c->coef[d].num /
						(double)c->coef[d].den;
			}
		}
		group_loads(fx, i);
		list_calls(fx, i);
		op_features(m, s, &fx->algo[(size_t)i * PT_ALGO_COUNT]);
		access_features(s, &fx->algo[(size_t)i * PT_ALGO_COUNT]);
	}
	fx->acc_first[m->nstages] = nacc;
	*out = fx;
	return 0;
}

void pt_features_free(struct pt_features *fx)
{
	int i;

	if (!fx)
		return;
	pt_fp_acc_release(&fx->acc);
	pt_fp_acc_release(&fx->acc2);
	pt_fp_free(fx->fp);
	free(fx->st);
	free(fx->last);
	free(fx->bytes);
	free(fx->lanes);
	free(fx->nd);
	free(fx->nbytes);
	free(fx->nregion);
	free(fx->nalloc);
	free(fx->acc_first);
	free(fx->coord_first);
	free(fx->jac);
	free(fx->unknown);
	free(fx->algo);
	free(fx->grp_first);
	free(fx->grp);
	free(fx->call_first);
	free(fx->call);
	free(fx->cmask);
	free(fx->rdr_first);
	free(fx->rdr);
	free(fx->fn);
	free(fx->inl);
	free(fx->inl1);
	free(fx->copies);
	free(fx->loops);
	free(fx->lkey);
	free(fx->head);
	free(fx->direct);
	free(fx->wsuf);
	free(fx->req);
	for (i = 0; fx->rset && i < fx->rcap; i++) {
		free(fx->rset[i].key);
		free(fx->rset[i].rroot);
		free(fx->rset[i].rd_first);
		free(fx->rset[i].rd_n);
		free(fx->rset[i].node);
		free(fx->rset[i].box);
	}
	free(fx->rset);
	for (i = 0; fx->sm && i < fx->nstages; i++)
		free(fx->sm[i].key);
	free(fx->sm);
	free(fx->kbuf);
	for (i = 0; fx->rp && i < fx->nstages; i++) {
		free(fx->rp[i].l);
		free(fx->rp[i].k);
	}
	free(fx->rp);
	free(fx->frev);
	free(fx->rrev);
	free(fx->rflag);
	free(fx);
}

void pt_features_forget(struct pt_features *fx)
{
	int i;

	for (i = 0; i < fx->nstages; i++) {
		fx->sm[i].len = 0;
		fx->sm[i].cur = 0;
	}
	memset(&fx->keep, 0, sizeof(fx->keep));
	memset(fx->frev, 0, (size_t)fx->nfuncs * sizeof(*fx->frev));
	for (i = 0; i < fx->nfuncs; i++)
		memset(fx->fn[i].site_rev, 0, sizeof(fx->fn[i].site_rev));
	fx->rvalid = 0;
}

const double *pt_features_algo(const struct pt_features *fx, int stage)
{
	return &fx->algo[(size_t)stage * PT_ALGO_COUNT];
}

int pt_features_loops(const struct pt_features *fx, int stage,
		      const struct pt_feat_loop **loops)
{
	const struct fx_stage *fs = &fx->st[stage];

	*loops = NULL;
	if (fx->inl1[fs->func] || !fs->nloops)
		return 0;
	*loops = &fx->loops[fs->first];
	return fs->nloops;
}

/* --- pass 1: loop nests --------------------------------------------------- */

const struct pt_box *pt_features_storage(const struct pt_features *fx,
					 int node)
{
	if (node >= fx->nfuncs)
		return fx->nregion[node];
	return fx->inl1[node] ? NULL : &fx->fn[node].rs;
}

int pt_features_site(const struct pt_features *fx, int func, int *j,
		     int *p)
{
	const struct fx_func *fn = &fx->fn[func];

	*j = *p = -1;
	if (fx->inl1[func])
		return -1;
	if (fn->cj < 0)
		return 0;
	*j = fn->cj;
	*p = fn->cp;
	return 1;
}

static int fx_fail(struct pt_error *err, const struct pt_model *m, int f,
		   const char *what)
{
	const char *label = m->funcs[f].label;

	return pt_error_set(err, PT_EMISMATCH, "f%d (%s): %s", f,
			    label && *label ? label : "?", what);
}

/* A stage's loops while its directives are replayed, innermost first as
 * Halide's dims(): position i is record at[i] with the key of its name.
 * Splits and reorders move the one-byte indices and the keys, never the
 * records; the n records in use are always rec[0 .. n-1]. */
struct rnest {
	int n;
	uint8_t at[PT_FEAT_MAXLOOPS];
	uint64_t key[PT_FEAT_MAXLOOPS];
	struct rloop rec[PT_FEAT_MAXLOOPS];
};

/* The position of loop `name`, or -1. */
static int nest_find(const struct rnest *x, const char *name)
{
	uint64_t k = name_key(name);
	int i;

	if (k) {
		/* the usual short name: its key alone decides */
		for (i = 0; i < x->n; i++)
			if (x->key[i] == k)
				return i;
		return -1;
	}
	for (i = 0; i < x->n; i++)
		if (key_is(x->key[i], x->rec[x->at[i]].pub.name, k, name))
			return i;
	return -1;
}

/* Reorder to `order` (every loop, innermost first); -1 when it names an
 * unknown loop. A loop named twice (pt_sched_check() refuses that) gets a
 * copy in the record of a loop left out, as if the records were moved. */
static int nest_reorder(struct rnest *x, const struct pt_strvec *order)
{
	uint8_t at[PT_FEAT_MAXLOOPS];
	uint64_t key[PT_FEAT_MAXLOOPS], used = 0, dup = 0;
	int i, j, r;

	for (j = 0; j < x->n; j++) {
		if ((i = nest_find(x, order->v[j])) < 0)
			return -1;
		at[j] = x->at[i];
		key[j] = x->key[i];
		if ((used >> at[j]) & 1)
			dup |= UINT64_C(1) << j;
		used |= UINT64_C(1) << at[j];
	}
	for (j = 0, r = 0; dup && j < x->n; j++) {
		if (!((dup >> j) & 1))
			continue;
		while ((used >> r) & 1)
			r++;
		x->rec[r] = x->rec[at[j]];
		at[j] = (uint8_t)r;
		used |= UINT64_C(1) << r;
	}
	memcpy(x->at, at, (size_t)x->n);
	memcpy(x->key, key, (size_t)x->n * sizeof(*key));
	return 0;
}

/* Split the loop at position i (x->n < PT_FEAT_MAXLOOPS): the inner half
 * keeps its record and position, the outer half, the same lineage with a
 * coarser step, gets a new record just outside it. -1 when the dim's outer
 * loops have FX_MAXCHAIN splits already. */
static int nest_split(struct rnest *x, struct fx_stage *fs, int i,
		      const struct pt_directive *dr)
{
	struct rloop *in = &x->rec[x->at[i]], *out = &x->rec[x->n];
	int j, d;

	for (j = x->n; j > i + 1; j--) {
		x->at[j] = x->at[j - 1];
		x->key[j] = x->key[j - 1];
	}
	x->at[i + 1] = (uint8_t)x->n;
	x->key[i + 1] = name_key(dr->outer);
	x->key[i] = name_key(dr->inner);
	x->n++;
	*out = *in;
	out->pub.name = dr->outer;
	out->pub.stride = in->pub.stride * dr->factor;
	in->pub.name = dr->inner;
	in->pub.tail = (int)dr->tail;
	in->pub.extent = dr->factor;
	in->chain = -1;
	if (out->pub.is_split_inner) {
		/* a split of an inner half (illegal): its outer half has a
		 * constant extent too */
		out->pub.extent = div_up(out->pub.extent, dr->factor);
		return 0;
	}
	in->pub.is_split_inner = 1;
	d = in->pub.dim;
	if (fs->nchain[d] >= FX_MAXCHAIN)
		return -1;
	in->chain = fs->nchain[d]++;
	return 0;
}

/* Replay stage `sidx`'s directives into fx->loops[first ...], outermost
 * first, and record each dim's chain of splits. */
static int replay(struct pt_features *fx, const struct pt_sched *s, int sidx,
		  int first, struct pt_error *err)
{
	const struct pt_model *m = fx->m;
	const struct pt_stage *stage = &m->stages[sidx];
	struct fx_stage *fs = &fx->st[sidx];
	const struct pt_sched_func *sf = &s->funcs[stage->func];
	const struct pt_sched_stage *ss = stage->index < sf->nstages ?
		&sf->stages[stage->index] : NULL;
	struct rnest x;
	int i, k, d;

	fs->first = first;
	x.n = stage->ndims;
	memcpy(x.rec, fs->init, (size_t)x.n * sizeof(x.rec[0]));
	for (d = 0; d < stage->ndims; d++) {
		x.at[d] = (uint8_t)d;
		x.key[d] = fs->pkey[d];
		fs->nchain[d] = 0;
	}
	for (k = 0; ss && k < ss->ndirs; k++) {
		const struct pt_directive *dr = &ss->dirs[k];

		if (dr->kind == PT_DIR_REORDER) {
			if ((int)dr->order.nr != x.n)
				return fx_fail(err, m, stage->func,
					       "reorder does not list every "
					       "loop");
			if (nest_reorder(&x, &dr->order))
				return fx_fail(err, m, stage->func,
					       "reorder names an unknown "
					       "loop");
			continue;
		}
		if (!dr->dim)
			return fx_fail(err, m, stage->func,
				       "directive without a loop");
		if ((i = nest_find(&x, dr->dim)) < 0)
			return fx_fail(err, m, stage->func,
				       "a directive names an unknown loop");
		switch (dr->kind) {
		case PT_DIR_SPLIT:
			if (dr->factor < 1 || !dr->outer || !dr->inner)
				return fx_fail(err, m, stage->func,
					       "bad split");
			if (x.n >= PT_FEAT_MAXLOOPS)
				return pt_error_set(err, PT_EINVAL,
						    "f%d stage %d: more than "
						    "%d loops", stage->func,
						    stage->index,
						    PT_FEAT_MAXLOOPS);
			if (nest_split(&x, fs, i, dr))
				return pt_error_set(err, PT_EINVAL,
						    "f%d stage %d: more than "
						    "%d splits of one dim",
						    stage->func, stage->index,
						    FX_MAXCHAIN);
			break;
		case PT_DIR_VECTORIZE:
			x.rec[x.at[i]].pub.kind = PT_LOOP_VECTOR;
			break;
		case PT_DIR_PARALLEL:
			x.rec[x.at[i]].pub.kind = PT_LOOP_PARALLEL;
			break;
		case PT_DIR_UNROLL:
			x.rec[x.at[i]].pub.kind = PT_LOOP_UNROLL;
			break;
		default:
			return fx_fail(err, m, stage->func,
				       "unknown directive");
		}
	}
	/* outermost first */
	for (i = 0; i < x.n; i++) {
		const struct rloop *r = &x.rec[x.at[x.n - 1 - i]];

		fx->loops[first + i] = r->pub;
		fx->lkey[first + i] = x.key[x.n - 1 - i];
		if (r->chain >= 0)
			fs->chain[r->pub.dim][r->chain] = i;
	}
	fs->nloops = x.n;
	return 0;
}

/* Per-production extents of every loop of stage `sidx`, its dims' boxes
 * from the Func's region `r`, and its points per production. */
static void set_extents(struct pt_features *fx, int sidx,
			const struct pt_box *r)
{
	const struct pt_stage *stage = &fx->m->stages[sidx];
	struct fx_stage *fs = &fx->st[sidx];
	struct pt_feat_loop *l = &fx->loops[fs->first];
	double pts = 1;
	int d, i, k;

	for (d = 0; d < stage->ndims; d++) {
		const struct pt_dim *dim = &stage->dims[d];

		if (!dim->is_rvar) {
			fs->lo[d] = r->lo[dim->index];
			fs->ext[d] = r->hi[dim->index] - r->lo[dim->index] + 1;
		} else {
			fs->lo[d] = dim->min;
			fs->ext[d] = dim->extent;
		}
	}
	for (i = 0; i < fs->nloops; i++)
		if (!l[i].is_split_inner)
			l[i].extent = div_up(fs->ext[l[i].dim],
						 l[i].stride);
	for (d = 0; d < stage->ndims; d++) {
		int64_t x[FX_MAXCHAIN + 1];
		int64_t c;
		int n = fs->nchain[d];

		x[0] = fs->ext[d];
		for (k = 0; k < n; k++)
			x[k + 1] = div_up(x[k], l[fs->chain[d][k]].extent);
		c = x[n];
		for (k = n - 1; k >= 0; k--) {
			const struct pt_feat_loop *in = &l[fs->chain[d][k]];

			c = in->tail == PT_TAIL_GUARD ? x[k] :
				in->extent * c;
		}
		pts *= (double)c;
	}
	fs->points = pts;
}

/* The box of stage `sidx`'s dims one iteration of its loop `p` (outermost
 * first; -1 for the whole production) covers. The iteration is, along each
 * dim that loops at or outside p, the tile that holds the middle point:
 * the first tile of a region padded for a boundary condition can lie
 * entirely outside the image and read a single clamped point, which is
 * not what a typical tile does. */
static void loop_box(const struct pt_features *fx, int sidx, int p,
		     struct pt_box *b)
{
	const struct fx_stage *fs = &fx->st[sidx];
	const struct pt_feat_loop *l = &fx->loops[fs->first];
	int ndims = fx->m->stages[sidx].ndims;
	/* step 0: no loop of d at or outside p (fixed-size zeroing, not a
	 * call to memset) */
	int64_t span[PT_FP_MAXDIMS] = { 0 }, step[PT_FP_MAXDIMS] = { 0 };
	int d, i;

	if (p < 0) {
		/* the whole production: no tile to place */
		for (d = 0; d < ndims; d++) {
			b->lo[d] = fs->lo[d];
			b->hi[d] = fs->lo[d] + fs->ext[d] - 1;
		}
		return;
	}
	for (i = 0; i <= p && i < fs->nloops; i++) {
		d = l[i].dim;
		if (!step[d] || l[i].stride < step[d])
			step[d] = l[i].stride;
	}
	for (; i < fs->nloops; i++)
		span[l[i].dim] += (l[i].extent - 1) * l[i].stride;
	for (d = 0; d < ndims; d++) {
		int64_t e = fs->ext[d], off = 0;

		span[d]++;
		if (step[d] && span[d] < e) {
			/* the tile that holds the middle point */
			off = (e - 1) / 2;
			off -= off % step[d];
			if (off + span[d] > e)
				off = e - span[d];
			e = span[d];
		}
		b->lo[d] = fs->lo[d] + off;
		b->hi[d] = b->lo[d] + e - 1;
	}
}

/* Is Func h computed inside one iteration of loop p of Func j's last
 * stage? */
static int inside(const struct pt_features *fx, int h, int j, int p)
{
	const struct fx_func *fn = fx->fn;

	while (fn[h].cj >= 0) {
		if (fn[h].cj == j)
			return fn[h].cp >= p;
		if (fn[h].cj > j)
			return 0;
		h = fn[h].cj;
	}
	return 0;
}

/* Find loop `name` in Func j's last stage; its position or -1. */
static int find_site(const struct pt_features *fx, int j, const char *name)
{
	const struct fx_stage *fs = &fx->st[fx->last[j]];
	uint64_t k;
	int i;

	if (!name)
		return -1;
	k = name_key(name);
	for (i = 0; i < fs->nloops; i++)
		if (key_is(fx->lkey[fs->first + i],
			   fx->loops[fs->first + i].name, k, name))
			return i;
	return -1;
}

/* find_site() for Func f's compute (which 0) or store (1) site, loop
 * `name` of Func j: the position found last time when f's entry and j's
 * have the revisions they had then (j's loops, and so the position, are
 * a function of j's entry). */
static int site_at(struct pt_features *fx, const uint64_t *rev, int f,
		   int which, int j, const char *name)
{
	struct fx_func *fn = &fx->fn[f];
	uint64_t *k = fn->site_rev[which];
	int p;

	if (!rev || !rev[f] || !rev[j])
		return find_site(fx, j, name);
	if (k[0] == rev[f] && k[1] == rev[j])
		return fn->site_pos[which];
	p = find_site(fx, j, name);
	k[0] = rev[f];
	k[1] = rev[j];
	fn->site_pos[which] = p;
	return p;
}

static int add_req(struct pt_features *fx, int j, int p, int f, int roles)
{
	int flat = fx->st[fx->last[j]].first + p;
	struct fx_req *r;

	if (fx->nreq == fx->reqcap) {
		int cap = fx->reqcap ? 2 * fx->reqcap : 64;
		void *q = realloc(fx->req, (size_t)cap * sizeof(*fx->req));

		if (!q)
			return PT_ENOMEM;
		fx->req = q;
		fx->reqcap = cap;
	}
	r = &fx->req[fx->nreq];
	r->func = f;
	r->roles = roles;
	r->next = fx->head[flat];
	fx->head[flat] = fx->nreq++;
	return 0;
}

/* Keep stage sidx's loops as replay() just left them (at fx->loops +
 * fs->first); 0, or -1 when there is no memory. */
static int replay_keep(struct pt_features *fx, int sidx)
{
	struct fx_replay *r = &fx->rp[sidx];
	const struct fx_stage *fs = &fx->st[sidx];

	if (fs->nloops > r->cap) {
		struct pt_feat_loop *l = realloc(r->l, (size_t)fs->nloops *
						 sizeof(*l));
		uint64_t *k;

		if (!l)
			return -1;
		r->l = l;
		k = realloc(r->k, (size_t)fs->nloops * sizeof(*k));
		if (!k)
			return -1;
		r->k = k;
		r->cap = fs->nloops;
	}
	memcpy(r->l, &fx->loops[fs->first], (size_t)fs->nloops * sizeof(*r->l));
	memcpy(r->k, &fx->lkey[fs->first], (size_t)fs->nloops * sizeof(*r->k));
	r->n = fs->nloops;
	r->ext = 0;
	return 0;
}

/* Stage sidx's loops from its last replay, at fx->loops + first. */
static void replay_again(struct pt_features *fx, int sidx, int first)
{
	const struct fx_replay *r = &fx->rp[sidx];
	struct fx_stage *fs = &fx->st[sidx];

	fs->first = first;
	fs->nloops = r->n;
	memcpy(&fx->loops[first], r->l, (size_t)r->n * sizeof(*r->l));
	memcpy(&fx->lkey[first], r->k, (size_t)r->n * sizeof(*r->k));
}

static int structure(struct pt_features *fx, const struct pt_sched *s,
		     int decided, const uint64_t *rev, struct pt_error *err)
{
	const struct pt_model *m = fx->m;
	int f, i, ret, first = 0;

	if (s->nfuncs != m->nfuncs)
		return pt_error_set(err, PT_EMISMATCH,
				    "the schedule has %d Funcs, the model %d",
				    s->nfuncs, m->nfuncs);
	for (f = 0; f < m->nfuncs; f++) {
		const struct pt_sched_func *sf = &s->funcs[f];

		if (sf->nstages > m->funcs[f].nstages || sf->nstages < 0)
			return fx_fail(err, m, f, "too many stages");
	}
	memset(fx->inl, 0, (size_t)fx->words * sizeof(*fx->inl));
	for (f = 0; f < m->nfuncs; f++) {
		/* The same entry as at the last replay: its loops again. */
		int same = rev && rev[f] && fx->frev[f] == rev[f], kept = 1;

		fx->inl1[f] = s->funcs[f].compute == PT_COMPUTE_INLINE &&
			m->funcs[f].nstages == 1;
		if (fx->inl1[f])
			fx->inl[f >> 6] |= UINT64_C(1) << (f & 63);
		fx->fn[f].again = same && !fx->inl1[f] && f >= decided;

		for (i = 0; i < m->funcs[f].nstages; i++) {
			int sidx = m->funcs[f].first_stage + i;
			int nd = i < s->funcs[f].nstages ?
				s->funcs[f].stages[i].ndirs : 0;

			fx->st[sidx].nloops = 0;
			fx->st[sidx].first = first;
			/* An undecided Func (below `decided`) is at root with
			 * its plain loops, none vectorized; nothing reads
			 * them (no row of its own, no site in it), so they
			 * are not replayed. */
			if (fx->inl1[f] || f < decided) {
				kept = 0;
				continue;
			}
			/* The loops grow as they are placed: summing every
			 * stage's dims and directives first was 1% of a
			 * beam. */
			if ((ret = grow_loops(fx, first + m->stages[sidx].ndims +
					      nd + 1)))
				return pt_error_set(err, ret,
						    "out of memory");
			if (same) {
				replay_again(fx, sidx, first);
			} else {
				fx->frev[f] = 0;
				if ((ret = replay(fx, s, sidx, first, err)))
					return ret;
				if (rev && replay_keep(fx, sidx))
					kept = 0;
			}
			first += m->stages[sidx].ndims + nd;
		}
		if (rev && !same && kept)
			fx->frev[f] = rev[f];
	}
	if ((ret = grow_loops(fx, first + 1)))
		return pt_error_set(err, ret, "out of memory");
	for (i = 0; i < first + 1; i++) {
		fx->head[i] = -1;
		fx->direct[i] = 0;
	}
	/* sites */
	for (f = 0; f < m->nfuncs; f++) {
		const struct pt_sched_func *sf = &s->funcs[f];
		struct fx_func *fn = &fx->fn[f];

		fn->cj = fn->sj = fn->tj = -1;
		fn->cp = fn->sp = fn->tp = -1;
		if (fx->inl1[f])
			continue;
		if (sf->compute != PT_COMPUTE_AT)
			continue;
		fn->cj = sf->compute_at.func;
		if (fn->cj <= f || fn->cj >= m->nfuncs || fx->inl1[fn->cj] ||
		    (fn->cp = site_at(fx, rev, f, 0, fn->cj,
				      sf->compute_at.loop)) < 0)
			return fx_fail(err, m, f, "bad compute site");
		if (sf->store_root)
			continue;
		fn->sj = sf->store_at.func;
		if (fn->sj < 0 || fn->sj >= m->nfuncs || fx->inl1[fn->sj] ||
		    fn->sj <= f ||
		    (fn->sp = site_at(fx, rev, f, 1, fn->sj,
				      sf->store_at.loop)) < 0)
			return fx_fail(err, m, f, "bad store site");
	}
	/* task sites: the innermost parallel loop around the compute site */
	for (f = 0; f < m->nfuncs; f++) {
		struct fx_func *fn = &fx->fn[f];
		int j = fn->cj, p = fn->cp;

		while (!fx->inl1[f] && j >= 0) {
			const struct fx_stage *js = &fx->st[fx->last[j]];

			for (i = p; i >= 0; i--)
				if (fx->loops[js->first + i].kind ==
				    PT_LOOP_PARALLEL)
					break;
			if (i >= 0) {
				fn->tj = j;
				fn->tp = i;
				break;
			}
			p = fx->fn[j].cp;
			j = fx->fn[j].cj;
		}
	}
	/* requests */
	fx->nreq = 0;
	for (f = 0; f < m->nfuncs; f++) {
		struct fx_func *fn = &fx->fn[f];
		int rc = ROLE_C, same_s, same_t;

		if (fx->inl1[f] || fn->cj < 0)
			continue;
		same_s = fn->sj == fn->cj && fn->sp == fn->cp;
		same_t = fn->tj == fn->cj && fn->tp == fn->cp;
		if (same_s)
			rc |= ROLE_S;
		if (same_t)
			rc |= ROLE_T;
		if ((ret = add_req(fx, fn->cj, fn->cp, f, rc)))
			return pt_error_set(err, ret, "out of memory");
		if (!same_s && fn->sj >= 0 &&
		    (ret = add_req(fx, fn->sj, fn->sp, f, ROLE_S)))
			return pt_error_set(err, ret, "out of memory");
		if (!same_t && fn->tj >= 0 &&
		    (ret = add_req(fx, fn->tj, fn->tp, f, ROLE_T)))
			return pt_error_set(err, ret, "out of memory");
	}
	return 0;
}

/* --- pass 2: regions ------------------------------------------------------ */

static void func_reads(struct pt_features *fx, int h, const struct pt_box *r,
		       struct pt_fp_acc *acc)
{
	const struct pt_func *fn = &fx->m->funcs[h];
	struct pt_box d;
	int k;

	for (k = 0; k < fn->nstages; k++) {
		pt_fp_stage_dims(fx->fp, fn->first_stage + k, r, &d);
		pt_fp_reads(fx->fp, fn->first_stage + k, &d, fx->inl, 0, acc);
	}
}

/* Grow Func h's box in acc by what its update stages write and read of
 * h itself when its pure dims cover that box and its RVars their bounds:
 * Halide's bounds inference makes the realization cover them, and the
 * pure stage computes all of it (a scan along y computed per tile of its
 * consumer still computes every row). */
static void own_footprint(struct pt_features *fx, int h,
			  struct pt_fp_acc *acc)
{
	const struct pt_model *m = fx->m;
	const struct pt_func *fn = &m->funcs[h];
	const struct pt_box *got;
	struct pt_box r, d, o;
	int k, a;

	if (fn->nstages < 2 || !(got = pt_fp_acc_get(acc, h)))
		return;
	r = *got;
	for (k = 1; k < fn->nstages; k++) {
		int s = fn->first_stage + k;
		const struct pt_stage *st = &m->stages[s];

		pt_fp_stage_dims(fx->fp, s, &r, &d);
		for (a = 0; a < st->naccesses; a++) {
			const struct pt_access *x = &st->accesses[a];

			if (x->kind != PT_ACCESS_FUNC || x->producer != h)
				continue;
			pt_fp_access(fx->fp, s, a, &d, &o);
			pt_fp_acc_union(acc, h, &o, fn->nargs);
		}
	}
}

/* The kept set that is the current inlined set (fx->inl), or -1. The last
 * one found is tried first: a search often prices schedules that inline
 * the same Funcs one after another. */
static int root_find(struct pt_features *fx)
{
	size_t bytes = (size_t)fx->words * sizeof(*fx->inl);
	int i, j;

	for (j = 0; j < fx->rn; j++) {
		i = (fx->rcur + j) % fx->rn;
		if (!memcmp(fx->rset[i].key, fx->inl, bytes))
			return fx->rcur = i;
	}
	return -1;
}

/* Keep the root regions just computed for the current inlined set, in
 * place of the oldest set kept; no reads at root yet. */
static void root_keep(struct pt_features *fx)
{
	struct fx_rootset *r = &fx->rset[fx->rnext];
	int f, k;

	fx->rcur = fx->rnext;
	fx->rnext = (fx->rnext + 1) % fx->rcap;
	r->gen = ++fx->rgen;
	if (fx->rn < fx->rcap)
		fx->rn++;
	memcpy(r->key, fx->inl, (size_t)fx->words * sizeof(*fx->inl));
	for (f = 0; f < fx->nfuncs; f++)
		if (!fx->inl1[f])
			r->rroot[f] = fx->fn[f].rroot;
	for (k = 0; k < fx->nstages; k++)
		r->rd_first[k] = -1;
	r->n = 0;
}

/* Every Func's region at root (rroot): what the whole pipeline computes
 * of it, given which Funcs are inlined. */
static void root_run(struct pt_features *fx)
{
	struct pt_fp_acc *acc = &fx->acc;
	const struct pt_box *b;
	int f, i;

	if ((i = root_find(fx)) >= 0) {
		b = fx->rset[i].rroot;
		for (f = 0; f < fx->nfuncs; f++)
			if (!fx->inl1[f])
				fx->fn[f].rroot = b[f];
		return;
	}

	pt_fp_acc_clear(acc);
	for (f = fx->nfuncs - 1; f >= 0; f--) {
		const struct pt_box *got;

		if (fx->inl1[f])
			continue;
		got = pt_fp_acc_get(acc, f);
		if (fx->m->funcs[f].is_output || !got)
			pt_fp_acc_union(acc, f, fx->nregion[f],
					fx->m->funcs[f].nargs);
		own_footprint(fx, f, acc);
		fx->fn[f].rroot = acc->box[f];
		func_reads(fx, f, &fx->fn[f].rroot, acc);
	}
	root_keep(fx);
}

/* What one iteration of loop p of Func j's last stage computes: the
 * regions of the Funcs computed inside it and the footprints of
 * everything it reads, in fx->acc. */
static void site_run(struct pt_features *fx, int j, int p)
{
	struct pt_fp_acc *acc = &fx->acc;
	struct pt_box b;
	int h;

	pt_fp_acc_clear(acc);
	loop_box(fx, fx->last[j], p, &b);
	pt_fp_reads(fx->fp, fx->last[j], &b, fx->inl, 0, acc);
	for (h = j - 1; h >= 0; h--) {
		const struct pt_box *r;

		if (fx->inl1[h] || !inside(fx, h, j, p))
			continue;
		own_footprint(fx, h, acc);
		r = pt_fp_acc_get(acc, h);
		if (r)
			func_reads(fx, h, r, acc);
	}
}

/* Func f's flags that its regions depend on (REG_*), `first` the first
 * decided Func. */
static unsigned char reg_flags(const struct pt_features *fx, int f,
			       int first)
{
	return (unsigned char)((fx->inl1[f] ? REG_INL : 0) |
			       (f >= first ? REG_DECIDED : 0));
}

/* The highest Func whose regions may differ from those regions() last
 * computed (-1: none), with the revisions `rev` of the Funcs' entries
 * (NULL: unknown, all may). A Func's regions (rc, rs, rt, prod, real,
 * outer_par) depend only on the entries of the Funcs at and above it
 * (its consumers, the Funcs computed inside their loops, those inlined
 * between), never on those below: the Funcs above the highest one whose
 * entry or flags changed keep theirs. */
static int regions_changed(const struct pt_features *fx, int first,
			   const uint64_t *rev)
{
	int f;

	if (!rev || !fx->rvalid)
		return fx->nfuncs - 1;
	for (f = fx->nfuncs - 1; f >= 0; f--)
		if (!rev[f] || rev[f] != fx->rrev[f] ||
		    reg_flags(fx, f, first) != fx->rflag[f])
			return f;
	return -1;
}

/* Record what regions() just computed the regions for (revisions `rev`,
 * NULL: unknown), the Funcs at and below `top` (regions_changed(): those
 * above have theirs recorded already). */
static void regions_done(struct pt_features *fx, int first,
			 const uint64_t *rev, int top)
{
	int f;

	fx->rvalid = rev != NULL;
	for (f = 0; rev && f <= top; f++) {
		fx->rrev[f] = rev[f];
		fx->rflag[f] = reg_flags(fx, f, first);
	}
}

/* Does a Func at or below `top` ask for a region at loop `flat`? */
static int site_wanted(const struct pt_features *fx, int flat, int top)
{
	int r;

	for (r = fx->head[flat]; r >= 0; r = fx->req[r].next)
		if (fx->req[r].func <= top)
			return 1;
	return 0;
}

/* Stage sidx's (of Func f) extents: those its loops were replayed with,
 * when they were replayed from the cache (replay_again()) with the
 * extents set for the same region (f above `top`: its region kept);
 * otherwise set, and kept with its loops when those come from the cache. */
static void stage_extents(struct pt_features *fx, int f, int sidx, int top)
{
	struct fx_replay *r = &fx->rp[sidx];
	const struct fx_stage *fs = &fx->st[sidx];

	if (fx->fn[f].again && r->ext && f > top)
		return;
	set_extents(fx, sidx, &fx->fn[f].rc);
	if (fx->fn[f].again && r->n == fs->nloops) {
		memcpy(r->l, &fx->loops[fs->first],
		       (size_t)fs->nloops * sizeof(*r->l));
		r->ext = 1;
	}
}

/* Every decided Func's regions; those above `top` (regions_changed())
 * are kept from the last call. */
static void regions(struct pt_features *fx, int first, int top)
{
	const struct pt_model *m = fx->m;
	int f, j, p, k;

	root_run(fx);
	fx->rcalls++;
	for (f = 0; f <= top; f++) {
		struct fx_func *fn = &fx->fn[f];

		if (fx->inl1[f])
			continue;
		/* at root; a site's run below overrides them */
		fn->rc = fn->rs = fn->rt = fn->rroot;
		fn->prod = fn->real = fn->outer_par = 1;
		/* the Funcs whose loops the sites below are looked for in:
		 * those above `top` without such a site have nothing to run */
		if (fn->cj >= 0)
			fx->fn[fn->cj].wanted = fx->rcalls;
		if (fn->sj >= 0)
			fx->fn[fn->sj].wanted = fx->rcalls;
		if (fn->tj >= 0)
			fx->fn[fn->tj].wanted = fx->rcalls;
	}
	for (j = fx->nfuncs - 1; j >= first; j--) {
		const struct fx_stage *js;
		const struct pt_feat_loop *l;
		double pre = 1, ppre = 1;

		if (fx->inl1[j])
			continue;
		for (k = 0; k < m->funcs[j].nstages; k++)
			stage_extents(fx, j, m->funcs[j].first_stage + k,
				      top);
		if (j > top && fx->fn[j].wanted != fx->rcalls)
			continue;
		js = &fx->st[fx->last[j]];
		l = &fx->loops[js->first];
		for (p = 0; p < js->nloops; p++) {
			int r;

			pre *= (double)l[p].extent;
			if (l[p].kind == PT_LOOP_PARALLEL)
				ppre *= (double)l[p].extent;
			if (fx->head[js->first + p] < 0 ||
			    !site_wanted(fx, js->first + p, top))
				continue;
			site_run(fx, j, p);
			for (r = fx->head[js->first + p]; r >= 0;
			     r = fx->req[r].next) {
				int h = fx->req[r].func, roles =
					fx->req[r].roles;
				struct fx_func *hn = &fx->fn[h];
				const struct pt_box *b =
					pt_fp_acc_get(&fx->acc, h);

				if (!b)
					b = &hn->rroot;
				if (roles & ROLE_C) {
					hn->rc = *b;
					hn->prod = fx->fn[j].prod * pre;
					hn->outer_par = fx->fn[j].outer_par *
						ppre;
				}
				if (roles & ROLE_S) {
					hn->rs = *b;
					hn->real = fx->fn[j].prod * pre;
				}
				if (roles & ROLE_T)
					hn->rt = *b;
			}
		}
	}
}

/* --- pass 3: working sets ------------------------------------------------- */

/* The dim of stage s that its vector loop runs over, or -1. */
static int vector_dim(const struct pt_features *fx, int s)
{
	const struct fx_stage *fs = &fx->st[s];
	int i;

	for (i = 0; i < fs->nloops; i++)
		if (fx->loops[fs->first + i].kind == PT_LOOP_VECTOR)
			return fx->loops[fs->first + i].dim;
	return -1;
}

/* Is dim d of Func f stored or loaded with vectors across it: its own
 * vector loop runs over d, or a stage at a site reads coordinate d with
 * one that moves with its vector loop (not affine counts as moving)?
 * Readers inlined elsewhere are not followed. */
static int vector_across(const struct pt_features *fx, int f, int d)
{
	const struct pt_model *m = fx->m;
	int s, i, vd;

	if (vector_dim(fx, m->funcs[f].first_stage) == d)
		return 1;
	for (i = fx->rdr_first[f]; i < fx->rdr_first[f + 1]; i++) {
		const struct pt_stage *st = &m->stages[fx->rdr[i][0]];
		const struct pt_access *ac = &st->accesses[fx->rdr[i][1]];
		const struct pt_coord *c;

		s = fx->rdr[i][0];
		if (st->func == f || fx->inl1[st->func] || d >= ac->ncoords ||
		    (vd = vector_dim(fx, s)) < 0)
			continue;
		c = &ac->coords[d];
		if (!c->coef || c->coef[vd].num)
			return 1;
	}
	return 0;
}

/* The points of a realization of Func f as Halide 14 allocates it: a
 * sliding window (stored outside its compute site) has its storage folded
 * (StorageFolding.cpp): along the outermost dim that the loops between
 * the two sites move, the buffer keeps only the power of two at or above
 * the extent one production needs, as a ring; not past 1024, nor along a
 * dim stored or loaded with vectors across it. */
static double folded_points(const struct pt_features *fx, int f)
{
	const struct fx_func *fn = &fx->fn[f];
	int nargs = fx->m->funcs[f].nargs, d;
	double p = pt_box_points(&fn->rs, nargs), e, c, pw;

	if (fn->sj == fn->cj && fn->sp == fn->cp)
		return p;
	for (d = nargs; d-- > 0;) {
		pw = 1;
		e = (double)(fn->rs.hi[d] - fn->rs.lo[d] + 1);
		c = (double)(fn->rc.hi[d] - fn->rc.lo[d] + 1);
		if (!(c < e))
			continue;
		while (pw < c)
			pw *= 2;
		if (pw > 1024 || vector_across(fx, f, d))
			continue;
		return p / e * pw;
	}
	return p;
}

static void working_sets(struct pt_features *fx)
{
	int f, p;

	fx->wroot = 0;
	for (f = 0; f < fx->nfuncs; f++) {
		struct fx_func *fn = &fx->fn[f];
		const struct fx_stage *fs;
		double w = 0;

		if (fx->inl1[f])
			continue;
		fn->bytes_real = folded_points(fx, f) *
			fx->bytes[f];
		if (fn->sj >= 0)
			fx->direct[fx->st[fx->last[fn->sj]].first + fn->sp] +=
				fn->bytes_real;
		else
			fx->wroot += fn->bytes_real;
		/* everything stored inside f's loops is in by now: those
		 * Funcs come before f */
		fs = &fx->st[fx->last[f]];
		for (p = fs->nloops - 1; p >= 0; p--) {
			w += fx->direct[fs->first + p];
			fx->wsuf[fs->first + p] = w;
		}
		fn->inside = w;
		if (fn->cj >= 0)
			fx->direct[fx->st[fx->last[fn->cj]].first + fn->cp] +=
				w;
		else
			fx->wroot += w;
	}
}

static double wset(const struct pt_features *fx, int j, int p)
{
	return j < 0 ? fx->wroot : fx->wsuf[fx->st[fx->last[j]].first + p];
}

/* --- pass 4: per stage ---------------------------------------------------- */

struct lwalk {
	const struct pt_features *fx;
	int ndirs, vec;
	int64_t lanes;
	int64_t uext[FX_MAXDIRS];
	double vl, slv, sls;
	int leaves;
};

static void leaf(struct lwalk *w, double dv[FX_MAXDIRS][PT_FP_MAXDIMS],
		 int K, double c, int bytes)
{
	double block = c;
	int u, k, zero = 1, dense = 1, unknown = 0;

	for (u = w->vec; u < w->ndirs; u++) {
		for (k = 0; k < K; k++)
			if (dv[u][k] != 0)  /* NaN too */
				break;
		if (k < K)
			block *= (double)w->uext[u];
	}
	w->sls += block;
	if (!w->vec)
		return;
	for (k = 0; k < K; k++) {
		if (isnan(dv[0][k]))
			unknown = 1;
		else if (dv[0][k] != 0)
			zero = 0;
		if (k > 0 && dv[0][k] != 0)
			dense = 0;
	}
	if (unknown) {
		w->slv += block * (double)w->lanes;
	} else if (zero) {
		w->slv += block;
	} else if (dense && fabs(dv[0][0]) <= 4) {
		double n = ceil((double)w->lanes * fabs(dv[0][0]) * bytes /
				(double)w->fx->vbytes);

		w->vl += block * (n < 1 ? 1 : n);
	} else {
		w->slv += block * (double)w->lanes;
	}
}

/* Follow the loads of stage `sidx` whose loop dims move by u[dir] along
 * each direction; inlined Funcs are looked through by composing their
 * Jacobians. */
static void walk(struct lwalk *w, int sidx, double u[FX_MAXDIRS][PT_FP_MAXDIMS],
		 double mult, int depth)
{
	const struct pt_features *fx = w->fx;
	const struct pt_model *m = fx->m;
	const struct pt_stage *st = &m->stages[sidx];
	int i, k, d, t;

	for (i = fx->grp_first[sidx]; i < fx->grp_first[sidx + 1]; i++) {
		const struct fx_grp *a = &fx->grp[i];
		double dv[FX_MAXDIRS][PT_FP_MAXDIMS];
		double c = mult * a->count;
		int node = a->node;

		for (t = 0; t < w->ndirs; t++)
			for (k = 0; k < a->ncoords; k++) {
				const double *row = &fx->jac[(size_t)(a->coord +
								k) *
							     PT_FP_MAXDIMS];
				double v = 0;

				if (fx->unknown[a->coord + k]) {
					dv[t][k] = NAN;
					continue;
				}
				for (d = 0; d < st->ndims; d++) {
					if (row[d] == 0)
						continue;
					if (isnan(row[d]))
						v += u[t][d] != 0 ? NAN : 0;
					else
						v += row[d] * u[t][d];
				}
				dv[t][k] = v;
			}
		if (!a->self && node < m->nfuncs && fx->inl1[node] &&
		    depth < 64 && w->leaves < FX_MAXLEAVES) {
			const struct pt_stage *g =
				&m->stages[m->funcs[node].first_stage];
			double v[FX_MAXDIRS][PT_FP_MAXDIMS];

			for (t = 0; t < w->ndirs; t++)
				for (d = 0; d < g->ndims; d++)
					v[t][d] = g->dims[d].is_rvar ? 0 :
						dv[t][g->dims[d].index];
			walk(w, m->funcs[node].first_stage, v, c, depth + 1);
			continue;
		}
		w->leaves++;
		leaf(w, dv, a->ncoords, c, fx->nbytes[node]);
	}
}

/* Add node n's box b, read by a stage, to the bytes, lines and (alloc)
 * allocations read, unless n is inlined or, when tj >= 0, computed inside
 * loop (tj, tp). */
static inline void read_add(const struct pt_features *fx, int n,
			    const struct pt_box *b, int tj, int tp,
			    double *bytes, double *lines, double *alloc)
{
	int nd = fx->nd[n];
	const struct pt_box *al;
	double pts;

	if (n < fx->nfuncs) {
		if (fx->inl1[n])
			return;
		if (tj >= 0 && n != tj && inside(fx, n, tj, tp))
			return;
		al = &fx->fn[n].rs;
	} else {
		al = fx->nregion[n];
	}
	pts = pt_box_points(b, nd);
	*bytes += pts * fx->nbytes[n];
	*lines += pt_box_lines(b, al, nd);
	if (alloc)
		*alloc += n < fx->nfuncs ? fx->fn[n].bytes_real :
			fx->nalloc[n];
}

/* Bytes and lines read by stage `sidx` over `dims`, not counting Funcs
 * inside loop (tj, tp) when tj >= 0; with `alloc` the sum of the
 * allocations read. */
static void reads_at(struct pt_features *fx, int sidx,
		     const struct pt_box *dims, int tj, int tp,
		     double *bytes, double *lines, double *alloc)
{
	struct pt_fp_acc *acc = &fx->acc2;
	int i;

	*bytes = *lines = 0;
	if (alloc)
		*alloc = 0;
	pt_fp_acc_clear(acc);
	pt_fp_reads(fx->fp, sidx, dims, fx->inl, PT_FP_SELF, acc);
	for (i = 0; i < acc->ntouched; i++)
		read_add(fx, acc->touched[i], &acc->box[acc->touched[i]],
			 tj, tp, bytes, lines, alloc);
}

/* Keep in set r what stage `sidx` reads over its root box `dims`; -1 when
 * there is no room. */
static int root_keep_reads(struct pt_features *fx, struct fx_rootset *r,
			   int sidx, const struct pt_box *dims)
{
	struct pt_fp_acc *acc = &fx->acc2;
	int i;

	pt_fp_acc_clear(acc);
	pt_fp_reads(fx->fp, sidx, dims, fx->inl, PT_FP_SELF, acc);
	if (r->n + acc->ntouched > r->cap) {
		int cap = r->cap ? r->cap : 16;
		void *p;

		while (cap < r->n + acc->ntouched)
			cap *= 2;
		if (!(p = realloc(r->node, (size_t)cap * sizeof(*r->node))))
			return -1;
		r->node = p;
		if (!(p = realloc(r->box, (size_t)cap * sizeof(*r->box))))
			return -1;
		r->box = p;
		r->cap = cap;
	}
	for (i = 0; i < acc->ntouched; i++) {
		r->node[r->n + i] = acc->touched[i];
		r->box[r->n + i] = acc->box[acc->touched[i]];
	}
	r->rd_first[sidx] = r->n;
	r->rd_n[sidx] = acc->ntouched;
	r->n += acc->ntouched;
	return 0;
}

/* reads_at() over the last few boxes of one stage, remembered. */
struct rmemo {
	int n;
	struct {
		struct pt_box box;
		int tj, tp;
		double bytes, lines, alloc;
	} e[5];
};

static void reads_memo(struct pt_features *fx, struct rmemo *mm, int sidx,
		       const struct pt_box *dims, int tj, int tp,
		       double *bytes, double *lines, double *alloc)
{
	int ndims = fx->m->stages[sidx].ndims, i, k;

	for (i = 0; i < mm->n; i++) {
		if (mm->e[i].tj != tj || (tj >= 0 && mm->e[i].tp != tp))
			continue;
		for (k = 0; k < ndims; k++)
			if (mm->e[i].box.lo[k] != dims->lo[k] ||
			    mm->e[i].box.hi[k] != dims->hi[k])
				break;
		if (k == ndims)
			break;
	}
	if (i == mm->n) {
		reads_at(fx, sidx, dims, tj, tp, &mm->e[i].bytes,
			 &mm->e[i].lines, &mm->e[i].alloc);
		mm->e[i].box = *dims;
		mm->e[i].tj = tj;
		mm->e[i].tp = tp;
		mm->n++;
	}
	*bytes = mm->e[i].bytes;
	*lines = mm->e[i].lines;
	if (alloc)
		*alloc = mm->e[i].alloc;
}

/* reads_at() of stage `sidx` over its root box `dims` (no Funcs left out),
 * as the memo's first entry: what it reads at root depends only on the
 * inlined set, so the nodes and boxes are kept with the set; bytes, lines
 * and allocations, which depend on the regions of the schedule, are summed
 * over them in the same order as reads_at() does. */
static void root_reads(struct pt_features *fx, struct rmemo *mm, int sidx,
		       const struct pt_box *dims)
{
	struct fx_rootset *r = &fx->rset[fx->rcur];
	int i, end;

	mm->n = 1;
	mm->e[0].box = *dims;
	mm->e[0].tj = -1;
	mm->e[0].tp = 0;
	if (r->rd_first[sidx] < 0 && root_keep_reads(fx, r, sidx, dims)) {
		reads_at(fx, sidx, dims, -1, 0, &mm->e[0].bytes,
			 &mm->e[0].lines, &mm->e[0].alloc);
		return;
	}
	mm->e[0].bytes = mm->e[0].lines = mm->e[0].alloc = 0;
	end = r->rd_first[sidx] + r->rd_n[sidx];
	for (i = r->rd_first[sidx]; i < end; i++)
		read_add(fx, r->node[i], &r->box[i], -1, 0, &mm->e[0].bytes,
			 &mm->e[0].lines, &mm->e[0].alloc);
}

/* The Func's region written by one iteration of loop q of stage sidx. */
static void written_box(const struct pt_features *fx, int sidx, int q,
			const struct pt_box *rc, struct pt_box *out)
{
	const struct pt_stage *st = &fx->m->stages[sidx];
	struct pt_box b;
	int d;

	*out = *rc;
	loop_box(fx, sidx, q, &b);
	for (d = 0; d < st->ndims; d++)
		if (!st->dims[d].is_rvar) {
			out->lo[st->dims[d].index] = b.lo[d];
			out->hi[st->dims[d].index] = b.hi[d];
		}
}

static double inner_bytes(const struct pt_box *b, int nargs, int bytes)
{
	return nargs ? (double)(b->hi[0] - b->lo[0] + 1) * bytes : bytes;
}

static void stage_features(struct pt_features *fx, int sidx, double *o)
{
	const struct pt_model *m = fx->m;
	const struct pt_stage *st = &m->stages[sidx];
	int f = st->func, nargs = m->funcs[f].nargs, bytes = fx->bytes[f];
	const struct fx_func *fn = &fx->fn[f];
	const struct fx_stage *fs = &fx->st[sidx];
	const struct pt_feat_loop *l = &fx->loops[fs->first];
	int n = fs->nloops, sliding, i, vec = -1, par = -1, pv;
	double total, x;
	struct pt_box b, d;
	struct lwalk w;
	struct rmemo memo;
	double u[FX_MAXDIRS][PT_FP_MAXDIMS];

	sliding = fn->sj != fn->cj || fn->sp != fn->cp;
	if (sliding) {
		pt_fp_stage_dims(fx->fp, sidx, &fn->rs, &d);
		total = fn->real * pt_box_points(&d, st->ndims);
	} else {
		total = fn->prod * fs->points;
	}
	o[PT_FEAT_NUM_REALIZATIONS] = fn->real;
	o[PT_FEAT_NUM_PRODUCTIONS] = fn->prod;
	o[PT_FEAT_POINTS_TOTAL] = total;
	o[PT_FEAT_POINTS_PER_REALIZATION] = total / fn->real;
	o[PT_FEAT_POINTS_PER_PRODUCTION] = total / fn->prod;
	o[PT_FEAT_POINTS_MINIMUM] = fs->min_points;
	o[PT_FEAT_REDUNDANT_RECOMPUTE] = total / fs->min_points;

	o[PT_FEAT_INNERMOST_LOOP_EXTENT] = n ? (double)l[n - 1].extent : 1;
	o[PT_FEAT_INNERMOST_PURE_LOOP_EXTENT] = 1;
	for (i = n - 1; i >= 0; i--)
		if (!st->dims[l[i].dim].is_rvar) {
			o[PT_FEAT_INNERMOST_PURE_LOOP_EXTENT] =
				(double)l[i].extent;
			break;
		}
	o[PT_FEAT_UNROLLED_LOOP_EXTENT] = 1;
	o[PT_FEAT_INNER_PARALLELISM] = 1;
	w.fx = fx;
	w.ndirs = 0;
	w.vec = 0;
	w.lanes = 1;
	w.vl = w.slv = w.sls = 0;
	w.leaves = 0;
	for (i = 0; i < n; i++) {
		switch (l[i].kind) {
		case PT_LOOP_UNROLL:
			o[PT_FEAT_UNROLLED_LOOP_EXTENT] *=
				(double)l[i].extent;
			break;
		case PT_LOOP_PARALLEL:
			o[PT_FEAT_INNER_PARALLELISM] *=
				(double)l[i].extent;
			par = i;
			break;
		case PT_LOOP_VECTOR:
			vec = i;
			break;
		}
	}
	o[PT_FEAT_OUTER_PARALLELISM] = fn->outer_par;
	o[PT_FEAT_NATIVE_VECTOR_SIZE] = fx->lanes[f];

	/* vectors and scalars */
	o[PT_FEAT_VECTOR_SIZE] = 1;
	o[PT_FEAT_NUM_VECTORS] = 0;
	o[PT_FEAT_NUM_SCALARS] = total;
	if (vec >= 0) {
		int64_t V = l[vec].extent, X;
		double vpp, spp, ppp;

		X = div_up(fs->ext[l[vec].dim], l[vec].stride);
		if (l[vec].tail == PT_TAIL_GUARD && fx->vbytes >= 64) {
			/* Halide 14 vectorizes the guarded body with its
			 * condition as a predicate: the partial vector at
			 * the end is one masked vector (AVX-512's masked
			 * loads and stores), not X mod V scalars. Without
			 * AVX-512 LLVM scalarizes the masked loads of 8-
			 * and 16-bit lanes: counted as scalars below. */
			vpp = (double)div_up(X, V);
			spp = 0;
			ppp = (double)X;
		} else if (l[vec].tail == PT_TAIL_GUARD || l[vec].tail < 0) {
			vpp = (double)(X / V);
			spp = (double)(X % V);
			ppp = (double)X;
		} else {
			vpp = (double)div_up(X, V);
			spp = 0;
			ppp = vpp * (double)V;
		}
		o[PT_FEAT_VECTOR_SIZE] = (double)V;
		o[PT_FEAT_NUM_VECTORS] = ppp > 0 ? total * vpp / ppp : 0;
		o[PT_FEAT_NUM_SCALARS] = ppp > 0 ? total * spp / ppp : 0;
		w.vec = 1;
		w.lanes = V;
		memset(u[0], 0, sizeof(u[0]));
		u[0][l[vec].dim] = (double)l[vec].stride;
		w.uext[0] = V;
		w.ndirs = 1;
	}

	/* loads */
	for (i = 0; i < n && w.ndirs < FX_MAXDIRS; i++)
		if (l[i].kind == PT_LOOP_UNROLL) {
			memset(u[w.ndirs], 0, sizeof(u[0]));
			u[w.ndirs][l[i].dim] = (double)l[i].stride;
			w.uext[w.ndirs++] = l[i].extent;
		}
	walk(&w, sidx, u, 1, 0);
	x = o[PT_FEAT_UNROLLED_LOOP_EXTENT];
	o[PT_FEAT_VECTOR_LOADS_PER_VECTOR] = vec >= 0 ? w.vl / x : 0;
	o[PT_FEAT_SCALAR_LOADS_PER_VECTOR] = vec >= 0 ? w.slv / x : 0;
	o[PT_FEAT_SCALAR_LOADS_PER_SCALAR] = w.sls / x;

	/* what it writes */
	o[PT_FEAT_BYTES_AT_ROOT] = pt_box_points(fx->nregion[f],
					      nargs) * bytes;
	o[PT_FEAT_INNERMOST_BYTES_AT_ROOT] =
		inner_bytes(fx->nregion[f], nargs, bytes);
	o[PT_FEAT_BYTES_AT_REALIZATION] = fn->bytes_real;
	o[PT_FEAT_INNERMOST_BYTES_AT_REALIZATION] =
		inner_bytes(&fn->rs, nargs, bytes);
	o[PT_FEAT_BYTES_AT_PRODUCTION] = pt_box_points(&fn->rc, nargs) * bytes;
	o[PT_FEAT_INNERMOST_BYTES_AT_PRODUCTION] =
		inner_bytes(&fn->rc, nargs, bytes);
	if (par >= 0)
		written_box(fx, sidx, par, &fn->rc, &b);
	else
		b = fn->tj >= 0 ? fn->rt : fn->rroot;
	o[PT_FEAT_BYTES_AT_TASK] = pt_box_points(&b, nargs) * bytes;
	o[PT_FEAT_INNERMOST_BYTES_AT_TASK] = inner_bytes(&b, nargs, bytes);

	/* what it reads, at five sites (often over the same box) */
	pt_fp_stage_dims(fx->fp, sidx, &fn->rroot, &d);
	root_reads(fx, &memo, sidx, &d);
	o[PT_FEAT_BYTES_READ_AT_ROOT] = memo.e[0].bytes;
	o[PT_FEAT_LINES_READ_AT_ROOT] = memo.e[0].lines;
	pt_fp_stage_dims(fx->fp, sidx, &fn->rs, &d);
	reads_memo(fx, &memo, sidx, &d, -1, 0,
		   &o[PT_FEAT_BYTES_READ_PER_REALIZATION],
		   &o[PT_FEAT_LINES_READ_PER_REALIZATION],
		   &o[PT_FEAT_ALLOCATION_BYTES_READ_PER_REALIZATION]);
	loop_box(fx, sidx, -1, &d);
	reads_memo(fx, &memo, sidx, &d, -1, 0,
		   &o[PT_FEAT_BYTES_READ_PER_PRODUCTION],
		   &o[PT_FEAT_LINES_READ_PER_PRODUCTION], NULL);
	if (par >= 0) {
		loop_box(fx, sidx, par, &d);
		reads_memo(fx, &memo, sidx, &d, sidx == fx->last[f] ? f : -1,
			   par, &o[PT_FEAT_BYTES_READ_PER_TASK],
			   &o[PT_FEAT_LINES_READ_PER_TASK], NULL);
	} else {
		pt_fp_stage_dims(fx->fp, sidx,
				 fn->tj >= 0 ? &fn->rt : &fn->rroot, &d);
		reads_memo(fx, &memo, sidx, &d, fn->tj, fn->tp,
			   &o[PT_FEAT_BYTES_READ_PER_TASK],
			   &o[PT_FEAT_LINES_READ_PER_TASK], NULL);
	}
	pv = vec >= 0 && vec == n - 1 ? n - 2 : n - 1;
	loop_box(fx, sidx, pv, &d);
	reads_memo(fx, &memo, sidx, &d, -1, 0,
		   &o[PT_FEAT_BYTES_READ_PER_VECTOR],
		   &o[PT_FEAT_LINES_READ_PER_VECTOR], NULL);

}

/* The working sets of stage `sidx`, whose last parallel loop is `par`
 * (-1: none). They depend on every allocation in the pipeline (the one at
 * root on all of them), so they are never kept with the rest of a row. */
static void stage_wsets(const struct pt_features *fx, int sidx, int par,
			double *o)
{
	int f = fx->m->stages[sidx].func;
	const struct fx_func *fn = &fx->fn[f];

	o[PT_FEAT_WORKING_SET] = fn->inside;
	o[PT_FEAT_WORKING_SET_AT_PRODUCTION] = wset(fx, fn->cj, fn->cp);
	o[PT_FEAT_WORKING_SET_AT_REALIZATION] = wset(fx, fn->sj, fn->sp);
	if (par >= 0)
		o[PT_FEAT_WORKING_SET_AT_TASK] = sidx == fx->last[f] ?
			wset(fx, f, par) : 0;
	else
		o[PT_FEAT_WORKING_SET_AT_TASK] = wset(fx, fn->tj, fn->tp);
	o[PT_FEAT_WORKING_SET_AT_ROOT] = fx->wroot;
}

/* The last parallel loop of stage `sidx`, or -1. */
static int last_parallel(const struct pt_features *fx, int sidx)
{
	const struct fx_stage *fs = &fx->st[sidx];
	int i;

	for (i = fs->nloops - 1; i >= 0; i--)
		if (fx->loops[fs->first + i].kind == PT_LOOP_PARALLEL)
			return i;
	return -1;
}

/* n int64_t values (a few: a loop, not a call to memcpy) */
static unsigned char *kput64(unsigned char *o, const int64_t *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		o = pt_key_put(o, &v[i], sizeof(v[i]));
	return o;
}

static unsigned char *kbox(unsigned char *o, const struct pt_box *b, int n)
{
	return kput64(kput64(o, b->lo, n), b->hi, n);
}

/* The key of stage `sidx`'s row but its working sets, into fx->kbuf: the
 * bytes of everything stage_features() reads that is not fixed by the
 * model. Those are
 * - which Funcs are inlined (the root set's gen): through them the loads
 *   are walked and the footprints read;
 * - the stage's loops and its dims' boxes in one production;
 * - its Func's sites, regions, counts and realized bytes;
 * - for each Func it reads (the nodes its reads at root meet, the same
 *   for every box): the region it is stored with, its realized bytes and
 *   whether it is computed inside the task site the reads per task leave
 *   out.
 * Its length, or -1 when it cannot be built (no memory). */
static long row_key(struct pt_features *fx, int sidx, int par)
{
	const struct pt_model *m = fx->m;
	const struct pt_stage *st = &m->stages[sidx];
	int f = st->func, nargs = m->funcs[f].nargs, i, n, tj, tp;
	const struct fx_func *fn = &fx->fn[f];
	const struct fx_stage *fs = &fx->st[sidx];
	const struct pt_feat_loop *l = &fx->loops[fs->first];
	struct fx_rootset *r = &fx->rset[fx->rcur];
	const size_t bx = 2 * PT_FP_MAXDIMS * sizeof(int64_t);
	unsigned char *o;
	size_t need;
	int ints[6];

	if (r->rd_first[sidx] < 0) {
		struct pt_box d;

		pt_fp_stage_dims(fx->fp, sidx, &fn->rroot, &d);
		if (root_keep_reads(fx, r, sidx, &d))
			return -1;
	}
	need = sizeof(r->gen) + bx + sizeof(double) +
		PT_KEY_LOOPS_BYTES(fs->nloops) +
		sizeof(ints) + 4 * sizeof(double) + 4 * bx +
		(size_t)r->rd_n[sidx] * (sizeof(int) + 1 + bx +
					 sizeof(double));
	if (need > fx->kcap) {
		unsigned char *b = realloc(fx->kbuf, need);

		if (!b)
			return -1;
		fx->kbuf = b;
		fx->kcap = need;
	}
	o = pt_key_put(fx->kbuf, &r->gen, sizeof(r->gen));
	o = kput64(o, fs->lo, st->ndims);
	o = kput64(o, fs->ext, st->ndims);
	o = pt_key_put(o, &fs->points, sizeof(fs->points));
	o = pt_key_loops(o, l, fs->nloops);
	ints[0] = fn->cj, ints[1] = fn->cp, ints[2] = fn->sj;
	ints[3] = fn->sp, ints[4] = fn->tj, ints[5] = fn->tp;
	o = pt_key_put(o, ints, sizeof(ints));
	o = pt_key_put(o, &fn->prod, sizeof(fn->prod));
	o = pt_key_put(o, &fn->real, sizeof(fn->real));
	o = pt_key_put(o, &fn->outer_par, sizeof(fn->outer_par));
	o = pt_key_put(o, &fn->bytes_real, sizeof(fn->bytes_real));
	o = kbox(o, &fn->rc, nargs);
	o = kbox(o, &fn->rs, nargs);
	o = kbox(o, &fn->rt, nargs);
	o = kbox(o, &fn->rroot, nargs);
	/* the task site stage_features() gives reads_memo() */
	if (par >= 0) {
		tj = sidx == fx->last[f] ? f : -1;
		tp = par;
	} else {
		tj = fn->tj;
		tp = fn->tp;
	}
	for (i = 0; i < r->rd_n[sidx]; i++) {
		unsigned char in;

		n = r->node[r->rd_first[sidx] + i];
		o = pt_key_put(o, &n, sizeof(n));
		if (n >= fx->nfuncs || fx->inl1[n])
			continue;
		in = tj >= 0 && n != tj && inside(fx, n, tj, tp);
		o = pt_key_put(o, &in, 1);
		o = kbox(o, &fx->fn[n].rs, fx->nd[n]);
		o = pt_key_put(o, &fx->fn[n].bytes_real,
			 sizeof(fx->fn[n].bytes_real));
	}
	return (long)(o - fx->kbuf);
}

/* Is stage `sidx`'s row the last schedule's, without its key built? When
 * it was that schedule's row, the inlined set is the same, its Func is
 * above `top` (regions_changed(): its loops, sites and regions are the
 * same) and so is every Func it reads (their storage, realized bytes and
 * sites): everything row_key() would write is the same. */
static int row_same(const struct pt_features *fx, int sidx, int top)
{
	const struct fx_rootset *r = &fx->rset[fx->rcur];
	int i, n;

	if (fx->sm[sidx].cur != fx->serial || fx->sm[sidx].cur == 0 ||
	    r->gen != fx->sgen || fx->m->stages[sidx].func <= top ||
	    r->rd_first[sidx] < 0)
		return 0;
	for (i = 0; i < r->rd_n[sidx]; i++) {
		n = r->node[r->rd_first[sidx] + i];
		if (n < fx->nfuncs && !fx->inl1[n] && n <= top)
			return 0;
	}
	return 1;
}

/* Stage `sidx`'s row into o: the last schedule's when row_same() says
 * so; with `kept`, taken from the last time its key was the same, or
 * computed and kept; otherwise computed. */
static void stage_row(struct pt_features *fx, int sidx, int kept, int top,
		      double *o)
{
	struct fx_smemo *sm = &fx->sm[sidx];
	int par = last_parallel(fx, sidx), same = row_same(fx, sidx, top);
	long len = kept && !same ? row_key(fx, sidx, par) : -1;

	fx->keep.tries += kept;
	if (same || (len > 0 && sm->len == (size_t)len &&
		     !memcmp(sm->key, fx->kbuf, (size_t)len))) {
		pt_copy_big(o, sm->row, sizeof(sm->row));
		fx->keep.hits += kept;
		sm->cur = fx->serial + 1;
		if (same)
			sm->same = fx->serial + 1;
	} else {
		sm->cur = 0;
		/* a feature stage_features() leaves unset is 0, not what the
		 * buffer held (it sets them all now; a cheap guard) */
		memset(o, 0, PT_FEAT_COUNT * sizeof(*o));
		stage_features(fx, sidx, o);
		if (kept)
			sm->len = 0;
		if (len > 0) {
			/* the key built becomes the stage's: buffers swapped,
			 * not copied */
			unsigned char *k = sm->key;
			size_t cap = sm->cap;

			sm->key = fx->kbuf;
			sm->cap = fx->kcap;
			sm->len = (size_t)len;
			fx->kbuf = k;
			fx->kcap = cap;
			pt_copy_big(sm->row, o, sizeof(sm->row));
			sm->cur = fx->serial + 1;
		}
	}
	stage_wsets(fx, sidx, par, o);
}

/* --- pass 5: inlined Funcs ------------------------------------------------ */

/* Add, for every inlined Func that non-inlined stage `sidx` evaluates,
 * its calls, vectors and scalars to its row. */
static void inlined_counts(struct pt_features *fx, int sidx, double *out)
{
	const struct pt_model *m = fx->m;
	const struct pt_stage *st = &m->stages[sidx];
	const double *so = &out[(size_t)sidx * PT_FEAT_COUNT];
	double *c = fx->copies;
	const uint64_t *cm = &fx->cmask[(size_t)sidx * fx->words];
	int i, g;

	/* most stages call no inlined Func: their callees' bits tell */
	for (i = 0; i < fx->words && !(cm[i] & fx->inl[i]); i++)
		;
	if (i == fx->words)
		return;
	for (i = fx->call_first[sidx]; i < fx->call_first[sidx + 1]; i++) {
		const struct fx_call *a = &fx->call[i];

		if (fx->inl1[a->func])
			c[a->func] += a->count;
	}
	for (g = st->func - 1; g >= 0; g--) {
		int gs = m->funcs[g].first_stage;
		double *go;

		if (!fx->inl1[g] || c[g] == 0)
			continue;
		for (i = fx->call_first[gs]; i < fx->call_first[gs + 1]; i++) {
			const struct fx_call *a = &fx->call[i];

			if (a->func < g && fx->inl1[a->func])
				c[a->func] += c[g] * a->count;
		}
		go = &out[(size_t)gs * PT_FEAT_COUNT];
		go[PT_FEAT_INLINED_CALLS] += c[g] * so[PT_FEAT_POINTS_TOTAL];
		go[PT_FEAT_NUM_VECTORS] += c[g] * so[PT_FEAT_NUM_VECTORS];
		go[PT_FEAT_NUM_SCALARS] += c[g] * so[PT_FEAT_NUM_SCALARS];
		c[g] = 0;
	}
}

uint64_t pt_features_serial(const struct pt_features *fx)
{
	return fx->serial;
}

int pt_features_top(const struct pt_features *fx)
{
	return fx->serial ? fx->top : fx->nfuncs - 1;
}

int pt_features_row_same(const struct pt_features *fx, int stage)
{
	return fx->serial && stage >= 0 && stage < fx->m->nstages &&
		fx->sm[stage].same == fx->serial;
}

int pt_features_compute(struct pt_features *fx, const struct pt_sched *s,
			double *out, struct pt_error *err)
{
	return pt_features_compute_rev(fx, s, 0, NULL, out, err);
}

int pt_features_compute_partial(struct pt_features *fx,
				const struct pt_sched *s, int first,
				double *out, struct pt_error *err)
{
	return pt_features_compute_rev(fx, s, first, NULL, out, err);
}

int pt_features_compute_rev(struct pt_features *fx, const struct pt_sched *s,
			    int first, const uint64_t *rev, double *out,
			    struct pt_error *err)
{
	const struct pt_model *m = fx->m;
	int f, k, ret, kept, top;

	if (!s)
		return pt_error_set(err, PT_EINVAL, "no schedule");
	if (first < 0)
		first = 0;
	if ((ret = structure(fx, s, first, rev, err)))
		return ret;
	top = regions_changed(fx, first, rev);
	fx->top = top;
	regions(fx, first, top);
	regions_done(fx, first, rev, top);
	working_sets(fx);
	/* The rows of inlined Funcs are sums, zeroed first; those of the
	 * Funcs not decided yet are 0. stage_row() writes the others whole:
	 * zeroing every row was 1% of a beam's time. */
	for (f = 0; f < m->nfuncs; f++)
		if (f < first || fx->inl1[f])
			memset(&out[(size_t)m->funcs[f].first_stage *
				    PT_FEAT_COUNT],
			       0, (size_t)m->funcs[f].nstages *
			       PT_FEAT_COUNT * sizeof(*out));
	kept = pt_keep_begin(&fx->keep);
	for (f = first; f < m->nfuncs; f++)
		for (k = 0; k < m->funcs[f].nstages && !fx->inl1[f]; k++)
			stage_row(fx, m->funcs[f].first_stage + k, kept, top,
				  &out[(size_t)(m->funcs[f].first_stage + k) *
				       PT_FEAT_COUNT]);
	pt_keep_end(&fx->keep, kept);
	fx->serial++;
	fx->sgen = fx->rset[fx->rcur].gen;
	memset(fx->copies, 0, (size_t)m->nfuncs * sizeof(*fx->copies));
	/* The stages of Funcs at and above `first`: a model's stages are
	 * in the order of their Funcs (pt_model_validate()). */
	for (k = first < m->nfuncs ? m->funcs[first].first_stage :
		     m->nstages; k < m->nstages; k++)
		if (!fx->inl1[m->stages[k].func])
			inlined_counts(fx, k, out);
	for (f = first; f < m->nfuncs; f++) {
		double *o;

		if (!fx->inl1[f])
			continue;
		o = &out[(size_t)m->funcs[f].first_stage * PT_FEAT_COUNT];
		o[PT_FEAT_POINTS_MINIMUM] =
			fx->st[m->funcs[f].first_stage].min_points;
		o[PT_FEAT_NATIVE_VECTOR_SIZE] = fx->lanes[f];
		o[PT_FEAT_VECTOR_SIZE] = o[PT_FEAT_NUM_VECTORS] > 0 ?
			(o[PT_FEAT_INLINED_CALLS] - o[PT_FEAT_NUM_SCALARS]) /
			o[PT_FEAT_NUM_VECTORS] : 1;
	}
	return 0;
}
