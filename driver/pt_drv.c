/* pt_drv.c: see pt_drv.h. */
#define _GNU_SOURCE /* pipe2 */
#include "pt_drv.h"

#include "protune/pt_cost.h"
#include "protune/pt_proto.h"
#include "protune/pt_spawn.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file `name` in `dir` (a directory under the executable's parent)
 * unless environment variable `env` names one: that is taken as it is. */
static int beside_exe(const char *env, const char *dir, const char *name,
		      struct pt_strbuf *out, struct pt_error *err)
{
	char exe[PATH_MAX];
	const char *v = getenv(env);
	char *slash;
	ssize_t n;

	if (v && *v)
		return pt_strbuf_addstr(out, v) ?
			pt_error_set(err, PT_ENOMEM, "out of memory") : 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return pt_error_set(err, PT_ENOTFOUND,
				    "cannot find %s: /proc/self/exe is unreadable (%s); set %s",
				    name, strerror(errno), env);
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')))
		*slash = '\0';
	if (pt_strbuf_addf(out, "%s/../%s/%s", exe, dir, name))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	if (access(out->buf, R_OK))
		return pt_error_set(err, PT_ENOTFOUND,
				    "cannot find %s (not in %s/../%s); set %s",
				    name, exe, dir, env);
	return 0;
}

/* The file `path` that variable `env` named is a readable regular file;
 * else PT_ENOTFOUND with a message that names the variable, the path and
 * `what` it is, as a bad setting's does. */
static int env_file_ok(const char *env, const char *path, const char *what,
		       struct pt_error *err)
{
	struct stat st;
	const char *why;

	if (stat(path, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (access(path, R_OK))
		why = strerror(errno);
	else
		return 0;
	return pt_error_set(err, PT_ENOTFOUND, "%s: '%s': cannot read %s: %s",
			    env, path, what, why);
}

int pt_drv_plugin_path(struct pt_strbuf *out, struct pt_error *err)
{
	const char *v = getenv("PROTUNE_PLUGIN");
	int ret = beside_exe("PROTUNE_PLUGIN", "lib", "libprotune_halide.so",
			     out, err);

	/* Checked here, before a generator runs: Halide would only say
	 * "Failed to load". A name without a '/' is left to dlopen's
	 * search of the library path, as Halide's -p does. */
	if (!ret && v && *v && strchr(v, '/'))
		ret = env_file_ok("PROTUNE_PLUGIN", v, "the plugin", err);
	return ret;
}

int pt_drv_cost_model_path(struct pt_strbuf *out, struct pt_error *err)
{
	const char *v = getenv("PROTUNE_COST_MODEL");
	int ret = beside_exe("PROTUNE_COST_MODEL", "share/protune",
			     "default.cost", out, err);

	if (!ret && v && *v)
		ret = env_file_ok("PROTUNE_COST_MODEL", v, "the cost model",
				  err);
	return ret;
}

int pt_drv_load_cost_model(struct pt_cost **out, struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	int fd, ret;

	*out = NULL;
	if ((ret = pt_drv_cost_model_path(&path, err)))
		goto out;
	if ((fd = open(path.buf, O_RDONLY | O_CLOEXEC)) < 0) {
		ret = pt_error_set(err, errno == ENOENT ? PT_ENOTFOUND : PT_EIO,
				   "cannot open the cost model %s: %s",
				   path.buf, strerror(errno));
		goto out;
	}
	ret = pt_spawn_read_fd(fd, &text, err);
	close(fd);
	if (ret)
		goto out;
	ret = pt_cost_parse(text.buf, text.len, path.buf, out, err);
out:
	pt_strbuf_release(&path);
	pt_strbuf_release(&text);
	return ret;
}

void pt_drv_open_cache(const struct pt_config *cfg, int readonly,
		       const char *name, FILE *warn, struct pt_cache **cache)
{
	struct pt_cache_opts o;
	struct pt_error e = PT_ERROR_INIT;
	int ret;

	*cache = NULL;
	memset(&o, 0, sizeof(o));
	o.dir = cfg->cache_dir;
	o.max_bytes = cfg->max_size;
	o.readonly = readonly || cfg->mode == PT_MODE_READONLY;
	ret = pt_cache_open(&o, cache, &e);
	if (ret == PT_ENOTFOUND && o.readonly)
		return;  /* nothing cached yet */
	if (ret && warn)
		fprintf(warn, "%s: warning: going on without the schedule cache: %s\n",
			name, e.msg);
}

void pt_drv_open_store(const struct pt_config *cfg, const char *name,
		       FILE *warn, struct pt_store **store)
{
	struct pt_store_opts o;
	struct pt_error e = PT_ERROR_INIT;
	int ret;

	*store = NULL;
	if (!cfg->store_dir)
		return;
	memset(&o, 0, sizeof(o));
	o.dir = cfg->store_dir;
	ret = pt_store_open(&o, store, &e);
	if (ret && ret != PT_ENOTFOUND && warn)
		fprintf(warn, "%s: warning: going on without the schedule store: %s\n",
			name, e.msg);
}

void pt_drv_measure_opts(const struct pt_config *cfg, const char *plugin,
			 struct pt_measure_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cache_dir = cfg->cache_dir;
	o->plugin_path = plugin;
	o->lock_path = pt_drv_bench_lock();
	o->cxx = getenv("PROTUNE_CXX");
	/* A candidate that a build would stop (compile_limit) is invalid. */
	o->compile_timeout_ms = pt_drv_compile_limit_ms(cfg);
}

int pt_drv_compile_limit_ms(const struct pt_config *cfg)
{
	double ms = cfg->compile_limit_s * 1000;

	if (!(ms > 0))
		return 0;
	return ms >= 2e9 ? 2000000000 : (int)ceil(ms);
}

const char *pt_drv_bench_lock(void)
{
	const char *p = getenv("PROTUNE_BENCH_LOCK");

	return p && *p ? p : PT_DRV_BENCH_LOCK;
}

extern char **environ;

static int is_setting(const char *name, size_t n)
{
	int k;

	for (k = 0; k < PT_CONF_NKEYS; k++) {
		const char *kn = pt_config_key_name((enum pt_conf_key)k);
		size_t i;

		if (strlen(kn) != n)
			continue;
		for (i = 0; i < n; i++)
			if (kn[i] != name[i] &&
			    !(kn[i] == '_' && name[i] == '-'))
				break;
		if (i == n)
			return 1;
	}
	return 0;
}

int pt_drv_config(struct pt_config *cfg, int argc, char **argv,
		  int stop_at_arg, struct pt_strvec *rest, const char *name)
{
	struct pt_error err = PT_ERROR_INIT;
	int i, only_rest = 0;

	if (pt_config_init(cfg, environ, &err) ||
	    pt_config_load(cfg, environ, NULL, &err)) {
		fprintf(stderr, "%s: %s\n", name, err.msg);
		return 2;
	}
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		char key[64];
		size_t n;

		if (!only_rest && !strcmp(a, "--")) {
			only_rest = 1;
			continue;
		}
		n = eq ? (size_t)(eq - a) - 2 : 0;
		if (only_rest || strncmp(a, "--", 2) || !eq ||
		    n >= sizeof(key) || !is_setting(a + 2, n)) {
			if (stop_at_arg && (only_rest || a[0] != '-'))
				only_rest = 1;
			if (rest && pt_strvec_push(rest, a)) {
				fprintf(stderr, "%s: out of memory\n", name);
				return 2;
			}
			continue;
		}
		memcpy(key, a + 2, n);
		key[n] = 0;
		if (pt_config_set(cfg, key, eq + 1, PT_CONF_CMDLINE, a,
				  &err)) {
			fprintf(stderr, "%s: %s\n", name, err.msg);
			return 2;
		}
	}
	return 0;
}

/* A channel end the generator inherits. */
static int inheritable(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
}

int pt_drv_run_served(const struct pt_strvec *argv,
		      const struct pt_serve_opts *so, int *status,
		      int *served, struct pt_error *serve_err,
		      struct pt_error *err)
{
	struct pt_child c = PT_CHILD_INIT;
	struct pt_serve_opts o = *so;
	int to_gen[2] = { -1, -1 }, from_gen[2] = { -1, -1 };
	int ret = 0;
	size_t i;

	*status = 1;
	*served = 0;
	if (pipe2(to_gen, O_CLOEXEC) || pipe2(from_gen, O_CLOEXEC) ||
	    inheritable(to_gen[0]) || inheritable(from_gen[1])) {
		ret = pt_error_set(err, PT_EIO,
				   "cannot make the plugin's channel: %s",
				   strerror(errno));
		goto out;
	}
	for (i = 0; i < argv->nr && !ret; i++)
		ret = pt_strvec_push(&c.args, argv->v[i]);
	if (ret || pt_strvec_pushf(&c.env, "%s=%d,%d", PT_PROTO_ENV_FDS,
				   to_gen[0], from_gen[1]) ||
	    pt_strvec_push(&c.env, "PROTUNE_SCHEDULE_FILE")) {
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
		goto out;
	}
	if ((ret = pt_child_start(&c, err)))
		goto out;
	close(to_gen[0]);
	close(from_gen[1]);
	to_gen[0] = from_gen[1] = -1;
	o.until_closed = 1;
	*served = pt_serve(from_gen[0], to_gen[1], &o, serve_err);
	/* A compile past the limit: stop it (its outputs are rewritten
	 * by the caller's next run). */
	if (so->compile_over && *so->compile_over)
		kill(c.pid, SIGKILL);
	/* Closing our ends unblocks a plugin still waiting for us. */
	close(from_gen[0]);
	close(to_gen[1]);
	from_gen[0] = to_gen[1] = -1;
	pt_child_wait(&c, status, NULL);
out:
	for (i = 0; i < 2; i++) {
		if (to_gen[i] >= 0)
			close(to_gen[i]);
		if (from_gen[i] >= 0)
			close(from_gen[i]);
	}
	pt_child_release(&c);
	return ret;
}
