#!/bin/sh
test_description='every example, under every schedule variant, matches its reference build'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"

# `make check` builds all variants at test size before the tests run; a
# missing program is a failure, not a skip.
for ex in $(pt_ex_list); do
	test_expect_success "$ex: reference output is not constant" "
		pt_ex_run test $ex reference $ex.ref.tmp 1 &&
		pt-imgcmp --stats $ex.ref.tmp >stats &&
		read shape type lo hi <stats &&
		test \"\$lo\" != \"\$hi\"
	"
	for v in manual adams2019 mullapudi2016 protune; do
		test_expect_success "$ex: $v schedule matches the reference" "
			pt_ex_run test $ex $v $ex.$v.tmp 1 &&
			pt_ex_compare $ex $ex.ref.tmp $ex.$v.tmp
		"
	done
	test_expect_success "$ex: manual matches the reference on a second input" "
		pt_ex_run test $ex reference $ex.ref2.tmp 2 &&
		pt_ex_run test $ex manual $ex.manual2.tmp 2 &&
		pt_ex_compare $ex $ex.ref2.tmp $ex.manual2.tmp
	"
done

test_done
