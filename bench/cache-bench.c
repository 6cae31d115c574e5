/* cache-bench: the cost of a lookup in a large LMDB cache.
 *
 *   cache-bench DIR N [M]
 *
 * Removes the cache in DIR (pt_cache_destroy), fills it with N synthetic
 * entries of realistic size (a valid model text of about 3 KB with 10
 * stages, different for every entry so that the stage index is as large
 * as it would be; a schedule text of about 1 KB; 500 generator names),
 * then closes it, opens it again as protune-cc would, and times M lookups
 * (default 20000) of present keys in random order and M of absent keys,
 * one pt_cache_get each. Prints the fill time, the median and the 99th
 * percentile in microseconds of the open and of each kind of lookup, and
 * the sizes. The entries are fresh, so a hit never writes (see
 * PT_CACHE_TOUCH_S).
 *
 * Commits do not wait for the disk unless PROTUNE_CACHE_NOSYNC=0 is set
 * (opts.nosync: with fsync on every put, 100000 puts take minutes on most
 * disks and measure the disk, not the cache). Lookups are the same either
 * way.
 */
#include "protune/pt_cache.h"
#include "protune/pt_model.h"
#include "protune/pt_strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NFUNCS 10
#define NGENS 500

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The key of entry i (absent = 1: a key never stored). */
static void make_key(uint8_t key[16], uint64_t i, int absent)
{
	uint64_t a = mix(i * 2 + (uint64_t)absent), b = mix(a);
	int j;

	for (j = 0; j < 8; j++) {
		key[j] = (uint8_t)(a >> (8 * j));
		key[8 + j] = (uint8_t)(b >> (8 * j));
	}
}

/* A chain of NFUNCS two-dimensional stencils over one input; `variant`
 * changes the input's estimate, hence every stage hash. */
static int make_model(struct pt_strbuf *sb, uint64_t variant, int gen)
{
	long w = 1000 + (long)(variant % 1000000), h = 768;
	int f, ret;

	pt_strbuf_reset(sb);
	ret = pt_strbuf_addf(sb,
		"protune-model 1\n"
		"halide \"14.0.0\"\n"
		"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
		"machine-params \"2,16777216,40\"\n"
		"generator \"gen%d\"\n"
		"function \"gen%d\"\n"
		"argv \"/build/bin/gen%d.generator\" \"-g\" \"gen%d\" "
		"\"-o\" \"/build/gen\" \"target=host\"\n"
		"input i0 buffer f32 dims 2 est 0 %ld 0 %ld label \"input\"\n",
		gen, gen, gen, gen, w, h);
	for (f = 0; f < NFUNCS && !ret; f++) {
		int last = f == NFUNCS - 1;

		ret = pt_strbuf_addf(sb,
			"func f%d types f32 args 2%s label \"stage_%d\"\n"
			"  region 0 %ld 0 %ld\n"
			"  stage 0\n"
			"    dim v0 0 %ld label \"x\"\n"
			"    dim v1 0 %ld label \"y\"\n",
			f, last ? " output" : "", f, w, h, w, h);
		if (!ret && f == 0)
			ret = pt_strbuf_addf(sb,
				"    op load.f32 1\n"
				"    access i0 value 0 count 1\n"
				"      coord 1*v0 + [0,0]\n"
				"      coord 1*v1 + [0,0]\n"
				"    def \"f0(v0, v1) = i0(v0, v1)\"\n");
		else if (!ret)
			ret = pt_strbuf_addf(sb,
				"    op add.f32 1\n"
				"    access f%d value 0 count 2\n"
				"      coord 1*v0 + [0,2]\n"
				"      coord 1*v1 + [0,0]\n"
				"    def \"f%d(v0, v1) = f%d(v0, v1) + "
				"f%d(v0 + 2, v1)\"\n",
				f - 1, f, f - 1, f - 1);
	}
	return ret;
}

static int make_sched(struct pt_strbuf *sb, const uint8_t key[16])
{
	char hex[33];
	int f, ret;

	pt_hash_hex(key, hex);
	pt_strbuf_reset(sb);
	ret = pt_strbuf_addf(sb, "protune-schedule 1\nkey %s\n"
			     "meta tuner=baseline\nmeta seed=1\n", hex);
	for (f = 0; f < NFUNCS / 2 && !ret; f++)
		ret = pt_strbuf_addf(sb, "func f%d inline\n", f);
	for (; f < NFUNCS && !ret; f++)
		ret = pt_strbuf_addf(sb,
			"func f%d root label \"stage_%d\"\n"
			"  stage 0\n"
			"    split v0 v0o v0i 64 guard\n"
			"    split v1 v1o v1i 16 guard\n"
			"    reorder v0i v1i v0o v1o\n"
			"    vectorize v0i\n"
			"    parallel v1o\n", f, f);
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, size_t n)
{
	if (!n)
		return;
	qsort(t, n, sizeof(*t), cmp_double);
	printf("%-6s median %8.2f us   p99 %8.2f us   (%zu)\n", what,
	       t[n / 2], t[n * 99 / 100 < n ? n * 99 / 100 : n - 1], n);
}

static int fail(const char *what, const struct pt_error *err)
{
	fprintf(stderr, "cache-bench: %s: %s\n", what, err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts opts;
	struct pt_cache_entry e, got;
	struct pt_cache_info info;
	struct pt_strbuf model = PT_STRBUF_INIT, sched = PT_STRBUF_INIT;
	struct pt_model *m = NULL;
	struct pt_cache *c;
	const char *env = getenv("PROTUNE_CACHE_NOSYNC");
	double t0, fill_s, *times;
	uint64_t n, i, lookups, rng = 42, mbytes = 0, sbytes = 0;
	int ret;

	if (argc < 3 || argc > 4 || atoll(argv[2]) <= 0) {
		fprintf(stderr, "usage: cache-bench DIR N [M]\n");
		return 2;
	}
	n = (uint64_t)atoll(argv[2]);
	lookups = argc > 3 ? (uint64_t)atoll(argv[3]) : 20000;
	times = malloc((lookups > 20 ? lookups : 20) * sizeof(*times));
	if (!times)
		return 1;
	memset(&opts, 0, sizeof(opts));
	opts.dir = argv[1];
	opts.nosync = !(env && !strcmp(env, "0"));

	if (make_model(&model, 0, 0))
		return 1;
	if (pt_model_parse(model.buf, model.len, "<synthetic>", &m, &err))
		return fail("the synthetic model", &err);
	pt_model_free(m);

	if (pt_cache_destroy(opts.dir, &err) ||
	    pt_cache_open(&opts, &c, &err))
		return fail(opts.dir, &err);
	t0 = now_us();
	for (i = 0; i < n; i++) {
		char gen[16];

		snprintf(gen, sizeof(gen), "gen%d", (int)(i % NGENS));
		memset(&e, 0, sizeof(e));
		make_key(e.key, i, 0);
		if (make_model(&model, i, (int)(i % NGENS)) ||
		    make_sched(&sched, e.key))
			return 1;
		e.generator = e.function = gen;
		e.target = (char *)"x86-64-linux-avx-avx2-f16c-fma-sse41";
		e.model = model.buf;
		e.sched = sched.buf;
		e.budget_s = 60;
		e.predicted_ms = 1.5;
		e.measured_ms = -1;
		if (pt_cache_put(c, &e, &err))
			return fail("put", &err);
		mbytes += model.len;
		sbytes += sched.len;
	}
	fill_s = (now_us() - t0) / 1e6;
	pt_cache_close(c);

	printf("cache-bench: %llu entries (model %llu B, schedule %llu B on "
	       "average), nosync %d\n", (unsigned long long)n,
	       (unsigned long long)(mbytes / n),
	       (unsigned long long)(sbytes / n), opts.nosync);
	printf("fill   %.2f s   (%.1f us per put)\n", fill_s,
	       fill_s * 1e6 / (double)n);

	/* What protune-cc pays before its first lookup. */
	for (i = 0; i < 20; i++) {
		t0 = now_us();
		if (pt_cache_open(&opts, &c, &err))
			return fail("open", &err);
		pt_cache_close(c);
		times[i] = now_us() - t0;
	}
	report("open", times, 20);

	if (pt_cache_open(&opts, &c, &err))
		return fail("open", &err);
	for (i = 0; i < lookups; i++) {
		uint8_t key[16];

		rng = mix(rng);
		make_key(key, rng % n, 0);
		t0 = now_us();
		ret = pt_cache_get(c, key, &got, &err);
		times[i] = now_us() - t0;
		if (ret)
			return fail("get", &err);
		pt_cache_entry_release(&got);
	}
	report("hit", times, lookups);
	for (i = 0; i < lookups; i++) {
		uint8_t key[16];

		rng = mix(rng);
		make_key(key, rng, 1);
		t0 = now_us();
		ret = pt_cache_get(c, key, &got, &err);
		times[i] = now_us() - t0;
		if (ret != PT_ENOTFOUND)
			return fail("get of an absent key", &err);
	}
	report("miss", times, lookups);
	if (pt_cache_info(c, &info, &err))
		return fail("info", &err);
	printf("size   data.mdb %.1f MiB, map %.1f MiB, entries %.1f MiB\n",
	       (double)info.file_bytes / (1 << 20),
	       (double)info.map_bytes / (1 << 20),
	       (double)info.entry_bytes / (1 << 20));
	pt_cache_close(c);
	pt_strbuf_release(&model);
	pt_strbuf_release(&sched);
	free(times);
	return 0;
}
