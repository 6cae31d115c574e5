/* Placeholder: replaced by the space helper. */
#include "pt_test.h"

PT_TEST(placeholder)
{
	PT_CHECK(1);
}

PT_SUITE(space, { "placeholder", placeholder });
