/* pt_strided.h: the analysis behind rule 6's strided loads at constant
 * addresses (doc/schedule-legality.md), shared by the checker
 * (pt_sched_check.c) and the schedule space (tuner/pt_space.c), which must
 * refuse the same reads.
 *
 * A Func f is computed at a loop of Func j, whose last stage (the site
 * stage, of nb dims) is vectorized and reads f. Each read of f by that
 * stage, directly or through inlined Funcs, is composed into n coordinates
 * (n: f's arguments), each affine in the site stage's dims plus an offset
 * in [lo, hi], or bad (a clamp, a data-dependent value). Over one instance
 * of f, the site's dims take span[d] points (0: the count varies, a loop
 * of the site Func's own region at root; -1: no constant is known). From
 * the reads and the spans:
 * - pt_strided_note() notes each read into what f's buffer looks like
 *   along each of its dims (pt_strided_dim, pt_strided_step);
 * - pt_strided_extents() turns the notes into the buffer's extents, and
 *   whether each is a compile-time constant;
 * - pt_strided_bad() says whether one read is a vector load along the
 *   site's dim vd with a stride of 2 to 4 elements at an address that is a
 *   compile-time constant, which Halide 14 gets wrong.
 *
 * The caller composes the reads (each in its own way: the checker walks
 * them per check, the space caches them) with pt_strided_form_of(), and
 * turns each into a struct pt_strided_read with pt_strided_read_of().
 *
 * Ownership: every array is the caller's; nothing here allocates, keeps a
 * pointer past a call, or fails. No global state.
 */
#ifndef PROTUNE_PT_STRIDED_H
#define PROTUNE_PT_STRIDED_H

#include <stdint.h>

#include "protune/pt_model.h"

/* A coordinate of f while a read is composed: affine in the site stage's
 * dims (coef, nb entries, the caller's) plus an offset in [lo, hi], or
 * bad. */
struct pt_strided_form {
	int bad;
	double lo, hi;
	double *coef;
};

/* A coefficient of a read's coordinate: v, and v as the fraction p/q in
 * lowest terms with q <= 64 (q 0: no such fraction); for q > 1, a: the
 * residue of Halide's floor((p x + a) / q), -1 when unknown. */
struct pt_strided_coef {
	double v;
	int32_t p, q, a;
};

/* One read of f: per coordinate k < n, bad[k], [lo[k], hi[k]], and its nb
 * coefficients at coef[k * nb]. */
struct pt_strided_read {
	const unsigned char *bad;
	const double *lo, *hi;
	const struct pt_strided_coef *coef;
};

/* How the reads of dim k of f move with dim d of the site stage: all by one
 * fraction p/q with floors of one residue a (state 1), or not (2); state 0
 * before any read. Zero them before the first note. */
struct pt_strided_step {
	int state;
	long long p, q, a;
};

/* What f's buffer looks like along one dim, from the reads noted: state 0
 * none seen, 1 the reads line up (the same coefficients, coef: nb entries
 * of the caller's), 2 they do not (no constant extent), 3 unknown; frac: a
 * fraction on the way (floors); [lo, hi]: the reads' offsets over the
 * instance. Zero them, except coef, before the first note. */
struct pt_strided_dim {
	int state, frac;
	double lo, hi;
	double *coef;
};

/* k as p/q in lowest terms with q <= 64: 1, or 0 when it is no such
 * fraction. */
int pt_strided_fraction(double k, long long *p, long long *q);

/* Coordinate co of an access from stage st, whose dims are dims[] (forms
 * of nb coefficients), into out (whose coef has room for nb). */
void pt_strided_form_of(int nb, const struct pt_stage *st,
			const struct pt_coord *co,
			const struct pt_strided_form *dims,
			struct pt_strided_form *out);

/* The read of f whose n coordinates are cf[], into bad[], lo[], hi[] (n
 * each) and coef[] (n * nb). co: the coordinates of the access when it is
 * the site stage's own read of f, whose plain floors (offsets [(a - q + 1)
 * / q, a / q]) give their residue a; NULL for a read through an inlined
 * Func, whose residues are unknown. one_frac: a coordinate with two
 * fractions or more has an unknown residue (the space's rule, which refuses
 * a little more than the checker's, which takes each fraction's residue
 * on its own). */
void pt_strided_read_of(int n, int nb, const struct pt_strided_form *cf,
			const struct pt_coord *co, int one_frac,
			unsigned char *bad, double *lo, double *hi,
			struct pt_strided_coef *coef);

/* Note read r into cd[] (n) and cs[] (n * nb, [k * nb + d]). The reads
 * of a dim line up when they move alike with the site's dims; over the
 * instance they then span their offsets plus the dims' points. */
void pt_strided_note(struct pt_strided_dim *cd, struct pt_strided_step *cs,
		     int n, int nb, const double *span,
		     const struct pt_strided_read *r);

/* f's buffer per dim k < n from the notes: konst[k] (1: its extent may be
 * a compile-time constant), and the extent's bounds [elo[k], ehi[k]]
 * (1e300: no bound). Along a dim whose reads line up, their span over the
 * instance plus one point, and a fraction's floors may add one more;
 * Halide folds such an extent to a constant unless a fraction p/q of a dim
 * of e + 1 points leaves floor((x + e * p) / q) - floor(x / q) to the
 * parity of x. Reads that do not line up make an extent that varies; an
 * unknown one may be any constant. */
void pt_strided_extents(const struct pt_strided_dim *cd,
			const struct pt_strided_step *cs, int n, int nb,
			const double *span, unsigned char *konst, double *elo,
			double *ehi);

/* Is read r (n coordinates of nb coefficients) a strided vector load along
 * the site's dim vd at a compile-time constant address, one that moves
 * with none of the `moving` dims, that Halide 14 gets wrong? konst, elo,
 * ehi: the buffer's extents (as pt_strided_extents() gives them, perhaps
 * rounded up); nhi: the upper bounds before any rounding up. 1, with the
 * stride's bounds clamped to [2, 4] in *smin and *smax (either may be
 * NULL), or 0. */
int pt_strided_bad(const struct pt_strided_read *r, int n, int nb, int vd,
		   uint64_t moving, const unsigned char *konst,
		   const double *elo, const double *ehi, const double *nhi,
		   double *smin, double *smax);

#endif
