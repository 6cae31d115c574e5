#!/bin/sh
test_description='random schedules applied by the plugin give output bit-identical to the reference'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"
. "$PT_SRCDIR/tests/lib/difftest.sh"

# `make check` draws a few schedules per example; `make check-long` sets
# PT_DIFF_SEEDS=50 and collects the report in PT_DIFF_REPORT;
# PT_DIFF_EXAMPLES narrows the run to some examples.
seeds=${PT_DIFF_SEEDS:-3}
report=${PT_DIFF_REPORT:-$PWD/report}

for ex in ${PT_DIFF_EXAMPLES:-$(pt_ex_list)}; do
	test_expect_success "$ex: reference, model and server baseline" "
		mkdir $ex && (cd $ex && pt_diff_setup $ex)
	"
	s=1
	while [ "$s" -le "$seeds" ]; do
		test_expect_success "$ex: random schedule $s matches the reference" "
			(cd $ex && pt_diff_one $ex $s '$report')
		"
		s=$((s + 1))
	done
	# One draw from the tuner's search space (PT_DIFF_DRAW=space does
	# more in check-long).
	test_expect_success "$ex: a search-space schedule matches the reference" "
		(cd $ex && PT_DIFF_DRAW=space pt_diff_one $ex 1000 '$report')
	"
done

test_expect_success 'every random schedule was legal and correct' '
	! grep -v " ok$" "$report"
'

test_done
