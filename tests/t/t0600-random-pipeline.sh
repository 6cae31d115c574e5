#!/bin/sh
test_description='random pipelines: deterministic, every seed extracts, random and space schedules match the reference'
. "$PT_SRCDIR/tests/lib/test-lib.sh"
. "$PT_SRCDIR/examples/pt-example.sh"
. "$PT_SRCDIR/tests/lib/difftest.sh"

gen=$PT_BUILD_DIR/tests/random_pipeline.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so
test -x "$gen" ||
	test_skip_all "no $gen (make build/tests/random_pipeline.generator)"

# PT_RP_SEEDS: the pipelines compiled and compared (a random and a space
# schedule each); PT_RP_EXTRACT: how many seeds must extract.
rp_seeds=${PT_RP_SEEDS:-0 1 2 3}
rp_extract=${PT_RP_EXTRACT:-200}
report=$PWD/report

# difftest.sh's runner, for the random pipeline of seed $RP_SEED.
pt_diff_gen() {
	_n=$1 _d=$2
	shift 2
	mkdir -p "$_d" &&
	timeout "$PT_DIFF_GEN_TIMEOUT" "$gen" -g random_pipeline -o "$_d" \
		-e static_library,h,registration -n "$_n" \
		target="$PT_DIFF_TARGET" size=test seed="$RP_SEED" "$@" \
		>"$_d/gen.log" 2>&1
}

# A schedule no pipeline fits: the plugin stops right after the model.
printf 'protune-schedule 1\nkey 00000000000000000000000000000000\nfunc f0 root\n' \
	>nofit.sched

# rp_model SEED OUT [ARGS...]: dump the model of pipeline SEED to OUT; fails
# unless the plugin got as far as refusing nofit.sched.
rp_model() {
	_s=$1 _m=$2
	shift 2
	mkdir -p "out$_s" &&
	PROTUNE_DUMP_MODEL=$PWD/$_m PROTUNE_SCHEDULE_FILE=$PWD/nofit.sched \
		"$gen" -g random_pipeline -o "out$_s" \
		-e static_library,h,registration -n rp -p "$plugin" -s ProTune \
		auto_schedule=true target="$PT_DIFF_TARGET" seed="$_s" \
		size=test "$@" >"$_m.err" 2>&1
	rm -rf "out$_s"
	grep -q "does not fit" "$_m.err" &&
	! grep -i -e "missing estimate" -e "extract" "$_m.err" &&
	test -s "$_m"
}

test_expect_success 'one seed gives one pipeline, another seed another' '
	rp_model 5 a.model && rp_model 5 b.model && rp_model 6 c.model &&
	grep -v "^argv " a.model >a.noargv &&
	grep -v "^argv " b.model >b.noargv &&
	grep -v "^argv " c.model >c.noargv &&
	test_cmp a.noargv b.noargv &&
	! cmp -s a.noargv c.noargv
'

test_expect_success "the plugin extracts seeds 0..$((rp_extract - 1)) at both sizes" '
	mkdir -p models &&
	s=0 &&
	while [ $s -lt $rp_extract ]; do
		rp_model $s models/$s.model ||
			{ echo "seed $s:"; cat models/$s.model.err; exit 1; }
		s=$((s + 1))
	done &&
	rp_model 7 bench.model size=bench &&
	grep "^input i[0-9] buffer u8 dims 3 est 0 1024 0 1024 0 3" bench.model &&
	grep "^input i[0-9] buffer u8 dims 3 est 0 96 0 96 0 3" models/7.model
'

test_expect_success 'every stage type appears across the seeds' '
	cat models/*.model >all.models &&
	for t in pointwise cast stencil sep_x sep_y down up wsum dilate erode \
		rowsum csum mix weights scan hist table lut transpose; do
		grep -q "^func f[0-9]* .*label \"s[0-9]*_$t[\"\$]" all.models ||
			{ echo "no $t stage"; exit 1; }
	done
'

test_expect_success 'stages=N sets the length' '
	rp_model 3 short.model stages=2 && rp_model 3 long.model stages=40 &&
	test $(grep -c "^func" short.model) -lt $(grep -c "^func" long.model)
'

for s in $rp_seeds; do
	test_expect_success "seed $s: reference, model and server baseline" "
		mkdir p$s && (cd p$s && RP_SEED=$s pt_diff_setup random_pipeline)
	"
	test_expect_success "seed $s: a random schedule matches the reference" "
		(cd p$s && RP_SEED=$s pt_diff_one random_pipeline $((s + 1)) '$report')
	"
	test_expect_success "seed $s: a space schedule matches the reference" "
		(cd p$s && RP_SEED=$s PT_DIFF_DRAW=space \
			pt_diff_one random_pipeline $((s + 1000)) '$report')
	"
done

test_expect_success 'every schedule was legal and correct' '
	! grep -v " ok$" "$report"
'

# tests/data/rp39-seed23.sched: the space's seed 23 of rp:39 at benchmark
# size (stages=8, tuner/train-zen4/models/rp:39.model) before the check
# counted a guard tail's steady state; RunGen crashed on a misaligned
# vmovdqa (doc/schedule-legality.md, rule 6, strided loads).
test_expect_success 'a strided load at a constant address under a guard tail is refused' '
	rpm=$PT_SRCDIR/tuner/train-zen4/models/rp:39.model &&
	test_expect_code 1 protune check "$rpm" \
		"$PT_SRCDIR/tests/data/rp39-seed23.sched" 2>err &&
	test_grep "f15 (s2_sep_x): computed at f16 (s2_sep_y) .v1ooi." err &&
	test_grep "stride of 4 elements" err &&
	protune space "$rpm" --seed 23 >s23.sched &&
	protune check "$rpm" s23.sched &&
	! cmp -s s23.sched "$PT_SRCDIR/tests/data/rp39-seed23.sched"
'

test_done
