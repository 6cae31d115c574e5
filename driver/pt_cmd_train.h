/* pt_cmd_train.h: the `protune` commands of the cost model: train (fit
 * and evaluate it from measured samples) and cost (predict one schedule).
 * pt_cmd_train_main(argc, argv) runs argv[0] (the command name) and
 * returns its exit status, or -1 when argv[0] is not one of them. */
#ifndef PROTUNE_PT_CMD_TRAIN_H
#define PROTUNE_PT_CMD_TRAIN_H

int pt_cmd_train_main(int argc, char **argv);

#endif
