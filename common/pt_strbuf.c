#include "protune/pt_strbuf.h"
#include "protune/pt_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char pt_strbuf_empty[1];

int pt_strbuf_grow(struct pt_strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *nb;

	if (extra > (size_t)-1 - sb->len - 1)
		return PT_ENOMEM;
	need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	cap = sb->alloc ? sb->alloc : 64;
	while (cap < need)
		cap = cap > (size_t)-1 / 2 ? need : cap * 2;
	nb = realloc(sb->alloc ? sb->buf : NULL, cap);
	if (!nb)
		return PT_ENOMEM;
	if (!sb->alloc)
		nb[0] = '\0';
	sb->buf = nb;
	sb->alloc = cap;
	return 0;
}

int pt_strbuf_add(struct pt_strbuf *sb, const void *data, size_t len)
{
	if (pt_strbuf_grow(sb, len))
		return PT_ENOMEM;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int pt_strbuf_addstr(struct pt_strbuf *sb, const char *s)
{
	return pt_strbuf_add(sb, s, strlen(s));
}

int pt_strbuf_addch(struct pt_strbuf *sb, int c)
{
	char ch = (char)c;

	return pt_strbuf_add(sb, &ch, 1);
}

int pt_strbuf_vaddf(struct pt_strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || pt_strbuf_grow(sb, (size_t)n))
		return PT_ENOMEM;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int pt_strbuf_addf(struct pt_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pt_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return ret;
}

void pt_strbuf_setlen(struct pt_strbuf *sb, size_t len)
{
	if (len > sb->len || !sb->alloc)
		return;
	sb->len = len;
	sb->buf[len] = '\0';
}

void pt_strbuf_release(struct pt_strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	sb->buf = pt_strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
}

char *pt_strbuf_detach(struct pt_strbuf *sb, size_t *len)
{
	char *s;

	if (!sb->alloc && pt_strbuf_grow(sb, 0))
		return NULL;
	s = sb->buf;
	if (len)
		*len = sb->len;
	sb->buf = pt_strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
	return s;
}
