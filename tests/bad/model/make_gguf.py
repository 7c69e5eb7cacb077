#!/usr/bin/env python3
"""Write the bad GGUF files of tests/bad/model/ (gguf_*.gguf), stdlib only.

    tests/bad/model/make_gguf.py [DIR]    write them into DIR (default: here)
    tests/bad/model/make_gguf.py --check  compare the committed files with
                                          what it writes (exit 1 if not)

Each is a small llama model of tiny.bin's shape (dim 4, hidden 4, 1 layer, 2
heads on 1 key/value head, vocabulary 8) broken one way; the scenes
tests/bad/model_gguf_*.json name them and their .err files hold the line
each must be refused with. gguf_notok.gguf is a good model without a
tokenizer, named by a scene that gives none either.
"""
import os
import struct
import sys


def s(x):
    b = x.encode() if isinstance(x, str) else x
    return struct.pack("<Q", len(b)) + b


def kv_str(k, v):
    return s(k) + struct.pack("<I", 8) + s(v)


def kv_u32(k, v):
    return s(k) + struct.pack("<I", 4) + struct.pack("<I", v)


def model(arch="llama", version=3, tensor_type=0, drop=None, cut=0, extra_kv=b""):
    kvs = [kv_str("general.architecture", arch)]
    for key, v in (("embedding_length", 4), ("feed_forward_length", 4), ("block_count", 1),
                   ("attention.head_count", 2), ("attention.head_count_kv", 1),
                   ("context_length", 8)):
        kvs.append(kv_u32("%s.%s" % (arch, key), v))
    tensors = [("token_embd.weight", (4, 8)), ("output_norm.weight", (4,))]
    for name, shape in (("attn_norm", (4,)), ("attn_q", (4, 4)), ("attn_k", (4, 2)),
                        ("attn_v", (4, 2)), ("attn_output", (4, 4)), ("ffn_norm", (4,)),
                        ("ffn_gate", (4, 4)), ("ffn_up", (4, 4)), ("ffn_down", (4, 4))):
        tensors.append(("blk.0.%s.weight" % name, shape))
    tensors = [t for t in tensors if t[0] != drop]
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs) + bool(extra_kv))
    body = b"".join(kvs) + extra_kv
    data = b""
    for i, (name, shape) in enumerate(tensors):
        n = 1
        for d in shape:
            n *= d
        ttype = tensor_type if i == 0 else 0
        body += s(name) + struct.pack("<I", len(shape)) + b"".join(
            struct.pack("<Q", d) for d in shape) + struct.pack("<IQ", ttype, len(data))
        data += struct.pack("<%df" % n, *([1.0 if name.endswith("norm.weight") else 0.25] * n))
        data += b"\0" * (-len(data) % 32)
    out = head + body
    out += b"\0" * (-len(out) % 32) + data
    return out[:len(out) - cut] if cut else out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    check = sys.argv[1:] == ["--check"]
    if len(sys.argv) > 1 and not check:
        here = sys.argv[1]
    files = {
        "gguf_arch": model(arch="gemma3"),
        "gguf_version": model(version=1),
        "gguf_type": model(tensor_type=13),
        "gguf_missing": model(drop="blk.0.attn_k.weight"),
        "gguf_truncated": model(cut=40),
        "gguf_notok": model(),
        "gguf_bool": model(extra_kv=s("general.flag") + struct.pack("<I", 7) + b"\x05"),
    }
    status = 0
    for name, data in files.items():
        path = os.path.join(here, name + ".gguf")
        if check:
            with open(path, "rb") as f:
                if f.read() != data:
                    print("tests/bad/model/%s.gguf differs from what make_gguf.py writes"
                          % name, file=sys.stderr)
                    status = 1
            continue
        with open(path, "wb") as f:
            f.write(data)
    if check:
        written = set(n + ".gguf" for n in files)
        for name in sorted(os.listdir(here)):
            if name.endswith(".gguf") and name not in written:
                print("tests/bad/model/%s is not written by make_gguf.py" % name,
                      file=sys.stderr)
                status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
