#!/bin/bash
# memory_test.sh: a model's run is told against --max-memory before it runs.
#
# For each way a model comes (a llama2.c checkpoint named by a model scene,
# a GGUF file by --model with its weights packed compact, unpacked to
# float32 and read from the file's mapping), the run is first refused under
# a limit far too small: exit 4 at once (within seconds, nothing on stdout),
# one line naming the figure it needs. The limit is then raised to 6% above
# each figure named (the model's, then the whole run's) until the run is
# allowed: it must then run (exit 0), and 6% below the last figure it must
# still be refused. A run whose caches alone are past the 2 GiB a model
# scene allows is refused before it runs, and a generated scene past the
# limit before it is generated.
#
# Usage: tests/memory_test.sh H2O_TUI   (from the source root, as Meson runs it)
. "$(dirname "$0")/lib.sh"

# run LIMIT ARGS...: the exit status of ARGS under --max-memory LIMIT, its
# stdout in $tmp/out and stderr in $tmp/err.
run() {
	local m=$1
	shift
	timeout 120 "$bin" --max-memory "$m" "$@" >"$tmp/out" 2>"$tmp/err"
}

# fits NAME ARGS...: refused under 1M; allowed 6% above the last figure
# named; refused 6% below it. The figures are rounded to two or three
# digits ("13 MB" is 12.5 to 13.5 MB): 6% is past the rounding.
fits() {
	local name=$1 m=1M figure='' status start tries
	shift
	for tries in 1 2 3 4; do
		start=$(date +%s)
		run "$m" "$@"
		status=$?
		[ "$status" = 0 ] && break
		[ "$status" = 4 ] || { fail "$name under $m: exit $status ($(head -c 300 "$tmp/err"))"; return; }
		[ ! -s "$tmp/out" ] || { fail "$name under $m: stdout is not empty"; return; }
		[ "$(wc -l <"$tmp/err")" = 1 ] || { fail "$name under $m: not one line: $(cat "$tmp/err")"; return; }
		grep -Eq "^h2o-tui: .*: needs about [0-9.]+ [kMG]B of memory \(.*\), more than --max-memory .* allows$" "$tmp/err" ||
			{ fail "$name under $m: $(cat "$tmp/err")"; return; }
		[ $(($(date +%s) - start)) -le 5 ] || fail "$name under $m: refused after $(($(date +%s) - start)) s"
		figure=$(sed -E 's/.*needs about ([0-9.]+ [kMG])B.*/\1/' "$tmp/err")
		m=$(awk -v f="${figure% *}" -v u="${figure#* }" 'BEGIN { printf "%.3f%s", f * 1.06, u }')
	done
	[ "$status" = 0 ] || { fail "$name: still refused under $m"; return; }
	[ -s "$tmp/out" ] || fail "$name under $m: nothing on stdout"
	[ -n "$figure" ] || { fail "$name: not refused under 1M"; return; }
	local below
	below=$(awk -v f="${figure% *}" -v u="${figure#* }" 'BEGIN { printf "%.3f%s", f * 0.94, u }')
	run "$below" "$@"
	status=$?
	[ "$status" = 4 ] || fail "$name under $below (6% below $figure): exit $status"
	echo "ok: $name needs about ${figure}B: refused under 1M and $below, runs under $m"
}

text='Once upon a time, a boat.'
fits "story_model.json --report" --report models/stories260K/story_model.json
fits "story_model.json --headless" --headless models/stories260K/story_model.json
for form in compact unpacked mapped; do
	H2O_WEIGHTS=$form fits "llama_q8_0.gguf ($form) --report" --report \
		--model tests/model/gguf/llama_q8_0.gguf --text-string "$text"
done
H2O_WEIGHTS=mapped fits "llama_f16.gguf (mapped) --report" --report \
	--model tests/model/gguf/llama_f16.gguf --text-string "$text"

# A run past the 2 GiB a model scene allows (256 layers of 6 key/value
# heads over 50,002 positions; the checkpoint all zeros, 1.2 MB) is refused
# from its shape, before the model runs, whatever --max-memory says.
i32() { printf "\\$(printf '%03o' $(($1 % 256)))\\$(printf '%03o' $(($1 / 256 % 256)))\\$(printf '%03o' $(($1 / 65536 % 256)))\\000"; }
{
	for v in 12 1 256 6 6 512 65536; do i32 "$v"; done
	head -c $((4 * (512 * 12 + 256 * (12 + 2 * 144 + 2 * 144 + 12 + 3 * 12) + 12 + 65536 * 2))) /dev/zero
} >"$tmp/wide.bin"
start=$(date +%s)
run 100G --report --model "$tmp/wide.bin" --tokenizer models/stories260K/tok512.bin \
	--text-string a --generate 50000
status=$?
[ "$status" = 3 ] || fail "a run past 2 GiB: exit $status ($(head -c 300 "$tmp/err"))"
grep -q "a run of wide.bin over the text takes 2345 MiB (256 layers x 6 key/value heads of 50002 slots), more than the 2048 MiB a model scene allows" "$tmp/err" ||
	fail "a run past 2 GiB: $(cat "$tmp/err")"
[ $(($(date +%s) - start)) -le 5 ] || fail "a run past 2 GiB: refused after $(($(date +%s) - start)) s"

# A generated scene is told from its size before a number of it is made:
# a million tokens of dim 64 (1.5 GB of doubles) under 100M, at once.
printf '{"title": "big", "heavy": 4, "recent": 4, "dim": 64, "generate": {"count": 1000000, "seed": 1}}\n' \
	>"$tmp/big.json"
start=$(date +%s)
run 100M --report "$tmp/big.json"
status=$?
[ "$status" = 4 ] || fail "a million generated tokens: exit $status ($(head -c 300 "$tmp/err"))"
[ ! -s "$tmp/out" ] || fail "a million generated tokens: stdout is not empty"
grep -q '^h2o-tui: .*big.json: needs about 1.5 GB of memory ("generate": 1000000 tokens x dim 64: 192.0 million numbers in q, k and v, as doubles), more than --max-memory 100 MB allows$' "$tmp/err" ||
	fail "a million generated tokens: $(cat "$tmp/err")"
[ $(($(date +%s) - start)) -le 5 ] || fail "a million generated tokens: refused after $(($(date +%s) - start)) s"

[ "$failed" = 0 ] && echo "memory is told before a model runs"
[ "$failed" = 0 ]
