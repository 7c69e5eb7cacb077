#!/usr/bin/env python3
"""Export the attention of a Hugging Face model as an h2o-tui scene.

Runs a causal language model on a text and saves the query, key and value
row of every token with numpy.save, in the layout h2o-tui reads
(docs/scene-format.md, "Vectors from .npy files"). Two modes:

The whole model, or a chosen part of it (the default: every layer, every
head, grouped-query attention as the model has it):

    OUT_q.npy                         (L, H, n, head_dim), C order
    OUT_k.npy, OUT_v.npy              (L, G, n, head_dim)
    OUT.json (or --json PATH)         the scene: layers, heads, kv_heads,
                                      prompt, budgets, dim, the three file
                                      names (relative to the scene) and the
                                      token texts

    python3 tools/export_hf_attention.py --model Qwen/Qwen2.5-0.5B \\
        --text-file story.txt --prompt 64 --out traces/qwen/qwen
    python3 tools/export_hf_attention.py --model gpt2 --layers 0,5,11 \\
        --heads 0-3 --text-file article.txt --out traces/gpt2_part

Query head h of the scene reads kv head h // (H // G). --heads picks query
heads of the model: they are grouped by the kv head they read, and every
kv head used must get the same number of them (whole groups always do).

One head, as before (--layer L --head H): OUT_q.npy, OUT_k.npy, OUT_v.npy
of shape (n, head_dim), k and v those of the kv head the head reads.

The queries and keys are the ones the model really multiplies: for GPT-2
style models (a fused c_attn projection, learned absolute positions) they
are the projections of the layer's input; for Llama style models (q_proj,
k_proj, v_proj and rotary positions) the rotary embedding is applied as the
model applies it. The scene's scale is the module's own (`scaling`) when it
is not 1/sqrt(head_dim). Before writing, the attention softmax(scale q k^T)
under a causal mask is compared with the probabilities the model itself
returns (eager attention, output_attentions) and the largest difference is
printed: a model with sliding windows, ALiBi or soft-capping differs, and
then the scene is not that model's attention.

Needs Python 3, PyTorch, transformers and numpy (pip install torch
transformers numpy). Nothing in the build or the tests runs it (they only
compile it): the imports of torch and transformers are inside main(), so
the module itself imports with the standard library alone. Written against
transformers 4.4x, whose attention modules receive the hidden states and,
for rotary models, the (cos, sin) position embeddings; other architectures
need their own few lines in project().
"""
import argparse
import json
import math
import os
import sys


def parse_args(argv=None):
    """The command line; --layer/--head is the one-head mode."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a Hugging Face model name or path, e.g. gpt2")
    p.add_argument("--layer", type=int, help="one head: its layer, from 0 (with --head)")
    p.add_argument("--head", type=int, help="one head: its query head, from 0 (with --layer)")
    p.add_argument("--layers", help="layers to export: all (the default) or a list, e.g. 0,5,8-11")
    p.add_argument("--heads", help="query heads to export: all (the default) or a list, e.g. 0-3")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the text to run")
    src.add_argument("--text-file", help="a file holding the text to run")
    p.add_argument("--out", required=True, help="output prefix: writes OUT_q.npy ... and OUT.json")
    p.add_argument("--json", help="the scene's path instead of OUT.json")
    p.add_argument("--max-tokens", type=int, default=4096, help="cut the text to this many tokens")
    p.add_argument("--prompt", type=int, default=0,
                   help="the scene's prompt: its first N tokens, which no cache evicts before "
                        "their end (whole-model mode)")
    p.add_argument("--heavy", type=int, default=64, help="the scene's heavy budget")
    p.add_argument("--recent", type=int, default=64, help="the scene's recent budget")
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                   help="the .npy files' type (h2o-tui reads both)")
    p.add_argument("--float64", action="store_true", help="the same as --dtype float64")
    p.add_argument("--title", help="the scene's title")
    p.add_argument("--watch", help="the scene's watch paragraph")
    a = p.parse_args(argv)
    if (a.layer is None) != (a.head is None):
        p.error("--layer and --head go together (one head); without both, the whole model")
    if a.layer is not None and (a.layers or a.heads):
        p.error("--layer/--head export one head; --layers/--heads a part of the model")
    if a.float64:
        a.dtype = "float64"
    if a.prompt < 0 or a.heavy < 0 or a.recent < 0 or a.heavy + a.recent < 1:
        p.error("--prompt, --heavy and --recent must be >= 0, heavy + recent >= 1")
    return a


def parse_list(text, count, what):
    """'all', or a comma-separated list of indices and ranges a-b, each in
    0..count-1, as a sorted list without repeats."""
    if text is None or text == "all":
        return list(range(count))
    out = set()
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
            else:
                lo = hi = int(part)
        except ValueError:
            sys.exit(f"export_hf_attention: --{what}: {part!r} is not an index or a range a-b")
        if not 0 <= lo <= hi < count:
            sys.exit(f"export_hf_attention: --{what}: {part} is outside 0..{count - 1}")
        out.update(range(lo, hi + 1))
    return sorted(out)


def head_plan(chosen, n_heads, n_kv):
    """The query heads in scene order and the kv heads they read.

    CHOSEN query heads of the model are grouped by their kv head (h //
    (n_heads // n_kv)); the scene's query heads are those groups one after
    another, so that scene head i reads scene kv head i // (H' // G').
    Returns (query heads, kv heads), model indices; exits when the kv heads
    used would get different numbers of query heads.
    """
    rep = n_heads // n_kv
    groups = {}
    for h in chosen:
        groups.setdefault(h // rep, []).append(h)
    sizes = {len(v) for v in groups.values()}
    if len(sizes) != 1:
        sys.exit("export_hf_attention: --heads: every kv head used must get the same number of "
                 f"query heads (groups of {rep}: " +
                 ", ".join(f"kv {g}: {v}" for g, v in sorted(groups.items())) + ")")
    kv = sorted(groups)
    return [h for g in kv for h in groups[g]], kv


def attention_modules(model):
    """The attention module of every layer, for the architectures handled."""
    base = getattr(model, "transformer", None) or getattr(model, "model", None)
    if base is not None and hasattr(base, "h"):  # GPT-2, GPT-J style
        return [block.attn for block in base.h]
    if base is not None and hasattr(base, "layers"):  # Llama, Mistral, Qwen style
        return [layer.self_attn for layer in base.layers]
    sys.exit("export_hf_attention: unknown architecture (no .h or .layers); see project()")


def rotate_half(x):
    """HF's rotary convention: (x1, x2) -> (-x2, x1) over the two halves."""
    import torch

    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def shape_of(module, config):
    """(query heads, kv heads, head_dim) of an attention module."""
    n_heads = config.num_attention_heads
    n_kv = getattr(config, "num_key_value_heads", None) or n_heads
    if hasattr(module, "c_attn"):  # GPT-2 has no grouped kv heads
        n_kv = n_heads
    head_dim = getattr(module, "head_dim", None) or config.hidden_size // n_heads
    return n_heads, n_kv, head_dim


def project(module, hidden, kwargs, config):
    """q (H, n, d), k and v (G, n, d) of every head of one layer, as the
    layer multiplies them (after the rotary embedding)."""
    n_heads, n_kv, head_dim = shape_of(module, config)
    n = hidden.shape[1]
    if hasattr(module, "c_attn"):  # GPT-2: one fused projection, no rotary
        width = hidden.shape[-1]
        q, k, v = module.c_attn(hidden)[0].split(width, dim=-1)
        return tuple(x.view(n, n_heads, head_dim).transpose(0, 1) for x in (q, k, v))

    q = module.q_proj(hidden)[0].view(n, n_heads, head_dim)
    k = module.k_proj(hidden)[0].view(n, n_kv, head_dim)
    v = module.v_proj(hidden)[0].view(n, n_kv, head_dim)
    # Qwen3 style: a norm over each head's q and k, before the rotation.
    if getattr(module, "q_norm", None) is not None:
        q = module.q_norm(q)
    if getattr(module, "k_norm", None) is not None:
        k = module.k_norm(k)
    cos_sin = kwargs.get("position_embeddings")
    if cos_sin is None:
        sys.exit("export_hf_attention: this transformers version does not pass "
                 "position_embeddings to the attention module; apply the rotary "
                 "embedding in project() by hand")
    cos, sin = (t[0][:, None, :] for t in cos_sin)  # (n, 1, d): one row per position
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    return q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)


def causal_softmax(q, k, scale):
    """softmax(scale q k^T) under a causal mask: q (H, n, d), k (H, n, d)."""
    import numpy as np

    s = scale * (q @ k.transpose(0, 2, 1))
    n = s.shape[-1]
    s = s + np.triu(np.full((n, n), -np.inf), 1)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def write_scene(path, args, fields, texts):
    """Write the scene JSON at PATH: the common fields, then FIELDS."""
    scene = {"title": args.title or fields.pop("title"),
             "description": fields.pop("description"),
             "heavy": args.heavy, "recent": args.recent}
    if args.watch:
        scene["watch"] = args.watch
    scene.update(fields)
    # An array rather than a text file: a token may hold a line break.
    scene["text"] = texts
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scene, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main(argv=None):
    """Run the model once with hooks on the chosen layers, then write."""
    args = parse_args(argv)
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    text = args.text
    if text is None:
        with open(args.text_file, encoding="utf-8") as f:
            text = f.read()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    try:  # eager attention, so that the model returns its probabilities
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32,
                                                     attn_implementation="eager")
    except (TypeError, ValueError):
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32)
    model.eval()
    config = model.config
    ids = tokenizer(text, return_tensors="pt").input_ids[:, : args.max_tokens]
    n = ids.shape[1]
    if args.prompt > n:
        sys.exit(f"export_hf_attention: --prompt {args.prompt}, the text has {n} tokens")

    modules = attention_modules(model)
    n_heads, n_kv, head_dim = shape_of(modules[0], config)
    if args.layer is not None:
        if not 0 <= args.layer < len(modules):
            sys.exit(f"export_hf_attention: --layer must be 0 to {len(modules) - 1}")
        if not 0 <= args.head < n_heads:
            sys.exit(f"export_hf_attention: --head must be 0 to {n_heads - 1}")
        layers, heads, kv_heads = [args.layer], [args.head], [args.head // (n_heads // n_kv)]
    else:
        layers = parse_list(args.layers, len(modules), "layers")
        heads, kv_heads = head_plan(parse_list(args.heads, n_heads, "heads"), n_heads, n_kv)

    captured = {}

    def hook_for(index):
        def hook(module, hook_args, hook_kwargs):
            hidden = hook_args[0] if hook_args else hook_kwargs["hidden_states"]
            with torch.no_grad():
                q, k, v = project(module, hidden, hook_kwargs, config)
            captured[index] = tuple(t.double().cpu().numpy() for t in (q, k, v))
        return hook

    handles = [modules[l].register_forward_pre_hook(hook_for(l), with_kwargs=True) for l in layers]
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    for h in handles:
        h.remove()

    scale = getattr(modules[0], "scaling", None) or 1 / math.sqrt(head_dim)
    q = np.stack([captured[l][0][heads] for l in layers])      # (L, H', n, d)
    k = np.stack([captured[l][1][kv_heads] for l in layers])   # (L, G', n, d)
    v = np.stack([captured[l][2][kv_heads] for l in layers])

    # The check: the model's own probabilities against softmax(scale q k^T).
    err = None
    attentions = getattr(out, "attentions", None)
    if attentions is not None and all(a is not None for a in attentions):
        rep = len(heads) // len(kv_heads)
        err = 0.0
        for i, l in enumerate(layers):
            mine = causal_softmax(q[i], np.repeat(k[i], rep, axis=0), scale)
            theirs = attentions[l][0, heads].double().cpu().numpy()
            err = max(err, float(np.abs(mine - theirs).max()))

    dtype = np.dtype(args.dtype)
    path = args.json or args.out + ".json"
    folder = os.path.dirname(os.path.abspath(path))
    arrays = {"q": q, "k": k, "v": v}
    if args.layer is not None:
        arrays = {name: a[0, 0] for name, a in arrays.items()}  # (n, d)
    names = {}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
    for name, a in arrays.items():
        file = f"{args.out}_{name}.npy"
        np.save(file, np.ascontiguousarray(a, dtype=dtype))  # little-endian, C order
        names[name] = os.path.relpath(os.path.abspath(file), folder)

    texts = [tokenizer.decode([i]) for i in ids[0].tolist()]
    fields = {"dim": head_dim}
    if abs(scale * math.sqrt(head_dim) - 1) > 1e-12:
        fields["scale"] = scale
    if args.layer is not None:
        fields["title"] = f"{args.model}, layer {args.layer}, head {args.head}"
        fields["description"] = (f"{n} tokens exported by tools/export_hf_attention.py "
                                 f"(dim {head_dim}, scale {scale:.4f}); query head {args.head} "
                                 f"reads key/value head {kv_heads[0]}.")
    else:
        fields["title"] = f"{args.model}: {len(layers)} layers x {len(heads)} heads"
        fields["description"] = (
            f"{n} tokens ({args.prompt} of prompt) exported by tools/export_hf_attention.py: "
            f"layers {layers if len(layers) < len(modules) else 'all'}, query heads "
            f"{heads if len(heads) < n_heads else 'all'} over key/value heads "
            f"{kv_heads if len(kv_heads) < n_kv else 'all'} (dim {head_dim}, scale {scale:.4f}).")
        fields.update(layers=len(layers), heads=len(heads), kv_heads=len(kv_heads),
                      prompt=args.prompt)
        fields["x-model"] = {"name": args.model, "layers": layers, "heads": heads,
                             "kv_heads": kv_heads}
    fields.update(names)
    write_scene(path, args, fields, texts)
    check = "not checked (no attention probabilities returned)" if err is None else \
        f"softmax(scale q k^T) matches the model's attention to {err:.1e}"
    print(f"wrote {path} and {args.out}_{{q,k,v}}.npy: {n} tokens, {len(layers)} layers x "
          f"{len(heads)} heads over {len(kv_heads)} kv heads, dim {head_dim}; {check}")
    if err is not None and err > 1e-3:
        print("export_hf_attention: the model's attention is not softmax(scale q k^T) with a "
              "causal mask (sliding window? ALiBi? soft-capping?): the scene shows something else",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
