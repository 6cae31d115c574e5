#!/bin/sh
# throughput.sh: the searches' throughput (issue 7), part of `make bench`.
#
# For the stencil chain and the local Laplacian (their models at benchmark
# size in tuner/train/models), `protune tune MODEL --threads 1 --budget B`
# with each search: MCTS as shipped (15 standard trees and 1 greedy tree),
# MCTS with 16 standard trees (--greedy-trees 0) and random search, cost
# only. Each prints on its statistics line the complete schedules it
# priced: for MCTS, one per simulation (a random or greedy rollout, or a
# terminal node priced once), for random search one per sample. (Beam
# search prices partial states, a few complete ones: not comparable.)
# The runs alternate (search after search, THROUGHPUT_RUNS rounds)
# so that a busy spell of this shared machine falls on all of them, and
# the median of each goes to bench/out/tuner-throughput.tsv:
#
#   example search threads budget_s runs simulations_per_s min max
#
# one row per example and search, and to stdout.
#
#   THROUGHPUT_BUDGET   seconds per run (default 10)
#   THROUGHPUT_RUNS     rounds (default 3)
#   THROUGHPUT_OUT      output file (default bench/out/tuner-throughput.tsv)
set -eu
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
PATH=$PT_BUILD_DIR/bin:$PATH
budget=${THROUGHPUT_BUDGET:-10}
runs=${THROUGHPUT_RUNS:-3}
out=${THROUGHPUT_OUT:-$PT_SRCDIR/bench/out/tuner-throughput.tsv}
models=$PT_SRCDIR/tuner/train/models
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# search label, then protune tune's options for it
searches='mcts:--search mcts
mcts-standard:--search mcts --greedy-trees 0
random:--search random'

echo "protune search throughput: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), 1 thread, ${budget} s a run, $runs rounds"
: >"$tmp/all"
r=1
while [ "$r" -le "$runs" ]; do
	for ex in stencil_chain local_laplacian; do
		echo "$searches" | while IFS=: read -r label opts; do
			# shellcheck disable=SC2086 # opts is a word list
			protune tune "$models/$ex.model" $opts --threads 1 \
				--budget "$budget" --seed "$r" \
				>/dev/null 2>"$tmp/err" || {
				echo "$0: protune tune $ex $opts failed:" >&2
				cat "$tmp/err" >&2
				exit 1
			}
			rate=$(sed -n 's/.* complete schedules priced (\([0-9.]*\)\/s).*/\1/p' \
				"$tmp/err" | tail -n 1)
			[ -n "$rate" ] || {
				echo "$0: no statistics line from protune tune $ex $opts" >&2
				exit 1
			}
			printf '%s\t%s\t%s\n' "$ex" "$label" "$rate" >>"$tmp/all"
		done
	done
	r=$((r + 1))
done

printf 'example\tsearch\tthreads\tbudget_s\truns\tsimulations_per_s\tmin\tmax\n' >"$out"
for ex in stencil_chain local_laplacian; do
	echo "$searches" | while IFS=: read -r label opts; do
		awk -F'\t' -v e="$ex" -v s="$label" '$1 == e && $2 == s { print $3 }' \
			"$tmp/all" | sort -n >"$tmp/v"
		n=$(wc -l <"$tmp/v")
		med=$(awk -v n="$n" 'NR == int((n + 1) / 2) { a = $1 }
			NR == int(n / 2) + 1 { b = $1 }
			END { printf "%.0f", (a + b) / 2 }' "$tmp/v")
		printf '%s\t%s\t1\t%s\t%s\t%s\t%s\t%s\n' "$ex" "$label" "$budget" \
			"$n" "$med" "$(head -n 1 "$tmp/v")" "$(tail -n 1 "$tmp/v")"
	done
done >>"$out"
column -t -s "$(printf '\t')" "$out"
echo "wrote $out"
