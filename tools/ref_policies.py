#!/usr/bin/env python3
"""The eviction policies of h2o-tui, written plainly, to check the engine.

A reference implementation in float64 NumPy of the five caches h2o-tui
runs (full, h2o, window, streaming, tova, knorm, snapkv, snapkv-win,
pyramidkv, pyramidkv-win, adakv, adakv-win, observed, observed-win, random,
keydiff, expected) on scenes with layers, query
heads sharing key/value heads (grouped-query attention) and a prompt. It
is written from the rules below, not from the engine's code, so that the
two can be compared step by step:

    tools/ref_policies.py run SCENE.json            kept positions per step
    tools/ref_policies.py compare SCENE.json TRACE  h2o-tui --trace against it
    tools/ref_policies.py make-scene OUTDIR ...     a random test scene

The rules (B = heavy + recent; query head h of a layer with H query heads
and G key/value heads reads kv head h // (H // G)):

- Every layer and kv head has its own cache per policy. Step t (1..n)
  appends position t - 1; each query head attends with softmax(scale *
  q . k) over the positions its kv head's cache holds (an attention scene
  gives the rows, restricted to those positions and renormalised).
- No cache evicts during the prompt (steps 1..P). At the end of step P
  each applies its rule once to all it holds; from step P + 1 on (from
  step 1 without a prompt) whenever it holds more than B after appending.
  With an interval N (--interval, kvpress' DecodingPress) the rule runs
  only at the steps t >= P with (t - P) % N == 0 (without a prompt, every
  N-th step), back to B at once; the caches grow by one between.
- full keeps everything. window keeps the B newest. streaming keeps the
  first S positions (the sinks, S = min(4, B - 1) unless given) and the
  B - S newest.
- h2o: a position's score accumulates, every step, the mean over the kv
  head's query heads of their weights. The rule keeps the `recent` newest
  and, among the others, the `heavy` highest scores.
- tova: the layer's weights of this step averaged over all H query heads;
  keep the B highest, the same positions for every kv head of the layer.
- knorm: the L2 norm of each held position's key row in the kv head
  (squares summed in index order, then the square root); keep the B
  smallest norms (kvpress' score is minus the norm). An attention scene has
  no keys: it keeps the B newest, as window does.
- snapkv, at the prompt's end only (P > B): W = min(64, P); each query
  head's softmax rows of the last W prompt queries (over the positions up
  to each), averaged over those queries; for the positions before the
  window, a 1-D average pool of kernel 5 (zero padding, divided by 5),
  then the mean over the kv head's query heads; the window stays with the
  B - W best scored before it (B <= W: the B newest). After the prompt it
  keeps every token. snapkv-win makes the same choice, then keeps the
  selected (positions before P - min(W, B)) and the newest of the rest, B
  in all.
- pyramidkv: snapkv's scores, and layer l keeps pyramid_budget(l) at the
  prompt's end (KVCache-Factory's PyramidKVCluster schedule, beta 20);
  after the prompt it keeps every token. pyramidkv-win (with its own
  settings) takes each layer's schedule, then the positions by which the
  layers add up to more than L x B back one at a time from layer 0, round
  and round; it makes snapkv's choice down to that at the prompt's end and
  then holds it as snapkv-win does (before P - min(W, its budget)).
  With pyramidkv.granularity=query_head (KVCache-Factory's default,
  pyramidkv/pyramidkv_utils.py at c97f9d7: repeat_kv, then update_kv per
  head) pyramidkv runs on the scene with the keys and values repeated to
  every query head (query_head_scene): a cache per query head, each
  scored by its own query head alone; the trace then lists one per query
  head.
- adakv (kvpress' AdaKVPress over SnapKVPress), at the prompt's end only
  (P > B): each kv head's snapkv scores (G x (P - W)), the window padded
  with the layer's max + 1; in each kv head the int(0.2 B) highest
  (alpha_safeguard) raised to the largest float; then the G (P - B) lowest
  of all the layer's scores, flattened head by head, are pruned (a tie
  prunes the later head, then the later position). B <= W: each kv head
  keeps its B newest. After the prompt it keeps every token. adakv-win
  (with its own settings, kvpress' split only) makes the same choice;
  each kv head then holds what it kept there (B when the prompt's end cut
  nothing) as snapkv-win holds B: the selected (before P - min(W, B))
  stay, of the rest the newest, at every step that compresses.
- observed, at the prompt's end only: each position's accumulated score
  (the column sum of the prompt's group-mean attention) divided by the
  number of prompt queries that saw it, P - j; keep the B highest, no
  recent window. After the prompt it keeps every token. observed-win
  applies the same at the prompt's end and at every step after it that
  compresses, over the t - j queries that saw position j by step t.

- random (kvpress' RandomPress, seeded): position j of layer l and kv
  head g draws splitmix64 seeded with 42 XOR (l << 48 | g << 32 | j), the
  top 53 bits of its first output over 2^53; keep the B highest draws,
  applied as knorm is (at the prompt's end and every step after).
- keydiff (kvpress' KeyDiffPress): the anchor is the mean of the held keys
  each divided by its L2 norm; keep the B keys of lowest cosine similarity
  to it (kvpress' score is minus the cosine), applied as knorm is. An
  attention scene has no keys: it keeps the B newest.
- expected (kvpress' ExpectedAttentionPress, n_sink 4, use_covariance,
  use_vnorm, epsilon 0; RoPE's average over the future positions is the
  identity, a scene's positions carrying no rotation): the first 4 held
  positions are sinks. For each query head of the kv head's group, its
  queries of positions max(4, t - 64) .. t - 1 at step t (m of them),
  their mean mu and covariance S (divided by m); each other held position
  j scores z = scale (mu . k_j) + scale^2 (k_j' S k_j) / 2, computed as
  the mean and the variance (divided by m) of the projections q . k_j,
  which are those two numbers; softmaxed over them; the heads' mean times the L2 norm of v_j; the sinks score
  one more than the best. Keep the B highest, applied as knorm is. Every
  sum runs in order from 0.0 (positions, then indices), as plain loops,
  so that ties between equal scores stay exact. A cache of at most 4
  (all sinks) keeps its B oldest; an attention scene the B newest.

A tie in a score, a weight or a norm keeps the lower position.

Python 3 and NumPy only.
"""
import argparse
import copy
import json
import math
import os
import sys

import numpy as np

POLICIES = ("h2o", "full", "window", "streaming", "tova", "knorm", "snapkv",
            "snapkv-win", "pyramidkv", "pyramidkv-win", "adakv", "adakv-win",
            "observed", "observed-win", "random", "keydiff", "expected")
SNAP_WINDOW = 64  # SnapKV's observation window (kvpress' window_size)
SNAP_KERNEL = 5  # its pooling kernel (kvpress' kernel_size)
# h2o-tui's --policy-opt POLICY.KEY=VALUE: {policy: {key: value}}; window,
# kernel and pool ("mean", "max": max_pool1d, the padding never wins) for
# snapkv, snapkv-win, pyramidkv, pyramidkv-win, adakv and adakv-win, alloc
# ("kvpress", "authors") for adakv, granularity ("kv_head", "query_head") for
# pyramidkv.
SETTINGS = {}


def setting(policy, key):
    """POLICY's KEY: --policy-opt's, else kvpress' default."""
    default = {"window": SNAP_WINDOW, "kernel": SNAP_KERNEL, "pool": "mean",
               "alloc": "kvpress", "granularity": "kv_head"}[key]
    return SETTINGS.get(policy, {}).get(key, default)


def snap_window(policy, P):
    """POLICY's observation window, capped by the prompt P."""
    return min(setting(policy, "window"), P)


class SceneError(Exception):
    """A scene this tool cannot read, with the reason."""


class Scene:
    """What the policies need of a scene, in one layout.

    q is (L, H, n, d) and k, v are (L, G, n, d) for a vector scene; attn is
    (L, H, n, n), row i holding token i's weights over positions 0..i, for
    an attention scene. prompt is P, sinks None unless the scene gives it.
    """

    def __init__(self):
        self.title = ""
        self.n = self.dim = 0
        self.layers = self.heads = self.kv_heads = 1
        self.prompt = 0
        self.interval = 1
        self.heavy = self.recent = 0
        self.sinks = None
        self.scale = None
        self.mode = "vector"
        self.q = self.k = self.v = self.attn = None
        self.text = []

    @property
    def budget(self):
        """B = heavy + recent."""
        return self.heavy + self.recent

    def group(self, h):
        """The kv head query head H reads."""
        return h // (self.heads // self.kv_heads)


def _int_field(obj, name, default, low=0):
    """An integer root field (2, 2.0 or 2e0, not 2.5 or "2")."""
    if name not in obj:
        return default
    x = obj[name]
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != int(x) or x < low:
        raise SceneError(f"{name}: expected an integer >= {low}, got {x!r}")
    return int(x)


def _load_npy(folder, name, field):
    """A .npy file named in the scene, as float64."""
    if not isinstance(name, str):
        raise SceneError(f"{field}: expected a file name")
    path = os.path.join(folder, name)
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise SceneError(f"{field}: {name}: {e}") from None
    if a.dtype not in (np.float16, np.float32, np.float64):
        raise SceneError(f"{field}: {name}: dtype {a.dtype}, expected a float array")
    if not np.all(np.isfinite(a)):
        raise SceneError(f"{field}: {name}: not every number is finite")
    return a.astype(np.float64)


def _as4(a, field):
    """(n, d), (X, n, d) or (L, X, n, d) as (L, X, n, d)."""
    if a.ndim == 2:
        return a[None, None]
    if a.ndim == 3:
        return a[None]
    if a.ndim == 4:
        return a
    raise SceneError(f"{field}: shape {a.shape}, expected (n, d), (heads, n, d) "
                     "or (layers, heads, n, d)")


def _read_text(folder, text, n):
    """Token texts: an array, a file of one per line, or t0, t1, ..."""
    if text is None:
        return [f"t{i}" for i in range(n)]
    if isinstance(text, list):
        return [str(t) for t in text]
    with open(os.path.join(folder, text), "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [ln.rstrip(b"\r").decode("utf-8", "replace") for ln in lines]


def load_scene(path):
    """Read an h2o-tui scene (docs/scene-format.md) into a Scene.

    Handles inline tokens (vector or attention, one or more heads) and
    .npy scenes with layers, query heads and kv heads; the root fields
    "layers", "heads", "kv_heads", "prompt" and "sinks" are read when
    present and checked against the arrays. Generated scenes are not
    handled: the generator lives in the C loader.
    """
    with open(path, encoding="utf-8-sig") as f:
        obj = json.load(f)
    if not isinstance(obj, dict):
        raise SceneError("$: expected a JSON object")
    folder = os.path.dirname(os.path.abspath(path))
    s = Scene()
    s.title = obj.get("title", os.path.basename(path))
    s.heavy = _int_field(obj, "heavy", None)
    s.recent = _int_field(obj, "recent", None)
    s.dim = _int_field(obj, "dim", None, 1)
    if s.heavy is None or s.recent is None or s.dim is None:
        raise SceneError("$: heavy, recent and dim are required")
    if s.budget < 1:
        raise SceneError("recent: heavy + recent must be at least 1")
    if "generate" in obj:
        raise SceneError("generate: generated scenes are built by the C loader only")
    if "sinks" in obj:
        s.sinks = _int_field(obj, "sinks", None)
    if "scale" in obj:
        s.scale = float(obj["scale"])
        if not s.scale > 0:
            raise SceneError("scale: expected a number > 0")

    if "q" in obj:
        q = _as4(_load_npy(folder, obj["q"], "q"), "q")
        k = _as4(_load_npy(folder, obj["k"], "k"), "k")
        v = _as4(_load_npy(folder, obj["v"], "v"), "v")
        L, H, n, d = q.shape
        G = k.shape[1]
        if k.shape != (L, G, n, d) or v.shape != k.shape:
            raise SceneError(f"k, v: shapes {k.shape}, {v.shape} do not fit q's {q.shape}")
        s.q, s.k, s.v = q, k, v
        s.text = _read_text(folder, obj.get("text"), n)
    elif "tokens" in obj:
        L, H, n, d, G = _load_tokens(s, obj["tokens"], _int_field(obj, "heads", 1, 1))
    else:
        raise SceneError("$: no tokens: expected \"tokens\" or .npy files in q, k, v")

    for name, have in (("layers", L), ("heads", H), ("kv_heads", G)):
        want = _int_field(obj, name, have, 1)
        if want != have:
            raise SceneError(f"{name}: the scene says {want}, its arrays hold {have}")
    if d != s.dim:
        raise SceneError(f"dim: the scene says {s.dim}, its vectors have {d} numbers")
    if H % G:
        raise SceneError(f"kv_heads: {H} query heads do not divide into {G} groups")
    if len(s.text) != n:
        raise SceneError(f"text: {len(s.text)} texts for {n} tokens")
    s.layers, s.heads, s.kv_heads, s.n = L, H, G, n
    s.prompt = _int_field(obj, "prompt", 0)
    if s.prompt > n:
        raise SceneError(f"prompt: {s.prompt} tokens, the scene has {n}")
    s.interval = _int_field(obj, "interval", 1, 1)
    if s.scale is None:
        s.scale = 1.0 / math.sqrt(s.dim)
    return s


def _load_tokens(s, tokens, heads):
    """Inline tokens: one layer, every head its own key (G = H)."""
    if not isinstance(tokens, list) or not tokens:
        raise SceneError("tokens: expected at least 1 token")
    n = len(tokens)
    s.text = [t.get("text", f"t{i}") for i, t in enumerate(tokens)]

    def per_head(x):
        return x if heads > 1 else [x]

    if "attn" in tokens[0]:
        s.mode = "attention"
        attn = np.zeros((1, heads, n, n))
        for i, t in enumerate(tokens):
            for h, row in enumerate(per_head(t["attn"])):
                if len(row) != i + 1:
                    raise SceneError(f"tokens[{i}].attn: expected {i + 1} weights")
                attn[0, h, i, : i + 1] = row
        s.attn = attn
        return 1, heads, n, s.dim, heads
    q = np.array([per_head(t["q"]) for t in tokens], dtype=np.float64)  # (n, H, d)
    k = np.array([per_head(t["k"]) for t in tokens], dtype=np.float64)
    v = np.array([per_head(t["v"]) for t in tokens], dtype=np.float64)
    s.q, s.k, s.v = (x.transpose(1, 0, 2)[None] for x in (q, k, v))
    return 1, heads, n, q.shape[2], heads


def head_weights(scene, layer, head, pos, held):
    """Weights of query head HEAD at position POS over the positions HELD."""
    idx = np.asarray(held, dtype=np.intp)
    if scene.mode == "attention":
        w = scene.attn[layer, head, pos, idx]
        return w / w.sum()
    g = scene.group(head)
    logits = scene.scale * (scene.k[layer, g, idx] @ scene.q[layer, head, pos])
    e = np.exp(logits - logits.max())
    return e / e.sum()


def mean_rows(rows):
    """The mean of equal-length rows, summed in order, then divided once."""
    total = np.zeros_like(rows[0])
    for r in rows:
        total = total + r
    return total / len(rows)


def keep_top(cands, value, count):
    """The COUNT candidates of largest VALUE (a tie keeps the lower
    position), and the margin: the weakest kept value less the strongest
    dropped one (None when nothing is dropped or nothing is kept)."""
    order = sorted(cands, key=lambda p: (-value[p], p))
    kept, dropped = order[:count], order[count:]
    margin = None
    if kept and dropped:
        margin = value[kept[-1]] - value[dropped[0]]
    return kept, margin


def streaming_sinks(scene, sinks=None):
    """S: the given count (the scene's or the command line's) or 4, below B."""
    s = sinks if sinks is not None else scene.sinks if scene.sinks is not None else 4
    return max(0, min(s, scene.budget - 1))


class Cache:
    """One policy's cache of one layer and kv head: positions and scores."""

    def __init__(self):
        self.pos = []      # held positions, ascending
        self.score = {}    # position -> accumulated group-mean weight


def query_head_scene(scene):
    """SCENE as pyramidkv.granularity=query_head sees it: the keys and
    values repeated to every query head (KVCache-Factory's repeat_kv, query
    head h reading kv head h // (H / G)), so that each query head has a
    cache of its own; None when that changes nothing (H = G) or is not
    asked for. LISTED_KV keeps the kv heads a trace lists without it."""
    if setting("pyramidkv", "granularity") != "query_head" or scene.heads == scene.kv_heads:
        return None
    rep = scene.heads // scene.kv_heads
    q = copy.copy(scene)
    if scene.k is not None:
        q.k = np.repeat(scene.k, rep, axis=1)
    if scene.v is not None:
        q.v = np.repeat(scene.v, rep, axis=1)
    q.kv_heads = scene.heads
    q.listed_kv = scene.kv_heads
    return q


def run(scene, sinks=None, interval=None, only=POLICIES):
    """Yield, for each step, {policy: [layer][kv head] -> record}, for the
    policies ONLY.

    INTERVAL (--interval) overrides the scene's "interval" (default 1).

    A record holds "attended" (the positions held after appending),
    "attn" (the group's mean weights over them), "scores" (H2O's
    accumulated scores over them), "kept", "evicted" and "margin" (the
    rule's closest call, see keep_top).
    """
    L, H, G, B = scene.layers, scene.heads, scene.kv_heads, scene.budget
    S = streaming_sinks(scene, sinks)
    interval = interval or scene.interval
    rep = H // G
    caches = {p: [[Cache() for _ in range(G)] for _ in range(L)] for p in POLICIES}
    share = {}  # adakv-win: (layer, kv head) -> what it kept at the prompt's end
    for t in range(1, scene.n + 1):
        pos = t - 1
        # The prompt's end, and every INTERVAL-th step after it.
        may_evict = t >= scene.prompt and (t - scene.prompt) % interval == 0
        step = {}
        for p in only:
            layers = []
            for l in range(L):
                cs = caches[p][l]
                for c in cs:
                    c.pos.append(pos)
                    c.score[pos] = 0.0
                rows = [head_weights(scene, l, h, pos, cs[h // rep].pos) for h in range(H)]
                recs = []
                for g, c in enumerate(cs):
                    attn = mean_rows(rows[g * rep:(g + 1) * rep])
                    for j, w in zip(c.pos, attn):
                        c.score[j] += w
                    recs.append({"attended": list(c.pos), "attn": attn,
                                 "scores": [c.score[j] for j in c.pos]})
                if p == "pyramidkv":
                    keep = pyramid_budget(scene, l)
                    if t == scene.prompt and len(cs[0].pos) > keep:
                        plans = [snap_select(scene, l, g, c, keep, p) for g, c in enumerate(cs)]
                    else:
                        plans = [(list(c.pos), None) for c in cs]
                elif p == "pyramidkv-win":
                    keep = pyramid_held(scene, l)
                    if t == scene.prompt and len(cs[0].pos) > keep:
                        plans = [snap_select(scene, l, g, c, keep, p) for g, c in enumerate(cs)]
                    elif may_evict and len(cs[0].pos) > keep:
                        before = scene.prompt - min(snap_window(p, scene.prompt), keep)
                        plans = [hold(c, keep, before) for c in cs]
                    else:
                        plans = [(list(c.pos), None) for c in cs]
                elif p == "observed-win":
                    if may_evict and len(cs[0].pos) > B:
                        plans = [keep_top(c.pos, {j: c.score[j] / (t - j) for j in c.pos}, B)
                                 for c in cs]
                    else:
                        plans = [(list(c.pos), None) for c in cs]
                elif p == "adakv":
                    # The authors' split compresses a prompt of exactly B
                    # too (it rounds each head's share down with its floor).
                    authors = setting("adakv", "alloc") == "authors"
                    if t == scene.prompt and (len(cs[0].pos) > B or
                                              (authors and len(cs[0].pos) == B)):
                        plans = ada_select(scene, l, cs)
                    else:
                        plans = [(list(c.pos), None) for c in cs]
                elif p == "adakv-win":
                    if t == scene.prompt and len(cs[0].pos) > B:
                        plans = ada_select(scene, l, cs, p)
                        for g, (kept, _) in enumerate(plans):
                            share[(l, g)] = len(kept)
                    elif may_evict and t != scene.prompt:
                        before = scene.prompt - min(snap_window(p, scene.prompt), B)
                        plans = [hold(c, share.get((l, g), B), before)
                                 if len(c.pos) > share.get((l, g), B) else (list(c.pos), None)
                                 for g, c in enumerate(cs)]
                    else:
                        plans = [(list(c.pos), None) for c in cs]
                elif p == "observed":
                    if t == scene.prompt and len(cs[0].pos) > B:
                        plans = [keep_top(c.pos, {j: c.score[j] / (scene.prompt - j)
                                                  for j in c.pos}, B) for c in cs]
                    else:
                        plans = [(list(c.pos), None) for c in cs]
                elif p == "snapkv" and t != scene.prompt:
                    plans = [(list(c.pos), None) for c in cs]  # keeps every token
                elif may_evict and len(cs[0].pos) > B and p != "full":
                    plans = _rule(p, scene, cs, rows, S, l, t)
                else:
                    plans = [(list(c.pos), None) for c in cs]
                for c, rec, (kept, margin) in zip(cs, recs, plans):
                    kept = sorted(kept)
                    gone = set(c.pos) - set(kept)
                    for j in gone:
                        del c.score[j]
                    c.pos = kept
                    rec.update(kept=list(kept), evicted=sorted(gone), margin=margin)
                layers.append(recs)
            step[p] = layers
        yield t, step


def _rule(policy, scene, caches, rows, S, layer=0, t=0):
    """The kept positions and margin of each kv head's cache of a layer."""
    B = scene.budget
    if policy == "window":
        return [(c.pos[-B:], None) for c in caches]
    if policy == "streaming":
        return [([j for j in c.pos if j < S] + c.pos[len(c.pos) - (B - S):], None)
                for c in caches]
    if policy == "h2o":
        plans = []
        for c in caches:
            cut = len(c.pos) - scene.recent
            heavy, margin = keep_top(c.pos[:cut], c.score, scene.heavy)
            plans.append((heavy + c.pos[cut:], margin))
        return plans
    if policy == "tova":
        # Every kv head of the layer holds the same positions (one rule for
        # the layer), so the heads' rows line up.
        held = caches[0].pos
        mean = mean_rows(rows)
        kept, margin = keep_top(held, dict(zip(held, mean)), B)
        return [(kept, margin) for _ in caches]
    if policy == "knorm":
        if scene.mode == "attention":
            return [(c.pos[-B:], None) for c in caches]
        plans = []
        for g, c in enumerate(caches):
            neg = {j: -key_norm(scene.k[layer, g, j]) for j in c.pos}
            plans.append(keep_top(c.pos, neg, B))
        return plans
    if policy == "random":
        return [keep_top(c.pos, {j: random_draw(layer, g, j) for j in c.pos}, B)
                for g, c in enumerate(caches)]
    if policy == "keydiff":
        if scene.mode == "attention":
            return [(c.pos[-B:], None) for c in caches]
        plans = []
        for g, c in enumerate(caches):
            keys = np.array([scene.k[layer, g, j] for j in c.pos], dtype=np.float64)
            norms = np.maximum(np.linalg.norm(keys, axis=1), 1e-12)
            anchor = (keys / norms[:, None]).mean(axis=0)
            cos = keys @ anchor / np.maximum(norms * np.linalg.norm(anchor), 1e-8)
            plans.append(keep_top(c.pos, {j: -float(x) for j, x in zip(c.pos, cos)}, B))
        return plans
    if policy == "expected":
        if scene.mode == "attention":
            return [(c.pos[-B:], None) for c in caches]
        rep = scene.heads // scene.kv_heads
        return [expected_select(scene, layer, g, c, range(g * rep, (g + 1) * rep), t)
                for g, c in enumerate(caches)]
    if policy in ("snapkv", "snapkv-win") and t == scene.prompt:
        return [snap_select(scene, layer, g, c, None, policy) for g, c in enumerate(caches)]
    if policy == "snapkv-win":
        before = scene.prompt - min(snap_window(policy, scene.prompt), B)
        return [hold(c, B, before) for c in caches]
    raise ValueError(policy)


EXPECTED_SINKS = 4  # kvpress' ExpectedAttentionPress.n_sink
EXPECTED_QUERIES = 64  # the last queries its statistics are of


def expected_select(scene, layer, g, cache, heads, t):
    """Expected Attention's kept positions of kv head G's cache at step T
    (the queries of positions 0 .. T - 1 asked), and the margin."""
    B, ns, d = scene.budget, EXPECTED_SINKS, scene.k.shape[-1]
    pos = cache.pos
    if len(pos) <= ns:
        return pos[:B], None
    first = max(ns, t - EXPECTED_QUERIES)
    s = float(scene.scale)
    rest = pos[ns:]
    keys = [[float(x) for x in scene.k[layer, g, j]] for j in rest]
    score = [0.0] * len(rest)
    for h in heads:
        qs = [[float(x) for x in scene.q[layer, h, p]] for p in range(first, t)]
        m = len(qs)
        z = []
        for k in keys:
            # The projections q . k: their mean is mu . k, their variance
            # k' S k (mu, S the queries' mean and covariance).
            proj = []
            for q in qs:
                dot = 0.0
                for a in range(d):
                    dot += q[a] * k[a]
                proj.append(dot)
            mean = 0.0
            for x in proj:
                mean += x
            mean /= m
            var = 0.0
            for x in proj:
                var += (x - mean) * (x - mean)
            var /= m
            z.append(mean * s + var * (s * s) / 2.0)
        top = max(z)
        e = [math.exp(x - top) for x in z]
        total = 0.0
        for x in e:
            total += x
        for i, x in enumerate(e):
            score[i] += x / total
    for i, j in enumerate(rest):
        score[i] /= len(heads)
        if scene.v is not None:
            score[i] = (score[i] + 0.0) * key_norm(scene.v[layer, g, j])
    best = max(score)
    ranked = {j: best + 1.0 for j in pos[:ns]}
    ranked.update(zip(rest, score))
    return keep_top(pos, ranked, B)


def hold(cache, budget, before):
    """The bounded forms after the prompt: the selected (before BEFORE)
    stay; of the rest the newest, BUDGET in all."""
    sel = [j for j in cache.pos if j < before]
    rest = [j for j in cache.pos if j >= before]
    return sel + rest[len(rest) - (budget - len(sel)):], None


def pyramid_held(scene, layer):
    """pyramidkv-win's budget of LAYER: the schedule with its own window,
    the layers' excess over L x B taken back one at a time from layer 0,
    round and round."""
    keep = [pyramid_budget(scene, l, "pyramidkv-win") for l in range(scene.layers)]
    excess = sum(keep) - scene.layers * scene.budget
    l = 0
    while excess > 0:
        keep[l] -= 1
        excess -= 1
        l = (l + 1) % scene.layers
    return keep[layer]


def pyramid_budget(scene, layer, policy="pyramidkv"):
    """PyramidKV's positions kept by LAYER at the prompt's end, its window
    included: KVCache-Factory's PyramidKVCluster.update_kv with
    max_capacity_prompt B, window min(64, P) (POLICY's), beta 20."""
    B, P, L = scene.budget, scene.prompt, scene.layers
    w = snap_window(policy, P)
    if B <= w or P < 2 * (B - w) or L < 2:
        return B
    min_num = (B - w) // 20
    max_num = (B - w) * 2 - min_num
    if max_num >= P - w:
        max_num = P - w
        min_num = (B - w) * 2 - max_num
    steps = (max_num - min_num) // (L - 1)
    return max_num - layer * steps + w


def snap_select(scene, layer, g, cache, budget=None, policy="snapkv"):
    """SnapKV's kept positions of one kv head's cache at the prompt's end
    (it holds 0 .. P - 1), down to BUDGET (B), and the margin, with
    POLICY's settings."""
    B, P = budget if budget is not None else scene.budget, len(cache.pos)
    w = snap_window(policy, P)
    older = P - w
    if B <= w:
        return cache.pos[-B:], None
    score = snap_scores(scene, layer, g, P, policy)
    kept, margin = keep_top(list(range(older)), dict(enumerate(score)), B - w)
    return kept + cache.pos[older:], margin


def snap_scores(scene, layer, g, P, policy="snapkv"):
    """SnapKV's score of each position before the window of kv head G's
    cache at the prompt's end (it holds 0 .. P - 1): the window's rows of
    each query head of the group averaged over the queries, pooled with
    kernel K (5; zero padding, each sum divided by K; or the largest of
    those within K // 2 with pool max), then the mean over the group."""
    w = snap_window(policy, P)
    k, half = setting(policy, "kernel"), setting(policy, "kernel") // 2
    older = P - w
    rep = scene.heads // scene.kv_heads
    pooled = []
    for h in range(g * rep, (g + 1) * rep):
        obs = np.zeros(P)
        for q in range(P - w, P):
            obs[:q + 1] += head_weights(scene, layer, h, q, list(range(q + 1)))
        obs /= w
        if setting(policy, "pool") == "max":
            pooled.append(np.array([obs[max(0, j - half):min(older, j + half + 1)].max()
                                    for j in range(older)]))
            continue
        pad = np.concatenate([np.zeros(half), obs[:older], np.zeros(half)])
        pooled.append(np.array([pad[j:j + k].sum() / k for j in range(older)]))
    return mean_rows(pooled)


ADA_SAFEGUARD = 0.20  # kvpress' AdaKVPress.alpha_safeguard


def ada_select(scene, layer, caches, policy="adakv"):
    """AdaKV's kept positions of every kv head of LAYER at the prompt's end
    (each holds 0 .. P - 1), and the margin, as kvpress'
    AdaKVPress.compress reads: n_kept = B, n_safe = int(B * 0.2); scores
    of shape (G, P), SnapKV's with the window padded by max + 1; each
    head's top n_safe set to the largest float; the G * (P - B) lowest of
    the flattened scores pruned."""
    B, G, P = scene.budget, scene.kv_heads, len(caches[0].pos)
    w = snap_window(policy, P)
    if B <= w:
        return [(c.pos[-B:], None) for c in caches]
    older = [snap_scores(scene, layer, g, P, policy) for g in range(G)]
    if setting(policy, "alloc") == "authors":
        return ada_authors(older, B, w, P)
    top = max(float(np.max(s)) for s in older) if P > w else 0.0
    scores = np.array([np.concatenate([s, np.full(w, top + 1.0)]) for s in older])
    n_safe = int(B * ADA_SAFEGUARD)
    big = np.finfo(np.float64).max
    for g in range(G):
        # topk over the head's scores; a tie keeps the lower position.
        best = sorted(range(P), key=lambda j: (-scores[g, j], j))[:n_safe]
        scores[g, best] = big
    flat = scores.reshape(-1)
    # Lowest first; on a tie the later flat index (head, then position).
    order = sorted(range(G * P), key=lambda i: (flat[i], -i))
    n_pruned = G * (P - B)
    pruned = set(order[:n_pruned])
    margin = None
    if 0 < n_pruned < len(order):
        margin = float(flat[order[n_pruned]] - flat[order[n_pruned - 1]])
    return [([j for j in range(P) if g * P + j not in pruned], margin) for g in range(G)]


def ada_authors(older, B, w, P):
    """FFY0/AdaKV's split (AdaptiveSnapKVCluster.update_kv_gqa, floor_alpha
    0.2, normalize off): base = B - w, floor = int(base * 0.2); the
    G * base best of all the heads' scores before their windows counted
    per head (a tie keeps the lower head, then the lower position); head g
    keeps round(count * 0.8 + floor) (float32, half to even, as
    torch.round) of its best and its window. The margin is None."""
    G, base = len(older), B - w
    floor = int(base * 0.2)
    flat = [(-float(older[g][j]), g, j) for g in range(G) for j in range(P - w)]
    won = [0] * G
    for _, g, _ in sorted(flat)[:G * base]:
        won[g] += 1
    plans = []
    for g in range(G):
        share = np.float32(won[g]) * np.float32(1 - 0.2) + np.float32(floor)
        keep = min(int(np.round(share)), P - w)
        best = sorted(range(P - w), key=lambda j: (-older[g][j], j))[:keep]
        plans.append((sorted(best) + list(range(P - w, P)), None))
    return plans


def ada_budgets(ref, scene):
    """How AdaKV shared the layers' budgets at the prompt's end: layer
    decisions in which the kv heads kept unequal numbers, kv heads that kept
    more than B, and the most one kept."""
    t = scene.prompt
    if t < 1 or t not in ref or "adakv" not in ref[t]:
        return 0, 0, 0, 0
    uneven = above = most = layers = 0
    for recs in ref[t]["adakv"]:
        counts = [len(r["kept"]) for r in recs]
        if not any(r["evicted"] for r in recs):
            continue
        layers += 1
        uneven += len(set(counts)) > 1
        above += sum(c > scene.budget for c in counts)
        most = max(most, max(counts))
    return layers, uneven, above, most


def random_draw(layer, g, pos):
    """The random policy's draw: splitmix64's first output, seeded with 42
    XOR (layer << 48 | g << 32 | pos), its top 53 bits over 2^53."""
    m = (1 << 64) - 1
    z = ((42 ^ (layer << 48 | g << 32 | pos)) + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    z ^= z >> 31
    return (z >> 11) / float(1 << 53)


def key_norm(row):
    """The L2 norm of a key row, its squares summed in index order."""
    total = 0.0
    for x in row:
        total += float(x) * float(x)
    return math.sqrt(total)


# --- the trace of h2o-tui ---------------------------------------------------

def trace_entries(value, scene):
    """A policy's value in one trace line as [layer][kv head] -> object.

    One layer: the key holds the layer entry directly. More: a list, one
    entry a layer. A layer entry is an object (one kv head, one query head,
    accepted for any single kv head), or a list of per-kv-head objects; a
    list of per-query-head objects is accepted too and read at each
    group's first head. Raises ValueError on any other shape.
    """
    L, H, G = scene.layers, scene.heads, scene.kv_heads
    if L == 1:
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
            value = value[0]  # a one-layer list around the layer entry
        layers = [value]
    else:
        if not isinstance(value, list) or len(value) != L:
            raise ValueError(f"expected a list of {L} layer entries")
        layers = value
    out = []
    for l, e in enumerate(layers):
        if isinstance(e, dict):
            if G != 1:
                raise ValueError(f"layer {l}: one object, expected {G} kv heads")
            out.append([e])
        elif isinstance(e, list) and len(e) == G and all(isinstance(x, dict) for x in e):
            out.append(e)
        elif isinstance(e, list) and len(e) == H and all(isinstance(x, dict) for x in e):
            out.append([e[g * (H // G)] for g in range(G)])
        elif (isinstance(e, list) and len(e) == getattr(scene, "listed_kv", G)
              and all(isinstance(x, dict) for x in e)):
            # A cache per kv head where one per query head was expected:
            # each query head reads its kv head's.
            out.append([e[h // (H // len(e))] for h in range(H)])
        else:
            raise ValueError(f"layer {l}: expected an object or a list of {G} objects")
    return out


def trace_kept(policy, obj, step):
    """The kept positions of one trace object. The full cache may give
    neither "kept" nor "attended": it holds every position, and its "attn"
    row then says how many (STEP of them)."""
    kept = obj.get("kept")
    if kept is None and policy == "full":
        kept = obj.get("attended")
        if kept is None and isinstance(obj.get("attn"), list):
            kept = list(range(len(obj["attn"])))
    if kept is None:
        return None
    return [int(x) for x in kept]


def compare(scene, lines, sinks=None, show=20, out=sys.stdout, interval=None):
    """Compare h2o-tui --trace lines with the reference.

    Returns (steps compared, kept sets compared, mismatches, problems), and
    prints every mismatch up to SHOW of them with the reference's margin:
    a margin near 0 is a near tie that rounding may decide either way.
    """
    ref = dict(run(scene, sinks, interval))
    # pyramidkv with a cache per query head: its own reference.
    qscene = query_head_scene(scene)
    qref = dict(run(qscene, sinks, interval, ("pyramidkv",))) if qscene else None
    steps = sets = mismatches = 0
    problems = []
    attn_err = 0.0
    seen = set()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            t = int(obj["step"])
        except (ValueError, KeyError, TypeError) as e:
            problems.append(f"trace line {lineno}: not a step object ({e})")
            continue
        if t not in ref or t in seen:
            problems.append(f"trace line {lineno}: step {t} unexpected or repeated")
            continue
        seen.add(t)
        if obj.get("pos", t - 1) != t - 1:
            problems.append(f"step {t}: pos {obj.get('pos')}, expected {t - 1}")
        steps += 1
        for p in POLICIES:
            if p not in obj:
                problems.append(f"step {t}: no \"{p}\" key")
                mismatches += 1
                continue
            sc_p, ref_p = (qscene, qref) if qscene and p == "pyramidkv" else (scene, ref)
            try:
                got = trace_entries(obj[p], sc_p)
            except ValueError as e:
                problems.append(f"step {t}: {p}: {e}")
                mismatches += 1
                continue
            for l in range(scene.layers):
                for g in range(sc_p.kv_heads):
                    want = ref_p[t][p][l][g]
                    kept = trace_kept(p, got[l][g], t)
                    if kept is None:
                        problems.append(f"step {t}: {p} layer {l} kv {g}: no \"kept\"")
                        mismatches += 1
                        continue
                    sets += 1
                    a = got[l][g].get("attn")
                    if (isinstance(a, list)
                            and got[l][g].get("attended", want["attended"]) == want["attended"]
                            and len(a) == len(want["attn"])):
                        attn_err = max(attn_err, float(np.max(np.abs(np.array(a, float) - want["attn"]))))
                    if kept != want["kept"]:
                        mismatches += 1
                        if mismatches <= show:
                            only_ref = sorted(set(want["kept"]) - set(kept))
                            only_c = sorted(set(kept) - set(want["kept"]))
                            m = want["margin"]
                            print(f"step {t} layer {l} kv {g} {p}: reference keeps {only_ref} "
                                  f"the trace does not, the trace {only_c}"
                                  + ("" if m is None else f" (reference margin {m:.3g})"),
                                  file=out)
    layers, uneven, above, most = ada_budgets(ref, scene)
    print(f"adakv budgets: {layers} layer decisions, {uneven} with unequal kv-head "
          f"budgets, {above} kv heads above B = {scene.budget}, the most kept {most}",
          file=out)
    missing = sorted(set(ref) - seen)
    if missing:
        problems.append(f"{len(missing)} steps missing from the trace (first: {missing[0]})")
    return steps, sets, mismatches, problems, attn_err


# --- random test scenes ------------------------------------------------------

def make_scene(outdir, layers=2, heads=4, kv_heads=2, n=40, dim=8, prompt=12,
               heavy=3, recent=3, seed=1, quantise=0, scale=None, sinks=None,
               spread=1.0, interval=None):
    """Write a random layered GQA scene: OUTDIR/scene.json, q.npy, k.npy, v.npy.

    q is (layers, heads, n, dim), k and v (layers, kv_heads, n, dim), all
    float64. quantise > 0 rounds q and k to integers in -quantise..quantise,
    so that many logits are equal and ties are common; with a large scale
    many weights are then exactly 0 or exactly equal. spread multiplies the
    normal numbers (larger: sharper attention). Returns the scene's path.
    """
    if heads % kv_heads:
        raise SystemExit("make-scene: --heads must be a multiple of --kv-heads")
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(layers, heads, n, dim)) * spread
    k = rng.normal(size=(layers, kv_heads, n, dim)) * spread
    v = rng.normal(size=(layers, kv_heads, n, dim)) / math.sqrt(dim)
    if quantise:
        q = np.clip(np.rint(q * quantise / 2), -quantise, quantise)
        k = np.clip(np.rint(k * quantise / 2), -quantise, quantise)
    os.makedirs(outdir, exist_ok=True)
    for name, a in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(outdir, name + ".npy"), np.ascontiguousarray(a, dtype=np.float64))
    scene = {"title": f"random L{layers} H{heads} G{kv_heads} P{prompt}",
             "description": f"tools/ref_policies.py make-scene, seed {seed}"
                            + (f", q and k quantised to -{quantise}..{quantise}" if quantise else ""),
             "heavy": heavy, "recent": recent, "dim": dim,
             "layers": layers, "heads": heads, "kv_heads": kv_heads, "prompt": prompt,
             "q": "q.npy", "k": "k.npy", "v": "v.npy",
             "text": [f"t{i}" for i in range(n)]}
    if scale is not None:
        scene["scale"] = scale
    if sinks is not None:
        scene["sinks"] = sinks
    if interval is not None:
        scene["interval"] = interval
    path = os.path.join(outdir, "scene.json")
    with open(path, "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")
    return path


# --- the command line --------------------------------------------------------

def _json_record(rec):
    return {"kept": rec["kept"], "evicted": rec["evicted"], "attended": rec["attended"],
            "attn": [float(x) for x in rec["attn"]], "scores": [float(x) for x in rec["scores"]]}


def print_run(scene, sinks, as_json, out=sys.stdout, interval=None):
    """Every step's kept positions, as text or as trace-shaped JSON lines."""
    for t, step in run(scene, sinks, interval):
        if as_json:
            line = {"step": t, "pos": t - 1, "token": scene.text[t - 1]}
            for p in POLICIES:
                layers = [[_json_record(r) for r in recs] for recs in step[p]]
                layers = [x[0] if scene.kv_heads == 1 and scene.heads == 1 else x for x in layers]
                line[p] = layers[0] if scene.layers == 1 else layers
            print(json.dumps(line), file=out)
            continue
        for l in range(scene.layers):
            for g in range(scene.kv_heads):
                for p in POLICIES:
                    kept = " ".join(map(str, step[p][l][g]["kept"]))
                    print(f"step {t} layer {l} kv {g} {p}: {kept}", file=out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="print the kept positions of every step")
    p.add_argument("scene")
    p.add_argument("--sinks", type=int, help="StreamingLLM's sinks (default: the scene's, or 4)")
    p.add_argument("--json", action="store_true", help="JSON lines shaped like h2o-tui --trace")
    p.add_argument("--interval", type=int, help="compress every N steps (default: the scene's, or 1)")
    p.add_argument("--policy-opt", action="append", default=[], metavar="P.KEY=V",
                   help="a setting, as h2o-tui's --policy-opt (repeatable)")
    p = sub.add_parser("compare", help="check an h2o-tui --trace against the reference")
    p.add_argument("scene")
    p.add_argument("trace", help="the trace's file, - for stdin")
    p.add_argument("--sinks", type=int, help="the --sinks h2o-tui ran with")
    p.add_argument("--show", type=int, default=20, help="print at most this many mismatches")
    p.add_argument("--interval", type=int, help="the --interval h2o-tui ran with")
    p.add_argument("--policy-opt", action="append", default=[], metavar="P.KEY=V",
                   help="a setting h2o-tui ran with (repeatable)")
    p = sub.add_parser("make-scene", help="write a random layered GQA scene")
    p.add_argument("outdir")
    for name, default in (("layers", 2), ("heads", 4), ("kv-heads", 2), ("n", 40), ("dim", 8),
                          ("prompt", 12), ("heavy", 3), ("recent", 3), ("seed", 1),
                          ("quantise", 0)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--scale", type=float, help="the scene's logit scale (default 1/sqrt(dim))")
    p.add_argument("--sinks", type=int, help="write a \"sinks\" field")
    p.add_argument("--spread", type=float, default=1.0, help="scale of the random numbers")
    p.add_argument("--interval", type=int, help="write an \"interval\" field")
    a = ap.parse_args(argv)

    if a.cmd == "make-scene":
        print(make_scene(a.outdir, a.layers, a.heads, a.kv_heads, a.n, a.dim, a.prompt,
                         a.heavy, a.recent, a.seed, a.quantise, a.scale, a.sinks, a.spread,
                         a.interval))
        return 0
    if a.cmd != "make-scene" and a.interval is not None and a.interval < 1:
        print(f"--interval: expected 1 or more, got {a.interval}", file=sys.stderr)
        return 2
    for opt in a.policy_opt:
        name, _, kv = opt.partition(".")
        key, _, value = kv.partition("=")
        SETTINGS.setdefault(name, {})[key] = int(value) if key in ("window", "kernel") else value
    try:
        scene = load_scene(a.scene)
    except (SceneError, OSError, ValueError) as e:
        print(f"{a.scene}: {e}", file=sys.stderr)
        return 3
    if a.cmd == "run":
        print_run(scene, a.sinks, a.json, interval=a.interval)
        return 0
    f = sys.stdin if a.trace == "-" else open(a.trace, encoding="utf-8")
    with f:
        steps, sets, bad, problems, attn_err = compare(scene, f, a.sinks, a.show,
                                                       interval=a.interval)
    for why in problems[:a.show]:
        print(why)
    print(f"{a.scene}: {steps} steps, {sets} kept sets compared "
          f"({scene.layers} layers x {scene.kv_heads} kv heads x {len(POLICIES)} policies), "
          f"{bad} mismatches; attn within {attn_err:.1e} where attended agrees")
    return 1 if bad or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
