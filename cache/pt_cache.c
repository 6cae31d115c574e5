/* pt_cache.c: the local schedule cache, an LMDB environment (see
 * pt_cache.h; the layout and the records are in doc/cache-format.md).
 *
 * Every operation that writes is a function of the shape write_fn, run by
 * run_write() in one write transaction; when LMDB runs out of map, the
 * transaction is aborted, the map doubled and the whole function run
 * again. Reads reuse one reset read transaction (mdb_txn_renew), so that a
 * hit costs no allocation in LMDB.
 */
#include "protune/pt_cache.h"
#include "protune/pt_model.h"
#include "protune/pt_strbuf.h"

#include <errno.h>
#include <lmdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define INITIAL_MAP ((size_t)32 << 20)
#define MAX_READERS 512
#define MAX_GROW 24          /* map doublings tried by one write */
#define ENTRY_VERSION 1
#define SAMPLE_VERSION 1
#define LEASE_VERSION 1
#define ENTRY_HEAD 44        /* the fixed part of an entry record */
#define USED_AT_OFF 12       /* where used_at sits in it */
#define STAGE_VAL 24         /* key, func, stage */
#define LRU_KEY 24           /* used_at (biased, big-endian), key */

enum { DB_META, DB_SCHED, DB_NAMES, DB_STAGES, DB_SAMPLES, DB_STATS,
       DB_LEASES, DB_LRU, DB_USES, NDBS };

static const struct {
	const char *name;
	unsigned flags;
} db_spec[NDBS] = {
	{ "meta", 0 },
	{ "sched", 0 },
	{ "names", MDB_DUPSORT | MDB_DUPFIXED },
	{ "stages", MDB_DUPSORT | MDB_DUPFIXED },
	{ "samples", 0 },
	{ "stats", 0 },
	{ "leases", 0 },
	{ "lru", 0 },
	{ "uses", 0 },
};

struct pt_cache {
	MDB_env *env;
	MDB_dbi dbi[NDBS];
	MDB_txn *rtxn;       /* a reset read transaction for reuse, or NULL */
	uint64_t max_bytes;
	int readonly, nosync, nolock;
	int have_uses;       /* 0: a read-only open of a cache written before
			      * the uses database existed (no uses) */
	int wrote;           /* a write committed (nosync: sync on close) */
	int mdb_rc;          /* the last LMDB error (MDB_MAP_FULL: retry) */
	char path[4096];
};

/* --- errors --------------------------------------------------------------- */

static int lmdb_error(struct pt_cache *c, int rc, const char *what,
		      struct pt_error *err)
{
	int code = PT_EIO;

	c->mdb_rc = rc;
	if (rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
	    rc == MDB_INVALID || rc == MDB_INCOMPATIBLE ||
	    rc == MDB_VERSION_MISMATCH || rc == MDB_BAD_VALSIZE)
		code = PT_EFORMAT;
	else if (rc == ENOMEM)
		code = PT_ENOMEM;
	return pt_error_set(err, code, "%s: %s: %s", c->path, what,
			    mdb_strerror(rc));
}

static int bad_record(struct pt_cache *c, const char *what,
		      const uint8_t key[16], const char *why,
		      struct pt_error *err)
{
	char hex[33];

	pt_hash_hex(key, hex);
	return pt_error_set(err, PT_EFORMAT, "%s: %s %s: bad record (%s)",
			    c->path, what, hex, why);
}

static int readonly_error(struct pt_cache *c, struct pt_error *err)
{
	return pt_error_set(err, PT_EINVAL, "%s: the cache is open read-only",
			    c->path);
}

/* --- byte order ----------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void put_be64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static uint64_t get_be64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t dbl_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double bits_dbl(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* A writer into a buffer of known size, and a strict reader. */
struct wr {
	unsigned char *p;
};

static void wr_int(struct wr *w, uint64_t v, int n)
{
	put_le(w->p, v, n);
	w->p += n;
}

static void wr_str(struct wr *w, const char *s, size_t len)
{
	wr_int(w, len, 4);
	memcpy(w->p, s, len);
	w->p += len;
}

struct rd {
	const unsigned char *p, *end;
	const char *bad;     /* why the record is bad, or NULL */
};

static void rd_init(struct rd *r, const MDB_val *v)
{
	r->p = v->mv_data;
	r->end = r->p + v->mv_size;
	r->bad = NULL;
}

static uint64_t rd_int(struct rd *r, int n)
{
	uint64_t v;

	if (r->bad)
		return 0;
	if (r->end - r->p < n) {
		r->bad = "truncated";
		return 0;
	}
	v = get_le(r->p, n);
	r->p += n;
	return v;
}

/* A length-prefixed string, copied (NUL-terminated) into *out when out is
 * not NULL. Embedded NULs are an error. */
static int rd_str(struct rd *r, char **out)
{
	size_t len = (size_t)rd_int(r, 4);

	if (r->bad)
		return 0;
	if ((size_t)(r->end - r->p) < len) {
		r->bad = "truncated string";
		return 0;
	}
	if (memchr(r->p, 0, len)) {
		r->bad = "NUL in a string";
		return 0;
	}
	if (out) {
		*out = malloc(len + 1);
		if (!*out)
			return PT_ENOMEM;
		memcpy(*out, r->p, len);
		(*out)[len] = '\0';
	}
	r->p += len;
	return 0;
}

static void rd_end(struct rd *r)
{
	if (!r->bad && r->p != r->end)
		r->bad = "trailing bytes";
}

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/* --- transactions --------------------------------------------------------- */

static void drop_rtxn(struct pt_cache *c)
{
	if (c->rtxn)
		mdb_txn_abort(c->rtxn);
	c->rtxn = NULL;
}

/* Another process grew the map past ours: adopt its size. */
static int adopt_map(struct pt_cache *c)
{
	drop_rtxn(c);
	return mdb_env_set_mapsize(c->env, 0);
}

static int txn_begin(struct pt_cache *c, unsigned flags, MDB_txn **txn,
		     struct pt_error *err)
{
	int rc, i;

	for (i = 0;; i++) {
		rc = mdb_txn_begin(c->env, NULL, flags, txn);
		if (rc != MDB_MAP_RESIZED || i == 3)
			break;
		rc = adopt_map(c);
		if (rc)
			break;
	}
	if (rc)
		return lmdb_error(c, rc, "cannot begin a transaction", err);
	return 0;
}

static int read_begin(struct pt_cache *c, MDB_txn **txn, struct pt_error *err)
{
	int rc;

	if (c->rtxn) {
		rc = mdb_txn_renew(c->rtxn);
		if (!rc) {
			*txn = c->rtxn;
			c->rtxn = NULL;
			return 0;
		}
		drop_rtxn(c);
		if (rc != MDB_MAP_RESIZED)
			return lmdb_error(c, rc, "cannot begin a transaction",
					  err);
		rc = adopt_map(c);
		if (rc)
			return lmdb_error(c, rc, "cannot adopt the map size",
					  err);
	}
	return txn_begin(c, MDB_RDONLY, txn, err);
}

static void read_end(struct pt_cache *c, MDB_txn *txn)
{
	if (c->rtxn) {
		mdb_txn_abort(txn);
		return;
	}
	mdb_txn_reset(txn);
	c->rtxn = txn;
}

static int grow_map(struct pt_cache *c, struct pt_error *err)
{
	MDB_envinfo ei;
	int rc;

	drop_rtxn(c);
	rc = mdb_env_info(c->env, &ei);
	if (!rc && ei.me_mapsize > SIZE_MAX / 2)
		rc = MDB_MAP_FULL;
	if (!rc)
		rc = mdb_env_set_mapsize(c->env, ei.me_mapsize * 2);
	if (rc)
		return lmdb_error(c, rc, "cannot grow the map", err);
	return 0;
}

typedef int write_fn(struct pt_cache *c, MDB_txn *txn, void *arg,
		     struct pt_error *err);

/* Run fn in one write transaction and commit it; retry the whole of it
 * with a doubled map while the map is full. The error struct is written
 * only when the final attempt fails. */
static int run_write(struct pt_cache *c, write_fn *fn, void *arg,
		     struct pt_error *err)
{
	struct pt_error e = PT_ERROR_INIT;
	MDB_txn *txn;
	int attempt, rc, ret;

	if (c->readonly)
		return readonly_error(c, err);
	for (attempt = 0;; attempt++) {
		c->mdb_rc = 0;
		ret = txn_begin(c, 0, &txn, &e);
		if (ret)
			break;
		ret = fn(c, txn, arg, &e);
		if (ret) {
			mdb_txn_abort(txn);
		} else {
			rc = mdb_txn_commit(txn);
			if (rc)
				ret = lmdb_error(c, rc, "cannot commit", &e);
			else
				c->wrote = 1;
		}
		if (!ret || c->mdb_rc != MDB_MAP_FULL || attempt == MAX_GROW)
			break;
		ret = grow_map(c, &e);
		if (ret)
			break;
	}
	if (ret && err)
		*err = e;
	return ret;
}

/* --- meta ----------------------------------------------------------------- */

static MDB_val str_val(const char *s)
{
	MDB_val v;

	v.mv_size = strlen(s);
	v.mv_data = (void *)s;
	return v;
}

/* A u64 counter of meta; absent reads as 0. */
static int meta_get_u64(struct pt_cache *c, MDB_txn *txn, const char *name,
			uint64_t *out, struct pt_error *err)
{
	MDB_val k = str_val(name), v;
	int rc = mdb_get(txn, c->dbi[DB_META], &k, &v);

	*out = 0;
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return lmdb_error(c, rc, "cannot read meta", err);
	if (v.mv_size != 8)
		return pt_error_set(err, PT_EFORMAT,
				    "%s: meta %s: bad record (size %zu)",
				    c->path, name, v.mv_size);
	*out = get_le(v.mv_data, 8);
	return 0;
}

static int meta_put_u64(struct pt_cache *c, MDB_txn *txn, const char *name,
			uint64_t val, struct pt_error *err)
{
	unsigned char buf[8];
	MDB_val k = str_val(name), v = { sizeof(buf), buf };
	int rc;

	put_le(buf, val, 8);
	rc = mdb_put(txn, c->dbi[DB_META], &k, &v, 0);
	if (rc)
		return lmdb_error(c, rc, "cannot write meta", err);
	return 0;
}

/* --- opening -------------------------------------------------------------- */

static int make_dirs(const char *path, struct pt_error *err)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	struct stat st;
	size_t i;
	int ret = 0;

	if (pt_strbuf_addstr(&sb, path))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	for (i = 1; i <= sb.len; i++) {
		char ch = sb.buf[i];

		if (ch != '/' && ch != '\0')
			continue;
		sb.buf[i] = '\0';
		if (mkdir(sb.buf, 0777) != 0 && errno != EEXIST) {
			ret = pt_error_set(err, PT_EIO,
					   "%s: cannot create directory: %s",
					   sb.buf, strerror(errno));
			break;
		}
		sb.buf[i] = ch;
	}
	if (!ret && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
		ret = pt_error_set(err, PT_EIO, "%s: not a directory", path);
	pt_strbuf_release(&sb);
	return ret;
}

static int open_error(struct pt_cache *c, int rc, struct pt_error *err)
{
	if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ||
	    rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND)
		return pt_error_set(err, PT_EFORMAT,
				    "%s: not a protune cache or corrupt (%s); "
				    "`protune clear --force` removes it",
				    c->path, mdb_strerror(rc));
	if (rc == ENOENT && c->readonly)
		return pt_error_set(err, PT_ENOTFOUND, "%s: no cache here",
				    c->path);
	if (rc == ENOMEM)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	return pt_error_set(err, PT_EIO, "%s: cannot open the cache: %s",
			    c->path, mdb_strerror(rc));
}

/* A data file shorter than the pages its meta page says are in use was
 * truncated: LMDB would fault (SIGBUS) reading the missing pages through
 * its map, so refuse it like a corrupt file. */
static int check_file_size(struct pt_cache *c, struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	MDB_envinfo ei;
	MDB_stat ms;
	struct stat st;
	int ret = 0;

	if (mdb_env_info(c->env, &ei) || mdb_env_stat(c->env, &ms))
		return 0;
	if (pt_strbuf_addf(&path, "%s/data.mdb", c->path))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	if (!stat(path.buf, &st) &&
	    (uint64_t)st.st_size <
	    ((uint64_t)ei.me_last_pgno + 1) * (uint64_t)ms.ms_psize)
		ret = pt_error_set(err, PT_EFORMAT,
				   "%s: not a protune cache or corrupt (data.mdb has %llu bytes, its pages need %llu); `protune clear --force` removes it",
				   c->path, (unsigned long long)st.st_size,
				   ((unsigned long long)ei.me_last_pgno + 1) *
				   ms.ms_psize);
	pt_strbuf_release(&path);
	return ret;
}

static int env_open(struct pt_cache *c, struct pt_error *err)
{
	unsigned flags = MDB_NOTLS;
	MDB_envinfo ei;
	int rc, dead;

	if (c->readonly)
		flags |= MDB_RDONLY;
	if (c->nosync)
		flags |= MDB_NOSYNC;
	for (;;) {
		rc = mdb_env_create(&c->env);
		if (rc) {
			c->env = NULL;
			return open_error(c, rc, err);
		}
		rc = mdb_env_set_maxdbs(c->env, NDBS);
		if (!rc)
			rc = mdb_env_set_maxreaders(c->env, MAX_READERS);
		if (!rc)
			rc = mdb_env_open(c->env, c->path,
					  flags | (c->nolock ? MDB_NOLOCK : 0),
					  0666);
		if (!rc)
			break;
		mdb_env_close(c->env);
		c->env = NULL;
		/* A reader that may not write the lock file reads without
		 * it (see doc/cache-format.md for what that costs). */
		if (c->readonly && !c->nolock &&
		    (rc == EACCES || rc == EROFS || rc == EPERM)) {
			c->nolock = 1;
			continue;
		}
		return open_error(c, rc, err);
	}
	if (check_file_size(c, err)) {
		mdb_env_close(c->env);
		c->env = NULL;
		return PT_EFORMAT;
	}
	if (c->readonly)
		return 0;
	/* Free the reader slots of processes killed mid-read. */
	(void)mdb_reader_check(c->env, &dead);
	rc = mdb_env_info(c->env, &ei);
	if (!rc && ei.me_mapsize < INITIAL_MAP)
		rc = mdb_env_set_mapsize(c->env, INITIAL_MAP);
	if (rc)
		return lmdb_error(c, rc, "cannot set the map size", err);
	return 0;
}

#define NEED_INIT 1

static int check_format(struct pt_cache *c, const MDB_val *v,
			struct pt_error *err)
{
	char want[16], got[32];
	const char *p = v->mv_data;
	size_t i;

	snprintf(want, sizeof(want), "%d", PT_CACHE_FORMAT_VERSION);
	if (v->mv_size == strlen(want) && !memcmp(p, want, v->mv_size))
		return 0;
	for (i = 0; i < v->mv_size && i < sizeof(got) - 1; i++)
		got[i] = (p[i] >= ' ' && p[i] <= '~') ? p[i] : '?';
	got[i] = '\0';
	return pt_error_set(err, PT_EFORMAT,
			    "%s: cache format version %s, this protune uses "
			    "version %s; run `protune clear --force` to remove "
			    "the old cache", c->path, got, want);
}

/* The uses database came after format 1's first release: a cache written
 * before it has none. A writer creates it and records in meta `uses_since`
 * when it began to note uses; NEED_INIT asks a reader for the write pass
 * (a read-only open goes on without it). */
static int open_uses(struct pt_cache *c, MDB_txn *txn, int write,
		     struct pt_error *err)
{
	int rc;

	rc = mdb_dbi_open(txn, db_spec[DB_USES].name, db_spec[DB_USES].flags,
			  &c->dbi[DB_USES]);
	if (rc == MDB_NOTFOUND && !write)
		return NEED_INIT;
	if (rc == MDB_NOTFOUND) {
		rc = mdb_dbi_open(txn, db_spec[DB_USES].name,
				  db_spec[DB_USES].flags | MDB_CREATE,
				  &c->dbi[DB_USES]);
		if (!rc)
			return meta_put_u64(c, txn, "uses_since",
					    (uint64_t)now_s(), err);
	}
	if (rc == MDB_INCOMPATIBLE)
		return pt_error_set(err, PT_EFORMAT, "%s: database uses is of "
				    "another kind", c->path);
	if (rc)
		return lmdb_error(c, rc, "cannot open a database", err);
	return 0;
}

/* Open the named databases in a read transaction (write == 0) or create
 * them with the format record (write == 1). NEED_INIT: not created yet. */
static int open_dbs_txn(struct pt_cache *c, int write, struct pt_error *err)
{
	MDB_txn *txn;
	MDB_dbi main_dbi;
	MDB_stat st;
	MDB_val k = str_val("format"), v;
	unsigned create = write ? MDB_CREATE : 0;
	char buf[32];
	int i, rc, ret;

	ret = txn_begin(c, write ? 0 : MDB_RDONLY, &txn, err);
	if (ret)
		return ret;
	rc = mdb_dbi_open(txn, db_spec[DB_META].name, create, &c->dbi[DB_META]);
	if (rc == MDB_NOTFOUND && !write) {
		ret = NEED_INIT;
		goto abort;
	}
	if (rc == MDB_INCOMPATIBLE) {
		ret = pt_error_set(err, PT_EFORMAT,
				   "%s: not a protune cache (no meta "
				   "database); `protune clear --force` "
				   "removes it", c->path);
		goto abort;
	}
	if (rc) {
		ret = lmdb_error(c, rc, "cannot open database meta", err);
		goto abort;
	}
	rc = mdb_get(txn, c->dbi[DB_META], &k, &v);
	if (!rc) {
		ret = check_format(c, &v, err);
		if (ret)
			goto abort;
	} else if (rc != MDB_NOTFOUND) {
		ret = lmdb_error(c, rc, "cannot read the format", err);
		goto abort;
	} else if (!write) {
		ret = NEED_INIT;
		goto abort;
	} else {
		/* A new cache: the main database must hold nothing but the
		 * meta database just created. */
		rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
		if (!rc)
			rc = mdb_stat(txn, main_dbi, &st);
		if (rc) {
			ret = lmdb_error(c, rc, "cannot read the main database",
					 err);
			goto abort;
		}
		if (st.ms_entries != 1) {
			ret = pt_error_set(err, PT_EFORMAT,
					   "%s: not a protune cache (no format "
					   "record); `protune clear --force` "
					   "removes it", c->path);
			goto abort;
		}
		snprintf(buf, sizeof(buf), "%d", PT_CACHE_FORMAT_VERSION);
		v = str_val(buf);
		rc = mdb_put(txn, c->dbi[DB_META], &k, &v, 0);
		if (!rc)
			ret = meta_put_u64(c, txn, "created", (uint64_t)now_s(),
					   err);
		if (rc)
			ret = lmdb_error(c, rc, "cannot write the format", err);
		if (ret)
			goto abort;
	}
	for (i = DB_META + 1; i < NDBS; i++) {
		if (i == DB_USES) {
			ret = open_uses(c, txn, write, err);
			if (ret == NEED_INIT && c->readonly) {
				ret = 0;
				continue;
			}
			if (ret)
				goto abort;
			c->have_uses = 1;
			continue;
		}
		rc = mdb_dbi_open(txn, db_spec[i].name,
				  db_spec[i].flags | create, &c->dbi[i]);
		if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
			ret = pt_error_set(err, PT_EFORMAT,
					   "%s: database %s is missing or of "
					   "another kind; `protune clear "
					   "--force` removes the cache",
					   c->path, db_spec[i].name);
			goto abort;
		}
		if (rc) {
			ret = lmdb_error(c, rc, "cannot open a database", err);
			goto abort;
		}
	}
	/* Committing keeps the handles, read transaction or not. */
	rc = mdb_txn_commit(txn);
	if (rc)
		return lmdb_error(c, rc, "cannot commit", err);
	return 0;
abort:
	mdb_txn_abort(txn);
	return ret;
}

static int open_dbs(struct pt_cache *c, struct pt_error *err)
{
	int ret = open_dbs_txn(c, 0, err);

	if (ret != NEED_INIT)
		return ret;
	if (c->readonly)
		return pt_error_set(err, PT_ENOTFOUND,
				    "%s: the cache was never written", c->path);
	return open_dbs_txn(c, 1, err);
}

static int readonly_check(struct pt_cache *c, struct pt_error *err)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	struct stat st;
	int ret = 0;

	if (pt_strbuf_addf(&sb, "%s/data.mdb", c->path))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	if (stat(c->path, &st) != 0 || stat(sb.buf, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			ret = pt_error_set(err, PT_ENOTFOUND,
					   "%s: no cache here", c->path);
		else
			ret = pt_error_set(err, PT_EIO, "%s: %s", sb.buf,
					   strerror(errno));
	}
	pt_strbuf_release(&sb);
	return ret;
}

int pt_cache_open(const struct pt_cache_opts *opts, struct pt_cache **out,
		  struct pt_error *err)
{
	struct pt_cache *c;
	int ret;

	*out = NULL;
	if (!opts || !opts->dir || !*opts->dir)
		return pt_error_set(err, PT_EINVAL, "cache: no directory");
	if (strlen(opts->dir) >= sizeof(c->path) - 16)
		return pt_error_set(err, PT_EINVAL, "cache: directory name "
				    "too long");
	c = calloc(1, sizeof(*c));
	if (!c)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	strcpy(c->path, opts->dir);
	c->max_bytes = opts->max_bytes;
	c->readonly = !!opts->readonly;
	c->nosync = !!opts->nosync;
	if (c->readonly)
		ret = readonly_check(c, err);
	else
		ret = make_dirs(c->path, err);
	if (!ret)
		ret = env_open(c, err);
	if (!ret)
		ret = open_dbs(c, err);
	if (ret) {
		pt_cache_close(c);
		return ret;
	}
	*out = c;
	return 0;
}

void pt_cache_close(struct pt_cache *c)
{
	if (!c)
		return;
	if (c->env) {
		drop_rtxn(c);
		if (c->nosync && c->wrote)
			(void)mdb_env_sync(c->env, 1);
		mdb_env_close(c->env);
	}
	free(c);
}

void pt_cache_entry_release(struct pt_cache_entry *e)
{
	if (!e)
		return;
	free(e->generator);
	free(e->function);
	free(e->target);
	free(e->model);
	free(e->sched);
	e->generator = e->function = e->target = e->model = e->sched = NULL;
}

void pt_cache_sample_release(struct pt_cache_sample *s)
{
	if (!s)
		return;
	free(s->sched);
	s->sched = NULL;
}

/* --- entry records -------------------------------------------------------- */

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static size_t entry_size(const struct pt_cache_entry *e)
{
	return ENTRY_HEAD + 5 * 4 + strlen(str_or_empty(e->generator)) +
		strlen(str_or_empty(e->function)) +
		strlen(str_or_empty(e->target)) +
		strlen(str_or_empty(e->model)) +
		strlen(str_or_empty(e->sched));
}

static void entry_write(unsigned char *p, const struct pt_cache_entry *e)
{
	struct wr w = { p };
	const char *s[5];
	int i;

	wr_int(&w, ENTRY_VERSION, 2);
	wr_int(&w, 0, 2);
	wr_int(&w, (uint64_t)e->tuned_at, 8);
	wr_int(&w, (uint64_t)e->used_at, 8);
	wr_int(&w, dbl_bits(e->budget_s), 8);
	wr_int(&w, dbl_bits(e->predicted_ms), 8);
	wr_int(&w, dbl_bits(e->measured_ms), 8);
	s[0] = e->generator;
	s[1] = e->function;
	s[2] = e->target;
	s[3] = e->model;
	s[4] = e->sched;
	for (i = 0; i < 5; i++)
		wr_str(&w, str_or_empty(s[i]), strlen(str_or_empty(s[i])));
}

/* The fixed part: tuned_at and used_at (either may be NULL). */
static int entry_head(struct pt_cache *c, const uint8_t key[16],
		      const MDB_val *v, int64_t *tuned, int64_t *used,
		      struct pt_error *err)
{
	struct rd r;
	uint64_t ver, flags, t, u;

	rd_init(&r, v);
	ver = rd_int(&r, 2);
	flags = rd_int(&r, 2);
	t = rd_int(&r, 8);
	u = rd_int(&r, 8);
	if (!r.bad && ver != ENTRY_VERSION)
		r.bad = "unknown record version";
	if (!r.bad && flags)
		r.bad = "unknown flags";
	if (!r.bad && v->mv_size < ENTRY_HEAD + 5 * 4)
		r.bad = "truncated";
	if (r.bad)
		return bad_record(c, "entry", key, r.bad, err);
	if (tuned)
		*tuned = (int64_t)t;
	if (used)
		*used = (int64_t)u;
	return 0;
}

static int entry_decode(struct pt_cache *c, const uint8_t key[16],
			const MDB_val *v, struct pt_cache_entry *out,
			struct pt_error *err)
{
	struct pt_cache_entry e;
	struct rd r;
	char **s[5];
	int i, ret = 0;

	memset(&e, 0, sizeof(e));
	ret = entry_head(c, key, v, NULL, NULL, err);
	if (ret)
		return ret;
	rd_init(&r, v);
	rd_int(&r, 4);
	e.tuned_at = (int64_t)rd_int(&r, 8);
	e.used_at = (int64_t)rd_int(&r, 8);
	e.budget_s = bits_dbl(rd_int(&r, 8));
	e.predicted_ms = bits_dbl(rd_int(&r, 8));
	e.measured_ms = bits_dbl(rd_int(&r, 8));
	s[0] = &e.generator;
	s[1] = &e.function;
	s[2] = &e.target;
	s[3] = &e.model;
	s[4] = &e.sched;
	for (i = 0; i < 5 && !ret && !r.bad; i++)
		ret = rd_str(&r, s[i]);
	rd_end(&r);
	if (!ret && r.bad)
		ret = bad_record(c, "entry", key, r.bad, err);
	else if (ret)
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
	if (ret) {
		pt_cache_entry_release(&e);
		return ret;
	}
	memcpy(e.key, key, 16);
	*out = e;
	return 0;
}

/* --- index records -------------------------------------------------------- */

/* The names key of an entry: generator NUL function NUL target. 1 when it
 * is too long for an LMDB key (such an entry is not indexed). */
static int names_key(struct pt_cache *c, const char *g, const char *f,
		     const char *t, struct pt_strbuf *out, struct pt_error *err)
{
	g = str_or_empty(g);
	f = str_or_empty(f);
	t = str_or_empty(t);
	if (pt_strbuf_add(out, g, strlen(g) + 1) ||
	    pt_strbuf_add(out, f, strlen(f) + 1) || pt_strbuf_addstr(out, t))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	if (out->len > (size_t)mdb_env_get_maxkeysize(c->env))
		return 1;
	return 0;
}

static void lru_key(unsigned char out[LRU_KEY], int64_t used,
		    const uint8_t key[16])
{
	put_be64(out, (uint64_t)used ^ ((uint64_t)1 << 63));
	memcpy(out + 8, key, 16);
}

struct stage_ref {
	uint8_t hash[16];
	uint32_t func, stage;
};

/* The stage hashes of a model text: *refs malloc'ed, *n entries (none for
 * an empty model). */
static int model_stages(struct pt_cache *c, const char *model,
			struct stage_ref **refs, size_t *n,
			struct pt_error *err)
{
	struct pt_model *m = NULL;
	int i, ret;

	*refs = NULL;
	*n = 0;
	if (!model || !*model)
		return 0;
	ret = pt_model_parse(model, strlen(model), "<cache entry model>", &m,
			     err);
	if (ret)
		return ret;
	ret = pt_model_hash(m);
	if (ret) {
		pt_error_set(err, ret, "%s: cannot hash the model: %s",
			     c->path, pt_strerror(ret));
		goto out;
	}
	if (m->nstages > 0) {
		*refs = calloc((size_t)m->nstages, sizeof(**refs));
		if (!*refs) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (i = 0; i < m->nstages; i++) {
		memcpy((*refs)[i].hash, m->stages[i].hash, 16);
		(*refs)[i].func = (uint32_t)m->stages[i].func;
		(*refs)[i].stage = (uint32_t)m->stages[i].index;
	}
	*n = (size_t)m->nstages;
out:
	pt_model_free(m);
	return ret;
}

static void stage_val(unsigned char out[STAGE_VAL], const uint8_t key[16],
		      const struct stage_ref *r)
{
	memcpy(out, key, 16);
	put_le(out + 16, r->func, 4);
	put_le(out + 20, r->stage, 4);
}

/* Add (add = 1) or remove the lru record of an entry last used at
 * `used`. Removal ignores a record that is not there. */
static int index_lru(struct pt_cache *c, MDB_txn *txn, int add,
		     const uint8_t key[16], int64_t used, struct pt_error *err)
{
	unsigned char lk[LRU_KEY];
	MDB_val k = { sizeof(lk), lk }, v = { 0, "" };
	int rc;

	lru_key(lk, used, key);
	rc = add ? mdb_put(txn, c->dbi[DB_LRU], &k, &v, 0) :
		mdb_del(txn, c->dbi[DB_LRU], &k, NULL);
	if (rc && rc != MDB_NOTFOUND)
		return lmdb_error(c, rc, "cannot write an index record", err);
	return 0;
}

/* Add (add = 1) or remove all the index records of an entry. Removal
 * ignores records that are not there. */
static int index_entry(struct pt_cache *c, MDB_txn *txn, int add,
		       const uint8_t key[16], const struct pt_cache_entry *e,
		       const struct stage_ref *refs, size_t nrefs,
		       struct pt_error *err)
{
	struct pt_strbuf nk = PT_STRBUF_INIT;
	unsigned char sv[STAGE_VAL];
	MDB_val k, v;
	size_t i;
	int rc = 0, ret;

	ret = names_key(c, e->generator, e->function, e->target, &nk, err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		k.mv_size = nk.len;
		k.mv_data = nk.buf;
		v.mv_size = 16;
		v.mv_data = (void *)key;
		rc = add ? mdb_put(txn, c->dbi[DB_NAMES], &k, &v, 0) :
			mdb_del(txn, c->dbi[DB_NAMES], &k, &v);
	}
	pt_strbuf_release(&nk);
	for (i = 0; i < nrefs && (!rc || rc == MDB_NOTFOUND); i++) {
		k.mv_size = 16;
		k.mv_data = (void *)refs[i].hash;
		stage_val(sv, key, &refs[i]);
		v.mv_size = sizeof(sv);
		v.mv_data = sv;
		rc = add ? mdb_put(txn, c->dbi[DB_STAGES], &k, &v, 0) :
			mdb_del(txn, c->dbi[DB_STAGES], &k, &v);
	}
	if (rc && rc != MDB_NOTFOUND)
		return lmdb_error(c, rc, "cannot write an index record", err);
	return index_lru(c, txn, add, key, e->used_at, err);
}

/* Remove the entry of `key` and its index records, subtracting its size
 * from *total. PT_ENOTFOUND when absent. An entry whose record does not
 * decode is removed all the same (its index records may stay behind;
 * lookups skip them). */
static int remove_entry(struct pt_cache *c, MDB_txn *txn,
			const uint8_t key[16], uint64_t *total,
			struct pt_error *err)
{
	struct pt_cache_entry e;
	struct stage_ref *refs = NULL;
	size_t nrefs = 0, size;
	MDB_val k = { 16, (void *)key }, v;
	int rc, ret, decoded;

	rc = mdb_get(txn, c->dbi[DB_SCHED], &k, &v);
	if (rc == MDB_NOTFOUND) {
		char hex[33];

		pt_hash_hex(key, hex);
		return pt_error_set(err, PT_ENOTFOUND, "%s: no entry %s",
				    c->path, hex);
	}
	if (rc)
		return lmdb_error(c, rc, "cannot read an entry", err);
	size = v.mv_size;
	ret = entry_decode(c, key, &v, &e, NULL);
	if (ret == PT_ENOMEM)
		return pt_error_set(err, ret, "out of memory");
	decoded = !ret;
	/* A model that no longer parses leaves its stage records. */
	if (decoded && model_stages(c, e.model, &refs, &nrefs, NULL))
		nrefs = 0;
	ret = 0;
	if (decoded)
		ret = index_entry(c, txn, 0, key, &e, refs, nrefs, err);
	if (!ret) {
		rc = mdb_del(txn, c->dbi[DB_SCHED], &k, NULL);
		if (rc)
			ret = lmdb_error(c, rc, "cannot delete an entry", err);
	}
	if (!ret)
		*total = *total > size ? *total - size : 0;
	free(refs);
	if (decoded)
		pt_cache_entry_release(&e);
	return ret;
}

/* Evict entries in used_at order, oldest first, while they take more than
 * max_bytes (0: no size rule) or were last used before unused_since (0: no
 * age rule). `keep` (may be NULL) is never evicted. */
static int evict(struct pt_cache *c, MDB_txn *txn, uint64_t max_bytes,
		 int64_t unused_since, const uint8_t *keep, uint64_t *total,
		 uint64_t *removed, struct pt_error *err)
{
	MDB_cursor *cur;
	unsigned char lk[LRU_KEY];
	MDB_val k, v;
	int rc, ret = 0, first = 1;

	rc = mdb_cursor_open(txn, c->dbi[DB_LRU], &cur);
	if (rc)
		return lmdb_error(c, rc, "cannot open a cursor", err);
	for (;;) {
		int64_t used, rec_used;
		MDB_val sk, sv;

		if (first) {
			rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
			first = 0;
		} else {
			/* Our deletions move the cursor: find our place
			 * again, past the record just handled. */
			k.mv_size = sizeof(lk);
			k.mv_data = lk;
			rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
			if (!rc && k.mv_size == sizeof(lk) &&
			    !memcmp(k.mv_data, lk, sizeof(lk)))
				rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		}
		if (rc == MDB_NOTFOUND)
			break;
		if (rc) {
			ret = lmdb_error(c, rc, "cannot read the lru index",
					 err);
			break;
		}
		if (k.mv_size != sizeof(lk)) {
			rc = mdb_cursor_del(cur, 0);
			if (rc) {
				ret = lmdb_error(c, rc, "cannot delete", err);
				break;
			}
			first = 1;
			continue;
		}
		memcpy(lk, k.mv_data, sizeof(lk));
		used = (int64_t)(get_be64(lk) ^ ((uint64_t)1 << 63));
		if (!(max_bytes && *total > max_bytes) &&
		    !(unused_since && used < unused_since))
			break;
		if (keep && !memcmp(lk + 8, keep, 16))
			continue;
		sk.mv_size = 16;
		sk.mv_data = lk + 8;
		rc = mdb_get(txn, c->dbi[DB_SCHED], &sk, &sv);
		if (rc && rc != MDB_NOTFOUND) {
			ret = lmdb_error(c, rc, "cannot read an entry", err);
			break;
		}
		if (rc || entry_head(c, lk + 8, &sv, NULL, &rec_used, NULL) ||
		    rec_used != used) {
			/* A stale index record: drop it. */
			k.mv_size = sizeof(lk);
			k.mv_data = lk;
			rc = mdb_del(txn, c->dbi[DB_LRU], &k, NULL);
			if (rc) {
				ret = lmdb_error(c, rc, "cannot delete", err);
				break;
			}
			if (!mdb_get(txn, c->dbi[DB_SCHED], &sk, &sv) &&
			    entry_head(c, lk + 8, &sv, NULL, NULL, NULL)) {
				/* An undecodable entry goes too. */
				ret = remove_entry(c, txn, lk + 8, total, err);
				if (ret)
					break;
				if (removed)
					(*removed)++;
			}
			continue;
		}
		ret = remove_entry(c, txn, lk + 8, total, err);
		if (ret)
			break;
		if (removed)
			(*removed)++;
	}
	mdb_cursor_close(cur);
	return ret;
}

/* --- get, put, del -------------------------------------------------------- */

struct touch_arg {
	const uint8_t *key;
	int64_t now;
};

static int touch_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		     struct pt_error *err)
{
	struct touch_arg *a = arg;
	unsigned char *copy;
	MDB_val k = { 16, (void *)a->key }, v;
	int64_t used;
	int rc, ret;

	rc = mdb_get(txn, c->dbi[DB_SCHED], &k, &v);
	if (rc)
		return lmdb_error(c, rc, "cannot read an entry", err);
	ret = entry_head(c, a->key, &v, NULL, &used, err);
	if (ret || a->now - used < PT_CACHE_TOUCH_S)
		return ret;  /* another process touched it */
	copy = malloc(v.mv_size);
	if (!copy)
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	memcpy(copy, v.mv_data, v.mv_size);
	put_le(copy + USED_AT_OFF, (uint64_t)a->now, 8);
	v.mv_data = copy;
	ret = index_lru(c, txn, 0, a->key, used, err);
	if (!ret)
		ret = index_lru(c, txn, 1, a->key, a->now, err);
	rc = ret ? 0 : mdb_put(txn, c->dbi[DB_SCHED], &k, &v, 0);
	if (rc)
		ret = lmdb_error(c, rc, "cannot write an entry", err);
	free(copy);
	return ret;
}

int pt_cache_get(struct pt_cache *c, const uint8_t key[16],
		 struct pt_cache_entry *out, struct pt_error *err)
{
	MDB_txn *txn;
	MDB_val k = { 16, (void *)key }, v;
	int rc, ret;

	ret = read_begin(c, &txn, err);
	if (ret)
		return ret;
	rc = mdb_get(txn, c->dbi[DB_SCHED], &k, &v);
	if (rc == MDB_NOTFOUND) {
		char hex[33];

		pt_hash_hex(key, hex);
		ret = pt_error_set(err, PT_ENOTFOUND, "%s: no entry %s",
				   c->path, hex);
	} else if (rc) {
		ret = lmdb_error(c, rc, "cannot read an entry", err);
	} else {
		ret = entry_decode(c, key, &v, out, err);
	}
	read_end(c, txn);
	if (!ret && !c->readonly &&
	    now_s() - out->used_at >= PT_CACHE_TOUCH_S) {
		struct touch_arg a = { key, now_s() };

		/* A hit stays a hit when the touch fails. */
		(void)run_write(c, touch_txn, &a, NULL);
	}
	return ret;
}

struct put_arg {
	const struct pt_cache_entry *e;
	struct pt_cache_entry rec;   /* e with the times settled */
	struct stage_ref *refs;
	size_t nrefs;
};

static int put_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		   struct pt_error *err)
{
	struct put_arg *a = arg;
	const uint8_t *key = a->e->key;
	MDB_val k = { 16, (void *)key }, v;
	uint64_t total;
	int rc, ret;

	ret = meta_get_u64(c, txn, "entry_bytes", &total, err);
	if (ret)
		return ret;
	ret = remove_entry(c, txn, key, &total, err);
	if (ret && ret != PT_ENOTFOUND)
		return ret;
	v.mv_size = entry_size(&a->rec);
	rc = mdb_put(txn, c->dbi[DB_SCHED], &k, &v, MDB_RESERVE);
	if (rc)
		return lmdb_error(c, rc, "cannot write an entry", err);
	entry_write(v.mv_data, &a->rec);
	total += v.mv_size;
	ret = index_entry(c, txn, 1, key, &a->rec, a->refs, a->nrefs, err);
	if (!ret && c->max_bytes && total > c->max_bytes)
		ret = evict(c, txn, c->max_bytes, 0, key, &total, NULL, err);
	if (!ret)
		ret = meta_put_u64(c, txn, "entry_bytes", total, err);
	return ret;
}

int pt_cache_put(struct pt_cache *c, const struct pt_cache_entry *e,
		 struct pt_error *err)
{
	struct put_arg a;
	int ret;

	if (c->readonly)
		return readonly_error(c, err);
	memset(&a, 0, sizeof(a));
	a.e = e;
	a.rec = *e;
	if (a.rec.tuned_at <= 0)
		a.rec.tuned_at = now_s();
	if (a.rec.used_at <= 0)
		a.rec.used_at = a.rec.tuned_at;
	/* Parse outside the transaction, to keep the writer lock short. */
	ret = model_stages(c, e->model, &a.refs, &a.nrefs, err);
	if (!ret)
		ret = run_write(c, put_txn, &a, err);
	free(a.refs);
	return ret;
}

static int del_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		   struct pt_error *err)
{
	uint64_t total;
	int ret;

	ret = meta_get_u64(c, txn, "entry_bytes", &total, err);
	if (!ret)
		ret = remove_entry(c, txn, arg, &total, err);
	if (!ret)
		ret = meta_put_u64(c, txn, "entry_bytes", total, err);
	return ret;
}

int pt_cache_del(struct pt_cache *c, const uint8_t key[16],
		 struct pt_error *err)
{
	return run_write(c, del_txn, (void *)key, err);
}

/* --- iteration and lookups ------------------------------------------------ */

/* One record of a scan: 0 to go on; anything else stops the scan, which
 * returns it. */
typedef int scan_fn(struct pt_cache *c, MDB_txn *txn, const MDB_val *k,
		    const MDB_val *v, void *arg, struct pt_error *err);

/* Run fn on the records of database db in a read transaction: on all of
 * them in order, or with key, on those under it (a database of duplicate
 * keys). `what` says what could not be read when the cursor fails. */
static int scan(struct pt_cache *c, int db, const MDB_val *key, scan_fn *fn,
		void *arg, const char *what, struct pt_error *err)
{
	MDB_cursor_op first = MDB_FIRST, next = MDB_NEXT;
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k = { 0, NULL }, v;
	int rc, ret;

	if (key) {
		k = *key;
		first = MDB_SET;
		next = MDB_NEXT_DUP;
	}
	ret = read_begin(c, &txn, err);
	if (ret)
		return ret;
	rc = mdb_cursor_open(txn, c->dbi[db], &cur);
	if (rc) {
		ret = lmdb_error(c, rc, "cannot open a cursor", err);
		goto out;
	}
	for (rc = mdb_cursor_get(cur, &k, &v, first); !rc;
	     rc = mdb_cursor_get(cur, &k, &v, next)) {
		ret = fn(c, txn, &k, &v, arg, err);
		if (ret)
			break;
	}
	if (!ret && rc && rc != MDB_NOTFOUND)
		ret = lmdb_error(c, rc, what, err);
	mdb_cursor_close(cur);
out:
	read_end(c, txn);
	return ret;
}

struct each_arg {
	pt_cache_each_fn *fn;
	void *ctx;
};

static int each_row(struct pt_cache *c, MDB_txn *txn, const MDB_val *k,
		    const MDB_val *v, void *arg, struct pt_error *err)
{
	struct each_arg *a = arg;
	struct pt_cache_entry e;
	int ret;

	(void)txn;
	if (k->mv_size != 16)
		return pt_error_set(err, PT_EFORMAT,
				    "%s: an entry key of %zu bytes", c->path,
				    k->mv_size);
	ret = entry_decode(c, k->mv_data, v, &e, err);
	if (ret)
		return ret;
	ret = a->fn(a->ctx, &e);
	pt_cache_entry_release(&e);
	return ret;
}

int pt_cache_each(struct pt_cache *c, pt_cache_each_fn *fn, void *ctx,
		  struct pt_error *err)
{
	struct each_arg a = { fn, ctx };

	return scan(c, DB_SCHED, NULL, each_row, &a,
		    "cannot read the entries", err);
}

struct similar {
	uint8_t key[16];
	int64_t tuned_at;
};

static int similar_cmp(const void *pa, const void *pb)
{
	const struct similar *a = pa, *b = pb;

	if (a->tuned_at != b->tuned_at)
		return a->tuned_at > b->tuned_at ? -1 : 1;
	return memcmp(a->key, b->key, 16);
}

int pt_cache_similar(struct pt_cache *c, const char *generator,
		     const char *function, const char *target,
		     uint8_t (**keys)[16], size_t *n, struct pt_error *err)
{
	struct pt_strbuf nk = PT_STRBUF_INIT;
	struct similar *list = NULL, *grown;
	size_t len = 0, alloc = 0, i;
	MDB_txn *txn;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc, ret;

	*keys = NULL;
	*n = 0;
	ret = names_key(c, generator, function, target, &nk, err);
	if (ret) {
		pt_strbuf_release(&nk);
		return ret < 0 ? ret : 0;
	}
	ret = read_begin(c, &txn, err);
	if (ret) {
		pt_strbuf_release(&nk);
		return ret;
	}
	rc = mdb_cursor_open(txn, c->dbi[DB_NAMES], &cur);
	k.mv_size = nk.len;
	k.mv_data = nk.buf;
	if (!rc)
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET);
	for (; !rc; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP)) {
		MDB_val sk, sv;
		int64_t tuned;

		if (v.mv_size != 16)
			continue;
		sk = v;
		if (mdb_get(txn, c->dbi[DB_SCHED], &sk, &sv) ||
		    entry_head(c, v.mv_data, &sv, &tuned, NULL, NULL))
			continue;  /* a stale index record */
		if (len == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			grown = realloc(list, alloc * sizeof(*list));
			if (!grown) {
				ret = pt_error_set(err, PT_ENOMEM,
						   "out of memory");
				break;
			}
			list = grown;
		}
		memcpy(list[len].key, v.mv_data, 16);
		list[len++].tuned_at = tuned;
	}
	if (!ret && rc && rc != MDB_NOTFOUND)
		ret = lmdb_error(c, rc, "cannot read the names index", err);
	if (cur)
		mdb_cursor_close(cur);
	read_end(c, txn);
	pt_strbuf_release(&nk);
	if (!ret && len) {
		qsort(list, len, sizeof(*list), similar_cmp);
		*keys = malloc(len * 16);
		if (!*keys)
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
	}
	if (!ret) {
		for (i = 0; i < len; i++)
			memcpy((*keys)[i], list[i].key, 16);
		*n = len;
	}
	free(list);
	return ret;
}

struct stage_arg {
	uint8_t *key;
	int *func, *stage;
};

static int stage_row(struct pt_cache *c, MDB_txn *txn, const MDB_val *k,
		     const MDB_val *v, void *arg, struct pt_error *err)
{
	struct stage_arg *a = arg;
	MDB_val sk = { 16, v->mv_data }, sv;
	const unsigned char *p = v->mv_data;

	(void)k;
	(void)err;
	if (v->mv_size != STAGE_VAL ||
	    mdb_get(txn, c->dbi[DB_SCHED], &sk, &sv))
		return 0;  /* a stale index record */
	memcpy(a->key, p, 16);
	*a->func = (int)get_le(p + 16, 4);
	*a->stage = (int)get_le(p + 20, 4);
	return 1;  /* found */
}

int pt_cache_stage(struct pt_cache *c, const uint8_t stage_hash[16],
		   uint8_t key[16], int *func, int *stage,
		   struct pt_error *err)
{
	struct stage_arg a = { key, func, stage };
	MDB_val k = { 16, (void *)stage_hash };
	char hex[33];
	int ret;

	ret = scan(c, DB_STAGES, &k, stage_row, &a,
		   "cannot read the stages index", err);
	if (ret)
		return ret > 0 ? 0 : ret;
	pt_hash_hex(stage_hash, hex);
	return pt_error_set(err, PT_ENOTFOUND, "%s: no stage %s", c->path,
			    hex);
}

/* --- samples -------------------------------------------------------------- */

static int sample_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		      struct pt_error *err)
{
	const struct pt_cache_sample *s = arg;
	const char *sched = str_or_empty(s->sched);
	unsigned char kb[24];
	MDB_val k = { sizeof(kb), kb }, v;
	struct wr w;
	uint64_t seq;
	int rc, ret;

	ret = meta_get_u64(c, txn, "sample_seq", &seq, err);
	if (ret)
		return ret;
	memcpy(kb, s->key, 16);
	put_be64(kb + 16, seq);
	v.mv_size = 4 + 16 + 4 + strlen(sched);
	rc = mdb_put(txn, c->dbi[DB_SAMPLES], &k, &v, MDB_RESERVE);
	if (rc)
		return lmdb_error(c, rc, "cannot write a sample", err);
	w.p = v.mv_data;
	wr_int(&w, SAMPLE_VERSION, 2);
	wr_int(&w, 0, 2);
	wr_int(&w, dbl_bits(s->median_ms), 8);
	wr_int(&w, (uint64_t)(s->at > 0 ? s->at : now_s()), 8);
	wr_str(&w, sched, strlen(sched));
	return meta_put_u64(c, txn, "sample_seq", seq + 1, err);
}

int pt_cache_add_sample(struct pt_cache *c, const struct pt_cache_sample *s,
			struct pt_error *err)
{
	return run_write(c, sample_txn, (void *)s, err);
}

struct sample_arg {
	pt_cache_sample_fn *fn;
	void *ctx;
};

static int sample_row(struct pt_cache *c, MDB_txn *txn, const MDB_val *k,
		      const MDB_val *v, void *arg, struct pt_error *err)
{
	struct sample_arg *a = arg;
	struct pt_cache_sample s;
	struct rd r;
	uint64_t ver, flags;
	int ret;

	(void)txn;
	memset(&s, 0, sizeof(s));
	if (k->mv_size != 24)
		return pt_error_set(err, PT_EFORMAT,
				    "%s: a sample key of %zu bytes", c->path,
				    k->mv_size);
	memcpy(s.key, k->mv_data, 16);
	rd_init(&r, v);
	ver = rd_int(&r, 2);
	flags = rd_int(&r, 2);
	s.median_ms = bits_dbl(rd_int(&r, 8));
	s.at = (int64_t)rd_int(&r, 8);
	if (!r.bad && ver != SAMPLE_VERSION)
		r.bad = "unknown record version";
	if (!r.bad && flags)
		r.bad = "unknown flags";
	ret = r.bad ? 0 : rd_str(&r, &s.sched);
	rd_end(&r);
	if (!ret && r.bad)
		ret = bad_record(c, "sample of", s.key, r.bad, err);
	else if (ret)
		ret = pt_error_set(err, PT_ENOMEM, "out of memory");
	if (!ret)
		ret = a->fn(a->ctx, &s);
	pt_cache_sample_release(&s);
	return ret;
}

int pt_cache_each_sample(struct pt_cache *c, pt_cache_sample_fn *fn,
			 void *ctx, struct pt_error *err)
{
	struct sample_arg a = { fn, ctx };

	return scan(c, DB_SAMPLES, NULL, sample_row, &a,
		    "cannot read the samples", err);
}

/* --- statistics ----------------------------------------------------------- */

struct stats_arg {
	const char *const *names;
	const int64_t *deltas;
	int n;
};

static int stats_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		     struct pt_error *err)
{
	struct stats_arg *a = arg;
	unsigned char buf[8];
	int i, rc;

	for (i = 0; i < a->n; i++) {
		MDB_val k = str_val(a->names[i]), v;
		uint64_t val = 0;

		rc = mdb_get(txn, c->dbi[DB_STATS], &k, &v);
		if (rc && rc != MDB_NOTFOUND)
			return lmdb_error(c, rc, "cannot read a counter", err);
		if (!rc && v.mv_size != 8)
			return pt_error_set(err, PT_EFORMAT,
					    "%s: stat %s: bad record (size "
					    "%zu)", c->path, a->names[i],
					    v.mv_size);
		if (!rc)
			val = get_le(v.mv_data, 8);
		/* Two's complement wraps; no undefined overflow. */
		val += (uint64_t)a->deltas[i];
		put_le(buf, val, 8);
		v.mv_size = 8;
		v.mv_data = buf;
		rc = mdb_put(txn, c->dbi[DB_STATS], &k, &v, 0);
		if (rc)
			return lmdb_error(c, rc, "cannot write a counter", err);
	}
	return 0;
}

int pt_cache_stats_add(struct pt_cache *c, const char *const *names,
		       const int64_t *deltas, int n, struct pt_error *err)
{
	struct stats_arg a = { names, deltas, n };
	int i;

	for (i = 0; i < n; i++)
		if (!names[i] || !*names[i] ||
		    strlen(names[i]) > (size_t)mdb_env_get_maxkeysize(c->env))
			return pt_error_set(err, PT_EINVAL,
					    "cache: bad counter name");
	if (n <= 0)
		return 0;
	return run_write(c, stats_txn, &a, err);
}

struct stat_arg {
	pt_cache_stat_fn *fn;
	void *ctx;
};

static int stat_row(struct pt_cache *c, MDB_txn *txn, const MDB_val *k,
		    const MDB_val *v, void *arg, struct pt_error *err)
{
	struct stat_arg *a = arg;
	char name[512];

	(void)txn;
	if (k->mv_size >= sizeof(name) || v->mv_size != 8 ||
	    memchr(k->mv_data, 0, k->mv_size))
		return pt_error_set(err, PT_EFORMAT, "%s: a bad stat record",
				    c->path);
	memcpy(name, k->mv_data, k->mv_size);
	name[k->mv_size] = '\0';
	return a->fn(a->ctx, name, (int64_t)get_le(v->mv_data, 8));
}

int pt_cache_stats(struct pt_cache *c, pt_cache_stat_fn *fn, void *ctx,
		   struct pt_error *err)
{
	struct stat_arg a = { fn, ctx };

	return scan(c, DB_STATS, NULL, stat_row, &a,
		    "cannot read the counters", err);
}

static int drop_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		    struct pt_error *err)
{
	const int *which = arg;
	int i, rc;

	for (i = 0; which[i] >= 0; i++) {
		rc = mdb_drop(txn, c->dbi[which[i]], 0);
		if (rc)
			return lmdb_error(c, rc, "cannot empty a database",
					  err);
	}
	if (which[0] == DB_SCHED)
		return meta_put_u64(c, txn, "entry_bytes", 0, err);
	return 0;
}

int pt_cache_stats_zero(struct pt_cache *c, struct pt_error *err)
{
	static const int which[] = { DB_STATS, -1 };

	return run_write(c, drop_txn, (void *)which, err);
}

static int clear_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		     struct pt_error *err)
{
	static const int which[] = { DB_SCHED, DB_NAMES, DB_STAGES,
				     DB_SAMPLES, DB_STATS, DB_LEASES, DB_LRU,
				     DB_USES, -1 };
	int ret;

	(void)arg;
	ret = drop_txn(c, txn, (void *)which, err);
	/* The uses are forgotten: they are recorded again from now on. */
	if (!ret)
		ret = meta_put_u64(c, txn, "uses_since", (uint64_t)now_s(),
				   err);
	return ret;
}

int pt_cache_clear(struct pt_cache *c, struct pt_error *err)
{
	return run_write(c, clear_txn, NULL, err);
}

/* --- uses ----------------------------------------------------------------- */

struct use_arg {
	const uint8_t *key;
	int64_t now;
	int forget;
};

/* A key's last use: 0, PT_ENOTFOUND or an error. */
static int use_get(struct pt_cache *c, MDB_txn *txn, const uint8_t key[16],
		   int64_t *t, struct pt_error *err)
{
	MDB_val k = { 16, (void *)key }, v;
	int rc = mdb_get(txn, c->dbi[DB_USES], &k, &v);

	if (rc == MDB_NOTFOUND) {
		char hex[33];

		pt_hash_hex(key, hex);
		return pt_error_set(err, PT_ENOTFOUND, "%s: no use of %s",
				    c->path, hex);
	}
	if (rc)
		return lmdb_error(c, rc, "cannot read a use", err);
	if (v.mv_size != 8)
		return bad_record(c, "use of", key, "size", err);
	*t = (int64_t)get_le(v.mv_data, 8);
	return 0;
}

/* Whether a use recorded at `t` (ret from use_get) is recent enough that
 * one at `now` need not be written. */
static int use_fresh(int ret, int64_t t, int64_t now)
{
	return !ret && now - t < PT_CACHE_TOUCH_S;
}

static int use_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		   struct pt_error *err)
{
	struct use_arg *a = arg;
	unsigned char buf[8];
	MDB_val k = { 16, (void *)a->key }, v = { sizeof(buf), buf };
	int64_t t = 0;
	int rc, ret;

	if (a->forget) {
		rc = mdb_del(txn, c->dbi[DB_USES], &k, NULL);
		if (rc == MDB_NOTFOUND)
			return use_get(c, txn, a->key, &t, err);
		if (rc)
			return lmdb_error(c, rc, "cannot delete a use", err);
		return 0;
	}
	ret = use_get(c, txn, a->key, &t, NULL);
	if (use_fresh(ret, t, a->now))
		return 0;  /* another process noted it meanwhile */
	put_le(buf, (uint64_t)a->now, 8);
	rc = mdb_put(txn, c->dbi[DB_USES], &k, &v, 0);
	if (rc)
		return lmdb_error(c, rc, "cannot write a use", err);
	return 0;
}

int pt_cache_note_use(struct pt_cache *c, const uint8_t key[16], int64_t now,
		      struct pt_error *err)
{
	struct use_arg a = { key, now, 0 };
	MDB_txn *txn;
	int64_t t = 0;
	int ret;

	if (c->readonly)
		return readonly_error(c, err);
	/* Read first: most uses were noted less than an hour ago. */
	ret = read_begin(c, &txn, err);
	if (ret)
		return ret;
	ret = use_get(c, txn, key, &t, NULL);
	read_end(c, txn);
	if (use_fresh(ret, t, now))
		return 0;
	return run_write(c, use_txn, &a, err);
}

int pt_cache_last_use(struct pt_cache *c, const uint8_t key[16], int64_t *t,
		      struct pt_error *err)
{
	MDB_txn *txn;
	int ret;

	*t = 0;
	if (!c->have_uses) {
		char hex[33];

		pt_hash_hex(key, hex);
		return pt_error_set(err, PT_ENOTFOUND, "%s: no use of %s",
				    c->path, hex);
	}
	ret = read_begin(c, &txn, err);
	if (ret)
		return ret;
	ret = use_get(c, txn, key, t, err);
	read_end(c, txn);
	return ret;
}

int pt_cache_forget_use(struct pt_cache *c, const uint8_t key[16],
			struct pt_error *err)
{
	struct use_arg a = { key, 0, 1 };

	return run_write(c, use_txn, &a, err);
}

int pt_cache_uses_since(struct pt_cache *c, int64_t *t, struct pt_error *err)
{
	uint64_t created = 0, since = 0;
	MDB_txn *txn;
	int ret;

	*t = 0;
	ret = read_begin(c, &txn, err);
	if (ret)
		return ret;
	ret = meta_get_u64(c, txn, "created", &created, err);
	if (!ret)
		ret = meta_get_u64(c, txn, "uses_since", &since, err);
	read_end(c, txn);
	if (ret)
		return ret;
	if (!c->have_uses || (!created && !since))
		*t = now_s();  /* nothing recorded: no use is known to be old */
	else
		*t = (int64_t)(created > since ? created : since);
	return 0;
}

/* --- leases --------------------------------------------------------------- */

struct holder {
	int64_t pid;
	int64_t started;
	uint64_t pstart;     /* process start, clock ticks after boot; 0:
			      * unknown */
	char host[256];
	char boot[64];       /* the kernel's boot id; "" unknown */
};

/* Read /proc/PID/stat: the state letter and the start time (field 22).
 * -1 with errno when it cannot be read. */
static int proc_stat(long pid, char *state, uint64_t *start)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses: the
	 * fields go on after the last ')'. */
	p = strrchr(buf, ')');
	if (!p) {
		errno = EINVAL;
		return -1;
	}
	p++;
	for (field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p) {
			errno = EINVAL;
			return -1;
		}
		if (field == 3)
			*state = *p;
		if (field == 22) {
			*start = strtoull(p, NULL, 10);
			return 0;
		}
		while (*p && *p != ' ')
			p++;
	}
	return -1;
}

static void read_boot_id(char *out, size_t size)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	size_t n = 0;

	if (f) {
		n = fread(out, 1, size - 1, f);
		fclose(f);
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

static void self_holder(struct holder *h)
{
	char state;

	memset(h, 0, sizeof(*h));
	h->pid = getpid();
	h->started = now_s();
	if (proc_stat((long)h->pid, &state, &h->pstart) != 0)
		h->pstart = 0;
	if (gethostname(h->host, sizeof(h->host) - 1) != 0)
		strcpy(h->host, "localhost");
	h->host[sizeof(h->host) - 1] = '\0';
	read_boot_id(h->boot, sizeof(h->boot));
}

/* A length-prefixed string into a fixed buffer. */
static void rd_fixed(struct rd *r, char *dst, size_t cap)
{
	size_t len = (size_t)rd_int(r, 4);

	if (!r->bad && len >= cap)
		r->bad = "string too long";
	if (!r->bad && (size_t)(r->end - r->p) < len)
		r->bad = "truncated string";
	if (!r->bad && memchr(r->p, 0, len))
		r->bad = "NUL in a string";
	if (r->bad)
		return;
	memcpy(dst, r->p, len);
	dst[len] = '\0';
	r->p += len;
}

static int lease_decode(const MDB_val *v, struct holder *h)
{
	struct rd r;
	uint64_t ver, flags;

	memset(h, 0, sizeof(*h));
	rd_init(&r, v);
	ver = rd_int(&r, 2);
	flags = rd_int(&r, 2);
	h->pid = (int32_t)(uint32_t)rd_int(&r, 4);
	h->started = (int64_t)rd_int(&r, 8);
	h->pstart = rd_int(&r, 8);
	rd_fixed(&r, h->host, sizeof(h->host));
	rd_fixed(&r, h->boot, sizeof(h->boot));
	rd_end(&r);
	if (r.bad || ver != LEASE_VERSION || flags)
		return -1;
	return 0;
}

static int lease_encode(const struct holder *h, unsigned char *buf,
			size_t size, size_t *len)
{
	size_t hl = strlen(h->host), bl = strlen(h->boot);
	struct wr w = { buf };

	*len = 4 + 4 + 8 + 8 + 4 + hl + 4 + bl;
	if (*len > size)
		return -1;
	wr_int(&w, LEASE_VERSION, 2);
	wr_int(&w, 0, 2);
	wr_int(&w, (uint64_t)(uint32_t)h->pid, 4);
	wr_int(&w, (uint64_t)h->started, 8);
	wr_int(&w, h->pstart, 8);
	wr_str(&w, h->host, hl);
	wr_str(&w, h->boot, bl);
	return 0;
}

static int same_process(const struct holder *a, const struct holder *b)
{
	return a->pid == b->pid && a->pstart == b->pstart &&
		!strcmp(a->host, b->host);
}

/* Whether the holder of a lease still runs, as far as this host can
 * tell. */
static int holder_alive(const struct holder *h, const struct holder *self,
			int64_t stale_after_s)
{
	uint64_t start;
	char state;

	if (strcmp(h->host, self->host) != 0)
		return !(stale_after_s > 0 &&
			 self->started - h->started > stale_after_s);
	if (h->boot[0] && self->boot[0] && strcmp(h->boot, self->boot))
		return 0;  /* the machine rebooted since */
	if (h->pid <= 0 || h->pid > INT32_MAX)
		return 0;
	if (kill((pid_t)h->pid, 0) != 0 && errno == ESRCH)
		return 0;
	if (proc_stat((long)h->pid, &state, &start) != 0)
		return errno != ENOENT;
	if (state == 'Z' || state == 'X')
		return 0;  /* exited, not yet reaped */
	if (h->pstart && start != h->pstart)
		return 0;  /* the pid was reused */
	return 1;
}

struct lease_arg {
	const uint8_t *key;
	int64_t stale_after_s;
	struct holder self;
	struct pt_cache_lease *holder;
	int take;
};

static int lease_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		     struct pt_error *err)
{
	struct lease_arg *a = arg;
	struct holder h;
	unsigned char buf[512];
	size_t len;
	MDB_val k = { 16, (void *)a->key }, v;
	int rc, have;

	rc = mdb_get(txn, c->dbi[DB_LEASES], &k, &v);
	if (rc && rc != MDB_NOTFOUND)
		return lmdb_error(c, rc, "cannot read a lease", err);
	/* A lease that does not decode holds nothing. */
	have = !rc && lease_decode(&v, &h) == 0;
	if (!a->take) {
		if (!have || !same_process(&h, &a->self))
			return 0;
		rc = mdb_del(txn, c->dbi[DB_LEASES], &k, NULL);
		if (rc)
			return lmdb_error(c, rc, "cannot remove a lease", err);
		return 0;
	}
	if (have && !same_process(&h, &a->self) &&
	    holder_alive(&h, &a->self, a->stale_after_s)) {
		char hex[33];

		if (a->holder) {
			memset(a->holder, 0, sizeof(*a->holder));
			a->holder->pid = (pid_t)h.pid;
			memcpy(a->holder->host, h.host, sizeof(h.host));
			a->holder->started = h.started;
		}
		pt_hash_hex(a->key, hex);
		return pt_error_set(err, PT_EBUSY,
				    "%s: %s is being tuned by process %ld on "
				    "%s", c->path, hex, (long)h.pid, h.host);
	}
	if (lease_encode(&a->self, buf, sizeof(buf), &len))
		return pt_error_set(err, PT_EINVAL, "cache: host name too "
				    "long");
	v.mv_size = len;
	v.mv_data = buf;
	rc = mdb_put(txn, c->dbi[DB_LEASES], &k, &v, 0);
	if (rc)
		return lmdb_error(c, rc, "cannot write a lease", err);
	return 0;
}

int pt_cache_lease_take(struct pt_cache *c, const uint8_t key[16],
			int64_t stale_after_s, struct pt_cache_lease *holder,
			struct pt_error *err)
{
	struct lease_arg a;

	memset(&a, 0, sizeof(a));
	a.key = key;
	a.stale_after_s = stale_after_s;
	a.holder = holder;
	a.take = 1;
	self_holder(&a.self);
	return run_write(c, lease_txn, &a, err);
}

int pt_cache_lease_release(struct pt_cache *c, const uint8_t key[16],
			   struct pt_error *err)
{
	struct lease_arg a;

	memset(&a, 0, sizeof(a));
	a.key = key;
	self_holder(&a.self);
	return run_write(c, lease_txn, &a, err);
}

/* --- gc, info, destroy ---------------------------------------------------- */

struct gc_arg {
	uint64_t max_bytes;
	int64_t unused_since;
	uint64_t removed;
};

static int gc_txn(struct pt_cache *c, MDB_txn *txn, void *arg,
		  struct pt_error *err)
{
	struct gc_arg *a = arg;
	uint64_t total;
	int ret;

	a->removed = 0;
	ret = meta_get_u64(c, txn, "entry_bytes", &total, err);
	if (!ret && (a->max_bytes || a->unused_since))
		ret = evict(c, txn, a->max_bytes, a->unused_since, NULL,
			    &total, &a->removed, err);
	if (!ret)
		ret = meta_put_u64(c, txn, "entry_bytes", total, err);
	return ret;
}

int pt_cache_gc(struct pt_cache *c, uint64_t max_bytes, int64_t unused_since,
		uint64_t *removed, struct pt_error *err)
{
	struct gc_arg a = { max_bytes, unused_since, 0 };
	int ret = run_write(c, gc_txn, &a, err);

	if (removed)
		*removed = ret ? 0 : a.removed;
	return ret;
}

int pt_cache_info(struct pt_cache *c, struct pt_cache_info *out,
		  struct pt_error *err)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	MDB_envinfo ei;
	MDB_stat st;
	MDB_txn *txn;
	struct stat fst;
	int rc, ret;

	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", c->path);
	ret = read_begin(c, &txn, err);
	if (ret)
		return ret;
	rc = mdb_stat(txn, c->dbi[DB_SCHED], &st);
	if (!rc)
		out->entries = st.ms_entries;
	if (!rc)
		rc = mdb_stat(txn, c->dbi[DB_SAMPLES], &st);
	if (!rc)
		out->samples = st.ms_entries;
	if (rc)
		ret = lmdb_error(c, rc, "cannot read the statistics", err);
	if (!ret)
		ret = meta_get_u64(c, txn, "entry_bytes", &out->entry_bytes,
				   err);
	read_end(c, txn);
	if (ret)
		return ret;
	rc = mdb_env_info(c->env, &ei);
	if (rc)
		return lmdb_error(c, rc, "cannot read the map size", err);
	out->map_bytes = ei.me_mapsize;
	if (pt_strbuf_addf(&sb, "%s/data.mdb", c->path))
		return pt_error_set(err, PT_ENOMEM, "out of memory");
	if (stat(sb.buf, &fst) == 0)
		out->file_bytes = (uint64_t)fst.st_size;
	else
		ret = pt_error_set(err, PT_EIO, "%s: %s", sb.buf,
				   strerror(errno));
	pt_strbuf_release(&sb);
	return ret;
}

int pt_cache_destroy(const char *dir, struct pt_error *err)
{
	static const char *const files[] = { "data.mdb", "lock.mdb" };
	struct pt_strbuf sb = PT_STRBUF_INIT;
	size_t i;
	int ret = 0;

	if (!dir || !*dir)
		return pt_error_set(err, PT_EINVAL, "cache: no directory");
	for (i = 0; i < sizeof(files) / sizeof(files[0]) && !ret; i++) {
		pt_strbuf_reset(&sb);
		if (pt_strbuf_addf(&sb, "%s/%s", dir, files[i])) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			break;
		}
		if (unlink(sb.buf) != 0 && errno != ENOENT && errno != ENOTDIR)
			ret = pt_error_set(err, PT_EIO, "%s: cannot remove: %s",
					   sb.buf, strerror(errno));
	}
	pt_strbuf_release(&sb);
	return ret;
}
