#include "protune/pt_strvec.h"
#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *pt_strvec_empty[1];

void pt_strvec_init(struct pt_strvec *sv)
{
	sv->v = pt_strvec_empty;
	sv->nr = 0;
	sv->alloc = 0;
}

/* Make room for `extra` more strings plus the NULL. */
static int grow(struct pt_strvec *sv, size_t extra)
{
	size_t need, cap;
	char **nv;

	if (extra > SIZE_MAX / sizeof(char *) - sv->nr - 1)
		return PT_ENOMEM;
	need = sv->nr + extra + 1;
	if (need <= sv->alloc)
		return 0;
	cap = sv->alloc ? sv->alloc : 8;
	while (cap < need)
		cap = cap > SIZE_MAX / sizeof(char *) / 2 ? need : cap * 2;
	nv = realloc(sv->alloc ? sv->v : NULL, cap * sizeof(*nv));
	if (!nv)
		return PT_ENOMEM;
	if (!sv->alloc)
		nv[0] = NULL;
	sv->v = nv;
	sv->alloc = cap;
	return 0;
}

/* Append `s`, which the vector now owns. */
static int push_owned(struct pt_strvec *sv, char *s)
{
	if (grow(sv, 1))
		return PT_ENOMEM;
	sv->v[sv->nr++] = s;
	sv->v[sv->nr] = NULL;
	return 0;
}

int pt_strvec_push(struct pt_strvec *sv, const char *s)
{
	char *dup = strdup(s);

	if (!dup)
		return PT_ENOMEM;
	if (push_owned(sv, dup)) {
		free(dup);
		return PT_ENOMEM;
	}
	return 0;
}

int pt_strvec_vpushf(struct pt_strvec *sv, const char *fmt, va_list ap)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	char *s;

	if (pt_strbuf_vaddf(&sb, fmt, ap))
		goto fail;
	s = pt_strbuf_detach(&sb, NULL);
	if (!s)
		goto fail;
	if (push_owned(sv, s)) {
		free(s);
		return PT_ENOMEM;
	}
	return 0;
fail:
	pt_strbuf_release(&sb);
	return PT_ENOMEM;
}

int pt_strvec_pushf(struct pt_strvec *sv, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pt_strvec_vpushf(sv, fmt, ap);
	va_end(ap);
	return ret;
}

int pt_strvec_pushl(struct pt_strvec *sv, ...)
{
	size_t n = 0, old = sv->nr;
	const char *s;
	va_list ap;

	va_start(ap, sv);
	while (va_arg(ap, const char *))
		n++;
	va_end(ap);
	if (grow(sv, n))
		return PT_ENOMEM;
	va_start(ap, sv);
	while ((s = va_arg(ap, const char *)) != NULL) {
		if (pt_strvec_push(sv, s)) {
			va_end(ap);
			while (sv->nr > old)
				pt_strvec_pop(sv);
			return PT_ENOMEM;
		}
	}
	va_end(ap);
	return 0;
}

int pt_strvec_pushv(struct pt_strvec *sv, const char *const *items)
{
	size_t n = 0, i, old = sv->nr, alias = SIZE_MAX;

	while (items[n])
		n++;
	/* `items` may point into our own array, which grow() can move. */
	if (sv->alloc && items >= (const char *const *)sv->v &&
	    items <= (const char *const *)sv->v + sv->nr)
		alias = (size_t)(items - (const char *const *)sv->v);
	if (grow(sv, n))
		return PT_ENOMEM;
	if (alias != SIZE_MAX)
		items = (const char *const *)sv->v + alias;
	for (i = 0; i < n; i++) {
		if (pt_strvec_push(sv, items[i])) {
			while (sv->nr > old)
				pt_strvec_pop(sv);
			return PT_ENOMEM;
		}
	}
	return 0;
}

void pt_strvec_pop(struct pt_strvec *sv)
{
	if (!sv->nr)
		return;
	free(sv->v[--sv->nr]);
	sv->v[sv->nr] = NULL;
}

void pt_strvec_clear(struct pt_strvec *sv)
{
	while (sv->nr)
		pt_strvec_pop(sv);
}

void pt_strvec_release(struct pt_strvec *sv)
{
	pt_strvec_clear(sv);
	if (sv->alloc)
		free(sv->v);
	pt_strvec_init(sv);
}

char **pt_strvec_detach(struct pt_strvec *sv, size_t *nr)
{
	char **v;

	if (!sv->alloc && grow(sv, 0))
		return NULL;
	v = sv->v;
	if (nr)
		*nr = sv->nr;
	pt_strvec_init(sv);
	return v;
}

void pt_strvec_free_detached(char **v)
{
	char **p;

	if (!v)
		return;
	for (p = v; *p; p++)
		free(*p);
	free(v);
}
