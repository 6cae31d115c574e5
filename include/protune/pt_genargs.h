/* pt_genargs.h: deciding whether a command is a Halide generator run to
 * tune, and rewriting its arguments so that it runs with the ProTune
 * plugin (doc/protune-cc.1, "Which commands are tuned").
 *
 * A command is a generator run when its arguments have `-o DIR` and at
 * least one of `-g NAME`, `-e LIST` or a generator parameter `target=...`
 * (so `cc -g -o x x.c` is not one: its -g has no name). Such a run is tuned
 * unless:
 *   -r NAME                      runtime-only     PT_PASS_RUNTIME
 *   -e cpp_stub (only)           a stub           PT_PASS_CPP_STUB
 *   -s NAME with NAME != ProTune another autoscheduler
 *                                                 PT_PASS_AUTOSCHEDULER
 *   auto_schedule=false          asked for none   PT_PASS_NO_AUTOSCHEDULE
 * A command that is not a generator run is PT_PASS_NOT_GENERATOR.
 *
 * The rewrite of a run to tune keeps every argument in order except:
 *   -p LIST    all -p lists are merged into one (Halide 14 keeps only the
 *              last -p), order kept, duplicates dropped, the plugin added
 *              when no entry has the same file name and is the same file;
 *   -s NAME    dropped; `-s ProTune` is always passed;
 *   -t SECS    the largest of the user's value and `timeout_s` (0 from
 *              either side means no watchdog and wins);
 *   auto_schedule=...  replaced by auto_schedule=true.
 * The result is argv[0..] followed by `-p LIST -s ProTune -t N`, the
 * arguments kept, and `auto_schedule=true`.
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
 * rewrite it with `plugin_path` and `timeout_s` (>= 1). PT_EINVAL for a
 * flag that lacks its value (the generator would fail the same way; the
 * caller passes such a command through), PT_ENOMEM. */
int pt_genargs_parse(int argc, char *const *argv, const char *plugin_path,
		     int timeout_s, struct pt_genargs *out,
		     struct pt_error *err);
void pt_genargs_release(struct pt_genargs *g);

/* The reason code of a pass-through, as shown in stats and logs:
 * "not-generator", "runtime-only", "cpp-stub", "explicit-autoscheduler",
 * "auto-schedule-false" ("" for PT_PASS_NONE). */
const char *pt_genargs_pass_name(enum pt_gen_pass p);

#endif
