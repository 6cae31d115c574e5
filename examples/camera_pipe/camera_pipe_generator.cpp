// camera_pipe: raw Bayer mosaic (GRBG, 16 bits cut to 10) to 8-bit RGB:
// hot/dead pixels clamped to the range of their same-colour neighbours,
// deinterleave, demosaic (edge-aware green, colour-difference red/blue),
// colour correction by a 3x4 fixed-point matrix interpolated for the colour
// temperature, and a gamma/contrast tone curve applied as a 1024-entry LUT.
#include "../common/pt_example.h"

using namespace Halide;

namespace {

class CameraPipe : public Generator<CameraPipe> {
public:
    PT_EXAMPLE_PARAMS

    Input<Buffer<uint16_t>> raw{"raw", 2};
    Input<float> color_temp{"color_temp"};  // Kelvin
    Input<float> gamma{"gamma"};
    Input<float> contrast{"contrast"};      // 0: none, 1: full S-curve
    Input<int> black_level{"black_level"};  // 10-bit units
    Input<int> white_level{"white_level"};  // 10-bit units
    Output<Buffer<uint8_t>> output{"output", 3};

    // Output pixel (x, y) is raw pixel (x + margin, y + margin); the
    // stencils below read at most 7 raw pixels around it.
    static constexpr int margin = 8;

    void generate() {
        Var x("x"), y("y"), c("c"), v("v"), i("i"), j("j");

        // 10-bit sensor values, as int16 for signed colour differences.
        Func shifted("shifted");
        shifted(x, y) = cast<int16_t>(raw(x + margin, y + margin) >> 6);

        // Hot/dead pixel suppression: clamp each pixel to the range of its
        // four same-colour neighbours (two pixels away).
        Func denoised("denoised");
        {
            Expr n0 = shifted(x - 2, y), n1 = shifted(x + 2, y);
            Expr n2 = shifted(x, y - 2), n3 = shifted(x, y + 2);
            Expr lo = min(min(n0, n1), min(n2, n3));
            Expr hi = max(max(n0, n1), max(n2, n3));
            denoised(x, y) = clamp(shifted(x, y), lo, hi);
        }

        // Deinterleave the GRBG quads: (gr, r, b, gb) at quad (x, y).
        Func deinterleaved("deinterleaved");
        deinterleaved(x, y) = Tuple(denoised(2 * x, 2 * y), denoised(2 * x + 1, 2 * y),
                                    denoised(2 * x, 2 * y + 1), denoised(2 * x + 1, 2 * y + 1));
        auto gr = [&](Expr qx, Expr qy) { return deinterleaved(qx, qy)[0]; };
        auto r = [&](Expr qx, Expr qy) { return deinterleaved(qx, qy)[1]; };
        auto b = [&](Expr qx, Expr qy) { return deinterleaved(qx, qy)[2]; };
        auto gb = [&](Expr qx, Expr qy) { return deinterleaved(qx, qy)[3]; };

        // Edge-aware green at the red and blue sites: average along the
        // direction (horizontal or vertical) with the smaller gradient.
        auto pick = [](Expr h0, Expr h1, Expr v0, Expr v1) {
            Expr dh = absd(h0, h1), dv = absd(v0, v1);
            Expr sh = h0 + h1, sv = v0 + v1;
            return select(dh < dv, (sh + 1) >> 1, dv < dh, (sv + 1) >> 1, (sh + sv + 2) >> 2);
        };
        Func green("green");
        green(x, y) = Tuple(pick(gr(x, y), gr(x + 1, y), gb(x, y - 1), gb(x, y)),
                            pick(gb(x - 1, y), gb(x, y), gr(x, y), gr(x, y + 1)));
        auto g_r = [&](Expr qx, Expr qy) { return green(qx, qy)[0]; };
        auto g_b = [&](Expr qx, Expr qy) { return green(qx, qy)[1]; };

        // Red and blue where they are missing, by interpolating the colour
        // difference (r - g, b - g) from the nearest sites that have it;
        // across the diagonals, along the one with the smaller gradient.
        auto cr = [&](Expr qx, Expr qy) { return r(qx, qy) - g_r(qx, qy); };
        auto cb = [&](Expr qx, Expr qy) { return b(qx, qy) - g_b(qx, qy); };
        auto avg = [](Expr a0, Expr a1) { return (a0 + a1) >> 1; };
        auto diag = [&](Expr p0, Expr p1, Expr q0, Expr q1, Expr dp0, Expr dp1, Expr dq0,
                        Expr dq1) {
            Expr d1 = absd(p0, p1), d2 = absd(q0, q1);
            return select(d1 < d2, avg(dp0, dp1), d2 < d1, avg(dq0, dq1),
                          (dp0 + dp1 + dq0 + dq1) >> 2);
        };
        Func chroma("chroma");
        chroma(x, y) = Tuple(
            // r and b at the gr site: red neighbours left/right, blue up/down
            gr(x, y) + avg(cr(x - 1, y), cr(x, y)),
            gr(x, y) + avg(cb(x, y - 1), cb(x, y)),
            // r and b at the gb site: red up/down, blue left/right
            gb(x, y) + avg(cr(x, y), cr(x, y + 1)),
            gb(x, y) + avg(cb(x, y), cb(x + 1, y)),
            // b at the r site, r at the b site: diagonal neighbours
            g_r(x, y) + diag(b(x, y - 1), b(x + 1, y), b(x + 1, y - 1), b(x, y),
                             cb(x, y - 1), cb(x + 1, y), cb(x + 1, y - 1), cb(x, y)),
            g_b(x, y) + diag(r(x - 1, y), r(x, y + 1), r(x, y), r(x - 1, y + 1),
                             cr(x - 1, y), cr(x, y + 1), cr(x, y), cr(x - 1, y + 1)));

        // Reassemble full-resolution RGB from the quad values.
        Func demosaicked("demosaicked");
        {
            Expr qx = x / 2, qy = y / 2;
            Expr ex = (x % 2) == 0, ey = (y % 2) == 0;
            Expr rr = select(ey, select(ex, chroma(qx, qy)[0], r(qx, qy)),
                             select(ex, chroma(qx, qy)[5], chroma(qx, qy)[2]));
            Expr gg = select(ey, select(ex, gr(qx, qy), g_r(qx, qy)),
                             select(ex, g_b(qx, qy), gb(qx, qy)));
            Expr bb = select(ey, select(ex, chroma(qx, qy)[1], chroma(qx, qy)[4]),
                             select(ex, b(qx, qy), chroma(qx, qy)[3]));
            demosaicked(x, y) = Tuple(rr, gg, bb);
        }

        // Colour-correction matrix (3x4, last column an offset in units of
        // full scale), interpolated between two calibrations in inverse
        // colour temperature, then in 8.8 fixed point.
        const float m3200[3][4] = {{1.60f, -0.42f, -0.18f, -0.010f},
                                   {-0.24f, 1.46f, -0.22f, 0.000f},
                                   {0.02f, -0.71f, 1.69f, -0.020f}};
        const float m7000[3][4] = {{2.10f, -0.95f, -0.15f, -0.010f},
                                   {-0.31f, 1.52f, -0.21f, 0.010f},
                                   {-0.05f, -0.48f, 1.53f, -0.010f}};
        Func ccm("ccm");
        {
            Expr alpha = strict_float((1.0f / color_temp - 1.0f / 3200) /
                                      (1.0f / 7000 - 1.0f / 3200));
            Expr e3200 = 0.0f, e7000 = 0.0f;
            for (int ii = 0; ii < 3; ii++) {
                for (int jj = 0; jj < 4; jj++) {
                    Expr here = i == ii && j == jj;
                    e3200 = select(here, m3200[ii][jj], e3200);
                    e7000 = select(here, m7000[ii][jj], e7000);
                }
            }
            // The offset column is scaled to 10-bit full scale.
            Expr scale = select(j == 3, 1023.0f * 256.0f, 256.0f);
            Expr m = strict_float((e3200 + (e7000 - e3200) * alpha) * scale);
            ccm(i, j) = cast<int32_t>(strict_float(round(m)));
        }

        Func corrected("corrected");
        {
            Expr in[3] = {demosaicked(x, y)[0], demosaicked(x, y)[1], demosaicked(x, y)[2]};
            std::vector<Expr> out;
            for (int ii = 0; ii < 3; ii++) {
                Expr acc = ccm(ii, 3) + 128;
                for (int jj = 0; jj < 3; jj++) acc += ccm(ii, jj) * cast<int32_t>(in[jj]);
                out.push_back(cast<int16_t>(clamp(acc >> 8, 0, 1023)));
            }
            corrected(x, y) = Tuple(out);
        }

        // Tone curve over the 10-bit range: black/white levels, gamma,
        // then a blend towards a smoothstep S-curve for contrast.
        Func curve("curve");
        {
            Expr range = cast<float>(max(white_level - black_level, 1));
            Expr xf = strict_float(clamp(cast<float>(v - black_level) / range, 0.0f, 1.0f));
            Expr g = strict_float(pow(xf, 1.0f / gamma));
            Expr s = strict_float(g * g * (3.0f - 2.0f * g));
            Expr z = strict_float(g + contrast * (s - g));
            curve(v) = cast<uint8_t>(strict_float(clamp(z * 255.0f + 0.5f, 0.0f, 255.0f)));
        }

        Expr value = select(c == 0, corrected(x, y)[0], c == 1, corrected(x, y)[1],
                            corrected(x, y)[2]);
        output(x, y, c) = curve(clamp(value, 0, 1023));

        const int w = pt_size(2560, 160), h = pt_size(1920, 120);
        raw.set_estimates({{0, w + 2 * margin}, {0, h + 2 * margin}});
        color_temp.set_estimate(3700.0f);
        gamma.set_estimate(2.2f);
        contrast.set_estimate(0.5f);
        black_level.set_estimate(25);
        white_level.set_estimate(1023);
        output.set_estimates({{0, w}, {0, h}, {0, 3}});

        if (pt_manual()) {
            // Strips of 32 output rows spread over the cores. Per strip the
            // 10-bit raw rows, the deinterleaved quads (with the hot pixel
            // clamp inlined), green and chroma are computed at quad
            // resolution, vectorised over 16-bit lanes; the output then
            // reassembles, colour-corrects and tone-maps each vector of x
            // for the three channels at once. The curve LUT and the matrix
            // are computed once, at root.
            const int vec = natural_vector_size<int16_t>();
            Var yo("yo"), yi("yi");
            curve.compute_root().vectorize(v, natural_vector_size<float>());
            ccm.compute_root();
            output.bound(c, 0, 3)
                .reorder(c, x, y).unroll(c)
                .split(y, yo, yi, 32, TailStrategy::GuardWithIf).parallel(yo)
                .vectorize(x, vec, TailStrategy::GuardWithIf);
            shifted.compute_at(output, yo).vectorize(x, vec);
            deinterleaved.compute_at(output, yo).vectorize(x, vec);
            green.compute_at(output, yo).vectorize(x, vec);
            chroma.compute_at(output, yo).vectorize(x, vec);
        } else if (pt_reference()) {
            pt_example::schedule_reference({output});
        }
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(CameraPipe, camera_pipe)
