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
#define PRINT_PREFIX "halide_print: "

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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The target a measurement builds for: m->target without the no_runtime
 * feature, with `profile` when asked, its features sorted by name as
 * Halide's Target::to_string() prints them (arch, bits and os first). */
static int target_for_run(const char *target, int profile,
			  struct pt_strbuf *out)
{
	struct pt_strbuf copy = PT_STRBUF_INIT;
	const char **feat = NULL;
	size_t nfeat = 0, ntok = 0, i;
	char *p, *tok;
	int ret = PT_ENOMEM, has_profile = 0;

	if (pt_strbuf_addstr(&copy, target))
		goto out;
	feat = calloc(copy.len / 2 + 2, sizeof(*feat));
	if (!feat)
		goto out;
	for (p = copy.buf; p; ntok++) {
		tok = p;
		if ((p = strchr(p, '-')) != NULL)
			*p++ = '\0';
		if (ntok < 3) {
			if ((out->len && pt_strbuf_addch(out, '-')) ||
			    pt_strbuf_addstr(out, tok))
				goto out;
			continue;
		}
		if (!*tok || !strcmp(tok, "no_runtime"))
			continue;
		has_profile |= !strcmp(tok, "profile");
		feat[nfeat++] = tok;
	}
	if (profile && !has_profile)
		feat[nfeat++] = "profile";
	qsort(feat, nfeat, sizeof(*feat), cmp_str);
	for (i = 0; i < nfeat; i++)
		if (pt_strbuf_addch(out, '-') || pt_strbuf_addstr(out, feat[i]))
			goto out;
	ret = 0;
out:
	free(feat);
	pt_strbuf_release(&copy);
	return ret;
}

static int rewrite_argv(const struct pt_model *m, const char *out_dir,
			const char *plugin_path, int profile,
			struct pt_strvec *out, struct pt_error *err)
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
	if (target_for_run(m->target, profile, &target))
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

int pt_measure_rewrite_argv(const struct pt_model *m, const char *out_dir,
			    const char *plugin_path, struct pt_strvec *out,
			    struct pt_error *err)
{
	return rewrite_argv(m, out_dir, plugin_path, 0, out, err);
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

/* The schedule text to apply: sched_text, with its key rewritten to the
 * key of the model with the target the measurement builds for when that
 * differs from the model's (the generator then sees that pipeline). */
static int sched_for_run(const struct pt_model *m, int profile,
			 const char *sched_text, struct pt_strbuf *out,
			 struct pt_error *err)
{
	struct pt_strbuf target = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	struct pt_model *copy = NULL;
	const char *line;
	char hex[33];
	int ret;

	if (!m->target)
		return pt_error_set(err, PT_EINVAL, "the model names no target");
	if (target_for_run(m->target, profile, &target))
		goto nomem;
	if (!strcmp(target.buf, m->target)) {
		ret = pt_strbuf_addstr(out, sched_text) ?
			pt_error_set(err, PT_ENOMEM, "out of memory") : 0;
		goto done;
	}
	if (pt_model_print(m, PT_MODEL_PRINT_LABELS, &text))
		goto nomem;
	if ((ret = pt_model_parse(text.buf, text.len, "<measure>", &copy,
				  err)))
		goto done;  /* the model parsed once: out of memory */
	free(copy->target);
	copy->target = strdup(target.buf);
	if (!copy->target)
		goto nomem;
	if ((ret = pt_model_hash(copy))) {
		ret = pt_error_set(err, ret, "the model for target %s: %s",
				   target.buf, pt_strerror(ret));
		goto done;
	}
	pt_hash_hex(copy->key, hex);
	for (line = sched_text; *line; ) {
		const char *nl = strchr(line, '\n');

		if (!strncmp(line, "key ", 4)) {
			if (pt_strbuf_add(out, sched_text,
					  (size_t)(line - sched_text)) ||
			    pt_strbuf_addf(out, "key %s", hex) ||
			    (nl && pt_strbuf_addstr(out, nl)))
				goto nomem;
			ret = 0;
			goto done;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	/* No key line: the plugin's check says what is wrong. */
	ret = pt_strbuf_addstr(out, sched_text) ?
		pt_error_set(err, PT_ENOMEM, "out of memory") : 0;
	goto done;
nomem:
	ret = pt_error_set(err, PT_ENOMEM, "out of memory");
done:
	pt_model_free(copy);
	pt_strbuf_release(&target);
	pt_strbuf_release(&text);
	return ret;
}

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

	if ((ret = rewrite_argv(ms->m, ms->dir, ms->o->plugin_path,
				ms->o->profile, &c.args, err)))
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
		      double *time_ms, struct pt_strbuf *report,
		      struct pt_error *err)
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
	} else if (!ret && report &&
		   (pt_strbuf_add(report, out.buf, out.len) ||
		    pt_strbuf_add(report, errout.buf, errout.len))) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
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
		    double *ref_ms, struct pt_strbuf *report,
		    struct pt_error *err)
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
	    (ret = run_binary(ms, ref, ref_ms, NULL, err)))
		goto out;
	if ((ret = run_binary(ms, cand.buf, time_ms, report, err)))
		goto out;
	if (ref && *ref && i % 2 == 1)
		ret = run_binary(ms, ref, ref_ms, NULL, err);
out:
	pt_lock_release(&lk);
	pt_strbuf_release(&cand);
	return ret;
}

/* --- the profiler's report ------------------------------------------------ */

/* A count the report prints: 0 unless a finite number >= 0. */
static double report_count(const char *s)
{
	double v = strtod(s, NULL);

	return isfinite(v) && v >= 0 ? v : 0;
}

/* A Func's line of the report: "  NAME: <spaces>MSms <spaces>(P%) ..."
 * with, for Funcs that allocate, "num: N" further on (over all runs). */
static int parse_func_line(const char *line, size_t len, double runs,
			   struct pt_measure_func *f)
{
	char buf[512];
	const char *sep, *num;
	char *end;
	double ms;

	if (len >= sizeof(buf) || len < 3 || line[0] != ' ' ||
	    line[1] != ' ' || line[2] == ' ')
		return -1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (sep = strstr(buf + 2, ": "); sep; sep = strstr(sep + 1, ": ")) {
		ms = strtod(sep + 2, &end);
		if (end != sep + 2 && !strncmp(end, "ms", 2) && isfinite(ms) &&
		    ms >= 0)
			break;
	}
	if (!sep || sep == buf + 2 ||
	    (size_t)(sep - buf - 2) >= sizeof(f->name))
		return -1;
	memset(f, 0, sizeof(*f));
	memcpy(f->name, buf + 2, (size_t)(sep - buf - 2));
	f->ms = ms;
	if ((num = strstr(end, " num: ")) != NULL)
		f->allocs = report_count(num + 6) / runs;
	return 0;
}

int pt_measure_parse_profile(const char *text, struct pt_measure_func **out,
			     int *n, double *heap_allocs)
{
	struct pt_measure_func *v = NULL, *nv;
	const char *line = text, *p;
	double runs = 0;
	int cap = 0, count = 0, in_report = 0;

	*out = NULL;
	*n = 0;
	*heap_allocs = 0;
	while (*line) {
		const char *nl = strchr(line, '\n'), *next;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		next = line + len + (nl ? 1 : 0);
		/* RunGen prefixes what each halide_print() call prints */
		if (!strncmp(line, PRINT_PREFIX, strlen(PRINT_PREFIX))) {
			line += strlen(PRINT_PREFIX);
			len -= strlen(PRINT_PREFIX);
		}
		if (!in_report) {
			/* " total time: T ms  samples: S  runs: R ..." */
			if (!strncmp(line, " total time: ", 13) &&
			    (p = strstr(line, "  runs: ")) != NULL &&
			    (!nl || p < nl)) {
				runs = report_count(p + 8);
				in_report = runs > 0 && runs < 1e15;
			}
		} else if (!strncmp(line, " heap allocations: ", 19)) {
			*heap_allocs = report_count(line + 19) / runs;
		} else if (strncmp(line, " average threads used: ", 23)) {
			/* a Func's line (the threads line is skipped) */
			if (count == cap) {
				cap = cap ? 2 * cap : 32;
				nv = realloc(v, (size_t)cap * sizeof(*v));
				if (!nv) {
					free(v);
					return PT_ENOMEM;
				}
				v = nv;
			}
			if (parse_func_line(line, len, runs, &v[count]))
				break;  /* the end of the report */
			count++;
		}
		line = next;
	}
	if (!in_report) {
		free(v);
		return PT_EFORMAT;
	}
	*out = v;
	*n = count;
	return 0;
}

/* Add one run's report to res (the first run's Funcs, then the same Funcs
 * in the same order). */
static int add_profile(struct pt_measure_result *res, const char *report,
		       struct pt_error *err)
{
	struct pt_measure_func *f;
	double heap;
	int n, i, ret;

	if ((ret = pt_measure_parse_profile(report, &f, &n, &heap)))
		return pt_error_set(err, ret, ret == PT_EFORMAT ?
				    "running the benchmark: no report of Halide's profiler in RunGen's output" :
				    "out of memory");
	if (!res->funcs) {
		res->funcs = f;
		res->nfuncs = n;
		res->heap_allocs = heap;
		return 0;
	}
	for (i = 0; n == res->nfuncs && i < n; i++)
		if (strcmp(f[i].name, res->funcs[i].name))
			break;
	if (n != res->nfuncs || i < n) {
		free(f);
		return pt_error_set(err, PT_EIO,
				    "running the benchmark: the profiler reported other Funcs in another run");
	}
	for (i = 0; i < n; i++) {
		res->funcs[i].ms += f[i].ms;
		res->funcs[i].allocs += f[i].allocs;
	}
	res->heap_allocs += heap;
	free(f);
	return 0;
}

/* The runs' mean, and each Func's share of the sum. */
static void finish_profile(struct pt_measure_result *res, int runs)
{
	double sum = 0;
	int i;

	for (i = 0; i < res->nfuncs; i++) {
		res->funcs[i].ms /= runs;
		res->funcs[i].allocs /= runs;
		sum += res->funcs[i].ms;
	}
	res->heap_allocs /= runs;
	for (i = 0; i < res->nfuncs; i++)
		res->funcs[i].share = sum > 0 ? res->funcs[i].ms / sum : 0;
}

void pt_measure_result_release(struct pt_measure_result *res)
{
	if (!res)
		return;
	free(res->funcs);
	res->funcs = NULL;
	res->nfuncs = 0;
}

int pt_measure(const struct pt_model *m, const char *sched_text,
	       const struct pt_measure_opts *opts,
	       struct pt_measure_result *res, struct pt_error *err)
{
	struct measure ms;
	struct pt_strbuf path = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	struct pt_strbuf report = PT_STRBUF_INIT;
	struct pt_lock clk = PT_LOCK_INIT;
	double *times = NULL;
	long long t0;
	int runs, i, ret;

	memset(res, 0, sizeof(*res));
	if (!m || !sched_text || !opts || !opts->cache_dir ||
	    !*opts->cache_dir || !opts->plugin_path || !*opts->plugin_path)
		return pt_error_set(err, PT_EINVAL,
				    "pt_measure needs a model, a schedule, a cache directory and the plugin");
	if (opts->profile && opts->reference && *opts->reference)
		return pt_error_set(err, PT_EINVAL,
				    "a profiled build is not timed against a reference");
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
	if ((ret = sched_for_run(m, opts->profile, sched_text, &text, err)) ||
	    (ret = write_file(path.buf, text.buf, text.len, err)))
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

	for (i = 0; i < runs; i++) {
		pt_strbuf_reset(&report);
		if ((ret = run_once(&ms, i, &times[i], &times[2 * runs + i],
				    opts->profile ? &report : NULL, err)) ||
		    (opts->profile && (ret = add_profile(res, report.buf,
							   err))))
			goto out;
	}
	if (opts->profile)
		finish_profile(res, runs);
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
		pt_measure_result_release(res);
	}
	free(times);
	pt_strbuf_release(&path);
	pt_strbuf_release(&text);
	pt_strbuf_release(&report);
	pt_strbuf_release(&ms.rungen_main);
	return ret;
}
