/* pt_keep_int.h: what pt_features.c and pt_cost.c share to keep a stage's
 * result between schedules (not installed).
 *
 * Each keeps, per stage, its last result with a key: the bytes of
 * everything that result was computed from, written with pt_key_put()
 * and pt_key_loops(). A key equal to the kept one gives the kept result,
 * bit for bit. Building keys costs about as much as the results they
 * save when results seldom repeat (random complete schedules), so a
 * struct pt_keep decides per schedule whether to look them up: always
 * while the last schedule that looked found one stage in 8 or more,
 * otherwise in two schedules of 16 (one to keep results, the next to
 * find them). Whether a schedule looks stages up changes no result.
 */
#ifndef PROTUNE_PT_KEEP_INT_H
#define PROTUNE_PT_KEEP_INT_H

#include <string.h>

#include "protune/pt_features.h"

struct pt_keep {
	unsigned tries, hits;  /* stages looked up and found, this schedule */
	unsigned last;         /* the last schedule that looked found enough */
	unsigned nsched;       /* schedules begun */
};

/* Begin a schedule: 1 when its stages are to be looked up. */
static inline int pt_keep_begin(struct pt_keep *k)
{
	int use = k->last || (k->nsched & 15) <= 1;

	k->nsched++;
	k->tries = k->hits = 0;
	return use;
}

/* End a schedule begun with pt_keep_begin(), which returned `used`. */
static inline void pt_keep_end(struct pt_keep *k, int used)
{
	if (used && k->tries)
		k->last = k->hits >= (k->tries + 7) / 8;
}

static inline unsigned char *pt_key_put(unsigned char *o, const void *v,
					size_t n)
{
	memcpy(o, v, n);
	return o + n;
}

/* memcpy() of a few hundred bytes (a row) through the C library's copy:
 * GCC expands a memcpy() of a constant size that large inline as `rep
 * movsq`, whose start-up cost made the copies of rows into keys 5% of a
 * beam's time; hiding the size from it keeps the call. */
static inline void pt_copy_big(void *d, const void *s, size_t n)
{
#if defined(__GNUC__)
	__asm__("" : "+r"(n));
#endif
	memcpy(d, s, n);
}

static inline unsigned char *pt_key_put_big(unsigned char *o, const void *v,
					    size_t n)
{
	pt_copy_big(o, v, n);
	return o + n;
}

/* How many bytes pt_key_loops() writes for n loops, at most. */
#define PT_KEY_LOOPS_BYTES(n) \
	(sizeof(int) + (size_t)(n) * (4 * sizeof(int) + 2 * sizeof(int64_t)))

/* n loops: their count, and for each everything but its name. */
static inline unsigned char *pt_key_loops(unsigned char *o,
					  const struct pt_feat_loop *l, int n)
{
	int i;

	o = pt_key_put(o, &n, sizeof(n));
	for (i = 0; i < n; i++) {
		int v[4] = { l[i].dim, l[i].kind, l[i].is_split_inner,
			     l[i].tail };

		o = pt_key_put(o, v, sizeof(v));
		o = pt_key_put(o, &l[i].extent, sizeof(l[i].extent));
		o = pt_key_put(o, &l[i].stride, sizeof(l[i].stride));
	}
	return o;
}

#endif
