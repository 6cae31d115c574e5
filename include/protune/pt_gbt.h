/* pt_gbt.h: gradient-boosted regression trees (least squares), the
 * learner behind the cost model (Bergstra et al. 2012; doc/gbt.md).
 *
 * pt_gbt_fit() starts from the weighted mean of the targets and adds
 * `trees` regression trees, each fitted to the residuals of the ensemble so
 * far (on a random fraction `subsample` of the rows when below 1) and
 * scaled by `shrinkage`. Splits are exact: every feature's rows are sorted
 * once per fit and every threshold between two adjacent distinct values of
 * a node's rows is considered. A split sends x[f] > threshold right and
 * everything else (a value <= threshold, or NaN) left. Ties between equally
 * good splits go to the lowest feature, then the lowest threshold, so the
 * same inputs (and seed) always give the same ensemble, bit for bit.
 *
 * Rows whose weight is 0 are dropped before anything else: a fit with them
 * is identical to a fit without them. `min_leaf` counts rows (of the
 * tree's subsample), whatever their weights.
 *
 * Ownership: pt_gbt_fit(), pt_gbt_read() and pt_gbt_parse() return a new
 * ensemble that the caller frees with pt_gbt_free(). The inputs are only
 * read during the call.
 * Errors: 0 or a negative PT_E* code, with the optional struct pt_error
 * filled (for pt_gbt_read(), the lexer's).
 * Threads: a fitted ensemble is immutable; any number of threads may
 * predict from it at once. No global state; no I/O.
 */
#ifndef PROTUNE_PT_GBT_H
#define PROTUNE_PT_GBT_H

#include <stddef.h>
#include <stdint.h>

#include "protune/pt_error.h"
#include "protune/pt_strbuf.h"

struct pt_text; /* the line lexer, private to libprotune (common/pt_text.h) */

/* Limits: a fit takes at most PT_GBT_MAX_ROWS rows; trees and depth are
 * bounded as below for fits and for the text alike. */
#define PT_GBT_MAX_ROWS (1 << 23)
#define PT_GBT_MAX_DIMS (1 << 20)
#define PT_GBT_MAX_TREES (1 << 20)
#define PT_GBT_MAX_DEPTH 30
#define PT_GBT_MAX_NODES (1 << 24)   /* per tree */
#define PT_GBT_MAX_TARGET 1e100       /* of |y| */

struct pt_gbt_params {
	int trees;            /* boosting rounds, >= 0; default 100 */
	int max_depth;        /* splits on a path, 0..PT_GBT_MAX_DEPTH (a
			       * depth-4 tree has <= 16 leaves); default 4 */
	int min_leaf;         /* minimum rows per leaf, >= 1; default 10 */
	double shrinkage;     /* learning rate, > 0; default 0.1 */
	double subsample;     /* fraction of rows per tree, (0, 1]; default 1 */
	uint64_t seed;        /* of the subsampling (splitmix64) */
};

#define PT_GBT_PARAMS_INIT { 100, 4, 10, 0.1, 1.0, 1 }

struct pt_gbt; /* a fitted ensemble */

/* Fit an ensemble. X: n rows of d doubles, row-major; y: n targets; w: n
 * nonnegative row weights, or NULL for all 1; p: NULL for the defaults.
 * Fails with PT_EINVAL (naming the row and column) on a NaN or infinite
 * value in X, y or w, a target beyond PT_GBT_MAX_TARGET in magnitude, a
 * negative weight, weights that are all 0, n == 0 or above
 * PT_GBT_MAX_ROWS, d outside [1, PT_GBT_MAX_DIMS] or a parameter out of
 * range; PT_ENOMEM. A node with fewer than 2 * min_leaf rows is a leaf
 * (so n < 2 * min_leaf gives one-leaf trees: the mean), as is one whose
 * best split reduces the squared error by no more than rounding could.
 * Cost: O(n d) to sort (a radix sort, once), then O(n d) per level of
 * each tree; memory: about 4 n d bytes (8 n d with subsample < 1)
 * besides X (doc/gbt.md has measured times). */
int pt_gbt_fit(const double *X, size_t n, int d, const double *y,
	       const double *w, const struct pt_gbt_params *p,
	       struct pt_gbt **out, struct pt_error *err);

/* The prediction for x (d doubles): base plus one leaf value per tree,
 * added in tree order. Allocates nothing; never fails. */
double pt_gbt_predict(const struct pt_gbt *g, const double *x);

int pt_gbt_dims(const struct pt_gbt *g);      /* d */
int pt_gbt_ntrees(const struct pt_gbt *g);

/* Per feature, the total reduction of the weighted squared error of the
 * residuals brought by the splits on that feature over all trees (before
 * shrinkage), into imp[0..d-1]. The text form does not keep it: for an
 * ensemble read from text it is all zeros. */
void pt_gbt_importance(const struct pt_gbt *g, double *imp);

void pt_gbt_free(struct pt_gbt *g);  /* NULL is fine */

/* The text form (doc/gbt.md):
 *     gbt 1 DIMS NTREES BASE
 *     tree NODES
 *       split FEATURE THRESHOLD LEFT RIGHT
 *       leaf VALUE
 * pt_gbt_write() appends it to `out` (0 or PT_ENOMEM). Writing, reading
 * and writing again gives the same bytes, and the read ensemble predicts
 * bit-identically.
 *
 * pt_gbt_read() reads one such section from a lexer positioned before its
 * first line and leaves the lexer after the last node line of the last
 * tree (it looks at the next line and gives it back with
 * pt_text_unread()). PT_EFORMAT with "NAME:LINE: what" in the lexer's
 * error struct, or PT_ENOMEM. Trees may number their nodes in any order
 * (node 0 is the root); each must be a proper binary tree.
 *
 * pt_gbt_parse() reads a text that holds the section and nothing else. */
int pt_gbt_write(const struct pt_gbt *g, struct pt_strbuf *out);
int pt_gbt_read(struct pt_text *t, struct pt_gbt **out);
int pt_gbt_parse(const char *text, size_t len, const char *name,
		 struct pt_gbt **out, struct pt_error *err);

#endif
