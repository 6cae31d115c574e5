/* pt_cmd_cache.h: the `protune` commands that manage the cache and the
 * store. pt_cmd_cache_main(argc, argv) runs argv[0] (the command name)
 * and returns its exit status, or -1 when argv[0] is not one of them. */
#ifndef PROTUNE_PT_CMD_CACHE_H
#define PROTUNE_PT_CMD_CACHE_H

int pt_cmd_cache_main(int argc, char **argv);

#endif
