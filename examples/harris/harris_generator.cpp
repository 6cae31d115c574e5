// harris: Harris corner response of a float planar RGB image in [0,1].
// Luma (Rec. 601) of the input with edges repeated, Sobel gradients Ix, Iy
// (scaled by 1/8), their products summed over a 3x3 box (Sxx, Syy, Sxy), and
// the response det - k*trace^2 with k = 0.04, output as a float image of the
// input's size (not thresholded).
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class Harris : public Generator<Harris> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<float>> input{"input", 3};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");

        // Clamp the coordinates (edges repeated): every read of the input
        // stays inside it, whatever the schedule.
        Expr xc = clamp(likely(x), input.dim(0).min(), input.dim(0).max());
        Expr yc = clamp(likely(y), input.dim(1).min(), input.dim(1).max());
        gray(x, y) = 0.299f * input(xc, yc, 0) + 0.587f * input(xc, yc, 1) +
                     0.114f * input(xc, yc, 2);

        // Sobel, normalised so that |Ix|, |Iy| <= 1.
        ix(x, y) = ((gray(x + 1, y - 1) - gray(x - 1, y - 1)) +
                    2.0f * (gray(x + 1, y) - gray(x - 1, y)) +
                    (gray(x + 1, y + 1) - gray(x - 1, y + 1))) * 0.125f;
        iy(x, y) = ((gray(x - 1, y + 1) - gray(x - 1, y - 1)) +
                    2.0f * (gray(x, y + 1) - gray(x, y - 1)) +
                    (gray(x + 1, y + 1) - gray(x + 1, y - 1))) * 0.125f;

        ixx(x, y) = ix(x, y) * ix(x, y);
        iyy(x, y) = iy(x, y) * iy(x, y);
        ixy(x, y) = ix(x, y) * iy(x, y);

        auto box3 = [&](Func f) {
            Expr s = f(x - 1, y - 1) + f(x, y - 1) + f(x + 1, y - 1);
            s = s + f(x - 1, y) + f(x, y) + f(x + 1, y);
            return s + f(x - 1, y + 1) + f(x, y + 1) + f(x + 1, y + 1);
        };
        sxx(x, y) = box3(ixx);
        syy(x, y) = box3(iyy);
        sxy(x, y) = box3(ixy);

        const float k = 0.04f;
        Expr det = sxx(x, y) * syy(x, y) - sxy(x, y) * sxy(x, y);
        Expr trace = sxx(x, y) + syy(x, y);
        output(x, y) = det - k * trace * trace;

        const int w = pt_size(1536, 128), h = pt_size(2560, 96);
        input.set_estimates({{0, w}, {0, h}, {0, 3}});
        output.set_estimates({{0, w}, {0, h}});

        if (pt_manual()) {
            manual_schedule(x, y);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func gray{"gray"}, ix{"ix"}, iy{"iy"}, ixx{"ixx"}, iyy{"iyy"}, ixy{"ixy"},
        sxx{"sxx"}, syy{"syy"}, sxy{"sxy"};

    void manual_schedule(Var x, Var y) {
        const int vec = natural_vector_size<float>();
        Var yo("yo"), yi("yi");
        // Strips of 32 rows spread over the cores, produced row by row.
        output.split(y, yo, yi, 32, TailStrategy::GuardWithIf)
            .parallel(yo)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        // Per output row, one new row of luma and of each gradient (sliding
        // windows over the strip: each row is computed once per strip); the
        // products and box sums are inlined into the response, which reads
        // Ix and Iy from L1.
        for (Func f : {gray, ix, iy}) {
            f.store_at(output, yo).compute_at(output, yi)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
        }
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Harris, harris)
