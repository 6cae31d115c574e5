/* pt_cmd_retune.h: `protune retune` (doc/protune.1): tune cached schedules
 * further with measurement, warm-started from their own schedules, and
 * replace one only when the new schedule is measured faster beyond noise.
 * pt_cmd_retune_main(argc, argv) runs argv[0] == "retune" and returns its
 * exit status (0; 1 when an entry failed or no entry matched; 2 for a
 * usage error), or -1 when argv[0] is another command. */
#ifndef PROTUNE_PT_CMD_RETUNE_H
#define PROTUNE_PT_CMD_RETUNE_H

int pt_cmd_retune_main(int argc, char **argv);

#endif
