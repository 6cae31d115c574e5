/* Fuzz target for a warm start from a stored schedule alone
 * (pt_warm_new_stored(): the stage_hashes meta entry, and the earlier
 * schedule's entries read against the current model, tests/fuzz/driver.c
 * runs it without libFuzzer). The input is a schedule text; the model is
 * blur's (tests/fuzz/corpus/model/example-blur). Invariants beyond "no
 * crash, no leak, no undefined behaviour": either a warm start whose
 * changed-stage count is within the model's stages (0 when the entry is
 * the model's own) and whose kept-Func count is within its Funcs, or
 * PT_ENOTFOUND with a reason and nothing made. */
#include "protune/pt_model.h"
#include "protune/pt_sched.h"
#include "protune/pt_warm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char model_text[] =
	"protune-model 1\n"
	"halide \"14.0.0\"\n"
	"target \"x86-64-linux-avx-avx2-f16c-fma-sse41\"\n"
	"machine-params \"2,16777216,40\"\n"
	"generator \"blur\"\n"
	"function \"blur\"\n"
	"argv \"blur.generator\" \"-g\" \"blur\" \"-o\" \"out\" \"target=host\" \"size=test\"\n"
	"input i0 buffer u16 dims 2 est 0 258 0 194 label \"input\"\n"
	"func f0 types u16 args 2 inline label \"input_im\"\n"
	"  region 0 258 0 194\n"
	"  stage 0\n"
	"    dim v0 0 258 label \"_0\"\n"
	"    dim v1 0 194 label \"_1\"\n"
	"    op load.u16 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = i0(v0, v1)\"\n"
	"func f1 types u16 args 2 inline label \"blur_x\"\n"
	"  region 0 256 0 194\n"
	"  stage 0\n"
	"    dim v0 0 256 label \"x\"\n"
	"    dim v1 0 194 label \"y\"\n"
	"    op add.i32 2\n"
	"    op add.u16 2\n"
	"    op div.u16 1\n"
	"    op load.u16 3\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [1,1]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [2,2]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = (((f0(v0, v1) + f0((v0 + 1), v1)) + f0((v0 + 2), v1)) / (u16)3)\"\n"
	"func f2 types u16 args 2 output label \"output\"\n"
	"  region 0 256 0 192\n"
	"  stage 0\n"
	"    dim v0 0 256 label \"x\"\n"
	"    dim v1 0 192 label \"y\"\n"
	"    op add.i32 2\n"
	"    op add.u16 2\n"
	"    op div.u16 1\n"
	"    op load.u16 3\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [1,1]\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [2,2]\n"
	"    def \"f2(v0, v1) = (((f1(v0, v1) + f1(v0, (v1 + 1))) + f1(v0, (v1 + 2))) / (u16)3)\"\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;
	struct pt_sched *s = NULL;
	struct pt_warm *wm = (struct pt_warm *)&err;
	struct pt_strvec own = PT_STRVEC_INIT;
	int ret, kept;

	if (pt_model_parse(model_text, sizeof(model_text) - 1, "blur", &m,
			   &err) || pt_model_hash(m) ||
	    pt_warm_hashes_meta(m, &own))
		abort();
	if (pt_sched_parse((const char *)data, size, "fuzz", &s, &err)) {
		pt_model_free(m);
		pt_strvec_release(&own);
		return 0;
	}
	ret = pt_warm_new_stored(m, s, &wm, &err);
	if (ret) {
		if (ret != PT_ENOTFOUND || wm || !err.msg[0])
			abort();
	} else {
		if (!wm || pt_warm_stages(wm) != m->nstages ||
		    pt_warm_changed(wm) < 0 ||
		    pt_warm_changed(wm) > m->nstages)
			abort();
		/* the first stage_hashes entry is the one read */
		if (!strcmp(pt_sched_meta(s, PT_WARM_META),
			    own.v[0] + sizeof(PT_WARM_META)) &&
		    pt_warm_changed(wm) != 0)
			abort();
		kept = pt_warm_count_kept(wm, s);
		if (kept < 0 || kept > m->nfuncs)
			abort();
	}
	pt_warm_free(wm);
	pt_sched_free(s);
	pt_model_free(m);
	pt_strvec_release(&own);
	return 0;
}
