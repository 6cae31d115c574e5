#!/bin/sh
# stencil-manual.sh MODEL: print stencil_chain's manual schedule
# (examples/stencil_chain/) in protune's format for the model MODEL (a
# `PROTUNE_DUMP_MODEL` of the generator): every chain stage but the last at
# root, in strips of 32 rows over the cores, vectorized along x by the
# native width (Halide's default tail for a pure stage, ShiftInwards); the
# last stage inlined into the output, which is split and vectorized the
# same way with GuardWithIf. Used by adapter.sh and cache.sh.
set -u
model=$1
key=$(protune key "$model" | head -n1) || exit 1
if grep -q '^target ".*avx512' "$model"; then vec=32
elif grep -q '^target ".*avx' "$model"; then vec=16
else vec=8; fi
printf 'protune-schedule 1\nkey %s\n' "$key"
awk -v vec="$vec" 'BEGIN { n = 0 }
	/^func / { f[n] = $2; l[n] = $NF; gsub(/"/, "", l[n]); o[n] = / output /; n++ }
	END {
		for (i = 0; i < n; i++) if (l[i] ~ /^stage_/) last = l[i]
		for (i = 0; i < n; i++) {
			if (o[i] || (l[i] ~ /^stage_/ && l[i] != last)) {
				t = o[i] ? "guard" : "shift"
				printf "func %s root\n  stage 0\n", f[i]
				printf "    split v1 yo yi 32 guard\n"
				printf "    split v0 xo xi %d %s\n", vec, t
				printf "    vectorize xi\n    parallel yo\n"
			} else
				printf "func %s inline\n", f[i]
		}
	}' "$model"
