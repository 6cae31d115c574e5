/* pt_sched_cpp.c: a checked schedule as the body of Halide 14 C++ that
 * applies it (what `-e schedule` wraps in apply_schedule_NAME(), and what
 * `protune show` prints).
 *
 * The body declares one Func handle per Func, one Var or RVar per Halide
 * name the schedule uses (original dims by the model's label, split results
 * by the schedule's name), then makes one call per decision and directive.
 * It relies only on the names Halide's wrapper brings in (Func, Var, RVar,
 * TailStrategy). The same model and schedule always give the same text.
 */
#include "protune/pt_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Var or RVar the body declares. */
struct decl {
	int is_rvar;
	const char *hname;  /* Halide's name (borrowed) */
	char *ident;        /* the C++ identifier */
};

struct decls {
	int n, alloc;
	struct decl *v;
};

/* A name a stage's schedule uses: positional or split result. */
struct sname {
	const char *name;   /* the schedule's name */
	const char *hname;  /* Halide's name */
	int is_rvar;
};

struct snames {
	int n;
	struct sname *v;
	char (*pos)[16];    /* storage for the positional names */
};

static const char *const reserved[] = {
	"pipeline", "target", "Func", "Var", "RVar", "TailStrategy",
	"MemoryType", "LoopLevel", "Halide", "Expr", "Pipeline", "Target",
	"alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand",
	"bitor", "bool", "break", "case", "catch", "char", "char16_t",
	"char32_t", "char8_t", "class", "co_await", "co_return", "co_yield",
	"compl", "concept", "const", "const_cast", "consteval", "constexpr",
	"constinit", "continue", "decltype", "default", "delete", "do",
	"double", "dynamic_cast", "else", "enum", "explicit", "export",
	"extern", "false", "float", "for", "friend", "goto", "if", "inline",
	"int", "long", "mutable", "namespace", "new", "noexcept", "not",
	"not_eq", "nullptr", "operator", "or", "or_eq", "private",
	"protected", "public", "register", "reinterpret_cast", "requires",
	"return", "short", "signed", "sizeof", "static", "static_assert",
	"static_cast", "struct", "switch", "template", "this", "thread_local",
	"throw", "true", "try", "typedef", "typeid", "typename", "union",
	"unsigned", "using", "virtual", "void", "volatile", "wchar_t",
	"while", "xor", "xor_eq", "std", "main", NULL
};

static int is_func_ident(const char *s)
{
	/* f_K names the Func handles. */
	return s[0] == 'f' && s[1] == '_' && s[2] &&
		strspn(s + 2, "0123456789") == strlen(s + 2);
}

static int ident_taken(const struct decls *d, const char *s)
{
	int i;

	if (is_func_ident(s))
		return 1;
	for (i = 0; reserved[i]; i++)
		if (!strcmp(reserved[i], s))
			return 1;
	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].ident, s))
			return 1;
	return 0;
}

static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9');
}

/* A C++ identifier for Halide name `h`: [A-Za-z][A-Za-z0-9_]*, no double
 * underscore, unique in `d`. */
static char *make_ident(const struct decls *d, const char *h)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	size_t base;
	int n;

	if (!(*h >= 'a' && *h <= 'z') && !(*h >= 'A' && *h <= 'Z') &&
	    pt_strbuf_addch(&sb, 'v'))
		return NULL;
	for (; *h; h++) {
		char c = is_alnum(*h) ? *h : '_';

		if (c == '_' && sb.len && sb.buf[sb.len - 1] == '_')
			continue;
		if (pt_strbuf_addch(&sb, c))
			goto fail;
	}
	if (!sb.len && pt_strbuf_addch(&sb, 'v'))
		goto fail;
	base = sb.len;
	for (n = 2; ident_taken(d, sb.buf); n++) {
		pt_strbuf_setlen(&sb, base);
		if (pt_strbuf_addf(&sb, "%s%d",
				   sb.buf[base - 1] == '_' ? "" : "_", n))
			goto fail;
	}
	return pt_strbuf_detach(&sb, NULL);
fail:
	pt_strbuf_release(&sb);
	return NULL;
}

/* The identifier of (kind, Halide name), declared on first use; NULL when
 * out of memory. */
static const char *use_var(struct decls *d, int is_rvar, const char *hname)
{
	struct decl *v;
	int i;

	for (i = 0; i < d->n; i++)
		if (d->v[i].is_rvar == is_rvar && !strcmp(d->v[i].hname, hname))
			return d->v[i].ident;
	if (d->n == d->alloc) {
		int alloc = d->alloc ? 2 * d->alloc : 16;

		v = realloc(d->v, (size_t)alloc * sizeof(*v));
		if (!v)
			return NULL;
		d->v = v;
		d->alloc = alloc;
	}
	v = &d->v[d->n];
	v->is_rvar = is_rvar;
	v->hname = hname;
	v->ident = make_ident(d, hname);
	if (!v->ident)
		return NULL;
	d->n++;
	return v->ident;
}

static void decls_release(struct decls *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].ident);
	free(d->v);
}

static void snames_release(struct snames *sn)
{
	free(sn->v);
	free(sn->pos);
	sn->v = NULL;
	sn->pos = NULL;
	sn->n = 0;
}

/* The names stage `st` of Func `f` uses, with their Halide names. */
static int stage_names(const struct pt_model *m, const struct pt_sched *s,
		       int f, int st, struct snames *sn)
{
	const struct pt_stage *stage =
		&m->stages[m->funcs[f].first_stage + st];
	const struct pt_sched_stage *ss =
		st < s->funcs[f].nstages ? &s->funcs[f].stages[st] : NULL;
	int ndirs = ss ? ss->ndirs : 0;
	int i, j;

	sn->n = 0;
	sn->v = malloc((size_t)(stage->ndims + 2 * ndirs + 1) *
		       sizeof(*sn->v));
	sn->pos = malloc((size_t)(stage->ndims + 1) * sizeof(*sn->pos));
	if (!sn->v || !sn->pos) {
		snames_release(sn);
		return PT_ENOMEM;
	}
	for (i = 0; i < stage->ndims; i++) {
		const struct pt_dim *dim = &stage->dims[i];

		if (!dim->label || !*dim->label) {
			snames_release(sn);
			return PT_EINVAL;
		}
		snprintf(sn->pos[i], sizeof(sn->pos[i]), "%c%d",
			 dim->is_rvar ? 'r' : 'v', dim->index);
		sn->v[sn->n].name = sn->pos[i];
		sn->v[sn->n].hname = dim->label;
		sn->v[sn->n].is_rvar = dim->is_rvar;
		sn->n++;
	}
	for (i = 0; i < ndirs; i++) {
		const struct pt_directive *d = &ss->dirs[i];
		int is_rvar = 0;

		if (d->kind != PT_DIR_SPLIT || !d->dim || !d->outer ||
		    !d->inner)
			continue;
		for (j = 0; j < sn->n; j++)
			if (!strcmp(sn->v[j].name, d->dim))
				is_rvar = sn->v[j].is_rvar;
		sn->v[sn->n].name = d->outer;
		sn->v[sn->n].hname = d->outer;
		sn->v[sn->n].is_rvar = is_rvar;
		sn->n++;
		sn->v[sn->n].name = d->inner;
		sn->v[sn->n].hname = d->inner;
		sn->v[sn->n].is_rvar = is_rvar;
		sn->n++;
	}
	return 0;
}

/* The identifier of a name of the stage; NULL with *ret set when the
 * name is unknown (PT_EINVAL: the schedule was not checked) or out of
 * memory. */
static const char *stage_var(struct decls *d, const struct snames *sn,
			     const char *name, int *ret)
{
	const char *id;
	int i;

	for (i = 0; name && i < sn->n; i++) {
		if (strcmp(sn->v[i].name, name))
			continue;
		id = use_var(d, sn->v[i].is_rvar, sn->v[i].hname);
		if (!id)
			*ret = PT_ENOMEM;
		return id;
	}
	*ret = PT_EINVAL;
	return NULL;
}

/* The identifier of loop `loop` of Func j's last stage. */
static const char *site_var(const struct pt_model *m,
			    const struct pt_sched *s, struct decls *d, int j,
			    const char *loop, int *ret)
{
	struct snames sn;
	const char *id;

	if (j < 0 || j >= m->nfuncs) {
		*ret = PT_EINVAL;
		return NULL;
	}
	*ret = stage_names(m, s, j, m->funcs[j].nstages - 1, &sn);
	if (*ret)
		return NULL;
	id = stage_var(d, &sn, loop, ret);
	snames_release(&sn);
	return id;
}

static int add_quoted(struct pt_strbuf *out, const char *s)
{
	int ret = pt_strbuf_addch(out, '"');

	for (; *s && !ret; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			ret = pt_strbuf_addf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			ret = pt_strbuf_addf(out, "\\%03o", c);
		else
			ret = pt_strbuf_addch(out, c);
	}
	return ret ? ret : pt_strbuf_addch(out, '"');
}

/* A label in a // comment: printable ASCII only. */
static int add_comment_text(struct pt_strbuf *out, const char *s)
{
	int ret = 0;

	for (; s && *s && !ret; s++) {
		unsigned char c = (unsigned char)*s;

		ret = pt_strbuf_addch(out, c >= 0x20 && c < 0x7f ? c : '?');
	}
	return ret;
}

static const char *tail_name(enum pt_tail t)
{
	switch (t) {
	case PT_TAIL_SHIFT: return "TailStrategy::ShiftInwards";
	case PT_TAIL_ROUND: return "TailStrategy::RoundUp";
	default: return "TailStrategy::GuardWithIf";
	}
}

/* One directive as `.call(...)` on `body`. */
static int add_directive(struct pt_strbuf *body, struct decls *d,
			 const struct snames *sn,
			 const struct pt_directive *dir)
{
	const char *a, *b, *c;
	size_t i;
	int ret = 0;

	switch (dir->kind) {
	case PT_DIR_SPLIT:
		if (!(a = stage_var(d, sn, dir->dim, &ret)) ||
		    !(b = stage_var(d, sn, dir->outer, &ret)) ||
		    !(c = stage_var(d, sn, dir->inner, &ret)))
			return ret;
		return pt_strbuf_addf(body, ".split(%s, %s, %s, %lld, %s)", a,
				      b, c, (long long)dir->factor,
				      tail_name(dir->tail));
	case PT_DIR_REORDER:
		ret = pt_strbuf_addstr(body, dir->order.nr == 1 ?
				       ".reorder({" : ".reorder(");
		for (i = 0; i < dir->order.nr && !ret; i++) {
			a = stage_var(d, sn, dir->order.v[i], &ret);
			if (!a)
				return ret;
			ret = pt_strbuf_addf(body, "%s%s", i ? ", " : "", a);
		}
		return ret ? ret : pt_strbuf_addstr(body, dir->order.nr == 1 ?
						     "})" : ")");
	case PT_DIR_VECTORIZE:
	case PT_DIR_PARALLEL:
	case PT_DIR_UNROLL:
		a = stage_var(d, sn, dir->dim, &ret);
		if (!a)
			return ret;
		return pt_strbuf_addf(body, ".%s(%s)",
				      dir->kind == PT_DIR_VECTORIZE ?
				      "vectorize" : dir->kind ==
				      PT_DIR_PARALLEL ? "parallel" : "unroll",
				      a);
	}
	return PT_EINVAL;
}

static int add_compute(const struct pt_model *m, const struct pt_sched *s,
		       struct decls *d, int f, struct pt_strbuf *body)
{
	const struct pt_sched_func *sf = &s->funcs[f];
	const char *v;
	int ret;

	switch (sf->compute) {
	case PT_COMPUTE_INLINE:
		return pt_strbuf_addf(body, "    f_%d.compute_inline();\n", f);
	case PT_COMPUTE_ROOT:
		return pt_strbuf_addf(body, "    f_%d.compute_root();\n", f);
	case PT_COMPUTE_AT:
		break;
	default:
		return PT_EINVAL;
	}
	v = site_var(m, s, d, sf->compute_at.func, sf->compute_at.loop, &ret);
	if (!v)
		return ret;
	if ((ret = pt_strbuf_addf(body, "    f_%d.compute_at(f_%d, %s)", f,
				  sf->compute_at.func, v)))
		return ret;
	if (sf->store_root) {
		ret = pt_strbuf_addstr(body, ".store_root()");
	} else if (sf->store_at.loop &&
		   (sf->store_at.func != sf->compute_at.func ||
		    strcmp(sf->store_at.loop, sf->compute_at.loop))) {
		v = site_var(m, s, d, sf->store_at.func, sf->store_at.loop,
			     &ret);
		if (!v)
			return ret;
		ret = pt_strbuf_addf(body, ".store_at(f_%d, %s)",
				     sf->store_at.func, v);
	}
	return ret ? ret : pt_strbuf_addstr(body, ";\n");
}

static int add_stage(const struct pt_model *m, const struct pt_sched *s,
		     struct decls *d, int f, int st, struct pt_strbuf *body)
{
	const struct pt_sched_stage *ss = &s->funcs[f].stages[st];
	struct snames sn;
	int i, ret;

	if (!ss->ndirs)
		return 0;
	if ((ret = stage_names(m, s, f, st, &sn)))
		return ret;
	if (st)
		ret = pt_strbuf_addf(body, "    f_%d.update(%d)", f, st - 1);
	else
		ret = pt_strbuf_addf(body, "    f_%d", f);
	for (i = 0; i < ss->ndirs && !ret; i++) {
		if (i)
			ret = pt_strbuf_addstr(body, "\n        ");
		if (!ret)
			ret = add_directive(body, d, &sn, &ss->dirs[i]);
	}
	snames_release(&sn);
	return ret ? ret : pt_strbuf_addstr(body, ";\n");
}

int pt_sched_to_cpp(const struct pt_model *m, const struct pt_sched *s,
		    struct pt_strbuf *out)
{
	struct pt_strbuf body = PT_STRBUF_INIT;
	struct decls d = { 0, 0, NULL };
	char hex[33];
	int f, i, ret = 0;
	size_t start = out->len;

	if (!m || !s || s->nfuncs != m->nfuncs)
		return PT_EINVAL;
	for (f = 0; f < m->nfuncs; f++)
		if (s->funcs[f].nstages < 0 ||
		    s->funcs[f].nstages > m->funcs[f].nstages ||
		    (s->funcs[f].nstages && !s->funcs[f].stages))
			return PT_EINVAL;
	/* The calls first, so that the declarations list exactly the
	 * names they use, in order of first use. */
	for (f = 0; f < m->nfuncs && !ret; f++) {
		ret = add_compute(m, s, &d, f, &body);
		if (s->funcs[f].compute == PT_COMPUTE_INLINE)
			continue;
		for (i = 0; i < s->funcs[f].nstages && !ret; i++)
			ret = add_stage(m, s, &d, f, i, &body);
	}

	pt_hash_hex(s->key, hex);
	if (!ret)
		ret = pt_strbuf_addf(out, "    // protune schedule for key "
				     "%s\n", hex);
	for (f = 0; f < m->nfuncs && !ret; f++) {
		ret = pt_strbuf_addf(out,
				     "    Func f_%d = pipeline.get_func(%d);",
				     f, f);
		if (!ret && m->funcs[f].label) {
			ret = pt_strbuf_addstr(out, "  // ");
			if (!ret)
				ret = add_comment_text(out,
						       m->funcs[f].label);
		}
		if (!ret)
			ret = pt_strbuf_addch(out, '\n');
	}
	for (i = 0; i < d.n && !ret; i++) {
		ret = pt_strbuf_addf(out, "    %s %s(", d.v[i].is_rvar ?
				     "RVar" : "Var", d.v[i].ident);
		if (!ret)
			ret = add_quoted(out, d.v[i].hname);
		if (!ret)
			ret = pt_strbuf_addstr(out, ");\n");
	}
	if (!ret)
		ret = pt_strbuf_add(out, body.buf, body.len);
	if (ret)
		pt_strbuf_setlen(out, start);
	pt_strbuf_release(&body);
	decls_release(&d);
	return ret;
}
