/* pt_space.c: the schedule space (pt_space.h, doc/space.md).
 *
 * A state is a flat block: a header (the decision it waits for), one block
 * per Func (granularity, site, and the instances and region per instance
 * the site gives), and one block per stage (its tiling levels). Everything
 * a decision needs is derived from that block when it is taken: the loop
 * nest of a consumer, the uses of a Func, the regions it computes per loop
 * iteration. Nothing is cached between calls, so a state can be copied
 * anywhere.
 *
 * The options of a decision are small descriptors built into the work
 * area; a child is built only for the option picked (or, when all are
 * enumerated, one at a time). The one costly test, how much a site makes a
 * Func recompute, is run lazily for sites that split a consumer's level
 * (there can be many): a random draw tests only what it draws.
 *
 * Legality is by construction (doc/schedule-legality.md): the loop
 * structure keeps each dim's splits in order and splits only outer halves;
 * tails are guard, shift only at root within the estimate, round only on a
 * vector split of stage 0 of a Func whose region need not stay exact (so a
 * round tail never meets a guard vector tail); sites are level ends that
 * enclose every use, never inside a vector tile of a consumer that reads
 * with a stride along it, nor where a vectorized consumer would read the
 * Func at constant addresses with a stride of 2 to 4 (the one rule kept by
 * a test of each site, const_strided()); inline chains stay within rule
 * 3; sliding windows keep to the one shape rule 5 allows.
 */
#include "protune/pt_space.h"
#include "protune/pt_randsched.h"
#include "protune/pt_strided.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXLEV PT_SPACE_MAX_LEVELS
#define MAXARGS PT_SPACE_MAX_ARGS
#define MAXSPLIT MAXLEV    /* splits of one dim: the vector one and one
			    * per level holding a constant piece */
#define NAMELEN 24
#define REM 0xff           /* level factor: what is left of the dim */
#define NOLEV 0xff
#define MAXCODE 20         /* tile factors up to 2^20 */
#define NCAND (MAXCODE + 2)

/* doc/schedule-legality.md, rule 3 */
#define MAX_INLINED_FEEDING 8
#define MAX_INLINE_COPIES 64
#define INLINE_OPS 128.0   /* PT_SPACE_PRUNE_INLINE_SIZE */
#define UNROLL_MAX 16      /* an innermost level unrolled (Adams: 16) */
#define UNROLL_CODE 1024.0 /* its operations times the unrolled extent */
#define RANDOM_TRIES 8
#define FAM_BITS 512       /* combo_ok() answers kept per family */

enum { G_NONE, G_INLINE, G_ROOT, G_AT, G_SLIDE };
enum { K_INLINE, K_ROOT, K_AT, K_SPLIT, K_SLIDE, K_TILE, K_NONE, K_INNER,
       NKINDS };

/* --- the state's layout --------------------------------------------------- */

struct st_hdr {
	int16_t func;      /* the next decision's Func, -1 when complete */
	uint8_t what;      /* PT_SPACE_GRAN, _TILE, _INNER */
	uint8_t stage;
	uint32_t depth;
};

struct st_func {
	uint8_t gran;      /* G_* */
	uint8_t slot;      /* G_AT: the site's level id; G_SLIDE: the pure
			    * dim of the site's last stage it slides over */
	int16_t site;      /* G_AT, G_SLIDE: the Func */
	float inst;        /* how many times it is computed */
	/* then float reg[min(nargs, MAXARGS)]: its region per instance */
};

/* A stage's loops: levels (ids 0..nlev-1, in order[] outermost first),
 * each giving every pure dim a factor: 0 none, c >= 1 a constant piece of
 * 2^c, REM what is left (exactly one level per dim, and no piece outside
 * it). The vector loop (vdim, native width) is innermost; reduction loops
 * sit just inside level rvlev's pure loops; level par is parallel. */
struct st_stage {
	int8_t vdim;       /* pure dim index, -1 none */
	uint8_t nlev;      /* 0: no tiling (no directives) */
	uint8_t par;       /* level id or NOLEV */
	uint8_t rvlev;
	uint8_t order[MAXLEV];
	uint8_t feeding;   /* inlined Funcs feeding it (rule 3) */
	uint8_t done;      /* 1: tiling decided, 2: inner level decided */
	uint16_t pad;
	float added;       /* operations inlining adds to it */
	/* then uint8_t fac[MAXLEV][npure] */
};

/* --- the space ------------------------------------------------------------ */

/* Reads compiled for footprints: the reads of one producer that differ
 * only in their offsets are merged into one group whose offsets span
 * theirs (a 5x5 stencil is one group), since boxes are hulls anyway. */
struct sp_term {
	int dim;
	double k;
};

struct sp_coord {
	int affine, nterms, first;   /* terms sp->terms[first..] */
	int partial;                 /* not affine, but its terms and
				      * offsets bound it (pt_model.h): for
				      * regions only (coord_iv()); every
				      * rule sees it as not affine */
	int has_min, has_max;
	double omin, omax, cmin, cmax;
};

struct sp_group {
	int producer, whole;         /* whole: reads the producer's region */
	int rep;                     /* the access it was made from */
	double count;                /* accesses merged, with their counts */
	int ncoords, first;          /* coords sp->coords[first..] */
};

struct sp_reader {
	int stage;
	double count;
};

struct sp_stage {
	const struct pt_stage *ms;
	int ngroups, first_group;
	int func, index;
	int tiled;                 /* takes directives and decisions */
	int npure;
	int pure[MAXARGS];         /* stage dim of each pure dim, innermost
				    * first */
	int arg[MAXARGS];          /* its Func argument */
	int nrv;
	double ops;
	size_t off;
	int dfirst;                /* its dims' names: sp->dname[dfirst..] */
	/* [p][k][0]: dim p after k splits; [p][k][1]: the inner half of
	 * split k */
	char name[MAXARGS][MAXSPLIT + 1][2][NAMELEN];
};

struct sp_func {
	int nargs, nstages, first, last;  /* first, last: stage indices */
	int lanes, exact, single_load, is_output, can_inline, wide;
	double ops;                /* stage 0's, what inlining copies */
	double root_points;
	double rmin[MAXARGS], rext[MAXARGS];
	size_t off;
};

struct pt_space {
	const struct pt_model *m;
	struct pt_space_opts o;
	int cores;
	int nfuncs, nstages, maxdims;
	struct sp_func *fn;
	struct sp_stage *sg;
	size_t size;
	struct sp_group *groups;
	struct sp_coord *coords;
	struct sp_term *terms;
	int ngroups, ncoords, nterms;
	/* Per Func, the stages of other Funcs that read it and how many
	 * times: readers[rfirst[f] .. rfirst[f + 1]). */
	struct sp_reader *readers;
	int *rfirst, *rcount;
	/* Per access, stage by stage (stage s from adup + afirst[s]): 1
	 * when an earlier access of the stage reads the same points
	 * (another value of a tuple). */
	unsigned char *adup;
	int *afirst;
	/* Every stage's original dims by name ("v0", "r1"), stage by
	 * stage (sp_stage.dfirst): loop names the schedule borrows. */
	char (*dname)[NAMELEN];
};

struct opt {
	uint8_t kind;      /* K_* */
	uint8_t level;     /* K_AT, K_SPLIT: the site's level id; K_SLIDE:
			    * the pure dim */
	int16_t func;      /* K_AT, K_SPLIT, K_SLIDE: the site's Func */
	int8_t vdim;       /* K_TILE */
	uint8_t rv;        /* K_INNER: reduction loops outside the level */
	uint8_t state;     /* 0 not tested yet, 1 valid, 2 pruned */
	uint8_t pad;
	uint8_t code[MAXARGS];
	int qmin;          /* K_SPLIT: the split level's order index */
	int fam;           /* K_SPLIT in an option list: its family, and
			    * the option stands for all the family's
			    * combinations; -1 in a concrete option */
	float inst;        /* K_AT, K_SPLIT, K_SLIDE, once valid */
	float reg[MAXARGS];
};

/* Candidate pieces per dim (a tiling's candidates). */
struct cands {
	int n[MAXARGS];
	uint8_t c[MAXARGS][NCAND];
};

/* Tilings as candidate lists whose combinations are decoded on demand
 * (there can be hundreds, and a random draw needs one): the splits of one
 * level of a site's Func (K_SPLIT), the parallel tilings of a stage for
 * one vector dim (K_TILE), its inner levels (K_INNER, with the place of
 * the reduction loops as one more digit). */
struct fam {
	int np, total;         /* pure dims; combinations */
	int nrv;               /* K_INNER: 2 with reduction loops, else 1 */
	int par;               /* task bounds apply */
	uint8_t x[MAXARGS];    /* K_SPLIT, K_INNER: the level's factors */
	struct cands cs;
	double tf[MAXARGS][NCAND];  /* tasks each candidate leaves outside */
	/* combo_ok()'s answers for combinations 0 .. upto - 1 (at most
	 * FAM_BITS), and the digits of combination upto. */
	int upto;
	int dig[MAXARGS];
	uint64_t ok[FAM_BITS / 64];
	/* Found with the first answers: every product of tf[][] is exact
	 * (whole numbers, the largest below 2^53), so the order of its
	 * factors does not change it. */
	int exact;
};

struct optbuf {
	struct opt *v;
	int n, cap;
	struct fam *f;
	int nf, fcap;
};

/* One loop of a stage's nest. */
struct sp_loop {
	int16_t dim;       /* the stage dim */
	int8_t p;          /* pure dim index, -1 for a reduction loop */
	uint8_t level;     /* level id, NOLEV for vector and reduction
			    * loops */
	uint8_t nsplit;    /* pure: inner half of split nsplit, or what is
			    * left after nsplit splits */
	uint8_t inner, vec, par;
	double extent;     /* in one instance */
};

/* What build_nest() tells about a nest besides the loops. */
struct ninfo {
	int n;
	int lend[MAXLEV];    /* per level id: position of its innermost
			      * loop */
	int lfirst[MAXLEV];  /* ... and of its outermost */
	int rpos[MAXARGS];   /* per pure dim: position of what is left */
	int nsplit[MAXARGS];
	int64_t pfac[MAXARGS][MAXSPLIT];  /* factor of split k + 1 */
};

/* Rule 6 (strided loads at constant addresses, below; the analysis is
 * pt_strided.c's): the reads of a Func by a site's Func, composed once
 * (struct rcache, of struct crd). */
struct crd {
	unsigned char bad[MAXARGS];
	double lo[MAXARGS], hi[MAXARGS];
};

struct rcache {
	int valid, f, j, nb, n;
	int cap, cnb;         /* room: cap reads of cnb dims */
	unsigned char *inl;   /* nfuncs: the inlined Funcs it was made for */
	struct crd *r;
	struct pt_strided_coef *coef;  /* [read][k][d]: cap * MAXARGS * cnb */
	struct pt_strided_form *fpool; /* scratch for composing, a stack:
					* fcap forms */
	double *dpool;        /* ... of dcap coefficients */
	int ftop, fcap, dtop, dcap;
};

struct pt_space_work {
	struct optbuf ob[2], tmp;  /* tmp: for sorting */
	double *copies;        /* per stage: copies of a Func's body */
	double *fcopies;       /* per Func (inlined ones) */
	int *uses, nuses;      /* stages that read the Func */
	int *reach, *stamp;    /* per Func: find_uses() walk, marks */
	int *sstamp, now;      /* per stage: marks */
	double *blo, *bhi;     /* per Func: a box, MAXARGS wide */
	unsigned char *bset, *incl;
	double *dlo, *dhi;     /* per stage dim */
	struct sp_loop *loops[2];
	unsigned char *blk;    /* one stage block */
	struct pt_space_state *child;
	struct rcache *cr;     /* rule 6: reads of a Func by a site's Func */
	struct pt_strided_step *cs;  /* rule 6: MAXARGS * (maxdims + 1) */
	/* pt_space_sched_scratch(): the schedule it rebuilds each time
	 * (NULL until the first call) and, per stage, the room of its
	 * directive array and the loop names of its reorder. */
	struct pt_sched *sched;
	int *dcap;
	char ***ordv;         /* nord arrays */
	int *ocap, nord;
	/* ... and its memo: the state it was last built from (`last`,
	 * valid when `built`); hhead, hnext: the Funcs computed at each Func
	 * of the state being built, as lists, ohead, onext: of `last`. */
	struct pt_space_state *last;
	int built;
	int coarse;           /* the schedule is pt_space_sched_coarse()'s */
	int *hhead, *hnext, *ohead, *onext;
	/* per Func, the revision of its entry (pt_space_scratch_revs()),
	 * from the counter `revs`, which w keeps for its whole life */
	uint64_t *rev, revs;
};

/* --- small helpers -------------------------------------------------------- */

uint64_t pt_space_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static int below(uint64_t *rng, int n)
{
	return n > 1 ? (int)(pt_space_rand(rng) % (uint64_t)n) : 0;
}

static struct st_hdr *hdr(const struct pt_space_state *st)
{
	return (struct st_hdr *)(void *)st;
}

static struct st_func *fblk(const struct pt_space *sp,
			    const struct pt_space_state *st, int f)
{
	return (struct st_func *)(void *)((char *)st + sp->fn[f].off);
}

static float *freg(struct st_func *b)
{
	return (float *)(void *)(b + 1);
}

static struct st_stage *sblk(const struct pt_space *sp,
			     const struct pt_space_state *st, int s)
{
	return (struct st_stage *)(void *)((char *)st + sp->sg[s].off);
}

static size_t sblk_size(int npure)
{
	return (sizeof(struct st_stage) + (size_t)MAXLEV * (size_t)npure +
		3) & ~(size_t)3;
}

static uint8_t *fac(struct st_stage *b, int npure, int lev, int p)
{
	return (uint8_t *)(b + 1) + lev * npure + p;
}

static int gran(const struct pt_space *sp, const struct pt_space_state *st,
		int f)
{
	return fblk(sp, st, f)->gran;
}

static int inlined(const struct pt_space *sp, const struct pt_space_state *st,
		   int f)
{
	return fblk(sp, st, f)->gran == G_INLINE;
}

static int last_sidx(const struct pt_space *sp, int f)
{
	return sp->fn[f].last;
}

static double rat(struct pt_rat r)
{
	return (double)r.num / (double)(r.den ? r.den : 1);
}

static double dim_ext(const struct pt_dim *d)
{
	return d->extent > 0 ? (double)d->extent : 1;
}

static int64_t div_up(int64_t a, int64_t b)
{
	if (a <= 0)
		return 0;
	return a / b + (a % b != 0);
}

static double ceil_div(double a, double b)
{
	double r = ceil(a / b - 1e-9);

	return r >= 1 ? r : 1;
}

static int optbuf_add(struct optbuf *ob, struct opt **out)
{
	if (ob->n == ob->cap) {
		int cap = ob->cap ? 2 * ob->cap : 64;
		struct opt *v = realloc(ob->v, (size_t)cap * sizeof(*v));

		if (!v)
			return PT_ENOMEM;
		ob->v = v;
		ob->cap = cap;
	}
	*out = &ob->v[ob->n++];
	memset(*out, 0, sizeof(**out));
	(*out)->fam = -1;
	return 0;
}

static int fam_add(struct optbuf *ob, struct fam **out)
{
	if (ob->nf == ob->fcap) {
		int cap = ob->fcap ? 2 * ob->fcap : 16;
		struct fam *v = realloc(ob->f, (size_t)cap * sizeof(*v));

		if (!v)
			return PT_ENOMEM;
		ob->f = v;
		ob->fcap = cap;
	}
	*out = &ob->f[ob->nf++];
	(*out)->upto = 0;
	return 0;
}

/* --- the model's analysis ------------------------------------------------- */

static double stage_ops(const struct pt_stage *ms)
{
	double n = 0;
	int i;

	for (i = 0; i < ms->nops; i++)
		n += (double)ms->ops[i].count;
	return n > 1 ? n : 1;
}

/* Funcs whose region must stay exact (rule 7): outputs, and Funcs reading
 * an input buffer or such a Func along their own region. */
static int find_exact(struct pt_space *sp)
{
	unsigned char *exact = malloc((size_t)sp->m->nfuncs + 1);
	int f;

	if (!exact)
		return PT_ENOMEM;
	pt_model_exact_funcs(sp->m, exact);
	for (f = 0; f < sp->m->nfuncs; f++)
		sp->fn[f].exact = exact[f];
	free(exact);
	return 0;
}

/* One load and nothing else (an input wrapper): Adams' exception to the
 * recompute bound. */
static int single_load(const struct pt_model *m, int f)
{
	const struct pt_func *mf = &m->funcs[f];
	const struct pt_stage *ms = &m->stages[mf->first_stage];
	int i, loads = 0;

	if (mf->nstages != 1 || ms->naccesses != 1 ||
	    ms->accesses[0].count > 1)
		return 0;
	for (i = 0; i < ms->nops; i++) {
		if (strncmp(ms->ops[i].name, "load.", 5))
			return 0;
		loads += (int)ms->ops[i].count;
	}
	return loads == 1;
}

static int clashes(const struct pt_model *m, int f, const char *name)
{
	const struct pt_func *mf = &m->funcs[f];
	int i, d;

	for (i = 0; i < mf->nstages; i++) {
		const struct pt_stage *ms = &m->stages[mf->first_stage + i];

		for (d = 0; d < ms->ndims; d++)
			if (pt_halide_name_match(ms->dims[d].label, name))
				return 1;
	}
	return 0;
}

/* Names of split results: dim v2 split twice gives v2o, v2i, then v2oo,
 * v2oi; with a prefix when those clash with one of Halide's names. */
static int make_names(const struct pt_model *m, struct sp_stage *sg)
{
	static const char *const prefix[] = { "", "t", "t_", "q_", "s_z" };
	int style, p, k, ok;

	for (style = 0; style < 5; style++) {
		ok = 1;
		for (p = 0; p < sg->npure && ok; p++) {
			char stem[12];
			int idx = sg->ms->dims[sg->pure[p]].index;

			snprintf(stem, sizeof(stem), "%sv%d", prefix[style],
				 idx);
			snprintf(sg->name[p][0][0], NAMELEN, "v%d", idx);
			sg->name[p][0][1][0] = '\0';
			for (k = 1; k <= MAXSPLIT; k++) {
				char *o = sg->name[p][k][0];
				char *in = sg->name[p][k][1];

				snprintf(o, NAMELEN, "%s%.*so", stem, k - 1,
					 "oooooooo");
				snprintf(in, NAMELEN, "%s%.*si", stem, k - 1,
					 "oooooooo");
				if (clashes(m, sg->func, o) ||
				    clashes(m, sg->func, in))
					ok = 0;
			}
		}
		if (ok)
			return 1;
	}
	return 0;
}

/* sp->dname: the names of every stage's original dims. */
static int dim_names(struct pt_space *sp)
{
	int i, d, n = 0;

	for (i = 0; i < sp->nstages; i++) {
		sp->sg[i].dfirst = n;
		n += sp->sg[i].ms->ndims;
	}
	sp->dname = calloc((size_t)n + 1, sizeof(*sp->dname));
	if (!sp->dname)
		return PT_ENOMEM;
	for (i = 0; i < sp->nstages; i++) {
		const struct pt_stage *ms = sp->sg[i].ms;

		for (d = 0; d < ms->ndims; d++)
			snprintf(sp->dname[sp->sg[i].dfirst + d], NAMELEN,
				 "%c%d", ms->dims[d].is_rvar ? 'r' : 'v',
				 ms->dims[d].index);
	}
	return 0;
}

static int parse_cores(const char *mp)
{
	long v = mp ? strtol(mp, NULL, 10) : 0;

	return v > 0 && v < 100000 ? (int)v : 1;
}

static int narrow_bits(const struct pt_func *mf)
{
	int i, bits = 64;

	for (i = 0; i < mf->ntypes; i++)
		if (mf->types[i].bits < bits)
			bits = mf->types[i].bits;
	return mf->ntypes ? bits : 32;
}

static double acount(const struct pt_access *a)
{
	return a->count > 0 ? (double)a->count : 1;
}

static int same_shape(const struct pt_stage *ms, const struct pt_access *a,
		      const struct pt_access *b)
{
	int k, d;

	if (a->producer != b->producer || a->ncoords != b->ncoords)
		return 0;
	for (k = 0; k < a->ncoords; k++) {
		const struct pt_coord *x = &a->coords[k], *y = &b->coords[k];

		if ((x->affine && x->coef) != (y->affine && y->coef) ||
		    pt_coord_partial(x) != pt_coord_partial(y) ||
		    x->has_clamp_min != y->has_clamp_min ||
		    x->has_clamp_max != y->has_clamp_max ||
		    (x->has_clamp_min && x->clamp_min != y->clamp_min) ||
		    (x->has_clamp_max && x->clamp_max != y->clamp_max))
			return 0;
		if (!(x->affine && x->coef) && !pt_coord_partial(x))
			continue;
		for (d = 0; d < ms->ndims; d++)
			if (x->coef[d].num != y->coef[d].num ||
			    x->coef[d].den != y->coef[d].den ||
			    (!x->affine && x->varies[d] != y->varies[d]))
				return 0;
	}
	return 1;
}

/* Compile the reads of every stage into groups (see struct sp_group). */
static int compile_reads(struct pt_space *sp)
{
	const struct pt_model *m = sp->m;
	size_t ng = 0, nc = 0, nt = 0;
	int i, j, k, d, g;

	for (i = 0; i < m->nstages; i++)
		for (j = 0; j < m->stages[i].naccesses; j++) {
			const struct pt_access *a = &m->stages[i].accesses[j];

			ng++;
			nc += (size_t)a->ncoords;
			nt += (size_t)a->ncoords * (size_t)m->stages[i].ndims;
		}
	sp->groups = calloc(ng + 1, sizeof(*sp->groups));
	sp->coords = calloc(nc + 1, sizeof(*sp->coords));
	sp->terms = calloc(nt + 1, sizeof(*sp->terms));
	if (!sp->groups || !sp->coords || !sp->terms)
		return PT_ENOMEM;
	for (i = 0; i < m->nstages; i++) {
		const struct pt_stage *ms = &m->stages[i];
		struct sp_stage *sg = &sp->sg[i];

		sg->first_group = sp->ngroups;
		for (j = 0; j < ms->naccesses; j++) {
			const struct pt_access *a = &ms->accesses[j];
			struct sp_group *gr;
			int p = a->producer;

			if (a->kind != PT_ACCESS_FUNC || a->is_store || p < 0 ||
			    p >= ms->func)
				continue;
			for (g = sg->first_group; g < sp->ngroups; g++)
				if (same_shape(ms, &ms->accesses[
						       sp->groups[g].rep], a))
					break;
			if (g < sp->ngroups) {
				/* Widen the group's offsets. */
				gr = &sp->groups[g];
				gr->count += acount(a);
				for (k = 0; k < gr->ncoords; k++) {
					struct sp_coord *c =
						&sp->coords[gr->first + k];
					double lo = rat(a->coords[k].off_min);
					double hi = rat(a->coords[k].off_max);

					c->omin = lo < c->omin ? lo : c->omin;
					c->omax = hi > c->omax ? hi : c->omax;
				}
				continue;
			}
			gr = &sp->groups[sp->ngroups++];
			gr->rep = j;
			gr->count = acount(a);
			gr->producer = p;
			gr->whole = a->ncoords != m->funcs[p].nargs;
			gr->ncoords = a->ncoords;
			gr->first = sp->ncoords;
			for (k = 0; k < a->ncoords; k++) {
				const struct pt_coord *mc = &a->coords[k];
				struct sp_coord *c = &sp->coords[sp->ncoords++];

				c->affine = mc->affine && mc->coef;
				c->partial = pt_coord_partial(mc);
				c->has_min = mc->has_clamp_min;
				c->has_max = mc->has_clamp_max;
				c->cmin = (double)mc->clamp_min;
				c->cmax = (double)mc->clamp_max;
				c->omin = rat(mc->off_min);
				c->omax = rat(mc->off_max);
				c->first = sp->nterms;
				for (d = 0; (c->affine || c->partial) &&
				     d < ms->ndims; d++) {
					struct sp_term *t;

					if (!mc->coef[d].num)
						continue;
					t = &sp->terms[sp->nterms++];
					t->dim = d;
					t->k = rat(mc->coef[d]);
					c->nterms++;
				}
			}
		}
		sg->ngroups = sp->ngroups - sg->first_group;
	}
	/* Reader lists, one entry per (stage, producer). */
	sp->rfirst = calloc((size_t)m->nfuncs + 2, sizeof(int));
	sp->rcount = calloc((size_t)m->nfuncs + 1, sizeof(int));
	sp->readers = calloc((size_t)sp->ngroups + 1, sizeof(*sp->readers));
	if (!sp->rfirst || !sp->rcount || !sp->readers)
		return PT_ENOMEM;
	for (g = 0; g < sp->ngroups; g++)
		sp->rfirst[sp->groups[g].producer + 1]++;
	for (i = 0; i < m->nfuncs; i++)
		sp->rfirst[i + 1] += sp->rfirst[i];
	for (i = 0; i < m->nstages; i++) {
		struct sp_stage *sg = &sp->sg[i];

		for (g = sg->first_group; g < sg->first_group + sg->ngroups;
		     g++) {
			int p = sp->groups[g].producer, at;

			/* Merge with this stage's entry for p, if any. */
			for (at = sp->rfirst[p];
			     at < sp->rfirst[p] + sp->rcount[p]; at++)
				if (sp->readers[at].stage == i)
					break;
			if (at == sp->rfirst[p] + sp->rcount[p]) {
				sp->readers[at].stage = i;
				sp->readers[at].count = 0;
				sp->rcount[p]++;
			}
			sp->readers[at].count += sp->groups[g].count;
		}
	}
	return 0;
}

/* Do accesses a and b read the same points (another value of a tuple)? */
static int same_points(const struct pt_stage *ms, const struct pt_access *a,
		       const struct pt_access *b)
{
	int k, d;

	if (a->kind != b->kind || a->producer != b->producer ||
	    a->ncoords != b->ncoords || a->is_store != b->is_store)
		return 0;
	for (k = 0; k < a->ncoords; k++) {
		const struct pt_coord *x = &a->coords[k], *y = &b->coords[k];

		if (x->affine != y->affine || !x->coef != !y->coef ||
		    x->has_clamp_min != y->has_clamp_min ||
		    x->has_clamp_max != y->has_clamp_max ||
		    x->clamp_min != y->clamp_min ||
		    x->clamp_max != y->clamp_max ||
		    rat(x->off_min) != rat(y->off_min) ||
		    rat(x->off_max) != rat(y->off_max))
			return 0;
		if (x->partial != y->partial || !x->varies != !y->varies)
			return 0;
		for (d = 0; x->coef && d < ms->ndims; d++)
			if (rat(x->coef[d]) != rat(y->coef[d]) ||
			    (x->varies && x->varies[d] != y->varies[d]))
				return 0;
	}
	return 1;
}

/* sp->adup: the accesses that read the same points as an earlier one of
 * their stage (rule 6 composes each read once). */
static int find_dups(struct pt_space *sp)
{
	const struct pt_model *m = sp->m;
	int s, i, k, n = 0;

	sp->afirst = calloc((size_t)m->nstages + 1, sizeof(int));
	if (!sp->afirst)
		return PT_ENOMEM;
	for (s = 0; s < m->nstages; s++) {
		sp->afirst[s] = n;
		n += m->stages[s].naccesses;
	}
	sp->afirst[m->nstages] = n;
	sp->adup = calloc((size_t)n + 1, 1);
	if (!sp->adup)
		return PT_ENOMEM;
	for (s = 0; s < m->nstages; s++) {
		const struct pt_stage *ms = &m->stages[s];

		for (i = 1; i < ms->naccesses; i++)
			for (k = 0; k < i; k++)
				if (same_points(ms, &ms->accesses[i],
						&ms->accesses[k])) {
					sp->adup[sp->afirst[s] + i] = 1;
					break;
				}
	}
	return 0;
}

int pt_space_new(const struct pt_model *m, const struct pt_space_opts *opts,
		 struct pt_space **out, struct pt_error *err)
{
	static const struct pt_space_opts def = PT_SPACE_OPTS_INIT;
	struct pt_space *sp;
	size_t off;
	int f, i, d, k;

	*out = NULL;
	if (!m || pt_model_validate(m, err))
		return m ? PT_EINVAL :
			pt_error_set(err, PT_EINVAL, "no model");
	if (m->nfuncs > 32767)
		return pt_error_set(err, PT_EINVAL,
				    "%d Funcs: the space handles 32767 at most",
				    m->nfuncs);
	if (opts && (opts->max_levels < 0 || opts->max_levels > MAXLEV ||
		     opts->max_tilings < 0 || opts->recompute < 0 ||
		     (opts->prune & ~(unsigned)PT_SPACE_PRUNE_ALL)))
		return pt_error_set(err, PT_EINVAL,
				    "bad space options (levels 0..%d, tilings "
				    "and recompute >= 0, known prune bits)",
				    MAXLEV);
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	sp->m = m;
	sp->o = opts ? *opts : def;
	if (!sp->o.max_levels)
		sp->o.max_levels = MAXLEV;
	if (sp->o.max_tilings <= 0)
		sp->o.max_tilings = 128;
	if (!(sp->o.recompute > 0))
		sp->o.recompute = 10;
	sp->cores = parse_cores(m->machine_params);
	sp->nfuncs = m->nfuncs;
	sp->nstages = m->nstages;
	sp->fn = calloc((size_t)m->nfuncs + 1, sizeof(*sp->fn));
	sp->sg = calloc((size_t)m->nstages + 1, sizeof(*sp->sg));
	if (!sp->fn || !sp->sg) {
		pt_space_free(sp);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	off = sizeof(struct st_hdr);
	for (f = 0; f < m->nfuncs; f++) {
		const struct pt_func *mf = &m->funcs[f];
		struct sp_func *fn = &sp->fn[f];

		fn->nargs = mf->nargs;
		fn->nstages = mf->nstages;
		fn->first = mf->first_stage;
		fn->last = mf->first_stage + mf->nstages - 1;
		fn->lanes = pt_model_vector_lanes(m, narrow_bits(mf));
		fn->is_output = mf->is_output;
		fn->can_inline = mf->can_inline && !mf->is_output;
		fn->single_load = single_load(m, f);
		fn->wide = mf->nargs > MAXARGS;
		fn->ops = stage_ops(&m->stages[fn->first]);
		for (k = 0; k < mf->nargs && k < MAXARGS; k++) {
			fn->rmin[k] = mf->region_min ?
				(double)mf->region_min[k] : 0;
			fn->rext[k] = mf->region_extent &&
				mf->region_extent[k] > 0 ?
				(double)mf->region_extent[k] : 1;
		}
		fn->off = off;
		off += sizeof(struct st_func) +
			sizeof(float) * (size_t)(fn->wide ? 0 : mf->nargs);
	}
	for (i = 0; i < m->nstages; i++) {
		const struct pt_stage *ms = &m->stages[i];
		struct sp_stage *sg = &sp->sg[i];
		struct sp_func *fn = &sp->fn[ms->func];
		double pts = 1;

		sg->ms = ms;
		sg->func = ms->func;
		sg->index = ms->index;
		sg->ops = stage_ops(ms);
		if (ms->ndims > sp->maxdims)
			sp->maxdims = ms->ndims;
		for (d = 0; d < ms->ndims; d++) {
			if (ms->dims[d].is_rvar) {
				sg->nrv++;
			} else if (sg->npure < MAXARGS &&
				   ms->dims[d].index < fn->nargs) {
				sg->pure[sg->npure] = d;
				sg->arg[sg->npure++] = ms->dims[d].index;
			} else {
				sg->npure = MAXARGS + 1;
			}
			pts *= dim_ext(&ms->dims[d]);
		}
		fn->root_points += pts;
		sg->tiled = !fn->wide && sg->npure > 0 &&
			sg->npure <= MAXARGS && ms->index < 256 &&
			make_names(m, sg);
		if (!sg->tiled)
			sg->npure = 0;
		sg->off = off;
		off += sblk_size(sg->npure);
	}
	sp->size = off;
	if (dim_names(sp) || find_exact(sp) || compile_reads(sp) ||
	    find_dups(sp)) {
		pt_space_free(sp);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	*out = sp;
	return 0;
}

void pt_space_free(struct pt_space *sp)
{
	if (!sp)
		return;
	free(sp->fn);
	free(sp->sg);
	free(sp->groups);
	free(sp->coords);
	free(sp->terms);
	free(sp->readers);
	free(sp->rfirst);
	free(sp->rcount);
	free(sp->adup);
	free(sp->afirst);
	free(sp->dname);
	free(sp);
}

size_t pt_space_state_size(const struct pt_space *sp)
{
	return sp->size;
}

struct pt_space_state *pt_space_state_new(const struct pt_space *sp)
{
	return calloc(1, sp->size);
}

struct pt_space_work *pt_space_work_new(const struct pt_space *sp)
{
	struct pt_space_work *w = calloc(1, sizeof(*w));
	size_t nf = (size_t)sp->nfuncs + 1, ns = (size_t)sp->nstages + 1;
	size_t nd = (size_t)sp->maxdims + 1;
	size_t nl = nd + MAXARGS * MAXSPLIT + 2;
	int i;

	if (!w)
		return NULL;
	w->copies = calloc(ns, sizeof(double));
	w->fcopies = calloc(nf, sizeof(double));
	w->uses = calloc(ns, sizeof(int));
	w->reach = calloc(nf, sizeof(int));
	w->stamp = calloc(nf, sizeof(int));
	w->sstamp = calloc(ns, sizeof(int));
	w->blo = calloc(nf * MAXARGS, sizeof(double));
	w->bhi = calloc(nf * MAXARGS, sizeof(double));
	w->bset = calloc(nf, 1);
	w->incl = calloc(nf, 1);
	w->dlo = calloc(nd, sizeof(double));
	w->dhi = calloc(nd, sizeof(double));
	w->blk = calloc(1, sblk_size(MAXARGS));
	w->child = calloc(1, sp->size);
	w->cr = calloc(1, sizeof(*w->cr));
	w->cs = calloc(MAXARGS * nd, sizeof(*w->cs));
	if (w->cr) {
		/* Composing reads goes one inlined Func deeper a level (at
		 * most 65, and at most every Func), with two form arrays of
		 * at most maxdims forms a level, plus the site's dims. */
		size_t lv = nf < 66 ? nf : 66;

		w->cr->inl = calloc(nf, 1);
		w->cr->fcap = (int)((2 * lv + 1) * nd);
		w->cr->dcap = w->cr->fcap * (int)nd;
		w->cr->fpool = calloc((size_t)w->cr->fcap,
				      sizeof(*w->cr->fpool));
		w->cr->dpool = calloc((size_t)w->cr->dcap, sizeof(double));
	}
	for (i = 0; i < 2; i++)
		w->loops[i] = calloc(nl, sizeof(struct sp_loop));
	if (!w->copies || !w->fcopies || !w->uses || !w->reach || !w->stamp ||
	    !w->sstamp || !w->blo || !w->bhi ||
	    !w->bset || !w->incl || !w->dlo || !w->dhi || !w->blk ||
	    !w->child || !w->loops[0] || !w->loops[1] || !w->cr ||
	    !w->cr->inl || !w->cr->fpool || !w->cr->dpool || !w->cs) {
		pt_space_work_free(w);
		return NULL;
	}
	return w;
}

static void scratch_free(struct pt_space_work *w);

void pt_space_work_free(struct pt_space_work *w)
{
	int i;

	if (!w)
		return;
	free(w->ob[0].v);
	free(w->ob[1].v);
	free(w->tmp.v);
	free(w->ob[0].f);
	free(w->ob[1].f);
	free(w->copies);
	free(w->fcopies);
	free(w->uses);
	free(w->reach);
	free(w->stamp);
	free(w->sstamp);
	free(w->blo);
	free(w->bhi);
	free(w->bset);
	free(w->incl);
	free(w->dlo);
	free(w->dhi);
	free(w->blk);
	free(w->child);
	if (w->cr) {
		free(w->cr->inl);
		free(w->cr->r);
		free(w->cr->coef);
		free(w->cr->fpool);
		free(w->cr->dpool);
		free(w->cr);
	}
	free(w->cs);
	for (i = 0; i < 2; i++)
		free(w->loops[i]);
	scratch_free(w);
	free(w);
}

/* --- loop nests ----------------------------------------------------------- */

/* Extent of pure dim p of stage s in one instance of its Func. */
static double pure_extent(const struct pt_space *sp,
			  const struct pt_space_state *st, int s, int p)
{
	const struct sp_stage *sg = &sp->sg[s];
	struct st_func *fb = fblk(sp, st, sg->func);
	double r = freg(fb)[sg->arg[p]];

	return r >= 1 ? r : 1;
}

/* The nest of stage s with tiling block b (the state's, or a changed
 * copy), outermost first, into loops; fills *ni. */
static void build_nest(const struct pt_space *sp,
		       const struct pt_space_state *st, int s,
		       struct st_stage *b, struct sp_loop *loops,
		       struct ninfo *ni)
{
	const struct sp_stage *sg = &sp->sg[s];
	const struct pt_stage *ms = sg->ms;
	int np = sg->npure, lanes = sp->fn[sg->func].lanes;
	uint8_t plev[MAXARGS][MAXSPLIT], rlev[MAXARGS];
	double rext[MAXARGS];
	int n = 0, p, d, li, k;

	/* Only what is set below is read: the loops of each level, the
	 * pieces of each dim. */
	memset(ni->lend, 0, sizeof(ni->lend));
	memset(ni->lfirst, 0, sizeof(ni->lfirst));
	memset(ni->nsplit, 0, sizeof(ni->nsplit));
	if (!b || !b->nlev || !sg->tiled) {
		for (d = ms->ndims - 1; d >= 0; d--) {
			struct sp_loop *l = &loops[n++];

			memset(l, 0, sizeof(*l));
			l->dim = (int16_t)d;
			l->p = -1;
			for (p = 0; p < np; p++)
				if (sg->pure[p] == d)
					l->p = (int8_t)p;
			l->level = NOLEV;
			l->extent = l->p >= 0 ? pure_extent(sp, st, s, l->p) :
				dim_ext(&ms->dims[d]);
		}
		ni->n = n;
		return;
	}
	for (p = 0; p < np; p++) {
		double prod = 1;
		int m = 0;

		rlev[p] = b->order[0];
		if (b->vdim == p) {
			plev[p][m] = NOLEV;
			ni->pfac[p][m++] = lanes;
			prod = lanes;
		}
		for (li = b->nlev - 1; li >= 0; li--) {
			int lev = b->order[li];
			uint8_t c = *fac(b, np, lev, p);

			if (c == REM) {
				rlev[p] = (uint8_t)lev;
				break;
			}
			if (c && m < MAXSPLIT) {
				plev[p][m] = (uint8_t)lev;
				ni->pfac[p][m++] = (int64_t)1 << c;
				prod *= (double)((int64_t)1 << c);
			}
		}
		ni->nsplit[p] = m;
		rext[p] = ceil_div(pure_extent(sp, st, s, p), prod);
	}
	for (li = 0; li < b->nlev; li++) {
		int lev = b->order[li];

		ni->lfirst[lev] = n;
		for (p = np - 1; p >= 0; p--) {
			struct sp_loop *l;

			if (rlev[p] == lev) {
				l = &loops[n];
				memset(l, 0, sizeof(*l));
				l->nsplit = (uint8_t)ni->nsplit[p];
				l->extent = rext[p];
				ni->rpos[p] = n;
			} else {
				for (k = 0; k < ni->nsplit[p]; k++)
					if (plev[p][k] == lev)
						break;
				if (k == ni->nsplit[p])
					continue;
				l = &loops[n];
				memset(l, 0, sizeof(*l));
				l->nsplit = (uint8_t)(k + 1);
				l->inner = 1;
				l->extent = (double)ni->pfac[p][k];
			}
			l->dim = (int16_t)sg->pure[p];
			l->p = (int8_t)p;
			l->level = (uint8_t)lev;
			l->par = lev == b->par && l->extent >= 2;
			ni->lend[lev] = n++;
		}
		if (lev != b->rvlev)
			continue;
		for (d = ms->ndims - 1; d >= 0; d--) {
			struct sp_loop *l;

			if (!ms->dims[d].is_rvar)
				continue;
			l = &loops[n++];
			memset(l, 0, sizeof(*l));
			l->dim = (int16_t)d;
			l->p = -1;
			l->level = NOLEV;
			l->extent = dim_ext(&ms->dims[d]);
		}
	}
	if (b->vdim >= 0) {
		struct sp_loop *l = &loops[n++];

		memset(l, 0, sizeof(*l));
		l->dim = (int16_t)sg->pure[b->vdim];
		l->p = b->vdim;
		l->level = NOLEV;
		l->nsplit = 1;
		l->inner = 1;
		l->vec = 1;
		l->extent = lanes;
	}
	ni->n = n;
}

/* The name of loop l of stage s (the space's: it lives as long). */
static const char *loop_name(const struct pt_space *sp, int s,
			     const struct sp_loop *l)
{
	const struct sp_stage *sg = &sp->sg[s];

	if (l->p < 0)
		return sp->dname[sg->dfirst + l->dim];
	return sg->name[l->p][l->nsplit][l->inner];
}

/* The position, in the nest ni of Func j's last stage, of the loop Func h
 * (computed at j) is computed at. */
static int site_pos(const struct pt_space *sp, const struct pt_space_state *st,
		    int h, const struct ninfo *ni)
{
	struct st_func *hb = fblk(sp, st, h);

	if (hb->gran == G_SLIDE)
		return ni->rpos[hb->slot];
	return ni->lend[hb->slot];
}

/* If h is computed, directly or through other sites, at a loop of j:
 * the position of that loop (in ni, j's nest); else -1. */
static int nested_pos(const struct pt_space *sp,
		      const struct pt_space_state *st, int h, int j,
		      const struct ninfo *ni)
{
	int steps = 0;

	while (steps++ <= sp->nfuncs) {
		struct st_func *hb = fblk(sp, st, h);

		if (hb->gran != G_AT && hb->gran != G_SLIDE)
			return -1;
		if (hb->site == j)
			return site_pos(sp, st, h, ni);
		h = hb->site;
	}
	return -1;
}

/* The same as an index in j's level order: where h links to j (the level
 * of its site, or of the loop it slides over); -1 if not nested in j. */
static int nested_ord(const struct pt_space *sp,
		      const struct pt_space_state *st, int h, int j)
{
	struct st_stage *b = sblk(sp, st, last_sidx(sp, j));
	int np = sp->sg[last_sidx(sp, j)].npure, steps = 0, li, lev;

	while (steps++ <= sp->nfuncs) {
		struct st_func *hb = fblk(sp, st, h);

		if (hb->gran != G_AT && hb->gran != G_SLIDE)
			return -1;
		if (hb->site != j) {
			h = hb->site;
			continue;
		}
		for (li = 0; li < b->nlev; li++) {
			lev = b->order[li];
			if (hb->gran == G_AT ? lev == hb->slot :
			    *fac(b, np, lev, hb->slot) == REM)
				return li;
		}
		return -1;
	}
	return -1;
}

/* --- uses and inlining ---------------------------------------------------- */

/* Copies of Func f's body in every stage after it, through inlined Funcs
 * (w->copies per stage, w->fcopies per inlined Func); the stages that are
 * not inlined and read f go to w->uses. Every Func after f is decided. */
static void sort_ints(int *v, int n)
{
	int i, j, t;

	for (i = 1; i < n; i++)
		for (j = i, t = v[i]; j > 0 && v[j - 1] > t; j--) {
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static void find_uses(const struct pt_space *sp,
		      const struct pt_space_state *st, struct pt_space_work *w,
		      int f)
{
	int n = 0, i, k, stamp = ++w->now;

	/* f and the inlined Funcs that read it, directly or not. */
	w->reach[n++] = f;
	w->stamp[f] = stamp;
	for (i = 0; i < n; i++) {
		int p = w->reach[i];

		for (k = sp->rfirst[p]; k < sp->rfirst[p] + sp->rcount[p];
		     k++) {
			int g = sp->sg[sp->readers[k].stage].func;

			if (w->stamp[g] != stamp && inlined(sp, st, g)) {
				w->stamp[g] = stamp;
				w->reach[n++] = g;
			}
		}
	}
	sort_ints(w->reach, n);
	for (i = 0; i < n; i++)
		w->fcopies[w->reach[i]] = i ? 0 : 1;
	/* In topological order, so that a Func's copies are complete
	 * before it passes them on. */
	w->nuses = 0;
	for (i = 0; i < n; i++) {
		int p = w->reach[i];

		for (k = sp->rfirst[p]; k < sp->rfirst[p] + sp->rcount[p];
		     k++) {
			const struct sp_reader *r = &sp->readers[k];
			int g = sp->sg[r->stage].func;
			double c = r->count * w->fcopies[p];

			if (w->stamp[g] == stamp) {
				w->fcopies[g] += c;
				continue;
			}
			if (w->sstamp[r->stage] != stamp) {
				w->sstamp[r->stage] = stamp;
				w->copies[r->stage] = 0;
				w->uses[w->nuses++] = r->stage;
			}
			w->copies[r->stage] += c;
		}
	}
	sort_ints(w->uses, w->nuses);
}

/* Points stage s computes in one instance with region reg. */
static double stage_points(const struct pt_space *sp, int s, const float *reg,
			   int use_reg)
{
	const struct sp_stage *sg = &sp->sg[s];
	const struct pt_stage *ms = sg->ms;
	const struct sp_func *fn = &sp->fn[sg->func];
	double pts = 1;
	int d;

	for (d = 0; d < ms->ndims; d++) {
		const struct pt_dim *dim = &ms->dims[d];

		if (use_reg && !dim->is_rvar && dim->index < fn->nargs &&
		    !fn->wide)
			pts *= reg[dim->index] >= 1 ? reg[dim->index] : 1;
		else
			pts *= dim_ext(dim);
	}
	return pts;
}

static double func_points(const struct pt_space *sp, int f, const float *reg)
{
	double pts = 0;
	int s;

	for (s = sp->fn[f].first; s <= sp->fn[f].last; s++)
		pts += stage_points(sp, s, reg, 1);
	return pts;
}

/* Work of a decided, not inlined stage: instances times points. */
static double stage_work(const struct pt_space *sp,
			 const struct pt_space_state *st, int s)
{
	struct st_func *fb = fblk(sp, st, sp->sg[s].func);

	return (double)fb->inst * stage_points(sp, s, freg(fb), 1);
}

static int recompute_ok(const struct pt_space *sp, int f, double work)
{
	const struct sp_func *fn = &sp->fn[f];

	if (!(sp->o.prune & PT_SPACE_PRUNE_RECOMPUTE) || fn->single_load)
		return 1;
	return work <= sp->o.recompute * fn->root_points * (1 + 1e-9);
}

/* May f be inlined (rule 3 and the prunes)? find_uses() ran. */
static int inline_ok(const struct pt_space *sp, const struct pt_space_state *st,
		     struct pt_space_work *w, int f)
{
	const struct sp_func *fn = &sp->fn[f];
	double work = 0;
	int i;

	if (!fn->can_inline || !w->nuses)
		return 0;
	for (i = 0; i < w->nuses; i++) {
		int s = w->uses[i];
		struct st_stage *b = sblk(sp, st, s);
		double c = w->copies[s];

		if (c > MAX_INLINE_COPIES || b->feeding + 1 >
		    MAX_INLINED_FEEDING)
			return 0;
		if ((sp->o.prune & PT_SPACE_PRUNE_INLINE_SIZE) &&
		    b->added + c * fn->ops > INLINE_OPS)
			return 0;
		work += c * stage_work(sp, st, s);
	}
	return recompute_ok(sp, f, work);
}

/* --- regions -------------------------------------------------------------- */

/* Interval of compiled coordinate c when the stage's dims range over
 * [lo, hi]; a non-affine one reads the producer's region (or its clamp),
 * a partial one its terms plus its offsets' range (then its clamp). */
static void coord_iv(const struct pt_space *sp, const struct sp_coord *c,
		     const double *lo, const double *hi, double pmin,
		     double pext, double *a, double *b)
{
	const struct sp_term *t = &sp->terms[c->first];
	double x = c->omin, y = c->omax;
	int i;

	if (!c->affine && !c->partial) {
		x = c->has_min ? c->cmin : pmin;
		y = c->has_max ? c->cmax : pmin + pext - 1;
		*a = x;
		*b = y < x ? x : y;
		return;
	}
	for (i = 0; i < c->nterms; i++, t++) {
		if (t->k >= 0) {
			x += t->k * lo[t->dim];
			y += t->k * hi[t->dim];
		} else {
			x += t->k * hi[t->dim];
			y += t->k * lo[t->dim];
		}
	}
	x = ceil(x - 1e-9);
	y = floor(y + 1e-9);
	if (c->has_min) {
		x = x < c->cmin ? c->cmin : x;
		y = y < c->cmin ? c->cmin : y;
	}
	if (c->has_max) {
		x = x > c->cmax ? c->cmax : x;
		y = y > c->cmax ? c->cmax : y;
	}
	*a = x;
	*b = y < x ? x : y;
}

/* Add what stage s reads (dims over [w->dlo, w->dhi]) of the Funcs in
 * [f, s's Func) marked in w->incl to their boxes. */
static void read_boxes(const struct pt_space *sp, struct pt_space_work *w,
		       int s, int f)
{
	const struct sp_stage *sg = &sp->sg[s];
	int i, k;

	for (i = 0; i < sg->ngroups; i++) {
		const struct sp_group *gr = &sp->groups[sg->first_group + i];
		const struct sp_func *pf;
		double *blo, *bhi;
		int p = gr->producer;

		if (p < f || !w->incl[p])
			continue;
		pf = &sp->fn[p];
		if (pf->wide)
			continue;
		blo = w->blo + (size_t)p * MAXARGS;
		bhi = w->bhi + (size_t)p * MAXARGS;
		for (k = 0; k < pf->nargs; k++) {
			double lo, hi;

			if (gr->whole) {
				lo = pf->rmin[k];
				hi = pf->rmin[k] + pf->rext[k] - 1;
			} else {
				coord_iv(sp, &sp->coords[gr->first + k],
					 w->dlo, w->dhi, pf->rmin[k],
					 pf->rext[k], &lo, &hi);
			}
			if (!w->bset[p] || lo < blo[k])
				blo[k] = lo;
			if (!w->bset[p] || hi > bhi[k])
				bhi[k] = hi;
		}
		w->bset[p] = 1;
	}
}

/* The region of Func f computed in one iteration of loop q of the nest
 * (loops, outermost first) of Func j's last stage, through inlined Funcs
 * and the Funcs computed within j at positions >= qmin of its current
 * nest (cur), or, when cur is NULL, at levels of order index >= qmin.
 * Writes f's region into reg. */
static void region_at(const struct pt_space *sp,
		      const struct pt_space_state *st, struct pt_space_work *w,
		      int f, int j, const struct sp_loop *loops, int n, int q,
		      const struct ninfo *cur, int qmin, float *reg)
{
	const struct sp_func *fn = &sp->fn[f];
	int sj = last_sidx(sp, j);
	const struct pt_stage *ms = sp->sg[sj].ms;
	int h, i, d, k;

	for (h = f; h < j; h++) {
		w->bset[h] = 0;
		w->incl[h] = h == f || inlined(sp, st, h) ||
			(cur ? nested_pos(sp, st, h, j, cur) :
			 nested_ord(sp, st, h, j)) >= qmin;
	}
	for (d = 0; d < ms->ndims; d++)
		w->dhi[d] = 1;
	for (i = q + 1; i < n; i++)
		w->dhi[loops[i].dim] *= loops[i].extent;
	for (d = 0; d < ms->ndims; d++) {
		const struct pt_dim *dim = &ms->dims[d];
		double whole = dim_ext(dim);

		if (!dim->is_rvar && sp->sg[sj].npure) {
			for (k = 0; k < sp->sg[sj].npure; k++)
				if (sp->sg[sj].pure[k] == d)
					whole = pure_extent(sp, st, sj, k);
		}
		if (w->dhi[d] > whole)
			w->dhi[d] = whole;
		w->dlo[d] = (double)dim->min;
		w->dhi[d] += w->dlo[d] - 1;
	}
	read_boxes(sp, w, sj, f);
	for (h = j - 1; h > f; h--) {
		const struct sp_func *hf = &sp->fn[h];
		const double *blo = w->blo + (size_t)h * MAXARGS;
		const double *bhi = w->bhi + (size_t)h * MAXARGS;

		if (!w->bset[h] || !w->incl[h] || hf->wide)
			continue;
		for (i = hf->first; i <= hf->last; i++) {
			const struct pt_stage *hs = sp->sg[i].ms;

			for (d = 0; d < hs->ndims; d++) {
				const struct pt_dim *dim = &hs->dims[d];

				if (!dim->is_rvar && dim->index < hf->nargs) {
					w->dlo[d] = blo[dim->index];
					w->dhi[d] = bhi[dim->index];
				} else {
					w->dlo[d] = (double)dim->min;
					w->dhi[d] = w->dlo[d] +
						dim_ext(dim) - 1;
				}
			}
			read_boxes(sp, w, i, f);
		}
	}
	for (k = 0; k < fn->nargs; k++) {
		double e = w->bset[f] ? w->bhi[(size_t)f * MAXARGS + k] -
			w->blo[(size_t)f * MAXARGS + k] + 1 : fn->rext[k];

		if (e > fn->rext[k])
			e = fn->rext[k];
		reg[k] = (float)(e >= 1 ? e : 1);
	}
}

/* Does stage s read Func f, directly or through inlined Funcs? */
static int reads(const struct pt_space *sp, const struct pt_space_state *st,
		 int s, int f, int depth)
{
	const struct sp_stage *sg = &sp->sg[s];
	int i;

	for (i = 0; i < sg->ngroups; i++) {
		int p = sp->groups[sg->first_group + i].producer;

		if (p < f)
			continue;
		if (p == f)
			return 1;
		if (inlined(sp, st, p) && depth < 64 &&
		    reads(sp, st, sp->fn[p].first, f, depth + 1))
			return 1;
	}
	return 0;
}

/* Does stage s read f, directly or through inlined Funcs, with a stride
 * of two or more along one of the `moving` dims somewhere on the way
 * (rule 4, vector tiles)? */
static int strided(const struct pt_space *sp, const struct pt_space_state *st,
		   int s, int f, uint64_t moving, int depth)
{
	const struct sp_stage *sg = &sp->sg[s];
	int i, k, t, d;

	for (i = 0; i < sg->ngroups; i++) {
		const struct sp_group *gr = &sp->groups[sg->first_group + i];
		const struct pt_stage *ps;
		uint64_t pm = 0, pmov = 0;
		int str = 0, p = gr->producer;

		if (p < f || (p != f && (!inlined(sp, st, p) || depth > 64)))
			continue;
		for (k = 0; k < gr->ncoords; k++) {
			const struct sp_coord *c = &sp->coords[gr->first + k];

			for (t = 0; c->affine && t < c->nterms; t++) {
				const struct sp_term *tm =
					&sp->terms[c->first + t];

				if (tm->dim >= 64 || !((moving >> tm->dim) & 1))
					continue;
				if (tm->k > 1 || tm->k < -1)
					str = 1;
				pm |= UINT64_C(1) << (k & 63);
			}
		}
		if (p == f) {
			if (str)
				return 1;
			continue;
		}
		ps = sp->sg[sp->fn[p].first].ms;
		if (str && reads(sp, st, sp->fn[p].first, f, depth + 1))
			return 1;
		for (d = 0; d < ps->ndims && d < 64; d++)
			if (!ps->dims[d].is_rvar && ps->dims[d].index < 64 &&
			    ((pm >> ps->dims[d].index) & 1))
				pmov |= UINT64_C(1) << d;
		if (pmov && strided(sp, st, sp->fn[p].first, f, pmov,
				    depth + 1))
			return 1;
	}
	return 0;
}

/* Is there a loop of j's vector dim at or outside position q, while j
 * reads f with a stride along it? Then f may not be computed there.
 * *memo caches the second part for one (f, j) (-1: not known yet). */
static int in_strided_tile(const struct pt_space *sp,
			   const struct pt_space_state *st, int f, int j,
			   const struct sp_loop *loops, int q, int *memo)
{
	int sj = last_sidx(sp, j), i, vd;
	struct st_stage *b = sblk(sp, st, sj);

	if (b->vdim < 0 || !b->nlev)
		return 0;
	vd = sp->sg[sj].pure[b->vdim];
	for (i = 0; i <= q; i++)
		if (loops[i].dim == vd)
			break;
	if (i > q || vd >= 64)
		return 0;
	if (*memo < 0)
		*memo = strided(sp, st, sj, f, UINT64_C(1) << vd, 0);
	return *memo;
}

/* Instances of a Func computed at loop q of j's nest. */
static double instances(const struct pt_space *sp,
			const struct pt_space_state *st, int j,
			const struct sp_loop *loops, int q)
{
	double n = fblk(sp, st, j)->inst;
	int i;

	for (i = 0; i <= q; i++)
		n *= loops[i].extent;
	return n;
}

/* Fill a site option's instances and region; 1 when within the bounds. */
static int site_eval(const struct pt_space *sp,
		     const struct pt_space_state *st, struct pt_space_work *w,
		     int f, int j, const struct sp_loop *loops, int n, int q,
		     const struct ninfo *cur, int qmin, struct opt *o)
{
	double inst;

	region_at(sp, st, w, f, j, loops, n, q, cur, qmin, o->reg);
	inst = instances(sp, st, j, loops, q);
	o->inst = (float)inst;
	o->state = recompute_ok(sp, f, inst * func_points(sp, f, o->reg)) ?
		1 : 2;
	return o->state == 1;
}

/* --- rule 6: strided loads at constant addresses -------------------------- */

/* The same analysis as pt_sched_check's (doc/schedule-legality.md, rule
 * 6, strided loads at constant addresses), on a state whose later
 * decisions may still unroll the innermost level of the site's Func and
 * change its tails: the loops of that level count as unrolled, and the
 * tails do not matter (a guard tail's steady state has the size of a
 * round one), so that a site this lets through stays legal whatever
 * comes later.
 *
 * The reads of f by j's last stage (through inlined Funcs) do not depend
 * on the site: they are composed once per (f, j, the Funcs between them
 * that are inlined) into w->cr, and each site only weighs them. A read
 * is, per coordinate of f: affine in j's stage dims (coefficients, nb per
 * coordinate) plus an offset in [lo, hi]; or bad (a clamp, a data-
 * dependent value); and for a fraction, the residue of its floor (-1 when
 * composed through an inlined Func: unknown). */

/* n forms of nb coefficients from the scratch stack, zeroed; NULL when
 * it is full (it holds the deepest composition: see pt_space_work_new).
 * Popped by restoring ftop and dtop. */
static struct pt_strided_form *cforms_push(struct rcache *rc, int n, int nb)
{
	struct pt_strided_form *p = rc->fpool + rc->ftop;
	int i;

	if (n < 1)
		n = 1;
	if (rc->ftop + n > rc->fcap || rc->dtop + n * nb > rc->dcap)
		return NULL;
	for (i = 0; i < n; i++) {
		p[i].bad = 0;
		p[i].lo = p[i].hi = 0;
		p[i].coef = rc->dpool + rc->dtop + i * nb;
	}
	memset(rc->dpool + rc->dtop, 0, (size_t)(n * nb) * sizeof(double));
	rc->ftop += n;
	rc->dtop += n * nb;
	return p;
}

/* Append one read (cf[], from access a at depth 0) to the cache. */
static int cr_add(struct rcache *rc, int n, const struct pt_strided_form *cf,
		  const struct pt_access *a, int depth)
{
	struct crd *e;

	if (rc->n == rc->cap) {
		int cap = rc->cap ? 2 * rc->cap : 16;
		struct crd *r = realloc(rc->r, (size_t)cap * sizeof(*r));
		struct pt_strided_coef *c;

		if (!r)
			return PT_ENOMEM;
		rc->r = r;
		c = realloc(rc->coef, (size_t)cap * MAXARGS *
			    (size_t)rc->cnb * sizeof(*c));
		if (!c)
			return PT_ENOMEM;
		rc->coef = c;
		rc->cap = cap;
	}
	e = &rc->r[rc->n];
	memset(e, 0, sizeof(*e));
	/* The residue of each fraction: one fraction in a coordinate, or
	 * unknown (a little stricter than the check). */
	pt_strided_read_of(n, rc->nb, cf, depth || !a ? NULL : a->coords, 1,
			   e->bad, e->lo, e->hi,
			   rc->coef + (size_t)rc->n * MAXARGS * (size_t)rc->nb);
	rc->n++;
	return 0;
}

/* Compose what stage ms (dims[]) reads of f into the cache. */
static int cr_walk(const struct pt_space *sp, const struct pt_space_state *st,
		   struct rcache *rc, int f, const struct pt_stage *ms,
		   const struct pt_strided_form *dims, int depth)
{
	const struct pt_model *m = sp->m;
	int i, k, d, ret = 0;

	for (i = 0; i < ms->naccesses && !ret; i++) {
		const struct pt_access *a = &ms->accesses[i];
		const struct pt_stage *ps;
		struct pt_strided_form *cf, *pd;
		int p = a->producer, ftop = rc->ftop, dtop = rc->dtop;

		if (a->kind != PT_ACCESS_FUNC || a->is_store || p < f ||
		    p >= ms->func || (p != f && !inlined(sp, st, p)) ||
		    depth > 64 ||
		    sp->adup[sp->afirst[ms - m->stages] + i])
			continue;
		if (a->ncoords != m->funcs[p].nargs) {
			/* No idea what it reads: a read of nothing known. */
			cf = cforms_push(rc, sp->fn[f].nargs, rc->nb);
			if (!cf)
				return PT_ENOMEM;
			for (k = 0; k < sp->fn[f].nargs; k++)
				cf[k].bad = 1;
			ret = cr_add(rc, sp->fn[f].nargs, cf, NULL, depth);
			rc->ftop = ftop;
			rc->dtop = dtop;
			continue;
		}
		cf = cforms_push(rc, a->ncoords, rc->nb);
		if (!cf)
			return PT_ENOMEM;
		for (k = 0; k < a->ncoords; k++)
			pt_strided_form_of(rc->nb, ms, &a->coords[k], dims,
					   &cf[k]);
		if (p == f) {
			ret = cr_add(rc, sp->fn[f].nargs, cf, a, depth);
			rc->ftop = ftop;
			rc->dtop = dtop;
			continue;
		}
		ps = &m->stages[m->funcs[p].first_stage];
		pd = cforms_push(rc, ps->ndims, rc->nb);
		if (!pd)
			return PT_ENOMEM;
		for (d = 0; d < ps->ndims; d++) {
			const struct pt_strided_form *from;

			if (ps->dims[d].is_rvar ||
			    ps->dims[d].index >= a->ncoords) {
				pd[d].bad = 1;
				continue;
			}
			from = &cf[ps->dims[d].index];
			pd[d].bad = from->bad;
			pd[d].lo = from->lo;
			pd[d].hi = from->hi;
			memcpy(pd[d].coef, from->coef,
			       (size_t)rc->nb * sizeof(double));
		}
		ret = cr_walk(sp, st, rc, f, ps, pd, depth + 1);
		rc->ftop = ftop;
		rc->dtop = dtop;
	}
	return ret;
}

/* The reads of f by j's last stage (sj), composed once for the Funcs
 * inlined in st; NULL when out of memory. */
static const struct rcache *cr_get(const struct pt_space *sp,
				   const struct pt_space_state *st,
				   struct pt_space_work *w, int f, int j, int sj)
{
	struct rcache *rc = w->cr;
	const struct pt_stage *ms = sp->sg[sj].ms;
	struct pt_strided_form *dims;
	int i, d, same;

	same = rc->valid && rc->f == f && rc->j == j;
	for (i = f + 1; i < j && same; i++)
		same = rc->inl[i] == (unsigned char)inlined(sp, st, i);
	if (same)
		return rc;
	rc->valid = 0;
	rc->f = f;
	rc->j = j;
	rc->nb = ms->ndims;
	rc->n = 0;
	if (rc->nb > rc->cnb) {  /* the coefficients grow again */
		free(rc->coef);
		rc->coef = NULL;
		rc->cap = 0;
		rc->cnb = rc->nb;
	}
	for (i = f + 1; i < j; i++)
		rc->inl[i] = (unsigned char)inlined(sp, st, i);
	rc->ftop = rc->dtop = 0;
	dims = cforms_push(rc, rc->nb, rc->nb);
	if (!dims)
		return NULL;
	for (d = 0; d < rc->nb; d++)
		dims[d].coef[d] = 1;
	if (cr_walk(sp, st, rc, f, ms, dims, 0))
		return NULL;
	rc->valid = 1;
	return rc;
}

/* Read r of the cache. */
static struct pt_strided_read cr_read(const struct rcache *rc, int r)
{
	struct pt_strided_read x;

	x.bad = rc->r[r].bad;
	x.lo = rc->r[r].lo;
	x.hi = rc->r[r].hi;
	x.coef = rc->coef + (size_t)r * MAXARGS * (size_t)rc->nb;
	return x;
}

/* f's buffer per dim, from the cached reads and the points of j's dims
 * in the instance (span: 0 varies, -1 unknown): konst, elo, ehi as the
 * check finds them. */
static void cr_extents(const struct rcache *rc, int n, const double *span,
		       struct pt_strided_step *cs, unsigned char *konst,
		       double *elo, double *ehi)
{
	struct pt_strided_dim cd[MAXARGS];
	double cdc[MAXARGS * 64];
	int r, k, nb = rc->nb;

	memset(cd, 0, sizeof(cd));
	for (k = 0; k < n; k++)
		cd[k].coef = cdc + (size_t)k * (size_t)nb;
	memset(cs, 0, (size_t)n * (size_t)nb * sizeof(*cs));
	for (r = 0; r < rc->n; r++) {
		struct pt_strided_read x = cr_read(rc, r);

		pt_strided_note(cd, cs, n, nb, span, &x);
	}
	pt_strided_extents(cd, cs, n, nb, span, konst, elo, ehi);
}

/* Can stage s read f, directly or through inlined Funcs, in a way the
 * check could refuse: a read whose coordinates are affine, unclamped (or
 * clamped to one point) and move with none of the `moving` dims, one of
 * which, other than f's first, moves with a `vec` dim, or moves with one
 * by a step other than 1 (nonunit: such a step on the way)? Only such a
 * read can be a strided load at a constant address; the others are
 * dense, gathers, or move. A cheap test on the compiled reads. */
static int cand_read(const struct pt_space *sp,
		     const struct pt_space_state *st, int s, int f,
		     uint64_t vec, uint64_t moving, int nonunit, int depth)
{
	const struct sp_stage *sg = &sp->sg[s];
	int i, k, t, d;

	for (i = 0; i < sg->ngroups; i++) {
		const struct sp_group *gr = &sp->groups[sg->first_group + i];
		const struct pt_stage *ps;
		uint64_t pv = 0, pm = 0, pvec = 0, pmov = 0;
		int nu = nonunit, p = gr->producer, cand = 0, out = 0;

		if (p < f || (p != f && (!inlined(sp, st, p) || depth > 64)))
			continue;
		for (k = 0; k < gr->ncoords; k++) {
			const struct sp_coord *c = &sp->coords[gr->first + k];
			uint64_t bit = UINT64_C(1) << (k & 63);

			if (c->has_min && c->has_max && c->cmin == c->cmax)
				continue;  /* one point */
			if (gr->whole || !c->affine || c->has_min ||
			    c->has_max) {
				pm |= bit;
				out = 1;
				continue;
			}
			for (t = 0; t < c->nterms; t++) {
				const struct sp_term *tm =
					&sp->terms[c->first + t];

				if (tm->dim >= 64) {
					pm |= bit;
					out = 1;
					continue;
				}
				if ((moving >> tm->dim) & 1) {
					pm |= bit;
					out = 1;
				}
				if (!((vec >> tm->dim) & 1))
					continue;
				if (tm->k != 1 && tm->k != -1)
					nu = 1;
				if (k > 0 || nu)
					cand = 1;
				pv |= bit;
			}
		}
		if (p == f) {
			if (cand && !out)
				return 1;
			continue;
		}
		ps = sp->sg[sp->fn[p].first].ms;
		for (d = 0; d < ps->ndims && d < 64; d++) {
			int x = ps->dims[d].index;

			if (ps->dims[d].is_rvar || x >= 64 ||
			    x >= gr->ncoords) {
				pmov |= UINT64_C(1) << d;
				continue;
			}
			if ((pv >> x) & 1)
				pvec |= UINT64_C(1) << d;
			if ((pm >> x) & 1)
				pmov |= UINT64_C(1) << d;
		}
		if (pvec && cand_read(sp, st, sp->fn[p].first, f, pvec, pmov,
				      nu, depth + 1))
			return 1;
	}
	return 0;
}

/* Would f, computed at loop qc of the nest (loops, n, built from block b)
 * of j's last stage and stored at loop qs (-1: root; qs < qc for a
 * sliding window), be read by j at constant addresses with a stride of 2
 * to 4 (the check refuses that)? 1 also when out of memory. */
static int const_strided(const struct pt_space *sp,
			 const struct pt_space_state *st,
			 struct pt_space_work *w, int f, int j,
			 const struct st_stage *b, const struct sp_loop *loops,
			 int n, int qc, int qs)
{
	int sj = last_sidx(sp, j), g = gran(sp, st, j), i, k, r;
	const struct sp_stage *sg = &sp->sg[sj];
	const struct pt_stage *ms = sg->ms;
	int inner, others = qs < qc, nb = ms->ndims;
	int na = sp->fn[f].nargs, vd;
	const struct rcache *rc;
	unsigned char konst[MAXARGS];
	double span[64], elo[MAXARGS], ehi[MAXARGS];
	uint64_t moving = 0;

	if (!sg->tiled || !b->nlev || b->vdim < 0 || nb > 64 ||
	    na > MAXARGS || na < 1)
		return 0;
	vd = sg->pure[b->vdim];
	inner = b->order[b->nlev - 1];
	for (i = qs + 1; i < n; i++) {
		const struct sp_loop *l = &loops[i];

		if (l->vec || (l->p >= 0 && l->inner && l->level == inner) ||
		    (l->p < 0 && l->extent <= 1))
			continue;
		moving |= UINT64_C(1) << l->dim;
	}
	if (((moving >> vd) & 1) ||
	    !cand_read(sp, st, sj, f, UINT64_C(1) << vd, moving, 0, 0))
		return 0;
	for (i = 0; i < w->nuses; i++)
		if (w->uses[i] != sj)
			others = 1;
	/* The points of j's dims in an instance, as the check counts them
	 * (whatever the tail: with a guard tail the steady state, which
	 * Halide's loop partitioning gives a constant size, counts). */
	for (k = 0; k < nb; k++)
		span[k] = 1;
	for (i = qc + 1; i < n; i++) {
		const struct sp_loop *l = &loops[i];
		double *p = &span[l->dim];

		if (*p < 0)
			continue;
		if (l->p < 0) {
			*p = -1;
			continue;
		}
		if (!l->inner) {
			*p = g == G_ROOT ? 0 : -1;
			continue;
		}
		if (*p < 1e15)
			*p *= l->extent;
	}
	rc = cr_get(sp, st, w, f, j, sj);
	if (!rc)
		return 1;
	if (others) {
		for (k = 0; k < na; k++) {
			konst[k] = 1;
			elo[k] = 1;
			ehi[k] = 1e300;
		}
	} else {
		cr_extents(rc, na, span, w->cs, konst, elo, ehi);
	}
	for (r = 0; r < rc->n; r++) {
		struct pt_strided_read x = cr_read(rc, r);

		/* No rounding here: later decisions may change the tails. */
		if (pt_strided_bad(&x, na, nb, vd, moving, konst, elo, ehi, ehi,
				   NULL, NULL))
			return 1;
	}
	return 0;
}

/* --- changing a stage's levels -------------------------------------------- */

/* Split level lev of block b (npure dims) by codes: lev keeps the inner
 * pieces, a new level just outside it gets the rest (and the parallel
 * mark). */
static void split_level(struct st_stage *b, int np, int lev,
			const uint8_t *code)
{
	int nl = b->nlev, li, p;

	for (p = 0; p < np; p++) {
		uint8_t x = *fac(b, np, lev, p), c = code[p];

		if (x == REM) {
			*fac(b, np, nl, p) = REM;
			*fac(b, np, lev, p) = c;
		} else {
			*fac(b, np, nl, p) = (uint8_t)(x - c);
			*fac(b, np, lev, p) = c;
		}
	}
	for (li = 0; b->order[li] != lev; li++)
		;
	memmove(&b->order[li + 1], &b->order[li], (size_t)(nl - li));
	b->order[li] = (uint8_t)nl;
	b->nlev++;
	if (b->par == lev)
		b->par = (uint8_t)nl;
}

/* --- candidate tilings ---------------------------------------------------- */

/* Thin the candidate lists (keeping each one's first and last) until their
 * product is at most max. */
static void coarsen(struct cands *cs, int np, int max)
{
	struct cands full = *cs;
	int step, p, i;

	for (step = 2; step <= NCAND; step++) {
		double prod = 1;

		for (p = 0; p < np; p++)
			prod *= cs->n[p];
		if (prod <= max)
			return;
		for (p = 0; p < np; p++) {
			int n = 0;

			for (i = 0; i < full.n[p]; i++)
				if (i == 0 || i == full.n[p] - 1 ||
				    i % step == 0)
					cs->c[p][n++] = full.c[p][i];
			cs->n[p] = n;
		}
	}
}

static double par_tasks_lo(const struct pt_space *sp)
{
	return (sp->o.prune & PT_SPACE_PRUNE_PARALLEL_TASKS) ?
		(double)sp->cores : 2;
}

static double par_tasks_hi(const struct pt_space *sp)
{
	return (sp->o.prune & PT_SPACE_PRUNE_PARALLEL_TASKS) ?
		16.0 * sp->cores : 1e300;
}

/* --- the options of each decision ----------------------------------------- */

static uint64_t slid_dims(const struct pt_space *sp,
			  const struct pt_space_state *st, int s);

/* The splits of level lev of j's last stage f may sit between. */
static int gen_splits(const struct pt_space *sp,
		      const struct pt_space_state *st, struct optbuf *ob,
		      int j, int lev, const struct ninfo *ni,
		      const struct sp_loop *loops)
{
	int sj = last_sidx(sp, j), np = sp->sg[sj].npure, p, k, ret;
	struct st_stage *b = sblk(sp, st, sj);
	uint64_t slid = slid_dims(sp, st, sj);
	struct fam *fa;
	struct opt *o;

	if (b->nlev >= sp->o.max_levels)
		return 0;
	if ((ret = fam_add(ob, &fa)))
		return ret;
	fa->np = np;
	fa->nrv = 1;
	fa->par = b->par == lev;
	fa->total = 1;
	for (p = 0; p < np; p++) {
		uint8_t x = *fac(b, np, lev, p);
		struct cands *cs = &fa->cs;
		int c = 0;

		fa->x[p] = x;
		cs->n[p] = 0;
		if ((slid >> p) & 1) {
			/* j slides: its slid dims stay whole */
		} else if (x == REM) {
			double r = loops[ni->rpos[p]].extent;

			while (c <= MAXCODE && (double)((int64_t)1 << c) < r)
				cs->c[p][cs->n[p]++] = (uint8_t)c++;
		} else {
			while (c <= x)
				cs->c[p][cs->n[p]++] = (uint8_t)c++;
		}
		if (!cs->n[p])
			cs->c[p][cs->n[p]++] = 0;
	}
	coarsen(&fa->cs, np, sp->o.max_tilings);
	for (p = 0; p < np; p++) {
		uint8_t x = fa->x[p];

		fa->total *= fa->cs.n[p];
		for (k = 0; k < fa->cs.n[p]; k++) {
			uint8_t c = fa->cs.c[p][k];

			fa->tf[p][k] = x == REM ?
				ceil_div(loops[ni->rpos[p]].extent,
					 (double)((int64_t)1 << c)) :
				(double)((int64_t)1 << (x - c));
		}
	}
	if ((ret = optbuf_add(ob, &o)))
		return ret;
	o->kind = K_SPLIT;
	o->func = (int16_t)j;
	o->level = (uint8_t)lev;
	for (o->qmin = 0; b->order[o->qmin] != lev; o->qmin++)
		;
	o->fam = ob->nf - 1;
	return 0;
}

/* Combination k of option entry e as a concrete option in *o (an entry
 * that is no family has one combination, itself); 1 when it is a tiling
 * at all: a split leaves something at the level and moves something out,
 * a parallel tiling splits a dim, an inner level takes a piece and leaves
 * one; and a parallel level keeps its task bounds. */
static int combo(const struct pt_space *sp, const struct optbuf *ob,
		 const struct opt *e, int k, struct opt *o)
{
	const struct fam *fa;
	int p, lok = 0, nok = 0;
	double tasks = 1;

	*o = *e;
	if (e->fam < 0)
		return 1;
	fa = &ob->f[e->fam];
	o->fam = -1;
	if (fa->nrv > 1) {
		o->rv = (uint8_t)(k % fa->nrv);
		k /= fa->nrv;
	}
	for (p = 0; p < fa->np; p++) {
		int i = k % fa->cs.n[p];
		uint8_t c = fa->cs.c[p][i];

		k /= fa->cs.n[p];
		o->code[p] = c;
		tasks *= fa->tf[p][i];
		if (e->kind == K_TILE) {
			lok |= c != REM;
			nok = 1;
		} else {
			lok |= c != 0;
			nok |= fa->x[p] == REM || fa->x[p] > c;
		}
	}
	if (!lok || !nok)
		return 0;
	return !fa->par || (tasks >= par_tasks_lo(sp) &&
			    tasks <= par_tasks_hi(sp));
}

static int combos(const struct optbuf *ob, const struct opt *e)
{
	return e->fam < 0 ? 1 : ob->f[e->fam].total;
}

/* combo()'s answer for the combination whose digits are dig[] (the
 * place of the reduction loops does not change it), with its tests and
 * its tasks product in its order: bit for bit the same answer. */
static int digits_ok(const struct pt_space *sp, const struct fam *fa,
		     int kind, const int *dig)
{
	double tasks = 1;
	int p, lok = 0, nok = kind == K_TILE;

	if (kind == K_TILE) {
		for (p = 0; p < fa->np; p++) {
			lok |= fa->cs.c[p][dig[p]] != REM;
			tasks *= fa->tf[p][dig[p]];
		}
	} else {
		for (p = 0; p < fa->np; p++) {
			uint8_t c = fa->cs.c[p][dig[p]];

			lok |= c != 0;
			nok |= fa->x[p] == REM || fa->x[p] > c;
			tasks *= fa->tf[p][dig[p]];
		}
	}
	if (!lok || !nok)
		return 0;
	return !fa->par || (tasks >= par_tasks_lo(sp) &&
			    tasks <= par_tasks_hi(sp));
}

/* Set bits k .. k + n - 1 of a family's ok[] to `ok`. */
static void ok_set(struct fam *fa, int k, int n, int ok)
{
	for (; n > 0; n--, k++) {
		if (ok)
			fa->ok[k >> 6] |= UINT64_C(1) << (k & 63);
		else
			fa->ok[k >> 6] &= ~(UINT64_C(1) << (k & 63));
	}
}

/* combo()'s answer for combination k of family fa, decoded from k. */
static int fam_ok_at(const struct pt_space *sp, const struct fam *fa,
		     int kind, int k)
{
	int dig[MAXARGS], p;

	k /= fa->nrv;
	for (p = 0; p < fa->np; p++) {
		dig[p] = k % fa->cs.n[p];
		k /= fa->cs.n[p];
	}
	return digits_ok(sp, fa, kind, dig);
}

/* Is every product of fa's task counts, one candidate per dim, exact
 * (whole numbers, the largest product below 2^53)? Then the product
 * taken in any order is the same double. */
static int fam_exact(const struct fam *fa)
{
	const double big = 9007199254740992.0;  /* 2^53 */
	double most = 1;
	int p, k;

	for (p = 0; p < fa->np; p++) {
		double hi = 0;

		for (k = 0; k < fa->cs.n[p]; k++) {
			double t = fa->tf[p][k];

			if (!(t >= 0 && t <= big) || t != (double)(int64_t)t)
				return 0;
			hi = t > hi ? t : hi;
		}
		most *= hi;
	}
	return most <= big;
}

/* Answer the next combinations of fa, from fa->upto to the end of the
 * row of dim 0's candidates it is in (or to FAM_BITS), as digits_ok()
 * would: the other dims' part of the tests and of the task count is
 * worked out once for the row. A family whose task counts are not exact
 * is answered one combination at a time by digits_ok(). */
static void fam_scan_row(const struct pt_space *sp, struct fam *fa,
			 int kind)
{
	double rest = 1, lo = par_tasks_lo(sp), hi = par_tasks_hi(sp);
	int p, lok = 0, nok = kind == K_TILE, d0, n, nrv = fa->nrv;
	uint64_t bits = nrv == 2 ? 3 : 1;

	if (!fa->upto) {
		memset(fa->dig, 0, sizeof(fa->dig));
		fa->exact = fa->np > 0 && nrv <= 2 && fam_exact(fa);
	}
	if (!fa->exact) {
		ok_set(fa, fa->upto, nrv, digits_ok(sp, fa, kind, fa->dig));
		fa->upto += nrv;
		for (p = 0; p < fa->np && ++fa->dig[p] == fa->cs.n[p]; p++)
			fa->dig[p] = 0;
		return;
	}
	for (p = 1; p < fa->np; p++) {
		uint8_t c = fa->cs.c[p][fa->dig[p]];

		rest *= fa->tf[p][fa->dig[p]];
		if (kind == K_TILE) {
			lok |= c != REM;
		} else {
			lok |= c != 0;
			nok |= fa->x[p] == REM || fa->x[p] > c;
		}
	}
	n = fa->cs.n[0] - fa->dig[0];
	if (n > (fa->total - fa->upto) / nrv)
		n = (fa->total - fa->upto) / nrv;
	if (n > (FAM_BITS - fa->upto) / nrv)
		n = (FAM_BITS - fa->upto) / nrv;
	for (d0 = fa->dig[0]; n-- > 0; d0++) {
		uint8_t c = fa->cs.c[0][d0], x = fa->x[0];
		int k = fa->upto, ok = kind == K_TILE ? lok || c != REM :
			(lok || c != 0) && (nok || x == REM || x > c);

		if (ok && fa->par) {
			double tasks = fa->tf[0][d0] * rest;

			ok = tasks >= lo && tasks <= hi;
		}
		/* Each word of answers is begun at its bit 0. */
		if (!(k & 63))
			fa->ok[k >> 6] = 0;
		if (ok)
			fa->ok[k >> 6] |= bits << (k & 63);
		fa->upto += nrv;
	}
	fa->dig[0] = d0;
	for (p = 0; p < fa->np && fa->dig[p] == fa->cs.n[p]; p++) {
		fa->dig[p] = 0;
		if (p + 1 < fa->np)
			fa->dig[p + 1]++;
	}
}

/* The first combination at or after k of option entry e that is a tiling
 * at all (combo()'s answer, without building the option); combos(ob, e)
 * when none is. The answers for a family's first combinations are kept
 * (fa->upto, fa->ok), found in order a row of dim 0's candidates at a
 * time, since most questions go through a family in order. */
static int combo_next(const struct pt_space *sp, struct optbuf *ob,
		      const struct opt *e, int k)
{
	struct fam *fa;

	if (e->fam < 0)
		return k;
	fa = &ob->f[e->fam];
	for (;;) {
		while (k < fa->upto) {
			/* Known answers; the bits from fa->upto on are not
			 * answers yet. */
			uint64_t word = fa->ok[k >> 6] >> (k & 63);
			int next = word ? k + __builtin_ctzll(word) :
				(k | 63) + 1;

			if (word && next < fa->upto)
				return next;
			k = next < fa->upto ? next : fa->upto;
		}
		if (fa->upto >= fa->total || fa->upto >= FAM_BITS)
			break;
		fam_scan_row(sp, fa, e->kind);
	}
	for (k = k > fa->upto ? k : fa->upto; k < fa->total; k++)
		if (fam_ok_at(sp, fa, e->kind, k))
			return k;
	return fa->total;
}

/* Is combination k of option entry e a tiling at all? */
static int combo_ok(const struct pt_space *sp, struct optbuf *ob,
		    const struct opt *e, int k)
{
	const struct fam *fa;

	if (e->fam < 0)
		return 1;
	fa = &ob->f[e->fam];
	if (k < fa->upto)
		return (int)((fa->ok[k >> 6] >> (k & 63)) & 1);
	return fam_ok_at(sp, fa, e->kind, k);
}

/* Is level lev of j's nest host to a sliding window (whose plain loop a
 * split would move)? */
static int level_slides(const struct pt_space *sp,
			const struct pt_space_state *st, int j, int lev,
			const struct ninfo *ni)
{
	int h, q;

	for (h = 0; h < j; h++) {
		struct st_func *hb = fblk(sp, st, h);

		if (hb->gran != G_SLIDE || hb->site != j)
			continue;
		q = ni->rpos[hb->slot];
		if (q >= ni->lfirst[lev] && q <= ni->lend[lev])
			return 1;
	}
	return 0;
}

static int gen_slides(const struct pt_space *sp,
		      const struct pt_space_state *st, struct pt_space_work *w,
		      struct optbuf *ob, int f, int j, const struct ninfo *ni,
		      const struct sp_loop *loops, int *str, int maxpos);

/* Sites for f: level ends of the Funcs whose loops enclose every use.
 * With `found`, only until one is valid: then 1 in *found (and the
 * options in ob are not all of them). */
static int gen_sites(const struct pt_space *sp,
		     const struct pt_space_state *st, struct pt_space_work *w,
		     struct optbuf *ob, int f, int *found)
{
	struct sp_loop *loops = w->loops[0];
	struct ninfo ni;
	int j, i, li, ret, steps = 0;

	j = sp->sg[w->uses[0]].func;
	for (; steps++ <= sp->nfuncs; j = fblk(sp, st, j)->site) {
		int sj = last_sidx(sp, j), ok = 1, maxpos = 1 << 30, str = -1;
		struct st_stage *b = sblk(sp, st, sj);

		if (!sp->sg[sj].tiled || !b->nlev)
			goto next;
		build_nest(sp, st, sj, b, loops, &ni);
		for (i = 0; i < w->nuses && ok; i++) {
			int s = w->uses[i], u = sp->sg[s].func, q;

			if (u == j) {
				ok = s == sj;
				continue;
			}
			q = nested_pos(sp, st, u, j, &ni);
			if (q < 0)
				ok = 0;
			else if (q < maxpos)
				maxpos = q;
		}
		if (!ok)
			goto next;
		for (li = 0; li < b->nlev; li++) {
			int lev = b->order[li], q = ni.lend[lev];
			struct opt *o;

			if (q > maxpos)
				break;
			if (!in_strided_tile(sp, st, f, j, loops, q, &str) &&
			    !const_strided(sp, st, w, f, j, b, loops, ni.n, q,
					   q)) {
				if ((ret = optbuf_add(ob, &o)))
					return ret;
				o->kind = K_AT;
				o->func = (int16_t)j;
				o->level = (uint8_t)lev;
				if (!site_eval(sp, st, w, f, j, loops, ni.n, q,
					       &ni, q, o))
					ob->n--;
				else if (found) {
					*found = 1;
					return 0;
				}
			}
			if (found)
				continue;
			if (!level_slides(sp, st, j, lev, &ni) &&
			    (ret = gen_splits(sp, st, ob, j, lev, &ni, loops)))
				return ret;
		}
		if (sp->o.sliding && !found &&
		    (ret = gen_slides(sp, st, w, ob, f, j, &ni, loops, &str,
				      maxpos)))
			return ret;
next:
		if (gran(sp, st, j) != G_AT && gran(sp, st, j) != G_SLIDE)
			break;
	}
	return 0;
}

/* The coordinates of f that move with stage dim `dim` of j's last stage
 * (through inlined Funcs); -1 when a read on the way is not a plain
 * stencil (coefficients 0 or 1), which Halide 14 slides wrongly. */
static int unit_reads(const struct pt_space *sp,
		      const struct pt_space_state *st,
		      const struct pt_stage *ms, int f, uint64_t moving,
		      uint64_t *slid, int depth)
{
	int i, k, d, r, any = 0;

	for (i = 0; i < ms->naccesses; i++) {
		const struct pt_access *a = &ms->accesses[i];
		const struct pt_stage *ps;
		uint64_t cm = 0, pm = 0;
		int unit = 1, p = a->producer;

		if (a->kind != PT_ACCESS_FUNC || a->is_store || p < f ||
		    p >= ms->func)
			continue;
		if (p != f && (!inlined(sp, st, p) || depth > 64))
			continue;
		for (k = 0; k < a->ncoords; k++) {
			const struct pt_coord *c = &a->coords[k];

			if (!c->affine || !c->coef) {
				unit = 0;
				continue;
			}
			for (d = 0; d < ms->ndims; d++) {
				if (c->coef[d].den != 1 ||
				    (c->coef[d].num != 0 &&
				     c->coef[d].num != 1)) {
					unit = 0;
					break;
				}
				if (c->coef[d].num && d < 64 &&
				    ((moving >> d) & 1))
					cm |= UINT64_C(1) << (k & 63);
			}
		}
		if (p == f) {
			if (!unit)
				return -1;
			*slid |= cm;
			any = 1;
			continue;
		}
		ps = sp->sg[sp->fn[p].first].ms;
		for (d = 0; d < ps->ndims && d < 64; d++)
			if (!ps->dims[d].is_rvar && ps->dims[d].index < 64 &&
			    ((cm >> ps->dims[d].index) & 1))
				pm |= UINT64_C(1) << d;
		r = unit_reads(sp, st, ps, f, pm, slid, depth + 1);
		if (r < 0 || (r > 0 && !unit))
			return -1;
		any |= r;
	}
	return any;
}

/* Sliding windows of f in j (rule 5): computed at the plain loop of pure
 * dim p of j's last stage, stored just outside it (or at root). */
static int gen_slides(const struct pt_space *sp,
		      const struct pt_space_state *st, struct pt_space_work *w,
		      struct optbuf *ob, int f, int j, const struct ninfo *ni,
		      const struct sp_loop *loops, int *str, int maxpos)
{
	int sj = last_sidx(sp, j), np = sp->sg[sj].npure, p, h, ret, i;

	if (sp->fn[f].nstages != 1 || sp->fn[f].wide)
		return 0;
	for (i = 0; i < w->nuses; i++)
		if (w->uses[i] != sj)
			return 0;
	/* Neither j nor a Func it is computed in slides. */
	for (h = j, i = 0; i <= sp->nfuncs; i++) {
		struct st_func *hb = fblk(sp, st, h);

		if (hb->gran == G_SLIDE)
			return 0;
		if (hb->gran != G_AT)
			break;
		h = hb->site;
	}
	for (p = 0; p < np; p++) {
		int q = ni->rpos[p], d = sp->sg[sj].pure[p], k, nslid = 0;
		uint64_t slid = 0;
		struct opt *o;

		/* A plain loop: never split, serial; stored at a pure loop
		 * (never inside a reduction loop) or at root. */
		if (ni->nsplit[p] || loops[q].par || q > maxpos ||
		    (q > 0 && loops[q - 1].p < 0))
			continue;
		if (q == 0 ? gran(sp, st, j) != G_ROOT : 0)
			continue;
		if (d >= 64 || unit_reads(sp, st, sp->sg[sj].ms, f,
					  UINT64_C(1) << d, &slid, 0) <= 0)
			continue;
		for (k = 0; k < sp->fn[f].nargs; k++)
			nslid += (int)((slid >> k) & 1);
		if ((sp->o.prune & PT_SPACE_PRUNE_SLIDE_ONE_DIM) &&
		    nslid != 1)
			continue;
		if (in_strided_tile(sp, st, f, j, loops, q, str) ||
		    const_strided(sp, st, w, f, j, sblk(sp, st, sj), loops,
				  ni->n, q, q - 1))
			continue;
		if ((ret = optbuf_add(ob, &o)))
			return ret;
		o->kind = K_SLIDE;
		o->func = (int16_t)j;
		o->level = (uint8_t)p;
		/* Each point once per store instance: judge the recompute
		 * as if computed at the store site. */
		if (q == 0) {
			for (k = 0; k < sp->fn[f].nargs; k++)
				o->reg[k] = (float)sp->fn[f].rext[k];
			o->inst = fblk(sp, st, j)->inst;
			o->state = recompute_ok(sp, f, o->inst *
				func_points(sp, f, o->reg)) ? 1 : 2;
		} else {
			site_eval(sp, st, w, f, j, loops, ni->n, q - 1, ni,
				  q, o);
		}
		if (o->state != 1) {
			ob->n--;
			continue;
		}
		/* The region and instances of one computation. */
		region_at(sp, st, w, f, j, loops, ni->n, q, ni, q, o->reg);
		o->inst = (float)instances(sp, st, j, loops, q);
	}
	return 0;
}

static int gen_gran(const struct pt_space *sp, const struct pt_space_state *st,
		    struct pt_space_work *w, struct optbuf *ob, int f)
{
	const struct sp_func *fn = &sp->fn[f];
	struct opt *o;
	int ret;

	if (fn->is_output) {
		w->nuses = 0;
	} else {
		find_uses(sp, st, w, f);
		if (inline_ok(sp, st, w, f)) {
			if ((ret = optbuf_add(ob, &o)))
				return ret;
			o->kind = K_INLINE;
			o->state = 1;
		}
	}
	if ((ret = optbuf_add(ob, &o)))
		return ret;
	o->kind = K_ROOT;
	o->state = 1;
	if (fn->is_output || !w->nuses || fn->wide)
		return 0;
	return gen_sites(sp, st, w, ob, f, NULL);
}

/* Pure dims of stage s that a sliding Func may not split (its slid
 * coordinates). */
static uint64_t slid_dims(const struct pt_space *sp,
			  const struct pt_space_state *st, int s)
{
	int f = sp->sg[s].func, j, sj, p;
	struct st_func *fb = fblk(sp, st, f);
	uint64_t slid = 0, mask = 0;

	if (fb->gran != G_SLIDE)
		return 0;
	j = fb->site;
	sj = last_sidx(sp, j);
	unit_reads(sp, st, sp->sg[sj].ms, f,
		   UINT64_C(1) << sp->sg[sj].pure[fb->slot], &slid, 0);
	for (p = 0; p < sp->sg[s].npure; p++)
		if ((slid >> sp->sg[s].arg[p]) & 1)
			mask |= UINT64_C(1) << p;
	return mask;
}

static int gen_tile(const struct pt_space *sp, const struct pt_space_state *st,
		    struct optbuf *ob, int s)
{
	const struct sp_stage *sg = &sp->sg[s];
	const struct sp_func *fn = &sp->fn[sg->func];
	int g = gran(sp, st, sg->func), np = sg->npure, lanes = fn->lanes;
	int vd, p, k, ret, nvd = 0, vds[MAXARGS + 1];
	uint64_t slid = slid_dims(sp, st, s);
	int par_ok = g != G_SLIDE && sp->o.max_levels >= 2 && (g == G_ROOT ||
		!(sp->o.prune & PT_SPACE_PRUNE_PARALLEL_OUTER));
	double R[MAXARGS];

	for (p = 0; p < np; p++) {
		R[p] = pure_extent(sp, st, s, p);
		if (R[p] >= lanes && lanes >= 2 && !((slid >> p) & 1) &&
		    (!nvd || !(sp->o.prune & PT_SPACE_PRUNE_VECTOR_DIM)))
			vds[nvd++] = p;
	}
	if (!nvd)
		vds[nvd++] = -1;
	for (vd = 0; vd < nvd; vd++) {
		struct opt *o;
		struct fam *fa;
		int any = 0;

		if (par_ok) {
			if ((ret = fam_add(ob, &fa)))
				return ret;
			fa->np = np;
			fa->nrv = 1;
			fa->par = 1;
			fa->total = 1;
			for (p = 0; p < np; p++) {
				double base = p == vds[vd] ? lanes : 1;
				struct cands *cs = &fa->cs;
				int c = 0;

				cs->n[p] = 0;
				while (!((slid >> p) & 1) && c <= MAXCODE &&
				       base * (double)((int64_t)1 << c) < R[p])
					cs->c[p][cs->n[p]++] = (uint8_t)c++;
				cs->c[p][cs->n[p]++] = REM;
			}
			coarsen(&fa->cs, np, sp->o.max_tilings);
			for (p = 0; p < np; p++) {
				fa->total *= fa->cs.n[p];
				for (k = 0; k < fa->cs.n[p]; k++)
					fa->tf[p][k] = fa->cs.c[p][k] == REM ?
						1 : ceil_div(R[p],
						(p == vds[vd] ? lanes : 1) *
						(double)((int64_t)1 <<
							 fa->cs.c[p][k]));
			}
			if ((ret = optbuf_add(ob, &o)))
				return ret;
			o->kind = K_TILE;
			o->state = 1;
			o->vdim = (int8_t)vds[vd];
			o->fam = ob->nf - 1;
			any = combo_next(sp, ob, o, 0) < fa->total;
			if (!any)
				ob->n--;
		}
		/* Serial: when nothing parallel qualifies (or the task
		 * bounds are off). */
		if (any && (sp->o.prune & PT_SPACE_PRUNE_PARALLEL_TASKS))
			continue;
		if ((ret = optbuf_add(ob, &o)))
			return ret;
		o->kind = K_TILE;
		o->state = 1;
		o->vdim = (int8_t)vds[vd];
		for (p = 0; p < np; p++)
			o->code[p] = REM;
	}
	return 0;
}

static int gen_inner(const struct pt_space *sp, const struct pt_space_state *st,
		     struct optbuf *ob, int s)
{
	const struct sp_stage *sg = &sp->sg[s];
	struct st_stage *b = sblk(sp, st, s);
	int np = sg->npure, x = b->order[b->nlev - 1], p, ret, lanes;
	uint64_t slid = slid_dims(sp, st, s);
	struct fam *fa;
	struct opt *o;

	if ((ret = optbuf_add(ob, &o)))
		return ret;
	o->kind = K_NONE;
	o->state = 1;
	if (b->nlev >= sp->o.max_levels)
		return 0;
	if ((ret = fam_add(ob, &fa)))
		return ret;
	lanes = sp->fn[sg->func].lanes;
	fa->np = np;
	fa->nrv = sg->nrv ? 2 : 1;
	fa->par = 0;
	fa->total = fa->nrv;
	for (p = 0; p < np; p++) {
		uint8_t f = *fac(b, np, x, p);
		struct cands *cs = &fa->cs;
		int c = 0;

		fa->x[p] = f;
		cs->n[p] = 0;
		if ((slid >> p) & 1) {
			cs->c[p][cs->n[p]++] = 0;
		} else if (f == REM) {
			/* Only the vector loop is inside the innermost
			 * level. */
			double r = ceil_div(pure_extent(sp, st, s, p),
					    b->vdim == p ? lanes : 1);

			while (c <= MAXCODE &&
			       2.0 * (double)((int64_t)1 << c) <= r)
				cs->c[p][cs->n[p]++] = (uint8_t)c++;
		} else {
			while (c <= f)
				cs->c[p][cs->n[p]++] = (uint8_t)c++;
		}
		if (!cs->n[p])
			cs->c[p][cs->n[p]++] = 0;
	}
	coarsen(&fa->cs, np, sp->o.max_tilings);
	for (p = 0; p < np; p++) {
		fa->total *= fa->cs.n[p];
		memset(fa->tf[p], 0, sizeof(fa->tf[p]));
	}
	if ((ret = optbuf_add(ob, &o)))
		return ret;
	o->kind = K_INNER;
	o->state = 1;
	o->fam = ob->nf - 1;
	return 0;
}

/* The options of the decision st waits for, grouped by kind. */
static int gen(const struct pt_space *sp, const struct pt_space_state *st,
	       struct pt_space_work *w, struct optbuf *ob)
{
	struct st_hdr *h = hdr(st);
	int ret, i, k, n[NKINDS], at[NKINDS];
	struct opt *v;

	ob->n = 0;
	ob->nf = 0;
	if (h->func < 0)
		return PT_EINVAL;
	switch (h->what) {
	case PT_SPACE_GRAN:
		ret = gen_gran(sp, st, w, ob, h->func);
		break;
	case PT_SPACE_TILE:
		ret = gen_tile(sp, st, ob, sp->fn[h->func].first + h->stage);
		break;
	default:
		ret = gen_inner(sp, st, ob, sp->fn[h->func].first + h->stage);
	}
	if (ret || ob->n < 2)
		return ret;
	/* A stable sort by kind. */
	memset(n, 0, sizeof(n));
	for (i = 0; i < ob->n; i++)
		n[ob->v[i].kind]++;
	for (k = 0, i = 0; k < NKINDS; k++) {
		at[k] = i;
		i += n[k];
	}
	if (w->tmp.cap < ob->n) {
		v = realloc(w->tmp.v, (size_t)ob->n * sizeof(*v));
		if (!v)
			return PT_ENOMEM;
		w->tmp.v = v;
		w->tmp.cap = ob->n;
	}
	v = w->tmp.v;
	for (i = 0; i < ob->n; i++)
		v[at[ob->v[i].kind]++] = ob->v[i];
	memcpy(ob->v, v, (size_t)ob->n * sizeof(*v));
	return 0;
}

/* Test an option not tested yet (a site splitting a level); 1 if valid. */
static int valid(const struct pt_space *sp, const struct pt_space_state *st,
		 struct pt_space_work *w, struct opt *o)
{
	int f = hdr(st)->func, j, sj, np, q, str = -1;
	struct st_stage *b;
	struct ninfo ni;

	if (o->state)
		return o->state == 1;
	/* K_SPLIT */
	j = o->func;
	sj = last_sidx(sp, j);
	np = sp->sg[sj].npure;
	b = sblk(sp, st, sj);
	memcpy(w->blk, b, sblk_size(np));
	split_level((struct st_stage *)(void *)w->blk, np, o->level, o->code);
	build_nest(sp, st, sj, (struct st_stage *)(void *)w->blk, w->loops[1],
		   &ni);
	q = ni.lend[b->nlev];
	if (in_strided_tile(sp, st, f, j, w->loops[1], q, &str) ||
	    const_strided(sp, st, w, f, j,
			  (const struct st_stage *)(const void *)w->blk,
			  w->loops[1], ni.n, q, q)) {
		o->state = 2;
		return 0;
	}
	/* Everything at the split level or inside it stays inside. */
	return site_eval(sp, st, w, f, j, w->loops[1], ni.n, q, NULL, o->qmin,
			 o);
}

/* --- taking a decision ---------------------------------------------------- */

static int first_tiled(const struct pt_space *sp, int f, int from)
{
	int s;

	for (s = from; s < sp->fn[f].nstages; s++)
		if (sp->sg[sp->fn[f].first + s].tiled)
			return s;
	return -1;
}

/* Move the header to the decision after the one just taken. */
static void advance(const struct pt_space *sp, struct pt_space_state *st)
{
	struct st_hdr *h = hdr(st);
	int f = h->func, s = -1;

	if (h->what == PT_SPACE_GRAN) {
		if (!inlined(sp, st, f))
			s = first_tiled(sp, f, 0);
	} else if (h->what == PT_SPACE_TILE) {
		h->what = PT_SPACE_INNER;
		return;
	} else {
		s = first_tiled(sp, f, h->stage + 1);
	}
	if (s >= 0) {
		h->what = PT_SPACE_TILE;
		h->stage = (uint8_t)s;
		return;
	}
	h->func = (int16_t)(f - 1);
	h->what = PT_SPACE_GRAN;
	h->stage = 0;
	if (h->func < 0)
		h->func = -1;
}

static void set_tile(struct st_stage *b, int np, const struct opt *o)
{
	int p, any_par = 0, any_t = 0;

	memset(fac(b, np, 0, 0), 0, (size_t)MAXLEV * (size_t)np);
	b->vdim = o->vdim;
	for (p = 0; p < np; p++) {
		if (o->code[p] == REM) {
			*fac(b, np, 1, p) = REM;
			any_t = 1;
		} else {
			*fac(b, np, 0, p) = REM;
			*fac(b, np, 1, p) = o->code[p];
			any_par = 1;
			any_t |= o->code[p] != 0;
		}
	}
	if (!any_par) {
		/* One serial level. */
		for (p = 0; p < np; p++)
			*fac(b, np, 0, p) = REM;
		memset(fac(b, np, 1, 0), 0, (size_t)np);
		b->nlev = 1;
		b->par = NOLEV;
		b->rvlev = 0;
	} else if (!any_t) {
		b->nlev = 1;
		b->par = 0;
		b->rvlev = 0;
		memset(fac(b, np, 1, 0), 0, (size_t)np);
	} else {
		b->nlev = 2;
		b->par = 0;
		b->rvlev = 1;
	}
	b->order[0] = 0;
	b->order[1] = 1;
	b->done |= 1;
}

static void set_inner(struct st_stage *b, int np, const struct opt *o)
{
	int x = b->order[b->nlev - 1], nl = b->nlev, p;

	for (p = 0; p < np; p++) {
		uint8_t f = *fac(b, np, x, p), c = o->code[p];

		*fac(b, np, nl, p) = c;
		if (f != REM)
			*fac(b, np, x, p) = (uint8_t)(f - c);
	}
	b->order[nl] = (uint8_t)nl;
	b->nlev++;
	b->rvlev = (uint8_t)(o->rv ? x : nl);
}

static void set_inline(const struct pt_space *sp, struct pt_space_state *st,
		       struct pt_space_work *w, int f)
{
	int i;

	find_uses(sp, st, w, f);
	for (i = 0; i < w->nuses; i++) {
		struct st_stage *b = sblk(sp, st, w->uses[i]);

		b->feeding++;
		b->added += (float)(w->copies[w->uses[i]] * sp->fn[f].ops);
	}
	fblk(sp, st, f)->gran = G_INLINE;
}

/* Apply option o to st (which waits for o's decision) and advance. */
static void apply_one(const struct pt_space *sp, struct pt_space_state *st,
		      struct pt_space_work *w, const struct opt *o)
{
	struct st_hdr *h = hdr(st);
	int f = h->func, k, s;
	struct st_func *fb = fblk(sp, st, f);

	switch (o->kind) {
	case K_INLINE:
		set_inline(sp, st, w, f);
		break;
	case K_ROOT:
		fb->gran = G_ROOT;
		fb->inst = 1;
		for (k = 0; k < sp->fn[f].nargs && !sp->fn[f].wide; k++)
			freg(fb)[k] = (float)sp->fn[f].rext[k];
		break;
	case K_SPLIT:
		s = last_sidx(sp, o->func);
		split_level(sblk(sp, st, s), sp->sg[s].npure, o->level,
			    o->code);
		/* fall through */
	case K_AT:
	case K_SLIDE:
		fb->gran = o->kind == K_SLIDE ? G_SLIDE : G_AT;
		fb->site = o->func;
		fb->slot = o->kind == K_SPLIT ?
			(uint8_t)(sblk(sp, st, last_sidx(sp, o->func))->nlev -
				  1) : o->level;
		fb->inst = o->inst;
		for (k = 0; k < sp->fn[f].nargs; k++)
			freg(fb)[k] = o->reg[k];
		break;
	case K_TILE:
		s = sp->fn[f].first + h->stage;
		set_tile(sblk(sp, st, s), sp->sg[s].npure, o);
		break;
	case K_NONE:
		sblk(sp, st, sp->fn[f].first + h->stage)->done |= 2;
		break;
	case K_INNER:
		s = sp->fn[f].first + h->stage;
		set_inner(sblk(sp, st, s), sp->sg[s].npure, o);
		sblk(sp, st, s)->done |= 2;
		break;
	}
	advance(sp, st);
}

/* Up to `most` valid options, testing what needs testing; the first one
 * in *first. */
static int count_valid(const struct pt_space *sp,
		       const struct pt_space_state *st,
		       struct pt_space_work *w, struct optbuf *ob, int most,
		       struct opt *first)
{
	int i, k, n = 0;
	struct opt o;

	for (i = 0; i < ob->n && n < most; i++) {
		struct opt *e = &ob->v[i];

		if (e->fam < 0) {
			if (valid(sp, st, w, e) && !n++)
				*first = *e;
			continue;
		}
		for (k = combo_next(sp, ob, e, 0); k < combos(ob, e) &&
		     n < most; k = combo_next(sp, ob, e, k + 1))
			if (combo(sp, ob, e, k, &o) && valid(sp, st, w, &o) &&
			    !n++)
				*first = o;
	}
	return n;
}

/* Does the next decision, a granularity, have two valid options, told
 * without generating them all: at root (always valid) and inlined
 * (valid whenever allowed) or the first valid site gen_sites() finds?
 * Leaves w->ob[1] with some options. */
static int two_grans(const struct pt_space *sp,
		     const struct pt_space_state *st, struct pt_space_work *w)
{
	const struct st_hdr *h = hdr(st);
	const struct sp_func *fn = &sp->fn[h->func];
	int found = 0;

	if (h->what != PT_SPACE_GRAN || fn->is_output)
		return 0;
	find_uses(sp, st, w, h->func);
	if (inline_ok(sp, st, w, h->func))
		return 1;
	if (!w->nuses || fn->wide)
		return 0;
	w->ob[1].n = 0;
	w->ob[1].nf = 0;
	return !gen_sites(sp, st, w, &w->ob[1], h->func, &found) && found;
}

/* Take the decisions that have a single option; then w->ob[1] holds the
 * options of the next decision, unless `lazy` and two_grans() told it
 * has more than one without them. */
static int settle(const struct pt_space *sp, struct pt_space_state *st,
		  struct pt_space_work *w, int lazy)
{
	struct opt first;
	int ret;

	while (hdr(st)->func >= 0) {
		struct optbuf *ob = &w->ob[1];

		if (lazy && two_grans(sp, st, w))
			break;
		if ((ret = gen(sp, st, w, ob)))
			return ret;
		if (count_valid(sp, st, w, ob, 2, &first) != 1)
			break;
		apply_one(sp, st, w, &first);
	}
	return 0;
}

/* Take option o (a copy: settle() rewrites the option buffers); then
 * w->ob[1] holds the options of the next decision (not always with
 * `lazy`: settle()). */
static int take(const struct pt_space *sp, struct pt_space_state *st,
		struct pt_space_work *w, struct opt o, int lazy)
{
	apply_one(sp, st, w, &o);
	hdr(st)->depth++;
	return settle(sp, st, w, lazy);
}

/* --- the public walk ------------------------------------------------------ */

int pt_space_root(const struct pt_space *sp, struct pt_space_work *w,
		  struct pt_space_state *st)
{
	struct st_hdr *h;
	int f;

	memset(st, 0, sp->size);
	h = hdr(st);
	for (f = 0; f < sp->nfuncs; f++) {
		struct st_func *fb = fblk(sp, st, f);
		int k;

		fb->inst = 1;
		for (k = 0; k < sp->fn[f].nargs && !sp->fn[f].wide; k++)
			freg(fb)[k] = (float)sp->fn[f].rext[k];
	}
	for (f = 0; f < sp->nstages; f++)
		sblk(sp, st, f)->vdim = -1;
	h->func = (int16_t)(sp->nfuncs - 1);
	h->what = PT_SPACE_GRAN;
	if (sp->nfuncs <= 0) {
		h->func = -1;
		return 0;
	}
	return settle(sp, st, w, 0);
}

int pt_space_complete(const struct pt_space *sp,
		      const struct pt_space_state *st)
{
	(void)sp;
	return hdr(st)->func < 0;
}

int pt_space_depth(const struct pt_space *sp, const struct pt_space_state *st)
{
	(void)sp;
	return hdr(st)->depth;
}

int pt_space_next(const struct pt_space *sp, const struct pt_space_state *st,
		  int *func, int *stage, int *what)
{
	struct st_hdr *h = hdr(st);

	(void)sp;
	if (h->func < 0)
		return PT_EINVAL;
	if (func)
		*func = h->func;
	if (stage)
		*stage = h->what == PT_SPACE_GRAN ? 0 : h->stage;
	if (what)
		*what = h->what;
	return 0;
}

int pt_space_children(const struct pt_space *sp,
		      const struct pt_space_state *st,
		      struct pt_space_work *w, pt_space_child_fn fn, void *arg)
{
	struct optbuf *ob = &w->ob[0];
	int ret, i, n = 0;

	if (hdr(st)->func < 0)
		return PT_EINVAL;
	if ((ret = gen(sp, st, w, ob)))
		return ret;
	for (i = 0; i < ob->n; i++) {
		struct opt *e = &ob->v[i], o;
		int k;

		for (k = combo_next(sp, ob, e, 0); k < combos(ob, e);
		     k = combo_next(sp, ob, e, k + 1)) {
			if (!combo(sp, ob, e, k, &o) || !valid(sp, st, w, &o))
				continue;
			n++;
			if (!fn)
				continue;
			memcpy(w->child, st, sp->size);
			if ((ret = take(sp, w->child, w, o, 1)))
				return ret;
			if ((ret = fn(arg, w->child)))
				return ret;
		}
	}
	return n;
}

/* Pick a valid option of the options in [a, b) (one kind, families
 * counted by their combinations) uniformly into *out: draws tested one
 * at a time, and after RANDOM_TRIES misses all of them. -1 if none is
 * valid. */
static int pick_in_kind(const struct pt_space *sp,
			const struct pt_space_state *st,
			struct pt_space_work *w, struct optbuf *ob, int a,
			int b, uint64_t *rng, struct opt *out)
{
	int t, i, k, n = 0, total = 0;

	for (i = a; i < b; i++)
		total += combos(ob, &ob->v[i]);
	for (t = 0; t < RANDOM_TRIES; t++) {
		k = below(rng, total);
		for (i = a; k >= combos(ob, &ob->v[i]); i++)
			k -= combos(ob, &ob->v[i]);
		if (combo_ok(sp, ob, &ob->v[i], k) &&
		    combo(sp, ob, &ob->v[i], k, out) &&
		    valid(sp, st, w, out))
			return 0;
	}
	/* The valid ones, kept in w->tmp. */
	w->tmp.n = 0;
	for (i = a; i < b; i++)
		for (k = combo_next(sp, ob, &ob->v[i], 0);
		     k < combos(ob, &ob->v[i]);
		     k = combo_next(sp, ob, &ob->v[i], k + 1)) {
			struct opt o, *v;

			if (!combo(sp, ob, &ob->v[i], k, &o) ||
			    !valid(sp, st, w, &o))
				continue;
			if (optbuf_add(&w->tmp, &v))
				return -1;
			*v = o;
			n++;
		}
	if (!n)
		return -1;
	*out = w->tmp.v[below(rng, n)];
	return 0;
}

/* A random valid option of ob (the options of st's decision) into *out:
 * a kind uniformly among those with a valid option, then an option of
 * it. -1 if none (which cannot happen: root is always valid). */
static int pick(const struct pt_space *sp, const struct pt_space_state *st,
		struct pt_space_work *w, struct optbuf *ob, uint64_t *rng,
		struct opt *out)
{
	int i, k, nk, kinds[NKINDS], start[NKINDS + 1];

	memset(start, 0, sizeof(start));
	for (i = 0; i < ob->n; i++)
		start[ob->v[i].kind + 1]++;
	for (k = 0; k < NKINDS; k++)
		start[k + 1] += start[k];
	nk = 0;
	for (k = 0; k < NKINDS; k++)
		if (start[k + 1] > start[k])
			kinds[nk++] = k;
	while (nk > 0) {
		i = below(rng, nk);
		k = kinds[i];
		if (!pick_in_kind(sp, st, w, ob, start[k], start[k + 1], rng,
				  out))
			return 0;
		kinds[i] = kinds[--nk];
	}
	return -1;
}

int pt_space_random_child(const struct pt_space *sp,
			  const struct pt_space_state *st,
			  struct pt_space_work *w, uint64_t *rng,
			  struct pt_space_state *child)
{
	struct optbuf *ob = &w->ob[0];
	struct opt o;
	int ret;

	if (hdr(st)->func < 0)
		return PT_EINVAL;
	if ((ret = gen(sp, st, w, ob)))
		return ret;
	if (pick(sp, st, w, ob, rng, &o))
		return PT_EINVAL;
	if (child != st)
		memcpy(child, st, sp->size);
	return take(sp, child, w, o, 0);
}

int pt_space_random_complete(const struct pt_space *sp,
			     const struct pt_space_state *st,
			     struct pt_space_work *w, uint64_t *rng,
			     struct pt_space_state *out)
{
	struct opt o;
	int ret;

	if (hdr(st)->func < 0) {
		if (out != st)
			memcpy(out, st, sp->size);
		return 0;
	}
	/* The first step as pt_space_random_child(); after each step,
	 * settle() leaves the next decision's options in w->ob[1]. */
	if ((ret = pt_space_random_child(sp, st, w, rng, out)))
		return ret;
	while (hdr(out)->func >= 0) {
		if (pick(sp, out, w, &w->ob[1], rng, &o))
			return PT_EINVAL;
		if ((ret = take(sp, out, w, o, 0)))
			return ret;
	}
	return 0;
}

/* --- guides ---------------------------------------------------------------- */

/* A decision's option, without what the state it is taken in derives
 * (instances, regions, validity). */
struct choice {
	uint8_t set, kind, level, vdim, rv;
	int16_t func;
	uint8_t code[MAXARGS];
};

struct pt_space_guide {
	int nfuncs;
	struct choice *c;  /* nfuncs (granularity) + 2 per stage */
};

struct pt_space_guide *pt_space_guide_new(const struct pt_space *sp)
{
	struct pt_space_guide *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->nfuncs = sp->nfuncs;
	g->c = calloc((size_t)(sp->nfuncs + 2 * sp->nstages) + 1,
		      sizeof(*g->c));
	if (!g->c) {
		free(g);
		return NULL;
	}
	return g;
}

void pt_space_guide_free(struct pt_space_guide *g)
{
	if (!g)
		return;
	free(g->c);
	free(g);
}

/* The guide's entry for the decision st waits for. */
static struct choice *guide_slot(const struct pt_space *sp,
				 const struct pt_space_guide *g,
				 const struct pt_space_state *st)
{
	const struct st_hdr *h = hdr(st);

	if (h->func < 0)
		return NULL;
	if (h->what == PT_SPACE_GRAN)
		return &g->c[h->func];
	return &g->c[g->nfuncs + 2 * (sp->fn[h->func].first + h->stage) +
		     (h->what == PT_SPACE_INNER)];
}

static void choice_of(const struct opt *o, struct choice *c)
{
	memset(c, 0, sizeof(*c));
	c->set = 1;
	c->kind = o->kind;
	c->level = o->level;
	c->vdim = (uint8_t)o->vdim;
	c->rv = o->rv;
	c->func = o->func;
	memcpy(c->code, o->code, sizeof(c->code));
}

static int choice_is(const struct choice *c, const struct opt *o)
{
	return c->kind == o->kind && c->level == o->level &&
	       c->vdim == (uint8_t)o->vdim && c->rv == o->rv &&
	       c->func == o->func && !memcmp(c->code, o->code, sizeof(c->code));
}

int pt_space_guide_set(const struct pt_space *sp, struct pt_space_guide *g,
		       const struct pt_space_state *parent,
		       const struct pt_space_state *child,
		       struct pt_space_work *w)
{
	struct optbuf *ob = &w->ob[0];
	struct choice *slot = guide_slot(sp, g, parent);
	int ret, i, k;

	if (!slot)
		return PT_EINVAL;
	if ((ret = gen(sp, parent, w, ob)))
		return ret;
	for (i = 0; i < ob->n; i++) {
		struct opt *e = &ob->v[i], o;

		for (k = 0; k < combos(ob, e); k++) {
			if (!combo(sp, ob, e, k, &o) ||
			    !valid(sp, parent, w, &o))
				continue;
			memcpy(w->child, parent, sp->size);
			apply_one(sp, w->child, w, &o);
			hdr(w->child)->depth++;
			if ((ret = settle(sp, w->child, w, 1)))
				return ret;
			if (!memcmp(w->child, child, sp->size)) {
				choice_of(&o, slot);
				return 0;
			}
		}
	}
	return PT_ENOTFOUND;
}

int pt_space_guide_has(const struct pt_space *sp,
		       const struct pt_space_guide *g,
		       const struct pt_space_state *st)
{
	const struct choice *c = guide_slot(sp, g, st);

	return c && c->set;
}

/* The guide's option for st's decision among ob (st's options), into *o:
 * 1 when it is there and valid. */
static int guided_opt(const struct pt_space *sp,
		      const struct pt_space_guide *g,
		      const struct pt_space_state *st,
		      struct pt_space_work *w, struct optbuf *ob,
		      struct opt *o)
{
	const struct choice *c = guide_slot(sp, g, st);
	int i, k;

	if (!c || !c->set)
		return 0;
	for (i = 0; i < ob->n; i++) {
		struct opt *e = &ob->v[i];

		if (e->kind != c->kind || e->func != c->func ||
		    (e->fam < 0 && !choice_is(c, e)))
			continue;
		for (k = 0; k < combos(ob, e); k++)
			if (combo(sp, ob, e, k, o) && choice_is(c, o) &&
			    valid(sp, st, w, o))
				return 1;
	}
	return 0;
}

int pt_space_guided_child(const struct pt_space *sp,
			  const struct pt_space_guide *g,
			  const struct pt_space_state *st,
			  struct pt_space_work *w,
			  struct pt_space_state *child)
{
	struct optbuf *ob = &w->ob[0];
	struct opt o;
	int ret;

	if (hdr(st)->func < 0)
		return PT_EINVAL;
	if (!pt_space_guide_has(sp, g, st))
		return 0;
	if ((ret = gen(sp, st, w, ob)))
		return ret;
	if (!guided_opt(sp, g, st, w, ob, &o))
		return 0;
	if (child != st)
		memcpy(child, st, sp->size);
	return (ret = take(sp, child, w, o, 0)) ? ret : 1;
}

int pt_space_guided_complete(const struct pt_space *sp,
			     const struct pt_space_guide *g,
			     const struct pt_space_state *st,
			     struct pt_space_work *w, uint64_t *rng,
			     struct pt_space_state *out)
{
	struct optbuf *ob = &w->ob[0];
	struct opt o;
	int ret;

	if (out != st)
		memcpy(out, st, sp->size);
	if (hdr(out)->func < 0)
		return 0;
	if ((ret = gen(sp, out, w, ob)))
		return ret;
	/* After each step, settle() leaves the next decision's options in
	 * w->ob[1]. */
	for (;;) {
		if (!guided_opt(sp, g, out, w, ob, &o) &&
		    pick(sp, out, w, ob, rng, &o))
			return PT_EINVAL;
		if ((ret = take(sp, out, w, o, 0)))
			return ret;
		if (hdr(out)->func < 0)
			return 0;
		ob = &w->ob[1];
	}
}

/* --- the schedule --------------------------------------------------------- */

/* Where a schedule is built: a new one that owns its memory
 * (pt_space_sched), or w's scratch schedule (pt_space_sched_scratch),
 * whose arrays w keeps from one schedule to the next and whose names are
 * borrowed from the space. */
struct sbuild {
	struct pt_space_work *w;  /* NULL: a new schedule */
	int s;                    /* the stage being built */
	int coarse;               /* pt_space_sched_coarse()'s entries */
};

/* A name for the schedule: a copy, or the space's own string. */
static char *bname(const struct sbuild *sb, const char *name)
{
	return sb->w ? (char *)(uintptr_t)name : pt_model_strdup(name);
}

/* A new zeroed directive at the end of out->dirs, which holds room for
 * `room` (the stage's count, at most: one block instead of a realloc per
 * directive; in the scratch schedule, the block w keeps for the stage,
 * grown when short). */
static struct pt_directive *dir_new(const struct sbuild *sb,
				    struct pt_sched_stage *out, int room)
{
	struct pt_directive *d;

	if (sb->w && sb->w->dcap[sb->s] < room) {
		d = realloc(out->dirs, (size_t)room * sizeof(*d));
		if (!d)
			return NULL;
		out->dirs = d;
		sb->w->dcap[sb->s] = room;
	} else if (!out->dirs) {
		out->dirs = calloc((size_t)room, sizeof(*out->dirs));
		if (!out->dirs)
			return NULL;
	}
	if (out->ndirs >= room)
		return NULL;
	d = &out->dirs[out->ndirs++];
	memset(d, 0, sizeof(*d));
	pt_strvec_init(&d->order);
	return d;
}

static int dir_name(const struct sbuild *sb, struct pt_directive *d,
		    const char *dim)
{
	d->dim = bname(sb, dim);
	return d->dim ? 0 : PT_ENOMEM;
}

/* A reorder's loops, innermost first, into d->order: pushed copies, or in
 * the scratch schedule w's array of the space's names for the stage
 * (d->order then owns nothing: its alloc stays 0). */
static int dir_order(const struct pt_space *sp, const struct sbuild *sb,
		     struct pt_directive *d, const struct sp_loop *loops,
		     int n)
{
	struct pt_space_work *w = sb->w;
	int i;

	if (!w) {
		for (i = n - 1; i >= 0; i--)
			if (pt_strvec_push(&d->order,
					   loop_name(sp, sb->s, &loops[i])))
				return PT_ENOMEM;
		return 0;
	}
	if (w->ocap[sb->s] < n + 1) {
		char **v = realloc(w->ordv[sb->s], (size_t)(n + 1) *
				   sizeof(*v));

		if (!v)
			return PT_ENOMEM;
		w->ordv[sb->s] = v;
		w->ocap[sb->s] = n + 1;
	}
	for (i = n - 1; i >= 0; i--)
		w->ordv[sb->s][n - 1 - i] = bname(sb,
						  loop_name(sp, sb->s,
							    &loops[i]));
	w->ordv[sb->s][n] = NULL;
	d->order.v = w->ordv[sb->s];
	d->order.nr = (size_t)n;
	return 0;
}

/* Is a Func computed at (or sliding in) level lev of j's nest? */
static int level_hosts(const struct pt_space *sp,
		       const struct pt_space_state *st, int j, int lev,
		       const struct ninfo *ni)
{
	int h;

	for (h = 0; h < j; h++) {
		struct st_func *hb = fblk(sp, st, h);

		if (hb->site != j)
			continue;
		if (hb->gran == G_AT && hb->slot == lev)
			return 1;
		if (hb->gran == G_SLIDE && ni->rpos[hb->slot] >=
		    ni->lfirst[lev] && ni->rpos[hb->slot] <= ni->lend[lev])
			return 1;
	}
	return 0;
}

/* The tail of split k (from 1) of pure dim p of stage s, by factor fa
 * of a dim with e points: the vector split of stage 0 rounds up where the
 * Func's region need not stay exact; at root a split that fits shifts
 * inwards; everything else guards. */
static int split_tail(const struct pt_space *sp,
		      const struct pt_space_state *st, int s, int p, int k,
		      int64_t fa, int64_t e)
{
	const struct sp_stage *sg = &sp->sg[s];
	int g = gran(sp, st, sg->func);

	if (sg->ms->index != 0 || g == G_SLIDE)
		return PT_TAIL_GUARD;
	if (k == 1 && sblk(sp, st, s)->vdim == p && !sp->fn[sg->func].exact)
		return PT_TAIL_ROUND;
	return g == G_ROOT && fa <= e ? PT_TAIL_SHIFT : PT_TAIL_GUARD;
}

/* The innermost level's loops to unroll (Adams: the innermost tile when
 * its loops are constants of at most 16 iterations in all and nothing is
 * computed inside it); 0 when none. Not in a stage whose vectors are
 * guarded: Halide predicates each one, and unrolled copies of predicated
 * vectors make LLVM's register allocator crawl (a camera_pipe schedule,
 * 32 lanes guarded, 8 rows unrolled: the generator ran past 600 s; the
 * same without the unroll compiled in 57 s). */
static int unroll_level(const struct pt_space *sp,
			const struct pt_space_state *st, int s,
			const struct sp_loop *loops, const struct ninfo *ni)
{
	const struct sp_stage *sg = &sp->sg[s];
	struct st_stage *b = sblk(sp, st, s);
	int x = b->order[b->nlev - 1], i, v = b->vdim;
	double prod = 1;

	if (b->nlev < 2 || x == b->par || (sg->nrv && b->rvlev == x))
		return 0;
	if (v >= 0 && ni->nsplit[v] > 0 &&
	    split_tail(sp, st, s, v, 1, ni->pfac[v][0],
		       sg->ms->dims[sg->pure[v]].extent) == PT_TAIL_GUARD)
		return 0;
	for (i = ni->lfirst[x]; i <= ni->lend[x]; i++) {
		if (!loops[i].inner)
			return 0;
		prod *= loops[i].extent;
	}
	if (prod > UNROLL_MAX || (sg->ops + b->added) * prod > UNROLL_CODE)
		return 0;
	if (s == last_sidx(sp, sg->func) &&
	    level_hosts(sp, st, sg->func, x, ni))
		return 0;
	return 1;
}

/* pt_space_sched_coarse()'s directives of stage sb->s, whose nest is
 * loops and ni: its splits (factors and names, no tails), then its parallel
 * loops (those not vectorized), outermost first, as stage_dirs() orders
 * them. */
static int coarse_dirs(const struct pt_space *sp, struct sbuild *sb,
		       const struct sp_loop *loops, const struct ninfo *ni,
		       int room, struct pt_sched_stage *out)
{
	const struct sp_stage *sg = &sp->sg[sb->s];
	struct pt_directive *dr;
	int p, k, i;

	for (p = 0; p < sg->npure; p++)
		for (k = 1; k <= ni->nsplit[p]; k++) {
			if (!(dr = dir_new(sb, out, room)))
				return PT_ENOMEM;
			dr->kind = PT_DIR_SPLIT;
			dr->factor = ni->pfac[p][k - 1];
			dr->dim = bname(sb, sg->name[p][k - 1][0]);
			dr->outer = bname(sb, sg->name[p][k][0]);
			dr->inner = bname(sb, sg->name[p][k][1]);
		}
	for (i = 0; i < ni->n; i++) {
		if (loops[i].vec || !loops[i].par)
			continue;
		if (!(dr = dir_new(sb, out, room)))
			return PT_ENOMEM;
		dr->kind = PT_DIR_PARALLEL;
		dr->dim = bname(sb, loop_name(sp, sb->s, &loops[i]));
	}
	return 0;
}

static int stage_dirs(const struct pt_space *sp,
		      const struct pt_space_state *st, struct sbuild *sb,
		      int s, struct sp_loop *loops, struct pt_sched_stage *out)
{
	const struct sp_stage *sg = &sp->sg[s];
	const struct pt_stage *ms = sg->ms;
	struct st_stage *b = sblk(sp, st, s);
	int np = sg->npure, p, k, i, d, same;
	struct pt_directive *dr;
	struct ninfo ni;
	const char *have[64 + MAXARGS * MAXSPLIT];
	int nhave = 0, room;

	sb->s = s;
	build_nest(sp, st, s, b, loops, &ni);
	room = 1 + ni.n;
	for (p = 0; p < np; p++)
		room += ni.nsplit[p];
	if (sb->coarse)
		return coarse_dirs(sp, sb, loops, &ni, room, out);
	for (p = 0; p < np; p++) {
		int64_t e = ms->dims[sg->pure[p]].extent;

		for (k = 1; k <= ni.nsplit[p]; k++) {
			int64_t fa = ni.pfac[p][k - 1];

			if (!(dr = dir_new(sb, out, room)))
				return PT_ENOMEM;
			dr->kind = PT_DIR_SPLIT;
			dr->factor = fa;
			dr->tail = split_tail(sp, st, s, p, k, fa, e);
			dr->outer = bname(sb, sg->name[p][k][0]);
			dr->inner = bname(sb, sg->name[p][k][1]);
			if (dir_name(sb, dr, sg->name[p][k - 1][0]) ||
			    !dr->outer || !dr->inner)
				return PT_ENOMEM;
			e = div_up(e, fa);
		}
	}
	/* Halide's order after the splits, innermost first, against ours. */
	for (d = 0; d < ms->ndims && nhave < 64; d++) {
		for (p = 0; p < np && sg->pure[p] != d; p++)
			;
		if (p == np) {
			have[nhave++] = NULL;  /* a reduction loop: kept */
			continue;
		}
		for (k = 1; k <= ni.nsplit[p]; k++)
			have[nhave++] = sg->name[p][k][1];
		have[nhave++] = sg->name[p][ni.nsplit[p]][0];
	}
	same = nhave == ni.n;
	for (i = 0; i < ni.n && same; i++) {
		const struct sp_loop *l = &loops[ni.n - 1 - i];

		if (l->p < 0 ? have[i] != NULL :
		    !have[i] || strcmp(have[i], loop_name(sp, s, l)))
			same = 0;
	}
	if (!same && ni.n >= 2) {
		if (!(dr = dir_new(sb, out, room)))
			return PT_ENOMEM;
		dr->kind = PT_DIR_REORDER;
		if (dir_order(sp, sb, dr, loops, ni.n))
			return PT_ENOMEM;
	}
	for (i = 0; i < ni.n; i++) {
		const struct sp_loop *l = &loops[i];

		if (!l->vec && !l->par)
			continue;
		if (!(dr = dir_new(sb, out, room)))
			return PT_ENOMEM;
		dr->kind = l->vec ? PT_DIR_VECTORIZE : PT_DIR_PARALLEL;
		if (dir_name(sb, dr, loop_name(sp, s, l)))
			return PT_ENOMEM;
	}
	if (unroll_level(sp, st, s, loops, &ni)) {
		int x = b->order[b->nlev - 1];

		for (i = ni.lfirst[x]; i <= ni.lend[x]; i++) {
			if (loops[i].extent < 2)
				continue;
			if (!(dr = dir_new(sb, out, room)))
				return PT_ENOMEM;
			dr->kind = PT_DIR_UNROLL;
			if (dir_name(sb, dr, loop_name(sp, s, &loops[i])))
				return PT_ENOMEM;
		}
	}
	return 0;
}

static int set_site(const struct sbuild *sb, struct pt_site *site, int j,
		    const char *loop)
{
	site->func = j;
	site->loop = bname(sb, loop);
	return site->loop ? 0 : PT_ENOMEM;
}

/* Func f's compute site and directives in state st into sf (compute
 * root without directives), in sb's way. */
static int build_func(const struct pt_space *sp,
		      const struct pt_space_state *st, struct sbuild *sb,
		      int f, struct pt_sched_func *sf, struct sp_loop *loops)
{
	struct st_func *fb = fblk(sp, st, f);
	struct ninfo ni;
	int sj, q, i, ret, c = pt_space_compute(sp, st, f, NULL);

	if (c == PT_COMPUTE_INLINE) {
		sf->compute = PT_COMPUTE_INLINE;
		return 0;
	}
	if (c == PT_COMPUTE_AT) {
		sj = last_sidx(sp, fb->site);
		build_nest(sp, st, sj, sblk(sp, st, sj), loops, &ni);
		q = site_pos(sp, st, f, &ni);
		sf->compute = PT_COMPUTE_AT;
		if (set_site(sb, &sf->compute_at, fb->site,
			     loop_name(sp, sj, &loops[q])))
			return PT_ENOMEM;
		if (fb->gran == G_AT || q > 0) {
			if (fb->gran == G_SLIDE)
				q--;
			if (set_site(sb, &sf->store_at, fb->site,
				     loop_name(sp, sj, &loops[q])))
				return PT_ENOMEM;
		} else {
			sf->store_root = 1;
		}
	}
	for (i = 0; i < sp->fn[f].nstages; i++) {
		int sidx = sp->fn[f].first + i;

		if (!sp->sg[sidx].tiled || !(sblk(sp, st, sidx)->done & 1))
			continue;
		if ((ret = stage_dirs(sp, st, sb, sidx, loops, &sf->stages[i])))
			return ret;
	}
	return 0;
}

/* State st's compute sites and directives into s (shaped for the model,
 * every Func compute root without directives), in sb's way. */
static int build_sched(const struct pt_space *sp,
		       const struct pt_space_state *st, struct sbuild *sb,
		       struct pt_sched *s, struct sp_loop *loops)
{
	int f, ret;

	for (f = 0; f < sp->nfuncs; f++)
		if ((ret = build_func(sp, st, sb, f, &s->funcs[f], loops)))
			return ret;
	return 0;
}

int pt_space_nfuncs(const struct pt_space *sp)
{
	return sp->nfuncs;
}

int pt_space_compute(const struct pt_space *sp,
		     const struct pt_space_state *st, int f, int *site)
{
	const struct st_func *fb = fblk(sp, st, f);

	/* The one reading of the granularity (build_sched() uses it). */
	if (fb->gran == G_INLINE)
		return PT_COMPUTE_INLINE;
	if (fb->gran != G_AT && fb->gran != G_SLIDE)
		return PT_COMPUTE_ROOT;
	if (site)
		*site = fb->site;
	return PT_COMPUTE_AT;
}

int pt_space_sched(const struct pt_space *sp, const struct pt_space_state *st,
		   struct pt_sched **out)
{
	struct sbuild sb = { NULL, 0, 0 };
	struct pt_sched *s;
	struct sp_loop *loops;
	int ret = PT_ENOMEM;
	size_t nl = (size_t)sp->maxdims + MAXARGS * MAXSPLIT + 2;

	*out = NULL;
	s = pt_sched_new_for(sp->m);
	loops = calloc(nl, sizeof(*loops));
	if (s && loops && !pt_strvec_push(&s->meta, "tuner=space"))
		ret = build_sched(sp, st, &sb, s, loops);
	free(loops);
	if (ret) {
		pt_sched_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

static size_t fblk_size(const struct pt_space *sp, int f)
{
	return sizeof(struct st_func) +
		sizeof(float) * (size_t)(sp->fn[f].wide ? 0 : sp->fn[f].nargs);
}

/* Into w->hhead, w->hnext: the Funcs computed at (or sliding in) each
 * Func of st, lowest first. */
static void hosts(const struct pt_space *sp, const struct pt_space_state *st,
		  struct pt_space_work *w)
{
	int h, j;

	for (j = 0; j < sp->nfuncs; j++)
		w->hhead[j] = -1;
	for (h = sp->nfuncs; h-- > 0;) {
		if (pt_space_compute(sp, st, h, &j) != PT_COMPUTE_AT ||
		    j < 0 || j >= sp->nfuncs)
			continue;
		w->hnext[h] = w->hhead[j];
		w->hhead[j] = h;
	}
}

static void swap_lists(int **a, int **b)
{
	int *t = *a;

	*a = *b;
	*b = t;
}

/* Would state st build Func f's entry as w->last did? Yes when what
 * build_func() reads of a state for it is the same bytes in both: its
 * block, its stages' blocks, its site's last stage's block, and the Funcs
 * computed at it with their granularity and level (which keep its
 * innermost tile from being unrolled; hosts() lists them, w->hhead for
 * st, w->ohead for last; not for a coarse entry, which has no unrolls).
 * The space itself is fixed for w. The two states are compared in place:
 * copying those bytes into a key first cost 1% more of a beam's
 * instructions. */
static int func_same(const struct pt_space *sp,
		     const struct pt_space_state *st,
		     const struct pt_space_work *w, int f, int coarse)
{
	const struct sp_func *fn = &sp->fn[f];
	const struct pt_space_state *last = w->last;
	const struct sp_stage *lo = &sp->sg[fn->first], *hi = &sp->sg[fn->last];
	size_t end = hi->off + sblk_size(hi->npure);
	int i, j, h, g;

	/* A Func's stage blocks follow each other (pt_space_new()). */
	if (memcmp(fblk(sp, st, f), fblk(sp, last, f), fblk_size(sp, f)) ||
	    memcmp((const char *)st + lo->off, (const char *)last + lo->off,
		   end - lo->off))
		return 0;
	if (pt_space_compute(sp, st, f, &j) == PT_COMPUTE_AT && j >= 0 &&
	    j < sp->nfuncs) {
		i = last_sidx(sp, j);
		if (memcmp(sblk(sp, st, i), sblk(sp, last, i),
			   sblk_size(sp->sg[i].npure)))
			return 0;
	}
	if (coarse)
		return 1;
	for (h = w->hhead[f], g = w->ohead[f]; h >= 0 && g >= 0;
	     h = w->hnext[h], g = w->onext[g]) {
		const struct st_func *hb = fblk(sp, st, h), *gb = fblk(sp, last, g);

		if (h != g || hb->gran != gb->gran || hb->slot != gb->slot)
			return 0;
	}
	return h < 0 && g < 0;
}

/* The scratch schedule and its per-stage arrays, made on the first
 * pt_space_sched_scratch() with w. */
static int scratch_new(const struct pt_space *sp, struct pt_space_work *w)
{
	size_t ns = (size_t)sp->nstages + 1;

	w->sched = pt_sched_new_for(sp->m);
	w->dcap = calloc(ns, sizeof(*w->dcap));
	w->ordv = calloc(ns, sizeof(*w->ordv));
	w->nord = w->ordv ? (int)ns : 0;
	w->ocap = calloc(ns, sizeof(*w->ocap));
	w->hhead = calloc((size_t)sp->nfuncs + 1, sizeof(*w->hhead));
	w->hnext = calloc((size_t)sp->nfuncs + 1, sizeof(*w->hnext));
	w->ohead = calloc((size_t)sp->nfuncs + 1, sizeof(*w->ohead));
	w->onext = calloc((size_t)sp->nfuncs + 1, sizeof(*w->onext));
	w->rev = calloc((size_t)sp->nfuncs + 1, sizeof(*w->rev));
	w->last = pt_space_state_new(sp);
	w->built = 0;
	if (!w->sched || !w->dcap || !w->ordv || !w->ocap || !w->hhead ||
	    !w->hnext || !w->ohead || !w->onext || !w->rev || !w->last ||
	    pt_strvec_push(&w->sched->meta, "tuner=space")) {
		scratch_free(w);
		return PT_ENOMEM;
	}
	return 0;
}

/* Free what scratch_new() made: the directive arrays and reorder names
 * are w's (their strings the space's), the rest pt_sched_free()'s. */
static void scratch_free(struct pt_space_work *w)
{
	struct pt_sched *s = w->sched;
	int f, i;

	for (f = 0; s && f < s->nfuncs; f++) {
		struct pt_sched_func *sf = &s->funcs[f];

		sf->compute_at.loop = sf->store_at.loop = NULL;
		for (i = 0; sf->stages && i < sf->nstages; i++) {
			free(sf->stages[i].dirs);
			sf->stages[i].dirs = NULL;
			sf->stages[i].ndirs = 0;
		}
	}
	pt_sched_free(s);
	for (i = 0; w->ordv && i < w->nord; i++)
		free(w->ordv[i]);
	free(w->ordv);
	free(w->dcap);
	free(w->ocap);
	free(w->hhead);
	free(w->hnext);
	free(w->ohead);
	free(w->onext);
	free(w->rev);
	free(w->last);
	w->rev = NULL;
	w->sched = NULL;
	w->ordv = NULL;
	w->dcap = w->ocap = NULL;
	w->hhead = w->hnext = w->ohead = w->onext = NULL;
	w->last = NULL;
	w->built = 0;
}

/* pt_space_sched_scratch() or, coarse, pt_space_sched_coarse(). A call
 * of one after the other rebuilds every Func. */
static int scratch_build(const struct pt_space *sp,
			 const struct pt_space_state *st,
			 struct pt_space_work *w, int coarse,
			 const struct pt_sched **out)
{
	struct sbuild sb = { w, 0, coarse };
	struct pt_sched *s;
	int f, i, ret;

	*out = NULL;
	if (!w->sched && (ret = scratch_new(sp, w)))
		return ret;
	if (w->coarse != coarse)
		w->built = 0;
	w->coarse = coarse;
	s = w->sched;
	memcpy(s->key, sp->m->key, sizeof(s->key));
	if (!coarse)
		hosts(sp, st, w);
	for (f = 0; f < s->nfuncs; f++) {
		struct pt_sched_func *sf = &s->funcs[f];

		/* Built from the same bytes of a state: the same entry. */
		if (w->built && func_same(sp, st, w, f, coarse))
			continue;
		sf->compute = PT_COMPUTE_ROOT;
		sf->compute_at.func = sf->store_at.func = 0;
		sf->compute_at.loop = sf->store_at.loop = NULL;
		sf->store_root = 0;
		for (i = 0; i < sf->nstages; i++)
			sf->stages[i].ndirs = 0;
		w->rev[f] = ++w->revs;
		if ((ret = build_func(sp, st, &sb, f, sf, w->loops[1]))) {
			/* some entries are st's, the rest last's */
			w->built = 0;
			return ret;
		}
	}
	memcpy(w->last, st, sp->size);
	if (!coarse) {
		swap_lists(&w->hhead, &w->ohead);
		swap_lists(&w->hnext, &w->onext);
	}
	w->built = 1;
	*out = s;
	return 0;
}

int pt_space_sched_scratch(const struct pt_space *sp,
			   const struct pt_space_state *st,
			   struct pt_space_work *w, const struct pt_sched **out)
{
	return scratch_build(sp, st, w, 0, out);
}

int pt_space_sched_coarse(const struct pt_space *sp,
			  const struct pt_space_state *st,
			  struct pt_space_work *w, const struct pt_sched **out)
{
	return scratch_build(sp, st, w, 1, out);
}

const uint64_t *pt_space_scratch_revs(const struct pt_space_work *w)
{
	return w->sched ? w->rev : NULL;
}
