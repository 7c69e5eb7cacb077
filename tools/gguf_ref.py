#!/usr/bin/env python3
"""A plain NumPy forward pass of GGUF models, as an oracle for h2o-tui's.

    tools/gguf_ref.py info MODEL.gguf
    tools/gguf_ref.py logits MODEL.gguf TOKENS.txt
    tools/gguf_ref.py check MODEL.gguf TOKENS.txt [--tol T] LABEL=FILE...

`info` prints the file's metadata and tensors. `logits` prints the model's
logits for each position of TOKENS.txt's ids (whitespace-separated), one
line per position, as llama.cpp's were recorded in tests/model/gguf/expected/.
`check` compares the reference's logits with each LABEL=FILE of logits in
that layout: per position, max |other - reference| over the largest
|reference logit| there (1 when smaller), the worst position counting;
exit 1 when one is over T (default 1e-5). A file it cannot read (not GGUF,
truncated, a tensor not F32, an architecture not listed below) or a bad
token or logits file: one line `gguf_ref.py: FILE: what is wrong`, exit 3.

Written from the architectures' published definitions, not from h2o-tui's
C code: its own strict reader of GGUF (version 2 or 3, F32 tensors only),
and float64 arithmetic throughout, so its rounding is far below float32's:

  llama   RMSNorm, q/k/v projections, RoPE on adjacent pairs (llama.cpp's
          "normal" RoPE: GGUF files keep q and k rows in the order it
          rotates pairwise), grouped-query attention scaled by
          1/sqrt(head size), output projection, RMSNorm, SwiGLU
          (down(silu(gate x) * up x)), final RMSNorm, output matrix or the
          embedding when there is none; linear RoPE scaling (positions
          divided by the factor) and rope_freqs (frequencies divided by
          its factors) when the file has them
  qwen2   llama's block, with q, k and v biases and GPT-NeoX RoPE (dimension
          i paired with i + rotated/2)
  qwen3   qwen2 without biases, with q and k RMS-normed per head
          (attn_q_norm, attn_k_norm, the model's epsilon) before RoPE

Needs NumPy only.
"""
import struct
import sys

import numpy as np

GGUF_TYPES = {  # value type: (struct format, size)
    0: ("<B", 1), 1: ("<b", 1), 2: ("<H", 2), 3: ("<h", 2), 4: ("<I", 4),
    5: ("<i", 4), 6: ("<f", 4), 7: ("<?", 1), 10: ("<Q", 8), 11: ("<q", 8),
    12: ("<d", 8),
}
STRING, ARRAY = 8, 9
GGML_F32 = 0


class BadFile(Exception):
    pass


class Reader:
    def __init__(self, data, path):
        self.data, self.path, self.pos = data, path, 0

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.data):
            raise BadFile("%s: offset %d: %s runs past the end of the file"
                          % (self.path, self.pos, what))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def scalar(self, fmt, size, what):
        return struct.unpack(fmt, self.take(size, what))[0]

    def u32(self, what):
        return self.scalar("<I", 4, what)

    def u64(self, what):
        return self.scalar("<Q", 8, what)

    def string(self, what):
        n = self.u64(what + "'s length")
        try:
            return self.take(n, what).decode("utf-8")
        except UnicodeDecodeError:
            raise BadFile("%s: offset %d: %s is not UTF-8" % (self.path, self.pos, what))

    def value(self, vtype, what, depth=0):
        if vtype in GGUF_TYPES:
            return self.scalar(*GGUF_TYPES[vtype], what)
        if vtype == STRING:
            return self.string(what)
        if vtype == ARRAY and depth == 0:
            etype = self.u32(what + "'s element type")
            count = self.u64(what + "'s count")
            if etype in GGUF_TYPES:
                fmt, size = GGUF_TYPES[etype]
                raw = self.take(count * size, what)
                return list(struct.unpack("<%d%s" % (count, fmt[1]), raw))
            return [self.value(etype, what, depth + 1) for _ in range(count)]
        raise BadFile("%s: %s: value type %d is not known" % (self.path, what, vtype))


def read_gguf(path):
    """(metadata dict, {name: float64 array in NumPy's row-major shape})."""
    with open(path, "rb") as f:
        data = f.read()
    r = Reader(data, path)
    if r.take(4, "magic") != b"GGUF":
        raise BadFile("%s: not a GGUF file (no GGUF magic)" % path)
    version = r.u32("version")
    if version not in (2, 3):
        raise BadFile("%s: GGUF version %d is not supported (2 and 3 are)" % (path, version))
    n_tensors = r.u64("tensor count")
    n_kv = r.u64("metadata count")
    meta = {}
    for _ in range(n_kv):
        key = r.string("a metadata key")
        if key in meta:
            raise BadFile("%s: metadata key %r appears twice" % (path, key))
        meta[key] = r.value(r.u32(key + "'s type"), key)
    infos = []
    for _ in range(n_tensors):
        name = r.string("a tensor name")
        n_dims = r.u32(name + "'s dimension count")
        if not 1 <= n_dims <= 4:
            raise BadFile("%s: tensor %r: %d dimensions" % (path, name, n_dims))
        ne = [r.u64(name + "'s dimensions") for _ in range(n_dims)]
        ttype = r.u32(name + "'s type")
        offset = r.u64(name + "'s offset")
        if ttype != GGML_F32:
            raise BadFile("%s: tensor %r: type %d is not supported (F32 only)"
                          % (path, name, ttype))
        infos.append((name, ne, offset))
    align = meta.get("general.alignment", 32)
    if not isinstance(align, int) or align <= 0 or align & (align - 1):
        raise BadFile("%s: general.alignment %r is not a power of two" % (path, align))
    start = (r.pos + align - 1) // align * align
    tensors, spans = {}, []
    for name, ne, offset in infos:
        if name in tensors:
            raise BadFile("%s: tensor %r appears twice" % (path, name))
        if offset % align:
            raise BadFile("%s: tensor %r: offset %d is not aligned to %d"
                          % (path, name, offset, align))
        count = int(np.prod(ne))
        begin, end = start + offset, start + offset + 4 * count
        if end > len(data):
            raise BadFile("%s: tensor %r: its %d bytes run past the end of the file"
                          % (path, name, 4 * count))
        spans.append((begin, end, name))
        # ggml's ne[0] is the innermost (fastest) dimension.
        x = np.frombuffer(data, dtype="<f4", count=count, offset=begin)
        tensors[name] = x.reshape(tuple(reversed(ne))).astype(np.float64)
    spans.sort()
    for a, b in zip(spans, spans[1:]):
        if b[0] < a[1]:
            raise BadFile("%s: tensors %r and %r overlap" % (path, a[2], b[2]))
    return meta, tensors


class Model:
    def __init__(self, path):
        self.meta, self.t = read_gguf(path)
        m = self.meta
        arch = self.arch = m.get("general.architecture")
        if arch not in ("llama", "qwen2", "qwen3"):
            raise BadFile("%s: architecture %r is not supported (llama, qwen2, qwen3)"
                          % (path, arch))

        def key(name, default=None):
            v = m.get(arch + "." + name, default)
            if v is None:
                raise BadFile("%s: %s.%s is missing" % (path, arch, name))
            return v

        self.dim = key("embedding_length")
        self.layers = key("block_count")
        self.heads = key("attention.head_count")
        self.kv_heads = key("attention.head_count_kv", self.heads)
        self.head = key("attention.key_length", self.dim // self.heads)
        if key("attention.value_length", self.head) != self.head:
            raise BadFile("%s: value length differs from key length" % path)
        self.eps = key("attention.layer_norm_rms_epsilon")
        self.rot = key("rope.dimension_count", self.head)
        self.base = key("rope.freq_base", 10000.0)
        scaling = key("rope.scaling.type", "none")
        factor = key("rope.scaling.factor", key("rope.scale_linear", 1.0))
        if scaling == "linear" or (scaling == "none" and factor != 1.0):
            self.pos_scale = 1.0 / factor
        elif scaling == "none":
            self.pos_scale = 1.0
        else:
            raise BadFile("%s: RoPE scaling %r is not supported" % (path, scaling))
        self.neox = arch in ("qwen2", "qwen3")
        if self.heads % self.kv_heads or self.rot % 2 or self.rot > self.head:
            raise BadFile("%s: inconsistent head counts or RoPE dimensions" % path)
        self.embd = self.t["token_embd.weight"]
        self.out = self.t.get("output.weight", self.embd)
        self.vocab = self.out.shape[0]
        freqs = self.base ** (-np.arange(0, self.rot, 2, dtype=np.float64) / self.rot)
        if "rope_freqs.weight" in self.t:
            freqs = freqs / self.t["rope_freqs.weight"]
        self.freqs = freqs

    def w(self, layer, name):
        return self.t.get("blk.%d.%s" % (layer, name))

    def rms(self, x, weight):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * weight

    def rope(self, x, pos):
        """X: (heads, head size), rotated for position POS."""
        ang = pos * self.pos_scale * self.freqs
        c, s = np.cos(ang), np.sin(ang)
        y = x.copy()
        if self.neox:
            half = self.rot // 2
            a, b = x[:, :half], x[:, half:self.rot]
            y[:, :half], y[:, half:self.rot] = a * c - b * s, a * s + b * c
        else:
            a, b = x[:, 0:self.rot:2], x[:, 1:self.rot:2]
            y[:, 0:self.rot:2], y[:, 1:self.rot:2] = a * c - b * s, a * s + b * c
        return y

    def run(self, ids):
        H, G, D = self.heads, self.kv_heads, self.head
        keys = [np.zeros((0, G, D)) for _ in range(self.layers)]
        vals = [np.zeros((0, G, D)) for _ in range(self.layers)]
        out = []
        for pos, tok in enumerate(ids):
            if not 0 <= tok < self.embd.shape[0]:
                raise BadFile("token %d is not in the vocabulary" % tok)
            x = self.embd[tok].copy()
            for l in range(self.layers):
                h = self.rms(x, self.w(l, "attn_norm.weight"))
                q, k, v = (self.w(l, "attn_%s.weight" % n) @ h for n in "qkv")
                for n, y in (("q", q), ("k", k), ("v", v)):
                    b = self.w(l, "attn_%s.bias" % n)
                    if b is not None:
                        y += b
                q, k, v = q.reshape(H, D), k.reshape(G, D), v.reshape(G, D)
                if self.w(l, "attn_q_norm.weight") is not None:
                    q = self.rms(q, self.w(l, "attn_q_norm.weight"))
                    k = self.rms(k, self.w(l, "attn_k_norm.weight"))
                q, k = self.rope(q, pos), self.rope(k, pos)
                keys[l] = np.concatenate([keys[l], k[None]])
                vals[l] = np.concatenate([vals[l], v[None]])
                att = np.empty((H, D))
                for i in range(H):
                    g = i // (H // G)
                    s = keys[l][:, g, :] @ q[i] / np.sqrt(D)
                    p = np.exp(s - s.max())
                    att[i] = (p / p.sum()) @ vals[l][:, g, :]
                x = x + self.w(l, "attn_output.weight") @ att.reshape(-1)
                h = self.rms(x, self.w(l, "ffn_norm.weight"))
                gate = self.w(l, "ffn_gate.weight") @ h
                up = self.w(l, "ffn_up.weight") @ h
                x = x + self.w(l, "ffn_down.weight") @ (gate / (1.0 + np.exp(-gate)) * up)
            out.append(self.out @ self.rms(x, self.t["output_norm.weight"]))
        return np.array(out)


def read_ids(path):
    with open(path) as f:
        return [int(x) for x in f.read().split()]


def read_logits(path, n, V):
    x = np.loadtxt(path, dtype=np.float64, ndmin=2)
    if x.shape != (n, V):
        raise BadFile("%s: %s values, not %d x %d" % (path, "x".join(map(str, x.shape)), n, V))
    return x


def worst(got, ref):
    scale = np.maximum(np.abs(ref).max(axis=1), 1.0)
    return float((np.abs(got - ref).max(axis=1) / scale).max())


def main(argv):
    if len(argv) < 3 or argv[1] not in ("info", "logits", "check"):
        sys.exit(__doc__)
    try:
        m = Model(argv[2])
        if argv[1] == "info":
            for k, v in sorted(m.meta.items()):
                if isinstance(v, list) and len(v) > 8:
                    v = "[%d values]" % len(v)
                print("%s = %r" % (k, v))
            for name, x in m.t.items():
                print("tensor %s %s" % (name, x.shape))
            return 0
        if len(argv) < 4:
            sys.exit(__doc__)
        ids = read_ids(argv[3])
        ref = m.run(ids)
        if argv[1] == "logits":
            for row in ref:
                print(" ".join("%.9g" % v for v in row.astype(np.float32)))
            return 0
        rest, tol = argv[4:], 1e-5
        if len(rest) >= 2 and rest[0] == "--tol":
            tol, rest = float(rest[1]), rest[2:]
        if not rest:
            sys.exit(__doc__)
        name = argv[2].rsplit("/", 1)[-1]
        bad = 0
        for spec in rest:
            label, _, path = spec.partition("=")
            w = worst(read_logits(path, len(ids), m.vocab), ref)
            print("%-18s %-9s worst |%s - reference| / max|logit| = %.3g (tolerance %.2g)"
                  % (name, m.arch, label, w, tol))
            bad += not w <= tol
        return 1 if bad else 0
    except (BadFile, OSError, ValueError) as e:
        print("gguf_ref.py: %s" % e, file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
