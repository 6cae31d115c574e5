#!/bin/sh
test_description='the CI workflow (doc/ci.md): a developer tunes and runs protune commit, CI builds a clone in frozen mode with an empty cache and tunes nothing, an edit fails CI until it is tuned (warm) and committed'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

# Everything is real: protune installed into a temporary prefix, git
# repositories made with git, examples/Makefile run by make, schedules
# committed by `protune commit` (libgit2), outputs checked against the
# generator's own reference schedule.
protune_tree_or_skip
if ! command -v git >/dev/null 2>&1; then
	test_skip_all "no git program"
fi
# The makes below are a user's, not sub-makes of make check.
unset MAKEFLAGS MFLAGS MAKELEVEL
# The test's own git commits use the repository's identity only.
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME \
	GIT_COMMITTER_EMAIL GIT_DIR GIT_WORK_TREE

PFX=$TRASH_DIRECTORY/pfx
T=$TRASH_DIRECTORY
# The developer's checkout and cache, and the CI machine's clone. Build
# outputs go outside the repositories (examples/Makefile wants that).
app=$T/app
ci=$T/ci
PROTUNE_CACHE_DIR=$T/cache-dev
export PROTUNE_CACHE_DIR

# app_make DIR OUT [ARGS...]: the project's build, as a user types it.
app_make() {
	_d=$1 _o=$2
	shift 2
	make -C "$_d" -f Makefile PROTUNE_PREFIX="$PFX" OUT="$_o" \
		EXAMPLES=blur SIZE=test MACHINE_PARAMS=2,16777216,40 -j2 "$@"
}

# ci_build NAME: CI's job on the clone: a new empty cache, frozen mode,
# outputs in $T/out-ci; its log in NAME.log.
ci_build() {
	test_path_is_missing "$T/cache-$1" &&
	PROTUNE_MODE=frozen PROTUNE_CACHE_DIR=$T/cache-$1 \
		app_make "$ci" "$T/out-ci" >"$1.log" 2>&1
	_st=$?
	cat "$1.log"
	return $_st
}

# reference OUT DIR: blur's output with the reference schedule (every Func
# root, serial, scalar), from the generator program the build made, into
# DIR/ref.tmp.
reference() {
	mkdir -p "$2" &&
	"$1/gen/blur.generator" -g blur -o "$2" \
		-e static_library,h,registration target=host size=test \
		schedule=reference auto_schedule=false &&
	c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" "$1/obj/RunGenMain.o" \
		"$2/blur.registration.cpp" "$2/blur.a" -ldl -lpthread \
		-o "$2/rungen" &&
	pt_rungen_run "$2/rungen" "$2/ref.tmp" 1
}

lib=test/blur

test_expect_success 'install protune; a project repository with blur, its Makefile and .protune.conf' '
	make -C "$top" B="$B" prefix="$PFX" install >install.log 2>&1 &&
	test -x "$PFX/bin/protune-cc" && test -x "$PFX/bin/protune" &&
	mkdir "$app" &&
	cp -R "$PT_SRCDIR/examples/Makefile" "$PT_SRCDIR/examples/common" \
		"$PT_SRCDIR/examples/blur" "$app/" &&
	test_cmp "$PT_SRCDIR/examples/Makefile" "$app/Makefile" &&
	printf "%s\n" "# protune settings for this repository" \
		"store_dir = schedules" >"$app/.protune.conf" &&
	(
		cd "$app" &&
		git init -q -b main &&
		git config user.name "Ada Dev" &&
		git config user.email ada@example.com &&
		git add . &&
		git commit -q -m "blur app" &&
		"$PFX/bin/protune" config >config.out &&
		grep "^store_dir *= schedules *# repo-file $app/.protune.conf:2\$" config.out &&
		rm config.out
	)
'

test_expect_success 'developer: make -j2 with an empty cache tunes blur cold, output correct' '
	test_path_is_missing "$PROTUNE_CACHE_DIR" &&
	app_make "$app" "$T/out-dev" >dev1.log 2>&1 &&
	cat dev1.log &&
	test "$(grep -c "^protune-cc: " dev1.log)" = 1 &&
	grep "^protune-cc: blur .*: miss (new-key), tuned: [0-9]* candidates, key [0-9a-f]\{12\}, [0-9]* ms\$" dev1.log &&
	test_must_fail grep "warm start" dev1.log &&
	reference "$T/out-dev" ref1 &&
	pt_rungen_run "$T/out-dev/$lib/rungen" dev1.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref1/ref.tmp dev1.tmp &&
	(cd "$app" && git status --porcelain) >status &&
	grep "^?? schedules/\$" status &&
	test_line_count = 1 status &&
	ls "$app"/schedules/blur/*.schedule >files &&
	test_line_count = 1 files &&
	key1=$(sed -n "s/.*, key \([0-9a-f]*\), .*/\1/p" dev1.log) &&
	grep "^key $key1" "$app"/schedules/blur/*.schedule &&
	grep "^meta source_commit=$(git -C "$app" rev-parse HEAD)\$" \
		"$app"/schedules/blur/*.schedule &&
	grep "^meta source_dirty=no\$" "$app"/schedules/blur/*.schedule
'

test_expect_success 'developer: protune commit commits the new schedule file, and only it' '
	(cd "$app" && "$PFX/bin/protune" commit) >commit1.out &&
	cat commit1.out &&
	f=$(cd "$app" && ls schedules/blur/*.schedule) &&
	head -n 1 commit1.out >c1 &&
	grep "^committed [0-9a-f]\{40\}\$" c1 &&
	test "$(sed -n 2p commit1.out)" = "A $f" &&
	test_line_count = 2 commit1.out &&
	test "$(sed "s/^committed //" c1)" = "$(git -C "$app" rev-parse HEAD)" &&
	git -C "$app" show --name-status --format= HEAD >shown &&
	printf "A\t%s\n" "$f" >want && test_cmp want shown &&
	git -C "$app" ls-files schedules >tracked &&
	echo "$f" >want && test_cmp want tracked &&
	git -C "$app" log -1 --format="%an <%ae>|%cn <%ce>|%s" >who &&
	echo "Ada Dev <ada@example.com>|Ada Dev <ada@example.com>|protune: 1 schedule for blur" >want &&
	test_cmp want who &&
	key1=$(basename "$f" .schedule | cut -c1-12) &&
	git -C "$app" log -1 --format=%b >body &&
	grep "^blur blur [-a-z0-9_]* $key1\$" body &&
	git -C "$app" status --porcelain >status &&
	test_line_count = 0 status &&
	(cd "$app" && "$PFX/bin/protune" commit) >again.out &&
	test_grep "^nothing to commit in $app/schedules\$" again.out
'

# CI's build tree starts with Halide's GenGen.o and RunGenMain.o (as a CI
# cache of tool objects would give them; they do not depend on the project),
# to keep the test short; the generator itself is compiled from the clone.
test_expect_success 'CI: a fresh clone, an empty cache, frozen mode: green, nothing tuned, the same outputs' '
	git clone -q "$app" "$ci" &&
	mkdir -p "$T/out-ci/gen/obj" "$T/out-ci/obj" &&
	cp -p "$T/out-dev/gen/obj/GenGen.o" "$T/out-ci/gen/obj/" &&
	cp -p "$T/out-dev/obj/RunGenMain.o" "$T/out-ci/obj/" &&
	ci_build cache-ci1 &&
	grep -- "-c $ci/blur/blur_generator.cpp" cache-ci1.log &&
	test_must_fail grep "GenGen.cpp" cache-ci1.log &&
	test "$(grep -c "^protune-cc: " cache-ci1.log)" = 1 &&
	test_grep "^protune-cc: blur .*: hit (store), key " cache-ci1.log &&
	test_must_fail grep "tuned" cache-ci1.log &&
	test_must_fail grep "miss" cache-ci1.log &&
	for f in blur.a blur.schedule.h; do
		cmp "$T/out-dev/$lib/$f" "$T/out-ci/$lib/$f" || return 1
	done &&
	pt_rungen_run "$T/out-ci/$lib/rungen" ci1.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 dev1.tmp ci1.tmp &&
	cmp dev1.tmp ci1.tmp &&
	git -C "$ci" status --porcelain >status &&
	test_line_count = 0 status
'

test_expect_success 'developer edits one stage of blur and commits the edit' '
	src=$app/blur/blur_generator.cpp &&
	cp "$src" before.cpp &&
	sed "s|^\( *blur_x(x, y) = (.*)\) / 3;\$|\1 / 4;|" before.cpp >"$src" &&
	test_must_fail cmp before.cpp "$src" &&
	git -C "$app" diff --numstat >numstat &&
	printf "1\t1\tblur/blur_generator.cpp\n" >want &&
	test_cmp want numstat &&
	grep "^ *blur_x(x, y) = .* / 4;\$" "$src" &&
	git -C "$app" commit -q -a -m "blur: blur_x divides by 4"
'

test_expect_success 'CI pulls the edit: the frozen build fails, naming blur, and replaces nothing' '
	git -C "$ci" pull -q --ff-only &&
	(cd "$T/out-ci/$lib" && ls -l --time-style=+%s.%N) >before.ls &&
	cp "$T/out-ci/$lib/blur.a" old.a &&
	test_must_fail ci_build cache-ci2 &&
	grep -- "-c $ci/blur/blur_generator.cpp" cache-ci2.log &&
	test_grep "^protune-cc: blur .*: miss (new-key) in frozen mode, key " cache-ci2.log &&
	test_grep "^protune-cc: frozen mode: no schedule for generator .blur., function .blur., target .[-a-z0-9_]*., key [0-9a-f]\{32\}; tune it (PROTUNE_MODE=normal) and commit it with .protune commit.\$" cache-ci2.log &&
	test_grep "^make: [*][*][*] .*/out-ci/$lib/blur.a. Error" cache-ci2.log &&
	test_must_fail grep "tuned" cache-ci2.log &&
	(cd "$T/out-ci/$lib" && ls -l --time-style=+%s.%N) >after.ls &&
	test_cmp before.ls after.ls &&
	cmp old.a "$T/out-ci/$lib/blur.a" &&
	git -C "$ci" status --porcelain >status &&
	test_line_count = 0 status
'

# A second developer clones after the edit: no cache, and the store holds
# only the schedule of blur's earlier version, with its stage hashes. The
# miss still starts warm, from that file alone.
test_expect_success 'a fresh clone with an empty cache: the edit tunes warm from the store file alone; output correct' '
	git clone -q "$app" "$T/app2" &&
	mkdir -p "$T/out-dev2/gen/obj" "$T/out-dev2/obj" &&
	cp -p "$T/out-dev/gen/obj/GenGen.o" "$T/out-dev2/gen/obj/" &&
	cp -p "$T/out-dev/obj/RunGenMain.o" "$T/out-dev2/obj/" &&
	test_path_is_missing "$T/cache-dev2" &&
	PROTUNE_CACHE_DIR=$T/cache-dev2 app_make "$T/app2" "$T/out-dev2" \
		>clone.log 2>&1 &&
	cat clone.log &&
	test "$(grep -c "^protune-cc: " clone.log)" = 1 &&
	test_grep "^protune-cc: blur .*: miss (new-key), tuned: [0-9]* candidates; 1 of 3 stages changed; warm start, key " clone.log &&
	key=$(sed -n "s/.*, key \([0-9a-f]*\), .*/\1/p" clone.log) &&
	grep "^meta warm=1/3\$" "$T"/app2/schedules/blur/$key*.schedule &&
	reference "$T/out-dev2" ref-clone &&
	pt_rungen_run "$T/out-dev2/$lib/rungen" clone.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref-clone/ref.tmp clone.tmp &&
	rm -rf "$T/app2" "$T/out-dev2" "$T/cache-dev2"
'

test_expect_success 'developer: the edit misses and tunes warm, 1 of 3 stages changed; output correct; commit' '
	date +%s >edit-time &&
	app_make "$app" "$T/out-dev" >dev2.log 2>&1 &&
	cat dev2.log &&
	test "$(grep -c "^protune-cc: " dev2.log)" = 1 &&
	grep "^protune-cc: blur .*: miss (new-key), tuned: [0-9]* candidates; 1 of 3 stages changed; warm start, key [0-9a-f]\{12\}, [0-9]* ms\$" dev2.log &&
	reference "$T/out-dev" ref2 &&
	test_must_fail cmp ref1/ref.tmp ref2/ref.tmp &&
	pt_rungen_run "$T/out-dev/$lib/rungen" dev2.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref2/ref.tmp dev2.tmp &&
	key2=$(sed -n "s/.*, key \([0-9a-f]*\), .*/\1/p" dev2.log) &&
	f=$(cd "$app" && ls schedules/blur/$key2*.schedule) &&
	grep "^meta warm=1/3\$" "$app/$f" &&
	(cd "$app" && "$PFX/bin/protune" commit) >commit2.out &&
	cat commit2.out &&
	test "$(sed -n 2p commit2.out)" = "A $f" &&
	test_line_count = 2 commit2.out &&
	git -C "$app" log -1 --format=%s >subject &&
	test_grep "^protune: 1 schedule for blur\$" subject &&
	git -C "$app" ls-files schedules >tracked &&
	test_line_count = 2 tracked &&
	git -C "$app" status --porcelain >status &&
	test_line_count = 0 status
'

test_expect_success 'CI pulls the schedule: green again, nothing tuned, the developer'"'"'s outputs' '
	git -C "$ci" pull -q --ff-only &&
	ci_build cache-ci3 &&
	test "$(grep -c "^protune-cc: " cache-ci3.log)" = 1 &&
	key2=$(sed -n "s/.*, key \([0-9a-f]*\), .*/\1/p" dev2.log) &&
	test_grep "^protune-cc: blur .*: hit (store), key $key2, " cache-ci3.log &&
	test_must_fail grep "tuned" cache-ci3.log &&
	for f in blur.a blur.schedule.h; do
		cmp "$T/out-dev/$lib/$f" "$T/out-ci/$lib/$f" || return 1
	done &&
	pt_rungen_run "$T/out-ci/$lib/rungen" ci3.tmp 1 &&
	cmp dev2.tmp ci3.tmp &&
	git -C "$ci" status --porcelain >status &&
	test_line_count = 0 status
'

# The edit left blur's first schedule in the store, unused since: protune gc
# removes it from the work tree, protune commit -m commits the deletion.
test_expect_success 'developer: protune gc --since drops the stale schedule, protune commit -m commits that; CI stays green' '
	old=$(git -C "$app" show --name-only --format= HEAD~2) &&
	new=$(git -C "$app" show --name-only --format= HEAD) &&
	(cd "$app" && "$PFX/bin/protune" gc --since="$(cat "$T/edit-time")") >gc.out &&
	cat gc.out &&
	test_grep "^removed $old (last use " gc.out &&
	test_grep "^removed 1 of 2 store files unused since " gc.out &&
	test_path_is_missing "$app/$old" &&
	test -f "$app/$new" &&
	(cd "$app" && "$PFX/bin/protune" commit -m "blur: drop the stale schedule") >commit3.out &&
	cat commit3.out &&
	test "$(sed -n 2p commit3.out)" = "D $old" &&
	test_line_count = 2 commit3.out &&
	git -C "$app" log -1 --format=%B >msg &&
	test "$(cat msg)" = "blur: drop the stale schedule" &&
	git -C "$app" ls-files schedules >tracked &&
	echo "$new" >want && test_cmp want tracked &&
	git -C "$ci" pull -q --ff-only &&
	rm "$T/out-ci/$lib/blur.a" &&
	ci_build cache-ci4 &&
	test_grep "^protune-cc: blur .*: hit (store), key " cache-ci4.log &&
	test_must_fail grep "tuned" cache-ci4.log &&
	cmp "$T/out-dev/$lib/blur.a" "$T/out-ci/$lib/blur.a"
'

test_done
