#!/bin/sh
test_description='the CMake package: find_package(ProTune) from an installed, moved prefix; add_halide_library(... AUTOSCHEDULER ProTune::ProTune) tunes through the plugin; the protune-cc launcher'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

command -v cmake >/dev/null 2>&1 || test_skip_all 'cmake is not installed'

# The make and the CMake builds below are builds of their own, not part of
# the make that runs the tests.
unset MAKEFLAGS MFLAGS MAKELEVEL

# The directory that holds the Makefile of the build under test: the
# nearest one above the build directory with a config.mk.
top=$(dirname "$PT_BUILD_DIR")
while [ "$top" != / ] && ! { [ -f "$top/config.mk" ] && [ -f "$top/Makefile" ]; }; do
	top=$(dirname "$top")
done
# B as the build's make was given it: relative to $top when inside it.
B=${PT_BUILD_DIR#"$top"/}/

# Installed for /opt/protune-t1210 but staged under DESTDIR, and used from
# there: the package must find everything relative to itself.
stage=$TRASH_DIRECTORY/stage
prefix=$stage/opt/protune-t1210
CACHE=$TRASH_DIRECTORY/cache
GEN='Unix Makefiles'
if command -v ninja >/dev/null 2>&1; then
	GEN=Ninja
	test_set_prereq NINJA
fi

counter() {
	PROTUNE_CACHE_DIR=$CACHE protune stats |
		awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }'
}

# build DIR [CMAKE-BUILD-ARGS...]: build the examples' CMake project in DIR
# (configured before), with the cache of this test; the output to DIR.log.
build() {
	_d=$1
	shift
	PROTUNE_CACHE_DIR=$CACHE PROTUNE_STORE_DIR=off \
		cmake --build "$_d" -j4 "$@" >"$_d.log" 2>&1
	_st=$?
	cat "$_d.log"
	return $_st
}

# check_output RUNGEN: its output equals the reference build's, bit for bit.
check_output() {
	pt_ex_run test blur reference ref.tmp 1 &&
	pt_rungen_run "$1" got.tmp 1 &&
	pt_ex_compare blur ref.tmp got.tmp
}

test_expect_success 'make install puts the package under libdir/cmake/ProTune' '
	test -f "$top/Makefile" &&
	make -s -C "$top" B="$B" DESTDIR="$stage" \
		prefix=/opt/protune-t1210 exec_prefix=/opt/protune-t1210 \
		bindir=/opt/protune-t1210/bin libdir=/opt/protune-t1210/lib \
		datadir=/opt/protune-t1210/share \
		mandir=/opt/protune-t1210/share/man install >install.log 2>&1 ||
		{ cat install.log; false; } &&
	test -f "$prefix/lib/cmake/ProTune/ProTuneConfig.cmake" &&
	test -f "$prefix/lib/cmake/ProTune/ProTuneConfigVersion.cmake" &&
	test -x "$prefix/bin/protune-cc" &&
	test -f "$prefix/lib/libprotune_halide.so" &&
	grep "^set(_protune_inst_libdir \"/opt/protune-t1210/lib\")" \
		"$prefix/lib/cmake/ProTune/ProTuneConfig.cmake"
'

# Only the installed tree from now on.
PATH=$prefix/bin:$(printf '%s\n' "$PATH" | sed "s|$PT_BUILD_DIR/bin:||")
export PATH

# A project of nothing but find_package(ProTune), to look at the package.
mkdir probe
cat >probe/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(probe NONE)
find_package(ProTune ${WANT} REQUIRED)
get_target_property(so ProTune::ProTune IMPORTED_LOCATION)
get_target_property(type ProTune::ProTune TYPE)
message(STATUS "ProTune ${ProTune_VERSION} ${type} ${so} cc=${PROTUNE_CC}")
add_custom_command(OUTPUT out.txt COMMAND ${CMAKE_COMMAND} -E touch out.txt
		   VERBATIM)
add_custom_target(made ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/out.txt)
if (USE_LAUNCHER)
	protune_use_launcher(${USE_LAUNCHER})
endif ()
get_property(l DIRECTORY PROPERTY RULE_LAUNCH_CUSTOM)
message(STATUS "launcher: [${l}]")
EOF

probe() {
	_d=$1
	shift
	cmake -S probe -B "$_d" -DCMAKE_PREFIX_PATH="$prefix" "$@" >"$_d.log" 2>&1
	_st=$?
	cat "$_d.log"
	return $_st
}

test_expect_success 'find_package(ProTune) gives the plugin target, the version and protune-cc' '
	probe p1 -DWANT=0.1 &&
	v=$(cat "$PT_SRCDIR/VERSION") &&
	grep "ProTune $v MODULE_LIBRARY $prefix/lib/libprotune_halide.so cc=$prefix/bin/protune-cc" p1.log &&
	grep "launcher: \[\]" p1.log
'

test_expect_success 'the installed tree still works when moved elsewhere' '
	mv "$stage" moved &&
	probe p1m -DCMAKE_PREFIX_PATH="$TRASH_DIRECTORY/moved/opt/protune-t1210"
	st=$? &&
	mv moved "$stage" &&
	test $st = 0 &&
	grep "MODULE_LIBRARY $TRASH_DIRECTORY/moved/opt/protune-t1210/lib/libprotune_halide.so" p1m.log
'

test_expect_success 'a version of another major release is not accepted' '
	test_must_fail probe p2 -DWANT=1.0 &&
	grep "ProTuneConfig.cmake, version: " p2.log
'

test_expect_success 'PROTUNE_BUDGET and PROTUNE_MODE are checked and passed in the environment' '
	test_must_fail probe p3 -DPROTUNE_MODE=fast &&
	grep "PROTUNE_MODE: .fast. is not one of" p3.log &&
	test_must_fail probe p4 -DPROTUNE_BUDGET=1m &&
	grep "PROTUNE_BUDGET: .1m. is not a number of seconds" p4.log &&
	probe p5 -DPROTUNE_BUDGET=2.5 -DPROTUNE_MODE=readonly &&
	grep "launcher: \[.*cmake -E env PROTUNE_BUDGET=2.5 PROTUNE_MODE=readonly\]" p5.log &&
	probe p6 -DPROTUNE_BUDGET=900 &&
	grep "Halide 14.s watchdog" p6.log
'

test_expect_success 'protune_use_launcher(TARGETS ...) wraps those targets (Makefile generators)' '
	probe p7 -G "Unix Makefiles" "-DUSE_LAUNCHER=TARGETS;made" &&
	grep "launcher: \[\]" p7.log &&
	grep "$prefix/bin/protune-cc .*cmake -E touch out.txt" \
		p7/CMakeFiles/made.dir/build.make &&
	cmake --build p7 >p7.build 2>&1 &&
	test -f p7/out.txt
'

test_expect_success NINJA 'protune_use_launcher(TARGETS ...) refuses Ninja, which reads only directories' '
	test_must_fail probe p8 -G Ninja "-DUSE_LAUNCHER=TARGETS;made" &&
	grep "Ninja generator reads" p8.log
'

# --- the examples' CMake project ---------------------------------------------

test_expect_success 'configure the examples against the installed package (plugin path)' '
	cmake -S "$PT_SRCDIR/examples" -B plugin -G "Unix Makefiles" \
		-DCMAKE_PREFIX_PATH="$prefix" -DPROTUNE_EXAMPLES=blur \
		-DPROTUNE_EXAMPLES_SIZE=test \
		-DPROTUNE_EXAMPLES_MACHINE_PARAMS=2,16777216,40 \
		>plugin.conf 2>&1 || { cat plugin.conf; false; }
'

test_expect_success 'the build tunes blur through the plugin, which starts its own server' '
	build plugin &&
	grep -- "-p $prefix/lib/libprotune_halide.so -s ProTune" \
		plugin/CMakeFiles/blur.update.dir/build.make &&
	! grep "protune-cc /" plugin/CMakeFiles/blur.update.dir/build.make &&
	grep "protune-cc: blur x86-64-linux.*: miss (new-key), tuned" plugin.log &&
	test "$(counter tuned)" = 1 &&
	PROTUNE_CACHE_DIR=$CACHE protune ls >ls &&
	grep " blur " ls &&
	test -f plugin/blur.schedule.h &&
	test -x plugin/blur.rungen
'

test_expect_success 'the library matches the reference bit for bit' '
	check_output plugin/blur.rungen
'

test_expect_success 'a rebuild after touching nothing runs nothing' '
	counter hit.cache >before &&
	build plugin &&
	! grep -e Generating -e Building -e protune-cc plugin.log &&
	test "$(counter hit.cache)" = "$(cat before)" &&
	test "$(counter tuned)" = 1
'

# --- the launcher --------------------------------------------------------------

test_expect_success "PROTUNE_LAUNCHER=ON: generator commands run through protune-cc ($GEN)" '
	cmake -S "$PT_SRCDIR/examples" -B launch -G "$GEN" \
		-DCMAKE_PREFIX_PATH="$prefix" -DPROTUNE_EXAMPLES=blur \
		-DPROTUNE_EXAMPLES_SIZE=test \
		-DPROTUNE_EXAMPLES_MACHINE_PARAMS=2,16777216,40 \
		-DPROTUNE_LAUNCHER=ON -DPROTUNE_MODE=frozen \
		>launch.conf 2>&1 || { cat launch.conf; false; }
'

test_expect_success 'the launcher build is a cache hit, even frozen, and correct' '
	build launch &&
	grep "protune-cc: blur x86-64-linux.*: hit (cache)" launch.log &&
	test "$(counter tuned)" = 1 &&
	check_output launch/blur.rungen
'

test_expect_success 'PROTUNE_MODE reaches the generator: frozen fails on a new key' '
	cmake -S "$PT_SRCDIR/examples" -B launch \
		-DPROTUNE_EXAMPLES_MACHINE_PARAMS=2,16777216,41 \
		>>launch.conf 2>&1 &&
	test_must_fail build launch &&
	grep "frozen mode: no schedule for generator .blur." launch.log &&
	test "$(counter tuned)" = 1
'

test_expect_success 'make uninstall removes the package' '
	make -s -C "$top" B="$B" DESTDIR="$stage" \
		prefix=/opt/protune-t1210 exec_prefix=/opt/protune-t1210 \
		bindir=/opt/protune-t1210/bin libdir=/opt/protune-t1210/lib \
		datadir=/opt/protune-t1210/share \
		mandir=/opt/protune-t1210/share/man uninstall &&
	test_path_is_missing "$prefix/lib/cmake/ProTune" &&
	test_path_is_missing "$prefix/lib/libprotune_halide.so"
'

test_done
