/* Placeholder: replaced by the store helper. */
#include "pt_test.h"

PT_TEST(placeholder)
{
	PT_CHECK(1);
}

PT_SUITE(store, { "placeholder", placeholder });
