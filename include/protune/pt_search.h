/* pt_search.h: the searches over the schedule space (doc/search.md).
 *
 * Four searches walk the same space (pt_space.h) with the same costs:
 *
 *   PT_SEARCH_MCTS    ProTuner's ensemble of Monte Carlo tree searches:
 *                     `trees` trees that simulate at random and
 *                     `greedy_trees` that simulate greedily by cost, run on
 *                     `threads` threads; after every decision round they
 *                     agree on a new root, the child holding the best
 *                     complete schedule of all trees (or, with a measuring
 *                     function, the child whose best schedule measured
 *                     fastest: "cost+real").
 *   PT_SEARCH_BEAM    Adams et al. 2019's beam search over partial states
 *                     with coarse-to-fine passes.
 *   PT_SEARCH_GREEDY  the beam search with a beam of 1 and one pass.
 *   PT_SEARCH_RANDOM  random complete states; the best by cost, or, with a
 *                     measuring function, by measured time.
 *
 * Costs come from a struct pt_search_eval: a function that prices a state
 * (complete, or partial for the beam and the greedy simulations) in a
 * per-thread context. pt_search_eval_model() builds the standard one:
 * the state's schedule, its features and the cost model, with the rows of
 * Funcs not decided yet left out for a partial state (as Adams 2019 prices
 * partial schedules). Tests pass synthetic ones.
 *
 * Budgets: budget_s bounds the whole search's wall clock; MCTS splits it
 * over the decisions still to take (never more than decision_s a decision
 * when that is set). iterations > 0 replaces time by counts (iterations
 * per tree per decision for MCTS, samples for random): with a seed, the
 * result is then the same on every run whatever the thread count. When the
 * budget runs out mid-search the best complete state found so far is the
 * answer; there is always one.
 *
 * Memory: each MCTS tree keeps at most max_nodes nodes (two states each);
 * a tree at its cap stops adding nodes and simulates from the leaves it
 * has. Re-rooting frees every node outside the new root's subtree.
 *
 * Ownership: the space and the options' callbacks are borrowed; the
 * result's state is the caller's (pt_search_result_release()).
 * Errors: 0, or a negative PT_E* code with err filled: PT_EINVAL for bad
 * options, PT_ENOMEM, or the error a callback returned (it stops the
 * search). A state the cost function cannot price is not an error: it
 * costs PT_SEARCH_INVALID. No I/O, no global state; threads are created
 * and joined inside pt_search().
 */
#ifndef PROTUNE_PT_SEARCH_H
#define PROTUNE_PT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_cost.h"
#include "protune/pt_error.h"
#include "protune/pt_space.h"

struct pt_sched;

enum pt_search_algo {
	PT_SEARCH_MCTS, PT_SEARCH_BEAM, PT_SEARCH_GREEDY, PT_SEARCH_RANDOM
};

/* MCTS selection formulas, ProTuner's Table 1, with n a node's visits,
 * n_j a child's and c_i the costs of the child's simulations (relative to
 * the tree's first simulation):
 *   PT_MCTS_PROTUNER  (n_j / sum c_i) * (1 + Cp sqrt(ln n / n_j)), Cp 1
 *                     ("mcts_30s")
 *   PT_MCTS_CP10      the same with Cp 10 ("mcts_Cp10_30s")
 *   PT_MCTS_SQRT2     sum (1 / c_i) / n_j + Cp sqrt(2 ln n / n_j),
 *                     Cp sqrt(2) ("mcts_sqrt2_30s", classic UCB1) */
enum pt_mcts_formula { PT_MCTS_PROTUNER, PT_MCTS_CP10, PT_MCTS_SQRT2 };

/* The cost of a state whose schedule cannot be built or priced. */
#define PT_SEARCH_INVALID 1e300

struct pt_search_eval {
	/* Price state `st` in thread `thread`'s context (0 <= thread <
	 * threads): 0 with *cost set (PT_SEARCH_INVALID when it cannot be
	 * priced), or a negative PT_E* that stops the search. Called from
	 * several threads at once, never twice at once for one thread. */
	int (*cost)(void *ctx, int thread, const struct pt_space_state *st,
		    double *cost);
	/* Optional (NULL: none): the schedule of the state `thread` priced
	 * last, as pt_space_sched_scratch() builds it, or NULL when that
	 * call built none; *revs gets its Funcs' revisions
	 * (pt_space_scratch_revs()), or NULL. Both borrowed until the
	 * thread prices again; called by that thread only. The beam search
	 * hashes it instead of building the schedule again. */
	const struct pt_sched *(*last_sched)(void *ctx, int thread,
					     const uint64_t **revs);
	void *ctx;
};

/* Measure complete states (cost+real): ms[i] gets the measured time of
 * states[i] in milliseconds, or < 0 when it failed to compile or run.
 * Called from the thread that called pt_search(); a nonzero return stops
 * the search with that error. */
typedef int pt_search_measure_fn(void *ctx,
				 const struct pt_space_state *const *states,
				 int n, double *ms);

struct pt_search_event {
	double elapsed_s;
	long decisions;       /* MCTS root decisions, beam steps */
	long simulations;     /* complete states priced */
	double best_cost;     /* the best cost so far (PT_SEARCH_INVALID:
			       * none yet) */
	double best_ms;       /* the best measured time so far, < 0 none */
	const struct pt_space_state *best; /* the best state so far, or
					    * NULL; valid during the call */
};

/* Called by the thread that called pt_search() after each decision (and
 * whenever the best changes in random search); a nonzero return stops the
 * search with that error. */
typedef int pt_search_progress_fn(void *ctx, const struct pt_search_event *e);

struct pt_search_opts {
	enum pt_search_algo algo;
	double budget_s;         /* wall clock for the whole search, > 0
				  * unless iterations > 0 */
	double decision_s;       /* MCTS: at most this per decision (0: the
				  * budget split over the decisions left) */
	long iterations;         /* > 0: iterations per tree per decision
				  * (MCTS) or samples (random) instead of
				  * time; budget_s still applies when > 0 */
	uint64_t seed;
	int threads;             /* 1.. (0: 1) */
	/* MCTS */
	int trees;               /* standard trees (default 15) */
	int greedy_trees;        /* greedy-simulation trees (default 1) */
	enum pt_mcts_formula formula;
	double cp;               /* > 0 overrides the formula's Cp */
	double widen;            /* progressive widening: a node has at most
				  * ceil(visits^widen) children; 0: a node is
				  * fully expanded before any child is
				  * revisited (default 0.5) */
	size_t max_nodes;        /* per tree (0: 20000) */
	int measure_top;         /* cost+real: at most this many distinct
				  * root children measured per decision
				  * (0: 4) */
	/* beam */
	int beam;                /* beam size (0: 32) */
	int passes;              /* coarse-to-fine passes (0: 5 for beam,
				  * 1 for greedy) */
	/* callbacks */
	struct pt_search_eval eval;
	pt_search_measure_fn *measure;   /* NULL: cost only */
	void *measure_ctx;
	pt_search_progress_fn *progress; /* may be NULL */
	void *progress_ctx;
	/* Warm start (pt_warm.h gives these; pick NULL: a cold start).
	 * Before the search, a first complete state is built from the root:
	 * at each decision, pick() writes the child that takes the earlier
	 * decision and returns 1, or returns 0 and the cheapest child by
	 * cost is taken. The decisions of Funcs for which fixed() is 1 are
	 * then taken as on that path wherever they are valid (in the
	 * trees, their simulations and the root decisions, which cost no
	 * time); the other decisions share the budget, and every tree's
	 * first child on the path carries the first state as its best.
	 * Called from the pt_search() thread. */
	struct pt_search_warm {
		int (*pick)(void *ctx, const struct pt_space_state *st,
			    struct pt_space_work *w,
			    struct pt_space_state *child);
		int (*fixed)(void *ctx, int func);
		void *ctx;
	} warm;
};

/* Defaults: MCTS, 15 + 1 trees, ProTuner's formula, widening 0.5. */
void pt_search_opts_init(struct pt_search_opts *o);

struct pt_search_result {
	struct pt_space_state *best; /* complete; free() */
	double cost;                 /* its cost */
	double measured_ms;          /* its measured time, < 0: not measured */
	long decisions, simulations, nodes, measured, invalid;
	long priced;                 /* states priced, complete or partial
				      * (the beam's candidates) */
	double elapsed_s;
	int out_of_time;             /* the budget ran out mid-search */
	/* The warm start's first state (NULL after a cold start; free())
	 * and its cost. */
	struct pt_space_state *warm;
	double warm_cost;
};

int pt_search(const struct pt_space *sp, const struct pt_search_opts *o,
	      struct pt_search_result *res, struct pt_error *err);
void pt_search_result_release(struct pt_search_result *res);

/* Names: "mcts", "beam", "greedy", "random"; "protuner", "cp10",
 * "sqrt2". Parsing returns -1 for an unknown name. */
const char *pt_search_algo_name(enum pt_search_algo a);
int pt_search_algo_parse(const char *name);
const char *pt_mcts_formula_name(enum pt_mcts_formula f);
int pt_mcts_formula_parse(const char *name);

/* The standard cost function: schedule, features, cost model. It borrows
 * the model, the space and the cost model (all must outlive it) and owns
 * `threads` scratch contexts. The returned struct's .ctx is the
 * evaluator; free it with pt_search_eval_model_free(). PT_ENOMEM. */
int pt_search_eval_model(const struct pt_model *m, const struct pt_space *sp,
			 const struct pt_cost *cost, int threads,
			 struct pt_search_eval *out, struct pt_error *err);
void pt_search_eval_model_free(struct pt_search_eval *ev);

#endif
