/* pt_config.c: protune's settings from defaults, files, the environment and
 * the command line (see pt_config.h and doc/configuration.md). */
#include "protune/pt_config.h"
#include "protune/pt_search.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SECONDS (86400.0 * 7)
#define MAX_THREADS 1024
#define MAX_SIZE_LIMIT ((uint64_t)1 << 60)
#define MAX_FILE_SIZE (1 << 20)

static const char *const key_names[PT_CONF_NKEYS] = {
	"cache_dir", "store_dir", "budget", "decision_time", "mode", "seed",
	"threads", "measure", "log_file", "max_size", "search", "compile_limit"
};

static const char *const env_names[PT_CONF_NKEYS] = {
	"PROTUNE_CACHE_DIR", "PROTUNE_STORE_DIR", "PROTUNE_BUDGET",
	"PROTUNE_DECISION_TIME", "PROTUNE_MODE", "PROTUNE_SEED",
	"PROTUNE_THREADS", "PROTUNE_MEASURE", "PROTUNE_LOG", "PROTUNE_MAX_SIZE",
	"PROTUNE_SEARCH", "PROTUNE_COMPILE_LIMIT"
};

static const char *const mode_names[] = {
	"normal", "readonly", "frozen", "retune", "off"
};

static const char *const origin_names[] = {
	"default", "user-file", "repo-file", "config-file", "env", "cmdline"
};

const char *pt_config_key_name(enum pt_conf_key k)
{
	return (unsigned)k < PT_CONF_NKEYS ? key_names[k] : NULL;
}

const char *pt_config_origin_name(enum pt_conf_origin o)
{
	return (unsigned)o <= PT_CONF_CMDLINE ? origin_names[o] : "?";
}

const char *pt_mode_name(enum pt_mode m)
{
	return (unsigned)m <= PT_MODE_OFF ? mode_names[m] : "?";
}

/* --- small helpers ------------------------------------------------------ */

/* The value of NAME in envp, or NULL; an empty value counts as unset. */
static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return (*envp)[n + 1] ? *envp + n + 1 : NULL;
	return NULL;
}

static int is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static int is_blank(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' ||
	       ch == '\f';
}

/* A value for a message: printable, at most 60 bytes then "...". */
static const char *show(const char *s, char buf[80])
{
	size_t i, o = 0;

	for (i = 0; s[i] && o < 60; i++) {
		unsigned char ch = (unsigned char)s[i];
		buf[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	if (s[i])
		buf[o++] = '.', buf[o++] = '.', buf[o++] = '.';
	buf[o] = '\0';
	return buf;
}

static int dup_str(char **dst, const char *s)
{
	if (!s) {
		*dst = NULL;
		return 0;
	}
	*dst = strdup(s);
	return *dst ? 0 : PT_ENOMEM;
}

/* The working directory, appended to `out`. */
static int add_cwd(struct pt_strbuf *out, struct pt_error *err)
{
	size_t size = 256;

	for (;;) {
		if (pt_strbuf_grow(out, size))
			return pt_error_set(err, PT_ENOMEM, "out of memory");
		if (getcwd(out->buf + out->len, size))
			break;
		if (errno != ERANGE)
			return pt_error_set(err, PT_EIO,
					    "cannot get the working "
					    "directory: %s", strerror(errno));
		size *= 2;
	}
	out->len += strlen(out->buf + out->len);
	return 0;
}

/* Append dir "/" name to `out`, without doubling a '/'. */
static int add_joined(struct pt_strbuf *out, const char *dir, const char *name)
{
	size_t n = strlen(dir);

	if (pt_strbuf_add(out, dir, n))
		return PT_ENOMEM;
	if ((n == 0 || dir[n - 1] != '/') && pt_strbuf_addch(out, '/'))
		return PT_ENOMEM;
	return pt_strbuf_addstr(out, name);
}

/* --- copying (settings are applied to a copy, kept on success) ---------- */

static void config_free_strings(struct pt_config *c)
{
	int k;

	free(c->cache_dir);
	free(c->store_dir);
	free(c->log_file);
	for (k = 0; k < PT_CONF_NKEYS; k++)
		free(c->where[k]);
	free(c->home);
	free(c->base_dir);
}

void pt_config_release(struct pt_config *c)
{
	if (!c)
		return;
	config_free_strings(c);
	memset(c, 0, sizeof(*c));
}

static int config_copy(struct pt_config *dst, const struct pt_config *src,
		       struct pt_error *err)
{
	int k, ret = 0;

	*dst = *src;
	dst->cache_dir = dst->store_dir = dst->log_file = NULL;
	dst->home = dst->base_dir = NULL;
	for (k = 0; k < PT_CONF_NKEYS; k++)
		dst->where[k] = NULL;
	ret |= dup_str(&dst->cache_dir, src->cache_dir);
	ret |= dup_str(&dst->store_dir, src->store_dir);
	ret |= dup_str(&dst->log_file, src->log_file);
	ret |= dup_str(&dst->home, src->home);
	ret |= dup_str(&dst->base_dir, src->base_dir);
	for (k = 0; k < PT_CONF_NKEYS; k++)
		ret |= dup_str(&dst->where[k], src->where[k]);
	if (ret) {
		pt_config_release(dst);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	return 0;
}

/* Replace *c by *tmp (which c then owns). */
static void config_commit(struct pt_config *c, struct pt_config *tmp)
{
	config_free_strings(c);
	*c = *tmp;
	memset(tmp, 0, sizeof(*tmp));
}

/* --- defaults ------------------------------------------------------------ */

int pt_config_init(struct pt_config *c, char *const *envp,
		   struct pt_error *err)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	const char *xdg = env_get(envp, "XDG_CACHE_HOME");
	const char *home = env_get(envp, "HOME");
	int k;

	memset(c, 0, sizeof(*c));
	c->budget_s = 60;
	c->decision_s = 0;
	c->mode = PT_MODE_NORMAL;
	c->max_size = (uint64_t)1 << 30;
	c->compile_limit_s = 300;
	for (k = 0; k < PT_CONF_NKEYS; k++)
		c->origin[k] = PT_CONF_DEFAULT;
	if (xdg && xdg[0] == '/') {
		if (add_joined(&sb, xdg, "protune"))
			goto nomem;
	} else if (home && home[0] == '/') {
		if (add_joined(&sb, home, ".cache/protune"))
			goto nomem;
	} else {
		return pt_error_set(err, PT_EINVAL,
				    "neither XDG_CACHE_HOME nor HOME is set to "
				    "an absolute path: no default cache "
				    "directory");
	}
	c->cache_dir = pt_strbuf_detach(&sb, NULL);
	if (!c->cache_dir || dup_str(&c->store_dir, "protune") ||
	    dup_str(&c->home, home))
		goto nomem;
	return 0;
nomem:
	pt_strbuf_release(&sb);
	pt_config_release(c);
	return pt_error_set(err, PT_ENOMEM, "out of memory");
}

/* --- values -------------------------------------------------------------- */

/* Strict decimal: digits [. digits] [e [+-] digits], at least one digit in
 * the mantissa. 0, -1 for bad syntax, -2 for out of double's range. */
static int parse_double(const char *s, double *out)
{
	const char *p = s;
	char *end;
	int digits = 0;
	double v;

	while (is_digit(*p))
		p++, digits++;
	if (*p == '.')
		for (p++; is_digit(*p); p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return -1;
		while (is_digit(*p))
			p++;
	}
	if (*p)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end != p)
		return -1;
	if (errno == ERANGE)
		return -2;
	*out = v;
	return 0;
}

/* Digits only, within uint64; *endp is set past them. 0 or -1. */
static int parse_u64(const char *s, uint64_t *out, const char **endp)
{
	uint64_t v = 0;
	const char *p = s;

	if (!is_digit(*p))
		return -1;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	*endp = p;
	return 0;
}

static int parse_size(const char *s, uint64_t *out)
{
	const char *p;
	uint64_t v, mult = 1;

	if (parse_u64(s, &v, &p))
		return -1;
	switch (*p) {
	case 'K': case 'k': mult = (uint64_t)1 << 10; p++; break;
	case 'M': case 'm': mult = (uint64_t)1 << 20; p++; break;
	case 'G': case 'g': mult = (uint64_t)1 << 30; p++; break;
	default: break;
	}
	if (*p || v > MAX_SIZE_LIMIT / mult)
		return -1;
	*out = v * mult;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "on", "true", "yes", "1" };
	static const char *const no[] = { "off", "false", "no", "0" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* The setting called `name` ('-' taken for '_'), or -1. */
static int key_lookup(const char *name)
{
	int k;

	for (k = 0; k < PT_CONF_NKEYS; k++) {
		const char *a = name, *b = key_names[k];

		while (*a && (*a == *b || (*a == '-' && *b == '_')))
			a++, b++;
		if (!*a && !*b)
			return k;
	}
	return -1;
}

/* How a value is being set: for messages and relative paths. */
struct setter {
	const char *label;  /* message prefix: "FILE:LINE: budget", ... */
	const char *dir;    /* relative paths: a file's directory, or NULL */
	int code;           /* PT_EFORMAT in files, PT_EINVAL otherwise */
	struct pt_error *err;
};

/* A path setting's value: "~/" expanded, and made absolute when `absolute`
 * (relative to st->dir, else the base directory, else the cwd). */
static int make_path(const struct pt_config *c, const struct setter *st,
		     const char *value, int absolute, char **out)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	char buf[80];
	int ret = PT_ENOMEM;

	if (value[0] == '~' && (value[1] == '/' || value[1] == '\0')) {
		if (!c->home)
			return pt_error_set(st->err, st->code,
					    "%s: '%s': HOME is not set",
					    st->label, show(value, buf));
		if (value[1] ? add_joined(&sb, c->home, value + 2) :
			       pt_strbuf_addstr(&sb, c->home))
			goto fail;
	} else if (!absolute || value[0] == '/') {
		if (pt_strbuf_addstr(&sb, value))
			goto fail;
	} else {
		if (st->dir && st->dir[0] == '/') {
			if (pt_strbuf_addstr(&sb, st->dir))
				goto fail;
		} else {
			if (c->base_dir) {
				if (pt_strbuf_addstr(&sb, c->base_dir))
					goto fail;
			} else if ((ret = add_cwd(&sb, st->err))) {
				goto fail_quiet;
			}
			if (st->dir && (pt_strbuf_addch(&sb, '/') ||
					pt_strbuf_addstr(&sb, st->dir)))
				goto fail;
		}
		if ((sb.len == 0 || sb.buf[sb.len - 1] != '/') &&
		    pt_strbuf_addch(&sb, '/'))
			goto fail;
		if (pt_strbuf_addstr(&sb, value))
			goto fail;
	}
	*out = pt_strbuf_detach(&sb, NULL);
	if (!*out)
		return pt_error_set(st->err, PT_ENOMEM, "out of memory");
	return 0;
fail:
	ret = pt_error_set(st->err, PT_ENOMEM, "out of memory");
fail_quiet:
	pt_strbuf_release(&sb);
	return ret;
}

static int bad(const struct setter *st, const char *value, const char *what)
{
	char buf[80];

	return pt_error_set(st->err, st->code, "%s: '%s' %s", st->label,
			    show(value, buf), what);
}

static int replace_str(char **slot, char *s)
{
	free(*slot);
	*slot = s;
	return 0;
}

/* Parse `value` into setting k of c; c is changed only on success. */
static int set_key(struct pt_config *c, int k, const char *value,
		   const struct setter *st)
{
	char *path = NULL;
	double d;
	uint64_t u;
	const char *end;
	int b, ret, m;

	switch (k) {
	case PT_CONF_CACHE_DIR:
		if (!*value)
			return bad(st, value, "is not a directory (empty)");
		if ((ret = make_path(c, st, value, 1, &path)))
			return ret;
		return replace_str(&c->cache_dir, path);
	case PT_CONF_STORE_DIR:
		if (!*value)
			return bad(st, value, "is not a directory (empty; "
				   "'off' turns the store off)");
		if (strcmp(value, "off") != 0 &&
		    (ret = make_path(c, st, value, 0, &path)))
			return ret;
		return replace_str(&c->store_dir, path);
	case PT_CONF_LOG_FILE:
		if (*value && (ret = make_path(c, st, value, 1, &path)))
			return ret;
		return replace_str(&c->log_file, path);
	case PT_CONF_BUDGET:
	case PT_CONF_DECISION_TIME:
	case PT_CONF_COMPILE_LIMIT:
		ret = parse_double(value, &d);
		if (ret == -1)
			return bad(st, value, "is not a number of seconds");
		/* decision_time 0: the budget spread over the decisions;
		 * compile_limit 0: none */
		if (k != PT_CONF_BUDGET && ret == 0 && d == 0) {
			if (k == PT_CONF_DECISION_TIME)
				c->decision_s = 0;
			else
				c->compile_limit_s = 0;
			return 0;
		}
		if (ret || !(d > 0 && d <= MAX_SECONDS))
			return bad(st, value, k == PT_CONF_BUDGET ?
				   "is out of range (more than 0, at most "
				   "604800 seconds)" :
				   k == PT_CONF_DECISION_TIME ?
				   "is out of range (0 for automatic, or "
				   "more than 0 and at most 604800 seconds)" :
				   "is out of range (0 for no limit, or "
				   "more than 0 and at most 604800 seconds)");
		if (k == PT_CONF_BUDGET)
			c->budget_s = d;
		else if (k == PT_CONF_DECISION_TIME)
			c->decision_s = d;
		else
			c->compile_limit_s = d;
		return 0;
	case PT_CONF_MODE:
		for (m = 0; m <= PT_MODE_OFF; m++)
			if (strcmp(value, mode_names[m]) == 0)
				break;
		if (m > PT_MODE_OFF)
			return bad(st, value, "is not one of normal, "
				   "readonly, frozen, retune, off");
		c->mode = (enum pt_mode)m;
		return 0;
	case PT_CONF_SEED:
		if (parse_u64(value, &u, &end) || *end)
			return bad(st, value,
				   "is not an unsigned 64-bit integer");
		c->seed = u;
		return 0;
	case PT_CONF_THREADS:
		if (parse_u64(value, &u, &end) || *end || u > MAX_THREADS)
			return bad(st, value,
				   "is not a number of threads from 0 to 1024");
		c->threads = (int)u;
		return 0;
	case PT_CONF_MEASURE:
		if (parse_bool(value, &b))
			return bad(st, value, "is not one of on, off (or "
				   "true, false, yes, no, 1, 0)");
		c->measure = b;
		return 0;
	case PT_CONF_MAX_SIZE:
		if (parse_size(value, &u))
			return bad(st, value, "is not a size in bytes with "
				   "an optional K, M or G suffix, at most "
				   "2^60");
		c->max_size = u;
		return 0;
	case PT_CONF_SEARCH:
		if ((m = pt_search_algo_parse(value)) < 0)
			return bad(st, value, "is not one of mcts, beam, "
				   "greedy, random");
		c->search = m;
		return 0;
	default:
		return pt_error_set(st->err, PT_EINVAL, "bad setting index");
	}
}

/* Set `name` from `value`. `file` tells that `where` is "FILE:LINE" and
 * `dir` the file's directory. */
static int apply(struct pt_config *c, const char *name, const char *value,
		 enum pt_conf_origin origin, const char *where, const char *dir,
		 int file, struct pt_error *err)
{
	struct pt_strbuf label = PT_STRBUF_INIT;
	struct setter st;
	char *where_copy = NULL, buf[80];
	int k = key_lookup(name), code = file ? PT_EFORMAT : PT_EINVAL, ret;

	if (k < 0) {
		if (where)
			return pt_error_set(err, code,
					    "%s: unknown setting '%s'", where,
					    show(name, buf));
		return pt_error_set(err, code, "unknown setting '%s'",
				    show(name, buf));
	}
	if (where && (file || origin == PT_CONF_USER_FILE ||
		      origin == PT_CONF_REPO_FILE ||
		      origin == PT_CONF_CONFIG_FILE))
		ret = pt_strbuf_addf(&label, "%s: %s", where, key_names[k]);
	else
		ret = pt_strbuf_addstr(&label, where ? where : key_names[k]);
	if (ret || dup_str(&where_copy, where)) {
		pt_strbuf_release(&label);
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	st.label = label.buf;
	st.dir = dir;
	st.code = code;
	st.err = err;
	ret = set_key(c, k, value, &st);
	pt_strbuf_release(&label);
	if (ret) {
		free(where_copy);
		return ret;
	}
	free(c->where[k]);
	c->where[k] = where_copy;
	c->origin[k] = origin;
	return 0;
}

int pt_config_set(struct pt_config *c, const char *name, const char *value,
		  enum pt_conf_origin origin, const char *where,
		  struct pt_error *err)
{
	if (!name || !value)
		return pt_error_set(err, PT_EINVAL,
				    "pt_config_set: no name or value");
	return apply(c, name, value, origin, where, NULL, 0, err);
}

/* --- files -------------------------------------------------------------- */

/* The directory part of a path ("dir/x.conf" -> "dir", "/x" -> "/"), or
 * NULL (and 0) when it has none. */
static int dir_of(const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	*out = NULL;
	if (!slash)
		return 0;
	n = slash == path ? 1 : (size_t)(slash - path);
	*out = malloc(n + 1);
	if (!*out)
		return PT_ENOMEM;
	memcpy(*out, path, n);
	(*out)[n] = '\0';
	return 0;
}

static int parse_lines(struct pt_config *c, const char *text, size_t len,
		       const char *name, enum pt_conf_origin origin,
		       const char *dir, struct pt_error *err)
{
	struct pt_strbuf key = PT_STRBUF_INIT, val = PT_STRBUF_INIT;
	struct pt_strbuf where = PT_STRBUF_INIT;
	const char *p = text, *end = text + len;
	long lineno = 0;
	int ret = 0;

	while (p < end && !ret) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *a = p, *b = nl ? nl : end, *eq, *ke, *vs;

		p = nl ? nl + 1 : end;
		lineno++;
		pt_strbuf_reset(&where);
		if (pt_strbuf_addf(&where, "%s:%ld", name, lineno)) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			break;
		}
		if (memchr(a, '\0', (size_t)(b - a))) {
			ret = pt_error_set(err, PT_EFORMAT, "%s: a NUL byte",
					   where.buf);
			break;
		}
		while (a < b && is_blank(*a))
			a++;
		while (b > a && is_blank(b[-1]))
			b--;
		if (a == b || *a == '#')
			continue;
		eq = memchr(a, '=', (size_t)(b - a));
		for (ke = eq; ke && ke > a && is_blank(ke[-1]); ke--)
			;
		if (!eq || ke == a) {
			ret = pt_error_set(err, PT_EFORMAT,
					   "%s: expected 'name = value'",
					   where.buf);
			break;
		}
		for (vs = eq + 1; vs < b && is_blank(*vs); vs++)
			;
		pt_strbuf_reset(&key);
		pt_strbuf_reset(&val);
		if (pt_strbuf_add(&key, a, (size_t)(ke - a)) ||
		    pt_strbuf_add(&val, vs, (size_t)(b - vs))) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			break;
		}
		ret = apply(c, key.buf, val.buf, origin, where.buf, dir, 1,
			    err);
	}
	pt_strbuf_release(&key);
	pt_strbuf_release(&val);
	pt_strbuf_release(&where);
	return ret;
}

int pt_config_parse(struct pt_config *c, const char *text, size_t len,
		    const char *name, enum pt_conf_origin origin,
		    struct pt_error *err)
{
	struct pt_config tmp;
	char *dir;
	int ret;

	if (!name)
		name = "config";
	if (dir_of(name, &dir))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	ret = config_copy(&tmp, c, err);
	if (!ret) {
		ret = parse_lines(&tmp, text, len, name, origin, dir, err);
		if (ret)
			pt_config_release(&tmp);
		else
			config_commit(c, &tmp);
	}
	free(dir);
	return ret;
}

/* Read a whole file into `out`: 1 when read, 0 when it does not exist,
 * or a negative error. */
static int read_file(const char *path, struct pt_strbuf *out,
		     struct pt_error *err)
{
	int fd, ret = 1;
	ssize_t n;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return pt_error_set(err, PT_EIO, "%s: cannot open: %s", path,
				    strerror(errno));
	}
	for (;;) {
		if (out->len > MAX_FILE_SIZE) {
			ret = pt_error_set(err, PT_EIO,
					   "%s: larger than 1 MiB, not a "
					   "config file", path);
			break;
		}
		if (pt_strbuf_grow(out, 4096)) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			break;
		}
		n = read(fd, out->buf + out->len, out->alloc - out->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = pt_error_set(err, PT_EIO, "%s: cannot read: %s",
					   path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
	}
	close(fd);
	return ret;
}

/* Parse the file at `path` if it exists: 1 parsed, 0 absent, or error. */
static int load_file(struct pt_config *c, const char *path,
		     enum pt_conf_origin origin, struct pt_error *err)
{
	struct pt_strbuf text = PT_STRBUF_INIT;
	int ret = read_file(path, &text, err);

	if (ret == 1) {
		ret = pt_config_parse(c, text.buf, text.len, path, origin, err);
		if (!ret)
			ret = 1;
	}
	pt_strbuf_release(&text);
	return ret;
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* .protune.conf in `start` (absolute) or its nearest parent that has one,
 * not above the first directory with a .git entry. */
static int load_repo_file(struct pt_config *c, const char *start,
			  struct pt_error *err)
{
	struct pt_strbuf dir = PT_STRBUF_INIT, path = PT_STRBUF_INIT;
	int ret = 0;

	if (pt_strbuf_addstr(&dir, start))
		goto nomem;
	for (;;) {
		char *slash;

		while (dir.len > 1 && dir.buf[dir.len - 1] == '/')
			pt_strbuf_setlen(&dir, dir.len - 1);
		pt_strbuf_reset(&path);
		if (add_joined(&path, dir.buf, ".protune.conf"))
			goto nomem;
		ret = load_file(c, path.buf, PT_CONF_REPO_FILE, err);
		if (ret)
			break;
		pt_strbuf_reset(&path);
		if (add_joined(&path, dir.buf, ".git"))
			goto nomem;
		if (exists(path.buf) || strcmp(dir.buf, "/") == 0)
			break;
		slash = strrchr(dir.buf, '/');
		if (!slash)
			break;
		pt_strbuf_setlen(&dir, slash == dir.buf ? 1 :
				 (size_t)(slash - dir.buf));
	}
	pt_strbuf_release(&dir);
	pt_strbuf_release(&path);
	return ret < 0 ? ret : 0;
nomem:
	pt_strbuf_release(&dir);
	pt_strbuf_release(&path);
	return pt_error_set(err, PT_ENOMEM, "out of memory");
}

static int load_user_file(struct pt_config *c, char *const *envp,
			  struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	const char *xdg = env_get(envp, "XDG_CONFIG_HOME");
	const char *home = env_get(envp, "HOME");
	int ret = 0;

	if (xdg && xdg[0] == '/')
		ret = add_joined(&path, xdg, "protune/protune.conf");
	else if (home && home[0] == '/')
		ret = add_joined(&path, home, ".config/protune/protune.conf");
	else
		return 0;
	if (ret)
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
	else
		ret = load_file(c, path.buf, PT_CONF_USER_FILE, err);
	pt_strbuf_release(&path);
	return ret < 0 ? ret : 0;
}

/* The file named by $PROTUNE_CONFIG (relative to the start directory). */
static int load_config_file(struct pt_config *c, const char *value,
			    struct pt_error *err)
{
	struct setter st = { "PROTUNE_CONFIG", NULL, PT_EINVAL, err };
	char *path = NULL;
	int ret = make_path(c, &st, value, 1, &path);

	if (ret)
		return ret;
	ret = load_file(c, path, PT_CONF_CONFIG_FILE, err);
	if (ret == 0)
		ret = pt_error_set(err, PT_ENOTFOUND,
				   "PROTUNE_CONFIG: %s: no such file", path);
	free(path);
	return ret < 0 ? ret : 0;
}

static int load_env(struct pt_config *c, char *const *envp,
		    struct pt_error *err)
{
	int k, ret;

	for (k = 0; k < PT_CONF_NKEYS; k++) {
		const char *v = env_get(envp, env_names[k]);

		if (v && (ret = apply(c, key_names[k], v, PT_CONF_ENV,
				      env_names[k], NULL, 0, err)))
			return ret;
	}
	return 0;
}

/* Set tmp->base_dir to the absolute start directory. */
static int set_base_dir(struct pt_config *c, const char *start_dir,
			struct pt_error *err)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	int ret;

	if (!start_dir || start_dir[0] != '/') {
		if ((ret = add_cwd(&sb, err)))
			return ret;
		if (start_dir && *start_dir && strcmp(start_dir, ".") != 0 &&
		    (pt_strbuf_addch(&sb, '/') ||
		     pt_strbuf_addstr(&sb, start_dir)))
			goto nomem;
	} else if (pt_strbuf_addstr(&sb, start_dir)) {
		goto nomem;
	}
	while (sb.len > 1 && sb.buf[sb.len - 1] == '/')
		pt_strbuf_setlen(&sb, sb.len - 1);
	free(c->base_dir);
	c->base_dir = pt_strbuf_detach(&sb, NULL);
	if (!c->base_dir)
		goto nomem;
	return 0;
nomem:
	pt_strbuf_release(&sb);
	return pt_error_set(err, PT_ENOMEM, "out of memory");
}

int pt_config_load(struct pt_config *c, char *const *envp,
		   const char *start_dir, struct pt_error *err)
{
	struct pt_config tmp;
	const char *home = env_get(envp, "HOME");
	const char *file = env_get(envp, "PROTUNE_CONFIG");
	int ret;

	ret = config_copy(&tmp, c, err);
	if (ret)
		return ret;
	if (home) {
		char *h = strdup(home);

		if (!h) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			goto out;
		}
		free(tmp.home);
		tmp.home = h;
	}
	ret = set_base_dir(&tmp, start_dir, err);
	if (!ret && file)
		ret = load_config_file(&tmp, file, err);
	if (!ret && !file)
		ret = load_user_file(&tmp, envp, err);
	if (!ret && !file)
		ret = load_repo_file(&tmp, tmp.base_dir, err);
	if (!ret)
		ret = load_env(&tmp, envp, err);
out:
	if (ret)
		pt_config_release(&tmp);
	else
		config_commit(c, &tmp);
	return ret;
}

/* --- printing ----------------------------------------------------------- */

static int add_seconds(struct pt_strbuf *out, double v)
{
	char buf[40];
	int prec;

	/* The shortest form that reads back as the same double. */
	for (prec = 6; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof(buf), "%.17g", v);
	return pt_strbuf_addstr(out, buf);
}

static int add_size(struct pt_strbuf *out, uint64_t v)
{
	static const char suffix[] = "GMK";
	int i;

	for (i = 0; i < 3 && v; i++) {
		uint64_t unit = (uint64_t)1 << (10 * (3 - i));

		if (v % unit == 0)
			return pt_strbuf_addf(out, "%llu%c",
					      (unsigned long long)(v / unit),
					      suffix[i]);
	}
	return pt_strbuf_addf(out, "%llu", (unsigned long long)v);
}

int pt_config_value(const struct pt_config *c, enum pt_conf_key k,
		    struct pt_strbuf *out)
{
	switch (k) {
	case PT_CONF_CACHE_DIR:
		return pt_strbuf_addstr(out, c->cache_dir ? c->cache_dir : "");
	case PT_CONF_STORE_DIR:
		return pt_strbuf_addstr(out,
					c->store_dir ? c->store_dir : "off");
	case PT_CONF_BUDGET:
		return add_seconds(out, c->budget_s);
	case PT_CONF_DECISION_TIME:
		return add_seconds(out, c->decision_s);
	case PT_CONF_MODE:
		return pt_strbuf_addstr(out, pt_mode_name(c->mode));
	case PT_CONF_SEED:
		return pt_strbuf_addf(out, "%llu", (unsigned long long)c->seed);
	case PT_CONF_THREADS:
		return pt_strbuf_addf(out, "%d", c->threads);
	case PT_CONF_MEASURE:
		return pt_strbuf_addstr(out, c->measure ? "on" : "off");
	case PT_CONF_LOG_FILE:
		return pt_strbuf_addstr(out, c->log_file ? c->log_file : "");
	case PT_CONF_MAX_SIZE:
		return add_size(out, c->max_size);
	case PT_CONF_SEARCH:
		return pt_strbuf_addstr(out, pt_search_algo_name(c->search));
	case PT_CONF_COMPILE_LIMIT:
		return add_seconds(out, c->compile_limit_s);
	default:
		return PT_EINVAL;
	}
}

int pt_config_print(const struct pt_config *c, struct pt_strbuf *out)
{
	struct pt_strbuf vals[PT_CONF_NKEYS];
	size_t width = 0, namew = 0;
	int k, ret = 0;

	for (k = 0; k < PT_CONF_NKEYS; k++) {
		vals[k] = (struct pt_strbuf)PT_STRBUF_INIT;
		ret |= pt_config_value(c, (enum pt_conf_key)k, &vals[k]);
		if (vals[k].len > width)
			width = vals[k].len;
		if (strlen(key_names[k]) > namew)
			namew = strlen(key_names[k]);
	}
	for (k = 0; k < PT_CONF_NKEYS && !ret; k++) {
		ret = pt_strbuf_addf(out, "%-*s = %-*s  # %s", (int)namew,
				     key_names[k], (int)width, vals[k].buf,
				     pt_config_origin_name(c->origin[k]));
		if (!ret && c->where[k])
			ret = pt_strbuf_addf(out, " %s", c->where[k]);
		if (!ret)
			ret = pt_strbuf_addch(out, '\n');
	}
	for (k = 0; k < PT_CONF_NKEYS; k++)
		pt_strbuf_release(&vals[k]);
	return ret ? PT_ENOMEM : 0;
}
