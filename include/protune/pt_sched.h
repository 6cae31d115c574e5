/* pt_sched.h: a schedule for a modelled pipeline, as plain C data, its
 * canonical text (doc/schedule-format.md), the legality check that decides,
 * before Halide sees anything, whether it fits a model, and its rendering as
 * Halide C++.
 *
 * A schedule names everything by position, like the model: Funcs fK, stages
 * by index, original loop dims vN / rN. Splits create new dims whose names
 * the schedule chooses ([a-z][a-z0-9_]*, unique within the stage); a dim
 * split from an RVar is an RVar. Per Func there is one compute decision
 * (inline, root, or at a loop of a consumer Func's last stage) and one store
 * decision (root, or a loop enclosing the compute loop); per stage an
 * ordered list of directives, replayed in order as Halide calls.
 *
 * Ownership: a struct pt_sched owns every array and string reachable from
 * it; pt_sched_free() releases all of it. Builders return a pointer to a new
 * zeroed element, valid until the next add on the same array.
 *
 * Errors: 0 or a negative PT_E* code with the optional struct pt_error
 * filled; parse errors say "NAME:LINE: what"; legality errors name the Func
 * (by position and label), the stage and the reason.
 */
#ifndef PROTUNE_PT_SCHED_H
#define PROTUNE_PT_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_model.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"

#define PT_SCHED_FORMAT_VERSION 1

enum pt_compute { PT_COMPUTE_INLINE, PT_COMPUTE_ROOT, PT_COMPUTE_AT };

enum pt_tail {
	PT_TAIL_GUARD,  /* GuardWithIf: always safe */
	PT_TAIL_SHIFT,  /* ShiftInwards */
	PT_TAIL_ROUND   /* RoundUp */
};

enum pt_directive_kind {
	PT_DIR_SPLIT,      /* split dim -> outer, inner by factor, tail */
	PT_DIR_REORDER,    /* order: every current dim, innermost first */
	PT_DIR_VECTORIZE,  /* dim */
	PT_DIR_PARALLEL,   /* dim */
	PT_DIR_UNROLL      /* dim */
};

struct pt_directive {
	enum pt_directive_kind kind;
	char *dim;             /* split, vectorize, parallel, unroll */
	char *outer, *inner;   /* split */
	int64_t factor;        /* split: >= 2 */
	enum pt_tail tail;     /* split */
	struct pt_strvec order;/* reorder */
};

struct pt_sched_stage {
	int ndirs;
	struct pt_directive *dirs;
};

/* A loop site: a loop of Func `func`'s last stage, named as in the
 * schedule. */
struct pt_site {
	int func;
	char *loop;
};

struct pt_sched_func {
	char *label;               /* optional, not checked */
	enum pt_compute compute;
	struct pt_site compute_at; /* PT_COMPUTE_AT */
	int store_root;            /* PT_COMPUTE_AT: 1 stores at root */
	struct pt_site store_at;   /* PT_COMPUTE_AT and !store_root; equal to
				    * compute_at when the text has no store */
	int nstages;
	struct pt_sched_stage *stages;
};

struct pt_sched {
	int version;               /* PT_SCHED_FORMAT_VERSION */
	uint8_t key[16];           /* the model key it was made for */
	struct pt_strvec meta;     /* provenance, "name=value" entries in
				    * order (tuner, budget, seed, measured
				    * time, ...); not part of the legality */
	int nfuncs;
	struct pt_sched_func *funcs;
};

struct pt_sched *pt_sched_new(void);
void pt_sched_free(struct pt_sched *s);
/* A schedule shaped for model `m`: key copied, one func per Func with
 * m->funcs[i].nstages empty stages, every Func compute root. */
struct pt_sched *pt_sched_new_for(const struct pt_model *m);
struct pt_directive *pt_sched_add_directive(struct pt_sched_stage *st);
struct pt_sched *pt_sched_copy(const struct pt_sched *s);
/* The value of the first meta entry NAME=VALUE (borrowed from s; "" when
 * the value is empty), or NULL when there is none. */
const char *pt_sched_meta(const struct pt_sched *s, const char *name);

/* Canonical text. Optional labels are printed when present. */
int pt_sched_print(const struct pt_sched *s, struct pt_strbuf *out);
int pt_sched_parse(const char *text, size_t len, const char *name,
		   struct pt_sched **out, struct pt_error *err);

/* --- the loop nest --------------------------------------------------------- */

/* One loop of a stage after its directives, outermost first. */
struct pt_loop {
	const char *name;      /* borrowed from the schedule or the model */
	const char *label;     /* Halide's name of the original dim it descends
				* from (borrowed from the model) */
	int is_rvar;
	int64_t extent;        /* the constant extent (split inner loops,
				* constant RDoms), or the estimated extent of
				* an original dim, or the estimate divided
				* (rounding up) for split outer loops */
	int const_extent;      /* 1 when the extent is a compile-time constant
				* (inner loops of splits, RVars with constant
				* bounds) */
	enum { PT_LOOP_SERIAL, PT_LOOP_PARALLEL, PT_LOOP_VECTOR,
	       PT_LOOP_UNROLL } kind;
};

struct pt_nest {
	int nloops;
	struct pt_loop *loops; /* outermost first */
};

/* Check that `s` fits `m` and is legal in protune's rules (see
 * doc/schedule-format.md, "Legality"): key, one entry per Func and stage,
 * known dims, compute and store sites that enclose every use, no parallel
 * loop between store and compute, annotations only where Halide is both
 * correct and able (no race on RVars, constant extents for vectorize and
 * unroll, tail strategies that stay inside exact-size buffers), bounded
 * inline chains. Returns 0 or PT_EMISMATCH with the reason in err. Never
 * modifies anything. */
int pt_sched_check(const struct pt_model *m, const struct pt_sched *s,
		   struct pt_error *err);

/* The loop nest of one stage after its directives. The caller frees
 * nest->loops with free(); names are borrowed from m and s. Fails like
 * pt_sched_check on a directive that does not apply. */
int pt_sched_nest(const struct pt_model *m, const struct pt_sched *s,
		  int func, int stage, struct pt_nest *nest,
		  struct pt_error *err);

/* --- Halide C++ ------------------------------------------------------------ */

/* Append, for a schedule that passed pt_sched_check, the body of Halide 14
 * C++ that applies it, in the form Halide's `-e schedule` wraps in
 * apply_schedule_NAME(Pipeline pipeline, Target target): one
 * `Func f_K = pipeline.get_func(K);` per Func, Var/RVar declarations by
 * Halide name, and one call per directive. Names are Halide's (labels from
 * the model) for original dims and the schedule's for split results. */
int pt_sched_to_cpp(const struct pt_model *m, const struct pt_sched *s,
		    struct pt_strbuf *out);

#endif
