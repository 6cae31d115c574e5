/* pt_strvec.h: a NULL-terminated vector of malloc'd strings (argv, envp).
 *
 * A struct pt_strvec lives where the caller puts it and must start as
 * PT_STRVEC_INIT (or pass through pt_strvec_init()). `v` then points at a
 * static array holding only NULL and no memory is held until something is
 * pushed. At all times v[nr] == NULL, so `v` can be handed to execv(),
 * posix_spawn() and friends as it is.
 *
 * The vector owns every string in it and the array itself: pushed strings
 * are copied, pop/clear/release free them. Pointers taken from `v` (the
 * array or a string) stay valid until the next call that changes the vector.
 * Callers may read `v` and `nr` but must change them only through these
 * functions.
 *
 * Functions that add return 0, or PT_ENOMEM with the vector unchanged (a
 * call that adds several strings adds all of them or none).
 *
 * No global state; a vector must not be used by two threads at once.
 */
#ifndef PROTUNE_PT_STRVEC_H
#define PROTUNE_PT_STRVEC_H

#include <stdarg.h>
#include <stddef.h>

/* The shared empty array of empty vectors; never written. */
extern char *pt_strvec_empty[];

struct pt_strvec {
	char **v;     /* v[0..nr-1] are the strings, v[nr] is NULL */
	size_t nr;
	size_t alloc; /* 0 while v is pt_strvec_empty */
};

#define PT_STRVEC_INIT { pt_strvec_empty, 0, 0 }

/* Same as assigning PT_STRVEC_INIT (for vectors in heap memory). */
void pt_strvec_init(struct pt_strvec *sv);

/* Append a copy of `s`. */
int pt_strvec_push(struct pt_strvec *sv, const char *s);

/* Append a printf-formatted string. */
int pt_strvec_pushf(struct pt_strvec *sv, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
int pt_strvec_vpushf(struct pt_strvec *sv, const char *fmt, va_list ap);

/* Append copies of the strings given as arguments, up to a NULL:
 *     pt_strvec_pushl(&args, "/bin/sh", "-c", script, NULL); */
int pt_strvec_pushl(struct pt_strvec *sv, ...)
#if defined(__GNUC__)
	__attribute__((sentinel))
#endif
	;

/* Append copies of the strings of the NULL-terminated array `items`
 * (e.g. another vector's `v`, or main()'s argv; may be the vector's own
 * `v`). */
int pt_strvec_pushv(struct pt_strvec *sv, const char *const *items);

/* Remove and free the last string; nothing happens on an empty vector. */
void pt_strvec_pop(struct pt_strvec *sv);

/* Free all strings; the vector is empty but keeps its array for reuse. */
void pt_strvec_clear(struct pt_strvec *sv);

/* Free all strings and the array; `sv` is PT_STRVEC_INIT again. */
void pt_strvec_release(struct pt_strvec *sv);

/* Return the NULL-terminated array; the caller now owns it and every
 * string in it (free with pt_strvec_free_detached()). Never NULL unless out
 * of memory, in which case the vector is unchanged. If `nr` is not NULL it
 * receives the number of strings. `sv` is PT_STRVEC_INIT again. */
char **pt_strvec_detach(struct pt_strvec *sv, size_t *nr);

/* Free an array returned by pt_strvec_detach() and its strings (NULL is
 * allowed). */
void pt_strvec_free_detached(char **v);

#endif
