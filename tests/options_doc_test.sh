#!/bin/bash
# options_doc_test.sh: every option of the command line's table
# (src/backend/options.h, which --help prints whole) is documented in the
# README, the manual page and design §4.
#
#   options_doc_test.sh BIN   (from the source root, as Meson runs it)
#
# An option is found in the README and design §4 as "--NAME" not followed
# by a letter, digit or '-' (so --text is not found in --text-string); in
# the manual page as roff writes it, "\-\-NAME" with each '-' as "\-".
set -u
export LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --help >"$tmp/help" || { echo "FAIL: --help failed"; exit 1; }
# The table's options: the lines of --help that start with one.
sed -n 's/^  --\([a-z][a-z0-9-]*\).*/\1/p' "$tmp/help" | sort -u >"$tmp/names"
count=$(wc -l <"$tmp/names")
[ "$count" -ge 30 ] || { echo "FAIL: only $count options in --help"; exit 1; }

# Design §4, from its heading to the next section's.
sed -n '/^## 4\. /,/^## 5\. /p' docs/design.md >"$tmp/design"
[ -s "$tmp/design" ] || { echo "FAIL: no section 4 in docs/design.md"; exit 1; }

failed=0
while read -r name; do
	pattern="--$name([^a-z0-9-]|\$)"
	grep -Eq -- "$pattern" README.md || { echo "FAIL: README.md does not name --$name"; failed=1; }
	grep -Eq -- "$pattern" "$tmp/design" ||
		{ echo "FAIL: docs/design.md §4 does not name --$name"; failed=1; }
	roff=$(printf '%s' "--$name" | sed 's/-/\\\\-/g')
	grep -Eq -- "$roff([^a-z0-9\\\\]|\\\\[^-]|\$)" docs/h2o-tui.1 ||
		{ echo "FAIL: docs/h2o-tui.1 does not name --$name"; failed=1; }
done <"$tmp/names"
[ "$failed" = 0 ] && echo "$count options, each in the README, the manual page and design §4"
exit "$failed"
