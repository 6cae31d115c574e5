/* pt_space.h: the schedule space the tuner searches (doc/space.md).
 *
 * The space is Adams et al. 2019's (§3.1), as ProTuner walks it: Funcs are
 * scheduled one at a time from the outputs back to the inputs, and each
 * Func takes these decisions in turn:
 *
 *   PT_SPACE_GRAN   its compute and storage granularity: inline; root; at
 *                   the end of one tiling level of a Func already
 *                   scheduled whose loops enclose every use (a "site");
 *                   the same after splitting that level in two (a new
 *                   tiling level of the consumer, the Func computed per
 *                   outer tile); or a sliding window (computed at a plain
 *                   loop of the consumer, stored one loop further out).
 *   PT_SPACE_TILE   per stage: the dim vectorized at the native width of
 *                   the Func's narrowest type, and, for a Func at root, a
 *                   tiling whose outer level is parallel.
 *   PT_SPACE_INNER  per stage: none, or a new innermost tiling level
 *                   (register blocking; unrolled when small and constant),
 *                   and in updates whether the reduction loops sit inside
 *                   or outside it.
 *
 * A stage's loops are a stack of tiling levels over its pure dims (each
 * level splits every dim by a power of two, or holds what is left of it),
 * the vector loop innermost; reduction loops keep their order and sit
 * inside one level's pure loops. Tile sizes are powers of two, coarsened
 * (every second, third, ... power) when a level has too many candidates.
 *
 * A decision with a single option is taken without counting as one (an
 * output is always at root; a stage with nothing to vectorize or tile has
 * no PT_SPACE_TILE decision). Unrolling is not a decision: when a state
 * becomes a schedule, the innermost level of a stage is unrolled when its
 * loops are small constants and nothing is computed inside them. Every
 * complete state gives a schedule that passes pt_sched_check(); the space
 * never produces an illegal one (it keeps to guard, shift and round tails
 * where the legality rules allow them, and to the one sliding-window
 * shape they allow).
 *
 * A state is the decisions taken so far, as a flat block of
 * pt_space_state_size() bytes with no pointers: copy it with memcpy(),
 * compare two with memcmp() (every byte is defined), keep as many as
 * needed. The space (the model's analysis, built once) is immutable after
 * pt_space_new() and may be shared by any number of threads; each thread
 * passes its own struct pt_space_work (scratch memory, also holding the
 * schedule pt_space_sched_scratch() builds).
 *
 * Randomness comes from the caller: a uint64_t splitmix64 state, advanced
 * by the calls that draw. The same space, state and generator state always
 * give the same result.
 *
 * Ownership: pt_space_new() borrows the model, which must outlive the
 * space. The caller frees what the _new functions return with the matching
 * _free; state memory is the caller's. Errors: 0 (or a count) on success,
 * a negative PT_E* code otherwise (PT_ENOMEM; PT_EINVAL for a bad model or
 * options, or for a complete state where a child is asked for). No I/O, no
 * global state.
 */
#ifndef PROTUNE_PT_SPACE_H
#define PROTUNE_PT_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"

#define PT_SPACE_MAX_LEVELS 4  /* tiling levels of one stage */
#define PT_SPACE_MAX_ARGS 8    /* pure dims a stage may have to be tiled;
				* wider stages are computed without
				* directives and hold no compute sites */

/* The decisions (pt_space_next()). */
enum { PT_SPACE_GRAN = 1, PT_SPACE_TILE = 2, PT_SPACE_INNER = 3 };

/* Pruning rules (Adams 2019 §3.2 and a few of protune's), each a switch so
 * that its effect can be measured. doc/space.md says exactly what each one
 * removes. */
enum {
	/* Parallel loops only in the outermost level of a Func at root. Off:
	 * Funcs computed at a site may take parallel tilings too. */
	PT_SPACE_PRUNE_PARALLEL_OUTER = 1u << 0,
	/* A parallel tiling gives between cores and 16 x cores tasks (the
	 * product of its loops' extents), also after a later split of the
	 * level; a stage is serial only when none does. Off: any tiling
	 * with two tasks or more, and serial always. */
	PT_SPACE_PRUNE_PARALLEL_TASKS = 1u << 1,
	/* No compute site, inlining or sliding window that makes a Func
	 * compute more than `recompute` (10) times the points it computes at
	 * root, except single-load Funcs (one load, nothing else). */
	PT_SPACE_PRUNE_RECOMPUTE = 1u << 2,
	/* A sliding window only where the slid loop moves exactly one of the
	 * Func's coordinates. Off: also where it moves several, or none. */
	PT_SPACE_PRUNE_SLIDE_ONE_DIM = 1u << 3,
	/* Inlining adds at most 128 operations to any stage (big expressions
	 * copied into vectorized, unrolled loops make LLVM crawl). */
	PT_SPACE_PRUNE_INLINE_SIZE = 1u << 4,
	/* Vectorize only the innermost pure dim wide enough for a native
	 * vector. Off: any pure dim wide enough. */
	PT_SPACE_PRUNE_VECTOR_DIM = 1u << 5,
	PT_SPACE_PRUNE_ALL = 0x3f
};

struct pt_space_opts {
	unsigned prune;     /* PT_SPACE_PRUNE_* bits */
	int max_levels;     /* tiling levels per stage, 1..PT_SPACE_MAX_LEVELS
			     * (0: PT_SPACE_MAX_LEVELS) */
	int max_tilings;    /* candidate tilings of one level before the
			     * tile sizes are coarsened (0: 128) */
	double recompute;   /* the recompute bound (0: 10) */
	int sliding;        /* offer sliding windows (1, the default) */
};

#define PT_SPACE_OPTS_INIT { PT_SPACE_PRUNE_ALL, 0, 0, 0.0, 1 }

struct pt_space;
struct pt_space_work;
struct pt_space_state;  /* pt_space_state_size() bytes of plain data */

/* Analyse model `m` (which must validate, and outlive the space) into a
 * new space in *out. opts may be NULL for the defaults. */
int pt_space_new(const struct pt_model *m, const struct pt_space_opts *opts,
		 struct pt_space **out, struct pt_error *err);
void pt_space_free(struct pt_space *sp);

/* Bytes of one state of this space (the same for every state). */
size_t pt_space_state_size(const struct pt_space *sp);

/* Scratch memory for one thread; NULL when out of memory. */
struct pt_space_work *pt_space_work_new(const struct pt_space *sp);
void pt_space_work_free(struct pt_space_work *w);

/* Allocate a state (pt_space_state_size() bytes, zeroed); free() it. */
struct pt_space_state *pt_space_state_new(const struct pt_space *sp);

/* Write the root state (no decision taken, forced ones applied) into
 * `st`. */
int pt_space_root(const struct pt_space *sp, struct pt_space_work *w,
		  struct pt_space_state *st);

/* 1 when every Func is decided. */
int pt_space_complete(const struct pt_space *sp,
		      const struct pt_space_state *st);

/* Decisions taken so far (forced ones not counted). */
int pt_space_depth(const struct pt_space *sp,
		   const struct pt_space_state *st);

/* The number of Funcs of the space's model. */
int pt_space_nfuncs(const struct pt_space *sp);

/* Where Func f is computed in st, as pt_space_sched() writes it:
 * PT_COMPUTE_INLINE, PT_COMPUTE_ROOT, or PT_COMPUTE_AT with *site (may be
 * NULL) set to the Func it is computed at. A Func not decided yet is at
 * root. Nothing is built: cheap enough to call for every Func. */
int pt_space_compute(const struct pt_space *sp,
		     const struct pt_space_state *st, int f, int *site);

/* The decision the state waits for: *func gets the Func, *stage the stage
 * (0 for PT_SPACE_GRAN), *what PT_SPACE_GRAN, _TILE or _INNER. Any pointer
 * may be NULL. Returns 0, or PT_EINVAL when the state is complete. */
int pt_space_next(const struct pt_space *sp, const struct pt_space_state *st,
		  int *func, int *stage, int *what);

/* Every child of `st`, in a fixed order. For each, fn(arg, child) is
 * called; the child lives in `w` until fn returns (copy it to keep it),
 * and fn must not pass `w` to this API meanwhile. fn may be NULL to count
 * only; a nonzero return from fn stops the enumeration and is returned.
 * Returns the number of children (at least 1 for a state that is not
 * complete), or a negative PT_E* code. */
typedef int (*pt_space_child_fn)(void *arg,
				 const struct pt_space_state *child);
int pt_space_children(const struct pt_space *sp,
		      const struct pt_space_state *st,
		      struct pt_space_work *w, pt_space_child_fn fn,
		      void *arg);

/* One child of `st` drawn at random without building the others, written
 * to `child` (which may be `st` itself). It is always one of the children
 * pt_space_children() gives; the draw is uniform over the kinds of choice
 * available (inline, root, site, site with a new tiling level, sliding
 * window; no inner level or one), then over the options of that kind.
 * *rng is a splitmix64 state, advanced. */
int pt_space_random_child(const struct pt_space *sp,
			  const struct pt_space_state *st,
			  struct pt_space_work *w, uint64_t *rng,
			  struct pt_space_state *child);

/* Random children until complete (`out` may be `st`). */
int pt_space_random_complete(const struct pt_space *sp,
			     const struct pt_space_state *st,
			     struct pt_space_work *w, uint64_t *rng,
			     struct pt_space_state *out);

/* The schedule of state `st` (a new one in *out, pt_sched_free() it),
 * with a "tuner=space" meta entry and the model's key (hash the model with
 * pt_model_hash() first). In an incomplete state the Funcs not decided yet
 * are at root without directives, which is legal too. */
int pt_space_sched(const struct pt_space *sp, const struct pt_space_state *st,
		   struct pt_sched **out);

/* The same schedule as pt_space_sched() gives, built into memory that w
 * owns and reuses, so that after the first few calls nothing is
 * allocated: *out is w's, borrowed until the next call with w or until w
 * is freed (pt_space_work_free() frees it). Its names are the space's
 * own strings and its arrays w's: read it, print it, featurize it, but
 * neither change nor pt_sched_free() it; pt_sched_copy() it to keep it.
 * Each call rebuilds only the Funcs whose part of the state (their own
 * blocks, their site's, the Funcs computed at them) differs from the
 * state the last call built them from, so a search pricing siblings one
 * after another rebuilds one Func or two. The space must outlive w's use
 * of it, and w must be used with that one space. */
int pt_space_sched_scratch(const struct pt_space *sp,
			   const struct pt_space_state *st,
			   struct pt_space_work *w,
			   const struct pt_sched **out);

/* The coarse part of the schedule pt_space_sched_scratch() gives, in the
 * same memory of w (a call of one after the other rebuilds every Func):
 * each Func's compute and store sites and, per stage, its split
 * directives (without their tails), then its parallel ones (the loops
 * not vectorized) in the order the full schedule has them; no reorder,
 * vectorize or unroll. An entry depends only on its Func's blocks and
 * its site's, not on the Funcs computed at it (they decide unrolls). The
 * beam search's hash_2 reads no more: building this instead of the full
 * schedule for the third pass's filter cut stencil_chain's beam by 1.4%
 * of its instructions. */
int pt_space_sched_coarse(const struct pt_space *sp,
			  const struct pt_space_state *st,
			  struct pt_space_work *w,
			  const struct pt_sched **out);

/* Per Func of w's scratch schedule, its revision: a number, never 0 once
 * built, that changes each time pt_space_sched_scratch() rebuilds that
 * Func's entry (its compute and store sites, its stages' directives) and
 * only then, for as long as w lives (pt_space_sched_coarse()'s entries
 * too). NULL before the first call with w. Owned by w, read-only.
 * pt_features_compute_rev() takes them to replay only the Funcs whose
 * entries changed. */
const uint64_t *pt_space_scratch_revs(const struct pt_space_work *w);

/* Guides (warm starts, doc/tuning.md): a preferred option for some
 * decisions, identified by the Func, stage and kind of the decision. The
 * option is kept without its context, so that it can be taken again in
 * another state that waits for the same decision: the same compute site
 * and level, the same tiling factors, as long as it is valid there.
 *
 * pt_space_guide_set() records, for `parent`'s decision, the option that
 * leads to `child` (a child of parent): 0, or PT_ENOTFOUND when it is not
 * one. pt_space_guide_has() is 1 when the guide has an option for st's
 * decision. pt_space_guided_child() takes it: 1 with the child written,
 * 0 when the guide has none for it or the option is not valid in st (the
 * child is then untouched). pt_space_guided_complete() completes st like
 * pt_space_random_complete() except that it takes the guide's options
 * wherever they are valid. A guide is read-only while shared by threads;
 * free it with pt_space_guide_free() (NULL is fine). */
struct pt_space_guide;
struct pt_space_guide *pt_space_guide_new(const struct pt_space *sp);
void pt_space_guide_free(struct pt_space_guide *g);
int pt_space_guide_set(const struct pt_space *sp, struct pt_space_guide *g,
		       const struct pt_space_state *parent,
		       const struct pt_space_state *child,
		       struct pt_space_work *w);
int pt_space_guide_has(const struct pt_space *sp,
		       const struct pt_space_guide *g,
		       const struct pt_space_state *st);
int pt_space_guided_child(const struct pt_space *sp,
			  const struct pt_space_guide *g,
			  const struct pt_space_state *st,
			  struct pt_space_work *w,
			  struct pt_space_state *child);
int pt_space_guided_complete(const struct pt_space *sp,
			     const struct pt_space_guide *g,
			     const struct pt_space_state *st,
			     struct pt_space_work *w, uint64_t *rng,
			     struct pt_space_state *out);

/* splitmix64: the next number of the generator whose state is *s. */
uint64_t pt_space_rand(uint64_t *s);

#endif
