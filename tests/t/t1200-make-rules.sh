#!/bin/sh
test_description='protune.mk: examples/Makefile builds blur and harris against an installed protune: right outputs, no-op rebuild, hit after a touch, frozen mode, uninstall'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

protune_tree_or_skip
# The makes below are a user's, not sub-makes of make check.
unset MAKEFLAGS MFLAGS MAKELEVEL

PFX=$TRASH_DIRECTORY/pfx
OUT=$TRASH_DIRECTORY/out
PROTUNE_CACHE_DIR=$TRASH_DIRECTORY/cache
export PROTUNE_CACHE_DIR

# The examples' Makefile runs on a copy of the sources, so that touching a
# generator source here does not rebuild other build trees' generators.
# The copy is outside protune's source tree, where the Makefile leaves the
# store to the project's settings: off here (doc/ci.md tests the store).
src=$TRASH_DIRECTORY/src
# (A makefile setting, so that protune.mk shows it in the command.)
printf 'PROTUNE_STORE_DIR = off\n' >"$TRASH_DIRECTORY/store.mk"
ex_make() {
	make -C "$src" -f Makefile -f "$TRASH_DIRECTORY/store.mk" \
		PROTUNE_PREFIX="$PFX" OUT="$OUT" \
		EXAMPLES="blur harris" SIZE=test MACHINE_PARAMS=2,16777216,40 "$@"
}

test_expect_success 'make install puts protune.mk into the prefix' '
	make -C "$top" B="$B" prefix="$PFX" install >install.log 2>&1 &&
	test_cmp "$PT_SRCDIR/rules/protune.mk" "$PFX/share/protune/protune.mk" &&
	test "$(stat -c %a "$PFX/share/protune/protune.mk")" = 644 &&
	test -x "$PFX/bin/protune-cc" &&
	mkdir -p "$src" &&
	cp -R "$PT_SRCDIR/examples/Makefile" "$PT_SRCDIR/examples/common" \
		"$PT_SRCDIR/examples/blur" "$PT_SRCDIR/examples/harris" "$src/" &&
	(cd "$src" && find . -type f | sort) >src.before
'

test_expect_success 'examples/Makefile wants OUT, outside its directory' '
	test_must_fail make -C "$src" -f Makefile PROTUNE_PREFIX="$PFX" 2>err &&
	test_grep "OUT is not set" err &&
	test_must_fail make -C "$src" -f Makefile PROTUNE_PREFIX="$PFX" \
		OUT=out 2>err &&
	test_grep "is inside the source tree" err &&
	test_must_fail make -C "$src" -f Makefile PROTUNE_PREFIX=/nonexistent \
		OUT="$OUT" 2>err &&
	test_grep "no protune.mk at /nonexistent/share/protune/protune.mk" err
'

test_expect_success 'make -j4 builds through the installed protune-cc, tuning each once' '
	ex_make -j4 >build.log 2>&1 &&
	cat build.log &&
	for e in blur harris; do
		grep "^PROTUNE_STORE_DIR=.off. $PFX/bin/protune-cc $OUT/gen/$e.generator -g $e " build.log &&
		test "$(grep -c "protune-cc: $e .*: miss (new-key), tuned" build.log)" = 1 &&
		for f in $e.a $e.h $e.schedule.h $e.registration.cpp rungen; do
			test -f "$OUT/test/$e/$f" || return 1
		done &&
		test -x "$OUT/gen/$e.generator" || return 1
	done &&
	test "$(grep -c "protune-cc: " build.log)" = 2
'

# blur's reference output is make check's; harris's is made here, by the
# same generator program with its reference schedule (no protune).
test_expect_success 'the libraries, linked with RunGen, give the reference outputs' '
	pt_ex_run test blur reference ref.tmp 1 &&
	pt_rungen_run "$OUT/test/blur/rungen" got.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref.tmp got.tmp &&
	mkdir href &&
	"$OUT/gen/harris.generator" -g harris -o href \
		-e static_library,h,registration target=host size=test \
		schedule=reference auto_schedule=false &&
	c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" "$OUT/obj/RunGenMain.o" \
		href/harris.registration.cpp href/harris.a -ldl -lpthread \
		-o href/rungen &&
	pt_rungen_run href/rungen href.tmp 1 &&
	pt_rungen_run "$OUT/test/harris/rungen" hgot.tmp 1 &&
	pt_ex_compare harris href.tmp hgot.tmp
'

test_expect_success 'a second make has nothing to do' '
	ex_make -q &&
	ex_make -j4 >again.log 2>&1 &&
	test_grep "Nothing to be done for .all." again.log &&
	test_must_fail grep protune-cc again.log
'

# A makefile that sets a protune setting: protune.mk passes it on.
test_expect_success 'touching the generator source rebuilds it, and the run is a cache hit' '
	echo "PROTUNE_LOG = $TRASH_DIRECTORY/pt.log" >settings.mk &&
	touch "$src/blur/blur_generator.cpp" &&
	ex_make -f "$TRASH_DIRECTORY/settings.mk" -j4 >touch.log 2>&1 &&
	cat touch.log &&
	grep -- "-c $src/blur/blur_generator.cpp" touch.log &&
	grep -- "-o $OUT/gen/blur.generator$" touch.log &&
	test_grep "^PROTUNE_STORE_DIR=.off. PROTUNE_LOG=.$TRASH_DIRECTORY/pt.log. $PFX/bin/protune-cc" touch.log &&
	test_grep "blur .*: hit (cache)" touch.log &&
	test_must_fail grep "miss" touch.log &&
	test_must_fail grep "harris" touch.log &&
	test -s pt.log &&
	test_must_fail grep "GenGen.cpp" touch.log &&
	pt_rungen_run "$OUT/test/blur/rungen" got2.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref.tmp got2.tmp
'

test_expect_success 'PROTUNE_MODE=frozen with an empty cache fails with the frozen message' '
	rm "$OUT/test/blur/blur.a" &&
	test_must_fail ex_make PROTUNE_MODE=frozen \
		PROTUNE_CACHE_DIR="$TRASH_DIRECTORY/empty" >frozen.log 2>&1 &&
	cat frozen.log &&
	test_grep "frozen mode: no schedule for generator .blur." frozen.log &&
	test_path_is_missing "$OUT/test/blur/blur.a" &&
	ex_make >after.log 2>&1 &&
	test_grep "hit (cache)" after.log &&
	test -f "$OUT/test/blur/blur.a"
'

# A user's makefile of its own: a generator program built elsewhere (a path),
# another library name (-f), target= in the params, grouped outputs.
test_expect_success 'protune_library with a prebuilt generator and another name' '
	cat >user.mk <<-EOF &&
	include $PFX/share/protune/protune.mk
	P := target=host size=test machine_params=2,16777216,40
	PROTUNE_EMIT := static_library,h,registration
	\$(call protune_library,myblur,$PT_BUILD_DIR/ex/bin/blur.generator,lib,\$(P))
	all: \$(PROTUNE_LIBRARIES)
	EOF
	make -f user.mk -j4 >user.log 2>&1 &&
	cat user.log &&
	test_grep " -g blur -f myblur -n myblur -o lib -e static_library,h,registration target=host size=test " user.log &&
	test_must_fail grep "target=host target=host" user.log &&
	test_grep "hit (cache)" user.log &&
	test -f lib/myblur.h && test -f lib/myblur.registration.cpp &&
	grep "^int myblur(" lib/myblur.h &&
	c++ -std=c++17 -O1 -isystem "$PT_HALIDE_INCDIR" \
		"$PT_BUILD_DIR/ex/obj/RunGenMain.o" lib/myblur.registration.cpp \
		lib/myblur.a -ldl -lpthread -o myrungen &&
	pt_rungen_run ./myrungen got3.tmp 1 &&
	pt-imgcmp --abs 0 --rel 0 ref.tmp got3.tmp &&
	make -q -f user.mk
'

test_expect_success 'nothing was written into the examples directory' '
	(cd "$src" && find . -type f | sort) >src.after &&
	test_cmp src.before src.after
'

test_expect_success 'make uninstall removes protune.mk' '
	make -C "$top" B="$B" prefix="$PFX" uninstall >uninstall.log 2>&1 &&
	test_path_is_missing "$PFX/share/protune/protune.mk" &&
	test_path_is_missing "$PFX/bin/protune-cc"
'

test_done
