# pt-example.sh: shell functions to run and check the built examples.
# Sourced by the tests, `make demo` and `make bench`. Needs PT_BUILD_DIR (the
# build/ directory) and PT_SRCDIR (the source tree).
#
# Every run feeds the program random inputs sized by their estimates (floats
# uniform in [0,1], integers over the whole type; the seed picks them) and
# sizes the output by its estimate, so all variants of an example at one
# size see identical inputs.

# pt_ex_list: the examples that have a generator, one per line, or those
# named in PT_EXAMPLES (what `make EXAMPLES=...` passes on).
pt_ex_list() {
	if [ -n "${PT_EXAMPLES:-}" ]; then
		printf '%s\n' $PT_EXAMPLES
		return
	fi
	for f in "$PT_SRCDIR"/examples/*/*_generator.cpp; do
		basename "$(dirname "$f")"
	done
}

# pt_ex_rungen SIZE NAME VARIANT: path of the RunGen program.
pt_ex_rungen() {
	printf '%s/ex/%s/%s/%s/rungen' "$PT_BUILD_DIR" "$1" "$2" "$3"
}

# pt_ex_run SIZE NAME VARIANT OUT SEED [RUNGEN-ARGS...]: run once, output to
# OUT (a .tmp file). RunGen's chatter goes to OUT.log.
pt_ex_run() {
	_p=$(pt_ex_rungen "$1" "$2" "$3")
	shift 3
	pt_rungen_run "$_p" "$@"
}

# pt_rungen_run PROGRAM OUT SEED [RUNGEN-ARGS...]: run a RunGen program once
# on random inputs of exactly their estimated sizes, output to OUT.
#
# Inputs must be exactly their estimated size: RunGen silently enlarges an
# input that a schedule reads beyond (RoundUp, ShiftInwards wider than the
# extent, ...), which would hide an out-of-bounds read from the check; its
# --verbose log says "Updated Shape" when it does, and that is a failure.
pt_rungen_run() {
	_r=$1 _out=$2 _seed=$3
	shift 3
	"$_r" --verbose --quiet \
		--default_input_buffers="random:$_seed:estimate_then_auto" \
		--default_input_scalars=estimate --output_extents=estimate \
		output="$_out" "$@" >"$_out.log" 2>&1 ||
		{ echo "$_r failed:" >&2; cat "$_out.log" >&2; return 1; }
	# "Input NAME: Shape is [[min,extent,stride],...]" then, if RunGen
	# reallocated it, "Input NAME: Updated Shape is [...]". A new stride
	# alone (RunGen does that for non-default output sizes) is harmless.
	if ! awk '
		function dims(s) { gsub(/[^-0-9,]/, " ", s); gsub(/ *, */, ",", s); return s }
		function minext(s,   n, a, i, r) { n = split(dims(s), a, /[ ]+/); r = ""
			for (i = 1; i <= n; i++) if (a[i] != "") { split(a[i], p, ","); r = r p[1] "," p[2] ";" }
			return r }
		/^Input .*: Shape is / { name = $2; sub(/:$/, "", name); sub(/.*Shape is /, ""); shape[name] = minext($0) }
		/^Input .*: Updated Shape is / { name = $2; sub(/:$/, "", name); sub(/.*Shape is /, "")
			if (minext($0) != shape[name]) { print "RunGen enlarged input " name " to " $0; bad = 1 } }
		END { exit bad }' "$_out.log" >&2; then
		echo "$_r reads outside the estimated size of an input" >&2
		return 1
	fi
}

# pt_ex_tolerance NAME: set PT_ABS_TOL and PT_REL_TOL from the example's
# check.conf (0 and 0, bit for bit, when it sets none).
pt_ex_tolerance() {
	PT_ABS_TOL=0 PT_REL_TOL=0
	if [ -f "$PT_SRCDIR/examples/$1/check.conf" ]; then
		. "$PT_SRCDIR/examples/$1/check.conf"
	fi
}

# pt_ex_compare NAME REF GOT: compare two outputs of example NAME with its
# tolerance; the reason for a difference goes to stderr.
pt_ex_compare() {
	pt_ex_tolerance "$1"
	pt-imgcmp --abs "$PT_ABS_TOL" --rel "$PT_REL_TOL" "$2" "$3"
}

# pt_ex_time SIZE NAME VARIANT SEED MIN_SECONDS: print RunGen's best time
# per iteration in milliseconds (best of its samples of MIN_SECONDS).
pt_ex_time() {
	_t=$(mktemp) || return 1
	pt_ex_run "$1" "$2" "$3" "$_t.tmp" "$4" --benchmarks=all \
		--benchmark_min_time="$5" --parsable_output || { rm -f "$_t"*; return 1; }
	sed -n 's/.*BEST_TIME_MSEC_PER_ITER *//p' "$_t.tmp.log"
	rm -f "$_t" "$_t.tmp" "$_t.tmp.log"
}
