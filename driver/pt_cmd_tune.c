/* pt_cmd_tune.c: `protune tune MODEL [options]` (pt_cmd_tune.h,
 * doc/protune.1, doc/search.md): tune one model file with the code the
 * server's miss path runs (pt_tune), print the chosen schedule on standard
 * output and the search's statistics on standard error.
 */
#include "pt_cli.h"
#include "pt_cmd_tune.h"
#include "pt_drv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protune/pt_config.h"
#include "protune/pt_cost.h"
#include "protune/pt_jobserver.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_tune.h"
#include "protune/pt_warm.h"

#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: protune tune MODEL [--search mcts|beam|greedy|random]\n"
	"       [--budget S] [--decision S] [--iterations N] [--threads N]\n"
	"       [--seed N] [--trees N] [--greedy-trees N]\n"
	"       [--formula protuner|cp10|sqrt2] [--cp X] [--widen X]\n"
	"       [--max-nodes N] [--beam N] [--passes N] [--measure]\n"
	"       [--measure-top N] [--runs N] [--cost-model FILE]\n"
	"       [--trace DIR] [[--warm-model FILE] --warm-sched FILE] [-q]\n";

struct tune_args {
	const char *model, *cost_model, *trace, *warm_model, *warm_sched;
	int measure, quiet, runs;
	struct pt_tune_opts to;
};

struct trace {
	FILE *tsv;
	const char *dir;
	struct pt_strbuf last;     /* the last best schedule's text */
	int nsched;
	int quiet;
};

static int usage(void)
{
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

static int num(const char *opt, const char *v, double lo, double hi,
	       double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (!*v || *end || errno || !(x >= lo && x <= hi)) {
		fprintf(stderr, "protune: %s: expected a number from %g to %g, got '%s'\n",
			opt, lo, hi, v);
		return EXIT_USAGE;
	}
	*out = x;
	return 0;
}

static int parse_args(int argc, char **argv, struct tune_args *a)
{
	struct pt_search_opts *so = &a->to.search;
	int i, k;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v;
		double x = 0;
		int ret = 0;

		if (!strcmp(o, "--measure")) {
			a->measure = 1;
			continue;
		}
		if (!strcmp(o, "-q")) {
			a->quiet = 1;
			continue;
		}
		if (o[0] != '-' || !o[1]) {
			if (a->model)
				return usage();
			a->model = o;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "protune: %s needs a value\n", o);
			return usage();
		}
		v = argv[++i];
		if (!strcmp(o, "--search")) {
			if ((k = pt_search_algo_parse(v)) < 0)
				return pt_cli_fail("--search: '%s' is not one of mcts, beam, greedy, random",
						   v) + 1;
			so->algo = (enum pt_search_algo)k;
		} else if (!strcmp(o, "--formula")) {
			if ((k = pt_mcts_formula_parse(v)) < 0)
				return pt_cli_fail("--formula: '%s' is not one of protuner, cp10, sqrt2",
						   v) + 1;
			so->formula = (enum pt_mcts_formula)k;
		} else if (!strcmp(o, "--cost-model")) {
			a->cost_model = v;
		} else if (!strcmp(o, "--trace")) {
			a->trace = v;
		} else if (!strcmp(o, "--warm-model")) {
			a->warm_model = v;
		} else if (!strcmp(o, "--warm-sched")) {
			a->warm_sched = v;
		} else if (!strcmp(o, "--budget")) {
			ret = num(o, v, 1e-3, 604800, &a->to.budget_s);
		} else if (!strcmp(o, "--decision")) {
			ret = num(o, v, 1e-3, 604800, &so->decision_s);
		} else if (!strcmp(o, "--cp")) {
			ret = num(o, v, 1e-6, 1e6, &so->cp);
		} else if (!strcmp(o, "--widen")) {
			ret = num(o, v, 0, 1, &so->widen);
		} else if (!strcmp(o, "--seed")) {
			ret = num(o, v, 0, 9007199254740992.0, &x);
			a->to.seed = (uint64_t)x;
		} else {
			static const struct {
				const char *name;
				double lo, hi;
			} ints[] = {
				{ "--iterations", 1, 1e9 }, { "--threads", 1, 1024 },
				{ "--trees", 0, 1024 }, { "--greedy-trees", 0, 1024 },
				{ "--max-nodes", 2, 4e9 }, { "--beam", 1, 1e5 },
				{ "--passes", 1, 100 }, { "--measure-top", 1, 1024 },
				{ "--runs", 1, 1000 },
			};

			for (k = 0; k < (int)(sizeof(ints) / sizeof(ints[0])); k++)
				if (!strcmp(o, ints[k].name))
					break;
			if (k == (int)(sizeof(ints) / sizeof(ints[0]))) {
				fprintf(stderr, "protune: unknown option '%s'\n", o);
				return usage();
			}
			if ((ret = num(o, v, ints[k].lo, ints[k].hi, &x)))
				return ret;
			if (floor(x) != x) {
				fprintf(stderr, "protune: %s: expected a whole number, got '%s'\n",
					o, v);
				return EXIT_USAGE;
			}
			switch (k) {
			case 0: so->iterations = (long)x; break;
			case 1: so->threads = (int)x; break;
			case 2: so->trees = (int)x; break;
			case 3: so->greedy_trees = (int)x; break;
			case 4: so->max_nodes = (size_t)x; break;
			case 5: so->beam = (int)x; break;
			case 6: so->passes = (int)x; break;
			case 7: so->measure_top = (int)x; break;
			default: a->runs = (int)x; break;
			}
		}
		if (ret)
			return ret;
	}
	if (!a->model) {
		fputs("protune: tune: no model file given\n", stderr);
		return usage();
	}
	return 0;
}

/* The progress callback: with --trace, a TSV line per decision and the
 * best schedule's text whenever it changes. */
static int on_progress(void *ctx, const struct pt_tune_progress *p,
		       struct pt_error *err)
{
	struct trace *t = ctx;
	char name[64] = "-";

	if (!t->tsv)
		return 0;
	if (p->best) {
		struct pt_strbuf path = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
		FILE *f;
		int bad;

		if (pt_sched_print(p->best, &text))
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		if (t->last.buf && !strcmp(t->last.buf, text.buf)) {
			pt_strbuf_release(&text);
			goto line;
		}
		snprintf(name, sizeof(name), "best-%04d.sched", t->nsched++);
		if (pt_strbuf_addf(&path, "%s/%s", t->dir, name)) {
			pt_strbuf_release(&text);
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		}
		f = fopen(path.buf, "w");
		bad = !f || fwrite(text.buf, 1, text.len, f) != text.len;
		if (f && fclose(f))
			bad = 1;
		if (bad)
			pt_error_set(err, PT_EIO, "cannot write %s: %s",
				     path.buf, strerror(errno));
		pt_strbuf_release(&path);
		pt_strbuf_release(&t->last);
		t->last = text;
		if (bad)
			return PT_EIO;
	}
line:
	fprintf(t->tsv, "%.3f\t%ld\t%ld\t%.6g\t%.6g\t%s\n", p->elapsed_s,
		p->decisions, p->iterations, p->best_cost, p->best_ms, name);
	return 0;
}

static int open_trace(struct trace *t, const char *dir)
{
	struct pt_strbuf path = PT_STRBUF_INIT;

	if (mkdir(dir, 0777) && errno != EEXIST)
		return pt_cli_fail("cannot make %s: %s", dir, strerror(errno));
	if (pt_strbuf_addf(&path, "%s/trace.tsv", dir))
		return pt_cli_fail("out of memory");
	t->tsv = fopen(path.buf, "w");
	if (!t->tsv) {
		pt_cli_fail("cannot write %s: %s", path.buf, strerror(errno));
		pt_strbuf_release(&path);
		return 1;
	}
	pt_strbuf_release(&path);
	t->dir = dir;
	fputs("elapsed_s\tdecisions\tsimulations\tbest_cost\tbest_ms\tsched\n",
	      t->tsv);
	return 0;
}

static int load_cost(const char *path, struct pt_cost **c)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	if (!path) {
		if (pt_drv_load_cost_model(c, &err))
			return pt_cli_fail("%s", err.msg);
		return 0;
	}
	if (pt_cli_read(path, &text))
		return 1;
	ret = pt_cost_parse(text.buf, text.len, path, c, &err);
	pt_strbuf_release(&text);
	return ret ? pt_cli_fail("%s", err.msg) : 0;
}

static int cmd_tune(int argc, char **argv)
{
	struct tune_args a;
	struct trace tr;
	struct pt_model *m = NULL, *wm_model = NULL;
	struct pt_sched *wm_sched = NULL;
	struct pt_cost *cost = NULL;
	struct pt_config cfg;
	struct pt_measure_opts mo;
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	const char *mf;
	struct pt_strbuf text = PT_STRBUF_INIT, plugin = PT_STRBUF_INIT;
	struct pt_tune_result r;
	struct pt_error err = PT_ERROR_INIT;
	int ret, have_cfg = 0;

	memset(&a, 0, sizeof(a));
	memset(&tr, 0, sizeof(tr));
	memset(&r, 0, sizeof(r));
	pt_tune_opts_init(&a.to);
	a.to.budget_s = -1;
	if ((ret = parse_args(argc, argv, &a)))
		return ret;
	/* No --budget: 10 s, or none when --iterations counts instead. */
	if (a.to.budget_s < 0)
		a.to.budget_s = a.to.search.iterations > 0 ? 0 : 10;
	if (pt_cli_read(a.model, &text))
		return 1;
	if (pt_model_parse(text.buf, text.len, a.model, &m, &err) ||
	    pt_model_hash(m)) {
		ret = pt_cli_fail("%s", err.msg[0] ? err.msg :
				  "cannot hash the model");
		goto out;
	}
	if ((ret = load_cost(a.cost_model, &cost)))
		goto out;
	if (a.warm_model && !a.warm_sched) {
		ret = pt_cli_fail("--warm-model needs --warm-sched");
		goto out;
	}
	if (a.warm_model) {
		pt_strbuf_reset(&text);
		if (pt_cli_read(a.warm_model, &text) ||
		    pt_model_parse(text.buf, text.len, a.warm_model, &wm_model,
				   &err) || pt_model_hash(wm_model)) {
			ret = err.msg[0] ? pt_cli_fail("%s", err.msg) : 1;
			goto out;
		}
	}
	if (a.warm_sched) {
		pt_strbuf_reset(&text);
		if (pt_cli_read(a.warm_sched, &text) ||
		    pt_sched_parse(text.buf, text.len, a.warm_sched, &wm_sched,
				   &err)) {
			ret = err.msg[0] ? pt_cli_fail("%s", err.msg) : 1;
			goto out;
		}
		a.to.warm_model = wm_model;
		a.to.warm_sched = wm_sched;
	}
	if (a.warm_sched && !a.warm_model) {
		/* From the schedule alone: say so when it cannot be. */
		struct pt_warm *wm = NULL;
		int wr = pt_warm_new_stored(m, wm_sched, &wm, &err);

		pt_warm_free(wm);
		if (wr) {
			ret = pt_cli_fail("%s: %s%s", a.warm_sched, err.msg,
					  wr == PT_ENOTFOUND ?
					  "; give --warm-model too" : "");
			goto out;
		}
	}
	if (a.measure) {
		/* Measuring needs the cache directory (RunGenMain.o) and the
		 * plugin, from the settings as protune-cc finds them. */
		if ((ret = pt_drv_config(&cfg, 0, NULL, 0, NULL, "protune")))
			goto out;
		have_cfg = 1;
		if (pt_drv_plugin_path(&plugin, &err)) {
			ret = pt_cli_fail("%s", err.msg);
			goto out;
		}
		pt_drv_measure_opts(&cfg, plugin.buf, &mo);
		mo.runs = a.runs;
		a.to.measure = 1;
		a.to.mopts = &mo;
		/* Run by make: compile in its job slots (pt_tune.h). */
		if ((mf = getenv("MAKEFLAGS"))) {
			pt_jobserver_open_makeflags(&js, mf, NULL);
			a.to.jobserver = &js;
		}
	}
	a.to.log = a.quiet ? NULL : stderr;
	if (a.trace && (ret = open_trace(&tr, a.trace)))
		goto out;
	a.to.cost = cost;
	a.to.progress = on_progress;
	a.to.ctx = &tr;
	a.to.want_best = a.trace != NULL;
	ret = pt_tune(m, &a.to, &r, &err);
	/* pt_tune gives back every token it takes (pt_tune.h). */
	if (pt_jobserver_held(&js))
		fprintf(stderr, "protune: warning: %zu jobserver tokens still held after tuning\n",
			pt_jobserver_held(&js));
	if (ret) {
		ret = pt_cli_fail("tune: %s", err.msg);
		goto out;
	}
	pt_strbuf_release(&text);
	if (pt_sched_print(r.sched, &text)) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	fwrite(text.buf, 1, text.len, stdout);
	if (fflush(stdout)) {
		ret = pt_cli_fail("cannot write the output: %s", strerror(errno));
		goto out;
	}
	if (!a.quiet) {
		fprintf(stderr, "protune: tune %s: %ld decisions, %ld complete schedules priced (%.0f/s), %ld states priced in all (%.1f us each), %ld nodes, best cost %.6g",
			pt_search_algo_name(a.to.search.algo), r.decisions,
			r.iterations,
			r.elapsed_s > 0 ? r.iterations / r.elapsed_s : 0.0,
			r.priced,
			r.priced > 0 ? 1e6 * r.elapsed_s / r.priced : 0.0,
			r.nodes, r.predicted_ms);
		if (r.measured_ms >= 0)
			fprintf(stderr, ", measured %.4g ms (%ld candidates timed)",
				r.measured_ms, r.measured);
		fprintf(stderr, ", %.2f s\n", r.elapsed_s);
		if (r.warm_stages)
			fprintf(stderr, "protune: warm start: %d of %d stages changed, %d Funcs kept their decisions\n",
				r.warm_changed, r.warm_stages, r.warm_kept);
	}
out:
	if (tr.tsv && fclose(tr.tsv) && !ret)
		ret = pt_cli_fail("cannot write the trace: %s", strerror(errno));
	pt_strbuf_release(&tr.last);
	pt_tune_result_release(&r);
	pt_jobserver_close(&js);
	if (have_cfg)
		pt_config_release(&cfg);
	pt_strbuf_release(&text);
	pt_strbuf_release(&plugin);
	pt_cost_free(cost);
	pt_model_free(m);
	pt_model_free(wm_model);
	pt_sched_free(wm_sched);
	return ret;
}

int pt_cmd_tune_main(int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "tune"))
		return -1;
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	return cmd_tune(argc, argv);
}
