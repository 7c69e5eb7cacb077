#!/usr/bin/env python3
"""Write the small Hugging Face checkpoint folders of tests/model/hf/.

    tools/hf_tiny.py LLAMA_CPP_DIR

Each is a GGUF test model of tests/model/gguf/ as Hugging Face stores it:
config.json, and its float32 tensors under Hugging Face's names in
safetensors, the llama's Q/K rows un-permuted (GGUF permutes them so that
RoPE rotates adjacent pairs; Hugging Face rotates halves). So the folder and
the GGUF file are one model, and give the same logits.

  llama/   from llama_f32.gguf, one model.safetensors, separate lm_head
  qwen2/   from qwen2_f32.gguf, two shards and model.safetensors.index.json

Reads the GGUF files with llama.cpp's gguf-py (NumPy only); writes the
safetensors format by hand (an 8-byte header length, the JSON header, the
data).
"""
import json
import os
import struct
import sys
import types

import numpy as np

HF_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}


def hf_name(name):
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    if name == "output.weight":
        return "lm_head.weight"
    _, layer, rest = name.split(".", 2)
    return "model.layers.%s.%s" % (layer, HF_NAMES[rest])


def unpermute(w, heads):
    rows = w.shape[0]
    return w.reshape(heads, rows // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, arr in tensors:
        b = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def convert(gguf, src, out, shards):
    r = gguf.GGUFReader(src)
    f = {k: v for k, v in r.fields.items()}

    def val(key):
        field = f[key]
        return field.parts[field.data[0]].tolist()[0]

    arch = bytes(f["general.architecture"].parts[-1]).decode()
    heads, kv = val(arch + ".attention.head_count"), val(arch + ".attention.head_count_kv")
    names = [t.name for t in r.tensors]
    cfg = {
        "model_type": arch,
        "hidden_size": val(arch + ".embedding_length"),
        "intermediate_size": val(arch + ".feed_forward_length"),
        "num_hidden_layers": val(arch + ".block_count"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "max_position_embeddings": val(arch + ".context_length"),
        "rms_norm_eps": val(arch + ".attention.layer_norm_rms_epsilon"),
        "rope_theta": val(arch + ".rope.freq_base"),
        "tie_word_embeddings": "output.weight" not in names,
        "vocab_size": 260,
        "torch_dtype": "float32",
    }
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as fh:
        json.dump(cfg, fh, indent=2)
    tensors = []
    for t in r.tensors:
        w = np.array(t.data, dtype=np.float32).reshape([int(x) for x in reversed(t.shape)])
        if arch == "llama" and t.name.endswith("attn_q.weight"):
            w = unpermute(w, heads)
        if arch == "llama" and t.name.endswith("attn_k.weight"):
            w = unpermute(w, kv)
        tensors.append((hf_name(t.name), w))
    if shards == 1:
        write_safetensors(os.path.join(out, "model.safetensors"), tensors)
        return
    per = (len(tensors) + shards - 1) // shards
    wmap = {}
    for i in range(shards):
        name = "model-%05d-of-%05d.safetensors" % (i + 1, shards)
        part = tensors[i * per:(i + 1) * per]
        write_safetensors(os.path.join(out, name), part)
        wmap.update({n: name for n, _ in part})
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {}, "weight_map": wmap}, fh, indent=2)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sp = types.ModuleType("sentencepiece")
    sp.SentencePieceProcessor = object
    sys.modules.setdefault("sentencepiece", sp)
    sys.path.insert(0, sys.argv[1] + "/gguf-py")
    import gguf  # noqa: E402

    convert(gguf, "tests/model/gguf/llama_f32.gguf", "tests/model/hf/llama", 1)
    convert(gguf, "tests/model/gguf/qwen2_f32.gguf", "tests/model/hf/qwen2", 2)


if __name__ == "__main__":
    main()
