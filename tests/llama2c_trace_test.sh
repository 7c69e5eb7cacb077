#!/bin/sh
# tools/llama2c.py trace on the shipped model: the whole-model scene it
# writes is scenes/story.json and its files byte for byte; the q and k it
# stores reproduce the model's own attention probabilities (the tool checks
# the files read back, and fails past 1e-4 in float32); the scene reads as
# 5 layers x 8 heads over 4 kv heads; and the model predicts the next token
# of a text (teacher-forced) far above chance (1/512). Skips (77) without a
# python3 that has NumPy (Debian: python3-numpy).
# Usage: llama2c_trace_test.sh SOURCE_ROOT
set -eu
root=$1
. "$root/tests/numpy_python.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
model=$root/models/stories260K/stories260K.bin
tok=$root/models/stories260K/tok512.bin
tool=$root/tools/llama2c.py

# The arguments scenes/story.json was written with (scenes/README.md).
mkdir "$tmp/story"
watch=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["watch"])' "$root/scenes/story.json")
desc=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["description"])' "$root/scenes/story.json")
notes=$("$py" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["notes"], ensure_ascii=False))' "$root/scenes/story.json")
"$py" "$tool" trace "$model" "$tok" --text-file "$root/scenes/story/story.txt" \
	--out "$tmp/story/story" --json "$tmp/story.json" --prompt 64 --heavy 16 --recent 16 \
	--title "A story through every head of a real model" --description "$desc" --watch "$watch" \
	--lesson --notes "$notes" \
	2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
cat "$tmp/err"
for f in story.json story/story_q.npy story/story_k.npy story/story_v.npy; do
	cmp "$tmp/$f" "$root/scenes/$f" || { echo "scenes/$f is not what tools/llama2c.py trace writes"; exit 1; }
done
echo "ok: scenes/story.json and its .npy files are what the tool writes"

"$py" - "$root" "$tmp/story.json" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tools")
import ref_policies
s = ref_policies.load_scene(sys.argv[2])
shape = (s.layers, s.heads, s.kv_heads, s.n, s.dim, s.prompt)
assert shape[:3] == (5, 8, 4) and s.dim == 8 and s.prompt == 64, shape
print(f"ok: the scene reads as {s.layers} layers x {s.heads} heads over {s.kv_heads} kv heads, "
      f"{s.n} tokens of dim {s.dim}, prompt {s.prompt}")
PY

# Float16 too, at its own tolerance (the tool fails past 5e-2).
"$py" "$tool" trace "$model" "$tok" --text "Once upon a time, there was a cat." \
	--out "$tmp/half" --dtype float16 2>&1

# Teacher-forced next-token accuracy, at least 30% (chance: 0.2%).
"$py" "$tool" accuracy "$model" "$tok" --text-file "$root/scenes/story/story.txt" --min 0.3
