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
struct pt_model;
struct pt_space;
struct pt_space_work;
struct pt_space_state;
struct pt_strbuf;

/* A pipeline model of a data directory, with what drawing the schedules
 * of its space by seed needs; all owned. */
struct pt_train_space {
	struct pt_model *m;
	struct pt_space *sp;
	struct pt_space_work *w;
	struct pt_space_state *root, *st;
};

/* Load the model file `path` (hashed, its space built, at the root) into
 * *ts: 0, or 1 after saying why on stderr, naming the file (*ts then
 * holds what was built: pt_train_space_close() it either way). */
int pt_train_space_open(struct pt_train_space *ts, const char *path);
void pt_train_space_close(struct pt_train_space *ts);

/* Append to `text` the schedule `protune space MODEL --seed SEED` prints
 * (ts->st is overwritten). 0 or a PT_E* code. */
int pt_train_space_text(struct pt_train_space *ts, uint64_t seed,
			struct pt_strbuf *text);

/* The first 16 hex digits of the git blob id of text, NUL-terminated, as
 * samples.tsv records it; -1 on failure (libgit2 must be initialised). */
int pt_train_blob_id(const struct pt_strbuf *text, char out[17]);

/* `protune calibrate ARGS` (argv[0] is "calibrate"): its exit status. */
int pt_cmd_calibrate(int argc, char **argv);

#endif
