/* pt_cmd_tune.h: `protune tune` (doc/protune.1, doc/search.md).
 *
 * pt_cmd_tune_main() takes the command line from the command's name on
 * (argv[0] is "tune") and returns the exit status: 0, 1 for a failure
 * (message on stderr), 2 for a usage error; or -1 when argv[0] is not
 * "tune".
 */
#ifndef PROTUNE_PT_CMD_TUNE_H
#define PROTUNE_PT_CMD_TUNE_H

int pt_cmd_tune_main(int argc, char **argv);

#endif
