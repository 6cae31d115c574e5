#!/bin/sh
# costmodel.sh: the cost model's figures (issue 4), part of `make bench`.
#
# 1. Ranking: leave-one-example-out over the committed training data
#    (tuner/train: models at benchmark size and the measured runtimes of
#    random complete schedules of the tuner's space, collected on this
#    machine by bench/samples.sh). For every example, the model is fitted
#    without it and ranks its schedules; Spearman's rank correlation with
#    the measured runtimes and the top-1 regret (measured runtime of the
#    schedule ranked best over the fastest measured) go to
#    bench/out/costmodel.tsv, one row per example. The linear layer alone,
#    as `make train` fits the shipped model (COSTMODEL_TREES=N for trees).
#    The same for the samples measured on a second machine (tuner/train-amd:
#    an AMD EPYC, Zen 5) into bench/out/costmodel-amd.tsv, a third
#    (tuner/train-spr: an Intel Xeon, Sapphire Rapids) into
#    costmodel-spr.tsv and a fourth (tuner/train-zen4: an AMD EPYC, Zen 4)
#    into costmodel-zen4.tsv, each fitted on that machine's data alone.
#    And how the shipped model's procedure (`make train`: the four
#    machines' data together) ranks on a machine it has not seen: for each
#    machine, fitted on the other three (`protune train --hold-out-data`),
#    every example also left out of all of them, into
#    costmodel-shipped.tsv (the first machine), costmodel-amd-shipped.tsv,
#    costmodel-spr-shipped.tsv and costmodel-zen4-shipped.tsv.
# 2. Speed: random complete schedules drawn from the space, turned into
#    schedules, featurized and costed, per second on one thread, for the
#    stencil chain and local Laplacian: bench/out/costmodel-speed.tsv.
#    Beside it, the figure Adams et al. 2019 give (about 9 us a schedule,
#    §6): their beam search's candidates, partial schedules each one
#    decision from its parent, generated, featurized and costed. Here the
#    same search (`protune tune --search beam`, beam 32, five passes, one
#    thread): its wall clock over the states it priced, us_beam_state.
#    And the same figure for Halide 14's Adams2019 plugin, run side by
#    side on the same machine (its beam search, beam 32, five passes, no
#    dropout, one thread; HL_NUM_THREADS=1): the example's generator at
#    the model's size, target and machine parameters, the time its
#    generate_schedule() reports (HALIDE_TOC) over the states it costed
#    ("Cost evaluated this many times"), us_adams_state; the two
#    alternated COSTMODEL_SPEED_ROUNDS times (default 3), medians, and
#    adams_over_beam, the plugin's time a state over ours. Needs
#    HALIDE_PLUGINDIR and the generators of `make examples-bench`;
#    COSTMODEL_SPEED_ROUNDS=0 skips the plugin.
#
#   costmodel.sh [DATA_DIR]    (default: $PT_SRCDIR/tuner/train; given, only
#                               its own figures and the speed)
set -eu
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
PATH=$PT_BUILD_DIR/bin:$PATH
. "$PT_SRCDIR/bench/lib.sh"
if [ $# -gt 0 ]; then
	data=$(cd "$1" && pwd) || exit 2
else
	data=tuner/train
fi
out=$(cd "$PT_SRCDIR" && pwd)/bench/out
mkdir -p "$out"
n=${COSTMODEL_BENCH_STATES:-2000}
trees=${COSTMODEL_TREES:-0}

# The data directories as `make train` fits on them (Makefile.in,
# TRAIN_DATA), relative to the source tree: the TSVs name them.
all="tuner/train tuner/train-amd tuner/train-spr tuner/train-zen4"
cd "$PT_SRCDIR"
echo "protune cost model: $(wc -l <"$data/samples.tsv") samples in $data"
protune train --data "$data" --trees "$trees" --eval "$out/costmodel.tsv"

if [ $# -eq 0 ]; then
	# The other machines' data, each held out on its own.
	for m in amd spr zen4; do
		d=tuner/train-$m
		echo "protune cost model, machine $m: $(wc -l <"$d/samples.tsv") samples in $d"
		protune train --data "$d" --trees "$trees" \
			--eval "$out/costmodel-$m.tsv"
	done
	# The shipped model's procedure on a machine left out of it.
	args=
	for d in $all; do
		args="$args --data $d"
	done
	for m in "" -amd -spr -zen4; do
		echo "protune cost model, the four machines' data without tuner/train$m"
		protune train $args --hold-out-data "tuner/train$m" \
			--trees "$trees" --eval "$out/costmodel$m-shipped.tsv"
	done
fi
data=$(cd "$data" && pwd)
cd - >/dev/null

rounds=${COSTMODEL_SPEED_ROUNDS:-3}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# model_field MODEL KEY: the quoted value of a `KEY "..."` line
model_field() {
	sed -n "s/^$2 \"\(.*\)\"\$/\1/p" "$1" | head -n 1
}

# beam_run MODEL: "STATES US" of our beam search, one thread
beam_run() {
	# "protune: tune beam: ..., 71920 states priced in all (19.6 us
	# each), ..."
	protune tune "$1" --search beam --threads 1 --budget 3600 \
		--cost-model "$PT_SRCDIR/tuner/default.cost" 2>&1 >/dev/null |
		sed -n 's/.* \([0-9]*\) states priced in all (\([0-9.]*\) us each).*/\1 \2/p'
}

# adams_run EXAMPLE MODEL: "STATES US" of the Adams2019 plugin's beam
# search on the example's generator at the model's size and target, one
# thread. HL_DEBUG_CODEGEN=1 makes Halide print the time of
# generate_schedule() (HALIDE_TIC/TOC, AutoSchedule.cpp); the printing it
# adds inside that window is a few thousand lines of the DAG's dump.
adams_run() {
	_gen=$PT_BUILD_DIR/ex/bin/$1.generator
	_size=$(sed -n 's/^argv .*"size=\([a-z]*\)".*/\1/p' "$2")
	rm -rf "$tmp/adams-out" && mkdir "$tmp/adams-out"
	env HL_NUM_THREADS=1 HL_DEBUG_AUTOSCHEDULE=1 HL_DEBUG_CODEGEN=1 \
		HL_BEAM_SIZE=32 HL_NUM_PASSES=5 HL_RANDOM_DROPOUT=100 \
		"$_gen" -g "$1" -o "$tmp/adams-out" -e schedule -n "$1" \
		target="$(model_field "$2" target)" size="${_size:-bench}" \
		auto_schedule=true \
		machine_params="$(model_field "$2" machine-params)" \
		-p "$HALIDE_PLUGINDIR/libautoschedule_adams2019.so" \
		-s Adams2019 >"$tmp/adams.log" 2>&1 || {
		echo "costmodel.sh: the Adams2019 plugin failed on $1:" >&2
		tail -n 5 "$tmp/adams.log" >&2
		return 1
	}
	awk '/AutoSchedule.cpp:[0-9]+ \.\.\. AutoSchedule.cpp:[0-9]+ : / {
		ms = $(NF - 1) }
	/^Cost evaluated this many times: / { n = $NF }
	END { if (n > 0 && ms > 0) printf "%d %.1f\n", n, ms * 1000 / n }' \
		"$tmp/adams.log"
}

if [ "$rounds" -gt 0 ]; then
	: "${HALIDE_PLUGINDIR:?costmodel.sh: HALIDE_PLUGINDIR is not set (COSTMODEL_SPEED_ROUNDS=0 skips the plugin)}"
fi

printf 'example\tstates\tus_draw\tus_draw_sched\tus_draw_sched_cost\tschedules_per_s\tbeam_states\tus_beam_state\tadams_states\tus_adams_state\tadams_over_beam\n' \
	>"$out/costmodel-speed.tsv"
for ex in stencil_chain local_laplacian; do
	model=$data/models/$ex.model
	line=$(PROTUNE_COST_MODEL=$PT_SRCDIR/tuner/default.cost \
		protune space "$model" --bench "$n")
	echo "  $ex: $line"
	: >"$tmp/beam" && : >"$tmp/adams"
	# ours and the plugin's in turn, `rounds` times (ours once for 0)
	r=0
	while [ "$r" -lt "$rounds" ] || [ "$r" -eq 0 ]; do
		beam=$(beam_run "$model")
		[ -n "$beam" ] || { echo "costmodel.sh: no beam search figure for $ex" >&2; exit 1; }
		echo "$beam" >>"$tmp/beam"
		echo "  $ex: beam search: $beam (states, us each)"
		r=$((r + 1))
		[ "$rounds" -gt 0 ] || continue
		if ! a=$(adams_run "$ex" "$model") || [ -z "$a" ]; then
			echo "costmodel.sh: no Adams2019 figure for $ex" >&2
			exit 1
		fi
		echo "$a" >>"$tmp/adams"
		echo "  $ex: Adams2019 plugin: $a (states, us each)"
	done
	bs=$(awk 'NR == 1 { print $1 }' "$tmp/beam")
	bus=$(awk '{ print $2 }' "$tmp/beam" | median)
	if [ "$rounds" -gt 0 ]; then
		as=$(awk 'NR == 1 { print $1 }' "$tmp/adams")
		aus=$(awk '{ print $2 }' "$tmp/adams" | median)
	else
		as=- aus=-
	fi
	# "... 12.3 us each; with the schedule: ... 45.6 us each; featurized
	# and costed too: ... 78.9 us each"
	echo "$line" | awk -v ex="$ex" -v n="$n" -v bs="$bs" -v bus="$bus" \
		-v as="$as" -v aus="$aus" '{
		k = 0
		for (i = 1; i <= NF; i++) if ($(i+1) == "us") us[++k] = $i
		ratio = aus == "-" ? "-" : sprintf("%.2f", aus / bus)
		printf "%s\t%d\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\n", ex, n, us[1], us[2], us[3], 1e6 / us[3], bs, bus, as, aus, ratio
	}' >>"$out/costmodel-speed.tsv"
done
echo "wrote $out/costmodel.tsv and $out/costmodel-speed.tsv"
