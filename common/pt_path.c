#include "protune/pt_path.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_executable_file(const char *p, struct stat *st)
{
	return stat(p, st) == 0 && S_ISREG(st->st_mode) && access(p, X_OK) == 0;
}

int pt_path_find_program(const char *name, const char *path, const char *self,
			 struct pt_strbuf *out, struct pt_error *err)
{
	struct pt_strbuf cand = PT_STRBUF_INIT;
	struct stat self_st, st;
	int have_self = self && stat(self, &self_st) == 0;
	int skipped_self = 0, ret;
	const char *p, *end;

	if (!name || !*name)
		return pt_error_set(err, PT_EINVAL, "empty program name");
	if (strchr(name, '/')) {
		if (!is_executable_file(name, &st))
			return pt_error_set(err, PT_ENOTFOUND,
					    "%s: no such executable file", name);
		return pt_strbuf_addstr(out, name) ?
			pt_error_set(err, PT_ENOMEM, "out of memory") : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		pt_strbuf_reset(&cand);
		if (end == p)
			ret = pt_strbuf_addf(&cand, "./%s", name);
		else
			ret = pt_strbuf_addf(&cand, "%.*s/%s", (int)(end - p), p, name);
		if (ret) {
			ret = pt_error_set(err, PT_ENOMEM, "out of memory");
			goto cleanup;
		}
		if (is_executable_file(cand.buf, &st)) {
			if (have_self && st.st_dev == self_st.st_dev &&
			    st.st_ino == self_st.st_ino) {
				skipped_self = 1;
			} else {
				ret = pt_strbuf_add(out, cand.buf, cand.len) ?
					pt_error_set(err, PT_ENOMEM, "out of memory") : 0;
				goto cleanup;
			}
		}
		if (!*end)
			break;
	}
	ret = pt_error_set(err, PT_ENOTFOUND, "%s: command not found in PATH%s",
			   name, skipped_self ? " (the only match is this program itself)" : "");
cleanup:
	pt_strbuf_release(&cand);
	return ret;
}
