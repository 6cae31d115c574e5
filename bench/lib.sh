# lib.sh: checks of the benchmark scripts' settings, sourced by
# bench/tuners.sh and bench/warm.sh.

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
