/* protune: the management command (doc/protune.1).
 *
 *   protune model FILE            parse a model, print it canonically
 *   protune key FILE              its key and every stage's hash
 *   protune check MODEL SCHED     does the schedule fit the model?
 *   protune baseline MODEL        the baseline schedule
 *   protune random MODEL [--seed N]
 *   protune space MODEL [--seed N] [--children] [--bench N]
 *   protune cpp MODEL SCHED       the schedule as Halide C++
 *   protune cost MODEL SCHED      the cost model's prediction and its terms
 *   protune measure MODEL SCHED [--runs N] [--min-time S] [--keep]
 *                   [--cache-dir D] [--plugin P] [--no-check] [-v]
 *                   [--reference RUNGEN | --profile]
 *
 * Exit status: 0 success, 1 failure (message on stderr), 2 usage error.
 */
#include "pt_cli.h"
#include "config.h"
#include "protune/pt_error.h"
#include "protune/pt_hosttarget.h"
#include "protune/pt_measure.h"
#include "protune/pt_model.h"
#include "protune/pt_randsched.h"
#include "protune/pt_sched.h"
#include "protune/pt_space.h"
#include "protune/pt_cost.h"
#include "protune/pt_features.h"
#include "protune/pt_spawn.h"
#include "protune/pt_strbuf.h"
#include "pt_cmd_cache.h"
#include "pt_cmd_retune.h"
#include "pt_cmd_train.h"
#include "pt_cmd_tune.h"
#include "pt_drv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define EXIT_USAGE 2

enum {
	OPT_SEED = 1 << 0,
	OPT_MEASURE = 1 << 1, /* --runs --min-time --keep --cache-dir
			       * --plugin --no-check -v */
	OPT_CHILDREN = 1 << 2, /* --children --bench */
	OPT_EXPLICIT = 1 << 3, /* --explicit */
	OPT_STAGES = 1 << 4    /* --stages */
};

struct args {
	const char *pos[3];
	int npos;
	uint64_t seed;
	int runs;
	double min_time;
	int keep, no_check, verbose, children, bench, explicit, stages;
	int profile;
	const char *cache_dir, *plugin, *reference;
};

struct command {
	const char *name;
	int npos;
	unsigned opts;
	const char *usage;
	int (*fn)(const struct args *a);
};

static void usage(FILE *f)
{
	fputs("usage: protune COMMAND [ARGS...]\n"
	      "       protune --help | --version\n"
	      "\n"
	      "Commands:\n"
	      "  model FILE          parse a model and print it canonically\n"
	      "  key FILE            print the model's key and every stage's hash\n"
	      "  check MODEL SCHED   exit 0 when the schedule fits the model\n"
	      "  baseline MODEL      print the baseline schedule\n"
	      "  random MODEL [--seed N]\n"
	      "                      print a random legal schedule\n"
	      "  space MODEL [--seed N] [--children] [--bench N]\n"
	      "                      print the schedule of a random complete\n"
	      "                      state of the schedule space; --children:\n"
	      "                      the decisions on its way and how many\n"
	      "                      children each has; --bench: time N\n"
	      "                      random complete states\n"
	      "  cpp MODEL SCHED     print the schedule as Halide C++\n"
	      "  cost MODEL SCHED [--stages]\n"
	      "                      the cost model's prediction for the\n"
	      "                      schedule, term by term; --stages: and\n"
	      "                      each stage's share\n"
	      "  measure MODEL SCHED [--runs N] [--min-time S] [--keep]\n"
	      "          [--cache-dir DIR] [--plugin SO] [--no-check] [-v]\n"
	      "          [--reference RUNGEN | --profile]\n"
	      "                      compile the schedule with the model's\n"
	      "                      generator and time it with RunGen; prints\n"
	      "                      \"median_ms min_ms max_ms runs compile_ms\"\n"
	      "                      (and \"ratio ref_median_ms\" with a\n"
	      "                      reference binary timed alongside);\n"
	      "                      --profile: built with Halide's profiler,\n"
	      "                      and each Func's time\n"
	      "  host-target [--explicit]\n"
	      "                      the target protune-cc gives a generator\n"
	      "                      for target=host: \"host\", or on a\n"
	      "                      processor Halide 14 misdetects the\n"
	      "                      explicit one; --explicit: always that\n"
	      "  tune MODEL [--search mcts|beam|greedy|random] [--budget S]\n"
	      "       [--iterations N] [--threads N] [--seed N] [--measure]\n"
	      "       [--trace DIR] ...\n"
	      "                      tune the model with the cost model (and\n"
	      "                      measurements); print the schedule\n"
	      "                      (`protune tune --help` lists every option)\n"
	      "\n"
	      "Cache and store (each also takes --SETTING=VALUE options):\n"
	      "  config              the settings and where each comes from\n"
	      "  stats | zero-stats  the cache's counters and sizes\n"
	      "  ls [GENERATOR|KEY]  the cached schedules\n"
	      "  show KEY [--cpp|--text]\n"
	      "                      a schedule, and as Halide C++\n"
	      "  explain GENERATOR [ARGS...]\n"
	      "                      the key of a generator run, and why it misses\n"
	      "  export DIR | import DIR\n"
	      "                      copy the cache to or from files\n"
	      "  commit [-m MSG]     commit the store's new schedules with git\n"
	      "  gc [--size=BYTES] [--unused-days=N]\n"
	      "                      evict least recently used entries\n"
	      "  gc --unreferenced[=DAYS] [--since=UNIXTIME] [--dry-run]\n"
	      "                      remove store files no build has used\n"
	      "  retune [--budget=S] [--runs=N] [--dry-run] [PATTERN...]\n"
	      "                      tune cached schedules further; replace\n"
	      "                      one only when measured faster\n"
	      "  clear [--force]     empty the cache (--force: remove its files)\n"
	      "  train --data DIR... [--hold-out NAME]... [--trees N]\n"
	      "        [--eval TSV] [--out FILE]\n"
	      "                      fit the cost model to measured samples;\n"
	      "                      --eval: leave-one-example-out ranking\n"
	      "  calibrate --data DIR [--budget S] [--jobs N] [--out FILE]\n"
	      "        [MODEL...]     measure random schedules on this machine\n"
	      "                      for a time, then fit the cost model\n"
	      "\n"
	      "A FILE of '-' is standard input. See protune(1).\n", f);
}

static int usage_error(const struct command *c, const char *fmt,
		       const char *arg)
{
	fputs("protune: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	if (c)
		fprintf(stderr, "usage: protune %s\n", c->usage);
	return EXIT_USAGE;
}

static const char *display_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

/* Parse and hash the model in `path`; 0 or 1 (reported). */
static int load_model(const char *path, struct pt_model **m)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	*m = NULL;
	if (pt_cli_read(path, &text))
		return 1;
	ret = pt_model_parse(text.buf, text.len, display_name(path), m, &err);
	pt_strbuf_release(&text);
	if (ret)
		return pt_cli_fail("%s", err.msg);
	if (pt_model_hash(*m)) {
		pt_model_free(*m);
		*m = NULL;
		return pt_cli_fail("%s: cannot hash the model", display_name(path));
	}
	return 0;
}

static int load_sched(const char *path, struct pt_sched **s,
		      struct pt_strbuf *keep_text)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	*s = NULL;
	if (pt_cli_read(path, &text))
		return 1;
	ret = pt_sched_parse(text.buf, text.len, display_name(path), s, &err);
	if (!ret && keep_text)
		*keep_text = text;
	else
		pt_strbuf_release(&text);
	if (ret)
		return pt_cli_fail("%s", err.msg);
	return 0;
}

static int write_out(const struct pt_strbuf *sb)
{
	if (fwrite(sb->buf, 1, sb->len, stdout) != sb->len || fflush(stdout))
		return pt_cli_fail("cannot write the output: %s", strerror(errno));
	return 0;
}

/* Model and schedule, with the schedule checked against the model. */
static int load_pair(const struct args *a, struct pt_model **m,
		     struct pt_sched **s, struct pt_strbuf *text, int check)
{
	struct pt_error err = PT_ERROR_INIT;

	*s = NULL;
	if (load_model(a->pos[0], m))
		return 1;
	if (load_sched(a->pos[1], s, text))
		return 1;
	if (check && pt_sched_check(*m, *s, &err))
		return pt_cli_fail("%s does not fit %s: %s", display_name(a->pos[1]),
			    display_name(a->pos[0]), err.msg);
	return 0;
}

/* --- commands ------------------------------------------------------------ */

static int cmd_model(const struct args *a)
{
	struct pt_model *m;
	struct pt_strbuf out = PT_STRBUF_INIT;
	int ret;

	if (load_model(a->pos[0], &m))
		return 1;
	ret = pt_model_print(m, PT_MODEL_PRINT_LABELS, &out) ?
		pt_cli_fail("out of memory") : write_out(&out);
	pt_strbuf_release(&out);
	pt_model_free(m);
	return ret;
}

static int cmd_key(const struct args *a)
{
	struct pt_model *m;
	struct pt_strbuf out = PT_STRBUF_INIT;
	char hex[33];
	int i, ret = 0;

	if (load_model(a->pos[0], &m))
		return 1;
	pt_hash_hex(m->key, hex);
	if (pt_strbuf_addf(&out, "%s\n", hex))
		ret = 1;
	for (i = 0; i < m->nstages && !ret; i++) {
		const struct pt_stage *st = &m->stages[i];
		const char *label = st->func >= 0 && st->func < m->nfuncs ?
			m->funcs[st->func].label : NULL;

		pt_hash_hex(st->hash, hex);
		if (pt_strbuf_addf(&out, "f%d.%d %s%s%s\n", st->func, st->index,
				   hex, label && *label ? " " : "",
				   label ? label : ""))
			ret = 1;
	}
	ret = ret ? pt_cli_fail("out of memory") : write_out(&out);
	pt_strbuf_release(&out);
	pt_model_free(m);
	return ret;
}

static int cmd_check(const struct args *a)
{
	struct pt_model *m = NULL;
	struct pt_sched *s = NULL;
	int ret = load_pair(a, &m, &s, NULL, 1);

	pt_sched_free(s);
	pt_model_free(m);
	return ret;
}

static int print_sched(const struct pt_sched *s)
{
	struct pt_strbuf out = PT_STRBUF_INIT;
	int ret;

	ret = pt_sched_print(s, &out) ? pt_cli_fail("out of memory") : write_out(&out);
	pt_strbuf_release(&out);
	return ret;
}

static int cmd_baseline(const struct args *a)
{
	struct pt_model *m;
	struct pt_sched *s;
	int ret;

	if (load_model(a->pos[0], &m))
		return 1;
	s = pt_sched_baseline(m);
	ret = s ? print_sched(s) : pt_cli_fail("out of memory");
	pt_sched_free(s);
	pt_model_free(m);
	return ret;
}

static int cmd_random(const struct args *a)
{
	struct pt_model *m;
	struct pt_sched *s;
	int ret;

	if (load_model(a->pos[0], &m))
		return 1;
	s = pt_randsched(m, a->seed);
	ret = s ? print_sched(s) : pt_cli_fail("out of memory");
	pt_sched_free(s);
	pt_model_free(m);
	return ret;
}

static const char *const decision_word[] = { "", "granularity", "tiling",
					     "inner" };

/* The decisions on a random path to a complete state: one line each with
 * the depth, the Func, the stage and how many children it has. */
static int space_children(const struct pt_model *m, const struct pt_space *sp,
			  struct pt_space_work *w, struct pt_space_state *st,
			  uint64_t *rng)
{
	int f, stage, what, n, ret;

	printf("state size %zu bytes\n", pt_space_state_size(sp));
	while (!pt_space_next(sp, st, &f, &stage, &what)) {
		n = pt_space_children(sp, st, w, NULL, NULL);
		if (n < 0)
			return pt_cli_fail("counting children: %s", pt_strerror(n));
		printf("depth %d: f%d (%s) stage %d %s: %d children\n",
		       pt_space_depth(sp, st), f,
		       m->funcs[f].label ? m->funcs[f].label : "?", stage,
		       decision_word[what], n);
		if ((ret = pt_space_random_child(sp, st, w, rng, st)))
			return pt_cli_fail("drawing a child: %s", pt_strerror(ret));
	}
	printf("complete at depth %d\n", pt_space_depth(sp, st));
	return fflush(stdout) ? pt_cli_fail("cannot write the output: %s",
				     strerror(errno)) : 0;
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The cost model for `protune space --bench`, or NULL (reported). */
static struct pt_cost *bench_cost_model(void)
{
	struct pt_strbuf path = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cost *c = NULL;

	if (pt_drv_cost_model_path(&path, &err))
		fprintf(stderr, "protune: no costing: %s\n", err.msg);
	else if (!pt_cli_read(path.buf, &text) &&
		 pt_cost_parse(text.buf, text.len, path.buf, &c, &err))
		fprintf(stderr, "protune: %s\n", err.msg);
	pt_strbuf_release(&path);
	pt_strbuf_release(&text);
	return c;
}

/* An invariance check for the timed passes: XXH3-64 folded over, for each
 * of the a->bench states they draw, its schedule's text and, when costing,
 * the bytes of the predicted cost and of the terms. Untimed; a change that
 * should not alter any result must leave it unchanged. 0 or a PT_E* code. */
static int bench_digest(const struct args *a, const struct pt_space *sp,
			struct pt_space_work *w,
			const struct pt_space_state *root,
			struct pt_space_state *st, struct pt_features *fx,
			const struct pt_cost_prep *prep,
			const struct pt_cost *cost, double *rows, uint64_t *digest)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	double terms[PT_TERM_COUNT], pred;
	uint64_t h = 0;
	int i, ret = 0;

	for (i = 0; i < a->bench && !ret; i++) {
		uint64_t rng = a->seed + (uint64_t)i;
		const struct pt_sched *s = NULL;

		pt_strbuf_reset(&text);
		if ((ret = pt_space_random_complete(sp, root, w, &rng, st)) ||
		    (ret = pt_space_sched_scratch(sp, st, w, &s)) ||
		    (ret = pt_sched_print(s, &text) ? PT_ENOMEM : 0))
			break;
		h = XXH3_64bits_withSeed(text.buf, text.len, h);
		if (cost && !(ret = pt_features_compute(fx, s, rows, NULL))) {
			pt_cost_terms(prep, fx, rows, terms);
			pred = pt_cost_predict(cost, terms);
			h = XXH3_64bits_withSeed(&pred, sizeof(pred), h);
			h = XXH3_64bits_withSeed(terms, sizeof(terms), h);
		}
	}
	pt_strbuf_release(&text);
	*digest = h;
	return ret;
}

/* Time a->bench random complete states from the root; then as many with
 * their schedules built (in w's scratch schedule, as a search would);
 * then also featurized and costed. Each pass draws
 * the same states (seeds a->seed + i). Then, untimed, bench_digest. */
static int space_bench(const struct args *a, const struct pt_model *m,
		       const struct pt_space *sp, struct pt_space_work *w,
		       const struct pt_space_state *root)
{
	struct pt_space_state *st = pt_space_state_new(sp);
	struct pt_features *fx = NULL;
	struct pt_cost_prep *prep = NULL;
	struct pt_cost *cost = bench_cost_model();
	double *rows = malloc((size_t)m->nstages * PT_FEAT_COUNT *
			      sizeof(*rows));
	double t[4], depth = 0, sink = 0, terms[PT_TERM_COUNT];
	uint64_t digest = 0;
	int i, pass, ret = 0;

	if (!st || !rows || pt_features_new(m, &fx, NULL) ||
	    pt_cost_prep_new(m, fx, &prep, NULL)) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (pass = 0; pass < 3 && !ret; pass++) {
		if (pass == 2 && !cost)
			break;
		t[pass] = seconds();
		for (i = 0; i < a->bench && !ret; i++) {
			uint64_t rng = a->seed + (uint64_t)i;
			const struct pt_sched *s = NULL;

			ret = pt_space_random_complete(sp, root, w, &rng, st);
			if (!pass) {
				depth += pt_space_depth(sp, st);
				continue;
			}
			if (!ret)
				ret = pt_space_sched_scratch(sp, st, w, &s);
			if (!ret && pass == 2 &&
			    !(ret = pt_features_compute(fx, s, rows, NULL))) {
				pt_cost_terms(prep, fx, rows, terms);
				sink += pt_cost_predict(cost, terms);
			}
		}
		t[pass + 1] = seconds();
	}
	if (!ret)
		ret = bench_digest(a, sp, w, root, st, fx, prep, cost, rows,
				   &digest);
out:
	free(st);
	free(rows);
	pt_cost_prep_free(prep);
	pt_features_free(fx);
	pt_cost_free(cost);
	if (ret)
		return pt_cli_fail("%s", pt_strerror(ret));
	printf("%d random complete states (%.1f decisions each, %zu bytes): "
	       "%.0f states/s, %.1f us each; with the schedule: %.0f "
	       "states/s, %.1f us each", a->bench, depth / a->bench,
	       pt_space_state_size(sp), a->bench / (t[1] - t[0]),
	       1e6 * (t[1] - t[0]) / a->bench, a->bench / (t[2] - t[1]),
	       1e6 * (t[2] - t[1]) / a->bench);
	if (pass == 3)
		printf("; featurized and costed too: %.0f states/s, %.1f us each",
		       a->bench / (t[3] - t[2]), 1e6 * (t[3] - t[2]) / a->bench);
	printf("%s; digest %016llx\n", sink < 0 ? " (negative cost?)" : "",
	       (unsigned long long)digest);
	return fflush(stdout) ? pt_cli_fail("cannot write the output: %s",
				     strerror(errno)) : 0;
}

/* protune cost --stages: per stage, its share of the linear layer and
 * the terms that make up most of it (those over 2% of the stage). */
static void print_stage_terms(const struct pt_model *m, const double *coef,
			      const double *per, double pages, double lin)
{
	int i, k;

	printf("\n%-6s %-24s %12s %7s  %s\n", "stage", "func", "coef*value",
	       "share", "terms (coef*value)");
	for (i = 0; i < m->nstages; i++) {
		const struct pt_stage *st = &m->stages[i];
		const struct pt_func *f = &m->funcs[st->func];
		const double *t = &per[(size_t)i * PT_TERM_COUNT];
		double sum = 0;
		char name[64];

		for (k = 0; k < PT_TERM_COUNT; k++)
			sum += coef[k] * t[k];
		if (!(sum > 0))
			continue;
		if (f->label && *f->label)
			snprintf(name, sizeof(name), "f%d.%d(%s)", st->func,
				 st->index, f->label);
		else
			snprintf(name, sizeof(name), "f%d.%d", st->func,
				 st->index);
		printf("%-6d %-24.24s %12.6g %6.1f%% ", i, name, sum,
		       lin > 0 ? 100 * sum / lin : 0.0);
		for (k = 0; k < PT_TERM_COUNT; k++)
			if (coef[k] * t[k] > 0.02 * sum)
				printf(" %s=%.4g", pt_term_name(k),
				       coef[k] * t[k]);
		putchar('\n');
	}
	if (coef[PT_TERM_PAGES] * pages > 0)
		printf("%-6s %-24s %12.6g %6.1f%%  pages=%.4g\n", "-",
		       "(pipeline)", coef[PT_TERM_PAGES] * pages,
		       lin > 0 ? 100 * coef[PT_TERM_PAGES] * pages / lin : 0.0,
		       coef[PT_TERM_PAGES] * pages);
}

/* The cost model's prediction for one schedule and, term by term, what
 * the linear layer makes of it: the numbers behind a search's choice. */
static int cmd_cost(const struct args *a)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf path = PT_STRBUF_INIT;
	struct pt_model *m = NULL;
	struct pt_sched *s = NULL;
	struct pt_features *fx = NULL;
	struct pt_cost_prep *prep = NULL;
	struct pt_cost *c = NULL;
	double *rows = NULL, *per = NULL, terms[PT_TERM_COUNT], pred, lin;
	const double *coef;
	int ret, k;

	if ((ret = load_pair(a, &m, &s, NULL, 1)))
		goto out;
	if (pt_drv_cost_model_path(&path, &err) ||
	    pt_drv_load_cost_model(&c, &err)) {
		ret = pt_cli_fail("%s", err.msg);
		goto out;
	}
	rows = malloc((size_t)(m->nstages > 0 ? m->nstages : 1) *
		      PT_FEAT_COUNT * sizeof(*rows));
	per = malloc((size_t)(m->nstages > 0 ? m->nstages : 1) *
		     PT_TERM_COUNT * sizeof(*per));
	if (!rows || !per || pt_features_new(m, &fx, &err) ||
	    pt_cost_prep_new(m, fx, &prep, &err)) {
		ret = pt_cli_fail("%s", rows && per ? err.msg :
				  "out of memory");
		goto out;
	}
	if (pt_features_compute(fx, s, rows, &err)) {
		ret = pt_cli_fail("%s: %s", display_name(a->pos[1]), err.msg);
		goto out;
	}
	pt_cost_stage_terms(prep, fx, rows, terms, per);
	pred = pt_cost_predict(c, terms);
	lin = pt_cost_linear(c, terms);
	coef = pt_cost_coef(c);
	printf("predicted %.6g (linear layer %.6g", pred, lin);
	if (pt_cost_has_trees(c) && lin > 0)
		printf(", trees x%.4g", pred / lin);
	printf("); cost model %s\n", path.buf);
	printf("%-14s %14s %12s %12s %7s\n", "term", "value", "coef",
	       "coef*value", "share");
	for (k = 0; k < PT_TERM_COUNT; k++) {
		double v = coef[k] * terms[k];

		printf("%-14s %14.6g %12.4g %12.6g %6.1f%%\n", pt_term_name(k),
		       terms[k], coef[k], v, lin > 0 ? 100 * v / lin : 0.0);
	}
	if (a->stages)
		print_stage_terms(m, coef, per, terms[PT_TERM_PAGES], lin);
	ret = fflush(stdout) ? pt_cli_fail("cannot write the output: %s",
					   strerror(errno)) : 0;
out:
	free(rows);
	free(per);
	pt_cost_prep_free(prep);
	pt_features_free(fx);
	pt_cost_free(c);
	pt_strbuf_release(&path);
	pt_sched_free(s);
	pt_model_free(m);
	return ret;
}

static int cmd_space(const struct args *a)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	struct pt_space *sp = NULL;
	struct pt_space_work *w = NULL;
	struct pt_space_state *st = NULL;
	struct pt_sched *s = NULL;
	uint64_t rng = a->seed;
	int ret;

	if (load_model(a->pos[0], &m))
		return 1;
	if (pt_space_new(m, NULL, &sp, &err)) {
		ret = pt_cli_fail("%s: %s", display_name(a->pos[0]), err.msg);
		goto out;
	}
	w = pt_space_work_new(sp);
	st = pt_space_state_new(sp);
	if (!w || !st || pt_space_root(sp, w, st)) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	if (a->children) {
		ret = space_children(m, sp, w, st, &rng);
		goto out;
	}
	if (a->bench) {
		ret = space_bench(a, m, sp, w, st);
		goto out;
	}
	if ((ret = pt_space_random_complete(sp, st, w, &rng, st)) ||
	    (ret = pt_space_sched(sp, st, &s)) ||
	    (ret = pt_strvec_pushf(&s->meta, "seed=%llu",
				   (unsigned long long)a->seed))) {
		ret = pt_cli_fail("%s", pt_strerror(ret));
		goto out;
	}
	if (pt_sched_check(m, s, &err)) {
		/* A bug in the space: say so rather than print it. */
		ret = pt_cli_fail("the space gave an illegal schedule: %s", err.msg);
		goto out;
	}
	ret = print_sched(s);
out:
	pt_sched_free(s);
	free(st);
	pt_space_work_free(w);
	pt_space_free(sp);
	pt_model_free(m);
	return ret;
}

static int cmd_cpp(const struct args *a)
{
	struct pt_model *m = NULL;
	struct pt_sched *s = NULL;
	struct pt_strbuf out = PT_STRBUF_INIT;
	int ret = load_pair(a, &m, &s, NULL, 1);

	if (!ret)
		ret = pt_sched_to_cpp(m, s, &out) ? pt_cli_fail("out of memory") :
			write_out(&out);
	pt_strbuf_release(&out);
	pt_sched_free(s);
	pt_model_free(m);
	return ret;
}

/* $PROTUNE_CACHE_DIR, else $XDG_CACHE_HOME/protune, else
 * $HOME/.cache/protune. */
static int cache_dir(const struct args *a, struct pt_strbuf *out)
{
	const char *v;
	int ret;

	if (a->cache_dir)
		ret = pt_strbuf_addstr(out, a->cache_dir);
	else if ((v = getenv("PROTUNE_CACHE_DIR")) && *v)
		ret = pt_strbuf_addstr(out, v);
	else if ((v = getenv("XDG_CACHE_HOME")) && *v)
		ret = pt_strbuf_addf(out, "%s/protune", v);
	else if ((v = getenv("HOME")) && *v)
		ret = pt_strbuf_addf(out, "%s/.cache/protune", v);
	else
		return pt_cli_fail("no cache directory: set PROTUNE_CACHE_DIR or HOME");
	return ret ? pt_cli_fail("out of memory") : 0;
}

/* --plugin, else $PROTUNE_PLUGIN, else ../lib/libprotune_halide.so next to
 * this binary. A path (with a '/') must be a readable file: the generator
 * would only say "Failed to load". */
static int plugin_path(const struct args *a, struct pt_strbuf *out)
{
	struct pt_error err = PT_ERROR_INIT;
	struct stat st;

	if (!a->plugin)
		return pt_drv_plugin_path(out, &err) ?
			pt_cli_fail("%s", err.msg) : 0;
	if (pt_strbuf_addstr(out, a->plugin))
		return pt_cli_fail("out of memory");
	if (!strchr(a->plugin, '/'))
		return 0;
	if (stat(a->plugin, &st) || access(a->plugin, R_OK))
		return pt_cli_fail("--plugin: '%s': cannot read the plugin: %s",
				   a->plugin, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return pt_cli_fail("--plugin: '%s': cannot read the plugin: not a regular file",
				   a->plugin);
	return 0;
}

/* measure --profile: a table of the profiler's Funcs after the times. */
static void print_profile(const struct pt_measure_result *r)
{
	int i;

	printf("\n%-32s %12s %7s %12s\n", "func", "ms", "share",
	       "allocs");
	for (i = 0; i < r->nfuncs; i++)
		printf("%-32s %12.4g %6.1f%% %12.4g\n", r->funcs[i].name,
		       r->funcs[i].ms, 100 * r->funcs[i].share,
		       r->funcs[i].allocs);
	printf("%-32s %12s %7s %12.4g\n", "(pipeline)", "-", "-",
	       r->heap_allocs);
}

static int cmd_measure(const struct args *a)
{
	struct pt_model *m = NULL;
	struct pt_sched *s = NULL;
	struct pt_strbuf text = PT_STRBUF_INIT, cache = PT_STRBUF_INIT;
	struct pt_strbuf plugin = PT_STRBUF_INIT, lock = PT_STRBUF_INIT;
	struct pt_measure_opts o;
	struct pt_measure_result r;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	memset(&r, 0, sizeof(r));
	ret = load_pair(a, &m, &s, &text, !a->no_check);
	if (!ret)
		ret = cache_dir(a, &cache) || plugin_path(a, &plugin);
	if (!ret && pt_strbuf_addstr(&lock, pt_drv_bench_lock()))
		ret = pt_cli_fail("out of memory");
	if (ret)
		goto out;
	memset(&o, 0, sizeof(o));
	o.cache_dir = cache.buf;
	o.plugin_path = plugin.buf;
	o.lock_path = lock.buf;
	o.runs = a->runs;
	o.min_time_s = a->min_time;
	o.keep_dir = a->keep;
	o.cxx = getenv("PROTUNE_CXX");
	o.reference = a->reference;
	o.profile = a->profile;
	if (pt_measure(m, text.buf, &o, &r, &err)) {
		ret = pt_cli_fail("measuring %s: %s", display_name(a->pos[1]),
			   err.msg);
		if (a->keep && r.dir[0])
			fprintf(stderr, "protune: kept %s\n", r.dir);
		goto out;
	}
	printf("%.6g %.6g %.6g %d %.0f", r.median_ms, r.min_ms, r.max_ms,
	       r.runs, r.compile_ms);
	if (a->reference)
		printf(" %.6g %.6g", r.ratio, r.ref_median_ms);
	putchar('\n');
	if (a->profile)
		print_profile(&r);
	if (fflush(stdout))
		ret = pt_cli_fail("cannot write the output: %s", strerror(errno));
	if (a->verbose)
		fprintf(stderr,
			"protune: %s: median %.6g ms per iteration (min %.6g, max %.6g) over %d runs; compiled in %.0f ms\n",
			display_name(a->pos[1]), r.median_ms, r.min_ms,
			r.max_ms, r.runs, r.compile_ms);
	if (a->keep && r.dir[0])
		fprintf(stderr, "protune: kept %s\n", r.dir);
out:
	pt_strbuf_release(&text);
	pt_strbuf_release(&cache);
	pt_strbuf_release(&plugin);
	pt_strbuf_release(&lock);
	pt_measure_result_release(&r);
	pt_sched_free(s);
	pt_model_free(m);
	return ret;
}

/* What protune-cc passes for target=host on this processor
 * (pt_hosttarget.h); --explicit: Halide 14's host target spelled out
 * without avx512_sapphirerapids, whether or not it is needed. */
static int cmd_host_target(const struct args *a)
{
	struct pt_cpuid c;
	struct pt_strbuf t = PT_STRBUF_INIT;
	int ret;

	pt_cpuid_read(&c);
	ret = a->explicit ? pt_host_target_explicit(&c, &t) :
		pt_host_target_here(&t);
	if (ret > 0)
		ret = 0;
	if (ret == PT_EINVAL)
		ret = pt_cli_fail("host-target: not an x86-64 processor");
	else if (ret)
		ret = pt_cli_fail("%s", pt_strerror(ret));
	else if (printf("%s\n", t.buf) < 0 || fflush(stdout))
		ret = pt_cli_fail("cannot write the output: %s",
				  strerror(errno));
	pt_strbuf_release(&t);
	return ret;
}

static const struct command commands[] = {
	{ "model", 1, 0, "model FILE", cmd_model },
	{ "key", 1, 0, "key FILE", cmd_key },
	{ "check", 2, 0, "check MODEL SCHED", cmd_check },
	{ "baseline", 1, 0, "baseline MODEL", cmd_baseline },
	{ "random", 1, OPT_SEED, "random MODEL [--seed N]", cmd_random },
	{ "space", 1, OPT_SEED | OPT_CHILDREN,
	  "space MODEL [--seed N] [--children] [--bench N]", cmd_space },
	{ "cpp", 2, 0, "cpp MODEL SCHED", cmd_cpp },
	{ "cost", 2, OPT_STAGES, "cost MODEL SCHED [--stages]", cmd_cost },
	{ "measure", 2, OPT_MEASURE,
	  "measure MODEL SCHED [--runs N] [--min-time S] [--keep]\n"
	  "       [--cache-dir DIR] [--plugin SO] [--no-check] [-v]\n"
	  "       [--reference RUNGEN | --profile]", cmd_measure },
	{ "host-target", 0, OPT_EXPLICIT, "host-target [--explicit]",
	  cmd_host_target },
	{ NULL, 0, 0, NULL, NULL }
};

/* --- option parsing ------------------------------------------------------- */

static int parse_int(const char *s, long long lo, long long hi,
		     long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

static int parse_args(const struct command *c, int argc, char **argv,
		      struct args *a)
{
	int i, only_pos = 0;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *val = NULL, *eq;
		char name[32];
		size_t n;
		long long v;
		int takes_value;

		if (only_pos || arg[0] != '-' || !strcmp(arg, "-")) {
			if (a->npos == c->npos)
				return usage_error(c, "unexpected argument '%s'",
						   arg);
			a->pos[a->npos++] = arg;
			continue;
		}
		if (!strcmp(arg, "--")) {
			only_pos = 1;
			continue;
		}
		if ((c->opts & OPT_MEASURE) &&
		    (!strcmp(arg, "-v") || !strcmp(arg, "--verbose"))) {
			a->verbose = 1;
			continue;
		}
		eq = strchr(arg, '=');
		n = eq ? (size_t)(eq - arg) : strlen(arg);
		if (n >= sizeof(name))
			return usage_error(c, "unknown option '%s'", arg);
		memcpy(name, arg, n);
		name[n] = '\0';
		takes_value = !strcmp(name, "--seed") ||
			!strcmp(name, "--bench") ||
			!strcmp(name, "--runs") || !strcmp(name, "--min-time") ||
			!strcmp(name, "--cache-dir") || !strcmp(name, "--plugin") ||
			!strcmp(name, "--reference");
		if (!(((c->opts & OPT_SEED) && !strcmp(name, "--seed")) ||
		      ((c->opts & OPT_EXPLICIT) &&
		       !strcmp(name, "--explicit")) ||
		      ((c->opts & OPT_STAGES) && !strcmp(name, "--stages")) ||
		      ((c->opts & OPT_CHILDREN) &&
		       (!strcmp(name, "--children") ||
			!strcmp(name, "--bench"))) ||
		      ((c->opts & OPT_MEASURE) &&
		       (!strcmp(name, "--runs") || !strcmp(name, "--min-time") ||
			!strcmp(name, "--cache-dir") ||
			!strcmp(name, "--plugin") || !strcmp(name, "--keep") ||
			!strcmp(name, "--reference") ||
			!strcmp(name, "--profile") ||
			!strcmp(name, "--no-check")))))
			return usage_error(c, "unknown option '%s'", arg);
		if (takes_value) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return usage_error(c, "option '%s' needs a value",
						   name);
		} else if (eq) {
			return usage_error(c, "option '%s' takes no value",
					   name);
		}
		if (!strcmp(name, "--seed")) {
			if (parse_u64(val, &a->seed))
				return usage_error(c, "bad seed '%s'", val);
		} else if (!strcmp(name, "--runs")) {
			if (parse_int(val, 1, 1000, &v))
				return usage_error(c, "bad run count '%s' (1 to 1000)",
						   val);
			a->runs = (int)v;
		} else if (!strcmp(name, "--min-time")) {
			char *end;

			a->min_time = strtod(val, &end);
			if (!*val || *end || !(a->min_time > 0) ||
			    a->min_time > 3600)
				return usage_error(c, "bad time '%s' (seconds, above 0)",
						   val);
		} else if (!strcmp(name, "--cache-dir")) {
			a->cache_dir = val;
		} else if (!strcmp(name, "--plugin")) {
			a->plugin = val;
		} else if (!strcmp(name, "--reference")) {
			a->reference = val;
		} else if (!strcmp(name, "--keep")) {
			a->keep = 1;
		} else if (!strcmp(name, "--no-check")) {
			a->no_check = 1;
		} else if (!strcmp(name, "--profile")) {
			a->profile = 1;
		} else if (!strcmp(name, "--explicit")) {
			a->explicit = 1;
		} else if (!strcmp(name, "--stages")) {
			a->stages = 1;
		} else if (!strcmp(name, "--children")) {
			a->children = 1;
		} else if (!strcmp(name, "--bench")) {
			if (parse_int(val, 1, 100000000, &v))
				return usage_error(c, "bad state count '%s'",
						   val);
			a->bench = (int)v;
		}
	}
	if (a->npos < c->npos)
		return usage_error(c, "%s: missing arguments", c->name);
	if (a->npos == 2 && !strcmp(a->pos[0], "-") && !strcmp(a->pos[1], "-"))
		return usage_error(c, "%s", "only one input can be '-'");
	if (a->profile && a->reference)
		return usage_error(c, "%s",
				   "--profile and --reference do not go together: a profiled build is not timed against a reference");
	return 0;
}

int main(int argc, char **argv)
{
	const struct command *c;
	struct args a;
	int ret;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("protune %s\n", PT_VERSION);
		return 0;
	}
	if ((ret = pt_cmd_cache_main(argc - 1, argv + 1)) != -1)
		return ret;
	if ((ret = pt_cmd_tune_main(argc - 1, argv + 1)) != -1)
		return ret;
	if ((ret = pt_cmd_train_main(argc - 1, argv + 1)) != -1)
		return ret;
	if ((ret = pt_cmd_retune_main(argc - 1, argv + 1)) != -1)
		return ret;
	for (c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			break;
	if (!c->name) {
		fprintf(stderr, "protune: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		printf("usage: protune %s\n", c->usage);
		return 0;
	}
	ret = parse_args(c, argc - 2, argv + 2, &a);
	if (ret)
		return ret;
	return c->fn(&a);
}
