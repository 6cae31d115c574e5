#!/bin/sh
test_description='schedules that do not fit, and servers that misbehave, fail the generator cleanly'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

gen=$PT_BUILD_DIR/ex/bin/blur.generator
hgen=$PT_BUILD_DIR/ex/bin/hist_eq.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so

# run GEN NAME DIR: a generator run through the plugin (test size).
run() {
	mkdir -p "$3" &&
	"$1" -g "$2" -o "$3" -e static_library,h -n "$2" -p "$plugin" \
		-s ProTune auto_schedule=true target=host size=test
}

# Halide's generator main exits 255 on an uncaught error (what the plugin
# throws); any other status would be a crash or a signal.
gen_fails() {
	test_expect_code 255 "$@"
}

# refused SCHEDULE DIR: apply SCHEDULE to blur; it must fail with a ProTune
# message on stderr (in DIR.err) and leave no library behind.
refused() {
	PROTUNE_SCHEDULE_FILE=$PWD/$1 gen_fails run "$gen" blur "$2" \
		2>"$2.err" &&
	test_grep "ProTune" "$2.err" &&
	! test -e "$2/blur.a"
}

# replace_func SCHED FUNC TEXT: SCHED with FUNC's entry replaced by TEXT.
replace_func() {
	awk -v f="$2" -v t="$3" '
		/^func / { skip = ($2 == f); if (skip) print t; else print; next }
		/^  / { if (!skip) print; next }
		{ print }' "$1"
}

test_expect_success 'setup: the blur model and a schedule that fits' '
	PROTUNE_DUMP_MODEL=$PWD/blur.model run "$gen" blur base &&
	protune baseline blur.model >good.sched &&
	PROTUNE_SCHEDULE_FILE=$PWD/good.sched run "$gen" blur good &&
	test -s good/blur.a &&
	PROTUNE_DUMP_MODEL=$PWD/hist.model run "$hgen" hist_eq hbase
'

last=$(grep "^func " good.sched | tail -n 1 | cut -d" " -f2)

test_expect_success 'a schedule for another key is refused' '
	sed "s/^key .*/key 0123456789abcdef0123456789abcdef/" good.sched >key.sched &&
	refused key.sched key &&
	test_grep "key" key.err
'

test_expect_success 'a schedule with an unknown stage is refused, naming it' '
	test -n "$last" &&
	{ cat good.sched && printf "  stage 7\n    parallel v0\n"; } >stage.sched &&
	refused stage.sched stage &&
	test_grep "$last" stage.err
'

test_expect_success 'a schedule with an unknown dim is refused' '
	replace_func good.sched "$last" "$(printf "func %s root\n  stage 0\n    parallel v9" "$last")" >dim.sched &&
	refused dim.sched dim &&
	test_grep "v9" dim.err
'

test_expect_success 'vectorizing a loop of unknown extent is refused' '
	replace_func good.sched "$last" "$(printf "func %s root\n  stage 0\n    vectorize v1" "$last")" >vec.sched &&
	refused vec.sched vec &&
	test_grep "v1" vec.err
'

test_expect_success 'a malformed schedule is refused with its line number' '
	printf "protune-schedule 1\nkey nothex\n" >syntax.sched &&
	refused syntax.sched syntax &&
	test_grep "syntax.sched:2" syntax.err
'

test_expect_success 'a parallel RVar in an update (a race) is refused' '
	protune baseline hist.model >hgood.sched &&
	stage=$(awk "/^func /{f=\$2} /^  stage /{s=\$2} /^    dim r0 /{print f \".\" s; exit}" hist.model) &&
	func=${stage%.*} idx=${stage#*.} &&
	test -n "$func" &&
	replace_func hgood.sched "$func" "$(printf "func %s root\n  stage %s\n    parallel r0" "$func" "$idx")" >race.sched &&
	test_must_fail protune check hist.model race.sched 2>race.err &&
	test_grep "r0" race.err &&
	PROTUNE_SCHEDULE_FILE=$PWD/race.sched gen_fails run "$hgen" hist_eq race 2>race.gen.err &&
	test_grep "ProTune" race.gen.err &&
	! test -e race/hist_eq.a
'

# The server path: a scripted server stands in for protune-cc --serve.
test_expect_success 'a schedule the plugin refuses is reported and a second answer applied' '
	printf "schedule %s\nschedule %s\n" "$PWD/dim.sched" "$PWD/good.sched" >s1 &&
	PROTUNE_CC=$PT_BUILD_DIR/tests/pt-fakeserver PT_FAKE_SCRIPT=$PWD/s1 \
		PT_FAKE_LOG=$PWD/s1.log run "$gen" blur f1 &&
	test -s f1/blur.a &&
	test_grep "^refused .*v9" s1.log &&
	test_grep "^applied" s1.log
'

for what in garbage die "error the cache is on fire"; do
	test_expect_success "a server that answers '$what' fails the generator clearly" "
		echo '$what' >script &&
		PROTUNE_CC=\$PT_BUILD_DIR/tests/pt-fakeserver PT_FAKE_SCRIPT=\$PWD/script \
			gen_fails run \"\$gen\" blur bad 2>bad.err &&
		test_grep ProTune bad.err &&
		! test -e bad/blur.a
	"
done

test_expect_success 'the server error text reaches the user' '
	test_grep "the cache is on fire" bad.err
'

test_expect_success 'a server that hangs times out instead of hanging the build' '
	echo hang >hang &&
	PROTUNE_CHANNEL_TIMEOUT_MS=1000 PROTUNE_CC=$PT_BUILD_DIR/tests/pt-fakeserver \
		PT_FAKE_SCRIPT=$PWD/hang gen_fails run "$gen" blur hung 2>hung.err &&
	test_grep "timed out" hung.err
'

test_expect_success 'heartbeats keep a slow server alive past the read timeout' '
	printf "wait 15\nschedule %s\n" "$PWD/good.sched" >slow &&
	PROTUNE_CHANNEL_TIMEOUT_MS=1000 PROTUNE_CC=$PT_BUILD_DIR/tests/pt-fakeserver \
		PT_FAKE_SCRIPT=$PWD/slow run "$gen" blur slowok &&
	test -s slowok/blur.a
'

test_done
