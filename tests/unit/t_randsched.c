/* Unit tests of pt_randsched(), pt_sched_baseline() and
 * pt_model_vector_lanes(), on the hand-built models of t_sched_check.c. */
#include "pt_test.h"
#include "protune/pt_model.h"
#include "protune/pt_randsched.h"
#include "protune/pt_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pt_model *pt_test_sched_model(const char *name);

static const char *const models[] = {
	"chain", "clamp", "tuple", "hist", "scan", "conv", "fanout", "multi",
	"long", "taps"
};
#define NMODELS (sizeof(models) / sizeof(models[0]))

static char *print(const struct pt_sched *s)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	if (pt_sched_print(s, &sb)) {
		pt_strbuf_release(&sb);
		return NULL;
	}
	return pt_strbuf_detach(&sb, NULL);
}

static int has_meta(const struct pt_sched *s, const char *prefix)
{
	size_t i;

	for (i = 0; i < s->meta.nr; i++)
		if (!strncmp(s->meta.v[i], prefix, strlen(prefix)))
			return 1;
	return 0;
}

PT_TEST(vector_lanes)
{
	struct pt_model *m = pt_model_new();

	m->target = pt_model_strdup("x86-64-linux-avx-avx2-avx512-"
				    "avx512_skylake-f16c-fma-sse41");
	PT_CHECK_INT(pt_model_vector_lanes(m, 8), 64);
	PT_CHECK_INT(pt_model_vector_lanes(m, 32), 16);
	free(m->target);
	m->target = pt_model_strdup("x86-64-linux-avx-avx2-f16c-sse41");
	PT_CHECK_INT(pt_model_vector_lanes(m, 16), 16);
	PT_CHECK_INT(pt_model_vector_lanes(m, 64), 4);
	free(m->target);
	m->target = pt_model_strdup("x86-64-linux-avx");
	PT_CHECK_INT(pt_model_vector_lanes(m, 32), 8);
	free(m->target);
	m->target = pt_model_strdup("arm-64-linux");
	PT_CHECK_INT(pt_model_vector_lanes(m, 64), 2);
	PT_CHECK_INT(pt_model_vector_lanes(m, 1), 16);  /* bools as bytes */
	free(m->target);
	/* Features are whole words: "noavx" is not avx. */
	m->target = pt_model_strdup("x86-64-linux-noavx-sse41");
	PT_CHECK_INT(pt_model_vector_lanes(m, 32), 4);
	pt_model_free(m);
}

PT_TEST(deterministic)
{
	struct pt_model *m = pt_test_sched_model("clamp");
	int seed, differ = 0;
	char *first = NULL;

	for (seed = 0; seed < 20; seed++) {
		struct pt_sched *a = pt_randsched(m, (uint64_t)seed);
		struct pt_sched *b = pt_randsched(m, (uint64_t)seed);
		char *ta = print(a), *tb = print(b);

		PT_REQUIRE(ta && tb);
		PT_CHECK_STR(ta, tb);
		if (!first)
			first = strdup(ta);
		else if (strcmp(first, ta))
			differ = 1;
		free(ta);
		free(tb);
		pt_sched_free(a);
		pt_sched_free(b);
	}
	PT_CHECK(differ);
	free(first);
	pt_model_free(m);
}

/* Every schedule drawn passes the check, without the generator's
 * fallback, prints, parses back to a legal schedule, and renders as
 * C++. */
PT_TEST(always_legal)
{
	size_t i;
	int seed, bad = 0;

	for (i = 0; i < NMODELS; i++) {
		struct pt_model *m = pt_test_sched_model(models[i]);

		PT_REQUIRE(m != NULL);
		for (seed = 0; seed < 2000; seed++) {
			struct pt_error err = PT_ERROR_INIT;
			struct pt_sched *s = pt_randsched(m, (uint64_t)seed);
			struct pt_sched *p = NULL;
			struct pt_strbuf cpp = PT_STRBUF_INIT;
			char *text;

			PT_REQUIRE(s != NULL);
			text = print(s);
			if (pt_sched_check(m, s, &err) ||
			    has_meta(s, "randsched-fallback") || !text ||
			    pt_sched_parse(text, strlen(text), "t", &p, &err) ||
			    pt_sched_check(m, p, &err) ||
			    pt_sched_to_cpp(m, s, &cpp)) {
				if (bad++ < 5)
					fprintf(stderr, "# %s seed %d: %s\n%s",
						models[i], seed, err.msg,
						text ? text : "");
			}
			free(text);
			pt_strbuf_release(&cpp);
			pt_sched_free(p);
			pt_sched_free(s);
		}
		pt_model_free(m);
	}
	PT_CHECK_INT(bad, 0);
}

struct coverage {
	int inline_, root, at, store_root, store_outer, split, reorder,
	    vectorize, parallel, unroll, unroll_rvar, shift, round,
	    rvar_split, nested_at;
};

static void count(const struct pt_model *m, const struct pt_sched *s,
		  struct coverage *c)
{
	int f, st, i;

	for (f = 0; f < s->nfuncs; f++) {
		const struct pt_sched_func *sf = &s->funcs[f];

		c->inline_ += sf->compute == PT_COMPUTE_INLINE;
		c->root += sf->compute == PT_COMPUTE_ROOT;
		if (sf->compute == PT_COMPUTE_AT) {
			c->at++;
			c->store_root += sf->store_root;
			c->store_outer += !sf->store_root &&
				(sf->store_at.func != sf->compute_at.func ||
				 strcmp(sf->store_at.loop,
					sf->compute_at.loop));
			c->nested_at += s->funcs[sf->compute_at.func].compute
				== PT_COMPUTE_AT;
		}
		for (st = 0; st < sf->nstages; st++) {
			const struct pt_sched_stage *ss = &sf->stages[st];

			for (i = 0; i < ss->ndirs; i++) {
				const struct pt_directive *d = &ss->dirs[i];

				switch (d->kind) {
				case PT_DIR_SPLIT:
					c->split++;
					c->shift += d->tail == PT_TAIL_SHIFT;
					c->round += d->tail == PT_TAIL_ROUND;
					c->rvar_split += d->dim[0] == 'r';
					break;
				case PT_DIR_REORDER: c->reorder++; break;
				case PT_DIR_VECTORIZE: c->vectorize++; break;
				case PT_DIR_PARALLEL: c->parallel++; break;
				case PT_DIR_UNROLL:
					c->unroll++;
					c->unroll_rvar += st > 0 &&
						m->funcs[f].nstages > 1 &&
						d->dim[0] == 'r';
					break;
				}
			}
		}
	}
}

PT_TEST(covers_the_space)
{
	struct coverage c;
	size_t i;
	int seed;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < NMODELS; i++) {
		struct pt_model *m = pt_test_sched_model(models[i]);

		for (seed = 0; seed < 300; seed++) {
			struct pt_sched *s = pt_randsched(m, (uint64_t)seed);

			PT_REQUIRE(s != NULL);
			count(m, s, &c);
			pt_sched_free(s);
		}
		pt_model_free(m);
	}
	fprintf(stderr, "# inline %d root %d at %d (nested %d) store root %d "
		"store outer %d split %d (rvar %d) reorder %d vectorize %d "
		"parallel %d unroll %d (rvar %d) shift %d round %d\n",
		c.inline_, c.root, c.at, c.nested_at, c.store_root,
		c.store_outer, c.split, c.rvar_split, c.reorder, c.vectorize,
		c.parallel, c.unroll, c.unroll_rvar, c.shift, c.round);
	PT_CHECK(c.inline_ > 0);
	PT_CHECK(c.root > 0);
	PT_CHECK(c.at > 0);
	PT_CHECK(c.nested_at > 0);
	PT_CHECK(c.store_root > 0);
	PT_CHECK(c.store_outer > 0);
	PT_CHECK(c.split > 0);
	PT_CHECK(c.rvar_split > 0);
	PT_CHECK(c.reorder > 0);
	PT_CHECK(c.vectorize > 0);
	PT_CHECK(c.parallel > 0);
	PT_CHECK(c.unroll > 0);
	PT_CHECK(c.unroll_rvar > 0);
	PT_CHECK(c.shift > 0);
	PT_CHECK(c.round > 0);
}

/* No compute site makes a reduction run once per consumer point: when
 * the histogram (whose work does not shrink with the region asked of it)
 * sits at a loop of out, that loop and the ones around it run at most
 * 16 times (the generator's bound on extra work). */
PT_TEST(no_runaway_recompute)
{
	struct pt_model *m = pt_test_sched_model("hist");
	int seed, nat = 0;

	for (seed = 0; seed < 500; seed++) {
		struct pt_sched *s = pt_randsched(m, (uint64_t)seed);
		const struct pt_sched_func *sf = &s->funcs[1];
		struct pt_nest n;
		int64_t inst = 1;
		int i;

		if (sf->compute == PT_COMPUTE_AT) {
			nat++;
			PT_REQUIRE(sf->compute_at.func == 2);
			PT_REQUIRE(pt_sched_nest(m, s, 2, 0, &n, NULL) == 0);
			for (i = 0; i < n.nloops; i++) {
				inst *= n.loops[i].extent;
				if (!strcmp(n.loops[i].name,
					    sf->compute_at.loop))
					break;
			}
			PT_CHECK(inst <= 16);
			free(n.loops);
		}
		pt_sched_free(s);
	}
	PT_CHECK(nat > 0);
	pt_model_free(m);
}

/* Rule 6 (one-element buffers) depends on what the pipeline reads of a
 * Func, which the draw does not know: the generator drops the round tails
 * the check refuses there. On onept (pointwise Funcs, one read at a single
 * point) every draw stays legal and keeps its directives. */
PT_TEST(one_element_repair)
{
	struct pt_model *m = pt_test_sched_model("onept");
	int seed, bad = 0, vec = 0;

	PT_REQUIRE(m != NULL);
	for (seed = 0; seed < 400; seed++) {
		struct pt_error err = PT_ERROR_INIT;
		struct pt_sched *s = pt_randsched(m, (uint64_t)seed);
		int f, i;

		PT_REQUIRE(s != NULL);
		if (pt_sched_check(m, s, &err) ||
		    has_meta(s, "randsched-fallback")) {
			if (bad++ < 3)
				fprintf(stderr, "# seed %d: %s\n", seed,
					*err.msg ? err.msg :
					"randsched-fallback");
		}
		/* Vectorized Funcs with a second split of the vector dim
		 * (the case the repair is about) do occur. */
		for (f = 0; f < s->nfuncs; f++) {
			const struct pt_sched_func *sf = &s->funcs[f];
			int splits = 0, v = 0;

			if (!sf->nstages)
				continue;
			for (i = 0; i < sf->stages[0].ndirs; i++) {
				const struct pt_directive *d =
					&sf->stages[0].dirs[i];

				v |= d->kind == PT_DIR_VECTORIZE;
				splits += d->kind == PT_DIR_SPLIT &&
					!strncmp(d->dim, "v0", 2);
			}
			vec += v && splits >= 2;
		}
		pt_sched_free(s);
	}
	PT_CHECK_INT(bad, 0);
	PT_CHECK(vec > 0);
	pt_model_free(m);
}

/* Rule 6 (unrolled tails) depends on the region a Func has at its compute
 * site, which the draw does not know either: the same repair applies. On
 * clamp every draw stays legal and keeps its directives, and draws where
 * it matters occur: giving the unrolled loop's split a round tail again
 * makes the check refuse them. */
PT_TEST(unrolled_tail_repair)
{
	struct pt_model *m = pt_test_sched_model("clamp");
	int seed, bad = 0, hit = 0;

	PT_REQUIRE(m != NULL);
	for (seed = 0; seed < 400; seed++) {
		struct pt_error err = PT_ERROR_INIT;
		struct pt_sched *s = pt_randsched(m, (uint64_t)seed);
		int f, i, j;

		PT_REQUIRE(s != NULL);
		if (pt_sched_check(m, s, &err) ||
		    has_meta(s, "randsched-fallback")) {
			if (bad++ < 3)
				fprintf(stderr, "# seed %d: %s\n", seed,
					*err.msg ? err.msg :
					"randsched-fallback");
		}
		for (f = 0; f < s->nfuncs; f++) {
			struct pt_sched_func *sf = &s->funcs[f];
			struct pt_sched_stage *ss;

			if (!sf->nstages || sf->compute != PT_COMPUTE_AT)
				continue;
			ss = &sf->stages[0];
			for (i = 0; i < ss->ndirs; i++) {
				struct pt_directive *d = &ss->dirs[i];

				if (d->kind != PT_DIR_SPLIT ||
				    d->tail != PT_TAIL_GUARD ||
				    strncmp(d->dim, "v0o", 3))
					continue;
				for (j = 0; j < ss->ndirs; j++)
					if (ss->dirs[j].kind == PT_DIR_UNROLL &&
					    !strcmp(ss->dirs[j].dim, d->inner))
						break;
				if (j == ss->ndirs)
					continue;
				d->tail = PT_TAIL_ROUND;
				if (pt_sched_check(m, s, &err) &&
				    strstr(err.msg, "unrolled '"))
					hit++;
				d->tail = PT_TAIL_GUARD;
			}
		}
		pt_sched_free(s);
	}
	PT_CHECK_INT(bad, 0);
	PT_CHECK(hit > 0);
	pt_model_free(m);
}

PT_TEST(baseline)
{
	size_t i;

	for (i = 0; i < NMODELS; i++) {
		struct pt_error err = PT_ERROR_INIT;
		struct pt_model *m = pt_test_sched_model(models[i]);
		struct pt_sched *s = pt_sched_baseline(m);

		PT_REQUIRE(s != NULL);
		if (pt_sched_check(m, s, &err))
			fprintf(stderr, "# %s: %s\n", models[i], err.msg);
		PT_CHECK(pt_sched_check(m, s, NULL) == 0);
		pt_sched_free(s);
		pt_model_free(m);
	}
}

PT_TEST(baseline_shape)
{
	struct pt_model *m = pt_test_sched_model("chain");
	struct pt_sched *s = pt_sched_baseline(m);
	char *text = print(s);
	/* avx2, u16: 16 lanes; the input wrapper and the pointwise a are
	 * inlined; b and out split, vectorized, parallel. */
	static const char want[] =
		"protune-schedule 1\n"
		"key a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\n"
		"meta tuner=baseline\n"
		"func f0 inline\n"
		"func f1 inline\n"
		"func f2 root\n"
		"  stage 0\n"
		"    split v0 v0o v0i 16 guard\n"
		"    vectorize v0i\n"
		"    parallel v1\n"
		"func f3 root\n"
		"  stage 0\n"
		"    split v0 v0o v0i 16 guard\n"
		"    vectorize v0i\n"
		"    parallel v1\n";

	PT_REQUIRE(text != NULL);
	PT_CHECK_STR(text, want);
	free(text);
	pt_sched_free(s);
	pt_model_free(m);

	/* Updates: the outermost pure dim in parallel, never an RVar. */
	m = pt_test_sched_model("hist");
	s = pt_sched_baseline(m);
	PT_CHECK_INT(s->funcs[1].compute, PT_COMPUTE_ROOT);
	PT_CHECK_INT(s->funcs[1].stages[1].ndirs, 0);
	pt_sched_free(s);
	pt_model_free(m);
	m = pt_test_sched_model("scan");
	s = pt_sched_baseline(m);
	PT_REQUIRE(s->funcs[1].stages[1].ndirs == 1);
	PT_CHECK_INT(s->funcs[1].stages[1].dirs[0].kind, PT_DIR_PARALLEL);
	PT_CHECK_STR(s->funcs[1].stages[1].dirs[0].dim, "v0");
	pt_sched_free(s);
	pt_model_free(m);
}

PT_SUITE(randsched,
	 { "vector lanes from the target", vector_lanes },
	 { "the same seed gives the same schedule", deterministic },
	 { "every schedule is legal (2000 seeds a model)", always_legal },
	 { "covers every construct", covers_the_space },
	 { "no reduction recomputed per point", no_runaway_recompute },
	 { "one-element buffers: draws repaired", one_element_repair },
	 { "unrolled tails: draws repaired", unrolled_tail_repair },
	 { "the baseline is legal", baseline },
	 { "the baseline's shape", baseline_shape });
