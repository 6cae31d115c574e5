#!/bin/sh
# demo.sh: the main job's report. `make demo` has built every example
# through protune-cc with its manual schedule, with Halide's Adams2019
# autoscheduler, and with the ProTune plugin (and a reference build); this
# runs each on the same random input, checks the output against the
# reference and times it.
#   demo.sh [EXAMPLE...]     (DEMO_SIZE=bench|test, default bench)
set -u
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
size=${DEMO_SIZE:-bench}
PATH=$PT_BUILD_DIR/bin:$PT_BUILD_DIR/tests:$PATH
. "$PT_SRCDIR/examples/pt-example.sh"
[ $# -gt 0 ] || set -- $(pt_ex_list)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "protune demo: $(protune-cc --version), examples at size '$size'"
echo "Generators ran through protune-cc. The protune column is the schedule"
echo "protune-cc served from its cache (build/ex/cache) or tuned on a miss:"
echo "ProTuner's MCTS over the schedule space, priced by the cost model (cost"
echo "only; at bench size a budget of 20 s a pipeline, EX_PROTUNE_BUDGET_bench)."
echo "\`build/bin/protune ls --cache-dir=build/ex/cache\` lists them."
echo "Times: RunGen's best ms per iteration."
echo
printf '%-16s %-9s %12s %12s %12s %10s %10s\n' example correct manual_ms \
	adams2019_ms protune_ms adams/man prot/man
bad=0
for ex in "$@"; do
	ok=yes
	pt_ex_run "$size" "$ex" reference "$tmp/ref.tmp" 1 || ok=no
	for v in manual adams2019 protune; do
		pt_ex_run "$size" "$ex" $v "$tmp/$v.tmp" 1 &&
			pt_ex_compare "$ex" "$tmp/ref.tmp" "$tmp/$v.tmp" 2>"$tmp/why" ||
			{ ok=no; sed "s/^/  $ex $v: /" "$tmp/why" >&2; }
	done
	m=$(pt_ex_time "$size" "$ex" manual 1 0.2) || m=
	a=$(pt_ex_time "$size" "$ex" adams2019 1 0.2) || a=
	p=$(pt_ex_time "$size" "$ex" protune 1 0.2) || p=
	ratio() { awk -v a="${1:-0}" -v m="${2:-0}" 'BEGIN { if (m > 0 && a > 0) printf "%.2f", a / m; else print "-" }'; }
	printf '%-16s %-9s %12s %12s %12s %10s %10s\n' "$ex" "$ok" "${m:--}" \
		"${a:--}" "${p:--}" "$(ratio "$a" "$m")" "$(ratio "$p" "$m")"
	[ "$ok" = yes ] || bad=$((bad + 1))
done
echo
if [ "$bad" -eq 0 ]; then
	echo "All $# examples match their reference builds."
else
	echo "$bad of $# examples did NOT match their reference builds." >&2
	exit 1
fi
