/* pt_gbt.c: gradient-boosted regression trees (see pt_gbt.h, doc/gbt.md).
 *
 * Fitting. Rows of weight 0 are dropped first; the others are numbered
 * 0..m-1 ("positions") in row order. Each feature's positions are sorted
 * once per fit by value, with a stable radix sort on the order-preserving
 * bits of the doubles (so equal values keep row order), and the top bit of
 * an entry marks where a new distinct value starts. A tree grows level by
 * level: each position knows its node at the current level (-1: out of the
 * subsample, or already in a leaf), and one pass over a feature's sorted
 * list advances the left-hand sums of every node of the level at once,
 * scoring a split each time a node's value changes (or passing over the
 * entries a bound proves cannot win, see the scans). A level therefore
 * costs O(m d) sequential reads, whatever its number of nodes, and sums
 * in a fixed order, which keeps fits bit-reproducible. With subsampling,
 * the lists are first cut down to the tree's rows.
 *
 * Before a level is scanned, the residuals are centered on their node's
 * mean: the gains are then differences of numbers of the size of the
 * node's squared error, not of its squared mean.
 *
 * Prediction. All trees share one array of 16-byte nodes laid out breadth
 * first, a split's two children next to each other, so a step is
 * `i = next + 2 * (x[f] > threshold)`, with node indices counted in
 * 8-byte units (2 per node) so that they scale in the addressing modes.
 * A leaf points at itself with an infinite threshold: each tree is walked
 * exactly its depth times, with no branch that depends on the data, and
 * several trees are walked at once to hide the latency of each step.
 */
#include "protune/pt_gbt.h"

#include "../common/pt_text.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gbt_node {
	double thr;     /* a leaf: +inf */
	uint32_t f;     /* a leaf: 0 */
	uint32_t next;  /* 2 * the left child's index (the right one is the
			 * next node); a leaf: 2 * its own index */
};

struct pt_gbt {
	int d, ntrees;
	double base;
	struct gbt_node *node;
	double *val;          /* per node: a leaf's value, 0 for a split */
	size_t nnodes, alloc;
	int32_t *root;        /* per tree: its first node */
	unsigned char *depth; /* per tree: the splits on its longest path */
	double *imp;          /* d */
};

static int grow_nodes(struct pt_gbt *g, size_t extra)
{
	struct gbt_node *nn;
	double *nv;
	size_t cap;

	if (g->nnodes + extra <= g->alloc)
		return 0;
	if (g->nnodes + extra > INT32_MAX)
		return PT_EINVAL;
	cap = g->alloc ? g->alloc : 256;
	while (cap < g->nnodes + extra)
		cap *= 2;
	if (!(nn = realloc(g->node, cap * sizeof(*nn))))
		return PT_ENOMEM;
	g->node = nn;
	if (!(nv = realloc(g->val, cap * sizeof(*nv))))
		return PT_ENOMEM;
	g->val = nv;
	g->alloc = cap;
	return 0;
}

static struct pt_gbt *gbt_new(int d, int ntrees, double base)
{
	struct pt_gbt *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->d = d;
	g->ntrees = 0;
	g->base = base;
	g->root = malloc(((size_t)ntrees + 1) * sizeof(*g->root));
	g->depth = malloc((size_t)ntrees + 1);
	g->imp = calloc((size_t)d, sizeof(*g->imp));
	if (!g->root || !g->depth || !g->imp) {
		pt_gbt_free(g);
		return NULL;
	}
	return g;
}

void pt_gbt_free(struct pt_gbt *g)
{
	if (!g)
		return;
	free(g->node);
	free(g->val);
	free(g->root);
	free(g->depth);
	free(g->imp);
	free(g);
}

int pt_gbt_dims(const struct pt_gbt *g)
{
	return g->d;
}

int pt_gbt_ntrees(const struct pt_gbt *g)
{
	return g->ntrees;
}

void pt_gbt_importance(const struct pt_gbt *g, double *imp)
{
	memcpy(imp, g->imp, (size_t)g->d * sizeof(*imp));
}

/* One step down from node i (in 8-byte units, see above). */
static inline uint32_t step(const char *base, uint32_t i, const double *x)
{
	const struct gbt_node *nd =
		(const struct gbt_node *)(base + (size_t)i * 8);

	return nd->next + 2 * (x[nd->f] > nd->thr);
}

static double tree_value(const struct pt_gbt *g, int t, const double *x)
{
	const char *base = (const char *)g->node;
	uint32_t i = 2 * (uint32_t)g->root[t];
	int k;

	for (k = g->depth[t]; k > 0; k--)
		i = step(base, i, x);
	return g->val[i / 2];
}

static inline int max4(int a, int b, int c, int d)
{
	a = b > a ? b : a;
	c = d > c ? d : c;
	return c > a ? c : a;
}

/* Eight trees at a time, in named variables: an array would live on the
 * stack and put a store and a load in every step's latency. */
double pt_gbt_predict(const struct pt_gbt *g, const double *x)
{
	const char *base = (const char *)g->node;
	const int32_t *root = g->root;
	const unsigned char *dp = g->depth;
	double sum = g->base;
	int t, k;

	for (t = 0; t + 8 <= g->ntrees; t += 8) {
		uint32_t a = 2 * (uint32_t)root[t];
		uint32_t b = 2 * (uint32_t)root[t + 1];
		uint32_t c = 2 * (uint32_t)root[t + 2];
		uint32_t d = 2 * (uint32_t)root[t + 3];
		uint32_t e = 2 * (uint32_t)root[t + 4];
		uint32_t f = 2 * (uint32_t)root[t + 5];
		uint32_t h = 2 * (uint32_t)root[t + 6];
		uint32_t i = 2 * (uint32_t)root[t + 7];
		int dep = max4(max4(dp[t], dp[t + 1], dp[t + 2], dp[t + 3]),
			       dp[t + 4], dp[t + 5], max4(dp[t + 6], dp[t + 7],
							  0, 0));

		for (k = 0; k < dep; k++) {
			a = step(base, a, x);
			b = step(base, b, x);
			c = step(base, c, x);
			d = step(base, d, x);
			e = step(base, e, x);
			f = step(base, f, x);
			h = step(base, h, x);
			i = step(base, i, x);
		}
		sum += g->val[a / 2];
		sum += g->val[b / 2];
		sum += g->val[c / 2];
		sum += g->val[d / 2];
		sum += g->val[e / 2];
		sum += g->val[f / 2];
		sum += g->val[h / 2];
		sum += g->val[i / 2];
	}
	for (; t < g->ntrees; t++)
		sum += tree_value(g, t, x);
	return sum;
}

/* --- a tree under construction -------------------------------------------- */

/* Nodes are numbered breadth first and a split's children get consecutive
 * numbers, as in the ensemble, so adding a tree is a copy. */
struct tnode {
	int left;       /* -1: a leaf */
	int f;
	double thr;     /* a split's threshold, or a leaf's value */
};

struct tree {
	struct tnode *n;
	int len, alloc;
	int depth;
};

static int tree_add(struct tree *tr, int count)
{
	if (tr->len + count > tr->alloc) {
		int cap = tr->alloc ? tr->alloc : 64;
		struct tnode *nn;

		while (cap < tr->len + count)
			cap *= 2;
		if (!(nn = realloc(tr->n, (size_t)cap * sizeof(*nn))))
			return PT_ENOMEM;
		tr->n = nn;
		tr->alloc = cap;
	}
	tr->len += count;
	return 0;
}

/* Append tree `tr` (valid) to the ensemble as tree number g->ntrees. */
static int add_tree(struct pt_gbt *g, const struct tree *tr)
{
	int32_t first = (int32_t)g->nnodes;
	int i, ret = grow_nodes(g, (size_t)tr->len);

	if (ret)
		return ret;
	for (i = 0; i < tr->len; i++) {
		struct gbt_node *nd = &g->node[first + i];

		if (tr->n[i].left < 0) {
			nd->thr = INFINITY;
			nd->f = 0;
			nd->next = 2 * (uint32_t)(first + i);
			g->val[first + i] = tr->n[i].thr;
		} else {
			nd->thr = tr->n[i].thr;
			nd->f = (uint32_t)tr->n[i].f;
			nd->next = 2 * (uint32_t)(first + tr->n[i].left);
			g->val[first + i] = 0;
		}
	}
	g->nnodes += (size_t)tr->len;
	g->root[g->ntrees] = first;
	g->depth[g->ntrees] = (unsigned char)tr->depth;
	g->ntrees++;
	return 0;
}

/* --- fitting -------------------------------------------------------------- */

#define NEWVAL 0x80000000u  /* in a sorted entry: a new distinct value */
#define POSMASK 0x7fffffffu

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Unsigned keys in the order of the (finite) doubles; -0 and 0 are one. */
static uint64_t sort_key(double v)
{
	uint64_t b;

	if (v == 0)
		v = 0;
	memcpy(&b, &v, sizeof(b));
	return b >> 63 ? ~b : b | UINT64_C(1) << 63;
}

/* Stable LSD radix sort of key[] with idx[] alongside; k2 and i2 are
 * scratch of the same size. Digits that all keys share are skipped. */
static void radix_sort(uint64_t *key, uint32_t *idx, uint64_t *k2,
		       uint32_t *i2, size_t m)
{
	static const int ndig = 8;
	size_t count[8][256], i, sum, c;
	uint64_t *ks = key, *kd = k2, *kt;
	uint32_t *is = idx, *id = i2, *it;
	int dg, b;

	memset(count, 0, sizeof(count));
	for (i = 0; i < m; i++)
		for (dg = 0; dg < ndig; dg++)
			count[dg][(key[i] >> (8 * dg)) & 255]++;
	for (dg = 0; dg < ndig; dg++) {
		int shift = 8 * dg;

		if (count[dg][(key[0] >> shift) & 255] == m)
			continue;
		for (b = 0, sum = 0; b < 256; b++) {
			c = count[dg][b];
			count[dg][b] = sum;
			sum += c;
		}
		for (i = 0; i < m; i++) {
			size_t at = count[dg][(ks[i] >> shift) & 255]++;

			kd[at] = ks[i];
			id[at] = is[i];
		}
		kt = ks, ks = kd, kd = kt;
		it = is, is = id, id = it;
	}
	if (ks != key) {
		memcpy(key, ks, m * sizeof(*key));
		memcpy(idx, is, m * sizeof(*idx));
	}
}

/* Per node of the level being split. */
struct slot {
	int node;               /* in the tree */
	uint32_t cnt;           /* rows */
	double w, s, q;         /* sums of w, w r (then w c), w c^2 (c: r
				 * centered on the node's mean) */
	double mean;
	double cm, wmax;        /* the largest |w c| and w */
	double best;            /* the best split's score */
	int bf;                 /* its feature, -1: none */
	uint32_t blo, bhi;      /* the positions on either side of it */
	int child;              /* the left child's slot at the next level */
	int splits;             /* it has rows enough to split, and not all
				 * of the same residual */
};

/* One node during a scan: its running sums up to the current entry and
 * how many of its next entries can be passed over (see the scans), what
 * every entry reads and writes, in 32 bytes... */
struct run {
	double s, w;            /* sums of w c and w */
	uint32_t cnt, lastk;    /* rows; the index of its last entry */
	uint32_t skip;          /* entries to pass without scoring */
	uint32_t pad;
};

/* ... and what only scoring a split reads: what the split must satisfy,
 * the node's totals and its best score so far. */
struct acc {
	uint32_t lo, span;      /* a split leaves cnt rows on the left with
				 * cnt - lo <= span (unsigned) */
	double tw, ts;          /* the totals (tw: rows when unit) */
	double best, bestx;     /* the best score, and less 2^-50 of it */
	double s2w;             /* ts^2 / tw: a score less it is a gain */
	double dstep;           /* the most an entry changes |sl tw - ts wl| */
	double wmax;            /* the largest weight */
};

struct fit {
	const double *X;
	int d;
	size_t m;               /* positions */
	uint32_t *row;          /* position -> row */
	double *wt;             /* position -> weight */
	double *res;            /* position -> residual */
	uint32_t *ord;          /* d sorted lists of m entries */
	uint32_t *bag;          /* the same, of the subsample's nbag */
	const uint32_t *list;   /* the lists scanned: ord or bag */
	size_t len;             /* their length */
	int32_t *slot;          /* position -> slot at this level, or < 0 */
	int32_t *node;          /* position -> its node in the tree (in the
				 * subsample), or -1 */
	double *wc;             /* position -> w times the residual
				 * centered on its node's mean */
	int unit;               /* every weight is 1 */
	uint32_t *perm;         /* subsampling */
	unsigned char *dense;   /* per feature: most values distinct */
	struct slot *sl, *sl2;
	struct run *run;        /* NDUMMY dummy nodes, then one per slot */
	struct acc *acc;        /* the same */
	int nsl, slalloc;
	int min_leaf;
	double *imp;
	struct tree tr;
	uint64_t rng;
};

static double xval(const struct fit *F, uint32_t pos, int f)
{
	return F->X[(size_t)F->row[pos] * (size_t)F->d + (size_t)f];
}

/* The slot of a row in no node: one of NDUMMY, so that the dummy nodes'
 * sums in the scans make several short chains rather than one long. */
#define NDUMMY 4

static int32_t dead(size_t j)
{
	return -1 - (int32_t)(j & (NDUMMY - 1));
}

/* F->bag: the sorted lists of the rows in the subsample (slot 0), with
 * their new-value marks redone. Branch-free: every entry is written, and
 * the write position advances past the kept ones only. */
static void bag_lists(struct fit *F, size_t nbag)
{
	const int32_t *slot = F->slot;
	size_t k, m = F->m;
	int f;

	for (f = 0; f < F->d; f++) {
		const uint32_t *o = F->ord + (size_t)f * m;
		uint32_t *b = F->bag + (size_t)f * nbag, pend = 0;
		size_t w = 0;

		for (k = 0; k < m; k++) {
			uint32_t e = o[k], pos = e & POSMASK;
			uint32_t in = slot[pos] == 0;

			pend |= e & NEWVAL;
			b[w] = pos | pend;
			w += in;
			pend &= in - 1;
		}
	}
}

static int presort(struct fit *F)
{
	size_t m = F->m, j, nv;
	uint64_t *key = malloc(m * sizeof(*key)), *k2 = malloc(m * sizeof(*k2));
	uint32_t *i2 = malloc(m * sizeof(*i2));
	int f, ret = PT_ENOMEM;

	if (!key || !k2 || !i2)
		goto out;
	for (f = 0; f < F->d; f++) {
		uint32_t *o = F->ord + (size_t)f * m;

		for (j = 0; j < m; j++) {
			key[j] = sort_key(xval(F, (uint32_t)j, f));
			o[j] = (uint32_t)j;
		}
		radix_sort(key, o, k2, i2, m);
		for (j = 1, nv = 1; j < m; j++)
			if (key[j] != key[j - 1]) {
				o[j] |= NEWVAL;
				nv++;
			}
		F->dense[f] = nv > m / 3;
	}
	ret = 0;
out:
	free(key);
	free(k2);
	free(i2);
	return ret;
}

static int reserve_slots(struct fit *F, int n)
{
	struct slot *a, *b;
	struct acc *c;
	struct run *r;
	int cap;

	if (n <= F->slalloc)
		return 0;
	cap = F->slalloc ? F->slalloc : 16;
	while (cap < n)
		cap *= 2;
	a = realloc(F->sl, (size_t)cap * sizeof(*a));
	if (a)
		F->sl = a;
	b = realloc(F->sl2, (size_t)cap * sizeof(*b));
	if (b)
		F->sl2 = b;
	c = realloc(F->acc, ((size_t)cap + NDUMMY) * sizeof(*c));
	if (c)
		F->acc = c;
	r = realloc(F->run, ((size_t)cap + NDUMMY) * sizeof(*r));
	if (r)
		F->run = r;
	if (!a || !b || !c || !r)
		return PT_ENOMEM;
	F->slalloc = cap;
	return 0;
}

/* The scans. A split between a node's previous value and its current
 * one scores sl^2/wl + sr^2/wr. Computing that needs two divisions, which
 * dominated the scan; a cheap test without them, num > bestx * den (num
 * and den: the score's numerator and denominator over one fraction,
 * bestx: the best score less 2^-50 of it), lets through every split whose
 * score could beat the best and few others, and only those are scored
 * (with one division). So the outcome is that of comparing the scores
 * themselves: of equal scores the first found is kept.
 *
 * Most splits of a continuous feature are far from the best, and a bound
 * tells how far: with W, S the node's totals, the gain of a split (its
 * score less S^2/W) is u^2 / (W h(wl)), u = sl W - S wl, h(wl) = wl (W -
 * wl). Each entry changes |u| by at most D = max|w c| W + |S| max w, and h
 * is concave, so over the next j entries the gain stays below
 * (|u| + j D)^2 / (W min(h(wl), h(wl + j max w))). skip_len() finds the
 * largest j for which that is below the best gain, with margins (2^-20)
 * far above the rounding errors of the sums (below 2^-29 for 2^23 rows),
 * and the scan passes over that many of the node's entries without
 * scoring them: they could not have won. (The best only grows, so the
 * count stays valid.)
 *
 * The row counts are checked with one unsigned comparison, cnt - lo <=
 * span (lo = min_leaf, span = the node's rows - 2 min_leaf). Rows in no
 * node (slot < 0) add to dummy nodes (acc[-NDUMMY..-1]) whose lo makes
 * it fail always, so that they cost no branch. `unit`: every weight is 1;
 * it is a constant at each call, so that the compiler makes a version
 * without the weights. */

#define SKIP_EPS 0x1p-20
#define BEST_MARGIN (1 - 0x1p-50)

/* The scans are made in two versions each, which only works when they
 * are inlined at their calls with `unit` constant. */
#if defined(__GNUC__)
#define SCAN_INLINE inline __attribute__((always_inline))
#else
#define SCAN_INLINE inline
#endif

/* How many of a node's next entries cannot make a better split than its
 * best, from the left-hand sums sl, wl before the current one. Two bounds
 * on j: (|u| + j D)^2 < G W h(wl) gives j1; (|u| + j D)^2 < G W h(wl + j
 * wmax), a quadratic in j negative at 0, gives j2 (its positive root);
 * below both, the gain bound is below the best gain G. */
static uint32_t skip_len(const struct acc *a, double sl, double wl)
{
	double W = a->tw, D = a->dstep, wm = a->wmax;
	double gw = (a->best - a->s2w) * (1 - SKIP_EPS) * W;
	double u = fabs(sl * W - a->ts * wl) * (1 + SKIP_EPS);
	double h0 = wl * (W - wl), t = gw * h0, j1, j2, qa, qb, qc, disc;

	if (!(gw > 0) || !(D > 0) || !(h0 > 0) || !(t > u * u) ||
	    !isfinite(t))
		return 0;
	j1 = (sqrt(t) - u) / D;
	qa = D * D + gw * wm * wm;
	qb = 2 * u * D - gw * wm * (W - 2 * wl);
	qc = u * u - t;
	disc = qb * qb - 4 * qa * qc;
	if (!isfinite(disc))
		return 0;
	/* the root that does not cancel */
	j2 = qb > 0 ? -2 * qc / (qb + sqrt(disc)) :
		(sqrt(disc) - qb) / (2 * qa);
	j1 = floor((j1 < j2 ? j1 : j2) * (1 - SKIP_EPS));
	if (!(j1 >= 1))
		return 0;
	return j1 < (double)(1u << 30) ? (uint32_t)j1 : 1u << 30;
}

/* Score the split that passed the cheap test; 1 if it is the best. */
static inline int better(double num, double den, double *best,
			 double *bestx)
{
	double score = num / den;

	if (!(score > *best))
		return 0;
	*best = score;
	*bestx = score * BEST_MARGIN;
	return 1;
}

static inline void note_best(struct fit *F, int s, double best, int f,
			     uint32_t lo, uint32_t hi)
{
	struct slot *sp = &F->sl[s];

	sp->best = best;
	sp->bf = f;
	sp->blo = lo;
	sp->bhi = hi;
}

/* Set up the scan of slot sp (NULL: a dummy). */
static void acc_init(struct acc *a, const struct slot *sp, uint32_t ml)
{
	memset(a, 0, sizeof(*a));
	if (!sp || !sp->splits) {
		a->lo = UINT32_MAX / 2;
		return;
	}
	a->lo = ml;
	a->span = sp->cnt - 2 * ml;
	a->best = sp->best;
	a->bestx = a->best * BEST_MARGIN;
	a->tw = sp->w;
	a->ts = sp->s;
	a->s2w = sp->s * sp->s / sp->w;
	a->wmax = sp->wmax;
	a->dstep = (sp->cm * sp->w + fabs(sp->s) * sp->wmax) *
		   (1 + SKIP_EPS);
}

/* Several nodes: their running sums live in run[], the rest in acc[]. */
static SCAN_INLINE void scan_many(struct fit *F, int f, const int unit,
				  const int skipping)
{
	const uint32_t *o = F->list + (size_t)f * F->len;
	const int32_t *slot = F->slot;
	const double *wc = F->wc, *wt = F->wt;
	struct run *run = F->run + NDUMMY;
	struct acc *acc = F->acc + NDUMMY;
	uint32_t knew = 0, ml = (uint32_t)F->min_leaf;
	uint32_t k, m = (uint32_t)F->len;
	int i;

	for (i = -NDUMMY; i < F->nsl; i++) {
		acc_init(&acc[i], i < 0 ? NULL : &F->sl[i], ml);
		memset(&run[i], 0, sizeof(run[i]));
		/* Nodes that do not split skip everything (2^32 - 1 is
		 * more entries than a list holds). */
		if (i < 0 || !F->sl[i].splits)
			run[i].skip = UINT32_MAX;
	}
	for (k = 0; k < m; k++) {
		uint32_t e = o[k], pos = e & POSMASK;
		int32_t sn = slot[pos];
		struct run *r = &run[sn];
		uint32_t skip = skipping ? r->skip : 0, nz = skip != 0;

		/* One comparison, nearly never true: lastk, pushed beyond
		 * any knew while skipping (a branch on the skip count alone
		 * would go both ways as the nodes alternate). */
		knew = e & NEWVAL ? k : knew;
		if (skipping)
			r->skip = skip - nz;
		if ((r->lastk | nz << 31) < knew) {
			struct acc *a = &acc[sn];
			double wl = unit ? (double)r->cnt : r->w;
			double wr = a->tw - wl, sr = a->ts - r->s;
			double num = r->s * r->s * wr + sr * sr * wl;
			double den = wl * wr;

			if ((r->cnt - a->lo <= a->span) &
			    (unit || wr > 0) & (num > a->bestx * den) &&
			    better(num, den, &a->best, &a->bestx))
				note_best(F, sn, a->best, f,
					  o[r->lastk] & POSMASK, pos);
			if (skipping)
				r->skip = skip_len(a, r->s, wl);
		}
		r->lastk = k;
		r->cnt++;
		if (!unit)
			r->w += wt[pos];
		r->s += wc[pos];
	}
}

/* One node (the root): its sums stay in registers. */
static SCAN_INLINE void scan_single(struct fit *F, int f, const int unit,
				    const int skipping)
{
	const uint32_t *o = F->list + (size_t)f * F->len;
	const int32_t *slot = F->slot;
	const double *wc = F->wc, *wt = F->wt;
	struct acc a;
	uint32_t knew = 0, lastk = 0, cnt = 0, skip = 0, nz;
	uint32_t ml = (uint32_t)F->min_leaf, span;
	double w = 0, s = 0, tw, ts, best, bestx;
	uint32_t k, m = (uint32_t)F->len;

	acc_init(&a, &F->sl[0], ml);
	span = a.span;
	tw = a.tw;
	ts = a.ts;
	best = a.best;
	bestx = a.bestx;
	for (k = 0; k < m; k++) {
		uint32_t e = o[k], pos = e & POSMASK;

		knew = e & NEWVAL ? k : knew;
		if (slot[pos] != 0)
			continue;
		nz = skip != 0;
		skip -= nz;
		if ((lastk | nz << 31) < knew) {
			double wl = unit ? (double)cnt : w;
			double wr = tw - wl, sr = ts - s;
			double num = s * s * wr + sr * sr * wl, den = wl * wr;

			if ((cnt - ml <= span) & (unit || wr > 0) &
			    (num > bestx * den) &&
			    better(num, den, &best, &bestx))
				note_best(F, 0, best, f, o[lastk] & POSMASK,
					  pos);
			if (skipping) {
				a.best = best;
				skip = skip_len(&a, s, wl);
			}
		}
		lastk = k;
		cnt++;
		if (!unit)
			w += wt[pos];
		s += wc[pos];
	}
}

/* One pass over feature f's sorted list: the best split of every slot
 * that splits. Skipping pays where most entries are a new value; where
 * few are, its bookkeeping costs more than the scores it saves. */
static void scan_feature(struct fit *F, int f)
{
	int many = F->nsl > 1, skip = F->dense[f];

	if (many && F->unit && skip)
		scan_many(F, f, 1, 1);
	else if (many && F->unit)
		scan_many(F, f, 1, 0);
	else if (many && skip)
		scan_many(F, f, 0, 1);
	else if (many)
		scan_many(F, f, 0, 0);
	else if (F->unit && skip)
		scan_single(F, f, 1, 1);
	else if (F->unit)
		scan_single(F, f, 1, 0);
	else if (skip)
		scan_single(F, f, 0, 1);
	else
		scan_single(F, f, 0, 0);
}

/* Between a < b, and a <= t < b, so that x <= t splits them as intended
 * even where the midpoint rounds to b. */
static double midpoint(double a, double b)
{
	double t = a * 0.5 + b * 0.5;

	return t >= a && t < b ? t : a;
}

/* Grow one tree on the positions of slot 0 (the others are at -1). */
static int grow_tree(struct fit *F, const struct pt_gbt_params *p)
{
	struct tree *tr = &F->tr;
	size_t j, m = F->m;
	int level, i, f, ret;

	tr->len = 0;
	tr->depth = 0;
	if ((ret = tree_add(tr, 1)) || (ret = reserve_slots(F, 1)))
		return ret;
	F->nsl = 1;
	F->sl[0].node = 0;
	for (level = 0;; level++) {
		int nsplit = 0, nnext = 0;

		for (i = 0; i < F->nsl; i++) {
			F->sl[i].cnt = 0;
			F->sl[i].w = F->sl[i].s = F->sl[i].q = 0;
			F->sl[i].cm = F->sl[i].wmax = 0;
		}
		for (j = 0; j < m; j++) {
			int32_t s = F->slot[j];

			if (s < 0)
				continue;
			F->sl[s].cnt++;
			F->sl[s].w += F->wt[j];
			F->sl[s].s += F->wt[j] * F->res[j];
		}
		for (i = 0; i < F->nsl; i++) {
			struct slot *s = &F->sl[i];

			s->mean = s->s / s->w;
			tr->n[s->node].left = -1;
			tr->n[s->node].f = 0;
			tr->n[s->node].thr = p->shrinkage * s->mean;
			s->s = 0;
			s->best = -1;
			s->bf = -1;
		}
		if (level == p->max_depth)
			break;
		for (j = 0; j < m; j++) {
			int32_t s = F->slot[j];
			double c;

			if (s < 0) {
				F->wc[j] = 0;
				continue;
			}
			c = F->res[j] - F->sl[s].mean;
			F->wc[j] = F->wt[j] * c;
			F->sl[s].s += F->wt[j] * c;
			F->sl[s].q += F->wt[j] * c * c;
			if (fabs(F->wc[j]) > F->sl[s].cm)
				F->sl[s].cm = fabs(F->wc[j]);
			if (F->wt[j] > F->sl[s].wmax)
				F->sl[s].wmax = F->wt[j];
		}
		for (i = 0; i < F->nsl; i++) {
			F->sl[i].splits = F->sl[i].cnt >=
				2 * (uint32_t)p->min_leaf && F->sl[i].q > 0;
			nsplit += F->sl[i].splits;
		}
		if (!nsplit)
			break;
		for (f = 0; f < F->d; f++)
			scan_feature(F, f);

		/* Keep the splits that beat the rounding error of the sums. */
		for (i = 0; i < F->nsl; i++) {
			struct slot *s = &F->sl[i];
			double gain = s->best - s->s * s->s / s->w;
			double tol = s->q * 4 * DBL_EPSILON * s->cnt;
			struct tnode *nd;

			s->child = -1;
			if (s->bf < 0 || !(gain > tol))
				continue;
			if ((ret = tree_add(tr, 2)))
				return ret;
			nd = &tr->n[s->node];
			nd->left = tr->len - 2;
			nd->f = s->bf;
			nd->thr = midpoint(xval(F, s->blo, s->bf),
					   xval(F, s->bhi, s->bf));
			F->imp[s->bf] += gain;
			s->child = nnext;
			nnext += 2;
		}
		if (!nnext)
			break;
		tr->depth = level + 1;
		if ((ret = reserve_slots(F, nnext)))
			return ret;
		for (i = 0; i < F->nsl; i++) {
			const struct slot *s = &F->sl[i];

			if (s->child < 0)
				continue;
			F->sl2[s->child].node = tr->n[s->node].left;
			F->sl2[s->child + 1].node = tr->n[s->node].left + 1;
		}
		for (j = 0; j < m; j++) {
			int32_t s = F->slot[j], right;
			const struct slot *sp;
			const struct tnode *nd;

			if (s < 0)
				continue;
			sp = &F->sl[s];
			if (sp->child < 0) {
				F->slot[j] = dead(j);
				continue;
			}
			nd = &tr->n[sp->node];
			right = xval(F, (uint32_t)j, nd->f) > nd->thr;
			F->slot[j] = sp->child + right;
			F->node[j] = nd->left + right;
		}
		{
			struct slot *t = F->sl;

			F->sl = F->sl2;
			F->sl2 = t;
		}
		F->nsl = nnext;
	}
	return 0;
}

static int check_inputs(const double *X, size_t n, int d, const double *y,
			const double *w, const struct pt_gbt_params *p,
			struct pt_error *err)
{
	size_t i;
	int c;

	if (!X || !y)
		return pt_error_set(err, PT_EINVAL, "gbt: no data");
	if (n == 0 || n > PT_GBT_MAX_ROWS)
		return pt_error_set(err, PT_EINVAL, "gbt: %zu rows (expected "
				    "1 to %d)", n, PT_GBT_MAX_ROWS);
	if (d < 1 || d > PT_GBT_MAX_DIMS)
		return pt_error_set(err, PT_EINVAL, "gbt: %d features "
				    "(expected 1 to %d)", d, PT_GBT_MAX_DIMS);
	if (p->trees < 0 || p->trees > PT_GBT_MAX_TREES)
		return pt_error_set(err, PT_EINVAL, "gbt: %d trees", p->trees);
	if (p->max_depth < 0 || p->max_depth > PT_GBT_MAX_DEPTH)
		return pt_error_set(err, PT_EINVAL, "gbt: depth %d (expected "
				    "0 to %d)", p->max_depth, PT_GBT_MAX_DEPTH);
	if (p->min_leaf < 1)
		return pt_error_set(err, PT_EINVAL, "gbt: min_leaf %d "
				    "(expected at least 1)", p->min_leaf);
	if (!(p->shrinkage > 0) || !isfinite(p->shrinkage))
		return pt_error_set(err, PT_EINVAL, "gbt: shrinkage %g "
				    "(expected > 0)", p->shrinkage);
	if (!(p->subsample > 0 && p->subsample <= 1))
		return pt_error_set(err, PT_EINVAL, "gbt: subsample %g "
				    "(expected in (0, 1])", p->subsample);
	for (i = 0; i < n; i++) {
		const double *x = X + i * (size_t)d;

		if (w && (!isfinite(w[i]) || w[i] < 0))
			return pt_error_set(err, PT_EINVAL, "gbt: weight of "
					    "row %zu is %g", i, w[i]);
		if (!isfinite(y[i]) || fabs(y[i]) > PT_GBT_MAX_TARGET)
			return pt_error_set(err, PT_EINVAL, "gbt: target of "
					    "row %zu is %g", i, y[i]);
		for (c = 0; c < d; c++)
			if (!isfinite(x[c]))
				return pt_error_set(err, PT_EINVAL, "gbt: row "
						    "%zu column %d is %g", i,
						    c, x[c]);
	}
	return 0;
}

int pt_gbt_fit(const double *X, size_t n, int d, const double *y,
	       const double *w, const struct pt_gbt_params *p,
	       struct pt_gbt **out, struct pt_error *err)
{
	static const struct pt_gbt_params defaults = PT_GBT_PARAMS_INIT;
	struct fit F;
	struct pt_gbt *g = NULL;
	double sw = 0, swy = 0, wmax = 0;
	size_t i, j, m = 0, nbag;
	int t, f, ret, wexp = 0;

	*out = NULL;
	if (!p)
		p = &defaults;
	if ((ret = check_inputs(X, n, d, y, w, p, err)))
		return ret;
	memset(&F, 0, sizeof(F));
	F.X = X;
	F.d = d;
	F.min_leaf = p->min_leaf;
	F.rng = p->seed;
	for (i = 0; i < n; i++)
		if (!w || w[i] > 0)
			m++;
	ret = PT_ENOMEM;
	F.row = malloc((m ? m : 1) * sizeof(*F.row));
	F.wt = malloc((m ? m : 1) * sizeof(*F.wt));
	if (!F.row || !F.wt)
		goto fail;
	for (i = 0, j = 0; i < n; i++) {
		if (w && !(w[i] > 0))
			continue;
		F.row[j] = (uint32_t)i;
		F.wt[j] = w ? w[i] : 1;
		wmax = F.wt[j] > wmax ? F.wt[j] : wmax;
		j++;
	}
	F.m = m;
	/* Weights above 1 are scaled by a power of 2 to at most 1 (which
	 * changes no rounding), so that the sums of the scans stay far from
	 * overflowing; the importances are scaled back. */
	if (wmax > 1) {
		frexp(wmax, &wexp);
		for (j = 0; j < m; j++)
			F.wt[j] = ldexp(F.wt[j], -wexp);
	}
	for (j = 0; j < m; j++) {
		sw += F.wt[j];
		swy += F.wt[j] * y[F.row[j]];
	}
	F.unit = 1;
	for (j = 0; j < m; j++)
		if (F.wt[j] != 1)
			F.unit = 0;
	if (!(sw > 0)) {
		ret = pt_error_set(err, PT_EINVAL, "gbt: the weights sum to "
				   "0");
		goto fail_msg;
	}
	if (!(g = gbt_new(d, p->trees, swy / sw)))
		goto fail;
	F.imp = g->imp;
	F.res = malloc(m * sizeof(*F.res));
	F.ord = malloc(m * (size_t)d * sizeof(*F.ord));
	F.slot = malloc(m * sizeof(*F.slot));
	F.node = malloc(m * sizeof(*F.node));
	F.wc = malloc(m * sizeof(*F.wc));
	F.perm = malloc(m * sizeof(*F.perm));
	F.dense = malloc((size_t)d);
	if (!F.dense || !F.res || !F.ord || !F.slot || !F.node || !F.wc ||
	    !F.perm)
		goto fail;
	F.list = F.ord;
	F.len = m;
	if ((ret = presort(&F)))
		goto fail;
	for (j = 0; j < m; j++) {
		F.res[j] = y[F.row[j]] - g->base;
		F.perm[j] = (uint32_t)j;
	}
	nbag = m;
	if (p->subsample < 1) {
		nbag = (size_t)(p->subsample * (double)m + 0.5);
		nbag = nbag < 1 ? 1 : nbag > m ? m : nbag;
	}
	if (nbag < m) {
		/* (one entry more: bag_lists() writes one past its end) */
		if (!(F.bag = malloc((nbag * (size_t)d + 1) *
				     sizeof(*F.bag))))
			goto fail;
		F.list = F.bag;
		F.len = nbag;
	}
	for (t = 0; t < p->trees; t++) {
		if (nbag < m) {
			/* The first nbag of a partial Fisher-Yates shuffle,
			 * continued from the last tree's order. */
			for (j = 0; j < nbag; j++) {
				size_t k = j + (size_t)(splitmix64(&F.rng) %
							(uint64_t)(m - j));
				uint32_t tmp = F.perm[j];

				F.perm[j] = F.perm[k];
				F.perm[k] = tmp;
			}
			for (j = 0; j < m; j++) {
				F.slot[j] = dead(j);
				F.node[j] = -1;
			}
			for (j = 0; j < nbag; j++) {
				F.slot[F.perm[j]] = 0;
				F.node[F.perm[j]] = 0;
			}
			bag_lists(&F, nbag);
		} else {
			for (j = 0; j < m; j++)
				F.slot[j] = F.node[j] = 0;
		}
		if ((ret = grow_tree(&F, p)) || (ret = add_tree(g, &F.tr)))
			goto fail;
		/* The rows of the subsample know their leaf; the others walk
		 * the tree (by the same comparisons). */
		for (j = 0; j < m; j++)
			F.res[j] -= F.node[j] >= 0 ? F.tr.n[F.node[j]].thr :
				tree_value(g, t, X + (size_t)F.row[j] *
					   (size_t)d);
	}
	for (f = 0; f < d; f++)
		g->imp[f] = ldexp(g->imp[f], wexp);
	*out = g;
	g = NULL;
	ret = 0;
	goto done;
fail:
	if (ret == PT_EINVAL)   /* from grow_nodes() */
		ret = pt_error_set(err, ret, "gbt: more than %d nodes in all",
				   INT32_MAX);
	else
		ret = pt_error_set(err, ret, "gbt: %s", pt_strerror(ret));
fail_msg:
done:
	pt_gbt_free(g);
	free(F.row);
	free(F.wt);
	free(F.res);
	free(F.ord);
	free(F.bag);
	free(F.slot);
	free(F.node);
	free(F.wc);
	free(F.perm);
	free(F.dense);
	free(F.sl);
	free(F.sl2);
	free(F.acc);
	free(F.run);
	free(F.tr.n);
	return ret;
}

/* --- text ----------------------------------------------------------------- */

int pt_gbt_write(const struct pt_gbt *g, struct pt_strbuf *out)
{
	int t;

	if (pt_strbuf_addf(out, "gbt 1 %d %d %.17g\n", g->d, g->ntrees,
			   g->base))
		return PT_ENOMEM;
	for (t = 0; t < g->ntrees; t++) {
		int32_t first = g->root[t], i;
		int32_t end = t + 1 < g->ntrees ? g->root[t + 1] :
			(int32_t)g->nnodes;

		if (pt_strbuf_addf(out, "tree %d\n", (int)(end - first)))
			return PT_ENOMEM;
		for (i = first; i < end; i++) {
			const struct gbt_node *nd = &g->node[i];
			int32_t left = (int32_t)(nd->next / 2);
			int ret;

			if (left == i)
				ret = pt_strbuf_addf(out, "  leaf %.17g\n",
						     g->val[i]);
			else
				ret = pt_strbuf_addf(out, "  split %d %.17g "
						     "%d %d\n", (int)nd->f,
						     nd->thr,
						     (int)(left - first),
						     (int)(left + 1 - first));
			if (ret)
				return PT_ENOMEM;
		}
	}
	return 0;
}

/* A decimal number as "%.17g" writes them: -?D+(.D+)?(e[+-]?D+)? */
static int decimal_syntax(const char *s, size_t n)
{
	size_t i = 0, k;

	if (i < n && s[i] == '-')
		i++;
	for (k = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	if (i == k)
		return 0;
	if (i < n && s[i] == '.') {
		for (k = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == k)
			return 0;
	}
	if (i < n && s[i] == 'e') {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (k = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == k)
			return 0;
	}
	return i == n;
}

/* Take a finite double token. */
static int take_double(struct pt_text *t, double *out, const char *what)
{
	struct pt_tok tok;
	char buf[64], show[48], *end;
	size_t i;
	int ret = pt_text_tok(t, &tok, what), zero = 1;

	if (ret)
		return ret;
	if (tok.n >= sizeof(buf) || !decimal_syntax(tok.s, tok.n))
		return pt_text_error(t, "'%s' is not a decimal number "
				     "(expected %s)", pt_tok_show(&tok, show),
				     what);
	memcpy(buf, tok.s, tok.n);
	buf[tok.n] = '\0';
	*out = strtod(buf, &end);
	if (end != buf + tok.n)
		return pt_text_error(t, "'%s' is not a decimal number "
				     "(expected %s)", buf, what);
	for (i = 0; i < tok.n && buf[i] != 'e'; i++)
		if (buf[i] >= '1' && buf[i] <= '9')
			zero = 0;
	/* Subnormals are fine (they are written and must read back);
	 * overflow to infinity and underflow to zero are not. */
	if (!isfinite(*out) || (*out == 0 && !zero))
		return pt_text_error(t, "%s %s out of range", what, buf);
	return 0;
}

/* A tree as read, before it is checked and laid out. */
struct rtree {
	int *left, *right;      /* left < 0: a leaf */
	int *f;
	double *num;            /* threshold or value */
	int *order;             /* breadth-first order, then scratch */
	int *newidx;
	unsigned char *seen;
	int alloc;
};

static void rtree_release(struct rtree *r)
{
	free(r->left);
	free(r->right);
	free(r->f);
	free(r->num);
	free(r->order);
	free(r->newidx);
	free(r->seen);
}

static int rtree_grow(struct rtree *r, int n)
{
	int cap = r->alloc ? r->alloc : 64;
	void *p;

	if (n <= r->alloc)
		return 0;
	while (cap < n)
		cap *= 2;
#define GROW(field) \
	do { \
		if (!(p = realloc(r->field, (size_t)cap * sizeof(*r->field)))) \
			return PT_ENOMEM; \
		r->field = p; \
	} while (0)
	GROW(left);
	GROW(right);
	GROW(f);
	GROW(num);
	GROW(order);
	GROW(newidx);
	GROW(seen);
#undef GROW
	r->alloc = cap;
	return 0;
}

static int nomem(struct pt_text *t)
{
	return pt_error_set(t->err, PT_ENOMEM, "%s:%d: %s", t->name,
			    t->lineno, pt_strerror(PT_ENOMEM));
}

/* pt_text_error() about an earlier line. */
static int error_at(struct pt_text *t, int lineno, const char *msg, int a)
{
	int save = t->lineno, ret;

	t->lineno = lineno;
	ret = pt_text_error(t, msg, a);
	t->lineno = save;
	return ret;
}

/* Read the node lines of a tree of `nodes` nodes (its "tree" line at
 * `line0`), check that it is a proper tree, and add it to g. */
static int read_tree(struct pt_text *t, struct pt_gbt *g, struct rtree *r,
		     int nodes, int line0)
{
	int k, q, len, depth, lvl_end, ret;
	int32_t first;

	for (k = 0; k < nodes; k++) {
		int64_t v;

		if ((ret = rtree_grow(r, k + 1)))
			return nomem(t);
		if ((ret = pt_text_next(t)) < 0)
			return ret;
		if (ret == 0 || t->indent == 0)
			return pt_text_error(t, "tree has %d nodes, expected "
					     "%d", k, nodes);
		if (t->indent != 2)
			return pt_text_error(t, "unexpected indentation (a "
					     "node line has 2 spaces)");
		if (!pt_text_is(t, "split") && !pt_text_is(t, "leaf"))
			return pt_text_word(t, "split' or 'leaf");
		r->seen[k] = 0;
		if (pt_text_is(t, "leaf")) {
			(void)pt_text_word(t, "leaf");
			r->left[k] = r->right[k] = -1;
			r->f[k] = 0;
			if ((ret = take_double(t, &r->num[k],
					       "a leaf value")) ||
			    (ret = pt_text_end(t)))
				return ret;
			continue;
		}
		(void)pt_text_word(t, "split");
		if ((ret = pt_text_int(t, 0, g->d - 1, &v, "a feature")))
			return ret;
		r->f[k] = (int)v;
		if ((ret = take_double(t, &r->num[k], "a threshold")))
			return ret;
		if ((ret = pt_text_int(t, 0, nodes - 1, &v, "a child index")))
			return ret;
		r->left[k] = (int)v;
		if ((ret = pt_text_int(t, 0, nodes - 1, &v, "a child index")))
			return ret;
		r->right[k] = (int)v;
		if ((ret = pt_text_end(t)))
			return ret;
	}
	/* Breadth first from node 0; a node reached twice (or the root
	 * reached again) is a cycle or a shared subtree. */
	r->order[0] = 0;
	r->seen[0] = 1;
	len = 1;
	depth = 0;
	lvl_end = 1;
	for (q = 0; q < len; q++) {
		int i = r->order[q], c, side;

		if (q == lvl_end) {
			depth++;
			lvl_end = len;
		}
		if (r->left[i] < 0)
			continue;
		for (side = 0; side < 2; side++) {
			c = side ? r->right[i] : r->left[i];
			if (r->seen[c])
				return error_at(t, line0 + 1 + i, "node %d is "
						"reached twice", c);
			r->seen[c] = 1;
			r->order[len++] = c;
		}
		if (depth + 1 > 64)
			return error_at(t, line0 + 1 + i, "tree deeper than "
					"%d levels", 64);
	}
	for (k = 0; k < nodes; k++)
		if (!r->seen[k])
			return error_at(t, line0 + 1 + k, "node %d is not "
					"reached from node 0", k);
	/* Lay out as the fit does: breadth first, children together. */
	if (grow_nodes(g, (size_t)nodes))
		return error_at(t, line0, "too many nodes (at most %d in all)",
				INT32_MAX);
	first = (int32_t)g->nnodes;
	for (q = 0; q < nodes; q++)
		r->newidx[r->order[q]] = q;
	for (q = 0; q < nodes; q++) {
		int i = r->order[q];
		struct gbt_node *nd = &g->node[first + q];

		if (r->left[i] < 0) {
			nd->thr = INFINITY;
			nd->f = 0;
			nd->next = 2 * (uint32_t)(first + q);
			g->val[first + q] = r->num[i];
		} else {
			nd->thr = r->num[i];
			nd->f = (uint32_t)r->f[i];
			nd->next = 2 * (uint32_t)(first +
						  r->newidx[r->left[i]]);
			g->val[first + q] = 0;
		}
	}
	g->nnodes += (size_t)nodes;
	g->root[g->ntrees] = first;
	g->depth[g->ntrees] = (unsigned char)depth;
	g->ntrees++;
	return 0;
}

/* The line after tree `tree` (of `nodes` nodes) is another node line. */
static int too_many_nodes(struct pt_text *t, int tree, int nodes)
{
	if (t->indent == 2 && (pt_text_is(t, "split") || pt_text_is(t, "leaf")))
		return pt_text_error(t, "tree %d has more than %d nodes", tree,
				     nodes);
	return 0;
}

int pt_gbt_read(struct pt_text *t, struct pt_gbt **out)
{
	struct rtree r;
	struct pt_gbt *g = NULL;
	int64_t version, dims, ntrees, nodes = 0;
	double base;
	int k, ret;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	if ((ret = pt_text_next(t)) <= 0)
		return ret ? ret : pt_text_error(t, "expected 'gbt'");
	if (t->indent)
		return pt_text_error(t, "unexpected indentation (expected "
				     "'gbt')");
	if ((ret = pt_text_word(t, "gbt")) ||
	    (ret = pt_text_int(t, 0, INT32_MAX, &version, "a version")))
		return ret;
	if (version != 1)
		return pt_text_error(t, "gbt format version %lld, this protune "
				     "reads version 1", (long long)version);
	if ((ret = pt_text_int(t, 1, PT_GBT_MAX_DIMS, &dims,
			       "the number of features")) ||
	    (ret = pt_text_int(t, 0, PT_GBT_MAX_TREES, &ntrees,
			       "the number of trees")) ||
	    (ret = take_double(t, &base, "the base value")) ||
	    (ret = pt_text_end(t)))
		return ret;
	if (!(g = gbt_new((int)dims, (int)ntrees, base)))
		return nomem(t);
	for (k = 0; k < ntrees; k++) {
		int line0;

		if ((ret = pt_text_next(t)) < 0)
			goto fail;
		if (ret == 0) {
			ret = pt_text_error(t, "%d trees, expected %lld", k,
					    (long long)ntrees);
			goto fail;
		}
		if (k > 0 && (ret = too_many_nodes(t, k - 1, (int)nodes)))
			goto fail;
		if (t->indent) {
			ret = pt_text_error(t, "unexpected indentation "
					    "(expected 'tree')");
			goto fail;
		}
		if ((ret = pt_text_word(t, "tree")) ||
		    (ret = pt_text_int(t, 1, PT_GBT_MAX_NODES, &nodes,
				       "the number of nodes")) ||
		    (ret = pt_text_end(t)))
			goto fail;
		if (nodes % 2 == 0) {
			ret = pt_text_error(t, "a tree of %lld nodes (a "
					    "binary tree has an odd number)",
					    (long long)nodes);
			goto fail;
		}
		line0 = t->lineno;
		if ((ret = read_tree(t, g, &r, (int)nodes, line0)))
			goto fail;
	}
	/* The section ends after the last tree: give the next line back,
	 * unless it is one node too many. */
	if ((ret = pt_text_next(t)) < 0)
		goto fail;
	if (ret > 0) {
		if (ntrees > 0 && (ret = too_many_nodes(t, (int)ntrees - 1,
							(int)nodes)))
			goto fail;
		pt_text_unread(t);
	}
	rtree_release(&r);
	*out = g;
	return 0;
fail:
	rtree_release(&r);
	pt_gbt_free(g);
	return ret;
}

int pt_gbt_parse(const char *text, size_t len, const char *name,
		 struct pt_gbt **out, struct pt_error *err)
{
	struct pt_text t;
	int ret;

	pt_text_init(&t, text, len, name, err);
	ret = pt_gbt_read(&t, out);
	if (!ret && (ret = pt_text_next(&t)) != 0) {
		if (ret > 0)
			ret = pt_text_error(&t, "unexpected line after the "
					    "last tree");
		pt_gbt_free(*out);
		*out = NULL;
	}
	pt_text_release(&t);
	return ret;
}
