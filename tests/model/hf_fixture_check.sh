#!/bin/sh
# The tiny Hugging Face folders (tests/model/hf/tiny_qwen2 and the bad
# folders of tests/bad/model/) are exactly what tools/hf_fixture.py writes
# today. Skips (77) when no Python 3 with NumPy is found.
#
#   tests/model/hf_fixture_check.sh SOURCE_ROOT
set -eu
root=${1:-.}
for py in python3 /usr/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' 2>/dev/null; then
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		"$py" "$root/tools/hf_fixture.py" "$tmp"
		diff -r "$tmp/tests/model/hf/tiny_qwen2" "$root/tests/model/hf/tiny_qwen2"
		for d in hf_noconfig hf_badtok; do
			diff -r "$tmp/tests/bad/model/$d" "$root/tests/bad/model/$d"
		done
		exit 0
	fi
done
echo "no python3 with numpy: skipped (apt-get install python3-numpy)"
exit 77
