/* Placeholder: replaced by the genargs helper. */
#include "pt_test.h"

PT_TEST(placeholder)
{
	PT_CHECK(1);
}

PT_SUITE(genargs, { "placeholder", placeholder });
