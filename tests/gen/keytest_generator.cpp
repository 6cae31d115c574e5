// keytest: a small pipeline whose generator params each change one thing
// the key must cover (or must not), for tests/t/t0230-key.sh.
//
//   input -> in (repeat_edge) -> a -> b -+-> output
//                             \-> c ----/
//   hist: an update with an RDom over the input, read by output
//
// edit=0   the base algorithm
// edit=1   a different constant in b's definition (b and output change)
// edit=2   c computed in double, then cast (a type inside c changes)
// edit=3   0.1f in c becomes 0.1000001f (exact floats: the key must change)
// edit=4   the RDom of hist covers 0..15 instead of 0..16
// edit=5   output's estimate is 65 wide instead of 64
// edit=6   renamed Funcs and Vars only (the key must NOT change)
#include "Halide.h"

using namespace Halide;

namespace {

class KeyTest : public Generator<KeyTest> {
public:
    GeneratorParam<int> edit{"edit", 0};

    Input<Buffer<float>> input{"input", 2};
    Input<float> gain{"gain"};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        const bool rn = edit == 6;
        Var x(rn ? "u" : "x"), y(rn ? "v" : "y");
        Func in = BoundaryConditions::repeat_edge(input);
        Func a(rn ? "aa" : "a"), b(rn ? "bb" : "b"), c(rn ? "cc" : "c");
        Func hist(rn ? "hh" : "hist");
        a(x, y) = in(x - 1, y) + in(x + 1, y);
        b(x, y) = a(x, y - 1) + a(x, y + 1) * (edit == 1 ? 3.0f : 2.0f);
        const float k = edit == 3 ? 0.1000001f : 0.1f;
        if (edit == 2)
            c(x, y) = cast<float>(cast<double>(in(x, y)) * cast<double>(k));
        else
            c(x, y) = in(x, y) * k;
        RDom r(0, edit == 4 ? 15 : 16, 0, 16);
        hist(x) = 0.0f;
        hist(clamp(cast<int>(input(r.x, r.y) * 8.0f), 0, 7)) += 1.0f;
        output(x, y) = (b(x, y) + c(x, y)) * gain + hist(x % 8);

        input.set_estimates({{0, 64}, {0, 64}});
        gain.set_estimate(1.5f);
        output.set_estimates({{0, edit == 5 ? 65 : 64}, {0, 64}});
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(KeyTest, keytest)
