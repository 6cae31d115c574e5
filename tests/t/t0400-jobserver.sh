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

# --- measuring under make --------------------------------------------------

# cost+real compiles candidates in make's job slots: one in the slot the
# recipe holds, one more for each token it takes without waiting, every
# token back when it is done. The makes below are the test's own, not
# sub-makes of make check.
unset MAKEFLAGS MFLAGS MAKELEVEL
# A benchmark lock of its own: other tests measure at the same time, and
# waiting for the machine's lock would spend the short budgets.
PROTUNE_BENCH_LOCK=$TRASH_DIRECTORY/bench.lock
export PROTUNE_BENCH_LOCK
test_expect_success 'a blur model, and RunGenMain.o for measuring' '
	blur_measure_setup
'

# After the tuning, the same job probes: with make -j2, the one token the
# recipe does not hold must be back in the pipe.
cat >tune.mk <<'EOT'
TUNE = protune tune blur.model --measure --threads 2 --budget 6 --seed 3 \
	--runs 1 >$@.sched 2>$@.err
tune:
	+@$(TUNE)
	+@pt-jobserver-probe >$@.probe
plain:
	@$(TUNE)
busy: busy-tune sleeper
busy-tune:
	+@$(TUNE)
sleeper:
	@sleep 8
EOT

test_expect_success 'make -j2: 2 candidates at a time, every token back' '
	make -s -j2 -f tune.mk tune 2>err &&
	cat tune.err err &&
	test_grep "^measuring [0-9]* candidates, 2 at a time$" tune.err &&
	echo "tokens 1" >expect &&
	test_cmp expect tune.probe &&
	! grep -i "jobserver\|token" err &&
	! grep "still held" tune.err &&
	protune check blur.model tune.sched
'

test_expect_success 'make -j1, or a recipe without +: 1 at a time' '
	make -s -j1 -f tune.mk tune 2>err &&
	cat tune.err err &&
	test_grep "^measuring [0-9]* candidates, 1 at a time (MAKEFLAGS names no jobserver" tune.err &&
	! grep "[02-9] at a time" tune.err &&
	make -s -j2 -f tune.mk plain 2>err &&
	cat plain.err err &&
	test_grep "^measuring [0-9]* candidates, 1 at a time (jobserver fd [0-9]* is not open" plain.err &&
	! grep "[02-9] at a time" plain.err
'

test_expect_success 'no free job slot: fewer at once, no waiting' '
	make -s -j2 -f tune.mk busy 2>err &&
	cat busy-tune.err err &&
	test_grep "^measuring [0-9]* candidates, 1 at a time (no more free job slots" busy-tune.err &&
	! grep -i "jobserver\|token" err
'

# A miss through protune-cc measures the same way (--measure=on). Each run
# has a cache of its own, so that each one misses.
cat >cc.mk <<'EOT'
GEN = $(PT_BUILD_DIR)/ex/bin/blur.generator
CC_RUN = PROTUNE_CACHE_DIR=$(CURDIR)/$@.cache protune-cc --measure=on \
	--budget=6 --log-file=$(CURDIR)/$@.log $(GEN) -g blur -o $@.out \
	-e static_library,h,registration -n blur target=host size=test \
	2>$@.err
cc:
	+@$(CC_RUN)
	+@pt-jobserver-probe >$@.probe
cc-plain:
	@$(CC_RUN)
EOT

# cc_cache NAME: a fresh cache for run NAME, with RunGenMain.o.
cc_cache() {
	rm -rf "$1.cache" "$1.out" "$1.log" &&
	mkdir -p "$1.cache/rungen" "$1.out" &&
	cp "$HOME"/.cache/protune/rungen/RunGenMain-*.o "$1.cache/rungen/"
}

test_expect_success 'protune-cc --measure=on under make -j2: a miss compiles 2 at a time' '
	cc_cache cc &&
	make -s -j2 -f cc.mk cc 2>err &&
	cat cc.err cc.log err &&
	test_grep "miss (new-key), tuned" cc.err &&
	test_grep "^measuring [0-9]* candidates, 2 at a time$" cc.log &&
	echo "tokens 1" >expect &&
	test_cmp expect cc.probe &&
	! grep -i "jobserver\|token" err &&
	test -f cc.out/blur.a
'

test_expect_success 'protune-cc --measure=on under make -j1 or without +: 1 at a time' '
	cc_cache cc &&
	make -s -j1 -f cc.mk cc 2>err &&
	cat cc.log &&
	test_grep "^measuring [0-9]* candidates, 1 at a time" cc.log &&
	! grep "[02-9] at a time" cc.log &&
	cc_cache cc-plain &&
	make -s -j2 -f cc.mk cc-plain 2>err &&
	cat cc-plain.log &&
	test_grep "^run by make without a jobserver (jobserver fd [0-9]* is not open" cc-plain.log &&
	test_grep "^measuring [0-9]* candidates, 1 at a time" cc-plain.log &&
	! grep "[02-9] at a time" cc-plain.log
'

test_done
