/* pt_cmd_calibrate.c: `protune calibrate` (pt_cmd_train.h,
 * doc/cost-model.md): measure random schedules of the space on this
 * machine within a time budget, into a training data directory, then fit
 * the cost model to everything the directory holds.
 *
 * The directory has the layout `protune train` reads (and bench/samples.sh
 * writes): DIR/models/NAME.model, DIR/samples.tsv, plus DIR/refs/NAME.rungen,
 * the reference binary of each pipeline (its space schedule of seed 0)
 * that every sample is timed alongside. Samples are drawn round-robin over
 * the models, seeds going on from the largest one the file has for each;
 * `jobs` of them are measured at once (compiles overlap; timings take the
 * machine-wide benchmark lock one at a time, pt_measure.h). A run
 * interrupted or out of budget leaves a valid file: each line is appended
 * whole once its sample is measured.
 */
#define _DEFAULT_SOURCE /* strdup, strndup */
#include "pt_cli.h"
#include "pt_cmd_train.h"
#include "pt_drv.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protune/pt_config.h"
#include "protune/pt_measure.h"
#include "protune/pt_model.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_time.h"

#define EXIT_USAGE 2
#define MAX_MODELS 256

static const char calibrate_usage_text[] =
	"usage: protune calibrate --data DIR [--budget S] [--samples N]\n"
	"       [--jobs N] [--runs N] [--min-time S] [--trees N] [--out FILE]\n"
	"       [MODEL...]\n";

struct cal_model {
	char *name;
	struct pt_train_space ts;
	char *ref;           /* DIR/refs/NAME.rungen, NULL: no reference */
	uint64_t next_seed;
	int measured, failed;
};

struct cal {
	const char *dir;
	struct cal_model mod[MAX_MODELS];
	int n;
	struct pt_measure_opts mo;  /* shared settings; copied per sample */
	long long deadline;         /* pt_time_now_ms() */
	pthread_mutex_t mu;
	int next;                   /* round-robin position */
	long started, limit;        /* samples drawn; at most limit (0: no
				     * limit but the budget) */
	int stop;                   /* a machine error: no new samples */
	int ret;                    /* that error's exit status */
	FILE *tsv;
};

static void cal_model_release(struct cal_model *c)
{
	free(c->name);
	free(c->ref);
	pt_train_space_close(&c->ts);
}

static int calibrate_usage(const char *fmt, const char *arg)
{
	fputs("protune: calibrate: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	fputs(calibrate_usage_text, stderr);
	return EXIT_USAGE;
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0777) && errno != EEXIST)
		return pt_cli_fail("cannot create %s: %s", path, strerror(errno));
	return 0;
}

/* Write `len` bytes to path through path.tmp and a rename. */
static int write_whole(const char *path, const char *buf, size_t len)
{
	struct pt_strbuf tmp = PT_STRBUF_INIT;
	FILE *f;
	int ret = 0;

	if (pt_strbuf_addf(&tmp, "%s.tmp", path))
		return pt_cli_fail("out of memory");
	f = fopen(tmp.buf, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) ||
	    rename(tmp.buf, path))
		ret = pt_cli_fail("cannot write %s: %s", path, strerror(errno));
	pt_strbuf_release(&tmp);
	return ret;
}

/* Copy the model file `src` into DIR/models/NAME.model, NAME its base name
 * without ".model". The same bytes there already are fine; other bytes are
 * an error (two pipelines under one name). */
static int add_model(const char *dir, const char *src)
{
	struct pt_strbuf text = PT_STRBUF_INIT, old = PT_STRBUF_INIT;
	struct pt_strbuf dst = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	const char *base = strrchr(src, '/');
	size_t n;
	int ret = 1;

	base = base ? base + 1 : src;
	n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, ".model"))
		n -= 6;
	if (!n || memchr(base, '\t', n)) {
		pt_cli_fail("%s: cannot name a pipeline after this file", src);
		goto out;
	}
	if (pt_cli_read(src, &text))
		goto out;
	if (pt_model_parse(text.buf, text.len, src, &m, &err)) {
		pt_cli_fail("%s", err.msg);
		goto out;
	}
	if (pt_strbuf_addf(&dst, "%s/models/%.*s.model", dir, (int)n, base)) {
		pt_cli_fail("out of memory");
		goto out;
	}
	if (access(dst.buf, F_OK) == 0) {
		if (pt_cli_read(dst.buf, &old))
			goto out;
		if (old.len != text.len || memcmp(old.buf, text.buf, old.len)) {
			pt_cli_fail("%s: %s holds another model of that name; rename one of them",
				    src, dst.buf);
			goto out;
		}
	} else if (write_whole(dst.buf, text.buf, text.len)) {
		goto out;
	}
	ret = 0;
out:
	pt_model_free(m);
	pt_strbuf_release(&text);
	pt_strbuf_release(&old);
	pt_strbuf_release(&dst);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load every DIR/models/NAME.model, in name order. */
static int load_models(struct cal *c)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	char *names[MAX_MODELS];
	struct dirent *e;
	DIR *d = NULL;
	int nn = 0, i, ret = 1;

	if (pt_strbuf_addf(&path, "%s/models", c->dir)) {
		pt_cli_fail("out of memory");
		goto out;
	}
	if (!(d = opendir(path.buf))) {
		pt_cli_fail("cannot read %s: %s", path.buf, strerror(errno));
		goto out;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n <= 6 || strcmp(e->d_name + n - 6, ".model"))
			continue;
		if (nn == MAX_MODELS) {
			pt_cli_fail("%s/models: more than %d models", c->dir,
				    MAX_MODELS);
			goto out;
		}
		if (!(names[nn] = strndup(e->d_name, n - 6))) {
			pt_cli_fail("out of memory");
			goto out;
		}
		nn++;
	}
	qsort(names, (size_t)nn, sizeof(*names), cmp_str);
	for (i = 0; i < nn; i++) {
		struct cal_model *cm = &c->mod[c->n++];

		cm->name = names[i];
		names[i] = NULL;
		cm->next_seed = 1;
		pt_strbuf_reset(&path);
		if (pt_strbuf_addf(&path, "%s/models/%s.model", c->dir,
				   cm->name)) {
			pt_cli_fail("out of memory");
			goto out;
		}
		if (pt_train_space_open(&cm->ts, path.buf))
			goto out;
	}
	if (!c->n) {
		pt_cli_fail("%s/models has no models: give MODEL files (PROTUNE_DUMP_MODEL writes them, doc/cost-model.md)",
			    c->dir);
		goto out;
	}
	ret = 0;
out:
	if (d)
		closedir(d);
	for (i = 0; i < nn; i++)
		free(names[i]);
	pt_strbuf_release(&path);
	return ret;
}

/* Go on from the largest seed DIR/samples.tsv has for each model. */
static int next_seeds(struct cal *c)
{
	struct pt_strbuf path = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	const char *p, *end;
	int i;

	if (pt_strbuf_addf(&path, "%s/samples.tsv", c->dir))
		return pt_cli_fail("out of memory");
	if (access(path.buf, F_OK)) {
		pt_strbuf_release(&path);
		return 0;
	}
	if (pt_cli_read(path.buf, &text)) {
		pt_strbuf_release(&path);
		return 1;
	}
	for (p = text.buf, end = p + text.len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *tab = memchr(p, '\t', (size_t)((nl ? nl : end) - p));

		if (tab)
			for (i = 0; i < c->n; i++)
				if (strlen(c->mod[i].name) == (size_t)(tab - p) &&
				    !memcmp(c->mod[i].name, p, (size_t)(tab - p))) {
					unsigned long long s =
						strtoull(tab + 1, NULL, 10);

					if (s + 1 > c->mod[i].next_seed)
						c->mod[i].next_seed = s + 1;
				}
		p = nl ? nl + 1 : end;
	}
	pt_strbuf_release(&path);
	pt_strbuf_release(&text);
	return 0;
}

static int left_ms(const struct cal *c)
{
	long long l = c->deadline - pt_time_now_ms();

	return l <= 0 ? 0 : l > 2000000000 ? 2000000000 : (int)l;
}

/* The measuring options for one more step, bounded by the budget. */
static void bounded(const struct cal *c, struct pt_measure_opts *o)
{
	int l = left_ms(c);

	*o = c->mo;
	if (o->compile_timeout_ms <= 0 || o->compile_timeout_ms > l)
		o->compile_timeout_ms = l > 0 ? l : 1;
	o->run_timeout_ms = l > 0 ? l : 1;
	o->lock_timeout_ms = l > 0 ? l : 1;
}

/* Build DIR/refs/NAME.rungen when missing: the seed-0 schedule, compiled
 * once. A reference that cannot be built leaves the model without one
 * (said on stderr): its samples are then plain times. */
static int build_ref(struct cal *c, struct cal_model *cm)
{
	struct pt_strbuf path = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	struct pt_strbuf built = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_measure_result res;
	struct pt_measure_opts o;
	int ret;

	if (pt_strbuf_addf(&path, "%s/refs/%s.rungen", c->dir, cm->name))
		return pt_cli_fail("out of memory");
	if (access(path.buf, X_OK) == 0) {
		cm->ref = strdup(path.buf);
		pt_strbuf_release(&path);
		return cm->ref ? 0 : pt_cli_fail("out of memory");
	}
	if ((ret = pt_train_space_text(&cm->ts, 0, &text))) {
		ret = pt_cli_fail("%s: cannot draw its seed-0 schedule: %s",
				  cm->name, pt_strerror(ret));
		goto out;
	}
	bounded(c, &o);
	o.runs = 1;
	o.keep_dir = 1;
	o.reference = NULL;
	if (pt_measure(cm->ts.m, text.buf, &o, &res, &err)) {
		fprintf(stderr, "protune: calibrate: %s: no reference (its seed-0 schedule: %s); its samples are timed alone\n",
			cm->name, err.msg);
		if (res.dir[0])
			pt_measure_remove_dir(res.dir);
		ret = 0;
		goto out;
	}
	if (pt_strbuf_addf(&built, "%s/rungen", res.dir)) {
		ret = pt_cli_fail("out of memory");
	} else if (rename(built.buf, path.buf)) {
		/* another file system: copy */
		struct pt_strbuf bin = PT_STRBUF_INIT;

		ret = pt_cli_read(built.buf, &bin) ||
			write_whole(path.buf, bin.buf, bin.len) ||
			(chmod(path.buf, 0755) &&
			 pt_cli_fail("cannot chmod %s: %s", path.buf,
				     strerror(errno)));
		pt_strbuf_release(&bin);
	}
	pt_measure_remove_dir(res.dir);
	if (!ret && !(cm->ref = strdup(path.buf)))
		ret = pt_cli_fail("out of memory");
out:
	pt_strbuf_release(&path);
	pt_strbuf_release(&text);
	pt_strbuf_release(&built);
	return ret;
}

/* One worker: draw, measure and record samples until the budget ends. */
static void *worker(void *arg)
{
	struct cal *c = arg;
	struct pt_strbuf text = PT_STRBUF_INIT;

	for (;;) {
		struct pt_error err = PT_ERROR_INIT;
		struct pt_measure_result res;
		struct pt_measure_opts o;
		struct cal_model *cm;
		uint64_t seed;
		char id[17];
		int ret;

		pthread_mutex_lock(&c->mu);
		if (c->stop || left_ms(c) <= 0 ||
		    (c->limit && c->started >= c->limit)) {
			pthread_mutex_unlock(&c->mu);
			break;
		}
		c->started++;
		cm = &c->mod[c->next];
		c->next = (c->next + 1) % c->n;
		seed = cm->next_seed++;
		pt_strbuf_reset(&text);
		ret = pt_train_space_text(&cm->ts, seed, &text);
		if (!ret && pt_train_blob_id(&text, id))
			ret = PT_ENOMEM;
		pthread_mutex_unlock(&c->mu);
		if (ret) {
			pthread_mutex_lock(&c->mu);
			c->stop = 1;
			c->ret = pt_cli_fail("calibrate: %s seed %llu: %s",
					     cm->name, (unsigned long long)seed,
					     pt_strerror(ret));
			pthread_mutex_unlock(&c->mu);
			break;
		}
		bounded(c, &o);
		o.reference = cm->ref;
		ret = pt_measure(cm->ts.m, text.buf, &o, &res, &err);
		pthread_mutex_lock(&c->mu);
		if (ret == PT_ETIMEDOUT && left_ms(c) <= 0) {
			/* Cut by the budget, not the schedule's fault. */
		} else if (ret && ret != PT_EMISMATCH && ret != PT_ETIMEDOUT) {
			if (!c->stop)
				c->ret = pt_cli_fail("calibrate: %s seed %llu: %s",
						     cm->name,
						     (unsigned long long)seed,
						     err.msg);
			c->stop = 1;
		} else if (ret) {
			cm->failed++;
			fprintf(c->tsv, "%s\t%llu\tfail\t-\t-\t-\t-\t%s\t-\t-\n",
				cm->name, (unsigned long long)seed, id);
			fflush(c->tsv);
			fprintf(stderr, "protune: calibrate: %s seed %llu: %s\n",
				cm->name, (unsigned long long)seed, err.msg);
		} else {
			cm->measured++;
			fprintf(c->tsv, "%s\t%llu\tok\t%.6g\t%.6g\t%.6g\t%.0f\t%s",
				cm->name, (unsigned long long)seed,
				res.median_ms, res.min_ms, res.max_ms,
				res.compile_ms, id);
			if (cm->ref)
				fprintf(c->tsv, "\t%.6g\t%.6g", res.ratio,
					res.ref_median_ms);
			fputc('\n', c->tsv);
			fflush(c->tsv);
		}
		if (ferror(c->tsv) && !c->stop) {
			c->stop = 1;
			c->ret = pt_cli_fail("cannot write %s/samples.tsv",
					     c->dir);
		}
		pthread_mutex_unlock(&c->mu);
	}
	pt_strbuf_release(&text);
	return NULL;
}

static int parse_num(const char *o, const char *v, double lo, double hi,
		     double *out)
{
	char *end;
	double x = strtod(v, &end);

	if (!*v || *end || !(x >= lo) || !(x <= hi))
		return pt_cli_fail("calibrate: %s: expected a number from %g to %g, got '%s'",
				   o, lo, hi, v);
	*out = x;
	return 0;
}

int pt_cmd_calibrate(int argc, char **argv)
{
	struct cal c;
	struct pt_config cfg;
	struct pt_strbuf plugin = PT_STRBUF_INIT, path = PT_STRBUF_INIT;
	struct pt_strbuf outp = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	const char *models[MAX_MODELS], *out = NULL;
	double budget = 600, runs = 1, min_time = 0.05, jobs = 0, trees = -1;
	double samples = 0;
	pthread_t th[64];
	long long t0;
	int nmodels = 0, nth = 0, have_cfg = 0, i, ret = 1, total = 0, bad = 0;
	char tbuf[32];

	memset(&c, 0, sizeof(c));
	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			fputs(calibrate_usage_text, stdout);
			return 0;
		}
		if (!strcmp(o, "--")) {
			while (++i < argc && nmodels < MAX_MODELS)
				models[nmodels++] = argv[i];
			if (i < argc)
				return calibrate_usage("at most %s MODEL files",
						       "256");
			break;
		}
		if (strncmp(o, "--", 2)) {
			if (nmodels == MAX_MODELS)
				return calibrate_usage("at most %s MODEL files",
						       "256");
			models[nmodels++] = o;
			continue;
		}
		if (strcmp(o, "--data") && strcmp(o, "--budget") &&
		    strcmp(o, "--jobs") && strcmp(o, "--runs") &&
		    strcmp(o, "--min-time") && strcmp(o, "--trees") &&
		    strcmp(o, "--out") && strcmp(o, "--samples"))
			return calibrate_usage("unknown option '%s'", o);
		if (!v)
			return calibrate_usage("option '%s' needs a value", o);
		i++;
		if (!strcmp(o, "--data"))
			c.dir = v;
		else if (!strcmp(o, "--out"))
			out = v;
		else if (!strcmp(o, "--budget") ?
			 parse_num(o, v, 0.001, 1e7, &budget) :
			 !strcmp(o, "--jobs") ? parse_num(o, v, 0, 64, &jobs) :
			 !strcmp(o, "--runs") ? parse_num(o, v, 1, 1000, &runs) :
			 !strcmp(o, "--samples") ?
			 parse_num(o, v, 1, 1e9, &samples) :
			 !strcmp(o, "--min-time") ?
			 parse_num(o, v, 0.001, 100, &min_time) :
			 parse_num(o, v, 0, 100000, &trees))
			return 1;
	}
	if (!c.dir)
		return calibrate_usage("no --data %s given", "DIR");
	if (runs != (int)runs || jobs != (int)jobs || trees != (int)trees ||
	    samples != (long)samples)
		return pt_cli_fail("calibrate: --runs, --jobs, --trees and --samples take whole numbers");
	c.limit = (long)samples;
	if (pthread_mutex_init(&c.mu, NULL))
		return pt_cli_fail("calibrate: cannot create a mutex");
	if (pt_strbuf_addf(&path, "%s/models", c.dir) ||
	    pt_strbuf_addf(&plugin, "%s/refs", c.dir)) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	if (make_dir(c.dir) || make_dir(path.buf) || make_dir(plugin.buf))
		goto out;
	pt_strbuf_reset(&plugin);
	for (i = 0; i < nmodels; i++)
		if (add_model(c.dir, models[i]))
			goto out;
	if (load_models(&c) || next_seeds(&c))
		goto out;
	/* Measuring as `protune tune --measure` does: the settings'
	 * cache directory (RunGenMain.o), the plugin, the lock. */
	if ((ret = pt_drv_config(&cfg, 0, NULL, 0, NULL, "protune")))
		goto out;
	have_cfg = 1;
	ret = 1;
	if (pt_drv_plugin_path(&plugin, &err)) {
		pt_cli_fail("%s", err.msg);
		goto out;
	}
	pt_drv_measure_opts(&cfg, plugin.buf, &c.mo);
	c.mo.runs = (int)runs;
	c.mo.min_time_s = min_time;
	pt_strbuf_reset(&path);
	if (pt_strbuf_addf(&path, "%s/samples.tsv", c.dir)) {
		pt_cli_fail("out of memory");
		goto out;
	}
	if (!(c.tsv = fopen(path.buf, "a"))) {
		pt_cli_fail("cannot write %s: %s", path.buf, strerror(errno));
		goto out;
	}
	t0 = pt_time_now_ms();
	c.deadline = t0 + (long long)(budget * 1000);
	fprintf(stderr, "protune: calibrate: %d pipelines, %g s\n", c.n,
		budget);
	for (i = 0; i < c.n; i++)
		if (left_ms(&c) > 0 && build_ref(&c, &c.mod[i]))
			goto out;
	if (jobs < 1) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = n > 0 ? (double)(n < 64 ? n : 64) : 1;
	}
	for (nth = 0; nth < (int)jobs; nth++)
		if (pthread_create(&th[nth], NULL, worker, &c)) {
			pthread_mutex_lock(&c.mu);
			c.stop = 1;
			pthread_mutex_unlock(&c.mu);
			break;
		}
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	if (!nth)
		c.ret = pt_cli_fail("calibrate: cannot start a thread");
	if (fclose(c.tsv) && !c.ret)
		c.ret = pt_cli_fail("cannot write %s: %s", path.buf,
				    strerror(errno));
	c.tsv = NULL;
	for (i = 0; i < c.n; i++) {
		total += c.mod[i].measured;
		bad += c.mod[i].failed;
	}
	snprintf(tbuf, sizeof(tbuf), "%.0f",
		 (double)(pt_time_now_ms() - t0) / 1000);
	printf("calibrate: %d samples measured in %s s (%d more failed to compile or run), into %s\n",
	       total, tbuf, bad, path.buf);
	if (c.ret) {
		ret = c.ret;
		goto out;
	}
	/* Fit to all the directory holds, as `protune train` would. */
	if (!out) {
		if (pt_strbuf_addf(&outp, "%s/calibrated.cost", c.dir)) {
			pt_cli_fail("out of memory");
			goto out;
		}
		out = outp.buf;
	}
	{
		char tr[32];
		char *targv[] = { "train", "--data", (char *)c.dir, "--out",
				  (char *)out, "--trees", tr, NULL };
		int targc = 7;

		snprintf(tr, sizeof(tr), "%d", (int)trees);
		if (trees < 0)
			targc = 5;
		ret = pt_cmd_train_main(targc, targv);
	}
out:
	if (c.tsv)
		fclose(c.tsv);
	for (i = 0; i < c.n; i++)
		cal_model_release(&c.mod[i]);
	pthread_mutex_destroy(&c.mu);
	if (have_cfg)
		pt_config_release(&cfg);
	pt_strbuf_release(&plugin);
	pt_strbuf_release(&path);
	pt_strbuf_release(&outp);
	return ret;
}
