#!/bin/sh
test_description='libprotune_halide.so extracts models and applies schedules in a real generator'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

gen=$PT_BUILD_DIR/ex/bin/blur.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so

# run DIR [ARGS...]: blur through the plugin at test size into DIR,
# emitting $EMIT (default: the library, header, registration and schedule).
run() {
	_d=$1
	shift
	mkdir -p "$_d" &&
	"$gen" -g blur -o "$_d" -e "${EMIT:-static_library,h,registration,schedule}" \
		-n blur -p "$plugin" -s ProTune auto_schedule=true size=test \
		"$@"
}

test_expect_success "the plugin needs nothing but libHalide, libxxhash and libc" '
	test -f "$plugin" &&
	nm -D --undefined-only "$plugin" >undef &&
	! grep -v -e Halide -e XXH -e GLIBC -e CXXABI -e GCC_ -e "^ *w " undef
'

test_expect_success 'the plugin dumps the model of blur, for the concrete target' '
	PROTUNE_DUMP_MODEL=$PWD/blur.model PROTUNE_DEBUG_TIMING=1 \
		run dump target=host 2>dump.err &&
	test "$(head -n 1 blur.model)" = "protune-model 1" &&
	grep "^target " blur.model >target &&
	! test_grep "\"host\"" target &&
	test_grep "x86-64-linux" target &&
	test_grep "^generator \"blur\"" blur.model &&
	test_grep "^func f2 .*output" blur.model &&
	test_grep "protune: model: 3 funcs, 3 stages, .* ms extract, .* ms print+hash" dump.err &&
	protune model blur.model >reprinted &&
	protune key blur.model >key &&
	test -s key
'

# max_filter reads vmax(x + dx, y - h, c) with dx = (2 r1 - 1) r0 and
# h = sqrt(26^2 - r0^2) clamped: affine in x and y plus offsets that vary
# with the RVars, within bounds (model-format.md, partial coordinates).
test_expect_success 'the plugin describes x + dx(r) as a partial coordinate' '
	PROTUNE_DUMP_MODEL=$PWD/max_filter.model \
		"$PT_BUILD_DIR/ex/bin/max_filter.generator" -g max_filter \
		-o . -e h -n mf -p "$plugin" -s ProTune auto_schedule=true \
		size=test target="$(protune host-target)" 2>mf.err &&
	test_grep "^      coord any 1\*v0 + \[-26,26\] varies r0 r1 clamp" \
		max_filter.model &&
	test_grep "^      coord any 1\*v1 + \[-15,-10\] varies r0 clamp" \
		max_filter.model &&
	! grep "^      coord any clamp" max_filter.model &&
	protune model max_filter.model >reprinted &&
	grep -v "^argv" max_filter.model >a &&
	grep -v "^argv" reprinted >b &&
	test_cmp a b
'

# The dump above ran the generator itself with target=host: its model's
# target line is Halide 14's own host detection on this machine.
test_expect_success 'protune host-target mirrors Halide 14 host detection' '
	sed -n "s/^target \"\(.*\)\"$/\1/p" blur.model >halide &&
	test -s halide &&
	sed "s/-avx512_sapphirerapids//" halide >want &&
	protune host-target --explicit >got &&
	test_cmp want got &&
	protune host-target >use &&
	if test "$(cat use)" = host
	then
		echo "host: nothing to replace on this processor"
	else
		echo "replaced on this processor: $(cat use)" &&
		test_cmp want use &&
		test_grep -avx512_sapphirerapids halide
	fi
'

test_expect_success 'the model does not depend on the process or on target=host' '
	PROTUNE_DUMP_MODEL=$PWD/again.model run again target=host &&
	t=$(sed -n "s/^target \"\(.*\)\"$/\1/p" blur.model) &&
	PROTUNE_DUMP_MODEL=$PWD/concrete.model run concrete target="$t" &&
	grep -v "^argv" blur.model >a &&
	grep -v "^argv" again.model >b &&
	grep -v "^argv" concrete.model >c &&
	test_cmp a b &&
	test_cmp a c
'

test_expect_success 'setup: a hand-written blur schedule' '
	key=$(head -n 1 key | cut -d" " -f1) &&
	cat >blur.sched <<-EOF
	protune-schedule 1
	key $key
	func f0 root
	func f1 root
	  stage 0
	    split v0 v0o v0i 16 guard
	    vectorize v0i
	func f2 root
	  stage 0
	    parallel v1
	EOF
	protune check blur.model blur.sched
'

test_expect_success 'apply mode builds blur bit-exact against the reference' '
	PROTUNE_SCHEDULE_FILE=$PWD/blur.sched run applied target=host &&
	test -s applied/blur.a &&
	mkdir -p ex/test/blur/protune &&
	c++ -std=c++17 -O1 -isystem "${PT_HALIDE_INCDIR:-/usr/include/halide14}" \
		-DHALIDE_NO_PNG -DHALIDE_NO_JPEG "$PT_BUILD_DIR/ex/obj/RunGenMain.o" \
		applied/blur.registration.cpp applied/blur.a -ldl -lpthread \
		-o ex/test/blur/protune/rungen &&
	pt_ex_run test blur reference ref.tmp 1 &&
	(PT_BUILD_DIR=$PWD && pt_ex_run test blur protune got.tmp 1) &&
	pt_ex_compare blur ref.tmp got.tmp
'

test_expect_success 'the emitted schedule header is the applied schedule in C++' '
	test_grep "get_func" applied/blur.schedule.h &&
	test_grep "vectorize(v0i)" applied/blur.schedule.h &&
	test_grep "parallel(y)" applied/blur.schedule.h &&
	test_grep "ProTune" applied/blur.schedule.h
'

# refused SCHED DIR: apply mode with SCHED must fail with a ProTune
# message (DIR.err) and leave no library.
refused() {
	PROTUNE_SCHEDULE_FILE=$PWD/$1 test_expect_code 255 run "$2" \
		target=host 2>"$2.err" &&
	test_grep "ProTune: " "$2.err" &&
	! test -e "$2/blur.a"
}

test_expect_success 'a schedule with an unknown dim is refused, naming the stage' '
	sed "s/parallel v1/parallel v7/" blur.sched >dim.sched &&
	refused dim.sched dim &&
	test_grep "does not fit pipeline blur" dim.err &&
	test_grep "f2" dim.err &&
	test_grep "v7" dim.err
'

test_expect_success 'a schedule for another key is refused' '
	sed "s/^key .*/key 0123456789abcdef0123456789abcdef/" blur.sched >key.sched &&
	refused key.sched wrongkey &&
	test_grep "0123456789abcdef0123456789abcdef" wrongkey.err
'

test_expect_success 'a schedule Halide rejects half-way is rolled back before the next one' '
	key=$(head -n 1 key | cut -d" " -f1) &&
	cat >other.sched <<-EOF &&
	protune-schedule 1
	key $key
	func f0 inline
	func f1 at f2 v1
	  stage 0
	    split v0 a0o a0i 8 guard
	    vectorize a0i
	func f2 root
	  stage 0
	    split v0 v0o v0i 8 guard
	    vectorize v0i
	EOF
	protune check blur.model other.sched &&
	printf "schedule %s\nschedule %s\n" "$PWD/other.sched" \
		"$PWD/blur.sched" >script &&
	PROTUNE_TEST_APPLY_FAIL_AT=2 PROTUNE_CC=$PT_BUILD_DIR/tests/pt-fakeserver \
		PT_FAKE_SCRIPT=$PWD/script PT_FAKE_LOG=$PWD/fake.log \
		EMIT=static_library,h,schedule,stmt run rolled target=host &&
	test_grep "^refused .*Halide rejected the schedule for output (f2)" fake.log &&
	test_grep "^applied" fake.log &&
	PROTUNE_SCHEDULE_FILE=$PWD/blur.sched \
		EMIT=static_library,h,schedule,stmt run direct target=host &&
	test_cmp direct/blur.stmt rolled/blur.stmt &&
	test_cmp direct/blur.schedule.h rolled/blur.schedule.h
'

test_expect_success 'without a schedule file the plugin starts protune-cc --serve next to it' '
	PATH=/usr/bin:/bin run served target=host 2>served.err &&
	test -s served/blur.a &&
	test_grep "get_func" served/blur.schedule.h
'

test_expect_success 'a server that cannot be started fails the generator clearly' '
	PROTUNE_CC=$PWD/no-such-server test_expect_code 255 run nocc \
		target=host 2>nocc.err &&
	test_grep "ProTune: cannot start the protune server" nocc.err &&
	! test -e nocc/blur.a
'

# Halide generators exit 255 on a compile error.
test_expect_success 'without the plugin the name ProTune is unknown to Halide' '
	test_expect_code 255 "$gen" -g blur -o . -e static_library -n b \
		-s ProTune auto_schedule=true target=host size=test 2>err &&
	test_grep "Unknown autoscheduler name .ProTune." err
'

test_expect_success 'loading it does not disturb a manual-schedule build' '
	"$gen" -g blur -o . -e static_library -n m -p "$plugin" \
		target=host size=test schedule=manual &&
	test -s m.a
'

test_done
