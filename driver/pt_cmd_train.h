/* pt_cmd_train.h: the `protune` commands of the cost model: train (fit
 * and evaluate it from measured samples) and calibrate (measure samples on
 * this machine within a budget, then fit; pt_cmd_calibrate.c). `protune
 * cost` (one schedule's prediction) is in protune.c.
 * pt_cmd_train_main(argc, argv) runs argv[0] (the command name) and
 * returns its exit status, or -1 when argv[0] is not one of them. */
#ifndef PROTUNE_PT_CMD_TRAIN_H
#define PROTUNE_PT_CMD_TRAIN_H

#include <stdint.h>

int pt_cmd_train_main(int argc, char **argv);

/* For `protune calibrate` (pt_cmd_calibrate.c), which shares the data
 * directory's layout with `protune train`: */
struct pt_space;
struct pt_space_work;
struct pt_space_state;
struct pt_strbuf;

/* Append to `text` the schedule `protune space MODEL --seed SEED` prints
 * (the state in `st` is overwritten; root is the space's root state). 0 or
 * a PT_E* code. */
int pt_train_space_text(const struct pt_space *sp,
			const struct pt_space_state *root,
			struct pt_space_work *w, struct pt_space_state *st,
			uint64_t seed, struct pt_strbuf *text);

/* The first 16 hex digits of the git blob id of text, NUL-terminated, as
 * samples.tsv records it; -1 on failure (libgit2 must be initialised). */
int pt_train_blob_id(const struct pt_strbuf *text, char out[17]);

/* `protune calibrate ARGS` (argv[0] is "calibrate"): its exit status. */
int pt_cmd_calibrate(int argc, char **argv);

#endif
