/* t_search.c: the searches (pt_search.h) on real spaces with synthetic
 * costs whose optimum is known. */
#include "pt_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protune/pt_model.h"
#include "protune/pt_search.h"
#include "protune/pt_space.h"

/* A space over one of the unit-test example models. */
struct fix {
	struct pt_model *m;
	struct pt_space *sp;
	struct pt_space_work *w;
	size_t ssz;
	struct pt_space_state *target;
};

/* small: a space cut down to be enumerable (two tiling levels, at most
 * 8 tilings a level, no sliding windows: 950 complete states of unsharp). */
static int fix_open(struct fix *f, const char *name, uint64_t seed, int small)
{
	struct pt_space_opts so = PT_SPACE_OPTS_INIT;
	uint64_t rng = seed;
	struct pt_space_state *root;

	memset(f, 0, sizeof(*f));
	if (small) {
		so.max_levels = 2;
		so.max_tilings = 8;
		so.sliding = 0;
	}
	f->m = pt_test_example(name);
	if (!f->m || pt_space_new(f->m, &so, &f->sp, NULL))
		return -1;
	f->w = pt_space_work_new(f->sp);
	f->ssz = pt_space_state_size(f->sp);
	root = pt_space_state_new(f->sp);
	f->target = pt_space_state_new(f->sp);
	if (!f->w || !root || !f->target ||
	    pt_space_root(f->sp, f->w, root) ||
	    pt_space_random_complete(f->sp, root, f->w, &rng, f->target)) {
		free(root);
		return -1;
	}
	free(root);
	return 0;
}

static void fix_close(struct fix *f)
{
	free(f->target);
	pt_space_work_free(f->w);
	pt_space_free(f->sp);
	pt_model_free(f->m);
}

/* Cost: 1 + the number of bytes in which the state differs from the
 * target, so the target (and only it) costs 1. */
static int dist_cost(void *ctx, int thread, const struct pt_space_state *st,
		     double *cost)
{
	const struct fix *f = ctx;
	const unsigned char *a = (const void *)st, *b = (const void *)f->target;
	size_t i, d = 0;

	(void)thread;
	for (i = 0; i < f->ssz; i++)
		d += a[i] != b[i];
	*cost = 1.0 + (double)d;
	return 0;
}

/* Cost: a pseudo-random function of the state's bytes (no structure). */
static int hash_cost(void *ctx, int thread, const struct pt_space_state *st,
		     double *cost)
{
	const struct fix *f = ctx;
	const unsigned char *a = (const void *)st;
	uint64_t h = 1469598103934665603ull;
	size_t i;

	(void)thread;
	for (i = 0; i < f->ssz; i++)
		h = (h ^ a[i]) * 1099511628211ull;
	h ^= h >> 29;
	*cost = 1.0 + (double)(h % 1000003) / 1000003.0;
	return 0;
}

static void opts(struct pt_search_opts *o, struct fix *f,
		 int (*cost)(void *, int, const struct pt_space_state *,
			     double *))
{
	pt_search_opts_init(o);
	o->eval.cost = cost;
	o->eval.ctx = f;
	o->seed = 42;
}

/* Exhaustive enumeration: the minimum of `cost` over every complete
 * state, and how many there are (0 when more than `cap`). */
struct enum_ctx {
	struct fix *f;
	struct pt_space_state **stack;
	size_t n, cap;
};

static int push_child(void *arg, const struct pt_space_state *child)
{
	struct enum_ctx *e = arg;

	if (e->n == e->cap)
		return 1;
	if (!(e->stack[e->n] = malloc(e->f->ssz)))
		return 1;
	memcpy(e->stack[e->n++], child, e->f->ssz);
	return 0;
}

static long enumerate(struct fix *f, long cap,
		      int (*cost)(void *, int, const struct pt_space_state *,
				  double *),
		      double *best, long *nbest)
{
	struct enum_ctx e = { f, NULL, 0, 100000 };
	long complete = 0;

	*best = 1e300;
	*nbest = 0;
	e.stack = calloc(e.cap, sizeof(*e.stack));
	if (!e.stack || !(e.stack[0] = pt_space_state_new(f->sp)) ||
	    pt_space_root(f->sp, f->w, e.stack[0]))
		return -1;
	e.n = 1;
	while (e.n) {
		struct pt_space_state *st = e.stack[--e.n];

		if (pt_space_complete(f->sp, st)) {
			double c;

			cost(f, 0, st, &c);
			if (c < *best) {
				*best = c;
				*nbest = 0;
			}
			*nbest += c == *best;
			complete++;
		} else if (pt_space_children(f->sp, st, f->w, push_child,
					     &e) < 0 || complete > cap) {
			free(st);
			complete = 0;
			break;
		}
		free(st);
	}
	while (e.n)
		free(e.stack[--e.n]);
	free(e.stack);
	return complete;
}

PT_TEST(mcts_finds_known_optimum)
{
	struct fix f;
	struct pt_search_opts o;
	struct pt_search_result r;

	double best;
	long n, nbest;

	PT_REQUIRE(!fix_open(&f, "unsharp", 3, 1));
	/* The target is the one optimum of the whole space. */
	n = enumerate(&f, 200000, dist_cost, &best, &nbest);
	if (n <= 100) fprintf(stderr, "# enumerate: %ld\n", n);
	PT_REQUIRE(n > 100);
	PT_CHECK(best == 1.0 && nbest == 1);
	opts(&o, &f, dist_cost);
	/* 4 standard trees, no greedy one, 300 iterations per tree and
	 * decision. */
	o.trees = 4;
	o.greedy_trees = 0;
	o.iterations = 300;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(pt_space_complete(f.sp, r.best));
	PT_CHECK(r.cost == 1.0);
	PT_CHECK(!memcmp(r.best, f.target, f.ssz));
	PT_CHECK(r.decisions >= 1);
	PT_CHECK(r.nodes > 0);
	pt_search_result_release(&r);
	fix_close(&f);
}

PT_TEST(greedy_tree_alone_finds_it)
{
	struct fix f;
	struct pt_search_opts o;
	struct pt_search_result r;

	/* The byte distance also ranks partial states, so a greedy
	 * simulation walks straight to the target. */
	PT_REQUIRE(!fix_open(&f, "unsharp", 5, 1));
	opts(&o, &f, dist_cost);
	o.trees = 0;
	o.greedy_trees = 1;
	o.iterations = 3;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(r.cost == 1.0);
	PT_CHECK(!memcmp(r.best, f.target, f.ssz));
	pt_search_result_release(&r);
	fix_close(&f);
}

PT_TEST(beam_wide_enough_is_exhaustive)
{
	struct fix f;
	struct pt_search_opts o;
	struct pt_search_result r;
	double best;
	long n, nbest;

	PT_REQUIRE(!fix_open(&f, "unsharp", 1, 1));
	n = enumerate(&f, 200000, hash_cost, &best, &nbest);
	if (n <= 100) fprintf(stderr, "# enumerate: %ld\n", n);
	PT_REQUIRE(n > 100);
	opts(&o, &f, hash_cost);
	o.algo = PT_SEARCH_BEAM;
	o.beam = (int)n;   /* at least the widest level */
	o.passes = 1;
	o.budget_s = 600;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(!r.out_of_time);
	PT_CHECK(r.cost == best);
	pt_search_result_release(&r);
	/* Narrower beams and the greedy search never beat it. */
	o.beam = 2;
	o.passes = 3;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(r.cost >= best);
	pt_search_result_release(&r);
	o.algo = PT_SEARCH_GREEDY;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(r.cost >= best);
	PT_CHECK(pt_space_complete(f.sp, r.best));
	pt_search_result_release(&r);
	fix_close(&f);
}

static int same_result(struct fix *f, struct pt_search_opts *o,
		       double *cost)
{
	struct pt_search_result a, b;
	int same;

	o->threads = 1;
	if (pt_search(f->sp, o, &a, NULL))
		return 0;
	o->threads = 2;
	if (pt_search(f->sp, o, &b, NULL)) {
		pt_search_result_release(&a);
		return 0;
	}
	same = !memcmp(a.best, b.best, f->ssz) && a.cost == b.cost &&
	       a.simulations == b.simulations && a.nodes == b.nodes &&
	       a.decisions == b.decisions && a.priced == b.priced;
	*cost = a.cost;
	pt_search_result_release(&a);
	pt_search_result_release(&b);
	return same;
}

PT_TEST(deterministic_whatever_the_threads)
{
	struct fix f;
	struct pt_search_opts o;
	double c1, c2;

	PT_REQUIRE(!fix_open(&f, "local_laplacian", 9, 0));
	opts(&o, &f, hash_cost);
	o.trees = 3;
	o.greedy_trees = 1;
	o.iterations = 20;
	PT_CHECK(same_result(&f, &o, &c1));
	o.seed = 43;
	PT_CHECK(same_result(&f, &o, &c2));
	o.algo = PT_SEARCH_RANDOM;
	o.iterations = 300;
	PT_CHECK(same_result(&f, &o, &c1));
	o.algo = PT_SEARCH_BEAM;
	o.beam = 4;
	o.passes = 2;
	o.iterations = 0;
	o.budget_s = 600;
	PT_CHECK(same_result(&f, &o, &c1));
	fix_close(&f);
}

/* hash_cost, counting its calls (one thread). */
struct counting {
	struct fix *f;
	long calls;
};

static int counted_cost(void *ctx, int thread,
			const struct pt_space_state *st, double *cost)
{
	struct counting *c = ctx;

	c->calls++;
	return hash_cost(c->f, thread, st, cost);
}

PT_TEST(priced_counts_every_state_priced)
{
	static const enum pt_search_algo algos[] = {
		PT_SEARCH_MCTS, PT_SEARCH_BEAM, PT_SEARCH_GREEDY,
		PT_SEARCH_RANDOM
	};
	struct fix f;
	struct counting c;
	struct pt_search_opts o;
	struct pt_search_result r;
	size_t i;

	PT_REQUIRE(!fix_open(&f, "unsharp", 3, 0));
	c.f = &f;
	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		opts(&o, &f, counted_cost);
		o.eval.ctx = &c;
		o.algo = algos[i];
		o.trees = 2;
		o.greedy_trees = 1;
		o.beam = 4;
		o.passes = 2;
		if (o.algo == PT_SEARCH_MCTS || o.algo == PT_SEARCH_RANDOM)
			o.iterations = 30;
		else
			o.budget_s = 600;
		c.calls = 0;
		PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
		PT_CHECK(r.priced == c.calls);
		PT_CHECK(r.priced >= r.simulations);
		/* The beam prices partial states too: many more. */
		if (o.algo == PT_SEARCH_BEAM)
			PT_CHECK(r.priced > 2 * r.simulations);
		pt_search_result_release(&r);
	}
	fix_close(&f);
}

PT_TEST(node_cap_holds)
{
	struct fix f;
	struct pt_search_opts o;
	struct pt_search_result r;

	PT_REQUIRE(!fix_open(&f, "camera_pipe", 2, 0));
	opts(&o, &f, dist_cost);
	o.trees = 2;
	o.greedy_trees = 0;
	o.iterations = 500;
	o.max_nodes = 40;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(pt_space_complete(f.sp, r.best));
	PT_CHECK(r.nodes <= 2 * 40);
	pt_search_result_release(&r);
	fix_close(&f);
}

/* cost+real: "measured" times that disagree with the costs. */
struct meas {
	struct fix *f;
	int calls, states;
};

static int fake_measure(void *ctx, const struct pt_space_state *const *st,
			int n, double *ms)
{
	struct meas *m = ctx;
	int i;

	m->calls++;
	m->states += n;
	for (i = 0; i < n; i++) {
		double c;

		hash_cost(m->f, 0, st[i], &c);
		/* every tenth state fails to "compile" */
		ms[i] = (int)(c * 1000) % 10 == 0 ? -1 : 10 * c;
	}
	return 0;
}

PT_TEST(cost_real_answers_the_fastest_measured)
{
	struct fix f;
	struct pt_search_opts o;
	struct pt_search_result r;
	struct meas m = { NULL, 0, 0 };

	PT_REQUIRE(!fix_open(&f, "harris", 4, 0));
	m.f = &f;
	opts(&o, &f, dist_cost);
	o.trees = 6;
	o.greedy_trees = 0;
	o.iterations = 30;
	o.measure = fake_measure;
	o.measure_ctx = &m;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(m.calls > 0);
	PT_CHECK(r.measured == m.states);
	PT_CHECK(r.measured_ms > 0);
	{
		double c;

		hash_cost(&f, 0, r.best, &c);
		PT_CHECK(r.measured_ms == 10 * c);
	}
	pt_search_result_release(&r);
	/* Random search with measurement: every sample is timed. */
	m.calls = m.states = 0;
	o.algo = PT_SEARCH_RANDOM;
	o.iterations = 12;
	o.threads = 2;
	PT_REQUIRE(!pt_search(f.sp, &o, &r, NULL));
	PT_CHECK(m.states >= 1 && m.states <= 12);
	PT_CHECK(r.measured_ms > 0);
	pt_search_result_release(&r);
	fix_close(&f);
}

PT_TEST(bad_options)
{
	struct fix f;
	struct pt_search_opts o;
	struct pt_search_result r;
	struct pt_error err = PT_ERROR_INIT;

	PT_REQUIRE(!fix_open(&f, "blur", 1, 0));
	opts(&o, &f, dist_cost);
	PT_CHECK(pt_search(f.sp, &o, &r, &err) == PT_EINVAL); /* no budget */
	o.iterations = 1;
	o.trees = o.greedy_trees = 0;
	PT_CHECK(pt_search(f.sp, &o, &r, &err) == PT_EINVAL);
	PT_CHECK(pt_search_algo_parse("beam") == PT_SEARCH_BEAM);
	PT_CHECK(pt_search_algo_parse("bean") == -1);
	PT_CHECK_STR(pt_mcts_formula_name(PT_MCTS_SQRT2), "sqrt2");
	fix_close(&f);
}

PT_SUITE(search,
	 { "MCTS finds a known optimum", mcts_finds_known_optimum },
	 { "a greedy tree alone follows a ranking cost",
	   greedy_tree_alone_finds_it },
	 { "a beam as wide as the space is exhaustive",
	   beam_wide_enough_is_exhaustive },
	 { "same seed and counts, same result on 1 and 2 threads",
	   deterministic_whatever_the_threads },
	 { "the node cap holds", node_cap_holds },
	 { "priced counts every state priced",
	   priced_counts_every_state_priced },
	 { "cost+real answers the fastest measured",
	   cost_real_answers_the_fastest_measured },
	 { "bad options", bad_options });
