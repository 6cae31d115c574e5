/* pt_model.c: building, freeing, checking, printing and parsing pipeline
 * models (doc/model-format.md). The key lives in pt_key.c. */
#include "protune/pt_model.h"
#include "pt_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grow a counted array by one zeroed element. The arrays carry no capacity
 * field, so every add reallocates to the exact size; models hold at most a
 * few thousand elements per array and realloc usually extends in place. */
static void *grow_one(void **arr, int *n, size_t elem)
{
	char *p;

	if (*n < 0 || (size_t)*n + 1 > (size_t)-1 / elem)
		return NULL;
	p = realloc(*arr, ((size_t)*n + 1) * elem);
	if (!p)
		return NULL;
	*arr = p;
	p += (size_t)*n * elem;
	memset(p, 0, elem);
	(*n)++;
	return p;
}

struct pt_model *pt_model_new(void)
{
	struct pt_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->version = PT_MODEL_FORMAT_VERSION;
	pt_strvec_init(&m->argv);
	return m;
}

static void free_stage(struct pt_stage *s)
{
	int i, j;

	for (i = 0; i < s->ndims; i++)
		free(s->dims[i].label);
	free(s->dims);
	for (i = 0; i < s->nops; i++)
		free(s->ops[i].name);
	free(s->ops);
	for (i = 0; i < s->naccesses; i++) {
		struct pt_access *a = &s->accesses[i];

		for (j = 0; a->coords && j < a->ncoords; j++) {
			free(a->coords[j].coef);
			free(a->coords[j].varies);
		}
		free(a->coords);
	}
	free(s->accesses);
	free(s->def);
}

void pt_model_free(struct pt_model *m)
{
	int i;

	if (!m)
		return;
	free(m->halide_version);
	free(m->target);
	free(m->machine_params);
	free(m->generator);
	free(m->function);
	pt_strvec_release(&m->argv);
	for (i = 0; i < m->ninputs; i++) {
		free(m->inputs[i].label);
		free(m->inputs[i].est_min);
		free(m->inputs[i].est_extent);
	}
	free(m->inputs);
	for (i = 0; i < m->nfuncs; i++) {
		free(m->funcs[i].label);
		free(m->funcs[i].types);
		free(m->funcs[i].region_min);
		free(m->funcs[i].region_extent);
	}
	free(m->funcs);
	for (i = 0; i < m->nstages; i++)
		free_stage(&m->stages[i]);
	free(m->stages);
	free(m);
}

char *pt_model_strdup(const char *s)
{
	size_t n;
	char *d;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

struct pt_input *pt_model_add_input(struct pt_model *m)
{
	return grow_one((void **)&m->inputs, &m->ninputs, sizeof(*m->inputs));
}

struct pt_func *pt_model_add_func(struct pt_model *m)
{
	struct pt_func *f;

	f = grow_one((void **)&m->funcs, &m->nfuncs, sizeof(*m->funcs));
	if (f)
		f->first_stage = m->nstages;
	return f;
}

struct pt_stage *pt_model_add_stage(struct pt_model *m)
{
	struct pt_func *f;
	struct pt_stage *s;

	if (m->nfuncs < 1)
		return NULL;
	f = &m->funcs[m->nfuncs - 1];
	s = grow_one((void **)&m->stages, &m->nstages, sizeof(*m->stages));
	if (!s)
		return NULL;
	if (f->nstages == 0)
		f->first_stage = m->nstages - 1;
	s->func = m->nfuncs - 1;
	s->index = f->nstages++;
	return s;
}

struct pt_dim *pt_stage_add_dim(struct pt_stage *s)
{
	return grow_one((void **)&s->dims, &s->ndims, sizeof(*s->dims));
}

struct pt_access *pt_stage_add_access(struct pt_stage *s)
{
	return grow_one((void **)&s->accesses, &s->naccesses,
			sizeof(*s->accesses));
}

int pt_stage_add_op(struct pt_stage *s, const char *name, int64_t count)
{
	struct pt_op *op;
	char *copy;
	int i;

	if (!name)
		return PT_EINVAL;
	for (i = 0; i < s->nops; i++) {
		if (strcmp(s->ops[i].name, name) == 0) {
			s->ops[i].count += count;
			return 0;
		}
	}
	copy = pt_model_strdup(name);
	if (!copy)
		return PT_ENOMEM;
	op = grow_one((void **)&s->ops, &s->nops, sizeof(*s->ops));
	if (!op) {
		free(copy);
		return PT_ENOMEM;
	}
	op->name = copy;
	op->count = count;
	return 0;
}

struct pt_stage *pt_model_stage(const struct pt_model *m, int func, int stage)
{
	const struct pt_func *f;

	if (!m || func < 0 || func >= m->nfuncs)
		return NULL;
	f = &m->funcs[func];
	if (stage < 0 || stage >= f->nstages ||
	    f->first_stage < 0 || f->first_stage + stage >= m->nstages)
		return NULL;
	return &m->stages[f->first_stage + stage];
}

/* A whole number, perhaps negative, at *p: 1 and *p past it, or 0. */
static int literal(const char **p)
{
	const char *s = *p;

	if (*s == '-')
		s++;
	if (!(*s >= '0' && *s <= '9'))
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	*p = s;
	return 1;
}

int pt_stage_rvar_constant(const struct pt_stage *st, int index)
{
	const char *p = NULL, *q;
	char want[24];

	if (!st->def)
		return 0;
	for (q = st->def; (q = strstr(q, " rdom ")); q++)
		p = q;
	if (!p)
		return 0;
	snprintf(want, sizeof(want), " r%d(", index);
	p = strstr(p + 5, want);
	if (!p)
		return 0;
	p += strlen(want);
	if (!literal(&p) || strncmp(p, ", ", 2))
		return 0;
	p += 2;
	return literal(&p) && *p == ')';
}

int pt_halide_name_match(const char *dimname, const char *name)
{
	size_t a, b;

	if (!dimname)
		return 0;
	if (!strcmp(dimname, name))
		return 1;
	a = strlen(dimname);
	b = strlen(name);
	return a > b && dimname[a - b - 1] == '.' &&
		!strcmp(dimname + a - b, name);
}

/* Does the coordinate depend on the consumer's region, i.e. can computing
 * more of the consumer make it read more of the producer? */
static int coord_follows_region(const struct pt_stage *st,
				const struct pt_coord *c)
{
	int d;

	if (c->has_clamp_min && c->has_clamp_max)
		return 0;
	if (!c->affine || !c->coef)
		return 1;
	for (d = 0; d < st->ndims; d++)
		if (!st->dims[d].is_rvar && c->coef[d].num != 0)
			return 1;
	return 0;
}

void pt_model_exact_funcs(const struct pt_model *m, unsigned char *exact)
{
	int f, i, j, k;

	for (f = 0; f < m->nfuncs; f++) {
		const struct pt_func *fn = &m->funcs[f];

		exact[f] = fn->is_output ? 1 : 0;
		for (i = 0; i < fn->nstages && !exact[f]; i++) {
			const struct pt_stage *st =
				&m->stages[fn->first_stage + i];

			for (j = 0; j < st->naccesses && !exact[f]; j++) {
				const struct pt_access *a = &st->accesses[j];

				if (a->is_store)
					continue;
				if (a->kind == PT_ACCESS_FUNC &&
				    (a->producer < 0 || a->producer >= f ||
				     !exact[a->producer]))
					continue;
				for (k = 0; k < a->ncoords; k++)
					if (coord_follows_region(st,
							&a->coords[k]))
						exact[f] = 1;
			}
		}
	}
}


/* --- types and rationals ------------------------------------------------- */

static int type_valid(struct pt_type t)
{
	switch (t.code) {
	case PT_TYPE_INT:
		return t.bits == 8 || t.bits == 16 || t.bits == 32 ||
		       t.bits == 64;
	case PT_TYPE_UINT:
		return t.bits == 1 || t.bits == 8 || t.bits == 16 ||
		       t.bits == 32 || t.bits == 64;
	case PT_TYPE_FLOAT:
		return t.bits == 16 || t.bits == 32 || t.bits == 64;
	case PT_TYPE_HANDLE:
		return t.bits == 64;
	}
	return 0;
}

int pt_type_print(struct pt_type t, struct pt_strbuf *out)
{
	static const char letter[] = "iufh";

	if (!type_valid(t))
		return PT_EINVAL;
	return pt_strbuf_addf(out, "%c%d", letter[t.code], t.bits);
}

static int scan_type(const char **p, const char *end, struct pt_type *t)
{
	const char *s = *p;
	struct pt_type r;
	int64_t bits;

	if (s >= end)
		return -1;
	switch (*s) {
	case 'i': r.code = PT_TYPE_INT; break;
	case 'u': r.code = PT_TYPE_UINT; break;
	case 'f': r.code = PT_TYPE_FLOAT; break;
	case 'h': r.code = PT_TYPE_HANDLE; break;
	default: return -1;
	}
	s++;
	if (s >= end || *s == '-' || pt_scan_int64(&s, end, &bits) ||
	    bits > 64)
		return -1;
	r.bits = (int)bits;
	if (!type_valid(r))
		return -1;
	*t = r;
	*p = s;
	return 0;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

int pt_rat_make(int64_t num, int64_t den, struct pt_rat *out)
{
	uint64_t n, d, g;
	int neg;

	if (den == 0)
		return PT_EINVAL;
	neg = (num < 0) != (den < 0);
	n = mag(num);
	d = mag(den);
	g = gcd_u64(n, d);
	n /= g;
	d /= g;
	if (d > (uint64_t)INT64_MAX ||
	    n > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return PT_EINVAL;
	if (neg)
		out->num = n == (uint64_t)INT64_MAX + 1 ? INT64_MIN
							: -(int64_t)n;
	else
		out->num = (int64_t)n;
	out->den = (int64_t)d;
	return 0;
}

static int rat_canonical(struct pt_rat r)
{
	return r.den >= 1 && gcd_u64(mag(r.num), (uint64_t)r.den) == 1;
}

/* Both canonical (den > 0). */
static int rat_cmp(struct pt_rat a, struct pt_rat b)
{
#ifdef __SIZEOF_INT128__
	__int128 l = (__int128)a.num * b.den, r = (__int128)b.num * a.den;
#else
	long double l = (long double)a.num * b.den;
	long double r = (long double)b.num * a.den;
#endif
	return l < r ? -1 : l > r;
}

/* The put_* helpers write into a caller's buffer, big enough for what they
 * write (a rational: at most 40 bytes), and return the new end. The
 * printers use them rather than printf: printing is on the path of every
 * generator run. */
static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static char *put_rat(char *p, struct pt_rat r)
{
	p = pt_text_put_int(p, r.num);
	if (r.den != 1) {
		*p++ = '/';
		p = pt_text_put_int(p, r.den);
	}
	return p;
}

/* "n" or "n/d", canonical only. */
static int scan_rat(const char **p, const char *end, struct pt_rat *r)
{
	const char *s = *p;
	struct pt_rat v = { 0, 1 };

	if (pt_scan_int64(&s, end, &v.num))
		return -1;
	if (s < end && *s == '/') {
		s++;
		if (s >= end || *s == '-' || pt_scan_int64(&s, end, &v.den) ||
		    v.den < 2)
			return -1;
	}
	if (!rat_canonical(v))
		return -1;
	*r = v;
	*p = s;
	return 0;
}

/* A scalar estimate's bits: a signed integer as its value in 64-bit two's
 * complement (sign-extended, as Halide's as_const_int gives it), anything
 * else zero-extended from the type's width. One spelling per value. */
static int est_bits_ok(struct pt_type t, uint64_t bits)
{
	int64_t v;

	if (t.bits >= 64)
		return 1;
	if (t.code != PT_TYPE_INT)
		return (bits >> t.bits) == 0;
	v = (int64_t)bits;
	return v >= -((int64_t)1 << (t.bits - 1)) &&
	       v < ((int64_t)1 << (t.bits - 1));
}

/* No overflow in min + extent (the end of the range). */
static int range_ok(int64_t min, int64_t extent)
{
	return extent >= 1 && min <= INT64_MAX - extent;
}

static int op_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.'))
			return 0;
	}
	return 1;
}

/* --- printing ------------------------------------------------------------- */

static int print_label(struct pt_strbuf *out, const char *label,
		       unsigned flags)
{
	int ret;

	if (!(flags & PT_MODEL_PRINT_LABELS) || !label)
		return 0;
	ret = pt_strbuf_addstr(out, " label ");
	return ret ? ret : pt_text_add_string(out, label);
}

static char *put_dim(char *p, const struct pt_dim *d)
{
	*p++ = d->is_rvar ? 'r' : 'v';
	return pt_text_put_int(p, d->index);
}

static char *put_bound(char *p, int has, int64_t v)
{
	if (!has) {
		*p++ = '_';
		return p;
	}
	return pt_text_put_int(p, v);
}

static int print_coord(const struct pt_stage *s, const struct pt_coord *c,
		       struct pt_strbuf *out)
{
	char buf[128], *p;
	int ret = pt_strbuf_addstr(out, "      coord");
	int d;

	if (!ret && !c->affine)
		ret = pt_strbuf_addstr(out, " any");
	if (!ret && (c->affine || c->partial)) {
		if (s->ndims > 0 && (!c->coef || (c->partial && !c->varies)))
			return PT_EINVAL;
		for (d = 0; !ret && d < s->ndims; d++) {
			if (c->coef[d].num == 0)
				continue;
			p = buf;
			*p++ = ' ';
			p = put_rat(p, c->coef[d]);
			*p++ = '*';
			p = put_dim(p, &s->dims[d]);
			ret = pt_strbuf_add(out, buf, (size_t)(p - buf));
		}
		p = put_str(buf, " + [");
		p = put_rat(p, c->off_min);
		*p++ = ',';
		p = put_rat(p, c->off_max);
		*p++ = ']';
		if (!ret)
			ret = pt_strbuf_add(out, buf, (size_t)(p - buf));
	}
	if (!ret && !c->affine && c->partial) {
		ret = pt_strbuf_addstr(out, " varies");
		for (d = 0; !ret && d < s->ndims; d++) {
			if (!c->varies[d])
				continue;
			p = buf;
			*p++ = ' ';
			p = put_dim(p, &s->dims[d]);
			ret = pt_strbuf_add(out, buf, (size_t)(p - buf));
		}
	}
	if (!ret && (c->has_clamp_min || c->has_clamp_max)) {
		p = put_str(buf, " clamp [");
		p = put_bound(p, c->has_clamp_min, c->clamp_min);
		*p++ = ',';
		p = put_bound(p, c->has_clamp_max, c->clamp_max);
		*p++ = ']';
		ret = pt_strbuf_add(out, buf, (size_t)(p - buf));
	}
	return ret ? ret : pt_strbuf_addch(out, '\n');
}

/* An access block; without `count` it is the text that orders and merges
 * accesses. */
static int print_access(const struct pt_stage *s, const struct pt_access *a,
			int with_count, struct pt_strbuf *out)
{
	char buf[128], *p;
	int ret, i;

	if (a->ncoords > 0 && !a->coords)
		return PT_EINVAL;
	p = put_str(buf, "    access ");
	*p++ = a->kind == PT_ACCESS_FUNC ? 'f' : 'i';
	p = pt_text_put_int(p, a->producer);
	p = put_str(p, " value ");
	p = pt_text_put_int(p, a->value_index);
	if (with_count) {
		p = put_str(p, " count ");
		p = pt_text_put_int(p, a->count);
	}
	if (a->is_store)
		p = put_str(p, " store");
	if (a->data_dependent)
		p = put_str(p, " data-dependent");
	*p++ = '\n';
	ret = pt_strbuf_add(out, buf, (size_t)(p - buf));
	for (i = 0; !ret && i < a->ncoords; i++)
		ret = print_coord(s, &a->coords[i], out);
	return ret;
}

/* " MIN EXTENT" */
static int add_pair(struct pt_strbuf *out, int64_t a, int64_t b)
{
	char buf[48], *p = buf;

	*p++ = ' ';
	p = pt_text_put_int(p, a);
	*p++ = ' ';
	p = pt_text_put_int(p, b);
	return pt_strbuf_add(out, buf, (size_t)(p - buf));
}

int pt_model_print_input(const struct pt_model *m, int i, unsigned flags,
			 struct pt_strbuf *out)
{
	const struct pt_input *in = &m->inputs[i];
	int ret, d;

	ret = pt_strbuf_addf(out, "input i%d %s ", i,
			     in->is_buffer ? "buffer" : "scalar");
	if (!ret)
		ret = pt_type_print(in->type, out);
	if (!ret && in->is_buffer) {
		ret = pt_strbuf_addf(out, " dims %d est", in->ndims);
		for (d = 0; !ret && d < in->ndims; d++)
			ret = add_pair(out, in->est_min[d], in->est_extent[d]);
	} else if (!ret && in->has_estimate) {
		ret = pt_strbuf_addf(out, " est 0x%llx",
				     (unsigned long long)in->est_bits);
	} else if (!ret) {
		ret = pt_strbuf_addstr(out, " est none");
	}
	if (!ret)
		ret = print_label(out, in->label, flags);
	return ret ? ret : pt_strbuf_addch(out, '\n');
}

int pt_model_print_func(const struct pt_model *m, int fi, unsigned flags,
			struct pt_strbuf *out)
{
	const struct pt_func *f = &m->funcs[fi];
	int ret, i;

	ret = pt_strbuf_addf(out, "func f%d types ", fi);
	for (i = 0; !ret && i < f->ntypes; i++) {
		if (i)
			ret = pt_strbuf_addch(out, ',');
		if (!ret)
			ret = pt_type_print(f->types[i], out);
	}
	if (!ret)
		ret = pt_strbuf_addf(out, " args %d", f->nargs);
	if (!ret && f->is_output)
		ret = pt_strbuf_addstr(out, " output");
	if (!ret && f->can_inline)
		ret = pt_strbuf_addstr(out, " inline");
	if (!ret)
		ret = print_label(out, f->label, flags);
	if (!ret)
		ret = pt_strbuf_addstr(out, "\n  region");
	for (i = 0; !ret && i < f->nargs; i++)
		ret = add_pair(out, f->region_min[i], f->region_extent[i]);
	return ret ? ret : pt_strbuf_addch(out, '\n');
}

int pt_model_print_stage(const struct pt_model *m, const struct pt_stage *s,
			 unsigned flags, struct pt_strbuf *out)
{
	char buf[64], *p;
	int ret, i;

	(void)m;
	ret = pt_strbuf_addf(out, "  stage %d\n", s->index);
	for (i = 0; !ret && i < s->ndims; i++) {
		const struct pt_dim *d = &s->dims[i];

		p = put_dim(put_str(buf, "    dim "), d);
		ret = pt_strbuf_add(out, buf, (size_t)(p - buf));
		if (!ret)
			ret = add_pair(out, d->min, d->extent);
		if (!ret)
			ret = print_label(out, d->label, flags);
		if (!ret)
			ret = pt_strbuf_addch(out, '\n');
	}
	for (i = 0; !ret && i < s->nops; i++) {
		ret = pt_strbuf_addstr(out, "    op ");
		if (!ret)
			ret = pt_strbuf_addstr(out, s->ops[i].name);
		p = pt_text_put_int(put_str(buf, " "), s->ops[i].count);
		*p++ = '\n';
		if (!ret)
			ret = pt_strbuf_add(out, buf, (size_t)(p - buf));
	}
	for (i = 0; !ret && i < s->naccesses; i++)
		ret = print_access(s, &s->accesses[i], 1, out);
	if (!ret)
		ret = pt_strbuf_addstr(out, "    def ");
	if (!ret)
		ret = pt_text_add_string(out, s->def);
	return ret ? ret : pt_strbuf_addch(out, '\n');
}

static int print_header(const struct pt_model *m, unsigned flags,
			struct pt_strbuf *out)
{
	int ret;
	size_t i;

	ret = pt_strbuf_addf(out, "protune-model %d\nhalide ", m->version);
	if (!ret)
		ret = pt_text_add_string(out, m->halide_version);
	if (!ret)
		ret = pt_strbuf_addstr(out, "\ntarget ");
	if (!ret)
		ret = pt_text_add_string(out, m->target);
	if (!ret)
		ret = pt_strbuf_addstr(out, "\nmachine-params ");
	if (!ret)
		ret = pt_text_add_string(out, m->machine_params);
	if (!ret)
		ret = pt_strbuf_addch(out, '\n');
	if (ret || !(flags & PT_MODEL_PRINT_LABELS))
		return ret;
	if (m->generator) {
		ret = pt_strbuf_addstr(out, "generator ");
		if (!ret)
			ret = pt_text_add_string(out, m->generator);
		if (!ret)
			ret = pt_strbuf_addch(out, '\n');
	}
	if (!ret && m->function) {
		ret = pt_strbuf_addstr(out, "function ");
		if (!ret)
			ret = pt_text_add_string(out, m->function);
		if (!ret)
			ret = pt_strbuf_addch(out, '\n');
	}
	if (!ret && m->argv.nr > 0) {
		ret = pt_strbuf_addstr(out, "argv");
		for (i = 0; !ret && i < m->argv.nr; i++) {
			ret = pt_strbuf_addch(out, ' ');
			if (!ret)
				ret = pt_text_add_string(out, m->argv.v[i]);
		}
		if (!ret)
			ret = pt_strbuf_addch(out, '\n');
	}
	return ret;
}

int pt_model_print(const struct pt_model *m, unsigned flags,
		   struct pt_strbuf *out)
{
	/* The printer trusts indices and counts; check them first. */
	int ret = pt_model_validate(m, NULL);

	return ret ? ret : pt_model_print_valid(m, flags, out);
}

int pt_model_print_valid(const struct pt_model *m, unsigned flags,
			 struct pt_strbuf *out)
{
	size_t start = out->len;
	int ret, i, k;

	ret = print_header(m, flags, out);
	for (i = 0; !ret && i < m->ninputs; i++)
		ret = pt_model_print_input(m, i, flags, out);
	for (i = 0; !ret && i < m->nfuncs; i++) {
		ret = pt_model_print_func(m, i, flags, out);
		for (k = 0; !ret && k < m->funcs[i].nstages; k++)
			ret = pt_model_print_stage(
				m, &m->stages[m->funcs[i].first_stage + k],
				flags, out);
	}
	if (ret)
		pt_strbuf_setlen(out, start);
	return ret;
}

/* --- canonical order ---------------------------------------------------- */

static int cmp_op(const void *a, const void *b)
{
	return strcmp(((const struct pt_op *)a)->name,
		      ((const struct pt_op *)b)->name);
}

struct keyed {
	char *text;
	int idx;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	/* Ties by position, so that the merge keeps the first of equals. */
	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void free_access(struct pt_access *a)
{
	int j;

	for (j = 0; a->coords && j < a->ncoords; j++) {
		free(a->coords[j].coef);
		free(a->coords[j].varies);
	}
	free(a->coords);
}

static int canon_ops(struct pt_stage *s)
{
	int i, n = 0;

	for (i = 0; i < s->nops; i++)
		if (!s->ops[i].name)
			return PT_EINVAL;
	if (s->nops > 1)
		qsort(s->ops, (size_t)s->nops, sizeof(*s->ops), cmp_op);
	/* Check for overflow before changing anything. */
	for (i = 1; i < s->nops; i++) {
		if (strcmp(s->ops[i].name, s->ops[n].name) != 0) {
			n = i;
			continue;
		}
		if ((s->ops[i].count > 0 &&
		     s->ops[n].count > INT64_MAX - s->ops[i].count) ||
		    (s->ops[i].count < 0 &&
		     s->ops[n].count < INT64_MIN - s->ops[i].count))
			return PT_EINVAL;
	}
	for (i = 1, n = 0; i < s->nops; i++) {
		if (strcmp(s->ops[i].name, s->ops[n].name) == 0) {
			s->ops[n].count += s->ops[i].count;
			free(s->ops[i].name);
		} else {
			s->ops[++n] = s->ops[i];
		}
	}
	if (s->nops > 0)
		s->nops = n + 1;
	return 0;
}

static int canon_accesses(struct pt_stage *s)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	struct pt_access *na = NULL;
	struct keyed *k;
	int i, n, ret = 0, total = s->naccesses;
	int64_t sum;

	if (total < 2)
		return 0;
	k = calloc((size_t)total, sizeof(*k));
	if (!k)
		return PT_ENOMEM;
	for (i = 0; i < s->naccesses; i++) {
		ret = print_access(s, &s->accesses[i], 0, &sb);
		if (ret)
			goto out;
		k[i].text = pt_strbuf_detach(&sb, NULL);
		k[i].idx = i;
		if (!k[i].text) {
			ret = PT_ENOMEM;
			goto out;
		}
	}
	qsort(k, (size_t)s->naccesses, sizeof(*k), cmp_keyed);
	for (i = 0; i < s->naccesses; i = n) {
		sum = 0;
		for (n = i; n < s->naccesses &&
			    strcmp(k[n].text, k[i].text) == 0; n++)
			sum += s->accesses[k[n].idx].count;
		if (sum > INT32_MAX) {
			ret = PT_EINVAL;
			goto out;
		}
	}
	na = malloc((size_t)s->naccesses * sizeof(*na));
	if (!na) {
		ret = PT_ENOMEM;
		goto out;
	}
	for (i = 0, n = -1; i < s->naccesses; i++) {
		struct pt_access *a = &s->accesses[k[i].idx];

		if (n >= 0 && strcmp(k[i].text, k[i - 1].text) == 0) {
			na[n].count += a->count;
			free_access(a);
		} else {
			na[++n] = *a;
		}
	}
	free(s->accesses);
	s->accesses = na;
	s->naccesses = n + 1;
out:
	for (i = 0; i < total; i++)
		free(k[i].text);
	free(k);
	pt_strbuf_release(&sb);
	return ret;
}

int pt_stage_canonicalize(struct pt_stage *s)
{
	int ret = canon_ops(s);

	return ret ? ret : canon_accesses(s);
}

/* --- validation ----------------------------------------------------------- */

static int invalid(struct pt_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static int invalid(struct pt_error *err, const char *fmt, ...)
{
	char msg[PT_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return PT_EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pt_error_set(err, PT_EINVAL, "invalid model: %s", msg);
}

static int validate_coord(const struct pt_stage *s, const struct pt_coord *c,
			  int a, int k, struct pt_error *err)
{
	int d;

	if ((c->affine != 0 && c->affine != 1) ||
	    (c->partial != 0 && c->partial != 1) ||
	    (c->has_clamp_min != 0 && c->has_clamp_min != 1) ||
	    (c->has_clamp_max != 0 && c->has_clamp_max != 1))
		return invalid(err, "f%d stage %d access %d coord %d: flags "
			       "must be 0 or 1", s->func, s->index, a, k);
	if (c->has_clamp_min && c->has_clamp_max &&
	    c->clamp_min > c->clamp_max)
		return invalid(err, "f%d stage %d access %d coord %d: clamp "
			       "min > max", s->func, s->index, a, k);
	if (c->affine && c->partial)
		return invalid(err, "f%d stage %d access %d coord %d: affine "
			       "and partial", s->func, s->index, a, k);
	if (!c->affine && !c->partial)
		return 0;
	if (c->partial) {
		int n = 0;

		if (s->ndims == 0 || !c->varies)
			return invalid(err, "f%d stage %d access %d coord %d: "
				       "partial without varying dims",
				       s->func, s->index, a, k);
		for (d = 0; d < s->ndims; d++) {
			if (c->varies[d] != 0 && c->varies[d] != 1)
				return invalid(err, "f%d stage %d access %d "
					       "coord %d: flags must be 0 or "
					       "1", s->func, s->index, a, k);
			n += c->varies[d];
			if (c->varies[d] && c->coef && c->coef[d].num != 0)
				return invalid(err, "f%d stage %d access %d "
					       "coord %d: dim %d both affine "
					       "and varying", s->func,
					       s->index, a, k, d);
		}
		if (n == 0)
			return invalid(err, "f%d stage %d access %d coord %d: "
				       "partial without varying dims",
				       s->func, s->index, a, k);
	}
	if (s->ndims > 0 && !c->coef)
		return invalid(err, "f%d stage %d access %d coord %d: no "
			       "coefficients", s->func, s->index, a, k);
	for (d = 0; d < s->ndims; d++)
		if (!rat_canonical(c->coef[d]))
			return invalid(err, "f%d stage %d access %d coord %d: "
				       "coefficient %d not reduced", s->func,
				       s->index, a, k, d);
	if (!rat_canonical(c->off_min) || !rat_canonical(c->off_max))
		return invalid(err, "f%d stage %d access %d coord %d: offset "
			       "not reduced", s->func, s->index, a, k);
	if (rat_cmp(c->off_min, c->off_max) > 0)
		return invalid(err, "f%d stage %d access %d coord %d: offset "
			       "min > max", s->func, s->index, a, k);
	return 0;
}

static int validate_access(const struct pt_model *m, const struct pt_stage *s,
			   int ai, struct pt_error *err)
{
	const struct pt_access *a = &s->accesses[ai];
	int ndims, k, ret;

	if (a->kind == PT_ACCESS_FUNC) {
		if (a->producer < 0 || a->producer > s->func ||
		    (a->producer == s->func && s->index == 0))
			return invalid(err, "f%d stage %d: access %d reads f%d "
				       "(producers come first; a Func reads "
				       "itself only in updates)", s->func,
				       s->index, ai, a->producer);
		if (a->value_index < 0 ||
		    a->value_index >= m->funcs[a->producer].ntypes)
			return invalid(err, "f%d stage %d: access %d reads "
				       "value %d of f%d", s->func, s->index,
				       ai, a->value_index, a->producer);
		ndims = m->funcs[a->producer].nargs;
	} else if (a->kind == PT_ACCESS_INPUT) {
		if (a->producer < 0 || a->producer >= m->ninputs ||
		    !m->inputs[a->producer].is_buffer)
			return invalid(err, "f%d stage %d: access %d reads "
				       "i%d, which is not a buffer input",
				       s->func, s->index, ai, a->producer);
		if (a->value_index != 0)
			return invalid(err, "f%d stage %d: access %d reads "
				       "value %d of an input", s->func,
				       s->index, ai, a->value_index);
		ndims = m->inputs[a->producer].ndims;
	} else {
		return invalid(err, "f%d stage %d: access %d has no kind",
			       s->func, s->index, ai);
	}
	if (a->count < 1)
		return invalid(err, "f%d stage %d: access %d has count %d",
			       s->func, s->index, ai, a->count);
	if ((a->data_dependent != 0 && a->data_dependent != 1) ||
	    (a->is_store != 0 && a->is_store != 1))
		return invalid(err, "f%d stage %d: access %d: flags must be 0 "
			       "or 1", s->func, s->index, ai);
	if (a->is_store && (a->kind != PT_ACCESS_FUNC ||
			    a->producer != s->func || a->value_index != 0))
		return invalid(err, "f%d stage %d: access %d: a store is to "
			       "value 0 of the stage's own Func", s->func,
			       s->index, ai);
	if (a->ncoords != ndims)
		return invalid(err, "f%d stage %d: access %d has %d coords, "
			       "the producer %d dims", s->func, s->index, ai,
			       a->ncoords, ndims);
	if (ndims > 0 && !a->coords)
		return invalid(err, "f%d stage %d: access %d has no coords",
			       s->func, s->index, ai);
	for (k = 0; k < a->ncoords; k++) {
		ret = validate_coord(s, &a->coords[k], ai, k, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* Accesses strictly increasing in canonical order (which also rules out
 * duplicates, which must have been merged). */
static int validate_order(const struct pt_stage *s, struct pt_error *err)
{
	struct pt_strbuf prev = PT_STRBUF_INIT, cur = PT_STRBUF_INIT, tmp;
	int i, ret = 0;

	for (i = 0; !ret && i < s->naccesses; i++) {
		pt_strbuf_reset(&cur);
		ret = print_access(s, &s->accesses[i], 0, &cur);
		if (ret)
			break;
		if (i > 0 && strcmp(prev.buf, cur.buf) >= 0)
			ret = invalid(err, "f%d stage %d: access %d %s",
				      s->func, s->index, i,
				      strcmp(prev.buf, cur.buf) ?
				      "out of canonical order" :
				      "duplicates the one before (merge them)");
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
	pt_strbuf_release(&prev);
	pt_strbuf_release(&cur);
	return ret;
}

static int validate_stage(const struct pt_model *m, const struct pt_func *f,
			  const struct pt_stage *s, struct pt_error *err)
{
	int i, j, ret;

	if (s->ndims < 0 || (s->ndims > 0 && !s->dims) || s->nops < 0 ||
	    (s->nops > 0 && !s->ops) || s->naccesses < 0 ||
	    (s->naccesses > 0 && !s->accesses))
		return invalid(err, "f%d stage %d: bad array", s->func,
			       s->index);
	for (i = 0; i < s->ndims; i++) {
		const struct pt_dim *d = &s->dims[i];

		if (d->is_rvar != 0 && d->is_rvar != 1)
			return invalid(err, "f%d stage %d: dim %d: is_rvar "
				       "must be 0 or 1", s->func, s->index, i);
		if (d->is_rvar && s->index == 0)
			return invalid(err, "f%d stage 0: dim %d is an RVar in "
				       "a pure definition", s->func, i);
		if (d->index < 0 ||
		    d->index >= (d->is_rvar ? s->ndims : f->nargs))
			return invalid(err, "f%d stage %d: dim %d: %c%d out of "
				       "range", s->func, s->index, i,
				       d->is_rvar ? 'r' : 'v', d->index);
		if (!range_ok(d->min, d->extent))
			return invalid(err, "f%d stage %d: dim %d: bad range "
				       "%lld %lld", s->func, s->index, i,
				       (long long)d->min,
				       (long long)d->extent);
		for (j = 0; j < i; j++)
			if (s->dims[j].is_rvar == d->is_rvar &&
			    s->dims[j].index == d->index)
				return invalid(err, "f%d stage %d: dim %c%d "
					       "twice", s->func, s->index,
					       d->is_rvar ? 'r' : 'v',
					       d->index);
	}
	if (s->index == 0 && s->ndims != f->nargs)
		return invalid(err, "f%d stage 0: %d dims for %d args", s->func,
			       s->ndims, f->nargs);
	if (s->ndims == 0 && f->nargs > 0)
		return invalid(err, "f%d stage %d: no dims", s->func, s->index);
	for (i = 0; i < s->nops; i++) {
		const char *name = s->ops[i].name;

		if (!name || !op_name_ok(name, strlen(name)))
			return invalid(err, "f%d stage %d: op %d: bad name",
				       s->func, s->index, i);
		if (s->ops[i].count < 1)
			return invalid(err, "f%d stage %d: op %s: count %lld",
				       s->func, s->index, name,
				       (long long)s->ops[i].count);
		if (i > 0 && strcmp(s->ops[i - 1].name, name) >= 0)
			return invalid(err, "f%d stage %d: op %s out of order "
				       "or repeated", s->func, s->index, name);
	}
	for (i = 0; i < s->naccesses; i++) {
		ret = validate_access(m, s, i, err);
		if (ret)
			return ret;
	}
	if (!s->def)
		return invalid(err, "f%d stage %d: no definition text", s->func,
			       s->index);
	return validate_order(s, err);
}

static int validate_input(const struct pt_model *m, int i,
			  struct pt_error *err)
{
	const struct pt_input *in = &m->inputs[i];
	int d;

	if (!type_valid(in->type))
		return invalid(err, "i%d: bad type", i);
	if (in->is_buffer == 1) {
		if (in->ndims < 0 ||
		    (in->ndims > 0 && (!in->est_min || !in->est_extent)))
			return invalid(err, "i%d: bad dims", i);
		for (d = 0; d < in->ndims; d++)
			if (!range_ok(in->est_min[d], in->est_extent[d]))
				return invalid(err, "i%d: dim %d: bad estimate "
					       "%lld %lld", i, d,
					       (long long)in->est_min[d],
					       (long long)in->est_extent[d]);
		return 0;
	}
	if (in->is_buffer != 0 || in->ndims != 0)
		return invalid(err, "i%d: is_buffer must be 0 or 1; scalars "
			       "have 0 dims", i);
	if (in->has_estimate != 0 && in->has_estimate != 1)
		return invalid(err, "i%d: has_estimate must be 0 or 1", i);
	if (in->has_estimate && !est_bits_ok(in->type, in->est_bits))
		return invalid(err, "i%d: estimate bits 0x%llx do not fit the "
			       "type (signed: sign-extended to 64 bits; "
			       "others: zero-extended)", i,
			       (unsigned long long)in->est_bits);
	return 0;
}

static int validate_func(const struct pt_model *m, int fi, int first,
			 struct pt_error *err)
{
	const struct pt_func *f = &m->funcs[fi];
	int i, ret;

	if (f->ntypes < 1 || !f->types)
		return invalid(err, "f%d: no types", fi);
	for (i = 0; i < f->ntypes; i++)
		if (!type_valid(f->types[i]))
			return invalid(err, "f%d: type %d is bad", fi, i);
	if (f->nargs < 0 ||
	    (f->nargs > 0 && (!f->region_min || !f->region_extent)))
		return invalid(err, "f%d: bad args", fi);
	for (i = 0; i < f->nargs; i++)
		if (!range_ok(f->region_min[i], f->region_extent[i]))
			return invalid(err, "f%d: region of arg %d: bad range "
				       "%lld %lld", fi, i,
				       (long long)f->region_min[i],
				       (long long)f->region_extent[i]);
	if ((f->is_output != 0 && f->is_output != 1) ||
	    (f->can_inline != 0 && f->can_inline != 1))
		return invalid(err, "f%d: flags must be 0 or 1", fi);
	if (f->nstages < 1 || f->first_stage != first ||
	    f->nstages > m->nstages - first)
		return invalid(err, "f%d: stages %d..+%d do not follow the "
			       "previous Func's", fi, f->first_stage,
			       f->nstages);
	if (f->can_inline && f->nstages > 1)
		return invalid(err, "f%d: a Func with updates cannot be "
			       "inlined", fi);
	for (i = 0; i < f->nstages; i++) {
		const struct pt_stage *s = &m->stages[first + i];

		if (s->func != fi || s->index != i)
			return invalid(err, "f%d stage %d: marked as f%d stage "
				       "%d", fi, i, s->func, s->index);
		ret = validate_stage(m, f, s, err);
		if (ret)
			return ret;
	}
	return 0;
}

int pt_model_validate(const struct pt_model *m, struct pt_error *err)
{
	int i, first = 0, outputs = 0, ret;

	if (!m)
		return invalid(err, "no model");
	if (m->version != PT_MODEL_FORMAT_VERSION)
		return invalid(err, "version %d (expected %d)", m->version,
			       PT_MODEL_FORMAT_VERSION);
	if (!m->halide_version || !m->target || !m->machine_params)
		return invalid(err, "the Halide version, target and machine "
			       "params are required");
	if (m->ninputs < 0 || (m->ninputs > 0 && !m->inputs) ||
	    m->nfuncs < 1 || !m->funcs || m->nstages < 1 || !m->stages)
		return invalid(err, "a model needs at least one Func and "
			       "stage");
	for (i = 0; i < m->ninputs; i++) {
		ret = validate_input(m, i, err);
		if (ret)
			return ret;
	}
	for (i = 0; i < m->nfuncs; i++) {
		ret = validate_func(m, i, first, err);
		if (ret)
			return ret;
		first += m->funcs[i].nstages;
		outputs += m->funcs[i].is_output;
	}
	if (first != m->nstages)
		return invalid(err, "%d stages, but the Funcs have %d",
			       m->nstages, first);
	if (!outputs)
		return invalid(err, "no output Func");
	return 0;
}

/* --- parsing -------------------------------------------------------------- */

struct mparser {
	struct pt_text t;
	struct pt_model *m;
	struct pt_strbuf prev, cur;  /* access texts, for the order check */
};

static int nomem(struct mparser *p)
{
	return pt_error_set(p->t.err, PT_ENOMEM, "%s:%d: %s", p->t.name,
			    p->t.lineno, pt_strerror(PT_ENOMEM));
}

/* Read the next line, which must exist and be indented by `indent`;
 * `what` lists what may come. */
static int next_line(struct mparser *p, int indent, const char *what)
{
	int ret = pt_text_next(&p->t);

	if (ret < 0)
		return ret;
	if (ret == 0)
		return pt_text_error(&p->t, "unexpected end of text "
				     "(expected %s)", what);
	if (p->t.indent != indent)
		return pt_text_error(&p->t, "indented by %d spaces (expected "
				     "%d: %s)", p->t.indent, indent, what);
	return 0;
}

/* A whole header line `word "string"`. */
static int header_string(struct mparser *p, const char *word, char **out)
{
	int ret = next_line(p, 0, word);

	if (!ret)
		ret = pt_text_word(&p->t, word);
	if (!ret)
		ret = pt_text_string(&p->t, out, word);
	return ret ? ret : pt_text_end(&p->t);
}

/* An optional header line; *done is set when the line is something else
 * (left unread for the next step). */
static int optional_string(struct mparser *p, const char *word, char **out)
{
	int ret = pt_text_next(&p->t);

	if (ret <= 0)
		return ret;
	if (p->t.indent != 0 || !pt_text_is(&p->t, word)) {
		pt_text_unread(&p->t);
		return 0;
	}
	p->t.next++;
	ret = pt_text_string(&p->t, out, word);
	return ret ? ret : pt_text_end(&p->t);
}

static int parse_header(struct mparser *p)
{
	struct pt_model *m = p->m;
	char *arg;
	int ret;

	ret = pt_text_next(&p->t);
	if (ret == 0)
		return pt_text_error(&p->t, "empty text (expected "
				     "'protune-model 1')");
	if (ret < 0)
		return ret;
	if (p->t.indent != 0 || !pt_text_is(&p->t, "protune-model"))
		return pt_text_error(&p->t, "not a protune model (expected "
				     "'protune-model 1')");
	p->t.next++;
	if (!pt_text_is(&p->t, "1"))
		return pt_text_error(&p->t, "unsupported model version "
				     "(expected 1)");
	p->t.next++;
	ret = pt_text_end(&p->t);
	if (!ret)
		ret = header_string(p, "halide", &m->halide_version);
	if (!ret)
		ret = header_string(p, "target", &m->target);
	if (!ret)
		ret = header_string(p, "machine-params", &m->machine_params);
	if (!ret)
		ret = optional_string(p, "generator", &m->generator);
	if (!ret)
		ret = optional_string(p, "function", &m->function);
	if (ret)
		return ret;
	ret = pt_text_next(&p->t);
	if (ret <= 0)
		return ret;
	if (p->t.indent != 0 || !pt_text_is(&p->t, "argv")) {
		pt_text_unread(&p->t);
		return 0;
	}
	p->t.next++;
	if (pt_text_left(&p->t) == 0)
		return pt_text_error(&p->t, "argv without arguments (expected "
				     "at least one string)");
	while (pt_text_left(&p->t) > 0) {
		ret = pt_text_string(&p->t, &arg, "an argument");
		if (ret)
			return ret;
		ret = pt_strvec_push(&m->argv, arg);
		free(arg);
		if (ret)
			return nomem(p);
	}
	return 0;
}

static int tok_is(const struct pt_tok *tok, const char *word)
{
	return tok->n == strlen(word) && memcmp(tok->s, word, tok->n) == 0;
}

static int parse_type_tok(struct mparser *p, struct pt_type *t,
			  const char *what)
{
	struct pt_tok tok;
	const char *s;
	char buf[48];
	int ret = pt_text_tok(&p->t, &tok, what);

	if (ret)
		return ret;
	s = tok.s;
	if (scan_type(&s, tok.s + tok.n, t) || s != tok.s + tok.n)
		return pt_text_error(&p->t, "bad type '%s' (expected %s: i8 "
				     "i16 i32 i64 u1 u8 u16 u32 u64 f16 f32 "
				     "f64 h64)", pt_tok_show(&tok, buf), what);
	return 0;
}

static int parse_input(struct mparser *p)
{
	struct pt_input *in;
	struct pt_tok tok;
	int64_t v;
	int ret, idx, d;

	p->t.next++;  /* "input" */
	ret = pt_text_ref(&p->t, 'i', INT32_MAX, &idx, "an input name");
	if (ret)
		return ret;
	if (idx != p->m->ninputs)
		return pt_text_error(&p->t, "input i%d out of order (expected "
				     "i%d)", idx, p->m->ninputs);
	in = pt_model_add_input(p->m);
	if (!in)
		return nomem(p);
	if (pt_text_is(&p->t, "buffer")) {
		in->is_buffer = 1;
	} else if (!pt_text_is(&p->t, "scalar")) {
		ret = pt_text_tok(&p->t, &tok, "'buffer' or 'scalar'");
		return ret ? ret : pt_text_error(&p->t, "expected 'buffer' or "
						 "'scalar'");
	}
	p->t.next++;
	ret = parse_type_tok(p, &in->type, "a type");
	if (ret)
		return ret;
	if (in->is_buffer) {
		ret = pt_text_word(&p->t, "dims");
		if (!ret)
			ret = pt_text_int(&p->t, 0, INT32_MAX, &v,
					  "a number of dims");
		if (!ret)
			ret = pt_text_word(&p->t, "est");
		if (ret)
			return ret;
		/* The numbers, then nothing or a label. */
		if (pt_text_left(&p->t) != 2 * v &&
		    (pt_text_left(&p->t) != 2 * v + 2 ||
		     !tok_is(&p->t.toks[p->t.next + 2 * v], "label")))
			return pt_text_error(&p->t, "%lld dims need %lld "
					     "estimate numbers", (long long)v,
					     (long long)v * 2);
		if (v > 0) {
			in->est_min = calloc((size_t)v, sizeof(int64_t));
			in->est_extent = calloc((size_t)v, sizeof(int64_t));
			if (!in->est_min || !in->est_extent)
				return nomem(p);
		}
		in->ndims = (int)v;
		for (d = 0; !ret && d < in->ndims; d++) {
			ret = pt_text_int(&p->t, INT64_MIN, INT64_MAX,
					  &in->est_min[d], "an estimated min");
			if (!ret)
				ret = pt_text_int(&p->t, 1, INT64_MAX,
						  &in->est_extent[d],
						  "an estimated extent");
			if (!ret && !range_ok(in->est_min[d],
					      in->est_extent[d]))
				ret = pt_text_error(&p->t, "estimate of dim %d "
						    "overflows", d);
		}
		if (ret)
			return ret;
	} else {
		ret = pt_text_word(&p->t, "est");
		if (!ret)
			ret = pt_text_tok(&p->t, &tok, "an estimate");
		if (ret)
			return ret;
		if (tok.n == 4 && memcmp(tok.s, "none", 4) == 0) {
			in->has_estimate = 0;
		} else {
			size_t i;
			uint64_t bits = 0;

			if (tok.n < 3 || tok.n > 18 || tok.s[0] != '0' ||
			    tok.s[1] != 'x' || (tok.s[2] == '0' && tok.n > 3))
				goto bad_est;
			for (i = 2; i < tok.n; i++) {
				int h = (tok.s[i] >= '0' && tok.s[i] <= '9') ?
					tok.s[i] - '0' :
					(tok.s[i] >= 'a' && tok.s[i] <= 'f') ?
					tok.s[i] - 'a' + 10 : -1;

				if (h < 0)
					goto bad_est;
				bits = bits << 4 | (uint64_t)h;
			}
			if (!est_bits_ok(in->type, bits))
				return pt_text_error(&p->t, "estimate does not "
						     "fit the type (signed: "
						     "sign-extended to 64 "
						     "bits; others: "
						     "zero-extended)");
			in->has_estimate = 1;
			in->est_bits = bits;
		}
	}
	return pt_text_label(&p->t, &in->label);
bad_est:
	return pt_text_error(&p->t, "bad estimate (expected 'none' or the "
			     "value's bits as 0x and lowercase hex without "
			     "leading zeros)");
}

/* "[R,R]" */
static int parse_offsets(struct mparser *p, struct pt_coord *c)
{
	struct pt_tok tok;
	const char *s, *e;
	int ret = pt_text_tok(&p->t, &tok, "an offset range [MIN,MAX]");

	if (ret)
		return ret;
	s = tok.s;
	e = tok.s + tok.n;
	if (s >= e || *s++ != '[' || scan_rat(&s, e, &c->off_min) ||
	    s >= e || *s++ != ',' || scan_rat(&s, e, &c->off_max) ||
	    s >= e || *s++ != ']' || s != e)
		return pt_text_error(&p->t, "bad offset range (expected [R,R] "
				     "with reduced rationals n or n/d)");
	if (rat_cmp(c->off_min, c->off_max) > 0)
		return pt_text_error(&p->t, "offset range min > max");
	return 0;
}

static int scan_bound(const char **s, const char *e, int *has, int64_t *v)
{
	if (*s < e && **s == '_') {
		(*s)++;
		*has = 0;
		return 0;
	}
	*has = 1;
	return pt_scan_int64(s, e, v);
}

/* "clamp [A,B]" */
static int parse_clamp(struct mparser *p, struct pt_coord *c)
{
	struct pt_tok tok;
	const char *s, *e;
	int ret = pt_text_tok(&p->t, &tok, "a clamp range [MIN,MAX]");

	if (ret)
		return ret;
	s = tok.s;
	e = tok.s + tok.n;
	if (s >= e || *s++ != '[' ||
	    scan_bound(&s, e, &c->has_clamp_min, &c->clamp_min) ||
	    s >= e || *s++ != ',' ||
	    scan_bound(&s, e, &c->has_clamp_max, &c->clamp_max) ||
	    s >= e || *s++ != ']' || s != e)
		return pt_text_error(&p->t, "bad clamp range (expected [A,B] "
				     "with integers or _)");
	if (!c->has_clamp_min && !c->has_clamp_max)
		return pt_text_error(&p->t, "clamp [_,_] (leave the clamp "
				     "out)");
	if (c->has_clamp_min && c->has_clamp_max && c->clamp_min > c->clamp_max)
		return pt_text_error(&p->t, "clamp min > max");
	return 0;
}

static int find_dim(const struct pt_stage *s, const char *name, size_t n)
{
	const char *p = name + 1, *e = name + n;
	int64_t idx;
	int d, rvar;

	if (n < 2 || (name[0] != 'v' && name[0] != 'r') || *p == '-' ||
	    pt_scan_int64(&p, e, &idx) || p != e)
		return -1;
	rvar = name[0] == 'r';
	for (d = 0; d < s->ndims; d++)
		if (s->dims[d].is_rvar == rvar && s->dims[d].index == idx)
			return d;
	return -1;
}

/* "R*DIM ... + [R,R]": the terms and offsets of an affine or partial
 * coordinate. */
static int parse_terms(struct mparser *p, struct pt_stage *s,
		       struct pt_coord *c)
{
	struct pt_tok tok;
	int ret, d, last = -1;
	char buf[48];

	if (s->ndims > 0) {
		c->coef = calloc((size_t)s->ndims, sizeof(*c->coef));
		if (!c->coef)
			return nomem(p);
		for (d = 0; d < s->ndims; d++)
			c->coef[d].den = 1;
	}
	while (!pt_text_is(&p->t, "+")) {
		struct pt_rat r;
		const char *q, *e;

		ret = pt_text_tok(&p->t, &tok, "'any', a term R*DIM or '+'");
		if (ret)
			return ret;
		q = tok.s;
		e = tok.s + tok.n;
		if (scan_rat(&q, e, &r) || r.num == 0 || q >= e || *q++ != '*')
			return pt_text_error(&p->t, "bad term '%s' (expected "
					     "R*DIM with a nonzero reduced "
					     "rational R)",
					     pt_tok_show(&tok, buf));
		d = find_dim(s, q, (size_t)(e - q));
		if (d < 0)
			return pt_text_error(&p->t, "term '%s' names no dim of "
					     "this stage",
					     pt_tok_show(&tok, buf));
		if (d <= last)
			return pt_text_error(&p->t, "term '%s' out of the "
					     "stage's dim order or repeated",
					     pt_tok_show(&tok, buf));
		c->coef[d] = r;
		last = d;
	}
	p->t.next++;
	return parse_offsets(p, c);
}

/* "varies DIM..." after a partial coordinate's offsets. */
static int parse_varies(struct mparser *p, struct pt_stage *s,
			struct pt_coord *c)
{
	struct pt_tok tok;
	int ret, d, last = -1;
	char buf[48];

	ret = pt_text_word(&p->t, "varies");
	if (ret)
		return ret;
	if (s->ndims == 0)
		return pt_text_error(&p->t, "'varies' in a stage without dims");
	if (pt_text_left(&p->t) == 0 || pt_text_is(&p->t, "clamp"))
		return pt_text_error(&p->t, "'varies' without a dim (expected "
				     "the dims that the offset varies with)");
	c->varies = calloc((size_t)s->ndims, 1);
	if (!c->varies)
		return nomem(p);
	do {
		ret = pt_text_tok(&p->t, &tok, "a dim that the offset varies "
				  "with");
		if (ret)
			return ret;
		d = find_dim(s, tok.s, tok.n);
		if (d < 0)
			return pt_text_error(&p->t, "'%s' names no dim of this "
					     "stage", pt_tok_show(&tok, buf));
		if (d <= last)
			return pt_text_error(&p->t, "'%s' out of the stage's "
					     "dim order or repeated",
					     pt_tok_show(&tok, buf));
		if (c->coef[d].num != 0)
			return pt_text_error(&p->t, "'%s' has a term and varies",
					     pt_tok_show(&tok, buf));
		c->varies[d] = 1;
		last = d;
	} while (pt_text_left(&p->t) > 0 && !pt_text_is(&p->t, "clamp"));
	return 0;
}

static int parse_coord(struct mparser *p, struct pt_stage *s,
		       struct pt_coord *c)
{
	int ret;

	ret = next_line(p, 6, "'coord'");
	if (!ret)
		ret = pt_text_word(&p->t, "coord");
	if (ret)
		return ret;
	if (pt_text_is(&p->t, "any")) {
		p->t.next++;
		if (pt_text_left(&p->t) > 0 && !pt_text_is(&p->t, "clamp")) {
			/* partial: "any TERMS + [R,R] varies DIM..." */
			c->partial = 1;
			ret = parse_terms(p, s, c);
			if (!ret)
				ret = parse_varies(p, s, c);
			if (ret)
				return ret;
		}
	} else {
		c->affine = 1;
		ret = parse_terms(p, s, c);
		if (ret)
			return ret;
	}
	if (pt_text_is(&p->t, "clamp")) {
		p->t.next++;
		ret = parse_clamp(p, c);
		if (ret)
			return ret;
	}
	return pt_text_end(&p->t);
}

static int parse_access(struct mparser *p, struct pt_stage *s)
{
	const struct pt_model *m = p->m;
	struct pt_access *a;
	struct pt_strbuf tmp;
	struct pt_tok tok;
	int ret, line = p->t.lineno, k, ndims;
	int64_t v;
	char buf[48];

	p->t.next++;  /* "access" */
	ret = pt_text_tok(&p->t, &tok, "a producer fK or iK");
	if (ret)
		return ret;
	a = pt_stage_add_access(s);
	if (!a)
		return nomem(p);
	if (tok.n >= 2 && (tok.s[0] == 'f' || tok.s[0] == 'i')) {
		p->t.next--;
		if (tok.s[0] == 'f') {
			a->kind = PT_ACCESS_FUNC;
			ret = pt_text_ref(&p->t, 'f', s->func, &a->producer,
					  "a producer Func");
			if (!ret && a->producer == s->func && s->index == 0)
				ret = pt_text_error(&p->t, "a pure definition "
						    "reads its own Func");
		} else {
			a->kind = PT_ACCESS_INPUT;
			ret = pt_text_ref(&p->t, 'i', m->ninputs - 1,
					  &a->producer, "an input");
			if (!ret && !m->inputs[a->producer].is_buffer)
				ret = pt_text_error(&p->t, "i%d is a scalar "
						    "(only buffers are "
						    "accessed)", a->producer);
		}
		if (ret)
			return ret;
	} else {
		return pt_text_error(&p->t, "unexpected '%s' (expected a "
				     "producer fK or iK)",
				     pt_tok_show(&tok, buf));
	}
	ret = pt_text_word(&p->t, "value");
	if (!ret)
		ret = pt_text_int(&p->t, 0, a->kind == PT_ACCESS_FUNC ?
				  m->funcs[a->producer].ntypes - 1 : 0, &v,
				  "a value index");
	if (ret)
		return ret;
	a->value_index = (int)v;
	ret = pt_text_word(&p->t, "count");
	if (!ret)
		ret = pt_text_int(&p->t, 1, INT32_MAX, &v, "a count");
	if (ret)
		return ret;
	a->count = (int)v;
	if (pt_text_is(&p->t, "store")) {
		p->t.next++;
		if (a->kind != PT_ACCESS_FUNC || a->producer != s->func ||
		    a->value_index != 0)
			return pt_text_error(&p->t, "a store is to value 0 of "
					     "the stage's own Func");
		a->is_store = 1;
	}
	if (pt_text_is(&p->t, "data-dependent")) {
		p->t.next++;
		a->data_dependent = 1;
	}
	ret = pt_text_end(&p->t);
	if (ret)
		return ret;
	ndims = a->kind == PT_ACCESS_FUNC ? m->funcs[a->producer].nargs :
		m->inputs[a->producer].ndims;
	if (ndims > 0) {
		a->coords = calloc((size_t)ndims, sizeof(*a->coords));
		if (!a->coords)
			return nomem(p);
	}
	a->ncoords = ndims;
	for (k = 0; k < ndims; k++) {
		ret = parse_coord(p, s, &a->coords[k]);
		if (ret)
			return ret;
	}
	pt_strbuf_reset(&p->cur);
	if (print_access(s, a, 0, &p->cur))
		return nomem(p);
	if (s->naccesses > 1 && strcmp(p->prev.buf, p->cur.buf) >= 0)
		return pt_error_set(p->t.err, PT_EFORMAT, "%s:%d: access %s "
				    "(accesses are sorted by their text "
				    "without 'count', equal ones merged)",
				    p->t.name, line,
				    strcmp(p->prev.buf, p->cur.buf) ?
				    "out of order" : "repeated");
	tmp = p->prev;
	p->prev = p->cur;
	p->cur = tmp;
	return 0;
}

static int parse_dim(struct mparser *p, const struct pt_func *f,
		     struct pt_stage *s)
{
	struct pt_dim *d;
	struct pt_tok tok;
	int ret, i, idx;
	char buf[48];

	p->t.next++;  /* "dim" */
	ret = pt_text_tok(&p->t, &tok, "a dim name vK or rK");
	if (ret)
		return ret;
	if (tok.n < 2 || (tok.s[0] != 'v' && tok.s[0] != 'r'))
		return pt_text_error(&p->t, "unexpected '%s' (expected a dim "
				     "name vK or rK)", pt_tok_show(&tok, buf));
	p->t.next--;
	if (tok.s[0] == 'v')
		ret = pt_text_ref(&p->t, 'v', (int64_t)f->nargs - 1, &idx,
				  "a pure var (below the Func's args)");
	else if (s->index == 0)
		ret = pt_text_error(&p->t, "an RVar in a pure definition");
	else
		ret = pt_text_ref(&p->t, 'r', INT16_MAX, &idx, "an RVar");
	if (ret)
		return ret;
	for (i = 0; i < s->ndims; i++)
		if (s->dims[i].is_rvar == (tok.s[0] == 'r') &&
		    s->dims[i].index == idx)
			return pt_text_error(&p->t, "dim %c%d repeated",
					     tok.s[0], idx);
	d = pt_stage_add_dim(s);
	if (!d)
		return nomem(p);
	d->is_rvar = tok.s[0] == 'r';
	d->index = idx;
	ret = pt_text_int(&p->t, INT64_MIN, INT64_MAX, &d->min, "a min");
	if (!ret)
		ret = pt_text_int(&p->t, 1, INT64_MAX, &d->extent,
				  "an extent");
	if (!ret && !range_ok(d->min, d->extent))
		ret = pt_text_error(&p->t, "the dim's range overflows");
	return ret ? ret : pt_text_label(&p->t, &d->label);
}

static int parse_op(struct mparser *p, struct pt_stage *s)
{
	struct pt_op *op;
	struct pt_tok tok;
	char *name;
	int64_t count;
	int ret;
	char buf[48];

	p->t.next++;  /* "op" */
	ret = pt_text_tok(&p->t, &tok, "an op name");
	if (ret)
		return ret;
	if (!op_name_ok(tok.s, tok.n))
		return pt_text_error(&p->t, "bad op name '%s' (expected "
				     "[a-z0-9_.]+)", pt_tok_show(&tok, buf));
	ret = pt_text_int(&p->t, 1, INT64_MAX, &count, "a count");
	if (!ret)
		ret = pt_text_end(&p->t);
	if (ret)
		return ret;
	name = malloc(tok.n + 1);
	if (!name)
		return nomem(p);
	memcpy(name, tok.s, tok.n);
	name[tok.n] = '\0';
	if (s->nops > 0 && strcmp(s->ops[s->nops - 1].name, name) >= 0) {
		free(name);
		return pt_text_error(&p->t, "op '%s' out of order or repeated "
				     "(ops are sorted by name, unique)",
				     pt_tok_show(&tok, buf));
	}
	op = grow_one((void **)&s->ops, &s->nops, sizeof(*s->ops));
	if (!op) {
		free(name);
		return nomem(p);
	}
	op->name = name;
	op->count = count;
	return 0;
}

static int parse_stage(struct mparser *p, int fi)
{
	struct pt_func *f = &p->m->funcs[fi];
	struct pt_stage *s;
	int64_t idx;
	int ret;
	const char *expect = "'dim', 'op', 'access' or 'def'";

	p->t.next++;  /* "stage" */
	ret = pt_text_int(&p->t, f->nstages, f->nstages, &idx,
			  "the next stage number");
	if (!ret)
		ret = pt_text_end(&p->t);
	if (ret)
		return ret;
	s = pt_model_add_stage(p->m);
	if (!s)
		return nomem(p);
	f = &p->m->funcs[fi];
	ret = next_line(p, 4, expect);
	while (!ret && pt_text_is(&p->t, "dim")) {
		ret = parse_dim(p, f, s);
		if (!ret)
			ret = next_line(p, 4, expect);
	}
	expect = "'op', 'access' or 'def'";
	while (!ret && pt_text_is(&p->t, "op")) {
		ret = parse_op(p, s);
		if (!ret)
			ret = next_line(p, 4, expect);
	}
	expect = "'access' or 'def'";
	while (!ret && pt_text_is(&p->t, "access")) {
		ret = parse_access(p, s);
		if (!ret)
			ret = next_line(p, 4, expect);
	}
	if (ret)
		return ret;
	if (!pt_text_is(&p->t, "def")) {
		struct pt_tok tok;
		char buf[48];

		pt_text_tok(&p->t, &tok, expect);
		return pt_text_error(&p->t, "unexpected '%s' (expected %s)",
				     pt_tok_show(&tok, buf), expect);
	}
	p->t.next++;
	ret = pt_text_string(&p->t, &s->def, "the definition");
	return ret ? ret : pt_text_end(&p->t);
}

static int parse_types(struct mparser *p, struct pt_func *f)
{
	struct pt_tok tok;
	const char *s, *e;
	struct pt_type *t;
	size_t n = 1, i;
	int ret = pt_text_tok(&p->t, &tok, "a type list");

	if (ret)
		return ret;
	for (i = 0; i < tok.n; i++)
		n += tok.s[i] == ',';
	t = calloc(n, sizeof(*t));
	if (!t)
		return nomem(p);
	f->types = t;
	f->ntypes = (int)n;
	s = tok.s;
	e = tok.s + tok.n;
	for (i = 0; i < n; i++) {
		if ((i > 0 && (s >= e || *s++ != ',')) ||
		    scan_type(&s, e, &t[i]))
			return pt_text_error(&p->t, "bad type list (expected "
					     "types like u8,f32 separated "
					     "by commas)");
	}
	if (s != e)
		return pt_text_error(&p->t, "bad type list (expected types "
				     "like u8,f32 separated by commas)");
	return 0;
}

static int parse_func(struct mparser *p)
{
	struct pt_func *f;
	int64_t nargs;
	int ret, idx, i, fi;

	p->t.next++;  /* "func" */
	ret = pt_text_ref(&p->t, 'f', INT32_MAX, &idx, "a Func name");
	if (ret)
		return ret;
	if (idx != p->m->nfuncs)
		return pt_text_error(&p->t, "func f%d out of order (expected "
				     "f%d)", idx, p->m->nfuncs);
	f = pt_model_add_func(p->m);
	if (!f)
		return nomem(p);
	fi = idx;
	ret = pt_text_word(&p->t, "types");
	if (!ret)
		ret = parse_types(p, f);
	if (!ret)
		ret = pt_text_word(&p->t, "args");
	if (!ret)
		ret = pt_text_int(&p->t, 0, INT16_MAX, &nargs,
				  "a number of args");
	if (ret)
		return ret;
	f->nargs = (int)nargs;
	if (pt_text_is(&p->t, "output")) {
		p->t.next++;
		f->is_output = 1;
	}
	if (pt_text_is(&p->t, "inline")) {
		p->t.next++;
		f->can_inline = 1;
	}
	ret = pt_text_label(&p->t, &f->label);
	if (!ret)
		ret = next_line(p, 2, "'region'");
	if (!ret)
		ret = pt_text_word(&p->t, "region");
	if (ret)
		return ret;
	if (pt_text_left(&p->t) != 2 * f->nargs)
		return pt_text_error(&p->t, "region has %d numbers (expected "
				     "a min and an extent for each of %d "
				     "args)", pt_text_left(&p->t), f->nargs);
	if (f->nargs > 0) {
		f->region_min = calloc((size_t)f->nargs, sizeof(int64_t));
		f->region_extent = calloc((size_t)f->nargs, sizeof(int64_t));
		if (!f->region_min || !f->region_extent)
			return nomem(p);
	}
	for (i = 0; i < f->nargs; i++) {
		ret = pt_text_int(&p->t, INT64_MIN, INT64_MAX,
				  &f->region_min[i], "a region min");
		if (!ret)
			ret = pt_text_int(&p->t, 1, INT64_MAX,
					  &f->region_extent[i],
					  "a region extent");
		if (!ret && !range_ok(f->region_min[i], f->region_extent[i]))
			ret = pt_text_error(&p->t, "the region of arg %d "
					    "overflows", i);
		if (ret)
			return ret;
	}
	for (;;) {
		ret = pt_text_next(&p->t);
		if (ret < 0)
			return ret;
		if (ret == 0 || p->t.indent != 2 ||
		    !pt_text_is(&p->t, "stage")) {
			if (p->m->funcs[fi].nstages > 0) {
				if (ret)
					pt_text_unread(&p->t);
				return 0;
			}
			if (ret == 0)
				return pt_text_error(&p->t, "unexpected end of "
						     "text (expected "
						     "'  stage 0')");
			return pt_text_error(&p->t, "expected '  stage 0'");
		}
		if (p->m->funcs[fi].can_inline && p->m->funcs[fi].nstages)
			return pt_text_error(&p->t, "an inlinable Func has no "
					     "updates");
		ret = parse_stage(p, fi);
		if (ret)
			return ret;
	}
}

int pt_model_parse(const char *text, size_t len, const char *name,
		   struct pt_model **out, struct pt_error *err)
{
	struct mparser p;
	struct pt_tok tok;
	char buf[48];
	int ret;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	p.prev = (struct pt_strbuf)PT_STRBUF_INIT;
	p.cur = (struct pt_strbuf)PT_STRBUF_INIT;
	pt_text_init(&p.t, text, len, name ? name : "<model>", err);
	p.m = pt_model_new();
	if (!p.m)
		return pt_error_set(err, PT_ENOMEM, "%s",
				    pt_strerror(PT_ENOMEM));
	if (memchr(text, '\0', len)) {
		p.t.lineno = 1;
		ret = pt_text_error(&p.t, "NUL byte in the text");
		goto out;
	}
	ret = parse_header(&p);
	while (!ret) {
		ret = pt_text_next(&p.t);
		if (ret <= 0)
			break;
		if (p.t.indent == 0 && pt_text_is(&p.t, "input") &&
		    p.m->nfuncs == 0) {
			ret = parse_input(&p);
		} else if (p.t.indent == 0 && pt_text_is(&p.t, "func")) {
			ret = parse_func(&p);
		} else {
			pt_text_tok(&p.t, &tok, "");
			ret = pt_text_error(&p.t, "unexpected '%s' (expected "
					    "%s)", pt_tok_show(&tok, buf),
					    p.m->nfuncs ? "'func' or '  stage'"
					    : "'input' or 'func'");
		}
	}
	if (!ret && p.m->nfuncs == 0)
		ret = pt_text_error(&p.t, "unexpected end of text (expected "
				    "'func')");
	if (!ret) {
		struct pt_error verr = PT_ERROR_INIT;

		ret = pt_model_validate(p.m, &verr);
		if (ret)
			ret = pt_error_set(err, PT_EFORMAT, "%s: %s", p.t.name,
					   verr.msg);
	}
out:
	pt_text_release(&p.t);
	pt_strbuf_release(&p.prev);
	pt_strbuf_release(&p.cur);
	if (ret) {
		pt_model_free(p.m);
		return ret;
	}
	*out = p.m;
	return 0;
}
