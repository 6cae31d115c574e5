// pt_plugin.cpp: libprotune_halide.so, the ProTune autoscheduler plugin for
// Halide 14 generators (`-p libprotune_halide.so -s ProTune
// auto_schedule=true`). The only code in protune that includes Halide.h.
//
// This release registers the autoscheduler so that builds can load it and
// reach it; it cannot yet schedule a pipeline, and says so with a Halide
// CompileError (what Halide's own user errors throw) rather than emitting
// anything.
#include "Halide.h"

#include "config.h"

namespace {

void pt_autoschedule(const Halide::Pipeline &pipeline, const Halide::Target &,
                     const Halide::MachineParams &,
                     Halide::AutoSchedulerResults *) {
    std::string outputs;
    for (const Halide::Func &f : pipeline.outputs())
        outputs += (outputs.empty() ? "" : ", ") + f.name();
    throw Halide::CompileError(
        "ProTune autoscheduler (protune " PT_VERSION "): cannot schedule "
        "pipeline " + outputs + " yet: the Halide adapter is not built in "
        "this release. Build with auto_schedule=false or another "
        "autoscheduler.");
}

struct Register {
    Register() { Halide::Pipeline::add_autoscheduler("ProTune", pt_autoschedule); }
} register_protune;

}  // namespace
