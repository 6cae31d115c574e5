/* pt_search.c: the searches' common part (options, costs, threads, the best
 * so far), random search and beam search; MCTS is in pt_mcts.c. */
#include "pt_search_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

/* --- names and defaults --------------------------------------------------- */

static const char *const algo_names[] = { "mcts", "beam", "greedy",
					  "random" };
static const char *const formula_names[] = { "protuner", "cp10", "sqrt2" };

/* The index of `name` in names[0..n-1], or -1. */
static int name_index(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

const char *pt_search_algo_name(enum pt_search_algo a)
{
	return (unsigned)a < 4 ? algo_names[a] : NULL;
}

int pt_search_algo_parse(const char *name)
{
	return name_index(algo_names, 4, name);
}

const char *pt_mcts_formula_name(enum pt_mcts_formula f)
{
	return (unsigned)f < 3 ? formula_names[f] : NULL;
}

int pt_mcts_formula_parse(const char *name)
{
	return name_index(formula_names, 3, name);
}

void pt_search_opts_init(struct pt_search_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->algo = PT_SEARCH_MCTS;
	o->threads = 1;
	o->trees = 15;
	o->greedy_trees = 1;
	o->formula = PT_MCTS_PROTUNER;
	o->widen = 0.5;
}

/* --- the standard cost function ------------------------------------------- */

struct eval_thread {
	struct pt_features *fx;
	double *rows;
	struct pt_space_work *w;  /* holds the schedule priced last */
	const struct pt_sched *last;  /* it, or NULL */
	struct pt_cost_memo *memo;    /* the thread's, for its pricing */
};

struct eval_model {
	const struct pt_model *m;
	const struct pt_space *sp;
	const struct pt_cost *cost;
	struct pt_cost_prep *prep;  /* shared by the threads */
	int threads;
	struct eval_thread *t;
};

static int eval_model_cost(void *ctx, int thread,
			   const struct pt_space_state *st, double *cost)
{
	struct eval_model *ev = ctx;
	struct eval_thread *et = &ev->t[thread];
	double terms[PT_TERM_COUNT];
	const struct pt_sched *s = NULL;
	int next, first = 0, ret;

	*cost = PT_SEARCH_INVALID;
	/* Built into the thread's work area: nothing allocated per state. */
	et->last = NULL;
	ret = pt_space_sched_scratch(ev->sp, st, et->w, &s);
	if (ret == PT_ENOMEM)
		return ret;
	if (ret)
		return 0;
	et->last = s;
	/* A partial state: only the Funcs decided so far (the output side,
	 * Funcs at and above the next decision's) are featurized and
	 * priced. */
	if (!pt_space_next(ev->sp, st, &next, NULL, NULL))
		first = next;
	ret = pt_features_compute_rev(et->fx, s, first,
				      pt_space_scratch_revs(et->w), et->rows,
				      NULL);
	if (ret == PT_ENOMEM)
		return ret;
	if (ret)
		return 0;
	pt_cost_terms_partial(ev->prep, et->fx, et->rows, first, et->memo,
			      terms);
	*cost = pt_cost_predict(ev->cost, terms);
	if (!(*cost >= 0 && *cost < PT_SEARCH_INVALID))
		*cost = PT_SEARCH_INVALID;
	return 0;
}

static const struct pt_sched *eval_model_last(void *ctx, int thread,
					      const uint64_t **revs)
{
	const struct eval_model *ev = ctx;
	const struct eval_thread *et = &ev->t[thread];

	*revs = et->last ? pt_space_scratch_revs(et->w) : NULL;
	return et->last;
}

void pt_search_eval_model_free(struct pt_search_eval *e)
{
	struct eval_model *ev = e ? e->ctx : NULL;
	int i;

	if (!ev)
		return;
	for (i = 0; i < ev->threads; i++) {
		pt_features_free(ev->t[i].fx);
		free(ev->t[i].rows);
		pt_space_work_free(ev->t[i].w);
		pt_cost_memo_free(ev->t[i].memo);
	}
	pt_cost_prep_free(ev->prep);
	free(ev->t);
	free(ev);
	e->ctx = NULL;
}

int pt_search_eval_model(const struct pt_model *m, const struct pt_space *sp,
			 const struct pt_cost *cost, int threads,
			 struct pt_search_eval *out, struct pt_error *err)
{
	struct eval_model *ev;
	int i, ret;

	out->cost = eval_model_cost;
	out->last_sched = eval_model_last;
	out->ctx = NULL;
	if (threads < 1)
		threads = 1;
	if (!(ev = calloc(1, sizeof(*ev))) ||
	    !(ev->t = calloc((size_t)threads, sizeof(*ev->t)))) {
		free(ev);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	ev->m = m;
	ev->sp = sp;
	ev->cost = cost;
	ev->threads = threads;
	out->ctx = ev;
	for (i = 0; i < threads; i++) {
		if ((ret = pt_features_new(m, &ev->t[i].fx, err))) {
			pt_search_eval_model_free(out);
			return ret;
		}
		ev->t[i].rows = malloc((size_t)(m->nstages ? m->nstages : 1) *
				       PT_FEAT_COUNT * sizeof(double));
		ev->t[i].w = pt_space_work_new(sp);
		if (!ev->t[i].rows || !ev->t[i].w) {
			pt_search_eval_model_free(out);
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		}
	}
	if ((ret = pt_cost_prep_new(m, ev->t[0].fx, &ev->prep, err))) {
		pt_search_eval_model_free(out);
		return ret;
	}
	for (i = 0; i < threads; i++)
		if (!(ev->t[i].memo = pt_cost_memo_new(ev->prep))) {
			pt_search_eval_model_free(out);
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		}
	return 0;
}

/* --- the run's helpers ---------------------------------------------------- */

double ps_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

uint64_t ps_hash(const struct pt_space_state *st, size_t ssz)
{
	return XXH3_64bits(st, ssz);
}

int ps_cost(struct ps_run *r, int t, const struct pt_space_state *st,
	    double *cost)
{
	int ret = r->o->eval.cost(r->o->eval.ctx, t, st, cost);

	r->th[t].priced++;
	if (!ret && !(*cost >= 0 && *cost < PT_SEARCH_INVALID))
		*cost = PT_SEARCH_INVALID;
	return ret;
}

static int copy_state(struct ps_run *r, struct pt_space_state **dst,
		      const struct pt_space_state *src)
{
	if (!*dst && !(*dst = malloc(r->ssz)))
		return PT_ENOMEM;
	memcpy(*dst, src, r->ssz);
	return 0;
}

int ps_offer(struct ps_run *r, const struct pt_space_state *st, double cost)
{
	if (r->best && !(cost < r->best_cost))
		return 0;
	r->best_cost = cost;
	return copy_state(r, &r->best, st);
}

int ps_progress(struct ps_run *r)
{
	struct pt_search_event e;

	if (!r->o->progress)
		return 0;
	r->last_progress = ps_now();
	e.elapsed_s = r->last_progress - r->t0;
	e.decisions = r->decisions;
	e.simulations = r->simulations;
	e.best_cost = r->best ? r->best_cost : PT_SEARCH_INVALID;
	e.best_ms = r->best_m ? r->best_ms : -1;
	e.best = r->best_m ? r->best_m : r->best;
	return r->o->progress(r->o->progress_ctx, &e);
}

int ps_tick(struct ps_run *r)
{
	if (!r->o->progress || ps_now() - r->last_progress < 1.0)
		return 0;
	return ps_progress(r);
}

int ps_measure(struct ps_run *r, const struct pt_space_state *const *st,
	       const double *cost, int n, double *ms)
{
	const struct pt_space_state **todo;
	uint64_t *h;
	double *got;
	int i, k, ntodo = 0, ret = 0;

	if (n <= 0)
		return 0;
	todo = malloc((size_t)n * sizeof(*todo));
	h = malloc((size_t)n * sizeof(*h));
	got = malloc((size_t)n * sizeof(*got));
	if (!todo || !h || !got) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		size_t j;

		h[i] = ps_hash(st[i], r->ssz);
		ms[i] = -2;  /* not measured yet */
		for (j = 0; j < r->nm; j++)
			if (r->mhash[j] == h[i])
				ms[i] = r->mms[j];
		for (k = 0; k < i && ms[i] == -2; k++)
			if (h[k] == h[i])
				ms[i] = -3;  /* a duplicate in this batch */
		if (ms[i] == -2)
			todo[ntodo++] = st[i];
	}
	if (ntodo) {
		ret = r->o->measure(r->o->measure_ctx, todo, ntodo, got);
		if (ret)
			goto out;
		r->measured += ntodo;
	}
	for (i = 0, k = 0; i < n; i++) {
		if (ms[i] == -2) {
			if (r->nm == r->capm) {
				size_t c = r->capm ? 2 * r->capm : 64;
				uint64_t *nh = realloc(r->mhash,
						       c * sizeof(*nh));
				double *nt;

				if (nh)
					r->mhash = nh;
				nt = nh ? realloc(r->mms, c * sizeof(*nt))
					: NULL;
				if (!nt) {
					ret = PT_ENOMEM;
					goto out;
				}
				r->mms = nt;
				r->capm = c;
			}
			ms[i] = got[k++];
			r->mhash[r->nm] = h[i];
			r->mms[r->nm++] = ms[i];
			if (ms[i] < 0)
				r->invalid++;
		}
	}
	for (i = 0; i < n; i++) {
		if (ms[i] == -3)  /* its first copy was measured above */
			for (k = 0; k < i; k++)
				if (h[k] == h[i])
					ms[i] = ms[k];
		if (ms[i] >= 0 && (!r->best_m || ms[i] < r->best_ms)) {
			if ((ret = copy_state(r, &r->best_m, st[i])))
				goto out;
			r->best_ms = ms[i];
			r->best_m_cost = cost ? cost[i] : PT_SEARCH_INVALID;
		}
	}
out:
	free(todo);
	free(h);
	free(got);
	return ret;
}

static int grow_kids(struct ps_run *r, struct ps_thread *th)
{
	size_t c = th->capkids ? 2 * th->capkids : 64, i;
	struct pt_space_state **k = realloc(th->kids, c * sizeof(*k));

	if (!k)
		return PT_ENOMEM;
	th->kids = k;
	for (i = th->capkids; i < c; i++)
		k[i] = NULL;
	for (i = th->capkids; i < c; i++)
		if (!(k[i] = malloc(r->ssz)))
			return PT_ENOMEM;
	th->capkids = c;
	return 0;
}

struct kid_ctx {
	struct ps_run *r;
	struct ps_thread *th;
};

static int take_kid(void *arg, const struct pt_space_state *child)
{
	struct kid_ctx *kc = arg;
	int ret;

	if (kc->th->nkids == kc->th->capkids &&
	    (ret = grow_kids(kc->r, kc->th)))
		return ret;
	memcpy(kc->th->kids[kc->th->nkids++], child, kc->r->ssz);
	return 0;
}

int ps_children(struct ps_run *r, struct ps_thread *th,
		const struct pt_space_state *st)
{
	struct kid_ctx kc = { r, th };
	int n;

	th->nkids = 0;
	n = pt_space_children(r->sp, st, th->w, take_kid, &kc);
	return n < 0 ? n : (int)th->nkids;
}

int ps_cheapest(struct ps_run *r, int t, struct ps_thread *th,
		const struct pt_space_state *from, struct pt_space_state *out)
{
	double bc = INFINITY, c;
	int n, k, bi = 0, ret;

	if ((n = ps_children(r, th, from)) < 0)
		return n;
	for (k = 0; k < n; k++) {
		if ((ret = ps_cost(r, t, th->kids[k], &c)))
			return ret;
		if (c < bc) {
			bc = c;
			bi = k;
		}
	}
	memcpy(out, th->kids[bi], r->ssz);
	return 0;
}

struct par {
	int (*fn)(void *ctx, int t);
	void *ctx;
	int t, ret;
};

static void *par_main(void *arg)
{
	struct par *p = arg;

	p->ret = p->fn(p->ctx, p->t);
	return NULL;
}

int ps_parallel(int n, int (*fn)(void *ctx, int t), void *ctx)
{
	struct par *p;
	pthread_t *tid;
	int i, started = 0, ret = 0;

	if (n <= 1)
		return fn(ctx, 0);
	p = calloc((size_t)n, sizeof(*p));
	tid = calloc((size_t)n, sizeof(*tid));
	if (!p || !tid) {
		free(p);
		free(tid);
		return PT_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		p[i].fn = fn;
		p[i].ctx = ctx;
		p[i].t = i;
	}
	/* Threads that cannot be started leave their work to thread 0,
	 * which then runs their share after its own. */
	for (i = 1; i < n; i++) {
		if (pthread_create(&tid[i], NULL, par_main, &p[i]))
			break;
		started = i;
	}
	p[0].ret = fn(ctx, 0);
	for (i = started + 1; i < n; i++)
		p[i].ret = fn(ctx, i);
	for (i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < n && !ret; i++)
		ret = p[i].ret;
	free(p);
	free(tid);
	return ret;
}

/* --- random search -------------------------------------------------------- */

/* Sample i's generator: a function of the seed and i only, so a count of
 * samples gives the same states whatever the threads. */
static uint64_t sample_rng(uint64_t seed, long i)
{
	uint64_t s = seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));

	return pt_space_rand(&s);
}

struct rnd {
	struct ps_run *r;
	const struct pt_space_state *root;
	long first, n;                   /* samples [first, first + n) */
	struct pt_space_state **st;      /* per sample in the batch */
	double *cost;
	double deadline;
};

static int rnd_thread(void *ctx, int t)
{
	struct rnd *b = ctx;
	struct ps_run *r = b->r;
	long i;
	int ret;

	for (i = t; i < b->n; i += r->threads) {
		uint64_t rng = sample_rng(r->o->seed, b->first + i);

		b->cost[i] = -1;  /* not drawn */
		if (b->deadline < INFINITY && ps_now() >= b->deadline)
			return 0;
		if ((ret = pt_space_random_complete(r->sp, b->root,
						    r->th[t].w, &rng,
						    b->st[i])) ||
		    (ret = ps_cost(r, t, b->st[i], &b->cost[i])))
			return ret;
	}
	return 0;
}

static int search_random(struct ps_run *r, const struct pt_space_state *root)
{
	const struct pt_search_opts *o = r->o;
	struct rnd b;
	long done = 0, batch = o->measure ? r->threads : 256, i;
	double *ms = NULL, last = 0;
	int ret = 0;

	memset(&b, 0, sizeof(b));
	b.r = r;
	b.root = root;
	b.deadline = o->measure ? INFINITY : r->deadline;
	b.st = calloc((size_t)batch, sizeof(*b.st));
	b.cost = calloc((size_t)batch, sizeof(*b.cost));
	ms = calloc((size_t)batch, sizeof(*ms));
	if (!b.st || !b.cost || !ms) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < batch; i++)
		if (!(b.st[i] = malloc(r->ssz))) {
			ret = PT_ENOMEM;
			goto out;
		}
	for (;;) {
		double now = ps_now();

		if (o->iterations > 0 && done >= o->iterations)
			break;
		/* With measurement, start a batch only when one like the
		 * last still fits in the budget. */
		if (now >= r->deadline || (o->measure && done &&
					   now + last > r->deadline)) {
			r->out_of_time = !(o->iterations > 0);
			break;
		}
		b.first = done;
		b.n = batch;
		if (o->iterations > 0 && b.n > o->iterations - done)
			b.n = o->iterations - done;
		if ((ret = ps_parallel(r->threads, rnd_thread, &b)))
			goto out;
		for (i = 0; i < b.n; i++) {
			if (b.cost[i] < 0)
				continue;
			r->simulations++;
			if ((ret = ps_offer(r, b.st[i], b.cost[i])))
				goto out;
		}
		if (o->measure) {
			int n = 0;

			for (i = 0; i < b.n; i++)
				if (b.cost[i] >= 0)
					b.st[n++] = b.st[i];
			/* (b.st keeps every buffer: only pointers moved) */
			if ((ret = ps_measure(r, (const struct pt_space_state
						  *const *)b.st, NULL, n,
					      ms)))
				goto out;
			last = ps_now() - now;
		}
		done += b.n;
		r->decisions++;
		if ((ret = ps_progress(r)))
			goto out;
	}
out:
	if (b.st)
		for (i = 0; i < batch; i++)
			free(b.st[i]);
	free(b.st);
	free(b.cost);
	free(ms);
	return ret;
}

/* --- beam search with coarse-to-fine passes ------------------------------ */

/* hash_d (Adams 2019 §3.2 hashes the loop nest to depth d; this is the
 * same idea over the schedule): d = 1, where each Func decided so far is
 * computed (inline, root, or at which Func); d = 2, also the loop it is
 * computed and stored at and, per stage, which dims are parallel and how
 * many splits it has; d >= 3, the whole schedule. Funcs not decided yet
 * are left out. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

/* A loop name as a number: its bytes when it has 1 to 7 (the usual
 * "v0o" or "y_i"; the top byte stays 0), else XXH3 of them with the top
 * bit set; 0 for none or "". hash_2 mixes these; XXH3 of every name was
 * 2% of a beam's time. */
static uint64_t str_hash(const char *s)
{
	uint64_t k = 0;
	int i;

	if (!s)
		return 0;
	for (i = 0; i < 8 && s[i]; i++)
		k |= (uint64_t)(unsigned char)s[i] << (8 * i);
	if (i < 8)
		return k;
	return XXH3_64bits(s, strlen(s)) | UINT64_C(1) << 63;
}

/* The first Func decided in st (the Funcs from it on are): 0 when st is
 * complete. */
static int first_decided(const struct ps_run *r,
			 const struct pt_space_state *st)
{
	int next = -1;

	/* On a complete state it fails and leaves next alone. */
	pt_space_next(r->sp, st, &next, NULL, NULL);
	return next + 1;
}

/* hash_1 of st: where each decided Func is computed, read off the state
 * (the schedule says the same: pt_space_compute()). */
static uint64_t hash1_state(const struct ps_run *r,
			    const struct pt_space_state *st)
{
	int f, c, site = 0, nf = pt_space_nfuncs(r->sp);
	uint64_t h = 1;

	for (f = first_decided(r, st); f < nf; f++) {
		c = pt_space_compute(r->sp, st, f, &site);
		h = mix(h, (uint64_t)f);
		h = mix(h, (uint64_t)c);
		if (c == PT_COMPUTE_AT)
			h = mix(h, (uint64_t)site);
	}
	return h;
}

/* The part of hash_2 Func f's entry sf gives. */
static uint64_t hash2_func(int f, const struct pt_sched_func *sf)
{
	uint64_t h = mix(2, (uint64_t)f);
	int k, i;

	h = mix(h, (uint64_t)sf->compute);
	if (sf->compute == PT_COMPUTE_AT) {
		h = mix(h, (uint64_t)sf->compute_at.func);
		h = mix(h, str_hash(sf->compute_at.loop));
		h = mix(h, (uint64_t)sf->store_root);
		h = mix(h, str_hash(sf->store_at.loop));
	}
	for (k = 0; k < sf->nstages; k++) {
		int splits = 0;

		for (i = 0; i < sf->stages[k].ndirs; i++) {
			const struct pt_directive *dr = &sf->stages[k].dirs[i];

			if (dr->kind == PT_DIR_SPLIT)
				splits++;
			else if (dr->kind == PT_DIR_PARALLEL)
				h = mix(h, str_hash(dr->dim));
		}
		h = mix(h, (uint64_t)splits);
	}
	return h;
}

/* hash_2 of st, whose schedule is s: its decided Funcs' parts in order.
 * With rev (the revisions of s's entries, pt_space_scratch_revs()), a
 * part is taken from hm when the entry is the one it was made from: a
 * beam's candidates rebuild one or two Funcs of the last one's
 * schedule, and hashing every entry again was 4% of a beam's time. */
static uint64_t hash2_sched(const struct ps_run *r,
			    const struct pt_space_state *st,
			    const struct pt_sched *s, const uint64_t *rev,
			    struct ps_h2memo *hm)
{
	int f;
	uint64_t h2 = 2, h;

	for (f = first_decided(r, st); f < s->nfuncs; f++) {
		if (rev && rev[f] && hm->rev[f] == rev[f]) {
			h = hm->h[f];
		} else {
			h = hash2_func(f, &s->funcs[f]);
			if (rev) {
				hm->rev[f] = rev[f];
				hm->h[f] = h;
			}
		}
		h2 = mix(h2, h);
	}
	return h2;
}

/* Room in hm for nf Funcs, none hashed: 0 or PT_ENOMEM. */
static int h2memo_new(struct ps_h2memo *hm, int nf)
{
	hm->rev = calloc((size_t)nf + 1, sizeof(*hm->rev));
	hm->h = calloc((size_t)nf + 1, sizeof(*hm->h));
	return hm->rev && hm->h ? 0 : PT_ENOMEM;
}

static int coarse_hash(const struct ps_run *r, const struct pt_space_state *st,
		       int d, uint64_t *out)
{
	const struct pt_sched *s = NULL;
	int ret;

	if (d >= 3) {
		*out = mix((uint64_t)d, ps_hash(st, r->ssz));
		return 0;
	}
	if (d == 1) {
		*out = hash1_state(r, st);
		return 0;
	}
	/* Only the search's thread hashes: its work area's schedule, the
	 * coarse one (all hash2_func() reads). */
	if ((ret = pt_space_sched_coarse(r->sp, st, r->th[0].w, &s)))
		return ret;
	*out = hash2_sched(r, st, s, pt_space_scratch_revs(r->th[0].w),
			   &r->th[0].h2m[1]);
	return 0;
}

struct bstate {
	struct pt_space_state *st;
	double cost;
	uint64_t *anc;     /* hash_p of it and its ancestors */
	int nanc, acap;    /* in anc, of room for acap */
	int barred;        /* its hash_{p-1} is not among those allowed */
	int hashed;        /* h2 holds its hash_2 */
	uint64_t h2;
};

/* A set of hashes: open addressing with linear probing in a table of cap
 * slots (0 or a power of two, at most half full), 0 kept apart (`zero`);
 * n counts them all. */
struct hset {
	uint64_t *v;
	size_t n, cap;
	int zero;
};

/* Where h is in s's table, or the empty slot it would go to. */
static size_t hset_slot(const struct hset *s, uint64_t h)
{
	size_t i = (size_t)(h ^ h >> 32) & (s->cap - 1);

	while (s->v[i] && s->v[i] != h)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int hset_has(const struct hset *s, uint64_t h)
{
	if (!h)
		return s->zero;
	return s->cap && s->v[hset_slot(s, h)] == h;
}

static int hset_add(struct hset *s, uint64_t h)
{
	size_t i;

	if (!h) {
		s->n += !s->zero;
		s->zero = 1;
		return 0;
	}
	if (2 * (s->n + 1) > s->cap) {
		struct hset t = *s;

		t.cap = s->cap ? 2 * s->cap : 64;
		if (!(t.v = calloc(t.cap, sizeof(*t.v))))
			return PT_ENOMEM;
		for (i = 0; i < s->cap; i++)
			if (s->v[i])
				t.v[hset_slot(&t, s->v[i])] = s->v[i];
		free(s->v);
		*s = t;
	}
	i = hset_slot(s, h);
	if (!s->v[i]) {
		s->v[i] = h;
		s->n++;
	}
	return 0;
}

static void hset_clear(struct hset *s)
{
	if (s->v)
		memset(s->v, 0, s->cap * sizeof(*s->v));
	s->n = 0;
	s->zero = 0;
}

struct cands {
	struct bstate *v;
	size_t n, cap;
};

/* The blocks of candidates let go, for the next ones: a stack. Two
 * malloc() and two free() per candidate were 1.5% of stencil_chain's
 * beam. */
struct bpool {
	struct bslot {
		struct pt_space_state *st;
		uint64_t *anc;
		int acap;
	} *v;
	size_t n, cap;
};

static void bpool_free(struct bpool *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].st);
		free(p->v[i].anc);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* Candidate b's blocks into pool p (freed when p has no room left). */
static void bstate_free(struct bpool *p, struct bstate *b)
{
	if (b->st && p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct bslot *v = realloc(p->v, cap * sizeof(*v));

		if (v) {
			p->v = v;
			p->cap = cap;
		}
	}
	if (b->st && p->n < p->cap) {
		p->v[p->n].st = b->st;
		p->v[p->n].anc = b->anc;
		p->v[p->n++].acap = b->acap;
	} else {
		free(b->st);
		free(b->anc);
	}
	b->st = NULL;
	b->anc = NULL;
	b->acap = 0;
}

/* Room in c for one more candidate: 0 or PT_ENOMEM. */
static int cands_room(struct cands *c)
{
	size_t cap = c->cap ? 2 * c->cap : 64;
	struct bstate *v;

	if (c->n < c->cap)
		return 0;
	if (!(v = realloc(c->v, cap * sizeof(*v))))
		return PT_ENOMEM;
	c->v = v;
	c->cap = cap;
	return 0;
}

/* A copy of st into c, a child of par (NULL: none), its blocks from
 * pool p when it has some. */
static int cands_push(struct ps_run *r, struct bpool *p, struct cands *c,
		      const struct pt_space_state *st, const struct bstate *par)
{
	int ret, need = par ? par->nanc + 1 : 1;
	struct bstate *b;

	if ((ret = cands_room(c)))
		return ret;
	b = &c->v[c->n];
	memset(b, 0, sizeof(*b));
	if (p->n) {
		p->n--;
		b->st = p->v[p->n].st;
		b->anc = p->v[p->n].anc;
		b->acap = p->v[p->n].acap;
	} else if (!(b->st = malloc(r->ssz))) {
		return PT_ENOMEM;
	}
	if (b->acap < need) {
		uint64_t *a = realloc(b->anc, (size_t)(need + 8) *
				      sizeof(*b->anc));

		if (!a) {
			bstate_free(p, b);
			return PT_ENOMEM;
		}
		b->anc = a;
		b->acap = need + 8;
	}
	memcpy(b->st, st, r->ssz);
	if (par && par->nanc)
		memcpy(b->anc, par->anc, (size_t)par->nanc * sizeof(*b->anc));
	b->nanc = par ? par->nanc : 0;
	c->n++;
	return 0;
}

static void cands_clear(struct bpool *p, struct cands *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		bstate_free(p, &c->v[i]);
	c->n = 0;
}

/* hash_d of candidate b; its hash_2 is made once (a schedule build). */
static int bhash(const struct ps_run *r, struct bstate *b, int d,
		 uint64_t *out)
{
	int ret;

	if (d != 2)
		return coarse_hash(r, b->st, d, out);
	if (!b->hashed) {
		if ((ret = coarse_hash(r, b->st, 2, &b->h2)))
			return ret;
		b->hashed = 1;
	}
	*out = b->h2;
	return 0;
}

struct beam_cost {
	struct ps_run *r;
	struct cands *c;
	int hash2;         /* the candidates' hash_2 will be wanted */
};

/* Price the candidates; when their hash_2 will be wanted, hash the
 * schedule the pricing built (thread t's) rather than building it again
 * later. */
static int beam_cost_thread(void *ctx, int t)
{
	struct beam_cost *bc = ctx;
	struct ps_run *r = bc->r;
	const struct pt_search_eval *ev = &r->o->eval;
	size_t i;
	int ret;

	for (i = (size_t)t; i < bc->c->n; i += (size_t)r->threads) {
		struct bstate *b = &bc->c->v[i];
		const struct pt_sched *s;
		const uint64_t *rev;

		if ((ret = ps_cost(r, t, b->st, &b->cost)) ||
		    (!t && (ret = ps_tick(r))))
			return ret;
		if (bc->hash2 && !b->hashed && ev->last_sched &&
		    (s = ev->last_sched(ev->ctx, t, &rev))) {
			b->h2 = hash2_sched(r, b->st, s, rev,
					    &r->th[t].h2m[0]);
			b->hashed = 1;
		}
	}
	return 0;
}

/* A candidate's place in the order of a beam step: by cost, ties by the
 * order the candidates were generated in (its index). */
struct bkey {
	double cost;
	size_t i;
};

static int bkey_before(const struct bkey *a, const struct bkey *b)
{
	if (a->cost < b->cost)
		return 1;
	if (a->cost > b->cost)
		return 0;
	return a->i < b->i;
}

/* Sort a[0 .. n-1] with bkey_before(), t[] (n keys) as scratch: runs of
 * 8 by insertion, then merged bottom-up. Keys are distinct (their i), so
 * the result is the one order. qsort() with a comparator called through
 * a pointer was 3% of a beam's time. */
static void bkeys_sort(struct bkey *a, struct bkey *t, size_t n)
{
	size_t w, i, j, k, lo, mid, hi;
	struct bkey *src = a, *dst = t, *x;

	for (lo = 0; lo < n; lo += 8) {
		hi = lo + 8 < n ? lo + 8 : n;
		for (i = lo + 1; i < hi; i++) {
			struct bkey v = a[i];

			for (j = i; j > lo && bkey_before(&v, &a[j - 1]); j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
	}
	for (w = 8; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			mid = lo + w < n ? lo + w : n;
			hi = lo + 2 * w < n ? lo + 2 * w : n;
			i = lo;
			j = mid;
			for (k = lo; k < hi; k++)
				dst[k] = i < mid && (j >= hi ||
						     !bkey_before(&src[j],
								  &src[i])) ?
					src[i++] : src[j++];
		}
		x = src;
		src = dst;
		dst = x;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Scratch of a beam pass: the order of a step's candidates, the
 * candidates whose hash_{p+1} repeats a better one's, the hashes seen. */
struct bsel {
	struct bkey *k, *t;
	size_t *dup;
	size_t cap;
	struct hset seen;
};

static int bsel_fit(struct bsel *s, size_t n)
{
	size_t c = s->cap ? s->cap : 64;
	void *k, *t, *d;

	if (n <= s->cap)
		return 0;
	while (c < n)
		c *= 2;
	if (!(k = realloc(s->k, c * sizeof(*s->k))))
		return PT_ENOMEM;
	s->k = k;
	if (!(t = realloc(s->t, c * sizeof(*s->t))))
		return PT_ENOMEM;
	s->t = t;
	if (!(d = realloc(s->dup, c * sizeof(*s->dup))))
		return PT_ENOMEM;
	s->dup = d;
	s->cap = c;
	return 0;
}

static void bsel_free(struct bsel *s)
{
	free(s->k);
	free(s->t);
	free(s->dup);
	free(s->seen.v);
}

/* s->k[0 .. c->n-1]: the candidates of c in order of cost, ties by
 * their index. */
static int bsel_order(struct bsel *s, const struct cands *c)
{
	size_t i;
	int ret;

	if ((ret = bsel_fit(s, c->n)))
		return ret;
	for (i = 0; i < c->n; i++) {
		s->k[i].cost = c->v[i].cost;
		s->k[i].i = i;
	}
	bkeys_sort(s->k, s->t, c->n);
	return 0;
}

/* Move candidate b into the beam (`cur`) or, complete, into `done` (and
 * offer it), with its hash_p added to its ancestors'; b is left empty. */
static int beam_take(struct ps_run *r, struct bstate *b, int p,
		     struct cands *cur, struct cands *done)
{
	struct cands *to = pt_space_complete(r->sp, b->st) ? done : cur;
	uint64_t h;
	int ret;

	if ((ret = bhash(r, b, p, &h)))
		return ret;
	b->anc[b->nanc++] = h;
	if (to == done) {
		r->simulations++;
		if ((ret = ps_offer(r, b->st, b->cost)))
			return ret;
	}
	if ((ret = cands_room(to)))
		return ret;
	to->v[to->n++] = *b;
	memset(b, 0, sizeof(*b));
	return 0;
}

/* Fill the beam from the priced candidates: in order of cost, those whose
 * hash_{p+1} repeats a better candidate's (Adams 2019's diversity
 * penalty; none when beam is 1) after all the others, until `beam`
 * incomplete states are kept. hash_{p+1}, and hash_p, are made only for
 * the candidates walked. */
static int beam_select(struct ps_run *r, struct bsel *s, struct cands *kids,
		       int p, int beam, struct cands *cur, struct cands *done)
{
	size_t i, ndup = 0;
	uint64_t h;
	int ret;

	if ((ret = bsel_order(s, kids)))
		return ret;
	hset_clear(&s->seen);
	for (i = 0; i < kids->n && cur->n < (size_t)beam; i++) {
		struct bstate *b = &kids->v[s->k[i].i];

		if (beam > 1) {
			if ((ret = bhash(r, b, p + 1, &h)))
				return ret;
			if (hset_has(&s->seen, h)) {
				s->dup[ndup++] = s->k[i].i;
				continue;
			}
			if ((ret = hset_add(&s->seen, h)))
				return ret;
		}
		if ((ret = beam_take(r, b, p, cur, done)))
			return ret;
	}
	for (i = 0; i < ndup && cur->n < (size_t)beam; i++)
		if ((ret = beam_take(r, &kids->v[s->dup[i]], p, cur, done)))
			return ret;
	return 0;
}

/* One pass of the beam: from the root to complete states, keeping `beam`
 * states a step. Pass p > 1 keeps only states whose hash_{p-1} is in
 * `allowed` (all, when that leaves none) and moves states whose
 * hash_{p+1} repeats a better one's behind the others. The ancestors'
 * hash_p of the `keep` best complete states go into `next`. */
static int beam_pass(struct ps_run *r, struct bpool *pool,
		     const struct pt_space_state *root,
		     int p, int beam, const struct hset *allowed,
		     struct hset *next, int keep)
{
	struct ps_thread *th = &r->th[0];
	struct cands cur = { 0 }, kids = { 0 }, done = { 0 };
	struct bsel sel = { 0 };
	struct beam_cost bc;
	size_t i, k;
	int ret, n;
	uint64_t h;

	if ((ret = cands_push(r, pool, &cur, root, NULL)) ||
	    (ret = coarse_hash(r, root, p, &h)))
		goto out;
	cur.v[0].anc[cur.v[0].nanc++] = h;
	while (cur.n) {
		if (ps_now() >= r->deadline) {
			r->out_of_time = 1;
			break;
		}
		cands_clear(pool, &kids);
		for (i = 0; i < cur.n; i++) {
			if ((n = ps_children(r, th, cur.v[i].st)) < 0) {
				ret = n;
				goto out;
			}
			for (k = 0; k < (size_t)n; k++)
				if ((ret = cands_push(r, pool, &kids, th->kids[k],
						      &cur.v[i])))
					goto out;
		}
		/* Coarse-to-fine: only permissible states. */
		if (p > 1 && allowed->n) {
			size_t m = 0, ok = 0;

			for (i = 0; i < kids.n; i++) {
				if ((ret = bhash(r, &kids.v[i], p - 1, &h)))
					goto out;
				kids.v[i].barred = !hset_has(allowed, h);
				ok += !kids.v[i].barred;
			}
			for (i = 0; ok && i < kids.n; i++) {
				if (kids.v[i].barred)
					bstate_free(pool, &kids.v[i]);
				else
					kids.v[m++] = kids.v[i];
			}
			if (ok)
				kids.n = m;
		}
		bc.r = r;
		bc.c = &kids;
		/* hash_2 is wanted after pricing for the ancestors (pass 2)
		 * and the diversity penalty (pass 1). */
		bc.hash2 = p == 2 || (p == 1 && beam > 1);
		if ((ret = ps_parallel(r->threads, beam_cost_thread, &bc)))
			goto out;
		r->decisions++;
		cands_clear(pool, &cur);
		if ((ret = beam_select(r, &sel, &kids, p, beam, &cur, &done)) ||
		    (ret = ps_progress(r)))
			goto out;
	}
	/* The best complete states of this pass lead the next one. */
	if ((ret = bsel_order(&sel, &done)))
		goto out;
	for (i = 0; i < done.n && i < (size_t)keep; i++) {
		const struct bstate *b = &done.v[sel.k[i].i];

		for (k = 0; k < (size_t)b->nanc; k++)
			if ((ret = hset_add(next, b->anc[k])))
				goto out;
	}
out:
	cands_clear(pool, &cur);
	cands_clear(pool, &kids);
	cands_clear(pool, &done);
	bsel_free(&sel);
	free(cur.v);
	free(kids.v);
	free(done.v);
	return ret;
}

static int search_beam(struct ps_run *r, const struct pt_space_state *root)
{
	const struct pt_search_opts *o = r->o;
	int greedy = o->algo == PT_SEARCH_GREEDY;
	int beam = greedy ? 1 : o->beam > 0 ? o->beam : 32;
	int passes = o->passes > 0 ? o->passes : greedy ? 1 : 5;
	struct hset allowed = { 0 }, next = { 0 };
	struct bpool pool = { 0 };
	int p, ret = 0;

	for (p = 1; p <= passes && !ret; p++) {
		if (p > 1 && ps_now() >= r->deadline) {
			r->out_of_time = 1;
			break;
		}
		hset_clear(&next);
		ret = beam_pass(r, &pool, root, p, beam, &allowed, &next, 3);
		{
			struct hset t = allowed;

			allowed = next;
			next = t;
		}
	}
	free(allowed.v);
	free(next.v);
	bpool_free(&pool);
	return ret;
}

/* --- pt_search ------------------------------------------------------------ */

static int check_opts(const struct pt_search_opts *o, struct pt_error *err)
{
	if ((unsigned)o->algo > PT_SEARCH_RANDOM || !o->eval.cost)
		return pt_error_set(err, PT_EINVAL,
				    "pt_search: unknown search or no cost function");
	if (!(o->budget_s > 0) && !(o->iterations > 0))
		return pt_error_set(err, PT_EINVAL,
				    "pt_search: needs a budget or an iteration count");
	if (o->algo == PT_SEARCH_MCTS &&
	    (o->trees < 0 || o->greedy_trees < 0 ||
	     o->trees + o->greedy_trees < 1 ||
	     (unsigned)o->formula > PT_MCTS_SQRT2))
		return pt_error_set(err, PT_EINVAL,
				    "pt_search: MCTS needs at least one tree and a known formula");
	return 0;
}

static void run_free(struct ps_run *r)
{
	int i;
	size_t k;

	if (r->th) {
		for (i = 0; i < r->threads; i++) {
			pt_space_work_free(r->th[i].w);
			for (k = 0; k < 2; k++) {
				free(r->th[i].h2m[k].rev);
				free(r->th[i].h2m[k].h);
			}
			free(r->th[i].tmp);
			free(r->th[i].tmp2);
			for (k = 0; k < r->th[i].capkids; k++)
				free(r->th[i].kids[k]);
			free(r->th[i].kids);
		}
	}
	free(r->th);
	free(r->best);
	free(r->best_m);
	free(r->mhash);
	free(r->mms);
	free(r->warm_path);
	free(r->warm_open);
	pt_space_guide_free(r->guide);
}

const struct pt_space_state *ps_warm_next(const struct ps_run *r,
					  const struct pt_space_state *st)
{
	int d;
	const unsigned char *p;

	if (!r->warm_path)
		return NULL;
	d = pt_space_depth(r->sp, st);
	if (d < 0 || d + 1 >= r->warm_n)
		return NULL;
	p = r->warm_path + (size_t)d * r->ssz;
	if (memcmp(p, st, r->ssz))
		return NULL;
	return (const struct pt_space_state *)(p + r->ssz);
}

/* Warm start: the path of the first state (opts->warm), the guide of
 * its fixed decisions, the open decisions left at each step, the state
 * offered as the best so far. */
static int warm_path(struct ps_run *r, const struct pt_space_state *root)
{
	const struct pt_search_warm *wo = &r->o->warm;
	size_t cap = 64;
	int n = 1, f, ret, i;
	unsigned char *p;
	int *fixed;

	if (!(r->guide = pt_space_guide_new(r->sp)) ||
	    !(r->warm_path = malloc(cap * r->ssz)) ||
	    !(fixed = malloc(cap * sizeof(*fixed))))
		return PT_ENOMEM;
	memcpy(r->warm_path, root, r->ssz);
	for (;;) {
		const struct pt_space_state *st = (const void *)
			(r->warm_path + (size_t)(n - 1) * r->ssz);
		struct pt_space_state *ch;

		if (pt_space_complete(r->sp, st))
			break;
		if ((size_t)n == cap) {
			int *nf;

			cap *= 2;
			if (!(p = realloc(r->warm_path, cap * r->ssz)) ||
			    !(nf = realloc(fixed, cap * sizeof(*fixed)))) {
				if (p)
					r->warm_path = p;
				free(fixed);
				return PT_ENOMEM;
			}
			r->warm_path = p;
			fixed = nf;
			st = (const void *)(r->warm_path +
					    (size_t)(n - 1) * r->ssz);
		}
		ch = (struct pt_space_state *)(void *)
			(r->warm_path + (size_t)n * r->ssz);
		if ((ret = pt_space_next(r->sp, st, &f, NULL, NULL)))
			goto fail;
		ret = wo->pick(wo->ctx, st, r->th[0].w, ch);
		if (ret < 0)
			goto fail;
		if (!ret && (ret = ps_cheapest(r, 0, &r->th[0], st, ch)))
			goto fail;
		fixed[n - 1] = wo->fixed && wo->fixed(wo->ctx, f);
		if (fixed[n - 1] &&
		    (ret = pt_space_guide_set(r->sp, r->guide, st, ch,
					      r->th[0].w)))
			goto fail;
		n++;
		if ((ret = ps_tick(r)))
			goto fail;
	}
	r->warm_n = n;
	if (!(r->warm_open = calloc((size_t)n, sizeof(*r->warm_open)))) {
		free(fixed);
		return PT_ENOMEM;
	}
	for (i = n - 2; i >= 0; i--)
		r->warm_open[i] = r->warm_open[i + 1] + !fixed[i];
	free(fixed);
	p = r->warm_path + (size_t)(n - 1) * r->ssz;
	if ((ret = ps_cost(r, 0, (const void *)p, &r->warm_cost)) ||
	    (ret = ps_offer(r, (const void *)p, r->warm_cost)))
		return ret;
	r->simulations++;
	return 0;
fail:
	free(fixed);
	return ret;
}

int pt_search(const struct pt_space *sp, const struct pt_search_opts *o,
	      struct pt_search_result *res, struct pt_error *err)
{
	struct ps_run r;
	struct pt_space_state *root = NULL;
	int i, ret;

	memset(res, 0, sizeof(*res));
	res->measured_ms = -1;
	if ((ret = check_opts(o, err)))
		return ret;
	memset(&r, 0, sizeof(r));
	r.sp = sp;
	r.o = o;
	r.ssz = pt_space_state_size(sp);
	r.threads = o->threads > 0 ? o->threads : 1;
	r.t0 = ps_now();
	r.last_progress = r.t0;
	r.deadline = o->budget_s > 0 ? r.t0 + o->budget_s : INFINITY;
	r.best_cost = r.best_ms = PT_SEARCH_INVALID;
	if (!(r.th = calloc((size_t)r.threads, sizeof(*r.th))))
		goto nomem;
	for (i = 0; i < r.threads; i++)
		if (!(r.th[i].w = pt_space_work_new(sp)) ||
		    !(r.th[i].tmp = pt_space_state_new(sp)) ||
		    !(r.th[i].tmp2 = pt_space_state_new(sp)) ||
		    h2memo_new(&r.th[i].h2m[0], pt_space_nfuncs(sp)) ||
		    h2memo_new(&r.th[i].h2m[1], pt_space_nfuncs(sp)))
			goto nomem;
	if (!(root = pt_space_state_new(sp)))
		goto nomem;
	if ((ret = pt_space_root(sp, r.th[0].w, root)))
		goto fail;
	/* There is always an answer: one random complete state first. */
	{
		uint64_t rng = sample_rng(o->seed, -1);
		double c;

		if ((ret = pt_space_random_complete(sp, root, r.th[0].w, &rng,
						    r.th[0].tmp)) ||
		    (ret = ps_cost(&r, 0, r.th[0].tmp, &c)) ||
		    (ret = ps_offer(&r, r.th[0].tmp, c)))
			goto fail;
		r.simulations++;
	}
	if (o->warm.pick && (ret = warm_path(&r, root)))
		goto fail;
	/* The first answer is reported at once: with a warm start it is
	 * the earlier schedule, which the budget must not hide. */
	if ((ret = ps_progress(&r)))
		goto fail;
	switch (o->algo) {
	case PT_SEARCH_MCTS:
		ret = ps_mcts(&r, err);
		break;
	case PT_SEARCH_BEAM:
	case PT_SEARCH_GREEDY:
		ret = search_beam(&r, root);
		break;
	case PT_SEARCH_RANDOM:
		ret = search_random(&r, root);
		break;
	}
	if (ret)
		goto fail;
	/* With measurements, the answer is the fastest measured state. */
	if (r.best_m) {
		res->best = r.best_m;
		res->cost = r.best_m_cost;
		res->measured_ms = r.best_ms;
		r.best_m = NULL;
	} else {
		res->best = r.best;
		res->cost = r.best_cost;
		r.best = NULL;
	}
	res->decisions = r.decisions;
	res->simulations = r.simulations;
	res->nodes = r.nodes;
	res->measured = r.measured;
	res->invalid = r.invalid;
	for (i = 0; i < r.threads; i++)
		res->priced += r.th[i].priced;
	res->out_of_time = r.out_of_time;
	res->elapsed_s = ps_now() - r.t0;
	if (r.warm_path) {
		if (!(res->warm = pt_space_state_new(sp)))
			goto nomem_res;
		memcpy(res->warm, r.warm_path + (size_t)(r.warm_n - 1) * r.ssz,
		       r.ssz);
		res->warm_cost = r.warm_cost;
	}
	free(root);
	run_free(&r);
	return 0;
nomem_res:
	pt_search_result_release(res);
nomem:
	ret = PT_ENOMEM;
fail:
	free(root);
	run_free(&r);
	if (err && !err->code)
		pt_error_set(err, ret, "search: %s", pt_strerror(ret));
	return ret;
}

void pt_search_result_release(struct pt_search_result *res)
{
	free(res->best);
	res->best = NULL;
	free(res->warm);
	res->warm = NULL;
}
