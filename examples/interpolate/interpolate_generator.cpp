// interpolate: multi-scale interpolation of an RGBA float image. The colour
// is premultiplied by alpha and pushed down a 10-level pyramid ([1 2 1]^2/16
// filter, decimation by 2); coming back up, each level fills in what its
// alpha leaves uncovered with the upsampled (bilinear) coarser level. The
// output is the RGB of level 0 divided by its alpha.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class Interpolate : public Generator<Interpolate> {
public:
    PT_EXAMPLE_PARAMS

    GeneratorParam<int> levels{"levels", 10, 2, 16};

    Input<Buffer<float>> input{"input", 3};
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c");
        const int L = levels;

        Func clamped = BoundaryConditions::repeat_edge(input);

        // All float arithmetic is strict_float: Halide would otherwise let
        // LLVM fuse a*b+c into an FMA wherever a schedule happens to inline
        // a producer, and the result would depend on the schedule.
        auto F = [](Expr e) { return strict_float(e); };

        // The input is extended by repeat_edge. Without further clamping,
        // the 1-2 pixel margins that each filter reads at a coarse level
        // would become 2^l-pixel margins at the finest levels (hundreds of
        // pixels off each edge); so one middle level (clamp_level) is also
        // clamped to its own extent, ceil(size / 2^l). likely() lets
        // Halide split off clamp-free steady-state loops.
        const int clamp_level = L / 2 - 1;
        Expr cw = (input.dim(0).extent() + ((1 << clamp_level) - 1)) >> clamp_level;
        Expr ch = (input.dim(1).extent() + ((1 << clamp_level) - 1)) >> clamp_level;

        // The four channels (premultiplied RGB, alpha) are carried as a
        // Tuple, so that every intermediate Func is 2D.
        auto tup = [](const std::function<Expr(int)> &f) {
            return Tuple(f(0), f(1), f(2), f(3));
        };

        // Downsampling pyramid: [1 2 1] x [1 2 1] / 16, decimated by 2.
        std::vector<Func> down(L);
        down[0] = Func("down_0");
        down[0](x, y) = tup([&](int i) {
            return i < 3 ? F(clamped(x, y, i) * clamped(x, y, 3)) : clamped(x, y, 3);
        });
        Func down_c("down_clamped");
        for (int l = 1; l < L; l++) {
            Func prev = down[l - 1];
            if (l - 1 == clamp_level) {
                down_c(x, y) = tup([&](int i) {
                    return prev(clamp(likely(x), 0, cw - 1), clamp(likely(y), 0, ch - 1))[i];
                });
                prev = down_c;
            }
            down[l] = Func("down_" + std::to_string(l));
            down[l](x, y) = tup([&](int i) {
                Expr r[3];
                for (int j = 0; j < 3; j++) {
                    Expr yy = 2 * y - 1 + j;
                    r[j] = F(prev(2 * x - 1, yy)[i] + prev(2 * x, yy)[i] * 2.0f +
                             prev(2 * x + 1, yy)[i]);
                }
                return F((r[0] + r[1] * 2.0f + r[2]) * 0.0625f);
            });
        }

        // Upsampling pass: level l keeps its own premultiplied value and
        // fills the remaining 1 - alpha with the bilinear upsampling of
        // level l + 1 (weights 3/4 for the nearer coarse sample, 1/4 for
        // the other).
        std::vector<Func> interp(L);
        interp[L - 1] = Func("interp_" + std::to_string(L - 1));
        interp[L - 1](x, y) = down[L - 1](x, y);
        for (int l = L - 2; l >= 0; l--) {
            interp[l] = Func("interp_" + std::to_string(l));
            Func coarse = interp[l + 1], d = down[l];
            Expr x0 = x / 2, x1 = x / 2 - 1 + 2 * (x % 2);
            Expr y0 = y / 2, y1 = y / 2 - 1 + 2 * (y % 2);
            interp[l](x, y) = tup([&](int i) {
                Expr r0 = F(coarse(x0, y0)[i] * 0.75f + coarse(x1, y0)[i] * 0.25f);
                Expr r1 = F(coarse(x0, y1)[i] * 0.75f + coarse(x1, y1)[i] * 0.25f);
                Expr up = F(r0 * 0.75f + r1 * 0.25f);
                return F(d(x, y)[i] + (1.0f - d(x, y)[3]) * up);
            });
        }

        Func fin = interp[0];
        output(x, y, c) = F(select(c == 0, fin(x, y)[0], c == 1, fin(x, y)[1], fin(x, y)[2]) /
                            fin(x, y)[3]);

        const int w = pt_size(1536, 64), h = pt_size(2560, 48);
        input.set_estimates({{0, w}, {0, h}, {0, 4}});
        output.set_estimates({{0, w}, {0, h}, {0, 3}});

        if (pt_manual()) {
            // Every pyramid level at root (but the top of the upsampling
            // pass, a copy, and its bottom, inlined into the output), in
            // strips of 8 rows, parallel for levels of at least 64 rows;
            // levels at least one vector wide are vectorised along x
            // (rounding a narrower level up to a whole vector would enlarge
            // the region of every finer level). Decisions by level size
            // are made for the benchmark size.
            const int vec = natural_vector_size<float>();
            const int w0 = 1536, h0 = 2560;
            Var yo("yo"), yi("yi");
            auto sched = [&](Func f, int l) {
                f.compute_root();
                if ((w0 >> l) >= vec) f.vectorize(x, vec);
                f.split(y, yo, yi, 8, TailStrategy::GuardWithIf);
                if ((h0 >> l) >= 64) f.parallel(yo);
            };
            for (int l = 1; l < L; l++) sched(down[l], l);
            for (int l = 1; l < L - 1; l++) sched(interp[l], l);
            // The premultiplied input (through a wrapper: the output
            // inlines it too) and the clamped middle level are computed
            // per strip of their consumer.
            down[0].in(down[1]).compute_at(down[1], yo).vectorize(x, vec);
            down_c.compute_at(down[clamp_level + 1], yo);
            if ((w0 >> clamp_level) >= vec) down_c.vectorize(x, vec);
            // The output computes the finest level inline, the three
            // colour channels innermost. (Unrolling them, so that the
            // shared alpha is computed once, was no faster and slower to
            // compile.)
            output.bound(c, 0, 3)
                .reorder(c, x, y)
                .split(y, yo, yi, 8, TailStrategy::GuardWithIf).parallel(yo)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Interpolate, interpolate)
