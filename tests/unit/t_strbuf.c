#include "pt_test.h"
#include "protune/pt_strbuf.h"

#include <stdlib.h>
#include <string.h>

PT_TEST(init_is_empty_string)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	PT_CHECK_STR(sb.buf, "");
	PT_CHECK_INT(sb.len, 0);
	pt_strbuf_release(&sb);
	PT_CHECK_STR(sb.buf, "");
}

PT_TEST(add_grows_and_terminates)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	int i;

	for (i = 0; i < 1000; i++)
		PT_REQUIRE(pt_strbuf_addch(&sb, 'a' + i % 26) == 0);
	PT_CHECK_INT(sb.len, 1000);
	PT_CHECK_INT(strlen(sb.buf), 1000);
	PT_CHECK(sb.buf[25] == 'z' && sb.buf[26] == 'a');
	pt_strbuf_release(&sb);
}

PT_TEST(add_keeps_embedded_nul)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	PT_REQUIRE(pt_strbuf_add(&sb, "a\0b", 3) == 0);
	PT_CHECK_INT(sb.len, 3);
	PT_CHECK(memcmp(sb.buf, "a\0b", 4) == 0);
	pt_strbuf_release(&sb);
}

PT_TEST(addf_appends_formatted)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	PT_REQUIRE(pt_strbuf_addstr(&sb, "key=") == 0);
	PT_REQUIRE(pt_strbuf_addf(&sb, "%d/%s", 42, "x") == 0);
	PT_CHECK_STR(sb.buf, "key=42/x");
	pt_strbuf_setlen(&sb, 3);
	PT_CHECK_STR(sb.buf, "key");
	pt_strbuf_reset(&sb);
	PT_CHECK_STR(sb.buf, "");
	pt_strbuf_release(&sb);
}

PT_TEST(detach_transfers_ownership)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	size_t len = 99;
	char *s;

	s = pt_strbuf_detach(&sb, &len);
	PT_REQUIRE(s != NULL);
	PT_CHECK_STR(s, "");
	PT_CHECK_INT(len, 0);
	free(s);
	PT_REQUIRE(pt_strbuf_addstr(&sb, "hello") == 0);
	s = pt_strbuf_detach(&sb, NULL);
	PT_CHECK_STR(s, "hello");
	PT_CHECK_STR(sb.buf, "");
	PT_CHECK_INT(sb.alloc, 0);
	free(s);
}

PT_TEST(grow_refuses_overflow)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	PT_REQUIRE(pt_strbuf_addstr(&sb, "ab") == 0);
	PT_CHECK(pt_strbuf_grow(&sb, (size_t)-1) != 0);
	PT_CHECK_STR(sb.buf, "ab");
	pt_strbuf_release(&sb);
}

PT_SUITE(strbuf,
	 { "init is the empty string", init_is_empty_string },
	 { "add grows and stays terminated", add_grows_and_terminates },
	 { "add keeps embedded NUL bytes", add_keeps_embedded_nul },
	 { "addf appends formatted text", addf_appends_formatted },
	 { "detach transfers ownership", detach_transfers_ownership },
	 { "grow refuses sizes that overflow", grow_refuses_overflow });
