// hist_eq: histogram equalisation of an 8-bit RGB image. The luma of every
// pixel (integer BT.601 weights) is counted into a 256-bin histogram (RDom
// update with a data-dependent index), a scan turns it into a cumulative
// distribution, and the classic equalisation curve maps each luma level to
// a new one; every channel of a pixel is then shifted by its luma's change.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class HistEq : public Generator<HistEq> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<uint8_t>> input{"input", 3};    // (x, y, c), c = R, G, B
    Output<Buffer<uint8_t>> output{"output", 3};  // (x, y, c)

    void generate() {
        Var x("x"), y("y"), c("c"), i("i");

        // Luma in [0, 255]: the weights add up to 256 and the sum fits 16 bits.
        luma(x, y) = cast<uint8_t>(
            (cast<uint16_t>(input(x, y, 0)) * 77 +
             cast<uint16_t>(input(x, y, 1)) * 150 +
             cast<uint16_t>(input(x, y, 2)) * 29 + 128) >> 8);

        // Histogram of the whole input image.
        RDom r(0, input.dim(0).extent(), 0, input.dim(1).extent(), "r");
        hist(i) = 0;
        hist(luma(r.x, r.y)) += 1;

        // Cumulative distribution: cdf(i) = number of pixels with luma <= i.
        RDom s(1, 255, "s");
        cdf(i) = hist(i);
        cdf(s) = cdf(s - 1) + hist(s);

        // The smallest non-zero cdf value (the count of the darkest level).
        Expr total = input.dim(0).extent() * input.dim(1).extent();
        RDom m(0, 256, "m");
        cdf_min() = total;
        cdf_min() = min(cdf_min(), select(cdf(m) > 0, cdf(m), total));

        // Equalisation curve: level -> round(255 * (cdf - cdf_min) /
        // (total - cdf_min)), in 64-bit so that any image size is safe.
        Expr num = cast<int64_t>(max(cdf(i) - cdf_min(), 0)) * 255;
        Expr den = cast<int64_t>(max(total - cdf_min(), 1));
        lut(i) = cast<uint8_t>(min((num + den / 2) / den, 255));

        // Each pixel's luma change, applied to all three channels.
        Expr l = luma(x, y);
        shift(x, y) = cast<int16_t>(lut(l)) - cast<int16_t>(l);
        output(x, y, c) = cast<uint8_t>(
            clamp(cast<int16_t>(input(x, y, c)) + shift(x, y), 0, 255));

        const int w = pt_size(1536, 100), h = pt_size(2560, 150);
        input.set_estimates({{0, w}, {0, h}, {0, 3}});
        output.set_estimates({{0, w}, {0, h}, {0, 3}});

        if (pt_manual()) {
            schedule_manual(x, y, c, i, r);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func luma{"luma"}, hist{"hist"}, cdf{"cdf"}, cdf_min{"cdf_min"},
        lut{"lut"}, shift{"shift"};

    void schedule_manual(Var x, Var y, Var c, Var i, RDom r) {
        const int vec = natural_vector_size<uint8_t>();
        const int ivec = natural_vector_size<int32_t>();
        const int strip = 128;  // rows per parallel task
        Var yo("yo"), yi("yi"), u("u");
        RVar ryo("ryo"), ryi("ryi");

        // Histogram: one partial histogram per strip of rows (rfactor),
        // strips in parallel; each strip first computes its luma
        // (vectorized, 128 rows x width bytes, L2-resident), then counts
        // serially. The partial histograms are then summed bin-wise.
        // Integer sums: the result is exact in any order.
        Func partial =
            hist.update()
                .split(r.y, ryo, ryi, strip, TailStrategy::GuardWithIf)
                .rfactor(ryo, u);
        partial.compute_root()
            .vectorize(i, ivec)
            .update()
            .parallel(u);
        luma.in(partial)
            .compute_at(partial, u)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        hist.compute_root()
            .vectorize(i, ivec)
            .update()
            .vectorize(i, ivec);

        // 256-entry tables: tiny, serial except the vectorizable curve.
        cdf.compute_root();
        cdf_min.compute_root();
        lut.compute_root().vectorize(i, ivec);

        // Output: strips of rows over the cores; per row the luma change is
        // computed once (vectorized; the table lookup is a gather) into a
        // one-row buffer allocated once per strip, and used for the three
        // channels.
        output.reorder(x, c, y)
            .split(y, yo, yi, strip, TailStrategy::GuardWithIf)
            .parallel(yo)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        shift.store_at(output, yo)
            .compute_at(output, yi)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(HistEq, hist_eq)
