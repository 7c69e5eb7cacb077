#!/bin/sh
# Every F32 GGUF file of tests/model/gguf/ against tools/gguf_ref.py, a
# NumPy forward pass written from the architectures' definitions: first
# llama.cpp's recorded logits (expected/NAME.logits) against it, which
# holds the reference to llama.cpp where llama.cpp has a record; then
# h2o-tui's logits (gguf_logits) against it, for every file, qwen3_f32
# (which llama.cpp's recorded snapshot cannot run) included. The figure is
# per position max |logit - reference| over the largest |reference logit|
# (1 when smaller), the worst position; the tolerance, 1e-5, is float32
# summation order only (tests/model/gguf/README.md). Skips (77) without a
# python3 that has NumPy (Debian: python3-numpy).
# Usage: gguf_ref_test.sh GGUF_LOGITS SOURCE_ROOT
set -eu
dump=$1 root=$2
. "$root/tests/numpy_python.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
dir=$root/tests/model/gguf
tol=1e-5
status=0
for name in stories260K llama_f32 llama_rope qwen2_f32 qwen3_f32; do
	model=$dir/$name.gguf
	"$dump" "$model" "$dir/tokens.txt" >"$tmp/$name.logits"
	set -- "h2o-tui=$tmp/$name.logits"
	if [ -f "$dir/expected/$name.logits" ]; then
		set -- "llama.cpp=$dir/expected/$name.logits" "$@"
	fi
	"$py" "$root/tools/gguf_ref.py" check "$model" "$dir/tokens.txt" --tol "$tol" "$@" ||
		status=1
done
# The reference reads F32 tensors only: a file of another type is refused
# with one line, never run on misread weights.
if "$py" "$root/tools/gguf_ref.py" logits "$dir/llama_f16.gguf" "$dir/tokens.txt" \
	>/dev/null 2>"$tmp/err"; then
	echo "gguf_ref.py ran an F16 file" >&2
	status=1
fi
grep -q 'type 1 is not supported (F32 only)' "$tmp/err" || {
	echo "gguf_ref.py: unexpected refusal: $(cat "$tmp/err")" >&2
	status=1
}
exit $status
