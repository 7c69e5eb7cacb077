#!/bin/sh
# Model scenes against tools/llama2c.py: the q (after RoPE), k (after RoPE)
# and v that a model scene holds, computed by the C forward pass when the
# scene loads, equal the NumPy reference's float32 trace of the same text
# to float32 rounding (4e-5 of a row's largest value), and their tokens are the reference's: for the
# teacher-forced story (models/stories260K/story_model.json) and for the
# greedy generation (generate_model.json). The command line's model scene
# gives the very trace the JSON one gives. Skips (77) without a python3
# that has NumPy (Debian: python3-numpy).
# Usage: model_scene_test.sh H2O_TUI MODEL_SCENE_DUMP SOURCE_ROOT
set -eu
bin=$1 dump=$2 root=$3
. "$root/tests/numpy_python.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
dir=$root/models/stories260K
model=$dir/stories260K.bin
tok=$dir/tok512.bin
tool=$root/tools/llama2c.py

compare() { # NAME: the scene's dump against the tool's trace
	"$py" - "$tmp/$1" "$tmp/ref_$1" <<'PY'
import json, sys
import numpy as np
ours, ref = sys.argv[1], sys.argv[2]
m = json.load(open(ours + ".json"))
r = json.load(open(ref + ".json"))
assert m["tokens"] == r["x-ids"], "the tokens differ from the tool's"
L, H, G, n, d = m["layers"], m["heads"], m["kv_heads"], m["n"], m["dim"]
assert (L, H, G, d) == (r["layers"], r["heads"], r["kv_heads"], r["dim"]), "layout"
assert m["prompt"] == r["prompt"], (m["prompt"], r["prompt"])
assert abs(m["scale"] - 1 / np.sqrt(d)) < 1e-15
texts = [bytes(ord(c) for c in t).decode("utf-8", "replace") for t in m["text"]]
assert texts == r["text"], "the token texts differ from the tool's"
worst = 0.0
for part, heads in (("q", H), ("k", G), ("v", G)):
    a = np.fromfile(f"{ours}_{part}.f64", dtype=np.float64).reshape(L, heads, n, d)
    b = np.load(f"{ref}_{part}.npy").astype(np.float64)
    assert a.shape == b.shape, (part, a.shape, b.shape)
    # The C pass rounds every operation to float32 through five layers
    # (the story's rows differ by up to 1.2e-5 of their largest value), the
    # tool's float64 result is rounded once.
    scale = np.maximum(np.abs(b).max(axis=-1, keepdims=True), 1.0)
    err = float((np.abs(a - b) / scale).max())
    worst = max(worst, err)
    if not err <= 4e-5:
        sys.exit(f"{part}: differs from tools/llama2c.py trace by {err:.2e} of a row's largest value")
print(f"ok: {n} tokens, q, k, v within {worst:.1e} of a row's largest value from tools/llama2c.py trace")
PY
}

# The story, teacher-forced.
"$dump" "$dir/story_model.json" "$tmp/story"
"$py" "$tool" trace "$model" "$tok" --text-file "$root/scenes/story/story.txt" --prompt 64 \
	--out "$tmp/ref_story" 2>/dev/null
compare story

# The generation, greedy: the same 100 tokens, and the same rows.
prompt=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["prompt_text"])' \
	"$dir/generate_model.json")
"$dump" "$dir/generate_model.json" "$tmp/gen"
"$py" "$tool" trace "$model" "$tok" --text "$prompt" --generate 100 --out "$tmp/ref_gen" 2>/dev/null
compare gen

# The command line builds the same scene: the same trace, byte for byte.
# H2O's and the full cache's (--policies) hold every q, k and v through
# their weights, scores and outputs, and the model's own run: the other
# policies would only make each trace 400 MB rather than a fraction.
"$bin" --trace --quiet --policies h2o,full "$dir/story_model.json" >"$tmp/json.jsonl"
"$bin" --trace --quiet --policies h2o,full --model "$model" --tokenizer "$tok" --text "$root/scenes/story/story.txt" \
	--prompt 64 >"$tmp/cli.jsonl"
cmp "$tmp/json.jsonl" "$tmp/cli.jsonl" || { echo "--model's trace differs from the JSON scene's"; exit 1; }
"$bin" --trace --quiet --policies h2o,full "$dir/generate_model.json" >"$tmp/json.jsonl"
"$bin" --trace --quiet --policies h2o,full --model "$model" --tokenizer "$tok" --text-string "$prompt" \
	--generate 100 >"$tmp/cli.jsonl"
cmp "$tmp/json.jsonl" "$tmp/cli.jsonl" || { echo "--model --generate's trace differs from the JSON scene's"; exit 1; }
echo "ok: h2o-tui --model gives the JSON scenes' traces"
