/* pt_genargs.h: deciding whether a command is a Halide generator run to
 * tune, and rewriting its arguments so that it runs with the ProTune
 * plugin (doc/protune-cc.1, "Which commands are tuned").
 *
 * Halide 14's generator command line (generate_filter_main, checked against
 * v14.0.0's src/Generator.cpp and libHalide14's usage text): the flags
 * -d -e -f -g -n -o -p -r -s -t each take the next argument as their value
 * (there are no boolean flags; -d takes 0 or 1), the last occurrence of a
 * flag wins; any other argument starting with '-' is an "Unknown flag"
 * error; every other argument is a generator parameter NAME=VALUE with
 * exactly one '=' and both sides non-empty (the last one of a NAME wins).
 * -p is a comma-separated list of shared libraries (empty entries skipped),
 * -s sets the default autoscheduler (when non-empty), -t is the watchdog
 * in seconds (default 900; read with std::stoi; 0 or less: none).
 *
 * A command is a generator run when every argument fits that grammar and
 * it has a non-empty `-o DIR` and a non-empty `-g NAME` or `-r NAME` (so
 * `cc -g -o x x.c` is not one: its -g takes "-o" as its name and then "x"
 * is neither a flag nor NAME=VALUE). Such a run is tuned unless (first
 * match wins):
 *   -r NAME without -g           runtime-only     PT_PASS_RUNTIME
 *   -e cpp_stub (only)           a stub           PT_PASS_CPP_STUB
 *   -s NAME with NAME != ProTune another autoscheduler
 *                                                 PT_PASS_AUTOSCHEDULER
 *   auto_schedule=false|False    asked for none   PT_PASS_NO_AUTOSCHEDULE
 * A command that is not a generator run is PT_PASS_NOT_GENERATOR. (A run
 * with both -r and -g builds the generator too, and is tuned; so is
 * `-e static_library,cpp_stub`. HL_EXTRA_OUTPUTS is not looked at.)
 *
 * The rewrite of a run to tune keeps every argument in order except:
 *   -p LIST    all -p lists are merged into one (Halide 14 keeps only the
 *              last -p), order kept, duplicates dropped, the plugin added
 *              at the end unless an entry already is it: the same file as
 *              plugin_path (stat: device and inode), or an entry whose
 *              file name (after the last '/') is plugin_path's or
 *              "libprotune_halide.so" (the user's entry is kept, ours
 *              dropped);
 *   -s NAME    dropped; `-s ProTune` is always passed;
 *   -t SECS    the user's value if it is larger than `timeout_s` or means
 *              no watchdog (0 or less, passed as 0), else `timeout_s`
 *              (0 from the caller also means none);
 *   auto_schedule=...  replaced by auto_schedule=true.
 * The result is argv[0] followed by `-p LIST -s ProTune -t N`, the
 * arguments kept, and `auto_schedule=true`.
 *
 * Captured for every generator run (also the ones passed through; all NULL
 * for PT_PASS_NOT_GENERATOR): the last non-empty value of each flag.
 *
 * Ownership: the caller owns the struct's strings and vector; release
 * with pt_genargs_release. No global state.
 */
#ifndef PROTUNE_PT_GENARGS_H
#define PROTUNE_PT_GENARGS_H

#include "protune/pt_error.h"
#include "protune/pt_strvec.h"

enum pt_gen_pass {
	PT_PASS_NONE,            /* tune it */
	PT_PASS_NOT_GENERATOR,
	PT_PASS_RUNTIME,
	PT_PASS_CPP_STUB,
	PT_PASS_AUTOSCHEDULER,
	PT_PASS_NO_AUTOSCHEDULE
};

struct pt_genargs {
	enum pt_gen_pass pass;   /* PT_PASS_NONE: a run to tune */
	char *generator;         /* -g NAME, or NULL */
	char *function;          /* -f NAME, else -n NAME, or NULL */
	char *target;            /* target=VALUE, or NULL */
	char *output_dir;        /* -o DIR, or NULL */
	char *scheduler;         /* the -s NAME given, or NULL */
	struct pt_strvec argv;   /* the rewritten command (PT_PASS_NONE) */
};

#define PT_GENARGS_INIT { PT_PASS_NONE, NULL, NULL, NULL, NULL, NULL, \
			  PT_STRVEC_INIT }

/* Analyse argv[0..argc-1] (argv[0] the program) and, for a run to tune,
 * rewrite it with `plugin_path` and `timeout_s` (>= 0; 0: no watchdog).
 * `*out` is overwritten (it need not be initialised). Errors, after which
 * `*out` is PT_GENARGS_INIT with pass PT_PASS_NOT_GENERATOR: PT_EINVAL for
 * a flag that lacks its value, and, in a run to tune, for a -t value
 * std::stoi rejects or an auto_schedule value other than true, True,
 * false, False (the generator would fail the same way; the caller passes
 * such a command through), or for a bad plugin_path (empty, or with a
 * comma) or timeout_s; PT_ENOMEM. */
int pt_genargs_parse(int argc, char *const *argv, const char *plugin_path,
		     int timeout_s, struct pt_genargs *out,
		     struct pt_error *err);
void pt_genargs_release(struct pt_genargs *g);

/* Replace "host" in the target= parameters of a generator command
 * (argv->v[0] the program, the grammar above; a flag's value is never a
 * parameter) by `host`, as pt_target_rewrite_host does (pt_hosttarget.h):
 * protune-cc does this on a processor Halide 14 misdetects. Returns how
 * many arguments changed, or PT_ENOMEM (argv then partly rewritten, still
 * valid). */
int pt_genargs_set_host(struct pt_strvec *argv, const char *host);

/* pt_genargs_set_host with this processor's explicit target when Halide 14
 * misdetects it (pt_host_target_broken), else nothing: what protune-cc and
 * `protune explain` do to every generator command. Returns as
 * pt_genargs_set_host (0 when there is nothing to do). */
int pt_genargs_fix_host(struct pt_strvec *argv);

/* The reason code of a pass-through, as shown in stats and logs:
 * "not-generator", "runtime-only", "cpp-stub", "explicit-autoscheduler",
 * "auto-schedule-false" ("" for PT_PASS_NONE). */
const char *pt_genargs_pass_name(enum pt_gen_pass p);

#endif
