/* pt_features.h: the features of a complete schedule, per stage, for the
 * cost model (doc/features.md defines every one).
 *
 * Two kinds, as in Adams et al. 2019 §4.1:
 * - schedule features (PT_FEAT_*, PT_FEAT_COUNT doubles per stage of the
 *   model): counts of points, vectors, scalars, allocations, tasks and
 *   loads; bytes and contiguous lines written and read at root, per
 *   parallel task, per realization (storage site), per production (compute
 *   site) and per vector (innermost); working sets; redundant recompute.
 *   They depend on the schedule and are computed by pt_features_compute().
 * - algorithm features (PT_ALGO_*, PT_ALGO_COUNT doubles per stage): the
 *   op histogram of the model by operation and type class, and the access
 *   patterns of its loads and stores. They depend on the model only and are
 *   computed once by pt_features_new().
 *
 * A context (struct pt_features) is built once per model: it compiles the
 * footprints (pt_footprint.h), the access Jacobians and the algorithm
 * features, and owns the scratch memory pt_features_compute() needs, so
 * featurizing a schedule allocates nothing once the scratch has grown to
 * the largest schedule seen (pt_features_forget() below says what else it
 * keeps between schedules). It also keeps, for the last few sets of
 * inlined Funcs it met (at most 64 sets, about 2 MB), the part of the
 * features that depends on that set alone (the regions at root and what
 * each stage reads at root); a set met again reuses it, with the same
 * results bit for bit, and a new set may allocate.
 *
 * Schedules must have passed pt_sched_check() for the same model:
 * pt_features_compute() checks only what it needs to stay in bounds (names
 * that resolve, sites that exist) and fails with PT_EMISMATCH otherwise.
 *
 * Ownership: the context borrows the model (which must outlive it and not
 * change) and owns everything else; free it with pt_features_free().
 * Errors: 0 or a negative PT_E* code with the optional struct pt_error
 * filled.
 * Threads: a context is used by one thread at a time (it holds scratch);
 * make one per thread. No global state.
 */
#ifndef PROTUNE_PT_FEATURES_H
#define PROTUNE_PT_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"

/* The version of the feature definitions and row layouts below: bump it
 * whenever a feature is added, removed, reordered or defined differently,
 * so that cost model weights fitted to older features are refused.
 * 3: the cost terms gained boundary_gathers (pt_cost.c), which moves
 * loads out of vector_loads; weights fitted before do not fit.
 * 4: a sliding window's bytes at realization are its folded storage.
 * 5: on AVX-512, a `guard` tail is one masked vector, not scalars.
 * 6: strided_loads walks on through the loops around a compute site.
 * 7: strided_loads adds the restarts of short bursts over too many rows. */
#define PT_FEAT_VERSION 7

/* Schedule features, in the order of each stage's row. */
enum pt_feat {
	/* counts */
	PT_FEAT_NUM_REALIZATIONS,
	PT_FEAT_NUM_PRODUCTIONS,
	PT_FEAT_POINTS_PER_REALIZATION,
	PT_FEAT_POINTS_PER_PRODUCTION,
	PT_FEAT_POINTS_TOTAL,
	PT_FEAT_POINTS_MINIMUM,
	PT_FEAT_REDUNDANT_RECOMPUTE,
	PT_FEAT_INNERMOST_LOOP_EXTENT,
	PT_FEAT_INNERMOST_PURE_LOOP_EXTENT,
	PT_FEAT_UNROLLED_LOOP_EXTENT,
	PT_FEAT_INNER_PARALLELISM,
	PT_FEAT_OUTER_PARALLELISM,
	PT_FEAT_VECTOR_SIZE,
	PT_FEAT_NATIVE_VECTOR_SIZE,
	PT_FEAT_NUM_VECTORS,
	PT_FEAT_NUM_SCALARS,
	PT_FEAT_INLINED_CALLS,
	/* loads */
	PT_FEAT_VECTOR_LOADS_PER_VECTOR,
	PT_FEAT_SCALAR_LOADS_PER_VECTOR,
	PT_FEAT_SCALAR_LOADS_PER_SCALAR,
	/* what the stage writes */
	PT_FEAT_BYTES_AT_ROOT,
	PT_FEAT_INNERMOST_BYTES_AT_ROOT,
	PT_FEAT_BYTES_AT_REALIZATION,
	PT_FEAT_INNERMOST_BYTES_AT_REALIZATION,
	PT_FEAT_BYTES_AT_PRODUCTION,
	PT_FEAT_INNERMOST_BYTES_AT_PRODUCTION,
	PT_FEAT_BYTES_AT_TASK,
	PT_FEAT_INNERMOST_BYTES_AT_TASK,
	/* what the stage reads */
	PT_FEAT_BYTES_READ_AT_ROOT,
	PT_FEAT_LINES_READ_AT_ROOT,
	PT_FEAT_BYTES_READ_PER_REALIZATION,
	PT_FEAT_LINES_READ_PER_REALIZATION,
	PT_FEAT_BYTES_READ_PER_PRODUCTION,
	PT_FEAT_LINES_READ_PER_PRODUCTION,
	PT_FEAT_BYTES_READ_PER_TASK,
	PT_FEAT_LINES_READ_PER_TASK,
	PT_FEAT_BYTES_READ_PER_VECTOR,
	PT_FEAT_LINES_READ_PER_VECTOR,
	PT_FEAT_ALLOCATION_BYTES_READ_PER_REALIZATION,
	/* working sets */
	PT_FEAT_WORKING_SET,
	PT_FEAT_WORKING_SET_AT_TASK,
	PT_FEAT_WORKING_SET_AT_PRODUCTION,
	PT_FEAT_WORKING_SET_AT_REALIZATION,
	PT_FEAT_WORKING_SET_AT_ROOT,
	PT_FEAT_COUNT
};

/* Algorithm features: PT_ALGO_OP(kind, type class) counts operations per
 * point (the model's op histogram), PT_ALGO_ACCESS(pattern, access kind)
 * counts accesses (with their model counts) by the shape of their
 * Jacobian. */
enum pt_algo_op {
	PT_OP_ADD, PT_OP_SUB, PT_OP_MUL, PT_OP_DIV, PT_OP_MOD, PT_OP_MIN,
	PT_OP_MAX, PT_OP_EQ, PT_OP_NE, PT_OP_LT, PT_OP_LE, PT_OP_GT, PT_OP_GE,
	PT_OP_AND, PT_OP_OR, PT_OP_NOT, PT_OP_SELECT, PT_OP_CAST, PT_OP_LOAD,
	PT_OP_CALL, PT_OP_OTHER, PT_OP_COUNT
};
enum pt_algo_type {
	PT_TC_BOOL, PT_TC_INT8, PT_TC_INT16, PT_TC_INT32, PT_TC_INT64,
	PT_TC_FLOAT, PT_TC_DOUBLE, PT_TC_COUNT
};
enum pt_algo_pattern {
	PT_PAT_POINTWISE, PT_PAT_TRANSPOSE, PT_PAT_BROADCAST, PT_PAT_SLICE,
	PT_PAT_OTHER, PT_PAT_COUNT
};
enum pt_algo_access {
	PT_ACC_FUNC, PT_ACC_SELF, PT_ACC_INPUT, PT_ACC_STORE, PT_ACC_COUNT
};
#define PT_ALGO_OP(op, tc) ((op) * PT_TC_COUNT + (tc))
#define PT_ALGO_ACCESS(pat, acc) \
	(PT_OP_COUNT * PT_TC_COUNT + (pat) * PT_ACC_COUNT + (acc))
#define PT_ALGO_COUNT \
	(PT_OP_COUNT * PT_TC_COUNT + PT_PAT_COUNT * PT_ACC_COUNT)

/* Names as doc/features.md spells them: pt_feat_name() gives
 * "num_vectors" (NULL out of range); pt_algo_name() writes
 * "op.add.int32" or "access.pointwise.func" into buf (at most 32 bytes
 * with the NUL) and returns 0, or PT_EINVAL out of range or when `size` is
 * too small. */
const char *pt_feat_name(int feat);
int pt_algo_name(int index, char *buf, size_t size);

struct pt_features;

int pt_features_new(const struct pt_model *m, struct pt_features **out,
		    struct pt_error *err);
void pt_features_free(struct pt_features *fx);

/* The algorithm features of model stage `stage` (an index into
 * m->stages): PT_ALGO_COUNT doubles, owned by the context. */
const double *pt_features_algo(const struct pt_features *fx, int stage);

/* Featurize schedule `s`: `out` receives m->nstages rows of PT_FEAT_COUNT
 * doubles, row i for m->stages[i]. Rows of inlined Funcs hold only what
 * doc/features.md says (their calls, vectors and scalars); the rest is 0. */
int pt_features_compute(struct pt_features *fx, const struct pt_sched *s,
			double *out, struct pt_error *err);

/* The same for a partial state of the space, whose Funcs below index
 * `first` are not decided yet (at root in s, without directives): their
 * rows are left 0 and their features are not computed (the decided
 * Funcs' rows do not depend on them), nor are their directives read (so
 * not checked either), and pt_features_loops() gives them no loops; the
 * rows of the Funcs from `first` on are bit for bit what
 * pt_features_compute() writes. `first` <= 0 is pt_features_compute(). */
int pt_features_compute_partial(struct pt_features *fx,
				const struct pt_sched *s, int first,
				double *out, struct pt_error *err);

/* pt_features_compute_partial(), told which Funcs' entries in s are the
 * same as at the context's last call: `rev` is NULL (every decided Func's
 * directives are replayed) or, per Func, a revision number from the
 * builder of s that changes whenever that Func's entry changes, never 0
 * for an entry built (pt_space_scratch_revs() gives them for the schedule
 * pt_space_sched_scratch() rebuilds in place). A Func whose revision is
 * the one it had when the context last replayed it takes the loops of
 * that replay again. The revisions given to a context must all come from
 * one builder, which must not change an entry without changing its
 * revision; call pt_features_forget() before taking them from another.
 * The rows are the same with or without revisions. */
int pt_features_compute_rev(struct pt_features *fx, const struct pt_sched *s,
			    int first, const uint64_t *rev, double *out,
			    struct pt_error *err);

/* The context keeps, per stage, the row it last computed for it (but the
 * working sets, which depend on every allocation) with the bytes of
 * everything that row was computed from: the stage's loops and boxes, its
 * Func's sites, regions and counts, the inlined set, and the storage of
 * the Funcs it reads. A stage whose inputs are the same bytes again gets
 * that row back, bit for bit what computing it gives; a search pricing a
 * parent's children one after another recomputes only the rows their
 * decision changed. pt_features_forget() drops what is kept, so that the
 * next schedule's rows are all computed (tests compare the two), and the
 * loops of the last replay of each Func (pt_features_compute_rev()). */
void pt_features_forget(struct pt_features *fx);

/* One loop of a stage as the last pt_features_compute() saw it, outermost
 * first: the schedule's loop nest (pt_sched_nest()) with the extent of one
 * production of the Func (not the estimate), the stage dim it descends
 * from, and its step along that dim. */
struct pt_feat_loop {
	const char *name;  /* borrowed from the schedule or the context */
	int dim;           /* index into the stage's dims */
	int kind;          /* PT_LOOP_* */
	int is_split_inner;/* the inner half of a split: constant extent */
	int tail;          /* split inner halves: the split's enum pt_tail;
			    * otherwise -1 */
	int64_t extent;
	int64_t stride;
};

/* The loops of model stage `stage` in the last featurized schedule, valid
 * until the next pt_features_compute() on this context; returns their
 * count (0 for an inlined Func's stage). A stage has at most
 * PT_FEAT_MAXLOOPS loops and each dim at most 8 splits of its outer loops
 * (pt_features_compute() fails with PT_EINVAL beyond that). */
#define PT_FEAT_MAXLOOPS 64
int pt_features_loops(const struct pt_features *fx, int stage,
		      const struct pt_feat_loop **loops);

/* The box one realization of node `node` allocates (pt_footprint.h's
 * numbering): a Func's region at its storage site in the last featurized
 * schedule (NULL when it is inlined), an input's estimate. Valid until
 * the next pt_features_compute() on this context. */
const struct pt_box *pt_features_storage(const struct pt_features *fx,
					 int node);

/* The compute site of Func `func` in the last featurized schedule: 1 with
 * the consumer Func in *j and the position in *p of the loop of its last
 * stage (pt_features_loops()) it is computed in; 0 at root and -1 inlined,
 * both with *j = *p = -1. Valid until the next pt_features_compute(). */
int pt_features_site(const struct pt_features *fx, int func, int *j,
		     int *p);

/* What a search that prices schedules one after another may keep from
 * the schedule before, when pt_features_compute_rev() was given the
 * revisions of their entries:
 * - pt_features_serial(): how many schedules fx has featurized to the
 *   end (it grows by one with each);
 * - pt_features_top(): the highest Func whose entry or flags (inlined,
 *   decided) changed from the schedule before to the last one (-1: none;
 *   the last Func when unknown). The regions, loops, sites and storage of
 *   the Funcs above it are the same in both;
 * - pt_features_row_same(): whether stage `stage`'s row in the last
 *   schedule was taken as the one before's because its Func and every
 *   Func it reads lie above that Func, with the same Funcs inlined (0
 *   otherwise, and for stages it wrote no row for).
 * None of them fails or allocates. */
uint64_t pt_features_serial(const struct pt_features *fx);
int pt_features_top(const struct pt_features *fx);
int pt_features_row_same(const struct pt_features *fx, int stage);

#endif
