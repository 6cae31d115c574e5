#!/bin/sh
test_description='warm starts: after an edit, the tuner starts from the earlier schedule and searches what changed'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

gen=$PT_BUILD_DIR/tests/keytest.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so

# run EDIT: keytest through protune-cc (edit=1 changes one constant of
# Func b), its model left in kEDIT.model, the line in kEDIT.line.
run() {
	mkdir -p "o$1" &&
	PROTUNE_DUMP_MODEL=$PWD/k$1.model PROTUNE_PLUGIN=$plugin \
		protune-cc --budget=2 "$gen" -g keytest -o "o$1" \
		-e static_library,h -n keytest target=host edit=$1 2>"k$1.line"
}

test_expect_success 'a first build tunes cold' '
	run 0 &&
	grep "miss (new-key), tuned" k0.line &&
	! grep "warm start" k0.line
'

test_expect_success 'an edit to one stage: one of nine stages changed, a warm start' '
	run 1 &&
	grep "miss (new-key), tuned: .*; 1 of 9 stages changed; warm start" k1.line &&
	protune ls >ls &&
	test "$(grep -c keytest ls)" = 2
'

test_expect_success 'the warm-started schedule is stored with its origin and fits the model' '
	key=$(protune key k1.model | head -n 1) &&
	protune show "$key" --text >s1.sched &&
	grep "^meta warm=1/9\$" s1.sched &&
	protune check k1.model s1.sched
'

# The first schedule of a warm start from a schedule of the same model is
# that schedule: the same predicted cost (the answer may be better).
test_expect_success 'a warm start from the same model rebuilds the earlier schedule first' '
	protune tune k0.model --budget 2 >s0.sched 2>/dev/null &&
	want=$(sed -n "s/^meta predicted=//p" s0.sched) &&
	protune tune k0.model --budget 1 --warm-model k0.model \
		--warm-sched s0.sched >w.sched 2>w.err &&
	grep "^warm start: 0 of 9 stages changed" w.err &&
	got=$(sed -n "s/^warm start: first schedule cost \([^,]*\),.*/\1/p" w.err) &&
	test "$got" = "$want" &&
	protune check k0.model w.sched
'

# An edit of an expression leaves its Func's shape (name, stages, loop
# dims): the first schedule is then the earlier schedule itself, priced on
# the edited model (found by a warm start of the edited model from the
# earlier schedule under the new key, which rebuilds it exactly).
test_expect_success 'an edited Func of the same shape keeps its loops: the first schedule is the earlier one' '
	key1=$(protune key k1.model | head -n 1) &&
	sed "2s/.*/key $key1/" s0.sched >s0on1.sched &&
	protune check k1.model s0on1.sched &&
	protune tune k1.model --iterations 1 --threads 1 --warm-model k1.model \
		--warm-sched s0on1.sched >/dev/null 2>same.err &&
	want=$(sed -n "s/^warm start: first schedule cost \([^,]*\),.*/\1/p" same.err) &&
	protune tune k1.model --iterations 1 --threads 1 --warm-model k0.model \
		--warm-sched s0.sched >/dev/null 2>edit.err &&
	grep "^warm start: 1 of 9 stages changed" edit.err &&
	got=$(sed -n "s/^warm start: first schedule cost \([^,]*\),.*/\1/p" edit.err) &&
	test -n "$want" &&
	test "$got" = "$want"
'

test_expect_success 'warm and cold runs with counts are deterministic across threads' '
	for t in 1 2; do
		protune tune k1.model --iterations 3 --trees 2 --seed 4 \
			--threads $t --warm-model k0.model \
			--warm-sched s0.sched >d$t.sched 2>/dev/null || return 1
	done &&
	test_cmp d1.sched d2.sched
'

# A fresh clone's store file has no model of the earlier version: its
# stage_hashes entry says which stages it was tuned for, and the start is
# the same as with the model (identical output with counts and a seed).
test_expect_success 'every tuned schedule lists its stage hashes, one per stage' '
	grep "^meta stage_hashes=[0-9a-f]\{16\}\(,[0-9a-f]\{16\}\)\{8\}\$" s0.sched &&
	grep "^meta stage_hashes=" s1.sched
'

test_expect_success 'a warm start from the schedule alone equals one with the earlier model' '
	protune tune k1.model --iterations 3 --trees 2 --seed 4 --threads 2 \
		--warm-sched s0.sched >a.sched 2>a.err &&
	grep "warm start: 1 of 9 stages changed" a.err &&
	test_cmp d1.sched a.sched
'

test_expect_success 'a schedule without stage hashes, or of another pipeline, is an error alone' '
	grep -v "^meta stage_hashes=" s0.sched >nohash.sched &&
	test_expect_code 1 protune tune k1.model --warm-sched nohash.sched 2>err &&
	test_grep "^protune: nohash.sched: the schedule has no .stage_hashes. meta entry; give --warm-model too\$" err &&
	sed "s/^\(meta stage_hashes=[0-9a-f]*\),.*/\1/" s0.sched >short.sched &&
	test_expect_code 1 protune tune k1.model --warm-sched short.sched 2>err &&
	test_grep "not 9 stage hashes (the pipeline.s stages changed); give --warm-model too" err &&
	sed "s/^\(meta stage_hashes=.*\)\$/\1x/" s0.sched >bad.sched &&
	test_expect_code 1 protune tune k1.model --warm-sched bad.sched 2>err &&
	test_grep "not 9 stage hashes; give" err
'

test_expect_success '--warm-model needs --warm-sched' '
	test_expect_code 1 protune tune k1.model --warm-model k0.model 2>err &&
	grep "needs --warm-sched" err
'

test_done
