/* pt_lookup.h: what protune-cc does with one pipeline model — look its key
 * up in the cache and the git store, tune on a miss under a lease, store
 * the result, count it, and say what happened (doc/protune-cc.1, "Hits,
 * misses and their reasons").
 *
 * pt_lookup_answer is a pt_serve_answer_fn: the server calls it once per
 * plugin session with the parsed, hashed model. Order of the look-up:
 *   1. the cache (LMDB); an entry that does not parse or fit the model is
 *      deleted and counted (miss reason cache-misfit);
 *   2. the store file STORE/GENERATOR/KEY.schedule; a file that cannot be
 *      read, does not parse, or does not fit is reported with its path
 *      (and line) and is a miss (store-unreadable, store-unparsable,
 *      store-misfit), never applied; a good one is copied into the cache;
 *   3. a miss: in frozen mode an error naming generator, function, target
 *      and key; otherwise the key's tuning lease is taken (or waited for:
 *      another process is tuning it, and its result is then a hit), the
 *      model is tuned (pt_tune), and the schedule, with its provenance, is
 *      written to the cache and the store (not in readonly mode).
 * In retune mode a hit is tuned again and the new schedule replaces the
 * old only when both were measured and the new one is faster.
 *
 * Failures of the cache or the store never fail a build: the first one is
 * warned about and that part is turned off for the rest of the run.
 *
 * Ownership: the struct's inputs are borrowed and must outlive it; the
 * results are plain data. One struct per protune-cc process; not
 * thread-safe.
 */
#ifndef PROTUNE_PT_LOOKUP_H
#define PROTUNE_PT_LOOKUP_H

#include <stdio.h>

#include "protune/pt_cache.h"
#include "protune/pt_config.h"
#include "protune/pt_cost.h"
#include "protune/pt_measure.h"
#include "protune/pt_store.h"
#include "pt_serve.h"

struct pt_jobserver;

/* A retuned schedule replaces a stored one only when its runtime over the
 * old one's is below this, in retune mode (one figure each, from
 * different runs) as in `protune retune` (the median of side-by-side
 * rounds, which also wants the new one faster in most rounds). */
#define PT_RETUNE_MAX_RATIO 0.97

enum pt_outcome {
	PT_OUT_NONE,
	PT_OUT_HIT,        /* from the cache, the store or a waited lease */
	PT_OUT_TUNED,      /* a miss, tuned (and stored unless readonly) */
	PT_OUT_KEPT,       /* retune: tuned, the stored one kept */
	PT_OUT_FROZEN,     /* a miss in frozen mode: an error */
	PT_OUT_ERROR,      /* tuning failed */
	PT_OUT_BASELINE    /* lk->baseline_key: the baseline schedule */
};

/* Where a hit came from, or why a look-up missed. */
enum pt_reason {
	PT_WHY_NONE,
	PT_WHY_HIT_CACHE,
	PT_WHY_HIT_STORE,
	PT_WHY_HIT_WAITED,      /* another process tuned it meanwhile */
	PT_WHY_NEW_KEY,         /* nothing stored for this key */
	PT_WHY_NO_CACHE,        /* no cache and no store to look in */
	PT_WHY_CACHE_MISFIT,
	PT_WHY_STORE_UNREADABLE,
	PT_WHY_STORE_UNPARSABLE,
	PT_WHY_STORE_MISFIT,
	PT_WHY_RETUNE,
	PT_WHY_REFUSED,         /* the plugin refused the stored schedule */
	PT_WHY_NREASONS
};

/* "hit-cache", "new-key", "store-misfit", ... */
const char *pt_reason_name(enum pt_reason r);

struct pt_lookup_result {
	char key[33];
	char *generator, *function, *target;   /* owned */
	enum pt_outcome outcome;
	enum pt_reason reason;
	char detail[PT_ERROR_MSG_MAX];          /* e.g. the misfit message */
	double elapsed_ms;
	long iterations;
	double measured_ms;
	int warm_stages, warm_changed;          /* a warm start: stages whose
						 * definition changed, of
						 * all; 0 0 after a cold one */
	int stored;                             /* this session wrote the
						 * key's store file */
};

struct pt_lookup {
	/* Set by the caller. */
	const struct pt_config *cfg;
	struct pt_cache *cache;       /* NULL: no cache */
	struct pt_store *store;       /* NULL: no store */
	const struct pt_measure_opts *mopts;  /* for measure=on */
	struct pt_jobserver *jobserver;       /* make's, for measuring
					       * compiles (pt_tune.h:
					       * pt_tune_opts.jobserver) */

	FILE *log;                    /* the debug log, or NULL */
	FILE *out;                    /* one line per session, or NULL */
	int progress;                 /* out is a terminal: live progress */
	const char *name;             /* prefix of messages ("protune-cc") */
	const char *baseline_key;     /* NULL, or a key (32 hex digits) to
				       * answer with pt_sched_baseline(),
				       * nothing looked up or stored: its
				       * schedule compiled past compile_limit
				       * (protune-cc's second run) */

	/* Filled per session: the results, most recent last. */
	int nresults;
	struct pt_lookup_result *results;

	/* Private. */
	int warned_cache, warned_store;
	struct pt_cost *cost;         /* loaded at the first miss */
	int cost_tried;
	long long t0;
	struct pt_serve *serve;
};

/* Initialise with zeroes; set the public fields, then serve. */
void pt_lookup_init(struct pt_lookup *lk);
void pt_lookup_release(struct pt_lookup *lk);

int pt_lookup_answer(struct pt_serve *s, void *ctx, const struct pt_model *m,
		     int attempt, const char *refused, struct pt_sched **out,
		     struct pt_error *err);

/* Forget what session r answered with, after its generator compiled
 * past compile_limit: delete the key's cache entry (not in readonly
 * mode) and, when the session wrote the key's store file, remove that
 * file. Says what it removed on lk->out; errors are warned about. */
void pt_lookup_forget(struct pt_lookup *lk,
		      const struct pt_lookup_result *r);

/* Look a model up without tuning or writing anything: the reason, and on a
 * hit the schedule (caller frees) in *out (may be NULL). `why` gets a
 * human explanation: the key, where it was looked for, and on a miss the
 * nearest cached key for the same generator, function and target with the
 * stages that differ (`protune explain`). */
enum pt_reason pt_lookup_explain(struct pt_lookup *lk,
				 const struct pt_model *m,
				 struct pt_strbuf *why);

/* Add one to each named counter (and elapsed milliseconds to
 * "time.<what>_ms" when ms >= 0); errors are ignored (stats are not worth
 * failing a build for). */
void pt_lookup_count(struct pt_lookup *lk, const char *counter,
		     const char *what, double ms);

/* Append a tuned schedule's provenance meta entries (doc/store.md): mode,
 * generator, function, target, machine, tuned_at, protune, and with a
 * store (may be NULL) source_commit and source_dirty. 0 or PT_ENOMEM. */
int pt_lookup_provenance(struct pt_store *store, const char *mode,
			 const struct pt_model *m, struct pt_sched *s);

#endif
