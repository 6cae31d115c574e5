# test-lib.sh: the shell test harness, in the manner of git's t/test-lib.sh.
#
# A test script sets test_description, sources this file, calls
# test_expect_success any number of times and ends with test_done. It
# prints TAP. Each script runs in its own empty trash directory under
# $PT_BUILD_DIR/tests/trash/, removed when every test passed.
#
#   test_expect_success [PREREQS] 'title' 'commands'
#   test_skip_all 'reason'              (before any test)
#   test_set_prereq NAME / test_have_prereq NAME
#   test_must_fail CMD...               CMD must exit 1..125 (not crash)
#   test_expect_code N CMD...           CMD must exit with status N
#   test_cmp EXPECT ACTUAL              diff -u
#   test_grep PATTERN FILE              grep, showing FILE when it fails
#
# Environment: PT_BUILD_DIR (build outputs, required), PT_SRCDIR (source
# tree), PT_TEST_VERBOSE=1 shows each test's output.

set -u
: "${PT_BUILD_DIR:?PT_BUILD_DIR must point to the build directory (run through make check)}"
: "${PT_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
PT_BUILD_DIR=$(cd "$PT_BUILD_DIR" && pwd)
export PT_BUILD_DIR PT_SRCDIR

test_name=$(basename "$0" .sh)
TRASH_DIRECTORY=$PT_BUILD_DIR/tests/trash/$test_name
rm -rf "$TRASH_DIRECTORY"
mkdir -p "$TRASH_DIRECTORY" || { echo "Bail out! cannot create $TRASH_DIRECTORY"; exit 1; }
cd "$TRASH_DIRECTORY" || exit 1
HOME=$TRASH_DIRECTORY
export HOME
# The cache lives in the trash directory ($HOME/.cache/protune), and git
# repository discovery (the store) never climbs out of it into the source
# tree's own repository.
unset XDG_CACHE_HOME XDG_CONFIG_HOME
GIT_CEILING_DIRECTORIES=$(dirname "$TRASH_DIRECTORY")
export GIT_CEILING_DIRECTORIES
# Tests see only protune's build, never a user's settings.
for v in $(env | sed -n 's/^\(PROTUNE_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# A miss tunes for its whole budget (60 s by default): tests tune for one
# second unless they say otherwise.
PROTUNE_BUDGET=1
export PROTUNE_BUDGET
PATH=$PT_BUILD_DIR/bin:$PT_BUILD_DIR/tests:$PATH
export PATH

test_count=0
test_failed=0
test_prereqs=" "
test_output=$TRASH_DIRECTORY/.test-output

test_set_prereq() { test_prereqs="$test_prereqs$1 "; }
test_have_prereq() {
	for p in $(printf '%s' "$1" | tr ',' ' '); do
		case "$test_prereqs" in *" $p "*) ;; *) return 1 ;; esac
	done
	return 0
}

test_skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

test_expect_success() {
	prereq=
	if [ $# -eq 3 ]; then prereq=$1; shift; fi
	[ $# -eq 2 ] || { echo "Bail out! test_expect_success needs 2 or 3 arguments"; exit 1; }
	test_count=$((test_count + 1))
	if [ -n "$prereq" ] && ! test_have_prereq "$prereq"; then
		echo "ok $test_count # skip $1 (missing $prereq)"
		return 0
	fi
	if (cd "$TRASH_DIRECTORY" && eval "$2") >"$test_output" 2>&1; then
		echo "ok $test_count - $1"
		[ "${PT_TEST_VERBOSE:-0}" = 1 ] && sed 's/^/# /' "$test_output"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$test_output"
		printf '%s\n' "$2" | sed 's/^/#   | /'
	fi
	return 0
}

test_must_fail() {
	"$@"
	code=$?
	if [ $code -eq 0 ]; then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif [ $code -gt 125 ]; then
		echo "test_must_fail: command died (exit $code): $*" >&2
		return 1
	fi
	return 0
}

test_expect_code() {
	want=$1
	shift
	"$@"
	code=$?
	[ $code -eq "$want" ] && return 0
	echo "test_expect_code: exit $code, want $want: $*" >&2
	return 1
}

test_cmp() { diff -u "$1" "$2"; }
# test_line_count = N FILE (or != N, -lt N, ...)
test_line_count() {
	_n=$(wc -l <"$3")
	test "$_n" "$1" "$2" && return 0
	echo "test_line_count: $3 has $_n lines, want $1 $2:" >&2
	cat "$3" >&2
	return 1
}
test_path_is_missing() {
	test ! -e "$1" && return 0
	echo "test_path_is_missing: $1 exists" >&2
	return 1
}

test_grep() {
	if ! grep -e "$1" "$2" >/dev/null; then
		echo "test_grep: no '$1' in $2:" >&2
		sed 's/^/| /' "$2" >&2
		return 1
	fi
}

# protune_tree_or_skip: for tests that run protune's own Makefile (make
# check passes B=NAME/ to it; PT_BUILD_DIR is that directory): `top`, the
# directory that holds the build directory and the Makefile, and `B`, the
# build directory as that Makefile names it; every test skipped when there
# is no such Makefile.
protune_tree_or_skip() {
	top=$(dirname "$PT_BUILD_DIR")
	B=$(basename "$PT_BUILD_DIR")/
	if ! grep -q '^include config.mk' "$top/Makefile" 2>/dev/null; then
		test_skip_all "no protune Makefile in $top"
	fi
}

# blur_measure_setup [GENERATOR-PARAM...]: blur.model (test size) in the
# current directory, from a run of blur's generator through the plugin,
# and RunGenMain.o ready for `protune measure` in $HOME/.cache/protune
# (copied from the build's test cache when there, else compiled once by a
# first measurement of blur's baseline schedule, base.sched).
blur_measure_setup() {
	mkdir -p gen "$HOME/.cache/protune/rungen" &&
	{ cp "$PT_BUILD_DIR"/tests/protune-cache/rungen/RunGenMain-*.o \
		"$HOME/.cache/protune/rungen/" 2>/dev/null || :; } &&
	PROTUNE_DUMP_MODEL=$PWD/blur.model "$PT_BUILD_DIR/ex/bin/blur.generator" \
		-g blur -o gen -e static_library,h,registration -n blur \
		-p "$PT_BUILD_DIR/lib/libprotune_halide.so" -s ProTune \
		auto_schedule=true target="$(protune host-target)" size=test "$@" >gen.log 2>&1
	test -s blur.model &&
	protune baseline blur.model >base.sched &&
	protune measure blur.model base.sched --runs 1 >/dev/null
}

test_done() {
	echo "1..$test_count"
	if [ "$test_failed" -eq 0 ]; then
		cd "$PT_BUILD_DIR" && rm -rf "$TRASH_DIRECTORY"
		exit 0
	fi
	echo "# failed $test_failed of $test_count in $test_name (trash kept: $TRASH_DIRECTORY)"
	exit 1
}
