/* Placeholder: replaced by the footprint helper. */
#include "pt_test.h"

PT_TEST(placeholder)
{
	PT_CHECK(1);
}

PT_SUITE(footprint, { "placeholder", placeholder });
