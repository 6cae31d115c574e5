/* pt_footprint.h: footprints, the boxes of its producers a stage reads when
 * its loops cover a box, from the model's affine access maps
 * (doc/features.md, "Footprints").
 *
 * A box is one closed integer interval [lo, hi] per dim. The dims of a
 * stage's box are the stage's loop dims in the model's order (innermost
 * first, pure vars and RVars as struct pt_stage lists them); the dims of a
 * Func's or an input's box are its arguments v0, v1, ... (or dims 0, 1, ...).
 *
 * Producers are numbered as *nodes*: Func K is node K, input buffer K is
 * node nfuncs + K (scalar params are never read as boxes).
 *
 * A coordinate of an access is sum(coef[d] * d) + c with c in [off_min,
 * off_max] (rationals). Its interval over a box is computed exactly in
 * integers: the extreme values of the rational form, then the ceiling of the
 * low end and the floor of the high end (x/2 over [0, 9] reads [0, 4]; 2*x
 * reads [0, 18]; -x + 99 over [0, 9] reads [90, 99]); then the clamp, when
 * there is one, moves both ends into [clamp_min, clamp_max] (a boundary
 * condition's clamp(x - 1, 0, W - 1)). A coordinate that is not affine
 * (data-dependent, a product of loops, ...) reads the producer's whole
 * region as the model records it (pt_func region_min/region_extent, an
 * input's estimate), limited by its clamp where it has one.
 *
 * Looking through inlined Funcs: given a bitset of the Funcs that are
 * inlined, the footprint of a read of an inlined Func g is unioned into g's
 * box and g's definition is then evaluated over that box, as if g were
 * computed there; g's producers get the result. The boxes of all reads of g
 * are unioned first and g's definition is evaluated once per call, in
 * decreasing Func order, so the cost is linear in the chain, not exponential
 * in its fan-out. (Propagating boxes, rather than multiplying the affine
 * maps first, keeps the floors exact: x/2 then 2*y reads [0, 8] of an
 * extent 10, where the composed map 1*x + [-1, 0] would say [-1, 9].)
 *
 * Speed: pt_fp_new() compiles every coordinate once per model into scaled
 * integers (one common denominator per coordinate, nonzero terms only), so
 * a read costs a few multiply-adds per coordinate term, and merges the
 * accesses of a stage that differ only in their constant offsets (exact for
 * boxes: a 5x5 stencil is read as one access). The hot functions below
 * never allocate. An accumulator (struct pt_fp_acc) holds one box per node
 * and is cleared in O(1).
 *
 * Limits: at most PT_FP_MAXDIMS dims per Func, input and stage (pt_fp_new()
 * fails with PT_EINVAL beyond that). Coordinates are int64_t; intermediate
 * products of a coefficient, a common denominator and a loop bound must fit
 * in 63 bits (estimates up to 2^40 with denominators up to 2^16 do).
 *
 * Ownership: struct pt_fp is built from a model and borrows nothing from it
 * afterwards except what its functions are given; free it with
 * pt_fp_free(). An accumulator belongs to its caller (pt_fp_acc_init(),
 * pt_fp_acc_release()).
 * Errors: functions returning int give 0 or a negative PT_E* code with the
 * optional struct pt_error filled. The hot functions take valid indices and
 * boxes and do not check them.
 * Threads: a struct pt_fp is read-only after construction and may be shared
 * by threads; each thread needs its own accumulator.
 */
#ifndef PROTUNE_PT_FOOTPRINT_H
#define PROTUNE_PT_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_model.h"

#define PT_FP_MAXDIMS 8

struct pt_box {
	int64_t lo[PT_FP_MAXDIMS];
	int64_t hi[PT_FP_MAXDIMS];  /* inclusive; hi >= lo */
};

struct pt_fp;

/* Compile model `m` (which must be valid: pt_model_validate()). */
int pt_fp_new(const struct pt_model *m, struct pt_fp **out,
	      struct pt_error *err);
void pt_fp_free(struct pt_fp *fp);

/* Nodes: Funcs 0 .. nfuncs-1, then the inputs. Scalar inputs are nodes with
 * 0 dims that nothing reads. */
int pt_fp_nnodes(const struct pt_fp *fp);
int pt_fp_node_ndims(const struct pt_fp *fp, int node);
/* Bytes of one point: the sum of a Tuple's value sizes (bool = 1 byte). */
int pt_fp_node_bytes(const struct pt_fp *fp, int node);
/* The region the model records (a Func's region, an input's estimate). */
const struct pt_box *pt_fp_node_region(const struct pt_fp *fp, int node);

/* The box of a stage's loop dims when its Func's region is `region`: pure
 * dims take the region's interval of their argument, RVars their bounds in
 * the model. `stage` is an index into m->stages. */
void pt_fp_stage_dims(const struct pt_fp *fp, int stage,
		      const struct pt_box *region, struct pt_box *dims);

/* The box of its producer that access `access` of `stage` reads when the
 * stage's loop dims cover `dims` (no inlining). */
void pt_fp_access(const struct pt_fp *fp, int stage, int access,
		  const struct pt_box *dims, struct pt_box *out);

/* --- accumulating footprints --------------------------------------------- */

struct pt_fp_acc {
	int nnodes;
	int ntouched;
	int *touched;          /* nodes with a box, in the order first met */
	struct pt_box *box;    /* per node; valid when stamp[node] == gen */
	uint32_t *stamp;
	uint32_t gen;
	int words;             /* uint64_t per Func bitset */
	uint64_t *pending;     /* inlined Funcs whose definition must still be
				* evaluated */
};

/* 0 or PT_ENOMEM. */
int pt_fp_acc_init(struct pt_fp_acc *acc, const struct pt_fp *fp);
void pt_fp_acc_release(struct pt_fp_acc *acc);
/* Forget every box (O(1)). */
void pt_fp_acc_clear(struct pt_fp_acc *acc);
/* The box of `node`, or NULL when nothing was read of it since the last
 * clear. */
static inline const struct pt_box *pt_fp_acc_get(const struct pt_fp_acc *acc,
						 int node)
{
	return acc->stamp[node] == acc->gen ? &acc->box[node] : NULL;
}
/* Union `b` (ndims dims) into the box of `node`. */
void pt_fp_acc_union(struct pt_fp_acc *acc, int node, const struct pt_box *b,
		     int ndims);

enum {
	PT_FP_SELF = 1,   /* include an update's reads of its own Func */
	PT_FP_STORES = 2  /* include an update's stores to its own Func */
};

/* Union into `acc` the box of every node that stage `stage` reads when its
 * loop dims cover `dims`. `inlined` is a bitset over Funcs (bit f of word
 * f / 64), or NULL for none: reads of an inlined Func (one with a single
 * stage) are followed into its producers as described above, and the
 * inlined Funcs get boxes in `acc` too (the region of them the stage
 * evaluates). Without PT_FP_SELF an update's reads of its own Func are
 * skipped, as the model's regions do. */
void pt_fp_reads(const struct pt_fp *fp, int stage, const struct pt_box *dims,
		 const uint64_t *inlined, unsigned flags,
		 struct pt_fp_acc *acc);

/* The region of every Func that the whole pipeline requires at the
 * outputs' estimates (no inlining, no tail rounding): Funcs from the last
 * to the first, each output starting from the region the model records for
 * it, every other Func the union of what its consumers' stages read when
 * they compute their own regions (RVars over their bounds). This is what
 * the model's regions are (doc/model-format.md); the unit tests check that
 * they agree on the examples. `acc` is scratch; `out` has nfuncs boxes.
 * A Func nothing reads and that is not an output keeps its model region. */
void pt_fp_root_regions(const struct pt_fp *fp, struct pt_fp_acc *acc,
			struct pt_box *out);

/* Points in a box of `ndims` dims (1 for 0 dims), as a double. Inline:
 * the features ask for it several times per stage of every schedule. */
static inline double pt_box_points(const struct pt_box *b, int ndims)
{
	double p = 1;
	int k;

	for (k = 0; k < ndims; k++)
		p *= (double)(b->hi[k] - b->lo[k] + 1);
	return p;
}

/* The number of contiguous runs of memory a box covers in an allocation
 * `alloc` (row-major with dim 0 innermost, the way Halide lays out a
 * buffer): the product of the box's extents above the lowest dim that the
 * box does not cover whole; 1 when it covers the allocation. Inline, as
 * pt_box_points(). */
static inline double pt_box_lines(const struct pt_box *b,
				  const struct pt_box *alloc, int ndims)
{
	double p = 1;
	int k, first = ndims;

	for (k = 0; k < ndims; k++)
		if (b->hi[k] - b->lo[k] < alloc->hi[k] - alloc->lo[k]) {
			first = k;
			break;
		}
	for (k = first + 1; k < ndims; k++)
		p *= (double)(b->hi[k] - b->lo[k] + 1);
	return p;
}

#endif
