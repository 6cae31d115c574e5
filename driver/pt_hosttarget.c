/* pt_hosttarget.c: Halide 14's host target, and its Sapphire Rapids
 * misdetection on AMD processors (see pt_hosttarget.h). */
#include "protune/pt_hosttarget.h"
#include "protune/pt_error.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* cpuid leaf 1 */
#define L1_ECX_FMA (1u << 12)
#define L1_ECX_SSE41 (1u << 19)
#define L1_ECX_AVX (1u << 28)
#define L1_ECX_F16C (1u << 29)
#define L1_ECX_RDRAND (1u << 30)
/* leaf 7, subleaf 0 */
#define L7_EBX_AVX2 (1u << 5)
#define L7_EBX_AVX512F (1u << 16)
#define L7_EBX_AVX512DQ (1u << 17)
#define L7_EBX_AVX512IFMA (1u << 21)
#define L7_EBX_AVX512PF (1u << 26)
#define L7_EBX_AVX512ER (1u << 27)
#define L7_EBX_AVX512CD (1u << 28)
#define L7_EBX_AVX512BW (1u << 30)
#define L7_EBX_AVX512VL (1u << 31)
#define L7_ECX_AVX512VNNI (1u << 11)
#define L7_EDX_AVX512FP16 (1u << 23)
/* leaf 7, subleaf 1 */
#define L71_EAX_AVXVNNI (1u << 4)
#define L71_EAX_AVX512BF16 (1u << 5)

/* Halide 14's feature groups (Target.cpp, get_host_target). */
#define AVX512 (L7_EBX_AVX512F | L7_EBX_AVX512CD)
#define AVX512_KNL (AVX512 | L7_EBX_AVX512PF | L7_EBX_AVX512ER)
#define AVX512_SKYLAKE (AVX512 | L7_EBX_AVX512VL | L7_EBX_AVX512BW | \
			L7_EBX_AVX512DQ)
#define AVX512_CANNONLAKE (AVX512_SKYLAKE | L7_EBX_AVX512IFMA)

void pt_cpuid_read(struct pt_cpuid *c)
{
	memset(c, 0, sizeof(*c));
#if defined(__x86_64__)
	{
		unsigned a, b, cx, d, max = __get_cpuid_max(0, NULL);

		c->x86_64 = 1;
		if (max >= 1 && __get_cpuid(1, &a, &b, &cx, &d)) {
			c->l1_ecx = cx;
			c->l1_edx = d;
		}
		if (max >= 7) {
			__cpuid_count(7, 0, a, b, cx, d);
			c->l7_ebx = b;
			c->l7_ecx = cx;
			c->l7_edx = d;
			__cpuid_count(7, 1, a, b, cx, d);
			c->l71_eax = a;
		}
	}
#endif
}

static int has(uint32_t reg, uint32_t bits)
{
	return (reg & bits) == bits;
}

/* Halide 14 looks at leaf 7 only with AVX, F16C and RDRAND. */
static int leaf7_used(const struct pt_cpuid *c)
{
	return c->x86_64 && has(c->l1_ecx, L1_ECX_AVX | L1_ECX_F16C |
				L1_ECX_RDRAND);
}

int pt_host_target_broken(const struct pt_cpuid *c)
{
	uint32_t e = c->l71_eax;

	return leaf7_used(c) && has(c->l7_ebx, AVX512_CANNONLAKE) &&
	       has(e, L71_EAX_AVX512BF16) &&
	       (has(e, L71_EAX_AVXVNNI) || has(c->l7_ecx, L7_ECX_AVX512VNNI)) &&
	       !has(c->l7_edx, L7_EDX_AVX512FP16);
}

int pt_host_target_explicit(const struct pt_cpuid *c, struct pt_strbuf *out)
{
	/* In alphabetical order, as Halide's Target::to_string prints. */
	const struct {
		const char *name;
		int on;
	} f[] = {
		{ "avx", has(c->l1_ecx, L1_ECX_AVX) },
		{ "avx2", leaf7_used(c) && has(c->l7_ebx, L7_EBX_AVX2) },
		{ "avx512", leaf7_used(c) && has(c->l7_ebx, AVX512) },
		{ "avx512_cannonlake", leaf7_used(c) &&
		  has(c->l7_ebx, AVX512_CANNONLAKE) },
		{ "avx512_knl", leaf7_used(c) && has(c->l7_ebx, AVX512_KNL) },
		{ "avx512_skylake", leaf7_used(c) &&
		  has(c->l7_ebx, AVX512_SKYLAKE) },
		{ "f16c", has(c->l1_ecx, L1_ECX_F16C) },
		{ "fma", has(c->l1_ecx, L1_ECX_FMA) },
		{ "sse41", has(c->l1_ecx, L1_ECX_SSE41) },
	};
	size_t i;

	if (!c->x86_64)
		return PT_EINVAL;
	if (pt_strbuf_addstr(out, "x86-64-linux"))
		return PT_ENOMEM;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].on && pt_strbuf_addf(out, "-%s", f[i].name))
			return PT_ENOMEM;
	return 0;
}

int pt_host_target_here(struct pt_strbuf *out)
{
	struct pt_cpuid c;

	pt_cpuid_read(&c);
	if (!pt_host_target_broken(&c))
		return pt_strbuf_addstr(out, "host") ? PT_ENOMEM : 0;
	return pt_host_target_explicit(&c, out) ? PT_ENOMEM : 1;
}

int pt_target_rewrite_host(const char *value, const char *host,
			   struct pt_strbuf *out)
{
	const char *p = value;
	int changed = 0;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (n >= 4 && !strncmp(p, "host", 4) && (n == 4 || p[4] == '-')) {
			if (pt_strbuf_addstr(out, host) ||
			    pt_strbuf_add(out, p + 4, n - 4))
				return PT_ENOMEM;
			changed = 1;
		} else if (pt_strbuf_add(out, p, n)) {
			return PT_ENOMEM;
		}
		if (!p[n])
			return changed;
		if (pt_strbuf_addch(out, ','))
			return PT_ENOMEM;
		p += n + 1;
	}
}
