#!/bin/sh
# cache.sh: the schedule cache's costs, part of `make bench`.
#
# 1. Hit overhead: protune-cc serving stencil_chain's manual schedule from
#    the cache (a hit) versus the plain generator with the same schedule
#    written in C++ (schedule=manual auto_schedule=false), run alternately,
#    CACHE_ROUNDS times each, at test size (small) and bench size (large):
#    medians, their ratio and the added milliseconds.
# 2. LMDB look-ups with 100 000 synthetic entries (cache-bench).
# 3. Store look-ups with 1 000 schedule files in a git repository
#    (store-bench).
#   cache.sh   (needs PT_BUILD_DIR and PT_SRCDIR)
set -u
: "${PT_BUILD_DIR:?}" "${PT_SRCDIR:?}"
PATH=$PT_BUILD_DIR/bin:$PT_BUILD_DIR/tests:$PATH
# Halide 14 misdetects some AMD processors for target=host (protune-cc(1),
# TARGET HOST): the generator runs here pass what protune-cc would.
host_target=$(protune host-target) || exit 2
rounds=${CACHE_ROUNDS:-9}
plugin=$PT_BUILD_DIR/lib/libprotune_halide.so
gen=$PT_BUILD_DIR/ex/bin/stencil_chain.generator
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export PROTUNE_CACHE_DIR=$tmp/cache PROTUNE_STORE_DIR=off PROTUNE_PLUGIN=$plugin
unset PROTUNE_MODE PROTUNE_CONFIG PROTUNE_LOG

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

printf 'protune-schedule 1\nkey 00000000000000000000000000000000\nfunc f0 root\n' >"$tmp/nofit.sched"

echo "protune cache bench: $(protune-cc --version); median of $rounds runs; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "hit overhead: stencil_chain, its manual schedule in C++ vs served by protune-cc from the cache (ms)"
printf '%-6s %10s %14s %8s %10s\n' size "C++" "protune-cc hit" ratio "added"

# hit_overhead SIZE
hit_overhead() {
	_size=$1
	rm -rf "$tmp/imp" && mkdir -p "$tmp/imp/stencil_chain" "$tmp/o" &&
	PROTUNE_DUMP_MODEL=$tmp/m.model PROTUNE_SCHEDULE_FILE=$tmp/nofit.sched \
		"$gen" -g stencil_chain -o "$tmp/o" -e static_library -n m \
		-p "$plugin" -s ProTune auto_schedule=true target="$host_target" \
		size="$_size" 2>/dev/null
	test -s "$tmp/m.model" || { echo "cache.sh: no model" >&2; return 1; }
	_key=$(protune key "$tmp/m.model" | head -n1) &&
	"$PT_SRCDIR/bench/stencil-manual.sh" "$tmp/m.model" \
		>"$tmp/imp/stencil_chain/$_key.schedule" &&
	cp "$tmp/m.model" "$tmp/imp/stencil_chain/$_key.model" &&
	protune import "$tmp/imp" >/dev/null || return 1
	: >"$tmp/cpp"; : >"$tmp/hit"
	_i=0
	while [ $_i -lt "$rounds" ]; do
		_t0=$(now_ms)
		"$gen" -g stencil_chain -o "$tmp/o" -e static_library,h -n c \
			target="$host_target" size="$_size" schedule=manual || return 1
		_t1=$(now_ms)
		protune-cc "$gen" -g stencil_chain -o "$tmp/o" -e static_library,h \
			-n p target="$host_target" size="$_size" 2>"$tmp/err" || return 1
		_t2=$(now_ms)
		grep -q "hit (cache)" "$tmp/err" || {
			echo "cache.sh: not a hit:" >&2; cat "$tmp/err" >&2; return 1; }
		echo $((_t1 - _t0)) >>"$tmp/cpp"
		echo $((_t2 - _t1)) >>"$tmp/hit"
		_i=$((_i + 1))
	done
	_c=$(median <"$tmp/cpp") _h=$(median <"$tmp/hit")
	printf '%-6s %10s %14s %8s %10s\n' "$_size" "$_c" "$_h" \
		"$(echo "$_h $_c" | awk '{ printf "%.3f", $1 / $2 }')" \
		"$(echo "$_h $_c" | awk '{ printf "%+d", $1 - $2 }')"
}
hit_overhead test || exit 1
hit_overhead bench || exit 1

echo
echo "LMDB look-ups, 100000 synthetic entries"
"$PT_BUILD_DIR/bench/cache-bench" "$tmp/lmdb" 100000 || exit 1
rm -rf "$tmp/lmdb"
echo
echo "store look-ups, 1000 schedule files"
"$PT_BUILD_DIR/bench/store-bench" "$tmp/store" 1000 || exit 1
