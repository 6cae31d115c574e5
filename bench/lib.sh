# lib.sh: checks of the benchmark scripts' settings, their timing lock
# and the median of their runs, sourced by the scripts of bench/.

# is_seconds VALUE: a decimal number greater than 0
is_seconds() {
	case $1 in
	'' | *[!0-9.]* | *.*.* | .) return 1 ;;
	esac
	awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'
}

# is_count VALUE: digits only
is_count() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
}

# is_positive VALUE: digits only, and not 0
is_positive() {
	is_count "$1" && [ "$1" -gt 0 ]
}

# bench_locked CMD...: run CMD (a command or a shell function) holding the
# benchmark lock exclusively: $PROTUNE_BENCH_LOCK when set and not empty,
# else /tmp/protune-bench.lock, the lock protune's own measurements take
# (doc/tuning.md). No measuring tuner times, and nothing run under
# `flock -s` on that file runs, while CMD does; CMD waits for them in turn.
# Like pt_lock (include/protune/pt_lock.h) it waits in the turnstile
# LOCK.turn, so that compiles starting meanwhile do not overtake it.
bench_locked() {
	_lk=${PROTUNE_BENCH_LOCK:-/tmp/protune-bench.lock}
	for _f in "$_lk" "$_lk.turn"; do
		[ -e "$_f" ] || : >>"$_f" || return 1
	done
	(
		flock -x 8 && flock -x 9 || exit 1
		exec 8<&-
		"$@"
	) 8<"$_lk.turn" 9<"$_lk"
}

# median: the median of the numbers on standard input, one a line ("-"
# when there are none)
median() {
	sort -g | awk '{ v[NR] = $1 }
	END {
		if (NR == 0) print "-"
		else if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}
