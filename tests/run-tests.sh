#!/bin/sh
# run-tests.sh: runs the unit tests and every shell test (tests/t/t*.sh),
# PT_JOBS at a time, prints their TAP in order and ends with one summary
# line: "N passed, N failed" (", N skipped" when some were). Exits non-zero
# on any failure, including a script that died without reporting.
#   run-tests.sh [PATTERN]   only scripts whose name contains PATTERN
set -u
: "${PT_BUILD_DIR:?}"
: "${PT_SRCDIR:?}"
jobs=${PT_JOBS:-2}
pattern=${1:-}
results=$PT_BUILD_DIR/tests/results

run_one() {
	# Runs one script, its TAP to $results/NAME.out and exit code to .rc
	if [ "$1" = unit ]; then
		"$PT_BUILD_DIR/tests/unit-tests" >"$results/$1.out" 2>&1
	else
		sh "$PT_SRCDIR/tests/t/$1.sh" >"$results/$1.out" 2>&1
	fi
	echo $? >"$results/$1.rc"
}

# Run in parallel without a shell-built command line: xargs passes each
# name as an argument to this very script in worker mode.
if [ "$pattern" = --run-one ]; then
	run_one "$2"
	exit 0
fi

rm -rf "$results"
mkdir -p "$results" || exit 1

scripts=
if [ -z "$pattern" ] || case unit in *"$pattern"*) true ;; *) false ;; esac; then
	scripts=unit
fi
for t in "$PT_SRCDIR"/tests/t/t[0-9]*.sh; do
	n=$(basename "$t" .sh)
	case "$n" in *"$pattern"*) scripts="$scripts $n" ;; esac
done

start=$(date +%s)
printf '%s\n' $scripts | xargs -P "$jobs" -n 1 sh "$0" --run-one

passed=0 failed=0 skipped=0
for s in $scripts; do
	out=$results/$s.out
	echo "# $s"
	[ -f "$out" ] || echo "not ok - $s produced no output" >"$out"
	cat "$out"
	sk=$(grep -c '^ok .*# skip\|^1\.\.0 # SKIP' "$out" || true)
	f=$(grep -c '^not ok ' "$out" || true)
	p=$(( $(grep -c '^ok ' "$out") - $(grep -c '^ok .*# skip' "$out") ))
	rc=$(cat "$results/$s.rc" 2>/dev/null || echo 99)
	if [ "$rc" != 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $s exited with status $rc without reporting a failure"
		f=1
	fi
	if [ "$f" -eq 0 ] && ! grep -q '^1\.\.' "$out"; then
		echo "not ok - $s printed no plan (died early?)"
		f=$((f + 1))
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + sk))
done
elapsed=$(( $(date +%s) - start ))
echo "# tests took ${elapsed}s"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
