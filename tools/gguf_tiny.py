#!/usr/bin/env python3
"""Write the small random-weight GGUF models of tests/model/gguf/.

    tools/gguf_tiny.py LLAMA_CPP_DIR OUT_DIR

Uses llama.cpp's own GGUF writer (LLAMA_CPP_DIR/gguf-py, NumPy only), so the
files are laid out as llama.cpp writes them. Each model is a fixed seed's
random weights in one shape and tensor type:

  llama_f32     llama, 2 layers, 4 query heads on 2 key/value heads
                (grouped-query), separate output matrix, RoPE base 10000
  llama_rope    the same shape, linear RoPE scaling (factor 2), tied output,
                RoPE base 500000, norm epsilon 1e-6
  qwen2_f32     qwen2: q, k and v biases, GPT-NeoX RoPE
  qwen3_f32     qwen3: q and k RMS-normed per head, head size 32 over a width
                of 64 with 4 heads (queries wider than the model)
  llama_f16, llama_bf16, llama_q8_0, llama_q4_0
                llama_f32's shape and weights, its matrices stored in that type
  llama_q4_k, llama_q6_k
                width 256 (K-quant rows are blocks of 256), 1 layer, tied
                output, matrices of random K-quant blocks

Norm weights and biases are F32 in every file, as llama.cpp's converters
write them. The vocabulary is SentencePiece-style (<unk>, <s>, </s>, the 256
byte pieces, one piece more): llama.cpp wants one to load a model; the
logits are compared over token ids.
"""
import sys
import types

import numpy as np

VOCAB = 260


def load_gguf(llama_dir):
    # gguf-py imports sentencepiece for its vocabulary helpers, which are
    # not used here: a stand-in module keeps it importable without it.
    if "sentencepiece" not in sys.modules:
        sp = types.ModuleType("sentencepiece")
        sp.SentencePieceProcessor = object
        sys.modules["sentencepiece"] = sp
    sys.path.insert(0, llama_dir + "/gguf-py")
    import gguf  # noqa: E402

    return gguf


def vocab(w, gguf):
    toks = [b"<unk>", b"<s>", b"</s>"] + [b"<0x%02X>" % i for i in range(256)] + [
        "\u2581a".encode()
    ]
    ttypes = [2, 3, 3] + [6] * 256 + [1]
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores([0.0] * VOCAB)
    w.add_token_types(ttypes)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)


def kquant_blocks(rng, rows, cols, qtype, gguf):
    """ROWS x COLS of random K-quant blocks, as uint8 (rows, bytes)."""
    nb = cols // 256
    if qtype == gguf.GGMLQuantizationType.Q4_K:
        blk = rng.integers(0, 256, size=(rows, nb, 144), dtype=np.uint8)
        d = np.full((rows, nb), 1e-4, dtype=np.float16).view(np.uint8).reshape(rows, nb, 2)
        dmin = np.full((rows, nb), 5e-5, dtype=np.float16).view(np.uint8).reshape(rows, nb, 2)
        blk[:, :, 0:2] = d
        blk[:, :, 2:4] = dmin
    else:
        blk = rng.integers(0, 256, size=(rows, nb, 210), dtype=np.uint8)
        d = np.full((rows, nb), 2e-5, dtype=np.float16).view(np.uint8).reshape(rows, nb, 2)
        blk[:, :, 208:210] = d
    return blk.reshape(rows, nb * blk.shape[2])


def write(gguf, path, arch, dim, hidden, layers, heads, kv_heads, head_size, qtype,
          seed, tied, rope_base=10000.0, eps=1e-5, rope_linear=None, biases=False,
          qk_norm=False):
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(path, arch)
    w.add_name("h2o-tui test " + path.rsplit("/", 1)[-1])
    w.add_context_length(64)
    w.add_embedding_length(dim)
    w.add_feed_forward_length(hidden)
    w.add_block_count(layers)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_layer_norm_rms_eps(eps)
    w.add_rope_freq_base(rope_base)
    w.add_rope_dimension_count(head_size)
    if head_size != dim // heads:
        w.add_key_length(head_size)
        w.add_value_length(head_size)
    if rope_linear is not None:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(rope_linear)
    w.add_vocab_size(VOCAB)
    vocab(w, gguf)
    T = gguf.GGMLQuantizationType

    def matrix(name, rows, cols, scale):
        if qtype in (T.Q4_K, T.Q6_K):
            w.add_tensor(name, kquant_blocks(rng, rows, cols, qtype, gguf), raw_dtype=qtype)
            return
        x = (rng.standard_normal((rows, cols)) * scale).astype(np.float32)
        if qtype == T.F32:
            w.add_tensor(name, x)
        elif qtype == T.F16:
            w.add_tensor(name, x.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(x, qtype), raw_dtype=qtype)

    def vector(name, n, mean, scale):
        w.add_tensor(name, (mean + rng.standard_normal(n) * scale).astype(np.float32))

    qd, kd = heads * head_size, kv_heads * head_size
    matrix("token_embd.weight", VOCAB, dim, 1.0)
    for l in range(layers):
        p = "blk.%d." % l
        vector(p + "attn_norm.weight", dim, 1.0, 0.1)
        matrix(p + "attn_q.weight", qd, dim, dim ** -0.5)
        matrix(p + "attn_k.weight", kd, dim, dim ** -0.5)
        matrix(p + "attn_v.weight", kd, dim, dim ** -0.5)
        if biases:
            vector(p + "attn_q.bias", qd, 0.0, 0.1)
            vector(p + "attn_k.bias", kd, 0.0, 0.1)
            vector(p + "attn_v.bias", kd, 0.0, 0.1)
        if qk_norm:
            vector(p + "attn_q_norm.weight", head_size, 1.0, 0.1)
            vector(p + "attn_k_norm.weight", head_size, 1.0, 0.1)
        matrix(p + "attn_output.weight", dim, qd, qd ** -0.5)
        vector(p + "ffn_norm.weight", dim, 1.0, 0.1)
        matrix(p + "ffn_gate.weight", hidden, dim, dim ** -0.5)
        matrix(p + "ffn_up.weight", hidden, dim, dim ** -0.5)
        matrix(p + "ffn_down.weight", dim, hidden, hidden ** -0.5)
    vector("output_norm.weight", dim, 1.0, 0.1)
    if not tied:
        matrix("output.weight", VOCAB, dim, dim ** -0.5)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gguf = load_gguf(sys.argv[1])
    out = sys.argv[2]
    T = gguf.GGMLQuantizationType
    small = dict(dim=64, hidden=128, layers=2, heads=4, kv_heads=2, head_size=16)
    write(gguf, out + "/llama_f32.gguf", "llama", qtype=T.F32, seed=1, tied=False, **small)
    write(gguf, out + "/llama_rope.gguf", "llama", qtype=T.F32, seed=2, tied=True,
          rope_base=500000.0, eps=1e-6, rope_linear=2.0, **small)
    write(gguf, out + "/qwen2_f32.gguf", "qwen2", qtype=T.F32, seed=3, tied=False,
          eps=1e-6, biases=True, **small)
    write(gguf, out + "/qwen3_f32.gguf", "qwen3", qtype=T.F32, seed=4, tied=True,
          eps=1e-6, qk_norm=True, **dict(small, head_size=32))
    for name, qt in (("f16", T.F16), ("bf16", T.BF16), ("q8_0", T.Q8_0), ("q4_0", T.Q4_0)):
        write(gguf, out + "/llama_%s.gguf" % name, "llama", qtype=qt, seed=1, tied=False,
              **small)
    big = dict(dim=256, hidden=256, layers=1, heads=4, kv_heads=1, head_size=64)
    write(gguf, out + "/llama_q4_k.gguf", "llama", qtype=T.Q4_K, seed=5, tied=True, **big)
    write(gguf, out + "/llama_q6_k.gguf", "llama", qtype=T.Q6_K, seed=6, tied=True, **big)


if __name__ == "__main__":
    main()
