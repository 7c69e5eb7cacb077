#!/usr/bin/python3
"""Write the tiny Hugging Face checkpoint folders the tests name.

    tools/hf_fixture.py [ROOT]      (ROOT: the source tree, default .)

Uses only NumPy and json, so a fresh clone can write them again; the output
is the same bytes on every run (fixed seeds, sorted keys, no dates).

  tests/model/hf/tiny_qwen2/   config.json, model.safetensors (float32,
      random weights of seed 24: qwen2, 2 layers, width 32, 4 query heads on
      2 key/value heads, q/k/v biases, tied output,
      max_position_embeddings 32768) and tokenizer.json (GPT-2 byte-level
      BPE: the 256 byte pieces, a few dozen English merges, a BOS from the
      post-processor).
  tests/bad/model/hf_noconfig/     model.safetensors only: no config.json
  tests/bad/model/hf_badtok/       a width-8 model whose tokenizer.json is
      cut short (not valid JSON)
"""
import json
import os
import sys

import numpy as np

MERGES = [
    ("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("Ġ", "a"), ("i", "n"), ("e", "r"),
    ("Ġ", "s"), ("o", "n"), ("Ġ", "c"), ("a", "t"), ("Ġc", "at"), ("Ġs", "at"),
    ("o", "r"), ("Ġ", "o"), ("Ġo", "n"), ("Ġ", "m"), ("Ġm", "at"), ("e", "n"),
    ("Ġ", "w"), ("a", "s"), ("Ġw", "as"), ("a", "n"), ("Ġa", "n"), ("Ġan", "d"),
]
BOS = "<|bos|>"
EOS = "<|endoftext|>"
QWEN2_RE = (
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
)


def byte_chars():
    """GPT-2's map of the 256 bytes to printable characters."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def vocab():
    pieces = byte_chars()
    for left, right in MERGES:
        pieces.append(left + right)
    assert len(set(pieces)) == len(pieces)
    return pieces


def tokenizer_json(pieces):
    n = len(pieces)
    tok = {
        "version": "1.0",
        "added_tokens": [
            {"id": n, "content": BOS, "special": True},
            {"id": n + 1, "content": EOS, "special": True},
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2_RE}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False},
        ]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": BOS, "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [], "special_tokens": {}},
        "model": {"type": "BPE", "ignore_merges": False,
                  "vocab": {p: i for i, p in enumerate(pieces)},
                  "merges": [l + " " + r for l, r in MERGES]},
    }
    return json.dumps(tok, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def safetensors(tensors):
    """The bytes of a safetensors file of float32 TENSORS (name: array)."""
    header, blobs, at = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
        blobs.append(a.tobytes())
        at += a.nbytes
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return len(h).to_bytes(8, "little") + h + b"".join(blobs)


def model(seed, n_vocab, dim, hidden, layers, heads, kv_heads):
    rng = np.random.default_rng(seed)
    hs = dim // heads

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    t = {"model.embed_tokens.weight": w(n_vocab, dim, scale=0.5),
         "model.norm.weight": np.ones(dim, np.float32) + w(dim, scale=0.05)}
    for l in range(layers):
        p = "model.layers.%d." % l
        t[p + "input_layernorm.weight"] = np.ones(dim, np.float32) + w(dim, scale=0.05)
        t[p + "post_attention_layernorm.weight"] = np.ones(dim, np.float32) + w(dim, scale=0.05)
        t[p + "self_attn.q_proj.weight"] = w(heads * hs, dim)
        t[p + "self_attn.k_proj.weight"] = w(kv_heads * hs, dim)
        t[p + "self_attn.v_proj.weight"] = w(kv_heads * hs, dim)
        t[p + "self_attn.q_proj.bias"] = w(heads * hs, scale=0.1)
        t[p + "self_attn.k_proj.bias"] = w(kv_heads * hs, scale=0.1)
        t[p + "self_attn.v_proj.bias"] = w(kv_heads * hs, scale=0.1)
        t[p + "self_attn.o_proj.weight"] = w(dim, heads * hs)
        t[p + "mlp.gate_proj.weight"] = w(hidden, dim)
        t[p + "mlp.up_proj.weight"] = w(hidden, dim)
        t[p + "mlp.down_proj.weight"] = w(dim, hidden)
    config = {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": dim,
        "intermediate_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": True,
        "vocab_size": n_vocab,
        "torch_dtype": "float32",
    }
    return config, t


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    pieces = vocab()
    n_vocab = len(pieces) + 2
    tok = tokenizer_json(pieces)

    good = os.path.join(root, "tests/model/hf/tiny_qwen2")
    config, t = model(24, n_vocab, 32, 64, 2, 4, 2)
    write(good + "/config.json", json.dumps(config, indent=1, sort_keys=True) + "\n")
    write(good + "/model.safetensors", safetensors(t))
    write(good + "/tokenizer.json", tok)

    bad = os.path.join(root, "tests/bad/model")
    config, t = model(27, n_vocab, 8, 16, 1, 2, 1)
    write(bad + "/hf_noconfig/model.safetensors", safetensors(t))
    write(bad + "/hf_badtok/config.json", json.dumps(config, indent=1, sort_keys=True) + "\n")
    write(bad + "/hf_badtok/model.safetensors", safetensors(t))
    write(bad + "/hf_badtok/tokenizer.json", tok[: len(tok) // 2])


if __name__ == "__main__":
    main()
