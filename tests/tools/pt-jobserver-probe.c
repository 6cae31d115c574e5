/* pt-jobserver-probe: the jobserver client seen from inside a real make.
 * Run from a recipe; opens the jobserver named in MAKEFLAGS, takes every
 * token it can get within 200 ms each, prints
 *   "tokens N" or "none: REASON"
 * then gives every token back, so make must not report lost tokens. */
#include "protune/pt_jobserver.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	struct pt_jobserver js = PT_JOBSERVER_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	if (pt_jobserver_open_makeflags(&js, getenv("MAKEFLAGS"), &err)) {
		fprintf(stderr, "pt-jobserver-probe: %s\n", err.msg);
		return 2;
	}
	if (!pt_jobserver_active(&js)) {
		printf("none: %s\n", js.why);
		return 0;
	}
	while ((ret = pt_jobserver_acquire(&js, 200, &err)) == 0)
		;
	if (ret != PT_JOBSERVER_TIMEOUT) {
		fprintf(stderr, "pt-jobserver-probe: %s\n", err.msg);
		pt_jobserver_close(&js);
		return 2;
	}
	printf("tokens %zu\n", pt_jobserver_held(&js));
	pt_jobserver_close(&js);
	return 0;
}
