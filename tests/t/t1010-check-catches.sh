#!/bin/sh
test_description='the correctness check catches a wrong output'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

# One integer example (bit-exact) and, when present, one float example with
# a tolerance: a single element off by one must be caught in both.
test_expect_success 'set up outputs of blur' '
	pt_ex_run test blur reference ref.tmp 1 &&
	pt_ex_run test blur manual man.tmp 1 &&
	pt_ex_compare blur ref.tmp man.tmp
'

test_expect_success 'one pixel off by one, first element, is caught' '
	pt-imgcmp --perturb 0 man.tmp bad.tmp &&
	test_must_fail pt_ex_compare blur ref.tmp bad.tmp 2>err &&
	test_grep "1 of [0-9]* elements differ; first at (0,0,0,0)" err
'

test_expect_success 'one pixel off by one, last element, is caught' '
	set -- $(pt-imgcmp --stats man.tmp) &&
	n=$(( $(echo "$1" | sed "s/x/*/g") )) &&
	pt-imgcmp --perturb $((n - 1)) man.tmp bad.tmp &&
	test_must_fail pt_ex_compare blur ref.tmp bad.tmp 2>err &&
	test_grep "1 of $n elements differ" err
'

test_expect_success 'a different input gives a different output' '
	pt_ex_run test blur manual other.tmp 2 &&
	test_must_fail pt_ex_compare blur ref.tmp other.tmp
'

test_expect_success 'a truncated output is an error naming the file' '
	head -c 100 man.tmp >short.tmp &&
	test_must_fail pt-imgcmp ref.tmp short.tmp 2>err &&
	test_grep "short.tmp: payload is 80 bytes" err
'

test_expect_success 'an output of another shape is caught' '
	pt_ex_run test blur manual big.tmp 1 --output_extents=[100,10] &&
	test_must_fail pt_ex_compare blur ref.tmp big.tmp 2>err &&
	test_grep "shape differs" err
'

test_expect_success 'a run that reads beyond an input is caught' '
	test_must_fail pt_ex_run test blur manual far.tmp 1 --output_extents=[300,200] 2>err &&
	test_grep "reads outside the estimated size of an input" err
'

float_ex=
for ex in $(pt_ex_list); do
	pt_ex_tolerance $ex
	if [ "$PT_ABS_TOL$PT_REL_TOL" != 00 ]; then float_ex=$ex; break; fi
done
[ -n "$float_ex" ] && test_set_prereq FLOAT_TOLERANCE

test_expect_success FLOAT_TOLERANCE "one element off by 1.0 is caught despite $float_ex's tolerance" "
	pt_ex_run test $float_ex reference fref.tmp 1 &&
	pt-imgcmp --perturb 7 fref.tmp fbad.tmp &&
	test_must_fail pt_ex_compare $float_ex fref.tmp fbad.tmp
"

test_done
