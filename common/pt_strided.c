/* pt_strided.c: rule 6's analysis of strided loads at constant addresses,
 * for the checker and the schedule space (see pt_strided.h). */
#include "protune/pt_strided.h"

#include <math.h>
#include <string.h>

static double rat_value(struct pt_rat r)
{
	return (double)r.num / (double)(r.den ? r.den : 1);
}

int pt_strided_fraction(double k, long long *p, long long *q)
{
	long long i;

	for (i = 1; i <= 64; i++) {
		double v = k * (double)i;

		if (v > -1e9 && v < 1e9 && (double)(long long)v == v) {
			*p = (long long)v;
			*q = i;
			return 1;
		}
	}
	return 0;
}

void pt_strided_form_of(int nb, const struct pt_stage *st,
			const struct pt_coord *co,
			const struct pt_strided_form *dims,
			struct pt_strided_form *out)
{
	int d, b;

	out->bad = 0;
	out->lo = out->hi = 0;
	memset(out->coef, 0, (size_t)nb * sizeof(double));
	if (co->has_clamp_min && co->has_clamp_max &&
	    co->clamp_min == co->clamp_max) {
		out->lo = out->hi = (double)co->clamp_min;
		return;  /* one constant point */
	}
	if (!co->affine || !co->coef || co->has_clamp_min ||
	    co->has_clamp_max) {
		/* Halide's index then holds a min, a max or a load: it knows
		 * no constant for it, and a vector of it is no ramp. */
		out->bad = 1;
		return;
	}
	out->lo = rat_value(co->off_min);
	out->hi = rat_value(co->off_max);
	for (d = 0; d < st->ndims; d++) {
		double k;

		if (!co->coef[d].num)
			continue;
		if (dims[d].bad) {
			out->bad = 1;
			return;
		}
		k = rat_value(co->coef[d]);
		out->lo += k * (k > 0 ? dims[d].lo : dims[d].hi);
		out->hi += k * (k > 0 ? dims[d].hi : dims[d].lo);
		for (b = 0; b < nb; b++)
			out->coef[b] += k * dims[d].coef[b];
	}
}

/* The residue a of a plain floor floor((p x + a) / q), whose offsets are
 * [(a - q + 1) / q, a / q]; 0 for any other form (a floor plus terms in
 * x % q, as in interpolate, is taken to be bounded by floors of residue 0
 * plus whole numbers, as Halide bounds x % q by [0, q - 1]). */
static int floor_residue(const struct pt_coord *co, long long q)
{
	double h = rat_value(co->off_max), wd = h - rat_value(co->off_min);
	double x = h * (double)q, want = (double)(q - 1) / (double)q;

	if (wd > want - 1e-9 && wd < want + 1e-9 && x > -1e9 && x < 1e9 &&
	    (double)(long long)x == x)
		return (int)((((long long)x % q) + q) % q);
	return 0;
}

void pt_strided_read_of(int n, int nb, const struct pt_strided_form *cf,
			const struct pt_coord *co, int one_frac,
			unsigned char *bad, double *lo, double *hi,
			struct pt_strided_coef *coef)
{
	int k, d;

	for (k = 0; k < n; k++) {
		struct pt_strided_coef *c = coef + (size_t)k * (size_t)nb;
		int fracs = 0;

		bad[k] = (unsigned char)cf[k].bad;
		lo[k] = cf[k].lo;
		hi[k] = cf[k].hi;
		for (d = 0; d < nb; d++) {
			long long p, q;

			c[d].v = cf[k].bad ? 0 : cf[k].coef[d];
			c[d].p = c[d].q = c[d].a = 0;
			if (c[d].v == 0 ||
			    !pt_strided_fraction(c[d].v, &p, &q) ||
			    p > INT32_MAX || p < -INT32_MAX)
				continue;
			c[d].p = (int32_t)p;
			c[d].q = (int32_t)q;
			if (q < 2)
				continue;
			fracs++;
			c[d].a = co && co[k].affine ?
				floor_residue(&co[k], q) : -1;
		}
		if (one_frac && fracs > 1)
			for (d = 0; d < nb; d++)
				if (c[d].q > 1)
					c[d].a = -1;
	}
}

/* A fraction p/q of a dim is floor((p * x + a) / q) to Halide; a plain
 * floor has offsets [(a - q + 1) / q, a / q] (see pt_strided_read_of()). */
void pt_strided_note(struct pt_strided_dim *cd, struct pt_strided_step *cs,
		     int n, int nb, const double *span,
		     const struct pt_strided_read *r)
{
	int k, d;

	for (k = 0; k < n; k++) {
		const struct pt_strided_coef *co = r->coef +
			(size_t)k * (size_t)nb;
		struct pt_strided_dim *e = &cd[k];
		double lo = r->lo[k], hi = r->hi[k];
		int unknown = r->bad[k], varies = 0;

		for (d = 0; d < nb && !unknown; d++) {
			struct pt_strided_step *s = &cs[(size_t)k * nb + d];
			double v = co[d].v, sp = span[d];
			long long p = co[d].p, q = co[d].q, a = 0;

			if (v == 0)
				continue;
			if (sp < 0)
				unknown = 1;
			else if (sp == 0)
				varies = 1;
			else if (v > 0)
				hi += v * (sp - 1);
			else
				lo += v * (sp - 1);
			if (!q) {
				unknown = 1;
				break;
			}
			if (q > 1) {
				e->frac = 1;
				a = co[d].a;
				if (a < 0)
					s->state = 2;  /* composed: unknown */
			}
			if (!s->state) {
				s->state = 1;
				s->p = p;
				s->q = q;
				s->a = a;
			} else if (s->p != p || s->q != q || s->a != a) {
				s->state = 2;
			}
		}
		if (unknown) {
			e->state = 3;
			continue;
		}
		if (e->state == 3)
			continue;
		if (varies)
			e->state = 2;
		if (e->state == 2)
			continue;
		if (!e->state) {
			e->state = 1;
			e->lo = lo;
			e->hi = hi;
			for (d = 0; d < nb; d++)
				e->coef[d] = co[d].v;
			continue;
		}
		for (d = 0; d < nb; d++)
			if (e->coef[d] != co[d].v)
				e->state = 2;
		if (lo < e->lo)
			e->lo = lo;
		if (hi > e->hi)
			e->hi = hi;
	}
}

void pt_strided_extents(const struct pt_strided_dim *cd,
			const struct pt_strided_step *cs, int n, int nb,
			const double *span, unsigned char *konst, double *elo,
			double *ehi)
{
	int k, d;

	for (k = 0; k < n; k++) {
		const struct pt_strided_dim *e = &cd[k];
		double w = e->hi - e->lo;

		konst[k] = 1;
		elo[k] = 1;
		ehi[k] = 1e300;
		if (e->state == 2) {
			konst[k] = 0;
			continue;
		}
		if (e->state != 1)
			continue;
		elo[k] = floor(w + 1e-9) + 1;
		ehi[k] = e->frac ? ceil(w - 1e-9) + 1 : elo[k];
		for (d = 0; d < nb; d++) {
			const struct pt_strided_step *s = &cs[(size_t)k * nb + d];
			double sp = span[d];

			if (s->state == 1 && s->q >= 2 && sp >= 2 &&
			    sp < 1e15 && ((long long)(sp - 1) * s->p) % s->q)
				konst[k] = 0;
		}
	}
}

int pt_strided_bad(const struct pt_strided_read *r, int n, int nb, int vd,
		   uint64_t moving, const unsigned char *konst,
		   const double *elo, const double *ehi, const double *nhi,
		   double *smin, double *smax)
{
	int k, i, d, top = -1, rem = 0;
	double lo = 0, hi = 0, slo, shi;

	for (k = 0; k < n; k++) {
		const struct pt_strided_coef *co = r->coef +
			(size_t)k * (size_t)nb;

		if (r->bad[k])
			return 0;
		for (d = 0; d < nb && d < 64; d++)
			if (co[d].v != 0 && ((moving >> d) & 1))
				return 0;  /* it moves with a loop */
	}
	for (k = 0; k < n; k++) {
		const struct pt_strided_coef *co = r->coef +
			(size_t)k * (size_t)nb + (size_t)vd;
		double a;

		if (co->v == 0)
			continue;
		/* A fraction p/q: Halide splits the vector into q
		 * interleaved ones that step by p. */
		if (!co->q)
			return 0;  /* no ramp: a gather */
		a = (double)co->p;
		/* The buffer's stride of dim k: a constant only when every
		 * dim inside it has a constant extent. */
		for (i = 0, slo = shi = 1; i < k; i++) {
			if (!konst[i])
				return 0;
			slo *= elo[i];
			shi *= ehi[i];
		}
		lo += a > 0 ? a * slo : a * shi;
		hi += a > 0 ? a * shi : a * slo;
		top = k;
		if (a >= 2 || a <= -2)
			rem = 1;
	}
	if (top < 0 || hi < 2 || lo > 4)
		return 0;
	/* Only a load that does not start at a multiple of the stride goes
	 * wrong: one that reads within the inner dims away from their
	 * first element (they may hold two points or more before f rounds
	 * them up), or steps by more than one along a dim. */
	for (i = 0; i < top && !rem; i++)
		if (nhi[i] >= 2)
			rem = 1;
	if (!rem)
		return 0;
	if (smin)
		*smin = lo < 2 ? 2 : lo;
	if (smax)
		*smax = hi > 4 ? 4 : hi;
	return 1;
}
