/* pt_model.h: the model of a Halide pipeline, as plain C data, its
 * canonical text (doc/model-format.md), and its key.
 *
 * A model is what the Halide adapter extracts from a pipeline and what every
 * other part of protune reads: the inputs (buffers and scalar params), the
 * Funcs in topological order (producers first, the index Halide's
 * Pipeline::get_func() uses), and each Func's stages (the pure definition,
 * then each update), with their loop dims, op histogram, accesses to
 * producers, and canonical definition text.
 *
 * Identity is positional. Funcs are named f0, f1, ... by topological index,
 * inputs i0, i1, ... in order of first use, a stage is (func, stage index),
 * and a stage's loop dims are v0, v1, ... (the Func's pure argument at that
 * position) and r0, r1, ... (the RVar at that position of the stage's RDom).
 * Halide's own names are kept only as labels: they are printed but never
 * hashed, because they are not stable (see ../shared/HALIDE14.md §6).
 *
 * Ownership: a struct pt_model owns every array and string reachable from
 * it; pt_model_free() releases all of it. The builder functions
 * (pt_model_add_*) return a pointer to a new zeroed element of the parent's
 * array; that pointer stays valid until the next add on the same array.
 * Strings stored in the structs must come from malloc (pt_model_strdup()).
 *
 * Errors: functions returning int give 0 or a negative PT_E* code and fill
 * the optional struct pt_error; parse errors say "NAME:LINE: what".
 * Threads: no global state; distinct models may be used in parallel.
 */
#ifndef PROTUNE_PT_MODEL_H
#define PROTUNE_PT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"

#define PT_MODEL_FORMAT_VERSION 1

/* The version of protune's schedule space and cost model. It is hashed into
 * every key: bump it whenever a schedule tuned before would no longer be
 * what the tuner picks (or could no longer be applied). */
#define PT_SPACE_VERSION 1

/* --- types ---------------------------------------------------------------- */

enum pt_type_code { PT_TYPE_INT, PT_TYPE_UINT, PT_TYPE_FLOAT, PT_TYPE_HANDLE };

/* A scalar Halide type: printed i8 i16 i32 i64 u1 u8 u16 u32 u64 f16 f32 f64
 * h64; vector types do not occur in a model. */
struct pt_type {
	enum pt_type_code code;
	int bits;
};

/* A rational number num/den, always reduced, den > 0; printed "n" when
 * den == 1, else "n/d". */
struct pt_rat {
	int64_t num, den;
};

/* --- inputs --------------------------------------------------------------- */

struct pt_input {
	char *label;           /* Halide's name ("input", "sigma") */
	int is_buffer;         /* 1: Input<Buffer>; 0: scalar param */
	struct pt_type type;
	int ndims;             /* buffers: number of dims; scalars: 0 */
	int64_t *est_min;      /* buffers: estimated min of each dim */
	int64_t *est_extent;   /* buffers: estimated extent of each dim */
	int has_estimate;      /* scalars: 1 when an estimate is set */
	uint64_t est_bits;     /* scalars: the estimate's value as raw bits
				* (two's complement for ints, IEEE bits for
				* floats), so that it prints exactly */
};

/* --- stages --------------------------------------------------------------- */

/* One loop dim of a stage, in Halide's dims() order (innermost first, not
 * counting __outermost). In an update, RVars sit inside the pure vars. */
struct pt_dim {
	char *label;      /* Halide's name ("x", "r6$x") */
	int is_rvar;      /* 0: pure var number `index` of the Func (vN);
			   * 1: RVar number `index` of the stage's RDom (rN) */
	int index;
	int64_t min, extent;  /* estimated bounds: for pure vars, the Func's
			       * estimated region; for RVars, the RDom's
			       * bounds with estimates substituted */
};

/* One coordinate of an access: producer coordinate =
 *     sum over the stage's dims d of coef[d] * d  +  an offset in
 *     [off_min, off_max],
 * clamped to [clamp_min, clamp_max] where has_clamp_* is set. A
 * coordinate that is not affine in the loop dims (a select between unrelated
 * expressions, x*x, a data-dependent index) has affine = 0 and no
 * coefficients; its range is then [clamp_min, clamp_max] where known (for
 * example a clamp or the range of a uint8 index), else the producer's whole
 * region.
 *
 * A non-affine coordinate may be `partial`: affine in some dims plus an
 * offset that is not constant but varies, in a way that is not affine, with
 * the dims marked in `varies`, and stays within [off_min, off_max]
 * (x + dx(r) with dx(r) = (2 r1 - 1) r0 in [-25, 25]). coef[d] is then 0
 * for every dim in `varies`. Code that needs an exact affine map (legality)
 * treats it as non-affine, as affine == 0 says; footprints and load
 * classification may use the known part. */
struct pt_coord {
	int affine;
	struct pt_rat *coef;       /* stage->ndims entries when affine or
				    * partial */
	struct pt_rat off_min, off_max;
	int has_clamp_min, has_clamp_max;
	int64_t clamp_min, clamp_max;
	int partial;               /* affine == 0 only */
	unsigned char *varies;     /* stage->ndims flags when partial */
};

/* Is c a partial coordinate with its coefficients and varying dims? */
static inline int pt_coord_partial(const struct pt_coord *c)
{
	return !c->affine && c->partial && c->coef && c->varies;
}

enum pt_access_kind { PT_ACCESS_FUNC, PT_ACCESS_INPUT };

/* An access from a stage to a producer (a Func of lower index, an input
 * buffer, or the same Func's earlier value in an update). Identical
 * accesses are merged and counted. */
struct pt_access {
	enum pt_access_kind kind;
	int producer;          /* func index or input index */
	int value_index;       /* tuple component read */
	int count;             /* how many times this access occurs */
	int data_dependent;    /* an index depends on loaded data */
	int is_store;          /* the left-hand side of an update: where the
				* stage writes its own Func (producer is the
				* stage's own func, value_index 0) */
	int ncoords;           /* the producer's dimensionality */
	struct pt_coord *coords;
};

/* One entry of the op histogram: how many times an operation occurs per
 * point computed. Names are "kind.type": add.f32, mul.i32, load.u16,
 * select.f32, cast.f32, call.sqrt_f32, ... (see doc/model-format.md). */
struct pt_op {
	char *name;
	int64_t count;
};

struct pt_stage {
	int func;              /* index of the Func this stage belongs to */
	int index;             /* 0: pure definition; k: update k-1 */
	int ndims;
	struct pt_dim *dims;
	int nops;
	struct pt_op *ops;     /* sorted by name, names unique */
	int naccesses;
	struct pt_access *accesses;  /* in canonical order (see the doc) */
	char *def;             /* the canonical definition text, one line,
				* written with positional names and exact
				* floats */
	uint8_t hash[16];      /* filled by pt_model_hash() */
	uint8_t local[16];     /* the same, without the producers' hashes
				* (pt_model_hash()): equal when the stage's
				* own block is, whatever changed upstream */
};

struct pt_func {
	char *label;           /* Halide's name ("blur_x", "input_im") */
	int ntypes;            /* > 1 for Tuples */
	struct pt_type *types;
	int nargs;             /* number of pure args (v0 .. v{nargs-1}) */
	int is_output;
	int can_inline;        /* Halide's Function::can_be_inlined() and no
				* updates */
	int64_t *region_min;   /* nargs entries: the region the pipeline
				* needs of this Func at the estimates */
	int64_t *region_extent;
	int nstages;
	int first_stage;       /* index in model->stages of stage 0 */
};

/* --- the model ------------------------------------------------------------ */

struct pt_model {
	int version;           /* PT_MODEL_FORMAT_VERSION */
	char *halide_version;  /* "14.0.0" */
	char *target;          /* the concrete target string, never "host" */
	char *machine_params;  /* "2,16777216,40" */
	/* Labels: printed, not hashed. */
	char *generator;       /* the generator name (-g), may be "" */
	char *function;        /* the function name (-f / -n), may be "" */
	struct pt_strvec argv; /* the generator's argv, for re-runs */

	int ninputs;
	struct pt_input *inputs;
	int nfuncs;
	struct pt_func *funcs;
	int nstages;
	struct pt_stage *stages;  /* all stages: f0's, then f1's, ... */

	uint8_t key[16];       /* filled by pt_model_hash() */
};

/* Allocation and building. pt_model_new() returns a zeroed model with
 * version set (NULL when out of memory). The add functions return NULL when
 * out of memory. pt_model_add_func() appends a Func; its stages are then
 * appended with pt_model_add_stage(), which must be called for the last Func
 * added (it sets func, index and the Func's first_stage and nstages). */
struct pt_model *pt_model_new(void);
void pt_model_free(struct pt_model *m);
char *pt_model_strdup(const char *s);  /* NULL in, NULL out */
struct pt_input *pt_model_add_input(struct pt_model *m);
struct pt_func *pt_model_add_func(struct pt_model *m);
struct pt_stage *pt_model_add_stage(struct pt_model *m);
struct pt_dim *pt_stage_add_dim(struct pt_stage *s);
struct pt_access *pt_stage_add_access(struct pt_stage *s);
int pt_stage_add_op(struct pt_stage *s, const char *name, int64_t count);
/* Sort ops by name (merging equal names) and accesses into canonical order,
 * merging identical accesses (counts add up). The adapter calls this once
 * per stage after filling it; the parser checks the order instead. */
int pt_stage_canonicalize(struct pt_stage *s);

/* Find things by position. pt_model_stage() returns NULL when out of range. */
struct pt_stage *pt_model_stage(const struct pt_model *m, int func, int stage);

/* Does RVar `index` of the stage have literal bounds in its canonical
 * definition text (" rdom r0(1, 255) r1(0, i0.extent.0)"), so that its
 * loop has a constant extent Halide can unroll? 1 or 0; anything else,
 * including text in another form or no text, counts as not constant. */
int pt_stage_rvar_constant(const struct pt_stage *st, int index);

/* Would Halide take `name` for the dim called dimname (a label, NULL for
 * none)? It matches a short name against a dim's whole name or the last
 * part of a qualified one ("x.xo"). 1 or 0. */
int pt_halide_name_match(const char *dimname, const char *name);

/* Mark in exact[] (one byte per Func, 1 or 0) the Funcs whose computed
 * region must stay exact (doc/schedule-legality.md, rule 7): outputs, and
 * Funcs that read, with coordinates that follow their own region, an input
 * buffer or a Func that must stay exact. Computing more of them than the
 * pipeline needs would touch outside the exact-size input or output
 * buffers. */
void pt_model_exact_funcs(const struct pt_model *m, unsigned char *exact);

/* Check the invariants the printer and every consumer rely on (indices in
 * range, producers before consumers, dims named once, ...). The parser calls
 * it; the adapter should too. */
int pt_model_validate(const struct pt_model *m, struct pt_error *err);

/* --- text ------------------------------------------------------------------ */

enum {
	PT_MODEL_PRINT_LABELS = 1  /* include labels, generator, function,
				    * argv; without it, the hashed form */
};

/* Append the canonical text of `m` to `out`. The same model always gives the
 * same bytes. */
int pt_model_print(const struct pt_model *m, unsigned flags,
		   struct pt_strbuf *out);

/* Parse the text (len bytes, need not be NUL-terminated) into a new model in
 * *out. `name` (a file name, "<plugin>", ...) prefixes error messages. The
 * parser is strict: anything but the canonical text is an error with its
 * line number, except that labels may be absent. */
int pt_model_parse(const char *text, size_t len, const char *name,
		   struct pt_model **out, struct pt_error *err);

/* --- keys ------------------------------------------------------------------ */

/* Compute m->key (XXH3-128 of "protune-space PT_SPACE_VERSION\n" followed by
 * the hashed form of the text) and every stage's hash (its own printed block
 * in hashed form, its Func's types, and the hashes of the stages and inputs
 * it reads: the last stage of each producer Func, its own Func's previous
 * stage, and each input's line). A stage's `local` hash covers its Func's
 * and its own block only: the warm start compares those, to tell the
 * stages an edit touched from those downstream of it. */
int pt_model_hash(struct pt_model *m);

/* 32 lowercase hex digits and a NUL. */
void pt_hash_hex(const uint8_t hash[16], char out[33]);
int pt_hash_parse(const char *hex, uint8_t hash[16]);  /* 0 or PT_EFORMAT */

/* Small helpers shared by the printers and the adapter. */
int pt_type_print(struct pt_type t, struct pt_strbuf *out);
int pt_rat_make(int64_t num, int64_t den, struct pt_rat *out);  /* reduces;
	PT_EINVAL when den == 0 or on overflow */

#endif
