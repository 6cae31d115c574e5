/* pt_error.h: error codes and the caller-owned error message buffer.
 *
 * Fallible library functions return 0 on success or a negative PT_E* code,
 * and, when given a non-NULL `struct pt_error *`, write a one-line message
 * into it. On success the error struct is left untouched, so a sequence of
 * calls can share one. There is no global "last error": each thread passes
 * its own struct. The library never prints and never exits.
 */
#ifndef PROTUNE_PT_ERROR_H
#define PROTUNE_PT_ERROR_H

#include <stddef.h>

enum {
	PT_OK = 0,
	PT_ENOMEM = -1,   /* allocation failed */
	PT_EIO = -2,      /* a system call on a file or pipe failed */
	PT_EFORMAT = -3,  /* malformed input (file and line in the message) */
	PT_EINVAL = -4,   /* invalid argument from the caller */
	PT_ENOTFOUND = -5,/* a named thing (file, program, key) does not exist */
	PT_ESPAWN = -6,   /* a child process could not be started */
	PT_EMISMATCH = -7,/* two inputs that should agree do not */
	PT_ETIMEDOUT = -8,/* a child or an operation ran past its time limit */
	PT_EBUSY = -9     /* another process holds it (a tuning lease) */
};

#define PT_ERROR_MSG_MAX 512

struct pt_error {
	int code;                    /* the PT_E* code of the last failure */
	char msg[PT_ERROR_MSG_MAX];  /* NUL-terminated, one line, no newline */
};

#define PT_ERROR_INIT { 0, { 0 } }

/* Record `code` and a printf-style message in `err` (which may be NULL) and
 * return `code`, so that callers can write `return pt_error_set(err, ...)`.
 * The message is truncated to fit. */
int pt_error_set(struct pt_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* A static description of a PT_E* code ("out of memory", ...). */
const char *pt_strerror(int code);

#endif
