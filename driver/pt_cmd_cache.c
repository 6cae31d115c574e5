/* pt_cmd_cache.c: the `protune` commands that manage the cache and the
 * store (doc/protune.1): config, stats, zero-stats, ls, show, export,
 * import, commit, gc, clear, explain. Each takes --SETTING=VALUE options
 * besides its own. Exit status: 0, 1 failure, 2 usage error.
 */
#define _DEFAULT_SOURCE /* strptime-free; mkdtemp */
#include "pt_cli.h"
#include "pt_cmd_cache.h"

#include "config.h"
#include "protune/pt_genargs.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_spawn.h"
#include "protune/pt_strbuf.h"
#include "pt_drv.h"
#include "pt_lookup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAME "protune"

/* The usages, each with the settings every command takes. */
#define SETTINGS "[--SETTING=VALUE...]"
#define USAGE_CONFIG "config " SETTINGS
#define USAGE_STATS "stats " SETTINGS
#define USAGE_ZERO_STATS "zero-stats " SETTINGS
#define USAGE_LS "ls [GENERATOR|KEY-PREFIX] " SETTINGS
#define USAGE_SHOW "show KEY-PREFIX [--cpp | --text] " SETTINGS
#define USAGE_EXPORT "export DIR " SETTINGS
#define USAGE_IMPORT "import DIR " SETTINGS
#define USAGE_COMMIT "commit [-m MESSAGE | --message=MESSAGE] " SETTINGS
#define USAGE_GC "gc [--size=BYTES] [--unused-days=N] " SETTINGS "\n" \
	"       protune gc --unreferenced[=DAYS] [--dry-run] " SETTINGS "\n" \
	"       protune gc --since=UNIXTIME [--dry-run] " SETTINGS
#define USAGE_CLEAR "clear [--force] " SETTINGS
#define USAGE_EXPLAIN "explain " SETTINGS " GENERATOR [ARGS...]"

struct ctx {
	struct pt_config cfg;
	struct pt_strvec args;   /* the command's own arguments */
	struct pt_cache *cache;
	struct pt_store *store;
};

static int usage_fail(const char *usage, const char *fmt, const char *arg)
{
	fputs(NAME ": ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: protune %s\n", usage);
	return 2;
}

/* Open the cache; `must`: fail when there is none. */
static int need_cache(struct ctx *c, int readonly, int must)
{
	struct pt_cache_opts o;
	struct pt_error e = PT_ERROR_INIT;
	int ret;

	memset(&o, 0, sizeof(o));
	o.dir = c->cfg.cache_dir;
	o.max_bytes = c->cfg.max_size;
	o.readonly = readonly;
	ret = pt_cache_open(&o, &c->cache, &e);
	if (ret == PT_ENOTFOUND && !must)
		return 0;
	if (ret)
		return pt_cli_fail("%s", e.msg);
	return 0;
}

static int need_store(struct ctx *c, int must)
{
	struct pt_store_opts o;
	struct pt_error e = PT_ERROR_INIT;
	int ret;

	if (!c->cfg.store_dir)
		return must ? pt_cli_fail("the store is off (store_dir=off)") : 0;
	memset(&o, 0, sizeof(o));
	o.dir = c->cfg.store_dir;
	ret = pt_store_open(&o, &c->store, &e);
	if (ret == PT_ENOTFOUND && !must)
		return 0;
	if (ret)
		return pt_cli_fail("%s", e.msg);
	return 0;
}

static void fmt_time(int64_t t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !gmtime_r(&tt, &tm) ||
	    !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, n, "-");
}

static void fmt_ms(double ms, char *out, size_t n)
{
	if (ms < 0)
		snprintf(out, n, "-");
	else
		snprintf(out, n, "%.4g", ms);
}

/* --- config, stats ----------------------------------------------------------- */

static int cmd_config(struct ctx *c)
{
	struct pt_strbuf out = PT_STRBUF_INIT;
	int ret = 0;

	if (c->args.nr)
		return usage_fail(USAGE_CONFIG,
				  "unexpected argument '%s'", c->args.v[0]);
	if (pt_config_print(&c->cfg, &out))
		return pt_cli_fail("out of memory");
	if (fwrite(out.buf, 1, out.len, stdout) != out.len)
		ret = pt_cli_fail("cannot write the output");
	pt_strbuf_release(&out);
	return ret;
}

static int print_stat(void *ctx, const char *name, int64_t value)
{
	(void)ctx;
	printf("  %-28s %lld\n", name, (long long)value);
	return 0;
}

static int count_store(void *ctx, const char *path, const char *gen,
		       const uint8_t key[16])
{
	(void)path;
	(void)gen;
	(void)key;
	(*(long *)ctx)++;
	return 0;
}

static int cmd_stats(struct ctx *c)
{
	struct pt_cache_info info;
	struct pt_error e = PT_ERROR_INIT;
	long nfiles = 0;

	if (c->args.nr)
		return usage_fail(USAGE_STATS, "unexpected argument '%s'",
				  c->args.v[0]);
	if (need_cache(c, 1, 0) || need_store(c, 0))
		return 1;
	printf("cache directory  %s\n", c->cfg.cache_dir);
	if (c->cache) {
		if (pt_cache_info(c->cache, &info, &e))
			return pt_cli_fail("%s", e.msg);
		printf("entries          %llu (%llu bytes; limit %llu)\n",
		       (unsigned long long)info.entries,
		       (unsigned long long)info.entry_bytes,
		       (unsigned long long)c->cfg.max_size);
		printf("samples          %llu\n",
		       (unsigned long long)info.samples);
		printf("data file        %llu bytes (map %llu)\n",
		       (unsigned long long)info.file_bytes,
		       (unsigned long long)info.map_bytes);
	} else {
		printf("entries          0 (no cache yet)\n");
	}
	if (c->store) {
		if (pt_store_each(c->store, count_store, &nfiles, &e))
			return pt_cli_fail("%s", e.msg);
		printf("store            %s (%ld schedules)\n",
		       pt_store_dir(c->store), nfiles);
	} else {
		printf("store            off\n");
	}
	if (c->cache) {
		printf("counters\n");
		if (pt_cache_stats(c->cache, print_stat, NULL, &e))
			return pt_cli_fail("%s", e.msg);
	}
	return 0;
}

static int cmd_zero_stats(struct ctx *c)
{
	struct pt_error e = PT_ERROR_INIT;

	if (c->args.nr)
		return usage_fail(USAGE_ZERO_STATS, "unexpected argument '%s'",
				  c->args.v[0]);
	if (need_cache(c, 0, 1))
		return 1;
	if (pt_cache_stats_zero(c->cache, &e))
		return pt_cli_fail("%s", e.msg);
	return 0;
}

/* --- ls, show ---------------------------------------------------------------- */

struct ls_ctx {
	const char *pattern;   /* generator or key prefix, or NULL */
	int n;
};

static int matches(const char *pattern, const struct pt_cache_entry *e)
{
	char hex[33];

	if (!pattern)
		return 1;
	pt_hash_hex(e->key, hex);
	return !strcmp(pattern, e->generator) ||
		!strncmp(pattern, hex, strlen(pattern));
}

static int ls_one(void *ctx, const struct pt_cache_entry *e)
{
	struct ls_ctx *l = ctx;
	char hex[33], tuned[32], pred[32], meas[32];

	if (!matches(l->pattern, e))
		return 0;
	if (!l->n++)
		printf("%-12s  %-16s %-16s %-20s %-20s %7s %9s %9s\n", "KEY",
		       "GENERATOR", "FUNCTION", "TARGET", "TUNED", "BUDGET",
		       "PRED_MS", "MEAS_MS");
	pt_hash_hex(e->key, hex);
	fmt_time(e->tuned_at, tuned, sizeof(tuned));
	fmt_ms(e->predicted_ms, pred, sizeof(pred));
	fmt_ms(e->measured_ms, meas, sizeof(meas));
	printf("%.12s  %-16s %-16s %-20s %-20s %6gs %9s %9s\n", hex,
	       *e->generator ? e->generator : "-",
	       *e->function ? e->function : "-", e->target, tuned,
	       e->budget_s, pred, meas);
	return 0;
}

static int cmd_ls(struct ctx *c)
{
	struct ls_ctx l = { NULL, 0 };
	struct pt_error e = PT_ERROR_INIT;

	if (c->args.nr > 1)
		return usage_fail(USAGE_LS,
				  "unexpected argument '%s'", c->args.v[1]);
	if (c->args.nr)
		l.pattern = c->args.v[0];
	if (need_cache(c, 1, 0))
		return 1;
	if (c->cache && pt_cache_each(c->cache, ls_one, &l, &e))
		return pt_cli_fail("%s", e.msg);
	if (!l.n && l.pattern)
		return pt_cli_fail("no cached schedule matches '%s'", l.pattern);
	return 0;
}

struct find_ctx {
	const char *prefix;
	int n;
	struct pt_cache_entry e;   /* the first match, copied */
};

static int find_one(void *ctx, const struct pt_cache_entry *e)
{
	struct find_ctx *f = ctx;
	char hex[33];

	pt_hash_hex(e->key, hex);
	if (strncmp(f->prefix, hex, strlen(f->prefix)))
		return 0;
	if (!f->n++)
		memcpy(f->e.key, e->key, 16);
	return 0;
}

struct sfind_ctx {
	const char *prefix;
	int n;
	struct pt_strbuf path;
};

static int sfind_one(void *ctx, const char *path, const char *gen,
		     const uint8_t key[16])
{
	struct sfind_ctx *f = ctx;
	char hex[33];

	(void)gen;
	pt_hash_hex(key, hex);
	if (strncmp(f->prefix, hex, strlen(f->prefix)))
		return 0;
	if (!f->n++)
		pt_strbuf_addstr(&f->path, path);
	return 0;
}

static int read_file(const char *path, struct pt_strbuf *out)
{
	struct pt_error e = PT_ERROR_INIT;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return pt_cli_fail("cannot read %s: %s", path, strerror(errno));
	ret = pt_spawn_read_fd(fd, out, &e);
	close(fd);
	return ret ? pt_cli_fail("cannot read %s: %s", path, e.msg) : 0;
}

static int cmd_show(struct ctx *c)
{
	const char *usage = USAGE_SHOW;
	struct find_ctx f;
	struct pt_error e = PT_ERROR_INIT;
	struct pt_cache_entry ce;
	struct pt_model *m = NULL;
	struct pt_sched *s = NULL;
	struct pt_strbuf out = PT_STRBUF_INIT;
	const char *prefix = NULL;
	int cpp = 1, text = 1, ret = 1;
	size_t i;

	for (i = 0; i < c->args.nr; i++) {
		if (!strcmp(c->args.v[i], "--cpp"))
			text = 0;
		else if (!strcmp(c->args.v[i], "--text"))
			cpp = 0;
		else if (c->args.v[i][0] == '-' || prefix)
			return usage_fail(usage, "unexpected argument '%s'",
					  c->args.v[i]);
		else
			prefix = c->args.v[i];
	}
	if (!prefix || strlen(prefix) < 4 || strlen(prefix) > 32)
		return usage_fail(usage, "%s", "give a key or a prefix of 4 to 32 hex digits");
	if (need_cache(c, 1, 0))
		return 1;
	memset(&f, 0, sizeof(f));
	f.prefix = prefix;
	if (c->cache && pt_cache_each(c->cache, find_one, &f, &e))
		return pt_cli_fail("%s", e.msg);
	if (f.n > 1)
		return pt_cli_fail("the prefix '%s' matches %d keys; give more digits",
			    prefix, f.n);
	if (f.n == 1) {
		if (pt_cache_get(c->cache, f.e.key, &ce, &e))
			return pt_cli_fail("%s", e.msg);
		if (text)
			fputs(ce.sched, stdout);
		if (cpp) {
			if (pt_model_parse(ce.model, strlen(ce.model), "cache",
					   &m, &e) ||
			    pt_model_hash(m) ||
			    pt_sched_parse(ce.sched, strlen(ce.sched), "cache",
					   &s, &e) ||
			    pt_sched_to_cpp(m, s, &out)) {
				ret = pt_cli_fail("cannot render %s as C++: %s",
					   prefix, e.msg);
			} else {
				printf("%s// The schedule as Halide C++ "
				       "(apply_schedule body):\n%s",
				       text ? "\n" : "", out.buf);
				ret = 0;
			}
		} else {
			ret = 0;
		}
		pt_cache_entry_release(&ce);
		goto out;
	}
	/* Not cached: the store has the text (its model is not stored). */
	if (need_store(c, 0))
		return 1;
	{
		struct sfind_ctx sf = { prefix, 0, PT_STRBUF_INIT };

		if (c->store && pt_store_each(c->store, sfind_one, &sf, &e)) {
			pt_strbuf_release(&sf.path);
			return pt_cli_fail("%s", e.msg);
		}
		if (sf.n > 1)
			ret = pt_cli_fail("the prefix '%s' matches %d stored keys",
				   prefix, sf.n);
		else if (!sf.n)
			ret = pt_cli_fail("no schedule for key '%s' in the cache or the store",
				   prefix);
		else if (!read_file(sf.path.buf, &out)) {
			fputs(out.buf, stdout);
			if (cpp)
				fprintf(stderr, NAME ": %s is in the store only; run its build once to cache its model for the C++ rendering\n",
					sf.path.buf);
			ret = 0;
		}
		pt_strbuf_release(&sf.path);
	}
out:
	pt_strbuf_release(&out);
	pt_sched_free(s);
	pt_model_free(m);
	return ret;
}

/* --- export, import ------------------------------------------------------------ */

static int mkdirs(const char *path)
{
	char buf[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i])
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return pt_cli_fail("cannot write %s: %s", path, strerror(errno));
	ok = fputs(text, f) >= 0;
	ok = !fclose(f) && ok;
	return ok ? 0 : pt_cli_fail("cannot write %s: %s", path, strerror(errno));
}

static void safe_name(const char *s, char *out, size_t n)
{
	size_t i;

	if (!*s)
		s = "_";
	for (i = 0; s[i] && i + 1 < n; i++)
		out[i] = (s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
			s[i] == '.' || s[i] == '-' ? s[i] : '_';
	out[i] = 0;
}

struct export_ctx {
	const char *dir;
	int n, failed;
};

static int export_one(void *ctx, const struct pt_cache_entry *e)
{
	struct export_ctx *x = ctx;
	char hex[33], gen[256], path[4096];

	pt_hash_hex(e->key, hex);
	safe_name(e->generator, gen, sizeof(gen));
	snprintf(path, sizeof(path), "%s/%s", x->dir, gen);
	if (mkdirs(path)) {
		x->failed = pt_cli_fail("cannot create %s: %s", path,
				 strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s/%s.schedule", x->dir, gen, hex);
	if ((x->failed = write_file(path, e->sched)))
		return 1;
	snprintf(path, sizeof(path), "%s/%s/%s.model", x->dir, gen, hex);
	if (*e->model && (x->failed = write_file(path, e->model)))
		return 1;
	x->n++;
	return 0;
}

static int cmd_export(struct ctx *c)
{
	struct export_ctx x = { NULL, 0, 0 };
	struct pt_error e = PT_ERROR_INIT;

	if (c->args.nr != 1)
		return usage_fail(USAGE_EXPORT, "%s", "give one directory");
	x.dir = c->args.v[0];
	if (mkdirs(x.dir))
		return pt_cli_fail("cannot create %s: %s", x.dir, strerror(errno));
	if (need_cache(c, 1, 0))
		return 1;
	if (c->cache && pt_cache_each(c->cache, export_one, &x, &e) &&
	    !x.failed)
		return pt_cli_fail("%s", e.msg);
	if (x.failed)
		return 1;
	printf("exported %d schedules to %s\n", x.n, x.dir);
	return 0;
}

/* Import DIR/GEN/KEY.schedule (+ KEY.model when present). A schedule that
 * does not parse, whose key is not its name, or that does not fit its
 * model is reported and skipped. */
static int import_file(struct ctx *c, const char *dir, const char *gen,
		       const char *file, int *n)
{
	char path[4096];
	struct pt_strbuf text = PT_STRBUF_INIT, mtext = PT_STRBUF_INIT;
	struct pt_sched *s = NULL;
	struct pt_model *m = NULL;
	struct pt_cache_entry ce;
	struct pt_error e = PT_ERROR_INIT;
	uint8_t key[16];
	char hex[33];
	int ret = 0;

	snprintf(hex, sizeof(hex), "%.32s", file);
	if (strlen(file) != 32 + strlen(".schedule") || pt_hash_parse(hex, key))
		return 0;
	snprintf(path, sizeof(path), "%s/%s/%s", dir, gen, file);
	if (read_file(path, &text))
		return 1;
	if (pt_sched_parse(text.buf, text.len, path, &s, &e)) {
		ret = pt_cli_fail("skipping %s", e.msg);
		goto out;
	}
	if (memcmp(s->key, key, 16)) {
		ret = pt_cli_fail("skipping %s: its key line is not its name", path);
		goto out;
	}
	memset(&ce, 0, sizeof(ce));
	memcpy(ce.key, key, 16);
	ce.generator = strcmp(gen, "_") ? (char *)gen : "";
	ce.function = "";
	ce.target = "";
	ce.model = "";
	snprintf(path, sizeof(path), "%s/%s/%.32s.model", dir, gen, file);
	if (!access(path, F_OK)) {
		if (read_file(path, &mtext))
			goto fail1;
		if (pt_model_parse(mtext.buf, mtext.len, path, &m, &e) ||
		    pt_model_hash(m)) {
			ret = pt_cli_fail("skipping %s: %s", path, e.msg);
			goto out;
		}
		if (memcmp(m->key, key, 16) || pt_sched_check(m, s, &e)) {
			ret = pt_cli_fail("skipping %s: the schedule does not fit its model%s%s",
				   path, e.msg[0] ? ": " : "", e.msg);
			goto out;
		}
		ce.model = mtext.buf;
		ce.function = m->function ? m->function : "";
		ce.target = m->target ? m->target : "";
	}
	ce.sched = text.buf;
	ce.tuned_at = ce.used_at = (int64_t)time(NULL);
	ce.predicted_ms = -1;
	ce.measured_ms = -1;
	if (pt_cache_put(c->cache, &ce, &e))
		ret = pt_cli_fail("%s", e.msg);
	else
		(*n)++;
	goto out;
fail1:
	ret = 1;
out:
	pt_sched_free(s);
	pt_model_free(m);
	pt_strbuf_release(&text);
	pt_strbuf_release(&mtext);
	return ret;
}

static int cmd_import(struct ctx *c)
{
	DIR *d, *g;
	struct dirent *de, *fe;
	int n = 0, bad = 0;

	if (c->args.nr != 1)
		return usage_fail(USAGE_IMPORT, "%s", "give one directory");
	if (need_cache(c, 0, 1))
		return 1;
	if (!(d = opendir(c->args.v[0])))
		return pt_cli_fail("cannot read %s: %s", c->args.v[0],
			    strerror(errno));
	while ((de = readdir(d))) {
		char sub[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", c->args.v[0], de->d_name);
		if (!(g = opendir(sub)))
			continue;
		while ((fe = readdir(g)))
			if (strstr(fe->d_name, ".schedule"))
				bad |= import_file(c, c->args.v[0], de->d_name,
						   fe->d_name, &n);
		closedir(g);
	}
	closedir(d);
	printf("imported %d schedules from %s\n", n, c->args.v[0]);
	return bad;
}

/* --- commit, gc, clear ---------------------------------------------------------- */

static int cmd_commit(struct ctx *c)
{
	const char *msg = NULL;
	struct pt_strbuf sum = PT_STRBUF_INIT;
	struct pt_error e = PT_ERROR_INIT;
	size_t i;
	int ret;

	for (i = 0; i < c->args.nr; i++) {
		if (!strcmp(c->args.v[i], "-m") && i + 1 < c->args.nr)
			msg = c->args.v[++i];
		else if (!strncmp(c->args.v[i], "--message=", 10))
			msg = c->args.v[i] + 10;
		else
			return usage_fail(USAGE_COMMIT,
					  "unexpected argument '%s'",
					  c->args.v[i]);
	}
	if (need_store(c, 1))
		return 1;
	ret = pt_store_commit(c->store, msg, &sum, &e);
	if (ret == PT_ENOTFOUND) {
		printf("nothing to commit in %s\n", pt_store_dir(c->store));
		return 0;
	}
	if (ret)
		return pt_cli_fail("%s", e.msg);
	printf("committed %s", sum.buf);
	if (sum.len && sum.buf[sum.len - 1] != '\n')
		putchar('\n');
	pt_strbuf_release(&sum);
	return 0;
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case 'K': case 'k': v *= 1024; end++; break;
	case 'M': case 'm': v *= 1024.0 * 1024; end++; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (*end)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* --- gc --unreferenced ----------------------------------------------------- */

#define UNREF_DAYS 30

struct sfile {
	char *path, *gen;
	uint8_t key[16];
};

struct sfiles {
	struct sfile *v;
	size_t n, alloc;
};

struct cused {
	uint8_t key[16];
	int64_t used_at;
};

struct centries {
	struct cused *v;
	size_t n, alloc;
};

static int collect_file(void *ctx, const char *path, const char *gen,
			const uint8_t key[16])
{
	struct sfiles *l = ctx;
	struct sfile *f;

	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 64;

		f = realloc(l->v, na * sizeof(*f));
		if (!f)
			return PT_ENOMEM;
		l->v = f;
		l->alloc = na;
	}
	f = &l->v[l->n];
	f->path = strdup(path);
	f->gen = strdup(gen);
	if (!f->path || !f->gen) {
		free(f->path);
		free(f->gen);
		return PT_ENOMEM;
	}
	memcpy(f->key, key, 16);
	l->n++;
	return 0;
}

static int collect_entry(void *ctx, const struct pt_cache_entry *e)
{
	struct centries *l = ctx;

	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 64;
		struct cused *v = realloc(l->v, na * sizeof(*v));

		if (!v)
			return PT_ENOMEM;
		l->v = v;
		l->alloc = na;
	}
	memcpy(l->v[l->n].key, e->key, 16);
	l->v[l->n++].used_at = e->used_at;
	return 0;
}

/* The entries come in key order: a binary search. -1 when absent. */
static int64_t entry_used_at(const struct centries *l, const uint8_t key[16])
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = memcmp(l->v[mid].key, key, 16);

		if (!cmp)
			return l->v[mid].used_at;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The tuned_at meta of a store file's text, or 0. */
static int64_t meta_tuned_at(const char *text)
{
	const char *p = text, *tag = "meta tuned_at=";

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, tag, strlen(tag)))
			return strtoll(p + strlen(tag), NULL, 10);
	return 0;
}

/* When the key of a store file was last known to be in use, and why: the
 * latest of its last noted use, its cache entry's last hit, its tuned_at,
 * the file's modification time (a clone or checkout writes it), and
 * `floor`, the time from which this cache records uses. */
static int64_t last_in_use(struct ctx *c, const struct sfile *f,
			   const struct centries *ce, int64_t floor,
			   const char **why)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	struct stat st;
	int64_t last = floor, t;

	*why = "uses recorded since";
	if (c->cache && !pt_cache_last_use(c->cache, f->key, &t, NULL) &&
	    t > last) {
		last = t;
		*why = "last use";
	}
	if ((t = entry_used_at(ce, f->key)) > last) {
		last = t;
		*why = "last cache hit";
	}
	if (!stat(f->path, &st) && (int64_t)st.st_mtime > last) {
		last = (int64_t)st.st_mtime;
		*why = "file written";
	}
	if (!read_file(f->path, &text) &&
	    (t = meta_tuned_at(text.buf)) > last) {
		last = t;
		*why = "tuned";
	}
	pt_strbuf_release(&text);
	return last;
}

static int gc_unreferenced(struct ctx *c, int64_t since, int dry_run)
{
	struct sfiles files = { NULL, 0, 0 };
	struct centries ents = { NULL, 0, 0 };
	struct pt_error e = PT_ERROR_INIT;
	const char *root, *why;
	int64_t floor = (int64_t)time(NULL), last;
	long nrm = 0, ncache = 0;
	char when[32], sdate[32];
	size_t i, rl;
	int ret = 0, r;

	if (need_store(c, 1) || need_cache(c, dry_run, !dry_run))
		return 1;
	if (c->cache &&
	    (pt_cache_uses_since(c->cache, &floor, &e) ||
	     pt_cache_each(c->cache, collect_entry, &ents, &e))) {
		ret = pt_cli_fail("%s", e.msg);
		goto out;
	}
	if ((r = pt_store_each(c->store, collect_file, &files, &e))) {
		ret = pt_cli_fail("%s", r == PT_ENOMEM ? "out of memory" :
				  e.msg);
		goto out;
	}
	root = pt_store_root(c->store);
	rl = strlen(root);
	fmt_time(since, sdate, sizeof(sdate));
	for (i = 0; i < files.n; i++) {
		const struct sfile *f = &files.v[i];
		const char *rel = f->path;

		last = last_in_use(c, f, &ents, floor, &why);
		if (last >= since)
			continue;
		if (!strncmp(rel, root, rl) && rel[rl] == '/')
			rel += rl + 1;
		fmt_time(last, when, sizeof(when));
		if (dry_run) {
			printf("would remove %s (%s %s)\n", rel, why, when);
			nrm++;
			continue;
		}
		if (pt_store_remove(c->store, f->gen, f->key, &e) &&
		    e.code != PT_ENOTFOUND) {
			ret = pt_cli_fail("%s", e.msg);
			continue;
		}
		if (!pt_cache_del(c->cache, f->key, &e))
			ncache++;
		else if (e.code != PT_ENOTFOUND)
			ret = pt_cli_fail("%s", e.msg);
		pt_cache_forget_use(c->cache, f->key, NULL);
		printf("removed %s (%s %s)\n", rel, why, when);
		nrm++;
	}
	if (dry_run)
		printf("would remove %ld of %zu store files unused since %s\n",
		       nrm, files.n, sdate);
	else
		printf("removed %ld of %zu store files unused since %s (%ld cache entries)\n",
		       nrm, files.n, sdate, ncache);
out:
	for (i = 0; i < files.n; i++) {
		free(files.v[i].path);
		free(files.v[i].gen);
	}
	free(files.v);
	free(ents.v);
	return ret;
}

static int cmd_gc(struct ctx *c)
{
	const char *usage = USAGE_GC;
	uint64_t size = c->cfg.max_size, removed = 0;
	int64_t since = 0, now = (int64_t)time(NULL), unref_since = 0;
	struct pt_error e = PT_ERROR_INIT;
	int64_t since_arg = 0;
	int unref = 0, dry_run = 0, size_rules = 0, have_since = 0;
	size_t i;

	for (i = 0; i < c->args.nr; i++) {
		const char *a = c->args.v[i];

		if (!strcmp(a, "--unreferenced")) {
			unref = 1;
			unref_since = now - (int64_t)UNREF_DAYS * 86400;
		} else if (!strncmp(a, "--unreferenced=", 15)) {
			char *end;
			double d = strtod(a + 15, &end);

			if (*end || end == a + 15 || !(d >= 0) || d > 1e6)
				return usage_fail(usage, "bad day count '%s'",
						  a);
			unref = 1;
			unref_since = now - (int64_t)(d * 86400);
		} else if (!strncmp(a, "--since=", 8)) {
			char *end;
			long long t;

			errno = 0;
			t = strtoll(a + 8, &end, 10);
			if (*end || end == a + 8 || errno || t < 0)
				return usage_fail(usage,
						  "bad time '%s' (unix seconds)",
						  a);
			have_since = 1;
			since_arg = (int64_t)t;
		} else if (!strcmp(a, "--dry-run")) {
			dry_run = 1;
		} else if (!strncmp(a, "--size=", 7)) {
			size_rules = 1;
			if (parse_size(a + 7, &size))
				return usage_fail(usage, "bad size '%s'", a);
		} else if (!strncmp(a, "--unused-days=", 14)) {
			char *end;
			double d = strtod(a + 14, &end);

			if (*end || end == a + 14 || d < 0)
				return usage_fail(usage, "bad day count '%s'",
						  a);
			since = now - (int64_t)(d * 86400);
			size_rules = 1;
		} else {
			return usage_fail(usage, "unexpected argument '%s'", a);
		}
	}
	if (have_since) {
		/* --since names the time (and implies --unreferenced). */
		unref = 1;
		unref_since = since_arg;
	}
	if (unref && size_rules)
		return usage_fail(usage, "%s", "--unreferenced does not go with --size or --unused-days; run gc twice");
	if (dry_run && !unref)
		return usage_fail(usage, "%s",
				  "--dry-run needs --unreferenced");
	if (unref)
		return gc_unreferenced(c, unref_since, dry_run);
	if (need_cache(c, 0, 1))
		return 1;
	if (pt_cache_gc(c->cache, size, since, &removed, &e))
		return pt_cli_fail("%s", e.msg);
	printf("removed %llu entries\n", (unsigned long long)removed);
	return 0;
}

static int cmd_clear(struct ctx *c)
{
	struct pt_error e = PT_ERROR_INIT;
	int force = 0;

	if (c->args.nr == 1 && !strcmp(c->args.v[0], "--force"))
		force = 1;
	else if (c->args.nr)
		return usage_fail(USAGE_CLEAR, "unexpected argument '%s'",
				  c->args.v[0]);
	if (force) {
		/* Without opening: the way out of a corrupt cache or one of
		 * another format. */
		if (pt_cache_destroy(c->cfg.cache_dir, &e))
			return pt_cli_fail("%s", e.msg);
		printf("removed the cache in %s\n", c->cfg.cache_dir);
		return 0;
	}
	if (need_cache(c, 0, 0))
		return pt_cli_fail("use `protune clear --force` to remove it without reading it");
	if (c->cache && pt_cache_clear(c->cache, &e))
		return pt_cli_fail("%s", e.msg);
	printf("cleared the cache in %s\n", c->cfg.cache_dir);
	return 0;
}

/* --- explain ------------------------------------------------------------------ */

struct explain_ctx {
	struct pt_lookup lk;
	int n;
};

static int explain_answer(struct pt_serve *s, void *ctx,
			  const struct pt_model *m, int attempt,
			  const char *refused, struct pt_sched **out,
			  struct pt_error *err)
{
	struct explain_ctx *x = ctx;
	struct pt_strbuf why = PT_STRBUF_INIT;

	(void)s;
	(void)attempt;
	(void)refused;
	*out = NULL;
	pt_lookup_explain(&x->lk, m, &why);
	printf("%s%s", x->n++ ? "\n" : "", why.buf ? why.buf : "");
	fflush(stdout);
	pt_strbuf_release(&why);
	return pt_error_set(err, PT_ENOTFOUND,
			    "protune explain: looked up only, nothing compiled");
}

static int cmd_explain(struct ctx *c)
{
	struct explain_ctx x;
	struct pt_genargs ga = PT_GENARGS_INIT;
	struct pt_strbuf plugin = PT_STRBUF_INIT, tmp = PT_STRBUF_INIT;
	struct pt_serve_opts so;
	struct pt_error e = PT_ERROR_INIT, se = PT_ERROR_INIT;
	struct pt_strvec argv = PT_STRVEC_INIT;
	int status, served, ret = 1;
	size_t i;

	if (!c->args.nr)
		return usage_fail(USAGE_EXPLAIN, "%s",
				  "give the generator command");
	if (pt_drv_plugin_path(&plugin, &e))
		return pt_cli_fail("%s", e.msg);
	if (pt_genargs_parse((int)c->args.nr, c->args.v, plugin.buf, 3600, &ga,
			     &e)) {
		ret = pt_cli_fail("%s", e.msg);
		goto out;
	}
	if (pt_genargs_fix_host(&ga.argv) < 0) {
		ret = pt_cli_fail("out of memory");
		goto out;
	}
	if (ga.pass != PT_PASS_NONE) {
		printf("not tuned: %s (protune-cc runs it unchanged)\n",
		       pt_genargs_pass_name(ga.pass));
		ret = 0;
		goto out;
	}
	/* Run it with its outputs in a scratch directory. */
	if (pt_strbuf_addf(&tmp, "%s/protune-explain-XXXXXX",
			   getenv("TMPDIR") && *getenv("TMPDIR") ?
			   getenv("TMPDIR") : "/tmp") || !mkdtemp(tmp.buf)) {
		ret = pt_cli_fail("cannot make a temporary directory: %s",
			   strerror(errno));
		goto out;
	}
	for (i = 0; i < ga.argv.nr; i++) {
		int is_o = !strcmp(ga.argv.v[i], "-o") && i + 1 < ga.argv.nr;

		pt_strvec_push(&argv, ga.argv.v[i]);
		if (is_o)
			pt_strvec_push(&argv, tmp.buf), i++;
	}
	memset(&x, 0, sizeof(x));
	pt_lookup_init(&x.lk);
	x.lk.cfg = &c->cfg;
	x.lk.name = NAME;
	if (need_cache(c, 1, 0) || need_store(c, 0))
		goto out2;
	x.lk.cache = c->cache;
	x.lk.store = c->store;
	memset(&so, 0, sizeof(so));
	so.name = NAME;
	so.log = NULL;
	so.timeout_ms = -1;
	so.answer = explain_answer;
	so.ctx = &x;
	if (pt_drv_run_served(&argv, &so, &status, &served, &se, &e))
		ret = pt_cli_fail("%s", e.msg);
	else if (!x.n)
		ret = pt_cli_fail("the generator never asked for a schedule (exit status %d): %s",
			   status, served ? se.msg : "is it a generator run?");
	else
		ret = 0;
out2:
	x.lk.cache = NULL;
	x.lk.store = NULL;
	pt_lookup_release(&x.lk);
	{
		struct pt_child rm = PT_CHILD_INIT;

		pt_strvec_pushl(&rm.args, "rm", "-rf", "--", tmp.buf,
				(const char *)NULL);
		rm.out.mode = PT_IO_NULL;
		rm.err.mode = PT_IO_NULL;
		pt_child_run(&rm, NULL, NULL);
		pt_child_release(&rm);
	}
out:
	pt_strvec_release(&argv);
	pt_genargs_release(&ga);
	pt_strbuf_release(&plugin);
	pt_strbuf_release(&tmp);
	return ret;
}

/* --- dispatch ----------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(struct ctx *c);
	int stop_at_arg;   /* the rest is a command line (explain) */
	const char *usage;
} cmds[] = {
	{ "config", cmd_config, 0, USAGE_CONFIG },
	{ "stats", cmd_stats, 0, USAGE_STATS },
	{ "zero-stats", cmd_zero_stats, 0, USAGE_ZERO_STATS },
	{ "ls", cmd_ls, 0, USAGE_LS },
	{ "show", cmd_show, 0, USAGE_SHOW },
	{ "export", cmd_export, 0, USAGE_EXPORT },
	{ "import", cmd_import, 0, USAGE_IMPORT },
	{ "commit", cmd_commit, 0, USAGE_COMMIT },
	{ "gc", cmd_gc, 0, USAGE_GC },
	{ "clear", cmd_clear, 0, USAGE_CLEAR },
	{ "explain", cmd_explain, 1, USAGE_EXPLAIN },
};

int pt_cmd_cache_main(int argc, char **argv)
{
	struct ctx c;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[0], cmds[i].name))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0]))
		return -1;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: protune %s\n", cmds[i].usage);
		return 0;
	}
	memset(&c, 0, sizeof(c));
	pt_strvec_init(&c.args);
	ret = pt_drv_config(&c.cfg, argc - 1, argv + 1, cmds[i].stop_at_arg,
			    &c.args, NAME);
	if (!ret)
		ret = cmds[i].fn(&c);
	pt_cache_close(c.cache);
	pt_store_close(c.store);
	pt_strvec_release(&c.args);
	pt_config_release(&c.cfg);
	return ret;
}
