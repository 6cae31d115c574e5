#include "pt_test.h"
#include "protune/pt_error.h"

#include <string.h>

PT_TEST(set_formats_and_returns_code)
{
	struct pt_error err = PT_ERROR_INIT;

	PT_CHECK_INT(pt_error_set(&err, PT_EFORMAT, "%s:%d: bad", "f.txt", 3),
		     PT_EFORMAT);
	PT_CHECK_INT(err.code, PT_EFORMAT);
	PT_CHECK_STR(err.msg, "f.txt:3: bad");
}

PT_TEST(set_accepts_null)
{
	PT_CHECK_INT(pt_error_set(NULL, PT_EIO, "x"), PT_EIO);
}

PT_TEST(set_truncates_long_messages)
{
	struct pt_error err = PT_ERROR_INIT;
	char big[2 * PT_ERROR_MSG_MAX];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pt_error_set(&err, PT_EINVAL, "%s", big);
	PT_CHECK_INT(strlen(err.msg), PT_ERROR_MSG_MAX - 1);
}

PT_TEST(strerror_names_every_code)
{
	int c;

	for (c = PT_EBUSY; c <= PT_OK; c++)
		PT_CHECK(strcmp(pt_strerror(c), "unknown error") != 0);
	PT_CHECK_STR(pt_strerror(-1000), "unknown error");
}

PT_SUITE(error,
	 { "set formats and returns the code", set_formats_and_returns_code },
	 { "set accepts a NULL error", set_accepts_null },
	 { "set truncates long messages", set_truncates_long_messages },
	 { "strerror names every code", strerror_names_every_code });
