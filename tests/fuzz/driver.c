/* A fuzz driver for builds without libFuzzer: runs LLVMFuzzerTestOneInput
 * on every file named on the command line, then on N deterministic
 * pseudo-random mutations of them (`-n N`, default 0; `-s SEED`). Built with
 * sanitizers by `make check`, so the parsers are exercised on every run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			unsigned char *nb = realloc(buf, cap = cap ? cap * 2 : 4096);
			if (!nb)
				break;
			buf = nb;
		}
		n = fread(buf + *len, 1, cap - *len, f);
		if (n == 0)
			break;
		*len += n;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	unsigned char *seeds[64];
	size_t lens[64], nseeds = 0, i;
	long n = 0;
	int a;

	rng_state = 1;
	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "-n") == 0 && a + 1 < argc) {
			n = atol(argv[++a]);
		} else if (strcmp(argv[a], "-s") == 0 && a + 1 < argc) {
			rng_state = strtoull(argv[++a], NULL, 10);
		} else if (nseeds < 64) {
			seeds[nseeds] = slurp(argv[a], &lens[nseeds]);
			if (!seeds[nseeds]) {
				fprintf(stderr, "fuzz driver: cannot read %s\n", argv[a]);
				return 2;
			}
			LLVMFuzzerTestOneInput(seeds[nseeds], lens[nseeds]);
			nseeds++;
		}
	}
	for (i = 0; nseeds && i < (size_t)n; i++) {
		size_t s = rnd() % nseeds, len = lens[s], k, edits;
		unsigned char *buf;

		/* Mutations: truncate/extend, flip bytes, overwrite header ints. */
		switch (rnd() % 4) {
		case 0: len = len ? rnd() % (len + 1) : 0; break;
		case 1: len += rnd() % 64; break;
		default: break;
		}
		buf = malloc(len ? len : 1);
		if (!buf)
			return 2;
		for (k = 0; k < len; k++)
			buf[k] = k < lens[s] ? seeds[s][k] : (unsigned char)rnd();
		edits = len ? rnd() % 8 : 0;
		for (k = 0; k < edits; k++) {
			size_t at = rnd() % len;
			if (rnd() % 2 && at + 4 <= len && at < 20) {
				int32_t v = (int32_t)(rnd() % 2 ? rnd() % 16 : rnd());
				memcpy(buf + (at & ~(size_t)3), &v,
				       (at & ~(size_t)3) + 4 <= len ? 4 : 0);
			} else {
				buf[at] ^= (unsigned char)(1u << (rnd() % 8));
			}
		}
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
	}
	printf("fuzz driver: %zu seeds, %ld mutations, no failure\n", nseeds, n);
	for (i = 0; i < nseeds; i++)
		free(seeds[i]);
	return 0;
}
