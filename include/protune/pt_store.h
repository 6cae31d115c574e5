/* pt_store.h: the git-tracked schedule store (doc/store.md).
 *
 * The store is a directory of the user's git repository (default
 * `protune/` at the root of the work tree found by libgit2's repository
 * discovery from a start directory) holding one schedule text file per key:
 *
 *     STORE/GENERATOR/KEYHEX.schedule
 *
 * GENERATOR is the model's generator name with every byte outside
 * [A-Za-z0-9_.-], and a leading '.', replaced by '_' ("_" when empty).
 * Only files named so are the store's: others in the directory (a README,
 * temporary ".tmp-*" files) are never listed or committed. The file is a
 * schedule text (doc/schedule-format.md) whose meta entries carry the
 * provenance (pt_store_provenance gives the source commit and dirtiness;
 * the caller adds generator, function, target, tuner, budget, seed, times,
 * machine: doc/store.md). Outside a git repository the store is off
 * (pt_store_open returns PT_ENOTFOUND).
 *
 * Writes are atomic: a temporary file in the same directory, fsync, rename.
 * `pt_store_commit` commits the store's new, changed and deleted files, and
 * nothing else, on the current branch through libgit2 (never a shell-out):
 * the commit's tree is HEAD's tree with only paths under the store
 * replaced, so changes the user staged elsewhere stay staged and
 * uncommitted; the repository's index is updated for the store's paths
 * only. The author and committer come from git config (user.name,
 * user.email); a missing identity is a clear error.
 *
 * Ownership: struct pt_store owns its libgit2 repository handle; strings
 * returned through pt_strbuf are the caller's. Not thread-safe; no global
 * state beyond libgit2's own initialisation, which pt_store_open and
 * pt_store_close pair (git_libgit2_init/shutdown are reference counted).
 *
 * Errors: 0 or a negative PT_E* with err filled: PT_ENOTFOUND (no
 * repository, no such key, nothing to commit), PT_EIO (a file or the
 * repository cannot be read or written; the message names the path),
 * PT_EINVAL (a store directory outside the work tree, a missing git
 * identity, a commit during a merge or rebase), PT_ENOMEM.
 */
#ifndef PROTUNE_PT_STORE_H
#define PROTUNE_PT_STORE_H

#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"

#define PT_STORE_DEFAULT_DIR "protune"
#define PT_STORE_SUFFIX ".schedule"

struct pt_store;

struct pt_store_opts {
	const char *start_dir; /* where discovery starts; NULL: the cwd */
	const char *dir;       /* NULL or "": PT_STORE_DEFAULT_DIR; relative:
				* to the work tree root; absolute: as is, but
				* it must lie inside the work tree */
};

int pt_store_open(const struct pt_store_opts *opts, struct pt_store **out,
		  struct pt_error *err);
void pt_store_close(struct pt_store *st);   /* NULL is fine */

const char *pt_store_root(const struct pt_store *st); /* work tree, no '/' at end */
const char *pt_store_dir(const struct pt_store *st);  /* absolute store path */

/* The path of a key's file (whether or not it exists). */
int pt_store_path(const struct pt_store *st, const char *generator,
		  const uint8_t key[16], struct pt_strbuf *path);

/* Read a key's file into `text` (appended) and its path into `path` (may
 * be NULL). With generator NULL, every generator directory is searched.
 * PT_ENOTFOUND when there is none, PT_EIO when it cannot be read. The text
 * is not parsed here. */
int pt_store_read(struct pt_store *st, const char *generator,
		  const uint8_t key[16], struct pt_strbuf *text,
		  struct pt_strbuf *path, struct pt_error *err);

/* Write a key's file atomically (creating directories), replacing it. */
int pt_store_write(struct pt_store *st, const char *generator,
		   const uint8_t key[16], const char *text, size_t len,
		   struct pt_error *err);

/* Remove a key's file; PT_ENOTFOUND when absent. */
int pt_store_remove(struct pt_store *st, const char *generator,
		    const uint8_t key[16], struct pt_error *err);

/* Every schedule file of the store, in path order: fn gets the path, the
 * generator directory's name and the key; returns nonzero to stop (that
 * value is returned). Files whose names are not KEYHEX.schedule are
 * skipped. */
typedef int pt_store_each_fn(void *ctx, const char *path,
			     const char *generator, const uint8_t key[16]);
int pt_store_each(struct pt_store *st, pt_store_each_fn *fn, void *ctx,
		  struct pt_error *err);

/* The source provenance of a schedule tuned now: HEAD's commit id in hex
 * ("" on an unborn branch) and whether the work tree differs from HEAD in
 * tracked files outside the store (untracked files ignored). */
int pt_store_provenance(struct pt_store *st, struct pt_strbuf *commit,
			int *dirty, struct pt_error *err);

/* Commit the store's changes (see above). `message` NULL or "": a message
 * generated from the changed files ("protune: N schedule(s) for GEN1,
 * GEN2", a blank line, and one line per added or modified file: generator,
 * function, target, 12-digit key prefix, read from the files' meta, "?"
 * when absent; "D PATH" per deletion). On success `summary` (may be NULL)
 * gets the commit id and one line per path committed, each "A PATH",
 * "M PATH" or "D PATH" (relative to the work tree root, sorted).
 * PT_ENOTFOUND when the store has no change. */
int pt_store_commit(struct pt_store *st, const char *message,
		    struct pt_strbuf *summary, struct pt_error *err);

/* The store's uncommitted changes, in the summary format above (without a
 * commit id); empty when clean. */
int pt_store_status(struct pt_store *st, struct pt_strbuf *out,
		    struct pt_error *err);

#endif
