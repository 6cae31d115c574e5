// local_laplacian: local Laplacian filter (Paris, Hasinoff, Kautz 2011) on
// 16-bit RGB. The gray image is remapped around K intensity levels; the
// Laplacian pyramids (J levels) of the K remapped images are interpolated
// level by level by the gray image's own Gaussian pyramid, the result is
// collapsed, and the colour restored by the ratio of output to input gray.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class LocalLaplacian : public Generator<LocalLaplacian> {
public:
    PT_EXAMPLE_PARAMS

    GeneratorParam<int> pyramid_levels{"pyramid_levels", 8, 2, 12};  // J
    GeneratorParam<int> intensity_levels{"intensity_levels", 8, 2, 32};  // K
    // edit=1 changes one stage, gray: Rec. 709 luma weights instead of
    // Rec. 601. The warm-start benchmark (bench/warm.sh) tunes this
    // one-stage edit; 0: no edit.
    GeneratorParam<int> edit{"edit", 0, 0, 1};

    Input<Buffer<uint16_t>> input{"input", 3};
    Input<float> alpha{"alpha"};  // detail amplification
    Input<float> beta{"beta"};    // large-scale contrast (1: unchanged)
    Output<Buffer<uint16_t>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c"), k("k"), i("i");
        const int J = pyramid_levels, K = intensity_levels;

        // All float arithmetic is strict_float: otherwise LLVM may fuse
        // a*b+c into an FMA wherever a schedule inlines a producer, and
        // the result would depend on the schedule.
        auto F = [](Expr e) { return strict_float(e); };

        // The input is extended by repeat_edge. One middle pyramid level
        // (clamp_level) is also clamped to its own extent, ceil(size /
        // 2^l): otherwise the few pixels that each filter reads beyond a
        // coarse level become 2^l-pixel margins at the finest levels.
        // likely() lets Halide split off clamp-free steady-state loops.
        const int clamp_level = J / 2 - 1;
        Expr cw = (input.dim(0).extent() + ((1 << clamp_level) - 1)) >> clamp_level;
        Expr ch = (input.dim(1).extent() + ((1 << clamp_level) - 1)) >> clamp_level;
        auto clamp_at = [&](Func f, const std::string &name) {
            Func g(name);
            std::vector<Var> args = f.args();
            std::vector<Expr> at(args.begin(), args.end());
            at[0] = clamp(likely(args[0]), 0, cw - 1);
            at[1] = clamp(likely(args[1]), 0, ch - 1);
            g(args) = f(at);
            return g;
        };

        // Separable [1 3 3 1]/8 downsampling, and the matching bilinear
        // upsampling (3/4 nearer coarse sample, 1/4 the other), written
        // out as 2D expressions over the dimensions x and y of a Func.
        auto down = [&](Func f, std::vector<Expr> rest) {
            const float wt[4] = {1.0f, 3.0f, 3.0f, 1.0f};
            Expr sum;
            for (int dy = 0; dy < 4; dy++) {
                Expr row;
                for (int dx = 0; dx < 4; dx++) {
                    std::vector<Expr> a = {2 * x - 1 + dx, 2 * y - 1 + dy};
                    a.insert(a.end(), rest.begin(), rest.end());
                    Expr t = dx == 0 ? f(a) : F(f(a) * wt[dx]);
                    row = dx == 0 ? t : F(row + t);
                }
                Expr t = dy == 0 ? row : F(row * wt[dy]);
                sum = dy == 0 ? t : F(sum + t);
            }
            return F(sum * (1.0f / 64.0f));
        };
        auto up = [&](Func f, std::vector<Expr> rest) {
            Expr xs[2] = {x / 2, x / 2 - 1 + 2 * (x % 2)};
            Expr ys[2] = {y / 2, y / 2 - 1 + 2 * (y % 2)};
            Expr row[2];
            for (int dy = 0; dy < 2; dy++) {
                std::vector<Expr> a0 = {xs[0], ys[dy]}, a1 = {xs[1], ys[dy]};
                a0.insert(a0.end(), rest.begin(), rest.end());
                a1.insert(a1.end(), rest.begin(), rest.end());
                row[dy] = F(F(f(a0) * 3.0f) + f(a1));
            }
            return F(F(F(row[0] * 3.0f) + row[1]) * (1.0f / 16.0f));
        };

        Func clamped = BoundaryConditions::repeat_edge(input);
        Func floating("floating");
        floating(x, y, c) = F(cast<float>(clamped(x, y, c)) * (1.0f / 65535.0f));
        Func gray("gray");
        {
            const float wr = edit ? 0.2126f : 0.299f;
            const float wg = edit ? 0.7152f : 0.587f;
            const float wb = edit ? 0.0722f : 0.114f;
            gray(x, y) = F(F(F(wr * floating(x, y, 0)) + F(wg * floating(x, y, 1))) +
                           F(wb * floating(x, y, 2)));
        }

        // Detail remapping around an intensity level, tabulated over the
        // signed distance to the level in 1/256 of the level spacing.
        Func remap("remap");
        {
            Expr fx = F(cast<float>(i) * (1.0f / 256.0f));
            remap(i) = F(F(alpha * fx) * exp(F(F(-fx * fx) * 0.5f)) * (1.0f / (K - 1)));
        }

        // The K remapped images, and their Gaussian pyramids.
        std::vector<Func> g_pyr(J);
        g_pyr[0] = Func("g_pyr_0");
        {
            Expr level = F(cast<float>(k) * (1.0f / (K - 1)));
            Expr gi = clamp(cast<int>(F(gray(x, y) * float((K - 1) * 256))), 0, (K - 1) * 256);
            g_pyr[0](x, y, k) = F(F(level + F(beta * F(gray(x, y) - level))) +
                                  remap(gi - 256 * k));
        }
        Func g_clamped;
        for (int j = 1; j < J; j++) {
            g_pyr[j] = Func("g_pyr_" + std::to_string(j));
            Func prev = g_pyr[j - 1];
            if (j - 1 == clamp_level) prev = g_clamped = clamp_at(prev, "g_pyr_clamped");
            g_pyr[j](x, y, k) = down(prev, {k});
        }

        // Gaussian pyramid of the gray image.
        std::vector<Func> in_pyr(J);
        in_pyr[0] = gray;
        Func in_clamped;
        for (int j = 1; j < J; j++) {
            in_pyr[j] = Func("in_pyr_" + std::to_string(j));
            Func prev = in_pyr[j - 1];
            if (j - 1 == clamp_level) prev = in_clamped = clamp_at(prev, "in_pyr_clamped");
            in_pyr[j](x, y) = down(prev, {});
        }

        // Output pyramid: at each level, the Laplacian coefficient
        // (Gaussian level minus the upsampled coarser one) of the two
        // remapped images whose intensity levels bracket the gray
        // pyramid's value there, linearly interpolated; collapsed from the
        // coarsest level down.
        std::vector<Func> out_pyr(J);
        for (int j = J - 1; j >= 0; j--) {
            out_pyr[j] = Func("out_pyr_" + std::to_string(j));
            Expr level = F(in_pyr[j](x, y) * float(K - 1));
            Expr li = clamp(cast<int>(level), 0, K - 2);
            Expr lf = F(level - cast<float>(li));
            auto lap = [&](Expr kk) -> Expr {
                if (j == J - 1) return g_pyr[j](x, y, kk);
                return F(g_pyr[j](x, y, kk) - up(g_pyr[j + 1], {kk}));
            };
            Expr coeff = F(F(F(1.0f - lf) * lap(li)) + F(lf * lap(li + 1)));
            if (j == J - 1) {
                out_pyr[j](x, y) = coeff;
            } else {
                out_pyr[j](x, y) = F(up(out_pyr[j + 1], {}) + coeff);
            }
        }

        // Colour: scale the input's RGB by output gray / input gray.
        {
            const float eps = 0.01f;
            Expr ratio = F(F(floating(x, y, c) + eps) / F(gray(x, y) + eps));
            Expr v = F(clamp(F(out_pyr[0](x, y) * ratio), 0.0f, 1.0f));
            output(x, y, c) = cast<uint16_t>(F(F(v * 65535.0f) + 0.5f));
        }

        const int w = pt_size(1536, 64), h = pt_size(2560, 48);
        input.set_estimates({{0, w}, {0, h}, {0, 3}});
        alpha.set_estimate(1.0f);
        beta.set_estimate(0.8f);
        output.set_estimates({{0, w}, {0, h}, {0, 3}});

        if (pt_manual()) {
            // Every pyramid level at root, in strips of 16 rows: the
            // K-level pyramids in parallel over (strip, k), the others over
            // strips when the level has at least 64 rows; levels at least
            // one vector wide are vectorised along x (rounding a narrower
            // level up to a whole vector would enlarge the region of every
            // finer level). The K remapped images are computed per strip of
            // level 1 (through a wrapper: level 0 of the output pyramid
            // inlines them, cheaper than storing them). Level 0 of the
            // output pyramid is computed per output row, then the colour
            // channels are unrolled inside each vector of x. Decisions by
            // level size are made for the benchmark size.
            const int vec = natural_vector_size<float>();
            const int w0 = 1536, h0 = 2560;
            const int strip = 16;
            Var yo("yo"), yi("yi"), t("t");
            auto wide = [&](int j) { return (w0 >> j) >= vec; };
            auto tall = [&](int j) { return (h0 >> j) >= 64; };
            remap.compute_root().vectorize(i, vec);
            gray.compute_root()
                .split(y, yo, yi, strip, TailStrategy::GuardWithIf).parallel(yo)
                .vectorize(x, vec);
            for (int j = 1; j < J; j++) {
                g_pyr[j].compute_root().reorder(x, y, k)
                    .split(y, yo, yi, strip, TailStrategy::GuardWithIf)
                    .fuse(yo, k, t).parallel(t);
                in_pyr[j].compute_root().split(y, yo, yi, strip, TailStrategy::GuardWithIf);
                if (tall(j)) in_pyr[j].parallel(yo);
                if (wide(j)) {
                    g_pyr[j].vectorize(x, vec);
                    in_pyr[j].vectorize(x, vec);
                }
            }
            g_pyr[0].in(g_pyr[1]).compute_at(g_pyr[1], t).vectorize(x, vec);
            for (int j = 1; j < J; j++) {
                out_pyr[j].compute_root().split(y, yo, yi, strip, TailStrategy::GuardWithIf);
                if (tall(j)) out_pyr[j].parallel(yo);
                if (wide(j)) out_pyr[j].vectorize(x, vec);
            }
            output.bound(c, 0, 3).reorder(c, x, y).unroll(c)
                .split(y, yo, yi, strip, TailStrategy::GuardWithIf).parallel(yo)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
            out_pyr[0].compute_at(output, yi).vectorize(x, vec);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(LocalLaplacian, local_laplacian)
