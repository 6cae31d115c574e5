/* pt_cmd_train.c: `protune train` (pt_cmd_train.h, doc/cost-model.md), and
 * what `protune calibrate` shares with it.
 *
 * Training data is a directory as bench/samples.sh writes it:
 *   DIR/models/NAME.model   the pipeline model of NAME
 *   DIR/samples.tsv         name seed status median_ms min_ms max_ms
 *                           compile_ms sched_id [ratio ref_ms]
 *   DIR/retest.tsv          (optional) the same columns: samples measured
 *                           again; rows of one name and seed are one
 *                           sample, timed by the geometric mean of their
 *                           ratios (and times)
 * where a schedule is `protune space MODEL --seed SEED` (the text that
 * command prints) and sched_id the first 16 hex digits of its git blob id
 * (`git hash-object`), so a sample measured on another version of the
 * space is noticed instead of being trained on with the wrong schedule.
 * With the last two columns (the sample timed side by side with a fixed
 * reference binary of its pipeline), a sample's runtime is taken as its
 * ratio times the median of all the reference's times in the file: the
 * ratio drifts much less with the machine's load than either time.
 *
 * Several --data directories may hold the same pipeline (one directory a
 * machine): its samples in each are a group of their own, with their own
 * reference and their own offset in the fit. --hold-out NAME leaves the
 * pipeline out of every directory; --hold-out-data DIR leaves a whole
 * directory (a machine) out of the fit, while its examples are still
 * ranked.
 */
#include "pt_cli.h"
#include "pt_cmd_train.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "protune/pt_cost.h"
#include "protune/pt_features.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_space.h"
#include "protune/pt_spawn.h"
#include "protune/pt_strbuf.h"

#define EXIT_USAGE 2

/* One pipeline's samples from one data directory. */
struct group {
	char *name;
	char *dir;
	struct pt_train_space ts;
	struct pt_features *fx;
	struct pt_cost_prep *prep;
	double *rows;
	int n;              /* samples kept */
	int held_out;
};

struct sample {
	int group;
	unsigned long long seed;  /* the space seed that draws its schedule */
	double ms;          /* the runtime trained on */
	double ratio;       /* to the reference, 0 without one */
	double ref_ms;      /* the reference's time alongside, 0 without */
	int runs;           /* measurements merged into it */
	double first;       /* the first measurement: its ratio, or its time */
	double again;       /* the later ones (geometric mean, same unit);
			     * 0: none; -1: not in the first one's unit */
	double terms[PT_TERM_COUNT];
};

struct data {
	struct group *g;
	int ng;
	struct sample *s;
	size_t n, cap;
	size_t failed;      /* samples whose schedule did not compile or run */
	size_t stale;       /* samples whose seed now draws another schedule */
	struct pt_cost_fit_opts fit;  /* --ridge, --weight-power, --loss */
};

static void group_release(struct group *g)
{
	free(g->name);
	free(g->dir);
	free(g->rows);
	pt_cost_prep_free(g->prep);
	pt_features_free(g->fx);
	pt_train_space_close(&g->ts);
}

static void data_release(struct data *d)
{
	int i;

	for (i = 0; i < d->ng; i++)
		group_release(&d->g[i]);
	free(d->g);
	free(d->s);
}

/* The group of NAME from DIR, loading its model the first time. */
static int find_group(struct data *d, const char *dir, const char *name,
		      int *out)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf path = PT_STRBUF_INIT;
	struct group *g;
	int i, ret = 1;

	for (i = 0; i < d->ng; i++)
		if (!strcmp(d->g[i].name, name) && !strcmp(d->g[i].dir, dir)) {
			*out = i;
			return 0;
		}
	g = realloc(d->g, (size_t)(d->ng + 1) * sizeof(*g));
	if (!g)
		return pt_cli_fail("out of memory");
	d->g = g;
	g = &d->g[d->ng];
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	g->dir = strdup(dir);
	d->ng++;
	if (!g->name || !g->dir ||
	    pt_strbuf_addf(&path, "%s/models/%s.model", dir, name)) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	if (pt_train_space_open(&g->ts, path.buf))
		goto out;
	if (pt_features_new(g->ts.m, &g->fx, &err) ||
	    pt_cost_prep_new(g->ts.m, g->fx, &g->prep, &err)) {
		ret = pt_cli_fail("%s: %s", path.buf, err.msg[0] ? err.msg :
			   "cannot analyse the model");
		goto out;
	}
	g->rows = malloc((size_t)g->ts.m->nstages * PT_FEAT_COUNT *
			 sizeof(*g->rows));
	if (!g->rows) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	*out = d->ng - 1;
	ret = 0;
out:
	pt_strbuf_release(&path);
	return ret;
}

int pt_train_space_open(struct pt_train_space *ts, const char *path)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf text = PT_STRBUF_INIT;
	int ret = 1;

	memset(ts, 0, sizeof(*ts));
	if (pt_cli_read(path, &text))
		goto out;
	if (pt_model_parse(text.buf, text.len, path, &ts->m, &err) ||
	    pt_model_hash(ts->m) ||
	    pt_space_new(ts->m, NULL, &ts->sp, &err)) {
		pt_cli_fail("%s: %s", path, err.msg[0] ? err.msg :
			    "cannot analyse the model");
		goto out;
	}
	ts->w = pt_space_work_new(ts->sp);
	ts->root = pt_space_state_new(ts->sp);
	ts->st = pt_space_state_new(ts->sp);
	if (!ts->w || !ts->root || !ts->st ||
	    pt_space_root(ts->sp, ts->w, ts->root)) {
		pt_cli_fail("out of memory");
		goto out;
	}
	ret = 0;
out:
	pt_strbuf_release(&text);
	return ret;
}

void pt_train_space_close(struct pt_train_space *ts)
{
	free(ts->root);
	free(ts->st);
	pt_space_work_free(ts->w);
	pt_space_free(ts->sp);
	pt_model_free(ts->m);
	memset(ts, 0, sizeof(*ts));
}

/* The schedule `protune space MODEL --seed SEED` prints, into *s (the
 * caller frees it, also on failure) and text. */
static int draw_text(struct pt_train_space *ts, uint64_t seed,
		     struct pt_sched **s, struct pt_strbuf *text)
{
	uint64_t rng = seed;
	int ret;

	if ((ret = pt_space_random_complete(ts->sp, ts->root, ts->w, &rng,
					    ts->st)) ||
	    (ret = pt_space_sched(ts->sp, ts->st, s)) ||
	    (ret = pt_strvec_pushf(&(*s)->meta, "seed=%llu",
				   (unsigned long long)seed)) ||
	    (ret = pt_sched_print(*s, text)))
		return ret;
	return 0;
}

int pt_train_space_text(struct pt_train_space *ts, uint64_t seed,
			struct pt_strbuf *text)
{
	struct pt_sched *s = NULL;
	int ret = draw_text(ts, seed, &s, text);

	pt_sched_free(s);
	return ret;
}

int pt_train_blob_id(const struct pt_strbuf *text, char out[17])
{
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	if (git_odb_hash(&oid, text->buf, text->len, GIT_OBJECT_BLOB))
		return -1;
	git_oid_tostr(hex, sizeof(hex), &oid);
	memcpy(out, hex, 16);
	out[16] = 0;
	return 0;
}

/* The geometric mean of a mean of n values and one more value. */
static double gmean_add(double mean, int n, double v)
{
	return exp((log(mean) * n + log(v)) / (n + 1));
}

/* A sample of (group, seed) measured again: merged into the one there is
 * (`merge`), or the first. */
static int add_sample(struct data *d, int group, unsigned long long seed,
		      double ms, const double *terms, double ratio, double ref,
		      int merge)
{
	size_t i;

	for (i = 0; merge && i < d->n; i++) {
		struct sample *o = &d->s[i];

		if (o->group != group || o->seed != seed)
			continue;
		o->ms = gmean_add(o->ms, o->runs, ms);
		/* The repeats in the first one's unit; a repeat without a
		 * ratio where the first has one leaves no comparable pair. */
		if (o->again >= 0 && (o->ratio > 0) == (ratio > 0))
			o->again = o->runs == 1 ? (ratio > 0 ? ratio : ms) :
				gmean_add(o->again, o->runs - 1,
					  ratio > 0 ? ratio : ms);
		else
			o->again = -1;
		if (o->ratio > 0 && ratio > 0) {
			o->ratio = gmean_add(o->ratio, o->runs, ratio);
			o->ref_ms = gmean_add(o->ref_ms, o->runs, ref);
		} else {
			o->ratio = o->ref_ms = 0;  /* the times alone */
		}
		o->runs++;
		return 0;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 1024;
		struct sample *s = realloc(d->s, cap * sizeof(*s));

		if (!s)
			return pt_cli_fail("out of memory");
		d->s = s;
		d->cap = cap;
	}
	d->s[d->n].group = group;
	d->s[d->n].seed = seed;
	d->s[d->n].ms = ms;
	d->s[d->n].ratio = ratio;
	d->s[d->n].ref_ms = ref;
	d->s[d->n].runs = 1;
	d->s[d->n].first = ratio > 0 ? ratio : ms;
	d->s[d->n].again = 0;
	memcpy(d->s[d->n].terms, terms, sizeof(d->s[d->n].terms));
	d->n++;
	d->g[group].n++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Samples timed alongside a reference: ms = ratio * the median of the
 * reference's times over all of the pipeline's samples. */
static void normalize(struct data *d)
{
	double *v = malloc(d->n * sizeof(*v));
	size_t i, k;
	int g;

	if (!v)
		return;  /* keeps the raw times */
	for (g = 0; g < d->ng; g++) {
		for (i = k = 0; i < d->n; i++)
			if (d->s[i].group == g && d->s[i].ratio > 0)
				v[k++] = d->s[i].ref_ms;
		if (!k)
			continue;
		qsort(v, k, sizeof(*v), cmp_double);
		for (i = 0; i < d->n; i++)
			if (d->s[i].group == g && d->s[i].ratio > 0)
				d->s[i].ms = d->s[i].ratio * v[k / 2];
	}
	free(v);
}

/* Load DIR/FILE: every "ok" row becomes a sample, or with `again` is
 * merged into the sample of its name and seed when there is one. A
 * missing file is 0 with `again` (DIR/retest.tsv is optional). */
static int load_tsv(struct data *d, const char *dir, const char *file,
		    int verify, int again)
{
	struct pt_strbuf path = PT_STRBUF_INIT, tsv = PT_STRBUF_INIT;
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char *line, *next;
	int lineno = 0, ret = 1;

	if (pt_strbuf_addf(&path, "%s/%s", dir, file))
		return pt_cli_fail("out of memory");
	if (again && access(path.buf, F_OK) && errno == ENOENT) {
		pt_strbuf_release(&path);
		return 0;
	}
	if (pt_cli_read(path.buf, &tsv))
		goto out;
	for (line = tsv.buf; line && *line; line = next) {
		char *f[10], *end;
		int nf = 0, gi = 0;
		unsigned long long seed;
		double ms, terms[PT_TERM_COUNT], ratio = 0, ref = 0;
		struct pt_sched *s = NULL;
		char id[17];

		lineno++;
		if ((next = strchr(line, '\n')))
			*next++ = 0;
		for (f[nf++] = line; nf < 10 && (end = strchr(f[nf - 1], '\t'));) {
			*end = 0;
			f[nf++] = end + 1;
		}
		if ((nf != 8 && nf != 10) || strchr(f[nf - 1], '\t')) {
			ret = pt_cli_fail("%s:%d: expected 8 or 10 fields separated by tabs",
				   path.buf, lineno);
			goto out;
		}
		errno = 0;
		seed = strtoull(f[1], &end, 10);
		if (*end || errno || !*f[1]) {
			ret = pt_cli_fail("%s:%d: bad seed '%s'", path.buf, lineno,
				   f[1]);
			goto out;
		}
		if (!strcmp(f[2], "fail")) {
			d->failed++;
			continue;
		}
		ms = strtod(f[3], &end);
		if (strcmp(f[2], "ok") || *end || !(ms > 0) || !isfinite(ms)) {
			ret = pt_cli_fail("%s:%d: expected 'ok' and a runtime, or 'fail'",
				   path.buf, lineno);
			goto out;
		}
		if (nf == 10) {
			ratio = strtod(f[8], &end);
			ref = *end ? 0 : strtod(f[9], &end);
			if (*end || !(ratio > 0) || !(ref > 0) ||
			    !isfinite(ratio) || !isfinite(ref)) {
				ret = pt_cli_fail("%s:%d: bad ratio or reference time",
					   path.buf, lineno);
				goto out;
			}
		}
		if (find_group(d, dir, f[0], &gi))
			goto out;
		pt_strbuf_reset(&text);
		if ((ret = draw_text(&d->g[gi].ts, seed, &s, &text)) ||
		    (ret = pt_train_blob_id(&text, id))) {
			pt_sched_free(s);
			ret = pt_cli_fail("%s:%d: cannot draw the schedule of %s seed %llu: %s",
				   path.buf, lineno, f[0], seed,
				   pt_strerror(ret));
			goto out;
		}
		if (verify && strcmp(id, f[7])) {
			/* Never train on another schedule's time: skip it. */
			pt_sched_free(s);
			fprintf(stderr, "protune: %s:%d: skipped: the schedule of %s seed %llu is not the one measured (id %s, now %s): the space has changed since; measure it again (bench/samples.sh)\n",
				path.buf, lineno, f[0], seed, f[7], id);
			d->stale++;
			continue;
		}
		ret = pt_features_compute(d->g[gi].fx, s, d->g[gi].rows, &err);
		pt_sched_free(s);
		if (ret) {
			ret = pt_cli_fail("%s:%d: %s seed %llu: %s", path.buf, lineno,
				   f[0], seed, err.msg);
			goto out;
		}
		pt_cost_terms(d->g[gi].prep, d->g[gi].fx, d->g[gi].rows, terms);
		if (add_sample(d, gi, seed, ms, terms, ratio, ref, again))
			goto out;
	}
	ret = 0;
out:
	pt_strbuf_release(&path);
	pt_strbuf_release(&tsv);
	pt_strbuf_release(&text);
	return ret;
}

/* Load DIR's samples, and its second measurements when it has some. */
static int load_dir(struct data *d, const char *dir, int verify)
{
	if (load_tsv(d, dir, "samples.tsv", verify, 0) ||
	    load_tsv(d, dir, "retest.tsv", verify, 1))
		return 1;
	normalize(d);
	return 0;
}

/* Fit on the samples whose group is not excluded (exclude[g] != 0). */
static int fit(const struct data *d, const char *exclude, int trees,
	       struct pt_cost **out)
{
	struct pt_cost_fit_opts o = d->fit;
	struct pt_error err = PT_ERROR_INIT;
	double *terms = malloc(d->n * PT_TERM_COUNT * sizeof(*terms));
	double *ms = malloc(d->n * sizeof(*ms));
	int *group = malloc(d->n * sizeof(*group));
	size_t i, n = 0;
	int ret;

	if (!terms || !ms || !group) {
		free(terms), free(ms), free(group);
		return pt_cli_fail("out of memory");
	}
	for (i = 0; i < d->n; i++) {
		if (exclude[d->s[i].group])
			continue;
		memcpy(&terms[n * PT_TERM_COUNT], d->s[i].terms,
		       sizeof(d->s[i].terms));
		ms[n] = d->s[i].ms;
		group[n++] = d->s[i].group;
	}
	o.trees = trees;
	ret = pt_cost_fit(terms, ms, group, n, &o, out, &err);
	free(terms), free(ms), free(group);
	return ret ? pt_cli_fail("fitting the cost model: %s", err.msg) : 0;
}

/* Fewest samples measured again for a retest Spearman ("-" below). */
#define RETEST_MIN 10

static int is_example(const struct group *g)
{
	return strncmp(g->name, "rp:", 3) != 0;
}

/* Leave-one-example-out: for each example of each data directory, fit
 * without it (in every directory: the same pipeline measured on another
 * machine is not unseen) and rank its samples; one TSV row each into
 * `out` (its directory in the last column) and a summary on stdout; only
 * the groups with rank[] set. With
 * `given` (--score), no fitting: every example is ranked by that model,
 * whose training data is unknown here (held_out "no"). */
static int evaluate(const struct data *d, const char *exclude,
		    const char *rank, int trees, const struct pt_cost *given,
		    FILE *out)
{
	char *ex = malloc((size_t)d->ng);
	double *pred = malloc(d->n * sizeof(*pred));
	double *predl = malloc(d->n * sizeof(*predl));
	double *meas = malloc(d->n * sizeof(*meas));
	double *sp = malloc((size_t)d->ng * sizeof(*sp));
	double *m1 = malloc(d->n * sizeof(*m1));
	double *m2 = malloc(d->n * sizeof(*m2));
	int gi, ne = 0, ret = 1, multi = 0;

	for (gi = 1; gi < d->ng; gi++)
		multi |= strcmp(d->g[gi].dir, d->g[0].dir) != 0;
	if (!ex || !pred || !predl || !meas || !sp || !m1 || !m2) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	if (out)
		fprintf(out, "example\tspearman\ttop1_regret\tschedules\theld_out\t"
			"spearman_linear\ttop1_regret_linear\ttrain_samples\t"
			"retest_spearman\tretests\tdata\n");
	for (gi = 0; gi < d->ng; gi++) {
		struct pt_cost *c = NULL, *cl = NULL;
		size_t i, n = 0, train = 0, nr = 0;
		double s, r, sl, rl;
		char rs[16] = "-";
		int k;

		if (!is_example(&d->g[gi]) || d->g[gi].n < 2 || !rank[gi])
			continue;
		for (k = 0; k < d->ng; k++)
			ex[k] = given || exclude[k] ||
				!strcmp(d->g[k].name, d->g[gi].name);
		if (!given && (fit(d, ex, trees, &c) || fit(d, ex, 0, &cl))) {
			pt_cost_free(c);
			goto out;
		}
		for (i = 0; i < d->n; i++) {
			if (d->s[i].group != gi) {
				train += !ex[d->s[i].group];
				continue;
			}
			pred[n] = pt_cost_predict(given ? given : c,
						  d->s[i].terms);
			predl[n] = given ? pt_cost_linear(given, d->s[i].terms) :
				pt_cost_predict(cl, d->s[i].terms);
			meas[n++] = d->s[i].ms;
			if (d->s[i].again > 0) {
				m1[nr] = d->s[i].first;
				m2[nr++] = d->s[i].again;
			}
		}
		pt_cost_free(c);
		pt_cost_free(cl);
		s = pt_cost_spearman(pred, meas, n);
		r = pt_cost_top1_regret(pred, meas, n);
		sl = pt_cost_spearman(predl, meas, n);
		rl = pt_cost_top1_regret(predl, meas, n);
		/* How well the machine ranks its own schedules twice: the
		 * bound measurement noise puts on any model's Spearman. */
		if (nr >= RETEST_MIN)
			snprintf(rs, sizeof(rs), "%.3f",
				 pt_cost_spearman(m1, m2, nr));
		if (out)
			fprintf(out, "%s\t%.3f\t%.3f\t%zu\t%s\t%.3f\t%.3f\t%zu\t%s\t%zu\t%s\n",
				d->g[gi].name, s, r, n, given ? "no" : "yes",
				sl, rl, train, rs, nr, d->g[gi].dir);
		printf("  %-18s %4zu schedules  spearman %6.3f (linear %6.3f)  top-1 regret %5.2fx (linear %5.2fx)",
		       d->g[gi].name, n, s, sl, r, rl);
		if (multi)
			printf("  (%s)", d->g[gi].dir);
		if (nr >= RETEST_MIN)
			printf("  retest %s (%zu)", rs, nr);
		putchar('\n');
		sp[ne++] = s;
	}
	if (ne) {
		qsort(sp, (size_t)ne, sizeof(*sp), cmp_double);
		printf("%s examples: %d; spearman median %.3f, min %.3f\n",
		       given ? "scored" : "held-out", ne, ne % 2 ? sp[ne / 2] :
		       0.5 * (sp[ne / 2 - 1] + sp[ne / 2]), sp[0]);
	}
	ret = 0;
out:
	free(ex), free(pred), free(predl), free(meas), free(sp);
	free(m1), free(m2);
	return ret;
}

/* Every sample's group, runtime and terms, as TSV (for analysis). */
static int dump_terms(const struct data *d, const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;
	int k;

	if (!f)
		return pt_cli_fail("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "name\tseed\tms");
	for (k = 0; k < PT_TERM_COUNT; k++)
		fprintf(f, "\t%s", pt_term_name(k));
	fputc('\n', f);
	for (i = 0; i < d->n; i++) {
		fprintf(f, "%s\t%llu\t%.6g", d->g[d->s[i].group].name,
			d->s[i].seed, d->s[i].ms);
		for (k = 0; k < PT_TERM_COUNT; k++)
			fprintf(f, "\t%.6g", d->s[i].terms[k]);
		fputc('\n', f);
	}
	return fclose(f) ? pt_cli_fail("cannot write %s: %s", path,
				strerror(errno)) : 0;
}

static const char train_usage_text[] =
	"usage: protune train --data DIR... [--hold-out NAME]...\n"
	"       [--hold-out-data DIR]... [--trees N]\n"
	"       [--ridge X] [--loss log|linear] [--weight-power P]\n"
	"       [--drop TERM]... [--eval TSV] [--out FILE] [--dump TSV]\n"
	"       [--score COST-FILE] [--no-verify]\n";

/* The options that take a value (all but --no-verify and --help). */
static int takes_value(const char *o)
{
	static const char *const names[] = {
		"--data", "--hold-out", "--hold-out-data", "--trees",
		"--ridge", "--loss", "--weight-power", "--drop", "--eval",
		"--out", "--dump", "--score"
	};
	size_t k;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(o, names[k]))
			return 1;
	return 0;
}

/* A usage error: what is wrong, then the usage, on stderr. */
static int train_usage(const char *fmt, const char *arg)
{
	fputs("protune: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	fputs(train_usage_text, stderr);
	return EXIT_USAGE;
}

/* The cost model in `path` (--score), or a message. */
static int load_cost(const char *path, struct pt_cost **out)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret = pt_cli_read(path, &text);

	if (!ret && pt_cost_parse(text.buf, text.len, path, out, &err))
		ret = pt_cli_fail("%s", err.msg);
	pt_strbuf_release(&text);
	return ret;
}

static int cmd_train(int argc, char **argv)
{
	struct data d = { 0 };
	struct pt_cost_fit_opts defaults = PT_COST_FIT_OPTS_INIT;
	char drop[PT_TERM_COUNT] = { 0 };
	size_t si;
	const char *dirs[64], *holds[256], *hdirs[64], *eval = NULL;
	const char *dump = NULL, *score = NULL, *outp = NULL;
	int ndirs = 0, nholds = 0, nhdirs = 0, trees = -1, verify = 1, i;
	int ret = 1;
	char *exclude = NULL, *rank = NULL;
	struct pt_cost *c = NULL, *given = NULL;

	d.fit = defaults;
	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--no-verify")) {
			verify = 0;
			continue;
		}
		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			fputs(train_usage_text, stdout);
			return 0;
		}
		if (strncmp(o, "--", 2))
			return train_usage("unexpected argument '%s'", o);
		if (!takes_value(o))
			return train_usage("unknown option '%s'", o);
		if (!v)
			return train_usage("option '%s' needs a value", o);
		i++;
		if (!strcmp(o, "--data")) {
			int k;

			if (ndirs == 64)
				return train_usage("%s: at most 64 of them", o);
			/* twice would count its samples twice */
			for (k = 0; k < ndirs; k++)
				if (!strcmp(dirs[k], v))
					return train_usage("--data %s: given twice",
							   v);
			dirs[ndirs++] = v;
		} else if (!strcmp(o, "--hold-out-data")) {
			if (nhdirs == 64)
				return train_usage("%s: at most 64 of them", o);
			hdirs[nhdirs++] = v;
		} else if (!strcmp(o, "--hold-out")) {
			if (nholds == 256)
				return train_usage("%s: at most 256 of them", o);
			holds[nholds++] = v;
		} else if (!strcmp(o, "--eval")) {
			eval = v;
		} else if (!strcmp(o, "--out")) {
			outp = v;
		} else if (!strcmp(o, "--dump")) {
			dump = v;
		} else if (!strcmp(o, "--score")) {
			score = v;
		} else if (!strcmp(o, "--loss")) {
			if (!strcmp(v, "log"))
				d.fit.loss = PT_COST_LOSS_LOG;
			else if (!strcmp(v, "linear"))
				d.fit.loss = PT_COST_LOSS_LINEAR;
			else
				return pt_cli_fail("--loss: expected log or linear, got '%s'",
						   v);
		} else if (!strcmp(o, "--drop")) {
			int k;

			for (k = 0; k < PT_TERM_COUNT; k++)
				if (!strcmp(v, pt_term_name(k)))
					break;
			if (k == PT_TERM_COUNT)
				return pt_cli_fail("--drop: no term '%s'", v);
			drop[k] = 1;
		} else if (!strcmp(o, "--ridge") || !strcmp(o, "--weight-power")) {
			char *end;
			double x = strtod(v, &end);

			if (*end || !(x >= 0) || x > 1e6)
				return pt_cli_fail("%s: expected a number >= 0, got '%s'",
					    o, v);
			if (o[2] == 'r')
				d.fit.ridge = x;
			else
				d.fit.weight_power = x;
		} else if (!strcmp(o, "--trees")) {
			char *end;
			long t = strtol(v, &end, 10);

			if (*end || t < 0 || t > 100000)
				return pt_cli_fail("--trees: expected 0 to 100000, got '%s'",
					    v);
			trees = (int)t;
		}
	}
	if (!ndirs)
		return pt_cli_fail("train: no --data DIR given (see bench/samples.sh)");
	if (trees < 0)
		trees = d.fit.trees;
	git_libgit2_init();
	for (i = 0; i < ndirs; i++)
		if (load_dir(&d, dirs[i], verify))
			goto out;
	/* Ablation: a dropped term is 0 in every sample. */
	for (si = 0; si < d.n; si++)
		for (i = 0; i < PT_TERM_COUNT; i++)
			if (drop[i])
				d.s[si].terms[i] = 0;
	if (!(exclude = calloc((size_t)d.ng + 1, 1)) ||
	    !(rank = malloc((size_t)d.ng + 1))) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	/* With --hold-out-data, only the directories left out are ranked. */
	memset(rank, !nhdirs, (size_t)d.ng + 1);
	for (i = 0; i < nhdirs; i++) {
		int k, found = 0;

		for (k = 0; k < d.ng; k++)
			if (!strcmp(d.g[k].dir, hdirs[i]))
				exclude[k] = rank[k] = 1, found = 1;
		if (!found) {
			ret = pt_cli_fail("--hold-out-data %s: not a --data directory with samples",
					  hdirs[i]);
			goto out;
		}
	}
	for (i = 0; i < nholds; i++) {
		int k, found = 0;

		for (k = 0; k < d.ng; k++)
			if (!strcmp(d.g[k].name, holds[i]))
				exclude[k] = 1, found = 1;
		if (!found) {
			ret = pt_cli_fail("--hold-out %s: no samples of it", holds[i]);
			goto out;
		}
	}
	printf("%zu samples of %d pipelines (%zu failed to compile or run, not used",
	       d.n, d.ng, d.failed);
	if (d.stale)
		printf("; %zu skipped: their seeds now draw other schedules",
		       d.stale);
	printf(")\n");
	if (dump && dump_terms(&d, dump))
		goto out;
	if (score && load_cost(score, &given))
		goto out;
	if (eval || given) {
		FILE *f = eval ? fopen(eval, "w") : NULL;

		if (eval && !f) {
			ret = pt_cli_fail("cannot write %s: %s", eval, strerror(errno));
			goto out;
		}
		ret = evaluate(&d, exclude, rank, trees, given, f);
		if (f && fclose(f) && !ret)
			ret = pt_cli_fail("cannot write %s: %s", eval, strerror(errno));
		if (ret)
			goto out;
	}
	if (outp) {
		struct pt_strbuf text = PT_STRBUF_INIT;
		FILE *f;
		int k;

		if (fit(&d, exclude, trees, &c))
			goto out;
		if (pt_cost_write(c, &text)) {
			ret = pt_cli_fail("out of memory");
			goto out;
		}
		f = fopen(outp, "w");
		if (!f || fwrite(text.buf, 1, text.len, f) != text.len ||
		    fclose(f)) {
			ret = pt_cli_fail("cannot write %s: %s", outp, strerror(errno));
			pt_strbuf_release(&text);
			goto out;
		}
		pt_strbuf_release(&text);
		printf("wrote %s: %d terms%s\n", outp, PT_TERM_COUNT,
		       pt_cost_has_trees(c) ? " and trees" : "");
		for (k = 0; k < PT_TERM_COUNT; k++)
			printf("  %-14s %.4g\n", pt_term_name(k),
			       pt_cost_coef(c)[k]);
	}
	ret = 0;
out:
	pt_cost_free(c);
	pt_cost_free(given);
	free(exclude);
	free(rank);
	data_release(&d);
	git_libgit2_shutdown();
	return ret;
}

int pt_cmd_train_main(int argc, char **argv)
{
	if (argc < 1)
		return -1;
	if (!strcmp(argv[0], "train"))
		return cmd_train(argc, argv);
	if (!strcmp(argv[0], "calibrate")) {
		int ret;

		git_libgit2_init();
		ret = pt_cmd_calibrate(argc, argv);
		git_libgit2_shutdown();
		return ret;
	}
	return -1;
}
