// matmul: single-precision matrix product C = A * B, with
// C(x, y) = sum over k of A(k, y) * B(x, k) (x is the column, y the row; the
// first dimension of every buffer is the dense one). The sum over k is an
// RDom update; every schedule here adds k = 0, 1, ... serially per element.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class MatMul : public Generator<MatMul> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<float>> a{"a", 2};  // a(k, y): M rows of K columns
    Input<Buffer<float>> b{"b", 2};  // b(x, k): K rows of N columns
    Output<Buffer<float>> output{"output", 2};  // output(x, y): M rows of N

    void generate() {
        Var x("x"), y("y");
        RDom k(0, a.dim(0).extent(), "k");

        prod(x, y) = 0.0f;
        prod(x, y) += a(k, y) * b(x, k);
        output(x, y) = prod(x, y);

        // Test sizes are odd on purpose: they exercise every tail.
        const int nx = pt_size(1024, 200), ny = pt_size(1024, 130),
                  nk = pt_size(1024, 300);
        a.set_estimates({{0, nk}, {0, ny}});
        b.set_estimates({{0, nx}, {0, nk}});
        output.set_estimates({{0, nx}, {0, ny}});

        if (pt_manual()) {
            schedule_manual(x, y, k);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    Func prod{"prod"};

    void schedule_manual(Var x, Var y, RDom k) {
        // Each parallel task owns a 64x96 block of the output and keeps its
        // sums in a stack buffer (24 KB). k is cut into slices of 256 (ko).
        // Per slice and per 32-column panel, the panel's 256 rows of b are
        // first packed into a dense 32 KB buffer (L1-resident, read
        // sequentially instead of one 4 KB-strided row per k); then the 96
        // rows of the block sweep it in register tiles of 2 vectors x 6 rows
        // (12 zmm accumulators), each running its 256 k serially. ko is
        // outermost and ki serial, so each element still adds k = 0, 1, ...
        // in order. (Tile sizes measured: 2x6 beat 2x8, 2x12 and 4x4 here.)
        const int vec = natural_vector_size<float>();
        const int tx = 2 * vec, ty = 6;        // register tile
        const int bx = 2 * tx, by = 16 * ty;   // per-task block
        const int kb = 256;                    // k slice
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t"), xt("xt"),
            yt("yt");
        RVar ko("ko"), ki("ki");

        // Blocks of constant size let the accumulators live in registers.
        // ShiftInwards keeps them constant but needs the output to be at
        // least one block large; smaller outputs take a guarded version.
        auto block = [&](Stage s, TailStrategy tail) {
            s.tile(x, y, xo, yo, xi, yi, bx, by, tail)
                .fuse(xo, yo, t)
                .parallel(t)
                .vectorize(xi, vec);
        };
        block(output.specialize(output.dim(0).extent() >= bx &&
                                output.dim(1).extent() >= by),
              TailStrategy::ShiftInwards);
        block(output, TailStrategy::GuardWithIf);

        prod.compute_at(output, t).vectorize(x, vec);
        prod.update()
            .split(x, xt, x, tx, TailStrategy::GuardWithIf)
            .split(y, yt, y, ty, TailStrategy::GuardWithIf)
            .split(k.x, ko, ki, kb, TailStrategy::GuardWithIf)
            .reorder(x, y, ki, yt, xt, ko)
            .vectorize(x, vec)
            .unroll(x)
            .unroll(y);
        // The packed panel of b (kb x tx) per (ko, xt).
        b.in()
            .compute_at(prod, xt)
            .vectorize(_0, vec)
            .unroll(_0);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(MatMul, matmul)
