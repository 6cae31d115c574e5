// stencil_chain: a chain of 16 5x5 stencils over a 16-bit image. Each stage
// is a weighted 5x5 sum of the previous stage (non-separable integer kernel
// whose weights sum to 256, different for each stage), rounded back to
// 16 bits. The input is extended with repeat_edge, so the output has the
// input's size; the deep chain makes fusion versus recomputation the issue.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class StencilChain : public Generator<StencilChain> {
public:
    PT_EXAMPLE_PARAMS

    GeneratorParam<int> stages{"stages", 16, 1, 64};
    // edit=N (N >= 1) changes stage N-1 alone: 2 more on its centre
    // weight, 1 less on two corners (sum still 256). The warm-start
    // benchmark (bench/warm.sh) tunes this one-stage edit; 0: no edit.
    GeneratorParam<int> edit{"edit", 0, 0, 64};

    Input<Buffer<uint16_t>> input{"input", 2};
    Output<Buffer<uint16_t>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");

        Func clamped = BoundaryConditions::repeat_edge(input);
        std::vector<Func> chain;
        Func prev = clamped;
        for (int s = 0; s < (int)stages; s++) {
            // Binomial 5x5 kernel (1 4 6 4 1)^T (1 4 6 4 1), sum 256, with
            // k = s % 4 moved from each of the four edge midpoints (weight
            // 6) to the centre: non-separable for k > 0, sum still 256.
            const int b[5] = {1, 4, 6, 4, 1};
            const int k = s % 4;
            Expr acc = cast<uint32_t>(0);
            for (int j = -2; j <= 2; j++) {
                for (int i = -2; i <= 2; i++) {
                    int w = b[i + 2] * b[j + 2];
                    bool edge_mid = (i == 0 && (j == -2 || j == 2)) ||
                                    (j == 0 && (i == -2 || i == 2));
                    if (edge_mid) w -= k;
                    if (i == 0 && j == 0) w += 4 * k;
                    if (s + 1 == (int)edit) {
                        if (i == 0 && j == 0) w += 2;
                        if (j == i && (i == -2 || i == 2)) w -= 1;
                    }
                    acc += cast<uint32_t>(prev(x + i, y + j)) * w;
                }
            }
            Func f("stage_" + std::to_string(s));
            f(x, y) = cast<uint16_t>((acc + 128) >> 8);
            chain.push_back(f);
            prev = f;
        }
        output(x, y) = prev(x, y);

        const int w = pt_size(1536, 64), h = pt_size(2560, 48);
        input.set_estimates({{0, w}, {0, h}});
        output.set_estimates({{0, w}, {0, h}});

        if (pt_manual()) {
            // Every stage at root, in strips of 32 rows spread over the
            // cores and vectorised along x; the last stage is inlined into
            // the output (a plain copy). The stages are compute-bound
            // (25 widening multiply-adds per pixel) and a 1536x2560 16-bit
            // image fits in the last-level cache, so fusing stages into
            // tiles or sliding windows (tried: groups of 2-16 stages, strips
            // and 2D tiles) only added recomputation and loop overhead.
            const int vec = natural_vector_size<uint16_t>();
            Var yo("yo"), yi("yi");
            for (size_t i = 0; i + 1 < chain.size(); i++) {
                chain[i].compute_root()
                    .split(y, yo, yi, 32, TailStrategy::GuardWithIf)
                    .parallel(yo)
                    .vectorize(x, vec);
            }
            output.split(y, yo, yi, 32, TailStrategy::GuardWithIf)
                .parallel(yo)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(StencilChain, stencil_chain)
