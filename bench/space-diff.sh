#!/bin/sh
# bench/space-diff.sh: differential test of the tuner's search space at
# benchmark size. For each example, random complete states of the space
# (`protune space MODEL --seed S`) are compiled through the ProTune plugin,
# run on random inputs, and their output compared with the example's
# reference build (every Func at root, serial). t1100 does the same at test
# size; some Halide 14 bugs only show at benchmark size, where regions and
# tiles differ.
#
#   bench/space-diff.sh [-n COUNT] [-s FIRST_SEED] [-j JOBS] [-T TARGET]
#                       [-d space|random] [-t SECONDS] [-k] [-p]
#                       OUT_DIR EXAMPLE...
#
#   -n  schedules per example (default 20), seeds FIRST_SEED (default 1) on
#   -j  candidates compiled and run at once (default 2)
#   -T  Halide target (default host-strict_float: every schedule must then
#       give output bit-identical to the reference's; with another target
#       the example's check.conf tolerance applies)
#   -d  draw from the space (default) or with `protune random`
#   -t  generator timeout in seconds (default 600)
#   -k  keep every candidate's files, not only those of failures
#   -p  also emit each candidate's .stmt and count its strided vector
#       loads from internal buffers at constant addresses whose start is
#       not a multiple of the stride (the loads Halide 14 tags with a wrong
#       alignment, doc/schedule-legality.md rule 6)
#
# Per example, OUT_DIR/NAME/ holds the model (dumped by the plugin at
# benchmark size for TARGET), the reference build and its output, and per
# failed candidate SEED.sched and its directory. One line per candidate is
# appended to OUT_DIR/report:
#   NAME SEED ok|refused|genfail|gentimeout|linkfail|runfail|differs [WHY]
# with `-p`, ok and the failures carry `cload=N` (the count above). A
# re-run skips the (name, seed) pairs already in the report. The summary
# per example goes to standard output; the exit status is 1 when anything
# was not ok.
#
# Needs a built tree: PT_BUILD_DIR (default ./build) for protune and the
# plugin, PT_EX_DIR (default PT_BUILD_DIR/ex, else ./build/ex) for the
# example generators and RunGenMain.o, PT_HALIDE_INCDIR (default from
# config.mk) for linking.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)

# xargs calls back with --one NAME SEED (settings in the environment).
if [ "${1:-}" = --one ]; then
	n=$2 s=$3 dir=$SD_OUT/$2 d=$SD_OUT/$2/cand$3
	. "$top/examples/pt-example.sh"
	report() {
		printf '%s %s %s\n' "$n" "$s" "$*" >>"$SD_OUT/report"
	}
	rm -rf "$d"
	mkdir -p "$d"
	if ! "$SD_PROTUNE" "$SD_DRAW" "$dir/$n.model" --seed "$s" \
	     >"$d/sched" 2>"$d/draw.err"; then
		report refused "$(head -n 1 "$d/draw.err")"
		exit 0
	fi
	emit=static_library,h,registration
	[ "$SD_STMT" = 1 ] && emit=$emit,stmt
	PROTUNE_SCHEDULE_FILE=$d/sched timeout "$SD_TIMEOUT" \
		"$SD_EXDIR/bin/$n.generator" -g "$n" -o "$d" -e "$emit" -n "$n" \
		target="$SD_TARGET" size=bench machine_params="$SD_MP" \
		-p "$SD_PLUGIN" -s ProTune auto_schedule=true \
		>"$d/gen.log" 2>&1
	st=$?
	cl=
	if [ "$SD_STMT" = 1 ] && [ -f "$d/$n.stmt" ]; then
		# NAME[ramp(C, S, L)] with constants C, 2 <= S <= 4 and C not
		# a multiple of S, from a buffer the pipeline allocates.
		cl=" cload=$(awk '
			/^ *allocate / { a = $2; sub(/\[.*/, "", a); alloc[a] = 1 }
			{ s = $0
			  while (match(s, /[A-Za-z_0-9.$]+\[ramp\(-?[0-9]+, -?[0-9]+, [0-9]+\)/)) {
				t = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
				split(t, p, /[[(), ]+/)  # name ramp C S L
				if (p[4] >= 2 && p[4] <= 4 && p[3] % p[4] != 0) bad[p[1]] = 1
			  } }
			END { c = 0; for (b in bad) if (b in alloc) c++; print c }' "$d/$n.stmt")"
	fi
	case $st in
	0) ;;
	124) report gentimeout "over ${SD_TIMEOUT}s$cl"; exit 0 ;;
	*) report genfail "$(grep -m1 -e ProTune -e Error "$d/gen.log")$cl"
	   exit 0 ;;
	esac
	if ! c++ -std=c++17 -O1 -isystem "$SD_HALIDE_INC" \
	     "$SD_EXDIR/obj/RunGenMain.o" "$d/$n.registration.cpp" "$d/$n.a" \
	     -ldl -lpthread -o "$d/rungen" >"$d/link.log" 2>&1; then
		report linkfail "$(head -n 1 "$d/link.log")$cl"
		exit 0
	fi
	if ! pt_rungen_run "$d/rungen" "$d/out.tmp" 1 2>"$d/run.err"; then
		report runfail "$(tail -n 1 "$d/run.err")$cl"
		exit 0
	fi
	if [ "$SD_EXACT" = 1 ]; then
		pt-imgcmp "$dir/ref.tmp" "$d/out.tmp" 2>"$d/cmp.err"
	else
		pt_ex_compare "$n" "$dir/ref.tmp" "$d/out.tmp" 2>"$d/cmp.err"
	fi || { report differs "$(head -n 1 "$d/cmp.err")$cl"; exit 0; }
	report "ok$cl"
	[ "$SD_KEEP" = 1 ] || rm -rf "$d"
	exit 0
fi

usage() {
	echo "usage: $0 [-n COUNT] [-s FIRST_SEED] [-j JOBS] [-T TARGET] [-d space|random] [-t SECONDS] [-k] [-p] OUT_DIR EXAMPLE..." >&2
	exit 2
}

count=20 first=1 jobs=2 target=host-strict_float draw=space tmo=600
keep=0 stmt=0
while getopts n:s:j:T:d:t:kp opt; do
	case $opt in
	n) count=$OPTARG ;;
	s) first=$OPTARG ;;
	j) jobs=$OPTARG ;;
	T) target=$OPTARG ;;
	d) draw=$OPTARG ;;
	t) tmo=$OPTARG ;;
	k) keep=1 ;;
	p) stmt=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
case $draw in space|random) ;; *) usage ;; esac

B=${PT_BUILD_DIR:-$top/build}
EX=${PT_EX_DIR:-$B/ex}
[ -d "$EX/bin" ] || EX=$top/build/ex
inc=${PT_HALIDE_INCDIR:-$(sed -n 's/^HALIDE_INCDIR *= *//p' "$top/config.mk")}
for f in "$B/bin/protune" "$B/lib/libprotune_halide.so" \
	 "$EX/obj/RunGenMain.o"; do
	[ -e "$f" ] || { echo "$0: $f is missing (build the tree first)" >&2
			 exit 1; }
done
imgcmp=$B/tests/pt-imgcmp
[ -x "$imgcmp" ] || imgcmp=$top/build/tests/pt-imgcmp
[ -x "$imgcmp" ] || { echo "$0: pt-imgcmp is missing" >&2; exit 1; }

out=$1; shift
mkdir -p "$out/tools/bin" "$out/tools/lib" || exit 1
out=$(cd "$out" && pwd)
touch "$out/report"
# A private copy of protune and the plugin: rebuilding the tree during a
# long run must not change what the run uses half way.
for f in bin/protune lib/libprotune_halide.so; do
	cp "$B/$f" "$out/tools/$f.tmp" && mv "$out/tools/$f.tmp" "$out/tools/$f" ||
		exit 1
done

export PT_SRCDIR=$top PT_BUILD_DIR=$B
export PATH="$(dirname "$imgcmp"):$PATH"
export SD_OUT=$out SD_PROTUNE=$out/tools/bin/protune
export SD_PLUGIN=$out/tools/lib/libprotune_halide.so
export SD_EXDIR=$EX SD_HALIDE_INC=$inc SD_TARGET=$target SD_DRAW=$draw
export SD_TIMEOUT=$tmo SD_KEEP=$keep SD_STMT=$stmt
export SD_MP="$(getconf _NPROCESSORS_ONLN),16777216,40"
case $target in *strict_float*) SD_EXACT=1 ;; *) SD_EXACT=0 ;; esac
export SD_EXACT
. "$top/examples/pt-example.sh"

# Per example: the model at benchmark size (the plugin writes it before it
# reads the schedule file, which is empty and so refused), the reference
# build and its output.
for n in "$@"; do
	dir=$out/$n
	mkdir -p "$dir"
	[ -x "$EX/bin/$n.generator" ] ||
		{ echo "$0: no generator for $n in $EX/bin" >&2; exit 1; }
	if ! [ -s "$dir/$n.model" ]; then
		: >"$dir/empty.sched"
		PROTUNE_DUMP_MODEL=$dir/$n.model PROTUNE_SCHEDULE_FILE=$dir/empty.sched \
			"$EX/bin/$n.generator" -g "$n" -o "$dir" -e h -n m \
			target="$target" size=bench machine_params="$SD_MP" \
			-p "$SD_PLUGIN" -s ProTune auto_schedule=true \
			>"$dir/dump.log" 2>&1
		[ -s "$dir/$n.model" ] || { echo "$0: cannot dump the model of $n:" >&2
					    tail -n 3 "$dir/dump.log" >&2; exit 1; }
	fi
	if ! [ -s "$dir/ref.tmp" ]; then
		mkdir -p "$dir/ref"
		if ! "$EX/bin/$n.generator" -g "$n" -o "$dir/ref" \
		     -e static_library,h,registration -n "$n" target="$target" \
		     size=bench schedule=reference >"$dir/ref/gen.log" 2>&1 ||
		   ! c++ -std=c++17 -O1 -isystem "$inc" "$EX/obj/RunGenMain.o" \
		     "$dir/ref/$n.registration.cpp" "$dir/ref/$n.a" -ldl -lpthread \
		     -o "$dir/ref/rungen" >"$dir/ref/link.log" 2>&1 ||
		   ! pt_rungen_run "$dir/ref/rungen" "$dir/ref.tmp" 1; then
			echo "$0: cannot build or run the reference of $n" >&2
			rm -f "$dir/ref.tmp"
			exit 1
		fi
	fi
done

# The work list: round-robin over the examples, without what is done.
s=$first
end=$((first + count))
while [ "$s" -lt "$end" ]; do
	for n in "$@"; do
		grep -q "^$n $s " "$out/report" || echo "$n $s"
	done
	s=$((s + 1))
done >"$out/todo"
echo "$0: $(wc -l <"$out/todo") candidates ($draw, $target), $jobs at a time" >&2
# Each report line is far below PIPE_BUF: concurrent appends stay whole.
xargs -P "$jobs" -n 2 "$0" --one <"$out/todo"

bad=0
for n in "$@"; do
	awk -v n="$n" -v f="$first" -v e="$end" '
		$1 == n && $2 >= f && $2 < e { t++; c[$3]++; if ($3 != "ok") print "  " $0 }
		END { printf "%-16s %d: ", n, t; s = ""
		      for (k in c) { printf "%s%s %d", s, k, c[k]; s = ", " }
		      print "" }' "$out/report"
done
grep -q -v -e ' ok$' -e ' ok cload=' "$out/report" && bad=1
exit $bad
