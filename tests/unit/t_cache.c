/* Placeholder: replaced by the cache helper. */
#include "pt_test.h"

PT_TEST(placeholder)
{
	PT_CHECK(1);
}

PT_SUITE(cache, { "placeholder", placeholder });
