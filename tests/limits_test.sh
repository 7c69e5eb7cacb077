#!/bin/bash
# limits_test.sh: the scene limits too large to keep as files in tests/bad.
#
# docs/scene-format.md documents a maximum for the file size, the token
# count and the memory parsing may take; a scene past them is megabytes, so
# this test writes it into a temporary directory and checks the exact
# error line and exit status 3, as tests/bad/*.err do for the small cases,
# and the files a scene names that are not kept in git (a FIFO, links). It
# also checks that scenes exactly at the limits load (dim 4096, budgets of
# 1,000,000, 4096-byte text), and that a budget covering every token says
# on screen that H2O never evicts.
#
# Usage: tests/limits_test.sh H2O_TUI   (from the source root, as Meson runs it)
. "$(dirname "$0")/lib.sh"

# refused FILE EXPECTED_STDERR_LINE: exit 3, nothing on stdout, that line,
# within $limit seconds (a hang is a failure, not a stuck test).
limit=120
refused() {
	local file=$1 want=$2 status
	timeout "$limit" "$bin" --headless "$file" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" != 124 ] || { fail "$file: still running after $limit s"; return; }
	[ "$status" = 3 ] || { fail "$file: exit status $status, expected 3"; return; }
	[ ! -s "$tmp/out" ] || { fail "$file: stdout is not empty"; return; }
	printf '%s\n' "$want" | diff -u - "$tmp/err" >/dev/null ||
		fail "$file: stderr is '$(head -c 300 "$tmp/err")', expected '$want'"
}

# accepted FILE ARGS...: exit 0, nothing on stderr.
accepted() {
	local file=$1 status
	shift
	"$bin" "$@" "$file" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" = 0 ] || fail "$file $*: exit status $status ($(head -c 300 "$tmp/err"))"
	[ ! -s "$tmp/err" ] || fail "$file $*: stderr: $(head -c 300 "$tmp/err")"
}

# File size: one byte past 256 MiB, as a sparse file (no disk used). It is
# refused from its size, before a byte is read.
truncate -s $((256 * 1024 * 1024 + 1)) "$tmp/huge.json"
refused "$tmp/huge.json" "$tmp/huge.json: cannot load: file is larger than 256 MiB"

# Tokens: 1,000,001 empty tokens, refused from the count before any
# token is looked at (the first empty token would be an error too).
{
	printf '{"heavy": 1, "recent": 1, "dim": 1, "tokens": ['
	yes '{},' | head -n 1000000 | tr -d '\n'
	printf '{}]}\n'
} >"$tmp/tokens.json"
refused "$tmp/tokens.json" \
	"$tmp/tokens.json:1:47: tokens: expected at most 1000000 tokens, got 1000001"

# Parsing memory: cJSON's tree takes about 80 bytes per value, so a note of
# 3,000,000 zeros (6 MB) would take 229 MiB, more than 24 times the file,
# and is refused before it is parsed (it loaded, at 240 MB, before). The
# same note with a syntax error reports that instead, and a third of it
# (76 MiB, under the 128 MiB any file may take) loads.
notes() {
	printf '{"heavy": 1, "recent": 1, "dim": 1, "x-notes": ['
	yes '0,' | head -n "$1" | tr -d '\n'
	printf '%s],\n "tokens": [{"text": "a", "attn": [1]}]}\n' "$2"
}
notes 2999999 0 >"$tmp/many_values.json"
refused "$tmp/many_values.json" "$tmp/many_values.json:1:1: $: 3000010 values would take about \
229 MiB to parse, more than the 137 MiB allowed (24 times the file's size, at least 128 and at \
most 2048 MiB)"
notes 3000000 '' >"$tmp/many_values_comma.json"
refused "$tmp/many_values_comma.json" \
	"$tmp/many_values_comma.json:1:6000048: x-notes: syntax error: trailing comma before ']'"
notes 999999 0 >"$tmp/values.json"
accepted "$tmp/values.json" --report

# A FIFO named by a scene, as its "text" file or as one of q, k and v:
# refused at once as not a regular file. Opening a FIFO for reading waits
# for a writer, so the loader must not block there.
mkdir "$tmp/fifo"
cp tests/bad/npy/good_q_f4.npy "$tmp/fifo/q.npy"
mkfifo "$tmp/fifo/tokens.txt" "$tmp/fifo/k.npy"
printf '{"heavy": 1, "recent": 1, "dim": 2, "q": "q.npy", "k": "%s", "v": "q.npy", "text": "tokens.txt"}\n' \
	q.npy >"$tmp/fifo/text.json"
printf '{"heavy": 1, "recent": 1, "dim": 2, "q": "q.npy", "k": "%s", "v": "q.npy", "text": "tokens.txt"}\n' \
	k.npy >"$tmp/fifo/npy.json"
limit=10
refused "$tmp/fifo/text.json" \
	"$tmp/fifo/text.json:1:87: text: tokens.txt: cannot open: not a regular file"
refused "$tmp/fifo/npy.json" "$tmp/fifo/npy.json:1:56: k: k.npy: cannot open: not a regular file"
# A lessons.txt that is a FIFO beside a scene: every mode reads the
# scene's folder's list to know whether the scene is a lesson, and waited
# for a writer there; the list is refused (the scene is then no lesson).
mkdir "$tmp/fifo_lessons"
cp scenes/cat_sat.json "$tmp/fifo_lessons/"
mkfifo "$tmp/fifo_lessons/lessons.txt"
for mode in "--headless --keys q" --report --trace; do
	# shellcheck disable=SC2086 # $mode is several words
	timeout "$limit" "$bin" $mode "$tmp/fifo_lessons/cat_sat.json" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" = 0 ] && [ ! -s "$tmp/err" ] ||
		fail "$mode beside a FIFO lessons.txt: exit status $status, stderr '$(head -c 300 "$tmp/err")'"
done
limit=120

# Links: a scene names files in its own folder or below, and a link there
# that leads out of it counts as outside; one that stays inside is fine.
mkdir "$tmp/folder" "$tmp/elsewhere"
cp tests/bad/npy/good_q_f4.npy "$tmp/elsewhere/q.npy"
cp tests/bad/npy/good_q_f4.npy "$tmp/folder/real.npy"
ln -s ../elsewhere/q.npy "$tmp/folder/out.npy"
ln -s real.npy "$tmp/folder/in.npy"
ln -s "$tmp/elsewhere" "$tmp/folder/dir"
for name in out.npy dir/q.npy in.npy; do
	printf '{"heavy": 1, "recent": 1, "dim": 2, "q": "%s", "k": "in.npy", "v": "real.npy"}\n' \
		"$name" >"$tmp/folder/${name%%/*}.json"
done
refused "$tmp/folder/out.npy.json" "$tmp/folder/out.npy.json:1:42: q: \"out.npy\" leads outside the \
scene's folder through a symbolic link (--allow-paths allows it)"
refused "$tmp/folder/dir.json" "$tmp/folder/dir.json:1:42: q: \"dir/q.npy\" leads outside the scene's \
folder through a symbolic link (--allow-paths allows it)"
accepted "$tmp/folder/in.npy.json" --report

# A Hugging Face folder as a scene's model: each file in it under the same
# rule. A config.json linked from outside is refused; the folder with its
# own files, or a link that stays in the scene's folder, is read.
mkdir "$tmp/hf" "$tmp/hf/out" "$tmp/hf/in"
cp tests/model/hf/tiny_qwen2/* "$tmp/hf/out/"
cp tests/model/hf/tiny_qwen2/* "$tmp/hf/in/"
mv "$tmp/hf/out/config.json" "$tmp/elsewhere/config.json"
ln -s "$tmp/elsewhere/config.json" "$tmp/hf/out/config.json"
mv "$tmp/hf/in/tokenizer.json" "$tmp/hf/tokenizer.json"
ln -s ../tokenizer.json "$tmp/hf/in/tokenizer.json"
for name in out in; do
	printf '{"heavy": 1, "recent": 1, "model": "%s", "text": "the cat"}\n' "$name" \
		>"$tmp/hf/$name.json"
done
refused "$tmp/hf/out.json" "$tmp/hf/out.json:1:36: model: out: config.json: leads outside the \
scene's folder through a symbolic link (--allow-paths allows it)"
accepted "$tmp/hf/in.json" --report
accepted "$tmp/hf/out.json" --report --allow-paths

# Exactly at the limits: dim 4096, both budgets 1,000,000 (far past the
# scene's one token), and text of 4096 bytes after escapes are decoded.
x4095=$(head -c 4095 /dev/zero | tr '\0' x)
printf '{"heavy": 1000000, "recent": 1000000, "dim": 4096, "tokens": [%s, %s]}\n' \
	"{\"text\": \"$x4095\\u0021\", \"attn\": [1]}" \
	'{"text": "end", "attn": [0.5, 0.5]}' >"$tmp/at_limits.json"
accepted "$tmp/at_limits.json" --headless --keys end
grep -q 'covers all 2 tokens: H2O never evicts' "$tmp/out" ||
	fail "at_limits.json: the story line does not say that H2O never evicts"
accepted "$tmp/at_limits.json" --trace
accepted scenes/cat_sat.json --headless --heavy 1000000 --recent 1000000 --keys end
grep -q 'budget (2,000,000) covers all 7 tokens: H2O never evicts' "$tmp/out" ||
	fail "cat_sat.json with budgets 1000000: no 'never evicts' on screen"

# A model whose run over its whole context would take more than 2 GiB
# (seq_len 65536 in 256 layers of 6 key/value heads) from a file of 1.2 MB
# (all zeros, finite): a run is sized to its text, so the model is not
# refused for its context and the scene goes on to its (missing)
# tokenizer; a text of more than 1 MiB is refused.
mkdir "$tmp/model"
i32() { printf "\\$(printf '%03o' $(($1 % 256)))\\$(printf '%03o' $(($1 / 256 % 256)))\\$(printf '%03o' $(($1 / 65536 % 256)))\\000"; }
{
	for v in 12 1 256 6 6 1 65536; do i32 "$v"; done
	head -c $((4 * (12 + 256 * (24 + 288 + 288 + 36) + 12 + 65536 * 2))) /dev/zero
} >"$tmp/model/wide.bin"
printf '{"heavy": 1, "recent": 1, "model": "wide.bin", "tokenizer": "t.bin", "text": "a"}\n' \
	>"$tmp/model/wide.json"
refused "$tmp/model/wide.json" "$tmp/model/wide.json:1:61: tokenizer: t.bin: cannot open: No such \
file or directory"
cp tests/bad/model/tiny.bin tests/bad/model/tiny_tok.bin "$tmp/model/"
head -c 1048577 /dev/zero | tr '\0' a >"$tmp/model/long.txt"
printf '{"heavy": 1, "recent": 1, "model": "tiny.bin", "tokenizer": "tiny_tok.bin", %s}\n' \
	'"text_file": "long.txt"' >"$tmp/model/long.json"
refused "$tmp/model/long.json" "$tmp/model/long.json:1:90: text_file: long.txt: expected at most \
1048576 bytes of text, the file has 1048577"

# Sizes are told from fstat before a byte is read, and no more than the
# limit is ever read: a text of 2 GiB (as a sparse file), for the scene's
# "text_file" and for --text, and a tokenizer of 2 GiB beside a checkpoint
# whose vocabulary of 600,000 lets the tokenizer's own bound (4 KiB a
# token) reach past it. Each under a limit of 512 MiB of virtual memory
# (where the build allows one): the files were read into memory of their
# size before their one line.
{
	for v in 4 4 1 2 1 600000 8; do i32 "$v"; done
} >"$tmp/model/wide_vocab.bin"
truncate -s $((28 + 4 * (600000 * 4 + 124))) "$tmp/model/wide_vocab.bin"
truncate -s $((2 * 1024 * 1024 * 1024)) "$tmp/model/huge.txt" "$tmp/model/huge_tok.bin"
printf '{"heavy": 1, "recent": 1, "model": "tiny.bin", "tokenizer": "tiny_tok.bin", %s}\n' \
	'"text_file": "huge.txt"' >"$tmp/model/huge_text.json"
printf '{"heavy": 1, "recent": 1, "model": "wide_vocab.bin", "tokenizer": "huge_tok.bin", %s}\n' \
	'"text": "a"' >"$tmp/model/huge_tok.json"
vm=
{ (ulimit -v $((512 * 1024)) && exec "$bin" --version) >/dev/null 2>&1; } 2>/dev/null && vm=$((512 * 1024))
# small FILE WANT ARGS...: as refused, under the limit when there is one.
small() {
	local file=$1 want=$2 status
	shift 2
	(if [ -n "$vm" ]; then ulimit -v "$vm"; fi; exec "$bin" --headless "$@") >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" = 3 ] || { fail "$file: exit status $status, expected 3 ($(head -c 300 "$tmp/err"))"; return; }
	[ ! -s "$tmp/out" ] || { fail "$file: stdout is not empty"; return; }
	printf '%s\n' "$want" | diff -u - "$tmp/err" >/dev/null ||
		fail "$file: stderr is '$(head -c 300 "$tmp/err")', expected '$want'"
}
small huge_text.json "$tmp/model/huge_text.json:1:90: text_file: huge.txt: expected at most 1048576 \
bytes of text, the file has 2147483648" "$tmp/model/huge_text.json"
small huge_tok.json "$tmp/model/huge_tok.json:1:67: tokenizer: huge_tok.bin: cannot open: larger \
than 256 MiB" "$tmp/model/huge_tok.json"
small --text "$tmp/model/huge.txt: expected at most 1048576 bytes of text, the file has 2147483648" \
	--model "$tmp/model/tiny.bin" --tokenizer "$tmp/model/tiny_tok.bin" --text "$tmp/model/huge.txt"
small --tokenizer "$tmp/model/huge_tok.bin: cannot open: larger than 256 MiB" \
	--model "$tmp/model/wide_vocab.bin" --tokenizer "$tmp/model/huge_tok.bin" --text-string a

# A model past --max-memory is refused from its checkpoint's header, before
# a weight is read or the model's block allocated: a llama2.c checkpoint of
# 341 MB (dim 768, 12 layers, hidden 2048, vocab 512, seq_len 1024; a
# sparse file, never read) under --max-memory 50M, named by a model scene
# and by --model, each under a limit of 256 MiB of virtual memory where
# the build allows one (it loaded, to 244 MiB, before the run was
# refused). The shipped model, whose checkpoint fits in 4 MB but whose run
# over its 391 tokens (the model, a run's caches, the tokenizer, the q, k
# and v of every layer) does not, is refused before the run. Exit 4, one
# line naming the figure, as a trace too large is refused.
{
	for v in 768 2048 12 12 12 512 1024; do i32 "$v"; done
} >"$tmp/model/big.bin"
truncate -s $((28 + 4 * (512 * 768 + 12 * (2 * 768 + 4 * 768 * 768 + 3 * 2048 * 768) + 768 +
	1024 * 64))) "$tmp/model/big.bin"
cp models/stories260K/tok512.bin "$tmp/model/"
printf '{"heavy": 1, "recent": 1, "model": "big.bin", "tokenizer": "tok512.bin", %s}\n' \
	'"text": "Once upon a time"' >"$tmp/model/big.json"
# memory WANT ARGS...: exit 4, nothing on stdout, the one line WANT.
memory() {
	local want=$1 status
	shift
	(if [ -n "$vm" ]; then ulimit -v $((256 * 1024)); fi; exec timeout "$limit" "$bin" "$@") \
		>"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" = 4 ] || { fail "$*: exit status $status, expected 4 ($(head -c 300 "$tmp/err"))"; return; }
	[ ! -s "$tmp/out" ] || { fail "$*: stdout is not empty"; return; }
	printf '%s\n' "$want" | diff -u - "$tmp/err" >/dev/null ||
		fail "$*: stderr is '$(head -c 300 "$tmp/err")', expected '$want'"
}
memory "h2o-tui: $tmp/model/big.json: needs about 344 MB of memory (the model big.bin: 85.3 \
million weights as float32), more than --max-memory 50 MB allows" \
	--headless --max-memory 50M "$tmp/model/big.json"
memory "h2o-tui: $tmp/model/big.bin: needs about 344 MB of memory (the model: 85.3 million \
weights as float32), more than --max-memory 50 MB allows" \
	--report --max-memory 50M --model "$tmp/model/big.bin" --tokenizer "$tmp/model/tok512.bin" \
	--text-string 'Once upon a time'
memory "h2o-tui: models/stories260K/story_model.json: needs about 9.0 MB of memory (the model \
stories260K.bin run over 391 tokens: its weights, a run's caches, its tokenizer and every layer's \
q, k, v and its queries before RoPE), more than --max-memory 4.0 MB allows" \
	--report --max-memory 4M models/stories260K/story_model.json

# A temperature so small that the logits divided by it overflow float32
# (1e-39, a float32 subnormal): the softmax's limit, the likeliest token,
# as at temperature 0, not the last token of the vocabulary every time.
greedy=(--model models/stories260K/stories260K.bin --tokenizer models/stories260K/tok512.bin
	--text-string Once --generate 12 --trace)
"$bin" "${greedy[@]}" >"$tmp/t0.jsonl" 2>"$tmp/err" || fail "temperature 0: $(head -c 300 "$tmp/err")"
for t in 1e-39 1e-38; do
	"$bin" "${greedy[@]}" --temperature "$t" >"$tmp/t.jsonl" 2>"$tmp/err" ||
		fail "temperature $t: $(head -c 300 "$tmp/err")"
	cmp -s "$tmp/t0.jsonl" "$tmp/t.jsonl" ||
		fail "temperature $t: the trace is not temperature 0's (tokens: $(grep -o '"token": "[^"]*"' "$tmp/t.jsonl" | sed 's/^"token": //' | tr '\n' ' '))"
done

[ "$failed" = 0 ] && echo "all limits hold"
[ "$failed" = 0 ]
