#!/usr/bin/env python3
"""Export one attention head of a Hugging Face model as an h2o-tui scene.

Runs a causal language model on a text and saves, for one layer and one
head, the query, key and value row of every token with numpy.save, in the
format h2o-tui reads (docs/scene-format.md, "Vectors from .npy files"):

    OUT_q.npy, OUT_k.npy, OUT_v.npy   float32, C order, shape (n, head_dim)
    OUT.json                          the scene: budgets, dim, the three
                                      file names and the token texts

Then open it like any scene:

    python3 tools/export_hf_attention.py --model gpt2 --layer 5 --head 1 \\
        --text-file article.txt --out traces/gpt2_l5h1
    build/h2o-tui traces/gpt2_l5h1.json

The queries and keys are the ones the model really multiplies: for GPT-2
style models (a fused c_attn projection, learned absolute positions) they
are the projections of the layer's input; for Llama style models (q_proj,
k_proj, v_proj and rotary positions) the rotary embedding is applied as the
model applies it, and a head reads the key/value head it shares under
grouped-query attention. Both scale logits by 1/sqrt(head_dim), which is
h2o-tui's default scale, so the full cache's attention in h2o-tui is the
model's attention for that head (up to float32 rounding).

Needs Python 3, PyTorch, transformers and numpy (pip install torch
transformers numpy). Nothing in the build or the tests runs this script; it
was written against transformers 4.4x, whose attention modules receive the
hidden states and, for rotary models, the (cos, sin) position embeddings.
Other architectures need their own few lines in `project()`.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a Hugging Face model name or path, e.g. gpt2")
    p.add_argument("--layer", type=int, required=True, help="layer index, from 0")
    p.add_argument("--head", type=int, required=True, help="query head index, from 0")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the text to run")
    src.add_argument("--text-file", help="a file holding the text to run")
    p.add_argument("--out", required=True, help="output prefix: writes OUT_q.npy ... and OUT.json")
    p.add_argument("--max-tokens", type=int, default=4096, help="cut the text to this many tokens")
    p.add_argument("--heavy", type=int, default=64, help="the scene's heavy budget")
    p.add_argument("--recent", type=int, default=64, help="the scene's recent budget")
    p.add_argument("--float64", action="store_true", help="save float64 instead of float32")
    return p.parse_args()


def attention_modules(model):
    """The attention module of every layer, for the architectures handled."""
    base = getattr(model, "transformer", None) or getattr(model, "model", None)
    if base is not None and hasattr(base, "h"):  # GPT-2, GPT-J style
        return [block.attn for block in base.h]
    if base is not None and hasattr(base, "layers"):  # Llama, Mistral, Qwen style
        return [layer.self_attn for layer in base.layers]
    sys.exit("export_hf_attention: unknown architecture (no .h or .layers); see project()")


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def project(module, hidden, kwargs, head, config):
    """q, k, v of HEAD for every token, each (n, head_dim)."""
    n_heads = config.num_attention_heads
    if hasattr(module, "c_attn"):  # GPT-2: one fused projection, no rotary
        width = hidden.shape[-1]
        head_dim = width // n_heads
        q, k, v = module.c_attn(hidden)[0].split(width, dim=-1)
        cut = slice(head * head_dim, (head + 1) * head_dim)
        return q[:, cut], k[:, cut], v[:, cut]

    head_dim = getattr(module, "head_dim", None) or config.hidden_size // n_heads
    n_kv = getattr(config, "num_key_value_heads", None) or n_heads
    kv_head = head // (n_heads // n_kv)  # grouped-query attention
    n = hidden.shape[1]
    q = module.q_proj(hidden)[0].view(n, -1, head_dim)[:, head]
    k = module.k_proj(hidden)[0].view(n, -1, head_dim)[:, kv_head]
    v = module.v_proj(hidden)[0].view(n, -1, head_dim)[:, kv_head]
    cos_sin = kwargs.get("position_embeddings")
    if cos_sin is None:
        sys.exit("export_hf_attention: this transformers version does not pass "
                 "position_embeddings to the attention module; apply the rotary "
                 "embedding in project() by hand")
    cos, sin = (t[0] for t in cos_sin)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    return q, k, v


def main():
    args = parse_args()
    text = args.text
    if text is None:
        with open(args.text_file, encoding="utf-8") as f:
            text = f.read()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32)
    model.eval()
    ids = tokenizer(text, return_tensors="pt").input_ids[:, : args.max_tokens]

    modules = attention_modules(model)
    if not 0 <= args.layer < len(modules):
        sys.exit(f"export_hf_attention: --layer must be 0 to {len(modules) - 1}")
    if not 0 <= args.head < model.config.num_attention_heads:
        sys.exit(f"export_hf_attention: --head must be 0 to {model.config.num_attention_heads - 1}")

    captured = {}

    def hook(module, hook_args, hook_kwargs):
        hidden = hook_args[0] if hook_args else hook_kwargs["hidden_states"]
        with torch.no_grad():
            captured["qkv"] = project(module, hidden, hook_kwargs, args.head, model.config)

    handle = modules[args.layer].register_forward_pre_hook(hook, with_kwargs=True)
    with torch.no_grad():
        model(ids)
    handle.remove()

    dtype = np.float64 if args.float64 else np.float32
    q, k, v = (np.ascontiguousarray(t.float().numpy().astype(dtype)) for t in captured["qkv"])
    n, dim = q.shape
    prefix = os.path.basename(args.out)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    for name, array in (("q", q), ("k", k), ("v", v)):
        np.save(f"{args.out}_{name}.npy", array)  # little-endian, C order

    tokens = [tokenizer.decode([i]) for i in ids[0].tolist()]
    scene = {
        "title": f"{args.model}, layer {args.layer}, head {args.head}",
        "description": f"{n} tokens exported by tools/export_hf_attention.py (dim {dim}, "
                       f"scale 1/sqrt({dim}) = {1 / math.sqrt(dim):.4f}).",
        "heavy": args.heavy,
        "recent": args.recent,
        "dim": dim,
        "q": f"{prefix}_q.npy",
        "k": f"{prefix}_k.npy",
        "v": f"{prefix}_v.npy",
        # An array rather than a text file: a token may hold a line break.
        "text": tokens,
    }
    with open(f"{args.out}.json", "w", encoding="utf-8") as f:
        json.dump(scene, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {args.out}.json and {args.out}_{{q,k,v}}.npy: {n} tokens, dim {dim}")


if __name__ == "__main__":
    main()
