/* The LMDB cache: round trips, indexes, eviction, leases, format and
 * corruption errors, map growth, read-only use and crashes mid-write. Raw
 * LMDB is used to plant what the API cannot write (another format version,
 * a foreign lease, a bad record) and to count index records. */
#include "pt_test.h"
#include "protune/pt_cache.h"
#include "protune/pt_model.h"
#include "protune/pt_time.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char chain[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"generator \"chain\"\n"
	"function \"chain\"\n"
	"argv \"/home/a/chain.generator\" \"-o\" \"/tmp/x\"\n"
	"input i0 buffer f32 dims 1 est 0 100 label \"in\"\n"
	"func f0 types f32 args 1 inline label \"in_im\"\n"
	"  region 0 100\n"
	"  stage 0\n"
	"    dim v0 0 100 label \"x\"\n"
	"    op load.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f0(v0) = i0(v0)\"\n"
	"func f1 types f32 args 1 output label \"out\"\n"
	"  region 0 98\n"
	"  stage 0\n"
	"    dim v0 0 98 label \"x\"\n"
	"    op add.f32 1\n"
	"    access f0 value 0 count 2\n"
	"      coord 1*v0 + [0,2]\n"
	"    def \"f1(v0) = f0(v0) + f0(v0 + 2)\"\n"
	"  stage 1\n"
	"    dim r0 0 10 label \"r$x\"\n"
	"    op mul.f32 1\n"
	"    access f1 value 0 count 1 store\n"
	"      coord 1*r0 + [0,0]\n"
	"    def \"f1(r0) = f1(r0)*0x1p+1f\"\n";

static const char *dir(void)
{
	return pt_test_tmpdir();
}

static struct pt_cache *open_opts(const struct pt_cache_opts *o)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = NULL;

	if (!PT_CHECK_INT(pt_cache_open(o, &c, &err), 0))
		printf("#   %s\n", err.msg);
	PT_REQUIRE(c);
	return c;
}

static struct pt_cache *open_rw(void)
{
	struct pt_cache_opts o = { dir(), 0, 0, 1 };

	return open_opts(&o);
}

static void set_key(uint8_t key[16], int n)
{
	memset(key, 0, 16);
	key[0] = 0xc0;
	key[14] = (uint8_t)(n >> 8);
	key[15] = (uint8_t)n;
}

static void fill(struct pt_cache_entry *e, int n, const char *gen,
		 const char *model, const char *sched, int64_t tuned,
		 int64_t used)
{
	memset(e, 0, sizeof(*e));
	set_key(e->key, n);
	e->generator = (char *)gen;
	e->function = (char *)"fn";
	e->target = (char *)"x86-64-linux";
	e->model = (char *)model;
	e->sched = (char *)sched;
	e->tuned_at = tuned;
	e->used_at = used;
	e->budget_s = 10;
	e->predicted_ms = -1;
	e->measured_ms = -1;
}

static int put(struct pt_cache *c, const struct pt_cache_entry *e)
{
	struct pt_error err = PT_ERROR_INIT;
	int ret = pt_cache_put(c, e, &err);

	if (ret)
		printf("#   put: %s\n", err.msg);
	return ret;
}

/* The size of an entry's record, as doc/cache-format.md gives it. */
static uint64_t rec_size(const struct pt_cache_entry *e)
{
	return 44 + 20 + strlen(e->generator) + strlen(e->function) +
		strlen(e->target) + strlen(e->model) + strlen(e->sched);
}

/* --- raw LMDB ------------------------------------------------------------- */

static MDB_env *raw_open(void)
{
	MDB_env *env;

	PT_REQUIRE(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 16);
	PT_REQUIRE(mdb_env_open(env, dir(), 0, 0666) == 0);
	return env;
}

static unsigned raw_flags(const char *db)
{
	if (db && (!strcmp(db, "names") || !strcmp(db, "stages")))
		return MDB_DUPSORT | MDB_DUPFIXED;
	return 0;
}

static void raw_put(const char *db, const void *k, size_t kl, const void *v,
		    size_t vl)
{
	MDB_env *env = raw_open();
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val key = { kl, (void *)k }, val = { vl, (void *)v };

	PT_REQUIRE(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	PT_REQUIRE(mdb_dbi_open(txn, db, raw_flags(db) | MDB_CREATE,
				&dbi) == 0);
	PT_REQUIRE(mdb_put(txn, dbi, &key, &val, 0) == 0);
	PT_REQUIRE(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
}

static size_t raw_count(const char *db)
{
	MDB_env *env = raw_open();
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_stat st;

	PT_REQUIRE(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0);
	PT_REQUIRE(mdb_dbi_open(txn, db, raw_flags(db), &dbi) == 0);
	PT_REQUIRE(mdb_stat(txn, dbi, &st) == 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return st.ms_entries;
}

/* --- round trips ---------------------------------------------------------- */

PT_TEST(put_get_round_trip)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e, got;
	struct pt_cache_info info;
	uint8_t absent[16];
	int64_t now = (int64_t)time(NULL);

	fill(&e, 1, "blur", chain, "protune-schedule 1\nkey 00\n", now - 10,
	     now - 5);
	e.function = (char *)"blur_fn";
	e.target = (char *)"x86-64-linux-avx2";
	e.budget_s = 30.5;
	e.predicted_ms = 1.25;
	e.measured_ms = -1;
	PT_REQUIRE(put(c, &e) == 0);
	memset(&got, 0xaa, sizeof(got));
	PT_REQUIRE(pt_cache_get(c, e.key, &got, &err) == 0);
	PT_CHECK(!memcmp(got.key, e.key, 16));
	PT_CHECK_STR(got.generator, "blur");
	PT_CHECK_STR(got.function, "blur_fn");
	PT_CHECK_STR(got.target, "x86-64-linux-avx2");
	PT_CHECK_STR(got.model, chain);
	PT_CHECK_STR(got.sched, "protune-schedule 1\nkey 00\n");
	PT_CHECK_INT(got.tuned_at, now - 10);
	PT_CHECK_INT(got.used_at, now - 5);
	PT_CHECK(got.budget_s == 30.5);
	PT_CHECK(got.predicted_ms == 1.25);
	PT_CHECK(got.measured_ms == -1);
	pt_cache_entry_release(&got);
	PT_CHECK(got.model == NULL);
	pt_cache_entry_release(&got); /* harmless */

	set_key(absent, 2);
	PT_CHECK_INT(pt_cache_get(c, absent, &got, &err), PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "c0000000000000000000000000000002") != NULL);

	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_STR(info.path, dir());
	PT_CHECK_INT(info.entries, 1);
	PT_CHECK_INT(info.entry_bytes, rec_size(&e));
	PT_CHECK_INT(info.samples, 0);
	PT_CHECK(info.map_bytes >= (32u << 20));
	PT_CHECK(info.file_bytes > 0);

	/* Times left at 0 become now. */
	fill(&e, 3, "", "", "", 0, 0);
	PT_REQUIRE(put(c, &e) == 0);
	PT_REQUIRE(pt_cache_get(c, e.key, &got, &err) == 0);
	PT_CHECK(got.tuned_at >= now && got.tuned_at <= now + 5);
	PT_CHECK_INT(got.used_at, got.tuned_at);
	PT_CHECK_STR(got.generator, "");
	PT_CHECK_STR(got.model, "");
	pt_cache_entry_release(&got);
	pt_cache_close(c);
	pt_cache_close(NULL);
}

PT_TEST(bad_model_is_refused)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e, got;

	fill(&e, 1, "g", "protune-model 1\nnonsense\n", "s", 100, 100);
	PT_CHECK_INT(pt_cache_put(c, &e, &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "<cache entry model>") != NULL);
	PT_CHECK_INT(pt_cache_get(c, e.key, &got, NULL), PT_ENOTFOUND);
	pt_cache_close(c);
}

PT_TEST(replace_and_del)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_entry a, b, got;
	struct pt_cache_info info;
	uint8_t (*keys)[16];
	size_t n;

	fill(&a, 1, "ga", chain, "first", 100, 100);
	fill(&b, 1, "gb", "", "second, longer", 200, 200);
	PT_REQUIRE(put(c, &a) == 0);
	PT_REQUIRE(put(c, &b) == 0);
	PT_REQUIRE(pt_cache_get(c, a.key, &got, &err) == 0);
	PT_CHECK_STR(got.generator, "gb");
	PT_CHECK_STR(got.sched, "second, longer");
	PT_CHECK_INT(got.tuned_at, 200);
	pt_cache_entry_release(&got);
	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_INT(info.entries, 1);
	PT_CHECK_INT(info.entry_bytes, rec_size(&b));
	PT_REQUIRE(pt_cache_similar(c, "ga", "fn", "x86-64-linux", &keys, &n,
				    &err) == 0);
	PT_CHECK_INT(n, 0);
	PT_CHECK(keys == NULL);
	PT_REQUIRE(pt_cache_similar(c, "gb", "fn", "x86-64-linux", &keys, &n,
				    &err) == 0);
	PT_CHECK_INT(n, 1);
	free(keys);

	PT_CHECK_INT(pt_cache_del(c, a.key, &err), 0);
	PT_CHECK_INT(pt_cache_get(c, a.key, &got, NULL), PT_ENOTFOUND);
	PT_CHECK_INT(pt_cache_del(c, a.key, &err), PT_ENOTFOUND);
	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_INT(info.entries, 0);
	PT_CHECK_INT(info.entry_bytes, 0);
	pt_cache_close(c);
}

struct collect {
	int n, stop_at;
	uint8_t keys[16][16];
};

static int collect_fn(void *ctx, const struct pt_cache_entry *e)
{
	struct collect *col = ctx;

	if (col->n < 16)
		memcpy(col->keys[col->n], e->key, 16);
	col->n++;
	return col->n == col->stop_at ? 7 : 0;
}

PT_TEST(each_in_key_order)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e;
	struct collect col;
	uint8_t k[16];
	int order[] = { 5, 1, 9, 3 }, i;

	for (i = 0; i < 4; i++) {
		fill(&e, order[i], "g", "", "s", 100, 100);
		PT_REQUIRE(put(c, &e) == 0);
	}
	memset(&col, 0, sizeof(col));
	PT_CHECK_INT(pt_cache_each(c, collect_fn, &col, &err), 0);
	PT_CHECK_INT(col.n, 4);
	for (i = 0; i < 4; i++) {
		set_key(k, i == 0 ? 1 : i == 1 ? 3 : i == 2 ? 5 : 9);
		PT_CHECK(!memcmp(col.keys[i], k, 16));
	}
	memset(&col, 0, sizeof(col));
	col.stop_at = 2;
	PT_CHECK_INT(pt_cache_each(c, collect_fn, &col, &err), 7);
	PT_CHECK_INT(col.n, 2);
	pt_cache_close(c);
}

PT_TEST(similar_newest_first)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e;
	uint8_t (*keys)[16], k[16];
	size_t n;

	fill(&e, 1, "g", "", "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	fill(&e, 2, "g", "", "s", 300, 300);
	PT_REQUIRE(put(c, &e) == 0);
	fill(&e, 3, "g", "", "s", 200, 200);
	PT_REQUIRE(put(c, &e) == 0);
	fill(&e, 4, "g", "", "s", 400, 400);
	e.target = (char *)"arm-64-linux";
	PT_REQUIRE(put(c, &e) == 0);
	fill(&e, 5, "g2", "", "s", 500, 500);
	PT_REQUIRE(put(c, &e) == 0);

	PT_REQUIRE(pt_cache_similar(c, "g", "fn", "x86-64-linux", &keys, &n,
				    &err) == 0);
	PT_REQUIRE(n == 3);
	set_key(k, 2);
	PT_CHECK(!memcmp(keys[0], k, 16));
	set_key(k, 3);
	PT_CHECK(!memcmp(keys[1], k, 16));
	set_key(k, 1);
	PT_CHECK(!memcmp(keys[2], k, 16));
	free(keys);
	PT_REQUIRE(pt_cache_similar(c, "nope", "fn", "x86-64-linux", &keys,
				    &n, &err) == 0);
	PT_CHECK_INT(n, 0);
	PT_CHECK(keys == NULL);
	pt_cache_close(c);
}

static struct pt_model *hashed(const char *text)
{
	struct pt_model *m = NULL;

	PT_REQUIRE(pt_model_parse(text, strlen(text), "t", &m, NULL) == 0);
	PT_REQUIRE(pt_model_hash(m) == 0);
	return m;
}

PT_TEST(stage_lookup_and_index_cleanup)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_model *m = hashed(chain);
	struct pt_cache_entry e;
	uint8_t k[16], got[16], (*keys)[16];
	size_t n;
	int i, func, stage;

	PT_REQUIRE(m->nstages == 3);
	fill(&e, 7, "g", chain, "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	for (i = 0; i < m->nstages; i++) {
		func = stage = -1;
		PT_CHECK_INT(pt_cache_stage(c, m->stages[i].hash, got, &func,
					    &stage, &err), 0);
		PT_CHECK(!memcmp(got, e.key, 16));
		PT_CHECK_INT(func, m->stages[i].func);
		PT_CHECK_INT(stage, m->stages[i].index);
	}
	memset(k, 0x11, 16);
	PT_CHECK_INT(pt_cache_stage(c, k, got, &func, &stage, &err),
		     PT_ENOTFOUND);
	/* A second entry with the same model shares the stage records. */
	fill(&e, 8, "g", chain, "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	PT_CHECK_INT(pt_cache_del(c, e.key, &err), 0);
	set_key(k, 7);
	PT_CHECK_INT(pt_cache_stage(c, m->stages[2].hash, got, &func, &stage,
				    &err), 0);
	PT_CHECK(!memcmp(got, k, 16));
	PT_CHECK_INT(pt_cache_del(c, k, &err), 0);
	for (i = 0; i < m->nstages; i++)
		PT_CHECK_INT(pt_cache_stage(c, m->stages[i].hash, got, &func,
					    &stage, NULL), PT_ENOTFOUND);
	PT_REQUIRE(pt_cache_similar(c, "g", "fn", "x86-64-linux", &keys, &n,
				    &err) == 0);
	PT_CHECK_INT(n, 0);
	/* Replacing an entry with a model-less one drops its stages. */
	fill(&e, 9, "g", chain, "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	fill(&e, 9, "h", "", "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	pt_cache_close(c);
	PT_CHECK_INT(raw_count("sched"), 1);
	PT_CHECK_INT(raw_count("names"), 1);
	PT_CHECK_INT(raw_count("stages"), 0);
	PT_CHECK_INT(raw_count("lru"), 1);
	c = open_rw();
	PT_CHECK_INT(pt_cache_del(c, e.key, &err), 0);
	pt_cache_close(c);
	PT_CHECK_INT(raw_count("names"), 0);
	PT_CHECK_INT(raw_count("lru"), 0);
	pt_model_free(m);
}

/* --- samples and stats ---------------------------------------------------- */

struct samples {
	int n;
	int order[8];
	int ok;
};

static int sample_fn(void *ctx, const struct pt_cache_sample *s)
{
	struct samples *col = ctx;
	char want[32];
	int id = atoi(s->sched);

	snprintf(want, sizeof(want), "%d sched", id);
	if (strcmp(s->sched, want) || s->median_ms != id * 0.5 ||
	    s->at != 1000 + id || s->key[15] != (id < 10 ? 1 : 2))
		col->ok = 0;
	if (col->n < 8)
		col->order[col->n] = id;
	col->n++;
	return 0;
}

PT_TEST(samples_in_order)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_sample s;
	struct pt_cache_info info;
	struct samples col;
	/* ids below 10 go to key 1, the others to key 2 */
	int ids[] = { 11, 1, 2, 12, 3 }, want[] = { 1, 2, 3, 11, 12 }, i;
	char text[32];

	for (i = 0; i < 5; i++) {
		memset(&s, 0, sizeof(s));
		set_key(s.key, ids[i] < 10 ? 1 : 2);
		snprintf(text, sizeof(text), "%d sched", ids[i]);
		s.sched = text;
		s.median_ms = ids[i] * 0.5;
		s.at = 1000 + ids[i];
		PT_REQUIRE(pt_cache_add_sample(c, &s, &err) == 0);
	}
	memset(&col, 0, sizeof(col));
	col.ok = 1;
	PT_CHECK_INT(pt_cache_each_sample(c, sample_fn, &col, &err), 0);
	PT_CHECK_INT(col.n, 5);
	PT_CHECK(col.ok);
	for (i = 0; i < 5; i++)
		PT_CHECK_INT(col.order[i], want[i]);
	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_INT(info.samples, 5);
	pt_cache_close(c);
}

struct stats {
	char text[256];
};

static int stat_fn(void *ctx, const char *name, int64_t value)
{
	struct stats *st = ctx;
	size_t len = strlen(st->text);

	snprintf(st->text + len, sizeof(st->text) - len, "%s=%lld ", name,
		 (long long)value);
	return 0;
}

PT_TEST(stats_add_and_zero)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	const char *names[] = { "miss.new-key", "hit", "tuned" };
	const char *bad[] = { "hit", "" };
	int64_t d1[] = { 1, 2, 3 }, d2[] = { 4, -1 };
	struct stats st;

	PT_CHECK_INT(pt_cache_stats_add(c, names, d1, 3, &err), 0);
	PT_CHECK_INT(pt_cache_stats_add(c, names + 1, d2, 2, &err), 0);
	memset(&st, 0, sizeof(st));
	PT_CHECK_INT(pt_cache_stats(c, stat_fn, &st, &err), 0);
	PT_CHECK_STR(st.text, "hit=6 miss.new-key=1 tuned=2 ");
	/* All or nothing: a bad name changes no counter. */
	PT_CHECK_INT(pt_cache_stats_add(c, bad, d1, 2, &err), PT_EINVAL);
	PT_CHECK_INT(pt_cache_stats_zero(c, &err), 0);
	memset(&st, 0, sizeof(st));
	PT_CHECK_INT(pt_cache_stats(c, stat_fn, &st, &err), 0);
	PT_CHECK_STR(st.text, "");
	PT_CHECK_INT(pt_cache_stats_add(c, names, d1, 1, &err), 0);
	memset(&st, 0, sizeof(st));
	PT_CHECK_INT(pt_cache_stats(c, stat_fn, &st, &err), 0);
	PT_CHECK_STR(st.text, "miss.new-key=1 ");
	pt_cache_close(c);
}

PT_TEST(clear_keeps_the_format)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e;
	struct pt_cache_sample s;
	struct pt_cache_info info;
	const char *names[] = { "hit" };
	int64_t d[] = { 1 };

	fill(&e, 1, "g", chain, "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	memset(&s, 0, sizeof(s));
	s.sched = (char *)"x";
	PT_REQUIRE(pt_cache_add_sample(c, &s, &err) == 0);
	PT_REQUIRE(pt_cache_stats_add(c, names, d, 1, &err) == 0);
	PT_REQUIRE(pt_cache_lease_take(c, e.key, 0, NULL, &err) == 0);
	PT_CHECK_INT(pt_cache_clear(c, &err), 0);
	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_INT(info.entries, 0);
	PT_CHECK_INT(info.entry_bytes, 0);
	PT_CHECK_INT(info.samples, 0);
	pt_cache_close(c);
	PT_CHECK_INT(raw_count("stages"), 0);
	PT_CHECK_INT(raw_count("leases"), 0);
	PT_CHECK_INT(raw_count("stats"), 0);
	PT_CHECK_INT(raw_count("meta") >= 1, 1);
	c = open_rw();
	pt_cache_close(c);
}

/* --- leases --------------------------------------------------------------- */

/* Fork; the child opens the cache and runs fn (its exit status: 0 when
 * every check passed). */
static pid_t child(int (*fn)(struct pt_cache *c, void *arg), void *arg)
{
	pid_t pid = fork();

	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		struct pt_cache_opts o = { dir(), 0, 0, 1 };
		struct pt_cache *c = NULL;
		int ok;

		if (pt_cache_open(&o, &c, NULL))
			_exit(2);
		ok = fn(c, arg);
		fflush(stdout);
		_exit(ok ? 0 : 1);
	}
	return pid;
}

static int wait_ok(pid_t pid)
{
	int status;

	PT_REQUIRE(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static uint8_t lease_key[16] = { 0x1e, 0xa5, 0xe };

static int child_busy(struct pt_cache *c, void *arg)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_lease h;
	char host[256] = "";
	int ok = 1;

	gethostname(host, sizeof(host) - 1);
	memset(&h, 0, sizeof(h));
	ok &= PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, &h, &err),
			   PT_EBUSY);
	ok &= PT_CHECK_INT(h.pid, (pid_t)(intptr_t)arg);
	ok &= PT_CHECK_STR(h.host, host);
	ok &= PT_CHECK(h.started > 0 && h.started <= (int64_t)time(NULL));
	ok &= PT_CHECK(strstr(err.msg, "being tuned by process") != NULL);
	/* Not ours: release leaves it. */
	ok &= PT_CHECK_INT(pt_cache_lease_release(c, lease_key, &err), 0);
	ok &= PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, NULL,
					       &err), PT_EBUSY);
	return ok;
}

static int child_take_and_die(struct pt_cache *c, void *arg)
{
	(void)arg;
	if (pt_cache_lease_take(c, lease_key, 3600, NULL, NULL))
		_exit(3);
	_exit(0); /* no release, no close */
}

PT_TEST(lease_take_busy_release)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_lease h;
	pid_t pid;

	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, &h, &err), 0);
	/* Taken again by its holder. */
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, &h, &err), 0);
	pt_cache_close(c);
	PT_CHECK(wait_ok(child(child_busy, (void *)(intptr_t)getpid())));
	c = open_rw();
	PT_CHECK_INT(pt_cache_lease_release(c, lease_key, &err), 0);
	pt_cache_close(c);
	PT_CHECK_INT(raw_count("leases"), 0);

	/* A holder that died without releasing: reaped, and a zombie. */
	PT_CHECK(wait_ok(child(child_take_and_die, NULL)));
	c = open_rw();
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, NULL, &err), 0);
	PT_CHECK_INT(pt_cache_lease_release(c, lease_key, &err), 0);
	pt_cache_close(c);
	pid = child(child_take_and_die, NULL);
	for (;;) {
		char path[64], buf[256] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
		f = fopen(path, "r");
		if (!f)
			break;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		if (strstr(buf, ") Z "))
			break;
		pt_time_sleep_ms(1);
	}
	c = open_rw();
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, NULL, &err), 0);
	pt_cache_close(c);
	PT_CHECK(wait_ok(pid));
}

/* A lease record as doc/cache-format.md describes it. */
static size_t lease_rec(unsigned char *buf, long pid, int64_t started,
			uint64_t pstart, const char *host)
{
	size_t hl = strlen(host), n = 0;
	int i;

	buf[n++] = 1;
	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = 0;
	for (i = 0; i < 4; i++)
		buf[n++] = (unsigned char)((uint32_t)pid >> (8 * i));
	for (i = 0; i < 8; i++)
		buf[n++] = (unsigned char)((uint64_t)started >> (8 * i));
	for (i = 0; i < 8; i++)
		buf[n++] = (unsigned char)(pstart >> (8 * i));
	for (i = 0; i < 4; i++)
		buf[n++] = (unsigned char)(hl >> (8 * i));
	memcpy(buf + n, host, hl);
	n += hl;
	memset(buf + n, 0, 4); /* no boot id */
	return n + 4;
}

PT_TEST(lease_foreign_and_reused_pid)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_lease h;
	unsigned char buf[512];
	char host[256] = "";
	int64_t now = (int64_t)time(NULL);
	size_t n;

	pt_cache_close(c);
	n = lease_rec(buf, 1, now - 1000, 77, "elsewhere.example");
	raw_put("leases", lease_key, 16, buf, n);
	c = open_rw();
	memset(&h, 0, sizeof(h));
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, &h, &err),
		     PT_EBUSY);
	PT_CHECK_INT(h.pid, 1);
	PT_CHECK_STR(h.host, "elsewhere.example");
	PT_CHECK_INT(h.started, now - 1000);
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 0, &h, &err), PT_EBUSY);
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 500, &h, &err), 0);
	pt_cache_close(c);

	/* Our own host, a live pid, but another process start time: the pid
	 * was reused, the holder is gone. */
	gethostname(host, sizeof(host) - 1);
	n = lease_rec(buf, (long)getppid(), now, 12345, host);
	raw_put("leases", lease_key, 16, buf, n);
	c = open_rw();
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, &h, &err), 0);
	pt_cache_close(c);

	/* A lease that does not decode holds nothing. */
	raw_put("leases", lease_key, 16, "junk", 4);
	c = open_rw();
	PT_CHECK_INT(pt_cache_lease_take(c, lease_key, 3600, &h, &err), 0);
	pt_cache_close(c);
}

/* --- format and corruption ------------------------------------------------ */

PT_TEST(format_mismatch)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts ro = { dir(), 0, 1, 0 };
	struct pt_cache *c = open_rw();
	char want[600];

	pt_cache_close(c);
	raw_put("meta", "format", 6, "2", 1);
	c = (struct pt_cache *)1;
	{
		struct pt_cache_opts o = { dir(), 0, 0, 0 };

		PT_CHECK_INT(pt_cache_open(&o, &c, &err), PT_EFORMAT);
	}
	PT_CHECK(c == NULL);
	snprintf(want, sizeof(want), "%s: cache format version 2, this "
		 "protune uses version 1; run `protune clear --force` to "
		 "remove the old cache", dir());
	PT_CHECK_STR(err.msg, want);
	PT_CHECK_INT(pt_cache_open(&ro, &c, &err), PT_EFORMAT);
	PT_CHECK_INT(pt_cache_destroy(dir(), &err), 0);
	c = open_rw();
	pt_cache_close(c);
}

PT_TEST(garbage_data_file)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts o = { dir(), 0, 0, 0 };
	struct pt_cache *c = NULL;
	struct pt_cache_entry e;
	unsigned char junk[65536];
	char path[512];
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 7919 >> 3);
	snprintf(path, sizeof(path), "%s/data.mdb", dir());
	f = fopen(path, "wb");
	PT_REQUIRE(f && fwrite(junk, 1, sizeof(junk), f) == sizeof(junk));
	fclose(f);
	PT_CHECK_INT(pt_cache_open(&o, &c, &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "not a protune cache or corrupt") != NULL);
	PT_CHECK(strncmp(err.msg, dir(), strlen(dir())) == 0);
	o.readonly = 1;
	PT_CHECK_INT(pt_cache_open(&o, &c, &err), PT_EFORMAT);
	PT_CHECK_INT(pt_cache_destroy(dir(), &err), 0);
	PT_CHECK_INT(pt_cache_destroy(dir(), &err), 0); /* nothing left */
	c = open_rw();
	fill(&e, 1, "g", chain, "s", 100, 100);
	PT_CHECK_INT(put(c, &e), 0);
	pt_cache_close(c);

	/* An LMDB environment that is not ours. */
	PT_CHECK_INT(pt_cache_destroy(dir(), &err), 0);
	raw_put(NULL, "hello", 5, "world", 5);
	o.readonly = 0;
	PT_CHECK_INT(pt_cache_open(&o, &c, &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "not a protune cache") != NULL);

	PT_CHECK_INT(pt_cache_destroy("/nonexistent/protune-cache", &err), 0);
}

PT_TEST(bad_record)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e, got;
	struct collect col;
	unsigned char rec[64];
	uint8_t k[16];

	fill(&e, 1, "g", "", "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	pt_cache_close(c);
	/* A record cut short: version 1, then half of a header. */
	memset(rec, 0, sizeof(rec));
	rec[0] = 1;
	set_key(k, 2);
	raw_put("sched", k, 16, rec, 30);
	c = open_rw();
	PT_CHECK_INT(pt_cache_get(c, k, &got, &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "entry c0000000000000000000000000000002: "
			"bad record (truncated)") != NULL);
	memset(&col, 0, sizeof(col));
	PT_CHECK_INT(pt_cache_each(c, collect_fn, &col, &err), PT_EFORMAT);
	PT_CHECK_INT(col.n, 1);
	/* A string length past the end, and an unknown version. */
	pt_cache_close(c);
	rec[0] = 1;
	rec[44] = 0xff;
	raw_put("sched", k, 16, rec, 64);
	c = open_rw();
	PT_CHECK_INT(pt_cache_get(c, k, &got, &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "truncated string") != NULL);
	pt_cache_close(c);
	rec[0] = 9;
	raw_put("sched", k, 16, rec, 64);
	c = open_rw();
	PT_CHECK_INT(pt_cache_get(c, k, &got, &err), PT_EFORMAT);
	PT_CHECK(strstr(err.msg, "unknown record version") != NULL);
	/* The way out: delete or replace it. */
	PT_CHECK_INT(pt_cache_del(c, k, &err), 0);
	PT_CHECK_INT(pt_cache_get(c, k, &got, &err), PT_ENOTFOUND);
	PT_CHECK_INT(pt_cache_get(c, e.key, &got, &err), 0);
	pt_cache_entry_release(&got);
	pt_cache_close(c);
}

/* --- growth and eviction -------------------------------------------------- */

#define BIG (1 << 20)

static char *big_sched(int n)
{
	char *s = malloc(BIG + 1);
	int i;

	PT_REQUIRE(s);
	for (i = 0; i < BIG; i++)
		s[i] = (char)('a' + (i / 4096 + n) % 26);
	s[BIG] = '\0';
	return s;
}

/* Put entries from..from+n-1 with a 1 MiB schedule each, and close. */
static int put_big(struct pt_cache *c, int from, int n)
{
	struct pt_cache_entry e;
	int i, ok = 1;

	for (i = from; i < from + n; i++) {
		char *s = big_sched(i);

		fill(&e, i, "big", "", s, 100 + i, 100 + i);
		ok &= PT_CHECK_INT(put(c, &e), 0);
		free(s);
	}
	pt_cache_close(c);
	return ok;
}

static void check_big(struct pt_cache *c, int from, int n)
{
	struct pt_cache_entry got;
	uint8_t k[16];
	int i;

	for (i = from; i < from + n; i++) {
		char *s = big_sched(i);

		set_key(k, i);
		if (!PT_CHECK_INT(pt_cache_get(c, k, &got, NULL), 0)) {
			free(s);
			break;
		}
		PT_CHECK(!strcmp(got.sched, s));
		pt_cache_entry_release(&got);
		free(s);
	}
}

/* 40 entries of 1 MiB outgrow the initial 32 MiB map. Another process
 * grows it while this one has the cache open: this one adopts the larger
 * map to read, and writes on. */
PT_TEST(map_growth)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_info info;
	struct pt_cache *c;
	int go[2];
	pid_t pid;

	PT_REQUIRE(pipe(go) == 0);
	pid = fork();
	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		char ch;

		close(go[1]);
		if (read(go[0], &ch, 1) != 1)
			_exit(2);
		_exit(put_big(open_rw(), 0, 40) ? 0 : 1);
	}
	close(go[0]);
	c = open_rw();
	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_INT(info.map_bytes, 32u << 20);
	PT_CHECK(write(go[1], "x", 1) == 1);
	close(go[1]);
	PT_CHECK(wait_ok(pid));
	check_big(c, 0, 40);
	check_big(c, 0, 2); /* the reused read transaction */
	put_big(c, 100, 4);

	c = open_rw();
	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_INT(info.entries, 44);
	PT_CHECK(info.map_bytes >= (64u << 20));
	PT_CHECK(info.file_bytes > (44u << 20));
	check_big(c, 0, 40);
	check_big(c, 100, 4);
	pt_cache_close(c);
}

struct keyset {
	int n;
	int ids[16];
};

static int keys_fn(void *ctx, const struct pt_cache_entry *e)
{
	struct keyset *ks = ctx;

	if (ks->n < 16)
		ks->ids[ks->n++] = e->key[15];
	return 0;
}

static void expect_keys(struct pt_cache *c, const char *want)
{
	struct keyset ks;
	char got[64] = "";
	int i;

	memset(&ks, 0, sizeof(ks));
	PT_CHECK_INT(pt_cache_each(c, keys_fn, &ks, NULL), 0);
	for (i = 0; i < ks.n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d",
			 i ? " " : "", ks.ids[i]);
	PT_CHECK_STR(got, want);
}

PT_TEST(eviction_lru)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_entry e;
	struct pt_cache_info info;
	struct pt_cache *c;
	uint64_t size, removed = 99;
	int i;

	fill(&e, 0, "g", "", "0123456789", 0, 0);
	size = rec_size(&e);
	{
		struct pt_cache_opts o = { dir(), 5 * size + size / 2, 0, 1 };

		c = open_opts(&o);
	}
	for (i = 0; i < 8; i++) {
		fill(&e, i, "g", "", "0123456789", 1000 + i, 1000 + i);
		PT_REQUIRE(put(c, &e) == 0);
		PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
		PT_CHECK(info.entry_bytes <= 5 * size);
	}
	expect_keys(c, "3 4 5 6 7");
	/* The entry just put stays even when it is the oldest. */
	fill(&e, 8, "g", "", "0123456789", 1008, 500);
	PT_REQUIRE(put(c, &e) == 0);
	expect_keys(c, "4 5 6 7 8");
	/* Replacing an entry moves it in the order. */
	fill(&e, 4, "g", "", "0123456789", 1004, 2000);
	PT_REQUIRE(put(c, &e) == 0);
	expect_keys(c, "4 5 6 7 8");
	PT_CHECK_INT(pt_cache_gc(c, 2 * size + 1, 0, &removed, &err), 0);
	PT_CHECK_INT(removed, 3);
	expect_keys(c, "4 7");
	PT_CHECK_INT(pt_cache_gc(c, 0, 1008, &removed, &err), 0);
	PT_CHECK_INT(removed, 1);
	expect_keys(c, "4");
	PT_CHECK_INT(pt_cache_gc(c, 0, 0, &removed, &err), 0);
	PT_CHECK_INT(removed, 0);
	PT_REQUIRE(pt_cache_info(c, &info, &err) == 0);
	PT_CHECK_INT(info.entry_bytes, size);
	pt_cache_close(c);
	PT_CHECK_INT(raw_count("lru"), 1);
	PT_CHECK_INT(raw_count("names"), 1);
}

PT_TEST(hit_touches_used_at)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts ro = { dir(), 0, 1, 0 };
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e, got;
	int64_t now = (int64_t)time(NULL);
	uint64_t removed;

	fill(&e, 1, "g", chain, "s", now - 7200, now - 7200);
	PT_REQUIRE(put(c, &e) == 0);
	fill(&e, 2, "g", chain, "s", now - 60, now - 60);
	PT_REQUIRE(put(c, &e) == 0);
	pt_cache_close(c);
	/* A read-only hit does not touch. */
	c = open_opts(&ro);
	set_key(e.key, 1);
	PT_REQUIRE(pt_cache_get(c, e.key, &got, &err) == 0);
	pt_cache_entry_release(&got);
	pt_cache_close(c);
	c = open_rw();
	PT_REQUIRE(pt_cache_get(c, e.key, &got, &err) == 0);
	PT_CHECK_INT(got.used_at, now - 7200); /* the value read */
	pt_cache_entry_release(&got);
	PT_REQUIRE(pt_cache_get(c, e.key, &got, &err) == 0);
	PT_CHECK(got.used_at >= now);
	pt_cache_entry_release(&got);
	/* A fresh hit does not write. */
	set_key(e.key, 2);
	PT_REQUIRE(pt_cache_get(c, e.key, &got, &err) == 0);
	PT_CHECK_INT(got.used_at, now - 60);
	pt_cache_entry_release(&got);
	PT_CHECK_INT(pt_cache_gc(c, 0, now - 3600, &removed, &err), 0);
	PT_CHECK_INT(removed, 0);
	PT_CHECK_INT(pt_cache_gc(c, 0, now - 30, &removed, &err), 0);
	PT_CHECK_INT(removed, 1);
	expect_keys(c, "1");
	pt_cache_close(c);
}

/* --- read-only use -------------------------------------------------------- */

static int stat_noop(void *ctx, const char *name, int64_t v)
{
	(void)ctx; (void)name; (void)v;
	return 0;
}

static int sample_noop(void *ctx, const struct pt_cache_sample *s)
{
	(void)ctx; (void)s;
	return 0;
}

static int entry_noop(void *ctx, const struct pt_cache_entry *e)
{
	(void)ctx; (void)e;
	return 0;
}

/* Everything a reader does; nothing a writer does. */
static int read_all(struct pt_cache *c, void *arg)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_entry e, got;
	uint8_t (*keys)[16];
	size_t n;
	int ok = 1;

	(void)arg;
	memset(&got, 0, sizeof(got));
	fill(&e, 1, "g", chain, "s", 100, 100);
	ok &= PT_CHECK_INT(pt_cache_get(c, e.key, &got, &err), 0);
	if (ok)
		ok &= PT_CHECK_STR(got.sched, "s");
	pt_cache_entry_release(&got);
	ok &= PT_CHECK_INT(pt_cache_each(c, entry_noop, NULL, &err), 0);
	ok &= PT_CHECK_INT(pt_cache_each_sample(c, sample_noop, NULL, &err),
			   0);
	ok &= PT_CHECK_INT(pt_cache_stats(c, stat_noop, NULL, &err), 0);
	ok &= PT_CHECK_INT(pt_cache_similar(c, "g", "fn", "x86-64-linux",
					    &keys, &n, &err), 0);
	ok &= PT_CHECK_INT(n, 1);
	free(keys);
	ok &= PT_CHECK_INT(pt_cache_put(c, &e, &err), PT_EINVAL);
	ok &= PT_CHECK(strstr(err.msg, "read-only") != NULL);
	ok &= PT_CHECK_INT(pt_cache_del(c, e.key, &err), PT_EINVAL);
	ok &= PT_CHECK_INT(pt_cache_lease_take(c, e.key, 0, NULL, &err),
			   PT_EINVAL);
	ok &= PT_CHECK_INT(pt_cache_gc(c, 1, 0, NULL, &err), PT_EINVAL);
	ok &= PT_CHECK_INT(pt_cache_clear(c, &err), PT_EINVAL);
	ok &= PT_CHECK_INT(pt_cache_note_use(c, e.key, 1000, &err),
			   PT_EINVAL);
	ok &= PT_CHECK_INT(pt_cache_forget_use(c, e.key, &err), PT_EINVAL);
	{
		int64_t t;

		ok &= PT_CHECK_INT(pt_cache_last_use(c, e.key, &t, &err),
				   PT_ENOTFOUND);
		ok &= PT_CHECK_INT(pt_cache_uses_since(c, &t, &err), 0);
	}
	pt_cache_close(c);
	return ok;
}

static int no_write_access(void *arg)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts ro = { dir(), 0, 1, 0 }, rw = { dir(), 0, 0, 0 };
	struct pt_cache *c = NULL;
	int ok = 1;

	(void)arg;
	ok &= PT_CHECK_INT(pt_cache_open(&rw, &c, &err), PT_EIO);
	ok &= PT_CHECK(strstr(err.msg, dir()) != NULL);
	if (!PT_CHECK_INT(pt_cache_open(&ro, &c, &err), 0)) {
		printf("#   %s\n", err.msg);
		return 0;
	}
	return ok & read_all(c, NULL);
}

PT_TEST(readonly_never_writes)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts ro = { dir(), 0, 1, 0 };
	struct pt_cache *c = NULL;
	struct pt_cache_entry e;
	struct stat before, after;
	char path[512], sub[512];
	pid_t pid;

	/* Missing: the directory, or the cache in it. */
	snprintf(sub, sizeof(sub), "%s/none", dir());
	ro.dir = sub;
	PT_CHECK_INT(pt_cache_open(&ro, &c, &err), PT_ENOTFOUND);
	PT_CHECK(c == NULL);
	ro.dir = dir();
	PT_CHECK_INT(pt_cache_open(&ro, &c, &err), PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, dir()) != NULL);
	{
		struct stat st;

		PT_CHECK(stat(sub, &st) != 0); /* nothing created */
	}

	c = open_rw();
	fill(&e, 1, "g", chain, "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	pt_cache_close(c);
	snprintf(path, sizeof(path), "%s/data.mdb", dir());
	PT_REQUIRE(stat(path, &before) == 0);
	pt_time_sleep_ms(20);
	c = open_opts(&ro);
	PT_CHECK(read_all(c, NULL));
	PT_REQUIRE(stat(path, &after) == 0);
	PT_CHECK_INT(after.st_size, before.st_size);
	PT_CHECK_INT(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	PT_CHECK_INT(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);

	/* A directory this user may not write (nor its lock file). */
	pid = fork();
	PT_REQUIRE(pid >= 0);
	if (pid == 0) {
		snprintf(path, sizeof(path), "%s/lock.mdb", dir());
		if (geteuid() == 0) {
			if (chmod(dir(), 0755) || setgid(65534) ||
			    setuid(65534))
				_exit(2);
			if (access(dir(), R_OK | X_OK)) {
				printf("# skipped: %s not reachable by "
				       "nobody\n", dir());
				_exit(0);
			}
		} else if (chmod(path, 0444) || chmod(dir(), 0555)) {
			_exit(2);
		}
		_exit(no_write_access(NULL) ? 0 : 1);
	}
	PT_CHECK(wait_ok(pid));
	chmod(dir(), 0700);
	PT_REQUIRE(stat(path, &after) == 0);
	PT_CHECK_INT(after.st_size, before.st_size);
	PT_CHECK_INT(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

/* --- concurrency ---------------------------------------------------------- */

static int busy_writer(struct pt_cache *c, void *arg)
{
	const char *names[] = { "puts" };
	int64_t one[] = { 1 };
	struct pt_cache_entry e, got;
	int from = (int)(intptr_t)arg, i, ok = 1;

	for (i = from; i < from + 25; i++) {
		fill(&e, i, "g", chain, "s", 100 + i, 100 + i);
		ok &= PT_CHECK_INT(put(c, &e), 0);
		ok &= PT_CHECK_INT(pt_cache_stats_add(c, names, one, 1, NULL),
				   0);
		ok &= PT_CHECK_INT(pt_cache_get(c, e.key, &got, NULL), 0);
		if (ok)
			pt_cache_entry_release(&got);
	}
	pt_cache_close(c);
	return ok;
}

PT_TEST(concurrent_processes)
{
	struct pt_cache *c = open_rw();
	struct pt_cache_info info;
	struct stats st;
	uint8_t (*keys)[16];
	size_t n;
	pid_t pids[4];
	int i;

	pt_cache_close(c);
	for (i = 0; i < 4; i++)
		pids[i] = child(busy_writer, (void *)(intptr_t)(i * 100));
	for (i = 0; i < 4; i++)
		PT_CHECK(wait_ok(pids[i]));
	c = open_rw();
	PT_REQUIRE(pt_cache_info(c, &info, NULL) == 0);
	PT_CHECK_INT(info.entries, 100);
	memset(&st, 0, sizeof(st));
	PT_CHECK_INT(pt_cache_stats(c, stat_fn, &st, NULL), 0);
	PT_CHECK_STR(st.text, "puts=100 ");
	PT_REQUIRE(pt_cache_similar(c, "g", "fn", "x86-64-linux", &keys, &n,
				    NULL) == 0);
	PT_CHECK_INT(n, 100);
	free(keys);
	pt_cache_close(c);
}

/* --- crashes -------------------------------------------------------------- */

#define CRASH_BIG (3 << 20)

static char *crash_sched(int n)
{
	char *s = malloc(CRASH_BIG + 1);

	PT_REQUIRE(s);
	memset(s, 'A' + n % 26, CRASH_BIG);
	s[CRASH_BIG] = '\0';
	return s;
}

struct crash_check {
	int n, ok;
};

static int crash_fn(void *ctx, const struct pt_cache_entry *e)
{
	struct crash_check *cc = ctx;
	int id = e->key[15];

	cc->n++;
	if (id >= 100) {
		char *s = crash_sched(id);

		cc->ok &= PT_CHECK(!strcmp(e->sched, s));
		cc->ok &= PT_CHECK_STR(e->model, chain);
		free(s);
	}
	return 0;
}

PT_TEST(crash_mid_write)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts o = { dir(), 0, 0, 0 };
	struct pt_cache *c = open_opts(&o);
	struct pt_cache_entry e;
	struct crash_check cc;
	int i, count = 3, killed = 0;

	for (i = 0; i < count; i++) {
		fill(&e, i, "g", chain, "small", 100, 100);
		PT_REQUIRE(put(c, &e) == 0);
	}
	pt_cache_close(c);
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (i = 0; i < 8; i++) {
		struct timespec ts = { 0, 0 };
		int status, ready[2];
		pid_t pid;
		char ch;

		PT_REQUIRE(pipe(ready) == 0);
		pid = fork();
		PT_REQUIRE(pid >= 0);
		if (pid == 0) {
			char *s = crash_sched(100 + i);

			close(ready[0]);
			c = open_opts(&o);
			fill(&e, 100 + i, "g", chain, s, 100, 100);
			if (write(ready[1], "x", 1) != 1)
				_exit(2);
			put(c, &e);
			pt_cache_close(c);
			_exit(0);
		}
		close(ready[1]);
		/* Kill it within the few milliseconds the put takes. */
		PT_CHECK(read(ready[0], &ch, 1) == 1);
		close(ready[0]);
		ts.tv_nsec = (long)(rand() % 6000) * 1000;
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		PT_REQUIRE(waitpid(pid, &status, 0) == pid);
		killed += WIFSIGNALED(status);
		c = open_opts(&o);
		memset(&cc, 0, sizeof(cc));
		cc.ok = 1;
		PT_CHECK_INT(pt_cache_each(c, crash_fn, &cc, &err), 0);
		PT_CHECK(cc.ok);
		PT_CHECK(cc.n == count || cc.n == count + 1);
		count = cc.n;
		/* The cache still takes writes. */
		fill(&e, 50 + i, "g", chain, "after", 100, 100);
		PT_CHECK_INT(put(c, &e), 0);
		count++;
		pt_cache_close(c);
	}
	printf("# %d of 8 writers killed, %d entries\n", killed, count);
}

/* --- uses ----------------------------------------------------------------- */

static int64_t last_use(struct pt_cache *c, int n)
{
	struct pt_error err = PT_ERROR_INIT;
	uint8_t key[16];
	int64_t t = -1;
	int ret;

	set_key(key, n);
	ret = pt_cache_last_use(c, key, &t, &err);
	if (ret == PT_ENOTFOUND)
		return 0;
	if (!PT_CHECK_INT(ret, 0))
		printf("#   %s\n", err.msg);
	return t;
}

static int note(struct pt_cache *c, int n, int64_t now)
{
	struct pt_error err = PT_ERROR_INIT;
	uint8_t key[16];
	int ret;

	set_key(key, n);
	ret = pt_cache_note_use(c, key, now, &err);
	if (ret)
		printf("#   note_use: %s\n", err.msg);
	return ret;
}

PT_TEST(uses_noted_at_most_hourly)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache *c = open_rw();
	int64_t now = (int64_t)time(NULL);
	uint8_t key[16];

	PT_CHECK_INT(last_use(c, 1), 0);
	set_key(key, 1);
	{
		int64_t t;

		PT_CHECK_INT(pt_cache_last_use(c, key, &t, &err),
			     PT_ENOTFOUND);
		PT_CHECK(strstr(err.msg, "c0000000000000000000000000000001") !=
			 NULL);
	}
	PT_CHECK_INT(note(c, 1, now - 7200), 0);
	PT_CHECK_INT(last_use(c, 1), now - 7200);
	/* Within PT_CACHE_TOUCH_S: not written. */
	PT_CHECK_INT(note(c, 1, now - 7200 + PT_CACHE_TOUCH_S - 1), 0);
	PT_CHECK_INT(last_use(c, 1), now - 7200);
	PT_CHECK_INT(note(c, 1, now), 0);
	PT_CHECK_INT(last_use(c, 1), now);
	/* A use never moves back. */
	PT_CHECK_INT(note(c, 1, now - 100000), 0);
	PT_CHECK_INT(last_use(c, 1), now);
	PT_CHECK_INT(last_use(c, 2), 0);
	PT_CHECK_INT(raw_count("uses"), 1);
	pt_cache_close(c);

	/* Kept across opens; forgotten on request. */
	c = open_rw();
	PT_CHECK_INT(last_use(c, 1), now);
	PT_CHECK_INT(pt_cache_forget_use(c, key, &err), 0);
	PT_CHECK_INT(last_use(c, 1), 0);
	PT_CHECK_INT(pt_cache_forget_use(c, key, &err), PT_ENOTFOUND);
	pt_cache_close(c);
}

PT_TEST(uses_outlive_eviction_not_clear)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts o = { dir(), 1, 0, 1 };
	struct pt_cache *c;
	struct pt_cache_entry e;
	int64_t now = (int64_t)time(NULL), since, since2;
	uint64_t removed;

	c = open_opts(&o);       /* max_bytes 1: every put evicts the rest */
	PT_REQUIRE(pt_cache_uses_since(c, &since, &err) == 0);
	PT_CHECK(since >= now - 5 && since <= now + 5);
	fill(&e, 1, "g", chain, "s", now - 100, now - 100);
	PT_REQUIRE(put(c, &e) == 0);
	PT_CHECK_INT(note(c, 1, now - 100), 0);
	fill(&e, 2, "g", chain, "s", now - 50, now - 50);
	PT_REQUIRE(put(c, &e) == 0);
	PT_CHECK_INT(note(c, 2, now - 50), 0);
	expect_keys(c, "2");                 /* 1 was evicted by size */
	PT_CHECK_INT(last_use(c, 1), now - 100);
	PT_CHECK_INT(pt_cache_gc(c, 0, now, &removed, &err), 0);
	PT_CHECK_INT(removed, 1);
	expect_keys(c, "");
	PT_CHECK_INT(last_use(c, 1), now - 100);
	PT_CHECK_INT(last_use(c, 2), now - 50);

	/* clear forgets the uses and moves uses_since to now. */
	pt_time_sleep_ms(1100);
	PT_CHECK_INT(pt_cache_clear(c, &err), 0);
	PT_CHECK_INT(last_use(c, 1), 0);
	PT_CHECK_INT(last_use(c, 2), 0);
	PT_REQUIRE(pt_cache_uses_since(c, &since2, &err) == 0);
	PT_CHECK(since2 > since);
	pt_cache_close(c);
	PT_CHECK_INT(raw_count("uses"), 0);
}

/* A format 1 cache written before the uses database: remove it (and the
 * meta record that goes with it) with raw LMDB. */
static void raw_drop_uses(void)
{
	MDB_env *env = raw_open();
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { 10, (void *)"uses_since" };

	PT_REQUIRE(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	PT_REQUIRE(mdb_dbi_open(txn, "uses", 0, &dbi) == 0);
	PT_REQUIRE(mdb_drop(txn, dbi, 1) == 0);
	PT_REQUIRE(mdb_dbi_open(txn, "meta", 0, &dbi) == 0);
	PT_REQUIRE(mdb_del(txn, dbi, &k, NULL) == 0);
	PT_REQUIRE(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
}

static int raw_has_uses(void)
{
	MDB_env *env = raw_open();
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;

	PT_REQUIRE(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0);
	rc = mdb_dbi_open(txn, "uses", 0, &dbi);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return rc == 0;
}

PT_TEST(uses_in_a_cache_without_them)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_cache_opts ro = { dir(), 0, 1, 0 };
	struct pt_cache *c = open_rw();
	struct pt_cache_entry e, got;
	unsigned char created[8];
	int64_t now = (int64_t)time(NULL), since;
	int i;

	fill(&e, 1, "g", chain, "s", 100, 100);
	PT_REQUIRE(put(c, &e) == 0);
	PT_CHECK_INT(note(c, 1, now), 0);
	pt_cache_close(c);
	PT_REQUIRE(raw_has_uses());
	raw_drop_uses();
	PT_REQUIRE(!raw_has_uses());
	/* Created long ago. */
	for (i = 0; i < 8; i++)
		created[i] = (unsigned char)((uint64_t)(now - 86400) >>
					     (8 * i));
	raw_put("meta", "created", 7, created, 8);

	/* Read-only: no uses, and nothing is created. */
	c = open_opts(&ro);
	PT_REQUIRE(pt_cache_get(c, e.key, &got, &err) == 0);
	pt_cache_entry_release(&got);
	PT_CHECK_INT(last_use(c, 1), 0);
	PT_REQUIRE(pt_cache_uses_since(c, &since, &err) == 0);
	PT_CHECK(since >= now);
	pt_cache_close(c);
	PT_CHECK(!raw_has_uses());

	/* Writable: the database is made, and uses count from now (not from
	 * the cache's creation a day ago). */
	c = open_rw();
	PT_CHECK(raw_has_uses());
	PT_REQUIRE(pt_cache_uses_since(c, &since, &err) == 0);
	PT_CHECK(since >= now && since <= now + 5);
	PT_CHECK_INT(last_use(c, 1), 0);
	PT_CHECK_INT(note(c, 1, now), 0);
	PT_CHECK_INT(last_use(c, 1), now);
	pt_cache_close(c);
}

PT_SUITE(cache,
	 { "put_get_round_trip", put_get_round_trip },
	 { "bad_model_is_refused", bad_model_is_refused },
	 { "replace_and_del", replace_and_del },
	 { "each_in_key_order", each_in_key_order },
	 { "similar_newest_first", similar_newest_first },
	 { "stage_lookup_and_index_cleanup", stage_lookup_and_index_cleanup },
	 { "samples_in_order", samples_in_order },
	 { "stats_add_and_zero", stats_add_and_zero },
	 { "clear_keeps_the_format", clear_keeps_the_format },
	 { "lease_take_busy_release", lease_take_busy_release },
	 { "lease_foreign_and_reused_pid", lease_foreign_and_reused_pid },
	 { "format_mismatch", format_mismatch },
	 { "garbage_data_file", garbage_data_file },
	 { "bad_record", bad_record },
	 { "map_growth", map_growth },
	 { "eviction_lru", eviction_lru },
	 { "hit_touches_used_at", hit_touches_used_at },
	 { "readonly_never_writes", readonly_never_writes },
	 { "concurrent_processes", concurrent_processes },
	 { "crash_mid_write", crash_mid_write },
	 { "uses_noted_at_most_hourly", uses_noted_at_most_hourly },
	 { "uses_outlive_eviction_not_clear", uses_outlive_eviction_not_clear },
	 { "uses_in_a_cache_without_them", uses_in_a_cache_without_them });
