/* pt_text.c: the line lexer of the two text formats (see pt_text.h). */
#include "pt_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pt_text_init(struct pt_text *t, const char *text, size_t len,
		  const char *name, struct pt_error *err)
{
	memset(t, 0, sizeof(*t));
	t->name = name ? name : "<text>";
	t->pos = text;
	t->end = text + len;
	t->err = err;
}

void pt_text_release(struct pt_text *t)
{
	free(t->toks);
	t->toks = NULL;
	t->ntoks = t->alloc = 0;
}

int pt_text_error(struct pt_text *t, const char *fmt, ...)
{
	char msg[PT_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pt_error_set(t->err, PT_EFORMAT, "%s:%d: %s", t->name,
			    t->lineno, msg);
}

static int push_tok(struct pt_text *t, const char *s, size_t n)
{
	if (t->ntoks == t->alloc) {
		int cap = t->alloc ? 2 * t->alloc : 16;
		struct pt_tok *nt;

		if (t->alloc > (1 << 24))
			return pt_text_error(t, "too many tokens");
		nt = realloc(t->toks, (size_t)cap * sizeof(*nt));
		if (!nt)
			return pt_error_set(t->err, PT_ENOMEM, "%s:%d: %s",
					    t->name, t->lineno,
					    pt_strerror(PT_ENOMEM));
		t->toks = nt;
		t->alloc = cap;
	}
	t->toks[t->ntoks].s = s;
	t->toks[t->ntoks].n = n;
	t->ntoks++;
	return 0;
}

/* Every byte of a line must be printable ASCII: the printers escape the
 * rest inside strings, and nothing else may hold them. */
static int check_bytes(struct pt_text *t, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\t')
			return pt_text_error(t, "tab character (indent and "
					     "separate with spaces)");
		if (c == '\r')
			return pt_text_error(t, "carriage return (lines end "
					     "with \"\\n\" alone)");
		if (c < 0x20 || c >= 0x7f)
			return pt_text_error(t, "byte 0x%02x is not printable "
					     "ASCII (escape it in a string)",
					     c);
	}
	return 0;
}

static int tokenize(struct pt_text *t, const char *s, size_t n)
{
	size_t i = 0, start;
	int ret;

	while (i < n && s[i] == ' ')
		i++;
	if (i == n)
		return pt_text_error(t, "blank line");
	t->indent = (int)(i > 1000000 ? 1000000 : i);
	while (i < n) {
		start = i;
		if (s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			if (i >= n)
				return pt_text_error(t, "unterminated string");
			i++;
		} else {
			while (i < n && s[i] != ' ')
				i++;
		}
		ret = push_tok(t, s + start, i - start);
		if (ret)
			return ret;
		if (i == n)
			break;
		if (s[i] != ' ')
			return pt_text_error(t, "no space after a string");
		i++;
		if (i == n)
			return pt_text_error(t, "trailing space");
		if (s[i] == ' ')
			return pt_text_error(t, "two spaces (tokens are "
					     "separated by one)");
	}
	return 0;
}

int pt_text_next(struct pt_text *t)
{
	const char *nl;
	size_t n;
	int ret;

	if (t->held) {
		t->held = 0;
		t->next = 0;
		return 1;
	}
	t->ntoks = 0;
	t->next = 0;
	t->indent = 0;
	if (t->pos == t->end) {
		if (t->pos != NULL) {
			/* Errors at the end point past the last line. */
			t->lineno++;
			t->pos = t->end = NULL;
		}
		return 0;
	}
	t->lineno++;
	n = (size_t)(t->end - t->pos);
	nl = memchr(t->pos, '\n', n);
	if (!nl)
		return pt_text_error(t, "no newline at the end of the text");
	n = (size_t)(nl - t->pos);
	ret = check_bytes(t, t->pos, n);
	if (!ret)
		ret = tokenize(t, t->pos, n);
	if (ret)
		return ret;
	t->pos = nl + 1;
	return 1;
}

void pt_text_unread(struct pt_text *t)
{
	t->held = 1;
	t->next = 0;
}

const char *pt_tok_show(const struct pt_tok *tok, char buf[48])
{
	size_t n = tok->n > 40 ? 40 : tok->n;

	memcpy(buf, tok->s, n);
	if (tok->n > 40) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

int pt_text_left(const struct pt_text *t)
{
	return t->ntoks - t->next;
}

static int tok_eq(const struct pt_tok *tok, const char *word)
{
	size_t n = strlen(word);

	return tok->n == n && memcmp(tok->s, word, n) == 0;
}

int pt_text_is(const struct pt_text *t, const char *word)
{
	return t->next < t->ntoks && tok_eq(&t->toks[t->next], word);
}

int pt_text_tok(struct pt_text *t, struct pt_tok *out, const char *what)
{
	out->s = "";
	out->n = 0;
	if (t->next >= t->ntoks)
		return pt_text_error(t, "line ends early (expected %s)", what);
	*out = t->toks[t->next++];
	return 0;
}

int pt_text_word(struct pt_text *t, const char *word)
{
	char buf[48];

	if (t->next >= t->ntoks)
		return pt_text_error(t, "line ends early (expected '%s')",
				     word);
	if (!tok_eq(&t->toks[t->next], word))
		return pt_text_error(t, "unexpected '%s' (expected '%s')",
				     pt_tok_show(&t->toks[t->next], buf),
				     word);
	t->next++;
	return 0;
}

int pt_text_end(struct pt_text *t)
{
	char buf[48];

	if (t->next < t->ntoks)
		return pt_text_error(t, "unexpected '%s' (expected the end "
				     "of the line)",
				     pt_tok_show(&t->toks[t->next], buf));
	return 0;
}

int pt_scan_int64(const char **p, const char *end, int64_t *out)
{
	const char *s = *p;
	uint64_t v = 0, limit;
	int neg = 0;

	if (s < end && *s == '-') {
		neg = 1;
		s++;
	}
	if (s >= end || *s < '0' || *s > '9')
		return -1;
	if (*s == '0') {
		if (neg)
			return -1;  /* "-0" */
		s++;
		if (s < end && *s >= '0' && *s <= '9')
			return -1;  /* leading zero */
		*out = 0;
		*p = s;
		return 0;
	}
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (limit - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	*p = s;
	return 0;
}

int pt_text_int(struct pt_text *t, int64_t min, int64_t max, int64_t *out,
		const char *what)
{
	struct pt_tok tok;
	const char *p;
	char buf[48];
	int ret = pt_text_tok(t, &tok, what);

	if (ret)
		return ret;
	p = tok.s;
	if (pt_scan_int64(&p, tok.s + tok.n, out) || p != tok.s + tok.n)
		return pt_text_error(t, "'%s' is not a canonical integer "
				     "(expected %s)", pt_tok_show(&tok, buf),
				     what);
	if (*out < min || *out > max)
		return pt_text_error(t, "%s %s out of range [%lld, %lld]",
				     what, pt_tok_show(&tok, buf),
				     (long long)min, (long long)max);
	return 0;
}

int pt_text_ref(struct pt_text *t, char prefix, int64_t max, int *out,
		const char *what)
{
	struct pt_tok tok;
	const char *p;
	int64_t v;
	char buf[48];
	int ret = pt_text_tok(t, &tok, what);

	if (ret)
		return ret;
	p = tok.s + 1;
	if (tok.n < 2 || tok.s[0] != prefix || tok.s[1] == '-' ||
	    pt_scan_int64(&p, tok.s + tok.n, &v) || p != tok.s + tok.n)
		return pt_text_error(t, "unexpected '%s' (expected %s)",
				     pt_tok_show(&tok, buf), what);
	if (v > max && max < 0)
		return pt_text_error(t, "%s '%s' out of range (there is none)",
				     what, pt_tok_show(&tok, buf));
	if (v > max)
		return pt_text_error(t, "%s '%s' out of range (at most %c%lld)",
				     what, pt_tok_show(&tok, buf), prefix,
				     (long long)max);
	*out = (int)v;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int pt_text_string(struct pt_text *t, char **out, const char *what)
{
	struct pt_tok tok;
	char *s, *d, buf[48];
	size_t i;
	int ret = pt_text_tok(t, &tok, what);

	*out = NULL;
	if (ret)
		return ret;
	if (tok.s[0] != '"')
		return pt_text_error(t, "unexpected '%s' (expected %s, a "
				     "quoted string)", pt_tok_show(&tok, buf),
				     what);
	s = d = malloc(tok.n);
	if (!s)
		return pt_error_set(t->err, PT_ENOMEM, "%s:%d: %s", t->name,
				    t->lineno, pt_strerror(PT_ENOMEM));
	/* The tokenizer found the closing quote at tok.n - 1. */
	for (i = 1; i + 1 < tok.n; i++) {
		int hi, lo, c;

		if (tok.s[i] != '\\') {
			*d++ = tok.s[i];
			continue;
		}
		switch (tok.s[++i]) {
		case '\\': *d++ = '\\'; break;
		case '"': *d++ = '"'; break;
		case 'n': *d++ = '\n'; break;
		case 't': *d++ = '\t'; break;
		case 'x':
			hi = i + 2 < tok.n ? hexval(tok.s[i + 1]) : -1;
			lo = hi >= 0 ? hexval(tok.s[i + 2]) : -1;
			c = hi * 16 + lo;
			if (hi < 0 || lo < 0) {
				free(s);
				return pt_text_error(t, "bad \\x escape in %s "
						     "(two lowercase hex "
						     "digits)", what);
			}
			if (c == 0 || c == '\n' || c == '\t' ||
			    (c >= 0x20 && c < 0x7f)) {
				free(s);
				return pt_text_error(t, "needless \\x%02x "
						     "escape in %s", c, what);
			}
			*d++ = (char)c;
			i += 2;
			break;
		default:
			free(s);
			return pt_text_error(t, "unknown escape in %s "
					     "(expected \\\\ \\\" \\n \\t or "
					     "\\xHH)", what);
		}
	}
	*d = '\0';
	*out = s;
	return 0;
}

int pt_text_label(struct pt_text *t, char **out)
{
	int ret;

	*out = NULL;
	if (pt_text_left(t) == 0)
		return 0;
	if (!pt_text_is(t, "label"))
		return pt_text_end(t);
	t->next++;
	ret = pt_text_string(t, out, "a label");
	if (!ret)
		ret = pt_text_end(t);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

int pt_text_add_string(struct pt_strbuf *out, const char *s)
{
	int ret = pt_strbuf_addch(out, '"');
	size_t run;

	while (!ret && *s) {
		unsigned char c = (unsigned char)*s;

		/* A run of bytes that stand for themselves, in one go. */
		for (run = 0; s[run] && (unsigned char)s[run] >= 0x20 &&
			      (unsigned char)s[run] < 0x7f && s[run] != '\\' &&
			      s[run] != '"'; run++)
			;
		if (run) {
			ret = pt_strbuf_add(out, s, run);
			s += run;
			continue;
		}
		if (c == '\\')
			ret = pt_strbuf_addstr(out, "\\\\");
		else if (c == '"')
			ret = pt_strbuf_addstr(out, "\\\"");
		else if (c == '\n')
			ret = pt_strbuf_addstr(out, "\\n");
		else if (c == '\t')
			ret = pt_strbuf_addstr(out, "\\t");
		else
			ret = pt_strbuf_addf(out, "\\x%02x", c);
		s++;
	}
	return ret ? ret : pt_strbuf_addch(out, '"');
}

char *pt_text_put_int(char *p, int64_t v)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*p++ = '-';
	while (n)
		*p++ = tmp[--n];
	return p;
}
