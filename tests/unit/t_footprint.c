/* Unit tests of footprints (pt_footprint.h) and features (pt_features.h):
 * hand-computed footprints on small models written as model text, the
 * root regions of the 13 example models (tests/unit/data/, dumped with
 * PROTUNE_DUMP_MODEL at size=test, argv lines removed) against the regions
 * the adapter recorded, and hand-computed features of a two-stage pipeline
 * under three schedules. */
#include "pt_test.h"
#include "protune/pt_features.h"
#include "protune/pt_footprint.h"
#include "protune/pt_model.h"
#include "protune/pt_randsched.h"
#include "protune/pt_sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
	"blur", "unsharp", "harris", "bilateral_grid", "max_filter",
	"local_laplacian", "interpolate", "stencil_chain", "camera_pipe",
	"conv_layer", "matmul", "hist_eq", "iir_blur"
};
#define NEXAMPLES (sizeof(examples) / sizeof(examples[0]))



#define HEADER "protune-model 1\nhalide \"14.0.0\"\n" \
	"target \"x86-64-linux-avx-avx2-fma-sse41\"\n" \
	"machine-params \"8,16777216,40\"\n"

static struct pt_model *model(const char *text)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_model *m = NULL;

	if (pt_model_parse(text, strlen(text), "<test>", &m, &err)) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	pt_model_hash(m);
	return m;
}

/* A box of up to three dims. */
static struct pt_box box(int n, int64_t a0, int64_t b0, int64_t a1,
			 int64_t b1, int64_t a2, int64_t b2)
{
	struct pt_box b;

	memset(&b, 0, sizeof(b));
	b.lo[0] = a0;
	b.hi[0] = b0;
	if (n > 1) {
		b.lo[1] = a1;
		b.hi[1] = b1;
	}
	if (n > 2) {
		b.lo[2] = a2;
		b.hi[2] = b2;
	}
	return b;
}

/* Does `got` have dims [lo, hi] as listed (n dims)? Prints when not. */
static int same(const struct pt_box *got, int n, const int64_t *want,
		const char *what, int line)
{
	int k;

	if (!got) {
		printf("# line %d: %s: no box\n", line, what);
		return 0;
	}
	for (k = 0; k < n; k++)
		if (got->lo[k] != want[2 * k] || got->hi[k] != want[2 * k + 1])
			break;
	if (k == n)
		return 1;
	printf("# line %d: %s: dim %d is [%lld, %lld], want [%lld, %lld]\n",
	       line, what, k, (long long)got->lo[k], (long long)got->hi[k],
	       (long long)want[2 * k], (long long)want[2 * k + 1]);
	return 0;
}

#define BOX_IS(got, n, ...) do { \
		const int64_t want_[] = { __VA_ARGS__ }; \
		PT_CHECK(same((got), (n), want_, #got, __LINE__)); \
	} while (0)

/* The footprint of one access of model stage `sidx` over `dims`. */
static struct pt_box access_box(const struct pt_fp *fp, int sidx, int a,
				struct pt_box dims)
{
	struct pt_box out;

	memset(&out, 0, sizeof(out));
	pt_fp_access(fp, sidx, a, &dims, &out);
	return out;
}

struct fixture {
	struct pt_model *m;
	struct pt_fp *fp;
	struct pt_fp_acc acc;
};

static void setup(struct fixture *x, const char *text)
{
	x->m = model(text);
	PT_REQUIRE(x->m != NULL);
	PT_REQUIRE(pt_fp_new(x->m, &x->fp, NULL) == 0);
	PT_REQUIRE(pt_fp_acc_init(&x->acc, x->fp) == 0);
}

static void teardown(struct fixture *x)
{
	pt_fp_acc_release(&x->acc);
	pt_fp_free(x->fp);
	pt_model_free(x->m);
}

/* Root regions of a hand-built model agree with its region lines. */
static void check_root_regions(struct fixture *x)
{
	struct pt_box r[8];
	int f;

	PT_REQUIRE(x->m->nfuncs <= 8);
	pt_fp_root_regions(x->fp, &x->acc, r);
	for (f = 0; f < x->m->nfuncs; f++) {
		const struct pt_box *want = pt_fp_node_region(x->fp, f);
		int k;

		for (k = 0; k < x->m->funcs[f].nargs; k++)
			if (!PT_CHECK(r[f].lo[k] == want->lo[k] &&
				      r[f].hi[k] == want->hi[k]))
				printf("# f%d dim %d: [%lld, %lld]\n", f, k,
				       (long long)r[f].lo[k],
				       (long long)r[f].hi[k]);
	}
}

/* --- footprints ----------------------------------------------------------- */

static const char stencil_text[] = HEADER
	"input i0 buffer u8 dims 1 est 0 102\n"
	"func f0 types u8 args 1 output\n"
	"  region 0 100\n"
	"  stage 0\n"
	"    dim v0 0 100\n"
	"    op add.u8 2\n"
	"    op load.u8 3\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [1,1]\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [2,2]\n"
	"    def \"f0(v0) = ((i0(v0) + i0((v0 + 1))) + i0((v0 + 2)))\"\n";

PT_TEST(stencil)
{
	struct fixture x;
	struct pt_box d = box(1, 10, 19, 0, 0, 0, 0), b;

	setup(&x, stencil_text);
	PT_CHECK_INT(pt_fp_nnodes(x.fp), 2);
	b = access_box(x.fp, 0, 0, d);
	BOX_IS(&b, 1, 10, 19);
	b = access_box(x.fp, 0, 1, d);
	BOX_IS(&b, 1, 11, 20);
	b = access_box(x.fp, 0, 2, d);
	BOX_IS(&b, 1, 12, 21);
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 0, &d, NULL, 0, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 1);
	BOX_IS(pt_fp_acc_get(&x.acc, 1), 1, 10, 21);
	PT_CHECK(pt_fp_acc_get(&x.acc, 0) == NULL);
	/* one point */
	d = box(1, 99, 99, 0, 0, 0, 0);
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 0, &d, NULL, 0, &x.acc);
	BOX_IS(pt_fp_acc_get(&x.acc, 1), 1, 99, 101);
	check_root_regions(&x);
	teardown(&x);
}

/* f0(x) = i0(2x) + i0(2x + 1) (downsample), f1(x) = f0(x / 2)
 * (upsample). */
static const char resample_text[] = HEADER
	"input i0 buffer f32 dims 1 est 0 200\n"
	"func f0 types f32 args 1 inline\n"
	"  region 0 100\n"
	"  stage 0\n"
	"    dim v0 0 100\n"
	"    op add.f32 1\n"
	"    op load.f32 2\n"
	"    access i0 value 0 count 1\n"
	"      coord 2*v0 + [0,0]\n"
	"    access i0 value 0 count 1\n"
	"      coord 2*v0 + [1,1]\n"
	"    def \"f0(v0) = (i0((v0*2)) + i0(((v0*2) + 1)))\"\n"
	"func f1 types f32 args 1 output\n"
	"  region 0 200\n"
	"  stage 0\n"
	"    dim v0 0 200\n"
	"    op load.f32 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1/2*v0 + [-1/2,0]\n"
	"    def \"f1(v0) = f0((v0/2))\"\n";

PT_TEST(downsample_upsample)
{
	struct fixture x;
	struct pt_box b, d;
	uint64_t inl = 1;  /* f0 */

	setup(&x, resample_text);
	/* x/2 over [3, 8] is [1, 4]; over [2, 9] too; over [-3, -1] it is
	 * [-2, -1] (floor, not truncation) */
	b = access_box(x.fp, 1, 0, box(1, 3, 8, 0, 0, 0, 0));
	BOX_IS(&b, 1, 1, 4);
	b = access_box(x.fp, 1, 0, box(1, 2, 9, 0, 0, 0, 0));
	BOX_IS(&b, 1, 1, 4);
	b = access_box(x.fp, 1, 0, box(1, -3, -1, 0, 0, 0, 0));
	BOX_IS(&b, 1, -2, -1);
	b = access_box(x.fp, 1, 0, box(1, 5, 5, 0, 0, 0, 0));
	BOX_IS(&b, 1, 2, 2);
	/* 2x and 2x + 1 over [1, 4] */
	b = access_box(x.fp, 0, 0, box(1, 1, 4, 0, 0, 0, 0));
	BOX_IS(&b, 1, 2, 8);
	b = access_box(x.fp, 0, 1, box(1, 1, 4, 0, 0, 0, 0));
	BOX_IS(&b, 1, 3, 9);
	/* upsample through the inlined downsample: x/2 over [0, 9] is
	 * [0, 4], then 2y is [0, 8] and 2y + 1 [1, 9] (composing the maps
	 * first would give x + [-1, 1], [-1, 10]) */
	pt_fp_acc_clear(&x.acc);
	d = box(1, 0, 9, 0, 0, 0, 0);
	pt_fp_reads(x.fp, 1, &d, &inl, 0, &x.acc);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 1, 0, 4);
	BOX_IS(pt_fp_acc_get(&x.acc, 2), 1, 0, 9);
	check_root_regions(&x);
	teardown(&x);
}

/* f0(x, y) = i0(y, x) (transpose), f1(x, y) = f0(31 - x, y) (flip). */
static const char transpose_text[] = HEADER
	"input i0 buffer u16 dims 2 est 0 64 0 32\n"
	"func f0 types u16 args 2 inline\n"
	"  region 0 32 0 64\n"
	"  stage 0\n"
	"    dim v0 0 32\n"
	"    dim v1 0 64\n"
	"    op load.u16 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v1 + [0,0]\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f0(v0, v1) = i0(v1, v0)\"\n"
	"func f1 types u16 args 2 output\n"
	"  region 0 32 0 64\n"
	"  stage 0\n"
	"    dim v0 0 32\n"
	"    dim v1 0 64\n"
	"    op load.u16 1\n"
	"    access f0 value 0 count 1\n"
	"      coord -1*v0 + [31,31]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = f0((31 - v0), v1)\"\n";

PT_TEST(transpose)
{
	struct fixture x;
	struct pt_box d = box(2, 0, 7, 10, 11, 0, 0), b;
	uint64_t inl = 1;  /* f0 */

	setup(&x, transpose_text);
	b = access_box(x.fp, 1, 0, d);
	BOX_IS(&b, 2, 24, 31, 10, 11);
	b = access_box(x.fp, 0, 0, b);
	BOX_IS(&b, 2, 10, 11, 24, 31);
	/* through the inlined transpose */
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 1, &d, &inl, 0, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 2);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 2, 24, 31, 10, 11);
	BOX_IS(pt_fp_acc_get(&x.acc, 2), 2, 10, 11, 24, 31);
	check_root_regions(&x);
	teardown(&x);
}

/* C(x, y) += A(r, y) * B(x, r) over r in [0, 64). */
static const char matmul_text[] = HEADER
	"input i0 buffer f32 dims 2 est 0 64 0 32\n"
	"input i1 buffer f32 dims 2 est 0 16 0 64\n"
	"func f0 types f32 args 2 output\n"
	"  region 0 16 0 32\n"
	"  stage 0\n"
	"    dim v0 0 16\n"
	"    dim v1 0 32\n"
	"    def \"f0(v0, v1) = 0.0f\"\n"
	"  stage 1\n"
	"    dim r0 0 64\n"
	"    dim v0 0 16\n"
	"    dim v1 0 32\n"
	"    op add.f32 1\n"
	"    op load.f32 3\n"
	"    op mul.f32 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1 store\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*r0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access i1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*r0 + [0,0]\n"
	"    def \"f0(v0, v1) = (f0(v0, v1) + (i0(r0, v1)*i1(v0, r0))) "
	"rdom r0(0, 64)\"\n";

PT_TEST(matmul)
{
	struct fixture x;
	struct pt_box d, region = box(2, 0, 3, 5, 5, 0, 0);

	setup(&x, matmul_text);
	/* a 4x1 tile of C: all of r */
	pt_fp_stage_dims(x.fp, 1, &region, &d);
	BOX_IS(&d, 3, 0, 63, 0, 3, 5, 5);
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 1, &d, NULL, 0, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 2);
	BOX_IS(pt_fp_acc_get(&x.acc, 1), 2, 0, 63, 5, 5);   /* A */
	BOX_IS(pt_fp_acc_get(&x.acc, 2), 2, 0, 3, 0, 63);   /* B */
	PT_CHECK(pt_fp_acc_get(&x.acc, 0) == NULL);
	/* its own value, with PT_FP_SELF; its store with PT_FP_STORES */
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 1, &d, NULL, PT_FP_SELF, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 3);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 2, 0, 3, 5, 5);
	pt_fp_acc_clear(&x.acc);
	d.lo[0] = d.hi[0] = 7;  /* one step of r */
	pt_fp_reads(x.fp, 1, &d, NULL, PT_FP_STORES, &x.acc);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 2, 0, 3, 5, 5);
	BOX_IS(pt_fp_acc_get(&x.acc, 1), 2, 7, 7, 5, 5);
	BOX_IS(pt_fp_acc_get(&x.acc, 2), 2, 0, 3, 7, 7);
	check_root_regions(&x);
	teardown(&x);
}

/* A histogram (data-dependent store, clamped), and a Func reading it at
 * unknown indices, unclamped and clamped on one side. */
static const char hist_text[] = HEADER
	"input i0 buffer u8 dims 1 est 0 1000\n"
	"func f0 types i32 args 1\n"
	"  region 0 256\n"
	"  stage 0\n"
	"    dim v0 0 256\n"
	"    def \"f0(v0) = 0\"\n"
	"  stage 1\n"
	"    dim r0 0 1000\n"
	"    op add.i32 1\n"
	"    op cast.i32 2\n"
	"    op load.i32 1\n"
	"    op load.u8 2\n"
	"    access f0 value 0 count 1 data-dependent\n"
	"      coord any clamp [0,255]\n"
	"    access f0 value 0 count 1 store data-dependent\n"
	"      coord any clamp [0,255]\n"
	"    access i0 value 0 count 2\n"
	"      coord 1*r0 + [0,0]\n"
	"    def \"f0(cast<i32>(i0(r0))) = (f0(cast<i32>(i0(r0))) + 1) "
	"rdom r0(0, 1000)\"\n"
	"func f1 types i32 args 1 output\n"
	"  region 0 1000\n"
	"  stage 0\n"
	"    dim v0 0 1000\n"
	"    op add.i32 1\n"
	"    op load.i32 2\n"
	"    op load.u8 1\n"
	"    access f0 value 0 count 1 data-dependent\n"
	"      coord any\n"
	"    access f0 value 0 count 1 data-dependent\n"
	"      coord any clamp [10,_]\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    def \"f1(v0) = (f0(i0(v0)) + f0(max(i0(v0), 10)))\"\n";

PT_TEST(histogram)
{
	struct fixture x;
	struct pt_box d = box(1, 0, 9, 0, 0, 0, 0), b;

	setup(&x, hist_text);
	/* the update over ten steps of r: ten input values, any bin */
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 1, &d, NULL, PT_FP_STORES, &x.acc);
	BOX_IS(pt_fp_acc_get(&x.acc, 2), 1, 0, 9);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 1, 0, 255);
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 1, &d, NULL, 0, &x.acc);
	PT_CHECK(pt_fp_acc_get(&x.acc, 0) == NULL);
	/* unknown index: the whole region; clamped on one side: the
	 * region above the clamp, whatever the consumer's box */
	d = box(1, 500, 500, 0, 0, 0, 0);
	b = access_box(x.fp, 2, 0, d);
	BOX_IS(&b, 1, 0, 255);
	b = access_box(x.fp, 2, 1, d);
	BOX_IS(&b, 1, 10, 255);
	b = access_box(x.fp, 2, 2, d);
	BOX_IS(&b, 1, 500, 500);
	check_root_regions(&x);
	teardown(&x);
}

/* A boundary condition: f0 = i0 clamped to its bounds (inlined), f1 a
 * horizontal blur of f0 that reads one pixel outside. */
static const char clamp_text[] = HEADER
	"input i0 buffer f32 dims 2 est 0 50 0 40\n"
	"func f0 types f32 args 2 inline\n"
	"  region -1 52 0 40\n"
	"  stage 0\n"
	"    dim v0 -1 52\n"
	"    dim v1 0 40\n"
	"    op load.f32 1\n"
	"    op max.i32 2\n"
	"    op min.i32 2\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0] clamp [0,49]\n"
	"      coord 1*v1 + [0,0] clamp [0,39]\n"
	"    def \"f0(v0, v1) = i0(max(min(v0, 49), 0), "
	"max(min(v1, 39), 0))\"\n"
	"func f1 types f32 args 2 output\n"
	"  region 0 50 0 40\n"
	"  stage 0\n"
	"    dim v0 0 50\n"
	"    dim v1 0 40\n"
	"    op add.f32 1\n"
	"    op load.f32 2\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [-1,-1]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [1,1]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = (f0((v0 + -1), v1) + f0((v0 + 1), v1))\"\n";

PT_TEST(clamp)
{
	struct fixture x;
	struct pt_box b;
	uint64_t inl = 1;

	setup(&x, clamp_text);
	b = access_box(x.fp, 0, 0, box(2, -1, 5, 3, 4, 0, 0));
	BOX_IS(&b, 2, 0, 5, 3, 4);
	b = access_box(x.fp, 0, 0, box(2, 45, 50, -2, 0, 0, 0));
	BOX_IS(&b, 2, 45, 49, 0, 0);
	b = access_box(x.fp, 0, 0, box(2, 60, 70, 41, 45, 0, 0));
	BOX_IS(&b, 2, 49, 49, 39, 39);
	b = access_box(x.fp, 0, 0, box(2, -9, -3, -9, -3, 0, 0));
	BOX_IS(&b, 2, 0, 0, 0, 0);
	/* the blur of the first ten columns of row 7, through the clamp */
	pt_fp_acc_clear(&x.acc);
	b = box(2, 0, 9, 7, 7, 0, 0);
	pt_fp_reads(x.fp, 1, &b, &inl, 0, &x.acc);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 2, -1, 10, 7, 7);
	BOX_IS(pt_fp_acc_get(&x.acc, 2), 2, 0, 10, 7, 7);
	check_root_regions(&x);
	teardown(&x);
}

/* f2(x) = f1(x) + f1(x + 1); f1(x) = f0(2x) + f0(2x + 3); f0(x) = i0(x) +
 * i0(x + 1); f0 and f1 inlinable. */
static const char chain_text[] = HEADER
	"input i0 buffer u8 dims 1 est 0 105\n"
	"func f0 types u8 args 1 inline\n"
	"  region 0 104\n"
	"  stage 0\n"
	"    dim v0 0 104\n"
	"    op add.u8 1\n"
	"    op load.u8 2\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [1,1]\n"
	"    def \"f0(v0) = (i0(v0) + i0((v0 + 1)))\"\n"
	"func f1 types u8 args 1 inline\n"
	"  region 0 51\n"
	"  stage 0\n"
	"    dim v0 0 51\n"
	"    op add.u8 1\n"
	"    op load.u8 2\n"
	"    access f0 value 0 count 1\n"
	"      coord 2*v0 + [0,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 2*v0 + [3,3]\n"
	"    def \"f1(v0) = (f0((v0*2)) + f0(((v0*2) + 3)))\"\n"
	"func f2 types u8 args 1 output\n"
	"  region 0 50\n"
	"  stage 0\n"
	"    dim v0 0 50\n"
	"    op add.u8 1\n"
	"    op load.u8 2\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"    access f1 value 0 count 1\n"
	"      coord 1*v0 + [1,1]\n"
	"    def \"f2(v0) = (f1(v0) + f1((v0 + 1)))\"\n";

PT_TEST(inline_chain)
{
	struct fixture x;
	struct pt_box d = box(1, 10, 19, 0, 0, 0, 0);
	uint64_t both = 3, only_f0 = 1, only_f1 = 2;

	setup(&x, chain_text);
	/* nothing inlined: f2 reads f1 only */
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 2, &d, NULL, 0, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 1);
	BOX_IS(pt_fp_acc_get(&x.acc, 1), 1, 10, 20);
	/* both inlined: f1 [10, 20], f0 [20, 43], i0 [20, 44] */
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 2, &d, &both, 0, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 3);
	BOX_IS(pt_fp_acc_get(&x.acc, 1), 1, 10, 20);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 1, 20, 43);
	BOX_IS(pt_fp_acc_get(&x.acc, 3), 1, 20, 44);
	/* only f0 inlined: f2 stops at f1, f1 itself looks through f0 */
	pt_fp_acc_clear(&x.acc);
	pt_fp_reads(x.fp, 2, &d, &only_f0, 0, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 1);
	pt_fp_acc_clear(&x.acc);
	d = box(1, 10, 20, 0, 0, 0, 0);
	pt_fp_reads(x.fp, 1, &d, &only_f0, 0, &x.acc);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 1, 20, 43);
	BOX_IS(pt_fp_acc_get(&x.acc, 3), 1, 20, 44);
	/* only f1 inlined: f2 reaches f0 and stops there */
	pt_fp_acc_clear(&x.acc);
	d = box(1, 10, 19, 0, 0, 0, 0);
	pt_fp_reads(x.fp, 2, &d, &only_f1, 0, &x.acc);
	PT_CHECK_INT(x.acc.ntouched, 2);
	BOX_IS(pt_fp_acc_get(&x.acc, 0), 1, 20, 43);
	PT_CHECK(pt_fp_acc_get(&x.acc, 3) == NULL);
	check_root_regions(&x);
	teardown(&x);
}

PT_TEST(box_lines)
{
	struct pt_box alloc = box(3, 0, 99, 0, 49, 0, 2);
	struct pt_box b;

	b = box(3, 0, 99, 0, 49, 0, 2);  /* all of it */
	PT_CHECK(pt_box_lines(&b, &alloc, 3) == 1);
	b = box(3, 0, 99, 10, 19, 0, 2); /* whole rows: one run per plane */
	PT_CHECK(pt_box_lines(&b, &alloc, 3) == 3);
	b = box(3, 0, 99, 0, 49, 1, 1);  /* one whole plane */
	PT_CHECK(pt_box_lines(&b, &alloc, 3) == 1);
	b = box(3, 5, 9, 10, 19, 0, 2);  /* a tile: one run per row */
	PT_CHECK(pt_box_lines(&b, &alloc, 3) == 30);
	PT_CHECK(pt_box_points(&b, 3) == 150);
	PT_CHECK(pt_box_points(&b, 0) == 1);
}

PT_TEST(root_regions_examples)
{
	size_t e;

	for (e = 0; e < NEXAMPLES; e++) {
		struct pt_model *m = pt_test_example(examples[e]);
		struct pt_fp *fp = NULL;
		struct pt_fp_acc acc;
		struct pt_box *r;
		int f, k, bad = 0;

		PT_REQUIRE(m != NULL);
		PT_REQUIRE(pt_fp_new(m, &fp, NULL) == 0);
		PT_REQUIRE(pt_fp_acc_init(&acc, fp) == 0);
		r = calloc((size_t)m->nfuncs, sizeof(*r));
		PT_REQUIRE(r != NULL);
		pt_fp_root_regions(fp, &acc, r);
		for (f = 0; f < m->nfuncs; f++)
			for (k = 0; k < m->funcs[f].nargs; k++) {
				int64_t lo = m->funcs[f].region_min[k];
				int64_t hi = lo + m->funcs[f].region_extent[k]
					- 1;

				if (r[f].lo[k] == lo && r[f].hi[k] == hi)
					continue;
				printf("# %s f%d dim %d: [%lld, %lld], model "
				       "[%lld, %lld]\n", examples[e], f, k,
				       (long long)r[f].lo[k],
				       (long long)r[f].hi[k], (long long)lo,
				       (long long)hi);
				bad++;
			}
		PT_CHECK_INT(bad, 0);
		free(r);
		pt_fp_acc_release(&acc);
		pt_fp_free(fp);
		pt_model_free(m);
	}
}

/* --- features ------------------------------------------------------------- */

/* f0(x, y) = i0(x, y) + i0(x + 1, y) + i0(x + 2, y) over ROWS rows, and
 * the head of the output f1, 64 x 63 floats. */
#define F0_TEXT(ROWS) HEADER \
	"input i0 buffer f32 dims 2 est 0 66 0 " ROWS "\n" \
	"func f0 types f32 args 2 inline\n" \
	"  region 0 64 0 " ROWS "\n" \
	"  stage 0\n" \
	"    dim v0 0 64\n" \
	"    dim v1 0 " ROWS "\n" \
	"    op add.f32 2\n" \
	"    op load.f32 3\n" \
	"    access i0 value 0 count 1\n" \
	"      coord 1*v0 + [0,0]\n" \
	"      coord 1*v1 + [0,0]\n" \
	"    access i0 value 0 count 1\n" \
	"      coord 1*v0 + [1,1]\n" \
	"      coord 1*v1 + [0,0]\n" \
	"    access i0 value 0 count 1\n" \
	"      coord 1*v0 + [2,2]\n" \
	"      coord 1*v1 + [0,0]\n" \
	"    def \"f0(v0, v1) = ((i0(v0, v1) + i0((v0 + 1), v1)) + " \
	"i0((v0 + 2), v1))\"\n" \
	"func f1 types f32 args 2 output\n" \
	"  region 0 64 0 63\n" \
	"  stage 0\n" \
	"    dim v0 0 64\n" \
	"    dim v1 0 63\n" \
	"    op add.f32 1\n" \
	"    op load.f32 2\n"

/* f1(x, y) = f0(x, y) + f0(x, y + 1), f0 over 64 rows. The target has
 * AVX2: 8 lanes of f32, 32-byte vectors. */
static const char two_text[] = F0_TEXT("64")
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [1,1]\n"
	"    def \"f1(v0, v1) = (f0(v0, v1) + f0(v0, (v1 + 1)))\"\n";

/* f1(x, y) = f0(x, x + y) + f0(x, x + y + 1), f0 over 127 rows: along a
 * row of f1, its vectors read f0 across f0's rows. */
static const char shear_text[] = F0_TEXT("127")
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v0 1*v1 + [0,0]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v0 1*v1 + [1,1]\n"
	"    def \"f1(v0, v1) = (f0(v0, (v0 + v1)) + f0(v0, ((v0 + v1) + 1)))\"\n";

#define VEC_ROWS "  stage 0\n    split v0 v0o v0i 8 guard\n" \
	"    vectorize v0i\n"

static struct pt_sched *sched(const struct pt_model *m, const char *body)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_sched *s = NULL;
	char key[33], text[2048];

	pt_hash_hex(m->key, key);
	snprintf(text, sizeof(text), "protune-schedule 1\nkey %s\n%s", key,
		 body);
	if (pt_sched_parse(text, strlen(text), "<test>", &s, &err)) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	if (pt_sched_check(m, s, &err)) {
		printf("# %s\n", err.msg);
		pt_sched_free(s);
		return NULL;
	}
	return s;
}

/* Expected values: pairs of (feature, value); every feature not listed
 * must be 0. */
struct want {
	int feat;
	double v;
};

static int check_row(const double *row, const struct want *w, size_t n,
		     const char *what)
{
	int k, ok = 1;
	size_t i;

	for (k = 0; k < PT_FEAT_COUNT; k++) {
		double want = 0;

		for (i = 0; i < n; i++)
			if (w[i].feat == k)
				want = w[i].v;
		if (fabs(row[k] - want) <= 1e-9 * (fabs(want) + 1))
			continue;
		printf("# %s: %s is %.10g, want %.10g\n", what,
		       pt_feat_name(k), row[k], want);
		ok = 0;
	}
	return ok;
}

#define ROW_IS(row, what, ...) do { \
		const struct want w_[] = { __VA_ARGS__ }; \
		PT_CHECK(check_row((row), w_, sizeof(w_) / sizeof(w_[0]), \
				   (what))); \
	} while (0)

PT_TEST(features_root)
{
	struct pt_model *m = model(two_text);
	struct pt_features *fx = NULL;
	struct pt_sched *s;
	double out[2 * PT_FEAT_COUNT];

	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	s = sched(m, "func f0 root\n" VEC_ROWS "    parallel v1\n"
		  "func f1 root\n" VEC_ROWS "    parallel v1\n");
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	ROW_IS(&out[0], "f0 root",
	       { PT_FEAT_NUM_REALIZATIONS, 1 }, { PT_FEAT_NUM_PRODUCTIONS, 1 },
	       { PT_FEAT_POINTS_PER_REALIZATION, 4096 },
	       { PT_FEAT_POINTS_PER_PRODUCTION, 4096 },
	       { PT_FEAT_POINTS_TOTAL, 4096 },
	       { PT_FEAT_POINTS_MINIMUM, 4096 },
	       { PT_FEAT_REDUNDANT_RECOMPUTE, 1 },
	       { PT_FEAT_INNERMOST_LOOP_EXTENT, 8 },
	       { PT_FEAT_INNERMOST_PURE_LOOP_EXTENT, 8 },
	       { PT_FEAT_UNROLLED_LOOP_EXTENT, 1 },
	       { PT_FEAT_INNER_PARALLELISM, 64 },
	       { PT_FEAT_OUTER_PARALLELISM, 1 },
	       { PT_FEAT_VECTOR_SIZE, 8 }, { PT_FEAT_NATIVE_VECTOR_SIZE, 8 },
	       { PT_FEAT_NUM_VECTORS, 512 },
	       { PT_FEAT_VECTOR_LOADS_PER_VECTOR, 3 },
	       { PT_FEAT_SCALAR_LOADS_PER_SCALAR, 3 },
	       { PT_FEAT_BYTES_AT_ROOT, 16384 },
	       { PT_FEAT_INNERMOST_BYTES_AT_ROOT, 256 },
	       { PT_FEAT_BYTES_AT_REALIZATION, 16384 },
	       { PT_FEAT_INNERMOST_BYTES_AT_REALIZATION, 256 },
	       { PT_FEAT_BYTES_AT_PRODUCTION, 16384 },
	       { PT_FEAT_INNERMOST_BYTES_AT_PRODUCTION, 256 },
	       { PT_FEAT_BYTES_AT_TASK, 256 },
	       { PT_FEAT_INNERMOST_BYTES_AT_TASK, 256 },
	       /* all of i0: 66 x 64 floats, one run */
	       { PT_FEAT_BYTES_READ_AT_ROOT, 16896 },
	       { PT_FEAT_LINES_READ_AT_ROOT, 1 },
	       { PT_FEAT_BYTES_READ_PER_REALIZATION, 16896 },
	       { PT_FEAT_LINES_READ_PER_REALIZATION, 1 },
	       { PT_FEAT_BYTES_READ_PER_PRODUCTION, 16896 },
	       { PT_FEAT_LINES_READ_PER_PRODUCTION, 1 },
	       /* a task is a row: one whole row of i0 */
	       { PT_FEAT_BYTES_READ_PER_TASK, 264 },
	       { PT_FEAT_LINES_READ_PER_TASK, 1 },
	       /* a vector: 8 + 2 floats of one row */
	       { PT_FEAT_BYTES_READ_PER_VECTOR, 40 },
	       { PT_FEAT_LINES_READ_PER_VECTOR, 1 },
	       { PT_FEAT_ALLOCATION_BYTES_READ_PER_REALIZATION, 16896 },
	       { PT_FEAT_WORKING_SET_AT_PRODUCTION, 32512 },
	       { PT_FEAT_WORKING_SET_AT_REALIZATION, 32512 },
	       { PT_FEAT_WORKING_SET_AT_ROOT, 32512 });
	ROW_IS(&out[PT_FEAT_COUNT], "f1 root",
	       { PT_FEAT_NUM_REALIZATIONS, 1 }, { PT_FEAT_NUM_PRODUCTIONS, 1 },
	       { PT_FEAT_POINTS_PER_REALIZATION, 4032 },
	       { PT_FEAT_POINTS_PER_PRODUCTION, 4032 },
	       { PT_FEAT_POINTS_TOTAL, 4032 },
	       { PT_FEAT_POINTS_MINIMUM, 4032 },
	       { PT_FEAT_REDUNDANT_RECOMPUTE, 1 },
	       { PT_FEAT_INNERMOST_LOOP_EXTENT, 8 },
	       { PT_FEAT_INNERMOST_PURE_LOOP_EXTENT, 8 },
	       { PT_FEAT_UNROLLED_LOOP_EXTENT, 1 },
	       { PT_FEAT_INNER_PARALLELISM, 63 },
	       { PT_FEAT_OUTER_PARALLELISM, 1 },
	       { PT_FEAT_VECTOR_SIZE, 8 }, { PT_FEAT_NATIVE_VECTOR_SIZE, 8 },
	       { PT_FEAT_NUM_VECTORS, 504 },
	       { PT_FEAT_VECTOR_LOADS_PER_VECTOR, 2 },
	       { PT_FEAT_SCALAR_LOADS_PER_SCALAR, 2 },
	       { PT_FEAT_BYTES_AT_ROOT, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_ROOT, 256 },
	       { PT_FEAT_BYTES_AT_REALIZATION, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_REALIZATION, 256 },
	       { PT_FEAT_BYTES_AT_PRODUCTION, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_PRODUCTION, 256 },
	       { PT_FEAT_BYTES_AT_TASK, 256 },
	       { PT_FEAT_INNERMOST_BYTES_AT_TASK, 256 },
	       { PT_FEAT_BYTES_READ_AT_ROOT, 16384 },
	       { PT_FEAT_LINES_READ_AT_ROOT, 1 },
	       { PT_FEAT_BYTES_READ_PER_REALIZATION, 16384 },
	       { PT_FEAT_LINES_READ_PER_REALIZATION, 1 },
	       { PT_FEAT_BYTES_READ_PER_PRODUCTION, 16384 },
	       { PT_FEAT_LINES_READ_PER_PRODUCTION, 1 },
	       /* two whole rows of f0, contiguous */
	       { PT_FEAT_BYTES_READ_PER_TASK, 512 },
	       { PT_FEAT_LINES_READ_PER_TASK, 1 },
	       /* 8 floats of two rows */
	       { PT_FEAT_BYTES_READ_PER_VECTOR, 64 },
	       { PT_FEAT_LINES_READ_PER_VECTOR, 2 },
	       { PT_FEAT_ALLOCATION_BYTES_READ_PER_REALIZATION, 16384 },
	       { PT_FEAT_WORKING_SET_AT_PRODUCTION, 32512 },
	       { PT_FEAT_WORKING_SET_AT_REALIZATION, 32512 },
	       { PT_FEAT_WORKING_SET_AT_ROOT, 32512 });
	pt_sched_free(s);
	pt_features_free(fx);
	pt_model_free(m);
}

PT_TEST(features_inline)
{
	struct pt_model *m = model(two_text);
	struct pt_features *fx = NULL;
	struct pt_sched *s;
	double out[2 * PT_FEAT_COUNT];
	const struct pt_feat_loop *l;

	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	s = sched(m, "func f0 inline\n"
		  "func f1 root\n" VEC_ROWS "    parallel v1\n");
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	/* f0 is evaluated twice per point of f1, in f1's vectors */
	ROW_IS(&out[0], "f0 inline",
	       { PT_FEAT_POINTS_MINIMUM, 4096 },
	       { PT_FEAT_VECTOR_SIZE, 8 }, { PT_FEAT_NATIVE_VECTOR_SIZE, 8 },
	       { PT_FEAT_NUM_VECTORS, 1008 },
	       { PT_FEAT_INLINED_CALLS, 8064 });
	PT_CHECK_INT(pt_features_loops(fx, 0, &l), 0);
	ROW_IS(&out[PT_FEAT_COUNT], "f1 with f0 inline",
	       { PT_FEAT_NUM_REALIZATIONS, 1 }, { PT_FEAT_NUM_PRODUCTIONS, 1 },
	       { PT_FEAT_POINTS_PER_REALIZATION, 4032 },
	       { PT_FEAT_POINTS_PER_PRODUCTION, 4032 },
	       { PT_FEAT_POINTS_TOTAL, 4032 },
	       { PT_FEAT_POINTS_MINIMUM, 4032 },
	       { PT_FEAT_REDUNDANT_RECOMPUTE, 1 },
	       { PT_FEAT_INNERMOST_LOOP_EXTENT, 8 },
	       { PT_FEAT_INNERMOST_PURE_LOOP_EXTENT, 8 },
	       { PT_FEAT_UNROLLED_LOOP_EXTENT, 1 },
	       { PT_FEAT_INNER_PARALLELISM, 63 },
	       { PT_FEAT_OUTER_PARALLELISM, 1 },
	       { PT_FEAT_VECTOR_SIZE, 8 }, { PT_FEAT_NATIVE_VECTOR_SIZE, 8 },
	       { PT_FEAT_NUM_VECTORS, 504 },
	       /* 2 x 3 dense loads of i0 through f0 */
	       { PT_FEAT_VECTOR_LOADS_PER_VECTOR, 6 },
	       { PT_FEAT_SCALAR_LOADS_PER_SCALAR, 6 },
	       { PT_FEAT_BYTES_AT_ROOT, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_ROOT, 256 },
	       { PT_FEAT_BYTES_AT_REALIZATION, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_REALIZATION, 256 },
	       { PT_FEAT_BYTES_AT_PRODUCTION, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_PRODUCTION, 256 },
	       { PT_FEAT_BYTES_AT_TASK, 256 },
	       { PT_FEAT_INNERMOST_BYTES_AT_TASK, 256 },
	       { PT_FEAT_BYTES_READ_AT_ROOT, 16896 },
	       { PT_FEAT_LINES_READ_AT_ROOT, 1 },
	       { PT_FEAT_BYTES_READ_PER_REALIZATION, 16896 },
	       { PT_FEAT_LINES_READ_PER_REALIZATION, 1 },
	       { PT_FEAT_BYTES_READ_PER_PRODUCTION, 16896 },
	       { PT_FEAT_LINES_READ_PER_PRODUCTION, 1 },
	       /* two whole rows of i0 */
	       { PT_FEAT_BYTES_READ_PER_TASK, 528 },
	       { PT_FEAT_LINES_READ_PER_TASK, 1 },
	       /* 10 floats of two rows of i0 */
	       { PT_FEAT_BYTES_READ_PER_VECTOR, 80 },
	       { PT_FEAT_LINES_READ_PER_VECTOR, 2 },
	       { PT_FEAT_ALLOCATION_BYTES_READ_PER_REALIZATION, 16896 },
	       { PT_FEAT_WORKING_SET_AT_PRODUCTION, 16128 },
	       { PT_FEAT_WORKING_SET_AT_REALIZATION, 16128 },
	       { PT_FEAT_WORKING_SET_AT_ROOT, 16128 });
	pt_sched_free(s);
	pt_features_free(fx);
	pt_model_free(m);
}

PT_TEST(features_compute_at)
{
	struct pt_model *m = model(two_text);
	struct pt_features *fx = NULL;
	struct pt_sched *s;
	double out[2 * PT_FEAT_COUNT];
	const struct pt_feat_loop *l;

	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	/* f0 per row of f1 (two rows of f0 each), f1's rows parallel */
	s = sched(m, "func f0 at f1 v1\n" VEC_ROWS
		  "func f1 root\n" VEC_ROWS "    parallel v1\n");
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	ROW_IS(&out[0], "f0 at f1 v1",
	       { PT_FEAT_NUM_REALIZATIONS, 63 },
	       { PT_FEAT_NUM_PRODUCTIONS, 63 },
	       { PT_FEAT_POINTS_PER_REALIZATION, 128 },
	       { PT_FEAT_POINTS_PER_PRODUCTION, 128 },
	       { PT_FEAT_POINTS_TOTAL, 8064 },
	       { PT_FEAT_POINTS_MINIMUM, 4096 },
	       { PT_FEAT_REDUNDANT_RECOMPUTE, 8064.0 / 4096 },
	       { PT_FEAT_INNERMOST_LOOP_EXTENT, 8 },
	       { PT_FEAT_INNERMOST_PURE_LOOP_EXTENT, 8 },
	       { PT_FEAT_UNROLLED_LOOP_EXTENT, 1 },
	       { PT_FEAT_INNER_PARALLELISM, 1 },
	       { PT_FEAT_OUTER_PARALLELISM, 63 },
	       { PT_FEAT_VECTOR_SIZE, 8 }, { PT_FEAT_NATIVE_VECTOR_SIZE, 8 },
	       { PT_FEAT_NUM_VECTORS, 1008 },
	       { PT_FEAT_VECTOR_LOADS_PER_VECTOR, 3 },
	       { PT_FEAT_SCALAR_LOADS_PER_SCALAR, 3 },
	       { PT_FEAT_BYTES_AT_ROOT, 16384 },
	       { PT_FEAT_INNERMOST_BYTES_AT_ROOT, 256 },
	       { PT_FEAT_BYTES_AT_REALIZATION, 512 },
	       { PT_FEAT_INNERMOST_BYTES_AT_REALIZATION, 256 },
	       { PT_FEAT_BYTES_AT_PRODUCTION, 512 },
	       { PT_FEAT_INNERMOST_BYTES_AT_PRODUCTION, 256 },
	       /* the task is a row of f1: the two rows of f0 it needs */
	       { PT_FEAT_BYTES_AT_TASK, 512 },
	       { PT_FEAT_INNERMOST_BYTES_AT_TASK, 256 },
	       { PT_FEAT_BYTES_READ_AT_ROOT, 16896 },
	       { PT_FEAT_LINES_READ_AT_ROOT, 1 },
	       { PT_FEAT_BYTES_READ_PER_REALIZATION, 528 },
	       { PT_FEAT_LINES_READ_PER_REALIZATION, 1 },
	       { PT_FEAT_BYTES_READ_PER_PRODUCTION, 528 },
	       { PT_FEAT_LINES_READ_PER_PRODUCTION, 1 },
	       { PT_FEAT_BYTES_READ_PER_TASK, 528 },
	       { PT_FEAT_LINES_READ_PER_TASK, 1 },
	       { PT_FEAT_BYTES_READ_PER_VECTOR, 40 },
	       { PT_FEAT_LINES_READ_PER_VECTOR, 1 },
	       { PT_FEAT_ALLOCATION_BYTES_READ_PER_REALIZATION, 16896 },
	       { PT_FEAT_WORKING_SET_AT_TASK, 512 },
	       { PT_FEAT_WORKING_SET_AT_PRODUCTION, 512 },
	       { PT_FEAT_WORKING_SET_AT_REALIZATION, 512 },
	       { PT_FEAT_WORKING_SET_AT_ROOT, 16640 });
	ROW_IS(&out[PT_FEAT_COUNT], "f1 with f0 at its rows",
	       { PT_FEAT_NUM_REALIZATIONS, 1 }, { PT_FEAT_NUM_PRODUCTIONS, 1 },
	       { PT_FEAT_POINTS_PER_REALIZATION, 4032 },
	       { PT_FEAT_POINTS_PER_PRODUCTION, 4032 },
	       { PT_FEAT_POINTS_TOTAL, 4032 },
	       { PT_FEAT_POINTS_MINIMUM, 4032 },
	       { PT_FEAT_REDUNDANT_RECOMPUTE, 1 },
	       { PT_FEAT_INNERMOST_LOOP_EXTENT, 8 },
	       { PT_FEAT_INNERMOST_PURE_LOOP_EXTENT, 8 },
	       { PT_FEAT_UNROLLED_LOOP_EXTENT, 1 },
	       { PT_FEAT_INNER_PARALLELISM, 63 },
	       { PT_FEAT_OUTER_PARALLELISM, 1 },
	       { PT_FEAT_VECTOR_SIZE, 8 }, { PT_FEAT_NATIVE_VECTOR_SIZE, 8 },
	       { PT_FEAT_NUM_VECTORS, 504 },
	       { PT_FEAT_VECTOR_LOADS_PER_VECTOR, 2 },
	       { PT_FEAT_SCALAR_LOADS_PER_SCALAR, 2 },
	       { PT_FEAT_BYTES_AT_ROOT, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_ROOT, 256 },
	       { PT_FEAT_BYTES_AT_REALIZATION, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_REALIZATION, 256 },
	       { PT_FEAT_BYTES_AT_PRODUCTION, 16128 },
	       { PT_FEAT_INNERMOST_BYTES_AT_PRODUCTION, 256 },
	       { PT_FEAT_BYTES_AT_TASK, 256 },
	       { PT_FEAT_INNERMOST_BYTES_AT_TASK, 256 },
	       { PT_FEAT_BYTES_READ_AT_ROOT, 16384 },
	       { PT_FEAT_LINES_READ_AT_ROOT, 1 },
	       { PT_FEAT_BYTES_READ_PER_REALIZATION, 16384 },
	       { PT_FEAT_LINES_READ_PER_REALIZATION, 1 },
	       { PT_FEAT_BYTES_READ_PER_PRODUCTION, 16384 },
	       { PT_FEAT_LINES_READ_PER_PRODUCTION, 1 },
	       /* f0 is computed inside the task: nothing from outside */
	       { PT_FEAT_BYTES_READ_PER_VECTOR, 64 },
	       { PT_FEAT_LINES_READ_PER_VECTOR, 2 },
	       /* f0's buffer: two rows */
	       { PT_FEAT_ALLOCATION_BYTES_READ_PER_REALIZATION, 512 },
	       { PT_FEAT_WORKING_SET, 512 },
	       { PT_FEAT_WORKING_SET_AT_TASK, 512 },
	       { PT_FEAT_WORKING_SET_AT_PRODUCTION, 16640 },
	       { PT_FEAT_WORKING_SET_AT_REALIZATION, 16640 },
	       { PT_FEAT_WORKING_SET_AT_ROOT, 16640 });
	/* f0's loops in one production: 2 rows, 8 vectors of 8 */
	PT_REQUIRE(pt_features_loops(fx, 0, &l) == 3);
	PT_CHECK_STR(l[0].name, "v1");
	PT_CHECK_INT(l[0].extent, 2);
	PT_CHECK_STR(l[1].name, "v0o");
	PT_CHECK_INT(l[1].extent, 8);
	PT_CHECK_INT(l[1].stride, 8);
	PT_CHECK_STR(l[2].name, "v0i");
	PT_CHECK_INT(l[2].extent, 8);
	PT_CHECK_INT(l[2].kind, PT_LOOP_VECTOR);
	PT_CHECK_INT(l[2].tail, PT_TAIL_GUARD);
	pt_sched_free(s);
	/* A sliding window: f0 per row of f1, stored at root. Halide
	 * computes each of its 64 rows once and folds its storage to the
	 * two rows a row of f1 reads (the power of two at or above 2). */
	s = sched(m, "func f0 at f1 v1 store root\n" VEC_ROWS
		  "func f1 root\n" VEC_ROWS);
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	PT_CHECK(out[PT_FEAT_NUM_REALIZATIONS] == 1);
	PT_CHECK(out[PT_FEAT_NUM_PRODUCTIONS] == 63);
	PT_CHECK(out[PT_FEAT_POINTS_PER_REALIZATION] == 4096);
	PT_CHECK(out[PT_FEAT_BYTES_AT_PRODUCTION] == 512);
	PT_CHECK(out[PT_FEAT_BYTES_AT_REALIZATION] == 512);
	pt_sched_free(s);
	pt_features_free(fx);
	pt_model_free(m);
	/* ... but not along a dim its reader's vectors read across (Halide
	 * 14 does not fold such a dim): f0 keeps all its rows */
	m = model(shear_text);
	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	s = sched(m, "func f0 at f1 v1 store root\n" VEC_ROWS
		  "func f1 root\n" VEC_ROWS);
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	PT_CHECK(out[PT_FEAT_BYTES_AT_PRODUCTION] <
		 out[PT_FEAT_BYTES_AT_REALIZATION]);
	PT_CHECK(out[PT_FEAT_BYTES_AT_REALIZATION] ==
		 out[PT_FEAT_POINTS_PER_REALIZATION] * 4);
	pt_sched_free(s);
	pt_features_free(fx);
	pt_model_free(m);
}

/* The model of `text` for an AVX-512 target (HEADER's is AVX2). */
static struct pt_model *model_avx512(const char *text)
{
	static const char from[] = "avx-avx2-fma", to[] = "avx-avx2-avx512-fma";
	const char *at = strstr(text, from);
	struct pt_model *m;
	char *t;

	if (!at || !(t = malloc(strlen(text) + sizeof(to))))
		return NULL;
	memcpy(t, text, (size_t)(at - text));
	strcpy(t + (at - text), to);
	strcat(t, at + strlen(from));
	m = model(t);
	free(t);
	return m;
}

#define GUARDED_VEC "func f0 root\n" \
	"  stage 0\n    split v0 v0o v0i 8 guard\n" \
	"    vectorize v0i\n" \
	"func f1 root\n" \
	"  stage 0\n    split v0 v0o v0i 16 guard\n" \
	"    vectorize v0i\n"

/* Tails, unrolling, strided and broadcast loads, on f1 of the resample
 * model (f1(x) = f0(x / 2), 200 points) and on the transpose. */
PT_TEST(features_vectors_and_loads)
{
	struct pt_model *m = model(resample_text);
	struct pt_features *fx = NULL;
	struct pt_sched *s;
	double out[2 * PT_FEAT_COUNT];
	const double *f1 = &out[PT_FEAT_COUNT];

	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	/* An AVX2 target: f1, 200 points by 16 with guard, is 12 vectors
	 * and 8 scalars (LLVM scalarizes a predicated tail without AVX-512's
	 * masked loads of every lane size); f0, 100 points by 8: 12 vectors,
	 * 4 scalars */
	s = sched(m, GUARDED_VEC);
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	PT_CHECK(f1[PT_FEAT_NUM_VECTORS] == 12);
	PT_CHECK(f1[PT_FEAT_NUM_SCALARS] == 8);
	/* 16 lanes of x/2 read 8 floats: one 32-byte load */
	PT_CHECK(f1[PT_FEAT_VECTOR_LOADS_PER_VECTOR] == 1);
	PT_CHECK(f1[PT_FEAT_SCALAR_LOADS_PER_VECTOR] == 0);
	/* f0 reads i0 at stride 2: two loads per access */
	PT_CHECK(out[PT_FEAT_VECTOR_LOADS_PER_VECTOR] == 4);
	PT_CHECK(out[PT_FEAT_NUM_VECTORS] == 12);
	PT_CHECK(out[PT_FEAT_NUM_SCALARS] == 4);
	pt_sched_free(s);

	/* On AVX-512 the guarded tail is a 13th vector, masked (Halide 14
	 * predicates the guarded body of a vectorized loop): no scalars */
	{
		struct pt_model *m5 = model_avx512(resample_text);
		struct pt_features *fx5 = NULL;

		PT_REQUIRE(m5 != NULL);
		PT_REQUIRE(pt_features_new(m5, &fx5, NULL) == 0);
		s = sched(m5, GUARDED_VEC);
		PT_REQUIRE(s != NULL);
		PT_REQUIRE(pt_features_compute(fx5, s, out, NULL) == 0);
		PT_CHECK(f1[PT_FEAT_NUM_VECTORS] == 13);
		PT_CHECK(f1[PT_FEAT_NUM_SCALARS] == 0);
		PT_CHECK(out[PT_FEAT_NUM_VECTORS] == 13);
		PT_CHECK(out[PT_FEAT_NUM_SCALARS] == 0);
		pt_sched_free(s);
		pt_features_free(fx5);
		pt_model_free(m5);
	}

	/* f0 inlined into f1, which is unrolled by 4 outside its vectors
	 * (by 8): every unrolled copy reads its own values */
	s = sched(m, "func f0 inline\n"
		  "func f1 root\n"
		  "  stage 0\n    split v0 v0o v0i 8 guard\n"
		  "    split v0o v0oo v0oi 4 guard\n"
		  "    vectorize v0i\n    unroll v0oi\n");
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	PT_CHECK(f1[PT_FEAT_UNROLLED_LOOP_EXTENT] == 4);
	PT_CHECK(f1[PT_FEAT_NUM_VECTORS] == 25);
	PT_CHECK(f1[PT_FEAT_NUM_SCALARS] == 0);
	/* i0(2 * (x / 2)) and i0(2 * (x / 2) + 1): stride 1 in x */
	PT_CHECK(f1[PT_FEAT_VECTOR_LOADS_PER_VECTOR] == 2);
	PT_CHECK(f1[PT_FEAT_SCALAR_LOADS_PER_SCALAR] == 2);
	PT_CHECK(out[PT_FEAT_INLINED_CALLS] == 200);
	pt_sched_free(s);
	pt_features_free(fx);
	pt_model_free(m);

	/* the transposed read is a gather: 8 scalar loads per vector of
	 * u16 (AVX2: 16 lanes, but split by 8 here); the flip is dense */
	m = model(transpose_text);
	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	s = sched(m, "func f0 root\n"
		  "  stage 0\n    split v0 v0o v0i 8 guard\n"
		  "    vectorize v0i\n"
		  "func f1 root\n"
		  "  stage 0\n    split v0 v0o v0i 16 guard\n"
		  "    vectorize v0i\n");
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	PT_CHECK(out[PT_FEAT_SCALAR_LOADS_PER_VECTOR] == 8);
	PT_CHECK(out[PT_FEAT_VECTOR_LOADS_PER_VECTOR] == 0);
	PT_CHECK(out[PT_FEAT_NATIVE_VECTOR_SIZE] == 16);
	PT_CHECK(f1[PT_FEAT_VECTOR_LOADS_PER_VECTOR] == 1);
	PT_CHECK(f1[PT_FEAT_SCALAR_LOADS_PER_VECTOR] == 0);
	/* a vector of f0 reads 8 rows of one column of i0: 8 lines */
	PT_CHECK(out[PT_FEAT_LINES_READ_PER_VECTOR] == 8);
	PT_CHECK(out[PT_FEAT_BYTES_READ_PER_VECTOR] == 16);
	pt_sched_free(s);
	pt_features_free(fx);
	pt_model_free(m);
}

PT_TEST(features_algorithm)
{
	struct pt_model *m = model(matmul_text);
	struct pt_features *fx = NULL;
	const double *a;
	char name[48];
	int i;

	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	a = pt_features_algo(fx, 1);
	PT_CHECK(a[PT_ALGO_OP(PT_OP_ADD, PT_TC_FLOAT)] == 1);
	PT_CHECK(a[PT_ALGO_OP(PT_OP_LOAD, PT_TC_FLOAT)] == 3);
	PT_CHECK(a[PT_ALGO_OP(PT_OP_MUL, PT_TC_FLOAT)] == 1);
	/* C(x, y), A(r, y), B(x, r) over (r, x, y): each drops a loop */
	PT_CHECK(a[PT_ALGO_ACCESS(PT_PAT_BROADCAST, PT_ACC_SELF)] == 1);
	PT_CHECK(a[PT_ALGO_ACCESS(PT_PAT_BROADCAST, PT_ACC_STORE)] == 1);
	PT_CHECK(a[PT_ALGO_ACCESS(PT_PAT_BROADCAST, PT_ACC_INPUT)] == 2);
	PT_CHECK(pt_algo_name(PT_ALGO_OP(PT_OP_ADD, PT_TC_INT32), name,
			      sizeof(name)) == 0);
	PT_CHECK_STR(name, "op.add.int32");
	PT_CHECK(pt_algo_name(PT_ALGO_ACCESS(PT_PAT_SLICE, PT_ACC_STORE),
			      name, sizeof(name)) == 0);
	PT_CHECK_STR(name, "access.slice.store");
	PT_CHECK(pt_algo_name(PT_ALGO_COUNT, name, sizeof(name)) ==
		 PT_EINVAL);
	for (i = 0; i < PT_FEAT_COUNT; i++)
		PT_CHECK(pt_feat_name(i) != NULL);
	PT_CHECK(pt_feat_name(PT_FEAT_COUNT) == NULL);
	pt_features_free(fx);
	pt_model_free(m);

	m = model(transpose_text);
	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	a = pt_features_algo(fx, 0);
	PT_CHECK(a[PT_ALGO_ACCESS(PT_PAT_TRANSPOSE, PT_ACC_INPUT)] == 1);
	PT_CHECK(a[PT_ALGO_OP(PT_OP_LOAD, PT_TC_INT16)] == 1);
	a = pt_features_algo(fx, 1);
	PT_CHECK(a[PT_ALGO_ACCESS(PT_PAT_OTHER, PT_ACC_FUNC)] == 1);
	pt_features_free(fx);
	pt_model_free(m);

	m = model(two_text);
	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	PT_CHECK(pt_features_algo(fx, 0)[PT_ALGO_ACCESS(PT_PAT_POINTWISE,
							PT_ACC_INPUT)] == 3);
	PT_CHECK(pt_features_algo(fx, 1)[PT_ALGO_ACCESS(PT_PAT_POINTWISE,
							PT_ACC_FUNC)] == 2);
	pt_features_free(fx);
	pt_model_free(m);
}

/* A scan down the columns: f0 = i0, then f0(x, r) = f0(x, r - 1) +
 * f0(x, r) for r in [1, 63]; f1 = f0. Computed per 8-row strip of f1,
 * f0 still computes every row: its update writes them all, and Halide's
 * bounds make the realization cover what the updates write and read. */
static const char scan_text[] = HEADER
	"input i0 buffer f32 dims 2 est 0 64 0 64\n"
	"func f0 types f32 args 2\n"
	"  region 0 64 0 64\n"
	"  stage 0\n"
	"    dim v0 0 64\n"
	"    dim v1 0 64\n"
	"    op load.f32 1\n"
	"    access i0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f0(v0, v1) = i0(v0, v1)\"\n"
	"  stage 1\n"
	"    dim r0 1 63\n"
	"    dim v0 0 64\n"
	"    op add.f32 1\n"
	"    op load.f32 2\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*r0 + [-1,-1]\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*r0 + [0,0]\n"
	"    access f0 value 0 count 1 store\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*r0 + [0,0]\n"
	"    def \"f0(v0, r0) = (f0(v0, (r0 - 1)) + f0(v0, r0)) "
	"rdom r0(1, 63)\"\n"
	"func f1 types f32 args 2 output\n"
	"  region 0 64 0 64\n"
	"  stage 0\n"
	"    dim v0 0 64\n"
	"    dim v1 0 64\n"
	"    op load.f32 1\n"
	"    access f0 value 0 count 1\n"
	"      coord 1*v0 + [0,0]\n"
	"      coord 1*v1 + [0,0]\n"
	"    def \"f1(v0, v1) = f0(v0, v1)\"\n";

PT_TEST(features_update_region)
{
	struct pt_model *m = model(scan_text);
	struct pt_features *fx = NULL;
	struct pt_sched *s;
	double out[3 * PT_FEAT_COUNT];

	PT_REQUIRE(m != NULL);
	PT_REQUIRE(pt_features_new(m, &fx, NULL) == 0);
	s = sched(m, "func f0 at f1 v1o\n"
		  "func f1 root\n  stage 0\n    split v1 v1o v1i 8 guard\n");
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	/* eight strips, each all 64 x 64 of f0 and the 64 x 63 of its
	 * update, not the strip's 64 x 8 */
	PT_CHECK(out[PT_FEAT_NUM_REALIZATIONS] == 8);
	PT_CHECK(out[PT_FEAT_POINTS_PER_REALIZATION] == 4096);
	PT_CHECK(out[PT_FEAT_BYTES_AT_REALIZATION] == 16384);
	PT_CHECK(out[PT_FEAT_POINTS_TOTAL] == 8 * 4096);
	PT_CHECK(out[PT_FEAT_REDUNDANT_RECOMPUTE] == 8);
	PT_CHECK(out[PT_FEAT_COUNT + PT_FEAT_POINTS_PER_REALIZATION] ==
		 64 * 63);
	/* and at root, once */
	pt_sched_free(s);
	s = sched(m, "func f0 root\nfunc f1 root\n");
	PT_REQUIRE(s != NULL);
	PT_REQUIRE(pt_features_compute(fx, s, out, NULL) == 0);
	PT_CHECK(out[PT_FEAT_POINTS_TOTAL] == 4096);
	PT_CHECK(out[PT_FEAT_REDUNDANT_RECOMPUTE] == 1);
	pt_sched_free(s);
	pt_features_free(fx);
	pt_model_free(m);
}

/* On random schedules of every example: the loop nests agree with
 * pt_sched_nest() (names, kinds, and for Funcs at root the extents), and
 * every feature is finite and not negative. */
PT_TEST(features_examples)
{
	size_t e;

	for (e = 0; e < NEXAMPLES; e++) {
		struct pt_model *m = pt_test_example(examples[e]);
		struct pt_features *fx = NULL;
		struct pt_error err = PT_ERROR_INIT;
		double *out;
		uint64_t seed;
		int bad = 0;

		PT_REQUIRE(m != NULL);
		PT_REQUIRE(pt_features_new(m, &fx, &err) == 0);
		out = malloc((size_t)m->nstages * PT_FEAT_COUNT *
			     sizeof(*out));
		PT_REQUIRE(out != NULL);
		for (seed = 0; seed < 20 && !bad; seed++) {
			struct pt_sched *s = seed ? pt_randsched(m, seed) :
				pt_sched_baseline(m);
			int sidx, i;

			PT_REQUIRE(s != NULL);
			if (pt_features_compute(fx, s, out, &err)) {
				printf("# %s seed %d: %s\n", examples[e],
				       (int)seed, err.msg);
				bad++;
			}
			for (i = 0; !bad &&
			     i < m->nstages * PT_FEAT_COUNT; i++)
				if (!(out[i] >= 0 && out[i] < 1e300)) {
					printf("# %s seed %d stage %d: %s "
					       "is %g\n", examples[e],
					       (int)seed, i / PT_FEAT_COUNT,
					       pt_feat_name(i % PT_FEAT_COUNT),
					       out[i]);
					bad++;
				}
			for (sidx = 0; !bad && sidx < m->nstages; sidx++) {
				const struct pt_stage *st = &m->stages[sidx];
				const struct pt_sched_func *sf =
					&s->funcs[st->func];
				const struct pt_feat_loop *l;
				struct pt_nest nest;
				int n = pt_features_loops(fx, sidx, &l);

				if (sf->compute == PT_COMPUTE_INLINE)
					continue;
				PT_REQUIRE(pt_sched_nest(m, s, st->func,
							 st->index, &nest,
							 NULL) == 0);
				if (n != nest.nloops)
					bad++;
				for (i = 0; !bad && i < n; i++)
					if (strcmp(l[i].name,
						   nest.loops[i].name) ||
					    l[i].kind !=
					    (int)nest.loops[i].kind ||
					    (sf->compute == PT_COMPUTE_ROOT &&
					     l[i].extent !=
					     nest.loops[i].extent))
						bad++;
				if (bad)
					printf("# %s seed %d: f%d stage %d "
					       "nest differs\n", examples[e],
					       (int)seed, st->func,
					       st->index);
				free(nest.loops);
			}
			pt_sched_free(s);
		}
		PT_CHECK_INT(bad, 0);
		free(out);
		pt_features_free(fx);
		pt_model_free(m);
	}
}

PT_SUITE(footprint,
	 { "3-point stencil", stencil },
	 { "downsample and upsample by 2", downsample_upsample },
	 { "transpose and flip", transpose },
	 { "matrix multiply (RDom)", matmul },
	 { "histogram (data-dependent store)", histogram },
	 { "clamp (boundary condition)", clamp },
	 { "chain through two inlined Funcs", inline_chain },
	 { "box points and lines", box_lines },
	 { "root regions agree with the examples' models",
	   root_regions_examples },
	 { "features: root", features_root },
	 { "features: inline", features_inline },
	 { "features: compute_at", features_compute_at },
	 { "features: vectors and loads", features_vectors_and_loads },
	 { "features: algorithm", features_algorithm },
	 { "features: an update's writes are in its Func's region",
	   features_update_region },
	 { "features: random schedules of the examples",
	   features_examples });
