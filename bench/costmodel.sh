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
#    an AMD EPYC, Zen 5) into bench/out/costmodel-amd.tsv, and how the
#    shipped model, fitted on the first machine's, ranks them
#    (costmodel-amd-shipped.tsv, `protune train --score`); and for a
#    third (tuner/train-spr: an Intel Xeon, Sapphire Rapids) into
#    costmodel-spr.tsv and costmodel-spr-shipped.tsv.
# 2. Speed: random complete schedules drawn from the space, turned into
#    schedules, featurized and costed, per second on one thread, for the
#    stencil chain and local Laplacian: bench/out/costmodel-speed.tsv.
#    Beside it, the figure Adams et al. 2019 give (about 9 us a schedule,
#    §6): their beam search's candidates, partial schedules each one
#    decision from its parent, generated, featurized and costed. Here the
#    same search (`protune tune --search beam`, beam 32, five passes, one
#    thread): its wall clock over the states it priced, us_beam_state.
#
#   costmodel.sh [DATA_DIR]    (default: $PT_SRCDIR/tuner/train)
set -eu
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
PATH=$PT_BUILD_DIR/bin:$PATH
data=${1:-$PT_SRCDIR/tuner/train}
out=$PT_SRCDIR/bench/out
mkdir -p "$out"
n=${COSTMODEL_BENCH_STATES:-2000}

echo "protune cost model: $(wc -l <"$data/samples.tsv") samples in $data"
protune train --data "$data" --trees "${COSTMODEL_TREES:-0}" \
	--eval "$out/costmodel.tsv"

# The other machines' data: held out, and ranked by the shipped model.
for m in amd spr; do
	d=$PT_SRCDIR/tuner/train-$m
	[ -z "${1:-}" ] && [ -s "$d/samples.tsv" ] || continue
	echo "protune cost model, machine $m: $(wc -l <"$d/samples.tsv") samples in $d"
	protune train --data "$d" --trees "${COSTMODEL_TREES:-0}" \
		--eval "$out/costmodel-$m.tsv"
	protune train --data "$d" --score "$PT_SRCDIR/tuner/default.cost" \
		--eval "$out/costmodel-$m-shipped.tsv"
done

printf 'example\tstates\tus_draw\tus_draw_sched\tus_draw_sched_cost\tschedules_per_s\tbeam_states\tus_beam_state\n' \
	>"$out/costmodel-speed.tsv"
for ex in stencil_chain local_laplacian; do
	line=$(PROTUNE_COST_MODEL=$PT_SRCDIR/tuner/default.cost \
		protune space "$data/models/$ex.model" --bench "$n")
	echo "  $ex: $line"
	# "protune: tune beam: ..., 71920 states priced in all (19.6 us
	# each), ..."
	beam=$(protune tune "$data/models/$ex.model" --search beam \
		--threads 1 --budget 3600 \
		--cost-model "$PT_SRCDIR/tuner/default.cost" 2>&1 >/dev/null |
		sed -n 's/.* \([0-9]*\) states priced in all (\([0-9.]*\) us each).*/\1 \2/p')
	[ -n "$beam" ] || { echo "costmodel.sh: no beam search figure for $ex" >&2; exit 1; }
	echo "  $ex: beam search: $beam (states, us each)"
	# "... 12.3 us each; with the schedule: ... 45.6 us each; featurized
	# and costed too: ... 78.9 us each"
	echo "$line" | awk -v ex="$ex" -v n="$n" -v beam="$beam" '{
		k = 0
		for (i = 1; i <= NF; i++) if ($(i+1) == "us") us[++k] = $i
		split(beam, b, " ")
		printf "%s\t%d\t%s\t%s\t%s\t%.0f\t%s\t%s\n", ex, n, us[1], us[2], us[3], 1e6 / us[3], b[1], b[2]
	}' >>"$out/costmodel-speed.tsv"
done
echo "wrote $out/costmodel.tsv and $out/costmodel-speed.tsv"
