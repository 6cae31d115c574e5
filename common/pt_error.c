#include "protune/pt_error.h"

#include <stdarg.h>
#include <stdio.h>

int pt_error_set(struct pt_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

const char *pt_strerror(int code)
{
	switch (code) {
	case PT_OK: return "success";
	case PT_ENOMEM: return "out of memory";
	case PT_EIO: return "input/output error";
	case PT_EFORMAT: return "malformed input";
	case PT_EINVAL: return "invalid argument";
	case PT_ENOTFOUND: return "not found";
	case PT_ESPAWN: return "cannot start child process";
	case PT_EMISMATCH: return "mismatch";
	case PT_ETIMEDOUT: return "timed out";
	case PT_EBUSY: return "busy";
	}
	return "unknown error";
}
