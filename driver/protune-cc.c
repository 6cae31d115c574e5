/* protune-cc: the compiler-driver wrapper for Halide generator runs
 * (doc/protune-cc.1).
 *
 *   protune-cc [--SETTING=VALUE...] PROGRAM [ARGS...]
 *   protune-cc --serve
 *
 * A generator run (pt_genargs.h) is run with the ProTune plugin and a
 * channel to this process, which serves the plugin's sessions (one per
 * target) from the cache, the git store or the tuner (pt_lookup.h), then
 * exits with the generator's status. Every other command is exec'd
 * unchanged (found on PATH, skipping this program), so its argv, streams,
 * environment and exit status are its own.
 *
 * `protune-cc --serve` is the server a ProTune plugin starts when it has
 * no channel: one session on stdin/stdout, with the same look-up.
 */
#include "config.h"
#include "protune/pt_config.h"
#include "protune/pt_error.h"
#include "protune/pt_genargs.h"
#include "protune/pt_jobserver.h"
#include "protune/pt_path.h"
#include "protune/pt_spawn.h"
#include "protune/pt_strbuf.h"
#include "pt_drv.h"
#include "pt_lookup.h"
#include "pt_serve.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "protune-cc"

static void usage(FILE *f)
{
	fputs("usage: protune-cc [--SETTING=VALUE...] PROGRAM [ARGS...]\n"
	      "       protune-cc --serve\n"
	      "       protune-cc --help | --version\n"
	      "\n"
	      "Runs PROGRAM with ARGS. A Halide generator run is run with the\n"
	      "ProTune autoscheduler: its schedule comes from the schedule cache,\n"
	      "the git-tracked store, or is tuned on a miss. Other commands run\n"
	      "unchanged.\n"
	      "\n"
	      "Settings (also PROTUNE_* variables and config files; see\n"
	      "protune.conf(5), and `protune config` for their values):\n"
	      "  --cache-dir=DIR --store-dir=DIR|off --budget=S --decision-time=S\n"
	      "  --mode=normal|readonly|frozen|retune|off\n"
	      "  --search=mcts|beam|greedy|random --seed=N --threads=N\n"
	      "  --measure=on|off --log-file=FILE --max-size=BYTES\n"
	      "  --compile-limit=S\n"
	      "\n"
	      "--serve answers one ProTune plugin session on stdin and stdout\n"
	      "(the plugin starts it). See protune-cc(1).\n", f);
}

/* Run a command unchanged. Returns only on failure. */
static int pass_through(char **argv)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf prog = PT_STRBUF_INIT;

	if (pt_path_find_program(argv[0], getenv("PATH"), "/proc/self/exe",
				 &prog, &err)) {
		fprintf(stderr, NAME ": %s\n", err.msg);
		return 127;
	}
	execv(prog.buf, argv);
	fprintf(stderr, NAME ": cannot run %s: %s\n", prog.buf,
		strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* A generator run passed through (not tuned), with "host" fixed
 * (pt_genargs_fix_host; doc/protune-cc.1, "Target host"). Returns only on
 * failure. */
static int pass_through_generator(char **argv)
{
	struct pt_strvec v = PT_STRVEC_INIT;

	if (pt_strvec_pushv(&v, (const char *const *)argv) ||
	    pt_genargs_fix_host(&v) < 0) {
		fprintf(stderr, NAME ": out of memory\n");
		return 1;
	}
	return pass_through(v.v);
}

/* Count a pass-through in the stats (best effort, quietly). */
static void count_pass(const struct pt_config *cfg, const char *reason)
{
	struct pt_lookup lk;
	char counter[64];

	if (cfg->mode == PT_MODE_READONLY)
		return;
	pt_lookup_init(&lk);
	lk.cfg = cfg;
	pt_drv_open_cache(cfg, 0, NAME, NULL, &lk.cache);
	snprintf(counter, sizeof(counter), "pass.%s", reason);
	pt_lookup_count(&lk, counter, NULL, -1);
	pt_cache_close(lk.cache);
}

/* The generator watchdog: every target may tune for the whole budget, and
 * measuring may overrun it by a candidate; ten minutes on top for the
 * generator's own work. */
static int watchdog_s(const struct pt_config *cfg, const char *target)
{
	int ntargets = 1;
	double s;

	for (; target && *target; target++)
		ntargets += *target == ',';
	s = ntargets * cfg->budget_s * 2 + 600;
	return s > 1e6 ? 1000000 : (int)ceil(s);
}

static FILE *open_log(const struct pt_config *cfg)
{
	FILE *f;

	if (!cfg->log_file)
		return NULL;
	if (!(f = fopen(cfg->log_file, "a")))
		fprintf(stderr, NAME ": warning: cannot open the log %s: %s\n",
			cfg->log_file, strerror(errno));
	return f;
}

/* The look-up for one run: settings, cache, store, measuring, log.
 * Measuring under make (MAKEFLAGS set) compiles candidates in make's job
 * slots: `js` is opened for the tuner, usable or not (pt_tune.h). */
static void lookup_open(struct pt_lookup *lk, const struct pt_config *cfg,
			const char *plugin, struct pt_measure_opts *mo,
			struct pt_jobserver *js, int progress)
{
	const char *makeflags = getenv("MAKEFLAGS");

	pt_lookup_init(lk);
	/* Before any fd is opened: make's fds of a recipe without '+' are
	 * closed, and a file opened here could take their numbers. */
	if (plugin && cfg->measure && makeflags) {
		/* Only "already open" can fail; it stays unusable then,
		 * which means one compile at a time. */
		pt_jobserver_open_makeflags(js, makeflags, NULL);
		lk->jobserver = js;
	}
	lk->cfg = cfg;
	lk->name = NAME;
	lk->out = stderr;
	lk->progress = progress;
	lk->log = open_log(cfg);
	pt_drv_open_cache(cfg, 0, NAME, stderr, &lk->cache);
	pt_drv_open_store(cfg, NAME, stderr, &lk->store);
	if (plugin) {
		pt_drv_measure_opts(cfg, plugin, mo);
		lk->mopts = mo;
	}
	if (lk->jobserver && lk->log && !pt_jobserver_active(js))
		fprintf(lk->log, "run by make without a jobserver (%s): candidates compile one at a time\n",
			js->why);
}

/* Every token is back by now (pt_tune gives them back); close. */
static void lookup_close(struct pt_lookup *lk)
{
	pt_cache_close(lk->cache);
	pt_store_close(lk->store);
	if (lk->log)
		fclose(lk->log);
	if (lk->jobserver)
		pt_jobserver_close(lk->jobserver);
	pt_lookup_release(lk);
}

/* Run the generator with the plugin and serve it. When the generator
 * compiles for longer than compile_limit after a schedule was served
 * (an LLVM crawl: a schedule the space allowed but the backend chokes
 * on), it is stopped, what was served is forgotten (pt_lookup_forget),
 * and it runs again with the baseline schedule for that key: a build
 * never fails on it, and never keeps it. */
static int run_tuned(const struct pt_config *cfg, struct pt_genargs *ga,
		     const char *plugin)
{
	struct pt_lookup lk;
	struct pt_serve_opts so;
	struct pt_measure_opts mo;
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	struct pt_error err = PT_ERROR_INIT, serr = PT_ERROR_INIT;
	char crawled[33] = "";
	int status = 1, served = 0, over = 0, run, ret;
	size_t i;

	lookup_open(&lk, cfg, plugin, &mo, &js, isatty(2));
	if (lk.log) {
		fprintf(lk.log, "--- %s", NAME);
		for (i = 0; i < ga->argv.nr; i++)
			fprintf(lk.log, " %s", ga->argv.v[i]);
		fputc('\n', lk.log);
	}

	for (run = 0; run < 2; run++) {
		memset(&so, 0, sizeof(so));
		so.name = NAME;
		so.log = stderr;
		so.timeout_ms = -1;  /* the generator's own watchdog */
		so.answer = pt_lookup_answer;
		so.ctx = &lk;
		so.until_closed = 1;
		/* The baseline run has no limit but the watchdog. */
		if (!run)
			so.compile_ms = pt_drv_compile_limit_ms(cfg);
		so.compile_over = &over;
		over = 0;
		serr = (struct pt_error)PT_ERROR_INIT;
		ret = pt_drv_run_served(&ga->argv, &so, &status, &served,
					&serr, &err);
		if (ret || !over || !lk.nresults)
			break;
		/* The last session's schedule is the one being compiled. */
		snprintf(crawled, sizeof(crawled), "%s",
			 lk.results[lk.nresults - 1].key);
		fprintf(stderr, NAME ": %s (compile_limit %g s); stopped it\n",
			serr.msg, cfg->compile_limit_s);
		if (lk.log)
			fprintf(lk.log, "compile limit: %s\n", serr.msg);
		pt_lookup_forget(&lk, &lk.results[lk.nresults - 1]);
		pt_lookup_count(&lk, "error.compile-limit", NULL, -1);
		fprintf(stderr, NAME ": building again with the baseline schedule for key %.12s\n",
			crawled);
		lk.baseline_key = crawled;
	}
	if (ret) {
		fprintf(stderr, NAME ": %s\n", err.msg);
		status = ret == PT_ENOTFOUND ? 127 : 126;
	} else if (served) {
		/* The generator says what the plugin was told; we say
		 * it too, with our name, for the build log. */
		if (lk.log)
			fprintf(lk.log, "serving failed: %s\n", serr.msg);
		fprintf(stderr, NAME ": %s\n", serr.msg);
		if (status == 0)
			status = 1;
	}
	lookup_close(&lk);
	return status;
}

/* One plugin session on stdin/stdout, with the look-up. */
static int serve(const struct pt_config *cfg)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_serve_opts so;
	struct pt_lookup lk;
	struct pt_measure_opts mo;
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	struct pt_strbuf plugin = PT_STRBUF_INIT;
	const char *t = getenv("PROTUNE_SERVE_TIMEOUT_MS");
	int ret = 0;

	memset(&so, 0, sizeof(so));
	so.name = NAME;
	so.log = stderr;
	if (t && *t) {
		char *end;
		long ms = strtol(t, &end, 10);

		if (*end || ms <= 0 || ms > 24L * 3600 * 1000) {
			fprintf(stderr,
				NAME ": PROTUNE_SERVE_TIMEOUT_MS='%s' is not a positive number of milliseconds\n",
				t);
			return 2;
		}
		so.timeout_ms = (int)ms;
	}
	/* A plugin that dies must give us EPIPE, not kill us silently. */
	signal(SIGPIPE, SIG_IGN);
	if (cfg->mode != PT_MODE_OFF) {
		/* The plugin is loaded already; its path is for measuring
		 * candidates. stderr is the generator's: no live progress
		 * there. */
		int no_plugin = pt_drv_plugin_path(&plugin, &err);

		if (no_plugin && cfg->measure)
			fprintf(stderr, NAME ": warning: %s; not measuring\n",
				err.msg);
		lookup_open(&lk, cfg, no_plugin ? NULL : plugin.buf, &mo,
			    &js, 0);
		so.answer = pt_lookup_answer;
		so.ctx = &lk;
	} else {
		pt_lookup_init(&lk);
	}
	if (pt_serve(0, 1, &so, &err)) {
		fprintf(stderr, NAME ": %s\n", err.msg);
		ret = 1;
	}
	lookup_close(&lk);
	pt_strbuf_release(&plugin);
	return ret;
}

int main(int argc, char **argv)
{
	struct pt_config cfg;
	struct pt_genargs ga = PT_GENARGS_INIT;
	struct pt_strbuf plugin = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT, perr = PT_ERROR_INIT;
	struct pt_strvec rest = PT_STRVEC_INIT;
	int first, ret, no_plugin;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("protune-cc %s\n", PT_VERSION);
		return 0;
	}
	/* Settings before the program: --SETTING=VALUE (the program's own
	 * arguments are never looked at). */
	for (first = 1; first < argc && !strncmp(argv[first], "--", 2) &&
	     strcmp(argv[first], "--serve") && strcmp(argv[first], "--");
	     first++)
		;
	memset(&cfg, 0, sizeof(cfg));
	if ((ret = pt_drv_config(&cfg, first - 1, argv + 1, 0, &rest, NAME)))
		return ret;
	if (rest.nr) {
		fprintf(stderr, NAME ": unknown option '%s' (settings are --NAME=VALUE)\n",
			rest.v[0]);
		return 2;
	}
	if (first < argc && !strcmp(argv[first], "--"))
		first++;
	if (first < argc && !strcmp(argv[first], "--serve")) {
		if (first + 1 < argc) {
			usage(stderr);
			return 2;
		}
		ret = serve(&cfg);
		pt_config_release(&cfg);
		return ret;
	}
	if (first >= argc) {
		usage(stderr);
		return 2;
	}
	if (cfg.mode == PT_MODE_OFF)
		return pass_through(argv + first);

	/* The plugin's path, for the rewrite; a command that is not tuned
	 * runs without it. */
	no_plugin = pt_drv_plugin_path(&plugin, &perr);
	if (no_plugin == PT_ENOMEM || (!plugin.len &&
	    pt_strbuf_addstr(&plugin, "libprotune_halide.so"))) {
		fprintf(stderr, NAME ": out of memory\n");
		return 1;
	}
	ret = pt_genargs_parse(argc - first, argv + first, plugin.buf,
			       watchdog_s(&cfg, NULL), &ga, &err);
	if (!ret && ga.pass == PT_PASS_NONE && ga.target &&
	    strchr(ga.target, ',')) {
		/* The watchdog grows with the number of targets. */
		int t = watchdog_s(&cfg, ga.target);

		pt_genargs_release(&ga);
		ga = (struct pt_genargs)PT_GENARGS_INIT;
		ret = pt_genargs_parse(argc - first, argv + first, plugin.buf,
				       t, &ga, &err);
	}
	if (ret || ga.pass != PT_PASS_NONE) {
		int gen = !ret && ga.pass != PT_PASS_NOT_GENERATOR;

		count_pass(&cfg, ret ? "bad-arguments" :
			   pt_genargs_pass_name(ga.pass));
		pt_genargs_release(&ga);
		pt_strbuf_release(&plugin);
		return gen ? pass_through_generator(argv + first) :
			pass_through(argv + first);
	}
	/* No plugin: say so before the generator runs (Halide would only
	 * say "Failed to load"). An unreadable PROTUNE_PLUGIN is a bad
	 * setting, like the others; a missing default an incomplete
	 * install. */
	if (no_plugin) {
		const char *v = getenv("PROTUNE_PLUGIN");

		fprintf(stderr, NAME ": %s\n", perr.msg);
		pt_genargs_release(&ga);
		pt_strbuf_release(&plugin);
		pt_config_release(&cfg);
		return v && *v ? 2 : 1;
	}
	if (pt_genargs_fix_host(&ga.argv) < 0) {
		fprintf(stderr, NAME ": out of memory\n");
		ret = 1;
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	ret = run_tuned(&cfg, &ga, plugin.buf);
out:
	pt_genargs_release(&ga);
	pt_strbuf_release(&plugin);
	pt_config_release(&cfg);
	return ret;
}
