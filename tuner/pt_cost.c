/* pt_cost.c: the cost model (pt_cost.h; doc/cost-model.md).
 *
 * The terms are sums over the stages of a schedule; each is a count of
 * something whose cost is roughly constant on one machine (an operation on
 * a native vector, a cache line moved, an allocation, a task launched),
 * divided by the speedup the stage gets from its parallel loops. The
 * linear layer weighs them; the trees correct what a weighted sum cannot
 * express (overlap of compute and memory, interactions), on inputs that do
 * not depend on the pipeline's size.
 */
#include "protune/pt_cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protune/pt_gbt.h"
#include "protune/pt_randsched.h"
#include "../common/pt_text.h"

#define L2_BYTES (2048.0 * 1024.0)  /* per core; Sapphire Rapids */
#define PAGE_BYTES 4096.0
#define HEAP_BYTES (64.0 * 1024.0)  /* allocations past this touch fresh
				     * pages (smaller ones reuse memory) */

struct pt_cost {
	double coef[PT_TERM_COUNT];
	struct pt_gbt *gbt;   /* NULL: linear only */
};

static const char *const term_names[PT_TERM_COUNT] = {
	"stages", "vector_ops", "scalar_ops", "calls", "vector_loads",
	"gathers", "scalar_loads", "stores", "lines", "l2_lines",
	"spill_lines", "allocs", "pages", "tasks", "loops", "productions",
};

const char *pt_term_name(int term)
{
	return term >= 0 && term < PT_TERM_COUNT ? term_names[term] : NULL;
}

/* --- terms ---------------------------------------------------------------- */

static int type_bytes(int tc)
{
	static const int b[PT_TC_COUNT] = { 1, 1, 2, 4, 8, 4, 8 };

	return tc >= 0 && tc < PT_TC_COUNT ? b[tc] : 4;
}

/* The machine's cores from the model's machine params
 * ("cores,llc_bytes,balance"). */
static double machine_cores(const struct pt_model *m)
{
	double c = m->machine_params ? strtod(m->machine_params, NULL) : 0;

	return c >= 1 && c < 1e5 ? floor(c) : 1;
}

/* The speedup of spreading `tasks` equal tasks over `cores`. */
static double speedup(double tasks, double cores)
{
	if (!(tasks > 1))
		return 1;
	return tasks / ceil(tasks / cores);
}

/* A fraction of traffic that misses a cache of `cap` bytes when the data
 * reused spans `ws` bytes: smooth, 0 far below, 1 far above. */
static double miss(double ws, double cap)
{
	return ws > 0 ? ws / (ws + cap) : 0;
}

/* Per point of a stage: native vector registers an operation of width V
 * lanes occupies, summed over its arithmetic (loads, stores and calls
 * apart), its scalar operations, and its calls. */
static void op_counts(const double *algo, double lanes, int vbytes,
		      double *vregs, double *scalars, double *calls)
{
	int op, tc;

	*vregs = *scalars = *calls = 0;
	for (op = 0; op < PT_OP_COUNT; op++)
		for (tc = 0; tc < PT_TC_COUNT; tc++) {
			double n = algo[PT_ALGO_OP(op, tc)];

			if (n <= 0 || op == PT_OP_LOAD)
				continue;
			if (op == PT_OP_CALL) {
				*calls += n;
				continue;
			}
			*scalars += n;
			*vregs += n * ceil(lanes * type_bytes(tc) / vbytes);
		}
}

void pt_cost_terms(const struct pt_model *m, const struct pt_features *fx,
		   const double *rows, double *terms)
{
	double cores = machine_cores(m);
	int vbytes = pt_model_vector_lanes(m, 8);  /* lanes of bytes */
	int s, k;

	memset(terms, 0, PT_TERM_COUNT * sizeof(*terms));
	for (s = 0; s < m->nstages; s++) {
		const double *r = &rows[(size_t)s * PT_FEAT_COUNT];
		const double *algo = pt_features_algo(fx, s);
		const struct pt_stage *st = &m->stages[s];
		double eff, lanes, vregs, scal, calls, nv, ns, sregs;
		int inl = !(r[PT_FEAT_NUM_PRODUCTIONS] > 0);

		lanes = r[PT_FEAT_VECTOR_SIZE] > 1 ? r[PT_FEAT_VECTOR_SIZE] : 1;
		nv = r[PT_FEAT_NUM_VECTORS];
		ns = r[PT_FEAT_NUM_SCALARS];
		op_counts(algo, lanes, vbytes, &vregs, &scal, &calls);
		if (inl) {
			/* Evaluated inside its readers: their speedup. */
			eff = 0;
			for (k = s + 1; k < m->nstages; k++) {
				const double *q =
					&rows[(size_t)k * PT_FEAT_COUNT];
				int a, reads = 0;

				if (!(q[PT_FEAT_NUM_PRODUCTIONS] > 0))
					continue;
				for (a = 0; a < m->stages[k].naccesses; a++)
					if (m->stages[k].accesses[a].kind ==
					    PT_ACCESS_FUNC &&
					    m->stages[k].accesses[a].producer ==
					    st->func)
						reads = 1;
				if (reads) {
					double e = speedup(
						q[PT_FEAT_INNER_PARALLELISM] *
						q[PT_FEAT_OUTER_PARALLELISM],
						cores);
					if (e > eff)
						eff = e;
				}
			}
			if (eff < 1)
				eff = 1;
			terms[PT_TERM_VECTOR_OPS] += nv * vregs / eff;
			terms[PT_TERM_SCALAR_OPS] += ns * scal / eff;
			terms[PT_TERM_CALLS] += (nv * lanes + ns) * calls / eff;
			continue;
		}
		eff = speedup(r[PT_FEAT_INNER_PARALLELISM] *
			      r[PT_FEAT_OUTER_PARALLELISM], cores);
		sregs = ceil(lanes * (r[PT_FEAT_BYTES_AT_ROOT] /
				      (r[PT_FEAT_POINTS_MINIMUM] > 0 ?
				       r[PT_FEAT_POINTS_MINIMUM] : 1)) / vbytes);
		if (!(sregs >= 1))
			sregs = 1;
		terms[PT_TERM_STAGES] += 1;
		terms[PT_TERM_VECTOR_OPS] += nv * vregs / eff;
		terms[PT_TERM_SCALAR_OPS] += ns * scal / eff;
		terms[PT_TERM_CALLS] += (nv * lanes + ns) * calls / eff;
		terms[PT_TERM_VECTOR_LOADS] +=
			nv * r[PT_FEAT_VECTOR_LOADS_PER_VECTOR] / eff;
		terms[PT_TERM_GATHERS] +=
			nv * r[PT_FEAT_SCALAR_LOADS_PER_VECTOR] / eff;
		terms[PT_TERM_SCALAR_LOADS] +=
			ns * r[PT_FEAT_SCALAR_LOADS_PER_SCALAR] / eff;
		terms[PT_TERM_STORES] += (nv * sregs + ns) / eff;
		{
			/* Cache lines moved: the bytes, plus one partly
			 * used line at the end of each contiguous run. */
			double lines = r[PT_FEAT_NUM_PRODUCTIONS] *
				(r[PT_FEAT_BYTES_READ_PER_PRODUCTION] / 64 +
				 r[PT_FEAT_LINES_READ_PER_PRODUCTION]);
			double ws = r[PT_FEAT_BYTES_READ_PER_PRODUCTION] +
				r[PT_FEAT_BYTES_AT_PRODUCTION];

			terms[PT_TERM_LINES] += lines / eff;
			terms[PT_TERM_L2_LINES] += lines * miss(ws, L2_BYTES) /
				eff;
			/* What a Func writes to a buffer too large for L2
			 * goes out to the shared cache or memory, and comes
			 * back when its consumers read it (those reads are
			 * in l2_lines). The output's writes are the same
			 * for every schedule. */
			if (!m->funcs[st->func].is_output)
				terms[PT_TERM_SPILL_LINES] +=
					r[PT_FEAT_NUM_REALIZATIONS] *
					r[PT_FEAT_BYTES_AT_REALIZATION] / 64 *
					miss(r[PT_FEAT_BYTES_AT_REALIZATION],
					     L2_BYTES) / eff;
		}
		if (st->index == 0 && !m->funcs[st->func].is_output) {
			double b = r[PT_FEAT_BYTES_AT_REALIZATION];
			double live = r[PT_FEAT_OUTER_PARALLELISM] < cores ?
				r[PT_FEAT_OUTER_PARALLELISM] : cores;

			terms[PT_TERM_ALLOCS] +=
				r[PT_FEAT_NUM_REALIZATIONS] / eff;
			/* Large allocations are touched afresh: once per
			 * copy live at a time (the allocator reuses the
			 * memory of earlier realizations). */
			if (b > HEAP_BYTES)
				terms[PT_TERM_PAGES] += (live > 1 ? live : 1) *
					b / PAGE_BYTES;
		}
		if (r[PT_FEAT_INNER_PARALLELISM] > 1)
			terms[PT_TERM_TASKS] += r[PT_FEAT_NUM_PRODUCTIONS] *
				r[PT_FEAT_INNER_PARALLELISM];
		terms[PT_TERM_LOOPS] += r[PT_FEAT_POINTS_TOTAL] /
			(r[PT_FEAT_INNERMOST_LOOP_EXTENT] >= 1 ?
			 r[PT_FEAT_INNERMOST_LOOP_EXTENT] : 1) / eff;
		terms[PT_TERM_PRODUCTIONS] += r[PT_FEAT_NUM_PRODUCTIONS] / eff;
	}
}

void pt_cost_gbt_input(const double *coef, const double *terms, double *x)
{
	double lin = 0;
	int k;

	for (k = 0; k < PT_TERM_COUNT; k++)
		lin += coef[k] * terms[k];
	for (k = 0; k < PT_TERM_COUNT; k++) {
		x[k] = lin > 0 ? coef[k] * terms[k] / lin : 0;
		x[PT_TERM_COUNT + k] = log10(1 + terms[k]);
	}
	x[2 * PT_TERM_COUNT] = lin > 0 ? log10(lin) : -30;
}

/* --- prediction ----------------------------------------------------------- */

double pt_cost_linear(const struct pt_cost *c, const double *terms)
{
	double lin = 0;
	int k;

	for (k = 0; k < PT_TERM_COUNT; k++)
		lin += c->coef[k] * terms[k];
	return lin;
}

double pt_cost_predict(const struct pt_cost *c, const double *terms)
{
	double lin = pt_cost_linear(c, terms), x[PT_COST_GBT_DIMS];

	if (!c->gbt)
		return lin;
	pt_cost_gbt_input(c->coef, terms, x);
	return lin * exp(pt_gbt_predict(c->gbt, x));
}

const double *pt_cost_coef(const struct pt_cost *c)
{
	return c->coef;
}

int pt_cost_has_trees(const struct pt_cost *c)
{
	return c->gbt != NULL;
}

void pt_cost_free(struct pt_cost *c)
{
	if (!c)
		return;
	pt_gbt_free(c->gbt);
	free(c);
}

/* --- fitting -------------------------------------------------------------- */

/* Solve the k x k system a x = b (a row-major, both destroyed) by Gaussian
 * elimination with partial pivoting; -1 when singular. */
static int solve(double *a, double *b, int k, double *x)
{
	int i, j, r;

	for (i = 0; i < k; i++) {
		int p = i;
		double t;

		for (r = i + 1; r < k; r++)
			if (fabs(a[r * k + i]) > fabs(a[p * k + i]))
				p = r;
		if (!(fabs(a[p * k + i]) > 1e-300))
			return -1;
		if (p != i) {
			for (j = 0; j < k; j++) {
				t = a[i * k + j];
				a[i * k + j] = a[p * k + j];
				a[p * k + j] = t;
			}
			t = b[i], b[i] = b[p], b[p] = t;
		}
		for (r = i + 1; r < k; r++) {
			double f = a[r * k + i] / a[i * k + i];

			for (j = i; j < k; j++)
				a[r * k + j] -= f * a[i * k + j];
			b[r] -= f * b[i];
		}
	}
	for (i = k - 1; i >= 0; i--) {
		double s = b[i];

		for (j = i + 1; j < k; j++)
			s -= a[i * k + j] * x[j];
		x[i] = s / a[i * k + i];
	}
	return 0;
}

/* The least squares solution restricted to the passive set: z[j] for j in
 * the set, 0 elsewhere. */
static int passive_solve(const double *g, const double *h, const int *pas,
			 int k, double *z)
{
	double a[PT_TERM_COUNT * PT_TERM_COUNT], b[PT_TERM_COUNT];
	double y[PT_TERM_COUNT];
	int idx[PT_TERM_COUNT], n = 0, i, j;

	for (i = 0; i < k; i++)
		if (pas[i])
			idx[n++] = i;
	for (i = 0; i < n; i++) {
		b[i] = h[idx[i]];
		for (j = 0; j < n; j++)
			a[i * n + j] = g[idx[i] * k + idx[j]];
	}
	if (n && solve(a, b, n, y))
		return -1;
	for (i = 0; i < k; i++)
		z[i] = 0;
	for (i = 0; i < n; i++)
		z[idx[i]] = y[i];
	return 0;
}

/* Non-negative least squares on the normal equations g x = h (Lawson and
 * Hanson's active set method). */
static void nnls(const double *g, const double *h, int k, double *x)
{
	int pas[PT_TERM_COUNT] = { 0 }, iter, i;
	double z[PT_TERM_COUNT], w[PT_TERM_COUNT];

	for (i = 0; i < k; i++)
		x[i] = 0;
	for (iter = 0; iter < 10 * k; iter++) {
		int best = -1;

		for (i = 0; i < k; i++) {
			int j;

			w[i] = h[i];
			for (j = 0; j < k; j++)
				w[i] -= g[i * k + j] * x[j];
			if (!pas[i] && w[i] > 1e-12 &&
			    (best < 0 || w[i] > w[best]))
				best = i;
		}
		if (best < 0)
			break;
		pas[best] = 1;
		for (;;) {
			double alpha = 1;
			int neg = 0;

			if (passive_solve(g, h, pas, k, z)) {
				pas[best] = 0;  /* dependent column: drop */
				break;
			}
			for (i = 0; i < k; i++)
				if (pas[i] && z[i] <= 0) {
					double t = x[i] / (x[i] - z[i]);

					if (!neg || t < alpha)
						alpha = t;
					neg = 1;
				}
			if (!neg) {
				memcpy(x, z, (size_t)k * sizeof(*x));
				break;
			}
			for (i = 0; i < k; i++) {
				x[i] += alpha * (z[i] - x[i]);
				if (pas[i] && x[i] <= 1e-15) {
					pas[i] = 0;
					x[i] = 0;
				}
			}
		}
	}
}

/* Per pipeline, the weighted (1/ms^2) means of the terms and of the
 * runtime: PT_TERM_COUNT + 1 doubles per group id from gmin. */
struct gmeans {
	int gmin;
	double *mean;
	double *gscale;   /* per group: geometric mean runtime */
};

/* The weight of a sample: 1 / (ms^p * scale^(2-p)), with scale the
 * pipeline's geometric mean runtime: p = 2 weighs relative errors, p = 0
 * errors relative to the pipeline's typical runtime (slow schedules
 * count fully), p = 1 between. */
static double weight(double ms, double scale, double p)
{
	return 1 / (pow(ms, p) * pow(scale, 2 - p));
}

/* The smallest group id, and how many ids the groups span (0 when the
 * span is too large to index). */
static size_t group_range(const int *group, size_t n, int *gmin)
{
	int lo = group[0], hi = group[0];
	size_t i, ng;

	for (i = 1; i < n; i++) {
		lo = group[i] < lo ? group[i] : lo;
		hi = group[i] > hi ? group[i] : hi;
	}
	*gmin = lo;
	ng = (size_t)((long long)hi - lo) + 1;
	return ng < 100000000u ? ng : 0;
}

static int group_means(const double *terms, const double *ms,
		       const int *group, size_t n, double p,
		       struct gmeans *gm)
{
	size_t i, ng = group_range(group, n, &gm->gmin);
	int gmin = gm->gmin, j;
	double *wsum;

	gm->mean = ng ? calloc(ng * (PT_TERM_COUNT + 1), sizeof(*gm->mean)) :
		NULL;
	gm->gscale = ng ? calloc(ng, sizeof(*gm->gscale)) : NULL;
	wsum = ng ? calloc(ng, sizeof(*wsum)) : NULL;
	if (!gm->mean || !wsum || !gm->gscale) {
		free(gm->mean);
		free(gm->gscale);
		free(wsum);
		return PT_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		gm->gscale[group[i] - gmin] += log(ms[i]);
		wsum[group[i] - gmin] += 1;
	}
	for (i = 0; i < ng; i++) {
		gm->gscale[i] = wsum[i] > 0 ? exp(gm->gscale[i] / wsum[i]) : 1;
		wsum[i] = 0;
	}
	for (i = 0; i < n; i++) {
		size_t gi = (size_t)(group[i] - gmin);
		double w = weight(ms[i], gm->gscale[gi], p);
		double *mu = &gm->mean[gi * (PT_TERM_COUNT + 1)];

		for (j = 0; j < PT_TERM_COUNT; j++)
			mu[j] += w * terms[i * PT_TERM_COUNT + j];
		mu[PT_TERM_COUNT] += w * ms[i];
		wsum[gi] += w;
	}
	for (i = 0; i < ng; i++)
		for (j = 0; j <= PT_TERM_COUNT && wsum[i] > 0; j++)
			gm->mean[i * (PT_TERM_COUNT + 1) + j] /= wsum[i];
	free(wsum);
	return 0;
}

/* The trees of c (whose linear layer is fitted): on the residual
 * log(ms / linear), centred per pipeline. */
static int fit_trees(struct pt_cost *c, const double *terms,
		     const double *ms, const int *group, size_t n,
		     const struct pt_cost_fit_opts *o, struct pt_error *err)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	double *X = malloc(n * PT_COST_GBT_DIMS * sizeof(*X));
	double *y = malloc(n * sizeof(*y));
	double *sum = NULL;
	int *cnt = NULL, gmin;
	size_t i, ng = group_range(group, n, &gmin);
	int ret;

	if (X && y && ng) {
		sum = calloc(ng, sizeof(*sum));
		cnt = calloc(ng, sizeof(*cnt));
	}
	if (!sum || !cnt) {
		free(X), free(y), free(sum), free(cnt);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const double *t = &terms[i * PT_TERM_COUNT];
		double lin = pt_cost_linear(c, t);

		pt_cost_gbt_input(c->coef, t, &X[i * PT_COST_GBT_DIMS]);
		y[i] = log(ms[i]) - log(lin > 1e-300 ? lin : 1e-300);
		sum[group[i] - gmin] += y[i];
		cnt[group[i] - gmin]++;
	}
	for (i = 0; i < n; i++)
		y[i] -= sum[group[i] - gmin] / cnt[group[i] - gmin];
	p.trees = o->trees;
	p.seed = o->seed;
	ret = pt_gbt_fit(X, n, PT_COST_GBT_DIMS, y, NULL, &p, &c->gbt, err);
	free(X), free(y), free(sum), free(cnt);
	return ret;
}

int pt_cost_fit(const double *terms, const double *ms, const int *group,
		size_t n, const struct pt_cost_fit_opts *opts,
		struct pt_cost **out, struct pt_error *err)
{
	struct gmeans gm;
	struct pt_cost_fit_opts o = PT_COST_FIT_OPTS_INIT;
	double g[PT_TERM_COUNT * PT_TERM_COUNT] = { 0 }, h[PT_TERM_COUNT] = { 0 };
	double scale[PT_TERM_COUNT], x[PT_TERM_COUNT];
	struct pt_cost *c;
	size_t i;
	int j, k, ret;

	*out = NULL;
	if (opts)
		o = *opts;
	if (!n)
		return pt_error_set(err, PT_EINVAL, "no samples to fit");
	for (i = 0; i < n; i++) {
		if (!(ms[i] > 0) || !isfinite(ms[i]))
			return pt_error_set(err, PT_EINVAL,
					    "sample %zu: runtime %g is not a positive number",
					    i, ms[i]);
		for (j = 0; j < PT_TERM_COUNT; j++)
			if (!isfinite(terms[i * PT_TERM_COUNT + j]) ||
			    terms[i * PT_TERM_COUNT + j] < 0)
				return pt_error_set(err, PT_EINVAL,
						    "sample %zu: term %s is %g",
						    i, term_names[j],
						    terms[i * PT_TERM_COUNT + j]);
	}
	/* Weighted least squares (weight() above) with a free intercept per
	 * pipeline: the intercepts are eliminated by
	 * centring every column and the runtimes on their weighted means
	 * within the pipeline, so the coefficients explain how runtimes
	 * differ within a pipeline (what ranking needs), not how pipelines
	 * differ from each other. */
	if ((ret = group_means(terms, ms, group, n, o.weight_power, &gm)))
		return pt_error_set(err, ret, "out of memory");
	for (i = 0; i < n; i++) {
		const double *t = &terms[i * PT_TERM_COUNT];
		const double *mu = &gm.mean[(size_t)(group[i] - gm.gmin) *
					    (PT_TERM_COUNT + 1)];
		double w = weight(ms[i], gm.gscale[group[i] - gm.gmin],
				  o.weight_power);
		double a[PT_TERM_COUNT], b;

		for (j = 0; j < PT_TERM_COUNT; j++)
			a[j] = t[j] - mu[j];
		b = ms[i] - mu[PT_TERM_COUNT];
		for (j = 0; j < PT_TERM_COUNT; j++) {
			h[j] += w * a[j] * b;
			for (k = 0; k < PT_TERM_COUNT; k++)
				g[j * PT_TERM_COUNT + k] += w * a[j] * a[k];
		}
	}
	free(gm.mean);
	free(gm.gscale);
	for (j = 0; j < PT_TERM_COUNT; j++)
		scale[j] = g[j * PT_TERM_COUNT + j] > 0 ?
			sqrt(g[j * PT_TERM_COUNT + j]) : 0;
	for (j = 0; j < PT_TERM_COUNT; j++) {
		for (k = 0; k < PT_TERM_COUNT; k++)
			g[j * PT_TERM_COUNT + k] = scale[j] > 0 && scale[k] > 0 ?
				g[j * PT_TERM_COUNT + k] / (scale[j] * scale[k]) :
				(j == k);
		h[j] = scale[j] > 0 ? h[j] / scale[j] : 0;
		g[j * PT_TERM_COUNT + j] += o.ridge;
	}
	nnls(g, h, PT_TERM_COUNT, x);
	if (!(c = calloc(1, sizeof(*c))))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	for (j = 0; j < PT_TERM_COUNT; j++)
		c->coef[j] = scale[j] > 0 ? x[j] / scale[j] : 0;
	if (o.trees > 0 && (ret = fit_trees(c, terms, ms, group, n, &o, err))) {
		pt_cost_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* --- text ----------------------------------------------------------------- */

int pt_cost_write(const struct pt_cost *c, struct pt_strbuf *out)
{
	int k;

	if (pt_strbuf_addf(out, "protune-cost %d\nfeatures %d\n",
			   PT_COST_FORMAT_VERSION, PT_FEAT_VERSION))
		return PT_ENOMEM;
	for (k = 0; k < PT_TERM_COUNT; k++)
		if (pt_strbuf_addf(out, "term %s %.17g\n", term_names[k],
				   c->coef[k]))
			return PT_ENOMEM;
	return c->gbt ? pt_gbt_write(c->gbt, out) : 0;
}

/* Take a finite, non-negative double token. */
static int take_double(struct pt_text *t, double *out, const char *what)
{
	struct pt_tok tok;
	char buf[64], *end;
	int ret;

	if ((ret = pt_text_tok(t, &tok, what)))
		return ret;
	if (tok.n == 0 || tok.n >= sizeof(buf))
		return pt_text_error(t, "bad %s", what);
	memcpy(buf, tok.s, tok.n);
	buf[tok.n] = 0;
	*out = strtod(buf, &end);
	if (*end || !isfinite(*out) || *out < 0)
		return pt_text_error(t, "bad %s '%s' (expected a finite number >= 0)",
				     what, buf);
	return 0;
}

int pt_cost_parse(const char *text, size_t len, const char *name,
		  struct pt_cost **out, struct pt_error *err)
{
	struct pt_text t;
	struct pt_cost *c;
	int64_t v;
	int k, ret;

	*out = NULL;
	if (!(c = calloc(1, sizeof(*c))))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	pt_text_init(&t, text, len, name, err);
	if ((ret = pt_text_next(&t)) <= 0) {
		ret = ret ? ret : pt_text_error(&t, "empty cost model");
		goto fail;
	}
	if ((ret = pt_text_word(&t, "protune-cost")) ||
	    (ret = pt_text_int(&t, 0, 1000000, &v, "format version")) ||
	    (ret = pt_text_end(&t)))
		goto fail;
	if (v != PT_COST_FORMAT_VERSION) {
		ret = pt_text_error(&t, "cost model format %lld, this protune reads %d",
				    (long long)v, PT_COST_FORMAT_VERSION);
		goto fail;
	}
	if ((ret = pt_text_next(&t)) <= 0 ||
	    (ret = pt_text_word(&t, "features")) ||
	    (ret = pt_text_int(&t, 0, 1000000, &v, "feature version")) ||
	    (ret = pt_text_end(&t))) {
		ret = ret ? ret : pt_text_error(&t, "expected 'features'");
		goto fail;
	}
	if (v != PT_FEAT_VERSION) {
		ret = pt_text_error(&t, "fitted to features version %lld, this protune computes version %d: train it again (protune train)",
				    (long long)v, PT_FEAT_VERSION);
		goto fail;
	}
	for (k = 0; k < PT_TERM_COUNT; k++) {
		if ((ret = pt_text_next(&t)) <= 0 ||
		    (ret = pt_text_word(&t, "term")) ||
		    (ret = pt_text_word(&t, term_names[k])) ||
		    (ret = take_double(&t, &c->coef[k], "coefficient")) ||
		    (ret = pt_text_end(&t))) {
			ret = ret ? ret : pt_text_error(&t,
				"expected 'term %s'", term_names[k]);
			goto fail;
		}
	}
	if ((ret = pt_text_next(&t)) < 0)
		goto fail;
	if (ret) {
		pt_text_unread(&t);
		if ((ret = pt_gbt_read(&t, &c->gbt)))
			goto fail;
		if (pt_gbt_dims(c->gbt) != PT_COST_GBT_DIMS) {
			ret = pt_text_error(&t, "trees over %d inputs, expected %d",
					    pt_gbt_dims(c->gbt),
					    PT_COST_GBT_DIMS);
			goto fail;
		}
		if ((ret = pt_text_next(&t)) != 0) {
			if (ret > 0)
				ret = pt_text_error(&t, "unexpected line after the trees");
			goto fail;
		}
	}
	pt_text_release(&t);
	*out = c;
	return 0;
fail:
	pt_text_release(&t);
	pt_cost_free(c);
	return ret;
}

/* --- ranking -------------------------------------------------------------- */

struct rk {
	double v;
	size_t i;
};

static int rk_cmp(const void *a, const void *b)
{
	const struct rk *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Average ranks (ties share the mean of their positions) into r. */
static int ranks(const double *v, size_t n, double *r)
{
	struct rk *a = malloc(n * sizeof(*a));
	size_t i, j, k;

	if (!a)
		return -1;
	for (i = 0; i < n; i++)
		a[i].v = v[i], a[i].i = i;
	qsort(a, n, sizeof(*a), rk_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && a[j].v == a[i].v; j++)
			;
		for (k = i; k < j; k++)
			r[a[k].i] = 0.5 * (double)(i + j - 1);
	}
	free(a);
	return 0;
}

double pt_cost_spearman(const double *a, const double *b, size_t n)
{
	double *ra = malloc(n * sizeof(*ra)), *rb = malloc(n * sizeof(*rb));
	double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0, res = 0;
	size_t i;

	if (ra && rb && n >= 2 && !ranks(a, n, ra) && !ranks(b, n, rb)) {
		for (i = 0; i < n; i++)
			ma += ra[i], mb += rb[i];
		ma /= (double)n, mb /= (double)n;
		for (i = 0; i < n; i++) {
			sab += (ra[i] - ma) * (rb[i] - mb);
			saa += (ra[i] - ma) * (ra[i] - ma);
			sbb += (rb[i] - mb) * (rb[i] - mb);
		}
		res = saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
	}
	free(ra), free(rb);
	return res;
}

double pt_cost_top1_regret(const double *predicted, const double *measured,
			   size_t n)
{
	size_t i, best = 0, fastest = 0;

	for (i = 1; i < n; i++) {
		if (predicted[i] < predicted[best])
			best = i;
		if (measured[i] < measured[fastest])
			fastest = i;
	}
	return n ? measured[best] / measured[fastest] : 0;
}
