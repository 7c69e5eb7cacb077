#!/usr/bin/env python3
"""Write a random whole-model trace for trace-bench --open.

    make_trace.py DIR [--layers 12] [--heads 12] [--kv 12] [--tokens 4096]
                      [--dim 64] [--dtype float16]

DIR/trace.json names DIR/q.npy (L, H, n, d) and DIR/k.npy, DIR/v.npy
(L, G, n, d). Needs NumPy.
"""
import argparse
import json
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--kv", type=int, default=12)
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--dtype", default="float16")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rng = np.random.default_rng(1)
    shapes = {"q": (a.layers, a.heads, a.tokens, a.dim), "k": (a.layers, a.kv, a.tokens, a.dim),
              "v": (a.layers, a.kv, a.tokens, a.dim)}
    for name, shape in shapes.items():
        x = rng.standard_normal(shape, dtype=np.float32).astype(a.dtype)
        np.save(os.path.join(a.dir, name + ".npy"), x)
    scene = {"title": f"random trace {a.layers}x{a.heads}x{a.tokens}x{a.dim}",
             "heavy": 64, "recent": 64, "dim": a.dim, "q": "q.npy", "k": "k.npy", "v": "v.npy"}
    with open(os.path.join(a.dir, "trace.json"), "w") as f:
        json.dump(scene, f)


if __name__ == "__main__":
    main()
