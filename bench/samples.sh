#!/bin/sh
# bench/samples.sh: measure random complete schedules of the tuner's space
# (issue 4's training and evaluation data for the cost model).
#
#   bench/samples.sh [-j JOBS] [-n COUNT] [-s FIRST_SEED] [-r RUNS]
#                    [-t MIN_TIME] OUT_DIR NAME...
#
# NAME is an example (examples/NAME) or rp:SEED for the random pipeline
# generator at that seed (tests/gen, 8 stage steps). For each NAME the model
# is dumped at benchmark size into OUT_DIR/models/NAME.model (the generator
# runs once through the ProTune plugin with PROTUNE_DUMP_MODEL); then COUNT
# schedules, `protune space MODEL --seed S` for S = FIRST_SEED ..., are
# measured with `protune measure` (RUNS runs of RunGen's benchmark, each for
# at least MIN_TIME seconds). JOBS measurements run at once: compiles
# overlap, benchmark runs take the machine-wide lock one at a time.
#
# Every sample is timed side by side with a reference binary of the same
# pipeline (OUT_DIR/refs/NAME.rungen: its space schedule of seed 0), in
# alternating order under one hold of the benchmark lock, and the ratio of
# the two is recorded too.
#
# One line per schedule is appended to OUT_DIR/samples.tsv:
#   name seed status median_ms min_ms max_ms compile_ms sched_id ratio ref_ms
# sched_id is the first 16 hex digits of the git blob id of the schedule
# (`git hash-object`). status is ok, or fail (the schedule did not compile or run; the error is
# in OUT_DIR/scheds/NAME/SEED.err). Seeds are visited round-robin across
# the names, so an interrupted run leaves every name with about as many
# samples; a re-run skips the (name, seed) pairs already in the file.
#
# Needs a built tree (make all examples build/tests/random_pipeline.generator)
# and PROTUNE_CACHE_DIR for RunGenMain.o (default OUT_DIR/cache).
set -eu

# xargs calls back with --one OUT_DIR NAME SEED (settings in the environment).
if [ "${1:-}" = --one ]; then
	out=$2 n=$3 s=$4 m=$2/models/$3.model d=$2/scheds/$3
	protune space "$m" --seed "$s" >"$d/$s.sched"
	sha=$(git hash-object "$d/$s.sched" | cut -c1-16)
	if r=$(protune measure "$m" "$d/$s.sched" --runs "$PT_SAMPLE_RUNS" \
		--min-time "$PT_SAMPLE_MIN_TIME" \
		--reference "$out/refs/$n.rungen" 2>"$d/$s.err"); then
		set -- $r
		printf '%s\t%s\tok\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$s" \
			"$1" "$2" "$3" "$5" "$sha" "$6" "$7" >>"$out/samples.tsv"
		rm -f "$d/$s.err"
	else
		printf '%s\t%s\tfail\t-\t-\t-\t-\t%s\t-\t-\n' "$n" "$s" \
			"$sha" >>"$out/samples.tsv"
	fi
	exit 0
fi

jobs=2 count=100 first=1 runs=1 min_time=0.05
while getopts j:n:s:r:t: opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	n) count=$OPTARG ;;
	s) first=$OPTARG ;;
	r) runs=$OPTARG ;;
	t) min_time=$OPTARG ;;
	*) echo "usage: $0 [-j JOBS] [-n COUNT] [-s FIRST_SEED] [-r RUNS] [-t MIN_TIME] OUT_DIR NAME..." >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: $0 [options] OUT_DIR NAME..." >&2; exit 2; }

top=$(cd "$(dirname "$0")/.." && pwd)
B=${PT_BUILD_DIR:-$top/build}
out=$1; shift
mkdir -p "$out/models" "$out/scheds"
out=$(cd "$out" && pwd)
# A private copy of protune and the plugin (found next to it, as
# installed): rebuilding the tree during a run of hours must not change or
# remove what the run uses half way.
mkdir -p "$out/tools/bin" "$out/tools/lib"
for f in bin/protune bin/protune-cc lib/libprotune_halide.so; do
	cp "$B/$f" "$out/tools/$f.tmp" && mv "$out/tools/$f.tmp" "$out/tools/$f"
done
export PATH="$out/tools/bin:$PATH"
# Halide 14 misdetects some AMD processors for target=host (protune-cc(1),
# TARGET HOST): the generator runs here pass what protune-cc would.
host_target=$(protune host-target) || exit 2
export PROTUNE_CACHE_DIR="${PROTUNE_CACHE_DIR:-$out/cache}"
export PROTUNE_STORE_DIR=off
nproc=$(getconf _NPROCESSORS_ONLN)
tsv=$out/samples.tsv
touch "$tsv"

# The model of NAME at benchmark size, dumped by the plugin.
dump_model() {
	name=$1 model=$out/models/$1.model
	[ -s "$model" ] && return 0
	case $name in
	rp:*) gen=$B/tests/random_pipeline.generator
	      set -- -g random_pipeline "seed=${name#rp:}" stages=8 ;;
	*)    gen=$B/ex/bin/$name.generator
	      set -- -g "$name" ;;
	esac
	d=$(mktemp -d "$out/dump.XXXXXX")
	if ! PROTUNE_DUMP_MODEL=$model.tmp "$gen" "$@" -o "$d" -e h -n m \
		target="$host_target" size=bench machine_params="$nproc,16777216,40" \
		-p "$out/tools/lib/libprotune_halide.so" -s ProTune \
		auto_schedule=true >"$d/log" 2>&1 || ! [ -s "$model.tmp" ]; then
		echo "$0: cannot dump the model of $name:" >&2
		tail -n 5 "$d/log" >&2
		rm -rf "$d" "$model.tmp"
		return 1
	fi
	mv "$model.tmp" "$model"
	rm -rf "$d"
}

# The reference of NAME: its space schedule of seed 0, compiled once and
# timed alongside every sample (the samples' ratios to it drift much less
# than their times on a shared machine).
build_ref() {
	ref=$out/refs/$1.rungen
	[ -x "$ref" ] && return 0
	mkdir -p "$out/refs"
	protune space "$out/models/$1.model" --seed 0 >"$out/refs/$1.sched"
	kept=$(protune measure "$out/models/$1.model" "$out/refs/$1.sched" \
		--runs 1 --keep 2>&1 >/dev/null | sed -n 's/^protune: kept //p')
	if [ -z "$kept" ] || ! [ -x "$kept/rungen" ]; then
		echo "$0: cannot build the reference of $1" >&2
		return 1
	fi
	cp "$kept/rungen" "$ref.tmp" && mv "$ref.tmp" "$ref"
	rm -rf "$kept"
}

for n in "$@"; do
	dump_model "$n"
	build_ref "$n"
	mkdir -p "$out/scheds/$n"
done

# The work list, round-robin, without what is done already.
s=$first
end=$((first + count))
while [ "$s" -lt "$end" ]; do
	for n in "$@"; do
		grep -q "^$n	$s	" "$tsv" || echo "$n $s"
	done
	s=$((s + 1))
done >"$out/todo"

total=$(wc -l <"$out/todo")
echo "$0: $total schedules to measure, $jobs at a time, into $tsv" >&2
export PT_SAMPLE_RUNS=$runs PT_SAMPLE_MIN_TIME=$min_time
# Each line appended is far below PIPE_BUF: concurrent appends stay whole.
sed "s|^|$out |" "$out/todo" | xargs -P "$jobs" -n 3 "$0" --one
echo "$0: done: $(grep -c '	ok	' "$tsv") ok, $(grep -c '	fail	' "$tsv") failed in all" >&2
