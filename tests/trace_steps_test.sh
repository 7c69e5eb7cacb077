#!/bin/bash
# --trace-steps LIST writes exactly the lines of the whole trace whose
# "step" is in LIST, in step order, and nothing else: on one head, on
# grouped heads over layers, and on a model scene that generates (the
# "model" object of each step), with --policies too. LIST mixes steps and
# ranges, out of order and overlapping; the steps written are checked
# against the list worked by hand, then each line byte for byte against
# the whole trace.
#
#   trace_steps_test.sh BIN
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# check WANT LIST ARGS...: the steps of `BIN --trace --trace-steps LIST
# ARGS...` are WANT (space-separated), each line the whole trace's.
check() {
	local want=$1 list=$2
	shift 2
	"$bin" --quiet --trace "$@" >"$tmp/all" || {
		fail "--trace $*: exit $?"
		return
	}
	"$bin" --quiet --trace --trace-steps "$list" "$@" >"$tmp/some" || {
		fail "--trace --trace-steps $list $*: exit $?"
		return
	}
	local got
	got=$(sed -n 's/^{"step": \([0-9]*\),.*/\1/p' "$tmp/some" | tr '\n' ' ')
	[ "$got" = "$want " ] || fail "$list $*: steps '$got', expected '$want '"
	[ "$(wc -l <"$tmp/some")" = "$(echo "$want" | wc -w)" ] ||
		fail "$list $*: $(wc -l <"$tmp/some") lines for $(echo "$want" | wc -w) steps"
	# The whole trace's lines of those steps, in its order.
	local pattern steps
	read -ra steps <<<"$want"
	pattern=$(printf '^{"step": %s,|' "${steps[@]}")
	grep -E "${pattern%|}" "$tmp/all" >"$tmp/expected"
	cmp -s "$tmp/expected" "$tmp/some" || fail "$list $*: lines differ from the whole trace's"
	echo "ok: --trace-steps $list $*: steps $want"
}

# cat_sat: 7 steps, one head; its last step alone, and every step.
check "7" 7 scenes/cat_sat.json
check "1 2 3 4 5 6 7" 1-7 scenes/cat_sat.json
check "2 3 5 6" 5-6,2-3,3 scenes/cat_sat.json
# Two heads, and a generated scene of layers and grouped heads.
check "1 4" 4,1 tests/scenes/two_heads.json
check "3 10 11 12 24" 24,10-12,3,11 tests/scenes/generated_small.json
check "9 10 20" 9-10,20 --policies window,snapkv tests/scenes/generated_small.json
# A model scene that generates: the "model" object of each step too.
model=(--model models/stories260K/stories260K.bin --tokenizer models/stories260K/tok512.bin
	--text-string "Once upon a time there was a cat" --generate 12 --prompt 6)
check "6 7 8 22" 22,6-8 "${model[@]}"
check "1 15" 1,15 --policies snapkv,expected "${model[@]}"
exit "$failed"
