# difftest.sh: differential correctness of schedules applied by the plugin.
# Sourced by tests/t/t1100-differential.sh and `make check-long`; needs
# test-lib.sh's environment (PT_BUILD_DIR, PT_SRCDIR, PATH with build/bin),
# examples/pt-example.sh, and PT_HALIDE_INCDIR.
#
# For one example: a reference library (every Func root, serial) and the
# candidates are all built for target PT_DIFF_TARGET, which adds
# strict_float: Halide and LLVM then keep float arithmetic exactly as
# written (no reassociation, no FMA contraction), so any schedule gives
# output bit-identical to the reference's, and the comparison is exact for
# every example, floats included.
#
# Each candidate is a random schedule (`protune random MODEL --seed N`, or
# with PT_DIFF_DRAW=space a random complete state of the search space,
# `protune space MODEL --seed N`)
# applied through PROTUNE_SCHEDULE_FILE. An outcome line per candidate goes
# to the report: "NAME SEED ok|refused|genfail|runfail|differs REASON".

PT_DIFF_TARGET=${PT_DIFF_TARGET:-$(protune host-target)-strict_float}
# A candidate whose generator run takes longer than this many seconds is a
# failure ("gentimeout"): a schedule must not make the build crawl.
PT_DIFF_GEN_TIMEOUT=${PT_DIFF_GEN_TIMEOUT:-300}

# pt_diff_gen NAME DIR [ARGS...]: run NAME's generator into DIR at test size.
pt_diff_gen() {
	_n=$1 _d=$2
	shift 2
	mkdir -p "$_d" &&
	timeout "$PT_DIFF_GEN_TIMEOUT" \
		"$PT_BUILD_DIR/ex/bin/$_n.generator" -g "$_n" -o "$_d" \
		-e static_library,h,registration -n "$_n" \
		target="$PT_DIFF_TARGET" size=test "$@" >"$_d/gen.log" 2>&1
}

# pt_diff_link NAME DIR: link DIR/rungen from DIR/NAME.a.
pt_diff_link() {
	c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" \
		"$PT_BUILD_DIR/ex/obj/RunGenMain.o" "$2/$1.registration.cpp" \
		"$2/$1.a" -ldl -lpthread -o "$2/rungen" >"$2/link.log" 2>&1
}

# pt_diff_plugin_args: what makes a generator run use the ProTune plugin.
pt_diff_plugin_args() {
	printf '%s\n' -p "$PT_BUILD_DIR/lib/libprotune_halide.so" -s ProTune \
		auto_schedule=true
}

# pt_diff_setup NAME: in the current directory, build and run the reference
# (ref/, output ref.tmp), and build NAME through the plugin with the
# server's answer (base/), dumping the model to NAME.model; the baseline's
# output must match too.
pt_diff_setup() {
	pt_diff_gen "$1" ref schedule=reference &&
	pt_diff_link "$1" ref &&
	pt_rungen_run ref/rungen ref.tmp 1 &&
	PROTUNE_DUMP_MODEL=$1.model pt_diff_gen "$1" base \
		$(pt_diff_plugin_args) &&
	test -s "$1.model" &&
	pt_diff_link "$1" base &&
	pt_rungen_run base/rungen base.tmp 1 &&
	pt-imgcmp ref.tmp base.tmp
}

# pt_diff_one NAME SEED REPORT: one random schedule; appends its outcome to
# REPORT and fails unless it is "ok".
pt_diff_one() {
	_n=$1 _s=$2 _rep=$3 _d=cand$2
	if ! protune "${PT_DIFF_DRAW:-random}" "$_n.model" --seed "$_s" \
			>"$_d.sched" 2>"$_d.err"; then
		echo "$_n $_s refused $(head -n1 "$_d.err")" >>"$_rep"
		return 1
	fi
	PROTUNE_SCHEDULE_FILE=$PWD/$_d.sched pt_diff_gen "$_n" "$_d" \
		$(pt_diff_plugin_args)
	case $? in
	0) ;;
	124) echo "$_n $_s gentimeout over ${PT_DIFF_GEN_TIMEOUT}s" >>"$_rep"
		return 1 ;;
	*) echo "$_n $_s genfail $(grep -m1 -e ProTune -e Error "$_d/gen.log")" >>"$_rep"
		return 1 ;;
	esac
	if ! pt_diff_link "$_n" "$_d" ||
	   ! pt_rungen_run "$_d/rungen" "$_d.tmp" 1 2>"$_d.run.err"; then
		echo "$_n $_s runfail $(head -n1 "$_d.run.err")" >>"$_rep"
		return 1
	fi
	if ! pt-imgcmp ref.tmp "$_d.tmp" 2>"$_d.cmp"; then
		echo "$_n $_s differs $(head -n1 "$_d.cmp")" >>"$_rep"
		return 1
	fi
	echo "$_n $_s ok" >>"$_rep"
	rm -rf "$_d" "$_d.tmp" "$_d.tmp.log"
}
