#!/bin/sh
# bench.sh: `make bench`. For every example at benchmark size, checks each
# schedule variant against the reference build, then times the variants
# side by side: BENCH_ROUNDS rounds (default 5), each running every variant
# once in rotated order (RunGen's best ms per iteration over samples of
# BENCH_MIN_TIME seconds, default 0.2), and reports the median per variant
# and its ratio to the manual schedule. Ratios measured in one run on one
# machine are what to compare; absolute times drift with machine load.
# Results also go to $PT_BUILD_DIR/bench/results.tsv.
#   bench.sh [EXAMPLE...]
set -u
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
PATH=$PT_BUILD_DIR/bin:$PT_BUILD_DIR/tests:$PATH
. "$PT_SRCDIR/examples/pt-example.sh"
. "$PT_SRCDIR/bench/lib.sh"
[ $# -gt 0 ] || set -- $(pt_ex_list)
examples=$*
rounds=${BENCH_ROUNDS:-5}
min_time=${BENCH_MIN_TIME:-0.2}
variants=${BENCH_VARIANTS:-manual adams2019 mullapudi2016 protune}
out=$PT_BUILD_DIR/bench
mkdir -p "$out" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
tsv=$out/results.tsv
printf 'example\tvariant\tmedian_ms\tratio_to_manual\truns_ms\n' >"$tsv"


echo "protune bench: $(protune-cc --version); $(nproc) cores; $rounds rounds of ${min_time}s per variant; $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-16s' example
for v in $variants; do printf ' %14s' "$v"; done
for v in $variants; do [ "$v" = manual ] || printf ' %9s' "$v/man" | sed 's/mullapudi2016/mull/;s/adams2019/adams/'; done
echo
fail=0
for ex in $examples; do
	pt_ex_run bench "$ex" reference "$tmp/ref.tmp" 1 || { fail=1; continue; }
	for v in $variants; do
		: >"$tmp/$v.times"
		if ! pt_ex_run bench "$ex" "$v" "$tmp/$v.tmp" 1 ||
		   ! pt_ex_compare "$ex" "$tmp/ref.tmp" "$tmp/$v.tmp" 2>"$tmp/why"; then
			echo "  $ex $v: WRONG OUTPUT, not timed: $(cat "$tmp/why")" >&2
			echo wrong >"$tmp/$v.bad"
			fail=1
		fi
	done
	r=0
	while [ $r -lt "$rounds" ]; do
		# rotate the order each round so no variant always runs first
		set -- $variants
		i=0
		while [ $i -lt $((r % $#)) ]; do x=$1; shift; set -- "$@" "$x"; i=$((i + 1)); done
		for v in "$@"; do
			[ -f "$tmp/$v.bad" ] && continue
			t=$(bench_locked pt_ex_time bench "$ex" "$v" 1 "$min_time") && echo "$t" >>"$tmp/$v.times"
		done
		r=$((r + 1))
	done
	man=$(median <"$tmp/manual.times")
	printf '%-16s' "$ex"
	for v in $variants; do
		m=$(median <"$tmp/$v.times")
		eval "med_$v=\$m"
		printf ' %14s' "$m"
		ratio=$(awk -v a="$m" -v b="$man" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
		printf '%s\t%s\t%s\t%s\t%s\n' "$ex" "$v" "$m" "$ratio" "$(tr '\n' ' ' <"$tmp/$v.times")" >>"$tsv"
	done
	for v in $variants; do
		[ "$v" = manual ] && continue
		eval "m=\$med_$v"
		printf ' %9s' "$(awk -v a="$m" -v b="$man" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')"
	done
	echo
	rm -f "$tmp"/*.bad "$tmp"/*.times
done
echo "(medians in ms; ratio > 1 means slower than the manual schedule; $tsv)"
echo
echo "Generator run time in seconds (schedule search, lowering and LLVM), one run each:"
printf '%-16s' example
for v in $variants; do printf ' %14s' "$v"; done
echo
for ex in $examples; do
	printf '%-16s' "$ex"
	for v in $variants; do
		f=$PT_BUILD_DIR/ex/bench/$ex/$v/gen.ms
		if [ -f "$f" ]; then
			printf ' %14s' "$(awk '{ printf "%.1f", $1 / 1000 }' "$f")"
		else
			printf ' %14s' -
		fi
	done
	echo
done
exit $fail
