/* pt_tune.h: tuning one model within a budget — the interface the server's
 * miss path and `protune tune` call (doc/tuning.md, doc/search.md).
 *
 * With a cost model (opts->cost), pt_tune() builds the model's schedule
 * space and runs the search opts->search names (pt_search.h: the MCTS
 * ensemble by default; beam, greedy or random) on opts->threads threads
 * within the budget. With measurement on, the search is "cost+real": at
 * each MCTS decision the best schedules of the trees are compiled and
 * timed and the fastest wins; random search times its samples. The answer
 * passes pt_sched_check(); should the space ever give one that does not,
 * pt_tune() logs it and answers the baseline schedule instead.
 *
 * Without a cost model (none installed) the tuner is the interim one:
 * pt_sched_baseline(), or with measurement the fastest of the baseline and
 * random legal schedules (pt_randsched) timed while the budget lasts.
 *
 * Measurement compiles the candidates of a decision several at a time and
 * times them one at a time: compiles hold the machine-wide benchmark lock
 * (pt_measure_opts.lock_path) shared, benchmark runs exclusive. They go in
 * waves: the next compiles start when the wave's timings are done. At most
 * search.threads (0: 1) candidates are measured at once, one when there is
 * no lock_path (nothing would keep a timing off a compile), and under make
 * no more than make's job slots allow (opts->jobserver). The log gets one
 * line per decision ("measuring 4 candidates, 2 at a time") and one per
 * candidate with its compile time and when it started and ended.
 *
 * Ownership: opts (and the cost model, the jobserver) are borrowed; the
 * result's schedule belongs to the caller (pt_tune_result_release). No
 * global state.
 *
 * Errors: 0 with a schedule (the best found so far when the budget ran
 * out), or a negative PT_E* with err filled: the progress callback's error
 * (it stops the search), PT_ENOMEM. A candidate that fails to compile or
 * run is logged and skipped, never an error.
 */
#ifndef PROTUNE_PT_TUNE_H
#define PROTUNE_PT_TUNE_H

#include <stdint.h>
#include <stdio.h>

#include "protune/pt_error.h"
#include "protune/pt_measure.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"

#include "protune/pt_cost.h"
#include "protune/pt_search.h"

struct pt_jobserver;

/* The tuner's name and version in a schedule's meta entries; the interim
 * tuner (no cost model) is "baseline" version 1. */
#define PT_TUNER_NAME "protune"
#define PT_TUNER_VERSION "2"

struct pt_tune_progress {
	double elapsed_s, budget_s;
	long iterations;       /* simulations (complete schedules priced) or
				* candidates measured */
	double best_ms;        /* the best measured time so far, < 0 when
				* none */
	double best_cost;      /* the best predicted cost so far, < 0 when
				* none */
	long decisions;
	const struct pt_sched *best; /* with opts->want_best: the best
				      * schedule so far (valid during the
				      * call), else NULL */
};

/* Called between steps; a nonzero return stops the search with that
 * error (the plugin went away). */
typedef int pt_tune_progress_fn(void *ctx, const struct pt_tune_progress *p,
				struct pt_error *err);

struct pt_tune_opts {
	double budget_s;       /* wall-clock budget (> 0) */
	uint64_t seed;
	int measure;           /* time candidates on this machine */
	const struct pt_measure_opts *mopts; /* when measure */
	pt_tune_progress_fn *progress;       /* may be NULL */
	void *ctx;
	FILE *log;             /* candidate failures and times, or NULL */
	const struct pt_cost *cost;  /* NULL: the interim tuner */
	/* Measuring under make (pt_jobserver.h), opened by the caller from
	 * MAKEFLAGS:
	 *   NULL      not run by make: up to search.threads compiles at
	 *             once;
	 *   inactive  (kind NONE) run by make without a usable jobserver
	 *             (-j1, or a recipe not marked '+'): one at a time;
	 *   active    one compile in the job slot the process holds, and
	 *             one more for each token taken without waiting (none
	 *             free: fewer at once), each token given back as soon
	 *             as its candidate is measured.
	 * Every token taken is back when pt_tune() returns, whatever it
	 * returns. pt_tune() uses the jobserver from several threads under
	 * a mutex of its own: nothing else may use it during the call. */
	struct pt_jobserver *jobserver;
	int want_best;         /* progress reports carry the best schedule */
	/* Warm start (doc/tuning.md, "Warm starts"): a schedule tuned
	 * earlier for warm_model, an earlier version of this pipeline (or
	 * the same one, to tune further). Funcs whose stages all hash the
	 * same in both models keep their earlier decisions: they make the
	 * first complete schedule and guide the search, which spends the
	 * budget on the Funcs that changed and their neighbours. Both NULL:
	 * a cold start. Borrowed. A warm schedule that fits nothing is
	 * ignored (a cold start), never an error. warm_sched without
	 * warm_model: a start from a stored schedule alone, compared by its
	 * stage_hashes meta entry (pt_warm_new_stored(); cold, and logged,
	 * when that does not fit). */
	const struct pt_model *warm_model;
	const struct pt_sched *warm_sched;
	/* The search: algo, threads, decision_s, iterations, trees, ...
	 * (pt_tune_opts_init() sets pt_search_opts_init()'s defaults);
	 * its budget, seed and callbacks are pt_tune's own. */
	struct pt_search_opts search;
};

/* Zero everything, and the search's defaults. */
void pt_tune_opts_init(struct pt_tune_opts *o);

struct pt_tune_result {
	struct pt_sched *sched;  /* meta: tuner, tuner_version, search,
				  * budget, seed, iterations, predicted cost,
				  * measured_ms when measured, stage_hashes */
	long iterations;
	long priced;             /* states priced, complete or partial */
	long decisions, nodes, measured;
	double predicted_ms;     /* the cost model's figure (arbitrary units);
				  * < 0: unknown (no cost model) */
	double measured_ms;      /* < 0: not measured */
	double elapsed_s;
	/* The warm start, when one was given: stages of the model whose
	 * hash is not in warm_model, of all stages; Funcs whose earlier
	 * decisions were kept. warm_stages is 0 after a cold start. */
	int warm_stages, warm_changed, warm_kept;
};

int pt_tune(const struct pt_model *m, const struct pt_tune_opts *opts,
	    struct pt_tune_result *res, struct pt_error *err);
void pt_tune_result_release(struct pt_tune_result *res);

#endif
