/* pt_adapter.h: what the three files of the ProTune Halide plugin share.
 *
 * The plugin translates and decides nothing:
 *   pt_extract.cpp  Halide pipeline -> struct pt_model (the C contract,
 *                   include/protune/pt_model.h);
 *   pt_apply.cpp    struct pt_sched -> Halide scheduling calls, with a
 *                   snapshot of every Func's schedule so that a schedule is
 *                   applied whole or not at all;
 *   pt_plugin.cpp   registration and the flow (extract, fetch a schedule
 *                   from a file or a protune server, check it in C, apply).
 * Legality is decided by pt_sched_check() in C before anything is applied.
 *
 * Errors: the functions here throw Halide::CompileError whose message
 * starts with "ProTune: " (what Halide's own user errors throw, so the
 * generator reports it and exits non-zero), except apply_schedule(), which
 * returns its failure as a string because a server may answer again.
 *
 * Ownership: models and schedules are C structs held in unique_ptrs with
 * the C destructors. Nothing here keeps global state.
 */
#ifndef PROTUNE_PT_ADAPTER_H
#define PROTUNE_PT_ADAPTER_H

#include "Halide.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "protune/pt_error.h"
#include "protune/pt_model.h"
#include "protune/pt_proto.h"
#include "protune/pt_sched.h"
#include "protune/pt_spawn.h"
#include "protune/pt_strbuf.h"
#include "protune/pt_strvec.h"
#include "protune/pt_time.h"
}

namespace pt_adapter {

struct ModelFree {
	void operator()(pt_model *m) const { pt_model_free(m); }
};
struct SchedFree {
	void operator()(pt_sched *s) const { pt_sched_free(s); }
};
using ModelPtr = std::unique_ptr<pt_model, ModelFree>;
using SchedPtr = std::unique_ptr<pt_sched, SchedFree>;

/* Throw Halide::CompileError("ProTune: " + what). */
[[noreturn]] void fail(const std::string &what);

/* The pipeline's Funcs in model order (Internal::topological_order of the
 * outputs: the index Pipeline::get_func() uses). */
struct Funcs {
	std::vector<Halide::Internal::Function> order;
	std::map<std::string, Halide::Internal::Function> env;
};

/* Timings of one extraction, in milliseconds. */
struct ExtractTimes {
	double extract_ms = 0, print_hash_ms = 0;
};

/* Extract the model of `p` for the concrete target `t`: fills every field
 * of pt_model.h, validates it (a failure is a bug in this file and throws)
 * and computes its key (pt_model_hash). `funcs` receives the Funcs in model
 * order. Throws "ProTune: ..." naming the Func, RVar or input when the
 * pipeline cannot be modelled (missing estimate, unbounded region, extern
 * stage, specialization, Func already scheduled). */
ModelPtr extract_model(const Halide::Pipeline &p, const Halide::Target &t,
		       const Halide::MachineParams &mp, Funcs *funcs,
		       ExtractTimes *times);

/* The command line of this process (/proc/self/cmdline). */
std::vector<std::string> self_cmdline();

/* A copy of every schedule reachable from the pipeline's Funcs (each Func's
 * FuncSchedule, each stage's StageSchedule, and those of .in() wrappers),
 * assigned back by restore(). */
class Snapshot {
public:
	explicit Snapshot(const Funcs &funcs);
	void restore();

private:
	struct Saved {
		Halide::Internal::Function func;
		Halide::Internal::FuncSchedule sched;
		std::vector<Halide::Internal::StageSchedule> stages;
	};
	std::vector<Saved> saved_;
};

/* Apply `s` (which passed pt_sched_check against `m`) to the Funcs. On
 * success returns "". If Halide throws, every schedule is restored to what
 * it was before the call and the message is returned:
 * "Halide rejected the schedule for LABEL (fK): what".
 * fail_at >= 0 is a test hook: an error is raised just before Func number
 * fail_at is scheduled, after the Funcs before it were (so that tests can
 * check that a half-applied schedule is rolled back). */
std::string apply_schedule(const Funcs &funcs, const pt_model *m,
			   const pt_sched *s, int fail_at = -1);

}  // namespace pt_adapter

#endif
