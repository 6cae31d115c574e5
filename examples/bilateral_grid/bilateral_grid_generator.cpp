// bilateral_grid: bilateral filter of a grey float image in [0,1] through a
// bilateral grid (Chen, Paris & Durand). An RDom scatters each 8x8 tile of
// pixels into range bins z = round(value / r_sigma) (clamped), summing
// (value, 1); the grid is blurred (1 4 6 4 1) in z, x, y, then sliced by
// trilinear interpolation at each pixel: interpolated sum / weight.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class BilateralGrid : public Generator<BilateralGrid> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<float>> input{"input", 2};
    Input<float> r_sigma{"r_sigma"};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y"), z("z");
        const int s = 8;  // spatial sampling rate: one grid cell per 8x8 tile

        // Edges repeated by clamping the coordinates: every read of the
        // input stays inside it, whatever the schedule.
        clamped(x, y) = input(
            clamp(likely(x), input.dim(0).min(), input.dim(0).max()),
            clamp(likely(y), input.dim(1).min(), input.dim(1).max()));

        // 1 / r_sigma, with r_sigma kept in [1/64, 1]: at most 65 z bins.
        // The integer clamp on z_max changes no value; it states the bound
        // in integers, so that bounds inference still finds it when float
        // bounds are unknown (targets with strict_float, used by the
        // differential test).
        Expr inv_r = 1.0f / clamp(r_sigma, 1.0f / 64, 1.0f);
        Expr z_max = clamp(cast<int>(inv_r + 0.5f), 1, 64);

        // Grid construction: cell (x, y) gathers the tile of pixels
        // [x*s - s/2, x*s + s/2) x [y*s - s/2, y*s + s/2).
        RDom r(0, s, 0, s, "r");
        Expr v = clamp(clamped(x * s + r.x - s / 2, y * s + r.y - s / 2), 0.0f, 1.0f);
        Expr zi = clamp(cast<int>(v * inv_r + 0.5f), 0, z_max);
        grid(x, y, z) = Tuple(0.0f, 0.0f);
        grid(x, y, zi) = Tuple(grid(x, y, zi)[0] + v, grid(x, y, zi)[1] + 1.0f);

        // Binomial (1 4 6 4 1) blurs in z, then x, then y, on both values.
        auto blurz_v = [&](int i) {
            return grid(x, y, z - 2)[i] + grid(x, y, z + 2)[i] +
                   4.0f * (grid(x, y, z - 1)[i] + grid(x, y, z + 1)[i]) +
                   6.0f * grid(x, y, z)[i];
        };
        blurz(x, y, z) = Tuple(blurz_v(0), blurz_v(1));
        auto blurx_v = [&](int i) {
            return blurz(x - 2, y, z)[i] + blurz(x + 2, y, z)[i] +
                   4.0f * (blurz(x - 1, y, z)[i] + blurz(x + 1, y, z)[i]) +
                   6.0f * blurz(x, y, z)[i];
        };
        blurx(x, y, z) = Tuple(blurx_v(0), blurx_v(1));
        auto blury_v = [&](int i) {
            return blurx(x, y - 2, z)[i] + blurx(x, y + 2, z)[i] +
                   4.0f * (blurx(x, y - 1, z)[i] + blurx(x, y + 1, z)[i]) +
                   6.0f * blurx(x, y, z)[i];
        };
        blury(x, y, z) = Tuple(blury_v(0), blury_v(1));

        // Slice: trilinear interpolation at (x/s, y/s, value/r_sigma),
        // done separably. First in y, for every grid column and bin of the
        // pixel row y (yslice has grid x, pixel y and bin z coordinates),
        // then in x and z at each pixel, where z depends on the pixel value.
        Expr yc = y / s;
        Expr yf = cast<float>(y % s) * (1.0f / s);
        yslice(x, y, z) = Tuple(
            lerp(blury(x, yc, z)[0], blury(x, yc + 1, z)[0], yf),
            lerp(blury(x, yc, z)[1], blury(x, yc + 1, z)[1], yf));

        Expr val = clamp(clamped(x, y), 0.0f, 1.0f);
        Expr zv = val * inv_r;
        Expr zc = clamp(cast<int>(zv), 0, z_max);
        Expr zf = zv - cast<float>(zc);
        Expr xc = x / s;
        Expr xf = cast<float>(x % s) * (1.0f / s);
        auto slice = [&](int i) {
            auto lx = [&](Expr zz) {
                return lerp(yslice(xc, y, zz)[i], yslice(xc + 1, y, zz)[i], xf);
            };
            return lerp(lx(zc), lx(zc + 1), zf);
        };
        // The weight slice(1) is > 0: the pixel's own sample lands in one of
        // the 8 corners, with a positive interpolation coefficient.
        output(x, y) = slice(0) / slice(1);

        const int w = pt_size(1536, 128), h = pt_size(2560, 96);
        input.set_estimates({{0, w}, {0, h}});
        r_sigma.set_estimate(0.1f);
        output.set_estimates({{0, w}, {0, h}});

        if (pt_manual()) {
            manual_schedule(x, y, z, r);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func clamped{"clamped"}, grid{"grid"}, blurz{"blurz"}, blurx{"blurx"},
        blury{"blury"}, yslice{"yslice"};

    void manual_schedule(Var x, Var y, Var z, RDom r) {
        const int vec = natural_vector_size<float>();
        Var yo("yo"), yi("yi");
        // The grid is built one grid row at a time inside blurz's row loop
        // (rows spread over the cores), scattering the 8 pixel rows of the
        // tile row in memory order.
        grid.compute_at(blurz, y);
        grid.update().reorder(r.x, x, r.y, y);
        blurz.compute_root().reorder(z, x, y).parallel(y)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        // The small grid blurs: one z plane per task.
        blurx.compute_root().reorder(x, y, z).parallel(z)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        blury.compute_root().reorder(x, y, z).parallel(z)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        // Slicing: strips of 32 rows over the cores; per pixel row the
        // y-interpolated grid row (all columns and bins) is vectorised. The
        // pixel loop is left to LLVM, whose loop vectoriser turns the
        // data-dependent reads into hardware gathers (Halide's own vectorize
        // scalarises them, measured about 35% slower).
        output.split(y, yo, yi, 32, TailStrategy::GuardWithIf).parallel(yo);
        yslice.compute_at(output, yi)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(BilateralGrid, bilateral_grid)
