/* Unit tests of pt_gbt: fitting known functions, the fit's rules (min_leaf,
 * weights, determinism), the text form and its parser, and the speed of a
 * prediction (printed). */
#include "pt_test.h"
#include "protune/pt_gbt.h"
#include "../../common/pt_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- data ----------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1p-53;
}

/* y = 3 [x0 > 0.5] + 2 x1, x uniform in [0,1]^3 (x2 is noise). */
static double known_f(const double *x)
{
	return 3.0 * (x[0] > 0.5) + 2.0 * x[1];
}

struct data {
	double *X, *y;
	size_t n;
	int d;
};

static void make_known(struct data *D, size_t n, uint64_t seed)
{
	size_t i;
	int c;

	D->n = n;
	D->d = 3;
	D->X = malloc(n * 3 * sizeof(double));
	D->y = malloc(n * sizeof(double));
	PT_REQUIRE(D->X && D->y);
	for (i = 0; i < n; i++) {
		for (c = 0; c < 3; c++)
			D->X[i * 3 + c] = uniform(&seed);
		D->y[i] = known_f(&D->X[i * 3]);
	}
}

static void make_random(struct data *D, size_t n, int d, uint64_t seed)
{
	size_t i;
	int c;

	D->n = n;
	D->d = d;
	D->X = malloc(n * (size_t)d * sizeof(double));
	D->y = malloc(n * sizeof(double));
	PT_REQUIRE(D->X && D->y);
	for (i = 0; i < n; i++) {
		double *x = &D->X[i * (size_t)d];

		for (c = 0; c < d; c++)
			x[c] = uniform(&seed);
		D->y[i] = sin(6 * x[0]) + x[1] * x[2] + (x[3] > 0.3) -
			  x[4 % d] + 0.1 * uniform(&seed);
	}
}

static void free_data(struct data *D)
{
	free(D->X);
	free(D->y);
}

static struct pt_gbt *fit(const struct data *D, const double *w,
			  const struct pt_gbt_params *p)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_gbt *g = NULL;
	int ret = pt_gbt_fit(D->X, D->n, D->d, D->y, w, p, &g, &err);

	if (ret)
		printf("# fit: %s\n", err.msg);
	PT_REQUIRE(ret == 0 && g);
	return g;
}

/* The text of g, malloc'd. */
static char *text_of(const struct pt_gbt *g)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	PT_REQUIRE(pt_gbt_write(g, &sb) == 0);
	return pt_strbuf_detach(&sb, NULL);
}

/* --- a second reading of the text, independent of pt_gbt.c ---------------- */

struct wtree {
	int n;
	int *leaf, *f, *l, *r;
	double *v;      /* threshold or value */
};

struct walker {
	int d, ntrees;
	double base;
	struct wtree *t;
};

/* Parse the text with sscanf (it is known to be well formed). */
static void walker_load(struct walker *W, const char *text)
{
	const char *p = text;
	int k, i, used;

	PT_REQUIRE(sscanf(p, "gbt 1 %d %d %lf\n%n", &W->d, &W->ntrees,
			  &W->base, &used) == 3);
	p += used;
	W->t = calloc((size_t)W->ntrees + 1, sizeof(*W->t));
	PT_REQUIRE(W->t);
	for (k = 0; k < W->ntrees; k++) {
		struct wtree *T = &W->t[k];

		PT_REQUIRE(sscanf(p, "tree %d\n%n", &T->n, &used) == 1);
		p += used;
		T->leaf = calloc((size_t)T->n, sizeof(int));
		T->f = calloc((size_t)T->n, sizeof(int));
		T->l = calloc((size_t)T->n, sizeof(int));
		T->r = calloc((size_t)T->n, sizeof(int));
		T->v = calloc((size_t)T->n, sizeof(double));
		PT_REQUIRE(T->leaf && T->f && T->l && T->r && T->v);
		for (i = 0; i < T->n; i++) {
			if (sscanf(p, "  leaf %lf\n%n", &T->v[i], &used) == 1) {
				T->leaf[i] = 1;
			} else {
				PT_REQUIRE(sscanf(p, "  split %d %lf %d %d\n%n",
						  &T->f[i], &T->v[i], &T->l[i],
						  &T->r[i], &used) == 4);
			}
			p += used;
		}
	}
	PT_CHECK(*p == '\0');
}

static int walker_leaf(const struct wtree *T, const double *x)
{
	int i = 0;

	while (!T->leaf[i])
		i = x[T->f[i]] <= T->v[i] ? T->l[i] : T->r[i];
	return i;
}

static double walker_predict(const struct walker *W, const double *x)
{
	double s = W->base;
	int k;

	for (k = 0; k < W->ntrees; k++)
		s += W->t[k].v[walker_leaf(&W->t[k], x)];
	return s;
}

static void walker_free(struct walker *W)
{
	int k;

	for (k = 0; k < W->ntrees; k++) {
		free(W->t[k].leaf);
		free(W->t[k].f);
		free(W->t[k].l);
		free(W->t[k].r);
		free(W->t[k].v);
	}
	free(W->t);
}

static double rmse(const struct pt_gbt *g, const struct data *D)
{
	double se = 0;
	size_t i;

	for (i = 0; i < D->n; i++) {
		double e = pt_gbt_predict(g, &D->X[i * (size_t)D->d]) -
			   D->y[i];

		se += e * e;
	}
	return sqrt(se / (double)D->n);
}

/* --- fitting -------------------------------------------------------------- */

PT_TEST(known_function)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct data train, test;
	struct pt_gbt *g;
	double imp[3], e0, e;

	make_known(&train, 2000, 1);
	make_known(&test, 1000, 2);
	g = fit(&train, NULL, &p);
	PT_CHECK_INT(pt_gbt_dims(g), 3);
	PT_CHECK_INT(pt_gbt_ntrees(g), 100);
	e = rmse(g, &test);
	e0 = 0;
	{	/* the error of the mean alone, for scale */
		double mean = 0;
		size_t i;

		for (i = 0; i < train.n; i++)
			mean += train.y[i] / (double)train.n;
		for (i = 0; i < test.n; i++)
			e0 += (test.y[i] - mean) * (test.y[i] - mean);
		e0 = sqrt(e0 / (double)test.n);
	}
	printf("# held-out RMSE %.4f (of the mean: %.4f)\n", e, e0);
	PT_CHECK(e < 0.15);
	pt_gbt_importance(g, imp);
	printf("# importance %.4g %.4g %.4g\n", imp[0], imp[1], imp[2]);
	PT_CHECK(imp[0] > 0 && imp[1] > 0);
	PT_CHECK(imp[2] < 0.01 * imp[0] && imp[2] < 0.01 * imp[1]);
	/* The step dominates: 3 [x0 > 0.5] has the larger variance. */
	PT_CHECK(imp[0] > imp[1]);
	pt_gbt_free(g);
	free_data(&train);
	free_data(&test);
}

/* 16 rows at -1 then 48 at 3, x = 0..63: every mean is exact. */
PT_TEST(step_exact)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	double X[64], y[64], x;
	struct data D = { X, y, 64, 1 };
	struct pt_gbt *g;
	char *text;
	int i;

	for (i = 0; i < 64; i++) {
		X[i] = (double)((i * 37) % 64); /* rows out of order */
		y[i] = X[i] < 16 ? -1 : 3;
	}
	p.trees = 1;
	p.max_depth = 1;
	p.min_leaf = 1;
	p.shrinkage = 1;
	g = fit(&D, NULL, &p);
	text = text_of(g);
	PT_CHECK_STR(text, "gbt 1 1 1 2\n"
			   "tree 3\n"
			   "  split 0 15.5 1 2\n"
			   "  leaf -3\n"
			   "  leaf 1\n");
	for (i = 0; i < 64; i++)
		PT_CHECK(pt_gbt_predict(g, &X[i]) == y[i]);
	x = 15.5;
	PT_CHECK(pt_gbt_predict(g, &x) == -1);  /* x <= threshold: left */
	x = nextafter(15.5, 16);
	PT_CHECK(pt_gbt_predict(g, &x) == 3);
	x = NAN;
	PT_CHECK(pt_gbt_predict(g, &x) == -1);  /* NaN goes left */
	free(text);
	pt_gbt_free(g);
}

/* Fewer than 2 min_leaf rows: every tree is one leaf, the fit the mean. */
PT_TEST(too_few_rows)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct data D;
	struct walker W;
	struct pt_gbt *g;
	char *text;
	double mean = 0;
	size_t i;
	int k;

	make_known(&D, 19, 3);
	for (i = 0; i < D.n; i++)
		mean += D.y[i];
	mean /= (double)D.n;
	g = fit(&D, NULL, &p);
	text = text_of(g);
	walker_load(&W, text);
	PT_CHECK_INT(W.ntrees, 100);
	for (k = 0; k < W.ntrees; k++)
		PT_CHECK_INT(W.t[k].n, 1);
	PT_CHECK(fabs(pt_gbt_predict(g, D.X) - mean) < 1e-12);
	walker_free(&W);
	free(text);
	pt_gbt_free(g);
	/* One more row and the first tree splits. */
	free_data(&D);
	make_known(&D, 20, 3);
	g = fit(&D, NULL, &p);
	text = text_of(g);
	PT_CHECK(strstr(text, "tree 3\n") != NULL);
	free(text);
	pt_gbt_free(g);
	free_data(&D);
}

/* Every leaf of every tree holds at least min_leaf training rows (counted
 * by the walker, which also predicts exactly as pt_gbt_predict). */
PT_TEST(min_leaf)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct data D;
	struct walker W;
	struct pt_gbt *g;
	char *text;
	int k, i, least = 1 << 30, leaves = 0;
	int *count;
	size_t r;

	make_known(&D, 2000, 4);
	p.trees = 20;
	p.max_depth = 8;
	p.min_leaf = 37;
	p.shrinkage = 0.3;
	g = fit(&D, NULL, &p);
	text = text_of(g);
	walker_load(&W, text);
	for (k = 0; k < W.ntrees; k++) {
		count = calloc((size_t)W.t[k].n, sizeof(int));
		PT_REQUIRE(count);
		for (r = 0; r < D.n; r++)
			count[walker_leaf(&W.t[k], &D.X[r * 3])]++;
		for (i = 0; i < W.t[k].n; i++) {
			if (!W.t[k].leaf[i])
				continue;
			leaves++;
			if (!PT_CHECK(count[i] >= 37))
				printf("# tree %d leaf %d: %d rows\n", k, i,
				       count[i]);
			least = count[i] < least ? count[i] : least;
		}
		free(count);
	}
	/* The rule did bind: some leaf is at the bound or near it. */
	printf("# %d leaves, the smallest has %d rows\n", leaves, least);
	PT_CHECK(least < 2 * 37);
	for (r = 0; r < D.n; r++)
		PT_CHECK(walker_predict(&W, &D.X[r * 3]) ==
			 pt_gbt_predict(g, &D.X[r * 3]));
	walker_free(&W);
	free(text);
	pt_gbt_free(g);
	free_data(&D);
}

/* Rows of weight 0 change nothing, with or without subsampling; weights
 * do matter otherwise. */
PT_TEST(weights)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct data D, E;
	struct pt_gbt *a, *b;
	char *ta, *tb;
	double *w, ia[3], ib[3];
	uint64_t seed = 99;
	size_t i, j;
	int s, c;

	make_known(&D, 1000, 5);
	/* E: D with 500 extra rows of weight 0 spread through it. */
	E.n = 1500;
	E.d = 3;
	E.X = malloc(E.n * 3 * sizeof(double));
	E.y = malloc(E.n * sizeof(double));
	w = malloc(E.n * sizeof(double));
	PT_REQUIRE(E.X && E.y && w);
	for (i = 0, j = 0; i < E.n; i++) {
		if (i % 3 == 1) {
			for (c = 0; c < 3; c++)
				E.X[i * 3 + c] = uniform(&seed) * 2 - 0.5;
			E.y[i] = 100 * uniform(&seed);
			w[i] = 0;
			continue;
		}
		memcpy(&E.X[i * 3], &D.X[j * 3], 3 * sizeof(double));
		E.y[i] = D.y[j++];
		w[i] = 1;
	}
	PT_REQUIRE(j == D.n);
	for (s = 0; s < 2; s++) {
		p.subsample = s ? 0.6 : 1;
		a = fit(&D, NULL, &p);
		b = fit(&E, w, &p);
		ta = text_of(a);
		tb = text_of(b);
		PT_CHECK_STR(tb, ta);
		free(ta);
		free(tb);
		pt_gbt_free(b);
		pt_gbt_free(a);
	}
	/* Weight 2 everywhere: the same trees, twice the squared errors. */
	p.subsample = 1;
	for (j = 0; j < D.n; j++)
		w[j] = 2;
	a = fit(&D, NULL, &p);
	b = fit(&D, w, &p);
	ta = text_of(a);
	tb = text_of(b);
	PT_CHECK_STR(tb, ta);
	pt_gbt_importance(a, ia);
	pt_gbt_importance(b, ib);
	for (c = 0; c < 3; c++)
		PT_CHECK(ib[c] == 2 * ia[c]);
	free(tb);
	pt_gbt_free(b);
	/* Heavier rows where x0 > 0.5 move the base value. */
	for (j = 0; j < D.n; j++)
		w[j] = D.X[j * 3] > 0.5 ? 5 : 1;
	b = fit(&D, w, &p);
	tb = text_of(b);
	PT_CHECK(strcmp(ta, tb) != 0);
	PT_CHECK(strncmp(ta, tb, 12) == 0 && strncmp(ta, tb, 20) != 0);
	free(ta);
	free(tb);
	pt_gbt_free(a);
	pt_gbt_free(b);
	free(w);
	free_data(&D);
	free_data(&E);
}

PT_TEST(determinism)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct data D;
	char *t[5];
	int i;

	make_random(&D, 1500, 6, 6);
	for (i = 0; i < 5; i++) {
		struct pt_gbt *g;

		p.subsample = i < 2 ? 1 : 0.5;
		p.seed = i == 4 ? 2 : 1;
		g = fit(&D, NULL, &p);
		t[i] = text_of(g);
		pt_gbt_free(g);
	}
	PT_CHECK_STR(t[1], t[0]);
	PT_CHECK_STR(t[3], t[2]);
	PT_CHECK(strcmp(t[2], t[0]) != 0);
	PT_CHECK(strcmp(t[4], t[2]) != 0);
	for (i = 0; i < 5; i++)
		free(t[i]);
	free_data(&D);
}

/* Equal splits: the lowest feature wins, then the lowest threshold. */
PT_TEST(ties)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	double X[8 * 3], y[8];
	struct data D = { X, y, 8, 3 };
	struct pt_gbt *g;
	char *text;
	int i;

	/* Columns 1 and 2 are the same; column 0 is useless. y is
	 * symmetric, so a split after 2 rows ties with one after 6. */
	for (i = 0; i < 8; i++) {
		X[i * 3] = 1;
		X[i * 3 + 1] = X[i * 3 + 2] = i;
		y[i] = i < 2 || i >= 6 ? 1 : 0;
	}
	p.trees = 1;
	p.max_depth = 1;
	p.min_leaf = 1;
	p.shrinkage = 1;
	g = fit(&D, NULL, &p);
	text = text_of(g);
	PT_CHECK(strstr(text, "  split 1 1.5 1 2\n") != NULL);
	if (!strstr(text, "  split 1 1.5 1 2\n"))
		printf("# %s", text);
	free(text);
	pt_gbt_free(g);
}

/* Brute force, node by node: every split is one of the best splits of
 * its node's rows (exact greedy search, min_leaf on both sides, the
 * threshold halfway between two adjacent values), every leaf holds the
 * shrunk weighted mean of its rows' residuals, and a node left unsplit
 * had no split worth making. */
struct bf_rows {
	const double *X, *r, *w;
	int d;
	int *idx;
	int n;
};

/* The weighted squared-error reduction of splitting rows at x[f] <= t,
 * and the rows on each side. */
static double bf_gain(const struct bf_rows *R, int f, double t, int *nl,
		      int *nr)
{
	double wl = 0, sl = 0, wr = 0, sr = 0;
	int i;

	*nl = *nr = 0;
	for (i = 0; i < R->n; i++) {
		int j = R->idx[i];
		double w = R->w ? R->w[j] : 1;

		if (R->X[j * R->d + f] <= t)
			wl += w, sl += w * R->r[j], ++*nl;
		else
			wr += w, sr += w * R->r[j], ++*nr;
	}
	if (!*nl || !*nr)
		return 0;
	return sl * sl / wl + sr * sr / wr - (sl + sr) * (sl + sr) / (wl + wr);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The best gain over all features and thresholds, min_leaf respected. */
static double bf_best(const struct bf_rows *R, int min_leaf)
{
	double best = 0, *v = malloc((size_t)R->n * sizeof(double));
	int f, i, nl, nr;

	PT_REQUIRE(v);
	for (f = 0; f < R->d; f++) {
		for (i = 0; i < R->n; i++)
			v[i] = R->X[R->idx[i] * R->d + f];
		qsort(v, (size_t)R->n, sizeof(double), cmp_double);
		for (i = 1; i < R->n; i++) {
			double g;

			if (v[i] == v[i - 1])
				continue;
			g = bf_gain(R, f, v[i - 1], &nl, &nr);
			if (nl >= min_leaf && nr >= min_leaf && g > best)
				best = g;
		}
	}
	free(v);
	return best;
}

static void bf_node(const struct wtree *T, int node, struct bf_rows *R,
		    const struct pt_gbt_params *p, int depth, int *checked)
{
	double sse = 0, sw = 0, swr = 0;
	int i, nl, nr;

	for (i = 0; i < R->n; i++) {
		int j = R->idx[i];
		double w = R->w ? R->w[j] : 1;

		sw += w;
		swr += w * R->r[j];
		sse += w * R->r[j] * R->r[j];
	}
	sse -= swr * swr / sw;
	if (T->leaf[node]) {
		double best = R->n >= 2 * p->min_leaf && depth < p->max_depth ?
			      bf_best(R, p->min_leaf) : 0;

		PT_CHECK(fabs(T->v[node] - p->shrinkage * swr / sw) <=
			 1e-9 * (1 + fabs(T->v[node])));
		if (!PT_CHECK(best <= 1e-9 * (sse + 1e-300)))
			printf("# an unsplit node could gain %g of %g\n", best,
			       sse);
		return;
	}
	{
		int f = T->f[node], *left, *right, a = 0, b = 0;
		double t = T->v[node], lo = -INFINITY, hi = INFINITY;
		double g = bf_gain(R, f, t, &nl, &nr), best = bf_best(R,
							 p->min_leaf);

		(*checked)++;
		PT_CHECK(nl >= p->min_leaf && nr >= p->min_leaf);
		if (!PT_CHECK(g >= best - 1e-9 * (sse + 1e-300)))
			printf("# split gains %.17g, the best %.17g\n", g,
			       best);
		for (i = 0; i < R->n; i++) {
			double x = R->X[R->idx[i] * R->d + f];

			if (x <= t && x > lo)
				lo = x;
			if (x > t && x < hi)
				hi = x;
		}
		PT_CHECK(t == lo * 0.5 + hi * 0.5 || (t == lo &&
			 !(lo * 0.5 + hi * 0.5 < hi)));
		left = malloc((size_t)R->n * sizeof(int));
		right = malloc((size_t)R->n * sizeof(int));
		PT_REQUIRE(left && right);
		for (i = 0; i < R->n; i++) {
			int j = R->idx[i];

			if (R->X[j * R->d + f] <= t)
				left[a++] = j;
			else
				right[b++] = j;
		}
		{
			struct bf_rows L = *R, Rr = *R;

			L.idx = left, L.n = a;
			Rr.idx = right, Rr.n = b;
			bf_node(T, T->l[node], &L, p, depth + 1, checked);
			bf_node(T, T->r[node], &Rr, p, depth + 1, checked);
		}
		free(left);
		free(right);
	}
}

PT_TEST(brute_force)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	uint64_t seed = 11;
	int run, checked = 0;

	for (run = 0; run < 4; run++) {
		int n = 300 + 100 * run, d = 4, i, c, k, *all;
		double *X = malloc((size_t)(n * d) * sizeof(double));
		double *y = malloc((size_t)n * sizeof(double));
		double *w = malloc((size_t)n * sizeof(double));
		double *r = malloc((size_t)n * sizeof(double));
		struct data D;
		struct walker W;
		struct pt_gbt *g;
		char *text;

		PT_REQUIRE(X && y && w && r);
		for (i = 0; i < n; i++) {
			double *x = &X[i * d];

			x[0] = uniform(&seed);                  /* continuous */
			x[1] = floor(uniform(&seed) * 5);       /* 5 values */
			x[2] = uniform(&seed) < 0.5 ? 0 : uniform(&seed);
			x[3] = floor(uniform(&seed) * 40) / 8;  /* ties */
			y[i] = 2 * (x[0] > 0.3) + x[1] * (x[2] > 0.5) +
			       sin(x[3]) + 0.3 * uniform(&seed);
			w[i] = run & 1 ? (double)(1 + rng_next(&seed) % 3) / 2
				       : 1;
			if (run == 3 && i % 7 == 0)
				w[i] = 0;
		}
		D.X = X, D.y = y, D.n = (size_t)n, D.d = d;
		p.trees = 6;
		p.max_depth = 3 + run % 2;
		p.min_leaf = 4 + 3 * run;
		p.shrinkage = 0.5;
		g = fit(&D, run & 1 ? w : NULL, &p);
		text = text_of(g);
		walker_load(&W, text);
		all = malloc((size_t)n * sizeof(int));
		PT_REQUIRE(all);
		for (k = 0; k < W.ntrees; k++) {
			struct bf_rows R = { X, r, run & 1 ? w : NULL, d, all,
					     0 };

			for (i = 0; i < n; i++) {
				double pr = W.base;

				for (c = 0; c < k; c++)
					pr += W.t[c].v[walker_leaf(&W.t[c],
								   &X[i * d])];
				r[i] = y[i] - pr;
				if (!(run & 1) || w[i] > 0)
					all[R.n++] = i;
			}
			bf_node(&W.t[k], 0, &R, &p, 0, &checked);
		}
		free(all);
		walker_free(&W);
		free(text);
		pt_gbt_free(g);
		free(X);
		free(y);
		free(w);
		free(r);
	}
	printf("# %d splits checked\n", checked);
	PT_CHECK(checked > 50);
}

/* --- text ----------------------------------------------------------------- */

PT_TEST(round_trip)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct data D, T;
	struct pt_gbt *g, *h;
	char *t1, *t2;
	size_t i;

	make_random(&D, 1000, 5, 7);
	make_random(&T, 300, 5, 8);
	p.trees = 30;
	p.max_depth = 5;
	p.min_leaf = 3;
	g = fit(&D, NULL, &p);
	t1 = text_of(g);
	PT_REQUIRE(pt_gbt_parse(t1, strlen(t1), "t", &h, &err) == 0);
	t2 = text_of(h);
	PT_CHECK_STR(t2, t1);
	PT_CHECK_INT(pt_gbt_dims(h), 5);
	PT_CHECK_INT(pt_gbt_ntrees(h), 30);
	for (i = 0; i < T.n; i++) {
		double a = pt_gbt_predict(g, &T.X[i * 5]);
		double b = pt_gbt_predict(h, &T.X[i * 5]);

		PT_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	}
	free(t1);
	free(t2);
	pt_gbt_free(g);
	pt_gbt_free(h);
	free_data(&D);
	free_data(&T);
}

/* Nodes may come in any order; the written text is breadth first. */
PT_TEST(read_any_order)
{
	static const char in[] =
		"gbt 1 2 2 0.5\n"
		"tree 5\n"
		"  split 1 -2.5 3 1\n"
		"  split 0 7 4 2\n"
		"  leaf 0.25\n"
		"  leaf -1\n"
		"  leaf 2\n"
		"tree 1\n"
		"  leaf 0.125\n";
	static const char out[] =
		"gbt 1 2 2 0.5\n"
		"tree 5\n"
		"  split 1 -2.5 1 2\n"
		"  leaf -1\n"
		"  split 0 7 3 4\n"
		"  leaf 2\n"
		"  leaf 0.25\n"
		"tree 1\n"
		"  leaf 0.125\n";
	struct pt_error err = PT_ERROR_INIT;
	struct pt_gbt *g;
	double x[2], imp[2];
	char *text;

	PT_REQUIRE(pt_gbt_parse(in, strlen(in), "t", &g, &err) == 0);
	text = text_of(g);
	PT_CHECK_STR(text, out);
	x[0] = 0, x[1] = -3;
	PT_CHECK(pt_gbt_predict(g, x) == 0.5 - 1 + 0.125);
	x[0] = 7, x[1] = -2.5 + 1e-9;
	PT_CHECK(pt_gbt_predict(g, x) == 0.5 + 2 + 0.125);
	x[0] = 7.5;
	PT_CHECK(pt_gbt_predict(g, x) == 0.5 + 0.25 + 0.125);
	pt_gbt_importance(g, imp);
	PT_CHECK(imp[0] == 0 && imp[1] == 0);
	free(text);
	pt_gbt_free(g);
}

/* pt_gbt_read() inside a larger text stops after the last tree. */
PT_TEST(read_section)
{
	static const char in[] =
		"before 1\n"
		"gbt 1 1 1 0\n"
		"tree 1\n"
		"  leaf 3\n"
		"after 2\n";
	struct pt_error err = PT_ERROR_INIT;
	struct pt_text t;
	struct pt_gbt *g = NULL;

	pt_text_init(&t, in, strlen(in), "t", &err);
	PT_REQUIRE(pt_text_next(&t) == 1);
	PT_CHECK(pt_text_is(&t, "before"));
	PT_REQUIRE(pt_gbt_read(&t, &g) == 0);
	PT_CHECK_INT(pt_gbt_ntrees(g), 1);
	PT_REQUIRE(pt_text_next(&t) == 1);
	PT_CHECK(pt_text_is(&t, "after"));
	PT_CHECK_INT(t.lineno, 5);
	PT_CHECK_INT(pt_text_next(&t), 0);
	pt_text_release(&t);
	pt_gbt_free(g);
}

static void check_reject(const char *text, const char *want)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_gbt *g = NULL;
	int ret = pt_gbt_parse(text, strlen(text), "t", &g, &err);

	if (!PT_CHECK_INT(ret, PT_EFORMAT) || !PT_CHECK(g == NULL) ||
	    !PT_CHECK(strstr(err.msg, want) != NULL))
		printf("# text:\n%s# message: %s\n# want: %s\n", text,
		       err.msg, want);
	pt_gbt_free(g);
}

#define H "gbt 1 2 1 0\n"   /* a header for one tree over 2 features */

PT_TEST(parser_rejects)
{
	/* the header */
	check_reject("", "t:1: expected 'gbt'");
	check_reject("gbx 1 2 1 0\n", "t:1: unexpected 'gbx'");
	check_reject("gbt 2 2 1 0\n", "t:1: gbt format version 2");
	check_reject("gbt 1 0 1 0\n", "t:1: the number of features 0 out");
	check_reject("gbt 1 2 -1 0\n", "t:1: the number of trees -1 out");
	check_reject("gbt 1 2 1\n", "t:1: line ends early");
	check_reject("gbt 1 2 1 0 0\n", "t:1: unexpected '0' (expected the "
		     "end");
	check_reject("gbt 1 2 01 0\n", "t:1: '01' is not a canonical");
	check_reject(" gbt 1 2 1 0\n", "t:1: unexpected indentation");
	/* node counts */
	check_reject(H, "t:2: 0 trees, expected 1");
	check_reject(H "tree 3\n  split 0 0.5 1 2\n  leaf 1\n",
		     "t:5: tree has 2 nodes, expected 3");
	check_reject(H "tree 3\n  split 0 0.5 1 2\n  leaf 1\ntree 1\n",
		     "t:5: tree has 2 nodes, expected 3");
	check_reject(H "tree 1\n  leaf 1\n  leaf 2\n",
		     "t:4: tree 0 has more than 1 nodes");
	check_reject("gbt 1 2 2 0\ntree 1\n  leaf 1\n  leaf 2\ntree 1\n"
		     "  leaf 3\n", "t:4: tree 0 has more than 1 nodes");
	check_reject("gbt 1 2 2 0\ntree 1\n  leaf 1\n",
		     "t:4: 1 trees, expected 2");
	check_reject(H "tree 2\n", "t:2: a tree of 2 nodes");
	check_reject(H "tree 0\n", "t:2: the number of nodes 0 out");
	check_reject(H "tree 1\n leaf 1\n", "t:3: unexpected indentation");
	check_reject(H "tree 1\n  node 1\n", "t:3: unexpected 'node' "
		     "(expected 'split' or 'leaf')");
	check_reject(H "  tree 1\n", "t:2: unexpected indentation");
	/* indices */
	check_reject(H "tree 3\n  split 0 0.5 1 3\n  leaf 1\n  leaf 2\n",
		     "t:3: a child index 3 out of range [0, 2]");
	check_reject(H "tree 3\n  split 2 0.5 1 2\n  leaf 1\n  leaf 2\n",
		     "t:3: a feature 2 out of range [0, 1]");
	check_reject(H "tree 3\n  split -1 0.5 1 2\n  leaf 1\n  leaf 2\n",
		     "t:3: a feature -1 out of range");
	/* not a tree */
	check_reject(H "tree 3\n  split 0 0.5 1 1\n  leaf 1\n  leaf 2\n",
		     "t:3: node 1 is reached twice");
	check_reject(H "tree 3\n  split 0 0.5 0 2\n  leaf 1\n  leaf 2\n",
		     "t:3: node 0 is reached twice");
	check_reject(H "tree 5\n  split 0 0.5 1 2\n  leaf 1\n"
		     "  split 1 0.5 3 0\n  leaf 2\n  leaf 3\n",
		     "t:5: node 0 is reached twice");
	check_reject(H "tree 5\n  split 0 0.5 1 2\n  split 1 0.5 3 4\n"
		     "  leaf 1\n  split 0 0.5 1 4\n  leaf 2\n",
		     "t:6: node 1 is reached twice");
	/* a cycle away from the root: 3 -> 4 -> 3 */
	check_reject(H "tree 7\n  split 0 0.5 1 2\n  leaf 1\n  leaf 2\n"
		     "  split 0 0.5 4 5\n  split 1 0.5 3 6\n  leaf 3\n"
		     "  leaf 4\n", "t:6: node 3 is not reached from node 0");
	/* numbers */
	check_reject(H "tree 1\n  leaf nan\n", "t:3: 'nan' is not a decimal");
	check_reject(H "tree 1\n  leaf inf\n", "t:3: 'inf' is not a decimal");
	check_reject(H "tree 1\n  leaf -inf\n", "t:3: '-inf' is not a");
	check_reject(H "tree 1\n  leaf 1e999\n", "t:3: a leaf value 1e999 "
		     "out of range");
	check_reject(H "tree 3\n  split 0 -1e400 1 2\n  leaf 1\n  leaf 2\n",
		     "t:3: a threshold -1e400 out of range");
	check_reject(H "tree 1\n  leaf 1e-400\n", "t:3: a leaf value 1e-400 "
		     "out of range");
	check_reject(H "tree 1\n  leaf 0x10\n", "t:3: '0x10' is not a");
	check_reject(H "tree 1\n  leaf +1\n", "t:3: '+1' is not a");
	check_reject(H "tree 1\n  leaf 1.\n", "t:3: '1.' is not a");
	check_reject(H "tree 1\n  leaf .5\n", "t:3: '.5' is not a");
	check_reject(H "tree 1\n  leaf 1e\n", "t:3: '1e' is not a");
	check_reject(H "tree 1\n  leaf 1E5\n", "t:3: '1E5' is not a");
	check_reject("gbt 1 2 1 nan\n", "t:1: 'nan' is not a decimal");
	/* trailing garbage */
	check_reject(H "tree 1\n  leaf 1 x\n", "t:3: unexpected 'x' "
		     "(expected the end");
	check_reject(H "tree 1 1\n  leaf 1\n", "t:2: unexpected '1' "
		     "(expected the end");
	check_reject(H "tree 3\n  split 0 0.5 1 2 3\n  leaf 1\n  leaf 2\n",
		     "t:3: unexpected '3' (expected the end");
	check_reject(H "tree 1\n  leaf 1\nmore\n", "t:4: unexpected line "
		     "after the last tree");
	check_reject(H "tree 1\n  leaf 1", "t:3: no newline");
}

PT_TEST(parser_accepts)
{
	static const char *const ok[] = {
		"gbt 1 1 0 -0\n",
		"gbt 1 1 1 1e+100\ntree 1\n  leaf 4.9406564584124654e-324\n",
		"gbt 1 3 1 0.5\ntree 3\n  split 2 -1.7976931348623157e+308 "
		"2 1\n  leaf 1e5\n  leaf -0.0\n",
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct pt_error err = PT_ERROR_INIT;
		struct pt_gbt *g = NULL;

		if (!PT_CHECK(pt_gbt_parse(ok[i], strlen(ok[i]), "t", &g,
					   &err) == 0))
			printf("# %s\n", err.msg);
		pt_gbt_free(g);
	}
}

/* --- inputs --------------------------------------------------------------- */

PT_TEST(bad_input)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_gbt *g = NULL;
	struct data D;
	double *w;
	size_t i;

	make_known(&D, 50, 9);
	w = malloc(D.n * sizeof(double));
	PT_REQUIRE(w);
	for (i = 0; i < D.n; i++)
		w[i] = 1;
	D.X[5 * 3 + 1] = NAN;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	PT_CHECK(g == NULL);
	PT_CHECK(strstr(err.msg, "row 5 column 1") != NULL);
	D.X[5 * 3 + 1] = 0.5;
	D.X[7 * 3 + 2] = -INFINITY;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	PT_CHECK(strstr(err.msg, "row 7 column 2") != NULL);
	D.X[7 * 3 + 2] = 0.5;
	D.y[3] = NAN;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	PT_CHECK(strstr(err.msg, "target of row 3") != NULL);
	D.y[3] = 2e100;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	D.y[3] = 1;
	w[4] = -1;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, w, &p, &g, &err),
		     PT_EINVAL);
	PT_CHECK(strstr(err.msg, "weight of row 4") != NULL);
	w[4] = NAN;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, w, &p, &g, &err),
		     PT_EINVAL);
	for (i = 0; i < D.n; i++)
		w[i] = 0;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, w, &p, &g, &err),
		     PT_EINVAL);
	PT_CHECK(strstr(err.msg, "sum to 0") != NULL);
	PT_CHECK_INT(pt_gbt_fit(D.X, 0, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 0, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	p.min_leaf = 0;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	p.min_leaf = 10;
	p.subsample = 0;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	p.subsample = 1.5;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	p.subsample = 1;
	p.shrinkage = 0;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	p.shrinkage = 0.1;
	p.max_depth = PT_GBT_MAX_DEPTH + 1;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	p.max_depth = 4;
	p.trees = -1;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err),
		     PT_EINVAL);
	/* NULL parameters are the defaults; no trees is a constant. */
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, NULL, &g, &err), 0);
	PT_CHECK_INT(pt_gbt_ntrees(g), 100);
	pt_gbt_free(g);
	p.trees = 0;
	PT_CHECK_INT(pt_gbt_fit(D.X, D.n, 3, D.y, NULL, &p, &g, &err), 0);
	PT_CHECK_INT(pt_gbt_ntrees(g), 0);
	pt_gbt_free(g);
	free(w);
	free_data(&D);
}

/* --- speed ---------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Prints the time of one prediction from 100 trees of depth 4 over 60
 * features (the cost model calls it millions of times). */
PT_TEST(predict_speed)
{
	struct pt_gbt_params p = PT_GBT_PARAMS_INIT;
	struct data D;
	struct pt_gbt *g;
	double t0, t1, sum = 0;
	int k, reps = 200000;

	make_random(&D, 3000, 60, 10);
	t0 = now();
	g = fit(&D, NULL, &p);
	t1 = now();
	printf("# fit: %.3f s (n=3000, d=60, 100 trees of depth 4)\n",
	       t1 - t0);
	t0 = now();
	for (k = 0; k < reps; k++)
		sum += pt_gbt_predict(g, &D.X[(size_t)(k % 1024) * 60]);
	t1 = now();
	printf("# predict: %.1f ns (100 trees of depth 4, d=60; sum %g)\n",
	       (t1 - t0) / reps * 1e9, sum);
	PT_CHECK(isfinite(sum));
	pt_gbt_free(g);
	free_data(&D);
}

PT_SUITE(gbt,
	 { "a known function, held out", known_function },
	 { "a step, exactly, by one split", step_exact },
	 { "fewer than 2 min_leaf rows: one leaf", too_few_rows },
	 { "every leaf has min_leaf rows", min_leaf },
	 { "rows of weight 0 change nothing", weights },
	 { "fits are deterministic", determinism },
	 { "ties: lowest feature, lowest threshold", ties },
	 { "every split is the best one (brute force)", brute_force },
	 { "write, read, write: same bytes", round_trip },
	 { "nodes in any order", read_any_order },
	 { "a section inside a larger text", read_section },
	 { "the parser rejects, with the line", parser_rejects },
	 { "the parser accepts", parser_accepts },
	 { "NaN and bad parameters are rejected", bad_input },
	 { "prediction speed (printed)", predict_speed });
