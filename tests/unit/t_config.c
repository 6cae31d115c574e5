/* Placeholder: replaced by the config helper. */
#include "pt_test.h"

PT_TEST(placeholder)
{
	PT_CHECK(1);
}

PT_SUITE(config, { "placeholder", placeholder });
