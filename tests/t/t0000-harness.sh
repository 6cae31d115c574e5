#!/bin/sh
test_description='the test runner counts passes, failures, skips and deaths'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

# A fake source tree whose tests pass, fail, skip and die, run by the real
# run-tests.sh with the real test-lib.sh.
test_expect_success 'set up a fake tree' '
	mkdir -p src/tests/t src/tests/lib bld/tests &&
	cp "$PT_SRCDIR/tests/lib/test-lib.sh" src/tests/lib/ &&
	cat >src/tests/t/t1-pass.sh <<-\EOT &&
	. "$PT_SRCDIR/tests/lib/test-lib.sh"
	test_expect_success one "true"
	test_expect_success two "test 1 = 1"
	test_expect_success NOPE skipped "false"
	test_done
	EOT
	cat >src/tests/t/t2-fail.sh <<-\EOT &&
	. "$PT_SRCDIR/tests/lib/test-lib.sh"
	test_expect_success good "true"
	test_expect_success bad "echo why-it-failed && false"
	test_done
	EOT
	cat >src/tests/t/t3-die.sh <<-\EOT &&
	echo "ok 1 - looked fine"
	exit 3
	EOT
	printf "#!/bin/sh\necho \"ok 1 - unit a\"\necho 1..1\n" >bld/tests/unit-tests &&
	chmod +x bld/tests/unit-tests
'

test_expect_success 'the summary line counts every outcome' '
	test_expect_code 1 env PT_SRCDIR="$PWD/src" PT_BUILD_DIR="$PWD/bld" \
		PT_JOBS=2 "$PT_SRCDIR/tests/run-tests.sh" >out &&
	tail -n 1 out >actual &&
	echo "5 passed, 2 failed, 1 skipped" >expect &&
	test_cmp expect actual &&
	test_grep "why-it-failed" out &&
	test_grep "t3-die exited with status 3" out
'

test_expect_success 'a pattern selects scripts and all-pass exits 0' '
	env PT_SRCDIR="$PWD/src" PT_BUILD_DIR="$PWD/bld" \
		"$PT_SRCDIR/tests/run-tests.sh" t1-pass >out &&
	tail -n 1 out >actual &&
	echo "2 passed, 0 failed, 1 skipped" >expect &&
	test_cmp expect actual
'

test_done
