// blur: separable 3x3 box blur of a 16-bit image (Halide's classic first
// example). The input is read without boundary conditions: the output is
// two pixels smaller than the input in each dimension.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class Blur : public Generator<Blur> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<uint16_t>> input{"input", 2};
    Output<Buffer<uint16_t>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        blur_x(x, y) = (input(x, y) + input(x + 1, y) + input(x + 2, y)) / 3;
        output(x, y) = (blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2)) / 3;

        const int w = pt_size(6400, 256), h = pt_size(4800, 192);
        input.set_estimates({{0, w + 2}, {0, h + 2}});
        output.set_estimates({{0, w}, {0, h}});

        if (pt_manual()) {
            // Tiles of 256x32 rows spread over cores; within a tile blur_x is
            // computed per strip of 8 output rows (plus two), vectorised.
            const int vec = natural_vector_size<uint16_t>();
            Var xi("xi"), yi("yi"), yo("yo");
            output.split(y, yo, yi, 32, TailStrategy::GuardWithIf)
                .parallel(yo)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
            blur_x.store_at(output, yo).compute_at(output, yi)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func blur_x{"blur_x"};
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Blur, blur)
