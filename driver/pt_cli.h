/* pt_cli.h: what the `protune` command's modules share: the error line
 * and reading an input file. Private to the protune command. */
#ifndef PROTUNE_PT_CLI_H
#define PROTUNE_PT_CLI_H

#include "protune/pt_strbuf.h"

/* Print "protune: MESSAGE" and a newline on standard error; return 1 (the
 * exit status of a failed command). */
int pt_cli_fail(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* Append the whole of `path` ("-": standard input) to out; 0, or 1 after
 * saying why it cannot be read. */
int pt_cli_read(const char *path, struct pt_strbuf *out);

#endif
