#!/bin/sh
test_description='real make -j builds through protune-cc: tune once, hit after, share a cache, the git store, corruption, kill -9'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

MK=$PT_SRCDIR/tests/lib/cc-examples.mk
# The makes below are a user's, not sub-makes of make check (whose
# jobserver, with make -jN check, they would not be given).
unset MAKEFLAGS MFLAGS MAKELEVEL
ALL=$(pt_ex_list)
N=$(echo $ALL | wc -w)

counter() {
	protune stats | awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }'
}

# check_outputs DIR EXAMPLES...: link each library with RunGen, run it, and
# compare with the example's reference build (make check built those).
check_outputs() {
	_dir=$1
	shift
	for _e in "$@"; do
		c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" \
			"$PT_BUILD_DIR/ex/obj/RunGenMain.o" \
			"$_dir/$_e/$_e.registration.cpp" "$_dir/$_e/$_e.a" \
			-ldl -lpthread -o "$_dir/$_e/rungen" &&
		pt_ex_run test "$_e" reference "$_dir/$_e.ref.tmp" 1 &&
		pt_rungen_run "$_dir/$_e/rungen" "$_dir/$_e.tmp" 1 &&
		pt_ex_compare "$_e" "$_dir/$_e.ref.tmp" "$_dir/$_e.tmp" || return 1
	done
}

test_expect_success "make -j4 from an empty cache tunes each of the $N keys once" '
	make -s -f "$MK" -j4 EXAMPLES="$ALL" OUT=b1 2>log &&
	test "$(counter tuned)" = "$N" &&
	test "$(counter miss.new-key)" = "$N" &&
	test "$(grep -c "miss (new-key), tuned" log)" = "$N" &&
	protune ls >ls &&
	test_line_count = $((N + 1)) ls
'

test_expect_success 'every tuned library matches its reference' '
	check_outputs b1 $ALL
'

test_expect_success 'the second build is all hits and tunes nothing' '
	make -s -f "$MK" -j4 EXAMPLES="$ALL" OUT=b2 2>log &&
	test "$(counter tuned)" = "$N" &&
	test "$(counter hit.cache)" = "$N" &&
	test "$(grep -c "hit (cache)" log)" = "$N" &&
	for e in $ALL; do test_cmp b1/$e/$e.schedule.h b2/$e/$e.schedule.h || return 1; done
'

# Two build trees share one cache; the same new key is asked for by both at
# once. A 4 s budget makes tuning take seconds, so the runs overlap.
blur_args="-e static_library,h,registration -n blur target=host size=test machine_params=2,16777216,41"
test_expect_success 'the same generator at once in two trees: one tunes, the other waits and hits' '
	protune zero-stats &&
	mkdir t1 t2 &&
	{ (cd t1 && protune-cc --measure=on --budget=4 \
		"$PT_BUILD_DIR/ex/bin/blur.generator" -g blur -o . $blur_args \
		2>log) & } &&
	pid=$! &&
	sleep 1 &&
	(cd t2 && protune-cc --measure=on --budget=4 \
		"$PT_BUILD_DIR/ex/bin/blur.generator" -g blur -o . $blur_args \
		2>log) &&
	wait $pid &&
	cat t1/log t2/log &&
	test "$(counter tuned)" = 1 &&
	test "$(counter hit.waited)" = 1 &&
	grep "miss (new-key), tuned" t1/log &&
	grep "hit (waited)" t2/log &&
	test -f t1/blur.a && test -f t2/blur.a
'

# --- the git store ----------------------------------------------------------

PROTUNE_CACHE_DIR=$TRASH_DIRECTORY/cache2
export PROTUNE_CACHE_DIR
test_expect_success 'in a git repository, tuned schedules go to the store' '
	git init -q proj &&
	git -C proj config user.name "Pro Tuner" &&
	git -C proj config user.email pt@example.com &&
	echo "project" >proj/README && git -C proj add README &&
	git -C proj commit -q -m "first" &&
	(cd proj && make -s -f "$MK" -j2 EXAMPLES="blur harris" OUT=out) 2>log &&
	ls proj/protune/blur/*.schedule proj/protune/harris/*.schedule &&
	f=$(ls proj/protune/blur/*.schedule) &&
	grep "^meta source_commit=[0-9a-f]\{40\}$" "$f" &&
	grep "^meta generator=blur$" "$f" &&
	grep "^meta tuner=protune$" "$f"
'

test_expect_success 'protune commit commits the store and nothing else' '
	echo "staged by the user" >proj/other && git -C proj add other &&
	(cd proj && protune commit) >out &&
	grep "^committed [0-9a-f]\{40\}" out &&
	git -C proj show --name-only --format=%s HEAD >show &&
	grep "^protune: 2 schedules for blur, harris" show &&
	grep "^protune/blur/[0-9a-f]*.schedule$" show &&
	grep "^protune/harris/[0-9a-f]*.schedule$" show &&
	test_must_fail grep "^other" show &&
	git -C proj diff --cached --name-only >staged &&
	echo other >want && test_cmp want staged &&
	(cd proj && protune commit) >out &&
	grep "nothing to commit" out
'

test_expect_success 'without the LMDB the next build hits from the store' '
	rm -rf cache2 proj/out &&
	(cd proj && make -s -f "$MK" -j2 EXAMPLES="blur harris" OUT=out) 2>log &&
	test "$(grep -c "hit (store)" log)" = 2 &&
	test "$(counter hit.store)" = 2 &&
	check_outputs proj/out blur harris
'

PROTUNE_CACHE_DIR=$TRASH_DIRECTORY/cache3
test_expect_success 'a fresh clone with an empty cache tunes nothing, even frozen' '
	git clone -q proj clone &&
	(cd clone && PROTUNE_MODE=frozen make -s -f "$MK" -j2 \
		EXAMPLES="blur harris" OUT=out) 2>log &&
	test "$(grep -c "hit (store)" log)" = 2 &&
	test "$(counter tuned)" = 0 &&
	check_outputs clone/out blur harris &&
	# the copy in the cache keeps the time the schedule was tuned
	t=$(sed -n "s/^meta tuned_at=//p" clone/protune/blur/*.schedule) &&
	protune ls blur >ls &&
	grep " $(date -u -d "@$t" +%Y-%m-%dT%H:%M:%SZ) " ls
'

test_expect_success 'frozen mode fails on a generator with no stored schedule' '
	(cd clone && PROTUNE_MODE=frozen test_must_fail make -s -f "$MK" \
		EXAMPLES="unsharp" OUT=out) 2>log &&
	grep "frozen mode: no schedule for generator .unsharp." log &&
	test_path_is_missing clone/out/unsharp/unsharp.a
'

test_expect_success 'a garbled store file is reported with its line and is a miss' '
	f=$(ls clone/protune/blur/*.schedule) &&
	sed "s/^\(func f1\) .*/\1 rooted/" "$f" >tmp && mv tmp "$f" &&
	grep "^func f1 rooted$" "$f" &&
	rm -rf cache3 clone/out &&
	(cd clone && make -s -f "$MK" EXAMPLES="blur" OUT=out) 2>log &&
	grep "warning: ignoring the stored schedule: .*blur/[0-9a-f]*.schedule:[0-9]*:" log &&
	grep "miss (store-unparsable), tuned" log &&
	check_outputs clone/out blur &&
	test_must_fail grep "^func f1 rooted$" "$f"
'

test_expect_success 'a truncated store file is a miss too' '
	f=$(ls clone/protune/harris/*.schedule) &&
	head -c 40 "$f" >tmp && mv tmp "$f" &&
	rm -rf cache3 clone/out &&
	(cd clone && make -s -f "$MK" EXAMPLES="harris" OUT=out) 2>log &&
	grep "miss (store-unparsable), tuned" log &&
	check_outputs clone/out harris
'

test_expect_success 'a garbled LMDB data file warns and the build is still correct' '
	test -f cache3/data.mdb &&
	dd if=/dev/urandom of=cache3/data.mdb bs=4096 count=4 conv=notrunc 2>/dev/null &&
	rm -rf clone/out &&
	(cd clone && make -s -f "$MK" EXAMPLES="blur" OUT=out) 2>log &&
	grep "warning: going on without the schedule cache" log &&
	grep "hit (store)" log &&
	check_outputs clone/out blur &&
	(cd clone && protune clear --force) &&
	(cd clone && make -s -f "$MK" EXAMPLES="blur" OUT=out2) 2>log &&
	test_must_fail grep warning log
'

test_expect_success 'a truncated LMDB data file warns and the build is still correct' '
	test -s cache3/data.mdb &&
	truncate -s 5000 cache3/data.mdb &&
	(cd clone && make -s -f "$MK" EXAMPLES="harris" OUT=out3) 2>log &&
	grep "warning: going on without the schedule cache" log &&
	check_outputs clone/out3 harris
'

# --- kill -9 -----------------------------------------------------------------

PROTUNE_CACHE_DIR=$TRASH_DIRECTORY/cache4
test_expect_success 'kill -9 at random moments, 20 times: the cache stays whole' '
	i=0 && killed=0 &&
	while [ $i -lt 20 ]; do
		mkdir k$i &&
		protune-cc "$PT_BUILD_DIR/ex/bin/blur.generator" -g blur -o k$i \
			-e static_library,h,registration -n blur target=host \
			size=test machine_params=2,16777216,$((100 + i % 5)) \
			2>/dev/null &
		pid=$! &&
		d=$((100 + (i * 97) % 1500)) &&
		sleep $((d / 1000)).$(printf %03d $((d % 1000))) &&
		{ kill -9 $pid 2>/dev/null && killed=$((killed + 1)) || :; } &&
		{ wait $pid || :; } &&
		protune ls >ls || return 1
		# every listed entry decodes and renders
		for key in $(awk "NR > 1 { print \$1 }" ls); do
			protune show "$key" >/dev/null || return 1
		done
		i=$((i + 1))
	done &&
	echo "killed $killed of 20 runs" &&
	test $killed -gt 0 &&
	sleep 2 &&
	mkdir -p kk/blur &&
	protune-cc "$PT_BUILD_DIR/ex/bin/blur.generator" -g blur -o kk/blur \
		-e static_library,h,registration -n blur target=host \
		size=test machine_params=2,16777216,100 2>log &&
	cat log &&
	check_outputs kk blur
'

test_done
