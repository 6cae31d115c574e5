#!/bin/sh
test_description='compile_limit: a generator that compiles too long after its schedule was served is stopped and built again with the baseline schedule; what was served is forgotten'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

if ! command -v git >/dev/null 2>&1; then
	test_skip_all "no git program"
fi
unset GIT_DIR GIT_WORK_TREE

GEN=$PT_BUILD_DIR/ex/bin/blur.generator
MP=machine_params=2,16777216,40

# blur_cc DIR [SETTING...]: blur at test size through protune-cc into DIR,
# from the repository's directory (the store is repo/protune).
blur_cc() {
	_d=$PWD/$1
	shift
	mkdir -p "$_d" &&
	(cd repo && protune-cc "$@" "$GEN" -g blur -o "$_d" \
		-e static_library,h,registration -n blur \
		target=host size=test $MP)
}

link() {
	c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" \
		"$PT_BUILD_DIR/ex/obj/RunGenMain.o" "$1/blur.registration.cpp" \
		"$1/blur.a" -ldl -lpthread -o "$1/rungen"
}

test_expect_success 'a repository for the store; the reference output' '
	git init -q repo &&
	mkdir ref &&
	"$GEN" -g blur -o ref -e static_library,h,registration -n blur \
		target=host size=test auto_schedule=false &&
	link ref &&
	pt_rungen_run ref/rungen ref.tmp 1
'

# A limit of 1 ms: no compile is that fast, so the tuned schedule always
# counts as a crawl here, and the whole path runs on a real generator.
test_expect_success 'past the limit: stopped, forgotten, built with the baseline, correct' '
	blur_cc crawl --compile-limit=0.001 2>err &&
	cat err &&
	test_grep "^protune-cc: blur .*: miss (new-key), tuned: .*, key [0-9a-f]\{12\}, [0-9]* ms\$" err &&
	key=$(sed -n "s/.*tuned: .*, key \([0-9a-f]*\), .*/\1/p" err) &&
	test_grep "^protune-cc: the generator compiled for more than 0.001 s after the schedule for key $key[0-9a-f]\{20\} (compile_limit 0.001 s); stopped it\$" err &&
	test_grep "^protune-cc: removed key $key from the cache\$" err &&
	test_grep "^protune-cc: removed the store file it wrote, .*/repo/protune/blur/$key[0-9a-f]*.schedule\$" err &&
	test_grep "^protune-cc: building again with the baseline schedule for key $key\$" err &&
	test_grep "^protune-cc: blur .*: baseline schedule (the one served first compiled past compile_limit), key $key, " err &&
	link crawl &&
	pt_rungen_run crawl/rungen crawl.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref.tmp crawl.tmp &&
	protune ls >ls &&
	test_must_fail grep "$key" ls &&
	find repo/protune -type f >files &&
	test_line_count = 0 files &&
	protune stats >stats &&
	test_grep "^  error.compile-limit  *1\$" stats &&
	test_grep "^  baseline.compile-limit  *1\$" stats
'

test_expect_success 'under the default limit the same build tunes, stores and is correct' '
	blur_cc ok 2>err &&
	cat err &&
	test_grep "^protune-cc: blur .*: miss (new-key), tuned" err &&
	test_must_fail grep "compile_limit\|baseline" err &&
	ls repo/protune/blur/*.schedule >files &&
	test_line_count = 1 files &&
	link ok &&
	pt_rungen_run ok/rungen ok.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref.tmp ok.tmp
'

test_expect_success 'a stored schedule past the limit: built with the baseline, the store file stays' '
	blur_cc hit --compile-limit=0.001 --cache-dir="$PWD/cache2" 2>err &&
	cat err &&
	test_grep "^protune-cc: blur .*: hit (store), key " err &&
	test_grep "compiled for more than 0.001 s" err &&
	test_grep "^protune-cc: the store file .*/repo/protune/blur/[0-9a-f]*.schedule still holds it: .protune retune. it, or remove it\$" err &&
	test_grep "baseline schedule (the one served first compiled past compile_limit)" err &&
	ls repo/protune/blur/*.schedule >files2 &&
	test_cmp files files2 &&
	link hit &&
	pt_rungen_run hit/rungen hit.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref.tmp hit.tmp
'

test_expect_success 'a bad compile_limit is an error naming the option' '
	test_expect_code 2 protune-cc --compile-limit=-1 true 2>err &&
	test_grep "^protune-cc: --compile-limit=-1: .-1. is not a number of seconds\$" err &&
	test_expect_code 2 env PROTUNE_COMPILE_LIMIT=1e7 protune-cc true 2>err &&
	test_grep "^protune-cc: PROTUNE_COMPILE_LIMIT: .1e7. is out of range (0 for no limit, or more than 0 and at most 604800 seconds)\$" err
'

test_done
