/* pt_genargs.c: Halide 14 generator command lines: is this a run to tune,
 * and its rewrite with the ProTune plugin (see pt_genargs.h). */
#include "protune/pt_genargs.h"
#include "protune/pt_hosttarget.h"
#include "protune/pt_strbuf.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PLUGIN_FILE_NAME "libprotune_halide.so"
#define SCHEDULER_NAME "ProTune"

/* Halide 14's flags, all of which take a value. */
static const char flag_letters[] = "defgnoprst";

enum { F_D, F_E, F_F, F_G, F_N, F_O, F_P, F_R, F_S, F_T, NFLAGS };

/* The index of flag `arg` ("-g"), or -1. */
static int flag_index(const char *arg)
{
	const char *at;

	if (arg[0] != '-' || arg[1] == '\0' || arg[2] != '\0')
		return -1;
	at = strchr(flag_letters, arg[1]);
	return at ? (int)(at - flag_letters) : -1;
}

/* A generator parameter NAME=VALUE as Halide 14 accepts it: exactly one
 * '=', both sides non-empty. */
static int is_param(const char *arg)
{
	const char *eq = strchr(arg, '=');

	return arg[0] != '-' && eq && eq != arg && eq[1] != '\0' &&
	       !strchr(eq + 1, '=');
}

static int param_is(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return strncmp(arg, name, n) == 0 && arg[n] == '=';
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/* std::stoi: blanks, a sign, digits, anything after; 0 or -1. */
static int halide_stoi(const char *s, long long *out)
{
	long long v = 0;
	int neg = 0;

	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > (long long)INT_MAX + 1)
			return -1;
	}
	if (!neg && v > INT_MAX)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Is plugin list entry `e` our plugin? */
static int is_our_plugin(const char *e, const char *plugin,
			 const struct stat *pst)
{
	struct stat st;

	if (strcmp(base_name(e), base_name(plugin)) == 0 ||
	    strcmp(base_name(e), PLUGIN_FILE_NAME) == 0)
		return 1;
	return pst && stat(e, &st) == 0 && st.st_dev == pst->st_dev &&
	       st.st_ino == pst->st_ino;
}

/* Merge every -p list of argv with the plugin into `out`. */
static int merge_plugins(int argc, char *const *argv, const char *plugin,
			 struct pt_strbuf *out)
{
	struct pt_strvec seen = PT_STRVEC_INIT;
	struct pt_strbuf entry = PT_STRBUF_INIT;
	struct stat pst;
	int have_pst = stat(plugin, &pst) == 0, ours = 0, i, ret = 0;
	size_t k;

	for (i = 1; i + 1 < argc && !ret; i++) {
		int f = flag_index(argv[i]);
		const char *p;

		if (f < 0)
			continue;
		i++;
		if (f != F_P)
			continue;
		for (p = argv[i]; *p && !ret; ) {
			size_t n = strcspn(p, ",");

			pt_strbuf_reset(&entry);
			if (pt_strbuf_add(&entry, p, n)) {
				ret = PT_ENOMEM;
				break;
			}
			p += n;
			if (*p == ',')
				p++;
			if (!entry.len)
				continue;
			for (k = 0; k < seen.nr; k++)
				if (strcmp(seen.v[k], entry.buf) == 0)
					break;
			if (k < seen.nr)
				continue;
			if (is_our_plugin(entry.buf, plugin,
					  have_pst ? &pst : NULL))
				ours = 1;
			ret = pt_strvec_push(&seen, entry.buf);
		}
	}
	if (!ret && !ours)
		ret = pt_strvec_push(&seen, plugin);
	for (k = 0; k < seen.nr && !ret; k++)
		ret = pt_strbuf_addf(out, "%s%s", k ? "," : "", seen.v[k]);
	pt_strvec_release(&seen);
	pt_strbuf_release(&entry);
	return ret ? PT_ENOMEM : 0;
}

/* The rewritten command of a run to tune. */
static int rewrite(int argc, char *const *argv, const char *plugin,
		   int timeout, struct pt_strvec *out)
{
	struct pt_strbuf plugins = PT_STRBUF_INIT;
	int i, ret;

	ret = merge_plugins(argc, argv, plugin, &plugins);
	if (!ret)
		ret = pt_strvec_pushl(out, argv[0], "-p", plugins.buf, "-s",
				      SCHEDULER_NAME, "-t", (char *)NULL);
	if (!ret)
		ret = pt_strvec_pushf(out, "%d", timeout);
	for (i = 1; i < argc && !ret; i++) {
		int f = flag_index(argv[i]);

		if (f < 0) {
			if (!param_is(argv[i], "auto_schedule"))
				ret = pt_strvec_push(out, argv[i]);
			continue;
		}
		if (f != F_P && f != F_S && f != F_T)
			ret = pt_strvec_pushl(out, argv[i], argv[i + 1],
					      (char *)NULL);
		i++;
	}
	if (!ret)
		ret = pt_strvec_push(out, "auto_schedule=true");
	pt_strbuf_release(&plugins);
	return ret;
}

static int dup_field(char **dst, const char *s)
{
	*dst = NULL;
	if (!s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : PT_ENOMEM;
}

int pt_genargs_parse(int argc, char *const *argv, const char *plugin_path,
		     int timeout_s, struct pt_genargs *out,
		     struct pt_error *err)
{
	const char *val[NFLAGS] = { NULL };
	const char *target = NULL, *autosched = NULL, *e;
	struct pt_genargs g = PT_GENARGS_INIT;
	long long user_t = 0;
	int i, timeout, ret = 0;

	*out = g;
	out->pass = PT_PASS_NOT_GENERATOR;
	if (!plugin_path || !*plugin_path || strchr(plugin_path, ','))
		return pt_error_set(err, PT_EINVAL,
				    "plugin path '%s' is empty or has a comma",
				    plugin_path ? plugin_path : "");
	if (timeout_s < 0)
		return pt_error_set(err, PT_EINVAL, "negative timeout %d",
				    timeout_s);
	if (argc < 1 || !argv || !argv[0])
		return pt_error_set(err, PT_EINVAL, "empty command");

	for (i = 1; i < argc; i++) {
		int f = flag_index(argv[i]);

		if (f >= 0) {
			if (i + 1 >= argc)
				return pt_error_set(err, PT_EINVAL,
						    "%s: missing value",
						    argv[i]);
			val[f] = argv[++i];
		} else if (!is_param(argv[i])) {
			return 0; /* Halide would reject it: not a generator */
		} else if (param_is(argv[i], "target")) {
			target = argv[i] + 7;
		} else if (param_is(argv[i], "auto_schedule")) {
			autosched = argv[i] + 14;
		}
	}
	if (!nonempty(val[F_O]) || (!nonempty(val[F_G]) && !nonempty(val[F_R])))
		return 0;

	e = val[F_E];
	if (!nonempty(val[F_G]))
		g.pass = PT_PASS_RUNTIME;
	else if (e && strcmp(e, "cpp_stub") == 0)
		g.pass = PT_PASS_CPP_STUB;
	else if (nonempty(val[F_S]) && strcmp(val[F_S], SCHEDULER_NAME) != 0)
		g.pass = PT_PASS_AUTOSCHEDULER;
	else if (autosched && (strcmp(autosched, "false") == 0 ||
			       strcmp(autosched, "False") == 0))
		g.pass = PT_PASS_NO_AUTOSCHEDULE;

	if (g.pass == PT_PASS_NONE) {
		if (autosched && strcmp(autosched, "true") != 0 &&
		    strcmp(autosched, "True") != 0)
			return pt_error_set(err, PT_EINVAL,
					    "auto_schedule=%s: not true or "
					    "false", autosched);
		if (val[F_T] && halide_stoi(val[F_T], &user_t))
			return pt_error_set(err, PT_EINVAL,
					    "-t %s: not a number of seconds",
					    val[F_T]);
		if (!val[F_T])
			timeout = timeout_s;
		else if (user_t <= 0 || timeout_s == 0)
			timeout = 0;
		else
			timeout = user_t > timeout_s ? (int)user_t : timeout_s;
		ret = rewrite(argc, argv, plugin_path, timeout, &g.argv);
	}
	if (!ret)
		ret = dup_field(&g.generator, nonempty(val[F_G])) |
		      dup_field(&g.function, nonempty(val[F_F]) ?
				nonempty(val[F_F]) : nonempty(val[F_N])) |
		      dup_field(&g.target, target) |
		      dup_field(&g.output_dir, nonempty(val[F_O])) |
		      dup_field(&g.scheduler, nonempty(val[F_S]));
	if (ret) {
		pt_genargs_release(&g);
		out->pass = PT_PASS_NOT_GENERATOR;
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	*out = g;
	return 0;
}

void pt_genargs_release(struct pt_genargs *g)
{
	if (!g)
		return;
	free(g->generator);
	free(g->function);
	free(g->target);
	free(g->output_dir);
	free(g->scheduler);
	pt_strvec_release(&g->argv);
	g->generator = g->function = g->target = NULL;
	g->output_dir = g->scheduler = NULL;
	g->pass = PT_PASS_NONE;
}

const char *pt_genargs_pass_name(enum pt_gen_pass p)
{
	switch (p) {
	case PT_PASS_NONE: return "";
	case PT_PASS_NOT_GENERATOR: return "not-generator";
	case PT_PASS_RUNTIME: return "runtime-only";
	case PT_PASS_CPP_STUB: return "cpp-stub";
	case PT_PASS_AUTOSCHEDULER: return "explicit-autoscheduler";
	case PT_PASS_NO_AUTOSCHEDULE: return "auto-schedule-false";
	}
	return "?";
}

int pt_genargs_set_host(struct pt_strvec *argv, const char *host)
{
	struct pt_strbuf val = PT_STRBUF_INIT;
	size_t i;
	int n = 0, r;

	for (i = 1; i < argv->nr; i++) {
		char *a = argv->v[i];

		if (flag_index(a) >= 0) {
			i++;    /* its value */
			continue;
		}
		if (!param_is(a, "target"))
			continue;
		pt_strbuf_reset(&val);
		if (pt_strbuf_addstr(&val, "target=") ||
		    (r = pt_target_rewrite_host(a + 7, host, &val)) < 0) {
			pt_strbuf_release(&val);
			return PT_ENOMEM;
		}
		if (r) {
			argv->v[i] = pt_strbuf_detach(&val, NULL);
			free(a);
			n++;
		}
	}
	pt_strbuf_release(&val);
	return n;
}

int pt_genargs_fix_host(struct pt_strvec *argv)
{
	struct pt_strbuf host = PT_STRBUF_INIT;
	int n = pt_host_target_here(&host);

	if (n > 0)
		n = pt_genargs_set_host(argv, host.buf);
	pt_strbuf_release(&host);
	return n;
}
