#include "pt_test.h"
#include "protune/pt_error.h"
#include "protune/pt_genargs.h"
#include "protune/pt_hosttarget.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"

#include <string.h>

/* cpuid registers as the processors report them (the bits the detection
 * reads; the others as they come). */
#define L1_BASE ((1u << 12) | (1u << 19) | (1u << 28) | (1u << 29) | \
		 (1u << 30))
#define L7_SKX ((1u << 5) | (1u << 16) | (1u << 17) | (1u << 28) | \
		(1u << 30) | (1u << 31))
#define L7_CNL (L7_SKX | (1u << 21))

/* AMD Zen 5 (family 26): Cannon Lake's AVX-512, AVX512-BF16, AVX-VNNI and
 * AVX512-VNNI, no AVX512-FP16. */
static const struct pt_cpuid zen5 = { 1, L1_BASE, 0, L7_CNL, 1u << 11, 0,
				      (1u << 4) | (1u << 5) };
/* Intel Sapphire Rapids: the same and AVX512-FP16. */
static const struct pt_cpuid spr = { 1, L1_BASE, 0, L7_CNL, 1u << 11,
				     1u << 23, (1u << 4) | (1u << 5) };
/* A Skylake server. */
static const struct pt_cpuid skx = { 1, L1_BASE, 0, L7_SKX, 0, 0, 0 };
/* AVX2 without AVX-512 (and no RDRAND: leaf 7 unread, as Halide 14). */
static const struct pt_cpuid hsw_nordrand = { 1, L1_BASE & ~(1u << 30), 0,
					      1u << 5, 0, 0, 0 };

#define ALL512 "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-" \
	"avx512_skylake-f16c-fma-sse41"

static void check_explicit(const struct pt_cpuid *c, const char *want)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	PT_CHECK_INT(pt_host_target_explicit(c, &sb), 0);
	PT_CHECK_STR(sb.buf, want);
	pt_strbuf_release(&sb);
}

PT_TEST(broken_only_without_fp16)
{
	struct pt_cpuid other = { 0 }, vnni512 = zen5;

	PT_CHECK(pt_host_target_broken(&zen5));
	PT_CHECK(!pt_host_target_broken(&spr));
	PT_CHECK(!pt_host_target_broken(&skx));
	PT_CHECK(!pt_host_target_broken(&hsw_nordrand));
	PT_CHECK(!pt_host_target_broken(&other));
	/* AVX512-VNNI alone counts as well as AVX-VNNI */
	vnni512.l71_eax &= ~(1u << 4);
	PT_CHECK(pt_host_target_broken(&vnni512));
	/* no BF16: Halide 14 detects no Sapphire Rapids */
	vnni512.l71_eax = 1u << 4;
	PT_CHECK(!pt_host_target_broken(&vnni512));
}

PT_TEST(explicit_spelling)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	const struct pt_cpuid arm = { 0 };

	check_explicit(&zen5, ALL512);
	check_explicit(&spr, ALL512);
	check_explicit(&skx, "x86-64-linux-avx-avx2-avx512-avx512_skylake-"
		       "f16c-fma-sse41");
	check_explicit(&hsw_nordrand, "x86-64-linux-avx-f16c-fma-sse41");
	PT_CHECK_INT(pt_host_target_explicit(&arm, &sb), PT_EINVAL);
	PT_CHECK_INT((int)sb.len, 0);
	pt_strbuf_release(&sb);
}

static void check_rewrite(const char *value, int want_ret, const char *want)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	PT_CHECK_INT(pt_target_rewrite_host(value, "T", &sb), want_ret);
	PT_CHECK_STR(sb.buf, want);
	pt_strbuf_release(&sb);
}

PT_TEST(rewrite_value)
{
	check_rewrite("host", 1, "T");
	check_rewrite("host-debug-no_asserts", 1, "T-debug-no_asserts");
	check_rewrite("host,host-cuda", 1, "T,T-cuda");
	check_rewrite("x86-64-linux,host", 1, "x86-64-linux,T");
	check_rewrite("x86-64-linux-avx2", 0, "x86-64-linux-avx2");
	check_rewrite("hostile", 0, "hostile");
	check_rewrite("", 0, "");
}

PT_TEST(rewrite_argv)
{
	struct pt_strvec v = PT_STRVEC_INIT;
	const char *in[] = { "gen", "-g", "blur", "-o", "target=host",
			     "target=host-debug", "size=test", "-n",
			     "target=x", NULL };

	PT_REQUIRE(!pt_strvec_pushv(&v, in));
	/* -o's value and -n's value are no parameters */
	PT_CHECK_INT(pt_genargs_set_host(&v, ALL512), 1);
	PT_CHECK_STR(v.v[4], "target=host");
	PT_CHECK_STR(v.v[5], "target=" ALL512 "-debug");
	PT_CHECK_STR(v.v[6], "size=test");
	PT_CHECK_STR(v.v[8], "target=x");
	PT_CHECK_INT((int)v.nr, 9);
	PT_CHECK_INT(pt_genargs_set_host(&v, ALL512), 0);
	pt_strvec_release(&v);
}

PT_SUITE(hosttarget, { "broken only without AVX512-FP16",
		       broken_only_without_fp16 },
	 { "explicit target as Halide spells it", explicit_spelling },
	 { "host in a target= value", rewrite_value },
	 { "target= parameters of a generator command", rewrite_argv });
