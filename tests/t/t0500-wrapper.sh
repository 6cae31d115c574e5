#!/bin/sh
test_description='protune-cc on real generator runs: tuning, hits, modes, pass-through reasons, explain, config'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

GEN=$PT_BUILD_DIR/ex/bin/blur.generator
KEYGEN=$PT_BUILD_DIR/tests/keytest.generator
MP=machine_params=2,16777216,40

# blur_cc DIR [ARGS...]: blur at test size through protune-cc into DIR;
# arguments starting with "--" are protune-cc's settings, the others the
# generator's.
blur_cc() {
	_d=$1 _pre= _post=
	shift
	for _a in "$@"; do
		case $_a in
		--*) _pre="$_pre $_a" ;;
		*) _post="$_post $_a" ;;
		esac
	done
	mkdir -p "$_d" &&
	protune-cc $_pre "$GEN" -g blur -o "$_d" \
		-e static_library,h,registration,schedule -n blur \
		target=host size=test $MP $_post
}

# link DIR NAME: RunGen for DIR/NAME.a
link() {
	c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" \
		"$PT_BUILD_DIR/ex/obj/RunGenMain.o" "$1/$2.registration.cpp" \
		"$1/$2.a" -ldl -lpthread -o "$1/rungen"
}

# counter NAME: the value of a stats counter (0 when absent).
counter() {
	protune stats | awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }'
}

test_expect_success 'the reference build passes through (auto_schedule=false)' '
	blur_cc ref auto_schedule=false 2>err &&
	test_must_fail grep "protune-cc:" err &&
	link ref blur &&
	pt_rungen_run ref/rungen ref.tmp 1 &&
	test "$(counter pass.auto-schedule-false)" = 1
'

test_expect_success 'a first run misses, tunes, stores, and is correct' '
	blur_cc one 2>err &&
	grep "^protune-cc: blur .*: miss (new-key), tuned" err &&
	test -f one/blur.a &&
	link one blur &&
	pt_rungen_run one/rungen one.tmp 1 &&
	pt-imgcmp ref.tmp one.tmp &&
	test "$(counter miss.new-key)" = 1 &&
	test "$(counter tuned)" = 1 &&
	test "$(counter stored.cache)" = 1 &&
	protune ls >ls &&
	test_line_count = 2 ls &&
	grep " blur  *blur  *x86-64" ls
'

test_expect_success 'the second run hits and emits the same schedule' '
	blur_cc two 2>err &&
	grep "^protune-cc: blur .*: hit (cache), key " err &&
	test_cmp one/blur.schedule.h two/blur.schedule.h &&
	test "$(counter hit.cache)" = 1 &&
	test "$(counter tuned)" = 1
'

test_expect_success 'the rewritten command has the plugin, -s ProTune and a watchdog' '
	blur_cc three --log-file="$PWD/log" --budget=10 2>/dev/null &&
	grep -e "^--- protune-cc .* -p [^ ]*libprotune_halide.so -s ProTune -t 620 " log &&
	grep "auto_schedule=true" log
'

test_expect_success 'a non-generator command passes through unchanged' '
	test_expect_code 3 protune-cc sh -c "echo out; echo err >&2; exit 3" \
		>out 2>err &&
	echo out >want && test_cmp want out &&
	echo err >want && test_cmp want err &&
	test "$(counter pass.not-generator)" = 1
'

test_expect_success 'another autoscheduler is run untouched and counted' '
	blur_cc adams -p "$HALIDE_PLUGINDIR/libautoschedule_adams2019.so" \
		-s Adams2019 auto_schedule=true 2>err &&
	test_must_fail grep "protune-cc:" err &&
	grep -v "^//" adams/blur.schedule.h | grep -q "compute_root\|split\|vectorize" &&
	test "$(counter pass.explicit-autoscheduler)" = 1
'

test_expect_success 'a runtime-only run is run untouched' '
	mkdir rt &&
	protune-cc "$GEN" -r rt_runtime -o rt -e static_library target=host \
		2>err &&
	test -f rt/rt_runtime.a &&
	test "$(counter pass.runtime-only)" = 1
'

test_expect_success 'frozen mode fails a miss with a message that says what to do' '
	mkdir frz &&
	test_expect_code 255 protune-cc --mode=frozen "$KEYGEN" -g keytest -o frz \
		-e static_library,h,registration -n kt target=host edit=1 \
		2>err &&
	grep "frozen mode: no schedule for generator .keytest., function .kt., target .x86-64-.*, key [0-9a-f]\{32\}; tune it" err &&
	grep "protune commit" err &&
	test_path_is_missing frz/kt.a &&
	test "$(counter error.frozen)" = 1 &&
	# said once, by protune-cc; the plugin only names the pipeline
	test "$(grep -c "frozen mode: no schedule" err)" = 1 &&
	grep "^Unhandled exception: ProTune: no schedule for pipeline .[a-z_]*.: protune-cc refused it and says why\$" err
'

test_expect_success 'the frozen message leaves out a function name it does not have' '
	mkdir frz2 &&
	test_expect_code 255 protune-cc --mode=frozen "$KEYGEN" -g keytest -o frz2 \
		-e static_library,h target=host edit=1 2>err &&
	grep "frozen mode: no schedule for generator .keytest., target .x86-64-" err &&
	! grep "function" err
'

test_expect_success 'frozen mode builds a hit' '
	PROTUNE_MODE=frozen blur_cc frozen-hit 2>err &&
	grep "hit (cache)" err
'

test_expect_success 'readonly mode tunes a miss but stores nothing' '
	protune stats >before &&
	cp .cache/protune/data.mdb data.before &&
	mkdir ro &&
	protune-cc --mode=readonly "$KEYGEN" -g keytest -o ro \
		-e static_library,h,registration -n kt target=host edit=2 \
		2>err &&
	grep "miss (new-key), tuned, not stored" err &&
	test -f ro/kt.a &&
	cmp data.before .cache/protune/data.mdb &&
	protune stats >after &&
	test_cmp before after
'

test_expect_success 'mode off runs the generator untouched' '
	blur_cc off --mode=off 2>err &&
	test_must_fail grep "protune-cc:" err &&
	test_must_fail grep -q ProTune off/blur.schedule.h
'

test_expect_success 'retune tunes a hit again and keeps the stored one without measurements' '
	blur_cc re --mode=retune 2>err &&
	grep "miss (retune), tuned, stored one kept" err &&
	test_cmp one/blur.schedule.h re/blur.schedule.h
'

test_expect_success 'a multi-target run has one session per target' '
	mkdir multi &&
	protune-cc "$KEYGEN" -g keytest -o multi -e static_library,h,registration \
		-n kt target=x86-64-linux-sse41,x86-64-linux 2>err &&
	test -f multi/kt.a &&
	test "$(grep -c "^protune-cc: keytest x86-64-linux.*miss (new-key)" err)" = 2 &&
	protune ls keytest >ls &&
	test "$(grep -c "x86-64-linux-no_runtime-sse41 " ls)" = 1 &&
	protune-cc "$KEYGEN" -g keytest -o multi -e static_library,h,registration \
		-n kt target=x86-64-linux-sse41,x86-64-linux 2>err &&
	test "$(grep -c "hit (cache)" err)" = 2
'

test_expect_success 'show prints the schedule and its Halide C++' '
	key=$(protune ls blur | awk "NR == 2 { print \$1 }") &&
	protune show "$key" >show &&
	grep "^key [0-9a-f]\{32\}$" show &&
	grep "^meta tuner=protune$" show &&
	grep "pipeline.get_func" show &&
	protune show "$key" --text >text &&
	test_must_fail grep get_func text
'

test_expect_success 'explain tells a hit and why a changed pipeline misses' '
	protune explain "$GEN" -g blur -o nowhere -e static_library -n blur \
		target=host size=test $MP >ex &&
	grep "^result: hit, hit-cache" ex &&
	test_path_is_missing nowhere/blur.a &&
	mkdir k0 &&
	protune-cc "$KEYGEN" -g keytest -o k0 -e static_library,h,registration \
		-n kt target=host 2>/dev/null &&
	protune explain "$KEYGEN" -g keytest -o k1 -e static_library -n kt \
		target=host edit=1 >ex &&
	grep "^result: miss, new-key" ex &&
	grep "nearest: cached key [0-9a-f]\{32\}" ex &&
	grep "changed: f[0-9]* " ex &&
	grep "stages differ" ex
'

test_expect_success 'export and import carry the cache' '
	protune export exp >out &&
	grep "exported [0-9]* schedules" out &&
	ls exp/blur/*.schedule exp/blur/*.model &&
	protune clear &&
	protune ls >ls && test_line_count = 0 ls &&
	protune import exp &&
	blur_cc four 2>err &&
	grep "hit (cache)" err
'

test_expect_success 'a cache entry that does not fit is a miss, never applied' '
	protune export exp2 >/dev/null &&
	f=$(ls exp2/blur/*.schedule) &&
	sed "s/vectorize v0i/vectorize v0z/" "$f" >tmp && mv tmp "$f" &&
	! cmp -s "$f" exp/blur/$(basename "$f") &&
	rm exp2/blur/*.model &&
	protune clear && protune import exp2 &&
	blur_cc five 2>err &&
	grep "miss (cache-misfit), tuned" err &&
	link five blur && pt_rungen_run five/rungen five.tmp 1 &&
	pt-imgcmp ref.tmp five.tmp &&
	blur_cc six 2>err &&
	grep "hit (cache)" err
'

test_expect_success 'settings: defaults, user file, repository file, environment, command line' '
	env -u PROTUNE_BUDGET protune config >cfg &&
	grep "^budget *= 60 .*default" cfg &&
	mkdir -p .config/protune repo/.git repo/sub &&
	echo "budget = 11" >.config/protune/protune.conf &&
	(cd repo/sub && env -u PROTUNE_BUDGET protune config) >cfg &&
	grep "^budget *= 11 .*user" cfg &&
	echo "budget = 12" >repo/.protune.conf &&
	(cd repo/sub && env -u PROTUNE_BUDGET protune config) >cfg &&
	grep "^budget *= 12 .*repo" cfg &&
	(cd repo/sub && PROTUNE_BUDGET=13 protune config) >cfg &&
	grep "^budget *= 13 .*PROTUNE_BUDGET" cfg &&
	(cd repo/sub && PROTUNE_BUDGET=13 protune config --budget=14) >cfg &&
	grep "^budget *= 14 .*cmdline" cfg &&
	echo "budgit = 1" >repo/.protune.conf &&
	(cd repo/sub && test_expect_code 2 protune-cc true) 2>err &&
	grep "repo/.protune.conf:1: unknown setting .budgit." err
'

test_expect_success 'a bad setting is a usage error naming it' '
	test_expect_code 2 protune-cc --budget=abc true 2>err &&
	grep "budget" err &&
	PROTUNE_MODE=fast test_expect_code 2 protune-cc true 2>err &&
	grep "PROTUNE_MODE" err
'

test_expect_success 'an unusable cache directory warns and still builds' '
	echo not a directory >afile &&
	PROTUNE_CACHE_DIR=$PWD/afile/sub blur_cc seven 2>err &&
	grep "warning: going on without the schedule cache" err &&
	grep "miss (no-cache), tuned" err &&
	test -f seven/blur.a
'

test_done
