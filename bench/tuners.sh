#!/bin/sh
# tuners.sh: `make bench-tuners`, also the last part of `make bench`: the
# schedule sources of issue 7 compared on the examples (doc/benchmark.md).
#
# For every example and source it builds the source's variant from scratch
# (examples/examples.mk: the generator runs through protune-cc as a user's
# build runs it; each protune-* source tunes into a cache of its own), one
# build at a time so that tuning times are not disturbed by other builds;
# checks the output against the reference build's (pt_ex_compare); then
# times the sources that passed side by side as bench.sh does, each timing
# holding the benchmark lock exclusively (bench_locked, bench/lib.sh):
# BENCH_ROUNDS rounds, each running every source once in rotated order
# (RunGen's best time per iteration over samples of BENCH_MIN_TIME
# seconds), and takes the medians.
#
# Writes to the output directory (bench/out/ of the source tree; in quick
# mode $PT_BUILD_DIR/bench/out/, so that quick figures never replace real
# ones; BENCH_OUT overrides):
#   tuners.tsv  one row per example and source, the columns
#               example source runtime_ms tuning_s check
#               (runtime_ms "-" when the check failed; tuning_s is the
#               generator run's wall time, gen.ms, in seconds)
#   tuners.txt  the settings, the tables printed here and the notes
#   tuners.png  per example, runtime relative to adams2019 (log scale)
#   tuners-anytime.png, tuners-anytime.tsv
#               the anytime curve (see anytime() below)
#
#   tuners.sh [EXAMPLE...]
#
# Environment (empty counts as unset):
#   SOURCES             sources to compare (default: all of them, below)
#   BENCH_QUICK=1       test size, budgets of 5 s and 20 s, 3 rounds of
#                       0.05 s: minutes instead of hours
#   BENCH_SIZE          test or bench (default bench; test when quick)
#   BENCH_BUDGET        seconds of tuning for the cost-only protune sources
#                       (default 60; 5 when quick)
#   BENCH_BUDGET_REAL   seconds for protune-mcts-real, which measures
#                       (default 300; 20 when quick)
#   BENCH_BUDGET_RANDOM seconds for protune-random, which measures too
#                       (default 60, as the cost-only searches: at 300 s
#                       the 13 examples take about 3 hours, more than one
#                       sitting on one machine; 5 when quick)
#   BENCH_SEED          protune's seed (default 1)
#   BENCH_THREADS       protune's tuner threads (default 2)
#   BENCH_ROUNDS, BENCH_MIN_TIME   as for bench.sh (default 5 and 0.2;
#                       3 and 0.05 when quick)
#   BENCH_TIMEOUT       seconds one build may take before it counts as a
#                       failure (default 1800; 600 when quick)
#   BENCH_REUSE=1       keep the builds that make finds up to date instead
#                       of building every source and the reference again
#                       (changed budgets, seeds or targets then go
#                       unnoticed)
#   BENCH_ANYTIME       the examples of the anytime curve (default
#                       stencil_chain local_laplacian; none: no curve;
#                       with BENCH_MERGE=1 the default is none, and the
#                       earlier curve stays)
#   BENCH_MERGE=1       add to the figures already in the output
#                       directory: the rows of examples not run now are
#                       kept (with their notes), and the tables and the
#                       plot cover all of them. The earlier run must have
#                       had the same settings (tuners.txt's second line),
#                       else the script stops. For running the 13
#                       examples a few at a time.
#   BENCH_OUT           the output directory
# From the Makefile: PT_BUILD_DIR, PT_SRCDIR, PT_MAKE (make with B=...) and
# PT_B (the build directory as make names it, e.g. build/).
set -u
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}" "${PT_MAKE:?}" "${PT_B:?}"
PATH=$PT_BUILD_DIR/bin:$PT_BUILD_DIR/tests:$PATH
. "$PT_SRCDIR/examples/pt-example.sh"

die() {
	echo "tuners.sh: $*" >&2
	exit 2
}

# The source labels of issue 7, in the order of the tables. `protune`, the
# examples' own variant (the build's shared cache, default settings), may be
# asked for too.
all_sources="manual adams2019 adams2019-greedy mullapudi2016 li2018"
all_sources="$all_sources protune-mcts-cost protune-mcts-real protune-beam"
all_sources="$all_sources protune-greedy protune-random"

quick=${BENCH_QUICK:-0}
case $quick in
0 | 1) ;;
*) die "BENCH_QUICK: '$quick' is not 0 or 1" ;;
esac
if [ "$quick" = 1 ]; then
	size=test rounds=3 min_time=0.05 budget=5 budget_real=20 tmo=600
	budget_random=5
	out=$PT_BUILD_DIR/bench/out
else
	size=bench rounds=5 min_time=0.2 budget=60 budget_real=300 tmo=1800
	budget_random=60
	out=$PT_SRCDIR/bench/out
fi
size=${BENCH_SIZE:-$size}
rounds=${BENCH_ROUNDS:-$rounds}
min_time=${BENCH_MIN_TIME:-$min_time}
budget=${BENCH_BUDGET:-$budget}
budget_real=${BENCH_BUDGET_REAL:-$budget_real}
budget_random=${BENCH_BUDGET_RANDOM:-$budget_random}
seed=${BENCH_SEED:-1}
threads=${BENCH_THREADS:-2}
tmo=${BENCH_TIMEOUT:-$tmo}
reuse=${BENCH_REUSE:-0}
merge=${BENCH_MERGE:-0}
case $merge in
0) anytime_ex=${BENCH_ANYTIME:-stencil_chain local_laplacian} ;;
1) anytime_ex=${BENCH_ANYTIME:-none} ;;
*) die "BENCH_MERGE: '$merge' is not 0 or 1" ;;
esac
out=${BENCH_OUT:-$out}
sources=${SOURCES:-$all_sources}

. "$PT_SRCDIR/bench/lib.sh"

case $size in
test | bench) ;;
*) die "BENCH_SIZE: '$size' is not test or bench" ;;
esac
case $reuse in
0 | 1) ;;
*) die "BENCH_REUSE: '$reuse' is not 0 or 1" ;;
esac
if ! is_count "$rounds" || [ "$rounds" -eq 0 ]; then
	die "BENCH_ROUNDS: '$rounds' is not a number of rounds (1 or more)"
fi
is_seconds "$min_time" || die "BENCH_MIN_TIME: '$min_time' is not a number of seconds"
is_seconds "$budget" || die "BENCH_BUDGET: '$budget' is not a number of seconds"
is_seconds "$budget_real" ||
	die "BENCH_BUDGET_REAL: '$budget_real' is not a number of seconds"
is_seconds "$budget_random" ||
	die "BENCH_BUDGET_RANDOM: '$budget_random' is not a number of seconds"
is_count "$seed" || die "BENCH_SEED: '$seed' is not an unsigned integer"
is_count "$threads" || die "BENCH_THREADS: '$threads' is not a number of threads"
if ! is_count "$tmo" || [ "$tmo" -eq 0 ]; then
	die "BENCH_TIMEOUT: '$tmo' is not a number of seconds (1 or more)"
fi
for s in $sources; do
	case " $all_sources protune " in
	*" $s "*) ;;
	*) die "SOURCES: unknown source '$s' (known: $all_sources protune)" ;;
	esac
done
# the order of the tables, whatever the order given
sel=
for s in $all_sources protune; do
	case " $(echo $sources) " in *" $s "*) sel="$sel $s" ;; esac
done
sources=$(echo $sel)

# cpu_line: the processor the figures were measured on. Machines of one
# kind may have different processors from one day to the next: figures
# from two of them are not merged (BENCH_MERGE compares this line too).
cpu_line() {
	_m=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo \
		2>/dev/null | head -n 1)
	_f=$(sed -n 's/^cpu family[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo \
		2>/dev/null | head -n 1)
	_n=$(sed -n 's/^model[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo \
		2>/dev/null | head -n 1)
	_l2=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null)
	printf 'cpu %s (family %s, model %s), L2 %s KiB' "${_m:-$(uname -m)}" \
		"${_f:-?}" "${_n:-?}" "$(( ${_l2:-0} / 1024 ))"
}

# settings_line: the settings, as tuners.txt states them
settings_line() {
	printf '%s; size %s; protune budgets %s s cost-only (mcts-cost, beam, greedy), %s s measured (mcts-real), %s s measured (random); protune seed %s, %s threads; Adams2019 beam 32, 5 passes, greedy beam 1, no dropout; %s rounds of %s s' \
		"$(cpu_line)" "$size" "$budget" "$budget_real" "$budget_random" \
		"$seed" "$threads" "$rounds" "$min_time"
}

[ $# -gt 0 ] || set -- $(pt_ex_list)
examples=$*
[ -n "$examples" ] || die "no examples"
for ex in $examples; do
	[ -f "$PT_SRCDIR/examples/$ex/${ex}_generator.cpp" ] ||
		die "unknown example '$ex' (no examples/$ex/${ex}_generator.cpp)"
done

mkdir -p "$out" || die "cannot create $out"
if [ "$merge" = 1 ] && [ -f "$out/tuners.tsv" ]; then
	_was=$(sed -n 2p "$out/tuners.txt" 2>/dev/null)
	_now="$(nproc) cores; $(settings_line)."
	[ "$_was" = "$_now" ] ||
		die "BENCH_MERGE: $out/tuners.txt was made with other settings:
  earlier: $_was
  now:     $_now"
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
bpid=
trap '[ -z "$bpid" ] || kill "$bpid" 2>/dev/null; exit 130' INT TERM HUP

fail=0
when=$(date -u +%Y-%m-%dT%H:%MZ)
settings=$(settings_line)
{
	echo "protune tuner benchmark, $when: $(protune-cc --version 2>&1 | head -n 1);"
	echo "$(nproc) cores; $settings."
} >"$tmp/head"
cat "$tmp/head"

# The builds below get no jobserver from the make that started this script
# (its recipe does not name $(MAKE), so that `make -n` does not run it):
# drop the jobserver's options, which would only make them warn.
if [ -n "${MAKEFLAGS:-}" ]; then
	MAKEFLAGS=$(printf '%s\n' "$MAKEFLAGS" |
		sed 's/ *--jobserver-[a-z]*=[^ ]*//g')
	export MAKEFLAGS
fi

# build EXAMPLE VARIANT: build its rungen, the build's output in $tmp/log.
# Exit status 124 when it took longer than $tmo seconds.
build() {
	# timeout signals its whole process group (make, protune-cc and the
	# generator) and, being in a group of its own, misses a ^C on the
	# terminal: the trap below passes that on.
	# shellcheck disable=SC2086
	timeout "$tmo" $PT_MAKE EX_TUNE_BUDGET="$budget" \
		EX_TUNE_BUDGET_REAL="$budget_real" \
		EX_TUNE_BUDGET_RANDOM="$budget_random" EX_TUNE_SEED="$seed" \
		EX_TUNE_THREADS="$threads" \
		"${PT_B}ex/$size/$1/$2/rungen" >"$tmp/log" 2>&1 &
	bpid=$!
	wait $bpid
	_st=$?
	bpid=
	return $_st
}

# note EXAMPLE SOURCE TEXT: a line for the notes under the tables
note() {
	printf -- '- %s %s: %s\n' "$1" "$2" "$3" >>"$tmp/notes"
}

# tuner_meta DIR: how a protune-* source's schedule was found, from the
# meta lines of the schedule in its cache ("tuner=... iterations=...").
tuner_meta() {
	PROTUNE_CONFIG=/dev/null protune ls --cache-dir="$1/cache" 2>/dev/null |
		awk 'NR == 2 { print $1 }' >"$tmp/key"
	[ -s "$tmp/key" ] || return 0
	PROTUNE_CONFIG=/dev/null protune show "$(cat "$tmp/key")" --text \
		--cache-dir="$1/cache" 2>/dev/null | awk '
		/^meta (tuner|search|iterations|measure|measured_ms)=/ {
			if (!seen[$2]++) s = s (s == "" ? "" : " ") $2 }
		END { print s }'
}

: >"$tmp/notes"
printf 'example\tsource\truntime_ms\ttuning_s\tcheck\n' >"$tmp/tsv"
for ex in $examples; do
	echo "$ex:"
	# the state of each source: $tmp/S.ok (built, output correct),
	# S.tuning (seconds), S.times (one median sample a round)
	rm -f "$tmp"/*.ok "$tmp"/*.tuning "$tmp"/*.times
	refok=1
	: >"$tmp/why"
	# The reference too is built again: make would keep one built for
	# another target (a host that Halide 14 misdetects, say), which no
	# dependency of its rule records.
	[ "$reuse" = 1 ] || rm -rf "$PT_BUILD_DIR/ex/$size/$ex/reference"
	if ! build "$ex" reference ||
	   ! pt_ex_run "$size" "$ex" reference "$tmp/ref.tmp" 1 2>"$tmp/why"; then
		echo "  reference: FAILED, nothing of $ex can be checked" >&2
		tail -n 20 "$tmp/log" "$tmp/why" >&2
		note "$ex" reference "failed: nothing of $ex was checked"
		refok=0
		fail=1
	fi
	for src in $sources; do
		dir=$PT_BUILD_DIR/ex/$size/$ex/$src
		[ "$reuse" = 1 ] || rm -rf "$dir"
		[ "$refok" = 1 ] || continue
		printf '  %-18s ' "$src"
		build "$ex" "$src"
		st=$?
		[ -f "$dir/gen.ms" ] && awk '{ printf "%.1f\n", $1 / 1000 }' \
			"$dir/gen.ms" >"$tmp/$src.tuning"
		case $src in
		protune-*)
			m=$(tuner_meta "$dir")
			[ -n "$m" ] && note "$ex" "$src" "$m"
			# protune-cc's warnings (an unreadable cost model, ...)
			[ -f "$dir/gen.log" ] && grep 'warning' "$dir/gen.log" |
				sort -u | head -n 3 | cut -c 1-200 >"$tmp/warn"
			while IFS= read -r w; do
				note "$ex" "$src" "$w"
			done <"$tmp/warn"
			;;
		esac
		if [ $st -eq 124 ]; then
			echo "FAILED: no schedule within ${tmo} s (BENCH_TIMEOUT)"
			note "$ex" "$src" "build timed out after ${tmo} s"
			continue
		elif [ $st -ne 0 ]; then
			echo "FAILED to build:"
			tail -n 12 "$tmp/log" | sed 's/^/    /'
			note "$ex" "$src" "build failed: $(grep -v '^  [A-Z][A-Z]* ' \
				"$tmp/log" | grep . | head -n 1 | cut -c 1-160)"
			continue
		fi
		if ! pt_ex_run "$size" "$ex" "$src" "$tmp/out.tmp" 1 2>"$tmp/why" ||
		   ! pt_ex_compare "$ex" "$tmp/ref.tmp" "$tmp/out.tmp" 2>>"$tmp/why"; then
			# the scratch directory's name says nothing
			sed "s|$tmp/||g" "$tmp/why" >"$tmp/why2"
			echo "WRONG OUTPUT: $(head -n 3 "$tmp/why2" | tr '\n' ' ')"
			note "$ex" "$src" \
				"wrong output: $(head -n 1 "$tmp/why2" | cut -c 1-160)"
			continue
		fi
		echo "built in $(cat "$tmp/$src.tuning") s, output correct"
		: >"$tmp/$src.ok"
		: >"$tmp/$src.times"
	done
	r=0
	while [ "$refok" = 1 ] && [ $r -lt "$rounds" ]; do
		# rotate the order each round so that no source always runs first
		set -- $sources
		i=0
		while [ $i -lt $((r % $#)) ]; do
			x=$1
			shift
			set -- "$@" "$x"
			i=$((i + 1))
		done
		for src in "$@"; do
			[ -f "$tmp/$src.ok" ] || continue
			t=$(bench_locked pt_ex_time "$size" "$ex" "$src" 1 \
				"$min_time" 2>"$tmp/why")
			if [ $? -eq 0 ] && [ -n "$t" ]; then
				echo "$t" >>"$tmp/$src.times"
			else
				echo "  $src: a timing run failed:" \
					"$(head -n 2 "$tmp/why")" >&2
				note "$ex" "$src" "a timing run failed"
				rm -f "$tmp/$src.ok"
			fi
		done
		r=$((r + 1))
	done
	for src in $sources; do
		ms=- check=fail tuning=-
		[ -f "$tmp/$src.tuning" ] && tuning=$(cat "$tmp/$src.tuning")
		if [ -f "$tmp/$src.ok" ]; then
			ms=$(median <"$tmp/$src.times")
			[ "$ms" != - ] && check=pass
		fi
		printf '%s\t%s\t%s\t%s\t%s\n' "$ex" "$src" "$ms" "$tuning" \
			"$check" >>"$tmp/tsv"
	done
done
# BENCH_MERGE: the earlier rows and notes of the examples not run now,
# then every example's rows in the examples' order.
if [ "$merge" = 1 ] && [ -f "$out/tuners.tsv" ]; then
	kept=
	for ex in $(PT_EXAMPLES= pt_ex_list); do
		case " $examples " in *" $ex "*) continue ;; esac
		awk -F '\t' -v ex="$ex" 'NR > 1 && $1 == ex' "$out/tuners.tsv" \
			>"$tmp/old.rows"
		[ -s "$tmp/old.rows" ] || continue
		cat "$tmp/old.rows" >>"$tmp/tsv"
		grep "^- $ex " "$out/tuners.txt" >>"$tmp/notes" 2>/dev/null
		kept="$kept $ex"
	done
	if [ -n "$kept" ]; then
		_all=
		for ex in $(PT_EXAMPLES= pt_ex_list); do
			case " $examples $kept " in *" $ex "*) _all="$_all $ex" ;; esac
		done
		examples=$(echo $_all)
		awk -F '\t' -v order="$examples" '
			BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) k[o[i]] = i }
			NR == 1 { print; next }
			{ printf "%06d\t%s\n", k[$1] * 1000 + NR, $0 }' "$tmp/tsv" |
			{ IFS= read -r h; echo "$h"; sort; } |
			sed '2,$s/^[0-9]*\t//' >"$tmp/tsv.sorted"
		mv "$tmp/tsv.sorted" "$tmp/tsv"
		echo "merged: rows of$kept kept from the earlier run"
		echo "rows of$kept: from an earlier run with the same settings (BENCH_MERGE)" \
			>>"$tmp/head"
	fi
fi
cp "$tmp/tsv" "$out/tuners.tsv" || die "cannot write $out/tuners.tsv"

# The tables (Markdown, so that they can be quoted as they are) and the
# plot's data: per example, runtime relative to adams2019 for every other
# source, and their geometric means.
awk -F '\t' -v sources="$sources" -v examples="$examples" \
	-v plotdat="$tmp/plot.dat" -v plotrange="$tmp/plot.range" '
function cell(w, s) { return sprintf(" %" w "s |", s) }
function row(first, n, c,   i, s) {
	s = sprintf("| %-16s |", first)
	for (i = 1; i <= n; i++) s = s cell(w[i], c[i])
	print s
}
function header(title,   i, c, s) {
	print ""
	print title
	print ""
	for (i = 1; i <= ns; i++) c[i] = src[i]
	row("example", ns, c)
	s = "|" sprintf("%18s", "") "|"
	gsub(/ /, "-", s)
	for (i = 1; i <= ns; i++) {
		c[i] = sprintf("%" (w[i] + 1) "s:|", "")
		gsub(/ /, "-", c[i])
		s = s c[i]
	}
	print s
}
NR > 1 { ms[$1, $2] = $3; tu[$1, $2] = $4; ok[$1, $2] = ($5 == "pass") }
END {
	ns = split(sources, src, " ")
	ne = split(examples, exs, " ")
	for (i = 1; i <= ns; i++) {
		w[i] = length(src[i]) < 8 ? 8 : length(src[i])
		if (src[i] == "adams2019") have_adams = 1
		if (src[i] == "manual") have_manual = 1
	}
	header("Runtime in ms (median; FAIL: no schedule, or a wrong one):")
	for (e = 1; e <= ne; e++) {
		for (i = 1; i <= ns; i++) {
			k = exs[e] SUBSEP src[i]
			c[i] = ok[k] ? sprintf("%.4g", ms[k]) : "FAIL"
		}
		row(exs[e], ns, c)
	}
	if (have_adams) {
		header("Speedup over adams2019 (its runtime / the source'"'"'s; > 1 is faster):")
		for (i = 1; i <= ns; i++) { lg[i] = 0; n[i] = 0; worst[i] = "" }
		for (e = 1; e <= ne; e++) {
			a = exs[e] SUBSEP "adams2019"
			for (i = 1; i <= ns; i++) {
				k = exs[e] SUBSEP src[i]
				c[i] = "-"
				if (!ok[a] || !ok[k] || ms[k] <= 0) continue
				r = ms[a] / ms[k]
				c[i] = sprintf("%.2f", r)
				lg[i] += log(r); n[i]++
				if (worst[i] == "" || r < worst[i]) worst[i] = r
			}
			row(exs[e], ns, c)
		}
		for (i = 1; i <= ns; i++)
			c[i] = n[i] ? sprintf("%.2f", exp(lg[i] / n[i])) : "-"
		row("**geomean**", ns, c)
		for (i = 1; i <= ns; i++)
			c[i] = n[i] ? sprintf("%.2f", worst[i]) : "-"
		row("worst", ns, c)
		for (i = 1; i <= ns; i++) c[i] = n[i]
		row("examples", ns, c)
		# the plot: every source but adams2019, runtime / adams2019
		printf "example" >plotdat
		for (i = 1; i <= ns; i++)
			if (src[i] != "adams2019") printf "\t%s", src[i] >plotdat
		printf "\n" >plotdat
		lo = 1; hi = 1; any = 0
		for (e = 1; e <= ne; e++) {
			printf "%s", exs[e] >plotdat
			a = exs[e] SUBSEP "adams2019"
			for (i = 1; i <= ns; i++) {
				if (src[i] == "adams2019") continue
				k = exs[e] SUBSEP src[i]
				if (ok[a] && ok[k] && ms[a] > 0 && ms[k] > 0) {
					r = ms[k] / ms[a]
					printf "\t%.4g", r >plotdat
					any = 1
					if (r < lo) lo = r
					if (r > hi) hi = r
				} else
					printf "\t-" >plotdat
			}
			printf "\n" >plotdat
		}
		printf "geomean" >plotdat
		for (i = 1; i <= ns; i++) {
			if (src[i] == "adams2019") continue
			if (n[i]) printf "\t%.4g", exp(-lg[i] / n[i]) >plotdat
			else printf "\t-" >plotdat
		}
		printf "\n" >plotdat
		if (any) print lo / 1.3, hi * 1.3 >plotrange
	} else
		print "\n(no adams2019 among the sources: no speedups, no plot)"
	if (have_manual) {
		header("Speedup over the manual schedule (> 1 is faster than the expert):")
		for (i = 1; i <= ns; i++) { lg[i] = 0; n[i] = 0 }
		for (e = 1; e <= ne; e++) {
			m = exs[e] SUBSEP "manual"
			for (i = 1; i <= ns; i++) {
				k = exs[e] SUBSEP src[i]
				if (!ok[m] || !ok[k] || ms[k] <= 0) continue
				lg[i] += log(ms[m] / ms[k])
				n[i]++
			}
		}
		for (i = 1; i <= ns; i++)
			c[i] = n[i] ? sprintf("%.2f", exp(lg[i] / n[i])) : "-"
		row("**geomean**", ns, c)
	}
	header("Tuning time in s (the generator run: search, lowering and LLVM):")
	for (e = 1; e <= ne; e++) {
		for (i = 1; i <= ns; i++) c[i] = tu[exs[e], src[i]]
		row(exs[e], ns, c)
	}
}' "$out/tuners.tsv" >"$tmp/tables"

{
	cat "$tmp/head"
	cat "$tmp/tables"
	if [ -s "$tmp/notes" ]; then
		echo
		echo "Notes (failures, and the meta lines of the protune-* schedules):"
		echo
		cat "$tmp/notes"
	fi
} >"$tmp/report"
echo
sed 1,2d "$tmp/report"
cp "$tmp/report" "$out/tuners.txt" || die "cannot write $out/tuners.txt"

# plot: tuners.png from plot.dat, bars from 1 to each ratio
plot() {
	if ! command -v gnuplot >/dev/null 2>&1; then
		echo "tuners.sh: gnuplot not found (Debian: gnuplot-nox, see" \
			"scripts/install-deps.sh): no $out/tuners.png" >&2
		return 1
	fi
	if [ ! -s "$tmp/plot.range" ]; then
		echo "tuners.sh: no runtime to compare with adams2019: no plot" >&2
		return 1
	fi
	set -- $(cat "$tmp/plot.range")
	lo=$1 hi=$2
	# y tics at the powers of 2 in the range
	ytics=$(awk -v lo="$lo" -v hi="$hi" 'BEGIN {
		for (e = -10; e <= 10; e++)
			if (2 ^ e >= lo && 2 ^ e <= hi)
				s = s (s == "" ? "" : ", ") sprintf("\"%g\" %g", 2 ^ e, 2 ^ e)
		print s
	}')
	# the title: one line for each part of the settings
	title=$(printf '%s' "protune tuner benchmark, $when; $settings" |
		sed 's/; /\\n/g')
	k=$(($(head -n 1 "$tmp/plot.dat" | awk -F '\t' '{ print NF }') - 1))
	n=$(($(wc -l <"$tmp/plot.dat") - 1))
	width=$((n * (k * 14 + 24) + 360))
	[ $width -ge 900 ] || width=900
	[ $width -le 4000 ] || width=4000
	gnuplot >"$tmp/gnuplot.log" 2>&1 <<EOF
set terminal $term size $width,720 font ",10"
set output "$out/tuners.png"
set title "$title" noenhanced
set ylabel "runtime relative to adams2019 (log scale; < 1 is faster)"
set logscale y 2
set yrange [$lo:$hi]
set ytics ($ytics)
set xrange [-0.6:$n - 0.4]
set grid ytics
set xtics rotate by -30 noenhanced nomirror
set key outside right top noenhanced autotitle columnhead
set datafile separator "\t"
set datafile missing "-"
set style fill solid 0.85 border lc rgb "#404040"
array C[10] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", \
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]
# source i (columns 2 to k + 1) of example x: a bar from 1 to its ratio,
# i - 2 bar widths right of the cluster's left edge
w = 0.8 / $k
left(x, i) = x - 0.4 + (i - 2) * w
plot "$tmp/plot.dat" using 0:(NaN):xtic(1) notitle, \
	for [i=2:$k + 1] "$tmp/plot.dat" using \
	(left(\$0, i) + w / 2):(column(i)):(left(\$0, i)):(left(\$0, i) + w): \
	(column(i) < 1 ? column(i) : 1):(column(i) < 1 ? 1 : column(i)) \
	with boxxyerror lc rgb C[(i - 2) % 10 + 1] title columnhead(i), \
	1 with lines lc rgb "black" lw 1.5 notitle
EOF
	if [ $? -ne 0 ]; then
		echo "tuners.sh: gnuplot failed:" >&2
		cat "$tmp/gnuplot.log" >&2
		return 1
	fi
}

# The anytime curve (issue 7): the best measured runtime against elapsed
# tuning time, MCTS cost+real on the examples of BENCH_ANYTIME, into
# tuners-anytime.png and tuners-anytime.tsv (example elapsed_s best_ms).
# `protune tune MODEL --trace DIR` writes DIR/trace.tsv, a line per root
# decision with the best measured time so far; the model is the one a
# protune-* build of this run left in its directory (pipeline.model). The
# search is run again for this, with the same settings as
# protune-mcts-real: the build itself records no trace.
anytime() {
	if [ "$anytime_ex" = none ]; then
		return 0
	fi
	if ! protune tune --help 2>&1 | grep -q -- '--trace'; then
		echo "anytime curve: not drawn (needs protune tune --trace)"
		return 0
	fi
	printf 'example\telapsed_s\tbest_ms\n' >"$tmp/anytime.tsv"
	drawn=
	# With BENCH_MERGE=1, the earlier run's curves of the examples not
	# drawn now stay, as their rows of the table do.
	if [ "$merge" = 1 ] && [ -s "$out/tuners-anytime.tsv" ]; then
		for ex in $(awk -F '\t' 'NR > 1 && !seen[$1]++ { print $1 }' \
				"$out/tuners-anytime.tsv"); do
			case " $anytime_ex " in
			*" $ex "*) continue ;;
			esac
			awk -F '\t' -v ex="$ex" 'NR > 1 && $1 == ex' \
				"$out/tuners-anytime.tsv" >"$tmp/anytime-$ex.dat"
			cat "$tmp/anytime-$ex.dat" >>"$tmp/anytime.tsv"
			drawn="$drawn $ex"
			echo "anytime curve: $ex kept from the earlier run"
		done
	fi
	for ex in $anytime_ex; do
		case " $examples " in
		*" $ex "*) ;;
		*)
			echo "anytime curve: no $ex (not among the examples run)"
			continue
			;;
		esac
		model=
		for src in protune-mcts-real protune-mcts-cost protune-beam \
			   protune-greedy protune-random; do
			f=$PT_BUILD_DIR/ex/$size/$ex/$src/pipeline.model
			if [ -s "$f" ]; then
				model=$f
				break
			fi
		done
		if [ -z "$model" ]; then
			echo "anytime curve: no $ex (no protune-* build of it)"
			continue
		fi
		printf 'anytime curve: %s, mcts with measurement, %s s ... ' \
			"$ex" "$budget_real"
		rm -rf "$tmp/trace"
		PROTUNE_CONFIG=/dev/null PROTUNE_CACHE_DIR=$tmp/cache \
			PROTUNE_STORE_DIR=off timeout "$tmo" protune tune "$model" \
			--search mcts --measure --budget "$budget_real" \
			--seed "$seed" --threads "$threads" --trace "$tmp/trace" \
			>/dev/null 2>"$tmp/why"
		st=$?
		if [ $st -ne 0 ] || [ ! -s "$tmp/trace/trace.tsv" ]; then
			echo "FAILED (status $st):"
			tail -n 5 "$tmp/why" | sed 's/^/    /'
			continue
		fi
		# the columns by name: elapsed_s and best_ms (< 0: none yet)
		awk -F '\t' -v ex="$ex" '
			NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			c["elapsed_s"] && c["best_ms"] && $c["best_ms"] >= 0 {
				printf "%s\t%s\t%s\n", ex, $c["elapsed_s"], $c["best_ms"] }
		' "$tmp/trace/trace.tsv" >"$tmp/anytime.one"
		if [ ! -s "$tmp/anytime.one" ]; then
			echo "no measured point in the trace: not drawn"
			continue
		fi
		cat "$tmp/anytime.one" >>"$tmp/anytime.tsv"
		cp "$tmp/anytime.one" "$tmp/anytime-$ex.dat"
		awk -F '\t' 'END { printf "%d points, best %.4g ms at %.1f s\n", NR, $3, $2 }' \
			"$tmp/anytime.one"
		drawn="$drawn $ex"
	done
	rm -f "$out/tuners-anytime.tsv" "$out/tuners-anytime.png"
	[ -n "$drawn" ] || return 0
	cp "$tmp/anytime.tsv" "$out/tuners-anytime.tsv"
	command -v gnuplot >/dev/null 2>&1 || return 1
	set -- $drawn
	{
		echo "set terminal $term size $((460 * $# + 120)),480 font \",10\""
		echo "set output \"$out/tuners-anytime.png\""
		echo "set datafile separator \"\t\""
		# printf, not echo: dash's echo would turn the \n for
		# gnuplot into a real line break.
		printf '%s\n' "set multiplot layout 1,$# title \"protune MCTS cost+real, best measured runtime during tuning\\n$when; budget $budget_real s, seed $seed, $threads threads, size $size\" noenhanced"
		echo "set xlabel \"tuning time (s)\""
		echo "set ylabel \"best runtime (ms)\""
		echo "set grid"
		echo "set xrange [0:*]"
		echo "set yrange [0:*]"
		echo "set key below noenhanced"
		for ex in "$@"; do
			echo "set title \"$ex\" noenhanced"
			# the bench run's medians of the Halide baselines, as lines
			lines=
			for src in adams2019 manual; do
				v=$(awk -F '\t' -v ex="$ex" -v s="$src" \
					'$1 == ex && $2 == s && $5 == "pass" { print $3 }' \
					"$out/tuners.tsv")
				[ -n "$v" ] && lines="$lines, $v with lines dt 2 lw 1.5 title \"$src\""
			done
			echo "plot \"$tmp/anytime-$ex.dat\" using 2:3 with steps" \
				"lw 2 lc rgb \"#e15759\" notitle," \
				"\"\" using 2:3 with points pt 7 lc rgb \"#e15759\"" \
				"title \"mcts-real\"$lines"
		done
		echo "unset multiplot"
	} >"$tmp/anytime.gp"
	if ! gnuplot "$tmp/anytime.gp" >"$tmp/gnuplot.log" 2>&1; then
		echo "tuners.sh: gnuplot failed on the anytime curve:" >&2
		cat "$tmp/gnuplot.log" >&2
		return 1
	fi
	echo "anytime curve: $out/tuners-anytime.png"
}

term=pngcairo
gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 || term=png
rm -f "$out/tuners.png"
plot && echo "plot: $out/tuners.png"
anytime
echo "figures: $out/tuners.tsv, $out/tuners.txt"
exit $fail
