/* pt_measure.c: compile one schedule, link it with RunGen, time it
 * (pt_measure.h).
 *
 * The steps, each a child process through pt_spawn (never a shell):
 *   1. the model's generator, re-run in apply mode into a fresh temporary
 *      directory (PROTUNE_SCHEDULE_FILE names the schedule written there);
 *   2. c++ RunGenMain.o cand.registration.cpp cand.a -o rungen, with
 *      RunGenMain.o compiled once per machine into the cache directory;
 *   3. rungen in benchmark mode, `runs` times, each under the benchmark
 *      lock when one is named.
 */
#include "protune/pt_measure.h"

#include "config.h"
#include "protune/pt_lock.h"
#include "protune/pt_path.h"
#include "protune/pt_spawn.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"
#include "protune/pt_time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* Where Halide keeps RunGenMain.cpp and the headers RunGen needs, as
 * configure found them; the environment overrides them. */
#define DEFAULT_TOOLSDIR PT_HALIDE_TOOLSDIR
#define DEFAULT_INCDIR PT_HALIDE_INCDIR
#define ENV_TOOLSDIR "PROTUNE_HALIDE_TOOLSDIR"
#define ENV_INCDIR "PROTUNE_HALIDE_INCDIR"

#define CAND "cand"
#define RUNGEN_MAIN_TIMEOUT_MS 600000
#define TAIL_MAX 360

static const char *const rungen_flags[] = {
	"-std=c++17", "-O2", "-DHALIDE_NO_PNG", "-DHALIDE_NO_JPEG", NULL
};

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/* The last lines of a tool's output, on one line, for an error message. */
static void tail_of(const struct pt_strbuf *sb, char *out, size_t outsz)
{
	const char *s = sb->buf;
	size_t len = sb->len, start, o = 0, i;

	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	start = len > TAIL_MAX ? len - TAIL_MAX : 0;
	if (start)
		while (start < len && s[start - 1] != '\n')
			start++;
	if (start == len && len)
		start = len > TAIL_MAX ? len - TAIL_MAX : 0;
	for (i = start; i < len && o + 4 < outsz; i++) {
		if (s[i] == '\n') {
			out[o++] = ' ';
			out[o++] = '|';
			out[o++] = ' ';
		} else if ((unsigned char)s[i] >= 0x20) {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	if (!o)
		snprintf(out, outsz, "(no output)");
}

static int mkdir_p(const char *path, struct pt_error *err)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	size_t i;
	int ret = 0;

	if (pt_strbuf_addstr(&sb, path))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	for (i = 1; i <= sb.len && !ret; i++) {
		if (i < sb.len && sb.buf[i] != '/')
			continue;
		sb.buf[i] = '\0';
		if (mkdir(sb.buf, 0777) && errno != EEXIST)
			ret = pt_error_set(err, PT_EIO, "cannot create %s: %s",
					   sb.buf, strerror(errno));
		if (i < sb.len)
			sb.buf[i] = '/';
	}
	pt_strbuf_release(&sb);
	return ret;
}

static int read_file(const char *path, struct pt_strbuf *out,
		     struct pt_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return pt_error_set(err,
				    errno == ENOENT ? PT_ENOTFOUND : PT_EIO,
				    "cannot read %s: %s", path,
				    strerror(errno));
	ret = pt_spawn_read_fd(fd, out, err);
	close(fd);
	return ret;
}

static int write_file(const char *path, const char *data, size_t len,
		      struct pt_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0)
		return pt_error_set(err, PT_EIO, "cannot create %s: %s", path,
				    strerror(errno));
	while (len) {
		ssize_t w = write(fd, data, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;

			close(fd);
			return pt_error_set(err, PT_EIO, "cannot write %s: %s",
					    path, strerror(e));
		}
		data += w;
		len -= (size_t)w;
	}
	if (close(fd))
		return pt_error_set(err, PT_EIO, "cannot write %s: %s", path,
				    strerror(errno));
	return 0;
}

/* Remove a directory tree we created (no symlinks followed). */
static void remove_tree(const char *path);
void pt_measure_remove_dir(const char *dir)
{
	if (dir && *dir)
		remove_tree(dir);
}

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d))) {
			struct pt_strbuf sb = PT_STRBUF_INIT;
			struct stat st;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (pt_strbuf_addf(&sb, "%s/%s", path, e->d_name))
				continue;
			if (!lstat(sb.buf, &st) && S_ISDIR(st.st_mode))
				remove_tree(sb.buf);
			else
				unlink(sb.buf);
			pt_strbuf_release(&sb);
		}
		closedir(d);
	}
	rmdir(path);
}

/* --- the generator command --------------------------------------------- */

static int is_flag_with_value(const char *a)
{
	static const char *const flags[] = {
		"-g", "-f", "-o", "-e", "-n", "-p", "-s", "-t", "-d", "-r", NULL
	};
	int i;

	for (i = 0; flags[i]; i++)
		if (!strcmp(a, flags[i]))
			return 1;
	return 0;
}

static int is_dropped_flag(const char *a)
{
	return !strcmp(a, "-o") || !strcmp(a, "-e") || !strcmp(a, "-n") ||
		!strcmp(a, "-p") || !strcmp(a, "-s") || !strcmp(a, "-t");
}

static int has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* m->target without the no_runtime feature. */
static int target_for_run(const char *target, struct pt_strbuf *out)
{
	const char *p = target;

	while (*p) {
		size_t n = strcspn(p, "-");

		if (!(n == 10 && !strncmp(p, "no_runtime", 10))) {
			if (out->len && pt_strbuf_addch(out, '-'))
				return PT_ENOMEM;
			if (pt_strbuf_add(out, p, n))
				return PT_ENOMEM;
		}
		p += n;
		if (*p == '-')
			p++;
	}
	return 0;
}

int pt_measure_rewrite_argv(const struct pt_model *m, const char *out_dir,
			    const char *plugin_path, struct pt_strvec *out,
			    struct pt_error *err)
{
	struct pt_strvec v = PT_STRVEC_INIT;
	struct pt_strbuf target = PT_STRBUF_INIT;
	const char *prog;
	size_t i;
	int ret = PT_ENOMEM;

	if (!m->argv.nr || !*m->argv.v[0])
		return pt_error_set(err, PT_EINVAL,
				    "the model records no generator command to re-run");
	prog = m->argv.v[0];
	if (prog[0] != '/' && strchr(prog, '/'))
		return pt_error_set(err, PT_EINVAL,
				    "the model's generator '%s' is a relative path",
				    prog);
	if (!m->target || !*m->target)
		return pt_error_set(err, PT_EINVAL,
				    "the model names no target");
	if (pt_strvec_push(&v, prog))
		goto nomem;
	for (i = 1; i < m->argv.nr; i++) {
		const char *a = m->argv.v[i];

		if (!strcmp(a, "-r")) {
			ret = pt_error_set(err, PT_EINVAL,
					   "the generator command builds a runtime only (-r): nothing to measure");
			goto fail;
		}
		if (is_flag_with_value(a)) {
			if (i + 1 >= m->argv.nr) {
				ret = pt_error_set(err, PT_EINVAL,
						   "the generator command ends in '%s' without its value",
						   a);
				goto fail;
			}
			if (!is_dropped_flag(a) &&
			    pt_strvec_pushl(&v, a, m->argv.v[i + 1], NULL))
				goto nomem;
			i++;
			continue;
		}
		if (has_prefix(a, "auto_schedule=") || has_prefix(a, "target="))
			continue;
		if (pt_strvec_push(&v, a))
			goto nomem;
	}
	if (target_for_run(m->target, &target))
		goto nomem;
	if (pt_strvec_pushl(&v, "-o", out_dir, "-e",
			    "static_library,h,registration", "-n", CAND, "-p",
			    plugin_path, "-s", "ProTune", "auto_schedule=true",
			    "-t", "0", NULL) ||
	    pt_strvec_pushf(&v, "target=%s", target.buf) ||
	    pt_strvec_pushv(out, (const char *const *)v.v))
		goto nomem;
	pt_strvec_release(&v);
	pt_strbuf_release(&target);
	return 0;
nomem:
	ret = pt_error_set(err, PT_ENOMEM, "out of memory");
fail:
	pt_strvec_release(&v);
	pt_strbuf_release(&target);
	return ret;
}

/* --- statistics -------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double pt_measure_median(double *times, int n)
{
	if (n <= 0)
		return NAN;
	qsort(times, (size_t)n, sizeof(*times), cmp_double);
	if (n % 2)
		return times[n / 2];
	return (times[n / 2 - 1] + times[n / 2]) / 2;
}

/* --- RunGenMain.o ------------------------------------------------------- */

/* Run a tool with both streams captured into `outerr`. Returns the
 * pt_spawn error, or 0 with *status set. */
static int run_tool(struct pt_child *c, int timeout_ms, struct pt_strbuf *out,
		    struct pt_strbuf *errout, int *status, struct pt_error *err)
{
	c->in.mode = PT_IO_NULL;
	c->timeout_ms = timeout_ms;
	return pt_child_capture(c, NULL, 0, out, errout, status, err);
}

/* What identifies the compiler: its resolved path and its --version. */
static int compiler_identity(const char *cxx, struct pt_strbuf *id,
			     struct pt_error *err)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_strbuf errout = PT_STRBUF_INIT;
	int status, ret;

	if (pt_path_find_program(cxx, getenv("PATH"), NULL, id, err))
		return PT_ENOTFOUND;
	if (pt_strbuf_addch(id, '\n') ||
	    pt_strvec_pushl(&c.args, cxx, "--version", NULL)) {
		pt_child_release(&c);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	ret = run_tool(&c, 30000, id, &errout, &status, err);
	if (!ret && status)
		ret = pt_error_set(err, PT_ESPAWN,
				   "'%s --version' failed (exit %d)", cxx,
				   status);
	pt_child_release(&c);
	pt_strbuf_release(&errout);
	return ret;
}

static int file_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int compile_rungen_main(const char *cxx, const char *src,
			       const char *dst, struct pt_error *err)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_strbuf tmp = PT_STRBUF_INIT, out = PT_STRBUF_INIT;
	char tail[TAIL_MAX + 64];
	int status = 0, ret;

	if (pt_strbuf_addf(&tmp, "%s.tmp.%ld", dst, (long)getpid()) ||
	    pt_strvec_push(&c.args, cxx) ||
	    pt_strvec_pushv(&c.args, rungen_flags) ||
	    pt_strvec_pushf(&c.args, "-I%s", env_or(ENV_INCDIR,
						      DEFAULT_INCDIR)) ||
	    pt_strvec_pushl(&c.args, "-c", src, "-o", tmp.buf, NULL)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	ret = run_tool(&c, RUNGEN_MAIN_TIMEOUT_MS, &out, &out, &status, err);
	if (ret == PT_ETIMEDOUT)
		ret = pt_error_set(err, PT_ETIMEDOUT,
				   "compiling %s timed out", src);
	if (ret)
		goto out;
	if (status) {
		tail_of(&out, tail, sizeof(tail));
		ret = pt_error_set(err, PT_EIO,
				   "compiling %s failed (exit %d): %s", src,
				   status, tail);
		goto out;
	}
	if (rename(tmp.buf, dst))
		ret = pt_error_set(err, PT_EIO, "cannot rename %s to %s: %s",
				   tmp.buf, dst, strerror(errno));
out:
	if (ret && tmp.len)
		unlink(tmp.buf);
	pt_child_release(&c);
	pt_strbuf_release(&tmp);
	pt_strbuf_release(&out);
	return ret;
}

int pt_measure_rungen_main(const char *cache_dir, const char *cxx,
			   struct pt_strbuf *path, struct pt_error *err)
{
	struct pt_strbuf src = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	struct pt_strbuf dir = PT_STRBUF_INIT, obj = PT_STRBUF_INIT;
	struct pt_lock lk = PT_LOCK_INIT;
	XXH128_hash_t h;
	int i, ret;

	if (!cache_dir || !*cache_dir)
		return pt_error_set(err, PT_EINVAL, "no cache directory");
	if (!cxx || !*cxx)
		cxx = "c++";
	if (pt_strbuf_addf(&src, "%s/RunGenMain.cpp",
			   env_or(ENV_TOOLSDIR, DEFAULT_TOOLSDIR)) ||
	    pt_strbuf_addf(&dir, "%s/rungen", cache_dir)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	/* The name hashes the source, the compiler and the flags. */
	if ((ret = read_file(src.buf, &text, err)))
		goto out;
	if ((ret = compiler_identity(cxx, &text, err)))
		goto out;
	for (i = 0; rungen_flags[i]; i++)
		if (pt_strbuf_addf(&text, "\n%s", rungen_flags[i])) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			goto out;
		}
	if (pt_strbuf_addf(&text, "\n-I%s",
			   env_or(ENV_INCDIR, DEFAULT_INCDIR))) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	h = XXH3_128bits(text.buf, text.len);
	if (pt_strbuf_addf(&obj, "%s/RunGenMain-%016llx%016llx.o", dir.buf,
			   (unsigned long long)h.high64,
			   (unsigned long long)h.low64)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	if (!file_exists(obj.buf)) {
		if ((ret = mkdir_p(dir.buf, err)))
			goto out;
		ret = pt_lock_acquire(&lk, dir.buf, "RunGenMain.lock", -1,
				      err);
		if (ret)
			goto out;
		/* Another process may have compiled it while we waited. */
		if (!file_exists(obj.buf))
			ret = compile_rungen_main(cxx, src.buf, obj.buf, err);
		pt_lock_release(&lk);
		if (ret)
			goto out;
	}
	ret = pt_strbuf_addstr(path, obj.buf) ?
		pt_error_set(err, PT_ENOMEM, "out of memory") : 0;
out:
	pt_strbuf_release(&src);
	pt_strbuf_release(&text);
	pt_strbuf_release(&dir);
	pt_strbuf_release(&obj);
	return ret;
}

/* --- measuring ---------------------------------------------------------- */

struct measure {
	const struct pt_model *m;
	const struct pt_measure_opts *o;
	const char *cxx;
	char dir[4096];
	struct pt_strbuf rungen_main;
	long long compile_deadline;
};

static int make_tmpdir(struct measure *ms, struct pt_error *err)
{
	const char *root = ms->o->tmp_root;
	int n;

	if (!root || !*root)
		root = env_or("TMPDIR", "/tmp");
	n = snprintf(ms->dir, sizeof(ms->dir), "%s/protune-measure-XXXXXX",
		     root);
	if (n < 0 || (size_t)n >= sizeof(ms->dir))
		return pt_error_set(err, PT_EINVAL,
				    "temporary directory name too long");
	if (!mkdtemp(ms->dir)) {
		int e = errno;

		ms->dir[0] = '\0';
		return pt_error_set(err, PT_EIO,
				    "cannot create a temporary directory in %s: %s",
				    root, strerror(e));
	}
	return 0;
}

static int compile_left_ms(const struct measure *ms)
{
	long long left = ms->compile_deadline - pt_time_now_ms();

	return left < 1 ? 1 : left > 0x7fffffff ? 0x7fffffff : (int)left;
}

static int run_generator(struct measure *ms, struct pt_error *err)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	char tail[TAIL_MAX + 64];
	int status = 0, ret;

	if ((ret = pt_measure_rewrite_argv(ms->m, ms->dir, ms->o->plugin_path,
					   &c.args, err)))
		goto out;
	if (pt_strvec_pushf(&c.env, "PROTUNE_SCHEDULE_FILE=%s/schedule.txt",
			    ms->dir) ||
	    pt_strvec_pushl(&c.env, "PROTUNE_CHANNEL_FDS",
			    "PROTUNE_DUMP_MODEL", NULL)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	ret = run_tool(&c, compile_left_ms(ms), &out, &out, &status, err);
	if (ret == PT_ETIMEDOUT) {
		tail_of(&out, tail, sizeof(tail));
		ret = pt_error_set(err, PT_ETIMEDOUT,
				   "compiling the schedule: the generator ran past the time limit: %s",
				   tail);
	} else if (!ret && status) {
		tail_of(&out, tail, sizeof(tail));
		ret = pt_error_set(err, PT_EMISMATCH,
				   "compiling the schedule: the generator failed (exit %d): %s",
				   status, tail);
	} else if (ret) {
		char msg[PT_ERROR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
		ret = pt_error_set(err, ret, "compiling the schedule: %s", msg);
	}
out:
	pt_child_release(&c);
	pt_strbuf_release(&out);
	return ret;
}

static int link_rungen(struct measure *ms, struct pt_error *err)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT;
	char tail[TAIL_MAX + 64];
	int status = 0, ret;

	if (pt_strvec_push(&c.args, ms->cxx) ||
	    pt_strvec_pushv(&c.args, rungen_flags) ||
	    pt_strvec_pushf(&c.args, "-I%s", env_or(ENV_INCDIR,
						      DEFAULT_INCDIR)) ||
	    pt_strvec_push(&c.args, ms->rungen_main.buf) ||
	    pt_strvec_pushf(&c.args, "%s/" CAND ".registration.cpp", ms->dir) ||
	    pt_strvec_pushf(&c.args, "%s/" CAND ".a", ms->dir) ||
	    pt_strvec_pushl(&c.args, "-ldl", "-lpthread", "-o", NULL) ||
	    pt_strvec_pushf(&c.args, "%s/rungen", ms->dir)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	ret = run_tool(&c, compile_left_ms(ms), &out, &out, &status, err);
	if (ret == PT_ETIMEDOUT) {
		ret = pt_error_set(err, PT_ETIMEDOUT,
				   "linking RunGen: ran past the time limit");
	} else if (!ret && status) {
		tail_of(&out, tail, sizeof(tail));
		ret = pt_error_set(err, PT_EIO,
				   "linking RunGen failed (exit %d): %s",
				   status, tail);
	}
out:
	pt_child_release(&c);
	pt_strbuf_release(&out);
	return ret;
}

/* The time from RunGen's --parsable_output: a line "NAME
 * BEST_TIME_MSEC_PER_ITER VALUE". */
static int parse_time(const char *out, double *ms)
{
	const char *line = out;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[256], name[128], key[64], val[64], extra[2];

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			if (sscanf(buf, "%127s %63s %63s %1s", name, key, val,
				   extra) == 3 &&
			    !strcmp(key, "BEST_TIME_MSEC_PER_ITER")) {
				char *end;
				double v = strtod(val, &end);

				if (*end || !isfinite(v) || v <= 0)
					return -1;
				*ms = v;
				return 0;
			}
		}
		line += len + (nl ? 1 : 0);
	}
	return -1;
}

static int open_lock(const char *lock_path, int shared, int timeout_ms,
		     struct pt_lock *lk, struct pt_error *err)
{
	struct pt_strbuf dir = PT_STRBUF_INIT;
	const char *slash = strrchr(lock_path, '/');
	int (*take)(struct pt_lock *, const char *, const char *, int,
		    struct pt_error *) =
		shared ? pt_lock_acquire_shared : pt_lock_acquire;
	int ret;

	if (!slash)
		ret = take(lk, ".", lock_path, timeout_ms, err);
	else if (pt_strbuf_add(&dir, lock_path, slash == lock_path ? 1 :
			       (size_t)(slash - lock_path)))
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
	else
		ret = take(lk, dir.buf, slash + 1, timeout_ms, err);
	pt_strbuf_release(&dir);
	if (ret == PT_LOCK_BUSY)
		ret = pt_error_set(err, PT_ETIMEDOUT,
				   "the benchmark lock %s stayed busy for %d ms",
				   lock_path, timeout_ms);
	return ret;
}

/* One RunGen benchmark of the binary `rungen` (the caller holds the
 * benchmark lock). */
static int run_binary(struct measure *ms, const char *rungen,
		      double *time_ms, struct pt_error *err)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT, errout = PT_STRBUF_INIT;
	char tail[TAIL_MAX + 64];
	double min_time = ms->o->min_time_s > 0 ? ms->o->min_time_s : 0.1;
	int status = 0, ret;

	if (pt_strvec_push(&c.args, rungen) ||
	    pt_strvec_pushl(&c.args, "--benchmarks=all", "--parsable_output",
			    "--default_input_buffers=random:0:estimate_then_auto",
			    "--default_input_scalars=estimate",
			    "--output_extents=estimate", NULL) ||
	    pt_strvec_pushf(&c.args, "--benchmark_min_time=%g", min_time)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	ret = run_tool(&c, ms->o->run_timeout_ms > 0 ? ms->o->run_timeout_ms :
		       120000, &out, &errout, &status, err);
	if (ret == PT_ETIMEDOUT) {
		ret = pt_error_set(err, PT_ETIMEDOUT,
				   "running the benchmark: ran past the time limit");
	} else if (!ret && status) {
		if (pt_strbuf_add(&errout, out.buf, out.len))
			errout.len = 0;
		tail_of(&errout, tail, sizeof(tail));
		ret = pt_error_set(err, PT_EMISMATCH,
				   status > 128 ?
				   "running the benchmark: RunGen crashed (status %d): %s" :
				   "running the benchmark: RunGen failed (exit %d): %s",
				   status, tail);
	} else if (!ret && parse_time(out.buf, time_ms)) {
		tail_of(&out, tail, sizeof(tail));
		ret = pt_error_set(err, PT_EIO,
				   "running the benchmark: no BEST_TIME_MSEC_PER_ITER in RunGen's output: %s",
				   tail);
	}
out:
	pt_child_release(&c);
	pt_strbuf_release(&out);
	pt_strbuf_release(&errout);
	return ret;
}

/* Run number `i`: the candidate and, with a reference, the reference too,
 * under one hold of the benchmark lock, in alternating order. */
static int run_once(struct measure *ms, int i, double *time_ms,
		    double *ref_ms, struct pt_error *err)
{
	struct pt_strbuf cand = PT_STRBUF_INIT;
	struct pt_lock lk = PT_LOCK_INIT;
	const char *ref = ms->o->reference;
	int ret;

	if (pt_strbuf_addf(&cand, "%s/rungen", ms->dir))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	if (ms->o->lock_path && *ms->o->lock_path &&
	    (ret = open_lock(ms->o->lock_path, 0,
			      ms->o->lock_timeout_ms > 0 ?
			      ms->o->lock_timeout_ms : -1, &lk, err)))
		goto out;
	if (ref && *ref && i % 2 == 0 &&
	    (ret = run_binary(ms, ref, ref_ms, err)))
		goto out;
	if ((ret = run_binary(ms, cand.buf, time_ms, err)))
		goto out;
	if (ref && *ref && i % 2 == 1)
		ret = run_binary(ms, ref, ref_ms, err);
out:
	pt_lock_release(&lk);
	pt_strbuf_release(&cand);
	return ret;
}

int pt_measure(const struct pt_model *m, const char *sched_text,
	       const struct pt_measure_opts *opts,
	       struct pt_measure_result *res, struct pt_error *err)
{
	struct measure ms;
	struct pt_strbuf path = PT_STRBUF_INIT;
	struct pt_lock clk = PT_LOCK_INIT;
	double *times = NULL;
	long long t0;
	int runs, i, ret;

	memset(res, 0, sizeof(*res));
	if (!m || !sched_text || !opts || !opts->cache_dir ||
	    !*opts->cache_dir || !opts->plugin_path || !*opts->plugin_path)
		return pt_error_set(err, PT_EINVAL,
				    "pt_measure needs a model, a schedule, a cache directory and the plugin");
	memset(&ms, 0, sizeof(ms));
	ms.m = m;
	ms.o = opts;
	ms.cxx = opts->cxx && *opts->cxx ? opts->cxx : "c++";
	ms.rungen_main = (struct pt_strbuf)PT_STRBUF_INIT;
	runs = opts->runs > 0 ? opts->runs : 5;
	times = calloc(3 * (size_t)runs, sizeof(*times));
	if (!times)
		return pt_error_set(err, PT_ENOMEM, "out of memory");

	if ((ret = pt_measure_rungen_main(opts->cache_dir, ms.cxx,
					  &ms.rungen_main, err)))
		goto out;
	if ((ret = make_tmpdir(&ms, err)))
		goto out;
	if (pt_strbuf_addf(&path, "%s/schedule.txt", ms.dir)) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	if ((ret = write_file(path.buf, sched_text, strlen(sched_text), err)))
		goto out;

	/* Compiles hold the benchmark lock shared: any number of them at
	 * once, but never while a benchmark runs, which would measure the
	 * compile's load too. */
	if (opts->lock_path && *opts->lock_path &&
	    (ret = open_lock(opts->lock_path, 1,
			      opts->lock_timeout_ms > 0 ?
			      opts->lock_timeout_ms : -1, &clk, err)))
		goto out;
	t0 = pt_time_now_ms();
	ms.compile_deadline = t0 + (opts->compile_timeout_ms > 0 ?
				    opts->compile_timeout_ms : 600000);
	ret = run_generator(&ms, err);
	if (!ret)
		ret = link_rungen(&ms, err);
	pt_lock_release(&clk);
	if (ret)
		goto out;
	res->compile_ms = (double)(pt_time_now_ms() - t0);

	for (i = 0; i < runs; i++)
		if ((ret = run_once(&ms, i, &times[i], &times[2 * runs + i],
				    err)))
			goto out;
	res->runs = runs;
	if (opts->reference && *opts->reference) {
		for (i = 0; i < runs; i++)
			times[runs + i] = times[i] / times[2 * runs + i];
		res->ratio = pt_measure_median(times + runs, runs);
		res->ref_median_ms = pt_measure_median(times + 2 * runs, runs);
	}
	res->median_ms = pt_measure_median(times, runs);
	res->min_ms = times[0];
	res->max_ms = times[runs - 1];
out:
	if (ms.dir[0]) {
		if (opts->keep_dir)
			snprintf(res->dir, sizeof(res->dir), "%s", ms.dir);
		else
			remove_tree(ms.dir);
	}
	if (ret) {
		res->median_ms = res->min_ms = res->max_ms = 0;
		res->runs = 0;
	}
	free(times);
	pt_strbuf_release(&path);
	pt_strbuf_release(&ms.rungen_main);
	return ret;
}
