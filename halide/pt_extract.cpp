/* pt_extract.cpp: a Halide pipeline -> struct pt_model (pt_model.h is the
 * spec; ../shared/HALIDE14.md §2, §3 and §6 are the Halide facts used).
 *
 * Passes, each linear in the size of the pipeline:
 *   1. Funcs in Internal::topological_order (the index get_func() uses);
 *      refuse what the model cannot express (extern stages,
 *      specializations, Funcs that already carry splits).
 *   2. Inputs (buffer and scalar Parameters) in order of first use, walking
 *      each stage's RVar bounds, LHS, values and predicate in order.
 *   3. Stages, consumers first (reverse model order): a Func's region is
 *      complete once all its consumers are analyzed; outputs start from
 *      their estimates. Per stage: loop dims (bounded by the region and
 *      the RDom), op histogram, accesses (affine maps with rational
 *      coefficients, clamps, data-dependent marks) and the canonical
 *      definition text. Each access's range over the stage's loops is
 *      unioned into its producer's region. This is what boxes_required()
 *      gives (HALIDE14 §2.5), but exact where Halide's interval arithmetic
 *      is not (x/2 - 1 + 2*(x%2) over [-1, 32] is [-1, 16], not [-2, 17]),
 *      and at half the cost; indices the analysis cannot map fall back to
 *      bounds_of_expr_in_scope().
 *   4. The model is filled in model order, validated (pt_model_validate)
 *      and hashed (pt_model_hash).
 *
 * Every name that reaches the hashed text is positional (fK, iK, vN, rN,
 * let-bound tN); Halide's names are only labels, since they change between
 * processes and between the targets of a multi-target build.
 */
#include "pt_adapter.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <unistd.h>

namespace pt_adapter {

using namespace Halide;
using namespace Halide::Internal;

void fail(const std::string &what)
{
	throw CompileError("ProTune: " + what);
}

namespace {

/* --- small helpers -------------------------------------------------------- */

std::string type_str(Type t)
{
	char buf[32];
	const char *code = "?";

	if (t.is_bfloat())
		code = "bf";
	else if (t.is_float())
		code = "f";
	else if (t.is_uint())
		code = "u";
	else if (t.is_int())
		code = "i";
	else if (t.is_handle())
		code = "h";
	if (t.lanes() != 1)
		snprintf(buf, sizeof(buf), "%s%dx%d", code, t.bits(),
			 t.lanes());
	else
		snprintf(buf, sizeof(buf), "%s%d", code, t.bits());
	return buf;
}

pt_type to_pt_type(Type t, const std::string &what)
{
	pt_type r;

	if (t.lanes() != 1 || t.is_bfloat())
		fail(what + " has type " + type_str(t) +
		     ", which protune cannot model yet");
	if (t.is_float())
		r.code = PT_TYPE_FLOAT;
	else if (t.is_uint())
		r.code = PT_TYPE_UINT;
	else if (t.is_int())
		r.code = PT_TYPE_INT;
	else
		r.code = PT_TYPE_HANDLE;
	r.bits = t.bits();
	return r;
}

std::string expr_str(const Expr &e)
{
	std::ostringstream os;

	os << e;
	return os.str();
}

char *dup(const std::string &s)
{
	char *p = pt_model_strdup(s.c_str());

	if (!p)
		throw std::bad_alloc();
	return p;
}

template <typename T> T *xcalloc(size_t n)
{
	T *p = static_cast<T *>(calloc(n ? n : 1, sizeof(T)));

	if (!p)
		throw std::bad_alloc();
	return p;
}

pt_rat rat(int64_t num, int64_t den)
{
	pt_rat r;

	if (pt_rat_make(num, den, &r))
		fail("internal error: rational " + std::to_string(num) + "/" +
		     std::to_string(den) + " out of range");
	return r;
}

/* Halide's integer division and modulo: the remainder is never negative. */
int64_t euclid_div(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	int64_t q = a / b, r = a % b;
	if (r < 0)
		q = b > 0 ? q - 1 : q + 1;
	return q;
}

int64_t euclid_mod(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	int64_t r = a % b;
	if (r < 0)
		r += b > 0 ? b : -b;
	return r;
}

int64_t gcd64(int64_t a, int64_t b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Tags that vanish in lowering: they neither cost anything nor change a
 * value, so the op histogram and the access analysis skip them (the
 * definition text keeps them). strict_float changes float semantics but
 * costs nothing: the op histogram skips it too, the text keeps it. */
bool is_vanishing_tag(const Call *c)
{
	return c->is_intrinsic({Call::likely, Call::likely_if_innermost,
				Call::promise_clamped,
				Call::unsafe_promise_clamped});
}

bool is_load(const Call *c)
{
	return c->call_type == Call::Halide || c->call_type == Call::Image;
}

/* Replace parameters by their estimates (buffer mins and extents, scalar
 * params) and drop vanishing tags. What has no estimate stays. */
class Estimates : public IRMutator {
public:
	using IRMutator::mutate;

protected:
	using IRMutator::visit;

	Expr visit(const Variable *op) override
	{
		if (!op->param.defined())
			return op;
		const Parameter &p = op->param;
		if (!p.is_buffer()) {
			Expr est = p.estimate();
			if (!est.defined())
				return op;
			return est.type() == op->type ? est
						      : cast(op->type, est);
		}
		/* NAME.min.D or NAME.extent.D */
		size_t dot = op->name.rfind('.');
		if (dot == std::string::npos || dot == 0)
			return op;
		size_t dot2 = op->name.rfind('.', dot - 1);
		if (dot2 == std::string::npos)
			return op;
		std::string field = op->name.substr(dot2 + 1, dot - dot2 - 1);
		int d = atoi(op->name.c_str() + dot + 1);
		if (d < 0 || d >= p.dimensions())
			return op;
		Expr est;
		if (field == "min")
			est = p.min_constraint_estimate(d);
		else if (field == "extent")
			est = p.extent_constraint_estimate(d);
		if (!est.defined())
			return op;
		return est.type() == op->type ? est : cast(op->type, est);
	}

	Expr visit(const Call *op) override
	{
		if (is_vanishing_tag(op))
			return mutate(op->args[0]);
		return IRMutator::visit(op);
	}
};

Expr with_estimates(const Expr &e)
{
	Estimates m;

	return m.mutate(e);
}

/* An integer constant after estimates and simplification, or false. */
bool const_value(const Expr &e, int64_t *out)
{
	if (!e.defined())
		return false;
	Expr s = simplify(with_estimates(e));
	if (const int64_t *i = as_const_int(s)) {
		*out = *i;
		return true;
	}
	if (const uint64_t *u = as_const_uint(s)) {
		if (*u > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)*u;
		return true;
	}
	return false;
}

class HasLoad : public IRVisitor {
public:
	bool found = false;

protected:
	using IRVisitor::visit;
	void visit(const Call *op) override
	{
		if (is_load(op)) {
			found = true;
			return;
		}
		IRVisitor::visit(op);
	}
};

bool has_load(const Expr &e)
{
	HasLoad v;

	e.accept(&v);
	return v.found;
}

class HasLet : public IRVisitor {
public:
	bool found = false;

protected:
	using IRVisitor::visit;
	void visit(const Let *) override { found = true; }
};

Expr without_lets(const Expr &e)
{
	HasLet v;

	e.accept(&v);
	return v.found ? substitute_in_all_lets(e) : e;
}

double ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(
		       std::chrono::steady_clock::now() - t0)
		.count();
}

/* --- the stage being modelled --------------------------------------------- */

struct StageInfo {
	int func = 0, stage = 0;
	Function f;
	Definition def;
	std::vector<std::string> dims;      /* loop names, innermost first */
	std::vector<int64_t> dmin, dextent;
	std::vector<int64_t> rv_min, rv_extent;
	Scope<Interval> scope;              /* every loop's constant range */

	int dim_of(const std::string &name) const
	{
		for (size_t i = 0; i < dims.size(); i++)
			if (dims[i] == name)
				return (int)i;
		return -1;
	}
};

/* --- integer evaluation for offset ranges --------------------------------- */

/* Evaluates the integer expressions an index is made of at one point of
 * the loop dims; false when it meets anything else. */
class Eval {
public:
	const StageInfo *st;
	const int64_t *point;   /* a value per stage dim */

	bool eval(const Expr &e, int64_t *out)
	{
		if (const IntImm *i = e.as<IntImm>()) {
			*out = i->value;
			return true;
		}
		if (const UIntImm *u = e.as<UIntImm>()) {
			*out = (int64_t)u->value;
			return true;
		}
		if (const Variable *v = e.as<Variable>()) {
			int d = st->dim_of(v->name);
			if (d < 0)
				return false;
			*out = point[d];
			return true;
		}
		int64_t a, b, c;
		if (const Add *op = e.as<Add>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a + b, true);
		if (const Sub *op = e.as<Sub>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a - b, true);
		if (const Mul *op = e.as<Mul>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a * b, true);
		if (const Div *op = e.as<Div>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = euclid_div(a, b), true);
		if (const Mod *op = e.as<Mod>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = euclid_mod(a, b), true);
		if (const Min *op = e.as<Min>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = std::min(a, b), true);
		if (const Max *op = e.as<Max>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = std::max(a, b), true);
		if (const EQ *op = e.as<EQ>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a == b, true);
		if (const NE *op = e.as<NE>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a != b, true);
		if (const LT *op = e.as<LT>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a < b, true);
		if (const LE *op = e.as<LE>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a <= b, true);
		if (const GT *op = e.as<GT>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a > b, true);
		if (const GE *op = e.as<GE>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a >= b, true);
		if (const And *op = e.as<And>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a && b, true);
		if (const Or *op = e.as<Or>())
			return bin(op->a, op->b, &a, &b) &&
			       (*out = a || b, true);
		if (const Not *op = e.as<Not>())
			return eval(op->a, &a) && (*out = !a, true);
		if (const Select *op = e.as<Select>()) {
			if (!eval(op->condition, &c))
				return false;
			return eval(c ? op->true_value : op->false_value, out);
		}
		if (const Cast *op = e.as<Cast>()) {
			if (!(op->type.is_int() || op->type.is_uint()) ||
			    !(op->value.type().is_int() ||
			      op->value.type().is_uint()))
				return false;
			if (!eval(op->value, &a))
				return false;
			int bits = op->type.bits();
			if (bits < 64) {
				uint64_t m = ((uint64_t)1 << bits) - 1;
				uint64_t u = (uint64_t)a & m;
				if (op->type.is_int() &&
				    (u >> (bits - 1)) & 1)
					u |= ~m;
				a = (int64_t)u;
			}
			*out = a;
			return true;
		}
		return false;
	}

private:
	bool bin(const Expr &x, const Expr &y, int64_t *a, int64_t *b)
	{
		return eval(x, a) && eval(y, b);
	}
};

/* --- the extractor -------------------------------------------------------- */

/* One candidate map for a producer coordinate (a select gives two). */
struct Alt {
	bool affine = false;
	bool partial = false;           /* not affine; coef and offsets known,
					 * the offset varies with `varies` */
	std::vector<unsigned char> varies;
	std::vector<pt_rat> coef;
	pt_rat off_min{0, 1}, off_max{0, 1};
	bool has_lo = false, has_hi = false;
	int64_t lo = 0, hi = 0;
};

struct Clamp {
	bool has_lo = false, has_hi = false;
	int64_t lo = 0, hi = 0;

	void lower(int64_t v)
	{
		lo = has_lo ? std::max(lo, v) : v;
		has_lo = true;
	}
	void upper(int64_t v)
	{
		hi = has_hi ? std::min(hi, v) : v;
		has_hi = true;
	}
	void apply(Alt *a) const
	{
		if (has_lo)
			a->lo = a->has_lo ? std::max(a->lo, lo) : lo;
		if (has_hi)
			a->hi = a->has_hi ? std::min(a->hi, hi) : hi;
		a->has_lo |= has_lo;
		a->has_hi |= has_hi;
	}
};

/* The accesses of a stage to one producer from one load (or an update's
 * left-hand side): per coordinate, its alternatives; every combination is
 * one pt_access. */
struct AccessData {
	pt_access_kind kind = PT_ACCESS_FUNC;
	int producer = 0, value_index = 0;
	bool data_dep = false, is_store = false;
	std::vector<std::vector<Alt>> coords;
};

/* A stage, analyzed while walking consumers first (its Func's region must
 * be known), emitted into the model later in model order. */
struct StageData {
	std::vector<std::string> labels;
	std::vector<int> is_rvar, index;
	std::vector<int64_t> dmin, dextent;
	std::map<std::string, int64_t> ops;
	std::vector<AccessData> accesses;
	std::string def;
};

int64_t ceil_div(int64_t a, int64_t b)
{
	return -euclid_div(-a, b);
}

/* The integer range of one coordinate alternative over the stage's loops,
 * clamps applied; false when it is unbounded. */
bool coord_range(const Alt &a, const std::vector<int64_t> &dmin,
		 const std::vector<int64_t> &dextent, int64_t *lo, int64_t *hi)
{
	if (a.affine) {
		int64_t den = a.off_min.den;
		den = den / gcd64(den, a.off_max.den) * a.off_max.den;
		for (const pt_rat &c : a.coef)
			den = den / gcd64(den, c.den) * c.den;
		int64_t l = a.off_min.num * (den / a.off_min.den);
		int64_t h = a.off_max.num * (den / a.off_max.den);
		for (size_t d = 0; d < a.coef.size(); d++) {
			int64_t k = a.coef[d].num * (den / a.coef[d].den);
			int64_t x0 = dmin[d], x1 = dmin[d] + dextent[d] - 1;
			l += k > 0 ? k * x0 : k * x1;
			h += k > 0 ? k * x1 : k * x0;
		}
		*lo = ceil_div(l, den);
		*hi = euclid_div(h, den);
	} else {
		if (!a.has_lo || !a.has_hi)
			return false;
		*lo = a.lo;
		*hi = a.hi;
		return true;
	}
	if (a.has_lo) {
		*lo = std::max(*lo, a.lo);
		*hi = std::max(*hi, a.lo);
	}
	if (a.has_hi) {
		*lo = std::min(*lo, a.hi);
		*hi = std::min(*hi, a.hi);
	}
	return true;
}

/* Free variables of an expression (lets already substituted). */
class FreeVars : public IRVisitor {
public:
	std::vector<std::string> names;

protected:
	using IRVisitor::visit;
	void visit(const Variable *op) override
	{
		if (std::find(names.begin(), names.end(), op->name) ==
		    names.end())
			names.push_back(op->name);
	}
};

/* The constant divisors of an expression; false when one is not constant. */
class Divisors : public IRVisitor {
public:
	int64_t lcm = 1;
	bool ok = true;

protected:
	using IRVisitor::visit;
	void take(const Expr &d)
	{
		const int64_t *c = as_const_int(d);
		if (!c || *c == 0 || *c > 4096 || *c < -4096) {
			ok = false;
			return;
		}
		int64_t v = *c < 0 ? -*c : *c;
		lcm = lcm / gcd64(lcm, v) * v;
		if (lcm > 4096)
			ok = false;
	}
	void visit(const Div *op) override
	{
		take(op->b);
		IRVisitor::visit(op);
	}
	void visit(const Mod *op) override
	{
		take(op->b);
		IRVisitor::visit(op);
	}
};

class Extractor;

/* Counts operations per point. */
class OpCounter : public IRVisitor {
public:
	std::map<std::string, int64_t> ops;

protected:
	using IRVisitor::visit;

	void bump(const char *kind, Type t)
	{
		std::string name(kind);
		name += '.';
		name += type_str(t);
		ops[name]++;
	}

#define PT_OP(node, kind, ty)                                           \
	void visit(const node *op) override                             \
	{                                                               \
		bump(kind, ty);                                         \
		IRVisitor::visit(op);                                   \
	}
	PT_OP(Add, "add", op->type)
	PT_OP(Sub, "sub", op->type)
	PT_OP(Mul, "mul", op->type)
	PT_OP(Div, "div", op->type)
	PT_OP(Mod, "mod", op->type)
	PT_OP(Min, "min", op->type)
	PT_OP(Max, "max", op->type)
	PT_OP(EQ, "eq", op->a.type())
	PT_OP(NE, "ne", op->a.type())
	PT_OP(LT, "lt", op->a.type())
	PT_OP(LE, "le", op->a.type())
	PT_OP(GT, "gt", op->a.type())
	PT_OP(GE, "ge", op->a.type())
	PT_OP(And, "and", op->type)
	PT_OP(Or, "or", op->type)
	PT_OP(Not, "not", op->type)
	PT_OP(Select, "select", op->type)
	PT_OP(Cast, "cast", op->type)
#undef PT_OP

	void visit(const Call *op) override
	{
		if (is_vanishing_tag(op) ||
		    op->is_intrinsic(Call::strict_float)) {
			op->args[0].accept(this);
			return;
		}
		if (is_load(op))
			bump("load", op->type);
		else
			ops["call." + op->name]++;
		IRVisitor::visit(op);
	}
};

class Extractor {
public:
	Extractor(const Pipeline &p, const Target &t, const MachineParams &mp)
		: pipeline_(p), target_(t), params_(mp)
	{
	}

	ModelPtr run(Funcs *funcs, ExtractTimes *times);

	/* Used by the printer. */
	int func_index(const std::string &name) const
	{
		auto it = func_index_.find(name);
		return it == func_index_.end() ? -1 : it->second;
	}
	int input_index(const Parameter &p) const
	{
		auto it = input_index_.find(p.name());
		return it == input_index_.end() ? -1 : it->second;
	}
	int func_outputs(int i) const
	{
		return (int)funcs_[i].output_types().size();
	}

private:
	const Pipeline &pipeline_;
	const Target &target_;
	const MachineParams &params_;

	std::vector<Function> funcs_;
	std::map<std::string, Function> env_;
	std::map<std::string, int> func_index_;
	std::vector<bool> is_output_;
	std::vector<Parameter> inputs_;
	std::map<std::string, int> input_index_;
	FuncValueBounds fvb_;

	/* regions, by func index then arg */
	std::vector<std::vector<int64_t>> rmin_, rmax_;
	std::vector<bool> rset_;

	std::string fname(int i) const
	{
		return "Func " + funcs_[i].name() + " (f" + std::to_string(i) +
		       ")";
	}

	void order_funcs();
	void collect_inputs();
	void add_input(const Parameter &p);
	void rvar_bounds(int fi, int si, const Definition &def,
			 std::vector<int64_t> *mins,
			 std::vector<int64_t> *extents);
	void union_region(int fi, const std::vector<int64_t> &lo,
			  const std::vector<int64_t> &hi);
	std::vector<std::string> index_funcs() const;
	void output_regions();
	void require(const StageInfo &st, const AccessData &a);
	void setup_stage(StageInfo *st, int fi, int si);
	void fill_header(pt_model *m);
	void fill_inputs(pt_model *m);
	StageData analyze_stage(const StageInfo &st);
	void emit_stage(pt_model *m, const StageData &d, int fi, int si);
	AccessData access(const StageInfo &st, const Call *c,
			  const std::vector<Expr> &args);
	std::vector<Alt> analyze(const StageInfo &st, const Expr &arg,
				 bool *data_dep);
	std::vector<Alt> analyze_branch(const StageInfo &st, const Expr &e,
					const Clamp &outer, int depth);
	bool affine(const StageInfo &st, const Expr &e, Alt *a);
	bool partial(const StageInfo &st, const Expr &e, Alt *a);
	bool linear(const StageInfo &st, const Expr &e,
		    std::vector<int64_t> *coef, int64_t *c);
	void range(const StageInfo &st, const Expr &e, Alt *a);
	std::string def_text(const StageInfo &st);
};

/* --- pass 1: Funcs -------------------------------------------------------- */

void Extractor::order_funcs()
{
	std::vector<Function> outs;

	for (const Func &f : pipeline_.outputs())
		outs.push_back(f.function());
	env_ = build_environment(outs);
	std::vector<std::string> order = topological_order(outs, env_);
	for (size_t i = 0; i < order.size(); i++) {
		funcs_.push_back(env_.at(order[i]));
		func_index_[order[i]] = (int)i;
	}
	is_output_.assign(funcs_.size(), false);
	for (const Function &f : outs)
		is_output_[func_index_.at(f.name())] = true;

	for (size_t i = 0; i < funcs_.size(); i++) {
		const Function &f = funcs_[i];
		if (f.has_extern_definition())
			fail(fname(i) + " has an extern definition (" +
			     f.extern_function_name() +
			     "), which protune cannot schedule yet");
		size_t nst = f.updates().size() + 1;
		for (size_t s = 0; s < nst; s++) {
			const Definition &d =
				s ? f.update((int)s - 1) : f.definition();
			if (!d.specializations().empty())
				fail(fname(i) + " stage " + std::to_string(s) +
				     " has specializations, which protune "
				     "cannot schedule yet");
			if (!d.schedule().splits().empty())
				fail(fname(i) + " stage " + std::to_string(s) +
				     " already has scheduling directives "
				     "(splits); ProTune schedules unscheduled "
				     "pipelines only");
		}
	}
}

/* --- pass 2: inputs ------------------------------------------------------- */

class InputWalker : public IRVisitor {
public:
	std::vector<Parameter> *found;
	std::string where;

protected:
	using IRVisitor::visit;
	void visit(const Call *op) override
	{
		if (op->call_type == Call::Image) {
			if (op->param.defined())
				found->push_back(op->param);
			else
				fail(where + " reads the embedded buffer " +
				     op->name + ", which protune cannot "
				     "model yet");
		}
		IRVisitor::visit(op);
	}
	void visit(const Variable *op) override
	{
		if (op->param.defined())
			found->push_back(op->param);
		else if (op->image.defined())
			fail(where + " uses the embedded buffer " + op->name +
			     ", which protune cannot model yet");
	}
};

void Extractor::add_input(const Parameter &p)
{
	if (input_index_.count(p.name()))
		return;
	input_index_[p.name()] = (int)inputs_.size();
	inputs_.push_back(p);
}

void Extractor::collect_inputs()
{
	std::vector<Parameter> found;
	InputWalker w;

	w.found = &found;
	for (size_t i = 0; i < funcs_.size(); i++) {
		const Function &f = funcs_[i];
		w.where = fname(i);
		size_t nst = f.updates().size() + 1;
		for (size_t s = 0; s < nst; s++) {
			const Definition &d =
				s ? f.update((int)s - 1) : f.definition();
			for (const ReductionVariable &rv :
			     d.schedule().rvars()) {
				rv.min.accept(&w);
				rv.extent.accept(&w);
			}
			for (const Expr &e : d.args())
				e.accept(&w);
			for (const Expr &e : d.values())
				e.accept(&w);
			if (d.predicate().defined())
				d.predicate().accept(&w);
			for (const Parameter &p : found)
				add_input(p);
			found.clear();
		}
	}
}

/* --- pass 3: regions ------------------------------------------------------ */

/* Names of the Funcs whose values are used as indices (inside the args of
 * a load, or in an update's left-hand side). */
class IndexLoads : public IRVisitor {
public:
	std::set<std::string> names;
	int depth = 0;

	void index(const Expr &e)
	{
		depth++;
		e.accept(this);
		depth--;
	}

protected:
	using IRVisitor::visit;
	void visit(const Call *op) override
	{
		if (!is_load(op)) {
			IRVisitor::visit(op);
			return;
		}
		if (depth && op->call_type == Call::Halide)
			names.insert(op->name);
		for (const Expr &a : op->args)
			index(a);
	}
};

/* Bounds of Func values are needed only where a value becomes an index
 * (a histogram bin, a LUT entry). Halide's compute_function_value_bounds()
 * is slow on long chains of wide sums (90 ms on the 16-stage stencil
 * chain), so it runs on those Funcs alone; a Func left out is bounded by its
 * type, which is what Halide's bounds inference falls back to anyway. */
std::vector<std::string> Extractor::index_funcs() const
{
	IndexLoads v;
	std::vector<std::string> out;

	for (const Function &f : funcs_) {
		size_t nst = f.updates().size() + 1;
		for (size_t s = 0; s < nst; s++) {
			const Definition &d =
				s ? f.update((int)s - 1) : f.definition();
			for (const Expr &e : d.args())
				v.index(e);
			for (const Expr &e : d.values())
				without_lets(e).accept(&v);
			if (d.predicate().defined())
				without_lets(d.predicate()).accept(&v);
		}
	}
	for (const Function &f : funcs_)
		if (v.names.count(f.name()))
			out.push_back(f.name());
	return out;
}


void Extractor::rvar_bounds(int fi, int si, const Definition &def,
			    std::vector<int64_t> *mins,
			    std::vector<int64_t> *extents)
{
	for (const ReductionVariable &rv : def.schedule().rvars()) {
		int64_t mn, ex;
		if (!const_value(rv.min, &mn) || !const_value(rv.extent, &ex))
			fail("cannot bound RVar " + rv.var + " of " +
			     fname(fi) + " stage " + std::to_string(si) +
			     ": min " + expr_str(rv.min) + ", extent " +
			     expr_str(rv.extent) +
			     " (is an estimate missing?)");
		mins->push_back(mn);
		extents->push_back(ex);
	}
}

void Extractor::union_region(int fi, const std::vector<int64_t> &lo,
			     const std::vector<int64_t> &hi)
{
	if (!rset_[fi]) {
		rmin_[fi] = lo;
		rmax_[fi] = hi;
		rset_[fi] = true;
		return;
	}
	for (size_t d = 0; d < lo.size(); d++) {
		rmin_[fi][d] = std::min(rmin_[fi][d], lo[d]);
		rmax_[fi][d] = std::max(rmax_[fi][d], hi[d]);
	}
}

/* Outputs' regions come from their estimates; every other Func's is the
 * union of what its consumers' accesses read (require()), computed
 * consumers first in run(). */
void Extractor::output_regions()
{
	size_t n = funcs_.size();

	rmin_.assign(n, {});
	rmax_.assign(n, {});
	rset_.assign(n, false);
	for (size_t i = 0; i < n; i++) {
		if (!is_output_[i])
			continue;
		const Function &f = funcs_[i];
		std::vector<int64_t> lo, hi;
		for (size_t d = 0; d < f.args().size(); d++) {
			const Bound *b = nullptr;
			for (const Bound &e : f.schedule().estimates())
				if (e.var == f.args()[d])
					b = &e;
			int64_t mn, ex;
			if (!b || !const_value(b->min, &mn) ||
			    !const_value(b->extent, &ex))
				fail("output " + fname(i) +
				     " has no estimate for dim " +
				     std::to_string(d) + " (" + f.args()[d] +
				     "): call set_estimates() on it");
			lo.push_back(mn);
			hi.push_back(mn + ex - 1);
		}
		union_region((int)i, lo, hi);
	}
}

/* Union what access `a` of stage `st` reads into its producer's region
 * (inputs and the stage's own Func are skipped). */
void Extractor::require(const StageInfo &st, const AccessData &a)
{
	int p = a.producer;
	std::vector<int64_t> lo, hi;

	if (a.kind != PT_ACCESS_FUNC || p == st.func ||
	    a.coords.size() != funcs_[p].args().size())
		return;
	for (size_t d = 0; d < a.coords.size(); d++) {
		int64_t l = 0, h = 0;
		for (size_t k = 0; k < a.coords[d].size(); k++) {
			int64_t al, ah;
			if (!coord_range(a.coords[d][k], st.dmin, st.dextent,
					 &al, &ah))
				fail("cannot bound the region of " + fname(p) +
				     " along dim " + std::to_string(d) +
				     " read by " + fname(st.func) + " stage " +
				     std::to_string(st.stage) +
				     " (is an estimate missing or an index "
				     "unbounded?)");
			l = k ? std::min(l, al) : al;
			h = k ? std::max(h, ah) : ah;
		}
		lo.push_back(l);
		hi.push_back(h);
	}
	union_region(p, lo, hi);
}

void Extractor::setup_stage(StageInfo *st, int fi, int si)
{
	const Function &f = funcs_[fi];

	st->func = fi;
	st->stage = si;
	st->f = f;
	st->def = si ? f.update(si - 1) : f.definition();
	rvar_bounds(fi, si, st->def, &st->rv_min, &st->rv_extent);
	const std::vector<ReductionVariable> &rvs = st->def.schedule().rvars();
	const std::vector<Dim> &dims = st->def.schedule().dims();
	for (const Dim &d : dims) {
		if (d.var == Var::outermost().name())
			continue;
		int64_t mn = 0, ex = 0;
		bool found = false;
		if (d.is_rvar()) {
			for (size_t r = 0; r < rvs.size(); r++)
				if (rvs[r].var == d.var) {
					mn = st->rv_min[r];
					ex = st->rv_extent[r];
					found = true;
				}
		} else {
			for (size_t a = 0; a < f.args().size(); a++)
				if (f.args()[a] == d.var) {
					mn = rmin_[fi][a];
					ex = rmax_[fi][a] - rmin_[fi][a] + 1;
					found = true;
				}
		}
		if (!found)
			fail(fname(fi) + " stage " + std::to_string(si) +
			     " loops over " + d.var +
			     ", which is neither a pure var nor an RVar of it");
		st->dims.push_back(d.var);
		st->dmin.push_back(mn);
		st->dextent.push_back(ex);
		st->scope.push(d.var, Interval(make_const(Int(32), mn),
					       make_const(Int(32),
							  mn + ex - 1)));
	}
}

/* The linear fast path: sums of constant multiples of loop dims. */
bool Extractor::linear(const StageInfo &st, const Expr &e,
		       std::vector<int64_t> *coef, int64_t *c)
{
	size_t n = st.dims.size();

	if (const IntImm *i = e.as<IntImm>()) {
		coef->assign(n, 0);
		*c = i->value;
		return true;
	}
	if (const Variable *v = e.as<Variable>()) {
		int d = st.dim_of(v->name);
		if (d < 0)
			return false;
		coef->assign(n, 0);
		(*coef)[d] = 1;
		*c = 0;
		return true;
	}
	std::vector<int64_t> ca, cb;
	int64_t a, b;
	int sign = 0;
	const Expr *x = nullptr, *y = nullptr;
	if (const Add *add = e.as<Add>())
		x = &add->a, y = &add->b, sign = 1;
	else if (const Sub *sub = e.as<Sub>())
		x = &sub->a, y = &sub->b, sign = -1;
	if (sign) {
		if (!linear(st, *x, &ca, &a) || !linear(st, *y, &cb, &b))
			return false;
		for (size_t i = 0; i < n; i++)
			ca[i] += sign * cb[i];
		*coef = std::move(ca);
		*c = a + sign * b;
		return true;
	}
	if (const Mul *op = e.as<Mul>()) {
		if (!linear(st, op->a, &ca, &a) || !linear(st, op->b, &cb, &b))
			return false;
		bool ka = std::all_of(ca.begin(), ca.end(),
				      [](int64_t v) { return v == 0; });
		bool kb = std::all_of(cb.begin(), cb.end(),
				      [](int64_t v) { return v == 0; });
		if (!ka && !kb)
			return false;
		if (ka) {
			std::swap(ca, cb);
			std::swap(a, b);
		}
		/* now b is the constant factor */
		for (size_t i = 0; i < n; i++)
			ca[i] *= b;
		*coef = std::move(ca);
		*c = a * b;
		return true;
	}
	return false;
}

/* The rational-coefficient test (HALIDE14 §3): with L the lcm of the
 * constant divisors, e(v + L) - e(v) must be a constant n_v for every loop
 * dim v; the coefficient is n_v / L and the offset ranges over one period. */
bool Extractor::affine(const StageInfo &st, const Expr &e, Alt *a)
{
	size_t n = st.dims.size();
	std::vector<int64_t> lc;
	int64_t c;

	if (linear(st, e, &lc, &c)) {
		a->affine = true;
		a->coef.clear();
		for (int64_t v : lc)
			a->coef.push_back(rat(v, 1));
		a->off_min = a->off_max = rat(c, 1);
		return true;
	}

	FreeVars fv;
	e.accept(&fv);
	std::vector<int> used;
	for (const std::string &name : fv.names) {
		int d = st.dim_of(name);
		if (d < 0)
			return false;
		used.push_back(d);
	}
	Divisors dv;
	e.accept(&dv);
	if (!dv.ok)
		return false;
	int64_t L = dv.lcm;

	std::vector<int64_t> num(n, 0);
	for (int d : used) {
		const std::string &v = st.dims[d];
		Expr shifted = substitute(v,
					  Variable::make(Int(32), v) +
						  make_const(Int(32), L),
					  e);
		Expr diff = simplify(shifted - e);
		const int64_t *k = as_const_int(diff);
		if (!k)
			return false;
		num[d] = *k;
	}

	/* Offsets over one period: L^|used| points. */
	int64_t points = 1;
	for (size_t i = 0; i < used.size(); i++) {
		points *= L;
		if (points > 65536)
			return false;
	}
	std::vector<int64_t> pt(n, 0);
	Eval ev;
	ev.st = &st;
	ev.point = pt.data();
	int64_t lo = 0, hi = 0;
	for (int64_t p = 0; p < points; p++) {
		int64_t rest = p;
		for (int d : used) {
			pt[d] = rest % L;
			rest /= L;
		}
		int64_t val;
		if (!ev.eval(e, &val))
			return false;
		int64_t off = val * L;
		for (int d : used)
			off -= num[d] * pt[d];
		if (p == 0 || off < lo)
			lo = off;
		if (p == 0 || off > hi)
			hi = off;
	}
	a->affine = true;
	a->coef.clear();
	for (size_t d = 0; d < n; d++)
		a->coef.push_back(rat(num[d], L));
	a->off_min = rat(lo, L);
	a->off_max = rat(hi, L);
	return true;
}

/* A coordinate that is not affine but is an affine part plus a bounded
 * part in other loops, as x + (2 r1 - 1) r0 (model-format.md, partial
 * coordinates). Each loop the expression uses either steps it by a
 * constant (e(v + 1) - e(v) simplifies to one: its coefficient) or varies
 * it; what is left once the affine part is taken away must use only the
 * varying loops and have constant bounds over the loops' estimates.
 * Anything else is left non-affine. */
bool Extractor::partial(const StageInfo &st, const Expr &e, Alt *a)
{
	if (e.type() != Int(32))
		return false;
	FreeVars fv;
	e.accept(&fv);
	size_t n = st.dims.size();
	std::vector<int64_t> k(n, 0);
	std::vector<unsigned char> var(n, 0);
	bool varying = false;
	Expr lin = make_zero(Int(32));
	for (const std::string &name : fv.names) {
		int d = st.dim_of(name);
		if (d < 0)
			return false;
		Expr v = Variable::make(Int(32), name);
		Expr diff = simplify(substitute(name, v + 1, e) - e);
		const int64_t *c = as_const_int(diff);
		if (c) {
			k[d] = *c;
			if (*c)
				lin = lin + make_const(Int(32), *c) * v;
		} else {
			var[d] = 1;
			varying = true;
		}
	}
	if (!varying)
		return false;
	Expr rest = simplify(e - lin);
	FreeVars rv;
	rest.accept(&rv);
	for (const std::string &name : rv.names) {
		int d = st.dim_of(name);
		if (d < 0 || !var[d])
			return false;
	}
	Interval iv = bounds_of_expr_in_scope(rest, st.scope, fvb_);
	int64_t lo, hi;
	if (!iv.has_lower_bound() || !iv.has_upper_bound() ||
	    !const_value(iv.min, &lo) || !const_value(iv.max, &hi) || lo > hi)
		return false;
	a->partial = true;
	a->coef.clear();
	for (size_t d = 0; d < n; d++)
		a->coef.push_back(rat(k[d], 1));
	a->off_min = rat(lo, 1);
	a->off_max = rat(hi, 1);
	a->varies = var;
	return true;
}

/* The constant range of a non-affine index, where bounds inference finds
 * one. */
void Extractor::range(const StageInfo &st, const Expr &e, Alt *a)
{
	Interval iv = bounds_of_expr_in_scope(e, st.scope, fvb_);
	int64_t v;

	if (iv.has_lower_bound() && const_value(iv.min, &v)) {
		a->lo = a->has_lo ? std::max(a->lo, v) : v;
		a->has_lo = true;
	}
	if (iv.has_upper_bound() && const_value(iv.max, &v)) {
		a->hi = a->has_hi ? std::min(a->hi, v) : v;
		a->has_hi = true;
	}
}

bool uses_loop(const StageInfo &st, const Expr &e)
{
	FreeVars fv;

	e.accept(&fv);
	for (const std::string &n : fv.names)
		if (st.dim_of(n) >= 0)
			return true;
	return false;
}

/* Peel clamps (min/max with a loop-free side), split selects into
 * alternatives, and analyze each leaf. */
std::vector<Alt> Extractor::analyze_branch(const StageInfo &st, const Expr &in,
					   const Clamp &outer, int depth)
{
	Clamp cl = outer;
	Expr e = in;
	int64_t v;

	for (;;) {
		const Min *mn = e.as<Min>();
		const Max *mx = e.as<Max>();
		if (!mn && !mx)
			break;
		Expr a = mn ? mn->a : mx->a, b = mn ? mn->b : mx->b;
		Expr keep, bound;
		if (!uses_loop(st, b))
			keep = a, bound = b;
		else if (!uses_loop(st, a))
			keep = b, bound = a;
		else
			break;
		if (const_value(bound, &v)) {
			if (mn)
				cl.upper(v);
			else
				cl.lower(v);
		}
		e = keep;
	}

	std::vector<Alt> out;
	if (const Select *sel = e.as<Select>()) {
		if (depth < 2) {
			std::vector<Alt> t = analyze_branch(st, sel->true_value,
							    cl, depth + 1);
			std::vector<Alt> f = analyze_branch(
				st, sel->false_value, cl, depth + 1);
			out.insert(out.end(), t.begin(), t.end());
			out.insert(out.end(), f.begin(), f.end());
			return out;
		}
	}
	Alt a;
	if (!affine(st, e, &a)) {
		a = Alt();
		partial(st, e, &a);
		range(st, e, &a);
	}
	cl.apply(&a);
	out.push_back(a);
	return out;
}

std::vector<Alt> Extractor::analyze(const StageInfo &st, const Expr &arg,
				    bool *data_dep)
{
	Expr e = with_estimates(without_lets(arg));

	if (has_load(e)) {
		Alt a;
		*data_dep = true;
		range(st, e, &a);
		return {a};
	}
	{
		std::vector<int64_t> lc;
		int64_t c;
		if (linear(st, e, &lc, &c)) {
			Alt a;
			a.affine = true;
			for (int64_t k : lc)
				a.coef.push_back(rat(k, 1));
			a.off_min = a.off_max = rat(c, 1);
			return {a};
		}
	}
	e = simplify(e);
	return analyze_branch(st, e, Clamp(), 0);
}

/* Collects load calls in order. */
/* Collects load calls in order, with the values of the lets around each
 * substituted into its args (a let-bound value used as an index, as in
 * "let t = lum(x) in lut(t)", is data-dependent). */
class Loads : public IRVisitor {
public:
	struct Load {
		const Call *call;
		std::vector<Expr> args;
	};
	std::vector<Load> loads;

protected:
	using IRVisitor::visit;
	std::vector<std::pair<std::string, Expr>> lets_;

	Expr subst(const Expr &e) const
	{
		if (lets_.empty())
			return e;
		std::map<std::string, Expr> m;
		for (const auto &kv : lets_)
			m[kv.first] = kv.second;
		return substitute(m, e);
	}

	void visit(const Let *op) override
	{
		op->value.accept(this);
		lets_.emplace_back(op->name, subst(op->value));
		op->body.accept(this);
		lets_.pop_back();
	}

	void visit(const Call *op) override
	{
		if (is_load(op)) {
			Load l;
			l.call = op;
			for (const Expr &a : op->args)
				l.args.push_back(subst(a));
			loads.push_back(std::move(l));
		}
		IRVisitor::visit(op);
	}
};

void set_coord(pt_coord *c, const Alt &a, size_t ndims)
{
	c->affine = a.affine;
	if (a.affine) {
		c->coef = xcalloc<pt_rat>(ndims);
		for (size_t d = 0; d < ndims; d++)
			c->coef[d] = a.coef[d];
		c->off_min = a.off_min;
		c->off_max = a.off_max;
	} else if (a.partial && ndims > 0) {
		c->partial = 1;
		c->coef = xcalloc<pt_rat>(ndims);
		c->varies = xcalloc<unsigned char>(ndims);
		for (size_t d = 0; d < ndims; d++) {
			c->coef[d] = a.coef[d];
			c->varies[d] = a.varies[d];
		}
		c->off_min = a.off_min;
		c->off_max = a.off_max;
	} else {
		c->off_min = c->off_max = pt_rat{0, 1};
	}
	c->has_clamp_min = a.has_lo;
	c->has_clamp_max = a.has_hi;
	c->clamp_min = a.lo;
	c->clamp_max = a.hi;
}

/* One access (or, for selects, one per combination of alternatives) from a
 * load Call, or from an update's left-hand side when is_store. */
AccessData Extractor::access(const StageInfo &st, const Call *c,
			     const std::vector<Expr> &args)
{
	AccessData a;

	a.is_store = !c;
	if (a.is_store) {
		a.producer = st.func;
	} else if (c->call_type == Call::Halide) {
		a.producer = func_index(c->name);
		a.value_index = c->value_index;
		if (a.producer < 0)
			fail(fname(st.func) + " calls " + c->name +
			     ", which is not in the pipeline");
	} else {
		a.kind = PT_ACCESS_INPUT;
		a.producer = input_index(c->param);
		if (a.producer < 0)
			fail(fname(st.func) + " reads " + c->name +
			     ", an unknown input");
	}

	size_t combos = 1;
	for (const Expr &e : args) {
		a.coords.push_back(analyze(st, e, &a.data_dep));
		combos *= a.coords.back().size();
	}
	if (combos > 16) {
		/* Too many select combinations: describe each such
		 * coordinate by its range alone. */
		for (size_t i = 0; i < args.size(); i++) {
			if (a.coords[i].size() == 1)
				continue;
			Alt r;
			range(st, simplify(with_estimates(without_lets(
					  args[i]))),
			      &r);
			a.coords[i] = {r};
		}
	}
	return a;
}

/* --- the canonical definition text ---------------------------------------- */

/* The grammar of a stage's def text (one line, the same bytes in every
 * process and for every target of a multi-target build):
 *   stage   := "fK(" args ") = " value [" if " expr]
 *              [" rdom" (" rN(" expr ", " expr ")")+]
 *              (" bound vN(" expr|"_" ", " expr|"_" ")")*
 *   value   := expr | "{" expr (", " expr)* "}"       (Tuples)
 *   expr    := "(" expr OP expr ")"    OP: + - * / % == != < <= > >= && ||
 *            | "min(" e ", " e ")" | "max(" e ", " e ")" | "!(" e ")"
 *            | "select(" c ", " t ", " f ")" | "cast<T>(" e ")"
 *            | "fK(" args ")" [".V"]  a Func (.V: the Tuple value read)
 *            | "iK(" args ")" | "iK" | "iK.min.D" | "iK.extent.D"  inputs
 *            | NAME "<T>(" args ")"   any other call (extern, intrinsic)
 *            | "(let tN = " e " in " e ")"
 *            | "vN" | "rN" | "tN"     pure var, RVar, let-bound value
 *            | INT                    an i32 constant
 *            | "(T)" INT              another integer type (u1 for bools)
 *            | "(T)" HEXFLOAT         C99 %a of the value: exact
 *            | "\"" STRING "\""
 * T is a type as pt_type_print writes it (u8, i32, f32, ...). Every name
 * is positional; every leaf is typed, and operators take the type of their
 * operands, so the text determines every node's type. The RDom bounds are
 * printed as written, before estimates are substituted. */
class DefPrinter : public IRVisitor {
public:
	DefPrinter(const Extractor &x, const StageInfo &st, std::string *out)
		: x_(x), st_(st), out_(*out)
	{
	}

	void print(const Expr &e) { e.accept(this); }

private:
	const Extractor &x_;
	const StageInfo &st_;
	std::string &out_;
	std::vector<std::pair<std::string, std::string>> lets_;
	int nlets_ = 0;

	void typed_prefix(Type t)
	{
		out_ += '(';
		out_ += type_str(t);
		out_ += ')';
	}

	void bin(const Expr &a, const char *op, const Expr &b)
	{
		out_ += '(';
		a.accept(this);
		out_ += ' ';
		out_ += op;
		out_ += ' ';
		b.accept(this);
		out_ += ')';
	}

	void fn(const char *name, const Expr &a, const Expr &b)
	{
		out_ += name;
		out_ += '(';
		a.accept(this);
		out_ += ", ";
		b.accept(this);
		out_ += ')';
	}

	void args(const std::vector<Expr> &v)
	{
		out_ += '(';
		for (size_t i = 0; i < v.size(); i++) {
			if (i)
				out_ += ", ";
			v[i].accept(this);
		}
		out_ += ')';
	}

protected:
	using IRVisitor::visit;

	void visit(const IntImm *op) override
	{
		if (op->type != Int(32))
			typed_prefix(op->type);
		out_ += std::to_string(op->value);
	}
	void visit(const UIntImm *op) override
	{
		typed_prefix(op->type);
		out_ += std::to_string(op->value);
	}
	void visit(const FloatImm *op) override
	{
		char buf[64];
		typed_prefix(op->type);
		snprintf(buf, sizeof(buf), "%a", op->value);
		out_ += buf;
	}
	void visit(const StringImm *op) override
	{
		char buf[8];
		out_ += '"';
		for (unsigned char ch : op->value) {
			if (ch == '"' || ch == '\\') {
				out_ += '\\';
				out_ += (char)ch;
			} else if (ch < 0x20 || ch >= 0x7f) {
				snprintf(buf, sizeof(buf), "\\x%02x", ch);
				out_ += buf;
			} else {
				out_ += (char)ch;
			}
		}
		out_ += '"';
	}
	void visit(const Cast *op) override
	{
		out_ += "cast<" + type_str(op->type) + ">(";
		op->value.accept(this);
		out_ += ')';
	}
	void visit(const Variable *op) override
	{
		for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
			if (it->first == op->name) {
				out_ += it->second;
				return;
			}
		if (op->param.defined()) {
			int k = x_.input_index(op->param);
			const std::string &pn = op->param.name();
			out_ += 'i';
			out_ += std::to_string(k);
			if (op->name != pn) {
				if (op->name.compare(0, pn.size(), pn) == 0)
					out_ += op->name.substr(pn.size());
				else
					out_ += "?" + op->name;
			}
			return;
		}
		const std::vector<std::string> &fa = st_.f.args();
		for (size_t i = 0; i < fa.size(); i++)
			if (fa[i] == op->name) {
				out_ += 'v';
				out_ += std::to_string(i);
				return;
			}
		const std::vector<ReductionVariable> &rv =
			st_.def.schedule().rvars();
		for (size_t i = 0; i < rv.size(); i++)
			if (rv[i].var == op->name) {
				out_ += 'r';
				out_ += std::to_string(i);
				return;
			}
		/* Not expected in a definition; keep it visible. */
		out_ += "?" + op->name;
	}
	void visit(const Add *op) override { bin(op->a, "+", op->b); }
	void visit(const Sub *op) override { bin(op->a, "-", op->b); }
	void visit(const Mul *op) override { bin(op->a, "*", op->b); }
	void visit(const Div *op) override { bin(op->a, "/", op->b); }
	void visit(const Mod *op) override { bin(op->a, "%", op->b); }
	void visit(const Min *op) override { fn("min", op->a, op->b); }
	void visit(const Max *op) override { fn("max", op->a, op->b); }
	void visit(const EQ *op) override { bin(op->a, "==", op->b); }
	void visit(const NE *op) override { bin(op->a, "!=", op->b); }
	void visit(const LT *op) override { bin(op->a, "<", op->b); }
	void visit(const LE *op) override { bin(op->a, "<=", op->b); }
	void visit(const GT *op) override { bin(op->a, ">", op->b); }
	void visit(const GE *op) override { bin(op->a, ">=", op->b); }
	void visit(const And *op) override { bin(op->a, "&&", op->b); }
	void visit(const Or *op) override { bin(op->a, "||", op->b); }
	void visit(const Not *op) override
	{
		out_ += "!(";
		op->a.accept(this);
		out_ += ')';
	}
	void visit(const Select *op) override
	{
		out_ += "select(";
		op->condition.accept(this);
		out_ += ", ";
		op->true_value.accept(this);
		out_ += ", ";
		op->false_value.accept(this);
		out_ += ')';
	}
	void visit(const Call *op) override
	{
		if (op->call_type == Call::Halide) {
			int k = x_.func_index(op->name);
			out_ += 'f';
			out_ += std::to_string(k);
			args(op->args);
			if (k >= 0 && x_.func_outputs(k) > 1)
				out_ += "." + std::to_string(op->value_index);
			return;
		}
		if (op->call_type == Call::Image) {
			out_ += 'i';
			out_ += std::to_string(x_.input_index(op->param));
			args(op->args);
			return;
		}
		out_ += op->name;
		out_ += '<';
		out_ += type_str(op->type);
		out_ += '>';
		args(op->args);
	}
	void visit(const Let *op) override
	{
		std::string t = "t" + std::to_string(nlets_++);
		out_ += "(let " + t + " = ";
		op->value.accept(this);
		out_ += " in ";
		lets_.emplace_back(op->name, t);
		op->body.accept(this);
		lets_.pop_back();
		out_ += ')';
	}
	void visit(const Ramp *op) override
	{
		out_ += "ramp(";
		op->base.accept(this);
		out_ += ", ";
		op->stride.accept(this);
		out_ += ", " + std::to_string(op->lanes) + ")";
	}
	void visit(const Broadcast *op) override
	{
		out_ += "broadcast(";
		op->value.accept(this);
		out_ += ", " + std::to_string(op->lanes) + ")";
	}
	void visit(const Load *op) override
	{
		fail("unexpected Load of " + op->name + " in " +
		     st_.f.name() + " before lowering");
	}
	void visit(const Shuffle *) override
	{
		fail("unexpected Shuffle in " + st_.f.name() +
		     " before lowering");
	}
	void visit(const VectorReduce *) override
	{
		fail("unexpected VectorReduce in " + st_.f.name() +
		     " before lowering");
	}
};

/* "fK(lhs) = value" or "= {a, b}", " if pred", then the RVar bounds as
 * written (" rdom r0(min, extent) ...") and, for the pure definition, any
 * Func::bound() (" bound v0(min, extent)"). */
std::string Extractor::def_text(const StageInfo &st)
{
	std::string out;
	DefPrinter p(*this, st, &out);
	const Definition &d = st.def;

	out += 'f';
	out += std::to_string(st.func);
	out += '(';
	for (size_t i = 0; i < d.args().size(); i++) {
		if (i)
			out += ", ";
		p.print(d.args()[i]);
	}
	out += ") = ";
	if (d.values().size() > 1)
		out += '{';
	for (size_t i = 0; i < d.values().size(); i++) {
		if (i)
			out += ", ";
		p.print(d.values()[i]);
	}
	if (d.values().size() > 1)
		out += '}';
	if (d.predicate().defined() && !is_const_one(d.predicate())) {
		out += " if ";
		p.print(d.predicate());
	}
	const std::vector<ReductionVariable> &rvs = d.schedule().rvars();
	if (!rvs.empty()) {
		out += " rdom";
		for (size_t i = 0; i < rvs.size(); i++) {
			out += " r" + std::to_string(i) + "(";
			p.print(rvs[i].min);
			out += ", ";
			p.print(rvs[i].extent);
			out += ')';
		}
	}
	if (st.stage == 0 && !st.f.schedule().bounds().empty()) {
		const std::vector<std::string> &fa = st.f.args();
		for (size_t a = 0; a < fa.size(); a++)
			for (const Bound &b : st.f.schedule().bounds()) {
				if (b.var != fa[a])
					continue;
				out += " bound v" + std::to_string(a) + "(";
				if (b.min.defined())
					p.print(b.min);
				else
					out += '_';
				out += ", ";
				if (b.extent.defined())
					p.print(b.extent);
				else
					out += '_';
				out += ')';
			}
	}
	return out;
}

StageData Extractor::analyze_stage(const StageInfo &st)
{
	StageData sd;
	const Definition &d = st.def;
	const std::vector<ReductionVariable> &rvs = d.schedule().rvars();
	const std::vector<std::string> &fa = st.f.args();

	for (size_t i = 0; i < st.dims.size(); i++) {
		int rv = 0, index = -1;
		for (size_t r = 0; r < rvs.size(); r++)
			if (rvs[r].var == st.dims[i]) {
				rv = 1;
				index = (int)r;
			}
		for (size_t a = 0; index < 0 && a < fa.size(); a++)
			if (fa[a] == st.dims[i])
				index = (int)a;
		sd.labels.push_back(st.dims[i]);
		sd.is_rvar.push_back(rv);
		sd.index.push_back(index);
	}
	sd.dmin = st.dmin;
	sd.dextent = st.dextent;

	bool pred = d.predicate().defined() && !is_const_one(d.predicate());
	OpCounter ops;
	Loads loads;
	if (st.stage)
		for (const Expr &e : d.args()) {
			e.accept(&ops);
			e.accept(&loads);
		}
	for (const Expr &e : d.values()) {
		e.accept(&ops);
		e.accept(&loads);
	}
	if (pred) {
		d.predicate().accept(&ops);
		d.predicate().accept(&loads);
	}
	sd.ops = std::move(ops.ops);
	for (const Loads::Load &l : loads.loads)
		sd.accesses.push_back(access(st, l.call, l.args));
	if (st.stage)
		sd.accesses.push_back(access(st, nullptr, d.args()));
	sd.def = def_text(st);
	return sd;
}

void Extractor::emit_stage(pt_model *m, const StageData &sd, int fi, int si)
{
	pt_stage *s = pt_model_add_stage(m);
	size_t nd = sd.labels.size();

	if (!s)
		throw std::bad_alloc();
	for (size_t i = 0; i < nd; i++) {
		pt_dim *dim = pt_stage_add_dim(s);
		if (!dim)
			throw std::bad_alloc();
		dim->label = dup(sd.labels[i]);
		dim->is_rvar = sd.is_rvar[i];
		dim->index = sd.index[i];
		dim->min = sd.dmin[i];
		dim->extent = sd.dextent[i];
	}
	for (const auto &kv : sd.ops)
		if (pt_stage_add_op(s, kv.first.c_str(), kv.second))
			throw std::bad_alloc();
	for (const AccessData &a : sd.accesses) {
		size_t combos = 1;
		for (const std::vector<Alt> &c : a.coords)
			combos *= c.size();
		for (size_t k = 0; k < combos; k++) {
			pt_access *acc = pt_stage_add_access(s);
			if (!acc)
				throw std::bad_alloc();
			acc->kind = a.kind;
			acc->producer = a.producer;
			acc->value_index = a.value_index;
			acc->count = 1;
			acc->data_dependent = a.data_dep;
			acc->is_store = a.is_store;
			acc->ncoords = (int)a.coords.size();
			acc->coords = xcalloc<pt_coord>(a.coords.size());
			size_t rest = k;
			for (size_t i = 0; i < a.coords.size(); i++) {
				size_t na = a.coords[i].size();
				set_coord(&acc->coords[i],
					  a.coords[i][rest % na], nd);
				rest /= na;
			}
		}
	}
	s->def = dup(sd.def);
	int rc = pt_stage_canonicalize(s);
	if (rc)
		fail("internal error: cannot canonicalize " + fname(fi) +
		     " stage " + std::to_string(si) + ": " + pt_strerror(rc));
}

/* --- header --------------------------------------------------------------- */

void Extractor::fill_header(pt_model *m)
{
	std::vector<std::string> argv = self_cmdline();
	std::string gen, fn_f, fn_n;

	for (size_t i = 0; i + 1 < argv.size(); i++) {
		if (argv[i] == "-g")
			gen = argv[i + 1];
		else if (argv[i] == "-f")
			fn_f = argv[i + 1];
		else if (argv[i] == "-n")
			fn_n = argv[i + 1];
	}
	char *exe = realpath("/proc/self/exe", nullptr);
	if (!argv.empty() && exe)
		argv[0] = exe;
	free(exe);

	m->halide_version = dup("14.0.0");
	m->target = dup(target_.to_string());
	m->machine_params = dup(params_.to_string());
	m->generator = dup(gen);
	m->function = dup(!fn_f.empty() ? fn_f : fn_n);
	for (const std::string &a : argv)
		if (pt_strvec_push(&m->argv, a.c_str()))
			throw std::bad_alloc();
}

uint64_t estimate_bits(const Parameter &p)
{
	Expr e = simplify(p.estimate());
	Type t = p.type();

	if (const int64_t *i = as_const_int(e))
		return (uint64_t)*i;
	if (const uint64_t *u = as_const_uint(e))
		return *u;
	if (const double *f = as_const_float(e)) {
		if (t.bits() == 64) {
			uint64_t b;
			memcpy(&b, f, sizeof(b));
			return b;
		}
		if (t.bits() == 32) {
			float v = (float)*f;
			uint32_t b;
			memcpy(&b, &v, sizeof(b));
			return b;
		}
		if (t.bits() == 16)
			return float16_t(*f).to_bits();
	}
	fail("the estimate of input " + p.name() + " (" + expr_str(e) +
	     ") is not a constant");
}

void Extractor::fill_inputs(pt_model *m)
{
	for (size_t k = 0; k < inputs_.size(); k++) {
		const Parameter &p = inputs_[k];
		std::string what = "input " + p.name() + " (i" +
				   std::to_string(k) + ")";
		pt_input *in = pt_model_add_input(m);
		if (!in)
			throw std::bad_alloc();
		in->label = dup(p.name());
		in->is_buffer = p.is_buffer();
		in->type = to_pt_type(p.type(), what);
		if (!p.is_buffer()) {
			in->has_estimate = p.estimate().defined();
			if (in->has_estimate)
				in->est_bits = estimate_bits(p);
			continue;
		}
		in->ndims = p.dimensions();
		in->est_min = xcalloc<int64_t>(in->ndims);
		in->est_extent = xcalloc<int64_t>(in->ndims);
		for (int d = 0; d < in->ndims; d++) {
			int64_t mn, ex;
			if (!const_value(p.min_constraint_estimate(d), &mn) ||
			    !const_value(p.extent_constraint_estimate(d), &ex))
				fail(what + " has no estimate for dim " +
				     std::to_string(d) +
				     ": call set_estimates() on it");
			in->est_min[d] = mn;
			in->est_extent[d] = ex;
		}
	}
}


ModelPtr Extractor::run(Funcs *funcs, ExtractTimes *times)
{
	auto t0 = std::chrono::steady_clock::now();
	ModelPtr m(pt_model_new());

	if (!m)
		throw std::bad_alloc();
	order_funcs();
	collect_inputs();
	fill_header(m.get());
	fill_inputs(m.get());   /* before regions: a missing input estimate
				 * is best reported as such */
	fvb_ = compute_function_value_bounds(index_funcs(), env_);
	output_regions();

	/* Consumers first: a Func's region is complete once every consumer
	 * stage was analyzed. */
	size_t n = funcs_.size();
	std::vector<std::vector<StageData>> data(n);
	for (size_t k = n; k-- > 0;) {
		if (!rset_[k])
			fail("cannot bound the region of " + fname(k) +
			     ": no consumer requires a bounded region of it");
		size_t nst = funcs_[k].updates().size() + 1;
		for (size_t s = 0; s < nst; s++) {
			StageInfo st;
			setup_stage(&st, (int)k, (int)s);
			data[k].push_back(analyze_stage(st));
			for (const AccessData &a : data[k].back().accesses)
				require(st, a);
		}
	}

	for (size_t i = 0; i < funcs_.size(); i++) {
		const Function &f = funcs_[i];
		pt_func *pf = pt_model_add_func(m.get());
		if (!pf)
			throw std::bad_alloc();
		pf->label = dup(f.name());
		pf->ntypes = (int)f.output_types().size();
		pf->types = xcalloc<pt_type>(pf->ntypes);
		for (int t = 0; t < pf->ntypes; t++)
			pf->types[t] =
				to_pt_type(f.output_types()[t], fname(i));
		pf->nargs = (int)f.args().size();
		pf->is_output = is_output_[i];
		pf->can_inline = f.can_be_inlined() && f.updates().empty() &&
				 !is_output_[i];
		pf->region_min = xcalloc<int64_t>(pf->nargs);
		pf->region_extent = xcalloc<int64_t>(pf->nargs);
		for (int a = 0; a < pf->nargs; a++) {
			pf->region_min[a] = rmin_[i][a];
			pf->region_extent[a] = rmax_[i][a] - rmin_[i][a] + 1;
		}
		for (size_t s = 0; s < data[i].size(); s++)
			emit_stage(m.get(), data[i][s], (int)i, (int)s);
	}

	struct pt_error err = PT_ERROR_INIT;
	if (pt_model_validate(m.get(), &err))
		fail("internal error: the extracted model is invalid: " +
		     std::string(err.msg));
	if (times)
		times->extract_ms = ms_since(t0);

	auto t1 = std::chrono::steady_clock::now();
	int rc = pt_model_hash(m.get());
	if (rc)
		fail(std::string("internal error: cannot hash the model: ") +
		     pt_strerror(rc));
	if (times)
		times->print_hash_ms = ms_since(t1);

	if (funcs) {
		funcs->order = funcs_;
		funcs->env = env_;
	}
	return m;
}

}  // namespace

std::vector<std::string> self_cmdline()
{
	std::ifstream in("/proc/self/cmdline", std::ios::binary);
	std::string all((std::istreambuf_iterator<char>(in)),
			std::istreambuf_iterator<char>());
	std::vector<std::string> argv;
	size_t start = 0;

	while (start < all.size()) {
		size_t end = all.find('\0', start);
		if (end == std::string::npos)
			end = all.size();
		argv.push_back(all.substr(start, end - start));
		start = end + 1;
	}
	return argv;
}

ModelPtr extract_model(const Pipeline &p, const Target &t,
		       const MachineParams &mp, Funcs *funcs,
		       ExtractTimes *times)
{
	Extractor x(p, t, mp);

	return x.run(funcs, times);
}

}  // namespace pt_adapter
