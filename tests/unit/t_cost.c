/* t_cost.c: the cost model (tuner/pt_cost.c): both losses recover known
 * coefficients, never negative ones, the log loss whatever the scale of
 * each pipeline; the trees improve a fit the linear layer cannot make; the
 * text form round-trips and bad files are refused with their line; ranking
 * statistics; the terms of a real schedule respond to what the schedule
 * does, loads hoisted out of the loops they do not depend on included. */
#include "pt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protune/pt_cost.h"
#include "protune/pt_features.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_space.h"

static uint64_t rnd_state;

static double rnd(void)
{
	return (double)(pt_space_rand(&rnd_state) >> 11) / 9007199254740992.0;
}

/* Rows of terms with runtime = sum coef*term exactly. */
static void make_rows(size_t n, const double *coef, double *terms,
		      double *ms, int *group)
{
	size_t i;
	int k;

	rnd_state = 42;
	for (i = 0; i < n; i++) {
		ms[i] = 0;
		for (k = 0; k < PT_TERM_COUNT; k++) {
			terms[i * PT_TERM_COUNT + k] = 1000 * rnd();
			ms[i] += coef[k] * terms[i * PT_TERM_COUNT + k];
		}
		group[i] = (int)(i % 7);
	}
}

PT_TEST(linear_recovers)
{
	enum { N = 400 };
	static double terms[N * PT_TERM_COUNT], ms[N];
	static int group[N];
	double coef[PT_TERM_COUNT] = { 0 };
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	struct pt_cost *c = NULL;
	int k;

	coef[PT_TERM_VECTOR_OPS] = 2e-3;
	coef[PT_TERM_LINES] = 5e-2;
	coef[PT_TERM_TASKS] = 1.0;
	make_rows(N, coef, terms, ms, group);
	o.trees = 0;
	o.ridge = 0;
	o.loss = PT_COST_LOSS_LINEAR;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &c, NULL), 0);
	PT_CHECK(!pt_cost_has_trees(c));
	for (k = 0; k < PT_TERM_COUNT; k++) {
		PT_CHECK(pt_cost_coef(c)[k] >= 0);
		PT_CHECK(fabs(pt_cost_coef(c)[k] - coef[k]) <=
		      1e-6 * (coef[k] + 1e-3));
	}
	pt_cost_free(c);
}

/* Runtime that grows with a term the fit may only weigh positively, and
 * falls with another: the second gets 0, not a negative weight. */
PT_TEST(linear_nonnegative)
{
	enum { N = 300 };
	static double terms[N * PT_TERM_COUNT], ms[N];
	static int group[N];
	double coef[PT_TERM_COUNT] = { 0 };
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	struct pt_cost *c = NULL;
	size_t i;
	int k;

	coef[PT_TERM_STORES] = 1;
	make_rows(N, coef, terms, ms, group);
	for (i = 0; i < N; i++)
		ms[i] += 5000 - 3 * terms[i * PT_TERM_COUNT + PT_TERM_ALLOCS];
	o.trees = 0;
	o.loss = PT_COST_LOSS_LINEAR;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &c, NULL), 0);
	for (k = 0; k < PT_TERM_COUNT; k++)
		PT_CHECK(pt_cost_coef(c)[k] >= 0);
	PT_CHECK(pt_cost_coef(c)[PT_TERM_ALLOCS] == 0);
	PT_CHECK(pt_cost_coef(c)[PT_TERM_STORES] > 0);
	pt_cost_free(c);
}

/* The log loss: runtimes exactly a weighted sum, each pipeline's scaled by
 * its own factor (as pipelines of different sizes are). The coefficients
 * come back up to one common scale, fixed by the geometric means. */
PT_TEST(log_recovers)
{
	enum { N = 420 };
	static double terms[N * PT_TERM_COUNT], ms[N];
	static int group[N];
	double coef[PT_TERM_COUNT] = { 0 }, f, lm = 0, lp = 0;
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	struct pt_cost *c = NULL;
	const double *got;
	size_t i;
	int k;

	coef[PT_TERM_VECTOR_OPS] = 2e-3;
	coef[PT_TERM_GATHERS] = 5e-2;
	coef[PT_TERM_PAGES] = 1.0;
	make_rows(N, coef, terms, ms, group);
	for (i = 0; i < N; i++)
		ms[i] *= pow(10, group[i] - 3);
	o.trees = 0;
	o.ridge = 0;
	PT_CHECK_INT(o.loss, PT_COST_LOSS_LOG);
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &c, NULL), 0);
	got = pt_cost_coef(c);
	f = got[PT_TERM_PAGES] / coef[PT_TERM_PAGES];
	PT_CHECK(f > 0);
	for (k = 0; k < PT_TERM_COUNT; k++) {
		PT_CHECK(got[k] >= 0);
		PT_CHECK(fabs(got[k] - f * coef[k]) <=
			 1e-5 * f * (coef[k] + 1e-3));
	}
	/* the common scale: geometric means of predictions and runtimes */
	for (i = 0; i < N; i++) {
		lm += log(ms[i]) / N;
		lp += log(pt_cost_predict(c, &terms[i * PT_TERM_COUNT])) / N;
	}
	PT_CHECK(fabs(lm - lp) < 1e-9);
	pt_cost_free(c);
}

/* Under the log loss a term that only makes runtimes shorter gets 0, and
 * an unknown loss is refused. */
PT_TEST(log_nonnegative)
{
	enum { N = 300 };
	static double terms[N * PT_TERM_COUNT], ms[N];
	static int group[N];
	double coef[PT_TERM_COUNT] = { 0 };
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	struct pt_cost *c = NULL;
	struct pt_error err = PT_ERROR_INIT;
	size_t i;
	int k;

	coef[PT_TERM_STORES] = 1;
	coef[PT_TERM_LOOPS] = 0.5;
	make_rows(N, coef, terms, ms, group);
	for (i = 0; i < N; i++)
		ms[i] /= 1 + terms[i * PT_TERM_COUNT + PT_TERM_ALLOCS] / 500;
	o.trees = 0;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &c, NULL), 0);
	for (k = 0; k < PT_TERM_COUNT; k++)
		PT_CHECK(pt_cost_coef(c)[k] >= 0);
	PT_CHECK(pt_cost_coef(c)[PT_TERM_ALLOCS] == 0);
	PT_CHECK(pt_cost_coef(c)[PT_TERM_STORES] > 0);
	pt_cost_free(c);
	o.loss = 7;
	c = (struct pt_cost *)1;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &c, &err),
		     PT_EINVAL);
	PT_CHECK(c == NULL && strstr(err.msg, "loss") != NULL);
}

PT_TEST(fit_rejects)
{
	double terms[2 * PT_TERM_COUNT] = { 0 }, ms[2] = { 1, 0 };
	int group[2] = { 0, 0 };
	struct pt_cost *c = (struct pt_cost *)1;
	struct pt_error err = PT_ERROR_INIT;

	PT_CHECK_INT(pt_cost_fit(terms, ms, group, 0, NULL, &c, &err), PT_EINVAL);
	PT_CHECK(c == NULL);
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, 2, NULL, &c, &err), PT_EINVAL);
	PT_CHECK(strstr(err.msg, "sample 1") != NULL);
	ms[1] = 1;
	terms[PT_TERM_COUNT + 3] = NAN;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, 2, NULL, &c, &err), PT_EINVAL);
	PT_CHECK(strstr(err.msg, pt_term_name(3)) != NULL);
}

/* A runtime with a factor the weighted sum cannot express (it doubles when
 * tasks outnumber stages): the trees must rank better than the linear
 * layer alone, within each group. */
PT_TEST(trees_help)
{
	enum { N = 1200, G = 6 };
	static double terms[N * PT_TERM_COUNT], ms[N];
	static int group[N];
	static double pl[N], pt[N], meas[N];
	double coef[PT_TERM_COUNT] = { 0 }, sl = 0, st = 0;
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	struct pt_cost *lin = NULL, *tr = NULL;
	size_t i;
	int g;

	coef[PT_TERM_VECTOR_OPS] = 1;
	coef[PT_TERM_LINES] = 1;
	make_rows(N, coef, terms, ms, group);
	for (i = 0; i < N; i++) {
		group[i] = (int)(i % G);
		if (terms[i * PT_TERM_COUNT + PT_TERM_TASKS] >
		    terms[i * PT_TERM_COUNT + PT_TERM_STAGES])
			ms[i] *= 3;
	}
	o.trees = 0;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &lin, NULL), 0);
	o.trees = 100;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &tr, NULL), 0);
	PT_CHECK(pt_cost_has_trees(tr));
	for (g = 0; g < G; g++) {
		size_t n = 0;

		for (i = 0; i < N; i++) {
			if (group[i] != g)
				continue;
			pl[n] = pt_cost_predict(lin, &terms[i * PT_TERM_COUNT]);
			pt[n] = pt_cost_predict(tr, &terms[i * PT_TERM_COUNT]);
			meas[n++] = ms[i];
		}
		sl += pt_cost_spearman(pl, meas, n) / G;
		st += pt_cost_spearman(pt, meas, n) / G;
	}
	PT_CHECK(st > sl + 0.05);
	PT_CHECK(st > 0.9);
	pt_cost_free(lin);
	pt_cost_free(tr);
}

static int same_text(const struct pt_cost *c)
{
	struct pt_strbuf a = PT_STRBUF_INIT, b = PT_STRBUF_INIT;
	struct pt_cost *d = NULL;
	int ok;

	ok = !pt_cost_write(c, &a) &&
	     !pt_cost_parse(a.buf, a.len, "a.cost", &d, NULL) &&
	     !pt_cost_write(d, &b) && a.len == b.len &&
	     !memcmp(a.buf, b.buf, a.len);
	pt_cost_free(d);
	pt_strbuf_release(&a);
	pt_strbuf_release(&b);
	return ok;
}

PT_TEST(text_round_trip)
{
	enum { N = 200 };
	static double terms[N * PT_TERM_COUNT], ms[N];
	static int group[N];
	double coef[PT_TERM_COUNT] = { 0 };
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	struct pt_cost *c = NULL;

	coef[PT_TERM_PAGES] = 0.1;
	coef[PT_TERM_SCALAR_OPS] = 0.01;
	make_rows(N, coef, terms, ms, group);
	o.trees = 0;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &c, NULL), 0);
	PT_CHECK(same_text(c));
	pt_cost_free(c);
	o.trees = 20;
	PT_CHECK_INT(pt_cost_fit(terms, ms, group, N, &o, &c, NULL), 0);
	PT_CHECK(same_text(c));
	pt_cost_free(c);
}

static void refused(const char *text, const char *want)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cost *c = (struct pt_cost *)1;

	PT_CHECK_INT(pt_cost_parse(text, strlen(text), "w.cost", &c, &err),
		  PT_EFORMAT);
	PT_CHECK(c == NULL);
	if (!PT_CHECK(strstr(err.msg, want) != NULL))
		fprintf(stderr, "# message: %s\n# wanted: %s\n", err.msg,
			want);
}

PT_TEST(parse_errors)
{
	struct pt_strbuf good = PT_STRBUF_INIT, bad = PT_STRBUF_INIT;
	char *p;
	int k;

	pt_strbuf_addf(&good, "protune-cost %d\nfeatures %d\n",
		       PT_COST_FORMAT_VERSION, PT_FEAT_VERSION);
	for (k = 0; k < PT_TERM_COUNT; k++)
		pt_strbuf_addf(&good, "term %s 0.5\n", pt_term_name(k));
	{
		struct pt_cost *c = NULL;

		PT_CHECK_INT(pt_cost_parse(good.buf, good.len, "w.cost", &c,
					NULL), 0);
		PT_CHECK(c && pt_cost_coef(c)[3] == 0.5);
		pt_cost_free(c);
	}
	refused("", "w.cost");
	refused("protune-cost 8\n", "w.cost:1: cost model format 8");
	refused("protune-cost 6\n", "w.cost:1: cost model format 6, this protune reads 7: train it again");
	{
		char head[64];

		snprintf(head, sizeof(head), "protune-cost %d\nfeatures 999\n",
			 PT_COST_FORMAT_VERSION);
		refused(head, "w.cost:2: fitted to features version 999");
	}
	/* A term out of order, a negative and a non-finite weight. */
	pt_strbuf_addstr(&bad, good.buf);
	p = strstr(bad.buf, "term vector_ops");
	memcpy(p, "term vector_opz", 15);
	refused(bad.buf, "w.cost:4: unexpected 'vector_opz' (expected 'vector_ops')");
	pt_strbuf_reset(&bad);
	pt_strbuf_addstr(&bad, good.buf);
	p = strstr(bad.buf, "term vector_loads 0.5");
	memcpy(p, "term vector_loads -.5", 21);
	refused(bad.buf, "w.cost:6: bad coefficient '-.5'");
	pt_strbuf_reset(&bad);
	pt_strbuf_addstr(&bad, good.buf);
	p = strstr(bad.buf, "term vector_loads 0.5");
	memcpy(p, "term vector_loads inf", 21);
	refused(bad.buf, "w.cost:6: bad coefficient 'inf'");
	pt_strbuf_reset(&bad);
	pt_strbuf_addstr(&bad, good.buf);
	pt_strbuf_addstr(&bad, "junk\n");
	{
		char want[32];

		/* the line after the header (2) and the terms */
		snprintf(want, sizeof(want), "w.cost:%d:", 3 + PT_TERM_COUNT);
		refused(bad.buf, want);
	}
	/* a file of the terms before broadcasts were counted apart */
	pt_strbuf_reset(&bad);
	pt_strbuf_addstr(&bad, good.buf);
	p = strstr(bad.buf, "term broadcasts");
	memcpy(p, "term broadcastz", 15);
	refused(bad.buf, "w.cost:8: unexpected 'broadcastz' (expected 'broadcasts')");
	pt_strbuf_release(&good);
	pt_strbuf_release(&bad);
}

PT_TEST(ranking_statistics)
{
	double a[5] = { 1, 2, 3, 4, 5 }, b[5] = { 10, 20, 30, 40, 50 };
	double r[5] = { 5, 4, 3, 2, 1 }, t[5] = { 1, 1, 2, 2, 3 };
	double p[4] = { 3, 1, 2, 4 }, m[4] = { 1, 4, 2, 3 };

	PT_CHECK(fabs(pt_cost_spearman(a, b, 5) - 1) < 1e-12);
	PT_CHECK(fabs(pt_cost_spearman(a, r, 5) + 1) < 1e-12);
	/* ties: ranks 1.5 1.5 3.5 3.5 5 against 1..5 */
	PT_CHECK(fabs(pt_cost_spearman(t, a, 5) - 0.9486832980505138) < 1e-9);
	PT_CHECK(pt_cost_spearman(a, (double[]){ 1, 1, 1, 1, 1 }, 5) == 0);
	/* the model picks index 1 (measured 4), the best measured is 1 */
	PT_CHECK(pt_cost_top1_regret(p, m, 4) == 4);
	PT_CHECK(pt_cost_top1_regret(m, m, 4) == 1);
}

/* The terms of real schedules of an example: vectorizing and
 * parallelizing the output of blur lowers the work per core. */
PT_TEST(terms_respond)
{
	struct pt_model *m = NULL;
	struct pt_features *fx = NULL;
	struct pt_cost_prep *prep = NULL;
	struct pt_sched *s1 = NULL, *s2 = NULL;
	double *rows, t1[PT_TERM_COUNT], t2[PT_TERM_COUNT];
	/* walked down the columns, so LLVM does not vectorize them */
	const char *base =
		"protune-schedule 1\nkey %s\n"
		"func f0 root\n  stage 0\n    reorder v1 v0\n"
		"func f1 root\n  stage 0\n    reorder v1 v0\n"
		"func f2 root\n  stage 0\n    reorder v1 v0\n";
	const char *fast =
		"protune-schedule 1\nkey %s\nfunc f0 root\nfunc f1 root\n"
		"func f2 root\n  stage 0\n    split v0 v0o v0i 16 guard\n"
		"    parallel v1\n    vectorize v0i\n";
	char hex[33], buf[512];

	m = pt_test_example("blur");
	PT_REQUIRE(m);
	pt_hash_hex(m->key, hex);
	PT_CHECK_INT(pt_features_new(m, &fx, NULL), 0);
	PT_REQUIRE(pt_cost_prep_new(m, fx, &prep, NULL) == 0);
	rows = calloc((size_t)m->nstages * PT_FEAT_COUNT, sizeof(*rows));
	snprintf(buf, sizeof(buf), base, hex);
	PT_CHECK_INT(pt_sched_parse(buf, strlen(buf), "a", &s1, NULL), 0);
	snprintf(buf, sizeof(buf), fast, hex);
	PT_CHECK_INT(pt_sched_parse(buf, strlen(buf), "b", &s2, NULL), 0);
	PT_CHECK_INT(pt_sched_check(m, s1, NULL), 0);
	PT_CHECK_INT(pt_sched_check(m, s2, NULL), 0);
	PT_CHECK_INT(pt_features_compute(fx, s1, rows, NULL), 0);
	pt_cost_terms(prep, fx, rows, t1);
	PT_CHECK_INT(pt_features_compute(fx, s2, rows, NULL), 0);
	pt_cost_terms(prep, fx, rows, t2);
	PT_CHECK(t1[PT_TERM_STAGES] == 3 && t2[PT_TERM_STAGES] == 3);
	PT_CHECK(t1[PT_TERM_VECTOR_OPS] == 0 && t2[PT_TERM_VECTOR_OPS] > 0);
	PT_CHECK(t2[PT_TERM_SCALAR_OPS] < t1[PT_TERM_SCALAR_OPS]);
	PT_CHECK(t1[PT_TERM_TASKS] == 0 && t2[PT_TERM_TASKS] > 0);
	PT_CHECK(t2[PT_TERM_LINES] < t1[PT_TERM_LINES]);
	free(rows);
	pt_sched_free(s1);
	pt_sched_free(s2);
	pt_cost_prep_free(prep);
	pt_features_free(fx);
	pt_model_free(m);
}

/* The terms of one schedule text of a test example, or -1 in terms[0]
 * when it does not parse or check. */
static void sched_terms(struct pt_model *m, struct pt_features *fx,
			double *rows, const char *fmt, double *terms)
{
	struct pt_sched *s = NULL;
	struct pt_cost_prep *prep = NULL;
	char hex[33], buf[1024];

	terms[0] = -1;
	pt_hash_hex(m->key, hex);
	snprintf(buf, sizeof(buf), fmt, hex);
	if (!PT_CHECK_INT(pt_sched_parse(buf, strlen(buf), "t", &s, NULL), 0) ||
	    !PT_CHECK_INT(pt_sched_check(m, s, NULL), 0) ||
	    !PT_CHECK_INT(pt_features_compute(fx, s, rows, NULL), 0) ||
	    !PT_CHECK_INT(pt_cost_prep_new(m, fx, &prep, NULL), 0)) {
		pt_sched_free(s);
		return;
	}
	pt_cost_terms(prep, fx, rows, terms);
	pt_cost_prep_free(prep);
	pt_sched_free(s);
}

/* The terms of two schedule texts (formats for their key) of test example
 * `name` into t1 and t2; -1 in t[0] when one cannot be costed. */
static void pair_terms(const char *name, const char *s1, const char *s2,
		       double *t1, double *t2)
{
	struct pt_model *m = pt_test_example(name);
	struct pt_features *fx = NULL;
	double *rows = NULL;

	t1[0] = t2[0] = -1;
	if (!PT_CHECK(m != NULL) ||
	    !PT_CHECK_INT(pt_features_new(m, &fx, NULL), 0) ||
	    !PT_CHECK((rows = calloc((size_t)m->nstages * PT_FEAT_COUNT,
				     sizeof(*rows))) != NULL)) {
		pt_features_free(fx);
		pt_model_free(m);
		return;
	}
	sched_terms(m, fx, rows, s1, t1);
	sched_terms(m, fx, rows, s2, t2);
	free(rows);
	pt_features_free(fx);
	pt_model_free(m);
}

/* Matrix multiply, prod(x, y) += a(k, y) * b(x, k) vectorized along x:
 * with k just outside the vector loop the accumulator stays in a register
 * (its load and store are hoisted out of k) and a(k, y) is broadcast once
 * per vector; with the tile loop x_o inside k, a(k, y) is hoisted out of
 * x_o instead and the accumulator goes back to memory every vector. */
PT_TEST(loads_hoisted)
{
	double t1[PT_TERM_COUNT], t2[PT_TERM_COUNT];
	const char *head =
		"protune-schedule 1\nkey %s\nfunc f0 inline\nfunc f1 inline\n"
		"func f2 root\n  stage 1\n    split v0 v0o v0i 8 guard\n";
	char k_in[512], k_out[512];

	snprintf(k_in, sizeof(k_in), "%s%s", head,
		 "    reorder v0i r0 v0o v1\n    vectorize v0i\n"
		 "func f3 root\n");
	snprintf(k_out, sizeof(k_out), "%s%s", head,
		 "    reorder v0i v0o r0 v1\n    vectorize v0i\n"
		 "func f3 root\n");
	pair_terms("matmul", k_in, k_out, t1, t2);
	if (PT_CHECK(t1[0] >= 0 && t2[0] >= 0)) {
		/* the same vectors either way; b(x, k) is loaded every
		 * vector in both, the accumulator only in the second */
		PT_CHECK(t1[PT_TERM_VECTOR_OPS] == t2[PT_TERM_VECTOR_OPS]);
		PT_CHECK(t1[PT_TERM_VECTOR_LOADS] * 1.5 <
			 t2[PT_TERM_VECTOR_LOADS]);
		PT_CHECK(t1[PT_TERM_VECTOR_LOADS] * 2.5 >
			 t2[PT_TERM_VECTOR_LOADS]);
		PT_CHECK(t1[PT_TERM_UPDATE_STORES] * 100 <
			 t2[PT_TERM_UPDATE_STORES]);
		PT_CHECK(t2[PT_TERM_BROADCASTS] * 10 < t1[PT_TERM_BROADCASTS]);
	}
}

/* A Func computed a vector at a time inside loops its region does not
 * move with: matmul's b copied inside prod's y loop, which b(x, k) does
 * not use. Its load is left in no loop of its production, so LLVM hoists
 * it out of y as it hoists b(x, k) read in place: the two schedules load
 * b alike (without the rule the copy loads b once per vector of prod). */
PT_TEST(loads_hoisted_from_site)
{
	double t1[PT_TERM_COUNT], t2[PT_TERM_COUNT];
	const char *tail =
		"func f2 root\n  stage 1\n    split v0 v0o v0i 8 guard\n"
		"    reorder v0i v1 r0 v0o\n    vectorize v0i\n"
		"func f3 root\n";
	char inl[512], at[512];

	snprintf(inl, sizeof(inl), "%s%s",
		 "protune-schedule 1\nkey %s\nfunc f0 inline\n"
		 "func f1 inline\n", tail);
	snprintf(at, sizeof(at), "%s%s",
		 "protune-schedule 1\nkey %s\nfunc f0 inline\n"
		 "func f1 at f2 v1\n  stage 0\n    split v0 v0o v0i 8 guard\n"
		 "    vectorize v0i\n", tail);
	pair_terms("matmul", inl, at, t1, t2);
	if (PT_CHECK(t1[0] >= 0 && t2[0] >= 0)) {
		/* both: the accumulator once a vector of prod, b hoisted
		 * out of y; the copy's read of its buffer too */
		PT_CHECK(t1[PT_TERM_VECTOR_LOADS] > 0);
		PT_CHECK(t2[PT_TERM_VECTOR_LOADS] <
			 t1[PT_TERM_VECTOR_LOADS] * 1.1);
		PT_CHECK(t2[PT_TERM_GATHERS] == 0);
	}
}

/* A read x + dx(r) (doc/model-format.md, partial coordinates), as in
 * max_filter: vectorized along x it is a dense vector load, where the same
 * read described as just non-affine is a gather; and it varies with r, so
 * it is not hoisted out of r's loop (just outside the vector loop) as a
 * read that does not move with r would be. The accumulator's store is
 * hoisted out of r: update_stores counts one a vector. */
static const char partial_model[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"input i0 buffer u8 dims 2 est -8 1552 0 64\n"
	"func f0 types u8 args 2 output\n"
	"  region 0 1536 0 64\n"
	"  stage 0\n"
	"    dim v0 0 1536\n"
	"    dim v1 0 64\n"
	"    def \"f0(v0, v1) = (u8)0\"\n"
	"  stage 1\n"
	"    dim r0 0 4\n"
	"    dim v0 0 1536\n"
	"    dim v1 0 64\n"
	"    op load.u8 2\n"
	"    op max.u8 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1 store\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access i0 value 0 count 1\n"
	"      coord %s\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = max(f0(v0, v1), i0(v0 + r0*r0 - 6, v1)) "
	"rdom r0(0, 4)\"\n";

/* The terms of schedule sched (a format for its key) of the model in
 * text; 0, or -1 when either does not parse or check. */
static int text_terms(const char *text, const char *sched, double *terms)
{
	struct pt_model *m = NULL;
	struct pt_features *fx = NULL;
	double *rows;

	terms[0] = -1;
	if (!PT_CHECK_INT(pt_model_parse(text, strlen(text), "t", &m, NULL),
			  0) ||
	    !PT_CHECK_INT(pt_features_new(m, &fx, NULL), 0)) {
		pt_model_free(m);
		return -1;
	}
	rows = calloc((size_t)m->nstages * PT_FEAT_COUNT, sizeof(*rows));
	sched_terms(m, fx, rows, sched, terms);
	free(rows);
	pt_features_free(fx);
	pt_model_free(m);
	return terms[0] < 0 ? -1 : 0;
}

static int partial_terms(const char *coord, double *terms)
{
	char text[2048];

	snprintf(text, sizeof(text), partial_model, coord);
	return text_terms(text,
			  "protune-schedule 1\nkey %s\nfunc f0 root\n"
			  "  stage 1\n    split v0 v0o v0i 32 guard\n"
			  "    reorder v0i r0 v0o v1\n    vectorize v0i\n",
			  terms);
}

PT_TEST(partial_reads_are_dense)
{
	double part[PT_TERM_COUNT], any[PT_TERM_COUNT], fixed[PT_TERM_COUNT];

	PT_REQUIRE(partial_terms("any 1*v0 + [-6,3] varies r0 clamp "
				 "[-6,1538]", part) == 0);
	PT_REQUIRE(partial_terms("any clamp [-6,1538]", any) == 0);
	PT_REQUIRE(partial_terms("1*v0 + [-6,3]", fixed) == 0);
	/* dense, not gathered */
	PT_CHECK(part[PT_TERM_GATHERS] == 0);
	PT_CHECK(any[PT_TERM_GATHERS] > 0);
	PT_CHECK(part[PT_TERM_VECTOR_LOADS] < any[PT_TERM_GATHERS]);
	/* loaded once per r (4 values): 4 loads a vector, against 1 for a
	 * read that does not move with r (hoisted out of r's loop); both
	 * add the accumulator's load, hoisted out of r, 1 a vector */
	PT_CHECK(part[PT_TERM_VECTOR_LOADS] > 2 * fixed[PT_TERM_VECTOR_LOADS]);
	PT_CHECK(part[PT_TERM_VECTOR_LOADS] ==
		 5 * part[PT_TERM_UPDATE_STORES]);
}

/* An accumulator f0(x, y) += i0(r) swept down all 130 rows of f0 (800
 * bytes apart), a vector each, for every r: 130 lines spread over L1's
 * sets, still there when r comes back, so the walk across the rows
 * restarts once per 300 steps of r. With r outside the row's vectors
 * instead, every vector restarts it. */
static const char acc_model[] =
	"protune-model 1\nhalide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-fma-sse41\"\n"
	"machine-params \"8,16777216,40\"\n"
	"input i0 buffer f32 dims 1 est 0 300\n"
	"func f0 types f32 args 2 output\n"
	"  region 0 200 0 130\n"
	"  stage 0\n"
	"    dim v0 0 200\n"
	"    dim v1 0 130\n"
	"    def \"f0(v0, v1) = 0.0f\"\n"
	"  stage 1\n"
	"    dim r0 0 300\n"
	"    dim v0 0 200\n"
	"    dim v1 0 130\n"
	"    op add.f32 1\n"
	"    op load.f32 2\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1 store\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*r0 + [0,0]\n"
	"    def \"f0(v0, v1) = (f0(v0, v1) + i0(r0)) rdom r0(0, 300)\"\n";

PT_TEST(strided_reuse)
{
	double in[PT_TERM_COUNT], out[PT_TERM_COUNT];
	const char *fmt = "protune-schedule 1\nkey %%s\nfunc f0 root\n"
		"  stage 1\n    split v0 v0o v0i 8 guard\n"
		"    reorder %s\n    vectorize v0i\n";
	char a[256], b[256];

	snprintf(a, sizeof(a), fmt, "v0i v1 r0 v0o");
	snprintf(b, sizeof(b), fmt, "v0i v1 v0o r0");
	PT_REQUIRE(text_terms(acc_model, a, in) == 0);
	PT_REQUIRE(text_terms(acc_model, b, out) == 0);
	PT_CHECK(in[PT_TERM_STRIDED_LOADS] > 0);
	/* the same accesses, 300 times fewer restarts */
	PT_CHECK(fabs(in[PT_TERM_STRIDED_LOADS] * 300 /
		      out[PT_TERM_STRIDED_LOADS] - 1) < 1e-9);
}

/* Page faults from allocations (`pages`): glibc's heap keeps the memory
 * of one run for the next, unless freeing leaves at its top twice the
 * largest block ever mapped; blocks over 32 MiB are mapped afresh every
 * time. f0 and f1 are W x 1024 f32 buffers when computed at root. */
static const char heap_model[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"input i0 buffer f32 dims 2 est 0 %d 0 1024\n"
	"func f0 types f32 args 2 inline\n"
	"  region 0 %d 0 1024\n"
	"  stage 0\n"
	"    dim v0 0 %d\n"
	"    dim v1 0 1024\n"
	"    op add.f32 1\n"
	"    op load.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = i0(v0, v1) + 1.0f\"\n"
	"func f1 types f32 args 2 inline\n"
	"  region 0 %d 0 1024\n"
	"  stage 0\n"
	"    dim v0 0 %d\n"
	"    dim v1 0 1024\n"
	"    op add.f32 1\n"
	"    op load.f32 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = f0(v0, v1) + 1.0f\"\n"
	"func f2 types f32 args 2 output\n"
	"  region 0 %d 0 1024\n"
	"  stage 0\n"
	"    dim v0 0 %d\n"
	"    dim v1 0 1024\n"
	"    op load.f32 1\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f2(v0, v1) = f1(v0, v1)\"\n";

/* Term `t` of heap_model W columns wide with f0 and f1 at the given
 * sites and f2 at root. */
static double heap_term(int w, const char *f0, const char *f1, int t)
{
	double terms[PT_TERM_COUNT];
	char text[2048], sched[256];

	snprintf(text, sizeof(text), heap_model, w, w, w, w, w, w, w);
	snprintf(sched, sizeof(sched),
		 "protune-schedule 1\nkey %%s\nfunc f0 %s\nfunc f1 %s\n"
		 "func f2 root\n", f0, f1);
	return text_terms(text, sched, terms) ? -1 : terms[t];
}

/* f0's own `strided_loads` (stage 0's share) in heap_model 1024 columns
 * wide, f0 computed inside f1 at `site`, f1 tiled 16 columns by 2 rows in
 * loop order `order` (innermost first), f2 at root; -1 on failure. */
static double site_walk_strided(const char *site, const char *order)
{
	struct pt_model *m = NULL;
	struct pt_features *fx = NULL;
	struct pt_cost_prep *prep = NULL;
	struct pt_sched *s = NULL;
	double *rows = NULL, *per = NULL, terms[PT_TERM_COUNT], r = -1;
	char text[2048], sched[512], hex[33];

	snprintf(text, sizeof(text), heap_model, 1024, 1024, 1024, 1024, 1024,
		 1024, 1024);
	if (!PT_CHECK_INT(pt_model_parse(text, strlen(text), "t", &m, NULL),
			  0))
		return -1;
	pt_hash_hex(m->key, hex);
	snprintf(sched, sizeof(sched),
		 "protune-schedule 1\nkey %s\nfunc f0 at f1 %s\nfunc f1 root\n"
		 "  stage 0\n    split v0 v0o v0i 16 guard\n"
		 "    split v1 v1o v1i 2 guard\n    reorder %s\n"
		 "    vectorize v0i\nfunc f2 root\n", hex, site, order);
	rows = calloc((size_t)m->nstages * PT_FEAT_COUNT, sizeof(*rows));
	per = calloc((size_t)m->nstages * PT_TERM_COUNT, sizeof(*per));
	if (PT_CHECK(rows && per) &&
	    PT_CHECK_INT(pt_features_new(m, &fx, NULL), 0) &&
	    PT_CHECK_INT(pt_sched_parse(sched, strlen(sched), "t", &s, NULL),
			 0) &&
	    PT_CHECK_INT(pt_sched_check(m, s, NULL), 0) &&
	    PT_CHECK_INT(pt_features_compute(fx, s, rows, NULL), 0) &&
	    PT_CHECK_INT(pt_cost_prep_new(m, fx, &prep, NULL), 0)) {
		pt_cost_stage_terms(prep, fx, rows, terms, per);
		r = per[PT_TERM_STRIDED_LOADS];
	}
	pt_cost_prep_free(prep);
	pt_sched_free(s);
	pt_features_free(fx);
	free(per);
	free(rows);
	pt_model_free(m);
	return r;
}

/* The walk of a Func computed inside a consumer goes on through the
 * consumer's loops around the compute site: f0 (2 rows by 16 columns a
 * production) inside f1's loop down the rows of a 16-column strip comes
 * back to each row of the 4 MiB input only after 1024 rows, one restart
 * per row of every production; inside f1's loop along the rows, the
 * productions of a row continue its run, 64 times fewer restarts. Its
 * own loops alone (2 rows) counted none. */
PT_TEST(strided_site_walk)
{
	double down = site_walk_strided("v1o", "v0i v1i v1o v0o");
	double along = site_walk_strided("v0o", "v0i v1i v0o v1o");

	PT_CHECK(down > 0);
	PT_CHECK(along > 0);
	PT_CHECK(fabs(down / along - 64) < 1e-9);
}

/* `strided_loads` of f0(x, y) = i0(x, y) + ... + i{n-1}(x, y), the
 * inputs 1024 x 1024 f32 (4 MiB each, 2/3 of it beyond L2 by miss()),
 * computed a vector (16 lanes, one line) at a time in tiles of `rows`
 * rows walked along the rows; `wide`: 4 vectors a row of the tile. */
static double burst_strided(int n, int rows, int wide)
{
	char text[4096], sched[512], *o = text, *end = text + sizeof(text);
	double terms[PT_TERM_COUNT];
	int k;

	o += snprintf(o, (size_t)(end - o), "protune-model 1\n"
		      "halide \"14.0.0\"\n"
		      "target \"x86-64-linux-avx-avx2-fma-sse41\"\n"
		      "machine-params \"1,16777216,40\"\n");
	for (k = 0; k < n; k++)
		o += snprintf(o, (size_t)(end - o), "input i%d buffer f32 "
			      "dims 2 est 0 1024 0 1024\n", k);
	o += snprintf(o, (size_t)(end - o), "func f0 types f32 args 2 output\n"
		      "  region 0 1024 0 1024\n  stage 0\n"
		      "    dim v0 0 1024\n    dim v1 0 1024\n"
		      "    op add.f32 %d\n    op load.f32 %d\n", n - 1, n);
	for (k = 0; k < n; k++)
		o += snprintf(o, (size_t)(end - o), "    access i%d value 0 "
			      "count 1\n      coord 1*v0 + [0,0]\n"
			      "      coord 1*v1 + [0,0]\n", k);
	snprintf(o, (size_t)(end - o), "    def \"f0(v0, v1) = i0(v0, v1)\"\n");
	o = sched + snprintf(sched, sizeof(sched), "protune-schedule 1\n"
			     "key %%s\nfunc f0 root\n  stage 0\n"
			     "    split v0 v0o v0i 16 guard\n%s",
			     wide ? "    split v0o v0oo v0oi 4 guard\n" : "");
	if (rows > 1)
		snprintf(o, sizeof(sched) - (size_t)(o - sched),
			 "    split v1 v1o v1i %d guard\n"
			 "    reorder v0i %sv1i %s v1o\n    vectorize v0i\n",
			 rows, wide ? "v0oi " : "", wide ? "v0oo" : "v0o");
	else
		snprintf(o, sizeof(sched) - (size_t)(o - sched),
			 "    vectorize v0i\n");
	return text_terms(text, sched, terms) ? -1 : terms[PT_TERM_STRIDED_LOADS];
}

/* Short bursts: 8 inputs read a line at a time down 4 rows interleave
 * 32 rows (21.3 weighted by how far they live), more than the 16 the
 * prefetchers follow: a quarter of the bursts restart their stream, on
 * top of the restarts of the walk down all 1024 rows, which are those of
 * a walk a row at a time. With 2 inputs, with one row, or with 4 lines
 * a row (a burst of 256 bytes), none. */
PT_TEST(short_bursts)
{
	double nv = 1024.0 * 1024 / 16, f = 2.0 / 3;
	double r4 = burst_strided(8, 4, 0), r1 = burst_strided(8, 1, 0);
	double wide = burst_strided(8, 4, 1);

	PT_REQUIRE(r4 > 0 && r1 > 0 && wide > 0);
	PT_CHECK(fabs((r4 - r1) / (nv * 8 * f * (32 * f - 16) / (32 * f)) -
		      1) < 1e-9);
	PT_CHECK(fabs(wide / r1 - 1) < 1e-9);
	PT_CHECK(fabs(burst_strided(2, 4, 0) / burst_strided(2, 1, 0) - 1) <
		 1e-9);
}

static double heap_pages(int w, const char *f0, const char *f1)
{
	return heap_term(w, f0, f1, PT_TERM_PAGES);
}

PT_TEST(allocs_heap_only)
{
	/* a row of f1 per row of f2: 8 KiB, on the stack (Halide 14 keeps
	 * constant buffers of up to 16 KiB there), or 32 KiB, malloc'd
	 * 1024 times a run; f0 at root once */
	PT_CHECK(heap_term(2048, "inline", "at f2 v1", PT_TERM_ALLOCS) == 0);
	PT_CHECK(heap_term(8192, "inline", "at f2 v1", PT_TERM_ALLOCS) ==
		 1024);
	PT_CHECK(heap_term(2048, "root", "inline", PT_TERM_ALLOCS) == 1);
}

PT_TEST(heap_pages_reused)
{
	/* one 8 MiB buffer: reused from run to run */
	PT_CHECK(heap_pages(2048, "root", "inline") == 0);
	/* two: freeing both leaves 16 MiB at the top, the trim threshold:
	 * both are touched afresh every run, less the 128 KiB kept */
	PT_CHECK(heap_pages(2048, "root", "root") ==
		 (16384.0 - 128) * 1024 / 4096);
	/* one, and a row of f1 allocated and freed above it, 1024 times a
	 * run: the top stays under the threshold, nothing is trimmed */
	PT_CHECK(heap_pages(2048, "root", "at f2 v1") == 0);
	/* 64 MiB: mapped afresh every time */
	PT_CHECK(heap_pages(16384, "root", "inline") == 65536.0 * 1024 / 4096);
}

/* `pages` of heap_model W columns wide (its input's estimate IW wide)
 * with f0 and f1 at the given sites and f2 at root with the given lines. */
static double heap_pages_at(int w, int iw, const char *f0, const char *f1,
			    const char *f2)
{
	double terms[PT_TERM_COUNT];
	char text[2048], sched[512];

	snprintf(text, sizeof(text), heap_model, iw, w, w, w, w, w, w);
	snprintf(sched, sizeof(sched),
		 "protune-schedule 1\nkey %%s\nfunc f0 %s\nfunc f1 %s\n"
		 "func f2 root\n%s", f0, f1, f2);
	return text_terms(text, sched, terms) ? -1 : terms[PT_TERM_PAGES];
}

PT_TEST(heap_pages_realized)
{
	static const char halves[] =
		"  stage 0\n    split v1 v1o v1i 512 shift\n";

	/* f0 and f1 computed per half of f2's rows: 4 MiB each, allocated
	 * together and freed together at the end of each half, which leaves
	 * 8 MiB at the top, over twice the threshold (4 MiB, from their
	 * first mappings): the top is trimmed and both halves touch the
	 * blocks afresh, less the 128 KiB kept */
	PT_CHECK(heap_pages_at(2048, 2048, "at f2 v1o", "at f2 v1o", halves) ==
		 2 * (8192.0 - 128) * 1024 / 4096);
	/* one of them: 4 MiB at the top stays under the trim, and the
	 * second half reuses the first half's block */
	PT_CHECK(heap_pages_at(2048, 2048, "inline", "at f2 v1o", halves) ==
		 0);
	/* the input's estimate is wider than what is read: RunGen replaces
	 * the input and frees the first one, 8.1 MiB, mapped; the threshold
	 * starts there and the 8 MiB at the top stay */
	PT_CHECK(heap_pages_at(2048, 2064, "at f2 v1o", "at f2 v1o", halves) ==
		 0);
}

/* `pages` of a chain i0 -> f0 -> f1 -> f2 -> f3 (the output) of 2048 x
 * 1024 f32 Funcs (8 MiB), f0 to f2 at the given sites. */
static double chain4_pages(const char *f0, const char *f1, const char *f2)
{
	double terms[PT_TERM_COUNT];
	char text[4096], sched[512];
	int n, k;

	n = snprintf(text, sizeof(text),
		     "protune-model 1\nhalide \"14.0.0\"\n"
		     "target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
		     "machine-params \"2,16777216,40\"\n"
		     "input i0 buffer f32 dims 2 est 0 2048 0 1024\n");
	for (k = 0; k < 4; k++) {
		char in[8];

		snprintf(in, sizeof(in), k ? "f%d" : "i0", k - 1);
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "func f%d types f32 args 2 %s\n"
			      "  region 0 2048 0 1024\n  stage 0\n"
			      "    dim v0 0 2048\n    dim v1 0 1024\n"
			      "    op add.f32 1\n    op load.f32 1\n"
			      "    access %s value 0 count 1\n"
			      "      coord 1*v0 + [0,0]\n"
			      "      coord 1*v1 + [0,0]\n"
			      "    def \"f%d(v0, v1) = %s(v0, v1) + 1.0f\"\n",
			      k, k == 3 ? "output" : "inline", in, k, in);
	}
	snprintf(sched, sizeof(sched),
		 "protune-schedule 1\nkey %%s\nfunc f0 %s\nfunc f1 %s\n"
		 "func f2 %s\nfunc f3 root\n", f0, f1, f2);
	return text_terms(text, sched, terms) ? -1 : terms[PT_TERM_PAGES];
}

PT_TEST(heap_pages_freed_early)
{
	/* f0 is freed after f1's production, where its last reader runs,
	 * and f2 takes its block: the top holds at most f1 and f2, 16 MiB,
	 * the trim threshold (twice the 8 MiB mapped by the first run), so
	 * the last free trims 16 MiB less the 128 KiB kept (before, all
	 * three stayed until the output ran: 24 MiB trimmed) */
	PT_CHECK(chain4_pages("root", "root", "root") ==
		 (16384.0 - 128) * 1024 / 4096);
	/* f1 inlined into f2: f0 is read in f2's production, and f2 cannot
	 * take its block; 16 MiB at the top all the same */
	PT_CHECK(chain4_pages("root", "inline", "root") ==
		 (16384.0 - 128) * 1024 / 4096);
	/* f2 inlined into the output: f0 is freed before the output runs,
	 * but the free of f1 merges its block with f0's below it: 16 MiB
	 * at the top again */
	PT_CHECK(chain4_pages("root", "root", "inline") ==
		 (16384.0 - 128) * 1024 / 4096);
}

PT_TEST(heap_pages_pinned)
{
	/* In the first run f0 and f1 are mapped (8 MiB, above the first
	 * threshold) and their frees raise the threshold to 8 MiB and a
	 * page; f2 then goes on the heap. With f2's rows in parallel the
	 * thread pool starts in its production and its few bytes stay on
	 * the top above f2's block: from the second run on, f0 takes that
	 * block, f1 the top, f2 f0's block, and the free of f1 leaves 8 MiB
	 * at the top, below the trim threshold: nothing is trimmed (all
	 * serial: 16 MiB less the 128 KiB kept, every run) */
	PT_CHECK(chain4_pages("root", "root",
			      "root\n  stage 0\n    parallel v1") == 0);
	/* the pool starting in f1's production, while the heap is empty
	 * (f0 and f1 mapped), pins nothing: the same as all serial */
	PT_CHECK(chain4_pages("root", "root\n  stage 0\n    parallel v1",
			      "root") == (16384.0 - 128) * 1024 / 4096);
}

/* The terms of heap_model 2048 columns wide with f0 inlined and the
 * given lines for f1 (from its site on, each line ended) and f2's
 * stages. */
static int chain_terms(const char *f1, const char *f2, double *terms)
{
	char text[2048], sched[512];

	snprintf(text, sizeof(text), heap_model, 2048, 2048, 2048, 2048, 2048,
		 2048, 2048);
	snprintf(sched, sizeof(sched),
		 "protune-schedule 1\nkey %%s\nfunc f0 inline\nfunc f1 %s"
		 "func f2 root\n%s", f1, f2);
	return text_terms(text, sched, terms);
}

PT_TEST(loops_and_registers)
{
	static const char vec8[] =
		"  stage 0\n    split v0 v0o v0i 8 guard\n    vectorize v0i\n";
	const double vecs = 2048.0 * 1024 / 8;  /* vectors of one Func */
	double inl[PT_TERM_COUNT], unr[PT_TERM_COUNT], reg[PT_TERM_COUNT],
		row[PT_TERM_COUNT];
	char f1_at[128];

	PT_REQUIRE(chain_terms("inline\n", vec8, inl) == 0);
	PT_REQUIRE(chain_terms("inline\n",
			       "  stage 0\n    split v0 v0o v0i 8 guard\n"
			       "    split v0o v0oo v0oi 4 guard\n"
			       "    vectorize v0i\n    unroll v0oi\n", unr) == 0);
	/* f1 a vector at a time inside f2's innermost loop, or a row at a
	 * time */
	snprintf(f1_at, sizeof(f1_at), "at f2 v0o\n%s", vec8);
	PT_REQUIRE(chain_terms(f1_at, vec8, reg) == 0);
	snprintf(f1_at, sizeof(f1_at), "at f2 v1\n%s", vec8);
	PT_REQUIRE(chain_terms(f1_at, vec8, row) == 0);
	/* loops: iterations of the innermost loop that is not vectorized or
	 * unrolled (before: one per vector, unrolled or not) */
	PT_CHECK(inl[PT_TERM_LOOPS] == vecs);
	PT_CHECK(unr[PT_TERM_LOOPS] == vecs / 4);
	/* a Func with no loop of its own adds none */
	PT_CHECK(reg[PT_TERM_LOOPS] == vecs);
	PT_CHECK(row[PT_TERM_LOOPS] == 2 * vecs);
	/* ... and its one-vector buffer is a register: no stores and no
	 * loads of it, where a row of it is stored and loaded back */
	PT_CHECK(inl[PT_TERM_STORES] == vecs);
	PT_CHECK(reg[PT_TERM_STORES] == vecs);
	PT_CHECK(row[PT_TERM_STORES] == 2 * vecs);
	PT_CHECK(reg[PT_TERM_VECTOR_LOADS] == vecs);
	PT_CHECK(row[PT_TERM_VECTOR_LOADS] == 2 * vecs);
}

/* A stencil f0 reads i0 clamped to the image: Halide partitions the
 * outermost loop over x into a steady state without the clamp and
 * boundary iterations that keep it, where a vector's clamped lanes are
 * loaded one at a time. The outer loop of 32-wide vectors has 2 of its
 * 32 iterations on an edge; tiles of 256 have 2 of 4. Computed in its
 * consumer f1's tiles, f0's own split x follows the tile (f1's tile loop
 * is the one partitioned). */
static const char clamp_model[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"input i0 buffer u8 dims 1 est 0 1024\n"
	"func f0 types u8 args 1\n"
	"  region 0 1024\n"
	"  stage 0\n"
	"    dim v0 0 1024\n"
	"    op load.u8 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [-1,1]%s\n"
	"    def \"f0(v0) = i0(clamp(v0 + 1, 0, 1023))\"\n"
	"func f1 types u8 args 1 output\n"
	"  region 0 1024\n"
	"  stage 0\n"
	"    dim v0 0 1024\n"
	"    op load.u8 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f1(v0) = f0(v0)\"\n";

static int clamp_terms(const char *clamp, const char *f0, const char *f1,
		       double *terms)
{
	char text[2048], sched[512];

	snprintf(text, sizeof(text), clamp_model, clamp);
	snprintf(sched, sizeof(sched), "protune-schedule 1\nkey %%s\n"
		 "func f0 %s\n  stage 0\n    split v0 v0o v0i 32 guard\n"
		 "    vectorize v0i\n"
		 "func f1 root\n  stage 0\n    split v0 v0o v0i 32 guard\n"
		 "%s    vectorize v0i\n", f0, f1);
	return text_terms(text, sched, terms);
}

PT_TEST(boundary_gathers)
{
	double vec[PT_TERM_COUNT], tile[PT_TERM_COUNT], none[PT_TERM_COUNT];
	double at[PT_TERM_COUNT];
	const char *tiles = "    split v0o v0oo v0oi 8 shift\n";

	PT_REQUIRE(clamp_terms(" clamp [0,1023]", "root", "", vec) == 0);
	PT_REQUIRE(clamp_terms(" clamp [0,1023]", "root", tiles, tile) == 0);
	PT_REQUIRE(clamp_terms("", "root", "", none) == 0);
	PT_REQUIRE(clamp_terms(" clamp [0,1023]", "at f1 v0oo", tiles,
			       at) == 0);
	/* f0's 32 vectors of 32 lanes: 2 of 32 iterations at an edge */
	PT_CHECK(fabs(vec[PT_TERM_BOUNDARY_GATHERS] - 64) < 1e-9);
	PT_CHECK(none[PT_TERM_BOUNDARY_GATHERS] == 0);
	/* f1's own tiles do not move f0, computed at root */
	PT_CHECK(tile[PT_TERM_BOUNDARY_GATHERS] ==
		 vec[PT_TERM_BOUNDARY_GATHERS]);
	/* computed in f1's tiles of 256: 2 of 4 at an edge */
	PT_CHECK(at[PT_TERM_BOUNDARY_GATHERS] >
		 7.9 * vec[PT_TERM_BOUNDARY_GATHERS]);
	PT_CHECK(at[PT_TERM_VECTOR_LOADS] < vec[PT_TERM_VECTOR_LOADS]);
	PT_CHECK(none[PT_TERM_VECTOR_LOADS] > vec[PT_TERM_VECTOR_LOADS]);
}

/* A transcendental call costs the instructions Halide 14 compiles it to:
 * exp_f32 a polynomial of 21 vector instructions a register of floats
 * (21 scalar ones in scalar code), sin a libm call a lane. f0 is u8, so
 * the polynomial's registers follow f32, not the Func's type. */
static const char call_model[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"input i0 buffer f32 dims 1 est 0 4096\n"
	"func f0 types u8 args 1 output\n"
	"  region 0 4096\n"
	"  stage 0\n"
	"    dim v0 0 4096\n"
	"%s"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f0(v0) = u8(i0(v0))\"\n";

static int call_terms(const char *op, int vec, double *terms)
{
	const char *ops[3] = { "cast.u8 1", "load.f32 1", op }, *t;
	char text[2048], lines[128];
	int i, j, n = 0;

	/* the histogram sorted by name */
	for (i = 2; i > 0 && strcmp(ops[i - 1], ops[i]) > 0; i--) {
		t = ops[i - 1];
		ops[i - 1] = ops[i];
		ops[i] = t;
	}
	for (j = 0; j < 3; j++)
		n += snprintf(lines + n, sizeof(lines) - (size_t)n,
			      "    op %s\n", ops[j]);
	snprintf(text, sizeof(text), call_model, lines);
	/* scalar code: the loop left innermost is unrolled, which LLVM's
	 * loop vectorizer leaves alone */
	return text_terms(text, vec ?
			  "protune-schedule 1\nkey %s\nfunc f0 root\n"
			  "  stage 0\n    split v0 v0o v0i 16 guard\n"
			  "    vectorize v0i\n" :
			  "protune-schedule 1\nkey %s\nfunc f0 root\n"
			  "  stage 0\n    split v0 v0o v0i 4 guard\n"
			  "    unroll v0i\n",
			  terms);
}

/* LLVM's loop vectorizer: a stage left scalar whose innermost loop runs
 * along its first pure var, 16 times or more, is vector code of LLVM's
 * width (32 bytes; 32 lanes of f0's u8), with the ops of the same stage
 * vectorized by 32 in the schedule. Scalar when that loop is short, or
 * unrolled. */
PT_TEST(llvm_vectorizer)
{
	/* f0's stage: left scalar; vectorized by 32 in the schedule; a
	 * loop of 8; unrolled; 48 a run (one vector of 32, 16 scalars) */
	static const char *const stage[5] = {
		"",
		"  stage 0\n    split v0 v0o v0i 32 guard\n    vectorize v0i\n",
		"  stage 0\n    split v0 v0o v0i 8 guard\n",
		"  stage 0\n    split v0 v0o v0i 4 guard\n    unroll v0i\n",
		"  stage 0\n    split v0 v0o v0i 48 guard\n",
	};
	char text[2048], sch[256];
	double t[5][PT_TERM_COUNT];
	double *llvm = t[0], *sched = t[1], *shortl = t[2], *unrolled = t[3],
		*tail = t[4];
	int i;

	snprintf(text, sizeof(text), call_model,
		 "    op cast.u8 1\n    op load.f32 1\n");
	for (i = 0; i < 5; i++) {
		snprintf(sch, sizeof(sch),
			 "protune-schedule 1\nkey %%s\nfunc f0 root\n%s",
			 stage[i]);
		PT_REQUIRE(text_terms(text, sch, t[i]) == 0);
	}
	PT_CHECK(llvm[PT_TERM_VECTOR_OPS] > 0);
	PT_CHECK(llvm[PT_TERM_VECTOR_OPS] == sched[PT_TERM_VECTOR_OPS]);
	PT_CHECK(llvm[PT_TERM_SCALAR_OPS] == 0 && sched[PT_TERM_SCALAR_OPS] == 0);
	PT_CHECK(llvm[PT_TERM_STORES] == sched[PT_TERM_STORES]);
	PT_CHECK(llvm[PT_TERM_SCALAR_LOADS] == 0);
	/* the cast, one instruction a point */
	PT_CHECK(shortl[PT_TERM_VECTOR_OPS] == 0 &&
		 shortl[PT_TERM_SCALAR_OPS] == 4096.0);
	PT_CHECK(unrolled[PT_TERM_VECTOR_OPS] == 0 &&
		 unrolled[PT_TERM_SCALAR_OPS] == shortl[PT_TERM_SCALAR_OPS]);
	PT_CHECK(tail[PT_TERM_VECTOR_OPS] > 0 &&
		 tail[PT_TERM_SCALAR_OPS] > 0);
	PT_CHECK(tail[PT_TERM_SCALAR_OPS] < shortl[PT_TERM_SCALAR_OPS] / 2);
}

PT_TEST(transcendental_calls)
{
	double ex[PT_TERM_COUNT], add[PT_TERM_COUNT], sin[PT_TERM_COUNT],
		one[PT_TERM_COUNT];
	double exs[PT_TERM_COUNT], adds[PT_TERM_COUNT], sins[PT_TERM_COUNT];
	int k;

	PT_REQUIRE(call_terms("call.exp_f32 1", 1, ex) == 0);
	PT_REQUIRE(call_terms("add.f32 21", 1, add) == 0);
	PT_REQUIRE(call_terms("call.sin_f32 1", 1, sin) == 0);
	PT_REQUIRE(call_terms("call.abs 1", 1, one) == 0);
	PT_REQUIRE(call_terms("call.exp_f32 1", 0, exs) == 0);
	PT_REQUIRE(call_terms("add.f32 21", 0, adds) == 0);
	PT_REQUIRE(call_terms("call.sin_f32 1", 0, sins) == 0);
	/* vectors of 16 lanes: 256 of them; a u8 cast takes one register,
	 * f32 arithmetic two */
	for (k = 0; k < PT_TERM_COUNT; k++) {
		PT_CHECK(ex[k] == add[k]);
		PT_CHECK(exs[k] == adds[k]);
	}
	PT_CHECK(add[PT_TERM_VECTOR_OPS] == 256.0 * (1 + 21 * 2));
	PT_CHECK(sin[PT_TERM_VECTOR_OPS] == 256.0 * (1 + 34 * 16));
	PT_CHECK(one[PT_TERM_VECTOR_OPS] == 256.0 * (1 + 1));
	PT_CHECK(adds[PT_TERM_SCALAR_OPS] == 4096.0 * (1 + 21));
	PT_CHECK(sins[PT_TERM_SCALAR_OPS] == 4096.0 * (1 + 34));
}

/* Partial states of a search, every depth of random walks from the root:
 * pt_features_compute_partial() writes the rows pt_features_compute()
 * writes with the undecided Funcs' rows zeroed, bit for bit; and
 * pt_cost_terms_partial() prices only the decided Funcs, reading the
 * undecided ones as buffers (never walked through as if inlined): its
 * terms are the decided stages' shares (pt_cost_stage_terms()) of the
 * same schedule with every row computed, in which the undecided Funcs
 * are root buffers. `pages` is the pipeline's, not a stage's, and is left
 * out; `strided_loads` is at most the shares', as an undecided Func is
 * priced as near (it may still be computed in the reader's tiles). */
/* What the tests of partial states walk with: the model (owned), its
 * space, a work area, two states, a features context, the prep and three
 * buffers of m->nstages rows (of PT_FEAT_COUNT or PT_TERM_COUNT). */
struct pwalk {
	struct pt_model *m;
	struct pt_space *sp;
	struct pt_space_work *w;
	struct pt_space_state *st, *ch;
	struct pt_features *fx;
	struct pt_cost_prep *prep;
	double *buf[3];
};

static void pwalk_free(struct pwalk *x)
{
	int i;

	for (i = 0; i < 3; i++)
		free(x->buf[i]);
	pt_cost_prep_free(x->prep);
	pt_features_free(x->fx);
	free(x->st);
	free(x->ch);
	pt_space_work_free(x->w);
	pt_space_free(x->sp);
	pt_model_free(x->m);
}

/* 1 when all of x is made for model m (NULL: a failure). */
static int pwalk_init(struct pwalk *x, struct pt_model *m)
{
	size_t n = m ? (size_t)m->nstages *
		((int)PT_FEAT_COUNT > (int)PT_TERM_COUNT ? (int)PT_FEAT_COUNT :
		 (int)PT_TERM_COUNT) : 0;
	int i;

	memset(x, 0, sizeof(*x));
	x->m = m;
	if (!m || pt_space_new(m, NULL, &x->sp, NULL) ||
	    !(x->w = pt_space_work_new(x->sp)) ||
	    !(x->st = pt_space_state_new(x->sp)) ||
	    !(x->ch = pt_space_state_new(x->sp)) ||
	    pt_features_new(m, &x->fx, NULL) ||
	    pt_cost_prep_new(m, x->fx, &x->prep, NULL))
		return 0;
	for (i = 0; i < 3; i++)
		if (!(x->buf[i] = calloc(n, sizeof(double))))
			return 0;
	return 1;
}

static int partial_matches(const char *name, int walks, int *states)
{
	struct pwalk x;
	struct pt_model *m;
	struct pt_space *sp;
	struct pt_space_work *w;
	struct pt_space_state *st;
	struct pt_features *fx;
	struct pt_cost_prep *prep;
	double *full, *part, *per;
	double tp[PT_TERM_COUNT], tf[PT_TERM_COUNT], sum[PT_TERM_COUNT];
	uint64_t rng = 7;
	int ok = 0, i, k, walk, next;

	if (!pwalk_init(&x, pt_test_example(name)))
		goto out;
	m = x.m;
	sp = x.sp;
	w = x.w;
	st = x.st;
	fx = x.fx;
	prep = x.prep;
	full = x.buf[0];
	part = x.buf[1];
	per = x.buf[2];
	for (walk = 0; walk < walks; walk++) {
		if (pt_space_root(sp, w, st))
			goto out;
		while (!pt_space_next(sp, st, &next, NULL, NULL)) {
			const struct pt_sched *s = NULL;
			size_t row = PT_FEAT_COUNT * sizeof(double);

			if (pt_space_sched_scratch(sp, st, w, &s) ||
			    pt_features_compute(fx, s, full, NULL))
				goto out;
			pt_cost_stage_terms(prep, fx, full, tf, per);
			if (pt_features_compute_partial(fx, s, next, part,
							NULL))
				goto out;
			pt_cost_terms_partial(prep, fx, part, next, NULL, tp);
			memset(sum, 0, sizeof(sum));
			for (i = 0; i < m->nstages; i++) {
				const double *f = &full[i * PT_FEAT_COUNT];
				const double *q = &part[i * PT_FEAT_COUNT];
				int decided = m->stages[i].func >= next;

				for (k = 0; !decided && k < PT_FEAT_COUNT &&
				     q[k] == 0; k++)
					;
				if (decided ? memcmp(f, q, row) != 0 :
				    k < PT_FEAT_COUNT) {
					fprintf(stderr, "  %s: stage %d's row "
						"differs (next Func %d)\n",
						name, i, next);
					goto out;
				}
				for (k = 0; decided && k < PT_TERM_COUNT; k++)
					sum[k] += per[i * PT_TERM_COUNT + k];
			}
			for (k = 0; k < PT_TERM_COUNT; k++)
				if (k == PT_TERM_STRIDED_LOADS ?
				    tp[k] > sum[k] * (1 + 1e-9) + 1e-12 :
				    k != PT_TERM_PAGES &&
				    fabs(tp[k] - sum[k]) >
				    1e-9 * fabs(sum[k]) + 1e-12) {
					fprintf(stderr, "  %s: term %s %g, "
						"decided stages %g (next "
						"Func %d)\n", name,
						pt_term_name(k), tp[k], sum[k],
						next);
					goto out;
				}
			(*states)++;
			if (pt_space_random_child(sp, st, w, &rng, st))
				goto out;
		}
	}
	ok = 1;
out:
	pwalk_free(&x);
	return ok;
}

/* Price partial states of random walks on the space of example `name` at
 * benchmark size (where the heap model's pages vary), and at each
 * state four of its children drawn at random (siblings in a row, as a
 * beam prices them), then random complete states in a row, each without
 * a memo and with one kept across all of them (the heap model's and the
 * stages' terms), then again with it: the terms must be the same bits.
 * Counts the prices compared in *n. */
static int memo_matches(const char *name, int walks, int *n)
{
	struct pwalk x;
	struct pt_space *sp;
	struct pt_space_work *w;
	struct pt_space_state *st, *ch;
	struct pt_features *fx;
	struct pt_cost_prep *prep;
	struct pt_cost_memo *memo = NULL;
	double *rows;
	double t0[PT_TERM_COUNT], t1[PT_TERM_COUNT], t2[PT_TERM_COUNT];
	uint64_t rng = 11;
	int ok = 0, walk, c, next;

	if (!pwalk_init(&x, pt_test_bench_example(name)) ||
	    !(memo = pt_cost_memo_new(x.prep)))
		goto out;
	sp = x.sp;
	w = x.w;
	st = x.st;
	ch = x.ch;
	fx = x.fx;
	prep = x.prep;
	rows = x.buf[0];
	for (walk = 0; walk < 2 * walks; walk++) {
		if (pt_space_root(sp, w, st))
			goto out;
		while (!pt_space_next(sp, st, &next, NULL, NULL)) {
			for (c = 0; c < 5; c++) {
				const struct pt_sched *s = NULL;
				const struct pt_space_state *at = st;
				int first = 0, k;

				if (walk >= walks &&
				    pt_space_random_complete(sp, st, w, &rng,
							     ch))
					goto out;
				if (walk < walks && c &&
				    pt_space_random_child(sp, st, w, &rng, ch))
					goto out;
				if (walk >= walks || c)
					at = ch;
				if (pt_space_next(sp, at, &first, NULL, NULL))
					first = 0;
				if (pt_space_sched_scratch(sp, at, w, &s) ||
				    pt_features_compute_partial(fx, s, first,
								rows, NULL))
					continue;
				pt_cost_terms_partial(prep, fx, rows, first,
						      NULL, t0);
				pt_cost_terms_partial(prep, fx, rows, first,
						      memo, t1);
				pt_cost_terms_partial(prep, fx, rows, first,
						      memo, t2);
				for (k = 0; k < PT_TERM_COUNT; k++)
					if (memcmp(&t0[k], &t1[k], sizeof(t0[k])) ||
					    memcmp(&t0[k], &t2[k], sizeof(t0[k])))
						break;
				if (k < PT_TERM_COUNT) {
					fprintf(stderr, "  %s: %s with the memo "
						"%g and %g, without %g\n",
						name, pt_term_name(k), t1[k],
						t2[k], t0[k]);
					goto out;
				}
				(*n)++;
			}
			if (walk >= walks)
				break;
			if (pt_space_random_child(sp, st, w, &rng, st))
				goto out;
		}
	}
	ok = 1;
out:
	pt_cost_memo_free(memo);
	pwalk_free(&x);
	return ok;
}

/* Featurize states of random walks on the space of `m` (owned), at each
 * state four of its children drawn at random (siblings in a row, as a
 * beam prices them), then random complete states in a row (as MCTS's
 * rollouts), each with the rows kept from the states before (and every
 * other walk with the loops of the Funcs the scratch schedule did not
 * rebuild, by their revisions) and with a second context that forgets
 * them first: the rows must be the same bits, and so must the terms
 * priced from the kept rows with a memo kept across all of them (which
 * takes a stage's terms as the last state's when its row was kept) and
 * from the fresh rows without one. Counts the states compared in *n. */
static int rows_kept_match(struct pt_model *m, int walks, int *n)
{
	struct pwalk x;
	struct pt_features *ref = NULL;
	struct pt_cost_memo *memo = NULL;
	const struct pt_space_state *at;
	double *kept, *fresh;
	double t0[PT_TERM_COUNT], t1[PT_TERM_COUNT];
	size_t bytes;
	uint64_t rng = 5;
	int ok = 0, walk, c, next, i, k, first;

	if (!pwalk_init(&x, m) || pt_features_new(x.m, &ref, NULL) ||
	    !(memo = pt_cost_memo_new(x.prep)))
		goto out;
	kept = x.buf[0];
	fresh = x.buf[1];
	bytes = (size_t)x.m->nstages * PT_FEAT_COUNT * sizeof(double);
	for (walk = 0; walk < 2 * walks; walk++) {
		if (pt_space_root(x.sp, x.w, x.st))
			goto out;
		for (;;) {
			int done = pt_space_next(x.sp, x.st, &next, NULL,
						 NULL) != 0;

			for (c = 0; c < (done ? 1 : 5); c++) {
				const struct pt_sched *s = NULL;

				at = x.st;
				if (walk >= walks &&
				    pt_space_random_complete(x.sp, x.st, x.w,
							     &rng, x.ch))
					goto out;
				if (walk < walks && c &&
				    pt_space_random_child(x.sp, x.st, x.w,
							  &rng, x.ch))
					goto out;
				if (walk >= walks || c)
					at = x.ch;
				if (pt_space_next(x.sp, at, &first, NULL,
						  NULL))
					first = 0;
				if (pt_space_sched_scratch(x.sp, at, x.w, &s))
					goto out;
				pt_features_forget(ref);
				if (pt_features_compute_rev(x.fx, s, first,
							    walk & 1 ?
							    pt_space_scratch_revs(x.w) :
							    NULL, kept, NULL) ||
				    pt_features_compute_partial(ref, s, first,
								fresh, NULL))
					goto out;
				if (memcmp(kept, fresh, bytes)) {
					for (i = 0; i < x.m->nstages *
					     PT_FEAT_COUNT; i++)
						if (memcmp(&kept[i], &fresh[i],
							   sizeof(double)))
							break;
					k = i % PT_FEAT_COUNT;
					fprintf(stderr, "  %s: stage %d's %s "
						"kept %g, computed %g\n",
						x.m->generator,
						i / PT_FEAT_COUNT,
						pt_feat_name(k), kept[i],
						fresh[i]);
					goto out;
				}
				pt_cost_terms_partial(x.prep, x.fx, kept, first,
						      memo, t1);
				pt_cost_terms_partial(x.prep, ref, fresh, first,
						      NULL, t0);
				for (k = 0; k < PT_TERM_COUNT; k++)
					if (memcmp(&t0[k], &t1[k], sizeof(t0[k])))
						break;
				if (k < PT_TERM_COUNT) {
					fprintf(stderr, "  %s: %s kept %g, "
						"computed %g\n",
						x.m->generator, pt_term_name(k),
						t1[k], t0[k]);
					goto out;
				}
				(*n)++;
			}
			if (done || walk >= walks)
				break;
			if (pt_space_random_child(x.sp, x.st, x.w, &rng, x.st))
				goto out;
		}
	}
	ok = 1;
out:
	pt_cost_memo_free(memo);
	pt_features_free(ref);
	pwalk_free(&x);
	return ok;
}

/* stencil_chain with f1 computed in f2, f2 in f5 and f5 in f7 (each at
 * its consumer's v0oo) and f7's middle tile %d wide: the Funcs below f7
 * keep their entries when that width changes, but their regions do not. */
static const char nested_fmt[] =
	"protune-schedule 1\nkey %s\nfunc f0 inline\n"
	"func f1 at f2 v0oo\n  stage 0\n    split v0 v0o v0i 32 guard\n"
	"    vectorize v0i\n"
	"func f2 at f5 v0oo\n  stage 0\n    split v0 v0o v0i 32 round\n"
	"    split v0o v0oo v0oi 8 guard\n    vectorize v0i\n"
	"func f3 at f5 v0oo\n  stage 0\n    split v0 v0o v0i 32 round\n"
	"    split v0o v0oo v0oi 8 guard\n    vectorize v0i\n"
	"func f4 at f5 v0oo\n  stage 0\n    split v0 v0o v0i 32 round\n"
	"    split v0o v0oo v0oi 8 guard\n    vectorize v0i\n"
	"func f5 at f7 v0oo\n  stage 0\n    split v0 v0o v0i 32 round\n"
	"    split v0o v0oo v0oi 16 guard\n    split v1 v1o v1i 128 guard\n"
	"    reorder v0i v0oi v1i v0oo v1o\n    vectorize v0i\n"
	"func f6 at f7 v1\n  stage 0\n    split v0 v0o v0i 32 guard\n"
	"    vectorize v0i\n"
	"func f7 root\n  stage 0\n    split v0 v0o v0i 32 round\n"
	"    split v0o v0oo v0oi %d shift\n    reorder v0i v0oi v1 v0oo\n"
	"    parallel v0oo\n    vectorize v0i\n"
	"func f8 root\nfunc f9 root\nfunc f10 root\nfunc f11 root\n"
	"func f12 root\nfunc f13 root\nfunc f14 root\nfunc f15 root\n"
	"func f16 root\nfunc f17 root\nfunc f18 root\nfunc f19 root\n";

/* Featurize and price, with revisions, two schedules of stencil_chain
 * that differ in f7's tiling only (the Funcs computed inside it keep
 * their revisions), each twice and back and forth, and compare the rows
 * and terms with those of a context and a memo that start afresh. */
PT_TEST(regions_below_a_changed_consumer_are_recomputed)
{
	struct pt_model *m = pt_test_bench_example("stencil_chain");
	struct pt_features *fx = NULL, *ref = NULL;
	struct pt_cost_prep *prep = NULL;
	struct pt_cost_memo *memo = NULL;
	struct pt_sched *s[2] = { NULL, NULL };
	uint64_t rev[2][32];
	double *kept = NULL, *fresh = NULL;
	double t0[PT_TERM_COUNT], t1[PT_TERM_COUNT];
	const int order[] = { 0, 0, 1, 1, 0, 1, 0 };
	char hex[33], buf[2048];
	size_t bytes, i;
	int k, f;

	PT_REQUIRE(m && m->nfuncs == 20);
	pt_hash_hex(m->key, hex);
	for (k = 0; k < 2; k++) {
		snprintf(buf, sizeof(buf), nested_fmt, hex, k ? 16 : 32);
		PT_REQUIRE(pt_sched_parse(buf, strlen(buf), "nested", &s[k],
					  NULL) == 0);
		PT_CHECK_INT(pt_sched_check(m, s[k], NULL), 0);
		for (f = 0; f < 32; f++)
			rev[k][f] = (uint64_t)f + 1;
	}
	rev[1][7] = 100;
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0 &&
		   pt_features_new(m, &ref, NULL) == 0 &&
		   pt_cost_prep_new(m, fx, &prep, NULL) == 0 &&
		   (memo = pt_cost_memo_new(prep)));
	bytes = (size_t)m->nstages * PT_FEAT_COUNT * sizeof(double);
	kept = malloc(bytes);
	fresh = malloc(bytes);
	PT_REQUIRE(kept && fresh);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		k = order[i];
		pt_features_forget(ref);
		PT_CHECK_INT(pt_features_compute_rev(fx, s[k], 0, rev[k], kept,
						     NULL), 0);
		PT_CHECK_INT(pt_features_compute(ref, s[k], fresh, NULL), 0);
		PT_CHECK(!memcmp(kept, fresh, bytes));
		pt_cost_terms_partial(prep, fx, kept, 0, memo, t1);
		pt_cost_terms_partial(prep, ref, fresh, 0, NULL, t0);
		PT_CHECK(!memcmp(t0, t1, sizeof(t0)));
	}
	/* the widths differ where the regions do */
	PT_CHECK(pt_features_compute(ref, s[1], kept, NULL) == 0 &&
		 memcmp(kept, fresh, bytes));
	free(kept);
	free(fresh);
	pt_cost_memo_free(memo);
	pt_cost_prep_free(prep);
	pt_features_free(fx);
	pt_features_free(ref);
	pt_sched_free(s[0]);
	pt_sched_free(s[1]);
	pt_model_free(m);
}

/* The 13 examples. */
static const char *const examples[] = {
	"interpolate", "local_laplacian", "camera_pipe", "unsharp", "blur",
	"harris", "hist_eq", "stencil_chain", "max_filter", "bilateral_grid",
	"matmul", "conv_layer", "iir_blur",
};
#define NEXAMPLES (sizeof(examples) / sizeof(examples[0]))

PT_TEST(rows_kept_are_rows_computed)
{
	size_t i;

	for (i = 0; i < NEXAMPLES; i++) {
		int n = 0;

		PT_CHECK(rows_kept_match(pt_test_example(examples[i]), 16, &n));
		PT_CHECK(n > 80);
		n = 0;
		PT_CHECK(rows_kept_match(pt_test_bench_example(examples[i]), 8,
					 &n));
		PT_CHECK(n > 80);
	}
}

PT_TEST(memo_changes_nothing)
{
	size_t i;

	for (i = 0; i < NEXAMPLES; i++) {
		int n = 0;

		PT_CHECK(memo_matches(examples[i], 4, &n));
		PT_CHECK(n > 80);
	}
}

PT_TEST(partial_states_price_decided_funcs)
{
	static const char *const names[] = {
		"blur", "unsharp", "interpolate", "local_laplacian",
		"camera_pipe", "bilateral_grid", "matmul", "iir_blur",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int states = 0;

		PT_CHECK(partial_matches(names[i], 4, &states));
		PT_CHECK(states > 8);
	}
}

PT_SUITE(cost,
	 { "linear layer recovers known coefficients", linear_recovers },
	 { "linear layer never weighs a term negatively",
	   linear_nonnegative },
	 { "log loss recovers coefficients up to one scale", log_recovers },
	 { "log loss never weighs a term negatively", log_nonnegative },
	 { "fit rejects bad samples", fit_rejects },
	 { "trees rank better where the sum cannot", trees_help },
	 { "text round trip", text_round_trip },
	 { "parse errors name the line", parse_errors },
	 { "spearman and top-1 regret", ranking_statistics },
	 { "page faults: the heap reuses memory until it trims",
	   heap_pages_reused },
	 { "pages: Funcs realized in loops fault again when their frees trim",
	   heap_pages_realized },
	 { "pages: a Func is freed after its last reader's production",
	   heap_pages_freed_early },
	 { "allocs: only buffers over 16 KiB are malloc'd",
	   allocs_heap_only },
	 { "pages: the thread pool's first allocation pins the heap's top",
	   heap_pages_pinned },
	 { "the memo of pages and stage terms changes no price",
	   memo_changes_nothing },
	 { "loops left in the code; buffers promoted to registers",
	   loops_and_registers },
	 { "terms of blur respond to the schedule", terms_respond },
	 { "loads are hoisted out of loops they do not use",
	   loads_hoisted },
	 { "loads are hoisted out of the loops around a production",
	   loads_hoisted_from_site },
	 { "a walk across rows that stay in L1 restarts once",
	   strided_reuse },
	 { "the walk goes on through the loops around the compute site",
	   strided_site_walk },
	 { "reads interleaving too many rows in short bursts restart",
	   short_bursts },
	 { "partial coordinates are dense reads that vary",
	   partial_reads_are_dense },
	 { "clamped loads gather in a partitioned loop's boundary",
	   boundary_gathers },
	 { "a transcendental call costs the instructions it compiles to",
	   transcendental_calls },
	 { "a scalar loop along the rows is vector code LLVM's wide",
	   llvm_vectorizer },
	 { "partial states featurize and price their decided Funcs only",
	   partial_states_price_decided_funcs },
	 { "rows and terms kept from earlier schedules are those computed",
	   rows_kept_are_rows_computed },
	 { "regions below a consumer whose tiling changed are computed again",
	   regions_below_a_changed_consumer_are_recomputed });
