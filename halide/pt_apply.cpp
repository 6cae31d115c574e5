/* pt_apply.cpp: a checked struct pt_sched -> Halide scheduling calls, and
 * the snapshot that makes applying all-or-nothing.
 *
 * The schedule names things by position (fK, vN, rN) and names the dims its
 * splits create; Halide needs its own names. Per stage, a map from schedule
 * name to (Halide name, is RVar) starts from the model's dims (labels are
 * Halide's names) and grows with each split: the new dims take the
 * schedule's names verbatim and are RVars exactly when their parent is.
 * RVars are always passed as RVar: passed as a Var, Halide silently skips
 * its race check (../shared/HALIDE14.md §5).
 *
 * Halide changes a schedule before some of its own checks throw, so a
 * failed call leaves it half-changed. Every Func's FuncSchedule and every
 * stage's StageSchedule is copied first and assigned back on failure.
 */
#include "pt_adapter.h"

#include <utility>

namespace pt_adapter {

using namespace Halide;
using namespace Halide::Internal;

/* --- snapshot ------------------------------------------------------------- */

Snapshot::Snapshot(const Funcs &funcs)
{
	std::vector<Function> all(funcs.order);
	std::map<FunctionPtr, FunctionPtr> copied;

	/* .in() wrappers are not in the environment: save theirs too, and
	 * map each to itself so that deep_copy() does not clone it. */
	for (const Function &f : funcs.order)
		for (const auto &kv : f.schedule().wrappers()) {
			copied[kv.second] = kv.second;
			all.push_back(Function(kv.second));
		}
	for (const Function &f : all) {
		Saved s;
		s.func = f;
		s.sched = f.schedule().deep_copy(copied);
		s.stages.push_back(f.definition().schedule().get_copy());
		for (const Definition &d : f.updates())
			s.stages.push_back(d.schedule().get_copy());
		saved_.push_back(std::move(s));
	}
}

void Snapshot::restore()
{
	for (Saved &s : saved_) {
		s.func.schedule() = s.sched;
		s.func.definition().schedule() = s.stages[0];
		for (size_t k = 1; k < s.stages.size(); k++)
			s.func.update((int)k - 1).schedule() = s.stages[k];
	}
}

namespace {

struct Name {
	std::string halide;
	bool is_rvar;
};

using NameMap = std::map<std::string, Name>;

/* The names of a stage's original loops. */
NameMap model_names(const pt_model *m, int fi, int si)
{
	const pt_stage *st = pt_model_stage(m, fi, si);
	NameMap names;

	for (int d = 0; d < st->ndims; d++) {
		const pt_dim &dim = st->dims[d];
		std::string n = (dim.is_rvar ? "r" : "v") +
				std::to_string(dim.index);
		names[n] = Name{dim.label, dim.is_rvar != 0};
	}
	return names;
}

/* A split's results take the schedule's names; RVars beget RVars. */
void add_split(NameMap *names, const pt_directive &dir)
{
	auto it = names->find(dir.dim);
	bool rv = it != names->end() && it->second.is_rvar;

	(*names)[dir.outer] = Name{dir.outer, rv};
	(*names)[dir.inner] = Name{dir.inner, rv};
}

/* The names of one stage's loops after all its splits (compute_at and
 * store_at sites name these). A schedule may leave out stages without
 * directives. */
NameMap stage_names(const pt_model *m, const pt_sched *s, int fi, int si)
{
	const pt_sched_func &sf = s->funcs[fi];
	NameMap names = model_names(m, fi, si);

	if (si >= sf.nstages)
		return names;
	const pt_sched_stage &ss = sf.stages[si];
	for (int k = 0; k < ss.ndirs; k++)
		if (ss.dirs[k].kind == PT_DIR_SPLIT)
			add_split(&names, ss.dirs[k]);
	return names;
}

VarOrRVar var_of(const NameMap &names, const char *name, const char *func)
{
	auto it = names.find(name);

	if (it == names.end())
		fail(std::string("no loop ") + name + " in " + func);
	return VarOrRVar(it->second.halide, it->second.is_rvar);
}

TailStrategy tail_of(pt_tail t)
{
	switch (t) {
	case PT_TAIL_SHIFT:
		return TailStrategy::ShiftInwards;
	case PT_TAIL_ROUND:
		return TailStrategy::RoundUp;
	case PT_TAIL_GUARD:
	default:
		return TailStrategy::GuardWithIf;
	}
}

/* Names by func, then stage. */
using Names = std::vector<std::vector<NameMap>>;

void at_site(Func &f, const Funcs &funcs, const Names &names,
	     const pt_site &site, bool store)
{
	const std::vector<NameMap> &fs = names.at(site.func);
	VarOrRVar v = var_of(fs.back(), site.loop, "the consumer");
	Func c(funcs.order.at(site.func));

	if (store) {
		if (v.is_rvar)
			f.store_at(c, v.rvar);
		else
			f.store_at(c, v.var);
	} else {
		if (v.is_rvar)
			f.compute_at(c, v.rvar);
		else
			f.compute_at(c, v.var);
	}
}

bool same_site(const pt_site &a, const pt_site &b)
{
	return a.func == b.func && a.loop && b.loop &&
	       std::string(a.loop) == b.loop;
}

/* Replay a stage's directives in order; each names the loops as they are
 * at that point (`names` starts from the model's). */
void apply_stage(Stage &stage, NameMap names, const pt_sched_stage &ss,
		 const char *fn)
{
	for (int k = 0; k < ss.ndirs; k++) {
		const pt_directive &d = ss.dirs[k];
		switch (d.kind) {
		case PT_DIR_SPLIT: {
			VarOrRVar old = var_of(names, d.dim, fn);
			VarOrRVar outer(d.outer, old.is_rvar);
			VarOrRVar inner(d.inner, old.is_rvar);
			if (d.factor < 1 || d.factor > INT32_MAX)
				fail("split factor out of range");
			stage.split(old, outer, inner,
				    Expr((int32_t)d.factor), tail_of(d.tail));
			add_split(&names, d);
			break;
		}
		case PT_DIR_REORDER: {
			std::vector<VarOrRVar> order;
			for (size_t i = 0; i < d.order.nr; i++)
				order.push_back(
					var_of(names, d.order.v[i], fn));
			stage.reorder(order);
			break;
		}
		case PT_DIR_VECTORIZE:
			stage.vectorize(var_of(names, d.dim, fn));
			break;
		case PT_DIR_PARALLEL:
			stage.parallel(var_of(names, d.dim, fn));
			break;
		case PT_DIR_UNROLL:
			stage.unroll(var_of(names, d.dim, fn));
			break;
		}
	}
}

}  // namespace

std::string apply_schedule(const Funcs &funcs, const pt_model *m,
			   const pt_sched *s, int fail_at)
{
	Names names;
	int cur = -1;

	if (s->nfuncs != m->nfuncs || (size_t)m->nfuncs != funcs.order.size())
		return "the schedule has " + std::to_string(s->nfuncs) +
		       " Funcs, the pipeline " +
		       std::to_string(funcs.order.size());
	for (int i = 0; i < m->nfuncs; i++) {
		names.emplace_back();
		for (int k = 0; k < m->funcs[i].nstages; k++)
			names.back().push_back(stage_names(m, s, i, k));
	}

	Snapshot snap(funcs);
	try {
		for (int i = 0; i < m->nfuncs; i++) {
			cur = i;
			if (i == fail_at)
				throw CompileError(
					"failure injected by "
					"PROTUNE_TEST_APPLY_FAIL_AT");
			Function fn = funcs.order[i];
			Func f(fn);
			const pt_sched_func &sf = s->funcs[i];
			const char *label = m->funcs[i].label;

			switch (sf.compute) {
			case PT_COMPUTE_INLINE:
				f.compute_inline();
				break;
			case PT_COMPUTE_ROOT:
				f.compute_root();
				break;
			case PT_COMPUTE_AT:
				at_site(f, funcs, names, sf.compute_at, false);
				if (sf.store_root)
					f.store_root();
				else if (!same_site(sf.store_at,
						    sf.compute_at))
					at_site(f, funcs, names, sf.store_at,
						true);
				break;
			}
			for (int k = 0; k < sf.nstages &&
					k < m->funcs[i].nstages; k++) {
				Stage st(fn, k ? fn.update(k - 1)
					       : fn.definition(),
					 (size_t)k);
				apply_stage(st, model_names(m, i, k),
					    sf.stages[k], label);
			}
			/* An update stage given no directive keeps Halide's
			 * default loops on purpose; say so, or Halide warns
			 * that it "has not been scheduled" whenever another
			 * stage of the Func was. */
			for (int k = 1; k < m->funcs[i].nstages; k++) {
				Definition d = fn.update(k - 1);
				if (!d.schedule().touched())
					Stage(fn, d, (size_t)k).unscheduled();
			}
		}
	} catch (const std::exception &e) {
		snap.restore();
		std::string what = e.what();
		/* Halide's messages end with a newline and may span lines;
		 * keep one line. */
		for (char &c : what)
			if (c == '\n' || c == '\r')
				c = ' ';
		while (!what.empty() && what.back() == ' ')
			what.pop_back();
		std::string fname = "the pipeline";
		if (cur >= 0)
			fname = std::string(m->funcs[cur].label) + " (f" +
				std::to_string(cur) + ")";
		return "Halide rejected the schedule for " + fname + ": " +
		       what;
	}
	return "";
}

}  // namespace pt_adapter
