#!/bin/sh
# Write the llama2.c checkpoints and tokenizers of tests/bad/model/ byte by
# byte, without Python.
#
#   tests/bad/model/make.sh [DIR]    write them into DIR (default: beside
#                                    this script)
#   tests/bad/model/make.sh --check  write them into a temporary directory
#                                    and compare with the committed files
#
# tiny.bin is a good checkpoint of the smallest useful shape (dim 4, hidden
# 4, 1 layer, 2 heads on 1 key/value head, a vocabulary of 8, seq_len 8, the
# classifier shared): the 28-byte header, then 156 float32 weights, all 0
# but the token embedding's diagonal (1.0), so every position's rows are
# finite and plain. tiny_tok.bin is its tokenizer: <unk>, BOS, EOS, " ",
# "a", "b", " a", "ab" (no byte pieces, so "c" cannot be encoded). Every
# other file breaks one rule src/model/llama.c or tokenizer.c must catch;
# tests/bad/model_*.json name them (a scene names files in its own folder
# or below). hostile_tok.bin has pieces a terminal must never see raw, for
# the model scene hostile.json beside it (the hostile suite). POSIX sh and
# printf only: every machine writes the same bytes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = --check ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	sh "$here/make.sh" "$tmp"
	status=0
	for f in "$tmp"/*.bin; do
		name=$(basename "$f")
		cmp -s "$f" "$here/$name" || {
			echo "tests/bad/model/$name differs from what make.sh writes" >&2
			status=1
		}
	done
	for f in "$here"/*.bin; do
		[ -e "$tmp/$(basename "$f")" ] || {
			echo "tests/bad/model/$(basename "$f") is not written by make.sh" >&2
			status=1
		}
	done
	[ "$status" = 0 ] && echo "tests/bad/model: every file is what make.sh writes"
	exit "$status"
fi
out=${1:-$here}

# A little-endian int32 from 0 to 255, as printf escapes.
i32() { printf "\\$(printf '%03o' "$1")\\000\\000\\000"; }
f0='\000\000\000\000'
f1='\000\000\200\077'
fnan='\000\000\300\177'
# COUNT zeros.
zeros() {
	i=0
	while [ "$i" -lt "$1" ]; do
		printf "$f0"
		i=$((i + 1))
	done
}
# The seven header fields.
header() { for v in "$@"; do i32 "$v"; done; }

# The tiny model's weights after the header: the 8 x 4 embedding with 1.0
# on its diagonal, then 124 zeros (norms, matrices, rms_final, RoPE), with
# weight number NAN_AT (counted from 0 after the embedding) NaN when given.
weights() {
	nan_at=${1:--1}
	r=0
	while [ "$r" -lt 8 ]; do
		c=0
		while [ "$c" -lt 4 ]; do
			if [ "$r" = "$c" ]; then printf "$f1"; else printf "$f0"; fi
			c=$((c + 1))
		done
		r=$((r + 1))
	done
	i=0
	while [ "$i" -lt 124 ]; do
		if [ "$i" = "$nan_at" ]; then printf "$fnan"; else printf "$f0"; fi
		i=$((i + 1))
	done
}

{ header 4 4 1 2 1 8 8; weights; } >"$out/tiny.bin"
# The header says 652 bytes; the file ends 4 bytes short.
{ header 4 4 1 2 1 8 8; weights | head -c 620; } >"$out/size_short.bin"
# Four bytes too many.
{ header 4 4 1 2 1 8 8; weights; printf "$f0"; } >"$out/size_long.bin"
# Shorter than its header.
header 4 4 1 2 1 | head -c 20 >"$out/truncated.bin"
# 3 heads do not divide dim 4.
{ header 4 4 1 3 1 8 8; weights; } >"$out/heads_dim.bin"
# 3 key/value heads do not divide 4 heads (dim 8, head size 2).
{ header 8 4 1 4 3 8 8; weights; } >"$out/kv_heads.bin"
# A NaN in wq (weights 8 .. 23 after the embedding: rms_att is 0 .. 3).
{ header 4 4 1 2 1 8 8; weights 9; } >"$out/nan_weight.bin"
# A vocabulary of 0.
{ header 4 4 1 2 1 0 8; weights; } >"$out/vocab_zero.bin"

# A vocabulary of 1: the embedding's one row, then the 124 zeros.
{ header 4 4 1 2 1 1 8; weights | tail -c 512; } >"$out/tok_one_model.bin"

# A tokenizer piece: score 0, LENGTH, then the bytes.
piece() { printf "$f0"; i32 "$1"; printf '%s' "$2"; }
nl='
'
pieces() {
	piece 5 "<unk>"
	piece 5 "$nl<s>$nl"
	piece 6 "$nl</s>$nl"
	piece 1 " "
	piece 1 "a"
	piece 1 "b"
	piece 2 " a"
	piece 2 "ab"
}
{ i32 6; pieces; } >"$out/tiny_tok.bin"
# Six pieces for a vocabulary of eight.
{ i32 6; pieces | head -c 67; } >"$out/tok_few.bin"
# Nine pieces for eight.
{ i32 6; pieces; piece 1 "c"; } >"$out/tok_many.bin"
# Pieces a terminal must never see raw (an escape sequence for <unk>, BEL,
# the C1 CSI, bytes that are not UTF-8, wide characters): the tiny model
# samples them all (tests/bad/model/hostile.json, the hostile suite).
esc=$(printf '\033')
{
	i32 16
	piece 5 "$esc[31m"
	piece 5 "$nl<s>$nl"
	piece 6 "$nl</s>$nl"
	piece 1 " "
	piece 4 "$(printf '\007bel')"
	piece 4 "$(printf '\302\2332J')"
	piece 2 "$(printf '\377\376')"
	piece 13 "$(printf 'w\347\225\214\347\225\214\347\225\214\347\225\214')"
} >"$out/hostile_tok.bin"
# One piece, for tok_one_model.bin: no BOS (1) or EOS (2) to add.
{ i32 6; piece 1 "a"; } >"$out/tok_one.bin"
# Shorter than its 4-byte header.
printf '\006\000\000' >"$out/tok_truncated.bin"
# The last piece says 5 bytes, and 2 are left.
{ i32 6; pieces | head -c 77; piece 5 "ab"; } >"$out/tok_past_end.bin"
