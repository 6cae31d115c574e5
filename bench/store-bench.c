/* store-bench: the cost of the git-tracked store's lookups.
 *
 *     store-bench DIR N
 *
 * Makes DIR a git repository (created if missing), writes N schedule files
 * of about 1 KB spread over 20 generator names into its store, then times
 * pt_store_read with the generator known and with generator NULL, of keys
 * that are present and absent, and pt_store_open itself (repository
 * discovery), and prints the median of each in microseconds.
 */
#include "protune/pt_model.h"
#include "protune/pt_store.h"

#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define NGEN 20
#define ROUNDS 2001  /* timed calls per measurement (odd: one median) */
#define OPEN_ROUNDS 201

static const char *const gen_names[NGEN] = {
	"blur", "sharpen", "unsharp", "harris", "camera_pipe",
	"local_laplacian", "bilateral_grid", "interpolate", "lens_blur",
	"nl_means", "stencil_chain", "conv_layer", "matmul", "iir_blur",
	"histogram_eq", "max_filter", "resize", "wavelet", "fft",
	"depthwise_conv",
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* A deterministic key: file i's, or (absent) one no file has. */
static void key_of(unsigned long i, int absent, uint8_t key[16])
{
	unsigned long long x = i * 0x9e3779b97f4a7c15ULL + (absent ? 77 : 1);
	int b;

	for (b = 0; b < 16; b++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 32;
		key[b] = (uint8_t)x;
	}
	key[15] = (uint8_t)(absent ? 0xff : 0x00); /* the two sets never meet */
}

/* About 1 KB of schedule text in the store's usual shape. */
static void sched_text(unsigned long i, const char *gen, struct pt_strbuf *out)
{
	uint8_t key[16];
	char hex[33];
	int f;

	key_of(i, 0, key);
	pt_hash_hex(key, hex);
	pt_strbuf_addf(out, "protune-schedule 1\nkey %s\n"
		       "meta generator=%s\nmeta function=%s\n"
		       "meta target=x86-64-linux-avx2-fma-sse41\n"
		       "meta tuner=baseline-0.3\nmeta mode=normal\n"
		       "meta budget=60\nmeta seed=%lu\nmeta iterations=%lu\n"
		       "meta predicted_ms=%lu.%02lu\n"
		       "meta measured_ms=%lu.%02lu\n"
		       "meta source=4f1c0a9e5d7b3c2a1908f7e6d5c4b3a291807f6e\n"
		       "meta dirty=0\nmeta machine=x86_64-8c-avx2\n",
		       hex, gen, gen, i, 1000 + i % 977, 3 + i % 17, i % 100,
		       4 + i % 13, (i * 7) % 100);
	for (f = 0; f < 6; f++) {
		if (f % 3 == 1) {
			pt_strbuf_addf(out, "func f%d inline label "
				       "\"stage_%d\"\n", f, f);
			continue;
		}
		pt_strbuf_addf(out, "func f%d root label \"stage_%d\"\n"
			       "  stage 0\n"
			       "    split v0 v0o v0i %d guard\n"
			       "    split v1 v1o v1i %d shift\n"
			       "    reorder v0i v1i v0o v1o\n"
			       "    vectorize v0i\n    parallel v1o\n",
			       f, f, 8 << (f % 3), 4 << (i % 4));
	}
}

static int fail(const char *what, const struct pt_error *err)
{
	fprintf(stderr, "store-bench: %s: %s\n", what, err->msg);
	return 1;
}

static int mkdirs(const char *path)
{
	char buf[4096], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0777) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

/* Median microseconds of ROUNDS reads of file keys (or absent ones). */
static double time_reads(struct pt_store *st, unsigned long n, int known,
			 int absent, double *samples)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	uint8_t key[16];
	unsigned long i;
	int r, want = absent ? PT_ENOTFOUND : 0;
	double t0;

	for (r = 0; r < ROUNDS; r++) {
		i = (unsigned long)r * 7919UL % n;
		key_of(i, absent, key);
		pt_strbuf_reset(&text);
		t0 = now_us();
		if (pt_store_read(st, known ? gen_names[i % NGEN] : NULL, key,
				  &text, NULL, NULL) != want) {
			fprintf(stderr, "store-bench: unexpected result for "
				"file %lu\n", i);
			exit(1);
		}
		samples[r] = now_us() - t0;
	}
	pt_strbuf_release(&text);
	return median(samples, ROUNDS);
}

static double time_open(const char *start, double *samples)
{
	struct pt_store_opts o = { NULL, NULL };
	struct pt_error err = PT_ERROR_INIT;
	struct pt_store *st;
	double t0;
	int r;

	o.start_dir = start;
	for (r = -10; r < OPEN_ROUNDS; r++) { /* ten to warm up */
		t0 = now_us();
		if (pt_store_open(&o, &st, &err)) {
			fail("open", &err);
			exit(1);
		}
		pt_store_close(st);
		if (r >= 0)
			samples[r] = now_us() - t0;
	}
	return median(samples, OPEN_ROUNDS);
}

int main(int argc, char **argv)
{
	struct pt_store_opts o = { NULL, NULL };
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf text = PT_STRBUF_INIT, sub = PT_STRBUF_INIT;
	struct pt_store *st = NULL;
	git_repository *repo = NULL;
	static double samples[ROUNDS];
	unsigned long n, i;
	size_t bytes = 0;
	uint8_t key[16];
	char *end;
	double t0, write_us;

	if (argc != 3) {
		fprintf(stderr, "usage: store-bench DIR N\n");
		return 2;
	}
	errno = 0;
	n = strtoul(argv[2], &end, 10);
	if (errno || *end || n == 0 || n > 10000000) {
		fprintf(stderr, "store-bench: bad count %s\n", argv[2]);
		return 2;
	}
	/* Keep libgit2 initialised throughout, as a long-lived user would
	 * (pt_store_open and close then only count references). */
	git_libgit2_init();
	if (mkdirs(argv[1]) < 0 || git_repository_init(&repo, argv[1], 0) < 0) {
		fprintf(stderr, "store-bench: cannot create a repository in "
			"%s\n", argv[1]);
		return 1;
	}
	git_repository_free(repo);
	pt_strbuf_addf(&sub, "%s/src/lib/module", argv[1]);
	if (mkdirs(sub.buf) < 0) {
		fprintf(stderr, "store-bench: cannot create %s\n", sub.buf);
		return 1;
	}
	o.start_dir = argv[1];
	if (pt_store_open(&o, &st, &err))
		return fail(argv[1], &err);

	t0 = now_us();
	for (i = 0; i < n; i++) {
		key_of(i, 0, key);
		pt_strbuf_reset(&text);
		sched_text(i, gen_names[i % NGEN], &text);
		bytes += text.len;
		if (pt_store_write(st, gen_names[i % NGEN], key, text.buf,
				   text.len, &err))
			return fail("write", &err);
	}
	write_us = (now_us() - t0) / (double)n;

	printf("store-bench: %lu files (%zu bytes each on average) over %d "
	       "generators in %s\n", n, bytes / n, NGEN, pt_store_dir(st));
	printf("%-40s %10.1f us (mean)\n", "write (atomic, fsync)", write_us);
	printf("%-40s %10.1f us\n", "read, generator known, present",
	       time_reads(st, n, 1, 0, samples));
	printf("%-40s %10.1f us\n", "read, generator known, absent",
	       time_reads(st, n, 1, 1, samples));
	printf("%-40s %10.1f us\n", "read, generator NULL, present",
	       time_reads(st, n, 0, 0, samples));
	printf("%-40s %10.1f us\n", "read, generator NULL, absent",
	       time_reads(st, n, 0, 1, samples));
	pt_store_close(st);
	printf("%-40s %10.1f us\n", "open (discovery at the root)",
	       time_open(argv[1], samples));
	printf("%-40s %10.1f us\n", "open (discovery 3 levels down)",
	       time_open(sub.buf, samples));
	pt_strbuf_release(&text);
	pt_strbuf_release(&sub);
	git_libgit2_shutdown();
	return 0;
}
