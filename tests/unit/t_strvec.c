#include "pt_test.h"
#include "protune/pt_strvec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PT_TEST(init_is_empty_and_terminated)
{
	struct pt_strvec sv = PT_STRVEC_INIT;
	struct pt_strvec heap;

	PT_CHECK_INT(sv.nr, 0);
	PT_CHECK(sv.v != NULL && sv.v[0] == NULL);
	pt_strvec_pop(&sv);
	pt_strvec_clear(&sv);
	pt_strvec_release(&sv);
	PT_CHECK(sv.v[0] == NULL);
	memset(&heap, 0xff, sizeof(heap));
	pt_strvec_init(&heap);
	PT_CHECK(heap.v == pt_strvec_empty && heap.nr == 0 && heap.alloc == 0);
}

PT_TEST(push_copies_and_terminates)
{
	struct pt_strvec sv = PT_STRVEC_INIT;
	char word[8] = "abc";
	int i;

	PT_REQUIRE(pt_strvec_push(&sv, word) == 0);
	word[0] = 'X';
	PT_CHECK_STR(sv.v[0], "abc");
	PT_REQUIRE(pt_strvec_push(&sv, "") == 0);
	for (i = 0; i < 100; i++)
		PT_REQUIRE(pt_strvec_pushf(&sv, "n%d", i) == 0);
	PT_CHECK_INT(sv.nr, 102);
	PT_CHECK_STR(sv.v[1], "");
	PT_CHECK_STR(sv.v[2], "n0");
	PT_CHECK_STR(sv.v[101], "n99");
	PT_CHECK(sv.v[102] == NULL);
	pt_strvec_release(&sv);
	PT_CHECK_INT(sv.nr, 0);
	PT_CHECK(sv.v[0] == NULL);
}

PT_TEST(pushf_formats)
{
	struct pt_strvec sv = PT_STRVEC_INIT;

	PT_REQUIRE(pt_strvec_pushf(&sv, "%s=%d", "JOBS", 8) == 0);
	PT_REQUIRE(pt_strvec_pushf(&sv, "%s", "") == 0);
	PT_CHECK_STR(sv.v[0], "JOBS=8");
	PT_CHECK_STR(sv.v[1], "");
	PT_CHECK(sv.v[2] == NULL);
	pt_strvec_release(&sv);
}

PT_TEST(pushl_and_pushv_append_all)
{
	struct pt_strvec sv = PT_STRVEC_INIT, other = PT_STRVEC_INIT;
	const char *arr[] = { "x", "y z", "", NULL };
	const char *none[] = { NULL };

	PT_REQUIRE(pt_strvec_pushl(&sv, "cc", "-c", NULL) == 0);
	PT_REQUIRE(pt_strvec_pushv(&sv, arr) == 0);
	PT_REQUIRE(pt_strvec_pushv(&sv, none) == 0);
	PT_REQUIRE(pt_strvec_pushl(&sv, NULL) == 0);
	PT_CHECK_INT(sv.nr, 5);
	PT_CHECK_STR(sv.v[0], "cc");
	PT_CHECK_STR(sv.v[1], "-c");
	PT_CHECK_STR(sv.v[3], "y z");
	PT_CHECK_STR(sv.v[4], "");
	PT_CHECK(sv.v[5] == NULL);
	PT_REQUIRE(pt_strvec_pushv(&other, (const char *const *)sv.v) == 0);
	PT_CHECK_INT(other.nr, 5);
	PT_CHECK(other.v[3] != sv.v[3]);
	PT_CHECK_STR(other.v[3], "y z");
	pt_strvec_release(&sv);
	pt_strvec_release(&other);
}

PT_TEST(pushv_of_itself_doubles)
{
	struct pt_strvec sv = PT_STRVEC_INIT;
	size_t i;

	/* The array moves while it is being read: 7 -> 14 outgrows 8. */
	for (i = 0; i < 7; i++)
		PT_REQUIRE(pt_strvec_pushf(&sv, "%zu", i) == 0);
	PT_REQUIRE(pt_strvec_pushv(&sv, (const char *const *)sv.v) == 0);
	PT_CHECK_INT(sv.nr, 14);
	for (i = 0; i < 14; i++) {
		char want[8];

		snprintf(want, sizeof(want), "%zu", i % 7);
		PT_CHECK_STR(sv.v[i], want);
	}
	PT_CHECK(sv.v[14] == NULL);
	/* ... and from the middle of itself. */
	PT_REQUIRE(pt_strvec_pushv(&sv, (const char *const *)sv.v + 12) == 0);
	PT_CHECK_INT(sv.nr, 16);
	PT_CHECK_STR(sv.v[14], "5");
	PT_CHECK_STR(sv.v[15], "6");
	PT_CHECK(sv.v[16] == NULL);
	pt_strvec_release(&sv);
}

PT_TEST(pop_and_clear)
{
	struct pt_strvec sv = PT_STRVEC_INIT;
	char **arr;

	PT_REQUIRE(pt_strvec_pushl(&sv, "a", "b", "c", NULL) == 0);
	pt_strvec_pop(&sv);
	PT_CHECK_INT(sv.nr, 2);
	PT_CHECK(sv.v[2] == NULL);
	arr = sv.v;
	pt_strvec_clear(&sv);
	PT_CHECK_INT(sv.nr, 0);
	PT_CHECK(sv.v == arr && sv.v[0] == NULL);
	PT_REQUIRE(pt_strvec_push(&sv, "d") == 0);
	PT_CHECK(sv.v == arr);
	PT_CHECK_STR(sv.v[0], "d");
	pt_strvec_release(&sv);
}

PT_TEST(detach_transfers_ownership)
{
	struct pt_strvec sv = PT_STRVEC_INIT;
	size_t nr = 99;
	char **v;

	v = pt_strvec_detach(&sv, &nr);
	PT_REQUIRE(v != NULL);
	PT_CHECK(v != pt_strvec_empty);
	PT_CHECK(v[0] == NULL);
	PT_CHECK_INT(nr, 0);
	pt_strvec_free_detached(v);

	PT_REQUIRE(pt_strvec_pushl(&sv, "ls", "-l", NULL) == 0);
	v = pt_strvec_detach(&sv, NULL);
	PT_REQUIRE(v != NULL);
	PT_CHECK_STR(v[0], "ls");
	PT_CHECK_STR(v[1], "-l");
	PT_CHECK(v[2] == NULL);
	PT_CHECK(sv.v == pt_strvec_empty && sv.nr == 0 && sv.alloc == 0);
	pt_strvec_free_detached(v);
	pt_strvec_free_detached(NULL);
}

PT_SUITE(strvec,
	 { "init is empty and terminated", init_is_empty_and_terminated },
	 { "push copies and terminates", push_copies_and_terminates },
	 { "pushf formats", pushf_formats },
	 { "pushl and pushv append all", pushl_and_pushv_append_all },
	 { "pushv of itself", pushv_of_itself_doubles },
	 { "pop and clear", pop_and_clear },
	 { "detach transfers ownership", detach_transfers_ownership });
