// conv_layer: a 3x3 convolution layer with bias and ReLU, as in a CNN.
// output(k, x, y, n) = max(0, bias(k) + sum over c, kx, ky of
//     filter(c, kx, ky, k) * input(c, x + kx, y + ky, n)),
// where c runs over the input channels and k over the output channels. The
// input is read without boundary conditions (it is 2 larger in x and y).
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class ConvLayer : public Generator<ConvLayer> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<float>> input{"input", 4};    // (c, x, y, n)
    Input<Buffer<float>> filter{"filter", 4};  // (c, kx, ky, k)
    Input<Buffer<float>> bias{"bias", 1};      // (k)
    Output<Buffer<float>> output{"output", 4};  // (k, x, y, n)

    void generate() {
        Var k("k"), x("x"), y("y"), n("n");
        // r.x: input channel, r.y: kx, r.z: ky.
        RDom r(0, input.dim(0).extent(), 0, 3, 0, 3, "r");

        conv(k, x, y, n) = bias(k);
        conv(k, x, y, n) += filter(r.x, r.y, r.z, k) *
                            input(r.x, x + r.y, y + r.z, n);
        output(k, x, y, n) = max(0.0f, conv(k, x, y, n));

        // Bench: 32 -> 32 channels, 128x128, batch 4. Test sizes are odd on
        // purpose (tails in every dimension).
        const int ci = pt_size(32, 10), co = pt_size(32, 40);
        const int w = pt_size(128, 30), h = pt_size(128, 10);
        const int nb = pt_size(4, 2);
        input.set_estimates({{0, ci}, {0, w + 2}, {0, h + 2}, {0, nb}});
        filter.set_estimates({{0, ci}, {0, 3}, {0, 3}, {0, co}});
        bias.set_estimates({{0, co}});
        output.set_estimates({{0, co}, {0, w}, {0, h}, {0, nb}});

        if (pt_manual()) {
            schedule_manual(k, x, y, n, r);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func conv{"conv"};

    void schedule_manual(Var k, Var x, Var y, Var n, RDom r) {
        // Register tile: 2 vectors of output channels x 6 pixels along x
        // (12 zmm accumulators; measured faster than 4, 8, 10, 12 or 14
        // pixels). Per (ky, kx, c) step the tile loads two filter vectors
        // and broadcasts 6 input values. The filter is first copied once
        // into a k-innermost layout so that those two loads are dense. The
        // reduction loops keep their order (c innermost, then kx, then ky)
        // and stay serial, so each output element adds its terms in the
        // same order as a scalar loop would. Rows (y, n) go to the cores.
        const int vec = natural_vector_size<float>();
        const int tk = 2 * vec, tx = 6;
        Var ko("ko"), ki("ki"), xo("xo"), xi("xi"), yn("yn");

        // Tiles of constant size let the accumulators live in registers.
        // ShiftInwards keeps them constant but needs at least one whole
        // tile; smaller outputs take a guarded version.
        auto tiles = [&](Stage s, TailStrategy tail) {
            s.split(k, ko, ki, tk, tail)
                .split(x, xo, xi, tx, tail)
                .reorder(ki, xi, ko, xo, y, n)
                .fuse(y, n, yn)
                .parallel(yn)
                .vectorize(ki, vec)
                .unroll(ki)
                .unroll(xi);
        };
        tiles(output.specialize(output.dim(0).extent() >= tk &&
                                output.dim(1).extent() >= tx),
              TailStrategy::ShiftInwards);
        tiles(output, TailStrategy::GuardWithIf);

        conv.compute_at(output, ko)
            .vectorize(k, vec)
            .unroll(k)
            .unroll(x);
        conv.update()
            .reorder(k, x, y, n, r.x, r.y, r.z)
            .vectorize(k, vec)
            .unroll(k)
            .unroll(x);

        // Transposed copy of the filter: storage order k, c, kx, ky.
        filter.in()
            .compute_root()
            .reorder_storage(_3, _0, _1, _2)
            .reorder(_3, _0, _1, _2)
            .vectorize(_3, vec, TailStrategy::GuardWithIf);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(ConvLayer, conv_layer)
