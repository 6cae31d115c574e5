#include "pt_test.h"
#include "protune/pt_path.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Create an executable (or not) file at dir/sub/name; returns its path in
 * a static buffer slot. */
static const char *make_file(const char *sub, const char *name, int exec)
{
	static char paths[4][512];
	static int slot;
	char *p = paths[slot++ % 4];
	int fd;

	snprintf(p, 512, "%s/%s", pt_test_tmpdir(), sub);
	mkdir(p, 0755);
	snprintf(p, 512, "%s/%s/%s", pt_test_tmpdir(), sub, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, exec ? 0755 : 0644);
	if (fd >= 0) {
		if (write(fd, "#!/bin/sh\n", 10) != 10)
			PT_CHECK(!"write failed");
		close(fd);
	}
	return p;
}

static const char *dirs(const char *a, const char *b)
{
	static char buf[1200];
	const char *t = pt_test_tmpdir();

	snprintf(buf, sizeof(buf), "%s/%s:%s/%s", t, a, t, b);
	return buf;
}

PT_TEST(finds_first_executable_in_path_order)
{
	struct pt_strbuf out = PT_STRBUF_INIT;
	char want[512];

	make_file("a", "tool", 0); /* not executable: skipped */
	strcpy(want, make_file("b", "tool", 1));
	make_file("c", "tool", 1);
	PT_CHECK_INT(pt_path_find_program("tool", dirs("a", "b"), NULL, &out, NULL), 0);
	PT_CHECK_STR(out.buf, want);
	pt_strbuf_release(&out);
}

PT_TEST(skips_self_even_through_symlink)
{
	struct pt_strbuf out = PT_STRBUF_INIT;
	char self[512], link[512], want[512];

	strcpy(self, make_file("real", "wrapper", 1));
	snprintf(link, sizeof(link), "%s/a", pt_test_tmpdir());
	mkdir(link, 0755);
	snprintf(link, sizeof(link), "%s/a/gen", pt_test_tmpdir());
	PT_REQUIRE(symlink(self, link) == 0);
	strcpy(want, make_file("b", "gen", 1));
	PT_CHECK_INT(pt_path_find_program("gen", dirs("a", "b"), self, &out, NULL), 0);
	PT_CHECK_STR(out.buf, want);
	pt_strbuf_release(&out);
}

PT_TEST(only_self_is_not_found)
{
	struct pt_strbuf out = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	const char *self = make_file("a", "gen", 1);

	PT_CHECK_INT(pt_path_find_program("gen", dirs("a", "a"), self, &out, &err),
		     PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "gen: command not found") != NULL);
	PT_CHECK(strstr(err.msg, "this program itself") != NULL);
	PT_CHECK_STR(out.buf, "");
}

PT_TEST(name_with_slash_is_used_as_is)
{
	struct pt_strbuf out = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char p[512];

	strcpy(p, make_file("x", "prog", 1));
	PT_CHECK_INT(pt_path_find_program(p, "/nonexistent", NULL, &out, NULL), 0);
	PT_CHECK_STR(out.buf, p);
	PT_CHECK_INT(pt_path_find_program("./no/such", NULL, NULL, &out, &err),
		     PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "./no/such") != NULL);
	pt_strbuf_release(&out);
}

PT_TEST(missing_and_empty_names)
{
	struct pt_strbuf out = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;

	PT_CHECK_INT(pt_path_find_program("pt-no-such-program", "/nonexistent::",
					  NULL, &out, &err), PT_ENOTFOUND);
	PT_CHECK_STR(err.msg, "pt-no-such-program: command not found in PATH");
	PT_CHECK_INT(pt_path_find_program("", NULL, NULL, &out, NULL), PT_EINVAL);
}

PT_SUITE(path,
	 { "finds the first executable in PATH order", finds_first_executable_in_path_order },
	 { "skips itself, also through a symlink", skips_self_even_through_symlink },
	 { "a PATH holding only itself is not found", only_self_is_not_found },
	 { "a name with a slash is used as it is", name_with_slash_is_used_as_is },
	 { "missing and empty names", missing_and_empty_names });
