/* pt_warm.h: warm starts — tuning a pipeline again after an edit, from
 * the schedule tuned for its earlier version (doc/tuning.md, "Warm
 * starts").
 *
 * pt_warm_new() compares the two models stage by stage with the stages'
 * local hashes (pt_model_hash(): a stage's own block, not its
 * producers'), so that an edit to one stage changes that stage only, not
 * everything downstream of it. A Func is kept when every one of its
 * stages has the same local hash at the same position in the earlier
 * model; it is open when it changed or reads or feeds a Func that changed
 * (when nothing changed, as when a schedule is tuned further, every Func
 * is open). The search then:
 *
 *   - builds the first complete schedule by taking, for each kept Func,
 *     the child whose schedule agrees best with the earlier schedule's
 *     entries for that Func and its compute site (pt_warm_pick()); so
 *     too for a changed Func of the same shape (the same name, stages
 *     and loop dims as the earlier Func at its index: an edited
 *     expression), so that the first schedule is the earlier one
 *     wherever it still applies; for any other changed Func, the
 *     cheapest child by cost;
 *   - takes the decisions of kept Funcs that are not open as they were
 *     (the search's guide), in the tree and in its simulations;
 *   - spends the budget on the decisions of open Funcs, with the first
 *     schedule as the prior of every tree.
 *
 * A warm start from the store alone (a fresh clone: the cache holds no
 * model of the earlier version) has no earlier model. Every tuned
 * schedule therefore carries its stages' local hashes in a meta entry
 * (pt_warm_hashes_meta(): "stage_hashes=H0,H1,...", the first 8 bytes of
 * each hash in hex, stages in model order), and pt_warm_new_stored()
 * compares those with m's; m stands in for the earlier model otherwise
 * (the same Funcs, names and loop dims), which holds for the edits a
 * warm start is for: changed expressions. When the earlier pipeline had
 * other stages, the entry does not match and the start is cold.
 *
 * Ownership: pt_warm_new() and pt_warm_new_stored() borrow the models
 * and the schedule, which must outlive the struct pt_warm; it owns
 * nothing else.
 * Errors: 0 or a negative PT_E*: PT_ENOMEM; PT_EINVAL when a model is
 * not hashed. A schedule of another shape is not an error: its Funcs
 * count as changed.
 */
#ifndef PROTUNE_PT_WARM_H
#define PROTUNE_PT_WARM_H

#include "protune/pt_error.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_space.h"
#include "protune/pt_strvec.h"

#define PT_WARM_META "stage_hashes"
#define PT_WARM_HASH_BYTES 8

struct pt_warm;

/* m and old must be hashed (pt_model_hash()); old_sched is the schedule
 * tuned for old (it need not pass pt_sched_check against m). */
int pt_warm_new(const struct pt_model *m, const struct pt_model *old,
		const struct pt_sched *old_sched, struct pt_warm **out,
		struct pt_error *err);
/* From old_sched alone, with its stage_hashes meta entry; m must be
 * hashed. PT_ENOTFOUND (err says why) when the entry is missing or does
 * not list one hash per stage of m, or old_sched has another Func count:
 * the caller then starts cold. */
int pt_warm_new_stored(const struct pt_model *m,
		       const struct pt_sched *old_sched, struct pt_warm **out,
		       struct pt_error *err);
void pt_warm_free(struct pt_warm *wm);   /* NULL is fine */

/* Append m's stage_hashes entry to meta (m hashed). 0 or PT_ENOMEM. */
int pt_warm_hashes_meta(const struct pt_model *m, struct pt_strvec *meta);

/* Stages of m; stages whose local hash is not the earlier one's. */
int pt_warm_stages(const struct pt_warm *wm);
int pt_warm_changed(const struct pt_warm *wm);
int pt_warm_func_kept(const struct pt_warm *wm, int func);
int pt_warm_func_open(const struct pt_warm *wm, int func);

/* For st, a state of a space of m waiting for a decision of Func F: when
 * F is kept or of the same shape as before, write into `child` the next
 * state of the path (a beam from st to a complete state, 16 wide) that
 * agrees best with the earlier schedule over those Funcs, and return 1;
 * the path is kept in the struct pt_warm and reused while st lies on it,
 * so one thread at a time calls this; 0 for any other F (nothing
 * written); a negative
 * PT_E* on error. The signature is pt_search_warm's `pick`, with the
 * struct pt_warm as ctx; `sp` must be the space pt_warm_bind() gave. */
int pt_warm_pick(void *ctx, const struct pt_space_state *st,
		 struct pt_space_work *w, struct pt_space_state *child);
/* 1 when Func f's decisions are to be taken as they were (kept, not
 * open); pt_search_warm's `fixed`. */
int pt_warm_fixed(void *ctx, int func);
/* The space the picks are made in (a space of m). */
void pt_warm_bind(struct pt_warm *wm, const struct pt_space *sp);

/* Funcs of s (a schedule of m) whose entries equal the earlier
 * schedule's, among the kept ones. */
int pt_warm_count_kept(const struct pt_warm *wm, const struct pt_sched *s);

#endif
