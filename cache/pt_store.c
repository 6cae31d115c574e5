#define _DEFAULT_SOURCE /* realpath, fsync */
#include "protune/pt_store.h"
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_strvec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEXLEN 32
#define TMP_PREFIX ".tmp-"

struct pt_store {
	git_repository *repo;
	char *root; /* the work tree, no trailing '/' ("" for "/") */
	char *rel;  /* the store relative to root, '/'-separated, no '/' at
		     * either end, never empty */
	char *dir;  /* root + "/" + rel */
};

/* One schedule file, in the work tree or in HEAD's tree. */
struct item {
	char *rel;          /* relative to the work tree root */
	char *gen;          /* its generator directory's name */
	uint8_t key[16];
	git_oid id;         /* HEAD's blob (HEAD items only) */
};

struct items {
	struct item *v;
	size_t n, alloc;
};

/* A difference between HEAD and the work tree under the store. */
struct change {
	char kind;          /* 'A', 'M' or 'D' */
	const struct item *it; /* the work tree's item ('D': HEAD's) */
	git_oid id;         /* the work tree's blob ('A', 'M') */
};

struct changes {
	struct items wd, head;
	struct change *v;
	size_t n;
};

/* --- errors --------------------------------------------------------------- */

static int git_fail(struct pt_error *err, int code, const char *what)
{
	const git_error *e = git_error_last();

	return pt_error_set(err, code, "%s: %s", what,
			    e && e->message ? e->message : "libgit2 failed");
}

static int nomem(struct pt_error *err)
{
	return pt_error_set(err, PT_ENOMEM, "out of memory");
}

/* --- names ---------------------------------------------------------------- */

static int gen_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* The directory name of a generator: bytes outside [A-Za-z0-9_.-] and a
 * leading '.' (hidden files, "." and "..") become '_'. */
static int sanitise(const char *gen, struct pt_strbuf *out)
{
	const unsigned char *p = (const unsigned char *)gen;
	int c;

	if (!*p)
		return pt_strbuf_addch(out, '_');
	for (; *p; p++) {
		c = gen_char_ok(*p) ? *p : '_';
		if (c == '.' && p == (const unsigned char *)gen)
			c = '_';
		if (pt_strbuf_addch(out, c))
			return PT_ENOMEM;
	}
	return 0;
}

/* Whether `name` is a name sanitise() can produce. */
static int gen_name_ok(const char *name)
{
	if (!*name || *name == '.')
		return 0;
	for (; *name; name++)
		if (!gen_char_ok((unsigned char)*name))
			return 0;
	return 1;
}

/* Whether `name` is KEYHEX.schedule; the key goes to `key`. */
static int file_name_key(const char *name, uint8_t key[16])
{
	char hex[HEXLEN + 1];
	int i;

	if (strlen(name) != HEXLEN + strlen(PT_STORE_SUFFIX) ||
	    strcmp(name + HEXLEN, PT_STORE_SUFFIX) != 0)
		return 0;
	for (i = 0; i < HEXLEN; i++) {
		if (!((name[i] >= '0' && name[i] <= '9') ||
		      (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
		hex[i] = name[i];
	}
	hex[HEXLEN] = '\0';
	return pt_hash_parse(hex, key) == 0;
}

/* Whether work-tree-relative `path` lies under the store. */
static int in_store(const struct pt_store *st, const char *path)
{
	size_t n = strlen(st->rel);

	return strncmp(path, st->rel, n) == 0 && path[n] == '/';
}

/* --- paths ---------------------------------------------------------------- */

/* Append `in` to the empty `out` without "." and empty components and with
 * ".." applied. A relative path that climbs above its start gives
 * PT_EINVAL; "/.." is "/". */
static int normalise(const char *in, struct pt_strbuf *out)
{
	const char *p = in, *q;
	size_t base, i;
	int abs = *in == '/';

	if (abs && pt_strbuf_addch(out, '/'))
		return PT_ENOMEM;
	base = out->len;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		q = strchr(p, '/');
		if (!q)
			q = p + strlen(p);
		if (q - p == 1 && p[0] == '.') {
			/* nothing */
		} else if (q - p == 2 && p[0] == '.' && p[1] == '.') {
			if (out->len == base && !abs)
				return PT_EINVAL;
			i = out->len;
			while (i > base && out->buf[i - 1] != '/')
				i--;
			pt_strbuf_setlen(out, i > base ? i - 1 : base);
		} else if ((out->len > base && pt_strbuf_addch(out, '/')) ||
			   pt_strbuf_add(out, p, (size_t)(q - p))) {
			return PT_ENOMEM;
		}
		p = q;
	}
	return 0;
}

/* The part of absolute `path` below `root` ("" when equal), or NULL. */
static const char *below(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (strncmp(path, root, n) != 0)
		return NULL;
	if (path[n] == '/')
		return path + n + 1;
	return path[n] ? NULL : path + n;
}

/* Resolve symbolic links in the longest existing prefix of the normalised
 * absolute `path`; the rest is appended as it is. */
static int resolve_existing(const char *path, struct pt_strbuf *out)
{
	struct pt_strbuf head = PT_STRBUF_INIT;
	const char *rest = "";
	char *real = NULL, *slash;
	int ret = PT_ENOMEM;

	if (pt_strbuf_addstr(&head, path))
		goto cleanup;
	for (;;) {
		real = realpath(head.buf, NULL);
		if (real || (errno != ENOENT && errno != ENOTDIR))
			break;
		slash = strrchr(head.buf, '/');
		if (!slash || slash == head.buf)
			break;
		rest = path + (slash - head.buf) + 1;
		pt_strbuf_setlen(&head, (size_t)(slash - head.buf));
	}
	if (!real) {
		ret = PT_EIO;
		goto cleanup;
	}
	if (pt_strbuf_addstr(out, real) ||
	    (*rest && pt_strbuf_addf(out, "%s%s",
				     strcmp(real, "/") ? "/" : "", rest)))
		goto cleanup;
	ret = 0;
cleanup:
	free(real);
	pt_strbuf_release(&head);
	return ret;
}

static int set_store_dir(struct pt_store *st, const char *dir,
			 struct pt_error *err)
{
	struct pt_strbuf norm = PT_STRBUF_INIT, real = PT_STRBUF_INIT;
	struct pt_strbuf path = PT_STRBUF_INIT;
	const char *rel;
	int ret;

	if (!dir || !*dir)
		dir = PT_STORE_DEFAULT_DIR;
	ret = normalise(dir, &norm);
	if (ret == PT_ENOMEM)
		goto nomem;
	if (ret)
		goto outside;
	rel = norm.buf;
	if (*dir == '/') {
		rel = below(norm.buf, st->root);
		if (!rel) {
			ret = resolve_existing(norm.buf, &real);
			if (ret == PT_ENOMEM)
				goto nomem;
			rel = ret ? NULL : below(real.buf, st->root);
		}
		if (!rel)
			goto outside;
	}
	if (!*rel) {
		ret = pt_error_set(err, PT_EINVAL, "store directory %s: it "
				   "is the work tree's root, not a directory "
				   "in it", dir);
		goto cleanup;
	}
	if (strcmp(rel, ".git") == 0 || strncmp(rel, ".git/", 5) == 0) {
		ret = pt_error_set(err, PT_EINVAL, "store directory %s: it is "
				   "inside .git", dir);
		goto cleanup;
	}
	if (pt_strbuf_addf(&path, "%s/%s", st->root, rel))
		goto nomem;
	st->rel = strdup(rel);
	st->dir = pt_strbuf_detach(&path, NULL);
	if (!st->rel || !st->dir)
		goto nomem;
	ret = 0;
	goto cleanup;
outside:
	ret = pt_error_set(err, PT_EINVAL, "store directory %s is outside the "
			   "work tree %s", dir, *st->root ? st->root : "/");
	goto cleanup;
nomem:
	ret = nomem(err);
cleanup:
	pt_strbuf_release(&norm);
	pt_strbuf_release(&real);
	pt_strbuf_release(&path);
	return ret;
}

/* --- open and close ------------------------------------------------------- */

static int set_root(struct pt_store *st, struct pt_error *err)
{
	const char *wd = git_repository_workdir(st->repo);
	char *real;
	size_t n;

	real = realpath(wd, NULL);
	st->root = real ? real : strdup(wd);
	if (!st->root)
		return nomem(err);
	n = strlen(st->root);
	while (n > 0 && st->root[n - 1] == '/')
		st->root[--n] = '\0';
	return 0;
}

int pt_store_open(const struct pt_store_opts *opts, struct pt_store **out,
		  struct pt_error *err)
{
	const char *start = opts && opts->start_dir && *opts->start_dir ?
			    opts->start_dir : ".";
	git_buf gitdir = GIT_BUF_INIT;
	struct pt_store *st;
	int ret, rc;

	*out = NULL;
	if (git_libgit2_init() < 0)
		return git_fail(err, PT_EIO, "libgit2 initialisation");
	st = calloc(1, sizeof(*st));
	if (!st) {
		git_libgit2_shutdown();
		return nomem(err);
	}
	/* Discovery stops at $GIT_CEILING_DIRECTORIES, as git's does. */
	rc = git_repository_discover(&gitdir, start, 0,
				     getenv("GIT_CEILING_DIRECTORIES"));
	if (rc == GIT_ENOTFOUND) {
		ret = pt_error_set(err, PT_ENOTFOUND, "%s: not in a git "
				   "repository: the store is off", start);
		goto fail;
	}
	if (rc < 0) {
		ret = git_fail(err, PT_EIO, start);
		goto fail;
	}
	if (git_repository_open(&st->repo, gitdir.ptr) < 0) {
		ret = git_fail(err, PT_EIO, gitdir.ptr);
		goto fail;
	}
	if (git_repository_is_bare(st->repo) ||
	    !git_repository_workdir(st->repo)) {
		ret = pt_error_set(err, PT_ENOTFOUND, "%s: a bare repository "
				   "has no work tree: the store is off",
				   gitdir.ptr);
		goto fail;
	}
	ret = set_root(st, err);
	if (!ret)
		ret = set_store_dir(st, opts ? opts->dir : NULL, err);
	if (ret)
		goto fail;
	git_buf_dispose(&gitdir);
	*out = st;
	return 0;
fail:
	git_buf_dispose(&gitdir);
	pt_store_close(st);
	return ret;
}

void pt_store_close(struct pt_store *st)
{
	if (!st)
		return;
	git_repository_free(st->repo);
	free(st->root);
	free(st->rel);
	free(st->dir);
	free(st);
	git_libgit2_shutdown();
}

const char *pt_store_root(const struct pt_store *st)
{
	return st->root;
}

const char *pt_store_dir(const struct pt_store *st)
{
	return st->dir;
}

int pt_store_path(const struct pt_store *st, const char *generator,
		  const uint8_t key[16], struct pt_strbuf *path)
{
	char hex[HEXLEN + 1];

	if (!generator)
		return PT_EINVAL;
	pt_hash_hex(key, hex);
	if (pt_strbuf_addf(path, "%s/", st->dir) || sanitise(generator, path) ||
	    pt_strbuf_addf(path, "/%s%s", hex, PT_STORE_SUFFIX))
		return PT_ENOMEM;
	return 0;
}

/* --- plain files ---------------------------------------------------------- */

/* Append the regular file `path` to `text`: PT_ENOTFOUND when it does not
 * exist, PT_EIO otherwise. */
static int read_file(const char *path, struct pt_strbuf *text,
		     struct pt_error *err)
{
	size_t start = text->len;
	struct stat sb;
	ssize_t n;
	int fd, ret = 0;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return pt_error_set(err, PT_ENOTFOUND, "%s: no such "
					    "schedule file", path);
		return pt_error_set(err, PT_EIO, "%s: %s", path,
				    strerror(errno));
	}
	if (fstat(fd, &sb) < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: %s", path,
				   strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(sb.st_mode)) {
		ret = pt_error_set(err, PT_EIO, "%s: not a regular file", path);
		goto cleanup;
	}
	if (pt_strbuf_grow(text, (size_t)sb.st_size)) {
		ret = nomem(err);
		goto cleanup;
	}
	for (;;) {
		if (text->alloc - text->len < 4096 + 1 &&
		    pt_strbuf_grow(text, 4096)) {
			ret = nomem(err);
			goto cleanup;
		}
		n = read(fd, text->buf + text->len,
			 text->alloc - text->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = pt_error_set(err, PT_EIO, "%s: read: %s", path,
					   strerror(errno));
			goto cleanup;
		}
		if (n == 0)
			break;
		text->len += (size_t)n;
		text->buf[text->len] = '\0';
	}
cleanup:
	close(fd);
	if (ret)
		pt_strbuf_setlen(text, start);
	return ret;
}

static int fsync_dir(const char *dir)
{
	int fd, ret;

	do
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

/* Create every missing directory of root/rel (rel relative, no trailing
 * '/'), each made durable in its parent. */
static int mkdirs(const char *root, const char *rel, struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	size_t rootlen, i, n = strlen(rel);
	int ret = 0;

	if (pt_strbuf_addf(&path, "%s/%s", root, rel))
		return nomem(err);
	rootlen = strlen(root) + 1;
	for (i = 0; i <= n; i++) {
		if (i < n && rel[i] != '/')
			continue;
		path.buf[rootlen + i] = '\0';
		if (mkdir(path.buf, 0777) == 0) {
			char *slash = strrchr(path.buf, '/');

			*slash = '\0';
			(void)fsync_dir(*path.buf ? path.buf : "/");
			*slash = '/';
		} else if (errno != EEXIST) {
			ret = pt_error_set(err, PT_EIO, "%s: mkdir: %s",
					   path.buf, strerror(errno));
			break;
		}
		if (i < n)
			path.buf[rootlen + i] = '/';
	}
	pt_strbuf_release(&path);
	return ret;
}

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* --- reading, writing, removing ------------------------------------------- */

/* The sorted generator directory names of the store; a missing store is
 * empty. */
static int list_gen_dirs(const struct pt_store *st, struct pt_strvec *out,
			 struct pt_error *err);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pt_store_read(struct pt_store *st, const char *generator,
		  const uint8_t key[16], struct pt_strbuf *text,
		  struct pt_strbuf *path, struct pt_error *err)
{
	struct pt_strbuf p = PT_STRBUF_INIT;
	struct pt_strvec gens = PT_STRVEC_INIT;
	struct pt_error e = PT_ERROR_INIT;
	char hex[HEXLEN + 1];
	size_t i;
	int ret;

	if (generator) {
		if (pt_store_path(st, generator, key, &p)) {
			ret = nomem(err);
			goto cleanup;
		}
		ret = read_file(p.buf, text, err);
	} else {
		ret = list_gen_dirs(st, &gens, err);
		if (ret)
			goto cleanup;
		pt_hash_hex(key, hex);
		ret = PT_ENOTFOUND;
		for (i = 0; i < gens.nr && ret == PT_ENOTFOUND; i++) {
			pt_strbuf_reset(&p);
			if (pt_strbuf_addf(&p, "%s/%s/%s%s", st->dir, gens.v[i],
					   hex, PT_STORE_SUFFIX)) {
				ret = nomem(err);
				goto cleanup;
			}
			ret = read_file(p.buf, text, &e);
		}
		if (ret == PT_ENOTFOUND)
			ret = pt_error_set(err, PT_ENOTFOUND, "%s: no schedule "
					   "file for key %s", st->dir, hex);
		else if (ret)
			ret = pt_error_set(err, ret, "%s", e.msg);
	}
	if (!ret && path && pt_strbuf_addstr(path, p.buf))
		ret = nomem(err);
cleanup:
	pt_strvec_release(&gens);
	pt_strbuf_release(&p);
	return ret;
}

int pt_store_write(struct pt_store *st, const char *generator,
		   const uint8_t key[16], const char *text, size_t len,
		   struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT, tmp = PT_STRBUF_INIT;
	char *slash;
	int fd = -1, ret;

	if (!generator)
		return pt_error_set(err, PT_EINVAL, "store: no generator name");
	if (pt_store_path(st, generator, key, &path))
		goto nomem;
	slash = strrchr(path.buf, '/');
	*slash = '\0';
	/* The generator directory relative to the root. */
	ret = mkdirs(st->root, path.buf + strlen(st->root) + 1, err);
	if (ret)
		goto cleanup;
	if (pt_strbuf_addf(&tmp, "%s/" TMP_PREFIX "XXXXXX", path.buf))
		goto nomem;
	*slash = '/';
	fd = mkstemp(tmp.buf);
	if (fd < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: cannot create a temporary "
				   "file: %s", tmp.buf, strerror(errno));
		pt_strbuf_reset(&tmp); /* nothing to remove */
		goto cleanup;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (fchmod(fd, 0644) < 0 || write_all(fd, text, len) < 0 ||
	    fsync(fd) < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: %s", tmp.buf,
				   strerror(errno));
		goto cleanup;
	}
	ret = close(fd);
	fd = -1;
	if (ret < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: close: %s", tmp.buf,
				   strerror(errno));
		goto cleanup;
	}
	if (rename(tmp.buf, path.buf) < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: rename: %s", path.buf,
				   strerror(errno));
		goto cleanup;
	}
	pt_strbuf_reset(&tmp);
	*slash = '\0';
	if (fsync_dir(path.buf) < 0) {
		ret = pt_error_set(err, PT_EIO, "%s: fsync: %s", path.buf,
				   strerror(errno));
		goto cleanup;
	}
	ret = 0;
	goto cleanup;
nomem:
	ret = nomem(err);
cleanup:
	if (fd >= 0)
		close(fd);
	if (tmp.len)
		unlink(tmp.buf);
	pt_strbuf_release(&path);
	pt_strbuf_release(&tmp);
	return ret;
}

int pt_store_remove(struct pt_store *st, const char *generator,
		    const uint8_t key[16], struct pt_error *err)
{
	struct pt_strbuf path = PT_STRBUF_INIT;
	char *slash;
	int ret = 0;

	if (!generator)
		return pt_error_set(err, PT_EINVAL, "store: no generator name");
	if (pt_store_path(st, generator, key, &path))
		return nomem(err);
	if (unlink(path.buf) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			ret = pt_error_set(err, PT_ENOTFOUND, "%s: no such "
					   "schedule file", path.buf);
		else
			ret = pt_error_set(err, PT_EIO, "%s: %s", path.buf,
					   strerror(errno));
		goto cleanup;
	}
	slash = strrchr(path.buf, '/');
	*slash = '\0';
	if (fsync_dir(path.buf) < 0)
		ret = pt_error_set(err, PT_EIO, "%s: fsync: %s", path.buf,
				   strerror(errno));
	(void)rmdir(path.buf); /* when it was the last one */
cleanup:
	pt_strbuf_release(&path);
	return ret;
}

/* --- listing -------------------------------------------------------------- */

static int list_gen_dirs(const struct pt_store *st, struct pt_strvec *out,
			 struct pt_error *err)
{
	struct dirent *de;
	DIR *d = opendir(st->dir);

	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return pt_error_set(err, PT_EIO, "%s: %s", st->dir,
				    strerror(errno));
	}
	while ((errno = 0, de = readdir(d))) {
		if (gen_name_ok(de->d_name) &&
		    pt_strvec_push(out, de->d_name)) {
			closedir(d);
			return nomem(err);
		}
	}
	if (errno) {
		int e = errno;

		closedir(d);
		return pt_error_set(err, PT_EIO, "%s: readdir: %s", st->dir,
				    strerror(e));
	}
	closedir(d);
	qsort(out->v, out->nr, sizeof(*out->v), cmp_str);
	return 0;
}

static void items_release(struct items *its)
{
	size_t i;

	for (i = 0; i < its->n; i++) {
		free(its->v[i].rel);
		free(its->v[i].gen);
	}
	free(its->v);
	its->v = NULL;
	its->n = its->alloc = 0;
}

static int items_push(struct items *its, const struct pt_store *st,
		      const char *gen, const char *name, const uint8_t key[16],
		      const git_oid *id)
{
	struct pt_strbuf rel = PT_STRBUF_INIT;
	struct item *it;

	if (its->n == its->alloc) {
		size_t na = its->alloc ? its->alloc * 2 : 64;
		struct item *nv = realloc(its->v, na * sizeof(*nv));

		if (!nv)
			return PT_ENOMEM;
		its->v = nv;
		its->alloc = na;
	}
	it = &its->v[its->n];
	memset(it, 0, sizeof(*it));
	if (pt_strbuf_addf(&rel, "%s/%s/%s", st->rel, gen, name))
		return PT_ENOMEM;
	it->gen = strdup(gen);
	if (!it->gen) {
		pt_strbuf_release(&rel);
		return PT_ENOMEM;
	}
	it->rel = pt_strbuf_detach(&rel, NULL);
	memcpy(it->key, key, 16);
	if (id)
		git_oid_cpy(&it->id, id);
	its->n++;
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const struct item *)a)->rel,
		      ((const struct item *)b)->rel);
}

/* Every schedule file of the work tree's store, sorted by path. */
static int list_workdir(const struct pt_store *st, struct items *out,
			struct pt_error *err)
{
	struct pt_strvec gens = PT_STRVEC_INIT;
	struct pt_strbuf path = PT_STRBUF_INIT;
	struct dirent *de;
	struct stat sb;
	uint8_t key[16];
	DIR *d = NULL;
	size_t i;
	int ret;

	ret = list_gen_dirs(st, &gens, err);
	for (i = 0; !ret && i < gens.nr; i++) {
		pt_strbuf_reset(&path);
		if (pt_strbuf_addf(&path, "%s/%s", st->dir, gens.v[i]))
			goto nomem;
		if (lstat(path.buf, &sb) < 0 || !S_ISDIR(sb.st_mode))
			continue;
		d = opendir(path.buf);
		if (!d) {
			ret = pt_error_set(err, PT_EIO, "%s: %s", path.buf,
					   strerror(errno));
			break;
		}
		while ((errno = 0, de = readdir(d))) {
			size_t len = path.len;

			if (!file_name_key(de->d_name, key))
				continue;
			if (pt_strbuf_addf(&path, "/%s", de->d_name))
				goto nomem;
			ret = lstat(path.buf, &sb);
			pt_strbuf_setlen(&path, len);
			if (ret == 0 && S_ISREG(sb.st_mode) &&
			    items_push(out, st, gens.v[i], de->d_name, key,
				       NULL))
				goto nomem;
			ret = 0;
		}
		if (errno)
			ret = pt_error_set(err, PT_EIO, "%s: readdir: %s",
					   path.buf, strerror(errno));
		closedir(d);
		d = NULL;
	}
	goto cleanup;
nomem:
	ret = nomem(err);
cleanup:
	if (d)
		closedir(d);
	pt_strvec_release(&gens);
	pt_strbuf_release(&path);
	if (ret)
		items_release(out);
	else if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_item);
	return ret;
}

int pt_store_each(struct pt_store *st, pt_store_each_fn *fn, void *ctx,
		  struct pt_error *err)
{
	struct items its = { NULL, 0, 0 };
	struct pt_strbuf path = PT_STRBUF_INIT;
	size_t i;
	int ret;

	ret = list_workdir(st, &its, err);
	for (i = 0; !ret && i < its.n; i++) {
		pt_strbuf_reset(&path);
		if (pt_strbuf_addf(&path, "%s/%s", st->root, its.v[i].rel)) {
			ret = nomem(err);
			break;
		}
		ret = fn(ctx, path.buf, its.v[i].gen, its.v[i].key);
	}
	items_release(&its);
	pt_strbuf_release(&path);
	return ret;
}

/* --- HEAD ----------------------------------------------------------------- */

/* HEAD's commit and tree, both NULL on an unborn branch. */
static int head_tree(struct pt_store *st, git_commit **commit, git_tree **tree,
		     struct pt_error *err)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	int rc;

	*commit = NULL;
	*tree = NULL;
	rc = git_repository_head(&ref, st->repo);
	if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return git_fail(err, PT_EIO, "HEAD");
	rc = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
	git_reference_free(ref);
	if (rc < 0)
		return git_fail(err, PT_EIO, "HEAD");
	*commit = (git_commit *)obj;
	if (git_commit_tree(tree, *commit) < 0) {
		git_commit_free(*commit);
		*commit = NULL;
		return git_fail(err, PT_EIO, "HEAD's tree");
	}
	return 0;
}

/* Every schedule file of the store in `tree`, sorted by path. */
static int list_tree(struct pt_store *st, git_tree *tree, struct items *out,
		     struct pt_error *err)
{
	git_tree_entry *top = NULL;
	git_tree *store = NULL, *gen = NULL;
	const git_tree_entry *e, *f;
	uint8_t key[16];
	size_t i, j;
	int rc, ret = 0;

	if (!tree)
		return 0;
	rc = git_tree_entry_bypath(&top, tree, st->rel);
	if (rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return git_fail(err, PT_EIO, st->rel);
	if (git_tree_entry_type(top) != GIT_OBJECT_TREE)
		goto cleanup;
	if (git_tree_lookup(&store, st->repo, git_tree_entry_id(top)) < 0) {
		ret = git_fail(err, PT_EIO, st->rel);
		goto cleanup;
	}
	for (i = 0; i < git_tree_entrycount(store); i++) {
		e = git_tree_entry_byindex(store, i);
		if (git_tree_entry_type(e) != GIT_OBJECT_TREE ||
		    !gen_name_ok(git_tree_entry_name(e)))
			continue;
		if (git_tree_lookup(&gen, st->repo, git_tree_entry_id(e)) < 0) {
			ret = git_fail(err, PT_EIO, git_tree_entry_name(e));
			goto cleanup;
		}
		for (j = 0; j < git_tree_entrycount(gen); j++) {
			f = git_tree_entry_byindex(gen, j);
			if ((git_tree_entry_filemode(f) != GIT_FILEMODE_BLOB &&
			     git_tree_entry_filemode(f) !=
			     GIT_FILEMODE_BLOB_EXECUTABLE) ||
			    !file_name_key(git_tree_entry_name(f), key))
				continue;
			if (items_push(out, st, git_tree_entry_name(e),
				       git_tree_entry_name(f), key,
				       git_tree_entry_id(f))) {
				ret = nomem(err);
				goto cleanup;
			}
		}
		git_tree_free(gen);
		gen = NULL;
	}
cleanup:
	git_tree_free(gen);
	git_tree_free(store);
	git_tree_entry_free(top);
	if (ret)
		items_release(out);
	else if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_item);
	return ret;
}

static void changes_release(struct changes *ch)
{
	items_release(&ch->wd);
	items_release(&ch->head);
	free(ch->v);
	ch->v = NULL;
	ch->n = 0;
}

/* The differences between `tree` (NULL: empty) and the work tree under the
 * store, sorted by path. Work tree files are only hashed. */
static int diff_store(struct pt_store *st, git_tree *tree,
		      struct changes *ch, struct pt_error *err)
{
	size_t i = 0, j = 0;
	git_oid id;
	int ret, cmp;

	memset(ch, 0, sizeof(*ch));
	ret = list_workdir(st, &ch->wd, err);
	if (!ret)
		ret = list_tree(st, tree, &ch->head, err);
	if (ret)
		goto fail;
	ch->v = calloc(ch->wd.n + ch->head.n + 1, sizeof(*ch->v));
	if (!ch->v) {
		ret = nomem(err);
		goto fail;
	}
	while (i < ch->wd.n || j < ch->head.n) {
		const struct item *w = i < ch->wd.n ? &ch->wd.v[i] : NULL;
		const struct item *h = j < ch->head.n ? &ch->head.v[j] : NULL;
		struct change *c = &ch->v[ch->n];

		cmp = !w ? 1 : !h ? -1 : strcmp(w->rel, h->rel);
		if (cmp > 0) {
			c->kind = 'D';
			c->it = h;
			ch->n++;
			j++;
			continue;
		}
		if (git_repository_hashfile(&id, st->repo, w->rel,
					    GIT_OBJECT_BLOB, NULL) < 0) {
			ret = git_fail(err, PT_EIO, w->rel);
			goto fail;
		}
		i++;
		if (cmp == 0)
			j++;
		if (cmp == 0 && git_oid_equal(&id, &h->id))
			continue;
		c->kind = cmp ? 'A' : 'M';
		c->it = w;
		git_oid_cpy(&c->id, &id);
		ch->n++;
	}
	return 0;
fail:
	changes_release(ch);
	return ret;
}

/* "A PATH" lines, one per change. */
static int print_changes(const struct changes *ch, struct pt_strbuf *out)
{
	size_t i;

	for (i = 0; i < ch->n; i++)
		if (pt_strbuf_addf(out, "%c %s\n", ch->v[i].kind,
				   ch->v[i].it->rel))
			return PT_ENOMEM;
	return 0;
}

int pt_store_status(struct pt_store *st, struct pt_strbuf *out,
		    struct pt_error *err)
{
	git_commit *head = NULL;
	git_tree *tree = NULL;
	struct changes ch;
	int ret;

	ret = head_tree(st, &head, &tree, err);
	if (ret)
		return ret;
	ret = diff_store(st, tree, &ch, err);
	if (!ret) {
		if (print_changes(&ch, out))
			ret = nomem(err);
		changes_release(&ch);
	}
	git_tree_free(tree);
	git_commit_free(head);
	return ret;
}

/* --- provenance ----------------------------------------------------------- */

/* Whether a status delta touches a path outside the store. */
static int outside_store(const struct pt_store *st, const git_diff_delta *d)
{
	return d && ((d->old_file.path && !in_store(st, d->old_file.path)) ||
		     (d->new_file.path && !in_store(st, d->new_file.path)));
}

int pt_store_provenance(struct pt_store *st, struct pt_strbuf *commit,
			int *dirty, struct pt_error *err)
{
	git_status_options opts;
	git_status_list *list = NULL;
	char hex[GIT_OID_HEXSZ + 1] = "";
	git_oid id;
	size_t i, n;
	int rc, d = 0;

	rc = git_reference_name_to_id(&id, st->repo, "HEAD");
	if (rc == 0)
		git_oid_tostr(hex, sizeof(hex), &id);
	else if (rc != GIT_ENOTFOUND && rc != GIT_EUNBORNBRANCH)
		return git_fail(err, PT_EIO, "HEAD");
	if (git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION) < 0)
		return git_fail(err, PT_EIO, "git status");
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = 0; /* tracked files only, no rename detection */
	if (git_status_list_new(&list, st->repo, &opts) < 0)
		return git_fail(err, PT_EIO, "git status");
	n = git_status_list_entrycount(list);
	for (i = 0; i < n && !d; i++) {
		const git_status_entry *e = git_status_byindex(list, i);

		d = outside_store(st, e->head_to_index) ||
		    outside_store(st, e->index_to_workdir);
	}
	git_status_list_free(list);
	if (pt_strbuf_addstr(commit, hex))
		return nomem(err);
	*dirty = d;
	return 0;
}

/* --- commit --------------------------------------------------------------- */

/* The value of meta entry `name` of a parsed schedule, or "?". */
static const char *meta_get(const struct pt_sched *s, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; s && i < s->meta.nr; i++)
		if (strncmp(s->meta.v[i], name, n) == 0 &&
		    s->meta.v[i][n] == '=' && s->meta.v[i][n + 1])
			return s->meta.v[i] + n + 1;
	return "?";
}

/* "GENERATOR FUNCTION TARGET KEYPREFIX" from a changed file's meta. */
static int describe(const struct pt_store *st, const struct change *c,
		    struct pt_strbuf *msg)
{
	struct pt_strbuf path = PT_STRBUF_INIT, text = PT_STRBUF_INIT;
	struct pt_sched *s = NULL;
	char hex[HEXLEN + 1];
	int ret = PT_ENOMEM;

	if (pt_strbuf_addf(&path, "%s/%s", st->root, c->it->rel))
		goto cleanup;
	if (read_file(path.buf, &text, NULL) == 0)
		(void)pt_sched_parse(text.buf, text.len, path.buf, &s, NULL);
	pt_hash_hex(c->it->key, hex);
	if (pt_strbuf_addf(msg, "%s %s %s %.12s\n", meta_get(s, "generator"),
			   meta_get(s, "function"), meta_get(s, "target"), hex))
		goto cleanup;
	ret = 0;
cleanup:
	pt_sched_free(s);
	pt_strbuf_release(&path);
	pt_strbuf_release(&text);
	return ret;
}

static int make_message(const struct pt_store *st, const struct changes *ch,
			struct pt_strbuf *msg)
{
	struct pt_strvec gens = PT_STRVEC_INIT;
	size_t i;
	int ret = PT_ENOMEM;

	for (i = 0; i < ch->n; i++)
		if (pt_strvec_push(&gens, ch->v[i].it->gen))
			goto cleanup;
	qsort(gens.v, gens.nr, sizeof(*gens.v), cmp_str);
	if (pt_strbuf_addf(msg, "protune: %zu schedule%s for ", ch->n,
			   ch->n == 1 ? "" : "s"))
		goto cleanup;
	for (i = 0; i < gens.nr; i++) {
		if (i > 0 && strcmp(gens.v[i], gens.v[i - 1]) == 0)
			continue;
		if (pt_strbuf_addf(msg, "%s%s", i ? ", " : "", gens.v[i]))
			goto cleanup;
	}
	if (pt_strbuf_addstr(msg, "\n\n"))
		goto cleanup;
	for (i = 0; i < ch->n; i++) {
		if (ch->v[i].kind == 'D' ?
		    pt_strbuf_addf(msg, "D %s\n", ch->v[i].it->rel) :
		    describe(st, &ch->v[i], msg))
			goto cleanup;
	}
	ret = 0;
cleanup:
	pt_strvec_release(&gens);
	return ret;
}

/* Apply the changes to `idx`: blobs for 'A' and 'M', removal for 'D'. */
static int apply_changes(const struct changes *ch, git_index *idx,
			 struct pt_error *err)
{
	git_index_entry e;
	size_t i;
	int rc;

	for (i = 0; i < ch->n; i++) {
		const struct change *c = &ch->v[i];

		if (c->kind == 'D') {
			rc = git_index_remove(idx, c->it->rel, 0);
			if (rc < 0 && rc != GIT_ENOTFOUND)
				return git_fail(err, PT_EIO, c->it->rel);
			continue;
		}
		/* No stat data (size 0): git and libgit2 then compare the
		 * work tree file's content, as after `read-tree`. */
		memset(&e, 0, sizeof(e));
		e.mode = GIT_FILEMODE_BLOB;
		e.path = c->it->rel;
		git_oid_cpy(&e.id, &c->id);
		if (git_index_add(idx, &e) < 0)
			return git_fail(err, PT_EIO, c->it->rel);
	}
	return 0;
}

/* Write the changed files' blobs, recording their ids. */
static int write_blobs(struct pt_store *st, struct changes *ch,
		       struct pt_error *err)
{
	size_t i;

	for (i = 0; i < ch->n; i++)
		if (ch->v[i].kind != 'D' &&
		    git_blob_create_from_workdir(&ch->v[i].id, st->repo,
						 ch->v[i].it->rel) < 0)
			return git_fail(err, PT_EIO, ch->v[i].it->rel);
	return 0;
}

static int update_real_index(struct pt_store *st, const struct changes *ch,
			     struct pt_error *err)
{
	git_index *idx = NULL;
	int ret = 0;

	if (git_repository_index(&idx, st->repo) < 0)
		return git_fail(err, PT_EIO, "the index");
	if (git_index_read(idx, 0) < 0)
		ret = git_fail(err, PT_EIO, git_index_path(idx));
	if (!ret)
		ret = apply_changes(ch, idx, err);
	if (!ret && git_index_write(idx) < 0)
		ret = git_fail(err, PT_EIO, git_index_path(idx));
	git_index_free(idx);
	return ret;
}

int pt_store_commit(struct pt_store *st, const char *message,
		    struct pt_strbuf *summary, struct pt_error *err)
{
	git_commit *parent = NULL;
	git_tree *htree = NULL, *ntree = NULL;
	git_index *idx = NULL;
	git_signature *sig = NULL;
	struct pt_strbuf msg = PT_STRBUF_INIT;
	struct changes ch;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid tid, cid;
	int ret, rc, have_changes = 0;

	if (git_repository_state(st->repo) != GIT_REPOSITORY_STATE_NONE)
		return pt_error_set(err, PT_EINVAL, "%s: a merge, rebase or "
				    "other operation is in progress; finish it "
				    "before committing schedules", st->root);
	ret = head_tree(st, &parent, &htree, err);
	if (ret)
		return ret;
	ret = diff_store(st, htree, &ch, err);
	if (ret)
		goto cleanup;
	have_changes = 1;
	if (ch.n == 0) {
		ret = pt_error_set(err, PT_ENOTFOUND, "%s: nothing to commit",
				   st->dir);
		goto cleanup;
	}
	rc = git_signature_default(&sig, st->repo);
	if (rc == GIT_ENOTFOUND) {
		ret = pt_error_set(err, PT_EINVAL, "no git identity: set "
				   "user.name and user.email in git config");
		goto cleanup;
	}
	if (rc < 0) {
		ret = git_fail(err, PT_EIO, "git identity");
		goto cleanup;
	}
	ret = write_blobs(st, &ch, err);
	if (ret)
		goto cleanup;
	if (git_index_new(&idx) < 0 ||
	    (htree && git_index_read_tree(idx, htree) < 0)) {
		ret = git_fail(err, PT_EIO, "in-memory index");
		goto cleanup;
	}
	ret = apply_changes(&ch, idx, err);
	if (ret)
		goto cleanup;
	if (git_index_write_tree_to(&tid, idx, st->repo) < 0) {
		ret = git_fail(err, PT_EIO, "writing the tree");
		goto cleanup;
	}
	if (htree && git_oid_equal(&tid, git_tree_id(htree))) {
		ret = pt_error_set(err, PT_ENOTFOUND, "%s: nothing to commit",
				   st->dir);
		goto cleanup;
	}
	if (git_tree_lookup(&ntree, st->repo, &tid) < 0) {
		ret = git_fail(err, PT_EIO, "the new tree");
		goto cleanup;
	}
	if (message && *message) {
		if (pt_strbuf_addstr(&msg, message) ||
		    (msg.buf[msg.len - 1] != '\n' &&
		     pt_strbuf_addch(&msg, '\n')))
			goto nomem;
	} else if (make_message(st, &ch, &msg)) {
		goto nomem;
	}
	{
		const git_commit *parents[1] = { parent };

		if (git_commit_create(&cid, st->repo, "HEAD", sig, sig, NULL,
				      msg.buf, ntree, parent ? 1 : 0,
				      parents) < 0) {
			ret = git_fail(err, PT_EIO, "commit");
			goto cleanup;
		}
	}
	git_oid_tostr(hex, sizeof(hex), &cid);
	ret = update_real_index(st, &ch, err);
	if (ret) {
		/* The commit exists: say so. */
		struct pt_error e2 = PT_ERROR_INIT;

		if (err) {
			e2 = *err;
			pt_error_set(err, ret, "committed %.12s, but the index "
				     "was not updated: %s", hex, e2.msg);
		}
		goto cleanup;
	}
	if (summary && (pt_strbuf_addf(summary, "%s\n", hex) ||
			print_changes(&ch, summary)))
		goto nomem;
	ret = 0;
	goto cleanup;
nomem:
	ret = nomem(err);
cleanup:
	if (have_changes)
		changes_release(&ch);
	pt_strbuf_release(&msg);
	git_signature_free(sig);
	git_index_free(idx);
	git_tree_free(ntree);
	git_tree_free(htree);
	git_commit_free(parent);
	return ret;
}
