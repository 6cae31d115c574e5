#!/bin/sh
# warm.sh: `make bench-warm`, also part of `make bench`: the warm-start
# benchmark of issue 5 (doc/tuning.md, "Warm starts").
#
# An algorithm is edited in one stage; how long does the tuner take to get
# back to the runtime the schedule had before the edit, starting warm from
# the earlier schedule, against starting cold? For every example:
#
#  1. The models of the original pipeline (M0) and of the edited one (M1):
#     the example's generator run through protune-cc at the benchmark size,
#     with and without its `edit` generator parameter (stencil_chain
#     edit=8 changes the 8th stencil's weights; local_laplacian edit=1 the
#     gray conversion's).
#  2. The old schedule: M0 tuned cold (MCTS, seed BENCH_SEED), what the
#     cache or the store held before the edit: by default with the cost
#     model alone for BENCH_BUDGET seconds, what a build's miss tunes;
#     with BENCH_OLD=real with measurement (`--measure`) for
#     BENCH_OLD_BUDGET seconds, what `protune retune` or a tuning run
#     with measure=on leaves in the store.
#  3. The target: that schedule applied to M1 (it fits: the edits change no
#     Func's loops), compiled once and kept as the reference program.
#  4. BENCH_RUNS runs, seeds BENCH_SEED+1...: M1 tuned for BENCH_BUDGET
#     seconds cold, then warm (--warm-model M0 --warm-sched OLD), each with
#     `protune tune --trace`, which records every change of the best
#     schedule with its elapsed search time.
#  5. Time to reach: the trace's best schedules are measured in the order
#     they appeared, each side by side with the reference program
#     (`protune measure --reference`: the median of per-round runtime
#     ratios); the first whose ratio is at most BENCH_TOL gives the time.
#     A schedule whose text is the old one's (but for key and meta lines)
#     is the reference program itself: ratio 1, not measured.
#     A run that never gets there within its budget (or within
#     BENCH_MAX_MEASURES measured schedules) counts as not reached.
#     The run's final schedule, what the build would keep, is measured
#     too (final_ratio).
#  6. Also the time to reach the old schedule's predicted cost on M1, the
#     search's own objective: the first trace line whose best cost is at
#     most that (within the trace's 6 digits). The cost of the old
#     schedule on M1 is the first schedule of a warm start from itself
#     (which rebuilds it exactly; t0810 checks that).
#
# The two criteria differ when the cost model ranks badly: a schedule the
# model prices higher than the old one may measure faster, and the other
# way round (issue 4 measures the model's ranking).
#
# The time is the search's own clock (elapsed_s in the trace: from the
# start of the search, after the model is loaded; a warm start's path is
# built inside it and counts). Medians across runs; a median that is not
# reached is given as "> budget" and the speed-up as a lower bound.
#
# Writes to the output directory (bench/out/ of the source tree; in quick
# mode $PT_BUILD_DIR/bench/out/; BENCH_OUT overrides), with BENCH_OLD=real
# under the names warm-real*:
#   warm.tsv      one row per example, run and start, the columns
#                 example edit run seed start cost_reach_s reach_s
#                 reached ratio measured budget_s final_ratio
#                 (cost_reach_s and reach_s "-" when not reached; ratio:
#                 the reaching schedule's runtime over the old one's, or
#                 the best measured ratio when not reached; final_ratio:
#                 the final schedule's)
#   warm-summary.tsv   one row per example: example edit stages_changed
#                 runs cold_median_s warm_median_s speedup lower_bound
#                 cold_cost_median_s warm_cost_median_s cost_speedup
#                 cost_lower_bound cold_final_ratio warm_final_ratio
#                 (speedup = cold median / warm median, by runtime;
#                 cost_*: by predicted cost; lower_bound yes when the
#                 cold median was not reached, the budget then standing
#                 in for it; *_final_ratio: medians of final_ratio)
#   warm.txt      the settings and the table printed here
#
#   warm.sh [EXAMPLE...]     (default: stencil_chain local_laplacian)
#
# Environment (empty counts as unset):
#   BENCH_QUICK=1       test size, 10 s budgets, 2 runs: a few minutes
#   BENCH_SIZE          test or bench (default bench; test when quick)
#   BENCH_BUDGET        seconds of every tuning run (default 60; 10 quick)
#   BENCH_RUNS          runs per example (default 3; 2 quick)
#   BENCH_SEED          the old schedule's seed; runs use the next ones
#                       (default 1)
#   BENCH_OLD           how the old schedule was tuned: cost (default) or
#                       real (with measurement)
#   BENCH_OLD_BUDGET    its budget in seconds (default BENCH_BUDGET; 300
#                       with BENCH_OLD=real, 30 quick)
#   BENCH_THREADS       tuner threads (default 2)
#   BENCH_TOL           a ratio at most this reaches the old runtime
#                       (default 1.05)
#   BENCH_MEASURE_RUNS, BENCH_MIN_TIME   `protune measure --runs` and
#                       `--min-time` (default 5 and 0.2; 3 and 0.05 quick)
#   BENCH_MAX_MEASURES  schedules measured per trace at most (default 40)
#   BENCH_OUT           the output directory
# From the Makefile: PT_BUILD_DIR, PT_SRCDIR.
set -u
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
PATH=$PT_BUILD_DIR/bin:$PATH
# Halide 14 misdetects some AMD processors for target=host (protune-cc(1),
# TARGET HOST): the generator runs here pass what protune-cc would.
host_target=$(protune host-target) || exit 2

die() {
	echo "warm.sh: $*" >&2
	exit 2
}

quick=${BENCH_QUICK:-0}
case $quick in
0) size=bench budget=60 runs=3 mruns=5 min_time=0.2 out=$PT_SRCDIR/bench/out ;;
1) size=test budget=10 runs=2 mruns=3 min_time=0.05 out=$PT_BUILD_DIR/bench/out ;;
*) die "BENCH_QUICK: '$quick' is not 0 or 1" ;;
esac
size=${BENCH_SIZE:-$size}
budget=${BENCH_BUDGET:-$budget}
runs=${BENCH_RUNS:-$runs}
seed=${BENCH_SEED:-1}
threads=${BENCH_THREADS:-2}
tol=${BENCH_TOL:-1.05}
mruns=${BENCH_MEASURE_RUNS:-$mruns}
min_time=${BENCH_MIN_TIME:-$min_time}
max_measures=${BENCH_MAX_MEASURES:-40}
out=${BENCH_OUT:-$out}
old_how=${BENCH_OLD:-cost}
case $old_how in
cost) name=warm old_budget=$budget ;;
real) name=warm-real old_budget=300
	[ "$quick" = 1 ] && old_budget=30 ;;
*) die "BENCH_OLD: '$old_how' is not cost or real" ;;
esac
old_budget=${BENCH_OLD_BUDGET:-$old_budget}

. "$PT_SRCDIR/bench/lib.sh"
case $size in
test | bench) ;;
*) die "BENCH_SIZE: '$size' is not test or bench" ;;
esac
is_seconds "$budget" || die "BENCH_BUDGET: '$budget' is not a number of seconds"
is_seconds "$old_budget" ||
	die "BENCH_OLD_BUDGET: '$old_budget' is not a number of seconds"
is_positive "$runs" || die "BENCH_RUNS: '$runs' is not a number of runs (1 or more)"
case $seed in
'' | *[!0-9]*) die "BENCH_SEED: '$seed' is not an unsigned integer" ;;
esac
is_positive "$threads" || die "BENCH_THREADS: '$threads' is not a number of threads"
is_seconds "$tol" || die "BENCH_TOL: '$tol' is not a ratio"
is_positive "$mruns" || die "BENCH_MEASURE_RUNS: '$mruns' is not a number of runs"
is_seconds "$min_time" || die "BENCH_MIN_TIME: '$min_time' is not a number of seconds"
is_positive "$max_measures" ||
	die "BENCH_MAX_MEASURES: '$max_measures' is not a number (1 or more)"

# edit_of EXAMPLE: the generator parameter that edits one stage
edit_of() {
	case $1 in
	stencil_chain) echo edit=8 ;;
	local_laplacian) echo edit=1 ;;
	*) return 1 ;;
	esac
}

[ $# -gt 0 ] || set -- stencil_chain local_laplacian
for ex in "$@"; do
	edit_of "$ex" >/dev/null ||
		die "$ex has no one-stage edit (known: stencil_chain local_laplacian)"
	[ -x "$PT_BUILD_DIR/ex/bin/$ex.generator" ] ||
		die "no $PT_BUILD_DIR/ex/bin/$ex.generator (make bench-warm builds it)"
done
for f in bin/protune bin/protune-cc lib/libprotune_halide.so; do
	[ -e "$PT_BUILD_DIR/$f" ] || die "no $PT_BUILD_DIR/$f"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/protune-warm.XXXXXX") || die "no temporary directory"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$out" || die "cannot make $out"
# No configuration file, no store, no shared cache: only these settings.
PROTUNE_CONFIG=/dev/null
PROTUNE_STORE_DIR=off
PROTUNE_CACHE_DIR=$tmp/cache
PROTUNE_PLUGIN=$PT_BUILD_DIR/lib/libprotune_halide.so
export PROTUNE_CONFIG PROTUNE_STORE_DIR PROTUNE_CACHE_DIR PROTUNE_PLUGIN

machine=$(nproc 2>/dev/null || echo 2),16777216,40
when=$(date -u '+%Y-%m-%d %H:%M UTC')
{
	echo "warm-start benchmark, $when, $(uname -n)"
	echo "size $size; budget $budget s per tuning run; $runs runs; seeds: old $seed, runs $((seed + 1))..$((seed + runs)); $threads threads"
	if [ "$old_how" = real ]; then
		echo "old schedule: MCTS with measurement (--measure), $old_budget s"
	else
		echo "old schedule: MCTS, cost model only, $old_budget s"
	fi
	echo "reached: measured runtime / old schedule's runtime <= $tol (protune measure --runs $mruns --min-time $min_time, side by side)"
	echo
} >"$tmp/warm.txt"
cat "$tmp/warm.txt"

# dump_model EXAMPLE OUT [PARAM...]: the pipeline's model, from a run of the
# generator through protune-cc that tunes almost nothing and keeps nothing.
dump_model() {
	_ex=$1 _m=$2
	shift 2
	mkdir -p "$tmp/gen"
	PROTUNE_MODE=readonly PROTUNE_BUDGET=0.5 PROTUNE_DUMP_MODEL=$_m \
		protune-cc "$PT_BUILD_DIR/ex/bin/$_ex.generator" -g "$_ex" \
		-o "$tmp/gen" -e static_library,h target="$host_target" size="$size" \
		machine_params="$machine" "$@" >"$tmp/gen.log" 2>&1 &&
		[ -s "$_m" ] ||
		{ echo "warm.sh: $_ex $*: no model:" >&2; cat "$tmp/gen.log" >&2; return 1; }
}

# ratio SCHED: the schedule's runtime over the reference program's, side by
# side; memoized by the schedule's text (a trace repeats schedules).
ratio() {
	# The old schedule itself (a warm start's first answer, as a rule)
	# is the reference program: 1 by definition, not measured (two
	# timings of one program differ by noise alone).
	if [ "$(grep -v '^key \|^meta ' "$1")" = \
	     "$(grep -v '^key \|^meta ' "$tmp/$ex.target.sched")" ]; then
		echo 1
		return 0
	fi
	_sum=$(sed 1,2d "$1" | cksum | tr -c '0-9\n' _)
	if [ -f "$tmp/memo/$_sum" ]; then
		cat "$tmp/memo/$_sum"
		return 0
	fi
	mkdir -p "$tmp/memo"
	_r=$(protune measure "$m1" "$1" --runs "$mruns" --min-time "$min_time" \
		--reference "$refbin" 2>"$tmp/measure.log") ||
		{ echo "warm.sh: measuring $1:" >&2; cat "$tmp/measure.log" >&2; return 1; }
	# "median min max runs compile_ms ratio ref_median"
	set -- $_r
	[ $# -ge 7 ] || { echo "warm.sh: unexpected measure output: $_r" >&2; return 1; }
	echo "$6" >"$tmp/memo/$_sum"
	echo "$6"
}

# reach TRACE-DIR: "reach_s reached ratio measured" for a tuning run.
reach() {
	_n=0 _best=-
	# the lines that name a new best schedule, in order
	awk -F '\t' 'NR > 1 && $6 != "-" { print $1, $6 }' "$1/trace.tsv" \
		>"$tmp/points"
	while read -r _t _s; do
		if [ "$_n" -ge "$max_measures" ]; then
			break
		fi
		_x=$(ratio "$1/$_s") || return 1
		_n=$((_n + 1))
		if [ "$_best" = - ] || awk -v a="$_x" -v b="$_best" 'BEGIN { exit !(a < b) }'; then
			_best=$_x
		fi
		if awk -v a="$_x" -v t="$tol" 'BEGIN { exit !(a <= t) }'; then
			echo "$_t yes $_x $_n"
			return 0
		fi
	done <"$tmp/points"
	echo "- no $_best $_n"
}

printf 'example\tedit\trun\tseed\tstart\tcost_reach_s\treach_s\treached\tratio\tmeasured\tbudget_s\tfinal_ratio\n' \
	>"$tmp/warm.tsv"
printf 'example\tedit\tstages_changed\truns\tcold_median_s\twarm_median_s\tspeedup\tlower_bound\tcold_cost_median_s\twarm_cost_median_s\tcost_speedup\tcost_lower_bound\tcold_final_ratio\twarm_final_ratio\n' \
	>"$tmp/warm-summary.tsv"
status=0
for ex in "$@"; do
	edit=$(edit_of "$ex")
	echo "== $ex ($edit), $size size"
	m0=$tmp/$ex.0.model m1=$tmp/$ex.1.model
	if ! dump_model "$ex" "$m0" || ! dump_model "$ex" "$m1" "$edit"; then
		status=1
		continue
	fi
	# the old schedule, and the same schedule under the edited model's key
	old=$tmp/$ex.old.sched
	set --
	[ "$old_how" = real ] && set -- --measure
	if ! protune tune "$m0" --budget "$old_budget" --seed "$seed" \
		--threads "$threads" "$@" -q >"$old" 2>"$tmp/tune.log"; then
		echo "warm.sh: tuning $ex:" >&2
		cat "$tmp/tune.log" >&2
		status=1
		continue
	fi
	k1=$(protune key "$m1" | sed -n 1p)
	sed "2s/.*/key $k1/" "$old" >"$tmp/$ex.target.sched"
	if ! protune check "$m1" "$tmp/$ex.target.sched" 2>"$tmp/check.log"; then
		echo "warm.sh: $ex: the old schedule does not fit the edited pipeline:" >&2
		cat "$tmp/check.log" >&2
		status=1
		continue
	fi
	# its predicted cost on M1: a warm start from itself rebuilds it
	if ! protune tune "$m1" --iterations 1 --threads 1 \
		--warm-model "$m1" --warm-sched "$tmp/$ex.target.sched" \
		>/dev/null 2>"$tmp/tune.log"; then
		echo "warm.sh: pricing the old schedule of $ex:" >&2
		cat "$tmp/tune.log" >&2
		status=1
		continue
	fi
	oldcost=$(sed -n 's/^warm start: first schedule cost \([^,]*\),.*/\1/p' \
		"$tmp/tune.log")
	[ -n "$oldcost" ] || die "no first schedule cost in: $(cat "$tmp/tune.log")"
	rm -rf "$tmp/ref"
	if ! protune measure "$m1" "$tmp/$ex.target.sched" --runs "$mruns" \
		--min-time "$min_time" --keep >"$tmp/ref.out" 2>"$tmp/ref.log"; then
		echo "warm.sh: $ex: measuring the old schedule:" >&2
		cat "$tmp/ref.log" >&2
		status=1
		continue
	fi
	refdir=$(sed -n 's/^protune: kept //p' "$tmp/ref.log")
	refbin=$refdir/rungen
	[ -x "$refbin" ] || die "no kept RunGen program in '$refdir'"
	rm -rf "$tmp/memo"
	printf 'old schedule: %s ms (compiled in %s ms), predicted cost %s\n' \
		"$(cut -d' ' -f1 "$tmp/ref.out")" "$(cut -d' ' -f5 "$tmp/ref.out")" \
		"$oldcost"
	changed=-
	r=1
	while [ "$r" -le "$runs" ]; do
		s=$((seed + r))
		for start in cold warm; do
			set --
			[ "$start" = warm ] &&
				set -- --warm-model "$m0" --warm-sched "$old"
			rm -rf "$tmp/trace"
			if ! protune tune "$m1" --budget "$budget" --seed "$s" \
				--threads "$threads" --trace "$tmp/trace" "$@" \
				>/dev/null 2>"$tmp/tune.log"; then
				echo "warm.sh: tuning $ex ($start, seed $s):" >&2
				cat "$tmp/tune.log" >&2
				status=1
				continue
			fi
			if [ "$start" = warm ]; then
				changed=$(sed -n 's/^warm start: \([0-9]* of [0-9]*\) stages changed$/\1/p' \
					"$tmp/tune.log" | sed -n 1p)
			fi
			if ! res=$(reach "$tmp/trace"); then
				status=1
				continue
			fi
			# the first line at most the old cost (6 digits)
			creach=$(awk -F '\t' -v c="$oldcost" '
				NR > 1 && $4 + 0 <= c * (1 + 1e-5) { print $1; f = 1; exit }
				END { if (!f) print "-" }' "$tmp/trace/trace.tsv")
			# the final schedule: the trace's last
			last=$(awk -F '\t' 'NR > 1 && $6 != "-" { s = $6 } END { print s }' \
				"$tmp/trace/trace.tsv")
			if [ -z "$last" ] || ! fin=$(ratio "$tmp/trace/$last"); then
				status=1
				continue
			fi
			set -- $res
			printf '%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
				"$ex" "$edit" "$r" "$s" "$start" "$creach" "$1" \
				"$2" "$3" "$4" "$budget" "$fin" >>"$tmp/warm.tsv"
			printf '  run %d %s: cost reached %s; %s\n' "$r" "$start" \
				"$([ "$creach" = - ] && echo "not in $budget s" ||
					echo "at $creach s")" "$(
				if [ "$2" = yes ]; then
					echo "runtime reached at $1 s (ratio $3, $4 schedules measured)"
				else
					echo "runtime not reached in $budget s (best ratio $3, $4 schedules measured)"
				fi); final ratio $fin"
		done
		r=$((r + 1))
	done
	rm -rf "$refdir"
	# medians; a run not reached sorts last (it took more than the budget)
	awk -F '\t' -v ex="$ex" -v ed="$edit" -v ch="$changed" -v b="$budget" '
		function med(k,   n, i, j, t, a) {
			n = cnt[k]
			for (i = 1; i <= n; i++) a[i] = v[k, i]
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j] < a[j - 1]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			if (n % 2)
				return a[(n + 1) / 2]
			# a middle run not reached: the median is not either
			if (a[n / 2 + 1] >= 1e30)
				return 1e30
			return (a[n / 2] + a[n / 2 + 1]) / 2
		}
		$1 == ex && $5 != "" {
			k = $5; cnt[k]++
			v[k, cnt[k]] = $8 == "yes" ? $7 + 0 : 1e30
			v["c" k, cnt[k]] = $6 != "-" ? $6 + 0 : 1e30
			cnt["c" k]++
			v["f" k, cnt[k]] = $12 + 0
			cnt["f" k]++
		}
		# cold and warm medians of one criterion: 4 columns
		function cols(p,   c, w, lb) {
			c = med(p "cold"); w = med(p "warm")
			lb = c >= 1e30 ? "yes" : "no"
			if (w >= 1e30)
				return sprintf("%s\t-\t-\t-", lb == "yes" ? "-" : sprintf("%.3f", c))
			if (lb == "yes") c = b
			return sprintf("%s\t%.3f\t%.1f\t%s", lb == "yes" ? "-" : sprintf("%.3f", c),
				w, c / (w > 0.001 ? w : 0.001), lb)
		}
		END {
			if (!cnt["cold"] || !cnt["warm"]) exit 1
			printf "%s\t%s\t%s\t%d\t%s\t%s\t%.3f\t%.3f\n", ex, ed, ch,
				cnt["cold"], cols(""), cols("c"), med("fcold"),
				med("fwarm")
		}' "$tmp/warm.tsv" >>"$tmp/warm-summary.tsv" || status=1
done

{
	echo
	echo "time to reach the old schedule (median of runs, seconds of search):"
	awk -F '\t' -v b="$budget" '
		function t(v, lb) { return lb == "yes" ? "> " b : v }
		NR == 1 { next }
		{ printf "  %-16s %-7s %-10s runtime: cold %8s  warm %7s  speed-up %s%s\n",
			$1, $2, "(" $3 ")", t($5, $8), $6, $8 == "yes" ? ">= " : "", $7
		  printf "  %-16s %-7s %-10s cost:    cold %8s  warm %7s  speed-up %s%s\n",
			"", "", "", t($9, $12), $10, $12 == "yes" ? ">= " : "", $11
		  printf "  %-16s %-7s %-10s final schedule / old: cold %.2f  warm %.2f\n",
			"", "", "", $13, $14 }' \
		"$tmp/warm-summary.tsv"
} >"$tmp/table.txt"
cat "$tmp/table.txt"
cat "$tmp/table.txt" >>"$tmp/warm.txt"
for f in warm.tsv warm-summary.tsv warm.txt; do
	g=$name${f#warm}
	cp "$tmp/$f" "$out/$g.tmp" && mv "$out/$g.tmp" "$out/$g" ||
		die "cannot write $out/$g"
done
echo "figures: $out/$name.tsv, $out/$name-summary.tsv, $out/$name.txt"
exit $status
