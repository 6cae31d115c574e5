// random_pipeline: a random DAG of image-processing stages, picked by a
// seed, as training data for the cost model (issue 4; Adams et al. 2019
// §5). doc/random-pipelines.md describes the stage mix.
//
//   seed=N              which pipeline (any unsigned number; same seed, same
//                       pipeline, on every machine: a private splitmix64)
//   stages=N            how many stage steps to draw (default 8); a step adds
//                       one to three Funcs
//   size=test|bench     estimates: 96x96 (test) or 1024x1024 (bench)
//   schedule=reference  every Func compute_root, serial (the bit-exact
//                       reference); manual (the default) applies nothing,
//                       so an autoscheduler or Halide's defaults decide
//
// Three inputs, always read: input_u8 (x, y, c) with three channels,
// input_u16 (x, y) and input_f32 (x, y), each behind repeat_edge, so every
// access of any stage stays inside them. One output (x, y, c), float, the
// mean of every Func nobody else reads, brought back to full scale.
//
// Values stay in range by construction: floats live in about [0, 1] (only
// convex combinations, products, min/max, absolute differences), integer
// stages compute in uint32 from uint8/uint16 operands and never exceed it,
// and the only signed ints are clamped indices. No division by a variable,
// so no NaN or infinity.
#include "../../examples/common/pt_example.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace Halide;

namespace {

// splitmix64 (Steele, Lea and Flood 2014): deterministic everywhere.
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next() {
        uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n).
    int below(int n) { return (int)(next() % (uint64_t)n); }
    // Uniform in [lo, hi].
    int range(int lo, int hi) { return lo + below(hi - lo + 1); }
    bool chance(int percent) { return below(100) < percent; }

private:
    uint64_t s_;
};

enum class Kind { U8, U16, F32 };

// A Func of the pool: its element kind, 2 or 3 dims (x, y[, c]) and its
// scale: log2 of how much smaller than the output its x and y are (1 is
// half size, -1 twice the size). Only Funcs of one scale are mixed
// pointwise, so every dim keeps its units (Adams et al. §5).
struct Node {
    Func f;
    Kind kind;
    int dims;
    int scale;
    int uses;
};

class RandomPipeline : public Generator<RandomPipeline> {
public:
    PT_EXAMPLE_PARAMS
    GeneratorParam<uint32_t> seed{"seed", 0};
    GeneratorParam<int> stages{"stages", 8, 1, 200};

    Input<Buffer<uint8_t>> input_u8{"input_u8", 3};
    Input<Buffer<uint16_t>> input_u16{"input_u16", 2};
    Input<Buffer<float>> input_f32{"input_f32", 2};
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        const int w = pt_size(1024, 96), h = pt_size(1024, 96);
        width_ = w;
        height_ = h;
        Rng rng((uint64_t)(uint32_t)seed * 0x2545f4914f6cdd1dULL + 1);
        rng_ = &rng;

        pool_.clear();
        pool_.push_back({BoundaryConditions::repeat_edge(input_u8),
                         Kind::U8, 3, 0, 0});
        pool_.push_back({BoundaryConditions::repeat_edge(input_u16),
                         Kind::U16, 2, 0, 0});
        pool_.push_back({BoundaryConditions::repeat_edge(input_f32),
                         Kind::F32, 2, 0, 0});

        for (int i = 0; i < stages; i++)
            add_stage(i);
        finish();

        input_u8.set_estimates({{0, w}, {0, h}, {0, 3}});
        input_u16.set_estimates({{0, w}, {0, h}});
        input_f32.set_estimates({{0, w}, {0, h}});
        output.set_estimates({{0, w}, {0, h}, {0, 3}});

        if (pt_reference())
            pt_example::schedule_reference({output});
        rng_ = nullptr;
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, i{"i"};
    std::vector<Node> pool_;
    Rng *rng_ = nullptr;
    int width_ = 0, height_ = 0;

    // ---- values ---------------------------------------------------------

    static Type type_of(Kind k) {
        switch (k) {
        case Kind::U8: return UInt(8);
        case Kind::U16: return UInt(16);
        default: return Float(32);
        }
    }

    static const char *kind_name(Kind k) {
        switch (k) {
        case Kind::U8: return "u8";
        case Kind::U16: return "u16";
        default: return "f32";
        }
    }

    // The largest value of an integer kind.
    static int top(Kind k) { return k == Kind::U8 ? 255 : 65535; }

    // v of kind k as a float in [0, 1].
    static Expr to_float(Expr v, Kind k) {
        if (k == Kind::F32) return v;
        return cast<float>(v) * (1.0f / (float)top(k));
    }

    // A float in about [0, 1] as kind k (clamped, rounded).
    static Expr from_float(Expr v, Kind k) {
        if (k == Kind::F32) return v;
        return cast(type_of(k),
                    clamp(v, 0.0f, 1.0f) * (float)top(k) + 0.5f);
    }

    // v of kind from as kind to, exactly where it can be.
    static Expr convert(Expr v, Kind from, Kind to) {
        if (from == to) return v;
        if (from == Kind::U8 && to == Kind::U16)
            return cast<uint16_t>(v) * cast<uint16_t>(257);
        if (from == Kind::U16 && to == Kind::U8)
            return cast<uint8_t>(v >> 8);
        if (to == Kind::F32) return to_float(v, from);
        return from_float(v, to);
    }

    // An integer kind's value widened for arithmetic.
    static Expr wide(Expr v) { return cast<uint32_t>(v); }

    // A uint32 constant (Expr op uint32_t is ambiguous in Halide).
    static Expr u32(int v) { return Expr((uint32_t)v); }

    // An index in [0, n) from v of kind k, clamped.
    static Expr index_of(Expr v, Kind k, int n) {
        Expr e;
        if (k == Kind::F32)
            e = cast<int>(clamp(v, 0.0f, 1.0f) * (float)(n - 1) + 0.5f);
        else
            e = cast<int>(wide(v) * u32(n) / u32(top(k) + 1));
        return clamp(e, 0, n - 1);
    }

    // ---- the pool ---------------------------------------------------------

    // n at (xx, yy) and channel c (a 2-dim Func ignores c).
    Expr at(const Node &n, Expr xx, Expr yy) const {
        if (n.dims == 3) return n.f(xx, yy, c);
        return n.f(xx, yy);
    }

    Expr at(const Node &n, Expr xx, Expr yy, Expr cc) const {
        if (n.dims == 3) return n.f(xx, yy, cc);
        return n.f(xx, yy);
    }

    // Extent of x (or y) at a scale, at the estimates.
    int extent_at(int full, int scale) const {
        return scale >= 0 ? std::max(full >> scale, 1) : full << -scale;
    }

    // The Func a stage reads: half the time one nobody reads yet (so
    // the inputs and most stages get used), else any earlier one, biased
    // towards recent ones.
    int pick() {
        std::vector<int> unused;
        for (size_t k = 0; k < pool_.size(); k++)
            if (pool_[k].uses == 0) unused.push_back((int)k);
        if (!unused.empty() && rng_->chance(50))
            return unused[rng_->below((int)unused.size())];
        const int n = (int)pool_.size();
        return std::max(rng_->below(n), rng_->below(n));
    }

    // A second operand of the same scale as pool_[a], or -1.
    int partner(int a) {
        std::vector<int> same;
        for (size_t k = 0; k < pool_.size(); k++)
            if ((int)k != a && pool_[k].scale == pool_[a].scale)
                same.push_back((int)k);
        if (same.empty()) return -1;
        return same[rng_->below((int)same.size())];
    }

    // Defines f over the dims of a Node of `dims` dims.
    void define(Func &f, int dims, Expr e) {
        if (dims == 3)
            f(x, y, c) = e;
        else
            f(x, y) = e;
    }

    Node add(Func f, Kind k, int dims, int scale) {
        Node n{f, k, dims, scale, 0};
        pool_.push_back(n);
        return n;
    }

    std::string fname(int step, const char *what) const {
        return "s" + std::to_string(step) + "_" + what;
    }

    // ---- stages -----------------------------------------------------------

    void add_stage(int step) {
        // Percent weights; doc/random-pipelines.md lists them.
        static const struct {
            int weight;
            void (RandomPipeline::*make)(int);
        } mix[] = {
            {20, &RandomPipeline::pointwise},
            {5, &RandomPipeline::cast_stage},
            {10, &RandomPipeline::stencil},
            {8, &RandomPipeline::separable},
            {8, &RandomPipeline::downsample},
            {8, &RandomPipeline::upsample},
            {6, &RandomPipeline::window_sum},
            {4, &RandomPipeline::window_extremum},
            {4, &RandomPipeline::row_reduce},
            {3, &RandomPipeline::channel_reduce},
            {4, &RandomPipeline::channel_mix},
            {4, &RandomPipeline::scan},
            {4, &RandomPipeline::histogram},
            {7, &RandomPipeline::lut},
            {5, &RandomPipeline::transpose},
        };
        int total = 0;
        for (const auto &m : mix) total += m.weight;
        int r = rng_->below(total);
        for (const auto &m : mix) {
            if (r < m.weight) {
                (this->*m.make)(step);
                return;
            }
            r -= m.weight;
        }
    }

    // Arithmetic on one or two operands of a's kind; the result has that
    // kind. A 2-dim operand broadcasts over the channels of a 3-dim one.
    void pointwise(int step) {
        const int ia = pick();
        const int ib = partner(ia);
        Node &a = pool_[ia];
        a.uses++;
        const Kind k = a.kind;
        Expr va = at(a, x, y);
        Expr vb;
        int dims = a.dims;
        if (ib >= 0) {
            Node &b = pool_[ib];
            b.uses++;
            vb = convert(at(b, x, y), b.kind, k);
            dims = std::max(dims, b.dims);
        } else {
            // No partner at this scale: a shifted copy of a.
            vb = at(a, x + rng_->range(-2, 2), y + rng_->range(-2, 2));
        }
        // A 2-dim operand may become a 3-dim result with a per-channel gain.
        const bool spread = dims == 2 && rng_->chance(20);
        Expr e;
        const int op = rng_->below(8);
        // A coordinate-dependent choice (as in a demosaic).
        Expr board = ((x + y) % 2) == 0;
        if (k == Kind::F32) {
            const float t = 0.125f * (float)rng_->range(1, 7);
            switch (op) {
            case 0: e = va * t + vb * (1.0f - t); break;
            case 1: e = va * vb; break;
            case 2: e = min(va, vb); break;
            case 3: e = max(va, vb); break;
            case 4: e = select(va > vb, va, vb * 0.5f); break;
            case 5: e = abs(va - vb); break;
            case 6: e = select(board, va, vb); break;
            default: e = clamp(va * 1.5f - vb * 0.25f, 0.0f, 1.0f); break;
            }
            if (spread) e = e * (cast<float>(c) + 1.0f) * 0.25f;
        } else {
            const int bits = k == Kind::U8 ? 8 : 16;
            const int t = rng_->range(1, 7);
            Expr wa = wide(va), wb = wide(vb);
            switch (op) {
            case 0: e = (wa * u32(t) + wb * u32(8 - t)) >> 3; break;
            case 1: e = (wa * wb) >> bits; break;
            case 2: e = min(wa, wb); break;
            case 3: e = max(wa, wb); break;
            case 4: e = select(wa > wb, wa - wb, wb / 2); break;
            case 5: e = absd(wa, wb); break;
            case 6: e = select(board, wa, wb); break;
            default: e = wa ^ (wb >> 3); break;
            }
            if (spread) e = (e * (cast<uint32_t>(c) + 1)) >> 2;
            e = cast(type_of(k), e);
        }
        if (spread) dims = 3;
        Func f(fname(step, "pointwise"));
        define(f, dims, e);
        add(f, k, dims, a.scale);
    }

    // A change of kind (exact widening, rounding narrowing).
    void cast_stage(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        Kind to = (Kind)rng_->below(3);
        if (to == a.kind) to = (Kind)(((int)to + 1) % 3);
        Func f(fname(step, "cast"));
        define(f, a.dims, convert(at(a, x, y), a.kind, to));
        add(f, to, a.dims, a.scale);
    }

    // A 3x3 (or, one time in four, 5x5) stencil with small non-negative
    // integer weights, normalised.
    void stencil(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const int rad = rng_->chance(25) ? 2 : 1;
        int wt[5][5] = {}, sum = 0;
        for (int dy = -rad; dy <= rad; dy++)
            for (int dx = -rad; dx <= rad; dx++) {
                wt[dy + 2][dx + 2] = rng_->range(0, 4);
                sum += wt[dy + 2][dx + 2];
            }
        if (sum == 0) wt[2][2] = sum = 1;
        Expr e;
        for (int dy = -rad; dy <= rad; dy++)
            for (int dx = -rad; dx <= rad; dx++) {
                const int v = wt[dy + 2][dx + 2];
                if (v == 0) continue;
                Expr t = at(a, x + dx, y + dy);
                t = a.kind == Kind::F32 ? t * (float)v : wide(t) * u32(v);
                e = e.defined() ? e + t : t;
            }
        if (a.kind == Kind::F32)
            e = e * (1.0f / (float)sum);
        else
            e = cast(type_of(a.kind), e / u32(sum));
        Func f(fname(step, "stencil"));
        define(f, a.dims, e);
        add(f, a.kind, a.dims, a.scale);
    }

    // A 1-D stencil along x or y or both in turn (a separable blur), of
    // radius 1 to 3 with binomial-like weights.
    void separable(int step) {
        const int ia = pick();
        pool_[ia].uses++;
        const int radius = rng_->range(1, 3);
        const int which = rng_->below(3);  // 0 x, 1 y, 2 x then y
        std::vector<int> wt;
        int sum = 0;
        for (int d = -radius; d <= radius; d++) {
            wt.push_back(radius + 1 - std::abs(d) + rng_->below(2));
            sum += wt.back();
        }
        Node src = pool_[ia];
        for (int pass = 0; pass < 2; pass++) {
            const bool along_x = pass == 0;
            if (which == 0 && !along_x) break;
            if (which == 1 && along_x) continue;
            Expr e;
            for (int d = -radius; d <= radius; d++) {
                Expr t = along_x ? at(src, x + d, y) : at(src, x, y + d);
                const int v = wt[d + radius];
                t = src.kind == Kind::F32 ? t * (float)v
                                          : wide(t) * u32(v);
                e = e.defined() ? e + t : t;
            }
            if (src.kind == Kind::F32)
                e = e * (1.0f / (float)sum);
            else
                e = cast(type_of(src.kind), e / u32(sum));
            Func f(fname(step, along_x ? "sep_x" : "sep_y"));
            define(f, src.dims, e);
            if (which == 2 && along_x) {
                // The intermediate is read by the y pass only.
                src = Node{f, src.kind, src.dims, src.scale, 1};
                pool_.push_back(src);
            } else {
                add(f, src.kind, src.dims, src.scale);
            }
        }
    }

    // Half size (a 2x2 box or a plain subsample), or twice the size; a
    // Func already at the smallest (largest) scale goes the other way.
    void downsample(int step) {
        const int ia = pick();
        if (pool_[ia].scale >= 3)
            resample_up(step, ia);
        else
            resample_down(step, ia);
    }

    void upsample(int step) {
        const int ia = pick();
        if (pool_[ia].scale <= -1)
            resample_down(step, ia);
        else
            resample_up(step, ia);
    }

    // Half size: a 2x2 box or a plain subsample.
    void resample_down(int step, int ia) {
        Node &a = pool_[ia];
        a.uses++;
        Expr e;
        if (rng_->chance(30)) {
            e = at(a, 2 * x, 2 * y);
        } else if (a.kind == Kind::F32) {
            e = (at(a, 2 * x, 2 * y) + at(a, 2 * x + 1, 2 * y) +
                 at(a, 2 * x, 2 * y + 1) + at(a, 2 * x + 1, 2 * y + 1)) *
                0.25f;
        } else {
            e = (wide(at(a, 2 * x, 2 * y)) + wide(at(a, 2 * x + 1, 2 * y)) +
                 wide(at(a, 2 * x, 2 * y + 1)) +
                 wide(at(a, 2 * x + 1, 2 * y + 1)) + 2) >> 2;
            e = cast(type_of(a.kind), e);
        }
        Func f(fname(step, "down"));
        define(f, a.dims, e);
        add(f, a.kind, a.dims, a.scale + 1);
    }

    // Twice the size: nearest neighbour or a two-tap linear interpolation.
    void resample_up(int step, int ia) {
        Node &a = pool_[ia];
        a.uses++;
        Expr e;
        if (rng_->chance(40)) {
            e = at(a, x / 2, y / 2);
        } else if (a.kind == Kind::F32) {
            e = (at(a, x / 2, y / 2) + at(a, (x + 1) / 2, (y + 1) / 2)) *
                0.5f;
        } else {
            e = (wide(at(a, x / 2, y / 2)) +
                 wide(at(a, (x + 1) / 2, (y + 1) / 2)) + 1) >> 1;
            e = cast(type_of(a.kind), e);
        }
        Func f(fname(step, "up"));
        define(f, a.dims, e);
        add(f, a.kind, a.dims, a.scale - 1);
    }

    // A sum over a small square window as an RDom update, then a pointwise
    // Func that takes the mean.
    void window_sum(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const int rad = rng_->range(1, 2), n = 2 * rad + 1;
        RDom r(-rad, n, -rad, n, fname(step, "r"));
        Func s(fname(step, "wsum"));
        const bool fl = a.kind == Kind::F32;
        Expr zero = fl ? Expr(0.0f) : u32(0);
        Expr v = at(a, x + r.x, y + r.y);
        if (!fl) v = wide(v);
        if (a.dims == 3) {
            s(x, y, c) = zero;
            s(x, y, c) += v;
        } else {
            s(x, y) = zero;
            s(x, y) += v;
        }
        Expr m = a.dims == 3 ? s(x, y, c) : s(x, y);
        m = fl ? m * (1.0f / (float)(n * n))
               : cast(type_of(a.kind), m / u32(n * n));
        Func f(fname(step, "wmean"));
        define(f, a.dims, m);
        add(f, a.kind, a.dims, a.scale);
    }

    // The maximum or minimum over a small window (a dilation or erosion:
    // an inline RDom reduction, so Halide adds an anonymous Func).
    void window_extremum(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const int rad = rng_->range(1, 2), n = 2 * rad + 1;
        const int shape = rng_->below(3);  // 0 square, 1 along x, 2 along y
        Expr v;
        if (shape == 0) {
            RDom r(-rad, n, -rad, n, fname(step, "r"));
            v = at(a, x + r.x, y + r.y);
        } else {
            RDom r(-rad, n, fname(step, "r"));
            v = shape == 1 ? at(a, x + r.x, y) : at(a, x, y + r.x);
        }
        const bool up = rng_->chance(50);
        Func f(fname(step, up ? "dilate" : "erode"));
        define(f, a.dims, up ? maximum(v) : minimum(v));
        add(f, a.kind, a.dims, a.scale);
    }

    // A 1x1 convolution across channels (a small matrix product): every
    // output channel is a weighted sum of all input channels, the weights
    // a Func of (output channel, input channel). A 2-dim Func is spread
    // over three channels first by the weights alone.
    void channel_mix(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const int m = rng_->range(1, 6);
        Func wf(fname(step, "weights"));
        Var j("j");
        wf(i, j) = cast<float>((i * 3 + j) * m % 4 + 1) * (1.0f / 12.0f);
        RDom r(0, 3, fname(step, "r"));
        Func s(fname(step, "mix"));
        Expr v = a.dims == 3 ? a.f(x, y, r.x) : a.f(x, y);
        if (a.kind == Kind::F32) {
            s(x, y, c) = 0.0f;
            s(x, y, c) += v * wf(c, r.x);
            add(s, a.kind, 3, a.scale);
        } else {
            s(x, y, c) = 0.0f;
            s(x, y, c) += to_float(v, a.kind) * wf(c, r.x);
            Func f(fname(step, "mixout"));
            f(x, y, c) = from_float(s(x, y, c), a.kind);
            add(f, a.kind, 3, a.scale);
        }
    }

    // A first-order recursive filter along x or y over the whole extent at
    // the estimates (a scan: each point of the update reads the previous
    // one), in float, then back to the kind.
    void scan(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const bool along_x = rng_->chance(50);
        const int n = extent_at(along_x ? width_ : height_, a.scale);
        const float k = 0.125f * (float)rng_->range(2, 6);
        RDom r(1, std::max(n - 1, 1), fname(step, "r"));
        Func f(fname(step, "scan"));
        define(f, a.dims, to_float(at(a, x, y), a.kind));
        if (a.dims == 3) {
            if (along_x)
                f(r, y, c) = f(r - 1, y, c) * k + f(r, y, c) * (1.0f - k);
            else
                f(x, r, c) = f(x, r - 1, c) * k + f(x, r, c) * (1.0f - k);
        } else {
            if (along_x)
                f(r, y) = f(r - 1, y) * k + f(r, y) * (1.0f - k);
            else
                f(x, r) = f(x, r - 1) * k + f(x, r) * (1.0f - k);
        }
        if (a.kind == Kind::F32) {
            add(f, a.kind, a.dims, a.scale);
            return;
        }
        Func g(fname(step, "scanout"));
        define(g, a.dims, from_float(a.dims == 3 ? f(x, y, c) : f(x, y),
                                     a.kind));
        add(g, a.kind, a.dims, a.scale);
    }

    // A reduction over a whole dim: the mean of each row, subtracted from
    // (or blended with) the Func.
    void row_reduce(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const int n = extent_at(width_, a.scale);
        RDom r(0, n, fname(step, "r"));
        Func s(fname(step, "rowsum"));
        const bool fl = a.kind == Kind::F32;
        Expr zero = fl ? Expr(0.0f) : u32(0);
        Expr v = at(a, r.x, y);
        if (!fl) v = wide(v);
        Expr mean;
        if (a.dims == 3) {
            s(y, c) = zero;
            s(y, c) += v;
            mean = s(y, c);
        } else {
            s(y) = zero;
            s(y) += v;
            mean = s(y);
        }
        Expr e;
        if (fl) {
            mean = mean * (1.0f / (float)n);
            e = rng_->chance(50) ? abs(at(a, x, y) - mean)
                                 : (at(a, x, y) + mean) * 0.5f;
        } else {
            mean = mean / u32(n);
            e = cast(type_of(a.kind), absd(wide(at(a, x, y)), mean));
        }
        Func f(fname(step, "rowmix"));
        define(f, a.dims, e);
        add(f, a.kind, a.dims, a.scale);
    }

    // A weighted sum over the channel dim (an RDom over all of c); a 2-dim
    // Func gets a row reduction instead.
    void channel_reduce(int step) {
        int ia = pick();
        if (pool_[ia].dims != 3) {
            // Prefer some 3-dim Func; none left means a row reduction.
            std::vector<int> three;
            for (size_t k = 0; k < pool_.size(); k++)
                if (pool_[k].dims == 3) three.push_back((int)k);
            if (three.empty()) {
                row_reduce(step);
                return;
            }
            ia = three[rng_->below((int)three.size())];
        }
        Node &a = pool_[ia];
        a.uses++;
        RDom r(0, 3, fname(step, "r"));
        Func s(fname(step, "csum"));
        const bool fl = a.kind == Kind::F32;
        const int w0 = rng_->range(1, 4), w1 = rng_->range(1, 4),
                  w2 = rng_->range(1, 4);
        Expr wr = select(r.x == 0, w0, r.x == 1, w1, w2);
        if (fl) {
            s(x, y) = 0.0f;
            s(x, y) += a.f(x, y, r.x) * cast<float>(wr);
            Func f(fname(step, "luma"));
            f(x, y) = s(x, y) * (1.0f / (float)(w0 + w1 + w2));
            add(f, a.kind, 2, a.scale);
        } else {
            s(x, y) = cast<uint32_t>(0);
            s(x, y) += wide(a.f(x, y, r.x)) * cast<uint32_t>(wr);
            Func f(fname(step, "luma"));
            f(x, y) = cast(type_of(a.kind),
                           Expr(s(x, y)) / u32(w0 + w1 + w2));
            add(f, a.kind, 2, a.scale);
        }
    }

    // A histogram of a whole Func (an update with a data-dependent,
    // clamped store), then read back as a table by the Func's values.
    void histogram(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const int bins = 8 << rng_->below(3);
        const int wd = extent_at(width_, a.scale);
        const int ht = extent_at(height_, a.scale);
        RDom r(0, wd, 0, ht, fname(step, "r"));
        Func hist(fname(step, "hist"));
        hist(i) = 0.0f;
        hist(index_of(at(a, r.x, r.y, 0), a.kind, bins)) += 1.0f;
        Expr share = hist(index_of(at(a, x, y), a.kind, bins)) *
                     (1.0f / (float)(wd * ht));
        Func f(fname(step, "histmap"));
        Expr v = to_float(at(a, x, y), a.kind);
        define(f, a.dims, from_float(v * 0.5f + min(share * (float)bins, 1.0f) *
                                                    0.5f,
                                     a.kind));
        add(f, a.kind, a.dims, a.scale);
    }

    // A table of 256 (or 64) entries computed from its index, indexed by a
    // Func's values (data dependent, clamped).
    void lut(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        const int n = rng_->chance(50) ? 256 : 64;
        Kind to = (Kind)rng_->below(3);
        Func table(fname(step, "table"));
        Expr t = cast<float>(i) * (1.0f / (float)(n - 1));
        switch (rng_->below(3)) {
        case 0: t = t * t; break;
        case 1: t = 1.0f - t; break;
        default: t = select(t < 0.5f, t * 2.0f, 2.0f - t * 2.0f); break;
        }
        table(i) = from_float(t, to);
        Func f(fname(step, "lut"));
        define(f, a.dims, table(index_of(at(a, x, y), a.kind, n)));
        add(f, to, a.dims, a.scale);
    }

    // x and y swapped (the images are square at the estimates).
    void transpose(int step) {
        const int ia = pick();
        Node &a = pool_[ia];
        a.uses++;
        Func f(fname(step, "transpose"));
        define(f, a.dims, at(a, y, x));
        add(f, a.kind, a.dims, a.scale);
    }

    // ---- the output ---------------------------------------------------------

    // The mean of every Func that nobody reads, as floats at full scale.
    void finish() {
        Expr e;
        int n = 0;
        for (const Node &nd : pool_) {
            if (nd.uses) continue;
            Expr xx = x, yy = y;
            if (nd.scale > 0) {
                xx = x / (1 << nd.scale);
                yy = y / (1 << nd.scale);
            } else if (nd.scale < 0) {
                xx = x * (1 << -nd.scale);
                yy = y * (1 << -nd.scale);
            }
            Expr v = to_float(at(nd, xx, yy), nd.kind);
            e = e.defined() ? e + v : v;
            n++;
        }
        output(x, y, c) = e * (1.0f / (float)n);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(RandomPipeline, random_pipeline)
