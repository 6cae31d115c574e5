#define _DEFAULT_SOURCE /* realpath */
#include "pt_test.h"
#include "protune/pt_model.h"
#include "protune/pt_store.h"

#include <dirent.h>
#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- fixtures ------------------------------------------------------------- */

static char repo_dir[PATH_MAX / 2];

/* Keep libgit2 initialised for the whole case (pt_store_close must not
 * shut it down and reset the options) and hide the user's and system's
 * git config, so that the identity comes from the test repository only. */
static void git_setup(void)
{
	char none[PATH_MAX];

	PT_REQUIRE(git_libgit2_init() > 0);
	snprintf(none, sizeof(none), "%s/noconfig", pt_test_tmpdir());
	PT_REQUIRE(mkdir(none, 0777) == 0);
	PT_REQUIRE(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH,
				    GIT_CONFIG_LEVEL_GLOBAL, none) == 0);
	PT_REQUIRE(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH,
				    GIT_CONFIG_LEVEL_XDG, none) == 0);
	PT_REQUIRE(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH,
				    GIT_CONFIG_LEVEL_SYSTEM, none) == 0);
	PT_REQUIRE(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH,
				    GIT_CONFIG_LEVEL_PROGRAMDATA, none) == 0);
}

/* A fresh repository at TMP/repo, with an identity when asked. */
static git_repository *make_repo(int identity)
{
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	char *real;

	git_setup();
	snprintf(repo_dir, sizeof(repo_dir), "%s/repo", pt_test_tmpdir());
	PT_REQUIRE(git_repository_init(&repo, repo_dir, 0) == 0);
	if (identity) {
		PT_REQUIRE(git_repository_config(&cfg, repo) == 0);
		PT_REQUIRE(git_config_set_string(cfg, "user.name",
						 "Tess T") == 0);
		PT_REQUIRE(git_config_set_string(cfg, "user.email",
						 "tess@example.org") == 0);
		git_config_free(cfg);
	}
	real = realpath(repo_dir, NULL);
	PT_REQUIRE(real);
	snprintf(repo_dir, sizeof(repo_dir), "%s", real);
	free(real);
	return repo;
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0777);
			*p = '/';
		}
	mkdir(buf, 0777);
}

/* Write REPO/rel (creating directories). */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", repo_dir, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	mkdirs(path);
	*slash = '/';
	f = fopen(path, "w");
	PT_REQUIRE(f);
	fputs(text, f);
	PT_REQUIRE(fclose(f) == 0);
}

static int exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static void key_of(int seed, uint8_t key[16])
{
	int i;

	for (i = 0; i < 16; i++)
		key[i] = (uint8_t)(seed * 37 + i * 11);
}

static void hex_of(int seed, char hex[33])
{
	uint8_t key[16];

	key_of(seed, key);
	pt_hash_hex(key, hex);
}

/* A schedule text whose meta names generator, function and target. */
static void sched_text(int seed, const char *gen, char *buf, size_t n)
{
	char hex[33];

	hex_of(seed, hex);
	snprintf(buf, n, "protune-schedule 1\nkey %s\nmeta generator=%s\n"
		 "meta function=%s_fn\nmeta target=x86-64-linux\n"
		 "meta tuner=baseline\nfunc f0 root\n", hex, gen, gen);
}

static struct pt_store *open_store(const char *dir)
{
	struct pt_store_opts o = { NULL, NULL };
	struct pt_error err = PT_ERROR_INIT;
	struct pt_store *st = NULL;

	o.start_dir = repo_dir;
	o.dir = dir;
	if (!PT_CHECK_INT(pt_store_open(&o, &st, &err), 0))
		printf("# %s\n", err.msg);
	PT_REQUIRE(st);
	return st;
}

static void store_put(struct pt_store *st, const char *gen, int seed)
{
	struct pt_error err = PT_ERROR_INIT;
	uint8_t key[16];
	char text[512];

	key_of(seed, key);
	sched_text(seed, gen, text, sizeof(text));
	if (!PT_CHECK_INT(pt_store_write(st, gen, key, text, strlen(text),
					 &err), 0))
		printf("# %s\n", err.msg);
}

/* Commit every file of the work tree named in `paths` the ordinary way
 * (through the real index), as a user would. */
static void user_commit(git_repository *repo, const char *const *paths,
			git_oid *out)
{
	git_index *idx;
	git_signature *sig;
	git_tree *tree;
	git_commit *parent = NULL;
	git_reference *head;
	git_oid tid;
	const git_commit *parents[1];

	PT_REQUIRE(git_repository_index(&idx, repo) == 0);
	for (; *paths; paths++)
		PT_REQUIRE(git_index_add_bypath(idx, *paths) == 0);
	PT_REQUIRE(git_index_write(idx) == 0);
	PT_REQUIRE(git_index_write_tree(&tid, idx) == 0);
	git_index_free(idx);
	PT_REQUIRE(git_tree_lookup(&tree, repo, &tid) == 0);
	PT_REQUIRE(git_signature_now(&sig, "U Ser", "u@example.org") == 0);
	if (git_repository_head(&head, repo) == 0) {
		PT_REQUIRE(git_commit_lookup(&parent, repo,
					     git_reference_target(head)) == 0);
		git_reference_free(head);
	}
	parents[0] = parent;
	PT_REQUIRE(git_commit_create(out, repo, "HEAD", sig, sig, NULL,
				     "user commit\n", tree, parent ? 1 : 0,
				     parents) == 0);
	git_commit_free(parent);
	git_tree_free(tree);
	git_signature_free(sig);
}

static void head_commit(git_repository *repo, git_commit **out)
{
	git_oid id;

	PT_REQUIRE(git_reference_name_to_id(&id, repo, "HEAD") == 0);
	PT_REQUIRE(git_commit_lookup(out, repo, &id) == 0);
}

/* The blob's text at `path` in commit `c`, or NULL when absent. */
static char *blob_at(git_commit *c, const char *path)
{
	git_tree *tree;
	git_tree_entry *e;
	git_blob *blob;
	char *s = NULL;

	PT_REQUIRE(git_commit_tree(&tree, c) == 0);
	if (git_tree_entry_bypath(&e, tree, path) == 0) {
		PT_REQUIRE(git_blob_lookup(&blob, git_commit_owner(c),
					   git_tree_entry_id(e)) == 0);
		s = strndup(git_blob_rawcontent(blob),
			    (size_t)git_blob_rawsize(blob));
		git_blob_free(blob);
		git_tree_entry_free(e);
	}
	git_tree_free(tree);
	return s;
}

/* Every blob path of a commit's tree, one a line. */
static int list_cb(const char *root, const git_tree_entry *e, void *ctx)
{
	if (git_tree_entry_type(e) == GIT_OBJECT_BLOB)
		pt_strbuf_addf(ctx, "%s%s\n", root, git_tree_entry_name(e));
	return 0;
}

static void tree_paths(git_commit *c, struct pt_strbuf *out)
{
	git_tree *tree;

	PT_REQUIRE(git_commit_tree(&tree, c) == 0);
	PT_REQUIRE(git_tree_walk(tree, GIT_TREEWALK_PRE, list_cb, out) == 0);
	git_tree_free(tree);
}

static int count_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	PT_REQUIRE(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* --- opening -------------------------------------------------------------- */

PT_TEST(open_outside_a_repository)
{
	struct pt_store_opts o = { NULL, NULL };
	struct pt_error err = PT_ERROR_INIT;
	struct pt_store *st = (struct pt_store *)&o;
	git_buf found = GIT_BUF_INIT;

	git_setup();
	if (git_repository_discover(&found, pt_test_tmpdir(), 0, NULL) == 0) {
		printf("# skipped: %s is inside %s\n", pt_test_tmpdir(),
		       found.ptr);
		git_buf_dispose(&found);
		return;
	}
	o.start_dir = pt_test_tmpdir();
	PT_CHECK_INT(pt_store_open(&o, &st, &err), PT_ENOTFOUND);
	PT_CHECK(st == NULL);
	PT_CHECK(strstr(err.msg, "not in a git repository: the store is off"));
	pt_store_close(NULL);
}

PT_TEST(open_bare_repository_is_off)
{
	struct pt_store_opts o = { NULL, NULL };
	struct pt_error err = PT_ERROR_INIT;
	struct pt_store *st = NULL;
	git_repository *repo;
	char path[PATH_MAX];

	git_setup();
	snprintf(path, sizeof(path), "%s/bare.git", pt_test_tmpdir());
	PT_REQUIRE(git_repository_init(&repo, path, 1) == 0);
	git_repository_free(repo);
	o.start_dir = path;
	PT_CHECK_INT(pt_store_open(&o, &st, &err), PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "the store is off"));
}

PT_TEST(default_store_dir_from_a_subdirectory)
{
	struct pt_store_opts o = { NULL, NULL };
	struct pt_store *st = NULL;
	git_repository *repo = make_repo(1);
	char sub[PATH_MAX], want[PATH_MAX + 16];

	snprintf(sub, sizeof(sub), "%s/src/deep", repo_dir);
	mkdirs(sub);
	o.start_dir = sub;
	PT_REQUIRE(pt_store_open(&o, &st, NULL) == 0);
	PT_CHECK_STR(pt_store_root(st), repo_dir);
	snprintf(want, sizeof(want), "%s/protune", repo_dir);
	PT_CHECK_STR(pt_store_dir(st), want);
	PT_CHECK(!exists(want)); /* opening creates nothing */
	pt_store_close(st);

	/* The current directory when start_dir is NULL. */
	PT_REQUIRE(chdir(sub) == 0);
	o.start_dir = NULL;
	o.dir = "";
	PT_REQUIRE(pt_store_open(&o, &st, NULL) == 0);
	PT_CHECK_STR(pt_store_dir(st), want);
	pt_store_close(st);
	git_repository_free(repo);
}

static void check_dir(const char *dir, const char *want_rel)
{
	struct pt_store *st = open_store(dir);
	char want[PATH_MAX + 64];

	snprintf(want, sizeof(want), "%s/%s", repo_dir, want_rel);
	PT_CHECK_STR(pt_store_dir(st), want);
	pt_store_close(st);
}

static void check_bad_dir(const char *dir, const char *msg)
{
	struct pt_store_opts o = { NULL, NULL };
	struct pt_error err = PT_ERROR_INIT;
	struct pt_store *st = NULL;

	o.start_dir = repo_dir;
	o.dir = dir;
	PT_CHECK_INT(pt_store_open(&o, &st, &err), PT_EINVAL);
	PT_CHECK(st == NULL);
	if (!PT_CHECK(strstr(err.msg, msg)))
		printf("#   message: %s\n", err.msg);
}

PT_TEST(custom_store_dirs)
{
	git_repository *repo = make_repo(1);
	char path[PATH_MAX + 128], link[PATH_MAX + 64];

	check_dir("schedules", "schedules");
	check_dir("tools/./protune/", "tools/protune");
	check_dir("a/../b", "b");
	snprintf(path, sizeof(path), "%s/abs/store", repo_dir);
	check_dir(path, "abs/store");
	snprintf(path, sizeof(path), "%s/x/../../repo/y", repo_dir);
	check_dir(path, "y");
	/* An absolute path through a symbolic link into the tree. */
	snprintf(link, sizeof(link), "%s/link", pt_test_tmpdir());
	PT_REQUIRE(symlink(repo_dir, link) == 0);
	snprintf(path, sizeof(path), "%s/via/link", link);
	check_dir(path, "via/link");

	snprintf(path, sizeof(path), "%s/elsewhere", pt_test_tmpdir());
	check_bad_dir(path, "is outside the work tree");
	check_bad_dir("/", "is outside the work tree");
	check_bad_dir("../sibling", "is outside the work tree");
	check_bad_dir("a/../../b", "is outside the work tree");
	check_bad_dir(".", "work tree's root");
	check_bad_dir(repo_dir, "work tree's root");
	check_bad_dir(".git/protune", "inside .git");
	git_repository_free(repo);
}

/* --- files ---------------------------------------------------------------- */

PT_TEST(path_naming_and_generator_sanitising)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_strbuf p = PT_STRBUF_INIT;
	char want[PATH_MAX + 128], hex[33];
	uint8_t key[16];
	static const char *const cases[][2] = {
		{ "blur", "blur" },
		{ "Blur_2.x-y", "Blur_2.x-y" },
		{ "my gen/../x", "my_gen_.._x" },
		{ "", "_" },
		{ ".", "_" },
		{ "..", "_." },
		{ ".git", "_git" },
		{ "a\xc3\xa4:b", "a___b" },
	};
	size_t i;

	key_of(1, key);
	hex_of(1, hex);
	PT_CHECK_INT(strlen(hex), 32);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pt_strbuf_reset(&p);
		PT_CHECK_INT(pt_store_path(st, cases[i][0], key, &p), 0);
		snprintf(want, sizeof(want), "%s/protune/%s/%s.schedule",
			 repo_dir, cases[i][1], hex);
		PT_CHECK_STR(p.buf, want);
	}
	PT_CHECK_INT(pt_store_path(st, NULL, key, &p), PT_EINVAL);
	pt_strbuf_release(&p);
	pt_store_close(st);
	git_repository_free(repo);
}

PT_TEST(write_read_round_trip)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf text = PT_STRBUF_INIT, path = PT_STRBUF_INIT;
	struct pt_strbuf want = PT_STRBUF_INIT;
	char gendir[PATH_MAX + 64], hex[33];
	struct stat sb;
	uint8_t key[16];

	key_of(2, key);
	hex_of(2, hex);
	PT_CHECK_INT(pt_store_read(st, "blur", key, &text, &path, &err),
		     PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, hex));
	PT_CHECK_INT(pt_store_write(st, "blur", key, "first\n", 6, &err), 0);
	PT_CHECK_INT(pt_store_write(st, "blur", key, "second\n", 7, &err), 0);
	pt_strbuf_addstr(&text, "kept:");
	PT_CHECK_INT(pt_store_read(st, "blur", key, &text, &path, &err), 0);
	PT_CHECK_STR(text.buf, "kept:second\n");
	pt_store_path(st, "blur", key, &want);
	PT_CHECK_STR(path.buf, want.buf);
	PT_REQUIRE(stat(want.buf, &sb) == 0);
	PT_CHECK_INT(sb.st_mode & 0777, 0644);
	/* Only the file: no temporary left behind. */
	snprintf(gendir, sizeof(gendir), "%s/protune/blur", repo_dir);
	PT_CHECK_INT(count_entries(gendir), 1);
	/* Empty text, and a large one. */
	PT_CHECK_INT(pt_store_write(st, "blur", key, "", 0, &err), 0);
	pt_strbuf_reset(&text);
	PT_CHECK_INT(pt_store_read(st, "blur", key, &text, NULL, &err), 0);
	PT_CHECK_INT(text.len, 0);
	{
		static char big[100000];

		memset(big, 'x', sizeof(big));
		PT_CHECK_INT(pt_store_write(st, "blur", key, big, sizeof(big),
					    &err), 0);
		pt_strbuf_reset(&text);
		PT_CHECK_INT(pt_store_read(st, "blur", key, &text, NULL, &err),
			     0);
		PT_CHECK_INT(text.len, sizeof(big));
		PT_CHECK(memcmp(text.buf, big, sizeof(big)) == 0);
	}
	/* Remove. */
	PT_CHECK_INT(pt_store_remove(st, "blur", key, &err), 0);
	PT_CHECK(!exists(want.buf));
	PT_CHECK(!exists(gendir)); /* the empty directory went too */
	PT_CHECK_INT(pt_store_remove(st, "blur", key, &err), PT_ENOTFOUND);
	pt_strbuf_reset(&text);
	PT_CHECK_INT(pt_store_read(st, "blur", key, &text, NULL, &err),
		     PT_ENOTFOUND);
	pt_strbuf_release(&text);
	pt_strbuf_release(&path);
	pt_strbuf_release(&want);
	pt_store_close(st);
	git_repository_free(repo);
}

PT_TEST(read_errors_name_the_path)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf text = PT_STRBUF_INIT, p = PT_STRBUF_INIT;
	uint8_t key[16];

	key_of(3, key);
	pt_store_path(st, "blur", key, &p);
	mkdirs(p.buf); /* a directory where the file should be */
	PT_CHECK_INT(pt_store_read(st, "blur", key, &text, NULL, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, p.buf));
	PT_CHECK_INT(pt_store_read(st, NULL, key, &text, NULL, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, p.buf));
	/* The store dir is a file: writes fail with EIO. */
	PT_REQUIRE(rmdir(p.buf) == 0);
	pt_strbuf_reset(&p);
	pt_strbuf_addf(&p, "%s/protune/blur", repo_dir);
	PT_REQUIRE(rmdir(p.buf) == 0);
	put("protune/blur", "not a directory\n");
	PT_CHECK_INT(pt_store_write(st, "blur", key, "x\n", 2, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "protune/blur"));
	PT_CHECK_INT(pt_store_read(st, "blur", key, &text, NULL, &err),
		     PT_ENOTFOUND);
	pt_strbuf_release(&text);
	pt_strbuf_release(&p);
	pt_store_close(st);
	git_repository_free(repo);
}

PT_TEST(read_with_any_generator)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf text = PT_STRBUF_INIT, path = PT_STRBUF_INIT;
	char want[PATH_MAX + 128], hex[33];
	uint8_t key[16];

	key_of(4, key);
	/* No store directory yet. */
	PT_CHECK_INT(pt_store_read(st, NULL, key, &text, &path, &err),
		     PT_ENOTFOUND);
	store_put(st, "blur", 5);
	store_put(st, "sharpen", 4);
	store_put(st, "zoom", 6);
	PT_CHECK_INT(pt_store_read(st, NULL, key, &text, &path, &err), 0);
	hex_of(4, hex);
	snprintf(want, sizeof(want), "%s/protune/sharpen/%s.schedule",
		 repo_dir, hex);
	PT_CHECK_STR(path.buf, want);
	PT_CHECK(strstr(text.buf, "meta generator=sharpen\n"));
	/* The wrong generator misses; an absent key misses. */
	PT_CHECK_INT(pt_store_read(st, "blur", key, &text, NULL, &err),
		     PT_ENOTFOUND);
	key_of(99, key);
	pt_strbuf_reset(&text);
	pt_strbuf_reset(&path);
	PT_CHECK_INT(pt_store_read(st, NULL, key, &text, &path, &err),
		     PT_ENOTFOUND);
	hex_of(99, hex);
	PT_CHECK(strstr(err.msg, hex));
	PT_CHECK_INT(text.len, 0);
	PT_CHECK_INT(path.len, 0);
	pt_strbuf_release(&text);
	pt_strbuf_release(&path);
	pt_store_close(st);
	git_repository_free(repo);
}

struct seen {
	struct pt_strbuf log;
	int stop_at, calls;
};

static int each_cb(void *ctx, const char *path, const char *generator,
		   const uint8_t key[16])
{
	struct seen *s = ctx;
	char hex[33];

	pt_hash_hex(key, hex);
	PT_CHECK(strstr(path, hex) && strstr(path, generator));
	pt_strbuf_addf(&s->log, "%s %.6s\n", generator, hex);
	return ++s->calls == s->stop_at ? 42 : 0;
}

PT_TEST(each_skips_temporary_and_foreign_files)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct seen s = { PT_STRBUF_INIT, 0, 0 };
	char hex[33], rel[128], want[256];
	char h1[33], h2[33], h3[33];

	PT_CHECK_INT(pt_store_each(st, each_cb, &s, &err), 0);
	PT_CHECK_INT(s.calls, 0);
	store_put(st, "sharpen", 1);
	store_put(st, "blur", 2);
	store_put(st, "blur", 3);
	hex_of(7, hex);
	snprintf(rel, sizeof(rel), "protune/blur/.tmp-%s", "Ab12Cd");
	put(rel, "partial");
	put("protune/blur/README", "hello\n");
	snprintf(rel, sizeof(rel), "protune/%s.schedule", hex);
	put(rel, "in the store's root\n");
	snprintf(rel, sizeof(rel), "protune/.hidden/%s.schedule", hex);
	put(rel, "hidden generator\n");
	snprintf(rel, sizeof(rel), "protune/blur/deeper/%s.schedule", hex);
	put(rel, "too deep\n");
	snprintf(rel, sizeof(rel), "protune/blur/%.31s.schedule", hex);
	put(rel, "short key\n");
	snprintf(rel, sizeof(rel), "protune/blur/%s.schedule~", hex);
	put(rel, "backup\n");
	snprintf(rel, sizeof(rel), "protune/blur/%s.schedule", hex);
	rel[13] = 'A';
	rel[14] = 'B';
	put(rel, "upper case\n");
	PT_CHECK_INT(pt_store_each(st, each_cb, &s, &err), 0);
	hex_of(1, h1);
	hex_of(2, h2);
	hex_of(3, h3);
	/* Path order: blur's two files by key, then sharpen. */
	if (strcmp(h2, h3) < 0)
		snprintf(want, sizeof(want), "blur %.6s\nblur %.6s\n"
			 "sharpen %.6s\n", h2, h3, h1);
	else
		snprintf(want, sizeof(want), "blur %.6s\nblur %.6s\n"
			 "sharpen %.6s\n", h3, h2, h1);
	PT_CHECK_STR(s.log.buf, want);
	s.calls = 0;
	s.stop_at = 2;
	PT_CHECK_INT(pt_store_each(st, each_cb, &s, &err), 42);
	PT_CHECK_INT(s.calls, 2);
	pt_strbuf_release(&s.log);
	pt_store_close(st);
	git_repository_free(repo);
}

/* --- provenance ----------------------------------------------------------- */

PT_TEST(provenance_unborn_clean_and_dirty)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf commit = PT_STRBUF_INIT;
	const char *files[] = { "src/a.c", "protune/blur/x.schedule", NULL };
	char hex[GIT_OID_HEXSZ + 1];
	git_oid id;
	int dirty = -1;

	PT_CHECK_INT(pt_store_provenance(st, &commit, &dirty, &err), 0);
	PT_CHECK_STR(commit.buf, "");
	PT_CHECK_INT(dirty, 0);
	put("src/a.c", "int a;\n");
	put("protune/blur/x.schedule", "old\n");
	user_commit(repo, files, &id);
	git_oid_tostr(hex, sizeof(hex), &id);
	PT_CHECK_INT(pt_store_provenance(st, &commit, &dirty, &err), 0);
	PT_CHECK_STR(commit.buf, hex);
	PT_CHECK_INT(dirty, 0);
	/* Changes inside the store and untracked files do not count. */
	put("protune/blur/x.schedule", "new\n");
	put("protune/blur/y.schedule", "new\n");
	put("src/untracked.c", "int u;\n");
	pt_strbuf_reset(&commit);
	PT_CHECK_INT(pt_store_provenance(st, &commit, &dirty, &err), 0);
	PT_CHECK_STR(commit.buf, hex);
	PT_CHECK_INT(dirty, 0);
	/* A tracked source that changed does. */
	put("src/a.c", "int a = 1;\n");
	pt_strbuf_reset(&commit);
	PT_CHECK_INT(pt_store_provenance(st, &commit, &dirty, &err), 0);
	PT_CHECK_INT(dirty, 1);
	/* So does a staged new file. */
	put("src/a.c", "int a;\n");
	PT_CHECK_INT(pt_store_provenance(st, &commit, &dirty, &err), 0);
	PT_CHECK_INT(dirty, 0);
	{
		const char *staged[] = { "src/untracked.c", NULL };
		git_index *idx;

		PT_REQUIRE(git_repository_index(&idx, repo) == 0);
		PT_REQUIRE(git_index_add_bypath(idx, staged[0]) == 0);
		PT_REQUIRE(git_index_write(idx) == 0);
		git_index_free(idx);
	}
	PT_CHECK_INT(pt_store_provenance(st, &commit, &dirty, &err), 0);
	PT_CHECK_INT(dirty, 1);
	pt_strbuf_release(&commit);
	pt_store_close(st);
	git_repository_free(repo);
}

/* --- commit --------------------------------------------------------------- */

PT_TEST(commit_on_an_unborn_branch)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf sum = PT_STRBUF_INIT, want = PT_STRBUF_INIT;
	struct pt_strbuf paths = PT_STRBUF_INIT;
	char h1[33], h2[33], id[GIT_OID_HEXSZ + 1], *blob;
	git_commit *c;

	put("src/a.c", "int a;\n"); /* untracked: never committed by us */
	store_put(st, "blur", 1);
	store_put(st, "sharpen", 2);
	if (!PT_CHECK_INT(pt_store_commit(st, NULL, &sum, &err), 0))
		printf("# %s\n", err.msg);
	head_commit(repo, &c);
	PT_CHECK_INT(git_commit_parentcount(c), 0);
	git_oid_tostr(id, sizeof(id), git_commit_id(c));
	hex_of(1, h1);
	hex_of(2, h2);
	pt_strbuf_addf(&want, "%s\nA protune/blur/%s.schedule\n"
		       "A protune/sharpen/%s.schedule\n", id, h1, h2);
	PT_CHECK_STR(sum.buf, want.buf);
	tree_paths(c, &paths);
	pt_strbuf_reset(&want);
	pt_strbuf_addf(&want, "protune/blur/%s.schedule\n"
		       "protune/sharpen/%s.schedule\n", h1, h2);
	PT_CHECK_STR(paths.buf, want.buf);
	pt_strbuf_reset(&want);
	pt_strbuf_addf(&want, "protune/blur/%s.schedule", h1);
	blob = blob_at(c, want.buf);
	PT_CHECK(blob && strstr(blob, "meta generator=blur\n"));
	free(blob);
	PT_CHECK_STR(git_commit_author(c)->name, "Tess T");
	PT_CHECK_STR(git_commit_committer(c)->email, "tess@example.org");
	pt_strbuf_reset(&want);
	pt_strbuf_addf(&want, "protune: 2 schedules for blur, sharpen\n\n"
		       "blur blur_fn x86-64-linux %.12s\n"
		       "sharpen sharpen_fn x86-64-linux %.12s\n", h1, h2);
	PT_CHECK_STR(git_commit_message(c), want.buf);
	git_commit_free(c);
	/* The branch HEAD named was created. */
	{
		git_reference *head;

		PT_REQUIRE(git_repository_head(&head, repo) == 0);
		PT_CHECK(git_reference_is_branch(head));
		git_reference_free(head);
	}
	/* Now clean; the status of the store is empty. */
	pt_strbuf_reset(&sum);
	PT_CHECK_INT(pt_store_status(st, &sum, &err), 0);
	PT_CHECK_STR(sum.buf, "");
	PT_CHECK_INT(pt_store_commit(st, NULL, NULL, &err), PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "nothing to commit"));
	pt_strbuf_release(&sum);
	pt_strbuf_release(&want);
	pt_strbuf_release(&paths);
	pt_store_close(st);
	git_repository_free(repo);
}

/* The status of `path` in the real repository. */
static unsigned int file_status(git_repository *repo, const char *path)
{
	unsigned int flags = 0;

	PT_REQUIRE(git_status_file(&flags, repo, path) == 0);
	return flags;
}

PT_TEST(commit_on_top_keeps_user_changes_out)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st;
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf sum = PT_STRBUF_INIT, want = PT_STRBUF_INIT;
	struct pt_strbuf paths = PT_STRBUF_INIT, rel = PT_STRBUF_INIT;
	const char *files[] = { "src/a.c", "protune/README", NULL };
	char h1[33], h2[33], id[GIT_OID_HEXSZ + 1], *blob;
	git_oid first, second;
	git_commit *c;

	put("src/a.c", "int a;\n");
	put("protune/README", "schedules\n");
	user_commit(repo, files, &first);
	st = open_store(NULL);
	/* The user stages a new file and edits another without staging. */
	put("src/staged.c", "int s;\n");
	{
		git_index *idx;

		PT_REQUIRE(git_repository_index(&idx, repo) == 0);
		PT_REQUIRE(git_index_add_bypath(idx, "src/staged.c") == 0);
		PT_REQUIRE(git_index_write(idx) == 0);
		git_index_free(idx);
	}
	put("src/a.c", "int a = 2;\n");
	put("protune/README", "edited, not ours\n");
	store_put(st, "blur", 1);
	PT_CHECK_INT(pt_store_commit(st, NULL, &sum, &err), 0);
	head_commit(repo, &c);
	git_oid_cpy(&second, git_commit_id(c));
	PT_REQUIRE(git_commit_parentcount(c) == 1);
	PT_CHECK(git_oid_equal(git_commit_parent_id(c, 0), &first));
	tree_paths(c, &paths);
	hex_of(1, h1);
	pt_strbuf_addf(&want, "protune/README\nprotune/blur/%s.schedule\n"
		       "src/a.c\n", h1);
	PT_CHECK_STR(paths.buf, want.buf);
	blob = blob_at(c, "src/a.c");
	PT_CHECK_STR(blob, "int a;\n");
	free(blob);
	blob = blob_at(c, "protune/README");
	PT_CHECK_STR(blob, "schedules\n");
	free(blob);
	git_commit_free(c);
	/* The user's staged file is still staged, the edit still unstaged,
	 * and the committed schedule is clean. */
	PT_CHECK_INT(file_status(repo, "src/staged.c"), GIT_STATUS_INDEX_NEW);
	PT_CHECK_INT(file_status(repo, "src/a.c"), GIT_STATUS_WT_MODIFIED);
	pt_strbuf_addf(&rel, "protune/blur/%s.schedule", h1);
	PT_CHECK_INT(file_status(repo, rel.buf), GIT_STATUS_CURRENT);

	/* Modify one, add one, delete none: then delete. */
	store_put(st, "blur", 2);
	put(rel.buf, "changed, no longer parses\n");
	pt_strbuf_reset(&sum);
	PT_CHECK_INT(pt_store_status(st, &sum, &err), 0);
	hex_of(2, h2);
	pt_strbuf_reset(&want);
	pt_strbuf_addf(&want, "M protune/blur/%s.schedule\n"
		       "A protune/blur/%s.schedule\n", h1, h2);
	if (strcmp(h1, h2) > 0) {
		pt_strbuf_reset(&want);
		pt_strbuf_addf(&want, "A protune/blur/%s.schedule\n"
			       "M protune/blur/%s.schedule\n", h2, h1);
	}
	PT_CHECK_STR(sum.buf, want.buf);
	pt_strbuf_reset(&sum);
	PT_CHECK_INT(pt_store_commit(st, "my message", &sum, &err), 0);
	head_commit(repo, &c);
	PT_CHECK(git_oid_equal(git_commit_parent_id(c, 0), &second));
	PT_CHECK_STR(git_commit_message(c), "my message\n");
	git_oid_tostr(id, sizeof(id), git_commit_id(c));
	PT_CHECK(strncmp(sum.buf, id, strlen(id)) == 0);
	PT_CHECK_STR(sum.buf + strlen(id) + 1, want.buf);
	git_oid_cpy(&second, git_commit_id(c));
	git_commit_free(c);

	/* Deletion. */
	{
		uint8_t key[16];

		key_of(2, key);
		PT_CHECK_INT(pt_store_remove(st, "blur", key, &err), 0);
	}
	pt_strbuf_reset(&sum);
	PT_CHECK_INT(pt_store_status(st, &sum, &err), 0);
	pt_strbuf_reset(&want);
	pt_strbuf_addf(&want, "D protune/blur/%s.schedule\n", h2);
	PT_CHECK_STR(sum.buf, want.buf);
	PT_CHECK_INT(pt_store_commit(st, NULL, NULL, &err), 0);
	head_commit(repo, &c);
	pt_strbuf_reset(&want);
	pt_strbuf_addf(&want, "protune: 1 schedule for blur\n\n"
		       "D protune/blur/%s.schedule\n", h2);
	PT_CHECK_STR(git_commit_message(c), want.buf);
	pt_strbuf_reset(&paths);
	tree_paths(c, &paths);
	pt_strbuf_reset(&want);
	pt_strbuf_addf(&want, "protune/README\nprotune/blur/%s.schedule\n"
		       "src/a.c\n", h1);
	PT_CHECK_STR(paths.buf, want.buf);
	git_commit_free(c);
	PT_CHECK_INT(file_status(repo, "src/staged.c"), GIT_STATUS_INDEX_NEW);
	PT_CHECK_INT(pt_store_commit(st, NULL, NULL, &err), PT_ENOTFOUND);

	pt_strbuf_release(&sum);
	pt_strbuf_release(&want);
	pt_strbuf_release(&paths);
	pt_strbuf_release(&rel);
	pt_store_close(st);
	git_repository_free(repo);
}

PT_TEST(commit_message_lists_generators)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store("sched");
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf want = PT_STRBUF_INIT, rel = PT_STRBUF_INIT;
	char h[4][33];
	git_commit *c;
	int i;

	store_put(st, "zoom", 0);
	store_put(st, "blur", 1);
	store_put(st, "blur", 2);
	for (i = 0; i < 4; i++)
		hex_of(i, h[i]);
	pt_strbuf_addf(&rel, "sched/blur/%s.schedule", h[3]);
	put(rel.buf, "garbage\n");
	PT_CHECK_INT(pt_store_commit(st, "", NULL, &err), 0);
	head_commit(repo, &c);
	pt_strbuf_addstr(&want, "protune: 4 schedules for blur, zoom\n\n");
	{
		/* blur's files in key order, then zoom's. */
		int order[3] = { 1, 2, 3 }, j, t;

		for (i = 0; i < 3; i++)
			for (j = i + 1; j < 3; j++)
				if (strcmp(h[order[i]], h[order[j]]) > 0) {
					t = order[i];
					order[i] = order[j];
					order[j] = t;
				}
		for (i = 0; i < 3; i++)
			if (order[i] == 3)
				pt_strbuf_addf(&want, "? ? ? %.12s\n", h[3]);
			else
				pt_strbuf_addf(&want, "blur blur_fn "
					       "x86-64-linux %.12s\n",
					       h[order[i]]);
	}
	pt_strbuf_addf(&want, "zoom zoom_fn x86-64-linux %.12s\n", h[0]);
	PT_CHECK_STR(git_commit_message(c), want.buf);
	git_commit_free(c);
	pt_strbuf_release(&want);
	pt_strbuf_release(&rel);
	pt_store_close(st);
	git_repository_free(repo);
}

PT_TEST(nothing_to_commit_and_missing_identity)
{
	git_repository *repo = make_repo(0);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf sum = PT_STRBUF_INIT;

	PT_CHECK_INT(pt_store_commit(st, NULL, &sum, &err), PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "nothing to commit"));
	put("protune/README", "not a schedule\n");
	PT_CHECK_INT(pt_store_commit(st, NULL, &sum, &err), PT_ENOTFOUND);
	store_put(st, "blur", 1);
	PT_CHECK_INT(pt_store_commit(st, NULL, &sum, &err), PT_EINVAL);
	PT_CHECK(strstr(err.msg, "set user.name and user.email in git config"));
	PT_CHECK_INT(sum.len, 0);
	PT_CHECK_INT(git_repository_head_unborn(repo), 1);
	pt_strbuf_release(&sum);
	pt_store_close(st);
	git_repository_free(repo);
}

PT_TEST(status_lines)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	struct pt_strbuf out = PT_STRBUF_INIT, want = PT_STRBUF_INIT;
	char h1[33];

	PT_CHECK_INT(pt_store_status(st, &out, &err), 0);
	PT_CHECK_STR(out.buf, "");
	store_put(st, "blur", 1);
	put("src/a.c", "int a;\n");          /* outside: not listed */
	put("protune/blur/notes.txt", "x\n"); /* foreign: not listed */
	PT_CHECK_INT(pt_store_status(st, &out, &err), 0);
	hex_of(1, h1);
	pt_strbuf_addf(&want, "A protune/blur/%s.schedule\n", h1);
	PT_CHECK_STR(out.buf, want.buf);
	pt_strbuf_release(&out);
	pt_strbuf_release(&want);
	pt_store_close(st);
	git_repository_free(repo);
}

PT_TEST(refuses_during_a_merge)
{
	git_repository *repo = make_repo(1);
	struct pt_store *st = open_store(NULL);
	struct pt_error err = PT_ERROR_INIT;
	char path[PATH_MAX + 32];
	FILE *f;

	store_put(st, "blur", 1);
	snprintf(path, sizeof(path), "%s/.git/MERGE_HEAD", repo_dir);
	f = fopen(path, "w");
	PT_REQUIRE(f);
	fputs("0123456789012345678901234567890123456789\n", f);
	fclose(f);
	PT_CHECK_INT(pt_store_commit(st, NULL, NULL, &err), PT_EINVAL);
	PT_CHECK(strstr(err.msg, "in progress"));
	pt_store_close(st);
	git_repository_free(repo);
}

PT_SUITE(store,
	 { "open outside a repository", open_outside_a_repository },
	 { "open a bare repository", open_bare_repository_is_off },
	 { "default store dir", default_store_dir_from_a_subdirectory },
	 { "custom store dirs", custom_store_dirs },
	 { "path naming", path_naming_and_generator_sanitising },
	 { "write/read round trip", write_read_round_trip },
	 { "read errors", read_errors_name_the_path },
	 { "read with any generator", read_with_any_generator },
	 { "each skips foreign files", each_skips_temporary_and_foreign_files },
	 { "provenance", provenance_unborn_clean_and_dirty },
	 { "commit on an unborn branch", commit_on_an_unborn_branch },
	 { "commit on top", commit_on_top_keeps_user_changes_out },
	 { "commit message", commit_message_lists_generators },
	 { "nothing to commit, no identity",
	   nothing_to_commit_and_missing_identity },
	 { "status lines", status_lines },
	 { "refuses during a merge", refuses_during_a_merge });
