/* Fuzz target for the MAKEFLAGS parser of the jobserver client (libFuzzer
 * entry point; tests/fuzz/driver.c runs it without libFuzzer). Invariants
 * checked beyond "no crash, no undefined behaviour": a success describes
 * a usable jobserver (fds >= 0, or a non-empty NUL-terminated fifo path)
 * or none at all, and leaves the error untouched; a failure resets the
 * result and says why; parsing is deterministic. */
#include "protune/pt_jobserver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *s)
{
	static struct pt_jobserver_auth a, b;
	struct pt_error err = PT_ERROR_INIT, err2 = PT_ERROR_INIT;
	int ret;

	memset(&a, 0x55, sizeof(a));
	ret = pt_jobserver_parse(s, &a, &err);
	if (ret == 0) {
		if (err.code != 0 || err.msg[0] != '\0')
			abort();
		if (a.jobs < -1)
			abort();
		switch (a.kind) {
		case PT_JOBSERVER_PIPE:
			if (a.read_fd < 0 || a.write_fd < 0 || a.fifo[0])
				abort();
			break;
		case PT_JOBSERVER_FIFO:
			if (!a.fifo[0] || !memchr(a.fifo, '\0', sizeof(a.fifo)) ||
			    a.read_fd != -1 || a.write_fd != -1 || a.legacy)
				abort();
			break;
		case PT_JOBSERVER_NONE:
			if (a.read_fd != -1 || a.write_fd != -1 || a.fifo[0] ||
			    a.legacy)
				abort();
			break;
		default:
			abort();
		}
	} else {
		if (ret != PT_EFORMAT || err.code != ret ||
		    strncmp(err.msg, "MAKEFLAGS: ", 11) != 0 ||
		    !memchr(err.msg, '\0', sizeof(err.msg)) ||
		    a.kind != PT_JOBSERVER_NONE || a.read_fd != -1 || a.fifo[0])
			abort();
	}
	memset(&b, 0xaa, sizeof(b));
	if (pt_jobserver_parse(s, &b, &err2) != ret || b.kind != a.kind ||
	    b.read_fd != a.read_fd || b.write_fd != a.write_fd ||
	    b.jobs != a.jobs || b.legacy != a.legacy ||
	    strcmp(b.fifo, a.fifo) != 0 || strcmp(err.msg, err2.msg) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check(s);
	free(s);
	return 0;
}
