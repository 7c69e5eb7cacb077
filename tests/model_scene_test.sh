#!/bin/sh
# Model scenes against tools/llama2c.py: the q (after RoPE), k (after RoPE)
# and v that a model scene holds, computed by the C forward pass when the
# scene loads, equal the NumPy reference's float32 trace of the same text
# to float32 rounding (4e-5 of a row's largest value), and their tokens are the reference's: for the
# teacher-forced story (models/stories260K/story_model.json) and for the
# greedy generation (generate_model.json); so do the queries before RoPE
# that a scene keeps for Expected Attention. The command line's model
# scene gives the very trace the JSON one gives. And Expected Attention on
# the story, in NumPy as kvpress' ExpectedAttentionPress computes it (the
# queries before RoPE put in Hugging Face's order, rows 2i to i and 2i + 1
# to i + d/2, the mean and covariance turned by kvpress' R = mean of
# cos I + sin P over the next 512 positions, float32 angles as the
# rotary embedding computes them), keeps the sets h2o-tui --trace says at
# each of the steps from the prompt's end on, in every cache. Skips (77) without a python3
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
parts = [("q", H), ("k", G), ("v", G)]
import os
if os.path.exists(f"{ref}_qpre.npy"):
    parts.append(("qpre", H))
for part, heads in parts:
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
print(f"ok: {n} tokens, {', '.join(p for p, _ in parts)} within {worst:.1e} of a row's largest value from tools/llama2c.py trace")
PY
}

# The story, teacher-forced.
"$dump" "$dir/story_model.json" "$tmp/story"
"$py" "$tool" trace "$model" "$tok" --text-file "$root/scenes/story/story.txt" --prompt 64 \
	--prerope --out "$tmp/ref_story" 2>/dev/null
compare story

# Expected Attention on the story's numbers (the scene's own, so that only
# the rule is compared) against the trace's kept sets, steps 64 to 104.
"$bin" --trace --quiet --policies expected,full "$dir/story_model.json" | sed -n '64,104p' \
	>"$tmp/expected.jsonl"
"$py" - "$tmp/story" "$tmp/expected.jsonl" 16 16 <<'PY'
import json, sys
import numpy as np
ours, trace, heavy, recent = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
m = json.load(open(ours + ".json"))
L, H, G, n, d, P = m["layers"], m["heads"], m["kv_heads"], m["n"], m["dim"], m["prompt"]
B, group, half = heavy + recent, H // G, d // 2
load = lambda part, heads: np.fromfile(f"{ours}_{part}.f64").reshape(L, heads, n, d)
qpre, k, v = load("qpre", H), load("k", G), load("v", G)
# Hugging Face's order of a head's rows: llama2.c's pair (2i, 2i + 1) is
# its (i, i + d/2).
hf = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
# kvpress' apply_avg_rope: LlamaRotaryEmbedding's cos and sin (float32
# inv_freq times float32 positions), R = cos I + sin P averaged.
inv = (np.float32(1.0) / np.float32(10000.0) ** (np.arange(0, d, 2, dtype=np.float32) /
                                                  np.float32(d))).astype(np.float32)
Pm = np.zeros((d, d))
Pm[half:, :half], Pm[:half, half:] = np.eye(half), -np.eye(half)
def avg_rope(q_len):
    pos = np.arange(q_len, q_len + 512, dtype=np.float32)
    f = (pos[:, None] * inv[None, :]).astype(np.float32)
    emb = np.concatenate([f, f], axis=-1)
    cos, sin = np.cos(emb).astype(np.float64), np.sin(emb).astype(np.float64)
    return (cos[:, None, :] * np.eye(d) + sin[:, None, :] * Pm).mean(axis=0)
def evict(l, g, held, seen):
    R = avg_rope(seen)
    keys = k[l, g, held[4:]][:, hf]
    scores = np.zeros(len(held) - 4)
    for h in range(g * group, (g + 1) * group):
        q = qpre[l, h, max(4, seen - 64):seen][:, hf]
        mu = q.mean(axis=0)
        c = q - mu
        cov = c.T @ c / len(q)
        mu, cov = mu @ R.T, R @ cov @ R.T
        z = keys @ mu / np.sqrt(d) + np.einsum("ni,ij,nj->n", keys, cov, keys) / d / 2
        e = np.exp(z - z.max())
        scores += e / e.sum()
    scores = scores / group * np.linalg.norm(v[l, g, held[4:]], axis=-1)
    full = np.concatenate([np.full(4, scores.max() + 1), scores])
    order = sorted(range(len(held)), key=lambda j: (-full[j], held[j]))
    return sorted(held[j] for j in order[:B])
held = [[list(range(P)) for g in range(G)] for l in range(L)]
checked = near = 0
for line in open(trace):
    t = json.loads(line)
    s = t["step"]
    for l in range(L):
        for g in range(G):
            if s > P:
                held[l][g] = held[l][g] + [s - 1]
            if len(held[l][g]) > B:
                held[l][g] = evict(l, g, held[l][g], s)
            got = sorted(t["expected"][l][g]["kept"])
            if got != held[l][g]:
                sys.exit(f"step {s}, layer {l}, kv head {g}: h2o-tui keeps {got}, "
                         f"kvpress' rule {held[l][g]}")
            checked += 1
print(f"ok: expected's kept sets equal kvpress' ExpectedAttentionPress (its average RoPE) in "
      f"{checked} caches, steps {P} to {s}")
PY

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
