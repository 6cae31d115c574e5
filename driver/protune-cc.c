/* protune-cc: the compiler-driver wrapper for Halide generator runs.
 *
 * This version passes every command through unchanged: it finds the
 * program on PATH (skipping itself, so it can be installed under another
 * program's name) and execs it with the same argv, so exit status, signals,
 * stdin/stdout/stderr and environment are the program's own.
 *
 * `protune-cc --serve` is the server a ProTune plugin starts when it has no
 * channel from protune-cc: one session on stdin/stdout (pt_serve.h).
 */
#include "config.h"
#include "protune/pt_error.h"
#include "protune/pt_path.h"
#include "protune/pt_strbuf.h"
#include "pt_serve.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs("usage: protune-cc PROGRAM [ARGS...]\n"
	      "       protune-cc --serve\n"
	      "       protune-cc --help | --version\n"
	      "\n"
	      "Runs PROGRAM (usually a Halide generator) with ARGS. This release\n"
	      "passes every command through unchanged; schedule lookup and tuning\n"
	      "of generator runs come with the tuner.\n"
	      "\n"
	      "--serve answers one ProTune plugin session on stdin and stdout\n"
	      "(the plugin starts it). See protune-cc(1).\n", f);
}

/* One plugin session on stdin/stdout; the exit status says how it went. */
static int serve(void)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_serve_opts opts = { 0 };
	const char *t = getenv("PROTUNE_SERVE_TIMEOUT_MS");

	opts.name = "protune-cc";
	opts.log = stderr;
	if (t && *t) {
		char *end;
		long ms = strtol(t, &end, 10);

		if (*end || ms <= 0 || ms > 24L * 3600 * 1000) {
			fprintf(stderr,
				"protune-cc: PROTUNE_SERVE_TIMEOUT_MS='%s' is not a positive number of milliseconds\n",
				t);
			return 2;
		}
		opts.timeout_ms = (int)ms;
	}
	/* A plugin that dies must give us EPIPE, not kill us silently. */
	signal(SIGPIPE, SIG_IGN);
	if (pt_serve(0, 1, &opts, &err)) {
		fprintf(stderr, "protune-cc: %s\n", err.msg);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf prog = PT_STRBUF_INIT;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--serve") == 0) {
		if (argc > 2) {
			usage(stderr);
			return 2;
		}
		return serve();
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("protune-cc %s\n", PT_VERSION);
		return 0;
	}
	if (pt_path_find_program(argv[1], getenv("PATH"), "/proc/self/exe",
				 &prog, &err)) {
		fprintf(stderr, "protune-cc: %s\n", err.msg);
		return 127;
	}
	execv(prog.buf, argv + 1);
	fprintf(stderr, "protune-cc: cannot run %s: %s\n", prog.buf,
		strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
