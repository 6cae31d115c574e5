// iir_blur: first-order recursive (exponential) low-pass blur of a float
// RGB image, f(i) = (1 - alpha) * f(i - 1) + alpha * in(i), run causally and
// then anticausally down the columns, and then both ways along the rows,
// each scan an RDom update. Without any transposed copy in the algorithm:
// the row scans run along x directly.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class IirBlur : public Generator<IirBlur> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<float>> input{"input", 3};  // (x, y, c)
    Input<float> alpha{"alpha"};              // weight of the new sample
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c");
        Expr w = input.dim(0).extent(), h = input.dim(1).extent();

        // One step of the filter, written as prev + alpha * (cur - prev)
        // (the same value as (1 - alpha) * prev + alpha * cur).
        auto step = [&](Expr prev, Expr cur) {
            return prev + alpha * (cur - prev);
        };

        // Columns: start from a copy of the input; the causal scan runs
        // down from the top row, then the anticausal scan runs in place up
        // from the bottom row. Each update reads the old value of the
        // element it overwrites. (Halide's own iir_blur instead leaves the
        // pure definition undef and sets the first row in an extra update;
        // with Halide 14, Adams2019 then emits an unroll of a loop of
        // non-constant extent and the generator fails.)
        RDom ry(1, h - 1, "ry");
        Expr yu = h - 1 - ry;  // h-2 down to 0
        col(x, y, c) = input(x, y, c);
        col(x, ry, c) = step(col(x, ry - 1, c), col(x, ry, c));
        col(x, yu, c) = step(col(x, yu + 1, c), col(x, yu, c));

        // Rows: the same, rightwards then leftwards.
        RDom rx(1, w - 1, "rx");
        Expr xl = w - 1 - rx;  // w-2 down to 0
        row(x, y, c) = col(x, y, c);
        row(rx, y, c) = step(row(rx - 1, y, c), row(rx, y, c));
        row(xl, y, c) = step(row(xl + 1, y, c), row(xl, y, c));

        output(x, y, c) = row(x, y, c);

        const int iw = pt_size(1536, 100), ih = pt_size(2560, 70);
        input.set_estimates({{0, iw}, {0, ih}, {0, 3}});
        alpha.set_estimate(0.1f);
        output.set_estimates({{0, iw}, {0, ih}, {0, 3}});

        if (pt_manual()) {
            schedule_manual(x, y, c, ry, rx);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func col{"col"}, row{"row"};

    void schedule_manual(Var x, Var y, Var c, RDom ry, RDom rx) {
        // Per channel, two passes; the transposes happen in the schedule.
        const int vec = natural_vector_size<float>();
        const int strip = 2 * vec;  // columns (pass 1) or rows (pass 2)
        Var xo("xo"), xi("xi"), xii("xii"), yo("yo"), yi("yi"), yii("yii");

        // Pass 1, over strips of 2 vectors of columns in parallel: both
        // column scans of the strip (vectorized across x, in a buffer of
        // constant width that stays in L2), then the strip is copied into
        // col_t, a per-channel copy of col stored y-innermost, in blocks of
        // vec x vec: dense stores along y, loads at a constant stride.
        // (Vectorizing both block dimensions made LLVM scalarize the
        // shuffles and scatters; this was measured about 1.5x faster.)
        Func col_t = col.in(row);
        col_t.compute_at(output, c)
            .reorder_storage(y, x, c)
            .split(x, xo, xi, strip, TailStrategy::GuardWithIf)
            .split(xi, xi, xii, vec, TailStrategy::GuardWithIf)
            .split(y, yo, yi, vec, TailStrategy::GuardWithIf)
            .reorder(yi, xii, xi, yo, xo)
            .parallel(xo)
            .vectorize(yi)
            .unroll(xii);
        col.compute_at(col_t, xo)
            .bound_storage(x, strip)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        col.update(0)
            .reorder(x, ry)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        col.update(1)
            .reorder(x, ry)
            .vectorize(x, vec, TailStrategy::GuardWithIf);

        // Pass 2, over strips of 2 vectors of rows in parallel: both row
        // scans of the strip, stored y-innermost (constant height, in L2) so
        // that they vectorize across y and read col_t densely; then the
        // strip is transposed back into the output in blocks as above.
        output.split(y, yo, yi, strip, TailStrategy::GuardWithIf)
            .split(yi, yi, yii, vec, TailStrategy::GuardWithIf)
            .split(x, xo, xi, vec, TailStrategy::GuardWithIf)
            .reorder(xi, yii, yi, xo, yo, c)
            .parallel(yo)
            .vectorize(xi)
            .unroll(yii);
        row.compute_at(output, yo)
            .reorder_storage(y, x, c)
            .bound_storage(y, strip)
            .reorder(y, x, c)
            .vectorize(y, vec, TailStrategy::GuardWithIf);
        row.update(0)
            .reorder(y, rx)
            .vectorize(y, vec, TailStrategy::GuardWithIf);
        row.update(1)
            .reorder(y, rx)
            .vectorize(y, vec, TailStrategy::GuardWithIf);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(IirBlur, iir_blur)
