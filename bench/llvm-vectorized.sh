#!/bin/sh
# bench/llvm-vectorized.sh DATA EXAMPLE SEED...
#
# Which Funcs LLVM's loop vectorizer turned into vector code in the space
# schedules of EXAMPLE drawn with the given seeds (`protune space MODEL
# --seed SEED`, as the training samples are): each schedule is compiled by
# the example's generator to LLVM IR after LLVM's passes (-e llvm_assembly),
# and the Funcs whose values are stored in a `vector.body` block (the
# loops LLVM's vectorizer writes) of the pipeline's own functions are
# printed, one line a seed: EXAMPLE SEED FUNC,FUNC,... (nothing after the
# seed when there is none). Stages the schedule vectorizes itself are
# in Halide's own vector code, outside such blocks; a Func listed there
# may still have had only the scalar tail of a guarded split vectorized.
# doc/cost-model.md ("LLVM's loop vectorizer") says what it found.
#
# Needs the examples' generators and the plugin (make). DATA is a
# training data directory (tuner/train-spr); the model's target is used,
# so run it on the machine the data was measured on.
set -eu
: "${PT_BUILD_DIR:?}"
[ $# -ge 3 ] || { echo "usage: $0 DATA EXAMPLE SEED..." >&2; exit 2; }
data=$1 ex=$2
shift 2
model=$data/models/$ex.model
gen=$PT_BUILD_DIR/ex/bin/$ex.generator
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so
[ -r "$model" ] || { echo "$0: no model $model" >&2; exit 1; }
[ -x "$gen" ] || { echo "$0: no generator $gen (make)" >&2; exit 1; }
target=$(sed -n 's/^target "\(.*\)"$/\1/p' "$model")
mp=$(sed -n 's/^machine-params "\(.*\)"$/\1/p' "$model")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for seed in "$@"; do
	"$PT_BUILD_DIR/bin/protune" space "$model" --seed "$seed" >"$tmp/s.sched"
	if ! PROTUNE_SCHEDULE_FILE=$tmp/s.sched "$gen" -g "$ex" -o "$tmp" \
		-e llvm_assembly -n p target="$target" size=bench \
		machine_params="$mp" -p "$plugin" -s ProTune \
		auto_schedule=true >"$tmp/log" 2>&1; then
		echo "$0: $ex seed $seed does not compile:" >&2
		cat "$tmp/log" >&2
		exit 1
	fi
	# TBAA: a store's tag names an access node whose base type names
	# the buffer ("chroma.2": value 2 of the Tuple chroma).
	awk -v ex="$ex" -v seed="$seed" '
	/^![0-9]+ = !\{!"/ {
		n = $0; sub(/^[^"]*"/, "", n); sub(/".*/, "", n)
		name[$1] = n; next
	}
	/^![0-9]+ = !\{![0-9]+, ![0-9]+, i64/ {
		t = $0; sub(/^[^{]*\{/, "", t); sub(/,.*/, "", t)
		base[$1] = t; next
	}
	/^define / { rt = $0 ~ /@(halide_|_ZN6Halide)/ }
	/^[-a-zA-Z_.0-9$]+:/ { blk = $1 }
	!rt && blk ~ /^vector\.body/ && /store .*!tbaa / {
		t = $0; sub(/.*!tbaa /, "", t); sub(/[ ,].*/, "", t)
		used[t] = 1
	}
	END {
		k = 0
		for (t in used) {
			n = name[base[t]]; sub(/\.[0-9]+$/, "", n)
			if (!(n in seen)) { seen[n] = 1; v[++k] = n }
		}
		for (i = 2; i <= k; i++)	# sorted, for a stable output
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
				x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
			}
		s = ""
		for (i = 1; i <= k; i++)
			s = s (i > 1 ? "," : "") v[i]
		print ex, seed, s
	}' "$tmp/p.ll"
done
