/* pt_cmd_retune.c: `protune retune [--budget=S] [--runs=N] [--dry-run]
 * [PATTERN...]` (pt_cmd_retune.h, doc/protune.1).
 *
 * Each matching cache entry, one after another: take its tuning lease,
 * tune its model again with measurement on (cost+real), warm-started from
 * its own schedule, then time the old and the new schedule side by side in
 * R rounds and apply the replace rule:
 *
 *     replace when the median of the R ratios new/old is below
 *     PT_RETUNE_MAX_RATIO (0.97) and the new one was faster in at least
 *     ceil(RETUNE_WIN_SHARE * R) rounds (0.75: 6 of 7).
 *
 * A round is one pt_measure() of one schedule with the other's RunGen
 * binary as its reference (pt_measure_opts.reference), so both run under
 * one hold of the benchmark lock, one right after the other; even rounds
 * compile the new schedule and run the old one first, odd rounds the
 * reverse, so neither always runs first. A replacement rewrites the cache
 * entry (same key) and the store file.
 */
#include "pt_cli.h"
#include "pt_cmd_retune.h"
#include "pt_drv.h"
#include "pt_lookup.h"

#include "config.h"
#include "protune/pt_cache.h"
#include "protune/pt_config.h"
#include "protune/pt_cost.h"
#include "protune/pt_measure.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_spawn.h"
#include "protune/pt_store.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"
#include "protune/pt_tune.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define USAGE \
	"retune [--budget=S] [--runs=N] [--dry-run] [PATTERN...] " \
	"[--SETTING=VALUE...]"
#define RETUNE_RUNS 7           /* rounds of timing by default */
#define RETUNE_WIN_SHARE 0.75   /* of the rounds the new one must win */

/* A cache entry to retune, copied out of pt_cache_each. */
struct item {
	uint8_t key[16];
	char hex[33];
	char *generator, *function, *target, *model, *sched;
	int64_t used_at;
};

struct retune {
	struct pt_config cfg;
	struct pt_strvec args;
	struct pt_strvec pats;
	struct pt_cache *cache;
	struct pt_store *store;
	struct pt_cost *cost;
	struct pt_strbuf plugin;
	struct pt_measure_opts mo;
	int runs, dry_run;
	struct item *items;
	size_t nitems, alloc;
	int nreplaced, nkept, nskipped, nfailed;
};

/* The timings of R rounds. */
struct rounds {
	int n, wins;
	double ratio, old_ms, new_ms;   /* medians */
};

static int usage_fail(const char *fmt, const char *arg)
{
	fputs("protune: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: protune " USAGE "\n");
	return 2;
}

static int wins_needed(int runs)
{
	return (int)ceil(RETUNE_WIN_SHARE * runs);
}

static int is_hex(const char *s)
{
	if (!*s || strlen(s) > 32)
		return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

/* A pattern matches a generator name (fnmatch glob) or a key prefix. */
static int matches(const char *pat, const struct pt_cache_entry *e,
		   const char *hex)
{
	if (!fnmatch(pat, e->generator, 0))
		return 1;
	return is_hex(pat) && !strncmp(hex, pat, strlen(pat));
}

static void item_release(struct item *it)
{
	free(it->generator);
	free(it->function);
	free(it->target);
	free(it->model);
	free(it->sched);
}

static int collect(void *ctx, const struct pt_cache_entry *e)
{
	struct retune *r = ctx;
	struct item *it;
	char hex[33];
	size_t i;

	pt_hash_hex(e->key, hex);
	for (i = 0; i < r->pats.nr; i++)
		if (matches(r->pats.v[i], e, hex))
			break;
	if (r->pats.nr && i == r->pats.nr)
		return 0;
	if (r->nitems == r->alloc) {
		size_t na = r->alloc ? 2 * r->alloc : 16;

		it = realloc(r->items, na * sizeof(*it));
		if (!it)
			return PT_ENOMEM;
		r->items = it;
		r->alloc = na;
	}
	it = &r->items[r->nitems];
	memset(it, 0, sizeof(*it));
	memcpy(it->key, e->key, 16);
	memcpy(it->hex, hex, sizeof(hex));
	it->used_at = e->used_at;
	it->generator = strdup(e->generator);
	it->function = strdup(e->function);
	it->target = strdup(e->target);
	it->model = strdup(e->model);
	it->sched = strdup(e->sched);
	if (!it->generator || !it->function || !it->target || !it->model ||
	    !it->sched) {
		item_release(it);
		return PT_ENOMEM;
	}
	r->nitems++;
	return 0;
}

static const char *gen_name(const struct item *it)
{
	return *it->generator ? it->generator : "?";
}

/* Remove a directory pt_measure kept. */
static void remove_dir(const char *dir)
{
	struct pt_child rm = PT_CHILD_INIT;

	if (!dir[0])
		return;
	pt_strvec_pushl(&rm.args, "rm", "-rf", "--", dir, (const char *)NULL);
	rm.out.mode = PT_IO_NULL;
	rm.err.mode = PT_IO_NULL;
	pt_child_run(&rm, NULL, NULL);
	pt_child_release(&rm);
}

/* R rounds of old against new (see the top of this file). */
static int time_rounds(struct retune *r, const struct pt_model *m,
		       const char *old_text, const char *new_text,
		       struct rounds *out, struct pt_error *err)
{
	struct pt_measure_opts o = r->mo;
	struct pt_measure_result res;
	char old_dir[sizeof(res.dir)] = "", new_dir[sizeof(res.dir)] = "";
	char old_bin[sizeof(res.dir) + 8], new_bin[sizeof(res.dir) + 8];
	double *t;
	int i, ret;

	memset(out, 0, sizeof(*out));
	t = calloc(3 * (size_t)r->runs, sizeof(*t));
	if (!t)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	/* The old schedule's binary, kept as the first reference. */
	o.runs = 1;
	o.keep_dir = 1;
	o.reference = NULL;
	ret = pt_measure(m, old_text, &o, &res, err);
	snprintf(old_dir, sizeof(old_dir), "%s", res.dir);
	if (ret)
		goto out;
	snprintf(old_bin, sizeof(old_bin), "%s/rungen", old_dir);
	for (i = 0; i < r->runs; i++) {
		int even = i % 2 == 0;

		o.keep_dir = i == 0;
		o.reference = even ? old_bin : new_bin;
		ret = pt_measure(m, even ? new_text : old_text, &o, &res, err);
		if (i == 0) {
			snprintf(new_dir, sizeof(new_dir), "%s", res.dir);
			snprintf(new_bin, sizeof(new_bin), "%s/rungen",
				 new_dir);
		}
		if (ret)
			goto out;
		if (!(res.ratio > 0)) {
			ret = pt_error_set(err, PT_EIO,
					   "timing round %d gave no ratio",
					   i + 1);
			goto out;
		}
		t[i] = even ? res.ratio : 1 / res.ratio;
		t[r->runs + i] = even ? res.ref_median_ms : res.median_ms;
		t[2 * r->runs + i] = even ? res.median_ms : res.ref_median_ms;
		out->wins += t[i] < 1;
	}
	out->n = r->runs;
	out->ratio = pt_measure_median(t, r->runs);
	out->old_ms = pt_measure_median(t + r->runs, r->runs);
	out->new_ms = pt_measure_median(t + 2 * r->runs, r->runs);
out:
	remove_dir(old_dir);
	remove_dir(new_dir);
	free(t);
	return ret;
}

/* Provenance of a retuned schedule, as protune-cc gives a tuned one
 * (doc/store.md), with mode=retune. */
/* Whether two schedules make the same decisions (meta aside). */
static int same_decisions(const struct pt_sched *a, const struct pt_sched *b)
{
	struct pt_sched *ca = pt_sched_copy(a), *cb = pt_sched_copy(b);
	struct pt_strbuf ta = PT_STRBUF_INIT, tb = PT_STRBUF_INIT;
	int same = 0;

	if (ca && cb) {
		pt_strvec_clear(&ca->meta);
		pt_strvec_clear(&cb->meta);
		same = !pt_sched_print(ca, &ta) && !pt_sched_print(cb, &tb) &&
			!strcmp(ta.buf, tb.buf);
	}
	pt_strbuf_release(&ta);
	pt_strbuf_release(&tb);
	pt_sched_free(ca);
	pt_sched_free(cb);
	return same;
}

static int cores_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 && n < 1024 ? (int)n : 1;
}

/* Whether this repository's store has a file for the key: retune updates
 * such files and never adds one (the cache may hold other projects'
 * keys). */
static int in_store(struct retune *r, const struct item *it)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	int yes;

	yes = r->store && !pt_store_path(r->store, it->generator, it->key,
					 &path) && !access(path.buf, F_OK);
	pt_strbuf_release(&path);
	return yes;
}

/* Write the new schedule: the cache entry under the same key, and the
 * store file when this repository's store has one. */
static int replace(struct retune *r, const struct item *it,
		   const struct pt_tune_result *tr, const char *text,
		   double new_ms, struct pt_error *err)
{
	struct pt_cache_entry ce;
	int ret;

	memset(&ce, 0, sizeof(ce));
	memcpy(ce.key, it->key, 16);
	ce.generator = it->generator;
	ce.function = it->function;
	ce.target = it->target;
	ce.model = it->model;
	ce.sched = (char *)text;
	ce.tuned_at = (int64_t)time(NULL);
	ce.used_at = it->used_at;
	ce.budget_s = r->cfg.budget_s;
	ce.predicted_ms = tr->predicted_ms;
	ce.measured_ms = new_ms;
	if ((ret = pt_cache_put(r->cache, &ce, err)))
		return ret;
	if (in_store(r, it))
		ret = pt_store_write(r->store, it->generator, it->key, text,
				     strlen(text), err);
	return ret;
}

/* Tune one entry further, time, replace or keep. 0, or 1 when it failed
 * (said on stderr). */
static int retune_one(struct retune *r, const struct item *it, size_t idx)
{
	struct pt_error e = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	struct pt_sched *old = NULL;
	struct pt_tune_opts to;
	struct pt_tune_result tr;
	struct pt_cache_lease holder;
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct rounds rd;
	const char *g = gen_name(it);
	int ret, leased = 0, fail = 1;

	memset(&tr, 0, sizeof(tr));
	if (!*it->model) {
		printf("skipped: %s %.12s: no model in the cache (imported without one); build it once to retune it\n",
		       g, it->hex);
		r->nskipped++;
		return 0;
	}
	if (pt_model_parse(it->model, strlen(it->model), "cache", &m, &e) ||
	    pt_model_hash(m)) {
		pt_cli_fail("%s %.12s: its cached model does not parse: %s",
			    g, it->hex, e.msg);
		goto out;
	}
	if (memcmp(m->key, it->key, 16)) {
		pt_cli_fail("%s %.12s: its cached model has another key", g,
			    it->hex);
		goto out;
	}
	if (pt_sched_parse(it->sched, strlen(it->sched), "cache", &old, &e) ||
	    pt_sched_check(m, old, &e)) {
		pt_cli_fail("%s %.12s: its cached schedule is unusable: %s", g,
			    it->hex, e.msg);
		goto out;
	}
	ret = pt_cache_lease_take(r->cache, it->key,
				  (int64_t)(r->cfg.budget_s * 4) + 600,
				  &holder, &e);
	if (ret == PT_EBUSY) {
		printf("skipped: %s %.12s: being tuned by process %d on %s\n",
		       g, it->hex, (int)holder.pid, holder.host);
		r->nskipped++;
		fail = 0;
		goto out;
	}
	if (ret) {
		pt_cli_fail("%s", e.msg);
		goto out;
	}
	leased = 1;
	fprintf(stderr, "protune: retuning %s %.12s (%zu of %zu): %g s of tuning, then %d rounds of timing\n",
		g, it->hex, idx + 1, r->nitems, r->cfg.budget_s, r->runs);

	pt_tune_opts_init(&to);
	to.cost = r->cost;
	to.search.algo = (enum pt_search_algo)r->cfg.search;
	to.search.threads = r->cfg.threads > 0 ? r->cfg.threads :
			    cores_online();
	to.search.decision_s = r->cfg.decision_s;
	to.budget_s = r->cfg.budget_s;
	to.seed = r->cfg.seed;
	to.measure = 1;
	to.mopts = &r->mo;
	to.warm_model = m;
	to.warm_sched = old;
	if (pt_tune(m, &to, &tr, &e)) {
		pt_cli_fail("%s %.12s: tuning failed: %s", g, it->hex, e.msg);
		goto out;
	}
	if (same_decisions(old, tr.sched)) {
		printf("kept: %s %.12s (the search found the same schedule)\n",
		       g, it->hex);
		r->nkept++;
		fail = 0;
		goto out;
	}
	if (pt_lookup_provenance(r->store, "retune", m, tr.sched) ||
	    pt_sched_print(tr.sched, &text)) {
		pt_cli_fail("out of memory");
		goto out;
	}
	if (time_rounds(r, m, it->sched, text.buf, &rd, &e)) {
		pt_cli_fail("%s %.12s: timing failed: %s", g, it->hex, e.msg);
		goto out;
	}
	if (rd.ratio < PT_RETUNE_MAX_RATIO && rd.wins >= wins_needed(rd.n)) {
		if (replace(r, it, &tr, text.buf, rd.new_ms, &e)) {
			pt_cli_fail("%s %.12s: %s", g, it->hex, e.msg);
			goto out;
		}
		printf("replaced: %s %.12s %.4g ms -> %.4g ms (ratio %.3f, faster in %d of %d rounds)\n",
		       g, it->hex, rd.old_ms, rd.new_ms, rd.ratio, rd.wins,
		       rd.n);
		r->nreplaced++;
	} else {
		printf("kept: %s %.12s %.4g ms -> %.4g ms (ratio %.3f, faster in %d of %d rounds)\n",
		       g, it->hex, rd.old_ms, rd.new_ms, rd.ratio, rd.wins,
		       rd.n);
		r->nkept++;
	}
	fail = 0;
out:
	fflush(stdout);
	if (leased)
		pt_cache_lease_release(r->cache, it->key, NULL);
	pt_strbuf_release(&text);
	pt_tune_result_release(&tr);
	pt_sched_free(old);
	pt_model_free(m);
	if (fail)
		r->nfailed++;
	return fail;
}

static int parse_args(struct retune *r)
{
	size_t i;

	r->runs = RETUNE_RUNS;
	for (i = 0; i < r->args.nr; i++) {
		const char *a = r->args.v[i];

		if (!strncmp(a, "--runs=", 7)) {
			char *end;
			long v;

			errno = 0;
			v = strtol(a + 7, &end, 10);
			if (*end || end == a + 7 || errno || v < 1 || v > 100)
				return usage_fail("bad round count '%s' (1 to 100)",
						  a);
			r->runs = (int)v;
		} else if (!strcmp(a, "--dry-run")) {
			r->dry_run = 1;
		} else if (a[0] == '-' && a[1]) {
			return usage_fail("unexpected argument '%s'", a);
		} else if (pt_strvec_push(&r->pats, a)) {
			return pt_cli_fail("out of memory");
		}
	}
	return 0;
}

static int open_all(struct retune *r)
{
	struct pt_cache_opts co;
	struct pt_store_opts so;
	struct pt_error e = PT_ERROR_INIT;
	int ret;

	memset(&co, 0, sizeof(co));
	co.dir = r->cfg.cache_dir;
	co.max_bytes = r->cfg.max_size;
	co.readonly = r->dry_run;
	ret = pt_cache_open(&co, &r->cache, &e);
	if (ret == PT_ENOTFOUND)
		return 0;  /* no cache yet: nothing to retune */
	if (ret)
		return pt_cli_fail("%s", e.msg);
	if (r->dry_run || !r->cfg.store_dir)
		return 0;
	memset(&so, 0, sizeof(so));
	so.dir = r->cfg.store_dir;
	ret = pt_store_open(&so, &r->store, &e);
	if (ret && ret != PT_ENOTFOUND)
		return pt_cli_fail("%s", e.msg);
	return 0;
}

static int run(struct retune *r)
{
	struct pt_error e = PT_ERROR_INIT;
	size_t i;
	int ret;

	if (r->cfg.mode == PT_MODE_FROZEN || r->cfg.mode == PT_MODE_READONLY ||
	    r->cfg.mode == PT_MODE_OFF)
		return pt_cli_fail("retune writes schedules, and the mode is '%s'; run it with mode normal or retune (PROTUNE_MODE=normal)",
				   pt_mode_name(r->cfg.mode));
	if ((ret = parse_args(r)))
		return ret;
	if (open_all(r))
		return 1;
	if (r->cache && (ret = pt_cache_each(r->cache, collect, r, &e)))
		return pt_cli_fail("%s", ret == PT_ENOMEM ? "out of memory" :
				   e.msg);
	if (!r->nitems) {
		if (r->pats.nr)
			return pt_cli_fail("no cached schedule matches %s%s",
					   r->pats.v[0], r->pats.nr > 1 ?
					   " or the other patterns" : "");
		printf("nothing to retune: the cache in %s is empty\n",
		       r->cfg.cache_dir);
		return 0;
	}
	if (r->dry_run) {
		for (i = 0; i < r->nitems; i++)
			printf("would retune %s %.12s (%s)\n",
			       gen_name(&r->items[i]), r->items[i].hex,
			       r->items[i].target);
		return 0;
	}
	if (pt_drv_plugin_path(&r->plugin, &e))
		return pt_cli_fail("%s", e.msg);
	pt_drv_measure_opts(&r->cfg, r->plugin.buf, &r->mo);
	if (pt_drv_load_cost_model(&r->cost, &e))
		fprintf(stderr, "protune: warning: %s; tuning with the baseline tuner\n",
			e.msg);
	printf("rule: replace when the median ratio new/old over %d rounds is below %.2f and the new schedule is faster in at least %d of them\n",
	       r->runs, PT_RETUNE_MAX_RATIO, wins_needed(r->runs));
	fflush(stdout);
	for (i = 0; i < r->nitems; i++)
		retune_one(r, &r->items[i], i);
	printf("retuned %zu: %d replaced, %d kept, %d skipped, %d failed\n",
	       r->nitems, r->nreplaced, r->nkept, r->nskipped, r->nfailed);
	return r->nfailed ? 1 : 0;
}

int pt_cmd_retune_main(int argc, char **argv)
{
	struct retune r;
	size_t i;
	int ret;

	if (argc < 1 || strcmp(argv[0], "retune"))
		return -1;
	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: protune " USAGE "\n");
		return 0;
	}
	memset(&r, 0, sizeof(r));
	pt_strvec_init(&r.args);
	pt_strvec_init(&r.pats);
	r.plugin = (struct pt_strbuf)PT_STRBUF_INIT;
	ret = pt_drv_config(&r.cfg, argc - 1, argv + 1, 0, &r.args,
			    "protune");
	if (!ret)
		ret = run(&r);
	for (i = 0; i < r.nitems; i++)
		item_release(&r.items[i]);
	free(r.items);
	pt_cost_free(r.cost);
	pt_cache_close(r.cache);
	pt_store_close(r.store);
	pt_strbuf_release(&r.plugin);
	pt_strvec_release(&r.pats);
	pt_strvec_release(&r.args);
	pt_config_release(&r.cfg);
	return ret;
}
