#!/bin/sh
# Run llama.cpp, built beside the project, as the oracle for the GGUF path,
# and record what it says: the logits and perplexity the committed tests
# (tests/model/test_gguf_llamacpp.c) hold h2o-tui to.
#
#   tools/llama_cpp_compare.sh LLAMA_CPP_DIR [OUT_DIR]
#
# LLAMA_CPP_DIR holds llama.cpp's sources and a CPU build in build/ with
# llama-convert-llama2c-to-ggml and llama-perplexity, and the small
# program h2o_logits/h2o_logits.cpp built against its libllama (it prints
# llama_get_logits_ith for every position of a batch of token ids; see
# docs/gguf.md). Nothing of llama.cpp is copied into this repository.
#
# It writes, into OUT_DIR (default tests/model/gguf):
#   - the small random-weight models, by tools/gguf_tiny.py (llama.cpp's
#     gguf-py writes them);
#   - stories260K.gguf: models/stories260K converted by llama.cpp's own
#     llama-convert-llama2c-to-ggml;
#   - expected/NAME.logits: llama.cpp's logits for each model over the
#     token ids of tokens.txt, one line per position;
# and prints llama-perplexity's figure for stories260K.gguf over
# tests/model/gguf/ppl_text.txt with a context of 64.
set -eu
ll=${1:?usage: tools/llama_cpp_compare.sh LLAMA_CPP_DIR [OUT_DIR]}
out=${2:-tests/model/gguf}
py=/usr/bin/python3
bin=$ll/build/bin
mkdir -p "$out/expected"

"$py" tools/gguf_tiny.py "$ll" "$out"
"$bin/llama-convert-llama2c-to-ggml" --copy-vocab-from-model models/stories260K/tok512.bin \
	--llama2c-model models/stories260K/stories260K.bin \
	--llama2c-output-model "$out/stories260K.gguf" >/dev/null 2>&1

tokens=$(cat tests/model/gguf/tokens.txt)
for f in "$out"/*.gguf; do
	name=$(basename "$f" .gguf)
	# shellcheck disable=SC2086
	if LD_LIBRARY_PATH=$bin "$ll/h2o_logits/h2o_logits" "$f" $tokens \
		>"$out/expected/$name.logits" 2>/dev/null; then
		echo "$name: $(wc -l <"$out/expected/$name.logits") positions"
	else
		rm -f "$out/expected/$name.logits"
		echo "$name: llama.cpp cannot run it (an architecture it does not know)"
	fi
done

"$bin/llama-perplexity" -m "$out/stories260K.gguf" -f tests/model/gguf/ppl_text.txt -c 64 \
	-t 1 2>&1 | grep -E 'Final estimate|\[1\]' || true
