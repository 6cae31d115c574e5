/* pt_warm.c: warm starts (pt_warm.h, doc/tuning.md). */
#include "protune/pt_warm.h"

#include <stdlib.h>
#include <string.h>

struct fsig;

struct pt_warm {
	const struct pt_model *m, *old;
	const struct pt_sched *os;   /* the earlier schedule */
	const struct pt_space *sp;
	uint8_t (*ohash)[PT_WARM_HASH_BYTES]; /* a stored start: the earlier
					       * stages' hashes (old == m) */
	int stages, changed;
	unsigned char *kept, *open;  /* per Func of m */
	unsigned char *sig;          /* per Func: old_sig[] is set (kept, or
				      * changed but of the same shape) */
	struct fsig *old_sig;        /* per Func with sig: its earlier loops */
	/* pt_warm_pick()'s path (npath states), and a scratch state */
	unsigned char *path;
	int npath;
	struct pt_space_state *scratch;
};

/* --- agreement between two schedules' entries for one Func ------------- */

/* What a stage's loops are, in terms that later decisions do not rename:
 * the tile sizes along each original dim (the products of the constant
 * loops inside each loop of that dim, innermost out), the dim vectorized,
 * the dims of parallel and of unrolled loops, and the order of the loops
 * by dim (two schedules with the same tiles may nest them differently,
 * and the cost model may not tell them apart). Later decisions split levels (which
 * adds tile sizes) but never remove one, so a decision that agrees with
 * the earlier schedule has all its tile sizes there. */
#define SIG_MAX 48

struct sig {
	int n;
	int64_t size[SIG_MAX];
	int dim[SIG_MAX];
	int vdim;            /* -1 none */
	int npar;
	int par[8];
	int nunr;
	int unr[8];
	int nord;
	int ord[SIG_MAX];    /* the dims of the loops, innermost first */
};

/* The original dim a loop descends from: vN -> N, rN -> 1000 + N; -1
 * for another name. */
static int dim_of(const char *name)
{
	const char *p;
	int k = 0;

	if (!name || (name[0] != 'v' && name[0] != 'r') ||
	    name[1] < '0' || name[1] > '9')
		return -1;
	for (p = name + 1; *p >= '0' && *p <= '9' && k < 1000; p++)
		k = k * 10 + (*p - '0');
	return name[0] == 'r' ? 1000 + k : k;
}

static void sig_of(const struct pt_nest *ne, struct sig *g)
{
	int64_t cum[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	int cdim[8], nc = 0, i, k;

	memset(g, 0, sizeof(*g));
	g->vdim = -1;
	for (i = ne->nloops - 1; i >= 0; i--) {
		const struct pt_loop *l = &ne->loops[i];
		int d = dim_of(l->name);

		if (d < 0)
			continue;
		if (l->kind == PT_LOOP_VECTOR)
			g->vdim = d;
		if (l->kind == PT_LOOP_PARALLEL && g->npar < 8)
			g->par[g->npar++] = d;
		if (l->kind == PT_LOOP_UNROLL && g->nunr < 8)
			g->unr[g->nunr++] = d;
		if (g->nord < SIG_MAX)
			g->ord[g->nord++] = d;
		if (!l->const_extent || l->extent < 1)
			continue;
		for (k = 0; k < nc && cdim[k] != d; k++)
			;
		if (k == nc) {
			if (nc == 8)
				continue;
			cdim[nc++] = d;
		}
		cum[k] *= l->extent;
		if (g->n < SIG_MAX) {
			g->size[g->n] = cum[k];
			g->dim[g->n++] = d;
		}
	}
}

static int sig_agree(const struct sig *a, const struct sig *b)
{
	int i, j, score = 0;

	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n; j++)
			if (a->dim[i] == b->dim[j] && a->size[i] == b->size[j])
				break;
		score += j < b->n ? 2 : -1;
	}
	if (a->vdim >= 0 || b->vdim >= 0)
		score += a->vdim == b->vdim ? 2 : -1;
	for (i = 0; i < a->npar; i++) {
		for (j = 0; j < b->npar && b->par[j] != a->par[i]; j++)
			;
		score += j < b->npar ? 1 : -1;
	}
	for (i = 0; i < a->nunr; i++) {
		for (j = 0; j < b->nunr && b->unr[j] != a->unr[i]; j++)
			;
		score += j < b->nunr ? 1 : -1;
	}
	if (a->nord || b->nord)
		score += a->nord == b->nord &&
			 !memcmp(a->ord, b->ord,
				 (size_t)a->nord * sizeof(a->ord[0])) ? 1 : -1;
	return score;
}

static int sig_equal(const struct sig *a, const struct sig *b)
{
	return a->n == b->n && sig_agree(a, b) == sig_agree(b, b) &&
	       sig_agree(b, a) == sig_agree(a, a);
}

/* The tile computed per iteration of a site's loop: per dim, the
 * product of the constant loops inside it. */
struct site_sig {
	int func, n;
	int dim[8];
	int64_t size[8];
};

/* A Func's loops: one struct sig per stage, and its site's tile. */
struct fsig {
	enum pt_compute compute;
	int store_root;
	struct site_sig site, store;
	int nstages;
	struct sig *st;
};

static void site_of(const struct pt_model *m, const struct pt_sched *s,
		    const struct pt_site *at, struct site_sig *out)
{
	struct pt_nest ne;
	int i, k, found = 0;

	memset(out, 0, sizeof(*out));
	out->func = at->func;
	if (at->func < 0 || at->func >= m->nfuncs ||
	    pt_sched_nest(m, s, at->func, m->funcs[at->func].nstages - 1,
			  &ne, NULL))
		return;
	for (i = 0; i < ne.nloops; i++) {
		const struct pt_loop *l = &ne.loops[i];
		int d = dim_of(l->name);

		if (found && d >= 0 && l->const_extent) {
			for (k = 0; k < out->n && out->dim[k] != d; k++)
				;
			if (k == out->n) {
				if (k == 8)
					continue;
				out->dim[out->n] = d;
				out->size[out->n++] = 1;
			}
			out->size[k] *= l->extent;
		}
		if (l->name && at->loop && !strcmp(l->name, at->loop))
			found = 1;
	}
	free(ne.loops);
}

static int site_equal(const struct site_sig *a, const struct site_sig *b)
{
	int i, j;

	if (a->func != b->func || a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n; j++)
			if (a->dim[i] == b->dim[j] && a->size[i] == b->size[j])
				break;
		if (j == b->n)
			return 0;
	}
	return 1;
}

static void fsig_release(struct fsig *f)
{
	free(f->st);
	f->st = NULL;
}

static int fsig_of(const struct pt_model *m, const struct pt_sched *s, int f,
		   struct fsig *out)
{
	const struct pt_sched_func *sf = &s->funcs[f];
	int k;

	memset(out, 0, sizeof(*out));
	out->compute = sf->compute;
	out->store_root = sf->store_root;
	if (sf->compute == PT_COMPUTE_AT) {
		site_of(m, s, &sf->compute_at, &out->site);
		if (!sf->store_root)
			site_of(m, s, &sf->store_at, &out->store);
	}
	if (sf->compute == PT_COMPUTE_INLINE)
		return 0;
	out->nstages = m->funcs[f].nstages;
	if (!(out->st = calloc((size_t)out->nstages + 1, sizeof(*out->st))))
		return PT_ENOMEM;
	for (k = 0; k < out->nstages; k++) {
		struct pt_nest ne;

		if (pt_sched_nest(m, s, f, k, &ne, NULL))
			continue;
		sig_of(&ne, &out->st[k]);
		free(ne.loops);
	}
	return 0;
}

static int fsig_agree(const struct fsig *a, const struct fsig *b)
{
	int k, score = 0;

	if (a->compute != b->compute)
		score -= 6;
	else if (a->compute != PT_COMPUTE_AT)
		score += 6;
	else if (site_equal(&a->site, &b->site))
		score += 6;
	else
		score += a->site.func == b->site.func ? 1 : -2;
	if (a->compute == PT_COMPUTE_AT && b->compute == PT_COMPUTE_AT)
		score += a->store_root == b->store_root &&
			 (a->store_root ||
			  site_equal(&a->store, &b->store)) ? 1 : -1;
	for (k = 0; k < a->nstages && k < b->nstages; k++)
		score += sig_agree(&a->st[k], &b->st[k]);
	return score;
}

static int fsig_equal(const struct fsig *a, const struct fsig *b)
{
	int k;

	if (a->compute != b->compute || a->nstages != b->nstages ||
	    (a->compute == PT_COMPUTE_AT &&
	     (!site_equal(&a->site, &b->site) ||
	      a->store_root != b->store_root ||
	      (!a->store_root && !site_equal(&a->store, &b->store)))))
		return 0;
	for (k = 0; k < a->nstages; k++)
		if (!sig_equal(&a->st[k], &b->st[k]))
			return 0;
	return 1;
}

/* Whether stage k of m (at index s of Func f) hashes as its counterpart
 * in the earlier version. */
static int stage_same(const struct pt_warm *wm, int f, int s, int k)
{
	const struct pt_model *old = wm->old;

	if (wm->ohash)
		return !memcmp(wm->m->stages[k].local, wm->ohash[k],
			       PT_WARM_HASH_BYTES);
	return !memcmp(wm->m->stages[k].local,
		       old->stages[old->funcs[f].first_stage + s].local, 16);
}

static int func_kept(const struct pt_warm *wm, int f, int *nchanged)
{
	const struct pt_model *m = wm->m, *old = wm->old;
	const struct pt_func *fn = &m->funcs[f];
	int s, same = f < old->nfuncs && f < wm->os->nfuncs &&
		      old->funcs[f].nstages == fn->nstages;

	for (s = 0; s < fn->nstages; s++) {
		if (same && stage_same(wm, f, s, fn->first_stage + s))
			continue;
		same = 0;
		(*nchanged)++;
	}
	return same;
}

/* A Func that changed but has the earlier Func's name, stages and loop
 * dims: its earlier loops still make sense, and the first schedule takes
 * them over (the search is free to change them). */
static int func_similar(const struct pt_model *m, const struct pt_model *old,
			const struct pt_sched *os, int f)
{
	const struct pt_func *fn = &m->funcs[f], *of;
	int s;

	if (f >= old->nfuncs || f >= os->nfuncs)
		return 0;
	of = &old->funcs[f];
	if (strcmp(fn->label, of->label) || fn->nargs != of->nargs ||
	    fn->nstages != of->nstages)
		return 0;
	for (s = 0; s < fn->nstages; s++)
		if (m->stages[fn->first_stage + s].ndims !=
		    old->stages[of->first_stage + s].ndims)
			return 0;
	return 1;
}

/* The rest of pt_warm_new() and pt_warm_new_stored(), on a wm with m, old
 * and os set (and ohash for a stored start). */
static int warm_init(struct pt_warm *wm, struct pt_warm **out,
		     struct pt_error *err)
{
	const struct pt_model *m = wm->m;
	int f, s, a;

	if (!(wm->kept = calloc((size_t)m->nfuncs + 1, 1)) ||
	    !(wm->open = calloc((size_t)m->nfuncs + 1, 1)) ||
	    !(wm->sig = calloc((size_t)m->nfuncs + 1, 1)) ||
	    !(wm->old_sig = calloc((size_t)m->nfuncs + 1,
				   sizeof(*wm->old_sig)))) {
		pt_warm_free(wm);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	wm->stages = m->nstages;
	for (f = 0; f < m->nfuncs; f++)
		wm->kept[f] = (unsigned char)func_kept(wm, f, &wm->changed);
	/* Open: changed, or a producer or consumer of a changed Func. */
	for (f = 0; f < m->nfuncs; f++)
		wm->open[f] = !wm->kept[f] || !wm->changed;
	for (s = 0; s < m->nstages; s++) {
		const struct pt_stage *st = &m->stages[s];

		for (a = 0; a < st->naccesses; a++) {
			const struct pt_access *ac = &st->accesses[a];
			int p = ac->producer;

			if (ac->kind != PT_ACCESS_FUNC || p == st->func ||
			    p < 0 || p >= m->nfuncs)
				continue;
			if (!wm->kept[p])
				wm->open[st->func] = 1;
			if (!wm->kept[st->func])
				wm->open[p] = 1;
		}
	}
	for (f = 0; f < m->nfuncs; f++) {
		wm->sig[f] = wm->kept[f] ||
			     func_similar(m, wm->old, wm->os, f);
		if (wm->sig[f] &&
		    fsig_of(wm->old, wm->os, f, &wm->old_sig[f])) {
			pt_warm_free(wm);
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		}
	}
	*out = wm;
	return 0;
}

int pt_warm_new(const struct pt_model *m, const struct pt_model *old,
		const struct pt_sched *old_sched, struct pt_warm **out,
		struct pt_error *err)
{
	struct pt_warm *wm;

	*out = NULL;
	if (!(wm = calloc(1, sizeof(*wm))))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	wm->m = m;
	wm->old = old;
	wm->os = old_sched;
	return warm_init(wm, out, err);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int pt_warm_new_stored(const struct pt_model *m,
		       const struct pt_sched *old_sched, struct pt_warm **out,
		       struct pt_error *err)
{
	struct pt_warm *wm;
	const char *v = pt_sched_meta(old_sched, PT_WARM_META), *p;
	int k, b, bad;

	*out = NULL;
	if (!v)
		return pt_error_set(err, PT_ENOTFOUND,
				    "the schedule has no '%s' meta entry",
				    PT_WARM_META);
	if (old_sched->nfuncs != m->nfuncs)
		return pt_error_set(err, PT_ENOTFOUND,
				    "the schedule has %d Funcs, the pipeline %d",
				    old_sched->nfuncs, m->nfuncs);
	if (!(wm = calloc(1, sizeof(*wm))) ||
	    !(wm->ohash = calloc((size_t)m->nstages + 1,
				 sizeof(*wm->ohash)))) {
		free(wm);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	/* 16 hex digits a stage, stages separated by ',' */
	for (p = v, k = 0, bad = 0; *p && !bad; k++) {
		for (b = 0; b < PT_WARM_HASH_BYTES && !bad; b++, p += 2) {
			int hi = hexval(p[0]), lo = hi < 0 ? -1 : hexval(p[1]);

			bad = hi < 0 || lo < 0;
			if (k < m->nstages && !bad)
				wm->ohash[k][b] = (uint8_t)(hi << 4 | lo);
		}
		if (!bad && *p == ',' && p[1])
			p++;
		else if (*p)
			bad = 1;
	}
	if (bad || k != m->nstages) {
		pt_warm_free(wm);
		return pt_error_set(err, PT_ENOTFOUND,
				    "the schedule's '%s' entry is not %d stage hashes%s",
				    PT_WARM_META, m->nstages,
				    bad ? "" : " (the pipeline's stages changed)");
	}
	wm->m = m;
	wm->old = m;   /* the stand-in: same Funcs, stages and dims */
	wm->os = old_sched;
	return warm_init(wm, out, err);
}

int pt_warm_hashes_meta(const struct pt_model *m, struct pt_strvec *meta)
{
	static const char hex[] = "0123456789abcdef";
	char *buf;
	size_t n = 0;
	int k, b, ret;

	if (!(buf = malloc((size_t)m->nstages * (2 * PT_WARM_HASH_BYTES + 1) +
			   sizeof(PT_WARM_META) + 2)))
		return PT_ENOMEM;
	memcpy(buf, PT_WARM_META "=", sizeof(PT_WARM_META));
	n = sizeof(PT_WARM_META);
	for (k = 0; k < m->nstages; k++) {
		if (k)
			buf[n++] = ',';
		for (b = 0; b < PT_WARM_HASH_BYTES; b++) {
			buf[n++] = hex[m->stages[k].local[b] >> 4];
			buf[n++] = hex[m->stages[k].local[b] & 15];
		}
	}
	buf[n] = 0;
	ret = pt_strvec_push(meta, buf);
	free(buf);
	return ret;
}

void pt_warm_free(struct pt_warm *wm)
{
	int f;

	if (!wm)
		return;
	if (wm->old_sig && wm->m)
		for (f = 0; f < wm->m->nfuncs; f++)
			fsig_release(&wm->old_sig[f]);
	free(wm->old_sig);
	free(wm->ohash);
	free(wm->path);
	free(wm->scratch);
	free(wm->kept);
	free(wm->open);
	free(wm->sig);
	free(wm);
}

int pt_warm_stages(const struct pt_warm *wm) { return wm->stages; }
int pt_warm_changed(const struct pt_warm *wm) { return wm->changed; }

int pt_warm_func_kept(const struct pt_warm *wm, int func)
{
	return func >= 0 && func < wm->m->nfuncs && wm->kept[func];
}

int pt_warm_func_open(const struct pt_warm *wm, int func)
{
	return func >= 0 && func < wm->m->nfuncs && wm->open[func];
}

void pt_warm_bind(struct pt_warm *wm, const struct pt_space *sp)
{
	wm->sp = sp;
}

int pt_warm_fixed(void *ctx, int func)
{
	const struct pt_warm *wm = ctx;

	return pt_warm_func_kept(wm, func) && !pt_warm_func_open(wm, func);
}

/* How many of the Funcs marked in `which` have in s the loops they had in
 * the earlier schedule; *asked (when not NULL) gets how many are marked.
 * A Func whose loops cannot be worked out (out of memory) counts as not
 * having them. */
static int count_equal(const struct pt_warm *wm, const struct pt_sched *s,
		       const unsigned char *which, int *asked)
{
	int f, n = 0, k = 0;

	for (f = 0; f < wm->m->nfuncs && f < s->nfuncs; f++) {
		struct fsig a;

		if (!which[f])
			continue;
		k++;
		if (!fsig_of(wm->m, s, f, &a))
			n += fsig_equal(&a, &wm->old_sig[f]);
		fsig_release(&a);
	}
	if (asked)
		*asked = k;
	return n;
}

int pt_warm_count_kept(const struct pt_warm *wm, const struct pt_sched *s)
{
	return count_equal(wm, s, wm->kept, NULL);
}

/* --- picking the child that agrees ------------------------------------- */

/* How far a state's schedule agrees with the earlier one for Func f
 * (*score), and, when f is computed at a kept Func, which one (*site, else
 * -1) and how far that Func agrees (*site_score). */
static int agree(const struct pt_warm *wm, const struct pt_space_state *st,
		 int f, int *score, int *site, int *site_score)
{
	struct pt_sched *s = NULL;
	struct fsig a, b;
	int g, ret;

	*site = -1;
	*site_score = 0;
	if ((ret = pt_space_sched(wm->sp, st, &s)))
		return ret;
	if ((ret = fsig_of(wm->m, s, f, &a)))
		goto out;
	*score = fsig_agree(&a, &wm->old_sig[f]);
	g = a.compute == PT_COMPUTE_AT ? a.site.func : -1;
	fsig_release(&a);
	if (g >= 0 && g < wm->m->nfuncs && wm->sig[g]) {
		if ((ret = fsig_of(wm->m, s, g, &b)))
			goto out;
		*site = g;
		*site_score = fsig_agree(&b, &wm->old_sig[g]);
		fsig_release(&b);
	}
out:
	pt_sched_free(s);
	return ret;
}

/* How far Func g agrees in state st. */
static int agree_func(const struct pt_warm *wm,
		      const struct pt_space_state *st, int g, int *score)
{
	struct pt_sched *s = NULL;
	struct fsig a;
	int ret;

	if ((ret = pt_space_sched(wm->sp, st, &s)))
		return ret;
	if (!(ret = fsig_of(wm->m, s, g, &a)))
		*score = fsig_agree(&a, &wm->old_sig[g]);
	fsig_release(&a);
	pt_sched_free(s);
	return ret;
}

/* The first path: a beam over the decisions from a state to a complete
 * one that maximises the agreement with the earlier schedule, summed
 * over the kept Funcs (each Func's agreement counted when its last
 * decision is taken). A decision's own agreement can tie (a tile size may
 * come from it or from a later split by a producer), so the candidates
 * are carried on and the best complete one wins. The decisions of a Func
 * that changed take the first child: pt_search() takes those by cost and
 * asks again.
 *
 * The beam is BEAM wide, but first FIRST_BEAM wide: when that narrower
 * beam already rebuilds every matched Func exactly (the usual case; one
 * or two wide miss a Func of stencil_chain and local_laplacian), its
 * path is taken, at a quarter of the work. */
#define FIRST_BEAM 4
#define BEAM 16

struct bnode {
	int parent, func;
	long base, fscore;   /* finished Funcs' agreement; the current one's */
	size_t off;          /* its state in the pool */
};

struct wbeam {
	const struct pt_warm *wm;
	unsigned char *pool;
	size_t used, cap, ssz;
	struct bnode *nd;
	int nn, capn;
	int front[BEAM], nfront;
	int width;           /* at most BEAM */
	int parent, ret;
};

static int bnode_add(struct wbeam *b, const struct pt_space_state *st,
		     int parent, int func, long base, long fscore)
{
	struct bnode *n;

	if (b->nn == b->capn) {
		int c = b->capn ? 2 * b->capn : 256;

		if (!(n = realloc(b->nd, (size_t)c * sizeof(*n))))
			return PT_ENOMEM;
		b->nd = n;
		b->capn = c;
	}
	if (b->used + b->ssz > b->cap) {
		size_t c = b->cap ? 2 * b->cap : 64 * b->ssz;
		unsigned char *p = realloc(b->pool, c);

		if (!p)
			return PT_ENOMEM;
		b->pool = p;
		b->cap = c;
	}
	n = &b->nd[b->nn];
	n->parent = parent;
	n->func = func;
	n->base = base;
	n->fscore = fscore;
	n->off = b->used;
	memcpy(b->pool + b->used, st, b->ssz);
	b->used += b->ssz;
	return b->nn++;
}

static long total(const struct bnode *n) { return n->base + n->fscore; }

/* Keep node k among the next front (sorted, at most BEAM). */
static void front_put(struct wbeam *b, int *front, int *n, int k)
{
	int i, j;

	for (i = 0; i < *n && total(&b->nd[front[i]]) >= total(&b->nd[k]);
	     i++)
		;
	if (i == b->width)
		return;
	if (*n < b->width)
		(*n)++;
	for (j = *n - 1; j > i; j--)
		front[j] = front[j - 1];
	front[i] = k;
}

struct wb_step {
	struct wbeam *b;
	int next[BEAM], nnext, first_only;
	int csite, cval;     /* the parent's agreement for Func csite */
};

static int wb_child(void *arg, const struct pt_space_state *c)
{
	struct wb_step *ws = arg;
	struct wbeam *b = ws->b;
	const struct bnode *p = &b->nd[b->parent];
	int f, k, score = 0, site, site_score, before = 0;
	long base;

	if (pt_space_next(b->wm->sp, (const void *)(b->pool + p->off), &f,
			  NULL, NULL))
		return b->ret = PT_EINVAL;
	base = p->func == f ? p->base : p->base + p->fscore;
	if (!ws->first_only) {
		if ((b->ret = agree(b->wm, c, f, &score, &site, &site_score)))
			return b->ret;
		/* A decision that splits its site's level changes how far
		 * the site agrees (a Func counted in base already): the
		 * difference counts. The parent is in wm->scratch. */
		if (site >= 0 && site != ws->csite) {
			if ((b->ret = agree_func(b->wm, b->wm->scratch, site,
						 &ws->cval)))
				return b->ret;
			ws->csite = site;
		}
		if (site >= 0)
			before = ws->cval;
		base += site_score - before;
	}
	if ((k = bnode_add(b, c, b->parent, f, base, score)) < 0)
		return b->ret = k;
	front_put(b, ws->next, &ws->nnext, k);
	return ws->first_only ? 1 : 0;
}

static int warm_beam(struct pt_warm *wm, const struct pt_space_state *st,
		     struct pt_space_work *w, int width)
{
	struct wbeam b;
	int i, k, n, ret = 0, open;

	memset(&b, 0, sizeof(b));
	b.wm = wm;
	b.width = width;
	b.ssz = pt_space_state_size(wm->sp);
	if ((k = bnode_add(&b, st, -1, -1, 0, 0)) < 0) {
		ret = k;
		goto out;
	}
	b.front[0] = k;
	b.nfront = 1;
	for (;;) {
		struct wb_step ws;

		memset(&ws, 0, sizeof(ws));
		ws.b = &b;
		for (open = 0, i = 0; i < b.nfront; i++) {
			const struct bnode *nd = &b.nd[b.front[i]];
			int f;

			if (pt_space_complete(wm->sp,
					      (const void *)(b.pool + nd->off))) {
				front_put(&b, ws.next, &ws.nnext, b.front[i]);
				continue;
			}
			open = 1;
			pt_space_next(wm->sp, (const void *)(b.pool + nd->off),
				      &f, NULL, NULL);
			b.parent = b.front[i];
			ws.first_only = !wm->sig[f];
			ws.csite = -1;
			/* The pool may move: states are copied by offset. */
			memcpy(wm->scratch, b.pool + nd->off, b.ssz);
			ret = pt_space_children(wm->sp, wm->scratch, w,
						wb_child, &ws);
			if (b.ret) {
				ret = b.ret;
				goto out;
			}
			if (ret < 0)
				goto out;
		}
		if (!open)
			break;
		memcpy(b.front, ws.next, sizeof(b.front));
		b.nfront = ws.nnext;
	}
	/* The best complete candidate's path, st first. */
	for (n = 0, k = b.front[0]; k >= 0; k = b.nd[k].parent)
		n++;
	free(wm->path);
	wm->npath = 0;
	if (!(wm->path = malloc((size_t)n * b.ssz))) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (i = n - 1, k = b.front[0]; k >= 0; k = b.nd[k].parent, i--)
		memcpy(wm->path + (size_t)i * b.ssz, b.pool + b.nd[k].off,
		       b.ssz);
	wm->npath = n;
	ret = 0;
out:
	free(b.pool);
	free(b.nd);
	return ret;
}

/* Whether the path's complete state rebuilds every matched Func exactly:
 * 1 yes, 0 no, or a negative PT_E*. */
static int path_exact(const struct pt_warm *wm)
{
	struct pt_sched *s = NULL;
	size_t ssz = pt_space_state_size(wm->sp);
	int ret, asked;

	if (wm->npath < 1)
		return 0;
	if ((ret = pt_space_sched(wm->sp, (const void *)(wm->path +
			(size_t)(wm->npath - 1) * ssz), &s)))
		return ret;
	ret = count_equal(wm, s, wm->sig, &asked) == asked;
	pt_sched_free(s);
	return ret;
}

int pt_warm_pick(void *ctx, const struct pt_space_state *st,
		 struct pt_space_work *w, struct pt_space_state *child)
{
	struct pt_warm *wm = ctx;
	size_t ssz;
	int f, i, ret;

	if (!wm->sp || pt_space_next(wm->sp, st, &f, NULL, NULL))
		return PT_EINVAL;
	if (f < 0 || f >= wm->m->nfuncs || !wm->sig[f])
		return 0;
	ssz = pt_space_state_size(wm->sp);
	if (!wm->scratch && !(wm->scratch = pt_space_state_new(wm->sp)))
		return PT_ENOMEM;
	for (i = 0; i + 1 < wm->npath; i++)
		if (!memcmp(wm->path + (size_t)i * ssz, st, ssz))
			break;
	if (i + 1 >= wm->npath) {
		if ((ret = warm_beam(wm, st, w, FIRST_BEAM)) < 0 ||
		    (ret = path_exact(wm)) < 0)
			return ret;
		if (!ret && (ret = warm_beam(wm, st, w, BEAM)))
			return ret;
		i = 0;
		if (wm->npath < 2)
			return 0;
	}
	memcpy(child, wm->path + (size_t)(i + 1) * ssz, ssz);
	return 1;
}
