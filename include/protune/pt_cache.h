/* pt_cache.h: the local schedule cache, an LMDB environment in one
 * directory (doc/cache-format.md).
 *
 * Named databases:
 *   meta     format version and creation data
 *   sched    key (16 bytes) -> one tuned schedule with its model and
 *            provenance (struct pt_cache_entry)
 *   names    generator NUL function NUL target -> keys (for `explain`,
 *            warm starts and `ls`)
 *   stages   stage hash (16 bytes) -> (key, func, stage) of the entries
 *            that contain a stage with that hash (warm starts)
 *   samples  measured schedules for training a cost model
 *   stats    counters by name
 *   leases   key -> who is tuning it (pid, host, start)
 *   lru      used_at + key -> nothing (the eviction order)
 *   uses     key -> when a build last used it (not evicted with the
 *            entries: `protune gc --unreferenced` reads it)
 *
 * Every function that writes does so in one LMDB transaction: a crash at
 * any moment (kill -9 included) leaves the old state or the new one, never
 * a partial record. When the map is full the map size is doubled and the
 * transaction retried; a process that sees another one's larger map adopts
 * it. Past opts->max_bytes of entries, a put evicts the least recently used
 * entries (and their index records) in the same transaction.
 *
 * Concurrency: any number of processes and build trees may share one
 * cache directory on a local filesystem. A struct pt_cache is used by one
 * thread at a time. A process opens a given directory once at a time (an
 * LMDB rule: a second environment on the same files in one process breaks
 * its locks), and a child does not use a struct pt_cache its parent opened
 * before fork().
 *
 * Ownership: a struct pt_cache_entry (and pt_cache_sample) owns its strings
 * after a get (release with pt_cache_entry_release); entries passed to put
 * are borrowed. Callbacks get borrowed data valid during the call only,
 * and must not call pt_cache functions on the same cache.
 *
 * Errors: 0 or a negative PT_E* with err filled; PT_ENOTFOUND for a
 * missing key; PT_EFORMAT for a cache of another format version (the
 * message names the directory and says to run `protune clear`) or a
 * corrupt record or environment; PT_EIO for the filesystem (unreadable,
 * read-only); PT_EBUSY from pt_cache_lease_take; PT_EINVAL for a write to
 * a cache opened readonly. The caller decides what a failure means
 * (protune-cc warns once and goes on without the cache).
 */
#ifndef PROTUNE_PT_CACHE_H
#define PROTUNE_PT_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "protune/pt_error.h"

/* The layout and record format version, checked on open. */
#define PT_CACHE_FORMAT_VERSION 1

/* A hit updates an entry's used_at, and pt_cache_note_use a key's use,
 * only when it is older than this, so that most hits are read-only
 * transactions. */
#define PT_CACHE_TOUCH_S 3600

struct pt_cache;

struct pt_cache_opts {
	const char *dir;     /* the cache directory; created with its parents
			      * (mode 0777 & ~umask) when missing, unless
			      * readonly */
	uint64_t max_bytes;  /* size limit of the entries' records; 0: none */
	int readonly;        /* never write (MDB_RDONLY); gets do not touch */
	int nosync;          /* for benchmarks and tests: MDB_NOSYNC (a
			      * commit does not wait for the disk; a kill -9
			      * still loses nothing, a power cut may lose the
			      * last commits); pt_cache_close syncs */
};

/* One tuned schedule. */
struct pt_cache_entry {
	uint8_t key[16];
	char *generator;     /* labels from the model header ("" allowed) */
	char *function;
	char *target;
	char *model;         /* the model text */
	char *sched;         /* the schedule text (with its provenance meta) */
	int64_t tuned_at;    /* unix seconds */
	int64_t used_at;     /* unix seconds of the last hit (or tuned_at) */
	double budget_s;     /* the tuning budget it was given */
	double predicted_ms; /* < 0: unknown */
	double measured_ms;  /* < 0: unknown */
};

/* A measured schedule (training data). */
struct pt_cache_sample {
	uint8_t key[16];     /* the model it was measured for */
	char *sched;         /* the schedule text measured */
	double median_ms;    /* < 0: invalid (failed to compile or run) */
	int64_t at;          /* unix seconds */
};

struct pt_cache_lease {
	pid_t pid;
	char host[256];
	int64_t started;     /* unix seconds */
};

struct pt_cache_info {
	char path[4096];     /* the directory */
	uint64_t entries;
	uint64_t entry_bytes;/* the size of the entries' records */
	uint64_t samples;
	uint64_t map_bytes;  /* the current map size */
	uint64_t file_bytes; /* the data file's size */
};

int pt_cache_open(const struct pt_cache_opts *opts, struct pt_cache **out,
		  struct pt_error *err);
void pt_cache_close(struct pt_cache *c);   /* NULL is fine */
void pt_cache_entry_release(struct pt_cache_entry *e);
void pt_cache_sample_release(struct pt_cache_sample *s);

/* Look up a key. Fills *out (owned by the caller) or returns PT_ENOTFOUND.
 * Updates used_at when it is older than PT_CACHE_TOUCH_S (not readonly;
 * out->used_at is the value read; a failed update does not fail the get). */
int pt_cache_get(struct pt_cache *c, const uint8_t key[16],
		 struct pt_cache_entry *out, struct pt_error *err);

/* Insert or replace the entry for e->key, with its names and stages index
 * records (the stage hashes are computed from e->model; a model that does
 * not parse is PT_EFORMAT; an empty model indexes no stages), then evict
 * past max_bytes (never the entry just put). tuned_at <= 0 is stored as
 * now and used_at <= 0 as tuned_at. */
int pt_cache_put(struct pt_cache *c, const struct pt_cache_entry *e,
		 struct pt_error *err);

/* Remove an entry and its index records; PT_ENOTFOUND when absent. */
int pt_cache_del(struct pt_cache *c, const uint8_t key[16],
		 struct pt_error *err);

/* Call fn for every entry in key order (a read transaction); fn returns
 * nonzero to stop, and that value is returned. */
typedef int pt_cache_each_fn(void *ctx, const struct pt_cache_entry *e);
int pt_cache_each(struct pt_cache *c, pt_cache_each_fn *fn, void *ctx,
		  struct pt_error *err);

/* The keys stored for one generator, function and target, most recently
 * tuned first: *keys is malloc'ed (caller frees), *n its length (0 when
 * none). */
int pt_cache_similar(struct pt_cache *c, const char *generator,
		     const char *function, const char *target,
		     uint8_t (**keys)[16], size_t *n, struct pt_error *err);

/* An entry holding a stage whose hash is `stage_hash`: its key and the
 * stage's position. PT_ENOTFOUND when none. */
int pt_cache_stage(struct pt_cache *c, const uint8_t stage_hash[16],
		   uint8_t key[16], int *func, int *stage,
		   struct pt_error *err);

/* Training samples: append one; iterate over all (fn as above). */
int pt_cache_add_sample(struct pt_cache *c, const struct pt_cache_sample *s,
			struct pt_error *err);
typedef int pt_cache_sample_fn(void *ctx, const struct pt_cache_sample *s);
int pt_cache_each_sample(struct pt_cache *c, pt_cache_sample_fn *fn,
			 void *ctx, struct pt_error *err);

/* Statistics: add deltas to n named counters in one transaction; read all
 * (fn gets name and value, in name order); zero all. */
int pt_cache_stats_add(struct pt_cache *c, const char *const *names,
		       const int64_t *deltas, int n, struct pt_error *err);
typedef int pt_cache_stat_fn(void *ctx, const char *name, int64_t value);
int pt_cache_stats(struct pt_cache *c, pt_cache_stat_fn *fn, void *ctx,
		   struct pt_error *err);
int pt_cache_stats_zero(struct pt_cache *c, struct pt_error *err);

/* Tuning leases: one process tunes a key at a time. take records this
 * process (getpid(), gethostname(), now) as the holder and returns 0, or
 * returns PT_EBUSY with the live holder in *holder (may be NULL). A lease
 * whose holder is dead is broken and taken: on this host, the pid no
 * longer runs (or is another process: the lease also records the holder's
 * start time from /proc); on another host, it is older than
 * `stale_after_s` (<= 0: never). release removes the lease if this process
 * holds it, and is 0 otherwise. */
int pt_cache_lease_take(struct pt_cache *c, const uint8_t key[16],
			int64_t stale_after_s, struct pt_cache_lease *holder,
			struct pt_error *err);
int pt_cache_lease_release(struct pt_cache *c, const uint8_t key[16],
			   struct pt_error *err);

/* Garbage collection: evict least recently used entries until the entries
 * take at most max_bytes (0: no size rule), and remove entries not used
 * since `unused_since` (unix seconds; 0: no age rule). *removed (may be
 * NULL) gets the number of entries removed. */
int pt_cache_gc(struct pt_cache *c, uint64_t max_bytes, int64_t unused_since,
		uint64_t *removed, struct pt_error *err);

/* Uses: when a build last used a key, kept apart from the entries (size
 * and age eviction never forget a use; pt_cache_clear does).
 *
 * note_use records `now` (unix seconds) as the key's last use unless the
 * recorded one is less than PT_CACHE_TOUCH_S older (or newer): a read
 * transaction, and a write transaction at most once an hour per key.
 * PT_EINVAL on a cache opened readonly.
 *
 * last_use gives the recorded time in *t, or PT_ENOTFOUND when the key
 * was never noted (a readonly open of a cache written before the uses
 * database existed reads as empty). forget_use removes the record
 * (PT_ENOTFOUND when there is none).
 *
 * uses_since gives the time from which uses have been recorded in this
 * cache: the later of its creation, the creation of the uses database in
 * an older cache, and its last pt_cache_clear (now when none of these is
 * known). A key not noted since then may still have been used before. */
int pt_cache_note_use(struct pt_cache *c, const uint8_t key[16], int64_t now,
		      struct pt_error *err);
int pt_cache_last_use(struct pt_cache *c, const uint8_t key[16], int64_t *t,
		      struct pt_error *err);
int pt_cache_forget_use(struct pt_cache *c, const uint8_t key[16],
			struct pt_error *err);
int pt_cache_uses_since(struct pt_cache *c, int64_t *t, struct pt_error *err);

/* Remove every entry, sample, stat, lease and use (the format stays). */
int pt_cache_clear(struct pt_cache *c, struct pt_error *err);

int pt_cache_info(struct pt_cache *c, struct pt_cache_info *out,
		  struct pt_error *err);

/* Remove the cache directory's LMDB files (data.mdb, lock.mdb) without
 * opening them: the way out of a corrupt cache or another format version
 * (`protune clear --force`). PT_EIO names a file that could not be
 * removed; a missing directory is fine. */
int pt_cache_destroy(const char *dir, struct pt_error *err);

#endif
