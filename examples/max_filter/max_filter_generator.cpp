// max_filter: circular max filter (dilation) of radius 26 on an 8-bit planar
// RGB image, edges repeated. Vertical maxima over 1, 2, 4, ..., 32 rows are
// built by doubling; the 2h+1 rows of the disc at offset dx are the max of two
// overlapping windows of one level, and RDom reductions over dx (one per
// level used) take the max of the 53 columns. Integer max: exact.
#include "../common/pt_example.h"

#include <string>
#include <vector>

using namespace Halide;

namespace {

constexpr int kRadius = 26;
constexpr int kLevels = 6;  // windows of 1, 2, 4, 8, 16, 32 rows

// Half-height of the disc at horizontal offset dx.
int disc_h(int dx) {
    int h = 0;
    while ((h + 1) * (h + 1) + dx * dx <= kRadius * kRadius) h++;
    return h;
}

// Level used for a window of n rows: 2^t <= n < 2^(t+1).
int level_for(int n) {
    int t = 0;
    while ((2 << t) <= n) t++;
    return t;
}

class MaxFilter : public Generator<MaxFilter> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<uint8_t>> input{"input", 3};
    Output<Buffer<uint8_t>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c");

        // vmax[k](x, y, c): max over rows [y, y + 2^k) of the input with its
        // edges repeated (clamped coordinates: every read stays inside the
        // input, whatever the schedule).
        vmax.push_back(Func("vmax0"));
        vmax[0](x, y, c) = input(
            clamp(likely(x), input.dim(0).min(), input.dim(0).max()),
            clamp(likely(y), input.dim(1).min(), input.dim(1).max()), c);
        for (int k = 1; k < kLevels; k++) {
            vmax.push_back(Func("vmax" + std::to_string(k)));
            vmax[k](x, y, c) = max(vmax[k - 1](x, y, c),
                                   vmax[k - 1](x, y + (1 << (k - 1)), c));
        }

        // h decreases with |dx|, so the offsets using level t are those with
        // lo <= |dx| <= hi for some range: one reduction per such range.
        dilated(x, y, c) = cast<uint8_t>(0);
        int hi = kRadius;
        while (hi >= 0) {
            const int t = level_for(2 * disc_h(hi) + 1);
            int lo = hi;
            while (lo > 0 && level_for(2 * disc_h(lo - 1) + 1) == t) lo--;
            // dx over [-hi, -lo] and [lo, hi] (just [-hi, hi] when lo == 0).
            RDom r = lo == 0 ? RDom(-hi, 2 * hi + 1, "r_l" + std::to_string(t))
                             : RDom(lo, hi - lo + 1, 0, 2, "r_l" + std::to_string(t));
            Expr dx = lo == 0 ? Expr(r.x) : (2 * r.y - 1) * r.x;
            Expr adx = lo == 0 ? abs(r.x) : Expr(r.x);
            // h = floor(sqrt(R^2 - dx^2)): float sqrt of an integer <= 676
            // is far enough from the next integer for the floor to be exact.
            // The clamp to the group's range of h is a no-op that gives
            // bounds inference exact row ranges.
            const int h_min = disc_h(hi), h_max = disc_h(lo);
            Expr h = clamp(cast<int>(sqrt(cast<float>(kRadius * kRadius - adx * adx))),
                           h_min, h_max);
            // Rows [y - h, y + h]: windows of 2^t rows at y - h and at
            // y + h + 1 - 2^t (the same window when 2h+1 == 2^t).
            Expr seg = vmax[t](x + dx, y - h, c);
            if (2 * h_max + 1 != (1 << t) || h_min != h_max) {
                seg = max(seg, vmax[t](x + dx, y + h + 1 - (1 << t), c));
            }
            dilated(x, y, c) = max(dilated(x, y, c), seg);
            rdoms.push_back(r);
            hi = lo - 1;
        }
        output(x, y, c) = dilated(x, y, c);

        const int w = pt_size(1536, 128), hgt = pt_size(2560, 96);
        input.set_estimates({{0, w}, {0, hgt}, {0, 3}});
        output.set_estimates({{0, w}, {0, hgt}, {0, 3}});

        if (pt_manual()) {
            manual_schedule(x, y, c);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }

private:
    std::vector<Func> vmax;
    std::vector<RDom> rdoms;
    Func dilated{"dilated"};

    void manual_schedule(Var x, Var y, Var c) {
        const int vec = natural_vector_size<uint8_t>();
        const int tile_x = 768, tile_y = 128;
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), tk("tk"), xv("xv");
        // Tiles of 768x128 pixels of one channel per task, produced row by
        // row.
        output.tile(x, y, xo, yo, xi, yi, tile_x, tile_y, TailStrategy::GuardWithIf)
            .fuse(xo, yo, tk).fuse(tk, c, tk).parallel(tk)
            .vectorize(xi, vec, TailStrategy::GuardWithIf);
        // The clamped input for the whole tile plus apron, in one simple
        // loop nest (its edge clamps are partitioned away; as the head of a
        // sliding window they would turn into per-lane gathers).
        vmax[0].compute_at(output, tk)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        // The other levels slide down the tile: one new row of each per
        // output row, in circular buffers of 64 rows (the disc spans 53).
        for (int k = 1; k < kLevels; k++) {
            vmax[k].store_at(output, tk).compute_at(output, yi)
                .fold_storage(y, 64)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
        }
        // One output row of the reduction at a time: for each offset, a
        // pass over the row in a loop of constant trip count (the tile
        // width in vectors), which LLVM unrolls, hoisting the per-offset
        // row arithmetic.
        dilated.store_at(output, tk).compute_at(output, yi)
            .vectorize(x, vec, TailStrategy::GuardWithIf);
        for (size_t u = 0; u < rdoms.size(); u++) {
            dilated.update(u)
                .split(x, x, xv, tile_x, TailStrategy::GuardWithIf)
                .reorder(xv, rdoms[u].x, x)
                .vectorize(xv, vec);
        }
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(MaxFilter, max_filter)
