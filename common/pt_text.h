/* pt_text.h: the line lexer shared by the model and schedule parsers, the
 * quoting both printers use, and the pieces of the model text that the key
 * (pt_key.c) hashes. Private to libprotune (not installed).
 *
 * Both formats are strict, canonical line formats (doc/model-format.md,
 * doc/schedule-format.md): printable ASCII only, "\n" after every line
 * including the last, no blank lines, an indentation of spaces, then tokens
 * separated by exactly one space. A token is a run of non-space bytes, or a
 * quoted string "..." that may contain spaces and the escapes \\ \" \n \t
 * \xHH (lowercase hex, only for bytes below 0x20 or from 0x7f, and never
 * for \n and \t, so that every string has exactly one spelling).
 *
 * pt_text_next() splits the next line into tokens; the caller then takes
 * tokens in order with the expect/peek functions below, which fail with
 * PT_EFORMAT and "NAME:LINE: what (expected ...)" in the error struct. The
 * lexer borrows the text: it must outlive the struct pt_text. The struct
 * owns its token array; pt_text_release() frees it. No global state.
 */
#ifndef PROTUNE_PT_TEXT_H
#define PROTUNE_PT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_model.h"
#include "protune/pt_strbuf.h"

struct pt_tok {
	const char *s;   /* into the text; a string token keeps its quotes */
	size_t n;
};

struct pt_text {
	const char *name;      /* prefixes messages */
	const char *pos, *end; /* the rest of the text */
	struct pt_error *err;
	int lineno;            /* of the current line, 0 before the first */
	int indent;            /* leading spaces of the current line */
	int held;              /* pt_text_unread() was called */
	struct pt_tok *toks;   /* the current line's tokens */
	int ntoks, alloc;
	int next;              /* index of the next token to take */
};

void pt_text_init(struct pt_text *t, const char *text, size_t len,
		  const char *name, struct pt_error *err);
void pt_text_release(struct pt_text *t);

/* Read the next line: 1 when there is one, 0 at the end of the text, or
 * PT_EFORMAT (a missing final newline, a blank line, a tab, a byte that is
 * not printable ASCII, a double or trailing space, a bad string) or
 * PT_ENOMEM. */
int pt_text_next(struct pt_text *t);
/* Make the next pt_text_next() return the current line again, from its
 * first token. */
void pt_text_unread(struct pt_text *t);

/* Record "NAME:LINE: message" and return PT_EFORMAT. */
int pt_text_error(struct pt_text *t, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Tokens of the current line. pt_text_left() counts the tokens not yet
 * taken; pt_text_is() tells whether the next one is `word` (without taking
 * it); pt_text_word() takes it or fails with "expected 'word'". */
int pt_text_left(const struct pt_text *t);
int pt_text_is(const struct pt_text *t, const char *word);
int pt_text_word(struct pt_text *t, const char *word);
/* Take the next token, whatever it is; `what` names it in the error. */
int pt_text_tok(struct pt_text *t, struct pt_tok *out, const char *what);
/* Fail unless every token of the line was taken. */
int pt_text_end(struct pt_text *t);
/* Take a decimal integer token in [min, max]. */
int pt_text_int(struct pt_text *t, int64_t min, int64_t max, int64_t *out,
		const char *what);
/* Take a token "<prefix><index>" (f3, i0, v2) with index in [0, max]. */
int pt_text_ref(struct pt_text *t, char prefix, int64_t max, int *out,
		const char *what);
/* Take a quoted string token; *out is a new malloc'd string. */
int pt_text_string(struct pt_text *t, char **out, const char *what);
/* Take an optional trailing `label "..."` (then the end of the line): *out
 * stays NULL when the line has none. */
int pt_text_label(struct pt_text *t, char **out);

/* Canonical integers: an optional '-', then "0" or digits without a leading
 * zero; no "-0"; within int64. Scans from *p (not beyond end), advances *p
 * past the number, and returns 0, or -1 leaving *p unchanged. */
int pt_scan_int64(const char **p, const char *end, int64_t *out);
/* Write `s` quoted with the canonical escapes. */
int pt_text_add_string(struct pt_strbuf *out, const char *s);
/* Write v in decimal at p (at most 20 bytes, no NUL); return the end. */
char *pt_text_put_int(char *p, int64_t v);
/* A token of a bare word for messages: at most 40 bytes, then "...". */
const char *pt_tok_show(const struct pt_tok *tok, char buf[48]);

/* --- pieces of the model text (pt_model.c), for the stage hashes -------- */

/* pt_model_print() for a model that passed pt_model_validate(). */
int pt_model_print_valid(const struct pt_model *m, unsigned flags,
			 struct pt_strbuf *out);
/* The input line of input i, with "\n". */
int pt_model_print_input(const struct pt_model *m, int i, unsigned flags,
			 struct pt_strbuf *out);
/* The func line and the region line of Func f. */
int pt_model_print_func(const struct pt_model *m, int f, unsigned flags,
			struct pt_strbuf *out);
/* The stage block: "  stage S" and every line under it. */
int pt_model_print_stage(const struct pt_model *m, const struct pt_stage *s,
			 unsigned flags, struct pt_strbuf *out);

#endif
