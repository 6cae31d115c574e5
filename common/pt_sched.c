/* pt_sched.c: building, copying, printing and parsing schedules
 * (doc/schedule-format.md). Legality is pt_sched_check.c's. */
#include "protune/pt_sched.h"
#include "pt_text.h"

#include <stdlib.h>
#include <string.h>

struct pt_sched *pt_sched_new(void)
{
	struct pt_sched *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->version = PT_SCHED_FORMAT_VERSION;
	pt_strvec_init(&s->meta);
	return s;
}

static void free_dir(struct pt_directive *d)
{
	free(d->dim);
	free(d->outer);
	free(d->inner);
	pt_strvec_release(&d->order);
}

static void free_func(struct pt_sched_func *f)
{
	int i, j;

	free(f->label);
	free(f->compute_at.loop);
	free(f->store_at.loop);
	for (i = 0; f->stages && i < f->nstages; i++) {
		for (j = 0; j < f->stages[i].ndirs; j++)
			free_dir(&f->stages[i].dirs[j]);
		free(f->stages[i].dirs);
	}
	free(f->stages);
}

void pt_sched_free(struct pt_sched *s)
{
	int i;

	if (!s)
		return;
	pt_strvec_release(&s->meta);
	for (i = 0; s->funcs && i < s->nfuncs; i++)
		free_func(&s->funcs[i]);
	free(s->funcs);
	free(s);
}

struct pt_sched *pt_sched_new_for(const struct pt_model *m)
{
	struct pt_sched *s = pt_sched_new();
	int i;

	if (!s)
		return NULL;
	memcpy(s->key, m->key, sizeof(s->key));
	if (m->nfuncs > 0) {
		s->funcs = calloc((size_t)m->nfuncs, sizeof(*s->funcs));
		if (!s->funcs)
			goto fail;
	}
	s->nfuncs = m->nfuncs;
	for (i = 0; i < m->nfuncs; i++) {
		struct pt_sched_func *f = &s->funcs[i];

		f->compute = PT_COMPUTE_ROOT;
		if (m->funcs[i].nstages > 0) {
			f->stages = calloc((size_t)m->funcs[i].nstages,
					   sizeof(*f->stages));
			if (!f->stages)
				goto fail;
		}
		f->nstages = m->funcs[i].nstages;
	}
	return s;
fail:
	pt_sched_free(s);
	return NULL;
}

struct pt_directive *pt_sched_add_directive(struct pt_sched_stage *st)
{
	struct pt_directive *d;

	if (st->ndirs < 0 ||
	    (size_t)st->ndirs + 1 > (size_t)-1 / sizeof(*d))
		return NULL;
	d = realloc(st->dirs, ((size_t)st->ndirs + 1) * sizeof(*d));
	if (!d)
		return NULL;
	st->dirs = d;
	d += st->ndirs++;
	memset(d, 0, sizeof(*d));
	pt_strvec_init(&d->order);
	return d;
}

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : PT_ENOMEM;
}

static int copy_dir(struct pt_directive *d, const struct pt_directive *s)
{
	d->kind = s->kind;
	d->factor = s->factor;
	d->tail = s->tail;
	if (dup_str(&d->dim, s->dim) || dup_str(&d->outer, s->outer) ||
	    dup_str(&d->inner, s->inner))
		return PT_ENOMEM;
	return pt_strvec_pushv(&d->order, (const char *const *)s->order.v);
}

static int copy_func(struct pt_sched_func *d, const struct pt_sched_func *s)
{
	int i, j;

	d->compute = s->compute;
	d->compute_at.func = s->compute_at.func;
	d->store_root = s->store_root;
	d->store_at.func = s->store_at.func;
	if (dup_str(&d->label, s->label) ||
	    dup_str(&d->compute_at.loop, s->compute_at.loop) ||
	    dup_str(&d->store_at.loop, s->store_at.loop))
		return PT_ENOMEM;
	if (s->nstages > 0) {
		d->stages = calloc((size_t)s->nstages, sizeof(*d->stages));
		if (!d->stages)
			return PT_ENOMEM;
	}
	d->nstages = s->nstages;
	for (i = 0; i < s->nstages; i++) {
		for (j = 0; j < s->stages[i].ndirs; j++) {
			struct pt_directive *nd;

			nd = pt_sched_add_directive(&d->stages[i]);
			if (!nd || copy_dir(nd, &s->stages[i].dirs[j]))
				return PT_ENOMEM;
		}
	}
	return 0;
}

const char *pt_sched_meta(const struct pt_sched *s, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; i < s->meta.nr; i++)
		if (!strncmp(s->meta.v[i], name, n) && s->meta.v[i][n] == '=')
			return s->meta.v[i] + n + 1;
	return NULL;
}

struct pt_sched *pt_sched_copy(const struct pt_sched *s)
{
	struct pt_sched *c = pt_sched_new();
	int i;

	if (!c)
		return NULL;
	c->version = s->version;
	memcpy(c->key, s->key, sizeof(c->key));
	if (pt_strvec_pushv(&c->meta, (const char *const *)s->meta.v))
		goto fail;
	if (s->nfuncs > 0) {
		c->funcs = calloc((size_t)s->nfuncs, sizeof(*c->funcs));
		if (!c->funcs)
			goto fail;
	}
	c->nfuncs = s->nfuncs;
	for (i = 0; i < s->nfuncs; i++)
		if (copy_func(&c->funcs[i], &s->funcs[i]))
			goto fail;
	return c;
fail:
	pt_sched_free(c);
	return NULL;
}

/* --- text --------------------------------------------------------------- */

#define MAX_STAGES 65536
#define MAX_FACTOR (1 << 24)

static const char *const tail_names[] = { "guard", "shift", "round" };

/* [a-z_][a-z0-9_]{0,30} */
static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 31 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int cname_ok(const char *s)
{
	return s && name_ok(s, strlen(s));
}

/* NAME=VALUE, NAME [a-z0-9_-]+, VALUE printable ASCII without spaces. */
static int meta_ok(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && ((s[i] >= 'a' && s[i] <= 'z') ||
			 (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
			 s[i] == '-'))
		i++;
	if (i == 0 || i == n || s[i] != '=')
		return 0;
	for (i++; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return 0;
	return 1;
}

/* Whether fJ is a Func of the model is pt_sched_check()'s business. */
static int print_site(struct pt_strbuf *out, const struct pt_site *site)
{
	if (site->func < 0 || !cname_ok(site->loop))
		return PT_EINVAL;
	return pt_strbuf_addf(out, "at f%d %s", site->func, site->loop);
}

static int print_dir(struct pt_strbuf *out, const struct pt_directive *d)
{
	static const char *const kinds[] = {
		"split", "reorder", "vectorize", "parallel", "unroll"
	};
	size_t i;
	int ret;

	if ((unsigned)d->kind > PT_DIR_UNROLL)
		return PT_EINVAL;
	ret = pt_strbuf_addf(out, "    %s", kinds[d->kind]);
	if (ret)
		return ret;
	if (d->kind == PT_DIR_REORDER) {
		if (d->order.nr < 2)
			return PT_EINVAL;
		for (i = 0; !ret && i < d->order.nr; i++) {
			if (!cname_ok(d->order.v[i]))
				return PT_EINVAL;
			ret = pt_strbuf_addf(out, " %s", d->order.v[i]);
		}
		return ret ? ret : pt_strbuf_addch(out, '\n');
	}
	if (!cname_ok(d->dim))
		return PT_EINVAL;
	if (d->kind != PT_DIR_SPLIT)
		return pt_strbuf_addf(out, " %s\n", d->dim);
	if (!cname_ok(d->outer) || !cname_ok(d->inner) || d->factor < 2 ||
	    d->factor > MAX_FACTOR || (unsigned)d->tail > PT_TAIL_ROUND)
		return PT_EINVAL;
	return pt_strbuf_addf(out, " %s %s %s %lld %s\n", d->dim, d->outer,
			      d->inner, (long long)d->factor,
			      tail_names[d->tail]);
}

static int same_site(const struct pt_site *a, const struct pt_site *b)
{
	return a->func == b->func && a->loop && b->loop &&
	       strcmp(a->loop, b->loop) == 0;
}

static int print_func(struct pt_strbuf *out, const struct pt_sched *s, int i)
{
	const struct pt_sched_func *f = &s->funcs[i];
	int ret, k, j;

	ret = pt_strbuf_addf(out, "func f%d ", i);
	if (ret)
		return ret;
	switch (f->compute) {
	case PT_COMPUTE_INLINE:
		ret = pt_strbuf_addstr(out, "inline");
		break;
	case PT_COMPUTE_ROOT:
		ret = pt_strbuf_addstr(out, "root");
		break;
	case PT_COMPUTE_AT:
		ret = print_site(out, &f->compute_at);
		if (!ret && f->store_root) {
			ret = pt_strbuf_addstr(out, " store root");
		} else if (!ret && f->store_at.loop &&
			   !same_site(&f->store_at, &f->compute_at)) {
			ret = pt_strbuf_addstr(out, " store ");
			if (!ret)
				ret = print_site(out, &f->store_at);
		}
		break;
	default:
		return PT_EINVAL;
	}
	if (!ret && f->label) {
		ret = pt_strbuf_addstr(out, " label ");
		if (!ret)
			ret = pt_text_add_string(out, f->label);
	}
	if (!ret)
		ret = pt_strbuf_addch(out, '\n');
	if (f->nstages < 0 || f->nstages > MAX_STAGES ||
	    (f->nstages > 0 && !f->stages))
		return PT_EINVAL;
	for (k = 0; !ret && k < f->nstages; k++) {
		const struct pt_sched_stage *st = &f->stages[k];

		if (st->ndirs == 0)
			continue;
		if (st->ndirs < 0 || !st->dirs)
			return PT_EINVAL;
		ret = pt_strbuf_addf(out, "  stage %d\n", k);
		for (j = 0; !ret && j < st->ndirs; j++)
			ret = print_dir(out, &st->dirs[j]);
	}
	return ret;
}

int pt_sched_print(const struct pt_sched *s, struct pt_strbuf *out)
{
	size_t start = out->len, i;
	char hex[33];
	int ret;

	if (!s || s->version != PT_SCHED_FORMAT_VERSION || s->nfuncs < 1 ||
	    !s->funcs)
		return PT_EINVAL;
	pt_hash_hex(s->key, hex);
	ret = pt_strbuf_addf(out, "protune-schedule %d\nkey %s\n", s->version,
			     hex);
	for (i = 0; !ret && i < s->meta.nr; i++) {
		if (!meta_ok(s->meta.v[i], strlen(s->meta.v[i])))
			ret = PT_EINVAL;
		else
			ret = pt_strbuf_addf(out, "meta %s\n", s->meta.v[i]);
	}
	for (i = 0; !ret && i < (size_t)s->nfuncs; i++)
		ret = print_func(out, s, (int)i);
	if (ret)
		pt_strbuf_setlen(out, start);
	return ret;
}

struct sparser {
	struct pt_text t;
	struct pt_sched *s;
};

static int snomem(struct sparser *p)
{
	return pt_error_set(p->t.err, PT_ENOMEM, "%s:%d: %s", p->t.name,
			    p->t.lineno, pt_strerror(PT_ENOMEM));
}

/* Take a name token into a new string. */
static int take_name(struct sparser *p, char **out, const char *what)
{
	struct pt_tok tok;
	char buf[48];
	int ret = pt_text_tok(&p->t, &tok, what);

	*out = NULL;
	if (ret)
		return ret;
	if (!name_ok(tok.s, tok.n))
		return pt_text_error(&p->t, "bad name '%s' (expected %s: "
				     "[a-z_][a-z0-9_]{0,30})",
				     pt_tok_show(&tok, buf), what);
	*out = malloc(tok.n + 1);
	if (!*out)
		return snomem(p);
	memcpy(*out, tok.s, tok.n);
	(*out)[tok.n] = '\0';
	return 0;
}

/* "at fJ LOOP" after "at" was seen. */
static int parse_site(struct sparser *p, struct pt_site *site)
{
	int ret = pt_text_word(&p->t, "at");

	if (!ret)
		ret = pt_text_ref(&p->t, 'f', INT32_MAX, &site->func,
				  "a Func fJ");
	return ret ? ret : take_name(p, &site->loop, "a loop name");
}

static int parse_dir(struct sparser *p, struct pt_sched_stage *st)
{
	struct pt_directive *d;
	struct pt_tok tok;
	int64_t v;
	int ret, i;
	char buf[48], *name;

	d = pt_sched_add_directive(st);
	if (!d)
		return snomem(p);
	if (pt_text_is(&p->t, "split")) {
		p->t.next++;
		d->kind = PT_DIR_SPLIT;
		ret = take_name(p, &d->dim, "the dim to split");
		if (!ret)
			ret = take_name(p, &d->outer, "the outer dim");
		if (!ret)
			ret = take_name(p, &d->inner, "the inner dim");
		if (!ret)
			ret = pt_text_int(&p->t, 2, MAX_FACTOR, &v,
					  "a split factor");
		if (ret)
			return ret;
		d->factor = v;
		ret = pt_text_tok(&p->t, &tok, "'guard', 'shift' or 'round'");
		if (ret)
			return ret;
		for (i = 0; i < 3; i++)
			if (strlen(tail_names[i]) == tok.n &&
			    memcmp(tail_names[i], tok.s, tok.n) == 0)
				break;
		if (i == 3)
			return pt_text_error(&p->t, "unexpected '%s' (expected "
					     "'guard', 'shift' or 'round')",
					     pt_tok_show(&tok, buf));
		d->tail = (enum pt_tail)i;
	} else if (pt_text_is(&p->t, "reorder")) {
		p->t.next++;
		d->kind = PT_DIR_REORDER;
		if (pt_text_left(&p->t) < 2)
			return pt_text_error(&p->t, "reorder needs at least "
					     "two dims");
		while (pt_text_left(&p->t) > 0) {
			ret = take_name(p, &name, "a dim");
			if (ret)
				return ret;
			ret = pt_strvec_push(&d->order, name);
			free(name);
			if (ret)
				return snomem(p);
		}
	} else {
		static const char *const words[] = {
			"vectorize", "parallel", "unroll"
		};
		static const enum pt_directive_kind kinds[] = {
			PT_DIR_VECTORIZE, PT_DIR_PARALLEL, PT_DIR_UNROLL
		};

		for (i = 0; i < 3; i++)
			if (pt_text_is(&p->t, words[i]))
				break;
		if (i == 3) {
			pt_text_tok(&p->t, &tok, "");
			return pt_text_error(&p->t, "unknown directive '%s' "
					     "(expected 'split', 'reorder', "
					     "'vectorize', 'parallel' or "
					     "'unroll')",
					     pt_tok_show(&tok, buf));
		}
		p->t.next++;
		d->kind = kinds[i];
		ret = take_name(p, &d->dim, "a dim");
		if (ret)
			return ret;
	}
	return pt_text_end(&p->t);
}

static int parse_stages(struct sparser *p, struct pt_sched_func *f)
{
	struct pt_sched_stage *ns;
	int64_t idx;
	int ret;

	for (;;) {
		ret = pt_text_next(&p->t);
		if (ret <= 0)
			return ret;
		if (p->t.indent != 2 || !pt_text_is(&p->t, "stage")) {
			pt_text_unread(&p->t);
			return 0;
		}
		p->t.next++;
		ret = pt_text_int(&p->t, f->nstages, MAX_STAGES - 1, &idx,
				  "a stage number above the one before");
		if (!ret)
			ret = pt_text_end(&p->t);
		if (ret)
			return ret;
		ns = realloc(f->stages, (size_t)(idx + 1) * sizeof(*ns));
		if (!ns)
			return snomem(p);
		memset(ns + f->nstages, 0,
		       (size_t)(idx + 1 - f->nstages) * sizeof(*ns));
		f->stages = ns;
		f->nstages = (int)idx + 1;
		for (;;) {
			ret = pt_text_next(&p->t);
			if (ret < 0)
				return ret;
			if (ret == 0 || p->t.indent != 4) {
				if (f->stages[idx].ndirs == 0)
					return pt_text_error(
						&p->t, "expected a directive, "
						"indented by 4");
				if (ret)
					pt_text_unread(&p->t);
				break;
			}
			ret = parse_dir(p, &f->stages[idx]);
			if (ret)
				return ret;
		}
	}
}

static int parse_sfunc(struct sparser *p)
{
	struct pt_sched *s = p->s;
	struct pt_sched_func *f, *nf;
	int ret, idx;

	ret = pt_text_ref(&p->t, 'f', INT32_MAX, &idx, "a Func name");
	if (ret)
		return ret;
	if (idx != s->nfuncs)
		return pt_text_error(&p->t, "func f%d out of order (expected "
				     "f%d)", idx, s->nfuncs);
	nf = realloc(s->funcs, ((size_t)s->nfuncs + 1) * sizeof(*nf));
	if (!nf)
		return snomem(p);
	s->funcs = nf;
	f = &s->funcs[s->nfuncs++];
	memset(f, 0, sizeof(*f));
	if (pt_text_is(&p->t, "inline")) {
		p->t.next++;
		f->compute = PT_COMPUTE_INLINE;
	} else if (pt_text_is(&p->t, "root")) {
		p->t.next++;
		f->compute = PT_COMPUTE_ROOT;
	} else if (pt_text_is(&p->t, "at")) {
		f->compute = PT_COMPUTE_AT;
		ret = parse_site(p, &f->compute_at);
		if (ret)
			return ret;
		if (pt_text_is(&p->t, "store")) {
			p->t.next++;
			if (pt_text_is(&p->t, "root")) {
				p->t.next++;
				f->store_root = 1;
			} else {
				ret = parse_site(p, &f->store_at);
				if (!ret && same_site(&f->store_at,
						      &f->compute_at))
					ret = pt_text_error(&p->t, "store site "
							    "equals the "
							    "compute site "
							    "(leave it out)");
				if (ret)
					return ret;
			}
		}
		if (!f->store_root && !f->store_at.loop) {
			f->store_at.func = f->compute_at.func;
			f->store_at.loop = strdup(f->compute_at.loop);
			if (!f->store_at.loop)
				return snomem(p);
		}
	} else {
		return pt_text_error(&p->t, "expected 'inline', 'root' or "
				     "'at fJ LOOP'");
	}
	ret = pt_text_label(&p->t, &f->label);
	return ret ? ret : parse_stages(p, f);
}

static int parse_key_line(struct sparser *p)
{
	struct pt_tok tok;
	char hex[33];
	int ret = pt_text_next(&p->t);

	if (ret == 0)
		return pt_text_error(&p->t, "unexpected end of text (expected "
				     "'key')");
	if (ret < 0)
		return ret;
	if (p->t.indent != 0)
		return pt_text_error(&p->t, "indented (expected 'key')");
	ret = pt_text_word(&p->t, "key");
	if (!ret)
		ret = pt_text_tok(&p->t, &tok, "a key");
	if (ret)
		return ret;
	if (tok.n != 32)
		goto bad;
	memcpy(hex, tok.s, 32);
	hex[32] = '\0';
	if (pt_hash_parse(hex, p->s->key))
		goto bad;
	return pt_text_end(&p->t);
bad:
	return pt_text_error(&p->t, "bad key (expected 32 lowercase hex "
			     "digits)");
}

int pt_sched_parse(const char *text, size_t len, const char *name,
		   struct pt_sched **out, struct pt_error *err)
{
	struct sparser p;
	struct pt_tok tok;
	char buf[48], *meta;
	int ret;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	pt_text_init(&p.t, text, len, name ? name : "<schedule>", err);
	p.s = pt_sched_new();
	if (!p.s)
		return pt_error_set(err, PT_ENOMEM, "%s",
				    pt_strerror(PT_ENOMEM));
	if (memchr(text, '\0', len)) {
		p.t.lineno = 1;
		ret = pt_text_error(&p.t, "NUL byte in the text");
		goto out;
	}
	ret = pt_text_next(&p.t);
	if (ret == 0) {
		ret = pt_text_error(&p.t, "empty text (expected "
				    "'protune-schedule 1')");
		goto out;
	}
	if (ret < 0)
		goto out;
	if (p.t.indent != 0 || !pt_text_is(&p.t, "protune-schedule")) {
		ret = pt_text_error(&p.t, "not a protune schedule (expected "
				    "'protune-schedule 1')");
		goto out;
	}
	p.t.next++;
	if (!pt_text_is(&p.t, "1")) {
		ret = pt_text_error(&p.t, "unsupported schedule version "
				    "(expected 1)");
		goto out;
	}
	p.t.next++;
	ret = pt_text_end(&p.t);
	if (!ret)
		ret = parse_key_line(&p);
	while (!ret) {
		ret = pt_text_next(&p.t);
		if (ret <= 0)
			break;
		if (p.t.indent == 0 && pt_text_is(&p.t, "meta") &&
		    p.s->nfuncs == 0) {
			p.t.next++;
			ret = pt_text_tok(&p.t, &tok, "NAME=VALUE");
			if (!ret && !meta_ok(tok.s, tok.n))
				ret = pt_text_error(&p.t, "bad meta '%s' "
						    "(expected NAME=VALUE, "
						    "NAME [a-z0-9_-]+)",
						    pt_tok_show(&tok, buf));
			if (!ret)
				ret = pt_text_end(&p.t);
			if (ret)
				break;
			meta = malloc(tok.n + 1);
			if (!meta) {
				ret = snomem(&p);
				break;
			}
			memcpy(meta, tok.s, tok.n);
			meta[tok.n] = '\0';
			ret = pt_strvec_push(&p.s->meta, meta);
			free(meta);
			if (ret)
				ret = snomem(&p);
		} else if (p.t.indent == 0 && pt_text_is(&p.t, "func")) {
			p.t.next++;
			ret = parse_sfunc(&p);
		} else {
			pt_text_tok(&p.t, &tok, "");
			ret = pt_text_error(&p.t, "unexpected '%s' (expected "
					    "%s)", pt_tok_show(&tok, buf),
					    p.s->nfuncs ? "'func' or '  stage'"
					    : "'meta' or 'func'");
		}
	}
	if (!ret && p.s->nfuncs == 0)
		ret = pt_text_error(&p.t, "unexpected end of text (expected "
				    "'func')");
out:
	pt_text_release(&p.t);
	if (ret) {
		pt_sched_free(p.s);
		return ret;
	}
	*out = p.s;
	return 0;
}
