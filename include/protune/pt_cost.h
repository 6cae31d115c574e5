/* pt_cost.h: the cost model: a predicted runtime for a complete schedule,
 * from its features (pt_features.h), for the machine it was trained on
 * (doc/cost-model.md).
 *
 * Two layers, as issue 4 asks:
 * - hand-designed terms (PT_TERM_*): per schedule, sums over its stages of
 *   quantities whose cost scales with runtime (vector and scalar work,
 *   loads, gathers, broadcasts and stores after the hoisting of
 *   loop-invariant loads, memory traffic against the cache sizes,
 *   allocations and page faults, task launches, loop and production
 *   overheads), each divided by the parallel speedup the stage gets on the
 *   model's cores where the work is spread over them. pt_cost_terms()
 *   takes what does not depend on the schedule from a struct
 *   pt_cost_prep made once per model, and reads the loop nests of the
 *   last pt_features_compute() on its context (pt_features_loops()).
 *   The linear layer predicts runtime as sum_k coef[k] * term[k],
 *   coef >= 0, fitted to measured runtimes by least squares on their logs
 *   (pt_cost_fit()).
 * - optionally, boosted regression trees (pt_gbt.h, after Bergstra et al.
 *   2012) on scale-free inputs derived from the terms (pt_cost_gbt_input),
 *   predicting the log of measured over linear runtime, centred per
 *   pipeline (so the trees learn what ranks schedules within a pipeline,
 *   not the pipelines' scale). The prediction is then
 *   linear * exp(trees).
 *
 * Text form ("protune-cost 7", doc/cost-model.md): the feature version it
 * was fitted for, the coefficients by term name, the trees. A file fitted
 * for another PT_FEAT_VERSION or naming an unknown term is refused.
 *
 * Ownership: a struct pt_cost is owned by its creator; free it with
 * pt_cost_free(). It is immutable after creation and may be shared by
 * threads. So is a struct pt_cost_prep (the per-model part of the terms,
 * below), freed with pt_cost_prep_free(). Errors: 0 or a negative PT_E*
 * with the optional struct pt_error filled; parse errors are PT_EFORMAT
 * with "NAME:LINE: ...". No I/O, no global state.
 */
#ifndef PROTUNE_PT_COST_H
#define PROTUNE_PT_COST_H

#include <stddef.h>

#include "protune/pt_error.h"
#include "protune/pt_features.h"
#include "protune/pt_model.h"
#include "protune/pt_strbuf.h"

/* 7: a stage the schedule leaves scalar whose innermost loop LLVM's
 * loop vectorizer turns into vector code counts as vectors of LLVM's
 * width (doc/cost-model.md, "LLVM's loop vectorizer"); 6: no `calls` term: a transcendental call counts as the vector or
 * scalar instructions it compiles to (doc/cost-model.md); 5: `loops`
 * counts iterations of the innermost loop left in the code (version 4
 * counted the entries of the innermost loop, vectorized or not), and the
 * buffers of Funcs promoted to registers add no stores or loads; 4:
 * `pages` counts the page faults of glibc's heap in the steady state.
 * Coefficients of an older file do not fit the terms. */
#define PT_COST_FORMAT_VERSION 7

/* The hand-designed terms (doc/cost-model.md defines each). */
enum pt_term {
	PT_TERM_STAGES,       /* stages that are not inlined */
	PT_TERM_VECTOR_OPS,   /* native vector operations */
	PT_TERM_SCALAR_OPS,   /* scalar operations */
	PT_TERM_VECTOR_LOADS, /* dense vector loads, after hoisting */
	PT_TERM_GATHERS,      /* scalar loads made to fill vectors */
	PT_TERM_BROADCASTS,   /* loads of one value for a whole vector */
	PT_TERM_SCALAR_LOADS, /* loads of scalar code */
	PT_TERM_STORES,       /* native vectors stored */
	PT_TERM_UPDATE_STORES,/* an update's loads and stores of its own
			       * Func left in the loop (not hoisted) */
	PT_TERM_LINES,        /* cache lines brought into productions */
	PT_TERM_L2_LINES,     /* ... that miss a per-core L2 */
	PT_TERM_SPILL_LINES,  /* cache lines written to buffers too large
			       * for L2 (read back by their consumers) */
	PT_TERM_ALLOCS,       /* allocations */
	PT_TERM_PAGES,        /* pages of heap allocations touched afresh */
	PT_TERM_TASKS,        /* parallel tasks launched */
	PT_TERM_LOOPS,        /* iterations of the innermost real loop */
	PT_TERM_PRODUCTIONS,  /* productions (bounds, loop set-up) */
	PT_TERM_STRIDED_LOADS,/* runs along a row of data too large for L2
			       * that a walk across more than 32 rows
			       * interrupts (prefetch streams restarted) */
	PT_TERM_BOUNDARY_GATHERS, /* lanes of dense loads that Halide leaves
			       * clamped, in a partitioned loop's
			       * boundary iterations */
	PT_TERM_COUNT
};

/* The term's name ("vector_ops"), NULL out of range. */
const char *pt_term_name(int term);

/* What the terms need of a model, worked out once rather than for every
 * schedule: the op histogram's counts, the accesses grouped by how they
 * move with their coefficients as doubles, element sizes, the inputs'
 * sizes, the heap's blocks per Func. pt_cost_prep_new() reads the model
 * and the algorithm features of fx (a context of the same model; it is
 * not kept). The prep borrows the model, which must outlive it and not
 * change; it is immutable after creation and may be shared by threads
 * (each with its own features context). Free it with
 * pt_cost_prep_free(). PT_ENOMEM when out of memory. */
struct pt_cost_prep;
int pt_cost_prep_new(const struct pt_model *m, const struct pt_features *fx,
		     struct pt_cost_prep **out, struct pt_error *err);
void pt_cost_prep_free(struct pt_cost_prep *p);

/* The terms of one schedule of p's model from its feature rows (`rows`,
 * m->nstages rows of PT_FEAT_COUNT, as pt_features_compute() wrote them
 * with context fx, whose loop nests must still be those of the same
 * schedule: call it right after pt_features_compute()) into
 * terms[0..PT_TERM_COUNT-1]. Allocates nothing. */
void pt_cost_terms(const struct pt_cost_prep *p, const struct pt_features *fx,
		   const double *rows, double *terms);

/* A thread's memo for pt_cost_terms_partial(): the last schedule's heap
 * model (its allocations, in the order they happen, and the `pages` they
 * cost), and each stage's terms as last computed with the bytes of
 * everything they were computed from (the stage's row but its working
 * sets, its loops, the loops of the sites its Func is computed in, which
 * Funcs are inlined or in registers, and the storage of the Funcs its
 * loads reach). A search prices many schedules in a row whose
 * allocations are the same (the tilings of one Func computed at root),
 * and a beam's children differ from each other in one Func's decision;
 * with a memo, such a schedule's `pages` and its unchanged stages' terms
 * are the memo's, bit for bit what computing them would give. Where
 * stages seldom repeat (random complete schedules), stages are looked up
 * in two schedules of 16 only. One memo per thread: it is written by
 * every call that is given it. Create it with pt_cost_memo_new() (NULL
 * when out of memory) for the prep it is used with; free it with
 * pt_cost_memo_free() (NULL is a no-op). Its keys grow with the largest
 * stage seen (the only allocation with a memo). */
struct pt_cost_memo;
struct pt_cost_memo *pt_cost_memo_new(const struct pt_cost_prep *p);
void pt_cost_memo_free(struct pt_cost_memo *memo);

/* As pt_cost_terms() for a partial state of a search, whose Funcs below
 * `first_func` are not decided yet (at root in its schedule) and whose
 * rows are 0 (pt_features_compute_partial() with the same first_func), so
 * that only the Funcs decided are priced (as Adams 2019 prices partial
 * schedules): reads of those Funcs are reads of their buffers, never
 * followed into what they read as if they were inlined, and priced as
 * near (they may still be computed in the reader's tiles). first_func 0
 * is pt_cost_terms(). `memo`: NULL, or the calling thread's memo (above),
 * which changes no result. */
void pt_cost_terms_partial(const struct pt_cost_prep *p,
			   const struct pt_features *fx, const double *rows,
			   int first_func, struct pt_cost_memo *memo,
			   double *terms);

/* As pt_cost_terms(), and each stage's share of them into `per`
 * (m->nstages rows of PT_TERM_COUNT, for m->stages[i]; NULL: not
 * wanted): an inlined Func's row holds the work it adds to its readers.
 * `pages` is the pipeline's (its allocations interleave), so it is in
 * `terms` only and 0 in every row. The rows sum to `terms` otherwise. */
void pt_cost_stage_terms(const struct pt_cost_prep *p,
			 const struct pt_features *fx, const double *rows,
			 double *terms, double *per);

/* The inputs of the trees for one schedule: PT_COST_GBT_DIMS doubles,
 * scale-free (each term's share of the linear prediction, the logs of the
 * terms relative to the linear prediction), from its terms and the linear
 * coefficients `coef`. */
#define PT_COST_GBT_DIMS (2 * PT_TERM_COUNT + 1)
void pt_cost_gbt_input(const double *coef, const double *terms, double *x);

struct pt_cost;

/* Predicted runtime (arbitrary units, comparable within one model and
 * machine; lower is faster) from a schedule's terms. */
double pt_cost_predict(const struct pt_cost *c, const double *terms);
/* The linear layer alone. */
double pt_cost_linear(const struct pt_cost *c, const double *terms);

/* Fitting. terms: n rows of PT_TERM_COUNT; ms: measured runtimes (> 0);
 * group: the pipeline of each row (any ints; rows of one pipeline share
 * one). trees: 0 for the linear layer only, else the trees' count (the
 * other tree parameters are pt_gbt's defaults: depth 4, 10 rows a leaf,
 * shrinkage 0.1; the default count is 30, though in doc/cost-model.md's
 * comparison no count of trees ranks held-out examples measurably better
 * than the linear layer alone). ridge: a small L2 penalty on the
 * (column-scaled) coefficients, 0 for none.
 *
 * loss: how the linear layer's coefficients (all >= 0) are chosen.
 * - PT_COST_LOSS_LOG (the default): least squares on the log of the
 *   runtimes, log ms = log(sum coef*term) + a free offset per pipeline,
 *   so that every schedule counts the same whatever its runtime (what
 *   ranking needs) and pipelines may differ by a constant factor. That
 *   leaves the coefficients' common scale free; it is fixed so that the
 *   geometric mean of the predictions over all rows equals that of the
 *   runtimes. Solved by Gauss-Newton steps, each a non-negative least
 *   squares problem, with a line search.
 * - PT_COST_LOSS_LINEAR: least squares on the runtimes with a free
 *   additive offset per pipeline; samples weigh 1 / (ms^p * g^(2-p)), p
 *   the weight_power, g the pipeline's geometric mean runtime (2:
 *   relative error; 0: error relative to the pipeline's typical runtime).
 *   weight_power is not used by the log loss.
 *
 * PT_EINVAL for n == 0, a runtime <= 0 or a value that is not finite. */
enum pt_cost_loss {
	PT_COST_LOSS_LOG,
	PT_COST_LOSS_LINEAR
};
struct pt_cost_fit_opts {
	int trees;
	double ridge;
	unsigned long long seed;
	double weight_power;
	int loss;             /* enum pt_cost_loss */
};
#define PT_COST_FIT_OPTS_INIT { 30, 1e-6, 1, 0.0, PT_COST_LOSS_LOG }
int pt_cost_fit(const double *terms, const double *ms, const int *group,
		size_t n, const struct pt_cost_fit_opts *opts,
		struct pt_cost **out, struct pt_error *err);

/* The fitted coefficients (PT_TERM_COUNT) and whether it has trees. */
const double *pt_cost_coef(const struct pt_cost *c);
int pt_cost_has_trees(const struct pt_cost *c);

/* Text form: append / parse (`name` prefixes messages). */
int pt_cost_write(const struct pt_cost *c, struct pt_strbuf *out);
int pt_cost_parse(const char *text, size_t len, const char *name,
		  struct pt_cost **out, struct pt_error *err);
void pt_cost_free(struct pt_cost *c);

/* Ranking helpers for evaluation (n >= 2): Spearman's rank correlation of
 * a and b (average ranks for ties; 0 when either is constant), and the
 * top-1 regret: measured[argmin predicted] / min measured. */
double pt_cost_spearman(const double *a, const double *b, size_t n);
double pt_cost_top1_regret(const double *predicted, const double *measured,
			   size_t n);

#endif
