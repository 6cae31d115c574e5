#!/bin/sh
test_description='parsers survive mutated input under ASan and UBSan'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

# Deterministic: the same seeds and mutations on every run. `make fuzz`
# explores further with libFuzzer.
for t in tmpimg makeflags model sched cost warm profile; do
	test_expect_success "$t: corpus and 20000 mutations, no sanitizer report" "
		fuzz-$t -n 20000 -s 1 \"\$PT_SRCDIR\"/tests/fuzz/corpus/$t/* >out 2>err &&
		test_grep 'no failure' out
	"
done

test_done
