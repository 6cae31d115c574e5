#!/bin/sh
# adapter.sh: the Halide adapter's costs, part of `make bench`.
#
# 1. Extract + print + hash of the model, as the plugin reports it with
#    PROTUNE_DEBUG_TIMING=1, for the stencil_chain example and synthetic
#    chains of 30 and 100 stages (median of ADAPTER_ROUNDS runs). The runs
#    are given a schedule file that cannot fit (its key is wrong), so the
#    generator stops right after the model and no compile time is spent.
# 2. The plugin's overhead on a whole generator run: stencil_chain at
#    benchmark size with its manual schedule written in C++ (schedule=manual)
#    versus the
#    same schedule in protune's format applied by the plugin
#    (PROTUNE_SCHEDULE_FILE), run alternately; medians and their ratio.
#   adapter.sh   (needs PT_BUILD_DIR and PT_SRCDIR)
set -u
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
PATH=$PT_BUILD_DIR/bin:$PT_BUILD_DIR/tests:$PATH
# Halide 14 misdetects some AMD processors for target=host (protune-cc(1),
# TARGET HOST): the generator runs here pass what protune-cc would.
host_target=$(protune host-target) || exit 2
rounds=${ADAPTER_ROUNDS:-7}
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$PT_SRCDIR/bench/lib.sh"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

printf 'protune-schedule 1\nkey 00000000000000000000000000000000\nfunc f0 root\n' >"$tmp/nofit.sched"

# model_time LABEL GENERATOR GENERATOR-NAME [ARGS...]
model_time() {
	_label=$1 _gen=$2 _name=$3
	shift 3
	: >"$tmp/t"
	_i=0
	while [ $_i -lt "$rounds" ]; do
		PROTUNE_DEBUG_TIMING=1 PROTUNE_SCHEDULE_FILE=$tmp/nofit.sched \
			"$_gen" -g "$_name" -o "$tmp" -e static_library -n m \
			-p "$plugin" -s ProTune auto_schedule=true target="$host_target" \
			"$@" 2>"$tmp/err" >/dev/null
		_line=$(grep -m1 '^protune: model:' "$tmp/err") || {
			echo "adapter.sh: no timing from $_label:" >&2
			cat "$tmp/err" >&2
			return 1
		}
		echo "$_line" >>"$tmp/t"
		_i=$((_i + 1))
	done
	# "protune: model: N funcs, M stages, X ms extract, Y ms print+hash"
	_shape=$(head -n1 "$tmp/t" | sed 's/^protune: model: \([0-9]* funcs, [0-9]* stages\).*/\1/')
	_ex=$(sed 's/.* stages, \([0-9.]*\) ms extract.*/\1/' "$tmp/t" | median)
	_ph=$(sed 's/.* ms extract, \([0-9.]*\) ms print+hash.*/\1/' "$tmp/t" | median)
	printf '%-22s %-22s %10s %12s %10s\n' "$_label" "$_shape" "$_ex" "$_ph" \
		"$(echo "$_ex $_ph" | awk '{ printf "%.2f", $1 + $2 }')"
}

echo "protune adapter bench: $(protune-cc --version); median of $rounds runs; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "model extraction (ms)"
printf '%-22s %-22s %10s %12s %10s\n' pipeline shape extract print+hash total
model_time stencil_chain "$PT_BUILD_DIR/ex/bin/stencil_chain.generator" \
	stencil_chain size=bench || exit 1
for n in 30 100; do
	model_time "chain of $n" "$PT_BUILD_DIR/bench/chain.generator" chain \
		stages=$n || exit 1
done

# stencil_chain's manual schedule in protune's format (stencil-manual.sh).
name=stencil_chain
gen=$PT_BUILD_DIR/ex/bin/$name.generator
PROTUNE_DUMP_MODEL=$tmp/m.model PROTUNE_SCHEDULE_FILE=$tmp/nofit.sched \
	"$gen" -g $name -o "$tmp" -e static_library -n m -p "$plugin" -s ProTune \
	auto_schedule=true target="$host_target" size=bench 2>/dev/null
test -s "$tmp/m.model" || { echo "adapter.sh: no $name model" >&2; exit 1; }
"$PT_SRCDIR/bench/stencil-manual.sh" "$tmp/m.model" >"$tmp/manual.sched" ||
	exit 1
protune check "$tmp/m.model" "$tmp/manual.sched" || exit 1

: >"$tmp/cpp" ; : >"$tmp/plug"
i=0
while [ $i -lt "$rounds" ]; do
	t0=$(now_ms)
	"$gen" -g $name -o "$tmp" -e static_library,h -n c target="$host_target" \
		size=bench schedule=manual || exit 1
	t1=$(now_ms)
	PROTUNE_SCHEDULE_FILE=$tmp/manual.sched "$gen" -g $name -o "$tmp" \
		-e static_library,h -n p -p "$plugin" -s ProTune \
		auto_schedule=true target="$host_target" size=bench || exit 1
	t2=$(now_ms)
	echo $((t1 - t0)) >>"$tmp/cpp"
	echo $((t2 - t1)) >>"$tmp/plug"
	i=$((i + 1))
done
c=$(median <"$tmp/cpp") p=$(median <"$tmp/plug")
echo
echo "plugin overhead on a generator run ($name, bench size, manual schedule)"
printf '%-34s %10s\n' "schedule in C++ (ms)" "$c" \
	"same schedule through the plugin (ms)" "$p"
printf '%-34s %10s\n' "ratio plugin/C++" "$(echo "$p $c" | awk '{ printf "%.3f", $1 / $2 }')"
