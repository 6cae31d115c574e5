// pt_example.h: conventions shared by the protune example generators.
//
// Every example generator declares two generator params besides Halide's own
// `target`, `auto_schedule` and `machine_params`:
//
//   schedule=manual|reference   (default manual) which hand-written schedule to
//                               apply when auto_schedule=false:
//                               manual    the expert schedule, the human
//                                         baseline the tuner must beat;
//                               reference every Func compute_root, serial,
//                                         scalar: obviously correct, used as
//                                         the bit-exact reference output.
//   size=bench|test             (default bench) which estimates to declare on
//                               inputs and outputs: realistic sizes for
//                               benchmarks, small ones for tests.
//
// With auto_schedule=true no directive is applied, only estimates: Halide's
// autoschedulers refuse Funcs that already carry scheduling directives.
#ifndef PT_EXAMPLE_H
#define PT_EXAMPLE_H

#include "Halide.h"

#include <map>
#include <string>
#include <vector>

namespace pt_example {

enum class Schedule { Manual, Reference };
enum class Size { Bench, Test };

inline const std::map<std::string, Schedule> &schedule_names() {
    static const std::map<std::string, Schedule> m = {
        {"manual", Schedule::Manual}, {"reference", Schedule::Reference}};
    return m;
}

inline const std::map<std::string, Size> &size_names() {
    static const std::map<std::string, Size> m = {
        {"bench", Size::Bench}, {"test", Size::Test}};
    return m;
}

// The reference schedule: every Func reachable from the outputs (except the
// outputs themselves, which are always root) is computed at root, in serial
// scalar loops. Reductions are therefore computed once, never recomputed per
// consumer point, and no directive changes evaluation order within a Func.
inline void schedule_reference(const std::vector<Halide::Func> &outputs) {
    std::vector<Halide::Internal::Function> fs;
    for (const Halide::Func &f : outputs) fs.push_back(f.function());
    std::map<std::string, Halide::Internal::Function> env =
        Halide::Internal::build_environment(fs);
    for (auto &kv : env) {
        bool is_output = false;
        for (const Halide::Func &f : outputs)
            if (f.name() == kv.first) is_output = true;
        if (!is_output) Halide::Func(kv.second).compute_root();
    }
}

}  // namespace pt_example

// Declares the two protune generator params inside a Generator class body.
#define PT_EXAMPLE_PARAMS                                                     \
    Halide::GeneratorParam<pt_example::Schedule> schedule{                    \
        "schedule", pt_example::Schedule::Manual,                             \
        pt_example::schedule_names()};                                        \
    Halide::GeneratorParam<pt_example::Size> size{                            \
        "size", pt_example::Size::Bench, pt_example::size_names()};           \
    /* Pick an estimate by size: pt_size(bench_value, test_value). */         \
    int pt_size(int bench, int test) const {                                  \
        return size == pt_example::Size::Bench ? bench : test;                \
    }                                                                         \
    /* true when the generator must apply its own manual schedule */         \
    bool pt_manual() const {                                                  \
        return !auto_schedule && schedule == pt_example::Schedule::Manual;    \
    }                                                                         \
    /* true when the generator must apply the reference schedule */          \
    bool pt_reference() const {                                               \
        return !auto_schedule && schedule == pt_example::Schedule::Reference; \
    }

#endif
