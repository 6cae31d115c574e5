/* pt_strbuf.h: a growable, always NUL-terminated byte string.
 *
 * A struct pt_strbuf lives where the caller puts it (stack, struct member)
 * and must start as PT_STRBUF_INIT. `buf` then points at a static empty
 * string and no memory is held until something is added; `buf[len]` is
 * always '\0'. The caller owns the struct and releases its memory with
 * pt_strbuf_release(), or takes the memory over with pt_strbuf_detach().
 * `buf` may move on every call that adds: do not keep pointers into it.
 *
 * Functions that add return 0, or PT_ENOMEM with the string unchanged.
 */
#ifndef PROTUNE_PT_STRBUF_H
#define PROTUNE_PT_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

extern char pt_strbuf_empty[];

struct pt_strbuf {
	char *buf;
	size_t len;
	size_t alloc; /* 0 while buf is pt_strbuf_empty */
};

#define PT_STRBUF_INIT { pt_strbuf_empty, 0, 0 }

/* Make room for `extra` more bytes (plus the NUL). */
int pt_strbuf_grow(struct pt_strbuf *sb, size_t extra);
int pt_strbuf_add(struct pt_strbuf *sb, const void *data, size_t len);
int pt_strbuf_addstr(struct pt_strbuf *sb, const char *s);
int pt_strbuf_addch(struct pt_strbuf *sb, int c);
int pt_strbuf_addf(struct pt_strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
int pt_strbuf_vaddf(struct pt_strbuf *sb, const char *fmt, va_list ap);

/* Truncate to `len` bytes (len <= sb->len); keeps the allocation. */
void pt_strbuf_setlen(struct pt_strbuf *sb, size_t len);
#define pt_strbuf_reset(sb) pt_strbuf_setlen((sb), 0)

/* Free the memory; `sb` is PT_STRBUF_INIT again. */
void pt_strbuf_release(struct pt_strbuf *sb);

/* Return the string as malloc'd memory the caller now owns (never NULL
 * unless out of memory); `sb` is PT_STRBUF_INIT again. */
char *pt_strbuf_detach(struct pt_strbuf *sb, size_t *len);

#endif
