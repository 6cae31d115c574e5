/* pt_plugin.cpp: libprotune_halide.so, the ProTune autoscheduler plugin
 * for Halide 14 generators (`-p libprotune_halide.so -s ProTune
 * auto_schedule=true`).
 *
 * The flow, per call (a multi-target build calls it once per target):
 *   1. extract the model of the pipeline (pt_extract.cpp);
 *   2. PROTUNE_DUMP_MODEL=PATH: write the model text there (atomically);
 *   3. get a schedule text:
 *      PROTUNE_SCHEDULE_FILE=PATH  read it ("apply mode", no server);
 *      PROTUNE_CHANNEL_FDS=R,W     a session with the protune-cc that
 *                                  started the generator;
 *      otherwise                   a session with a `protune-cc --serve`
 *                                  child started here;
 *   4. parse it and check it against the model (pt_sched_check, in C);
 *      a server is told `refused` and may answer again;
 *   5. apply it (pt_apply.cpp, all or nothing) and fill schedule_source
 *      with the equivalent C++ (pt_sched_to_cpp).
 * The session is doc/protocol.md. Failures throw Halide::CompileError
 * starting "ProTune: ", which the generator reports before exiting
 * non-zero.
 *
 * Environment: PROTUNE_CC (the server program), PROTUNE_CHANNEL_TIMEOUT_MS
 * (per-message read timeout, default 60 s; `wait` heartbeats reset it),
 * PROTUNE_DEBUG_TIMING=1 (model timings on stderr), and for tests
 * PROTUNE_TEST_APPLY_FAIL_AT=K (the first schedule of a call fails to apply
 * just before Func K, after the earlier Funcs were scheduled).
 */
#include "pt_adapter.h"

#include "config.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace pt_adapter {
namespace {

using namespace Halide;

const int default_timeout_ms = 60 * 1000;
/* How long a server that finished (or failed) gets to exit. */
const int reap_grace_ms = 5000;

std::string getenv_str(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "";
}

std::string one_line(std::string s)
{
	for (char &c : s)
		if (c == '\n' || c == '\r')
			c = ' ';
	while (!s.empty() && s.back() == ' ')
		s.pop_back();
	return s;
}

/* SIGPIPE blocked for the lifetime of the object; one raised meanwhile by
 * our own writes is consumed before the old mask comes back, so a server
 * that went away turns into EPIPE, never into the generator's death. */
class NoSigpipe {
public:
	NoSigpipe()
	{
		sigset_t s, pending;

		sigemptyset(&s);
		sigaddset(&s, SIGPIPE);
		sigpending(&pending);
		was_pending_ = sigismember(&pending, SIGPIPE) == 1;
		pthread_sigmask(SIG_BLOCK, &s, &old_);
	}
	~NoSigpipe()
	{
		sigset_t s, pending;
		struct timespec zero = { 0, 0 };

		sigemptyset(&s);
		sigaddset(&s, SIGPIPE);
		sigpending(&pending);
		if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1)
			while (sigtimedwait(&s, nullptr, &zero) < 0 &&
			       errno == EINTR)
				;
		pthread_sigmask(SIG_SETMASK, &old_, nullptr);
	}
	NoSigpipe(const NoSigpipe &) = delete;
	NoSigpipe &operator=(const NoSigpipe &) = delete;

private:
	sigset_t old_;
	bool was_pending_;
};

void write_atomic(const std::string &path, const char *data, size_t len)
{
	std::string tmp = path + ".tmp." + std::to_string(getpid());
	FILE *f = fopen(tmp.c_str(), "wb");

	if (!f)
		fail("cannot write " + tmp + ": " + strerror(errno));
	bool ok = fwrite(data, 1, len, f) == len;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp.c_str(), path.c_str())) {
		int e = errno;
		unlink(tmp.c_str());
		fail("cannot write " + path + ": " + strerror(e));
	}
}

std::string read_file(const std::string &path)
{
	FILE *f = fopen(path.c_str(), "rb");
	std::string s;
	char buf[65536];
	size_t n;

	if (!f)
		fail("cannot read schedule " + path + ": " + strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		s.append(buf, n);
	bool bad = ferror(f);
	fclose(f);
	if (bad)
		fail("cannot read schedule " + path + ": read error");
	return s;
}

/* What the pipeline is called in messages. */
std::string pipeline_name(const pt_model *m)
{
	if (m->function && *m->function)
		return m->function;
	std::string s;
	for (int i = 0; i < m->nfuncs; i++)
		if (m->funcs[i].is_output)
			s += std::string(s.empty() ? "" : ",") +
			     m->funcs[i].label;
	return s;
}

std::string key_hex(const pt_model *m)
{
	char hex[33];

	pt_hash_hex(m->key, hex);
	return hex;
}

/* Parse and check a schedule text; on failure return null with the reason. */
SchedPtr parse_checked(const std::string &text, const std::string &name,
		       const pt_model *m, std::string *reason)
{
	struct pt_error err = PT_ERROR_INIT;
	pt_sched *s = nullptr;

	if (pt_sched_parse(text.data(), text.size(), name.c_str(), &s,
			   &err)) {
		*reason = err.msg;
		return nullptr;
	}
	SchedPtr sp(s);
	if (pt_sched_check(m, s, &err)) {
		*reason = err.msg;
		return nullptr;
	}
	return sp;
}

[[noreturn]] void misfit(const std::string &where, const pt_model *m,
			 const std::string &reason)
{
	fail("schedule " + where + " does not fit pipeline " +
	     pipeline_name(m) + " (key " + key_hex(m) + "): " + reason);
}

/* PROTUNE_TEST_APPLY_FAIL_AT, for the first schedule of a call only. */
int test_fail_at(int attempt)
{
	std::string v = getenv_str("PROTUNE_TEST_APPLY_FAIL_AT");

	if (attempt > 0 || v.empty())
		return -1;
	return atoi(v.c_str());
}

/* Apply mode: PROTUNE_SCHEDULE_FILE. */
SchedPtr apply_file(const std::string &path, const Funcs &funcs,
		    const pt_model *m)
{
	std::string reason;
	SchedPtr s = parse_checked(read_file(path), path, m, &reason);

	if (!s)
		misfit(path, m, reason);
	reason = apply_schedule(funcs, m, s.get(), test_fail_at(0));
	if (!reason.empty())
		fail(reason);
	return s;
}

/* --- server sessions ------------------------------------------------------ */

std::string self_path()
{
	Dl_info info;

	if (dladdr(reinterpret_cast<void *>(&self_path), &info) &&
	    info.dli_fname)
		return info.dli_fname;
	return "";
}

std::string find_server()
{
	std::string cc = getenv_str("PROTUNE_CC");

	if (!cc.empty())
		return cc;
	std::string so = self_path();
	size_t slash = so.rfind('/');
	if (slash != std::string::npos) {
		std::string cand = so.substr(0, slash) + "/../bin/protune-cc";
		if (access(cand.c_str(), X_OK) == 0)
			return cand;
	}
	return "protune-cc";  /* looked up in PATH by pt_spawn */
}

int channel_timeout()
{
	std::string v = getenv_str("PROTUNE_CHANNEL_TIMEOUT_MS");
	char *end;

	if (v.empty())
		return default_timeout_ms;
	long t = strtol(v.c_str(), &end, 10);
	if (*end || t <= 0 || t > 24L * 3600 * 1000)
		fail("PROTUNE_CHANNEL_TIMEOUT_MS='" + v +
		     "' is not a positive number of milliseconds");
	return (int)t;
}


/* One session with a server over a channel: either the descriptors
 * inherited from protune-cc (kept open: a multi-target build calls the
 * plugin again) or the pipes of a `protune-cc --serve` child (closed and
 * the child reaped at the end, whatever happens). */
class Session {
public:
	Session() { pt_child_init(&child_); }
	~Session() { end(false); }
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;

	void open(int timeout)
	{
		std::string fds = getenv_str(PT_PROTO_ENV_FDS);
		if (!fds.empty()) {
			int r, w;
			char tail;
			if (sscanf(fds.c_str(), "%d,%d%c", &r, &w, &tail) !=
				    2 ||
			    r < 0 || w < 0 || fcntl(r, F_GETFD) < 0 ||
			    fcntl(w, F_GETFD) < 0)
				fail(std::string(PT_PROTO_ENV_FDS) + "='" +
				     fds + "' does not name two open "
				     "descriptors");
			pt_proto_init(&p_, r, w, timeout);
			peer_ = "protune-cc (channel " + fds + ")";
			return;
		}
		struct pt_error err = PT_ERROR_INIT;
		std::string cc = find_server();
		if (pt_strvec_pushl(&child_.args, cc.c_str(), "--serve",
				    (const char *)nullptr))
			throw std::bad_alloc();
		child_.in.mode = PT_IO_PIPE;
		child_.out.mode = PT_IO_PIPE;
		if (pt_child_start(&child_, &err))
			fail("cannot start the protune server " + cc +
			     " --serve: " + err.msg);
		started_ = pt_time_now_ms();
		spawned_ = true;
		own_server_ = true;
		pt_proto_init(&p_, child_.out.fd, child_.in.fd, timeout);
		peer_ = cc + " --serve (pid " + std::to_string(child_.pid) +
			")";
	}

	void send(const char *type, const std::string &payload)
	{
		struct pt_error err = PT_ERROR_INIT;

		if (try_send(type, payload, &err))
			broken(std::string("sending '") + type + "': " +
			       err.msg);
	}

	/* For messages whose loss does not matter (`bye`, the last
	 * `refused`): 0 or the error. */
	int try_send(const char *type, const std::string &payload,
		     struct pt_error *err = nullptr)
	{
		NoSigpipe guard;

		return pt_proto_send(&p_, type, payload.data(), payload.size(),
				     err);
	}

	/* The next message other than `wait`. */
	void recv(pt_proto_msg *msg, const char *what)
	{
		for (;;) {
			struct pt_error err = PT_ERROR_INIT;
			if (pt_proto_recv(&p_, msg, &err))
				broken(std::string("waiting for ") + what +
				       ": " + err.msg);
			if (strcmp(msg->type, "wait"))
				return;
			pt_proto_msg_release(msg);
		}
	}

	/* Close the channel and reap the child; with `failed`, do not wait
	 * for a clean exit. Returns the child's status when it had to be
	 * described ("" otherwise). */
	std::string end(bool failed)
	{
		std::string how;

		pt_proto_release(&p_);
		if (!spawned_)
			return how;
		spawned_ = false;
		if (child_.in.fd >= 0) {
			close(child_.in.fd);
			child_.in.fd = -1;
		}
		if (child_.out.fd >= 0) {
			close(child_.out.fd);
			child_.out.fd = -1;
		}
		int status = 0;
		child_.timeout_ms = (int)(pt_time_now_ms() - started_) +
				    (failed ? 1000 : reap_grace_ms);
		int rc = pt_child_wait(&child_, &status, nullptr);
		if (rc == PT_ETIMEDOUT)
			how = "it did not exit and was killed";
		else if (rc == 0 && status > 128)
			how = "it was killed by signal " +
			      std::to_string(status - 128);
		else if (rc == 0 && status != 0)
			how = "it exited with status " + std::to_string(status);
		pt_child_release(&child_);
		return how;
	}

	[[noreturn]] void broken(const std::string &what)
	{
		std::string peer = peer_;
		std::string how = end(true);
		fail("the protune server " + peer + " failed: " + what +
		     (how.empty() ? "" : " (" + how + ")"));
	}

	const std::string &peer() const { return peer_; }
	/* The channel came from protune-cc (PROTUNE_CHANNEL_FDS). */
	bool inherited() const { return !own_server_; }

private:
	pt_proto p_ = { -1, -1, 0, nullptr, 0, 0 };
	pt_child child_;
	bool spawned_ = false;
	bool own_server_ = false;  /* started by us, not inherited */
	long long started_ = 0;
	std::string peer_;
};

struct Msg {
	pt_proto_msg m = { { 0 }, nullptr, 0 };
	~Msg() { pt_proto_msg_release(&m); }
	std::string payload() const
	{
		return m.payload ? std::string(m.payload, m.len) : "";
	}
};

SchedPtr serve(const Funcs &funcs, const pt_model *m,
	       const std::string &model_text)
{
	Session sess;
	int refusals = 0, attempt = 0;

	sess.open(channel_timeout());
	sess.send("hello", std::string("protune ") + PT_VERSION + " pid " +
				   std::to_string(getpid()));
	sess.send("model", model_text);
	for (;;) {
		Msg msg;
		sess.recv(&msg.m, "a schedule");
		if (!strcmp(msg.m.type, "error")) {
			/* protune-cc, our parent when the channel is
			 * inherited, prints the reason itself when the
			 * generator fails: saying it here too would only
			 * double a long message. A server we started may
			 * not be protune-cc: its reason goes in ours. */
			sess.try_send("bye", "");
			sess.end(false);
			if (sess.inherited())
				fail("no schedule for pipeline '" +
				     pipeline_name(m) +
				     "': protune-cc refused it and says why");
			fail("no schedule for pipeline '" + pipeline_name(m) +
			     "' from " + sess.peer() + ": " +
			     one_line(msg.payload()));
		}
		if (strcmp(msg.m.type, "schedule"))
			sess.broken(std::string("it sent '") + msg.m.type +
				    "' where a schedule was expected");
		std::string reason;
		SchedPtr s = parse_checked(msg.payload(), "<server>", m,
					   &reason);
		if (s) {
			reason = apply_schedule(funcs, m, s.get(),
						test_fail_at(attempt++));
			if (reason.empty()) {
				sess.send("applied", "");
				sess.try_send("bye", "");
				sess.end(false);
				return s;
			}
		}
		reason = one_line(reason);
		if (++refusals > PT_PROTO_MAX_REFUSALS) {
			/* Tell the server why it ends, then fail. */
			sess.try_send("refused", reason);
			sess.end(true);
			misfit("<server>", m, reason);
		}
		sess.send("refused", reason);
	}
}

/* --- the autoscheduler ---------------------------------------------------- */

double ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(
		       std::chrono::steady_clock::now() - t0)
		.count();
}

void autoschedule(const Pipeline &pipeline, const Target &target,
		  const MachineParams &params, AutoSchedulerResults *results)
{
	Funcs funcs;
	ExtractTimes times;
	ModelPtr m = extract_model(pipeline, target, params, &funcs, &times);

	auto t0 = std::chrono::steady_clock::now();
	struct pt_strbuf sb = PT_STRBUF_INIT;
	if (pt_model_print(m.get(), PT_MODEL_PRINT_LABELS, &sb))
		throw std::bad_alloc();
	std::string text(sb.buf, sb.len);
	pt_strbuf_release(&sb);
	times.print_hash_ms += ms_since(t0);
	if (getenv_str("PROTUNE_DEBUG_TIMING") == "1")
		fprintf(stderr,
			"protune: model: %d funcs, %d stages, %.2f ms extract, "
			"%.2f ms print+hash\n",
			m->nfuncs, m->nstages, times.extract_ms,
			times.print_hash_ms);

	std::string dump = getenv_str("PROTUNE_DUMP_MODEL");
	if (!dump.empty())
		write_atomic(dump, text.data(), text.size());

	std::string file = getenv_str("PROTUNE_SCHEDULE_FILE");
	SchedPtr s = !file.empty() ? apply_file(file, funcs, m.get())
				   : serve(funcs, m.get(), text);

	if (pt_sched_to_cpp(m.get(), s.get(), &sb))
		throw std::bad_alloc();
	if (results) {
		results->scheduler_name = "ProTune";
		results->schedule_source = std::string(sb.buf, sb.len);
	}
	pt_strbuf_release(&sb);
}

struct Register {
	Register()
	{
		Pipeline::add_autoscheduler("ProTune", autoschedule);
	}
} register_protune;

}  // namespace
}  // namespace pt_adapter
