#!/bin/sh
test_description='the jobserver client under a real GNU make'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

# A recipe marked + gets make's jobserver fds; one job slot is the implicit
# token every child holds, so make -jN leaves N-1 tokens to take.
cat >Makefile <<'EOT'
probe:
	+@pt-jobserver-probe
plain:
	@pt-jobserver-probe
nested:
	+@$(MAKE) -s probe
EOT

test_expect_success 'make -j3 lends two tokens, and gets them back' '
	make -s -j3 probe >out 2>err &&
	echo "tokens 2" >expect &&
	test_cmp expect out &&
	! grep -i "token" err
'

test_expect_success 'a sub-make passes the jobserver on' '
	make -s -j4 nested >out 2>err &&
	echo "tokens 3" >expect &&
	test_cmp expect out
'

test_expect_success 'make -j1 and plain make give no jobserver' '
	make -s probe >out &&
	test_grep "^none" out &&
	make -s -j1 probe >out &&
	test_grep "^none" out
'

test_expect_success 'a recipe not marked + is told why it has no jobserver' '
	make -s -j3 plain >out 2>err &&
	test_grep "^none: .*is not open" out
'

test_done
