#!/usr/bin/env python3
"""A NumPy reference for llama2.c checkpoints: reader, tokenizer, forward pass.

Written to be read beside src/model/ (the C forward pass h2o-tui uses): the
same checkpoint and tokenizer formats (models/stories260K/README.md), the
same tokenizer algorithm as llama2.c's run.c, and the forward pass of the
whole sequence at once in float64, with a causal mask. Needs only Python 3
and NumPy (Debian: apt-get install python3-numpy).

    llama2c.py logits CHECKPOINT --tokens 1,403,407
        the logits at every position, as JSON {"tokens": [...], "logits": [[...]]}
    llama2c.py encode TOKENIZER --vocab 512 --text "Once upon a time"
        the token ids (with BOS), as JSON
    llama2c.py trace CHECKPOINT TOKENIZER (--text TEXT | --text-file F) --out PREFIX
        PREFIX_q.npy (L, H, n, d), PREFIX_k.npy and PREFIX_v.npy (L, G, n, d):
        each layer's attention inputs, q and k after RoPE, C order (float32,
        or --dtype float16 / float64); PREFIX.json (or --json PATH): the whole
        model as an h2o-tui scene (layers, heads, kv_heads, prompt, heavy,
        recent, the token texts, the .npy names relative to the scene, a
        title, description and watch; the token ids in "x-ids"). --prompt P
        is the scene's prompt (default: the text's tokens with --generate N,
        which adds N greedy tokens after it, else 0). With --scene L H, also a
        one-head scene of layer L, query head H: PREFIX_L<L>H<H>.json and its
        (n, d) q, k, v files (k and v of the head's kv head).
    llama2c.py accuracy CHECKPOINT TOKENIZER (--text TEXT | --text-file F) [--min A]
        teacher-forced next-token accuracy on the text; exit 1 below A
    llama2c.py fixture CHECKPOINT TOKENIZER (--out FILE | --check FILE)
        write (or compare with) tests/model/stories260K_logits.txt

Every trace is checked when it is written: softmax(q k^T / sqrt(d)) under
a causal mask, from the arrays read back from the files, must give the
attention probabilities of the forward pass itself.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

FIELDS = ("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len")
BOS, EOS = 1, 2


class Checkpoint:
    """A llama2.c legacy checkpoint: the header and the weights, as float64."""

    def __init__(self, path):
        data = open(path, "rb").read()
        if len(data) < 28:
            raise ValueError(f"{path}: {len(data)} bytes, shorter than the header")
        header = struct.unpack("<7i", data[:28])
        cfg = dict(zip(FIELDS, header))
        self.shared = cfg["vocab_size"] > 0
        cfg["vocab_size"] = abs(cfg["vocab_size"])
        for name in FIELDS:
            if cfg[name] <= 0:
                raise ValueError(f"{path}: header field {name} is {cfg[name]}")
        if cfg["dim"] % cfg["n_heads"] or cfg["n_heads"] % cfg["n_kv_heads"]:
            raise ValueError(f"{path}: heads do not divide dim, or kv heads heads")
        self.__dict__.update(cfg)
        self.head_size = self.dim // self.n_heads
        self.kv_dim = self.n_kv_heads * self.head_size
        L, D, H, V, KV = self.n_layers, self.dim, self.hidden_dim, self.vocab_size, self.kv_dim
        floats = np.frombuffer(data, dtype="<f4", offset=28)
        at = 0

        def take(*shape):
            nonlocal at
            n = int(np.prod(shape))
            if at + n > floats.size:
                raise ValueError(f"{path}: the file ends inside the weights")
            a = floats[at:at + n].astype(np.float64).reshape(shape)
            at += n
            return a

        self.emb = take(V, D)
        self.rms_att = take(L, D)
        self.wq = take(L, D, D)
        self.wk = take(L, KV, D)
        self.wv = take(L, KV, D)
        self.wo = take(L, D, D)
        self.rms_ffn = take(L, D)
        self.w1 = take(L, H, D)
        self.w2 = take(L, D, H)
        self.w3 = take(L, H, D)
        self.rms_final = take(D)
        take(self.seq_len * self.head_size)  # the two unused RoPE tables
        self.cls = self.emb if self.shared else take(V, D)
        if at != floats.size or len(data) != 28 + 4 * floats.size:
            raise ValueError(f"{path}: {len(data)} bytes, the header needs {28 + 4 * at}")
        if not all(np.isfinite(w).all() for w in self.__dict__.values()
                   if isinstance(w, np.ndarray)):
            raise ValueError(f"{path}: a weight is not finite")


class Tokenizer:
    """llama2.c's tokenizer.bin and run.c's encode and decode."""

    def __init__(self, path, vocab_size):
        data = open(path, "rb").read()
        (self.max_len,) = struct.unpack_from("<i", data, 0)
        at = 4
        self.pieces, self.scores = [], []
        for _ in range(vocab_size):
            score, n = struct.unpack_from("<fi", data, at)
            at += 8
            self.pieces.append(data[at:at + n])
            self.scores.append(score)
            at += n
        if at != len(data):
            raise ValueError(f"{path}: {len(data) - at} bytes after the last piece")
        self.ids = {}
        for i, p in enumerate(self.pieces):
            self.ids.setdefault(p, i)  # the lowest id of a piece

    def encode(self, text, bos=True, eos=False):
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        tokens = [BOS] if bos else []
        if raw and b" " in self.ids:
            tokens.append(self.ids[b" "])  # the dummy prefix
        i = 0
        while i < len(raw):
            # One UTF-8 character: a byte and up to three continuation bytes.
            j = i + 1
            while j < len(raw) and raw[j] & 0xC0 == 0x80 and j - i < 4:
                j += 1
            ch = raw[i:j]
            if ch in self.ids:
                tokens.append(self.ids[ch])
            else:
                tokens.extend(self.ids[b"<0x%02X>" % b] for b in ch)
            i = j
        while True:
            best, best_score = -1, np.float32(-1e10)
            for k in range(len(tokens) - 1):
                merged = self.ids.get(self.pieces[tokens[k]] + self.pieces[tokens[k + 1]])
                if merged is not None and np.float32(self.scores[merged]) > best_score:
                    best, best_score, best_id = k, np.float32(self.scores[merged]), merged
            if best < 0:
                break
            tokens[best:best + 2] = [best_id]
        return tokens + ([EOS] if eos else [])

    def decode(self, prev, token):
        piece = self.pieces[token]
        if prev == BOS and piece.startswith(b" "):
            piece = piece[1:]
        hexdigits = b"0123456789abcdefABCDEF"
        if (len(piece) == 6 and piece.startswith(b"<0x") and piece.endswith(b">")
                and all(c in hexdigits for c in piece[3:5])):
            return bytes([int(piece[3:5], 16)])
        return piece


def rmsnorm(x, w):
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-5))


def rope(x, pos):
    """Rotate each pair (2i, 2i+1) of the last axis (a head) by pos * 10000^(-2i/d)."""
    d = x.shape[-1]
    freq = 1.0 / 10000.0 ** (np.arange(0, d, 2) / d)
    angle = pos[:, None] * freq[None, :]  # (n, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def forward(ck, tokens, pre=None):
    """The whole sequence at once: the logits (n, V) and, per layer, the
    attention inputs q (H, n, d) and k, v (G, n, d) after RoPE and the
    attention probabilities (H, n, n). PRE, a list, gets each layer's q
    before RoPE."""
    n = len(tokens)
    if n > ck.seq_len:
        raise ValueError(f"{n} tokens, more than seq_len {ck.seq_len}")
    H, G, d = ck.n_heads, ck.n_kv_heads, ck.head_size
    pos = np.arange(n, dtype=np.float64)
    mask = np.triu(np.full((n, n), -np.inf), 1)
    x = ck.emb[np.asarray(tokens)]
    qs, ks, vs, probs = [], [], [], []
    for l in range(ck.n_layers):
        xb = rmsnorm(x, ck.rms_att[l])
        q = (xb @ ck.wq[l].T).reshape(n, H, d).transpose(1, 0, 2)
        k = (xb @ ck.wk[l].T).reshape(n, G, d).transpose(1, 0, 2)
        v = (xb @ ck.wv[l].T).reshape(n, G, d).transpose(1, 0, 2)
        if pre is not None:
            pre.append(q)
        q, k = rope(q, pos), rope(k, pos)
        kh, vh = np.repeat(k, H // G, axis=0), np.repeat(v, H // G, axis=0)
        s = q @ kh.transpose(0, 2, 1) / math.sqrt(d) + mask
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        att = (p @ vh).transpose(1, 0, 2).reshape(n, H * d)
        x = x + att @ ck.wo[l].T
        xb = rmsnorm(x, ck.rms_ffn[l])
        h1, h3 = xb @ ck.w1[l].T, xb @ ck.w3[l].T
        x = x + (h1 / (1.0 + np.exp(-h1)) * h3) @ ck.w2[l].T
        qs.append(q), ks.append(k), vs.append(v), probs.append(p)
    logits = rmsnorm(x, ck.rms_final) @ ck.cls.T
    return logits, np.stack(qs), np.stack(ks), np.stack(vs), np.stack(probs)


def check_trace(q, k, probs, tol):
    """softmax(q k^T / sqrt(d)), causal, from Q (L, H, n, d) and K (L, G, n, d):
    its largest difference from PROBS (L, H, n, n); raises above TOL."""
    L, H, n, d = q.shape
    G = k.shape[1]
    kh = np.repeat(k.astype(np.float64), H // G, axis=1)
    s = q.astype(np.float64) @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    s += np.triu(np.full((n, n), -np.inf), 1)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    err = float(np.abs(p - probs).max())
    if not err <= tol:
        raise AssertionError(f"attention from q and k differs from the forward pass by {err}")
    return err


def greedy(ck, tokens, count):
    tokens = list(tokens)
    for _ in range(count):
        logits = forward(ck, tokens)[0]
        tokens.append(int(np.argmax(logits[-1])))
    return tokens


# The fixture of tests/model/test_llama.c: every logit of a short text, and
# the token ids of a longer story for next-token accuracy.
FIXTURE_TEXT = ("Once upon a time, there was a little girl named Lily. "
                "She loved to play outside in the park with her dog, Max.")
FIXTURE_STORY = (
    "Once upon a time, there was a little boy named Tim. Tim had a red ball. "
    "He loved to play with his ball every day. One day, Tim went to the park "
    "with his mom. He saw a big tree and a small dog. The dog wanted to play "
    "with the ball too. Tim said, \"Let's play together!\" The dog was happy. "
    "They ran and played all day. When the sun went down, Tim and his mom went "
    "home. Tim was tired but happy. He said, \"I love my ball and my new friend.\" "
    "His mom smiled and gave him a big hug. The end.")


def fixture_lines(ck, tok):
    ids = tok.encode(FIXTURE_TEXT)
    logits = forward(ck, ids)[0]
    story = tok.encode(FIXTURE_STORY)
    out = ["# tests/model/stories260K_logits.txt: written by tools/llama2c.py fixture",
           "# (NumPy, float64) for models/stories260K. Do not edit: regenerate it.",
           "text " + FIXTURE_TEXT,
           "tokens %d %s" % (len(ids), " ".join(map(str, ids)))]
    for p in range(len(ids)):
        out.append("logits %d %s" % (p, " ".join("%.6f" % v for v in logits[p])))
    out.append("story " + FIXTURE_STORY)
    out.append("story_tokens %d %s" % (len(story), " ".join(map(str, story))))
    return out


def compare_fixture(new, old, tol=2e-6):
    """Token lines equal, logits within TOL (printing rounds to 1e-6)."""
    if len(new) != len(old):
        return f"{len(old)} lines, the tool writes {len(new)}"
    for i, (a, b) in enumerate(zip(new, old)):
        if a.startswith("logits "):
            x, y = a.split(), b.split()
            if x[:2] != y[:2] or len(x) != len(y):
                return f"line {i + 1}: not the same position or count"
            err = np.abs(np.array(x[2:], float) - np.array(y[2:], float)).max()
            if err > tol:
                return f"line {i + 1}: logits differ by {err}"
        elif a != b:
            return f"line {i + 1} differs"
    return None


def scene_text(t):
    """A token's text as a one-head scene shows it: blank ones quoted."""
    return t if t.strip() else repr(t)


# The scene's paragraph on what to watch, unless --watch gives another.
WATCH = (
    "Every head of a real model: stories260K, 5 layers of 8 query heads, each two "
    "sharing a key/value head. Tab walks the heads, o shows them all. This small "
    "model has no attention sink: its first token is looked at early on and hardly "
    "later. Many heads are local, much of their attention on the token before, and "
    "a window serves them. Others keep coming back to a few tokens (a name, quote "
    "marks, full stops): the heavy hitters H2O keeps and a window loses. Nothing is "
    "evicted during the prompt; at its end each cache is cut to its budget in one "
    "go, H2O's by the scores the prompt earned.")


def write_model_scene(a, ck, dtype, texts, ids, prompt):
    """The whole model as an h2o-tui scene: the three files of a.out beside
    (or below) the scene file a.json, named relative to its folder."""
    path = a.json or a.out + ".json"
    folder = os.path.dirname(os.path.abspath(path))
    names = {x: os.path.relpath(os.path.abspath(f"{a.out}_{x}.npy"), folder)
             for x in ("q", "k", "v")}
    n = len(ids)
    scene = {
        "title": a.title or f"{os.path.basename(a.checkpoint)}: {n} tokens, "
                            f"{ck.n_layers} layers x {ck.n_heads} heads",
        "description": a.description or (
            f"Every layer and head of {os.path.basename(a.checkpoint)} on {n} tokens "
            f"({prompt} of prompt): {ck.n_heads} query heads per layer share "
            f"{ck.n_kv_heads} key/value heads; q, k, v from tools/llama2c.py trace ({dtype})."),
        "watch": a.watch if a.watch is not None else WATCH,
    }
    # A scene that teaches, with its step notes (docs/scene-format.md).
    if a.lesson:
        scene["lesson"] = True
    if a.notes:
        scene["notes"] = json.loads(a.notes)
    scene |= {
        "heavy": a.heavy, "recent": a.recent, "dim": ck.head_size,
        "layers": ck.n_layers, "heads": ck.n_heads, "kv_heads": ck.n_kv_heads,
        "prompt": prompt,
        "q": names["q"], "k": names["k"], "v": names["v"],
        # As decoded (the screen escapes a line break), BOS as <s>.
        "text": ["<s>" if i == BOS else t for i, t in zip(ids, texts)],
        "x-ids": ids,
        "x-source": f"tools/llama2c.py trace {os.path.basename(a.checkpoint)} "
                    f"{os.path.basename(a.tokenizer)}",
    }
    with open(path, "w") as f:
        json.dump(scene, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return path


def accuracy(ck, ids):
    """Teacher-forced next-token accuracy: how often the argmax of the
    logits at position i is token i + 1; (right, predictions)."""
    logits = forward(ck, ids)[0]
    guess = np.argmax(logits[:-1], axis=-1)
    return int(np.sum(guess == np.asarray(ids[1:]))), len(ids) - 1


def read_text(a):
    """--text, or the contents of --text-file."""
    if a.text_file:
        with open(a.text_file, encoding="utf-8") as f:
            return f.read().strip()
    return a.text


def write_scene(a, ck, q, k, v, texts):
    """One query head as an h2o-tui scene (docs/scene-format.md, .npy files)."""
    layer, head = a.scene
    if not (0 <= layer < ck.n_layers and 0 <= head < ck.n_heads):
        raise SystemExit(f"--scene: layer 0..{ck.n_layers - 1}, head 0..{ck.n_heads - 1}")
    g = head // (ck.n_heads // ck.n_kv_heads)
    base = f"{a.out}_L{layer}H{head}"
    name = os.path.basename(base)
    for part, x in (("q", q[layer, head]), ("k", k[layer, g]), ("v", v[layer, g])):
        # The one-head loader reads float32 and float64 only.
        np.save(f"{base}_{part}.npy", np.ascontiguousarray(
            x, dtype=np.float32 if x.dtype == np.float16 else x.dtype))
    scene = {"title": f"{os.path.basename(a.checkpoint)}, layer {layer}, head {head}",
             "description": f"query head {head} reads key/value head {g}; "
                            f"{len(texts)} tokens of tools/llama2c.py trace",
             "heavy": a.heavy, "recent": a.recent, "dim": ck.head_size,
             "q": f"{name}_q.npy", "k": f"{name}_k.npy", "v": f"{name}_v.npy",
             "text": [scene_text(t) for t in texts]}
    with open(base + ".json", "w") as f:
        json.dump(scene, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("logits", help="logits at every position, JSON")
    p.add_argument("checkpoint")
    p.add_argument("--tokens", required=True, help="comma-separated token ids")
    p = sub.add_parser("encode", help="token ids of a text, JSON")
    p.add_argument("tokenizer")
    p.add_argument("--vocab", type=int, required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--no-bos", action="store_true")
    p = sub.add_parser("trace", help="attention inputs as .npy files and a scene")
    p.add_argument("checkpoint")
    p.add_argument("tokenizer")
    t = p.add_mutually_exclusive_group(required=True)
    t.add_argument("--text")
    t.add_argument("--text-file")
    p.add_argument("--out", required=True, help="writes OUT_q.npy, OUT_k.npy, OUT_v.npy, OUT.json")
    p.add_argument("--json", help="the scene's path instead of OUT.json")
    p.add_argument("--generate", type=int, default=0, help="greedy tokens after the prompt")
    p.add_argument("--prerope", action="store_true",
                   help="also OUT_qpre.npy: the queries before RoPE, laid out as OUT_q.npy")
    p.add_argument("--prompt", type=int, help="the scene's prompt, in tokens")
    p.add_argument("--dtype", choices=("float16", "float32", "float64"), default="float32")
    p.add_argument("--title")
    p.add_argument("--description")
    p.add_argument("--watch", help="the scene's watch paragraph (default: one on real heads)")
    p.add_argument("--lesson", action="store_true",
                   help='mark the scene as one that teaches ("lesson": true)')
    p.add_argument("--notes", help='the scene\'s step notes, a JSON object: {"64": "..."}')
    p.add_argument("--scene", type=int, nargs=2, metavar=("LAYER", "HEAD"),
                   help="also write an h2o-tui scene of one query head")
    p.add_argument("--heavy", type=int, default=16, help="the scene's heavy budget")
    p.add_argument("--recent", type=int, default=16, help="the scene's recent budget")
    p = sub.add_parser("accuracy", help="teacher-forced next-token accuracy on a text")
    p.add_argument("checkpoint")
    p.add_argument("tokenizer")
    t = p.add_mutually_exclusive_group(required=True)
    t.add_argument("--text")
    t.add_argument("--text-file")
    p.add_argument("--min", type=float, default=0.0, help="exit 1 below this accuracy")
    p = sub.add_parser("fixture", help="the test fixture of tests/model")
    p.add_argument("checkpoint")
    p.add_argument("tokenizer")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--out")
    g.add_argument("--check")
    a = ap.parse_args(argv)

    if a.cmd == "logits":
        ck = Checkpoint(a.checkpoint)
        ids = [int(t) for t in a.tokens.split(",") if t.strip()]
        if not ids or min(ids) < 0 or max(ids) >= ck.vocab_size:
            ap.error("token ids must be in [0, vocab_size)")
        logits = forward(ck, ids)[0]
        json.dump({"tokens": ids, "logits": logits.tolist()}, sys.stdout)
        print()
    elif a.cmd == "encode":
        tok = Tokenizer(a.tokenizer, a.vocab)
        print(json.dumps(tok.encode(a.text, bos=not a.no_bos)))
    elif a.cmd == "trace":
        ck = Checkpoint(a.checkpoint)
        tok = Tokenizer(a.tokenizer, ck.vocab_size)
        prompt = tok.encode(read_text(a))
        ids = greedy(ck, prompt, a.generate) if a.generate else prompt
        n_prompt = a.prompt if a.prompt is not None else len(prompt) if a.generate else 0
        if not 0 <= n_prompt <= len(ids):
            ap.error(f"--prompt must be 0 to {len(ids)}")
        pre = []
        _, q, k, v, probs = forward(ck, ids, pre)
        if a.prerope:
            np.save(f"{a.out}_qpre.npy", np.ascontiguousarray(np.stack(pre), dtype=a.dtype))
        exact = check_trace(q, k, probs, 1e-12)
        for name, x in (("q", q), ("k", k), ("v", v)):
            np.save(f"{a.out}_{name}.npy", np.ascontiguousarray(x, dtype=a.dtype))
        # What the files hold, read back, is what is checked.
        q1, k1, v1 = (np.load(f"{a.out}_{name}.npy") for name in ("q", "k", "v"))
        tol = {"float64": 1e-12, "float32": 1e-4, "float16": 5e-2}[a.dtype]
        stored = check_trace(q1, k1, probs, tol)
        texts = [tok.decode(ids[i - 1] if i else -1, t).decode("utf-8", "replace")
                 for i, t in enumerate(ids)]
        path = write_model_scene(a, ck, a.dtype, texts, ids, n_prompt)
        if a.scene:
            write_scene(a, ck, q1, k1, v1, texts)
        size = sum(os.path.getsize(f"{a.out}_{x}.npy") for x in ("q", "k", "v"))
        print(f"{path}: {len(ids)} tokens ({n_prompt} of prompt), {size} bytes of .npy; "
              f"attention from q and k matches the forward pass to {exact:.1e} (float64), "
              f"{stored:.1e} ({a.dtype}, as stored)", file=sys.stderr)
    elif a.cmd == "accuracy":
        ck = Checkpoint(a.checkpoint)
        tok = Tokenizer(a.tokenizer, ck.vocab_size)
        ids = tok.encode(read_text(a))
        right, total = accuracy(ck, ids)
        print(f"next-token accuracy {right}/{total} = {right / total:.3f} "
              f"(chance 1/{ck.vocab_size} = {1 / ck.vocab_size:.4f})")
        if right / total < a.min:
            print(f"below the --min of {a.min}", file=sys.stderr)
            return 1
    else:
        ck = Checkpoint(a.checkpoint)
        tok = Tokenizer(a.tokenizer, ck.vocab_size)
        lines = fixture_lines(ck, tok)
        if a.out:
            with open(a.out, "w") as f:
                f.write("\n".join(lines) + "\n")
        else:
            old = open(a.check).read().splitlines()
            why = compare_fixture(lines, old)
            if why:
                print(f"{a.check}: not what tools/llama2c.py writes: {why}", file=sys.stderr)
                return 1
            print(f"{a.check}: what tools/llama2c.py writes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
