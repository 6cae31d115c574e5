/* pt_serve.h: the server side of one plugin session (doc/protocol.md).
 *
 * pt_serve() talks to one ProTune plugin over a channel (rfd, wfd): it
 * reads `hello` and `model`, parses and hashes the model, asks an answer
 * function for a schedule, sends it, and handles `applied`, `refused` and
 * `bye`. `protune-cc --serve` runs it on stdin/stdout for a plugin that
 * started the server itself; protune-cc runs it on a pipe pair it hands to
 * the generator it starts (PROTUNE_CHANNEL_FDS).
 *
 * The answer function is the one place where the cache lookup and the tuner
 * plug in. It gets the parsed, hashed model and, after a refusal, the
 * plugin's reason; it returns a schedule or an error, which is sent to the
 * plugin as an `error` message. A function that computes for long calls
 * pt_serve_wait() from time to time so that the plugin hears a heartbeat
 * (`wait`) at least every PT_PROTO_HEARTBEAT_MS.
 *
 * With opts->until_closed, sessions are served one after the other until
 * the plugin closes the channel between sessions (0), or one fails.
 *
 * Ownership: the descriptors are borrowed (never closed here); options are
 * borrowed for the call. Refusals and progress are logged to opts->log
 * (when not NULL), each line prefixed with opts->name. Errors: 0 when the
 * session ended well (`applied` or `bye`), else a negative PT_E* with the
 * reason in err: PT_EIO (the channel failed or the plugin closed it early),
 * PT_ETIMEDOUT, PT_EFORMAT (garbage or an unexpected message), or the
 * answer function's error after it was sent to the plugin.
 */
#ifndef PROTUNE_PT_SERVE_H
#define PROTUNE_PT_SERVE_H

#include <stdio.h>

#include "protune/pt_error.h"
#include "protune/pt_model.h"
#include "protune/pt_proto.h"
#include "protune/pt_sched.h"

/* The server's default per-message timeout: the generator may die or hang
 * between messages. */
#define PT_SERVE_TIMEOUT_MS (10 * 60 * 1000)

struct pt_serve;

/* Given the model (parsed and hashed), put a schedule for it in *out (the
 * caller takes it over) and return 0, or return a negative PT_E* with err
 * filled. `refused` is NULL on the first call for a session; after the
 * plugin refused the previous answer it is the plugin's reason, and
 * `attempt` counts the answers given so far. */
typedef int pt_serve_answer_fn(struct pt_serve *s, void *ctx,
			       const struct pt_model *m, int attempt,
			       const char *refused, struct pt_sched **out,
			       struct pt_error *err);

struct pt_serve_opts {
	const char *name;          /* prefix of log lines ("protune-cc") */
	FILE *log;                 /* refusals and notes, or NULL */
	int timeout_ms;            /* per message; 0: PT_SERVE_TIMEOUT_MS,
				    * < 0: wait for ever */
	pt_serve_answer_fn *answer;/* NULL: pt_serve_answer_baseline */
	void *ctx;                 /* passed to answer */
	int until_closed;          /* serve sessions one after the other until
				    * the plugin closes the channel where a
				    * `hello` could come (a multi-target
				    * generator run has one per target) */
	int compile_ms;            /* with until_closed, > 0: the longest wait
				    * from the end of a session to the next
				    * `hello` or the close, the generator
				    * compiling what it was told; past it
				    * pt_serve() returns PT_ETIMEDOUT, naming
				    * the last key, and sets *compile_over */
	int *compile_over;         /* may be NULL */
};

int pt_serve(int rfd, int wfd, const struct pt_serve_opts *opts,
	     struct pt_error *err);

/* Send a `wait` message with `progress` (may be NULL) if none was sent in
 * the last PT_PROTO_HEARTBEAT_MS / 2; answer functions call it while they
 * work. Returns 0, or the channel's error (the plugin is gone: stop). */
int pt_serve_wait(struct pt_serve *s, const char *progress,
		  struct pt_error *err);

/* The answer of this release: pt_sched_baseline() with meta
 * "tuner=baseline"; after a refusal there is nothing else to offer, so it
 * fails with PT_EMISMATCH. */
int pt_serve_answer_baseline(struct pt_serve *s, void *ctx,
			     const struct pt_model *m, int attempt,
			     const char *refused, struct pt_sched **out,
			     struct pt_error *err);

#endif
