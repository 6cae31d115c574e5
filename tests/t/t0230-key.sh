#!/bin/sh
test_description='the key covers the algorithm, target and machine params, and nothing volatile'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

gen=$PT_BUILD_DIR/tests/keytest.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so

# model NAME [GENERATOR-ARGS...]: run the keytest generator through the
# plugin (the server's answer is applied), its model in NAME.model, its key
# in NAME.key and its stage hashes ("fK.S HASH LABEL") in NAME.stages.
model() {
	_m=$1
	shift
	mkdir -p "out-$_m" &&
	PROTUNE_DUMP_MODEL=$PWD/$_m.model "$gen" -g keytest -o "out-$_m" \
		-e static_library -n keytest -p "$plugin" -s ProTune \
		auto_schedule=true "$@" 2>"$_m.err" &&
	protune key "$_m.model" >"$_m.keys" &&
	head -n 1 "$_m.keys" >"$_m.key" &&
	sed 1d "$_m.keys" >"$_m.stages"
}

# stage NAME LABEL: the hash of the stage of Func LABEL (its last stage).
stage() {
	awk -v l="$2" '$3 == l { h = $2 } END { print h }' "$1.stages"
}

test_expect_success 'the same generator run gives the same key three times' '
	model base target=host &&
	model again target=host &&
	model third target=host &&
	test_cmp base.key again.key &&
	test_cmp base.key third.key &&
	grep -v "^argv " base.model >base.noargv &&
	grep -v "^argv " again.model >again.noargv &&
	test_cmp base.noargv again.noargv &&
	grep -E "^[0-9a-f]{32}$" base.key
'

test_expect_success 'the model names the concrete target, never host' '
	grep "^target \"x86-64-linux-" base.model &&
	! grep "^target \"host" base.model
'

test_expect_success 'another checkout, directory, output name and environment: same key' '
	mkdir -p elsewhere/deep &&
	cp "$gen" elsewhere/deep/kt.generator &&
	(
		cd elsewhere/deep &&
		PROTUNE_DUMP_MODEL=$PWD/moved.model SOME_VOLATILE=$$ \
		./kt.generator -g keytest -o . -e static_library,h -n renamed \
			-p "$plugin" -s ProTune auto_schedule=true target=host \
			2>moved.err
	) &&
	protune key elsewhere/deep/moved.model | head -n 1 >moved.key &&
	test_cmp base.key moved.key
'

test_expect_success 'renaming Funcs and Vars does not change the key' '
	model renamed target=host edit=6 &&
	test_cmp base.key renamed.key
'

for e in 1 2 3 4 5; do
	test_expect_success "an edit to the algorithm or estimates changes the key (edit=$e)" "
		model edit$e target=host edit=$e &&
		! test_cmp base.key edit$e.key
	"
done

test_expect_success 'a float constant is hashed exactly (0.1f vs 0.1000001f)' '
	test "$(stage base c)" != "$(stage edit3 c)"
'

test_expect_success 'the target and the machine params are in the key' '
	model sse target=x86-64-linux-sse41 &&
	! test_cmp base.key sse.key &&
	model mp target=host machine_params=7,1048576,10 &&
	! test_cmp base.key mp.key
'

test_expect_success 'an edit to b changes b and output, not the stages it does not feed' '
	for f in a c hist input_im; do
		test -n "$(stage base $f)" &&
		test "$(stage base $f)" = "$(stage edit1 $f)" || return 1
	done &&
	test "$(stage base b)" != "$(stage edit1 b)" &&
	test "$(stage base output)" != "$(stage edit1 output)"
'

test_expect_success 'each sub-target of a multi-target build has the same stage hashes' '
	model multi target=x86-64-linux-sse41,x86-64-linux-avx-sse41 &&
	grep "^target \"x86-64-linux-" multi.model &&
	cut -d" " -f1,2 base.stages >base.pos &&
	cut -d" " -f1,2 multi.stages >multi.pos &&
	test_cmp base.pos multi.pos
'

test_done
