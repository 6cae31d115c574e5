/* pt_measure.h: measuring one schedule on this machine.
 *
 * pt_measure() compiles a schedule for a model by re-running the model's
 * generator (model->argv) in apply mode (PROTUNE_SCHEDULE_FILE set, output
 * into a fresh temporary directory), links the library with Halide's
 * RunGenMain.cpp (compiled once per machine and kept under the cache
 * directory, see pt_measure_rungen_main()), runs the result in RunGen's
 * benchmark mode at the estimated sizes, and reports the median time per
 * iteration over `runs` runs, with the spread.
 *
 * Failures (the generator refuses or fails to compile, the link fails, the
 * binary crashes or runs past its time limit) are errors with the step and
 * the tail of the tool's output in the message; never a time. Codes:
 * PT_EMISMATCH when the schedule is at fault (the generator fails, RunGen
 * fails or crashes), PT_ETIMEDOUT when a step runs past its limit, and
 * PT_EINVAL, PT_ENOTFOUND, PT_ESPAWN, PT_EIO or PT_ENOMEM for the caller's
 * arguments or the machine (no compiler, RunGenMain.cpp missing, a link
 * that fails, an unwritable directory).
 *
 * When the target pt_measure() builds for differs from the model's (no
 * no_runtime, the profile feature added), the schedule's key is rewritten
 * to the key of the model with that target: the pipeline the generator
 * sees then. A profiled build (opts->profile) also yields each Func's
 * share of the time, read from the report of Halide's profiler.
 *
 * Ownership: options are borrowed for the call; the result owns its Funcs
 * (pt_measure_result_release()) and is plain data otherwise.
 * The temporary directory is removed unless opts->keep_dir. No global
 * state; concurrent calls are safe (benchmark runs take the machine-wide
 * lock named by opts->lock_path when set, see pt_lock.h, and the generator
 * and link steps take it shared, so that no benchmark runs while another
 * measurement compiles: compiles overlap each other, never a timing).
 */
#ifndef PROTUNE_PT_MEASURE_H
#define PROTUNE_PT_MEASURE_H

#include "protune/pt_error.h"
#include "protune/pt_model.h"

struct pt_measure_opts {
	const char *cache_dir;     /* where RunGenMain.o is kept (required) */
	const char *plugin_path;   /* libprotune_halide.so to load in the
				    * generator (required) */
	const char *tmp_root;      /* parent of the temporary directory, NULL
				    * for $TMPDIR or /tmp */
	const char *lock_path;     /* machine-wide benchmark lock, or NULL */
	int runs;                  /* RunGen runs (each one a benchmark);
				    * <= 0 means 5 */
	double min_time_s;         /* RunGen --benchmark_min_time; <= 0: 0.1 */
	int compile_timeout_ms;    /* generator + link; <= 0: 600000 */
	int run_timeout_ms;        /* each RunGen run; <= 0: 120000 */
	int lock_timeout_ms;       /* waiting for the benchmark lock (each
				    * time); <= 0: as long as it takes.
				    * Past it: PT_ETIMEDOUT */
	int keep_dir;              /* keep the temporary directory */
	const char *cxx;           /* C++ compiler, NULL for "c++" */
	const char *reference;     /* a RunGen binary built earlier (a kept
				    * directory's rungen), or NULL. When set,
				    * every run also runs it, right before or
				    * after the candidate (alternately) under
				    * the same hold of the lock, and the
				    * result has the ratio of the two: a
				    * figure that drifts much less than
				    * either time on a shared machine. */
	int profile;               /* build with Halide's profiler (the
				    * target's `profile` feature) and report
				    * the time of each Func (res->funcs);
				    * the times then include the profiler's
				    * overhead. Not with a reference. */
};

/* One Func of a profiled run, as Halide's profiler reports it, averaged
 * over the runs. */
struct pt_measure_func {
	char name[128];            /* the Func's name (or the profiler's
				    * own slots: "overhead", "halide_malloc",
				    * "halide_free") */
	double ms;                 /* time per iteration of the pipeline */
	double share;              /* of the sum over the Funcs reported */
	double allocs;             /* heap allocations per iteration */
};

struct pt_measure_result {
	double median_ms;          /* per iteration */
	double min_ms, max_ms;     /* over the runs */
	int runs;
	double compile_ms;         /* generator + link wall time */
	double ratio;              /* with a reference: the median over the
				    * runs of candidate / reference; else 0 */
	double ref_median_ms;      /* the reference's median, or 0 */
	char dir[4096];            /* the temporary directory (when kept) */
	struct pt_measure_func *funcs;  /* with opts->profile: the Funcs in
					 * the profiler's order; owned,
					 * NULL otherwise */
	int nfuncs;
	double heap_allocs;        /* with opts->profile: the pipeline's heap
				    * allocations per iteration */
};

int pt_measure(const struct pt_model *m, const char *sched_text,
	       const struct pt_measure_opts *opts,
	       struct pt_measure_result *res, struct pt_error *err);

/* Free what a result owns (res->funcs); the result stays valid, without
 * Funcs. Safe on a result pt_measure() failed to fill. */
void pt_measure_result_release(struct pt_measure_result *res);

/* Parse the report Halide's profiler prints at exit (`text`, RunGen's
 * output) into *out (malloc'd, *n entries) and the pipeline's heap
 * allocations per iteration. PT_EFORMAT when the text holds no report,
 * PT_ENOMEM. */
int pt_measure_parse_profile(const char *text, struct pt_measure_func **out,
			     int *n, double *heap_allocs);

/* The path of RunGenMain.o for this machine under cache_dir, compiling it
 * first (under a lock, atomically renamed into place) when it is missing.
 * The name carries a hash of RunGenMain.cpp and the compiler, so a Halide or
 * compiler upgrade compiles a new one. */
int pt_measure_rungen_main(const char *cache_dir, const char *cxx,
			   struct pt_strbuf *path, struct pt_error *err);

/* The generator command pt_measure() runs, appended to `out`: model->argv
 * with -o, -e, -n, -p, -s, -t (and their values), auto_schedule= and
 * target= dropped, every other argument kept in order (-g, -f, -d,
 * generator params such as machine_params=), followed by
 *     -o OUT_DIR -e static_library,h,registration -n cand -p PLUGIN
 *     -s ProTune auto_schedule=true -t 0 target=TARGET
 * where TARGET is m->target without the no_runtime feature (the benchmark
 * links no other runtime), its features in Halide's order (by name).
 * PT_EINVAL for an argv that cannot be re-run (no
 * argv, a relative program path with a '/', a runtime-only -r run, a flag
 * without its value, no target in the model). */
int pt_measure_rewrite_argv(const struct pt_model *m, const char *out_dir,
			    const char *plugin_path, struct pt_strvec *out,
			    struct pt_error *err);

/* Remove a directory that opts->keep_dir kept (res->dir) with everything
 * in it; symlinks are removed, not followed. */
void pt_measure_remove_dir(const char *dir);

/* Sort times[0..n-1] (n > 0) in place and return the median: the middle
 * value, or the mean of the two middle values when n is even. */
double pt_measure_median(double *times, int n);

#endif
