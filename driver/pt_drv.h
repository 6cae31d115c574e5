/* pt_drv.h: what protune-cc and protune share: finding the plugin, the
 * machine-wide benchmark lock, and opening the cache and the store that a
 * configuration names.
 *
 * Ownership: the caller owns what it gets (strbufs; the cache and store
 * handles, closed with pt_cache_close / pt_store_close). Messages go to
 * the FILE given (never exit). No global state.
 */
#ifndef PROTUNE_PT_DRV_H
#define PROTUNE_PT_DRV_H

#include <stdio.h>

#include "protune/pt_cache.h"
#include "protune/pt_config.h"
#include "protune/pt_error.h"
#include "protune/pt_measure.h"
#include "protune/pt_store.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"
#include "pt_serve.h"

/* The machine-wide lock that serialises benchmark runs: one file for every
 * user and cache of the machine. */
#define PT_DRV_BENCH_LOCK "/tmp/protune-bench.lock"

/* The benchmark lock to take: $PROTUNE_BENCH_LOCK when set and not empty
 * (a test suite's runs in parallel, or a machine split between separate
 * groups of measurements), else PT_DRV_BENCH_LOCK. Borrowed from the
 * environment. */
const char *pt_drv_bench_lock(void);

/* $PROTUNE_PLUGIN, else ../lib/libprotune_halide.so next to the running
 * program. PT_ENOTFOUND (with a hint) when there is none, or when
 * PROTUNE_PLUGIN names a path (it has a '/') that is not a readable
 * regular file; a bare name is left to dlopen's search. */
int pt_drv_plugin_path(struct pt_strbuf *out, struct pt_error *err);

/* The cost model file (pt_cost.h) appended to `out`: $PROTUNE_COST_MODEL,
 * else default.cost in ../share/protune from the executable's directory
 * (the build tree and an installed prefix both have it there). 0,
 * PT_ENOTFOUND (the message says where it looked) or PT_ENOMEM. */
int pt_drv_cost_model_path(struct pt_strbuf *out, struct pt_error *err);

/* The cost model itself, from pt_drv_cost_model_path()'s file: a new one
 * in *out (pt_cost_free() it). 0, PT_ENOTFOUND, PT_EIO (unreadable),
 * PT_EFORMAT (the message names the file and line), PT_ENOMEM. */
struct pt_cost;
int pt_drv_load_cost_model(struct pt_cost **out, struct pt_error *err);

/* Open the cache of cfg (readonly for PT_MODE_READONLY and when
 * `readonly`); on failure warn on `warn` (may be NULL) with `name` as
 * prefix and leave *cache NULL: a build never fails for its cache. */
void pt_drv_open_cache(const struct pt_config *cfg, int readonly,
		       const char *name, FILE *warn, struct pt_cache **cache);

/* Open the store of cfg (NULL when store_dir is off or outside a git
 * repository; other failures are warned about). */
void pt_drv_open_store(const struct pt_config *cfg, const char *name,
		       FILE *warn, struct pt_store **store);

/* compile_limit in milliseconds, rounded up; 0 for none. */
int pt_drv_compile_limit_ms(const struct pt_config *cfg);

/* Measuring options for cfg (strings borrowed from cfg and plugin); a
 * candidate's compile may take compile_limit at most. */
void pt_drv_measure_opts(const struct pt_config *cfg, const char *plugin,
			 struct pt_measure_opts *o);

/* Settings for a command: defaults, files and the environment, then the
 * options argv[0..argc-1] of the form --SETTING=VALUE (any other argument
 * is left for the command: `rest` (may be NULL) gets them in order, with
 * all arguments after a "--" or, with `stop_at_arg`, from the first
 * argument that is not an option on). Errors are printed with `name` and
 * give 2 (a usage error). */
int pt_drv_config(struct pt_config *cfg, int argc, char **argv,
		  int stop_at_arg, struct pt_strvec *rest, const char *name);

/* Start the command `argv` (a generator run with the plugin) with a
 * channel to this process in PROTUNE_CHANNEL_FDS (and without
 * PROTUNE_SCHEDULE_FILE), serve its plugin sessions with `so` until the
 * plugin closes the channel, close it, and wait for the generator.
 * *status gets its exit status (128 + N for signal N), *served pt_serve's
 * result with its message in serve_err. When so->compile_ms runs out
 * (*so->compile_over set), the generator is killed (SIGKILL) before the
 * wait: *status is then 128 + SIGKILL. Returns 0, or the failure to start
 * it (PT_ENOTFOUND, PT_ESPAWN, PT_EIO, PT_ENOMEM) with err filled. */
int pt_drv_run_served(const struct pt_strvec *argv,
		      const struct pt_serve_opts *so, int *status,
		      int *served, struct pt_error *serve_err,
		      struct pt_error *err);

#endif
