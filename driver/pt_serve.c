/* pt_serve.c: one plugin session on the server side (pt_serve.h,
 * doc/protocol.md). */
#include "pt_serve.h"

#include "protune/pt_randsched.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_time.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct pt_serve {
	struct pt_proto p;
	const struct pt_serve_opts *o;
	long long last_sent;   /* when the last message went out */
	int sessions;          /* sessions served so far */
	char key[33];
};

static void note(const struct pt_serve *s, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static void note(const struct pt_serve *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->o->log)
		return;
	fprintf(s->o->log, "%s: ", s->o->name ? s->o->name : "protune");
	va_start(ap, fmt);
	vfprintf(s->o->log, fmt, ap);
	va_end(ap);
	fputc('\n', s->o->log);
	fflush(s->o->log);
}

static int send_msg(struct pt_serve *s, const char *type, const char *payload,
		    size_t len, struct pt_error *err)
{
	struct pt_error e = PT_ERROR_INIT;
	int ret = pt_proto_send(&s->p, type, payload, len, &e);

	if (ret)
		return pt_error_set(err, ret, "sending to the plugin: %s",
				    e.msg);
	s->last_sent = pt_time_now_ms();
	return 0;
}

static int recv_msg(struct pt_serve *s, struct pt_proto_msg *msg,
		    const char *waiting_for, struct pt_error *err)
{
	struct pt_error e = PT_ERROR_INIT;
	int ret = pt_proto_recv(&s->p, msg, &e);

	if (ret)
		return pt_error_set(err, ret, "waiting for %s from the plugin: %s",
				    waiting_for, e.msg);
	return 0;
}

static int unexpected(const struct pt_proto_msg *msg, const char *want,
		      struct pt_error *err)
{
	return pt_error_set(err, PT_EFORMAT,
			    "the plugin sent a '%s' message where %s was expected",
			    msg->type, want);
}

int pt_serve_wait(struct pt_serve *s, const char *progress,
		  struct pt_error *err)
{
	if (pt_time_now_ms() - s->last_sent < PT_PROTO_HEARTBEAT_MS / 2)
		return 0;
	if (!progress)
		progress = "";
	return send_msg(s, "wait", progress, strlen(progress), err);
}

int pt_serve_answer_baseline(struct pt_serve *s, void *ctx,
			     const struct pt_model *m, int attempt,
			     const char *refused, struct pt_sched **out,
			     struct pt_error *err)
{
	struct pt_sched *sched;

	(void)s;
	(void)ctx;
	(void)attempt;
	*out = NULL;
	if (refused)
		return pt_error_set(err, PT_EMISMATCH,
				    "the plugin refused the baseline schedule (%s) and the server has no other schedule to offer",
				    refused);
	sched = pt_sched_baseline(m);
	if (!sched)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	memcpy(sched->key, m->key, sizeof(sched->key));
	if (pt_strvec_push(&sched->meta, "tuner=baseline")) {
		pt_sched_free(sched);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	*out = sched;
	return 0;
}

/* After `applied` or after the server sent `error`: the plugin says `bye`
 * or closes the channel. Either ends the session. */
static int finish(struct pt_serve *s, struct pt_error *err)
{
	struct pt_proto_msg msg;
	struct pt_error e = PT_ERROR_INIT;
	int ret = pt_proto_recv(&s->p, &msg, &e);

	if (ret == PT_EIO && !strcmp(e.msg, "the peer closed the channel"))
		return 0;
	if (ret)
		return pt_error_set(err, ret,
				    "waiting for 'bye' from the plugin: %s",
				    e.msg);
	ret = strcmp(msg.type, "bye") ? unexpected(&msg, "'bye'", err) : 0;
	pt_proto_msg_release(&msg);
	return ret;
}

/* Get an answer, check it, and send it as `schedule` (or the failure as
 * `error`). Returns 0 when a schedule went out. */
static int answer(struct pt_serve *s, const struct pt_model *m, int attempt,
		  const char *refused, struct pt_error *err)
{
	pt_serve_answer_fn *fn = s->o->answer ? s->o->answer :
		pt_serve_answer_baseline;
	struct pt_sched *sched = NULL;
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct pt_error e = PT_ERROR_INIT;
	int ret;

	ret = fn(s, s->o->ctx, m, attempt, refused, &sched, &e);
	if (!ret && !sched)
		ret = pt_error_set(&e, PT_EINVAL, "no schedule was produced");
	if (!ret && (ret = pt_sched_check(m, sched, &e))) {
		char msg[PT_ERROR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", e.msg);
		pt_error_set(&e, ret,
			     "the server's schedule does not fit the model (a protune bug): %s",
			     msg);
	}
	if (!ret && pt_sched_print(sched, &text))
		ret = pt_error_set(&e, PT_ENOMEM, "out of memory");
	if (!ret) {
		ret = send_msg(s, "schedule", text.buf, text.len, err);
	} else {
		/* Tell the plugin why, then report it ourselves. */
		send_msg(s, "error", e.msg, strlen(e.msg), NULL);
		if (err)
			*err = e;
		finish(s, NULL);
	}
	pt_sched_free(sched);
	pt_strbuf_release(&text);
	return ret;
}

static int session(struct pt_serve *s, struct pt_error *err)
{
	struct pt_proto_msg msg = { { 0 }, NULL, 0 };
	struct pt_model *m = NULL;
	struct pt_error e = PT_ERROR_INIT;
	char *refused = NULL;
	int attempt = 0, ret;

	if (s->o->until_closed) {
		struct pt_error e0 = PT_ERROR_INIT;
		int saved = s->p.timeout_ms;

		/* After a session the generator compiles what it was told
		 * until the next hello or its exit: the compile limit. */
		if (s->sessions && s->o->compile_ms > 0)
			s->p.timeout_ms = s->o->compile_ms;
		ret = pt_proto_recv(&s->p, &msg, &e0);
		s->p.timeout_ms = saved;
		if (ret == PT_EIO &&
		    !strcmp(e0.msg, "the peer closed the channel"))
			return 1;
		if (ret == PT_ETIMEDOUT && s->sessions &&
		    s->o->compile_ms > 0) {
			if (s->o->compile_over)
				*s->o->compile_over = 1;
			return pt_error_set(err, ret,
					    "the generator compiled for more than %g s after the schedule for key %s",
					    s->o->compile_ms / 1000.0,
					    s->key);
		}
		if (ret)
			return pt_error_set(err, ret,
					    "waiting for 'hello' from the plugin: %s",
					    e0.msg);
	} else if ((ret = recv_msg(s, &msg, "'hello'", err))) {
		return ret;
	}
	if (strcmp(msg.type, "hello")) {
		ret = unexpected(&msg, "'hello'", err);
		goto out;
	}
	if (strncmp(msg.payload, "protune ", 8)) {
		ret = pt_error_set(err, PT_EFORMAT,
				   "the plugin's hello '%.60s' is not from protune",
				   msg.payload);
		goto out;
	}
	pt_proto_msg_release(&msg);

	if ((ret = recv_msg(s, &msg, "the model", err)))
		goto out;
	if (!strcmp(msg.type, "bye"))
		goto out;
	if (strcmp(msg.type, "model")) {
		ret = unexpected(&msg, "'model'", err);
		goto out;
	}
	ret = pt_model_parse(msg.payload, msg.len, "<plugin>", &m, &e);
	if (!ret && (ret = pt_model_hash(m)))
		pt_error_set(&e, ret, "cannot hash the model");
	if (ret) {
		ret = pt_error_set(err, ret, "cannot read the model: %s",
				   e.msg);
		send_msg(s, "error", err ? err->msg : "bad model",
			 strlen(err ? err->msg : "bad model"), NULL);
		finish(s, NULL);
		goto out;
	}
	pt_proto_msg_release(&msg);
	pt_hash_hex(m->key, s->key);

	for (;;) {
		if ((ret = answer(s, m, attempt, refused, err)))
			goto out;
		attempt++;
		if ((ret = recv_msg(s, &msg, "'applied' or 'refused'", err)))
			goto out;
		if (!strcmp(msg.type, "applied")) {
			ret = finish(s, err);
			goto out;
		}
		if (!strcmp(msg.type, "bye"))
			goto out;
		if (strcmp(msg.type, "refused")) {
			ret = unexpected(&msg, "'applied' or 'refused'", err);
			goto out;
		}
		note(s, "the plugin refused the schedule for %s: %s", s->key,
		     msg.payload);
		free(refused);
		refused = msg.payload;
		msg.payload = NULL;
		pt_proto_msg_release(&msg);
		if (attempt > PT_PROTO_MAX_REFUSALS) {
			ret = pt_error_set(err, PT_EMISMATCH,
					   "the plugin refused %d schedules for %s; the last reason: %s",
					   attempt, s->key, refused);
			goto out;
		}
	}
out:
	pt_proto_msg_release(&msg);
	pt_model_free(m);
	free(refused);
	return ret;
}

int pt_serve(int rfd, int wfd, const struct pt_serve_opts *opts,
	     struct pt_error *err)
{
	struct pt_serve s;
	int timeout, ret;

	timeout = opts->timeout_ms ? opts->timeout_ms : PT_SERVE_TIMEOUT_MS;
	memset(&s, 0, sizeof(s));
	pt_proto_init(&s.p, rfd, wfd, timeout);
	s.o = opts;
	s.last_sent = pt_time_now_ms();
	do {
		ret = session(&s, err);
		s.sessions++;
	} while (!ret && opts->until_closed);
	if (ret == 1)
		ret = 0;
	pt_proto_release(&s.p);
	return ret;
}
