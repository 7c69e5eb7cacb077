#!/bin/sh
# The committed fixture tests/model/stories260K_logits.txt is what
# tools/llama2c.py writes today (its logits within 2e-6: the printing's
# rounding). Skips (77) when no Python 3 with NumPy is found.
#
#   tests/model/fixture_check.sh SOURCE_ROOT
set -eu
root=${1:-.}
for py in python3 /usr/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' 2>/dev/null; then
		exec "$py" "$root/tools/llama2c.py" fixture "$root/models/stories260K/stories260K.bin" \
			"$root/models/stories260K/tok512.bin" --check "$root/tests/model/stories260K_logits.txt"
	fi
done
echo "no python3 with numpy: skipped (apt-get install python3-numpy)"
exit 77
