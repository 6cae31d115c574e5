/* pt_search_int.h: what the searches share inside tuner/ (not installed).
 *
 * A run (struct ps_run) holds one pt_search() call's options, clock,
 * per-thread scratch and best-so-far; pt_search.c owns it and passes it to
 * the algorithm it runs (pt_mcts.c for MCTS). Everything here is used by
 * the thread that called pt_search() unless a comment says otherwise.
 */
#ifndef PROTUNE_PT_SEARCH_INT_H
#define PROTUNE_PT_SEARCH_INT_H

#include "protune/pt_search.h"

struct ps_thread {
	struct pt_space_work *w;
	struct pt_space_state *tmp, *tmp2;   /* scratch states */
	struct pt_space_state **kids;         /* children buffer (greedy) */
	size_t nkids, capkids;
	int err;                              /* first error in the thread */
	long priced;                          /* states it priced */
	/* Per Func, the hash_2 part of its entry in a scratch schedule and
	 * that entry's revision (pt_space_scratch_revs()): [0] for the
	 * schedules the cost function built, [1] for w's. */
	struct ps_h2memo {
		uint64_t *rev, *h;
	} h2m[2];
};

struct ps_run {
	const struct pt_space *sp;
	const struct pt_search_opts *o;
	size_t ssz;                  /* pt_space_state_size() */
	int threads;
	double t0, deadline;         /* seconds (ps_now); deadline: +inf */
	double last_progress;        /* when ps_progress() last reported */
	struct ps_thread *th;        /* threads entries */
	/* the best complete state so far, by cost */
	struct pt_space_state *best;
	double best_cost;
	/* the best measured state so far (cost+real, random with measure) */
	struct pt_space_state *best_m;
	double best_ms, best_m_cost;
	long decisions, simulations, nodes, measured, invalid;
	int out_of_time;
	/* warm start: the first state's path (warm_n states of ssz bytes,
	 * the root first, the i-th at depth i), its cost, the open decisions
	 * from step i on (warm_open[i]), the guide for fixed decisions */
	unsigned char *warm_path;
	int warm_n;
	int *warm_open;
	double warm_cost;
	struct pt_space_guide *guide;
	/* measured complete states: hashes and times */
	uint64_t *mhash;
	double *mms;
	size_t nm, capm;
};

double ps_now(void);

/* The warm path's state at depth d when st is that state: d + 1 < warm_n
 * gives the next one as well. NULL when st is not on the path. */
const struct pt_space_state *ps_warm_next(const struct ps_run *r,
					  const struct pt_space_state *st);
uint64_t ps_hash(const struct pt_space_state *st, size_t ssz);

/* Price `st` in thread t's context: 0 or the callback's error. Safe
 * from any thread for its own t. */
int ps_cost(struct ps_run *r, int t, const struct pt_space_state *st,
	    double *cost);

/* Offer a complete state with its cost as the best so far (copied when
 * better; ties keep the earlier one). 0 or PT_ENOMEM. Caller's thread
 * only. */
int ps_offer(struct ps_run *r, const struct pt_space_state *st, double cost);

/* Measure n complete states (skipping those measured before: their times
 * come from the record), update best_m, ms[i] < 0 for failures. */
int ps_measure(struct ps_run *r, const struct pt_space_state *const *st,
	       const double *cost, int n, double *ms);

/* Report progress (the callback, when set). The callback's caller, the
 * server, sends a heartbeat with it; it must come at least every few
 * seconds, so long steps call ps_tick(). */
int ps_progress(struct ps_run *r);
/* ps_progress() when a second has passed since the last report. For the
 * calling thread of pt_search() only (thread 0). */
int ps_tick(struct ps_run *r);

/* Collect every child of `st` into th->kids; returns the count or a
 * negative PT_E*. */
int ps_children(struct ps_run *r, struct ps_thread *th,
		const struct pt_space_state *st);

/* The cheapest child of `from` by the (partial) cost, priced in thread t's
 * context with th's buffers, into `out`; ties go to the first. 0 or a
 * negative PT_E*. */
int ps_cheapest(struct ps_run *r, int t, struct ps_thread *th,
		const struct pt_space_state *from, struct pt_space_state *out);

/* Run fn(ctx, t) on threads 0..n-1 (thread 0 is the caller); returns the
 * first nonzero result by thread order. */
int ps_parallel(int n, int (*fn)(void *ctx, int t), void *ctx);

/* The algorithm: MCTS (pt_mcts.c). 0 or a negative PT_E*; leaves its
 * answer in r->best / r->best_m. */
int ps_mcts(struct ps_run *r, struct pt_error *err);

#endif
