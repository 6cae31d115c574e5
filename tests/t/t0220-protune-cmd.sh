#!/bin/sh
test_description='the protune command and protune-cc --serve'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

gen=$PT_BUILD_DIR/ex/bin/blur.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so
# RunGenMain.o takes a while to compile: keep it between runs.
cache=$PT_BUILD_DIR/tests/protune-cache

# frame TYPE [PAYLOAD-FILE]: one protocol message on stdout.
frame() {
	if [ $# -gt 1 ]; then
		printf 'PT1 %s %d\n' "$1" "$(wc -c <"$2")" && cat "$2"
	else
		printf 'PT1 %s 0\n' "$1"
	fi
}

hello() {
	printf 'protune 0.1.0 pid 1' >hello.txt &&
	frame hello hello.txt
}

# frames_awk: split a stream of framed messages ("PT1 TYPE LENGTH\n" and
# LENGTH bytes) held in `d`; for each, run `f` (with type t, payload p).
frames_awk='BEGIN { RS = "\001" } { d = d $0 }
END {
	while (length(d) > 0) {
		nl = index(d, "\n"); if (!nl) break
		split(substr(d, 1, nl - 1), h, " ")
		t = h[2]; p = substr(d, nl + 1, h[3] + 0)
		d = substr(d, nl + 1 + h[3])
		FRAME
	}
	DONE
}'

# payload FILE TYPE: the payload of the first message of TYPE (the stream
# is parsed by length: progress messages end without a newline).
payload() {
	LC_ALL=C awk -v want="$2" "$(printf '%s' "$frames_awk" |
		sed 's/FRAME/if (t == want) { printf "%s", p; exit }/; s/DONE//')" "$1"
}

# frames FILE TYPE: how many messages of TYPE the stream holds.
frames() {
	LC_ALL=C awk -v want="$2" "$(printf '%s' "$frames_awk" |
		sed 's/FRAME/n += (t == want)/; s/DONE/print n + 0/')" "$1"
}

test_expect_success '--version and --help' '
	protune --version >out &&
	test_grep "^protune [0-9][0-9.]*$" out &&
	protune --help >out &&
	test_grep "usage: protune COMMAND" out &&
	test_grep "measure MODEL SCHED" out &&
	protune-cc --help >out &&
	test_grep "protune-cc --serve" out
'

# Every command of protune; each must print its usage on stdout and exit 0
# for --help and -h.
commands="model key check baseline random space cpp cost measure tune config
	stats zero-stats ls show explain export import commit gc retune clear
	train calibrate host-target"

test_expect_success 'protune --help names only commands that exist' '
	protune --help >out &&
	sed -n "s/^  \([a-z][a-z-]*\).*/\1/p" out >named &&
	test -s named &&
	while read c; do
		case " $(echo $commands) " in
		*" $c "*) ;;
		*) echo "protune --help names unknown command $c"; return 1 ;;
		esac
	done <named &&
	for c in $commands; do
		grep -q "^  $c\>\|| $c\>" out ||
			{ echo "protune --help does not name $c"; return 1; }
	done
'

test_expect_success 'COMMAND --help: the usage on stdout, exit 0' '
	for c in $commands; do
		for h in --help -h; do
			protune $c $h >out 2>err ||
				{ echo "protune $c $h failed"; return 1; }
			! test -s err || { echo "protune $c $h: stderr"; return 1; }
			grep -q "^usage: protune $c\>" out ||
				{ echo "protune $c $h: no usage"; return 1; }
		done
	done
'

# usage_has COMMAND OPTION...: the usage of COMMAND names each OPTION.
usage_has() {
	_c=$1 &&
	shift &&
	protune $_c --help >usage &&
	for _o in "$@"; do
		grep -q -e "$_o" usage ||
			{ echo "protune $_c --help lacks $_o"; return 1; }
	done
}

test_expect_success 'the usages name every option' '
	usage_has random --seed &&
	usage_has space --seed --children --bench &&
	usage_has measure --runs --min-time --keep --cache-dir --plugin \
		--no-check -v --reference &&
	usage_has tune --search --budget --decision --iterations --threads \
		--seed --trees --greedy-trees --formula --cp --widen \
		--max-nodes --beam --passes --measure --measure-top --runs \
		--cost-model --trace --warm-model --warm-sched -q &&
	usage_has train --data --hold-out --hold-out-data --trees --ridge --loss \
		--weight-power --drop --eval --out --dump --no-verify &&
	usage_has show --cpp --text &&
	usage_has commit -m --message= &&
	usage_has gc --size= --unused-days= --unreferenced --since= \
		--dry-run &&
	usage_has retune --budget= --runs= --dry-run &&
	usage_has clear --force
'

test_expect_success 'the cache commands usages show the settings on every line' '
	for c in config stats zero-stats ls show explain export import commit \
		gc retune clear; do
		protune $c --help >out &&
		if grep -v "SETTING=VALUE" out; then
			echo "protune $c --help: a line without the settings"
			return 1
		fi
	done &&
	protune gc --help >out &&
	test_line_count = 3 out &&
	protune explain --help >out &&
	test_grep "explain \[--SETTING=VALUE...\] GENERATOR" out
'

test_expect_success 'train: a usage error says what is wrong, on stderr, exit 2' '
	test_expect_code 2 protune train --frob 2>err >out &&
	test_grep "unknown option .--frob." err &&
	test_grep "^usage: protune train" err &&
	! test -s out &&
	test_expect_code 2 protune train --data 2>err &&
	test_grep "option .--data. needs a value" err &&
	test_expect_code 2 protune train extra 2>err &&
	test_grep "unexpected argument .extra." err
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 protune 2>err &&
	test_grep usage: err &&
	test_expect_code 2 protune frobnicate 2>err &&
	test_grep "unknown command .frobnicate." err &&
	test_expect_code 2 protune model 2>err &&
	test_grep "missing arguments" err &&
	test_expect_code 2 protune model a b 2>err &&
	test_grep "unexpected argument .b." err &&
	test_expect_code 2 protune model a --seed 3 2>err &&
	test_grep "unknown option .--seed." err &&
	test_expect_code 2 protune random a --seed 2>err &&
	test_grep "needs a value" err &&
	test_expect_code 2 protune random a --seed=x 2>err &&
	test_grep "bad seed" err &&
	test_expect_code 2 protune measure a b --runs 0 2>err &&
	test_grep "bad run count" err &&
	test_expect_code 2 protune check - - 2>err &&
	test_expect_code 2 protune-cc --serve extra 2>err
'

test_expect_success 'a missing file is a failure, not a usage error' '
	test_expect_code 1 protune model no-such.model 2>err &&
	test_grep "protune: cannot read no-such.model: No such file" err
'

# --- protune-cc --serve without a model ---------------------------------

test_expect_success '--serve: garbage makes it fail with a message' '
	echo "GET / HTTP/1.0" | test_expect_code 1 protune-cc --serve >out 2>err &&
	test_grep "protune-cc: waiting for .hello. from the plugin: malformed message header" err &&
	test_must_fail test -s out
'

test_expect_success '--serve: end of file makes it fail with a message' '
	test_expect_code 1 protune-cc --serve </dev/null >out 2>err &&
	test_grep "protune-cc: waiting for .hello. from the plugin: the peer closed the channel" err &&
	hello | test_expect_code 1 protune-cc --serve >out 2>err &&
	test_grep "waiting for the model from the plugin: the peer closed" err &&
	{ hello && printf "PT1 model 100\nabc"; } |
		test_expect_code 1 protune-cc --serve >out 2>err &&
	test_grep "after 3 of the 100 bytes of a .model. message" err
'

test_expect_success '--serve: a message out of turn fails' '
	printf "protune 0.1.0 pid 1" >hello.txt &&
	frame model hello.txt | test_expect_code 1 protune-cc --serve 2>err &&
	test_grep "sent a .model. message where .hello. was expected" err &&
	printf "nonsense" >bad-hello &&
	frame hello bad-hello | test_expect_code 1 protune-cc --serve 2>err &&
	test_grep "is not from protune" err
'

test_expect_success '--serve: an unreadable model is answered with an error' '
	printf "protune-model 1\nthis is not a model\n" >junk.model &&
	{ hello && frame model junk.model && frame bye; } |
		test_expect_code 1 protune-cc --serve >out 2>err &&
	test_grep "cannot read the model: <plugin>:[0-9]*:" err &&
	head -n 1 out >first &&
	test_grep "^PT1 error [0-9]*$" first &&
	payload out error >msg &&
	test_grep "<plugin>:[0-9]*:" msg
'

test_expect_success '--serve: a plugin that says nothing in time fails it' '
	{ hello && sleep 2; } |
		test_expect_code 1 env PROTUNE_SERVE_TIMEOUT_MS=300 protune-cc --serve 2>err &&
	test_grep "waiting for the model from the plugin: timed out after 300 ms" err &&
	test_expect_code 2 env PROTUNE_SERVE_TIMEOUT_MS=soon protune-cc --serve </dev/null 2>err &&
	test_grep "PROTUNE_SERVE_TIMEOUT_MS=.soon. is not" err
'

test_expect_success '--serve: a plugin may say bye instead of sending its model' '
	{ hello && sleep 1 && printf "PT1 bye 0\n"; } | protune-cc --serve >out 2>err &&
	test_must_fail test -s out
'

# --- with a real model -----------------------------------------------------

# The plugin dumps the model before it asks any server, so the dump is there
# even when the rest of the generator run fails.
test_expect_success 'dump the model of blur with the plugin' '
	mkdir gen &&
	PROTUNE_DUMP_MODEL=$PWD/blur.model "$gen" -g blur -o gen \
		-e static_library,h,registration -n blur -p "$plugin" \
		-s ProTune auto_schedule=true target=host size=test \
		>gen.log 2>&1;
	cat gen.log;
	test -s blur.model
'
test -s blur.model && test_set_prereq MODEL

test_expect_success MODEL 'model: prints the model canonically' '
	protune model blur.model >again &&
	test_cmp blur.model again &&
	protune model - <blur.model >again &&
	test_cmp blur.model again
'

test_expect_success MODEL 'model: a parse error names the file and line' '
	sed "2s/.*/halide 14.0.0 junk junk/" blur.model >bad.model &&
	test_expect_code 1 protune model bad.model 2>err &&
	test_grep "^protune: bad.model:2: " err
'

test_expect_success MODEL 'key: the key, then one hash per stage' '
	protune key blur.model >key &&
	head -n 1 key >k &&
	test_grep "^[0-9a-f]\{32\}$" k &&
	sed 1d key >stages &&
	test -s stages &&
	! grep -v "^f[0-9][0-9]*\.[0-9][0-9]* [0-9a-f]\{32\}\( .*\)\{0,1\}$" stages &&
	protune key blur.model >key2 &&
	test_cmp key key2
'

test_expect_success MODEL 'baseline, check and cpp' '
	protune baseline blur.model >base.sched &&
	test_grep "^protune-schedule 1$" base.sched &&
	test_grep "^key $(head -n 1 key)$" base.sched &&
	protune check blur.model base.sched &&
	protune cpp blur.model base.sched >base.cpp &&
	test_grep "pipeline.get_func(" base.cpp
'

test_expect_success MODEL 'random: the same seed gives the same legal schedule' '
	protune random blur.model --seed 7 >r7 &&
	protune random blur.model --seed=7 >r7b &&
	test_cmp r7 r7b &&
	protune check blur.model r7 &&
	protune random blur.model >r0 &&
	protune check blur.model r0
'

test_expect_success MODEL 'check: a schedule for another key does not fit' '
	sed "s/^key .*/key 0123456789abcdef0123456789abcdef/" base.sched >other.sched &&
	test_expect_code 1 protune check blur.model other.sched 2>err &&
	test_grep "^protune: other.sched does not fit blur.model: " err &&
	test_expect_code 1 protune cpp blur.model other.sched 2>err &&
	test_grep "does not fit" err
'

test_expect_success MODEL 'measure: the baseline runs and takes a positive time' '
	protune measure blur.model base.sched --runs 3 --min-time 0.01 \
		--cache-dir "$cache" -v >time 2>err &&
	cat time err &&
	awk "NF != 5 || !(\$1 > 0) || \$2 > \$1 || \$1 > \$3 || \$4 != 3 || !(\$5 > 0) { exit 1 }" time &&
	test_grep "median .* ms per iteration" err &&
	ls "$cache"/rungen/RunGenMain-*.o
'

test_expect_success MODEL 'measure --keep keeps the build' '
	TMPDIR=$PWD protune measure blur.model base.sched --runs 1 \
		--min-time 0.01 --cache-dir "$cache" --keep >time 2>err &&
	dir=$(sed -n "s/^protune: kept //p" err) &&
	test -x "$dir/rungen" && test -s "$dir/cand.a" &&
	test_cmp base.sched "$dir/schedule.txt" &&
	mv "$dir/rungen" ref.rungen &&
	rm -rf "$dir"
'

# The kept binary of the same schedule as a reference: the ratio is about 1
# (the same code twice, back to back), and the reference gets its time.
# Blur at test size runs for microseconds, where a shared machine's noise
# reaches 2x (2.17 was seen): the bounds only catch a ratio that is not one
# at all (a unit or an inversion wrong).
test_expect_success MODEL 'measure --reference times a reference alongside' '
	protune measure blur.model base.sched --runs 3 --min-time 0.01 \
		--cache-dir "$cache" --reference "$PWD/ref.rungen" >time &&
	cat time &&
	awk "NF != 7 || !(\$6 > 0.2) || !(\$6 < 5) || !(\$7 > 0) { exit 1 }" time &&
	test_expect_code 1 protune measure blur.model base.sched --runs 1 \
		--cache-dir "$cache" --reference "$PWD/no-such" 2>err &&
	test_grep "cannot run .*no-such" err
'

# Halide's profiler reports each Func the schedule computes (the inlined
# ones are part of their consumers), and the shares add up to the whole.
test_expect_success MODEL 'measure --profile reports the time of each Func' '
	protune measure blur.model base.sched --runs 2 --min-time 0.01 \
		--cache-dir "$cache" --profile >prof &&
	cat prof &&
	awk "NR == 1 && (NF != 5 || !(\$1 > 0) || \$4 != 2) { exit 1 }" prof &&
	protune key blur.model >key &&
	sed -n "s/^func \(f[0-9]*\) root$/\1/p" base.sched >roots &&
	test -s roots &&
	for f in $(cat roots); do
		label=$(awk -v f="$f.0" "\$1 == f { print \$3 }" key) &&
		test -n "$label" &&
		awk -v l="$label" "\$1 == l && \$2 >= 0 { ok = 1 } END { exit !ok }" prof ||
		return 1
	done &&
	awk "/^func / { t = 1; next } /^\(pipeline\)/ { t = 0 }
	     t && NF == 4 { sub(\"%\", \"\", \$3); s += \$3 }
	     END { exit !(s > 99.5 && s < 100.5) }" prof &&
	test_expect_code 2 protune measure blur.model base.sched \
		--profile --reference "$PWD/ref.rungen" 2>err &&
	test_grep "do not go together" err
'

# A model recorded for a build without a runtime of its own: the benchmark
# builds with one, and the schedule is applied under that pipeline's key.
test_expect_success MODEL 'measure builds a no_runtime model with a runtime' '
	sed "s/^target \"\(.*\)\"$/target \"\1-no_runtime\"/" blur.model >nort.model &&
	test_grep "no_runtime" nort.model &&
	sed "s/^key .*/key $(protune key nort.model | head -n 1)/" base.sched >nort.sched &&
	protune check nort.model nort.sched &&
	protune measure nort.model nort.sched --runs 1 --min-time 0.01 \
		--cache-dir "$cache" >time &&
	awk "NF != 5 || !(\$1 > 0) { exit 1 }" time
'

test_expect_success MODEL 'measure: a missing plugin is named before the generator runs' '
	test_expect_code 1 protune measure blur.model base.sched \
		--cache-dir "$cache" --plugin ./no-such.so >out 2>err &&
	test_grep "^protune: --plugin: .\./no-such.so.: cannot read the plugin: No such file" err &&
	! test -s out &&
	test_expect_code 1 env PROTUNE_PLUGIN=$PWD/no-such.so protune measure \
		blur.model base.sched --cache-dir "$cache" >out 2>err &&
	test_grep "^protune: PROTUNE_PLUGIN: .*/no-such.so.: cannot read the plugin" err
'

test_expect_success MODEL 'measure: a schedule that does not fit fails with the reason' '
	test_expect_code 1 protune measure blur.model other.sched \
		--cache-dir "$cache" >out 2>err &&
	test_grep "does not fit" err &&
	test_must_fail test -s out &&
	test_expect_code 1 env TMPDIR=$PWD protune measure blur.model other.sched \
		--cache-dir "$cache" --no-check >out 2>err &&
	test_grep "compiling the schedule: the generator failed" err &&
	test_grep "key" err &&
	! ls -d protune-measure-* 2>/dev/null
'

test_expect_success MODEL '--serve answers hello and model with a tuned schedule' '
	{ hello && frame model blur.model && frame applied && frame bye; } |
		PROTUNE_CACHE_DIR=$PWD/serve-cache protune-cc --serve >out 2>err &&
	test "$(frames out schedule)" = 1 &&
	payload out schedule >served &&
	test_grep "^meta tuner=protune$" served &&
	test_grep "^meta search=mcts$" served &&
	protune check blur.model served &&
	test_grep "^protune-cc: blur .*: miss (new-key), tuned: [0-9]* candidates, key $(head -c 12 key)" err
'

test_expect_success MODEL '--serve: the second time it is a hit from the cache' '
	{ hello && frame model blur.model && frame applied && frame bye; } |
		PROTUNE_CACHE_DIR=$PWD/serve-cache protune-cc --serve >out 2>err &&
	payload out schedule >served2 &&
	test_cmp served served2 &&
	test_grep "^protune-cc: blur .*: hit (cache), key $(head -c 12 key)" err
'

test_expect_success MODEL '--serve: a refused cached schedule is dropped and tuned anew' '
	printf "f0 has no dim v9" >reason &&
	{ hello && frame model blur.model && frame refused reason && sleep 1 &&
	  frame applied && frame bye; } |
		protune-cc --serve >out 2>err &&
	test_grep "hit (cache)" err &&
	test_grep "^protune-cc: the plugin refused the schedule for $(head -n 1 key): f0 has no dim v9$" err &&
	test_grep "miss (refused), tuned" err &&
	test "$(frames out schedule)" = 2
'

test_expect_success MODEL '--serve: a refusal is logged and answered with an error' '
	printf "f0 has no dim v9" >reason &&
	{ hello && frame model blur.model && frame refused reason && frame bye; } |
		test_expect_code 1 env PROTUNE_CACHE_DIR=$PWD/fresh \
		protune-cc --serve >out 2>err &&
	test_grep "^protune-cc: the plugin refused the schedule for $(head -n 1 key): f0 has no dim v9$" err &&
	test "$(frames out error)" = 1 &&
	payload out error >msg &&
	test_grep "refused a freshly tuned schedule" msg
'

test_expect_success MODEL '--serve: garbage after the model fails' '
	{ hello && frame model blur.model && printf "applied\n"; } |
		test_expect_code 1 protune-cc --serve >out 2>err &&
	test_grep "malformed message header" err
'

test_expect_success MODEL 'a generator with the plugin and no channel gets its schedule from protune-cc --serve' '
	mkdir direct &&
	"$gen" -g blur -o direct -e static_library,h,registration -n blur \
		-p "$plugin" -s ProTune auto_schedule=true target=host \
		size=test 2>err &&
	test -s direct/blur.a
'

test_done
