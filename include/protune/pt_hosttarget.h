/* pt_hosttarget.h: what `target=host` must mean for a Halide 14 generator
 * on this processor.
 *
 * Halide 14 takes AMD Zen 4 and Zen 5 processors for Intel Sapphire
 * Rapids: its host detection adds avx512_sapphirerapids whenever the
 * AVX-512 features of Cannon Lake come with AVX512-BF16 and AVX-VNNI (or
 * AVX512-VNNI), and LLVM 14's "sapphirerapids" CPU then emits AVX512-FP16
 * instructions (vmovw, ...) that these processors lack: the generated code
 * dies of SIGILL. On such a processor (pt_host_target_broken), protune
 * passes the generator the explicit target Halide 14 would have detected,
 * without avx512_sapphirerapids (pt_host_target_explicit): the same code
 * Halide emits for a Cannon Lake, which these processors run. Everywhere
 * else `host` is left alone.
 *
 * The detection mirrors Halide 14's get_host_target() for x86-64 Linux
 * (leaves 1 and 7 of cpuid), which tests/t/t0200-plugin.sh checks against
 * the real libHalide on the machine the tests run on.
 *
 * No global state; the caller owns every buffer. Errors: PT_ENOMEM.
 */
#ifndef PROTUNE_PT_HOSTTARGET_H
#define PROTUNE_PT_HOSTTARGET_H

#include <stdint.h>

#include "protune/pt_strbuf.h"

/* The cpuid registers the detection reads (0 where a leaf is missing). */
struct pt_cpuid {
	int x86_64;        /* 1 on x86-64; every other field 0 otherwise */
	uint32_t l1_ecx, l1_edx;
	uint32_t l7_ebx, l7_ecx, l7_edx;
	uint32_t l71_eax;  /* leaf 7, subleaf 1 */
};

/* This processor's registers. */
void pt_cpuid_read(struct pt_cpuid *c);

/* 1 when Halide 14's host target for c names features c lacks (the
 * Sapphire Rapids misdetection above), else 0. */
int pt_host_target_broken(const struct pt_cpuid *c);

/* Halide 14's host target for c, spelled as Halide prints it
 * ("x86-64-linux-avx-avx2-...", features in alphabetical order), without
 * avx512_sapphirerapids, appended to out. 0, or PT_EINVAL when c is not
 * x86-64 (nothing appended), PT_ENOMEM. */
int pt_host_target_explicit(const struct pt_cpuid *c, struct pt_strbuf *out);

/* What "host" must become on this processor, appended to out: the
 * explicit target when Halide 14 misdetects it (returns 1), else "host"
 * itself (returns 0). PT_ENOMEM. The one place that decides it, for
 * protune-cc, `protune explain` and `protune host-target`. */
int pt_host_target_here(struct pt_strbuf *out);

/* Rewrite the value of a generator's target= parameter: in each of its
 * comma-separated targets that is "host" or starts with "host-", "host"
 * becomes `host` (the rest, extra features such as "-debug", is kept).
 * The result is appended to out. Returns 1 when something was replaced,
 * 0 when not (out then holds the value unchanged), PT_ENOMEM (< 0). */
int pt_target_rewrite_host(const char *value, const char *host,
			   struct pt_strbuf *out);

#endif
