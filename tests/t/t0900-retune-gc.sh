#!/bin/sh
test_description='protune gc --unreferenced and protune retune on real builds of blur'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

GEN=$PT_BUILD_DIR/ex/bin/blur.generator
PROTUNE_CACHE_DIR=$TRASH_DIRECTORY/cache
export PROTUNE_CACHE_DIR

# build DIR MACHINE_PARAMS: blur at test size through protune-cc, run in
# the repository proj, into b/DIR (other machine params, another key).
build() {
	mkdir -p "b/$1" &&
	(cd proj && protune-cc "$GEN" -g blur -o "../b/$1" \
		-e static_library,h,registration -n blur target=host size=test \
		machine_params="$2")
}

# check_blur DIR: link b/DIR's library with RunGen, run it and compare
# with the reference build, bit for bit.
check_blur() {
	c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" \
		"$PT_BUILD_DIR/ex/obj/RunGenMain.o" \
		"b/$1/blur.registration.cpp" "b/$1/blur.a" \
		-ldl -lpthread -o "b/$1/rungen" &&
	pt_ex_run test blur reference ref.tmp 1 &&
	pt_rungen_run "b/$1/rungen" "b/$1/out.tmp" 1 &&
	pt_ex_compare blur ref.tmp "b/$1/out.tmp"
}

entries() {
	protune ls | awk 'NR > 1 { print $1 }'
}

test_expect_success 'setup: two keys of blur, built two seconds apart, committed' '
	git init -q proj &&
	git -C proj config user.name "Pro Tuner" &&
	git -C proj config user.email pt@example.com &&
	echo project >proj/README && git -C proj add README &&
	git -C proj commit -q -m first &&
	build old 2,16777216,30 2>log &&
	grep "miss (new-key), tuned" log &&
	ls proj/protune/blur >old_key &&
	test_line_count = 1 old_key &&
	sleep 2 &&
	date +%s >t1 &&
	build cur 2,16777216,40 2>log &&
	grep "miss (new-key), tuned" log &&
	ls proj/protune/blur >keys &&
	test_line_count = 2 keys &&
	grep -v -F -f old_key keys >cur_key &&
	(cd proj && protune commit) >out &&
	grep "^A protune/blur/$(cat old_key)$" out &&
	grep "^A protune/blur/$(cat cur_key)$" out
'

test_expect_success 'gc --dry-run lists the key unused since t1 and changes nothing' '
	t1=$(cat t1) &&
	(cd proj && protune gc --since=$t1 --dry-run) >out &&
	cat out &&
	grep "^would remove protune/blur/$(cat old_key) (last use " out &&
	grep "^would remove 1 of 2 store files unused since " out &&
	test_line_count = 2 out &&
	ls proj/protune/blur >now && test_cmp keys now &&
	entries >e && test_line_count = 2 e &&
	git -C proj status --porcelain >st && test_line_count = 0 st
'

test_expect_success 'gc --since removes the unused file and its entry, keeps the used one' '
	t1=$(cat t1) &&
	(cd proj && protune gc --since=$t1) >out &&
	cat out &&
	grep "^removed protune/blur/$(cat old_key) (last use " out &&
	grep "^removed 1 of 2 store files unused since .* (1 cache entries)$" out &&
	ls proj/protune/blur >now && test_cmp cur_key now &&
	entries >e && test_line_count = 1 e &&
	grep "^$(cut -c1-12 cur_key)" e
'

test_expect_success 'git status shows the removal and protune commit commits it' '
	git -C proj status --porcelain >st &&
	echo " D protune/blur/$(cat old_key)" >want &&
	test_cmp want st &&
	(cd proj && protune commit) >out &&
	grep "^D protune/blur/$(cat old_key)$" out &&
	git -C proj ls-files protune >files &&
	echo "protune/blur/$(cat cur_key)" >want &&
	test_cmp want files
'

test_expect_success 'a new cache knows no uses: it removes nothing it has not seen unused' '
	sleep 1 &&
	now=$(date +%s) &&
	(cd proj && protune gc --unreferenced) >out &&
	grep "^removed 0 of 1 store files" out &&
	(cd proj && protune gc --since=$now --dry-run) >out &&
	grep "^would remove protune/blur/$(cat cur_key)" out &&
	protune clear --force &&
	(cd proj && protune gc --since=$now) >out &&
	cat out &&
	grep "^removed 0 of 1 store files" out &&
	test -f proj/protune/blur/$(cat cur_key)
'

test_expect_success 'gc --unreferenced needs the store' '
	test_must_fail protune gc --unreferenced 2>err &&
	grep "store is off" err
'

test_expect_success 'retune --dry-run lists what it would retune' '
	build hit 2,16777216,40 2>log &&
	grep "hit (store)" log &&
	(cd proj && protune retune --dry-run) >out &&
	grep "^would retune blur $(cut -c1-12 cur_key) " out &&
	(cd proj && protune retune --dry-run "b*r") >out2 &&
	test_cmp out out2 &&
	k6=$(cut -c1-6 cur_key) &&
	(cd proj && protune retune --dry-run $k6) >out2 &&
	test_cmp out out2
'

# The cache gets the baseline schedule for the key (through export and
# import), so that the search has something to improve on and the timing
# rounds run.
test_expect_success 'retune tunes with measurement and keeps or replaces by the rule' '
	key=$(cat cur_key) && key=${key%.schedule} && key12=$(cut -c1-12 cur_key) &&
	protune export exp &&
	protune baseline exp/blur/$key.model >exp/blur/$key.schedule &&
	protune clear &&
	protune import exp &&
	protune show $key12 --text >baseline &&
	grep "^meta tuner=baseline$" baseline &&
	f=proj/protune/blur/$key.schedule &&
	cp "$f" before &&
	(cd proj && protune retune --budget=1 --runs=3 blur) >out 2>err &&
	cat out err &&
	grep "^rule: replace when the median ratio new/old over 3 rounds is below 0.97 and the new schedule is faster in at least 3 of them$" out &&
	grep "^retuned 1: " out &&
	protune show $key12 --text >cached &&
	if grep "^replaced: blur $key12 [0-9.e+-]* ms -> [0-9.e+-]* ms (ratio 0\.[0-9]*, faster in 3 of 3 rounds)$" out
	then
		grep "^meta mode=retune$" "$f" &&
		test_cmp "$f" cached &&
		git -C proj status --porcelain >st &&
		grep "^ M protune/blur/$key.schedule$" st
	else
		grep -E "^kept: blur $key12 (\(the search found the same schedule\)|[0-9.e+-]+ ms -> [0-9.e+-]+ ms \(ratio [0-9.]+, faster in [0-3] of 3 rounds\))$" out &&
		test_cmp before "$f" &&
		test_cmp baseline cached
	fi
'

test_expect_success 'after retune the build answers from the cache and matches the reference' '
	build after 2,16777216,40 2>log &&
	grep "hit (cache)" log &&
	check_blur after
'

test_expect_success 'a pattern that matches nothing is an error' '
	(cd proj && test_expect_code 1 protune retune --dry-run nosuchgen) 2>err &&
	grep "no cached schedule matches nosuchgen" err
'

test_expect_success 'retune refuses to write in frozen, readonly and off modes' '
	for m in frozen readonly off; do
		(cd proj && PROTUNE_MODE=$m test_expect_code 1 protune retune) 2>err &&
		grep "the mode is .$m." err || return 1
	done
'

test_done
