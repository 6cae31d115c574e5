/* pt_lookup.c: cache, store, lease and tuning policy for one model
 * (pt_lookup.h). */
#define _DEFAULT_SOURCE /* gethostname */
#include "pt_lookup.h"
#include "pt_drv.h"

#include "config.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_time.h"
#include "protune/pt_tune.h"
#include "protune/pt_warm.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How often a waiter looks at another process's lease. */
#define LEASE_POLL_MS 200

static const char *const reason_names[PT_WHY_NREASONS] = {
	[PT_WHY_NONE] = "",
	[PT_WHY_HIT_CACHE] = "hit-cache",
	[PT_WHY_HIT_STORE] = "hit-store",
	[PT_WHY_HIT_WAITED] = "hit-waited",
	[PT_WHY_NEW_KEY] = "new-key",
	[PT_WHY_NO_CACHE] = "no-cache",
	[PT_WHY_CACHE_MISFIT] = "cache-misfit",
	[PT_WHY_STORE_UNREADABLE] = "store-unreadable",
	[PT_WHY_STORE_UNPARSABLE] = "store-unparsable",
	[PT_WHY_STORE_MISFIT] = "store-misfit",
	[PT_WHY_RETUNE] = "retune",
	[PT_WHY_REFUSED] = "refused",
};

const char *pt_reason_name(enum pt_reason r)
{
	return (unsigned)r < PT_WHY_NREASONS ? reason_names[r] : "?";
}

void pt_lookup_init(struct pt_lookup *lk)
{
	memset(lk, 0, sizeof(*lk));
}

void pt_lookup_release(struct pt_lookup *lk)
{
	int i;

	for (i = 0; i < lk->nresults; i++) {
		free(lk->results[i].generator);
		free(lk->results[i].function);
		free(lk->results[i].target);
	}
	free(lk->results);
	lk->results = NULL;
	lk->nresults = 0;
	pt_cost_free(lk->cost);
	lk->cost = NULL;
	lk->cost_tried = 0;
}

static void logf_(struct pt_lookup *lk, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static void logf_(struct pt_lookup *lk, const char *fmt, ...)
{
	va_list ap;

	if (!lk->log)
		return;
	fprintf(lk->log, "[%lld] ", pt_time_now_ms());
	va_start(ap, fmt);
	vfprintf(lk->log, fmt, ap);
	va_end(ap);
	fputc('\n', lk->log);
	fflush(lk->log);
}

/* A warning on stderr (and in the log). */
static void warn(struct pt_lookup *lk, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static void warn(struct pt_lookup *lk, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: warning: %s\n", lk->name ? lk->name : "protune",
		msg);
	logf_(lk, "warning: %s", msg);
}

/* The cache failed: say so once and go on without it. */
static void drop_cache(struct pt_lookup *lk, const struct pt_error *e)
{
	if (!lk->warned_cache)
		warn(lk, "the schedule cache failed, going on without it: %s",
		     e->msg);
	lk->warned_cache = 1;
	pt_cache_close(lk->cache);
	lk->cache = NULL;
}

static void drop_store(struct pt_lookup *lk, const struct pt_error *e)
{
	if (!lk->warned_store)
		warn(lk, "the schedule store failed, going on without it: %s",
		     e->msg);
	lk->warned_store = 1;
	pt_store_close(lk->store);
	lk->store = NULL;
}

void pt_lookup_count(struct pt_lookup *lk, const char *counter,
		     const char *what, double ms)
{
	const char *names[2];
	int64_t deltas[2];
	char tname[96];
	int n = 0;

	if (!lk->cache || lk->cfg->mode == PT_MODE_READONLY)
		return;
	names[n] = counter;
	deltas[n++] = 1;
	if (what && ms >= 0) {
		snprintf(tname, sizeof(tname), "time.%s_ms", what);
		names[n] = tname;
		deltas[n++] = (int64_t)(ms + 0.5);
	}
	pt_cache_stats_add(lk->cache, names, deltas, n, NULL);
}

/* Parse a stored schedule text and check it against the model. 0, or the
 * reason it is unusable with the message in e. */
static int usable(const struct pt_model *m, const char *text, size_t len,
		  const char *name, struct pt_sched **out, struct pt_error *e)
{
	struct pt_sched *s = NULL;
	int ret;

	*out = NULL;
	if ((ret = pt_sched_parse(text, len, name, &s, e)))
		return ret == PT_ENOMEM ? ret : PT_EFORMAT;
	if ((ret = pt_sched_check(m, s, e))) {
		char msg[PT_ERROR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		pt_error_set(e, PT_EMISMATCH, "%s: %s", name, msg);
		pt_sched_free(s);
		return PT_EMISMATCH;
	}
	*out = s;
	return 0;
}

/* The cache entry of a schedule text that came from the store or the
 * tuner. */
static int fill_entry(struct pt_cache_entry *e, const struct pt_model *m,
		      const char *text, struct pt_strbuf *model_text,
		      double budget, double predicted, double measured)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->key, m->key, sizeof(e->key));
	if (pt_model_print(m, PT_MODEL_PRINT_LABELS, model_text))
		return PT_ENOMEM;
	e->generator = m->generator ? m->generator : "";
	e->function = m->function ? m->function : "";
	e->target = m->target ? m->target : "";
	e->model = model_text->buf;
	e->sched = (char *)text;
	e->tuned_at = (int64_t)time(NULL);
	e->used_at = e->tuned_at;
	e->budget_s = budget;
	e->predicted_ms = predicted;
	e->measured_ms = measured;
	return 0;
}

/* A meta value of a schedule as a number (-1 when absent). */
static double meta_num(const struct pt_sched *s, const char *name)
{
	const char *v = pt_sched_meta(s, name);

	return v ? strtod(v, NULL) : -1;
}

struct found {
	struct pt_sched *sched;
	enum pt_reason why;          /* hit or miss reason */
	char detail[PT_ERROR_MSG_MAX];
	double measured_ms;
	int from_store;              /* copy it into the cache */
	struct pt_strbuf text;       /* the stored text (store hits) */
};

/* Steps 1 and 2. `writes`: delete misfit cache entries. */
static void find(struct pt_lookup *lk, const struct pt_model *m, int writes,
		 struct found *f)
{
	struct pt_error e = PT_ERROR_INIT;
	struct pt_cache_entry ce;
	struct pt_strbuf path = PT_STRBUF_INIT;
	char hex[33];
	int ret;

	memset(f, 0, sizeof(*f));
	f->text = (struct pt_strbuf)PT_STRBUF_INIT;
	f->measured_ms = -1;
	f->why = lk->cache || lk->store ? PT_WHY_NEW_KEY : PT_WHY_NO_CACHE;
	pt_hash_hex(m->key, hex);

	if (lk->cache) {
		ret = pt_cache_get(lk->cache, m->key, &ce, &e);
		if (!ret) {
			char name[64];

			snprintf(name, sizeof(name), "cache:%.12s", hex);
			ret = usable(m, ce.sched, strlen(ce.sched), name,
				     &f->sched, &e);
			if (!ret) {
				f->why = PT_WHY_HIT_CACHE;
				f->measured_ms = ce.measured_ms;
				pt_cache_entry_release(&ce);
				return;
			}
			pt_cache_entry_release(&ce);
			f->why = PT_WHY_CACHE_MISFIT;
			snprintf(f->detail, sizeof(f->detail), "%s", e.msg);
			logf_(lk, "cache entry %s unusable: %s", hex, e.msg);
			if (writes)
				pt_cache_del(lk->cache, m->key, NULL);
		} else if (ret != PT_ENOTFOUND) {
			drop_cache(lk, &e);
		}
	}
	if (lk->store) {
		ret = pt_store_read(lk->store, m->generator, m->key, &f->text,
				    &path, &e);
		if (!ret) {
			ret = usable(m, f->text.buf, f->text.len, path.buf,
				     &f->sched, &e);
			if (!ret) {
				f->why = PT_WHY_HIT_STORE;
				f->from_store = 1;
				f->measured_ms = meta_num(f->sched,
							  "measured_ms");
				pt_strbuf_release(&path);
				return;
			}
			f->why = ret == PT_EMISMATCH ? PT_WHY_STORE_MISFIT :
				PT_WHY_STORE_UNPARSABLE;
			snprintf(f->detail, sizeof(f->detail), "%s", e.msg);
			warn(lk, "ignoring the stored schedule: %s", e.msg);
		} else if (ret != PT_ENOTFOUND) {
			f->why = PT_WHY_STORE_UNREADABLE;
			snprintf(f->detail, sizeof(f->detail), "%s", e.msg);
			warn(lk, "%s", e.msg);
		}
		pt_strbuf_setlen(&f->text, 0);
	}
	pt_strbuf_release(&path);
}

static void found_release(struct found *f)
{
	pt_sched_free(f->sched);
	f->sched = NULL;
	pt_strbuf_release(&f->text);
}

/* Copy a store hit into the cache. */
static void cache_store_hit(struct pt_lookup *lk, const struct pt_model *m,
			    struct found *f)
{
	struct pt_cache_entry ce;
	struct pt_strbuf mt = PT_STRBUF_INIT;
	struct pt_error e = PT_ERROR_INIT;

	if (!lk->cache || lk->cfg->mode == PT_MODE_READONLY)
		return;
	double tuned;

	if (fill_entry(&ce, m, f->text.buf, &mt, meta_num(f->sched, "budget"),
		       -1, f->measured_ms))
		goto out;
	/* Tuned when the file says, not when it was copied (cache list and
	 * the choice of a warm start's source go by it); used now. */
	if ((tuned = meta_num(f->sched, "tuned_at")) > 0 &&
	    tuned <= (double)ce.used_at)
		ce.tuned_at = (int64_t)tuned;
	if (pt_cache_put(lk->cache, &ce, &e))
		drop_cache(lk, &e);
out:
	pt_strbuf_release(&mt);
}

/* The provenance a tuned schedule carries besides the tuner's own. */
int pt_lookup_provenance(struct pt_store *store, const char *mode,
			 const struct pt_model *m, struct pt_sched *s)
{
	char host[256] = "unknown";
	size_t i;

	if (gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	for (i = 0; host[i]; i++)
		if (host[i] <= ' ' || host[i] > '~')
			host[i] = '_';
	if (pt_strvec_pushf(&s->meta, "mode=%s", mode) ||
	    pt_strvec_pushf(&s->meta, "generator=%s",
			    m->generator && *m->generator ? m->generator :
			    "-") ||
	    pt_strvec_pushf(&s->meta, "function=%s",
			    m->function && *m->function ? m->function : "-") ||
	    pt_strvec_pushf(&s->meta, "target=%s", m->target) ||
	    pt_strvec_pushf(&s->meta, "machine=%s", host) ||
	    pt_strvec_pushf(&s->meta, "tuned_at=%lld",
			    (long long)time(NULL)) ||
	    pt_strvec_push(&s->meta, "protune=" PT_VERSION))
		return PT_ENOMEM;
	if (store) {
		struct pt_strbuf commit = PT_STRBUF_INIT;
		int dirty = 0;

		if (!pt_store_provenance(store, &commit, &dirty, NULL)) {
			if (pt_strvec_pushf(&s->meta, "source_commit=%s",
					    commit.len ? commit.buf : "none") ||
			    pt_strvec_pushf(&s->meta, "source_dirty=%s",
					    dirty ? "yes" : "no")) {
				pt_strbuf_release(&commit);
				return PT_ENOMEM;
			}
		}
		pt_strbuf_release(&commit);
	}
	return 0;
}

struct progress_ctx {
	struct pt_lookup *lk;
	const char *label;
};

static int tune_progress(void *ctx, const struct pt_tune_progress *p,
			 struct pt_error *err)
{
	struct progress_ctx *pc = ctx;
	struct pt_lookup *lk = pc->lk;
	char text[160];

	if (p->best_ms >= 0)
		snprintf(text, sizeof(text),
			 "tuning %s: %.1f/%.0f s, %ld candidates, best %.3f ms",
			 pc->label, p->elapsed_s, p->budget_s, p->iterations,
			 p->best_ms);
	else
		snprintf(text, sizeof(text),
			 "tuning %s: %.1f/%.0f s, %ld candidates", pc->label,
			 p->elapsed_s, p->budget_s, p->iterations);
	if (lk->progress && lk->out) {
		fprintf(lk->out, "\r\033[K%s: %s", lk->name, text);
		fflush(lk->out);
	}
	return pt_serve_wait(lk->serve, text, err);
}

/* Wait while another process holds the key's lease. 0 with *hit when its
 * result arrived, 0 with the lease ours, or an error (the plugin left). */
static int take_lease(struct pt_lookup *lk, const struct pt_model *m,
		      struct found *f, int *hit, struct pt_error *err)
{
	struct pt_cache_lease holder;
	struct pt_error e = PT_ERROR_INIT;
	int64_t stale = (int64_t)(lk->cfg->budget_s * 4) + 600;
	int said = 0, ret;

	*hit = 0;
	for (;;) {
		if (!lk->cache)
			return 0;
		ret = pt_cache_lease_take(lk->cache, m->key, stale, &holder,
					  &e);
		if (!ret)
			return 0;
		if (ret != PT_EBUSY) {
			drop_cache(lk, &e);
			return 0;
		}
		if (!said) {
			logf_(lk, "waiting for pid %d on %s, tuning since %lld",
			      (int)holder.pid, holder.host,
			      (long long)holder.started);
			said = 1;
		}
		if ((ret = pt_serve_wait(lk->serve,
					 "waiting for another protune-cc",
					 err)))
			return ret;
		usleep(LEASE_POLL_MS * 1000);
		found_release(f);
		find(lk, m, 0, f);
		if (f->why == PT_WHY_HIT_CACHE) {
			f->why = PT_WHY_HIT_WAITED;
			*hit = 1;
			return 0;
		}
	}
}

static struct pt_lookup_result *new_result(struct pt_lookup *lk,
					   const struct pt_model *m)
{
	struct pt_lookup_result *r;

	r = realloc(lk->results, (size_t)(lk->nresults + 1) * sizeof(*r));
	if (!r)
		return NULL;
	lk->results = r;
	r = &r[lk->nresults++];
	memset(r, 0, sizeof(*r));
	pt_hash_hex(m->key, r->key);
	r->generator = pt_model_strdup(m->generator ? m->generator : "");
	r->function = pt_model_strdup(m->function ? m->function : "");
	r->target = pt_model_strdup(m->target ? m->target : "");
	r->measured_ms = -1;
	return r;
}

/* The one line a session prints. */
static void say(struct pt_lookup *lk, const struct pt_lookup_result *r)
{
	const char *g = r->generator && *r->generator ? r->generator : "?";
	char what[PT_ERROR_MSG_MAX + 64];

	switch (r->outcome) {
	case PT_OUT_HIT:
		snprintf(what, sizeof(what), "hit (%s)",
			 pt_reason_name(r->reason) + 4);
		break;
	case PT_OUT_TUNED:
	case PT_OUT_KEPT:
		snprintf(what, sizeof(what), "miss (%s), tuned%s: %ld %s",
			 pt_reason_name(r->reason),
			 lk->cfg->mode == PT_MODE_READONLY ? ", not stored" :
			 r->outcome == PT_OUT_KEPT ? ", stored one kept" : "",
			 r->iterations,
			 r->iterations == 1 ? "candidate" : "candidates");
		if (r->warm_stages)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 "; %d of %d stages changed; warm start",
				 r->warm_changed, r->warm_stages);
		break;
	case PT_OUT_FROZEN:
		snprintf(what, sizeof(what), "miss (%s) in frozen mode",
			 pt_reason_name(r->reason));
		break;
	case PT_OUT_BASELINE:
		snprintf(what, sizeof(what),
			 "baseline schedule (the one served first compiled past compile_limit)");
		break;
	default:
		snprintf(what, sizeof(what), "failed: %s", r->detail);
		break;
	}
	if (!lk->out)
		return;
	if (lk->progress)
		fputs("\r\033[K", lk->out);
	fprintf(lk->out, "%s: %s %s: %s, key %.12s, %.0f ms\n", lk->name, g,
		r->target, what, r->key, r->elapsed_ms);
	fflush(lk->out);
}

static int frozen_error(const struct pt_model *m, const char *key,
			struct pt_error *err)
{
	int fn = m->function && *m->function;

	return pt_error_set(err, PT_ENOTFOUND,
			    "frozen mode: no schedule for generator '%s'%s%s%s, target '%s', key %s; tune it (PROTUNE_MODE=normal) and commit it with `protune commit`",
			    m->generator && *m->generator ? m->generator : "?",
			    fn ? ", function '" : "", fn ? m->function : "",
			    fn ? "'" : "", m->target, key);
}

/* One search thread per online core when the settings say 0. */
static int cores_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 && n < 1024 ? (int)n : 1;
}

/* The store's newest schedule for m's generator, function and target
 * under another key, for a warm start from the store alone. */
struct store_warm {
	struct pt_lookup *lk;
	const struct pt_model *m;
	const char *gendir;          /* m's generator directory name */
	struct pt_sched *best;
	double best_at;
	struct pt_strbuf path;       /* best's */
};

static int store_warm_each(void *ctx, const char *path, const char *gen,
			   const uint8_t key[16])
{
	struct store_warm *sw = ctx;
	const struct pt_model *m = sw->m;
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_sched *s = NULL;
	struct pt_warm *wm = NULL;
	const char *fn, *tg;
	double at;

	if (strcmp(gen, sw->gendir) || !memcmp(key, m->key, 16) ||
	    pt_store_read(sw->lk->store, m->generator, key, &text, NULL,
			  NULL) ||
	    pt_sched_parse(text.buf, text.len, path, &s, NULL))
		goto out;
	fn = pt_sched_meta(s, "function");
	tg = pt_sched_meta(s, "target");
	at = meta_num(s, "tuned_at");
	if (!fn || !tg || strcmp(tg, m->target) ||
	    strcmp(fn, m->function && *m->function ? m->function : "-") ||
	    (sw->best && at <= sw->best_at))
		goto out;
	/* Only one whose stage hashes fit this pipeline's stages. */
	if (pt_warm_new_stored(m, s, &wm, NULL))
		goto out;
	pt_sched_free(sw->best);
	sw->best = s;
	sw->best_at = at;
	s = NULL;
	pt_strbuf_reset(&sw->path);
	pt_strbuf_addstr(&sw->path, path);
out:
	pt_warm_free(wm);
	pt_sched_free(s);
	pt_strbuf_release(&text);
	return 0;
}

static int warm_from_store(struct pt_lookup *lk, const struct pt_model *m,
			   struct pt_sched **wsched)
{
	struct store_warm sw;
	struct pt_strbuf own = PT_STRBUF_INIT;
	char *slash;

	*wsched = NULL;
	if (!lk->store ||
	    pt_store_path(lk->store, m->generator, m->key, &own) ||
	    !(slash = strrchr(own.buf, '/'))) {
		pt_strbuf_release(&own);
		return 0;
	}
	*slash = 0;
	memset(&sw, 0, sizeof(sw));
	sw.lk = lk;
	sw.m = m;
	sw.gendir = (slash = strrchr(own.buf, '/')) ? slash + 1 : own.buf;
	sw.path = (struct pt_strbuf)PT_STRBUF_INIT;
	pt_store_each(lk->store, store_warm_each, &sw, NULL);
	if (sw.best)
		logf_(lk, "warm start from the store: %s", sw.path.buf);
	*wsched = sw.best;
	pt_strbuf_release(&sw.path);
	pt_strbuf_release(&own);
	return *wsched != NULL;
}

/* The schedule tuned most recently for the same generator, function and
 * target, with its model (parsed and hashed), for a warm start; 0 when
 * there is none (or it cannot be read: a cold start then). The cache
 * holds the earlier models; a store file (a fresh clone's only source)
 * holds its stages' hashes instead, and *wmod stays NULL. */
static int warm_source(struct pt_lookup *lk, const struct pt_model *m,
		       struct pt_model **wmod, struct pt_sched **wsched)
{
	uint8_t (*keys)[16] = NULL;
	size_t n = 0, i;
	int found = 0;

	*wmod = NULL;
	*wsched = NULL;
	if (!lk->cache ||
	    pt_cache_similar(lk->cache, m->generator ? m->generator : "",
			     m->function ? m->function : "", m->target, &keys,
			     &n, NULL))
		return warm_from_store(lk, m, wsched);
	for (i = 0; i < n && !found; i++) {
		struct pt_cache_entry ce;

		if (!memcmp(keys[i], m->key, 16) ||
		    pt_cache_get(lk->cache, keys[i], &ce, NULL))
			continue;
		if (!pt_model_parse(ce.model, strlen(ce.model), "cache", wmod,
				    NULL) && !pt_model_hash(*wmod) &&
		    !pt_sched_parse(ce.sched, strlen(ce.sched), "cache",
				    wsched, NULL))
			found = 1;
		else {
			pt_model_free(*wmod);
			*wmod = NULL;
		}
		pt_cache_entry_release(&ce);
	}
	free(keys);
	return found || warm_from_store(lk, m, wsched);
}

/* Tune, then store. The result goes to *out. */
static int tune_and_store(struct pt_lookup *lk, const struct pt_model *m,
			  struct found *f, struct pt_lookup_result *r,
			  struct pt_sched **out, struct pt_error *err)
{
	struct pt_tune_opts to;
	struct pt_tune_result tr;
	struct progress_ctx pc;
	struct pt_strbuf text = PT_STRBUF_INIT, mt = PT_STRBUF_INIT;
	struct pt_cache_entry ce;
	struct pt_error e = PT_ERROR_INIT;
	struct pt_model *wmod = NULL;
	struct pt_sched *wsched = NULL;
	int store = lk->cfg->mode != PT_MODE_READONLY, ret;

	if (!lk->cost_tried) {
		/* Without a cost model the interim tuner answers; say so. */
		lk->cost_tried = 1;
		if (pt_drv_load_cost_model(&lk->cost, &e)) {
			if (lk->out)
				fprintf(lk->out, "%s: warning: %s; tuning with the baseline tuner\n",
					lk->name, e.msg);
			if (lk->log)
				fprintf(lk->log, "no cost model: %s\n", e.msg);
			e = (struct pt_error)PT_ERROR_INIT;
		}
	}
	pt_tune_opts_init(&to);
	to.cost = lk->cost;
	to.search.algo = (enum pt_search_algo)lk->cfg->search;
	to.search.threads = lk->cfg->threads > 0 ? lk->cfg->threads :
			    cores_online();
	to.search.decision_s = lk->cfg->decision_s;
	to.budget_s = lk->cfg->budget_s;
	to.seed = lk->cfg->seed;
	to.measure = lk->cfg->measure && lk->mopts;
	to.mopts = lk->mopts;
	to.jobserver = lk->jobserver;
	to.progress = tune_progress;
	pc.lk = lk;
	pc.label = r->generator && *r->generator ? r->generator : r->key;
	to.ctx = &pc;
	to.log = lk->log;
	/* Warm starts: from the schedule of the pipeline's earlier version,
	 * or, when retuning, from the stored schedule itself. */
	if (f->sched) {
		to.warm_model = m;
		to.warm_sched = f->sched;
	} else if (warm_source(lk, m, &wmod, &wsched)) {
		to.warm_model = wmod;
		to.warm_sched = wsched;
	}
	ret = pt_tune(m, &to, &tr, err);
	pt_model_free(wmod);
	pt_sched_free(wsched);
	if (ret)
		return ret;
	r->warm_stages = tr.warm_stages;
	r->warm_changed = tr.warm_changed;
	r->iterations = tr.iterations;
	r->measured_ms = tr.measured_ms;
	pt_lookup_count(lk, "tuned", "tune", tr.elapsed_s * 1000.0);
	if ((ret = pt_lookup_provenance(lk->store,
					 pt_mode_name(lk->cfg->mode), m, tr.sched))) {
		pt_tune_result_release(&tr);
		return pt_error_set(err, ret, "out of memory");
	}
	/* Retune keeps the stored schedule unless the new one is measured
	 * faster than a measured old one, beyond noise: the two figures
	 * come from different runs, and the new one is the best of many
	 * candidates (so biased low). */
	if (f->sched && !(tr.measured_ms >= 0 && f->measured_ms >= 0 &&
			  tr.measured_ms < PT_RETUNE_MAX_RATIO *
					   f->measured_ms)) {
		r->outcome = PT_OUT_KEPT;
		*out = f->sched;
		f->sched = NULL;
		pt_tune_result_release(&tr);
		return 0;
	}
	r->outcome = PT_OUT_TUNED;
	if (pt_sched_print(tr.sched, &text)) {
		pt_tune_result_release(&tr);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	if (store && lk->cache) {
		if (fill_entry(&ce, m, text.buf, &mt, lk->cfg->budget_s,
			       tr.predicted_ms, tr.measured_ms))
			ret = PT_ENOMEM;
		else if (pt_cache_put(lk->cache, &ce, &e))
			drop_cache(lk, &e);
		else
			pt_lookup_count(lk, "stored.cache", NULL, -1);
	}
	if (store && lk->store && !ret) {
		if (pt_store_write(lk->store, m->generator, m->key, text.buf,
				   text.len, &e))
			drop_store(lk, &e);
		else {
			r->stored = 1;
			pt_lookup_count(lk, "stored.store", NULL, -1);
		}
	}
	pt_strbuf_release(&text);
	pt_strbuf_release(&mt);
	*out = tr.sched;
	tr.sched = NULL;
	pt_tune_result_release(&tr);
	return ret ? pt_error_set(err, ret, "out of memory") : 0;
}

int pt_lookup_answer(struct pt_serve *s, void *ctx, const struct pt_model *m,
		     int attempt, const char *refused, struct pt_sched **out,
		     struct pt_error *err)
{
	struct pt_lookup *lk = ctx;
	struct pt_lookup_result *r;
	struct found f;
	long long t0 = pt_time_now_ms();
	int hit = 0, ret = 0, leased = 0;
	char counter[64];

	*out = NULL;
	lk->serve = s;
	if (!(r = new_result(lk, m)))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	logf_(lk, "model %s: generator %s function %s target %s", r->key,
	      r->generator, r->function, r->target);

	if (lk->baseline_key && !strcmp(lk->baseline_key, r->key) &&
	    !refused) {
		if ((ret = pt_serve_answer_baseline(s, NULL, m, attempt, NULL,
						    out, err)))
			return ret;
		r->outcome = PT_OUT_BASELINE;
		r->elapsed_ms = (double)(pt_time_now_ms() - t0);
		pt_lookup_count(lk, "baseline.compile-limit", NULL, -1);
		logf_(lk, "%s: baseline schedule (compile_limit)", r->key);
		say(lk, r);
		return 0;
	}
	if (refused) {
		/* What we sent from the cache or the store did not apply:
		 * forget it and tune. */
		memset(&f, 0, sizeof(f));
		f.text = (struct pt_strbuf)PT_STRBUF_INIT;
		f.measured_ms = -1;
		f.why = PT_WHY_REFUSED;
		snprintf(f.detail, sizeof(f.detail), "%s", refused);
		if (lk->cache && lk->cfg->mode != PT_MODE_READONLY)
			pt_cache_del(lk->cache, m->key, NULL);
		if (attempt > 1 || lk->nresults < 2 ||
		    lk->results[lk->nresults - 2].outcome == PT_OUT_TUNED) {
			ret = pt_error_set(err, PT_EMISMATCH,
					   "the plugin refused a freshly tuned schedule for %s: %s",
					   r->key, refused);
			r->outcome = PT_OUT_ERROR;
			goto done;
		}
	} else {
		find(lk, m, lk->cfg->mode != PT_MODE_READONLY, &f);
	}
	r->reason = f.why;
	snprintf(r->detail, sizeof(r->detail), "%s", f.detail);

	if (f.sched && lk->cfg->mode != PT_MODE_RETUNE) {
		if (f.from_store)
			cache_store_hit(lk, m, &f);
		r->outcome = PT_OUT_HIT;
		r->measured_ms = f.measured_ms;
		*out = f.sched;
		f.sched = NULL;
		goto done;
	}
	if (lk->cfg->mode == PT_MODE_FROZEN) {
		r->outcome = PT_OUT_FROZEN;
		ret = frozen_error(m, r->key, err);
		pt_lookup_count(lk, "error.frozen", NULL, -1);
		goto done;
	}
	if (f.sched)
		r->reason = PT_WHY_RETUNE;
	if (lk->cfg->mode != PT_MODE_READONLY) {
		if ((ret = take_lease(lk, m, &f, &hit, err)))
			goto done;
		leased = !hit && lk->cache;
		if (hit && lk->cfg->mode != PT_MODE_RETUNE) {
			r->reason = PT_WHY_HIT_WAITED;
			r->outcome = PT_OUT_HIT;
			*out = f.sched;
			f.sched = NULL;
			goto done;
		}
	}
	ret = tune_and_store(lk, m, &f, r, out, err);
	if (ret)
		r->outcome = PT_OUT_ERROR;
done:
	if (leased && lk->cache)
		pt_cache_lease_release(lk->cache, m->key, NULL);
	/* The build used this key: `protune gc --unreferenced` keeps it. */
	if (lk->cache && lk->cfg->mode != PT_MODE_READONLY &&
	    (r->outcome == PT_OUT_HIT || r->outcome == PT_OUT_TUNED ||
	     r->outcome == PT_OUT_KEPT))
		pt_cache_note_use(lk->cache, m->key, (int64_t)time(NULL),
				  NULL);
	r->elapsed_ms = (double)(pt_time_now_ms() - t0);
	if (ret && !r->detail[0])
		snprintf(r->detail, sizeof(r->detail), "%s",
			 err ? err->msg : "failed");
	if (r->outcome == PT_OUT_HIT) {
		snprintf(counter, sizeof(counter), "hit.%s",
			 pt_reason_name(r->reason) + 4);
		pt_lookup_count(lk, counter, "hit", r->elapsed_ms);
	} else if (r->reason != PT_WHY_NONE) {
		snprintf(counter, sizeof(counter), "miss.%s",
			 pt_reason_name(r->reason));
		pt_lookup_count(lk, counter, NULL, -1);
	}
	logf_(lk, "%s: outcome %d reason %s, %.0f ms%s%s", r->key, r->outcome,
	      pt_reason_name(r->reason), r->elapsed_ms,
	      r->detail[0] ? ": " : "", r->detail);
	say(lk, r);
	found_release(&f);
	return ret;
}

void pt_lookup_forget(struct pt_lookup *lk,
		      const struct pt_lookup_result *r)
{
	struct pt_error e = PT_ERROR_INIT;
	struct pt_strbuf path = PT_STRBUF_INIT;
	uint8_t key[16];

	if (pt_hash_parse(r->key, key))
		return;
	if (lk->cache && lk->cfg->mode != PT_MODE_READONLY) {
		int ret = pt_cache_del(lk->cache, key, &e);

		if (ret && ret != PT_ENOTFOUND)
			drop_cache(lk, &e);
		else if (!ret && lk->out)
			fprintf(lk->out, "%s: removed key %.12s from the cache\n",
				lk->name, r->key);
	}
	if (!lk->store || (!r->stored && r->reason != PT_WHY_HIT_STORE))
		return;
	pt_store_path(lk->store, r->generator, key, &path);
	if (!r->stored) {
		if (lk->out)
			fprintf(lk->out, "%s: the store file %s still holds it: `protune retune` it, or remove it\n",
				lk->name, path.buf);
	} else if (pt_store_remove(lk->store, r->generator, key, &e)) {
		warn(lk, "%s", e.msg);
	} else if (lk->out) {
		fprintf(lk->out, "%s: removed the store file it wrote, %s\n",
			lk->name, path.buf);
	}
	pt_strbuf_release(&path);
}

/* --- explain ---------------------------------------------------------------- */

struct similar {
	const struct pt_model *m;
	struct pt_strbuf *why;
};

/* Tell which stages of `m` have no stage with the same hash in `old`. */
static void diff_stages(const struct pt_model *m, const struct pt_model *old,
			struct pt_strbuf *why)
{
	int i, j, changed = 0;

	for (i = 0; i < m->nstages; i++) {
		const struct pt_stage *st = &m->stages[i];
		int same = 0;

		for (j = 0; j < old->nstages && !same; j++)
			same = !memcmp(st->hash, old->stages[j].hash, 16);
		if (same)
			continue;
		changed++;
		pt_strbuf_addf(why, "    changed: f%d %s stage %d\n", st->func,
			       m->funcs[st->func].label ?
			       m->funcs[st->func].label : "?", st->index);
	}
	pt_strbuf_addf(why, "    %d of %d stages differ", changed,
		       m->nstages);
	if (m->nfuncs != old->nfuncs)
		pt_strbuf_addf(why, "; %d Funcs now, %d then", m->nfuncs,
			       old->nfuncs);
	if (strcmp(m->machine_params ? m->machine_params : "",
		   old->machine_params ? old->machine_params : ""))
		pt_strbuf_addf(why, "; machine params %s, were %s",
			       m->machine_params, old->machine_params);
	if (m->ninputs != old->ninputs)
		pt_strbuf_addf(why, "; %d inputs now, %d then", m->ninputs,
			       old->ninputs);
	pt_strbuf_addch(why, '\n');
}

static void explain_nearest(struct pt_lookup *lk, const struct pt_model *m,
			    struct pt_strbuf *why)
{
	uint8_t (*keys)[16] = NULL;
	size_t n = 0, i;

	if (!lk->cache ||
	    pt_cache_similar(lk->cache, m->generator ? m->generator : "",
			     m->function ? m->function : "", m->target, &keys,
			     &n, NULL) || !n) {
		pt_strbuf_addf(why,
			       "  no cached schedule for generator '%s', function '%s', target %s\n",
			       m->generator, m->function, m->target);
		free(keys);
		return;
	}
	for (i = 0; i < n && i < 3; i++) {
		struct pt_cache_entry ce;
		struct pt_model *old = NULL;
		char hex[33];

		pt_hash_hex(keys[i], hex);
		if (pt_cache_get(lk->cache, keys[i], &ce, NULL))
			continue;
		pt_strbuf_addf(why, "  %s: cached key %s (tuned %lld)\n",
			       i ? "also" : "nearest", hex,
			       (long long)ce.tuned_at);
		if (!pt_model_parse(ce.model, strlen(ce.model), "cache", &old,
				    NULL) && !pt_model_hash(old))
			diff_stages(m, old, why);
		pt_model_free(old);
		pt_cache_entry_release(&ce);
	}
	free(keys);
}

enum pt_reason pt_lookup_explain(struct pt_lookup *lk,
				 const struct pt_model *m,
				 struct pt_strbuf *why)
{
	struct found f;
	struct pt_strbuf path = PT_STRBUF_INIT;
	char hex[33];
	enum pt_reason r;

	pt_hash_hex(m->key, hex);
	find(lk, m, 0, &f);
	r = f.why;
	pt_strbuf_addf(why, "generator %s, function %s, target %s\n",
		       m->generator && *m->generator ? m->generator : "?",
		       m->function && *m->function ? m->function : "?",
		       m->target);
	pt_strbuf_addf(why, "key %s\n", hex);
	pt_strbuf_addf(why, "cache: %s\n",
		       lk->cache ? lk->cfg->cache_dir : "off");
	if (lk->store &&
	    !pt_store_path(lk->store, m->generator, m->key, &path))
		pt_strbuf_addf(why, "store file: %s\n", path.buf);
	else
		pt_strbuf_addstr(why, "store: off (not in a git repository, or store_dir=off)\n");
	pt_strbuf_addf(why, "result: %s%s\n", r == PT_WHY_HIT_CACHE ||
		       r == PT_WHY_HIT_STORE ? "hit, " : "miss, ",
		       pt_reason_name(r));
	if (f.detail[0])
		pt_strbuf_addf(why, "  %s\n", f.detail);
	if (r != PT_WHY_HIT_CACHE && r != PT_WHY_HIT_STORE)
		explain_nearest(lk, m, why);
	found_release(&f);
	pt_strbuf_release(&path);
	return r;
}
