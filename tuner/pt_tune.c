/* pt_tune.c: the interim "baseline" tuner behind pt_tune.h. */
#include "protune/pt_tune.h"

#include "protune/pt_randsched.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_time.h"

#include <inttypes.h>
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
static int describe(struct pt_sched *s, const struct pt_tune_opts *o,
		    const struct pt_tune_result *r)
{
	if (pt_strvec_push(&s->meta, "tuner=" PT_TUNER_NAME) ||
	    pt_strvec_push(&s->meta, "tuner_version=" PT_TUNER_VERSION) ||
	    add_meta(s, "budget", "%g", o->budget_s) ||
	    pt_strvec_pushf(&s->meta, "seed=%" PRIu64, o->seed) ||
	    pt_strvec_pushf(&s->meta, "iterations=%ld", r->iterations) ||
	    pt_strvec_push(&s->meta, o->measure ? "measure=on" :
			   "measure=off"))
		return PT_ENOMEM;
	if (r->measured_ms >= 0 &&
	    add_meta(s, "measured_ms", "%.4f", r->measured_ms))
		return PT_ENOMEM;
	return 0;
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

int pt_tune(const struct pt_model *m, const struct pt_tune_opts *o,
	    struct pt_tune_result *r, struct pt_error *err)
{
	long long t0 = pt_time_now_ms(), budget_ms, last_ms = 0;
	struct pt_sched *best, *cand;
	double best_ms = -1;
	int ret;

	memset(r, 0, sizeof(*r));
	r->predicted_ms = r->measured_ms = -1;
	if (!m || !o || o->budget_s <= 0 || (o->measure && !o->mopts))
		return pt_error_set(err, PT_EINVAL,
				    "pt_tune needs a model, a positive budget and, to measure, measuring options");
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
	if (describe(best, o, r)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto fail;
	}
	r->sched = best;
	return 0;
fail:
	pt_sched_free(best);
	return ret;
}

void pt_tune_result_release(struct pt_tune_result *r)
{
	pt_sched_free(r->sched);
	r->sched = NULL;
}
