/* pt_path.h: finding the program a wrapper runs.
 *
 * A compiler wrapper is often installed under the wrapped program's own name
 * earlier on PATH (ccache's "masquerade"). To avoid running itself forever,
 * the lookup skips every candidate that is the same file (device and inode,
 * after following symlinks) as `self`.
 */
#ifndef PROTUNE_PT_PATH_H
#define PROTUNE_PT_PATH_H

#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"

/* Find `name` as execvp would: a name containing '/' is used as it is
 * (it must exist and be executable); otherwise each directory of `path`
 * (a PATH string, NULL meaning the default "/usr/local/bin:/usr/bin:/bin";
 * an empty entry means the current directory) is tried in order, and the
 * first executable regular file that is not `self` (may be NULL) wins.
 * The result is appended to `out` (the caller's buffer).
 * Errors: PT_ENOTFOUND (message names the program and whether a candidate
 * was skipped because it was `self`), PT_EINVAL (empty name), PT_ENOMEM. */
int pt_path_find_program(const char *name, const char *path, const char *self,
			 struct pt_strbuf *out, struct pt_error *err);

#endif
