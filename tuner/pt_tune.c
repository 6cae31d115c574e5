/* pt_tune.c: tuning one model (pt_tune.h): the searches of pt_search.h
 * over the model's space with the cost model, or the interim "baseline"
 * tuner when there is no cost model. */
#include "protune/pt_tune.h"
#include "protune/pt_warm.h"

#include "protune/pt_space.h"

#include "protune/pt_jobserver.h"
#include "protune/pt_randsched.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_time.h"

#include <inttypes.h>
#include <pthread.h>
#include <time.h>
#include <xxhash.h>
#include <stdlib.h>
#include <string.h>

static int add_meta(struct pt_sched *s, const char *name, const char *fmt,
		    double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), fmt, v);
	return pt_strvec_pushf(&s->meta, "%s=%s", name, buf);
}

/* Mark the chosen schedule with how it was found. */
static int describe(const struct pt_model *m, struct pt_sched *s,
		    const struct pt_tune_opts *o,
		    const struct pt_tune_result *r)
{
	const char *name = o->cost ? PT_TUNER_NAME : "baseline";
	const char *version = o->cost ? PT_TUNER_VERSION : "1";

	if (pt_strvec_pushf(&s->meta, "tuner=%s", name) ||
	    pt_strvec_pushf(&s->meta, "tuner_version=%s", version) ||
	    (o->cost && pt_strvec_pushf(&s->meta, "search=%s",
					pt_search_algo_name(o->search.algo))) ||
	    add_meta(s, "budget", "%g", o->budget_s) ||
	    pt_strvec_pushf(&s->meta, "seed=%" PRIu64, o->seed) ||
	    pt_strvec_pushf(&s->meta, "iterations=%ld", r->iterations) ||
	    pt_strvec_push(&s->meta, o->measure ? "measure=on" :
			   "measure=off"))
		return PT_ENOMEM;
	if (r->measured_ms >= 0 &&
	    add_meta(s, "measured_ms", "%.4f", r->measured_ms))
		return PT_ENOMEM;
	if (r->predicted_ms >= 0 &&
	    add_meta(s, "predicted", "%.6g", r->predicted_ms))
		return PT_ENOMEM;
	/* What a later warm start from this schedule alone compares. */
	return pt_warm_hashes_meta(m, &s->meta);
}

static int report(const struct pt_tune_opts *o, long long t0, long it,
		  double best, struct pt_error *err)
{
	struct pt_tune_progress p;

	if (!o->progress)
		return 0;
	p.elapsed_s = (double)(pt_time_now_ms() - t0) / 1000.0;
	p.budget_s = o->budget_s;
	p.iterations = it;
	p.best_ms = best;
	p.best_cost = -1;
	p.decisions = 0;
	p.best = NULL;
	return o->progress(o->ctx, &p, err);
}

/* Time one candidate; < 0 when it failed (logged). */
static double time_one(const struct pt_model *m, const struct pt_sched *s,
		       const struct pt_tune_opts *o, long it)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_measure_result mr;
	struct pt_error e = PT_ERROR_INIT;
	double t = -1;

	if (pt_sched_print(s, &text))
		return -1;
	if (pt_measure(m, text.buf, o->mopts, &mr, &e) == 0)
		t = mr.median_ms;
	if (o->log) {
		if (t >= 0)
			fprintf(o->log, "candidate %ld: %.4f ms\n", it, t);
		else
			fprintf(o->log, "candidate %ld: invalid: %s\n", it,
				e.msg);
	}
	pt_strbuf_release(&text);
	return t;
}

static int tune_interim(const struct pt_model *m,
			const struct pt_tune_opts *o,
			struct pt_tune_result *r, struct pt_error *err)
{
	long long t0 = pt_time_now_ms(), budget_ms, last_ms = 0;
	struct pt_sched *best, *cand;
	double best_ms = -1;
	int ret;

	budget_ms = (long long)(o->budget_s * 1000.0);
	if (!(best = pt_sched_baseline(m)))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	r->iterations = 1;
	if ((ret = report(o, t0, r->iterations, best_ms, err)))
		goto fail;
	if (o->measure) {
		long long s0 = pt_time_now_ms();

		best_ms = time_one(m, best, o, 0);
		last_ms = pt_time_now_ms() - s0;
		/* Random legal schedules while another one fits in the
		 * budget (judged by the last candidate's cost). */
		while (pt_time_now_ms() - t0 + last_ms <= budget_ms) {
			double t;

			if ((ret = report(o, t0, r->iterations, best_ms, err)))
				goto fail;
			cand = pt_randsched(m, o->seed * 1000003u +
					    (uint64_t)r->iterations);
			if (!cand) {
				ret = pt_error_set(err, PT_ENOMEM,
						   "out of memory");
				goto fail;
			}
			s0 = pt_time_now_ms();
			t = time_one(m, cand, o, r->iterations);
			last_ms = pt_time_now_ms() - s0;
			r->iterations++;
			if (t >= 0 && (best_ms < 0 || t < best_ms)) {
				pt_sched_free(best);
				best = cand;
				best_ms = t;
			} else {
				pt_sched_free(cand);
			}
		}
		r->measured_ms = best_ms;
	}
	memcpy(best->key, m->key, sizeof(best->key));
	r->elapsed_s = (double)(pt_time_now_ms() - t0) / 1000.0;
	/* The generators' own meta entries give way to the tuner's. */
	pt_strvec_clear(&best->meta);
	if (describe(m, best, o, r)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto fail;
	}
	r->sched = best;
	return 0;
fail:
	pt_sched_free(best);
	return ret;
}

/* --- the searches ------------------------------------------------------- */

struct tune_ctx {
	const struct pt_model *m;
	const struct pt_space *sp;
	const struct pt_tune_opts *o;
	long long t0;
	long candidates;
	int jobs;                /* measurements at most at once */
	struct pt_error *err;
	struct pt_sched *best;   /* want_best: the last best's schedule */
	uint64_t best_hash;
	long last_iterations;    /* the last progress report's figures */
	double last_best_ms;
};

/* A timeout setting (<= 0: none) capped at `cap` ms. */
static int clamp_ms(int v, int cap)
{
	return v > 0 && v < cap ? v : cap;
}

/* --- measuring the candidates of a decision ------------------------------ */

/* One decision's candidates, measured in waves of up to `jobs` at once:
 * the calling thread measures the first of a wave, in the job slot this
 * process holds, and a helper thread each of the others. Compiles hold
 * the benchmark lock shared and timings exclusive, so the compiles of a
 * wave overlap and its timings follow one by one; the next wave starts
 * when the whole wave is done. (A helper taking the next candidate as soon
 * as it is free would start a compile under another candidate's pending
 * timing, and flock lets such compiles starve that timing.) Under make, a
 * helper holds a jobserver token, taken without waiting for its wave and
 * given back as soon as its candidate is measured; with fewer tokens free,
 * the wave is smaller. Results go to ms[i] by index, so the answer does
 * not depend on which candidate finishes first. */
struct batch {
	struct tune_ctx *tc;
	struct pt_sched **s;     /* the candidates' schedules */
	double *ms;
	long first;              /* the log's number of candidate 0 */
	struct pt_jobserver *js; /* active, or NULL: helpers need no token */
	pthread_mutex_t mu;      /* guards js and the fields below */
	double compile_ms;       /* the compiles' wall times, summed */
	int tried;               /* candidates not skipped for the budget */
};

struct helper {
	struct batch *b;
	int i;                   /* the candidate */
	int token;               /* holds a jobserver token */
	pthread_t tid;
};

/* Give a helper's token back. A token that cannot be written back stays
 * in js->held, for pt_jobserver_close() to try again. */
static void give_back(struct batch *b, int *token)
{
	struct pt_error e = PT_ERROR_INIT;

	if (!*token)
		return;
	*token = 0;
	pthread_mutex_lock(&b->mu);
	if (pt_jobserver_release(b->js, &e) && b->tc->o->log)
		fprintf(b->tc->o->log, "%s\n", e.msg);
	pthread_mutex_unlock(&b->mu);
}

/* Measure candidate i; its timeouts are what is left of the budget now:
 * its compile, its runs and its waits for the benchmark lock time out
 * there (then it counts as failed). Under a second left, it is not
 * tried. */
static void measure_one(struct batch *b, int i)
{
	struct tune_ctx *tc = b->tc;
	const struct pt_tune_opts *o = tc->o;
	struct pt_measure_opts mo = *o->mopts;
	struct pt_measure_result mr;
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_error e = PT_ERROR_INIT;
	long long start = pt_time_now_ms(), end;
	long long left = (long long)(o->budget_s * 1000.0) -
			 (start - tc->t0);
	long num = b->first + i;
	int ret;

	b->ms[i] = -1;
	if (o->budget_s > 0 && left < 1000) {
		if (o->log)
			fprintf(o->log, "candidate %ld: not timed: the budget is spent\n",
				num);
		return;
	}
	pthread_mutex_lock(&b->mu);
	b->tried++;
	pthread_mutex_unlock(&b->mu);
	if (o->budget_s > 0) {
		int cap = left > INT32_MAX ? INT32_MAX : (int)left;

		mo.compile_timeout_ms = clamp_ms(o->mopts->compile_timeout_ms,
						 cap);
		mo.run_timeout_ms = clamp_ms(o->mopts->run_timeout_ms, cap);
		mo.lock_timeout_ms = clamp_ms(o->mopts->lock_timeout_ms, cap);
	}
	if (pt_sched_print(b->s[i], &text))
		ret = pt_error_set(&e, PT_ENOMEM, "out of memory");
	else
		ret = pt_measure(tc->m, text.buf, &mo, &mr, &e);
	end = pt_time_now_ms();
	if (!ret) {
		b->ms[i] = mr.median_ms;
		pthread_mutex_lock(&b->mu);
		b->compile_ms += mr.compile_ms;
		pthread_mutex_unlock(&b->mu);
	}
	if (o->log) {
		if (!ret)
			fprintf(o->log, "candidate %ld: %.4f ms (compiled in %.2f s; from %.2f s to %.2f s)\n",
				num, mr.median_ms, mr.compile_ms / 1000.0,
				(double)(start - tc->t0) / 1000.0,
				(double)(end - tc->t0) / 1000.0);
		else
			fprintf(o->log, "candidate %ld: invalid: %s\n", num,
				e.msg);
	}
	pt_strbuf_release(&text);
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;

	measure_one(h->b, h->i);
	/* The token covered that measurement only. */
	give_back(h->b, &h->token);
	return NULL;
}

/* The most candidates to measure at once, of `want`, before counting
 * tokens; `why` gets the reason for fewer. */
static int max_jobs(const struct pt_tune_opts *o, int want, const char **why)
{
	*why = NULL;
	if (want <= 1)
		return 1;
	if (!o->mopts->lock_path || !*o->mopts->lock_path) {
		/* Nothing would keep the timings off the compiles. */
		*why = "no benchmark lock";
		return 1;
	}
	if (o->jobserver && !pt_jobserver_active(o->jobserver)) {
		*why = o->jobserver->why[0] ? o->jobserver->why :
		       "make gives no jobserver";
		return 1;
	}
	return want;
}

/* Helpers for a wave of up to `size` candidates: under make, one token
 * each, taken without waiting. Returns how many may run. */
static int take_tokens(struct batch *b, struct helper *h, int size)
{
	int k;

	if (!b->js)
		return size - 1;
	pthread_mutex_lock(&b->mu);
	for (k = 0; k < size - 1; k++) {
		if (pt_jobserver_acquire(b->js, 0, NULL))
			break;
		h[k].token = 1;
	}
	pthread_mutex_unlock(&b->mu);
	return k;
}

#define NO_SLOTS "no more free job slots in make's jobserver"

/* pt_search_measure_fn's work: compile and time each state's schedule,
 * several at once when the settings and make allow it. */
static int measure_all(struct tune_ctx *tc,
		       const struct pt_space_state *const *st, int n,
		       double *ms)
{
	const struct pt_tune_opts *o = tc->o;
	struct batch b;
	struct helper *h = NULL;
	long long t0 = pt_time_now_ms();
	const char *why;
	int cap, planned = 0, w, size, i, k, ret = 0;

	memset(&b, 0, sizeof(b));
	for (i = 0; i < n; i++)
		ms[i] = -1;
	if (n <= 0)
		return 0;
	if (o->budget_s > 0 && (long long)(o->budget_s * 1000.0) -
	    (t0 - tc->t0) < 1000) {
		/* Under a second left: none is tried (measure_one). */
		for (i = 0; i < n; i++, tc->candidates++)
			if (o->log)
				fprintf(o->log, "candidate %ld: not timed: the budget is spent\n",
					tc->candidates);
		return 0;
	}
	cap = max_jobs(o, n < tc->jobs ? n : tc->jobs, &why);
	/* The schedules first, here: helpers then only print and measure. */
	b.s = calloc((size_t)n, sizeof(*b.s));
	h = cap > 1 ? calloc((size_t)cap - 1, sizeof(*h)) : NULL;
	if (!b.s || (cap > 1 && !h)) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((ret = pt_space_sched(tc->sp, st[i], &b.s[i])))
			goto out;
	b.tc = tc;
	b.ms = ms;
	/* Numbers for the log, up front: workers never touch tc. */
	b.first = tc->candidates;
	tc->candidates += n;
	b.js = cap > 1 && o->jobserver ? o->jobserver : NULL;
	pthread_mutex_init(&b.mu, NULL);
	for (w = 0; w < n; w += size) {
		int want = n - w < cap ? n - w : cap, started = 0;

		size = 1 + take_tokens(&b, h, want);
		if (!w) {
			planned = size;
			if (o->log)
				fprintf(o->log, "measuring %d candidate%s, %d at a time%s%s%s\n",
					n, n == 1 ? "" : "s", size,
					why || size < want ? " (" : "",
					why ? why : size < want ? NO_SLOTS : "",
					why || size < want ? ")" : "");
		} else if (size < want && size < planned && o->log) {
			fprintf(o->log, "candidates %ld to %ld: %d at a time (" NO_SLOTS ")\n",
				b.first + w, b.first + w + want - 1, size);
		}
		for (k = 0; k < size - 1; k++) {
			h[k].b = &b;
			h[k].i = w + 1 + k;
			if (pthread_create(&h[k].tid, NULL, helper_main, &h[k]))
				break;
			started++;
		}
		/* This thread measures too, in the slot the process holds;
		 * then what helpers that could not start were to measure. */
		measure_one(&b, w);
		for (k = started; k < size - 1; k++) {
			give_back(&b, &h[k].token);
			measure_one(&b, h[k].i);
		}
		for (k = 0; k < started; k++)
			pthread_join(h[k].tid, NULL);
	}
	pthread_mutex_destroy(&b.mu);
	if (o->log && b.tried > 1)
		fprintf(o->log, "measured %d candidates in %.2f s; their compiles took %.2f s in all\n",
			b.tried, (double)(pt_time_now_ms() - t0) / 1000.0,
			b.compile_ms / 1000.0);
out:
	if (b.s)
		for (i = 0; i < n; i++)
			pt_sched_free(b.s[i]);
	free(b.s);
	free(h);
	return ret;
}

/* A measurement runs in a thread of its own while the calling thread
 * keeps reporting progress every second: the server's heartbeats must go
 * on while a candidate compiles (a plugin waits at most a minute for a
 * message). */
struct measure_job {
	struct tune_ctx *tc;
	const struct pt_space_state *const *st;
	int n, ret, done;
	double *ms;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *measure_main(void *arg)
{
	struct measure_job *j = arg;
	int ret = measure_all(j->tc, j->st, j->n, j->ms);

	pthread_mutex_lock(&j->mu);
	j->ret = ret;
	j->done = 1;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* pt_search_measure_fn. */
static int tune_measure(void *ctx, const struct pt_space_state *const *st,
			int n, double *ms)
{
	struct tune_ctx *tc = ctx;
	struct measure_job j;
	pthread_t tid;
	int ret = 0;

	if (!tc->o->progress)
		return measure_all(tc, st, n, ms);
	memset(&j, 0, sizeof(j));
	j.tc = tc;
	j.st = st;
	j.n = n;
	j.ms = ms;
	pthread_mutex_init(&j.mu, NULL);
	pthread_cond_init(&j.cv, NULL);
	if (pthread_create(&tid, NULL, measure_main, &j)) {
		pthread_mutex_destroy(&j.mu);
		pthread_cond_destroy(&j.cv);
		return measure_all(tc, st, n, ms);
	}
	pthread_mutex_lock(&j.mu);
	while (!j.done) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&j.cv, &j.mu, &until);
		if (!j.done && !ret) {
			struct pt_tune_progress p;

			pthread_mutex_unlock(&j.mu);
			memset(&p, 0, sizeof(p));
			p.elapsed_s = (double)(pt_time_now_ms() - tc->t0) /
				      1000.0;
			p.budget_s = tc->o->budget_s;
			p.iterations = tc->last_iterations;
			p.best_ms = tc->last_best_ms;
			p.best_cost = -1;
			/* An error (the plugin went away) stops the search
			 * once this measurement is over. */
			ret = tc->o->progress(tc->o->ctx, &p, tc->err);
			pthread_mutex_lock(&j.mu);
		}
	}
	pthread_mutex_unlock(&j.mu);
	pthread_join(tid, NULL);
	pthread_mutex_destroy(&j.mu);
	pthread_cond_destroy(&j.cv);
	return ret ? ret : j.ret;
}

/* pt_search_progress_fn: pass the search's progress on. */
static int tune_progress(void *ctx, const struct pt_search_event *e)
{
	struct tune_ctx *tc = ctx;
	struct pt_tune_progress p;

	if (!tc->o->progress)
		return 0;
	p.elapsed_s = e->elapsed_s;
	p.budget_s = tc->o->budget_s;
	p.iterations = e->simulations;
	p.best_ms = e->best_ms;
	tc->last_iterations = e->simulations;
	tc->last_best_ms = e->best_ms;
	p.best_cost = e->best_cost < PT_SEARCH_INVALID ? e->best_cost : -1;
	p.decisions = e->decisions;
	p.best = NULL;
	if (tc->o->want_best && e->best) {
		uint64_t h = XXH3_64bits(e->best,
					 pt_space_state_size(tc->sp));

		if (!tc->best || h != tc->best_hash) {
			struct pt_sched *s = NULL;
			int ret = pt_space_sched(tc->sp, e->best, &s);

			if (ret)
				return pt_error_set(tc->err, ret,
						    "out of memory");
			pt_sched_free(tc->best);
			tc->best = s;
			tc->best_hash = h;
		}
		p.best = tc->best;
	}
	return tc->o->progress(tc->o->ctx, &p, tc->err);
}

static int tune_search(const struct pt_model *m, const struct pt_tune_opts *o,
		       struct pt_tune_result *r, struct pt_error *err)
{
	struct pt_space *sp = NULL;
	struct pt_search_opts so = o->search;
	struct pt_search_result sr;
	struct tune_ctx tc;
	struct pt_error e = PT_ERROR_INIT;
	struct pt_sched *s = NULL;
	struct pt_warm *wm = NULL;
	int ret;

	memset(&sr, 0, sizeof(sr));
	memset(&tc, 0, sizeof(tc));
	tc.last_best_ms = -1;
	memset(&so.eval, 0, sizeof(so.eval));
	if ((ret = pt_space_new(m, NULL, &sp, &e))) {
		if (ret == PT_ENOMEM)
			return pt_error_set(err, ret, "out of memory");
		/* A model the space cannot take: the interim tuner. */
		if (o->log)
			fprintf(o->log, "no schedule space for this model (%s); baseline tuner\n",
				e.msg);
		return tune_interim(m, o, r, err);
	}
	so.threads = so.threads > 0 ? so.threads : 1;
	if ((ret = pt_search_eval_model(m, sp, o->cost, so.threads,
					&so.eval, err)))
		goto out;
	tc.m = m;
	tc.sp = sp;
	tc.o = o;
	tc.t0 = pt_time_now_ms();
	tc.candidates = 0;
	tc.jobs = so.threads;
	tc.err = err;
	tc.best = NULL;
	tc.best_hash = 0;
	so.budget_s = o->budget_s;
	so.seed = o->seed;
	so.measure = o->measure ? tune_measure : NULL;
	so.measure_ctx = &tc;
	so.progress = tune_progress;
	so.progress_ctx = &tc;
	if (o->warm_model && o->warm_sched) {
		if ((ret = pt_warm_new(m, o->warm_model, o->warm_sched, &wm,
				       err)))
			goto out;
	} else if (o->warm_sched &&
		   (ret = pt_warm_new_stored(m, o->warm_sched, &wm, &e))) {
		if (ret != PT_ENOTFOUND) {
			pt_error_set(err, ret, "%s", e.msg);
			goto out;
		}
		/* An earlier schedule with nothing to compare: cold. */
		if (o->log)
			fprintf(o->log, "no warm start: %s\n", e.msg);
		e = (struct pt_error)PT_ERROR_INIT;
		ret = 0;
	}
	if (wm) {
		pt_warm_bind(wm, sp);
		so.warm.pick = pt_warm_pick;
		so.warm.fixed = pt_warm_fixed;
		so.warm.ctx = wm;
		r->warm_stages = pt_warm_stages(wm);
		r->warm_changed = pt_warm_changed(wm);
		if (o->log)
			fprintf(o->log, "warm start: %d of %d stages changed\n",
				r->warm_changed, r->warm_stages);
	}
	if ((ret = pt_search(sp, &so, &sr, err)))
		goto out;
	if ((ret = pt_space_sched(sp, sr.best, &s))) {
		pt_error_set(err, ret, "out of memory");
		goto out;
	}
	if (pt_sched_check(m, s, &e)) {
		/* A bug in the space; never hand it to Halide. */
		if (o->log)
			fprintf(o->log, "the space gave an illegal schedule (%s); baseline schedule instead\n",
				e.msg);
		pt_sched_free(s);
		if (!(s = pt_sched_baseline(m))) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			goto out;
		}
		sr.measured_ms = -1;
		sr.cost = -1;
	}
	/* The space's meta entries give way to the tuner's. */
	pt_strvec_clear(&s->meta);
	memcpy(s->key, m->key, sizeof(s->key));
	r->iterations = sr.simulations;
	r->priced = sr.priced;
	r->decisions = sr.decisions;
	r->nodes = sr.nodes;
	r->measured = sr.measured;
	r->predicted_ms = sr.cost;
	r->measured_ms = sr.measured_ms;
	r->elapsed_s = (double)(pt_time_now_ms() - tc.t0) / 1000.0;
	if (wm) {
		r->warm_kept = pt_warm_count_kept(wm, s);
		if (o->log && sr.warm)
			fprintf(o->log, "warm start: first schedule cost %g, answer %g; %d Funcs as before\n",
				sr.warm_cost, sr.cost, r->warm_kept);
	}
	if (describe(m, s, o, r) ||
	    pt_strvec_pushf(&s->meta, "decisions=%ld", sr.decisions) ||
	    (wm && pt_strvec_pushf(&s->meta, "warm=%d/%d", r->warm_changed,
				   r->warm_stages))) {
		pt_sched_free(s);
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	r->sched = s;
out:
	pt_warm_free(wm);
	pt_sched_free(tc.best);
	pt_search_result_release(&sr);
	pt_search_eval_model_free(&so.eval);
	pt_space_free(sp);
	return ret;
}

void pt_tune_opts_init(struct pt_tune_opts *o)
{
	memset(o, 0, sizeof(*o));
	pt_search_opts_init(&o->search);
}

int pt_tune(const struct pt_model *m, const struct pt_tune_opts *o,
	    struct pt_tune_result *r, struct pt_error *err)
{
	memset(r, 0, sizeof(*r));
	r->predicted_ms = r->measured_ms = -1;
	if (!m || !o || (o->measure && !o->mopts) ||
	    !(o->budget_s > 0 || (o->cost && o->search.iterations > 0)))
		return pt_error_set(err, PT_EINVAL,
				    "pt_tune needs a model, a positive budget (or, with a cost model, an iteration count) and, to measure, measuring options");
	return o->cost ? tune_search(m, o, r, err) :
			 tune_interim(m, o, r, err);
}

void pt_tune_result_release(struct pt_tune_result *r)
{
	pt_sched_free(r->sched);
	r->sched = NULL;
}
