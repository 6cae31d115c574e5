#!/bin/sh
test_description='libprotune_halide.so loads into a real generator and registers ProTune'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

gen=$PT_BUILD_DIR/ex/bin/blur.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so

test_expect_success 'the plugin exports no undefined symbols beyond libHalide and libc' '
	test -f "$plugin" &&
	nm -D --undefined-only "$plugin" >undef &&
	! grep -v -e Halide -e GLIBC -e CXXABI -e GCC_ -e "^ *w " undef
'

# Halide generators exit 255 on a compile error.
test_expect_success 'a generator run with -s ProTune reaches the plugin' '
	test_expect_code 255 "$gen" -g blur -o . -e static_library -n b \
		-p "$plugin" -s ProTune auto_schedule=true target=host size=test 2>err &&
	test_grep "ProTune autoscheduler (protune [0-9.]*): cannot schedule pipeline output yet" err &&
	! test -f b.a
'

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
