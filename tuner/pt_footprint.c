/* pt_footprint.c: footprints of stages over boxes (pt_footprint.h).
 *
 * pt_fp_new() compiles each coordinate of each access into scaled integers:
 * with L the least common multiple of the denominators of its coefficients
 * and offsets, the coordinate times L is sum(k[t] * dim[t]) + [lo, hi] with
 * integer k, and only nonzero terms are kept. Over a box the low end is lo
 * plus, per term, k times the dim's low bound when k > 0 and its high bound
 * otherwise; the high end likewise. Dividing by L (ceiling for the low end,
 * floor for the high end) gives the integer coordinates the access can
 * take. Most coordinates have L = 1 and one term.
 */
#include "protune/pt_footprint.h"

#include <stdlib.h>
#include <string.h>

enum { FP_AFFINE, FP_RANGE };

/* One compiled coordinate. FP_RANGE: the coordinate is anywhere in
 * [clo, chi] (a non-affine coordinate: its clamp, completed by the
 * producer's region). A partial coordinate is FP_AFFINE: its affine part,
 * with its varying offset's range as [lo, hi], and its clamp. */
struct fp_coord {
	uint8_t kind;
	uint8_t nterms;
	uint8_t has_clo, has_chi;
	uint8_t dim[PT_FP_MAXDIMS];
	uint8_t neg[PT_FP_MAXDIMS];  /* k < 0: the low end takes the dim's
				      * high bound and the other way round */
	int64_t k[PT_FP_MAXDIMS];
	int64_t den;
	int64_t lo, hi;         /* offsets times den */
	int64_t clo, chi;       /* clamp bounds */
};

struct fp_access {
	int node;
	int ncoords;
	int first;              /* index of the first coordinate */
	uint8_t self, store;
	uint8_t need;           /* the flag without which it is skipped
				 * (PT_FP_SELF, PT_FP_STORES), or 0 */
	uint8_t inlinable;      /* reads a single-stage Func not its own */
};

struct fp_stage {
	int func;
	int first, naccesses;   /* accesses, as in the model */
	int mfirst, nmerged;    /* the same, merged for pt_fp_reads() */
	int ndims;
	int8_t arg[PT_FP_MAXDIMS];  /* per dim: the pure arg, -1 for an RVar */
	int64_t dlo[PT_FP_MAXDIMS], dhi[PT_FP_MAXDIMS];  /* model bounds */
};

struct fp_node {
	int ndims;
	int bytes;
	int first_stage, nstages;  /* Funcs */
	uint8_t is_output;
	struct pt_box region;
};

struct pt_fp {
	int nfuncs, nnodes, nstages;
	struct fp_node *nodes;
	struct fp_stage *stages;
	struct fp_access *accesses;
	struct fp_coord *coords;
	/* Accesses of a stage to the same producer whose coordinates differ
	 * only in their constant offsets, merged into one with the lowest
	 * and highest offsets: the box union of their footprints is exactly
	 * the footprint of the merged access (ceiling, floor and clamp are
	 * monotone), and a 5x5 stencil costs one access instead of 25. */
	struct fp_access *merged;
	struct fp_coord *mcoords;
};

/* --- integer helpers ------------------------------------------------------ */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return -floor_div(-a, b);
}

static int64_t gcd64(int64_t a, int64_t b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* lcm(a, b) for a, b >= 1, or -1 past 2^31 (denominators are small). */
static int64_t lcm64(int64_t a, int64_t b)
{
	int64_t l = a / gcd64(a, b) * b;

	return l > (INT64_C(1) << 31) ? -1 : l;
}

static int type_bytes(struct pt_type t)
{
	return t.bits < 8 ? 1 : t.bits / 8;
}

/* --- construction --------------------------------------------------------- */

static int compile_coord(const struct pt_model *m, const struct pt_stage *st,
			 const struct fp_node *prod, int k,
			 const struct pt_coord *c, struct fp_coord *o,
			 struct pt_error *err)
{
	int64_t den = 1;
	int d;

	memset(o, 0, sizeof(*o));
	o->has_clo = (uint8_t)c->has_clamp_min;
	o->has_chi = (uint8_t)c->has_clamp_max;
	o->clo = c->clamp_min;
	o->chi = c->clamp_max;
	if (!(c->affine && c->coef) && !pt_coord_partial(c)) {
		o->kind = FP_RANGE;
		/* The producer's whole region, limited by the clamp. */
		if (!c->has_clamp_min)
			o->clo = k < prod->ndims ? prod->region.lo[k] : 0;
		if (!c->has_clamp_max)
			o->chi = k < prod->ndims ? prod->region.hi[k] : 0;
		if (c->has_clamp_min && !c->has_clamp_max && o->chi < o->clo)
			o->chi = o->clo;
		if (c->has_clamp_max && !c->has_clamp_min && o->clo > o->chi)
			o->clo = o->chi;
		o->has_clo = o->has_chi = 1;
		return 0;
	}
	o->kind = FP_AFFINE;
	if (c->off_min.den < 1 || c->off_max.den < 1)
		goto bad;
	den = lcm64(c->off_min.den, c->off_max.den);
	for (d = 0; d < st->ndims && den > 0; d++) {
		if (c->coef[d].den < 1)
			goto bad;
		if (c->coef[d].num)
			den = lcm64(den, c->coef[d].den);
	}
	if (den < 1)
		goto bad;
	o->den = den;
	o->lo = c->off_min.num * (den / c->off_min.den);
	o->hi = c->off_max.num * (den / c->off_max.den);
	for (d = 0; d < st->ndims; d++) {
		if (!c->coef[d].num)
			continue;
		o->dim[o->nterms] = (uint8_t)d;
		o->k[o->nterms] = c->coef[d].num * (den / c->coef[d].den);
		o->neg[o->nterms] = o->k[o->nterms] < 0;
		o->nterms++;
	}
	return 0;
bad:
	(void)m;
	return pt_error_set(err, PT_EINVAL,
			    "f%d stage %d: a coordinate's denominators are "
			    "out of range", st->func, st->index);
}

/* Do two compiled coordinates differ at most in their offsets (affine) or
 * ranges (not affine)? */
static int same_shape(const struct fp_coord *a, const struct fp_coord *b)
{
	int t;

	if (a->kind != b->kind)
		return 0;
	if (a->kind == FP_RANGE)
		return 1;
	if (a->den != b->den || a->nterms != b->nterms ||
	    a->has_clo != b->has_clo || a->has_chi != b->has_chi ||
	    (a->has_clo && a->clo != b->clo) ||
	    (a->has_chi && a->chi != b->chi))
		return 0;
	for (t = 0; t < a->nterms; t++)
		if (a->dim[t] != b->dim[t] || a->k[t] != b->k[t])
			return 0;
	return 1;
}

static void merge_stage(struct pt_fp *fp, struct fp_stage *fs, int *nm,
			int *nmc)
{
	int i, j, k;

	fs->mfirst = *nm;
	fs->nmerged = 0;
	for (i = 0; i < fs->naccesses; i++) {
		const struct fp_access *a = &fp->accesses[fs->first + i];
		const struct fp_coord *ac = &fp->coords[a->first];
		struct fp_access *o;

		for (j = 0; j < fs->nmerged; j++) {
			o = &fp->merged[fs->mfirst + j];
			if (o->node != a->node || o->self != a->self ||
			    o->store != a->store || o->ncoords != a->ncoords)
				continue;
			for (k = 0; k < a->ncoords; k++)
				if (!same_shape(&fp->mcoords[o->first + k],
						&ac[k]))
					break;
			if (k == a->ncoords)
				break;
		}
		if (j < fs->nmerged) {
			o = &fp->merged[fs->mfirst + j];
			for (k = 0; k < a->ncoords; k++) {
				struct fp_coord *c = &fp->mcoords[o->first + k];
				int64_t *lo = c->kind == FP_RANGE ? &c->clo :
					&c->lo;
				int64_t *hi = c->kind == FP_RANGE ? &c->chi :
					&c->hi;
				int64_t alo = ac[k].kind == FP_RANGE ?
					ac[k].clo : ac[k].lo;
				int64_t ahi = ac[k].kind == FP_RANGE ?
					ac[k].chi : ac[k].hi;

				if (alo < *lo)
					*lo = alo;
				if (ahi > *hi)
					*hi = ahi;
			}
			continue;
		}
		o = &fp->merged[fs->mfirst + fs->nmerged++];
		*o = *a;
		o->first = *nmc;
		for (k = 0; k < a->ncoords; k++)
			fp->mcoords[(*nmc)++] = ac[k];
	}
	*nm += fs->nmerged;
}

int pt_fp_new(const struct pt_model *m, struct pt_fp **out,
	      struct pt_error *err)
{
	struct pt_fp *fp;
	int i, j, k, nacc = 0, ncoords = 0, ret;

	*out = NULL;
	if (!m || m->nfuncs < 1)
		return pt_error_set(err, PT_EINVAL, "no model");
	for (i = 0; i < m->nstages; i++) {
		const struct pt_stage *st = &m->stages[i];

		if (st->ndims > PT_FP_MAXDIMS)
			return pt_error_set(err, PT_EINVAL,
					    "f%d stage %d has %d loop dims "
					    "(at most %d)", st->func,
					    st->index, st->ndims,
					    PT_FP_MAXDIMS);
		nacc += st->naccesses;
		for (j = 0; j < st->naccesses; j++)
			ncoords += st->accesses[j].ncoords;
	}
	fp = calloc(1, sizeof(*fp));
	if (!fp)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	fp->nfuncs = m->nfuncs;
	fp->nnodes = m->nfuncs + m->ninputs;
	fp->nstages = m->nstages;
	fp->nodes = calloc((size_t)fp->nnodes, sizeof(*fp->nodes));
	fp->stages = calloc((size_t)m->nstages + 1, sizeof(*fp->stages));
	fp->accesses = calloc((size_t)nacc + 1, sizeof(*fp->accesses));
	fp->coords = calloc((size_t)ncoords + 1, sizeof(*fp->coords));
	fp->merged = calloc((size_t)nacc + 1, sizeof(*fp->merged));
	fp->mcoords = calloc((size_t)ncoords + 1, sizeof(*fp->mcoords));
	if (!fp->nodes || !fp->stages || !fp->accesses || !fp->coords ||
	    !fp->merged || !fp->mcoords) {
		pt_fp_free(fp);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}

	for (i = 0; i < m->nfuncs; i++) {
		const struct pt_func *f = &m->funcs[i];
		struct fp_node *n = &fp->nodes[i];

		if (f->nargs > PT_FP_MAXDIMS) {
			pt_fp_free(fp);
			return pt_error_set(err, PT_EINVAL,
					    "f%d has %d dims (at most %d)", i,
					    f->nargs, PT_FP_MAXDIMS);
		}
		n->ndims = f->nargs;
		for (j = 0; j < f->ntypes; j++)
			n->bytes += type_bytes(f->types[j]);
		n->first_stage = f->first_stage;
		n->nstages = f->nstages;
		n->is_output = (uint8_t)f->is_output;
		for (j = 0; j < f->nargs; j++) {
			n->region.lo[j] = f->region_min[j];
			n->region.hi[j] = f->region_min[j] +
				f->region_extent[j] - 1;
		}
	}
	for (i = 0; i < m->ninputs; i++) {
		const struct pt_input *in = &m->inputs[i];
		struct fp_node *n = &fp->nodes[m->nfuncs + i];

		if (in->ndims > PT_FP_MAXDIMS) {
			pt_fp_free(fp);
			return pt_error_set(err, PT_EINVAL,
					    "i%d has %d dims (at most %d)", i,
					    in->ndims, PT_FP_MAXDIMS);
		}
		n->ndims = in->is_buffer ? in->ndims : 0;
		n->bytes = type_bytes(in->type);
		n->first_stage = -1;
		for (j = 0; j < n->ndims; j++) {
			n->region.lo[j] = in->est_min[j];
			n->region.hi[j] = in->est_min[j] +
				in->est_extent[j] - 1;
		}
	}

	nacc = ncoords = 0;
	for (i = 0; i < m->nstages; i++) {
		const struct pt_stage *st = &m->stages[i];
		struct fp_stage *fs = &fp->stages[i];

		fs->func = st->func;
		fs->first = nacc;
		fs->naccesses = st->naccesses;
		fs->ndims = st->ndims;
		for (j = 0; j < st->ndims; j++) {
			fs->arg[j] = (int8_t)(st->dims[j].is_rvar ? -1 :
					      st->dims[j].index);
			fs->dlo[j] = st->dims[j].min;
			fs->dhi[j] = st->dims[j].min + st->dims[j].extent - 1;
		}
		for (j = 0; j < st->naccesses; j++) {
			const struct pt_access *a = &st->accesses[j];
			struct fp_access *fa = &fp->accesses[nacc++];
			const struct fp_node *prod;

			fa->node = a->kind == PT_ACCESS_FUNC ? a->producer :
				m->nfuncs + a->producer;
			if (fa->node < 0 || fa->node >= fp->nnodes) {
				pt_fp_free(fp);
				return pt_error_set(err, PT_EINVAL,
						    "f%d stage %d: producer "
						    "out of range", st->func,
						    st->index);
			}
			prod = &fp->nodes[fa->node];
			if (a->ncoords != prod->ndims) {
				pt_fp_free(fp);
				return pt_error_set(err, PT_EINVAL,
						    "f%d stage %d: %d "
						    "coordinates for %d dims",
						    st->func, st->index,
						    a->ncoords, prod->ndims);
			}
			fa->ncoords = a->ncoords;
			fa->first = ncoords;
			fa->self = (uint8_t)(a->kind == PT_ACCESS_FUNC &&
					     a->producer == st->func);
			fa->store = (uint8_t)a->is_store;
			fa->need = fa->store ? PT_FP_STORES :
				fa->self ? PT_FP_SELF : 0;
			fa->inlinable = !fa->self && fa->node < fp->nfuncs &&
				fp->nodes[fa->node].nstages == 1;
			for (k = 0; k < a->ncoords; k++) {
				ret = compile_coord(m, st, prod, k,
						    &a->coords[k],
						    &fp->coords[ncoords++],
						    err);
				if (ret) {
					pt_fp_free(fp);
					return ret;
				}
			}
		}
	}
	nacc = ncoords = 0;
	for (i = 0; i < m->nstages; i++)
		merge_stage(fp, &fp->stages[i], &nacc, &ncoords);
	*out = fp;
	return 0;
}

void pt_fp_free(struct pt_fp *fp)
{
	if (!fp)
		return;
	free(fp->nodes);
	free(fp->stages);
	free(fp->accesses);
	free(fp->coords);
	free(fp->merged);
	free(fp->mcoords);
	free(fp);
}

int pt_fp_nnodes(const struct pt_fp *fp)
{
	return fp->nnodes;
}

int pt_fp_node_ndims(const struct pt_fp *fp, int node)
{
	return fp->nodes[node].ndims;
}

int pt_fp_node_bytes(const struct pt_fp *fp, int node)
{
	return fp->nodes[node].bytes;
}

const struct pt_box *pt_fp_node_region(const struct pt_fp *fp, int node)
{
	return &fp->nodes[node].region;
}

/* --- evaluation ----------------------------------------------------------- */

void pt_fp_stage_dims(const struct pt_fp *fp, int stage,
		      const struct pt_box *region, struct pt_box *dims)
{
	const struct fp_stage *fs = &fp->stages[stage];
	int d;

	for (d = 0; d < fs->ndims; d++) {
		int a = fs->arg[d];

		if (a >= 0) {
			dims->lo[d] = region->lo[a];
			dims->hi[d] = region->hi[a];
		} else {
			dims->lo[d] = fs->dlo[d];
			dims->hi[d] = fs->dhi[d];
		}
	}
}

/* The bounds of a box a term takes its low and high ends from, by the sign
 * of its coefficient (fp_coord.neg), so that terms are summed without a
 * branch. */
struct fp_bounds {
	const int64_t *b[2][2];
};

static inline void set_bounds(struct fp_bounds *s, const struct pt_box *dims)
{
	s->b[0][0] = dims->lo;  /* k > 0 */
	s->b[0][1] = dims->hi;
	s->b[1][0] = dims->hi;  /* k < 0 */
	s->b[1][1] = dims->lo;
}

static inline void eval_coord(const struct fp_coord *c,
			      const struct fp_bounds *bound, int64_t *plo,
			      int64_t *phi)
{
	int64_t lo, hi;
	int t;

	if (c->kind == FP_RANGE) {
		*plo = c->clo;
		*phi = c->chi;
		return;
	}
	lo = c->lo;
	hi = c->hi;
	for (t = 0; t < c->nterms; t++) {
		const int64_t *const *b = bound->b[c->neg[t]];
		int64_t k = c->k[t];
		int d = c->dim[t];

		lo += k * b[0][d];
		hi += k * b[1][d];
	}
	if (c->den != 1) {
		int64_t l = ceil_div(lo, c->den), h = floor_div(hi, c->den);

		/* No integer in the rational range (a map that is only
		 * approximately affine): take the integers around it. */
		if (l > h) {
			int64_t t2 = l;

			l = h;
			h = t2;
		}
		lo = l;
		hi = h;
	}
	if (c->has_clo) {
		if (lo < c->clo)
			lo = c->clo;
		if (hi < c->clo)
			hi = c->clo;
	}
	if (c->has_chi) {
		if (lo > c->chi)
			lo = c->chi;
		if (hi > c->chi)
			hi = c->chi;
	}
	*plo = lo;
	*phi = hi;
}

static inline void eval_access(const struct fp_coord *coords,
			       const struct fp_access *a,
			       const struct fp_bounds *bound,
			       struct pt_box *out)
{
	const struct fp_coord *c = &coords[a->first];
	int k;

	for (k = 0; k < a->ncoords; k++)
		eval_coord(&c[k], bound, &out->lo[k], &out->hi[k]);
}

void pt_fp_access(const struct pt_fp *fp, int stage, int access,
		  const struct pt_box *dims, struct pt_box *out)
{
	const struct fp_stage *fs = &fp->stages[stage];
	struct fp_bounds bound;

	set_bounds(&bound, dims);
	eval_access(fp->coords, &fp->accesses[fs->first + access], &bound,
		    out);
}

int pt_fp_acc_init(struct pt_fp_acc *acc, const struct pt_fp *fp)
{
	memset(acc, 0, sizeof(*acc));
	acc->nnodes = fp->nnodes;
	acc->words = (fp->nfuncs + 63) / 64;
	acc->touched = malloc((size_t)fp->nnodes * sizeof(*acc->touched));
	acc->box = malloc((size_t)fp->nnodes * sizeof(*acc->box));
	acc->stamp = calloc((size_t)fp->nnodes, sizeof(*acc->stamp));
	acc->pending = calloc((size_t)acc->words + 1,
			      sizeof(*acc->pending));
	if (!acc->touched || !acc->box || !acc->stamp || !acc->pending) {
		pt_fp_acc_release(acc);
		return PT_ENOMEM;
	}
	acc->gen = 1;
	return 0;
}

void pt_fp_acc_release(struct pt_fp_acc *acc)
{
	free(acc->touched);
	free(acc->box);
	free(acc->stamp);
	free(acc->pending);
	memset(acc, 0, sizeof(*acc));
}

void pt_fp_acc_clear(struct pt_fp_acc *acc)
{
	acc->ntouched = 0;
	if (++acc->gen == 0) {  /* wrapped: really clear the stamps */
		memset(acc->stamp, 0, (size_t)acc->nnodes *
		       sizeof(*acc->stamp));
		acc->gen = 1;
	}
}

void pt_fp_acc_union(struct pt_fp_acc *acc, int node, const struct pt_box *b,
		     int ndims)
{
	struct pt_box *t = &acc->box[node];
	int k;

	if (acc->stamp[node] != acc->gen) {
		acc->stamp[node] = acc->gen;
		acc->touched[acc->ntouched++] = node;
		*t = *b;  /* a fixed-size copy: cheaper than ndims dims */
		return;
	}
	for (k = 0; k < ndims; k++) {
		if (b->lo[k] < t->lo[k])
			t->lo[k] = b->lo[k];
		if (b->hi[k] > t->hi[k])
			t->hi[k] = b->hi[k];
	}
}

static int bit(const uint64_t *set, int i)
{
	return set && (int)((set[i >> 6] >> (i & 63)) & 1);
}

/* The reads of one stage; reads of inlined Funcs are marked pending. A
 * node's first box is evaluated in place in the accumulator. */
static void reads_one(const struct pt_fp *fp, int stage,
		      const struct pt_box *dims, const uint64_t *inlined,
		      unsigned flags, struct pt_fp_acc *acc)
{
	const struct fp_stage *fs = &fp->stages[stage];
	const struct fp_access *a = &fp->merged[fs->mfirst];
	struct fp_bounds bound;
	struct pt_box b, *t;
	int i, k;

	set_bounds(&bound, dims);
	for (i = 0; i < fs->nmerged; i++, a++) {
		int n = a->node;

		if (a->need & ~flags)
			continue;
		t = &acc->box[n];
		if (acc->stamp[n] != acc->gen) {
			acc->stamp[n] = acc->gen;
			acc->touched[acc->ntouched++] = n;
			eval_access(fp->mcoords, a, &bound, t);
		} else {
			eval_access(fp->mcoords, a, &bound, &b);
			for (k = 0; k < a->ncoords; k++) {
				if (b.lo[k] < t->lo[k])
					t->lo[k] = b.lo[k];
				if (b.hi[k] > t->hi[k])
					t->hi[k] = b.hi[k];
			}
		}
		if (a->inlinable && bit(inlined, n))
			acc->pending[n >> 6] |= UINT64_C(1) << (n & 63);
	}
}

/* The highest pending Func, cleared, or -1. */
static int pop_pending(struct pt_fp_acc *acc)
{
	int w, b;

	for (w = acc->words - 1; w >= 0; w--) {
		uint64_t v = acc->pending[w];

		if (!v)
			continue;
#if defined(__GNUC__)
		b = 63 - __builtin_clzll(v);
#else
		for (b = 63; !((v >> b) & 1); b--)
			;
#endif
		acc->pending[w] &= ~(UINT64_C(1) << b);
		return w * 64 + b;
	}
	return -1;
}

void pt_fp_reads(const struct pt_fp *fp, int stage, const struct pt_box *dims,
		 const uint64_t *inlined, unsigned flags, struct pt_fp_acc *acc)
{
	struct pt_box d;
	int g;

	reads_one(fp, stage, dims, inlined, flags, acc);
	if (!inlined)
		return;
	/* An inlined Func is read only by Funcs after it, so once the
	 * highest pending one is evaluated nothing adds to its box. */
	while ((g = pop_pending(acc)) >= 0) {
		int st = fp->nodes[g].first_stage;

		pt_fp_stage_dims(fp, st, &acc->box[g], &d);
		reads_one(fp, st, &d, inlined, flags & ~(unsigned)PT_FP_SELF,
			  acc);
	}
}

void pt_fp_root_regions(const struct pt_fp *fp, struct pt_fp_acc *acc,
			struct pt_box *out)
{
	struct pt_box d;
	int f, s;

	pt_fp_acc_clear(acc);
	for (f = fp->nfuncs - 1; f >= 0; f--) {
		const struct fp_node *n = &fp->nodes[f];
		const struct pt_box *got = pt_fp_acc_get(acc, f);

		if (n->is_output || !got)
			pt_fp_acc_union(acc, f, &n->region, n->ndims);
		out[f] = acc->box[f];
		for (s = 0; s < n->nstages; s++) {
			pt_fp_stage_dims(fp, n->first_stage + s, &out[f], &d);
			reads_one(fp, n->first_stage + s, &d, NULL, 0, acc);
		}
	}
}
