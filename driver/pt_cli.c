/* pt_cli.c: shared pieces of the protune command (pt_cli.h). */
#include "pt_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "protune/pt_spawn.h"

int pt_cli_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("protune: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int pt_cli_read(const char *path, struct pt_strbuf *out)
{
	struct pt_error err = PT_ERROR_INIT;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	int ret;

	if (fd < 0)
		return pt_cli_fail("cannot read %s: %s", path, strerror(errno));
	ret = pt_spawn_read_fd(fd, out, &err);
	if (fd)
		close(fd);
	return ret ? pt_cli_fail("cannot read %s: %s", path, err.msg) : 0;
}
