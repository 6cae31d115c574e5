// chain: a synthetic chain of `stages` 3x3 stencils over a float image, for
// the adapter benchmark (bench/adapter.sh): how long extracting, printing
// and hashing the model of a long pipeline takes.
#include "Halide.h"

#include <string>
#include <vector>

using namespace Halide;

namespace {

class Chain : public Generator<Chain> {
public:
    GeneratorParam<int> stages{"stages", 30};

    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        std::vector<Func> fs;
        Func prev = BoundaryConditions::repeat_edge(input);
        for (int i = 0; i < stages; i++) {
            Func f("s" + std::to_string(i));
            Expr e = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    e += prev(x + dx, y + dy) * (1 + dx * dx + 2 * dy * dy);
            f(x, y) = e / 20.0f;
            prev = f;
        }
        output(x, y) = prev(x, y);
        input.set_estimates({{0, 256}, {0, 256}});
        output.set_estimates({{0, 256}, {0, 256}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Chain, chain)
