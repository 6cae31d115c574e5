/* pt_tune.h: tuning one model within a budget — the interface the server's
 * miss path calls (doc/tuning.md).
 *
 * This release's tuner is named "baseline": without measurement it answers
 * pt_sched_baseline(); with measurement on, it times the baseline and then
 * schedules drawn at random from the legal ones (pt_randsched, seeded from
 * opts->seed) one after the other, while the budget lasts, and answers the
 * fastest. The MCTS tuner replaces it behind this interface.
 *
 * Measurement runs one candidate at a time: each compile is one job, run
 * in the slot the calling process already holds under `make -j` (so a
 * build is never oversubscribed), and each benchmark run takes the
 * machine-wide lock (pt_measure_opts.lock_path).
 *
 * Ownership: opts are borrowed; the result's schedule belongs to the
 * caller (pt_tune_result_release). No global state.
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

#define PT_TUNER_NAME "baseline"
#define PT_TUNER_VERSION "1"

struct pt_tune_progress {
	double elapsed_s, budget_s;
	long iterations;       /* candidates considered */
	double best_ms;        /* the best measured (or predicted) time so far,
				* < 0 when none */
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
};

struct pt_tune_result {
	struct pt_sched *sched;  /* meta: tuner, tuner_version, budget, seed,
				  * iterations, measured_ms when measured */
	long iterations;
	double predicted_ms;     /* < 0: unknown (no cost model yet) */
	double measured_ms;      /* < 0: not measured */
	double elapsed_s;
};

int pt_tune(const struct pt_model *m, const struct pt_tune_opts *opts,
	    struct pt_tune_result *res, struct pt_error *err);
void pt_tune_result_release(struct pt_tune_result *res);

#endif
