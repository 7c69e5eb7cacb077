#!/bin/sh
# The engine against tools/ref_policies.py, a plain NumPy implementation of
# the policies on scenes with layers, grouped kv heads and a prompt: random
# scenes of several shapes and budgets (a prompt longer than the budget,
# shorter, the whole scene, none; heavy 0; recent 0; a budget of 1; q and k
# rounded to small integers so that scores and weights tie), each run with
# h2o-tui --trace, every kept set of every step, layer, kv head and policy
# compared. (With q and k integers and a scale of 1000 every weight is
# exactly 0 or 1/m, so H2O's scores and TOVA's weights tie exactly, not
# within rounding, and the lower position must stay.) Prints the steps and sets compared and the mismatches; fails on
# any. Skips (77) without a python3 that has NumPy (Debian: python3-numpy).
# Usage: policy_reference_test.sh H2O_TUI SOURCE_ROOT
set -u
tui=$1
root=$2
ref=$root/tools/ref_policies.py

. "$root/tests/numpy_python.sh"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

steps=0 sets=0 bad=0 failed=0 cases=0 interval=1 popts= ada_layers=0 ada_uneven=0 ada_above=0
# check NAME SINKS MAKE-SCENE-OPTIONS...: SINKS is "-" for the default;
# both run with --interval $interval when it is not 1 (check_every).
check() {
	name=$1 sinks=$2
	shift 2
	cases=$((cases + 1))
	dir=$tmp/$name
	"$py" "$ref" make-scene "$dir" "$@" >/dev/null || { echo "$name: make-scene failed"; failed=$((failed + 1)); return; }
	if [ "$sinks" = - ]; then set --; else set -- --sinks "$sinks"; fi
	if [ "$interval" != 1 ]; then set -- "$@" --interval "$interval"; fi
	for o in $popts; do set -- "$@" --policy-opt "$o"; done
	if ! "$tui" --trace --quiet "$@" "$dir/scene.json" >"$dir/trace.jsonl" 2>"$dir/err"; then
		echo "$name: h2o-tui --trace failed: $(head -n 1 "$dir/err")"
		failed=$((failed + 1))
		return
	fi
	"$py" "$ref" compare --show 5 "$@" "$dir/scene.json" "$dir/trace.jsonl" >"$dir/out"
	status=$?
	grep -v '^adakv budgets:' "$dir/out" | sed "s|^$dir/scene.json|$name|"
	# How AdaKV shared the layers' budgets (the reference's count).
	ada=$(sed -n 's/^adakv budgets: \([0-9]*\) layer decisions, \([0-9]*\) with .*, \([0-9]*\) kv heads above.*/\1 \2 \3/p' "$dir/out")
	if [ -n "$ada" ]; then
		set -- $ada
		ada_layers=$((ada_layers + $1)) ada_uneven=$((ada_uneven + $2)) ada_above=$((ada_above + $3))
		[ "$2" -eq 0 ] || grep '^adakv budgets:' "$dir/out" | sed 's/^/  /'
	fi
	last=$(tail -n 1 "$dir/out")
	s=$(echo "$last" | sed -n 's/.*: \([0-9]*\) steps, \([0-9]*\) kept sets.*, \([0-9]*\) mismatches.*/\1 \2 \3/p')
	if [ -z "$s" ]; then
		echo "$name: compare gave no summary"
		failed=$((failed + 1))
		return
	fi
	set -- $s
	steps=$((steps + $1)) sets=$((sets + $2)) bad=$((bad + $3))
	[ "$status" -eq 0 ] || [ "$3" -gt 0 ] || failed=$((failed + 1))
}

#     name               sinks  L           H          G             n      d        P           heavy      recent     seed
check prompt_over_budget -  --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 8 --prompt 12 --heavy 3 --recent 3 --seed 1
check no_prompt          -  --layers 1 --heads 1 --kv-heads 1 --n 30 --dim 4 --prompt 0  --heavy 2 --recent 2 --seed 2
check prompt_under       -  --layers 3 --heads 6 --kv-heads 3 --n 36 --dim 8 --prompt 4  --heavy 4 --recent 4 --seed 3
check prompt_all         -  --layers 2 --heads 4 --kv-heads 1 --n 20 --dim 8 --prompt 20 --heavy 3 --recent 2 --seed 4
check heavy_zero         -  --layers 2 --heads 2 --kv-heads 2 --n 30 --dim 6 --prompt 8  --heavy 0 --recent 5 --seed 5
check recent_zero        -  --layers 2 --heads 4 --kv-heads 4 --n 30 --dim 6 --prompt 6  --heavy 5 --recent 0 --seed 6
check budget_one         -  --layers 1 --heads 2 --kv-heads 2 --n 16 --dim 4 --prompt 3  --heavy 1 --recent 0 --seed 7
check mqa_sinks_1        1  --layers 2 --heads 8 --kv-heads 1 --n 40 --dim 8 --prompt 10 --heavy 4 --recent 4 --seed 8 --spread 2
check ties_gqa           -  --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 4 --prompt 10 --heavy 3 --recent 3 --seed 9 --quantise 2 --scale 8
check ties_zero_weights  -  --layers 1 --heads 2 --kv-heads 2 --n 50 --dim 2 --prompt 0  --heavy 4 --recent 2 --seed 12 --quantise 1 --scale 1000
check ties_prompt        -  --layers 2 --heads 2 --kv-heads 2 --n 24 --dim 2 --prompt 16 --heavy 2 --recent 2 --seed 11 --quantise 1 --scale 2
# SnapKV scores only with a prompt longer than its window (64) and B above it.
check snap_gqa           -  --layers 2 --heads 4 --kv-heads 2 --n 110 --dim 8 --prompt 90 --heavy 40 --recent 30 --seed 13
check snap_mqa_ties      -  --layers 1 --heads 4 --kv-heads 1 --n 100 --dim 4 --prompt 85 --heavy 36 --recent 34 --seed 14 --quantise 2 --scale 8
check pyramid_3_layers   -  --layers 3 --heads 2 --kv-heads 1 --n 110 --dim 3 --prompt 90 --heavy 40 --recent 40 --seed 15
# AdaKV shares a layer's budget among its kv heads: G > 1 with prompts
# longer than the window, so that the heads keep different numbers.
check ada_gqa_4          -  --layers 2 --heads 4 --kv-heads 4 --n 100 --dim 6 --prompt 90 --heavy 35 --recent 35 --seed 16
check ada_gqa_ties       -  --layers 1 --heads 4 --kv-heads 2 --n 96 --dim 4 --prompt 88 --heavy 36 --recent 34 --seed 17 --quantise 2 --scale 8
check ada_sharp          -  --layers 2 --heads 2 --kv-heads 2 --n 100 --dim 4 --prompt 92 --heavy 40 --recent 30 --seed 18 --spread 2

# check_every N NAME SINKS MAKE-SCENE-OPTIONS...: check, compressing every
# N steps (kvpress' DecodingPress): every policy that evicts during
# decoding, against budgets below, at and above N, with and without a
# prompt, ties, SnapKV's window and PyramidKV's layers.
check_every() {
	interval=$1
	shift
	check "$@"
	interval=1
}
#           N  name                sinks  L           H          G             n      d        P           heavy      recent     seed
check_every 3  every3_prompt       -  --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 8 --prompt 12 --heavy 3 --recent 3 --seed 21
check_every 4  every4_no_prompt    -  --layers 1 --heads 1 --kv-heads 1 --n 30 --dim 4 --prompt 0  --heavy 2 --recent 2 --seed 22
check_every 2  every2_prompt_under -  --layers 3 --heads 6 --kv-heads 3 --n 36 --dim 8 --prompt 4  --heavy 4 --recent 4 --seed 23
check_every 7  every7_heavy_zero   -  --layers 2 --heads 2 --kv-heads 2 --n 30 --dim 6 --prompt 8  --heavy 0 --recent 5 --seed 24
check_every 5  every5_recent_zero  -  --layers 2 --heads 4 --kv-heads 4 --n 30 --dim 6 --prompt 6  --heavy 5 --recent 0 --seed 25
check_every 3  every3_budget_one   -  --layers 1 --heads 2 --kv-heads 2 --n 16 --dim 4 --prompt 3  --heavy 1 --recent 0 --seed 26
check_every 6  every6_mqa_sinks_1  1  --layers 2 --heads 8 --kv-heads 1 --n 40 --dim 8 --prompt 10 --heavy 4 --recent 4 --seed 27 --spread 2
check_every 4  every4_ties_gqa     -  --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 4 --prompt 10 --heavy 3 --recent 3 --seed 28 --quantise 2 --scale 8
check_every 3  every3_ties_zero    -  --layers 1 --heads 2 --kv-heads 2 --n 50 --dim 2 --prompt 0  --heavy 4 --recent 2 --seed 29 --quantise 1 --scale 1000
check_every 16 every16_snap_gqa    -  --layers 2 --heads 4 --kv-heads 2 --n 110 --dim 8 --prompt 90 --heavy 40 --recent 30 --seed 30
check_every 9  every9_pyramid      -  --layers 3 --heads 2 --kv-heads 1 --n 110 --dim 3 --prompt 90 --heavy 40 --recent 40 --seed 31
# adakv-win: each kv head holds its own share of the layer's after the
# prompt's end, compressing every 5 steps.
check_every 5  every5_ada_gqa_4    -  --layers 2 --heads 4 --kv-heads 4 --n 110 --dim 6 --prompt 90 --heavy 35 --recent 35 --seed 33
# check_with "OPTS" NAME SINKS MAKE-SCENE-OPTIONS...: check, both run with
# --policy-opt for each of OPTS (the settings researchers vary: SnapKV's
# window, kernel and pooling, AdaKV's split).
# The settings must change some kept set: the reference with them differs
# from h2o-tui's trace without them.
check_with() {
	popts=$1
	shift
	check "$@"
	set -- "$tmp/$1/scene.json"
	"$tui" --trace --quiet "$1" >"$tmp/plain.jsonl" || failed=$((failed + 1))
	for o in $popts; do set -- "$@" --policy-opt "$o"; done
	if "$py" "$ref" compare --show 0 "$@" "$tmp/plain.jsonl" >/dev/null; then
		echo "$name: $popts changes no kept set"
		failed=$((failed + 1))
	fi
	popts=
}
all4() { for p in snapkv snapkv-win pyramidkv pyramidkv-win adakv adakv-win; do printf '%s.%s ' "$p" "$1"; done; }
#          OPTS                 name          sinks  L           H          G             n      d        P           heavy      recent     seed
check_with "$(all4 window=8)"   set_window_8  -  --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 8 --prompt 24 --heavy 8 --recent 6 --seed 41
check_with "$(all4 kernel=1)"   set_kernel_1  -  --layers 2 --heads 4 --kv-heads 2 --n 110 --dim 8 --prompt 90 --heavy 40 --recent 30 --seed 42
check_with "$(all4 kernel=7) $(all4 pool=max)" set_max_7 - --layers 2 --heads 4 --kv-heads 4 --n 100 --dim 6 --prompt 90 --heavy 35 --recent 35 --seed 43
check_with "$(all4 window=4) $(all4 pool=max)" set_max_ties - --layers 1 --heads 4 --kv-heads 2 --n 40 --dim 4 --prompt 30 --heavy 6 --recent 6 --seed 44 --quantise 2 --scale 8
check_with "adakv.alloc=authors" ada_authors_4 - --layers 2 --heads 4 --kv-heads 4 --n 100 --dim 6 --prompt 90 --heavy 35 --recent 35 --seed 45
check_with "adakv.alloc=authors adakv.window=6 adakv.kernel=3 adakv.pool=max" ada_authors_w6 - --layers 2 --heads 8 --kv-heads 4 --n 50 --dim 4 --prompt 40 --heavy 8 --recent 8 --seed 46
check_with "adakv.alloc=authors" ada_authors_ties - --layers 1 --heads 4 --kv-heads 2 --n 96 --dim 4 --prompt 88 --heavy 36 --recent 34 --seed 47 --quantise 2 --scale 8
# A prompt of exactly B: 13 before a window of 8, of which the authors
# keep round(0.8 x 13 + 2) = 12 in every head; kvpress' split keeps all.
check_with "adakv.alloc=authors adakv.window=8" ada_authors_b_is_p - --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 4 --prompt 21 --heavy 11 --recent 10 --seed 48
# pyramidkv-win on five layers with a window of 8: the schedule's 165
# positions trimmed to 5 x 32, one a layer, then held while decoding.
check_with "pyramidkv.window=8 pyramidkv-win.window=8" pyramid_win_trim - --layers 5 --heads 2 --kv-heads 1 --n 90 --dim 4 --prompt 64 --heavy 16 --recent 16 --seed 49
# pyramidkv with a cache per query head (KVCache-Factory's default
# query_head): each query head's own selection, listed per query head in
# the trace; on three layers (the schedule), MQA with a small window and
# max pooling, and with ties.
check_with "pyramidkv.granularity=query_head" pyr_query_head - --layers 3 --heads 4 --kv-heads 2 --n 110 --dim 4 --prompt 90 --heavy 40 --recent 40 --seed 50
check_with "pyramidkv.granularity=query_head pyramidkv.window=4 pyramidkv.kernel=3 pyramidkv.pool=max" pyr_query_head_mqa - --layers 2 --heads 4 --kv-heads 1 --n 40 --dim 4 --prompt 30 --heavy 6 --recent 6 --seed 51
check_with "pyramidkv.granularity=query_head pyramidkv.window=4" pyr_query_head_ties - --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 4 --prompt 30 --heavy 6 --recent 6 --seed 52 --quantise 2 --scale 8
# One query head per kv head: the two forms are one, so the trace without
# the setting matches the reference with it, every number but the
# settings' own key the same.
popts="pyramidkv.granularity=query_head"
check pyr_query_head_mha - --layers 2 --heads 2 --kv-heads 2 --n 40 --dim 4 --prompt 30 --heavy 6 --recent 6 --seed 53
popts=
"$tui" --trace --quiet "$tmp/pyr_query_head_mha/scene.json" >"$tmp/plain.jsonl" || failed=$((failed + 1))
"$py" "$ref" compare --show 3 --policy-opt pyramidkv.granularity=query_head \
	"$tmp/pyr_query_head_mha/scene.json" "$tmp/plain.jsonl" >/dev/null || {
	echo "pyr_query_head_mha: kv_head's trace differs from query_head's reference"
	failed=$((failed + 1))
}
sed 's/, "settings": {"pyramidkv.granularity": "query_head"}//' \
	"$tmp/pyr_query_head_mha/trace.jsonl" | cmp -s - "$tmp/plain.jsonl" || {
	echo "pyr_query_head_mha: the traces of kv_head and query_head differ"
	failed=$((failed + 1))
}
# The scene's own "interval" field, read by both without --interval.
check scene_interval_5 - --layers 2 --heads 4 --kv-heads 2 --n 40 --dim 8 --prompt 7 --heavy 2 --recent 3 --seed 32 --interval 5

echo "adakv: $ada_uneven of $ada_layers layer decisions gave the kv heads unequal budgets, $ada_above kv heads kept more than B"
[ "$ada_uneven" -gt 0 ] || { echo "adakv: no scene shares a budget unequally"; failed=$((failed + 1)); }
echo "policy reference: $cases scenes, $steps steps, $sets kept sets compared, $bad mismatches, $failed runs failed"
[ "$bad" -eq 0 ] && [ "$failed" -eq 0 ]
