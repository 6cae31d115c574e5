// unsharp: unsharp mask of an 8-bit planar RGB image. The integer luminance
// is blurred with a separable 7-tap binomial kernel (1 6 15 20 15 6 1)/64,
// edges repeated; the luminance detail (luma - blurred luma) times `amount`
// (fixed point, 1/256 steps, clamped to [0,4]) is added to every channel and
// the result clamped to [0,255]. All arithmetic is integer: exact everywhere.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class Unsharp : public Generator<Unsharp> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<uint8_t>> input{"input", 3};
    Input<float> amount{"amount"};
    Output<Buffer<uint8_t>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c");

        // Rec. 601 luma in 8.8 fixed point, rounded, of the input with its
        // edges repeated (the clamp is applied to the coordinates here, so
        // every read of the input stays inside it, whatever the schedule).
        Expr xc = clamp(likely(x), input.dim(0).min(), input.dim(0).max());
        Expr yc = clamp(likely(y), input.dim(1).min(), input.dim(1).max());
        luma(x, y) = cast<uint8_t>(
            (cast<uint16_t>(input(xc, yc, 0)) * 77 +
             cast<uint16_t>(input(xc, yc, 1)) * 150 +
             cast<uint16_t>(input(xc, yc, 2)) * 29 + 128) >> 8);

        // Binomial taps, sum 64 per pass: the vertical pass is <= 16320
        // (uint16), the horizontal sum sx <= 1044480 (int32) is the blurred
        // luma scaled by 4096.
        const int taps[7] = {1, 6, 15, 20, 15, 6, 1};
        Expr sy = cast<uint16_t>(0);
        for (int i = 0; i < 7; i++) {
            Expr v = cast<uint16_t>(luma(x, y + i - 3));
            sy = sy + (taps[i] == 1 ? v : v * taps[i]);
        }
        blur_y(x, y) = sy;
        Expr sx = 0;
        for (int i = 0; i < 7; i++) {
            Expr v = cast<int32_t>(blur_y(x + i - 3, y));
            sx = (i == 0) ? v * taps[i] : sx + (taps[i] == 1 ? v : v * taps[i]);
        }

        // Luminance detail times amount: 4096 * (luma - blurred) has
        // |.| < 2^20; amount in 1/256 steps is in [0, 1024], so the product
        // fits in int32 and the rounded delta (|delta| <= 1024) in int16.
        Expr amount_q = cast<int32_t>(round(clamp(amount, 0.0f, 4.0f) * 256.0f));
        Expr detail = cast<int32_t>(luma(x, y)) * 4096 - sx;
        delta(x, y) = cast<int16_t>((detail * amount_q + (1 << 19)) >> 20);

        output(x, y, c) = cast<uint8_t>(
            clamp(cast<int16_t>(input(x, y, c)) + delta(x, y), 0, 255));

        const int w = pt_size(1536, 128), h = pt_size(2560, 96);
        input.set_estimates({{0, w}, {0, h}, {0, 3}});
        amount.set_estimate(1.5f);
        output.set_estimates({{0, w}, {0, h}, {0, 3}});

        if (pt_manual()) {
            manual_schedule(x, y, c);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func luma{"luma"}, blur_y{"blur_y"}, delta{"delta"};

    void manual_schedule(Var x, Var y, Var c) {
        const int vec = natural_vector_size<uint8_t>();
        Var yo("yo"), yi("yi");
        // Strips of 32 rows spread over the cores; within a strip the output
        // is produced row by row, the three channels of a row together.
        output.reorder(x, c, y)
            .split(y, yo, yi, 32, TailStrategy::GuardWithIf)
            .parallel(yo)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        output.bound(c, 0, 3).unroll(c);
        // Per output row: one new luma row (sliding window over the strip,
        // so each luma row is computed once per strip), the vertical pass
        // and the delta, all of which stay in L1.
        delta.compute_at(output, yi)
            .vectorize(x, vec / 2, TailStrategy::GuardWithIf);
        blur_y.compute_at(output, yi)
            .vectorize(x, vec / 2, TailStrategy::GuardWithIf);
        luma.store_at(output, yo).compute_at(output, yi)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Unsharp, unsharp)
