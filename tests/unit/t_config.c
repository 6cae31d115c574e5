#include "pt_test.h"
#include "protune/pt_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *const home_env[] = { "HOME=/home/u", NULL };

static void init(struct pt_config *c)
{
	PT_REQUIRE(pt_config_init(c, home_env, NULL) == 0);
}

static char *value(const struct pt_config *c, enum pt_conf_key k)
{
	static char buf[4][256];
	static int n;
	struct pt_strbuf sb = PT_STRBUF_INIT;
	char *b = buf[n++ % 4];

	PT_CHECK(pt_config_value(c, k, &sb) == 0);
	snprintf(b, 256, "%s", sb.buf);
	pt_strbuf_release(&sb);
	return b;
}

/* The path under the case's directory. */
static const char *tpath(const char *rel)
{
	static char buf[4][512];
	static int n;
	char *b = buf[n++ % 4];

	snprintf(b, 512, "%s%s%s", pt_test_tmpdir(), *rel ? "/" : "", rel);
	return b;
}

static void mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s", tpath(rel));
	for (p = path + strlen(pt_test_tmpdir()) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		PT_REQUIRE(mkdir(path, 0777) == 0 || errno == EEXIST);
		*p = '/';
	}
	PT_REQUIRE(mkdir(path, 0777) == 0 || errno == EEXIST);
}

static void write_file(const char *rel, const char *text)
{
	FILE *f = fopen(tpath(rel), "w");

	PT_REQUIRE(f != NULL);
	fputs(text, f);
	fclose(f);
}

PT_TEST(defaults)
{
	char *const xdg[] = { "HOME=/home/u", "XDG_CACHE_HOME=/xdg", NULL };
	char *const rel_xdg[] = { "XDG_CACHE_HOME=rel", "HOME=/h", NULL };
	char *const none[] = { "HOME=", "XDG_CACHE_HOME=rel", NULL };
	struct pt_config c;
	struct pt_error err = PT_ERROR_INIT;
	int k;

	init(&c);
	PT_CHECK_STR(c.cache_dir, "/home/u/.cache/protune");
	PT_CHECK_STR(c.store_dir, "protune");
	PT_CHECK(c.budget_s == 60 && c.decision_s == 0);
	PT_CHECK_INT(c.mode, PT_MODE_NORMAL);
	PT_CHECK(c.seed == 0 && c.threads == 0 && c.measure == 0);
	PT_CHECK(c.log_file == NULL);
	PT_CHECK(c.max_size == (uint64_t)1 << 30);
	for (k = 0; k < PT_CONF_NKEYS; k++) {
		PT_CHECK_INT(c.origin[k], PT_CONF_DEFAULT);
		PT_CHECK(c.where[k] == NULL);
	}
	PT_CHECK_STR(value(&c, PT_CONF_MAX_SIZE), "1G");
	PT_CHECK_STR(value(&c, PT_CONF_LOG_FILE), "");
	PT_CHECK_STR(value(&c, PT_CONF_MEASURE), "off");
	PT_CHECK_STR(value(&c, PT_CONF_BUDGET), "60");
	pt_config_release(&c);

	PT_REQUIRE(pt_config_init(&c, xdg, NULL) == 0);
	PT_CHECK_STR(c.cache_dir, "/xdg/protune");
	pt_config_release(&c);
	PT_REQUIRE(pt_config_init(&c, rel_xdg, NULL) == 0);
	PT_CHECK_STR(c.cache_dir, "/h/.cache/protune");
	pt_config_release(&c);
	PT_CHECK_INT(pt_config_init(&c, none, &err), PT_EINVAL);
	PT_CHECK(strstr(err.msg, "HOME") != NULL);
	pt_config_release(&c);
	PT_CHECK_INT(pt_config_init(&c, NULL, NULL), PT_EINVAL);
	pt_config_release(&c);
}

PT_TEST(names)
{
	PT_CHECK_STR(pt_config_key_name(PT_CONF_CACHE_DIR), "cache_dir");
	PT_CHECK_STR(pt_config_key_name(PT_CONF_DECISION_TIME),
		     "decision_time");
	PT_CHECK_STR(pt_config_key_name(PT_CONF_MAX_SIZE), "max_size");
	PT_CHECK(pt_config_key_name(PT_CONF_NKEYS) == NULL);
	PT_CHECK_STR(pt_config_origin_name(PT_CONF_DEFAULT), "default");
	PT_CHECK_STR(pt_config_origin_name(PT_CONF_REPO_FILE), "repo-file");
	PT_CHECK_STR(pt_config_origin_name(PT_CONF_CMDLINE), "cmdline");
	PT_CHECK_STR(pt_mode_name(PT_MODE_FROZEN), "frozen");
	PT_CHECK_STR(pt_mode_name(PT_MODE_OFF), "off");
}

PT_TEST(parse_file)
{
	static const char text[] =
		"# protune settings\n"
		"\n"
		"  budget = 30  \n"
		"decision-time=0.5\n"
		"mode = frozen\r\n"
		"\tseed = 18446744073709551615\n"
		"threads = 8\n"
		"measure = yes\n"
		"log_file = logs/pt.log\n"
		"cache_dir = ~/cache\n"
		"store_dir = schedules\n"
		"max_size = 512M";   /* no final newline */
	struct pt_config c;

	init(&c);
	PT_REQUIRE(pt_config_parse(&c, text, strlen(text), "/r/.protune.conf",
				   PT_CONF_REPO_FILE, NULL) == 0);
	PT_CHECK(c.budget_s == 30 && c.decision_s == 0.5);
	PT_CHECK_INT(c.mode, PT_MODE_FROZEN);
	PT_CHECK(c.seed == UINT64_MAX);
	PT_CHECK_INT(c.threads, 8);
	PT_CHECK_INT(c.measure, 1);
	PT_CHECK_STR(c.log_file, "/r/logs/pt.log");
	PT_CHECK_STR(c.cache_dir, "/home/u/cache");
	PT_CHECK_STR(c.store_dir, "schedules");
	PT_CHECK(c.max_size == (uint64_t)512 << 20);
	PT_CHECK_STR(value(&c, PT_CONF_MAX_SIZE), "512M");
	PT_CHECK_INT(c.origin[PT_CONF_BUDGET], PT_CONF_REPO_FILE);
	PT_CHECK_STR(c.where[PT_CONF_BUDGET], "/r/.protune.conf:3");
	PT_CHECK_STR(c.where[PT_CONF_MAX_SIZE], "/r/.protune.conf:12");
	PT_CHECK_INT(c.origin[PT_CONF_SEED], PT_CONF_REPO_FILE);
	PT_CHECK(c.where[PT_CONF_SEED] != NULL);

	/* store_dir off, log_file empty */
	PT_REQUIRE(pt_config_parse(&c, "store_dir=off\nlog_file =\n", 25,
				   "/u/p.conf", PT_CONF_USER_FILE, NULL) == 0);
	PT_CHECK(c.store_dir == NULL && c.log_file == NULL);
	PT_CHECK_STR(value(&c, PT_CONF_STORE_DIR), "off");
	PT_CHECK_INT(c.origin[PT_CONF_LOG_FILE], PT_CONF_USER_FILE);
	PT_CHECK_STR(c.where[PT_CONF_LOG_FILE], "/u/p.conf:2");
	/* a root-level file */
	PT_REQUIRE(pt_config_parse(&c, "cache_dir=c\n", 12, "/p.conf",
				   PT_CONF_CONFIG_FILE, NULL) == 0);
	PT_CHECK_STR(c.cache_dir, "/c");
	/* "~" alone, and an absolute path kept */
	PT_REQUIRE(pt_config_parse(&c, "cache_dir=~\nlog_file=/l\n", 24,
				   "/p.conf", PT_CONF_CONFIG_FILE, NULL) == 0);
	PT_CHECK_STR(c.cache_dir, "/home/u");
	PT_CHECK_STR(c.log_file, "/l");
	pt_config_release(&c);
}

struct err_case {
	const char *text;
	const char *msg;
};

PT_TEST(parse_errors)
{
	static const struct err_case cases[] = {
		{ "budget = 5\nfoo = 1\n",
		  "/r/x.conf:2: unknown setting 'foo'" },
		{ "\n\nbudget = x\n",
		  "/r/x.conf:3: budget: 'x' is not a number of seconds" },
		{ "mode = fast\n", "/r/x.conf:1: mode: 'fast' is not one of "
		  "normal, readonly, frozen, retune, off" },
		{ "budget\n", "/r/x.conf:1: expected 'name = value'" },
		{ " = 3\n", "/r/x.conf:1: expected 'name = value'" },
		{ "threads = 2000\n", "/r/x.conf:1: threads: '2000' is not a "
		  "number of threads from 0 to 1024" },
		{ "measure = maybe\n", "/r/x.conf:1: measure: 'maybe' is not "
		  "one of on, off (or true, false, yes, no, 1, 0)" },
		{ "cache_dir =\n", "/r/x.conf:1: cache_dir: '' is not a "
		  "directory (empty)" },
		{ "Budget = 1\n", "/r/x.conf:1: unknown setting 'Budget'" },
		{ "budget = 0\n", "/r/x.conf:1: budget: '0' is out of range "
		  "(more than 0, at most 604800 seconds)" },
		{ "budget = 1 # one\n",
		  "/r/x.conf:1: budget: '1 # one' is not a number of seconds" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pt_config c;
		struct pt_error err = PT_ERROR_INIT;

		init(&c);
		PT_CHECK_INT(pt_config_parse(&c, cases[i].text,
					     strlen(cases[i].text),
					     "/r/x.conf", PT_CONF_REPO_FILE,
					     &err), PT_EFORMAT);
		PT_CHECK_STR(err.msg, cases[i].msg);
		/* all or nothing */
		PT_CHECK(c.budget_s == 60);
		PT_CHECK_INT(c.origin[PT_CONF_BUDGET], PT_CONF_DEFAULT);
		pt_config_release(&c);
	}
}

PT_TEST(parse_nul_and_home)
{
	struct pt_config c;
	struct pt_error err = PT_ERROR_INIT;
	char *const nohome[] = { "XDG_CACHE_HOME=/x", NULL };

	init(&c);
	PT_CHECK_INT(pt_config_parse(&c, "seed = 1\0\n", 10, "f", 0, &err),
		     PT_EFORMAT);
	PT_CHECK_STR(err.msg, "f:1: a NUL byte");
	pt_config_release(&c);
	PT_REQUIRE(pt_config_init(&c, nohome, NULL) == 0);
	PT_CHECK_INT(pt_config_parse(&c, "log_file = ~/l\n", 15, "/a/f",
				     PT_CONF_REPO_FILE, &err), PT_EFORMAT);
	PT_CHECK_STR(err.msg, "/a/f:1: log_file: '~/l': HOME is not set");
	/* ~user is not expanded: a relative path */
	PT_REQUIRE(pt_config_parse(&c, "log_file = ~bob/l\n", 18, "/a/f",
				   PT_CONF_REPO_FILE, NULL) == 0);
	PT_CHECK_STR(c.log_file, "/a/~bob/l");
	pt_config_release(&c);
}

struct num_case {
	const char *name, *value;
	int ok;
	const char *shown;   /* pt_config_value after success */
};

PT_TEST(numbers)
{
	static const struct num_case cases[] = {
		{ "budget", "1", 1, "1" },
		{ "budget", "0.1", 1, "0.1" },
		{ "budget", ".5", 1, "0.5" },
		{ "budget", "5.", 1, "5" },
		{ "budget", "1e2", 1, "100" },
		{ "budget", "2.5E+1", 1, "25" },
		{ "budget", "604800", 1, "604800" },
		{ "budget", "0.333333333333", 1, "0.333333333333" },
		{ "budget", "604801", 0, NULL },
		{ "budget", "0", 0, NULL },
		{ "budget", "0.0", 0, NULL },
		{ "budget", "-1", 0, NULL },
		{ "budget", "+1", 0, NULL },
		{ "budget", " 1", 0, NULL },
		{ "budget", "1s", 0, NULL },
		{ "budget", "inf", 0, NULL },
		{ "budget", "nan", 0, NULL },
		{ "budget", "0x10", 0, NULL },
		{ "budget", "1e999", 0, NULL },
		{ "budget", "1e-999", 0, NULL },
		{ "budget", "1e", 0, NULL },
		{ "budget", ".", 0, NULL },
		{ "budget", "", 0, NULL },
		{ "decision_time", "0.5", 1, "0.5" },
		{ "decision_time", "1e6", 0, NULL },
		{ "decision_time", "0", 1, "0" },
		{ "decision_time", "-1", 0, NULL },
		{ "compile_limit", "0", 1, "0" },
		{ "compile_limit", "90.5", 1, "90.5" },
		{ "compile_limit", "1e6", 0, NULL },
		{ "compile_limit", "-3", 0, NULL },
		{ "compile_limit", "5m", 0, NULL },
		{ "budget", "0", 0, NULL },
		{ "threads", "0", 1, "0" },
		{ "threads", "1024", 1, "1024" },
		{ "threads", "1025", 0, NULL },
		{ "threads", "-1", 0, NULL },
		{ "threads", "1.0", 0, NULL },
		{ "seed", "0", 1, "0" },
		{ "seed", "18446744073709551615", 1, "18446744073709551615" },
		{ "seed", "18446744073709551616", 0, NULL },
		{ "seed", "-1", 0, NULL },
		{ "seed", "0x1", 0, NULL },
		{ "max_size", "0", 1, "0" },
		{ "max_size", "1536", 1, "1536" },
		{ "max_size", "2048", 1, "2K" },
		{ "max_size", "1k", 1, "1K" },
		{ "max_size", "3M", 1, "3M" },
		{ "max_size", "1024M", 1, "1G" },
		{ "max_size", "2g", 1, "2G" },
		{ "max_size", "1073741824G", 1, "1073741824G" },
		{ "max_size", "1073741825G", 0, NULL },
		{ "max_size", "1152921504606846977", 0, NULL },
		{ "max_size", "1T", 0, NULL },
		{ "max_size", "1KB", 0, NULL },
		{ "max_size", "K", 0, NULL },
		{ "max_size", "", 0, NULL },
		{ "measure", "on", 1, "on" },
		{ "measure", "1", 1, "on" },
		{ "measure", "true", 1, "on" },
		{ "measure", "no", 1, "off" },
		{ "measure", "ON", 0, NULL },
		{ "mode", "retune", 1, "retune" },
		{ "mode", "readonly", 1, "readonly" },
		{ "mode", "Normal", 0, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct num_case *n = &cases[i];
		struct pt_config c;
		struct pt_error err = PT_ERROR_INIT;
		int k, ret;

		init(&c);
		ret = pt_config_set(&c, n->name, n->value, PT_CONF_CMDLINE,
				    NULL, &err);
		for (k = 0; k < PT_CONF_NKEYS; k++)
			if (strcmp(pt_config_key_name(k), n->name) == 0)
				break;
		PT_REQUIRE(k < PT_CONF_NKEYS);
		if (n->ok) {
			if (!PT_CHECK_INT(ret, 0))
				printf("# %s = '%s': %s\n", n->name, n->value,
				       err.msg);
			else
				PT_CHECK_STR(value(&c, k), n->shown);
			PT_CHECK_INT(c.origin[k], PT_CONF_CMDLINE);
		} else {
			if (!PT_CHECK_INT(ret, PT_EINVAL))
				printf("# %s = '%s' accepted\n", n->name,
				       n->value);
			PT_CHECK(strncmp(err.msg, n->name,
					 strlen(n->name)) == 0);
			PT_CHECK_INT(c.origin[k], PT_CONF_DEFAULT);
		}
		pt_config_release(&c);
	}
}

/* What a value prints as reads back as the same value. */
PT_TEST(value_round_trip)
{
	static const double secs[] = { 0.1, 1.0 / 3, 86400 * 7, 1e-300,
				       123.456, 2.0 / 7 * 1000 };
	struct pt_config c, d;
	size_t i;

	init(&c);
	init(&d);
	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		c.budget_s = secs[i];
		PT_CHECK(pt_config_set(&d, "budget", value(&c, PT_CONF_BUDGET),
				       PT_CONF_CMDLINE, NULL, NULL) == 0);
		PT_CHECK(d.budget_s == c.budget_s);
	}
	c.max_size = ((uint64_t)1 << 60) - 1;
	PT_CHECK(pt_config_set(&d, "max_size", value(&c, PT_CONF_MAX_SIZE),
			       PT_CONF_CMDLINE, NULL, NULL) == 0);
	PT_CHECK(d.max_size == c.max_size);
	pt_config_release(&c);
	pt_config_release(&d);
}

PT_TEST(set_messages)
{
	struct pt_config c;
	struct pt_error err = PT_ERROR_INIT;

	init(&c);
	PT_CHECK_INT(pt_config_set(&c, "budget", "x", PT_CONF_CMDLINE,
				   "--budget", &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "--budget: 'x' is not a number of seconds");
	PT_CHECK_INT(pt_config_set(&c, "mode", "fast", PT_CONF_ENV,
				   "PROTUNE_MODE", &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "PROTUNE_MODE: 'fast' is not one of normal, "
		     "readonly, frozen, retune, off");
	PT_CHECK_INT(pt_config_set(&c, "colour", "x", PT_CONF_CMDLINE,
				   NULL, &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "unknown setting 'colour'");
	PT_CHECK_INT(pt_config_set(&c, "seed", "x", PT_CONF_REPO_FILE,
				   "f:7", &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "f:7: seed: 'x' is not an unsigned 64-bit "
		     "integer");
	/* a long or odd value is shortened and made printable */
	PT_CHECK_INT(pt_config_set(&c, "threads", "\x01"
				   "2345678901234567890123456789012345678901"
				   "234567890123456789012345", PT_CONF_CMDLINE,
				   "--threads", &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "--threads: '?2345678901234567890123456789012"
		     "3456789012345678901234567890...' is not a number of "
		     "threads from 0 to 1024");
	/* '-' for '_', where recorded */
	PT_REQUIRE(pt_config_set(&c, "decision-time", "2", PT_CONF_CMDLINE,
				 "--decision-time", NULL) == 0);
	PT_CHECK(c.decision_s == 2);
	PT_CHECK_STR(c.where[PT_CONF_DECISION_TIME], "--decision-time");
	PT_CHECK_INT(c.origin[PT_CONF_DECISION_TIME], PT_CONF_CMDLINE);
	pt_config_release(&c);
}

PT_TEST(print)
{
	struct pt_config c;
	struct pt_strbuf sb = PT_STRBUF_INIT;

	init(&c);
	PT_REQUIRE(pt_config_set(&c, "budget", "30", PT_CONF_ENV,
				 "PROTUNE_BUDGET", NULL) == 0);
	PT_REQUIRE(pt_config_print(&c, &sb) == 0);
	PT_CHECK_STR(sb.buf,
		"cache_dir     = /home/u/.cache/protune  # default\n"
		"store_dir     = protune                 # default\n"
		"budget        = 30                      # env PROTUNE_BUDGET\n"
		"decision_time = 0                       # default\n"
		"mode          = normal                  # default\n"
		"seed          = 0                       # default\n"
		"threads       = 0                       # default\n"
		"measure       = off                     # default\n"
		"log_file      =                         # default\n"
		"max_size      = 1G                      # default\n"
		"search        = mcts                    # default\n"
		"compile_limit = 300                     # default\n");
	pt_strbuf_release(&sb);
	pt_config_release(&c);
}

/* The layout: TMP/home (HOME), TMP/.protune.conf above the repository,
 * TMP/repo/.git, TMP/repo/.protune.conf, TMP/repo/a/b the start. */
static void make_tree(void)
{
	mkdirs("home/.config/protune");
	mkdirs("repo/.git");
	mkdirs("repo/a/b");
	write_file(".protune.conf", "threads = 99\n");
	write_file("home/.config/protune/protune.conf",
		   "budget = 10\nseed = 5\nmode = readonly\n"
		   "log_file = l.log\n");
	write_file("repo/.protune.conf",
		   "# repo\nbudget = 20\ncache_dir = .cache\n");
}

PT_TEST(load_precedence)
{
	char home[600], start[600];
	char *const env[] = { home, "PROTUNE_SEED=7", "PROTUNE_MODE=",
			      "PROTUNE_FOO=bar", "PROTUNE_LOG=debug.log",
			      "PATH=/bin", NULL };
	struct pt_config c;
	struct pt_error err = PT_ERROR_INIT;
	char want[700];

	make_tree();
	snprintf(home, sizeof(home), "HOME=%s", tpath("home"));
	snprintf(start, sizeof(start), "%s", tpath("repo/a/b"));
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	if (!PT_CHECK(pt_config_load(&c, env, start, &err) == 0))
		printf("# %s\n", err.msg);
	/* user file, then the repository's, then the environment */
	PT_CHECK(c.budget_s == 20);
	PT_CHECK_INT(c.origin[PT_CONF_BUDGET], PT_CONF_REPO_FILE);
	snprintf(want, sizeof(want), "%s:2", tpath("repo/.protune.conf"));
	PT_CHECK_STR(c.where[PT_CONF_BUDGET], want);
	PT_CHECK_STR(c.cache_dir, tpath("repo/.cache"));
	PT_CHECK_INT(c.mode, PT_MODE_READONLY);   /* PROTUNE_MODE= is unset */
	PT_CHECK_INT(c.origin[PT_CONF_MODE], PT_CONF_USER_FILE);
	PT_CHECK(c.seed == 7);
	PT_CHECK_INT(c.origin[PT_CONF_SEED], PT_CONF_ENV);
	PT_CHECK_STR(c.where[PT_CONF_SEED], "PROTUNE_SEED");
	/* PROTUNE_LOG, relative to the start directory */
	snprintf(want, sizeof(want), "%s/debug.log", start);
	PT_CHECK_STR(c.log_file, want);
	PT_CHECK_STR(c.where[PT_CONF_LOG_FILE], "PROTUNE_LOG");
	/* the file above .git is not read */
	PT_CHECK_INT(c.threads, 0);
	/* the command line wins, relative to the start directory */
	PT_REQUIRE(pt_config_set(&c, "cache_dir", "cc", PT_CONF_CMDLINE,
				 "--cache-dir", NULL) == 0);
	snprintf(want, sizeof(want), "%s/cc", start);
	PT_CHECK_STR(c.cache_dir, want);
	PT_CHECK_INT(c.origin[PT_CONF_CACHE_DIR], PT_CONF_CMDLINE);
	pt_config_release(&c);
}

PT_TEST(load_repo_search)
{
	char home[600], xdg[600];
	char *const env[] = { home, xdg, NULL };
	struct pt_config c;

	make_tree();
	snprintf(home, sizeof(home), "HOME=%s", tpath("nohome"));
	snprintf(xdg, sizeof(xdg), "XDG_CONFIG_HOME=%s", tpath("home/.config"));
	/* XDG_CONFIG_HOME is used; the start dir given with a trailing '/' */
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	PT_REQUIRE(pt_config_load(&c, env, tpath("repo/"), NULL) == 0);
	PT_CHECK(c.seed == 5 && c.budget_s == 20);
	pt_config_release(&c);
	/* a repository whose .git is a file (a worktree), no config in it:
	 * the search stops there */
	mkdirs("wt/sub");
	write_file("wt/.git", "gitdir: /elsewhere\n");
	write_file("home/.config/protune/protune.conf", "");
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	PT_REQUIRE(pt_config_load(&c, env, tpath("wt/sub"), NULL) == 0);
	PT_CHECK_INT(c.threads, 0);
	PT_CHECK_INT(c.origin[PT_CONF_THREADS], PT_CONF_DEFAULT);
	pt_config_release(&c);
	/* the nearest file wins, and a parent's is not read as well */
	write_file("repo/a/.protune.conf", "seed = 3\n");
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	PT_REQUIRE(pt_config_load(&c, env, tpath("repo/a/b"), NULL) == 0);
	PT_CHECK(c.seed == 3 && c.budget_s == 60);
	pt_config_release(&c);
}

PT_TEST(load_protune_config)
{
	char home[600], conf[600], start[600];
	char *const env[] = { home, conf, "PROTUNE_BUDGET=40", NULL };
	struct pt_config c;
	struct pt_error err = PT_ERROR_INIT;

	make_tree();
	write_file("repo/special.conf", "threads = 3\nbudget = 1\n");
	snprintf(home, sizeof(home), "HOME=%s", tpath("home"));
	snprintf(conf, sizeof(conf), "PROTUNE_CONFIG=../special.conf");
	snprintf(start, sizeof(start), "%s", tpath("repo/a"));
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	if (!PT_CHECK(pt_config_load(&c, env, start, &err) == 0))
		printf("# %s\n", err.msg);
	/* instead of the user's and the repository's files */
	PT_CHECK_INT(c.threads, 3);
	PT_CHECK_INT(c.origin[PT_CONF_THREADS], PT_CONF_CONFIG_FILE);
	PT_CHECK(c.seed == 0 && c.mode == PT_MODE_NORMAL);
	PT_CHECK(c.budget_s == 40);
	pt_config_release(&c);

	snprintf(conf, sizeof(conf), "PROTUNE_CONFIG=%s", tpath("missing"));
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	PT_CHECK_INT(pt_config_load(&c, env, start, &err), PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "PROTUNE_CONFIG") != NULL);
	PT_CHECK(c.budget_s == 60);
	pt_config_release(&c);
}

PT_TEST(load_errors)
{
	char home[600];
	char *const env[] = { home, "PROTUNE_MODE=fast", NULL };
	char *const env2[] = { home, NULL };
	struct pt_config c;
	struct pt_error err = PT_ERROR_INIT;
	char want[700];

	make_tree();
	snprintf(home, sizeof(home), "HOME=%s", tpath("home"));
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	PT_CHECK_INT(pt_config_load(&c, env, tpath("repo"), &err), PT_EINVAL);
	PT_CHECK_STR(err.msg, "PROTUNE_MODE: 'fast' is not one of normal, "
		     "readonly, frozen, retune, off");
	/* all or nothing: the files' settings were not kept */
	PT_CHECK(c.budget_s == 60 && c.seed == 0);
	PT_CHECK(c.base_dir == NULL);
	pt_config_release(&c);

	write_file("repo/.protune.conf", "budget = 1\nbudgte = 2\n");
	PT_REQUIRE(pt_config_init(&c, env2, NULL) == 0);
	PT_CHECK_INT(pt_config_load(&c, env2, tpath("repo"), &err),
		     PT_EFORMAT);
	snprintf(want, sizeof(want), "%s:2: unknown setting 'budgte'",
		 tpath("repo/.protune.conf"));
	PT_CHECK_STR(err.msg, want);
	PT_CHECK(c.budget_s == 60);
	pt_config_release(&c);

	/* a config file that is a directory cannot be read */
	unlink(tpath("repo/.protune.conf"));
	mkdirs("repo/.protune.conf");
	PT_REQUIRE(pt_config_init(&c, env2, NULL) == 0);
	PT_CHECK_INT(pt_config_load(&c, env2, tpath("repo"), &err), PT_EIO);
	PT_CHECK(strstr(err.msg, ".protune.conf") != NULL);
	pt_config_release(&c);
}

PT_TEST(load_relative_start)
{
	char home[600], cwd[600];
	char *const env[] = { home, "PROTUNE_CACHE_DIR=~/pc", NULL };
	struct pt_config c;

	make_tree();
	snprintf(home, sizeof(home), "HOME=%s", tpath("home"));
	PT_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	PT_REQUIRE(chdir(tpath("repo")) == 0);
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	PT_CHECK(pt_config_load(&c, env, "a/b", NULL) == 0);
	PT_CHECK_STR(c.base_dir, tpath("repo/a/b"));
	PT_CHECK(c.budget_s == 20);
	PT_CHECK_STR(c.cache_dir, tpath("home/pc"));
	pt_config_release(&c);
	PT_REQUIRE(pt_config_init(&c, env, NULL) == 0);
	PT_CHECK(pt_config_load(&c, env, NULL, NULL) == 0);
	PT_CHECK_STR(c.base_dir, tpath("repo"));
	PT_CHECK(c.budget_s == 20);
	pt_config_release(&c);
	PT_CHECK(chdir(cwd) == 0);
}

PT_SUITE(config,
	 { "defaults", defaults },
	 { "names", names },
	 { "parse_file", parse_file },
	 { "parse_errors", parse_errors },
	 { "parse_nul_and_home", parse_nul_and_home },
	 { "numbers", numbers },
	 { "value_round_trip", value_round_trip },
	 { "set_messages", set_messages },
	 { "print", print },
	 { "load_precedence", load_precedence },
	 { "load_repo_search", load_repo_search },
	 { "load_protune_config", load_protune_config },
	 { "load_errors", load_errors },
	 { "load_relative_start", load_relative_start });
