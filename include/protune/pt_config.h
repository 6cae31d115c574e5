/* pt_config.h: protune's settings and where each one came from
 * (doc/configuration.md).
 *
 * Sources, later ones win:
 *   1. built-in defaults
 *   2. the user's file: $XDG_CONFIG_HOME/protune/protune.conf, or
 *      $HOME/.config/protune/protune.conf
 *   3. the repository's file: .protune.conf in the start directory or the
 *      nearest parent that has one, stopping at (and including) the first
 *      directory that holds a .git entry
 *   4. the file named by $PROTUNE_CONFIG (instead of 2 and 3 when set; an
 *      unreadable one is an error)
 *   5. environment variables PROTUNE_<NAME> (NAME the setting in capitals,
 *      except log_file: PROTUNE_LOG); an empty variable counts as unset,
 *      other PROTUNE_* variables are ignored
 *   6. command-line options --NAME=VALUE (pt_config_set with
 *      PT_CONF_CMDLINE)
 *
 * A file has lines `name = value`; blank lines and lines starting with '#'
 * are ignored; names are the settings below. The value is the rest of the
 * line with surrounding blanks trimmed (no quoting, no trailing comments).
 * A path value starting with "~/" has it replaced by $HOME/. A relative
 * cache_dir or log_file is taken relative to the file's directory (in a
 * file) or to the start directory (environment, command line); store_dir
 * is kept as given (pt_store resolves it against the repository root).
 * Errors name the file and line (or the variable or option): an unknown
 * name, a bad value.
 *
 * Settings:
 *   cache_dir      path  ($XDG_CACHE_HOME or $HOME/.cache)/protune
 *   store_dir      path  "protune" (relative to the repository root), or
 *                        "off" to turn the git store off
 *   budget         seconds (float > 0)  60: tuning time per miss
 *   decision_time  seconds (float >= 0) 0: the MCTS decision timeout, at
 *                  most this per root decision; 0: the budget spread
 *                  over the decisions left
 *   mode           normal|readonly|frozen|retune|off   normal
 *   seed           unsigned integer     0
 *   threads        integer >= 0         0: one per core
 *   measure        on|off (also true/false/1/0/yes/no)  off
 *   log_file       path, "" for none    ""
 *   max_size       bytes with optional K/M/G suffix (powers of 1024), 0 for
 *                  no limit            1G: the cache's size limit
 *   search         mcts|beam|greedy|random   mcts: the search a miss runs
 *   compile_limit  seconds (float >= 0) 300: how long protune-cc lets a
 *                  generator compile after its schedule was served before
 *                  it stops it and builds with the baseline schedule; 0:
 *                  no limit (the generator's own watchdog)
 *
 * Ownership: a struct pt_config owns its strings; pt_config_release frees
 * them. The environment is passed in (no getenv inside), so loading is
 * testable and has no hidden global state.
 */
#ifndef PROTUNE_PT_CONFIG_H
#define PROTUNE_PT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"

enum pt_mode {
	PT_MODE_NORMAL,
	PT_MODE_READONLY,
	PT_MODE_FROZEN,
	PT_MODE_RETUNE,
	PT_MODE_OFF
};

enum pt_conf_origin {
	PT_CONF_DEFAULT,
	PT_CONF_USER_FILE,
	PT_CONF_REPO_FILE,
	PT_CONF_CONFIG_FILE,   /* $PROTUNE_CONFIG */
	PT_CONF_ENV,
	PT_CONF_CMDLINE
};

enum pt_conf_key {
	PT_CONF_CACHE_DIR,
	PT_CONF_STORE_DIR,
	PT_CONF_BUDGET,
	PT_CONF_DECISION_TIME,
	PT_CONF_MODE,
	PT_CONF_SEED,
	PT_CONF_THREADS,
	PT_CONF_MEASURE,
	PT_CONF_LOG_FILE,
	PT_CONF_MAX_SIZE,
	PT_CONF_SEARCH,
	PT_CONF_COMPILE_LIMIT,
	PT_CONF_NKEYS
};

struct pt_config {
	char *cache_dir;
	char *store_dir;        /* NULL when "off" */
	double budget_s;
	double decision_s;
	enum pt_mode mode;
	uint64_t seed;
	int threads;
	int measure;
	char *log_file;         /* NULL when none */
	uint64_t max_size;
	int search;             /* enum pt_search_algo */
	double compile_limit_s; /* 0: none */
	/* Where each setting's value came from, and for files the path and
	 * line ("FILE:LINE"), for PT_CONF_ENV the variable's name. */
	enum pt_conf_origin origin[PT_CONF_NKEYS];
	char *where[PT_CONF_NKEYS];
	/* Private to pt_config.c (owned strings, may be NULL): $HOME from the
	 * environment, for "~/", and the absolute start directory of
	 * pt_config_load, against which pt_config_set makes relative paths
	 * absolute (NULL: the working directory at the time of the call). */
	char *home;
	char *base_dir;
};

/* Defaults for an environment (`envp`, NULL-terminated "NAME=VALUE", NULL
 * for an empty one; only XDG_CACHE_HOME and HOME are read here). PT_ENOMEM,
 * or PT_EINVAL when neither XDG_CACHE_HOME nor HOME is set to an absolute
 * path. On failure `c` holds nothing (pt_config_release is harmless). */
int pt_config_init(struct pt_config *c, char *const *envp,
		   struct pt_error *err);
void pt_config_release(struct pt_config *c);

/* Apply sources 2 to 5 for a process whose environment is `envp` and
 * working directory `start_dir` (NULL: the cwd; a relative one is taken
 * from the cwd), and remember start_dir for later pt_config_set calls.
 * All or nothing: on failure `c` is unchanged. A missing user or
 * repository file is skipped; a file that exists but cannot be read is
 * PT_EIO, a missing $PROTUNE_CONFIG file PT_ENOTFOUND; a bad line in a
 * file PT_EFORMAT ("FILE:LINE: ..."), a bad variable PT_EINVAL
 * ("PROTUNE_MODE: ..."). */
int pt_config_load(struct pt_config *c, char *const *envp,
		   const char *start_dir, struct pt_error *err);

/* Apply a config file's text (`name` is its path for messages and for
 * relative paths, `origin` the source it stands for). The parser
 * pt_config_load uses; fuzzed. All or nothing: on failure (PT_EFORMAT with
 * "NAME:LINE: ...", PT_ENOMEM, PT_EIO when the cwd is needed and
 * unavailable) `c` is unchanged. A NUL byte in the text is an error. */
int pt_config_parse(struct pt_config *c, const char *text, size_t len,
		    const char *name, enum pt_conf_origin origin,
		    struct pt_error *err);

/* Set one setting by name ("budget", also accepted with '-' for '_') from
 * text, recording its origin and `where` (may be NULL). PT_EINVAL with a
 * message naming the setting and the value, `c` unchanged. Messages start
 * with `where` ("--budget: 'x' is not a number of seconds", so for the
 * environment and the command line `where` should name the setting), or,
 * for a file origin or a NULL `where`, also with the setting's name
 * ("FILE:LINE: budget: ..."). */
int pt_config_set(struct pt_config *c, const char *name, const char *value,
		  enum pt_conf_origin origin, const char *where,
		  struct pt_error *err);

/* Settings by position: the name ("cache_dir") and the value as text. */
const char *pt_config_key_name(enum pt_conf_key k); /* NULL if invalid */
int pt_config_value(const struct pt_config *c, enum pt_conf_key k,
		    struct pt_strbuf *out);
const char *pt_config_origin_name(enum pt_conf_origin o); /* "default", ... */
const char *pt_mode_name(enum pt_mode m);

/* Every setting, one line each: "name = value  # origin [where]", names
 * and values padded to align the columns. */
int pt_config_print(const struct pt_config *c, struct pt_strbuf *out);

#endif
